// hostlib's narrow-float conversions agree with the IR's (ir/float_format.h,
// which the interpreter uses) on every bit pattern, and on rounding a sweep of
// f32 values.
#include "xlite/hostlib/float_convert.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include "gtest/gtest.h"
#include "xlite/ir/float_format.h"
#include "xlite/ir/primitive_type.h"

namespace xlite::hostlib {
namespace {
namespace XLITE_UNITY_ID {

constexpr ElementType kNarrow[] = {
    ElementType::kF16,        ElementType::kBF16,       ElementType::kF8E5M2,
    ElementType::kF8E4M3,     ElementType::kF8E4M3FN,   ElementType::kF8E4M3B11FNUZ,
    ElementType::kF8E5M2FNUZ, ElementType::kF8E4M3FNUZ, ElementType::kF8E3M4,
    ElementType::kF4E2M1FN,   ElementType::kF8E8M0FNU};

FloatFormat IrFormat(ElementType type) {
  return *GetFloatFormat(*PrimitiveTypeFromName(ElementTypeName(type)));
}

bool SameFloat(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

TEST(FloatConvert, DecodesEveryPatternAsTheIr) {
  for (ElementType type : kNarrow) {
    const FloatFormat f = IrFormat(type);
    const uint32_t patterns = 1u << ElementBitWidth(type);
    for (uint32_t bits = 0; bits < patterns; ++bits) {
      ASSERT_TRUE(SameFloat(NarrowToFloat(type, bits), DecodeFloat(f, bits)))
          << ElementTypeName(type) << " bits " << bits;
    }
  }
}

TEST(FloatConvert, RoundsAsTheIr) {
  std::mt19937 rng(5);
  for (ElementType type : kNarrow) {
    const FloatFormat f = IrFormat(type);
    // Every pattern's value, the midpoints between neighbours, overflow,
    // infinities, NaN, random f32 bit patterns.
    std::vector<double> values = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 1e30, -1e30, 1e-30};
    const uint32_t patterns = 1u << ElementBitWidth(type);
    for (uint32_t bits = 0; bits + 1 < patterns; ++bits) {
      const double a = DecodeFloat(f, bits), b = DecodeFloat(f, bits + 1);
      values.push_back(a);
      if (std::isfinite(a) && std::isfinite(b)) values.push_back((a + b) / 2);
    }
    for (int i = 0; i < 20000; ++i) {
      const uint32_t bits = rng();
      float v;
      std::memcpy(&v, &bits, 4);
      values.push_back(v);
    }
    for (double v : values) {
      const float as_float = static_cast<float>(v);
      if (static_cast<double>(as_float) != v && !std::isnan(v)) continue;  // f32 inputs only
      ASSERT_EQ(FloatToNarrow(type, v), EncodeFloat(f, v)) << ElementTypeName(type) << " " << v;
    }
  }
}

TEST(FloatConvert, BulkConversionsRoundTrip) {
  const float in[5] = {1.5f, -2.25f, 0.0f, 1e10f, -INFINITY};
  uint16_t bf16[5];
  FromFloat(ElementType::kBF16, in, 5, bf16);
  float back[5];
  ToFloat(ElementType::kBF16, bf16, 5, back);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(back[i], NarrowToFloat(ElementType::kBF16, FloatToNarrow(ElementType::kBF16, in[i])));
  }
  EXPECT_EQ(back[0], 1.5f);
  EXPECT_EQ(back[4], -INFINITY);
  uint8_t e4m3[2];
  const float big[2] = {1000.0f, -448.0f};  // f8e4m3fn: no infinity, 1000 -> NaN
  FromFloat(ElementType::kF8E4M3FN, big, 2, e4m3);
  EXPECT_EQ(e4m3[0], 0x7f);
  EXPECT_EQ(e4m3[1], 0xfe);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::hostlib
