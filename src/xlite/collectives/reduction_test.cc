#include "xlite/collectives/reduction.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "xlite/ir/float_format.h"
#include "xlite/text/parser.h"

namespace xlite::collectives {
namespace {
namespace XLITE_UNITY_ID {

uint16_t Bf16(float f) { return static_cast<uint16_t>(std::bit_cast<uint32_t>(f) >> 16); }
float FromBf16(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

TEST(Reduction, SmallFloatsRoundAfterEveryStep) {
  // 1 + 3*2^-10 rounds back to 1 in bf16 (ulp 2^-7) each time; summing both
  // first would give 1 + 2^-7.
  uint16_t acc = Bf16(1.0f);
  const uint16_t small = Bf16(3.0f / 1024);
  ASSERT_TRUE(
      Accumulate(Reduction::Of(ReductionKind::kSum), PrimitiveType::BF16, &acc, &small, 1).ok());
  ASSERT_TRUE(
      Accumulate(Reduction::Of(ReductionKind::kSum), PrimitiveType::BF16, &acc, &small, 1).ok());
  EXPECT_EQ(FromBf16(acc), 1.0f);
}

// The bf16/f16 shortcuts against the IR's DecodeFloat/EncodeFloat: every
// pattern as the left operand, summed with values that land between
// representable ones (halfway cases included), NaNs and infinities.
TEST(Reduction, HalfWidthShortcutsMatchTheIrEncodings) {
  for (PrimitiveType type : {PrimitiveType::BF16, PrimitiveType::F16}) {
    const FloatFormat format = *GetFloatFormat(type);
    const float addends[] = {0.0f,
                             -0.0f,
                             1.0f,
                             -1.0f,
                             3.0f / 1024,
                             1.0f / 256,
                             1.0f / 512,
                             65504.0f,
                             1e-8f,
                             -1e-8f,
                             6e-8f,
                             3e38f,
                             std::numeric_limits<float>::infinity(),
                             std::numeric_limits<float>::quiet_NaN()};
    for (uint32_t bits = 0; bits < 0x10000; ++bits) {
      const float x = static_cast<float>(DecodeFloat(format, bits));
      for (float y : addends) {
        for (ReductionKind kind : {ReductionKind::kSum, ReductionKind::kMax}) {
          // The interpreter's way on the operand patterns: decode, float
          // arithmetic, one EncodeFloat.
          const uint16_t y_bits = static_cast<uint16_t>(EncodeFloat(format, y));
          const float y_rounded = static_cast<float>(DecodeFloat(format, y_bits));
          const float want_rounded_value = kind == ReductionKind::kSum ? x + y_rounded
                                           : std::isnan(x)             ? x
                                           : std::isnan(y_rounded)     ? y_rounded
                                                                       : std::max(x, y_rounded);
          // Which NaN x + y returns when both are NaN is the hardware's (and
          // the compiler's operand order's) choice, in the interpreter too.
          if (kind == ReductionKind::kSum && std::isnan(x) && std::isnan(y_rounded)) continue;
          const uint16_t want_rounded =
              static_cast<uint16_t>(EncodeFloat(format, want_rounded_value));
          uint16_t acc = static_cast<uint16_t>(bits);
          ASSERT_TRUE(Accumulate(Reduction::Of(kind), type, &acc, &y_bits, 1).ok());
          ASSERT_EQ(acc, want_rounded) << PrimitiveTypeName(type) << " pattern " << bits << " op "
                                       << ReductionKindName(kind) << " " << y;
        }
      }
    }
  }
}

TEST(Reduction, MinMaxPropagateTheLeftNaN) {
  float acc[3] = {std::numeric_limits<float>::quiet_NaN(), 1.0f, -0.0f};
  const float in[3] = {2.0f, std::numeric_limits<float>::quiet_NaN(), 0.0f};
  ASSERT_TRUE(Accumulate(Reduction::Of(ReductionKind::kMax), PrimitiveType::F32, acc, in, 3).ok());
  EXPECT_TRUE(std::isnan(acc[0]));
  EXPECT_TRUE(std::isnan(acc[1]));
  EXPECT_TRUE(std::signbit(acc[2]));  // max(-0, +0) keeps the left one, as std::max does
}

TEST(Reduction, IntegersWrapInTheirWidth) {
  uint8_t s4[2] = {0x7, 0xF};  // 7, -1 as s4
  const uint8_t one[2] = {0x1, 0x1};
  ASSERT_TRUE(Accumulate(Reduction::Of(ReductionKind::kSum), PrimitiveType::S4, s4, one, 2).ok());
  EXPECT_EQ(s4[0], 0x8);  // 7 + 1 wraps to -8
  EXPECT_EQ(s4[1], 0x0);
  uint8_t pred[2] = {1, 0};
  const uint8_t p2[2] = {1, 0};
  ASSERT_TRUE(
      Accumulate(Reduction::Of(ReductionKind::kSum), PrimitiveType::PRED, pred, p2, 2).ok());
  EXPECT_EQ(pred[0], 1);  // 1 + 1 as int8 is 2, stored != 0
  EXPECT_EQ(pred[1], 0);
  int32_t mn = -5;
  const int32_t three = 3;
  ASSERT_TRUE(
      Accumulate(Reduction::Of(ReductionKind::kMin), PrimitiveType::S32, &mn, &three, 1).ok());
  EXPECT_EQ(mn, -5);
  uint32_t umn = 0xFFFFFFFB;
  const uint32_t uthree = 3;
  ASSERT_TRUE(
      Accumulate(Reduction::Of(ReductionKind::kMin), PrimitiveType::U32, &umn, &uthree, 1).ok());
  EXPECT_EQ(umn, 3u);
}

TEST(Reduction, UnsupportedCombinationsAreErrors) {
  float f = 0;
  absl::Status s = Accumulate(Reduction::Of(ReductionKind::kAnd), PrimitiveType::F32, &f, &f, 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("f32"), std::string::npos) << s;
  EXPECT_FALSE(CheckReduction(Reduction::Of(ReductionKind::kSum), PrimitiveType::TUPLE).ok());
  EXPECT_FALSE(CheckReduction(Reduction{}, PrimitiveType::F32).ok());
}

TEST(Reduction, CustomReducerRunsPerElement) {
  int32_t acc[3] = {1, 2, 3};
  const int32_t in[3] = {10, 20, 30};
  Reduction r = Reduction::Custom([](const void* a, const void* b, void* out) {
    int32_t x, y;
    std::memcpy(&x, a, 4);
    std::memcpy(&y, b, 4);
    const int32_t z = x * y + 1;
    std::memcpy(out, &z, 4);
  });
  ASSERT_TRUE(Accumulate(r, PrimitiveType::S32, acc, in, 3).ok());
  EXPECT_EQ(acc[0], 11);
  EXPECT_EQ(acc[2], 91);
}

TEST(Reduction, MatchesPlainReductionComputations) {
  auto kind_of = [](const std::string& body) -> std::optional<ReductionKind> {
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(
        "HloModule m\nENTRY r {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n" + body +
            "\n}\n",
        "t.hlo");
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? MatchReductionComputation(*(*m)->entry_computation()) : std::nullopt;
  };
  EXPECT_EQ(kind_of("  ROOT s = s32[] add(a, b)"), ReductionKind::kSum);
  EXPECT_EQ(kind_of("  ROOT s = s32[] multiply(a, b)"), ReductionKind::kProduct);
  EXPECT_EQ(kind_of("  ROOT s = s32[] maximum(a, b)"), ReductionKind::kMax);
  EXPECT_EQ(kind_of("  ROOT s = s32[] xor(a, b)"), ReductionKind::kXor);
  EXPECT_EQ(kind_of("  ROOT s = s32[] add(b, a)"), std::nullopt);
  EXPECT_EQ(kind_of("  ROOT s = s32[] subtract(a, b)"), std::nullopt);
  EXPECT_EQ(kind_of("  c = s32[] add(a, b)\n  ROOT s = s32[] add(c, b)"), std::nullopt);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::collectives
