#include "xlite/ir/float_format.h"

#include <cmath>
#include <limits>

namespace xlite {

int FloatFormat::digits10() const {
  return static_cast<int>(std::floor(mantissa_bits * std::log10(2.0)));
}

int FloatFormat::max_digits10() const {
  return static_cast<int>(std::ceil((mantissa_bits + 1) * std::log10(2.0) + 1));
}

std::optional<FloatFormat> GetFloatFormat(PrimitiveType type) {
  using N = FloatFormat::Nan;
  switch (type) {
    case PrimitiveType::F16:
      return FloatFormat{5, 10, 15, true, true, N::kIeee};
    case PrimitiveType::BF16:
      return FloatFormat{8, 7, 127, true, true, N::kIeee};
    case PrimitiveType::F32:
      return FloatFormat{8, 23, 127, true, true, N::kIeee};
    case PrimitiveType::F64:
      return FloatFormat{11, 52, 1023, true, true, N::kIeee};
    case PrimitiveType::F8E5M2:
      return FloatFormat{5, 2, 15, true, true, N::kIeee};
    case PrimitiveType::F8E4M3:
      return FloatFormat{4, 3, 7, true, true, N::kIeee};
    case PrimitiveType::F8E4M3FN:
      return FloatFormat{4, 3, 7, true, false, N::kFiniteAllOnesNan};
    case PrimitiveType::F8E4M3B11FNUZ:
      return FloatFormat{4, 3, 11, true, false, N::kNegZeroNan};
    case PrimitiveType::F8E5M2FNUZ:
      return FloatFormat{5, 2, 16, true, false, N::kNegZeroNan};
    case PrimitiveType::F8E4M3FNUZ:
      return FloatFormat{4, 3, 8, true, false, N::kNegZeroNan};
    case PrimitiveType::F8E3M4:
      return FloatFormat{3, 4, 3, true, true, N::kIeee};
    case PrimitiveType::F4E2M1FN:
      return FloatFormat{2, 1, 1, true, false, N::kNone};
    case PrimitiveType::F8E8M0FNU:
      return FloatFormat{8, 0, 127, false, false, N::kAllOnesNan};
    default:
      return std::nullopt;
  }
}

uint64_t QuietNanBits(const FloatFormat& f) {
  const uint64_t exp_all = (uint64_t{1} << f.exponent_bits) - 1;
  const uint64_t mant_all = (uint64_t{1} << f.mantissa_bits) - 1;
  switch (f.nan) {
    case FloatFormat::Nan::kIeee:
      return (exp_all << f.mantissa_bits) | (uint64_t{1} << (f.mantissa_bits - 1));
    case FloatFormat::Nan::kFiniteAllOnesNan:
      return (exp_all << f.mantissa_bits) | mant_all;
    case FloatFormat::Nan::kNegZeroNan:
      return uint64_t{1} << (f.total_bits() - 1);
    case FloatFormat::Nan::kAllOnesNan:
      return (exp_all << f.mantissa_bits) | mant_all;
    case FloatFormat::Nan::kNone:
      return 0;
  }
  return 0;
}

double DecodeFloat(const FloatFormat& f, uint64_t bits) {
  const int mb = f.mantissa_bits;
  const uint64_t mant = bits & ((uint64_t{1} << mb) - 1);
  const uint64_t exp = (bits >> mb) & ((uint64_t{1} << f.exponent_bits) - 1);
  const bool neg = f.has_sign && ((bits >> (f.exponent_bits + mb)) & 1);
  const uint64_t exp_all = (uint64_t{1} << f.exponent_bits) - 1;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (f.nan) {
    case FloatFormat::Nan::kIeee:
      if (exp == exp_all) {
        if (mant == 0) return neg ? -INFINITY : INFINITY;
        return neg ? -nan : nan;
      }
      break;
    case FloatFormat::Nan::kFiniteAllOnesNan:
      if (exp == exp_all && mant == (uint64_t{1} << mb) - 1) return neg ? -nan : nan;
      break;
    case FloatFormat::Nan::kNegZeroNan:
      if (neg && exp == 0 && mant == 0) return nan;
      break;
    case FloatFormat::Nan::kAllOnesNan:
      if (exp == exp_all) return nan;
      break;
    case FloatFormat::Nan::kNone:
      break;
  }
  double v;
  if (exp == 0 && f.mantissa_bits > 0) {
    v = std::ldexp(static_cast<double>(mant), 1 - f.bias - mb);
  } else {
    v = std::ldexp(static_cast<double>(mant | (uint64_t{1} << mb)),
                   static_cast<int>(exp) - f.bias - mb);
  }
  return neg ? -v : v;
}

uint64_t EncodeFloat(const FloatFormat& f, double value) {
  const int mb = f.mantissa_bits;
  const uint64_t sign_bit = f.has_sign ? uint64_t{1} << (f.exponent_bits + mb) : 0;
  const uint64_t exp_all = (uint64_t{1} << f.exponent_bits) - 1;
  if (std::isnan(value)) {
    uint64_t q = QuietNanBits(f);
    if (f.nan == FloatFormat::Nan::kNone) return exp_all << mb | ((uint64_t{1} << mb) - 1);
    if (f.nan != FloatFormat::Nan::kNegZeroNan && std::signbit(value)) q |= sign_bit;
    return q;
  }
  const bool neg = std::signbit(value);
  uint64_t sign = neg ? sign_bit : 0;
  double a = std::fabs(value);
  // Largest finite encoding's exponent field and mantissa.
  uint64_t max_exp_field = exp_all;
  uint64_t max_mant = (uint64_t{1} << mb) - 1;
  switch (f.nan) {
    case FloatFormat::Nan::kIeee:
      max_exp_field = exp_all - 1;
      break;
    case FloatFormat::Nan::kFiniteAllOnesNan:
      max_mant = max_mant - 1;
      break;
    case FloatFormat::Nan::kAllOnesNan:
      max_exp_field = exp_all - 1;
      break;
    default:
      break;
  }
  const uint64_t max_finite = (max_exp_field << mb) | max_mant;
  auto overflow = [&]() -> uint64_t {
    if (f.has_inf) return sign | (exp_all << mb);
    if (f.nan == FloatFormat::Nan::kNone) return sign | max_finite;  // saturate
    return EncodeFloat(f, std::numeric_limits<double>::quiet_NaN()) |
           (neg && f.nan != FloatFormat::Nan::kNegZeroNan ? sign : 0);
  };
  if (std::isinf(a)) return overflow();
  if (!f.has_sign && neg && a != 0) return EncodeFloat(f, std::numeric_limits<double>::quiet_NaN());
  if (a == 0) {
    if (f.nan == FloatFormat::Nan::kNegZeroNan || !f.has_sign) return 0;
    return sign;
  }
  const int min_exp = 1 - f.bias;  // exponent of the smallest normal
  int e;
  std::frexp(a, &e);
  int unbiased = e - 1;
  uint64_t field;
  if (unbiased < min_exp) {
    double q = std::ldexp(a, -(min_exp - mb));
    double n = std::nearbyint(q);  // default rounding mode: to nearest even
    field = static_cast<uint64_t>(n);
    if (mb == 0 && field == 0) field = 0;
  } else {
    double q = std::ldexp(a, -(unbiased - mb));
    double n = std::nearbyint(q);
    uint64_t ni = static_cast<uint64_t>(n);
    if (ni == (uint64_t{2} << mb)) {
      ++unbiased;
      ni = uint64_t{1} << mb;
    }
    int64_t exp_field = unbiased + f.bias;
    if (exp_field > static_cast<int64_t>(max_exp_field)) return overflow();
    field = (static_cast<uint64_t>(exp_field) << mb) | (ni - (uint64_t{1} << mb));
  }
  if (field > max_finite) return overflow();
  if (f.nan == FloatFormat::Nan::kNegZeroNan && field == 0) return 0;
  return sign | field;
}

}  // namespace xlite
