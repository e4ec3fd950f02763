#include "xlite/hostlib/float_convert.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

namespace xlite::hostlib {
namespace {

// How a narrow type encodes NaN (and whether it has infinities).
enum class NanRule {
  kIeee,         // all-ones exponent: infinity (mantissa 0) or NaN
  kAllOnesOnly,  // "fn": only S.1111.111 is NaN, no infinity
  kNegZero,      // "fnuz": the negative-zero pattern is the only NaN, no -0
  kNone,         // f4e2m1fn: no NaN, no infinity
  kExpAllOnes,   // e8m0fnu: 0xff is NaN, no sign
};

struct Format {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  bool has_sign;
  NanRule nan;
};

Format FormatOf(ElementType type) {
  switch (type) {
    case ElementType::kF16:
      return {5, 10, 15, true, NanRule::kIeee};
    case ElementType::kBF16:
      return {8, 7, 127, true, NanRule::kIeee};
    case ElementType::kF8E5M2:
      return {5, 2, 15, true, NanRule::kIeee};
    case ElementType::kF8E4M3:
      return {4, 3, 7, true, NanRule::kIeee};
    case ElementType::kF8E4M3FN:
      return {4, 3, 7, true, NanRule::kAllOnesOnly};
    case ElementType::kF8E4M3B11FNUZ:
      return {4, 3, 11, true, NanRule::kNegZero};
    case ElementType::kF8E5M2FNUZ:
      return {5, 2, 16, true, NanRule::kNegZero};
    case ElementType::kF8E4M3FNUZ:
      return {4, 3, 8, true, NanRule::kNegZero};
    case ElementType::kF8E3M4:
      return {3, 4, 3, true, NanRule::kIeee};
    case ElementType::kF4E2M1FN:
      return {2, 1, 1, true, NanRule::kNone};
    case ElementType::kF8E8M0FNU:
      return {8, 0, 127, false, NanRule::kExpAllOnes};
    default:
      return {8, 23, 127, true, NanRule::kIeee};  // f32; never asked for
  }
}

double Decode(const Format& f, uint32_t bits) {
  const int mb = f.mantissa_bits;
  const uint32_t mant = bits & ((1u << mb) - 1);
  const uint32_t exp = (bits >> mb) & ((1u << f.exponent_bits) - 1);
  const uint32_t exp_all = (1u << f.exponent_bits) - 1;
  const bool neg = f.has_sign && ((bits >> (f.exponent_bits + mb)) & 1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (f.nan) {
    case NanRule::kIeee:
      if (exp == exp_all) {
        if (mant == 0) return neg ? -INFINITY : INFINITY;
        return neg ? -nan : nan;
      }
      break;
    case NanRule::kAllOnesOnly:
      if (exp == exp_all && mant == (1u << mb) - 1) return neg ? -nan : nan;
      break;
    case NanRule::kNegZero:
      if (neg && exp == 0 && mant == 0) return nan;
      break;
    case NanRule::kExpAllOnes:
      if (exp == exp_all) return nan;
      break;
    case NanRule::kNone:
      break;
  }
  const double v = exp == 0 && mb > 0 ? std::ldexp(static_cast<double>(mant), 1 - f.bias - mb)
                                      : std::ldexp(static_cast<double>(mant | (1u << mb)),
                                                   static_cast<int>(exp) - f.bias - mb);
  return neg ? -v : v;
}

uint32_t Encode(const Format& f, double value) {
  const int mb = f.mantissa_bits;
  const uint32_t sign_bit = f.has_sign ? 1u << (f.exponent_bits + mb) : 0;
  const uint32_t exp_all = (1u << f.exponent_bits) - 1;
  const uint32_t mant_all = (1u << mb) - 1;
  uint32_t max_exp = exp_all, max_mant = mant_all;
  uint32_t nan_bits = 0;
  switch (f.nan) {
    case NanRule::kIeee:
      max_exp = exp_all - 1;
      nan_bits = (exp_all << mb) | (1u << (mb - 1));
      break;
    case NanRule::kAllOnesOnly:
      max_mant = mant_all - 1;
      nan_bits = (exp_all << mb) | mant_all;
      break;
    case NanRule::kNegZero:
      nan_bits = sign_bit;
      break;
    case NanRule::kExpAllOnes:
      max_exp = exp_all - 1;
      nan_bits = exp_all << mb;
      break;
    case NanRule::kNone:
      nan_bits = (exp_all << mb) | mant_all;  // no NaN: the largest magnitude
      break;
  }
  const bool keeps_nan_sign = f.nan == NanRule::kIeee || f.nan == NanRule::kAllOnesOnly;
  const bool neg = std::signbit(value);
  const uint32_t sign = neg ? sign_bit : 0;
  if (std::isnan(value)) return nan_bits | (keeps_nan_sign ? sign : 0);
  const uint32_t max_finite = (max_exp << mb) | max_mant;
  const uint32_t overflow = f.nan == NanRule::kIeee   ? sign | (exp_all << mb)
                            : f.nan == NanRule::kNone ? sign | max_finite
                                                      : nan_bits | (keeps_nan_sign ? sign : 0);
  const double a = std::fabs(value);
  if (std::isinf(a)) return overflow;
  if (!f.has_sign && neg && a != 0) return nan_bits;
  if (a == 0) return f.nan == NanRule::kNegZero || !f.has_sign ? 0 : sign;
  const int min_exp = 1 - f.bias;
  int e;
  std::frexp(a, &e);
  int unbiased = e - 1;
  uint32_t field;
  if (unbiased < min_exp) {
    field = static_cast<uint32_t>(std::nearbyint(std::ldexp(a, mb - min_exp)));
  } else {
    uint64_t n = static_cast<uint64_t>(std::nearbyint(std::ldexp(a, mb - unbiased)));
    if (n == (uint64_t{2} << mb)) {
      ++unbiased;
      n = uint64_t{1} << mb;
    }
    const int64_t exp_field = int64_t{unbiased} + f.bias;
    if (exp_field > static_cast<int64_t>(max_exp)) return overflow;
    field = (static_cast<uint32_t>(exp_field) << mb) | static_cast<uint32_t>(n - (1u << mb));
  }
  if (field > max_finite) return overflow;
  if (field == 0 && f.nan == NanRule::kNegZero) return 0;
  return sign | field;
}

// Every bit pattern of `type` (at most 2^16) decoded once.
const std::vector<float>& DecodeTable(ElementType type) {
  static std::unique_ptr<std::vector<float>> tables[static_cast<int>(ElementType::kC128) + 1];
  static std::once_flag once[static_cast<int>(ElementType::kC128) + 1];
  const int index = static_cast<int>(type);
  std::call_once(once[index], [&] {
    const Format f = FormatOf(type);
    const uint32_t patterns = 1u << ElementBitWidth(type);
    auto table = std::make_unique<std::vector<float>>(patterns);
    for (uint32_t bits = 0; bits < patterns; ++bits) {
      (*table)[bits] = static_cast<float>(Decode(f, bits));
    }
    tables[index] = std::move(table);
  });
  return *tables[index];
}

uint32_t LoadBits(const void* src, int64_t i, int bytes) {
  if (bytes == 2) {
    uint16_t v;
    std::memcpy(&v, static_cast<const uint8_t*>(src) + 2 * i, 2);
    return v;
  }
  return static_cast<const uint8_t*>(src)[i];
}

void StoreBits(void* dst, int64_t i, int bytes, uint32_t bits) {
  if (bytes == 2) {
    const uint16_t v = static_cast<uint16_t>(bits);
    std::memcpy(static_cast<uint8_t*>(dst) + 2 * i, &v, 2);
  } else {
    static_cast<uint8_t*>(dst)[i] = static_cast<uint8_t>(bits);
  }
}

}  // namespace

float NarrowToFloat(ElementType type, uint32_t bits) {
  return DecodeTable(type)[bits & ((1u << ElementBitWidth(type)) - 1)];
}

uint32_t FloatToNarrow(ElementType type, double value) { return Encode(FormatOf(type), value); }

void ToFloat(ElementType type, const void* src, int64_t count, float* dst) {
  if (type == ElementType::kF32) {
    std::memcpy(dst, src, count * sizeof(float));
    return;
  }
  if (type == ElementType::kBF16) {  // the top half of an f32
    for (int64_t i = 0; i < count; ++i) {
      const uint32_t bits = LoadBits(src, i, 2) << 16;
      std::memcpy(&dst[i], &bits, 4);
    }
    return;
  }
  const std::vector<float>& table = DecodeTable(type);
  const int bytes = ElementByteWidth(type);
  const uint32_t mask = (1u << ElementBitWidth(type)) - 1;
  for (int64_t i = 0; i < count; ++i) dst[i] = table[LoadBits(src, i, bytes) & mask];
}

void FromFloat(ElementType type, const float* src, int64_t count, void* dst) {
  if (type == ElementType::kF32) {
    std::memcpy(dst, src, count * sizeof(float));
    return;
  }
  const Format f = FormatOf(type);
  const int bytes = ElementByteWidth(type);
  for (int64_t i = 0; i < count; ++i) {
    StoreBits(dst, i, bytes, Encode(f, static_cast<double>(src[i])));
  }
}

}  // namespace xlite::hostlib
