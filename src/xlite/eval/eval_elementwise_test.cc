// Tests for the elementwise family of the reference interpreter. Expected
// values come from XLA's operation semantics, worked out by hand.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "xlite/eval/evaluator.h"
#include "xlite/text/parser.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

// Evaluates `body` as the entry computation of a module.
absl::StatusOr<Literal> Evaluated(absl::string_view body, const std::vector<Literal>& args = {}) {
  auto module = ParseHloModule(absl::StrCat("HloModule m\n\nENTRY e {\n", body, "\n}\n"), "t.hlo");
  if (!module.ok()) return module.status();
  return Evaluate(**module, args);
}

// The result as XLA prints a literal's values, or "error: <message>".
std::string Eval(absl::string_view body, const std::vector<Literal>& args = {}) {
  absl::StatusOr<Literal> result = Evaluated(body, args);
  if (!result.ok()) return absl::StrCat("error: ", result.status().message());
  return result->ToStringWithoutShapeOneline();
}

// A literal of `type` with the given raw element bits.
Literal FromBits(PrimitiveType type, const std::vector<uint64_t>& bits) {
  Literal lit(Shape::Array(type, {static_cast<int64_t>(bits.size())}));
  for (size_t i = 0; i < bits.size(); ++i) lit.SetBits(i, bits[i]);
  return lit;
}

Literal F32s(const std::vector<float>& values) {
  Literal lit(Shape::Array(PrimitiveType::F32, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) lit.SetBits(i, std::bit_cast<uint32_t>(values[i]));
  return lit;
}

std::vector<uint64_t> Bits(const Literal& lit) {
  std::vector<uint64_t> bits;
  for (int64_t i = 0; i < lit.element_count(); ++i) bits.push_back(lit.GetBits(i));
  return bits;
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// ------------------------------------------------------------- integers

TEST(EvalElementwiseTest, IntegerArithmeticWraps) {
  EXPECT_EQ(Eval("a = s32[2] constant({2147483647, -2147483648})\n"
                 "b = s32[2] constant({1, -1})\nROOT r = s32[2] add(a, b)"),
            "{-2147483648, 2147483647}");
  EXPECT_EQ(Eval("a = s8[2] constant({127, -128})\nROOT r = s8[2] negate(a)"), "{-127, -128}");
  EXPECT_EQ(Eval("a = u8[2] constant({255, 0})\nb = u8[2] constant({1, 1})\n"
                 "ROOT r = u8[2] subtract(b, a)"),
            "{2, 1}");
  EXPECT_EQ(Eval("a = s32[1] constant({65536})\nROOT r = s32[1] multiply(a, a)"), "{0}");
  EXPECT_EQ(Eval("a = s64[1] constant({-9223372036854775808})\nROOT r = s64[1] abs(a)"),
            "{-9223372036854775808}");
}

TEST(EvalElementwiseTest, SubByteIntegersWrap) {
  EXPECT_EQ(Eval("a = s4[3] constant({7, -8, 3})\nb = s4[3] constant({1, -1, 2})\n"
                 "ROOT r = s4[3] add(a, b)"),
            "{-8, 7, 5}");
  EXPECT_EQ(Eval("a = u4[2] constant({15, 3})\nb = u4[2] constant({1, 5})\n"
                 "ROOT r = u4[2] multiply(a, b)"),
            "{15, 15}");
}

TEST(EvalElementwiseTest, SignedDivisionEdgeCases) {
  const std::string operands =
      "a = s32[6] constant({7, -7, 5, -2147483648, 0, -5})\n"
      "b = s32[6] constant({2, 2, 0, -1, 0, 3})\n";
  EXPECT_EQ(Eval(operands + "ROOT r = s32[6] divide(a, b)"), "{3, -3, -1, -2147483648, -1, -1}");
  EXPECT_EQ(Eval(operands + "ROOT r = s32[6] remainder(a, b)"), "{1, -1, 5, 0, 0, -2}");
  EXPECT_EQ(Eval("a = s64[1] constant({-9223372036854775808})\nb = s64[1] constant({-1})\n"
                 "ROOT r = s64[1] divide(a, b)"),
            "{-9223372036854775808}");
}

TEST(EvalElementwiseTest, UnsignedDivisionByZero) {
  const std::string operands =
      "a = u32[3] constant({5, 4294967295, 9})\nb = u32[3] constant({0, 2, 4})\n";
  EXPECT_EQ(Eval(operands + "ROOT r = u32[3] divide(a, b)"), "{4294967295, 2147483647, 2}");
  EXPECT_EQ(Eval(operands + "ROOT r = u32[3] remainder(a, b)"), "{5, 1, 1}");
}

TEST(EvalElementwiseTest, ShiftsWithOutOfRangeAmounts) {
  const std::string operands =
      "a = s32[5] constant({1, 1, 1, -8, 8})\nb = s32[5] constant({31, 32, -1, 1, 40})\n";
  EXPECT_EQ(Eval(operands + "ROOT r = s32[5] shift-left(a, b)"), "{-2147483648, 0, 0, -16, 0}");
  EXPECT_EQ(Eval(operands + "ROOT r = s32[5] shift-right-arithmetic(a, b)"), "{0, 0, 0, -4, 0}");
  EXPECT_EQ(Eval("a = s32[4] constant({-8, -8, -8, -1})\nb = s32[4] constant({1, 28, 32, -3})\n"
                 "ROOT r = s32[4] shift-right-logical(a, b)"),
            "{2147483644, 15, 0, 0}");
  EXPECT_EQ(Eval("a = s8[3] constant({-128, -1, 64})\nb = s8[3] constant({8, 100, 1})\n"
                 "ROOT r = s8[3] shift-right-arithmetic(a, b)"),
            "{-1, -1, 32}");
}

TEST(EvalElementwiseTest, IntegerPower) {
  EXPECT_EQ(Eval("a = s32[7] constant({2, 1, -1, 0, 2, 3, -2})\n"
                 "b = s32[7] constant({10, -5, -3, 0, -1, 0, 3})\n"
                 "ROOT r = s32[7] power(a, b)"),
            "{1024, 1, 0, 1, 0, 1, -8}");
  EXPECT_EQ(Eval("a = u8[2] constant({3, 2})\nb = u8[2] constant({5, 9})\n"
                 "ROOT r = u8[2] power(a, b)"),
            "{243, 0}");
}

TEST(EvalElementwiseTest, MaxMinAndSignOnIntegers) {
  EXPECT_EQ(Eval("a = u32[2] constant({4294967295, 1})\nb = u32[2] constant({1, 2})\n"
                 "ROOT r = u32[2] maximum(a, b)"),
            "{4294967295, 2}");
  EXPECT_EQ(Eval("a = s32[2] constant({-1, 5})\nb = s32[2] constant({1, 2})\n"
                 "ROOT r = s32[2] minimum(a, b)"),
            "{-1, 2}");
  EXPECT_EQ(Eval("a = s32[3] constant({-7, 0, 9})\nROOT r = s32[3] sign(a)"), "{-1, 0, 1}");
}

TEST(EvalElementwiseTest, BitOperations) {
  const std::string a = "a = s32[4] constant({0, 1, -1, 240})\n";
  EXPECT_EQ(Eval(a + "ROOT r = s32[4] popcnt(a)"), "{0, 1, 32, 4}");
  EXPECT_EQ(Eval(a + "ROOT r = s32[4] count-leading-zeros(a)"), "{32, 31, 0, 24}");
  EXPECT_EQ(Eval(a + "ROOT r = s32[4] not(a)"), "{-1, -2, 0, -241}");
  EXPECT_EQ(Eval("a = u8[2] constant({1, 128})\nROOT r = u8[2] count-leading-zeros(a)"), "{7, 0}");
  EXPECT_EQ(Eval("a = u8[1] constant({12})\nb = u8[1] constant({10})\n"
                 "x = u8[1] and(a, b)\ny = u8[1] or(a, b)\nz = u8[1] xor(a, b)\n"
                 "ROOT r = (u8[1], u8[1], u8[1]) tuple(x, y, z)"),
            "( {8}, {14}, {6} )");
}

TEST(EvalElementwiseTest, Mulhi) {
  EXPECT_EQ(Eval("a = s32[3] constant({1073741824, -1, -2147483648})\n"
                 "b = s32[3] constant({4, 1, -2147483648})\nROOT r = s32[3] mulhi(a, b)"),
            "{1, -1, 1073741824}");
  EXPECT_EQ(Eval("a = u32[1] constant({4294967295})\nROOT r = u32[1] mulhi(a, a)"), "{4294967294}");
  EXPECT_EQ(Eval("a = u64[1] constant({18446744073709551615})\nb = u64[1] constant({2})\n"
                 "ROOT r = u64[1] mulhi(a, b)"),
            "{1}");
}

TEST(EvalElementwiseTest, PredArithmeticActsLikeInt8NonZero) {
  const std::string operands =
      "a = pred[4] constant({0, 0, 1, 1})\nb = pred[4] constant({0, 1, 0, 1})\n";
  EXPECT_EQ(Eval(operands + "ROOT r = pred[4] add(a, b)"), "{0, 1, 1, 1}");
  EXPECT_EQ(Eval(operands + "ROOT r = pred[4] subtract(a, b)"), "{0, 1, 1, 0}");
  EXPECT_EQ(Eval(operands + "ROOT r = pred[4] multiply(a, b)"), "{0, 0, 0, 1}");
  EXPECT_EQ(Eval(operands + "ROOT r = pred[4] divide(a, b)"), "{1, 0, 1, 1}");
  EXPECT_EQ(Eval(operands + "ROOT r = pred[4] xor(a, b)"), "{0, 1, 1, 0}");
  EXPECT_EQ(Eval(operands + "ROOT r = pred[4] not(a)"), "{1, 1, 0, 0}");
  EXPECT_EQ(Eval(operands + "ROOT r = pred[4] maximum(a, b)"), "{0, 1, 1, 1}");
}

// ----------------------------------------------------------------- floats

TEST(EvalElementwiseTest, FloatBasics) {
  EXPECT_EQ(Eval("a = f32[3] constant({1.5, -2, 0.25})\nb = f32[3] constant({2, 4, -0.5})\n"
                 "ROOT r = f32[3] divide(a, b)"),
            "{0.75, -0.5, -0.5}");
  EXPECT_EQ(Eval("a = f32[2] constant({5.5, -5.5})\nb = f32[2] constant({2, 2})\n"
                 "ROOT r = f32[2] remainder(a, b)"),
            "{1.5, -1.5}");
  EXPECT_EQ(Eval("a = f32[4] constant({0, 1, 4, 9})\nROOT r = f32[4] sqrt(a)"), "{0, 1, 2, 3}");
  EXPECT_EQ(Eval("a = f32[1] constant({0})\nROOT r = f32[1] logistic(a)"), "{0.5}");
}

TEST(EvalElementwiseTest, TranscendentalsAgreeWithLibm) {
  absl::StatusOr<Literal> r = Evaluated(
      "a = f64[1] constant({0.5})\nb = f64[1] constant({-0.25})\n"
      "e = f64[1] exponential-minus-one(a)\nl = f64[1] log-plus-one(a)\n"
      "t = f64[1] atan2(a, b)\nf = f64[1] erf(a)\ng = f64[1] tan(a)\nh = f64[1] acosh(a)\n"
      "ROOT r = (f64[1], f64[1], f64[1], f64[1], f64[1], f64[1]) tuple(e, l, t, f, g, h)");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_DOUBLE_EQ(r->tuple_elements()[0].GetDouble(0), std::expm1(0.5));
  EXPECT_DOUBLE_EQ(r->tuple_elements()[1].GetDouble(0), std::log1p(0.5));
  EXPECT_DOUBLE_EQ(r->tuple_elements()[2].GetDouble(0), std::atan2(0.5, -0.25));
  EXPECT_DOUBLE_EQ(r->tuple_elements()[3].GetDouble(0), std::erf(0.5));
  EXPECT_DOUBLE_EQ(r->tuple_elements()[4].GetDouble(0), std::tan(0.5));
  absl::StatusOr<Literal> cbrt = Evaluated("a = f64[1] constant({-27})\nROOT r = f64[1] cbrt(a)");
  ASSERT_TRUE(cbrt.ok()) << cbrt.status();
  EXPECT_NEAR(cbrt->GetDouble(0), -3.0, 1e-15);
  EXPECT_TRUE(std::isnan(r->tuple_elements()[5].GetDouble(0)));
}

TEST(EvalElementwiseTest, MaxMinPropagateNaN) {
  const std::vector<Literal> args = {F32s({kNaN, 1, 2, -0.0f}), F32s({1, kNaN, 3, 0.0f})};
  const std::string params = "a = f32[4] parameter(0)\nb = f32[4] parameter(1)\n";
  EXPECT_EQ(Eval(params + "ROOT r = f32[4] maximum(a, b)", args), "{nan, nan, 3, -0}");
  EXPECT_EQ(Eval(params + "ROOT r = f32[4] minimum(a, b)", args), "{nan, nan, 2, -0}");
}

TEST(EvalElementwiseTest, FloatPowerSpecialCases) {
  const std::vector<Literal> args = {F32s({1, kNaN, 2, 0, 4}), F32s({kNaN, 0, 10, -1, 0.5f})};
  EXPECT_EQ(Eval("a = f32[5] parameter(0)\nb = f32[5] parameter(1)\n"
                 "ROOT r = f32[5] power(a, b)",
                 args),
            "{1, 1, 1024, inf, 2}");
}

TEST(EvalElementwiseTest, SignKeepsNegativeZeroAndNaN) {
  EXPECT_EQ(Eval("a = f32[5] parameter(0)\nROOT r = f32[5] sign(a)",
                 {F32s({-2.5f, -0.0f, 0.0f, 3, kNaN})}),
            "{-1, -0, 0, 1, nan}");
}

TEST(EvalElementwiseTest, Rounding) {
  const std::string a = "a = f32[6] constant({2.5, 3.5, -2.5, 0.4, -0.6, 1.5})\n";
  EXPECT_EQ(Eval(a + "ROOT r = f32[6] round-nearest-afz(a)"), "{3, 4, -3, 0, -1, 2}");
  EXPECT_EQ(Eval(a + "ROOT r = f32[6] round-nearest-even(a)"), "{2, 4, -2, 0, -1, 2}");
  EXPECT_EQ(Eval(a + "ROOT r = f32[6] floor(a)"), "{2, 3, -3, 0, -1, 1}");
  EXPECT_EQ(Eval(a + "ROOT r = f32[6] ceil(a)"), "{3, 4, -2, 1, -0, 2}");
}

TEST(EvalElementwiseTest, IsFinite) {
  EXPECT_EQ(Eval("a = f32[4] parameter(0)\nROOT r = pred[4] is-finite(a)",
                 {F32s({1, kInf, -kInf, kNaN})}),
            "{1, 0, 0, 0}");
}

TEST(EvalElementwiseTest, HalfTypesComputeInFloatAndRound) {
  // 1 + 2^-8 is a tie between bf16 neighbours 1 and 1 + 2^-7: even wins.
  absl::StatusOr<Literal> bf16 = Evaluated(
      "a = bf16[2] constant({1, 1.0078125})\nb = bf16[2] constant({0.00390625, 0.00390625})\n"
      "ROOT r = bf16[2] add(a, b)");
  ASSERT_TRUE(bf16.ok()) << bf16.status();
  EXPECT_EQ(bf16->GetDouble(0), 1.0);
  EXPECT_EQ(bf16->GetDouble(1), 1.015625);
  EXPECT_EQ(Eval("a = f16[2] constant({65504, 1})\nROOT r = f16[2] add(a, a)"), "{inf, 2}");
  absl::StatusOr<Literal> f8 = Evaluated(
      "a = f8e4m3fn[2] constant({448, 1})\nb = f8e4m3fn[2] constant({64, 0.0625})\n"
      "ROOT r = f8e4m3fn[2] add(a, b)");
  ASSERT_TRUE(f8.ok()) << f8.status();
  EXPECT_TRUE(std::isnan(f8->GetDouble(0)));  // no inf in e4m3fn: overflow is NaN
  EXPECT_EQ(f8->GetDouble(1), 1.0);           // 1.0625 ties to even (1.0)
}

// --------------------------------------------------------------- complex

TEST(EvalElementwiseTest, ComplexArithmetic) {
  EXPECT_EQ(Eval("a = c64[1] constant({(1, 2)})\nb = c64[1] constant({(3, 4)})\n"
                 "ROOT r = c64[1] multiply(a, b)"),
            "{(-5, 10)}");
  EXPECT_EQ(Eval("a = c128[1] constant({(3, -4)})\nROOT r = f64[1] abs(a)"), "{5}");
  EXPECT_EQ(Eval("a = c64[2] constant({(3, -4), (0, 0)})\nROOT r = c64[2] sign(a)"),
            "{(0.6, -0.8), (0, 0)}");
  EXPECT_EQ(Eval("a = c64[1] constant({(3, -4)})\nre = f32[1] real(a)\nim = f32[1] imag(a)\n"
                 "ROOT r = (f32[1], f32[1]) tuple(re, im)"),
            "( {3}, {-4} )");
  EXPECT_EQ(Eval("a = f32[2] constant({1, 2})\nb = f32[2] constant({-1, 0.5})\n"
                 "ROOT r = c64[2] complex(a, b)"),
            "{(1, -1), (2, 0.5)}");
  EXPECT_EQ(Eval("a = c64[2] constant({(1, 2), (1, 2)})\nb = c64[2] constant({(1, 2), (1, 3)})\n"
                 "ROOT r = pred[2] compare(a, b), direction=NE"),
            "{0, 1}");
}

TEST(EvalElementwiseTest, ComplexOrderingIsAnError) {
  EXPECT_EQ(Eval("a = c64[1] constant({(1, 2)})\nROOT r = pred[1] compare(a, a), direction=LT")
                .rfind("error:", 0),
            0u);
}

// --------------------------------------------------------------- compare

TEST(EvalElementwiseTest, CompareFloatIsIeee) {
  const std::vector<Literal> args = {F32s({kNaN, -0.0f, 1, kNaN}), F32s({kNaN, 0.0f, 2, 1})};
  const std::string params = "a = f32[4] parameter(0)\nb = f32[4] parameter(1)\n";
  EXPECT_EQ(Eval(params + "ROOT r = pred[4] compare(a, b), direction=EQ", args), "{0, 1, 0, 0}");
  EXPECT_EQ(Eval(params + "ROOT r = pred[4] compare(a, b), direction=NE", args), "{1, 0, 1, 1}");
  EXPECT_EQ(Eval(params + "ROOT r = pred[4] compare(a, b), direction=LT", args), "{0, 0, 1, 0}");
  EXPECT_EQ(Eval(params + "ROOT r = pred[4] compare(a, b), direction=GE", args), "{0, 1, 0, 0}");
}

TEST(EvalElementwiseTest, CompareTotalOrder) {
  const float neg_nan = -kNaN;
  const std::vector<Literal> args = {F32s({neg_nan, -kInf, -0.0f, 0.0f, kNaN, neg_nan, kNaN}),
                                     F32s({-kInf, -1, 0.0f, -0.0f, kInf, kNaN, kNaN})};
  const std::string params = "a = f32[7] parameter(0)\nb = f32[7] parameter(1)\n";
  EXPECT_EQ(Eval(params + "ROOT r = pred[7] compare(a, b), direction=LT, type=TOTALORDER", args),
            "{1, 1, 1, 0, 0, 1, 0}");
  EXPECT_EQ(Eval(params + "ROOT r = pred[7] compare(a, b), direction=EQ, type=TOTALORDER", args),
            "{0, 0, 0, 0, 0, 0, 1}");
  EXPECT_EQ(Eval(params + "ROOT r = pred[7] compare(a, b), direction=GE, type=TOTALORDER", args),
            "{0, 0, 0, 1, 1, 0, 1}");
}

TEST(EvalElementwiseTest, CompareIntegersBySignedness) {
  EXPECT_EQ(Eval("a = u32[1] constant({4294967295})\nb = u32[1] constant({1})\n"
                 "ROOT r = pred[1] compare(a, b), direction=GT"),
            "{1}");
  EXPECT_EQ(Eval("a = s32[1] constant({-1})\nb = s32[1] constant({1})\n"
                 "ROOT r = pred[1] compare(a, b), direction=GT"),
            "{0}");
  // As XLA: the element type decides signedness. type=UNSIGNED (the older
  // spelling) only says "total order" (XLA's ComparisonTypeToOrder).
  EXPECT_EQ(Eval("a = s32[1] constant({-1})\nb = s32[1] constant({1})\n"
                 "ROOT r = pred[1] compare(a, b), direction=GT, type=UNSIGNED"),
            "{0}");
}

// Every pair of {-inf, -1, -0, +0, 1, inf, -nan, nan} under each order and
// direction, for f32, bf16 and f64, against ranks written out by hand.
TEST(EvalElementwiseTest, CompareOrdersOnNanAndSignedZero) {
  const std::vector<std::string> values = {"-inf", "-1", "-0", "0", "1", "inf", "-nan", "nan"};
  // Position in each order; NaN has no position in the partial order.
  const int kTotal[] = {1, 2, 3, 4, 5, 6, 0, 7};
  const int kWeak[] = {0, 1, 2, 2, 3, 4, 5, 5};
  const double kValue[] = {-INFINITY, -1, -0.0, 0.0, 1, INFINITY, NAN, NAN};
  auto holds = [](absl::string_view dir, auto a, auto b) {
    if (dir == "EQ") return a == b;
    if (dir == "NE") return a != b;
    if (dir == "LT") return a < b;
    if (dir == "LE") return a <= b;
    if (dir == "GT") return a > b;
    return a >= b;
  };
  std::string lhs, rhs;
  for (size_t i = 0; i < values.size(); ++i) {
    for (size_t j = 0; j < values.size(); ++j) {
      absl::StrAppend(&lhs, lhs.empty() ? "" : ", ", values[i]);
      absl::StrAppend(&rhs, rhs.empty() ? "" : ", ", values[j]);
    }
  }
  for (const char* type : {"f32", "bf16", "f64"}) {
    for (const char* order : {"", "PARTIAL", "TOTAL", "WEAK"}) {
      for (const char* dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
        std::string expected = "{";
        for (size_t i = 0; i < values.size(); ++i) {
          for (size_t j = 0; j < values.size(); ++j) {
            bool v;
            if (absl::string_view(order) == "TOTAL") {
              v = holds(dir, kTotal[i], kTotal[j]);
            } else if (absl::string_view(order) == "WEAK") {
              v = holds(dir, kWeak[i], kWeak[j]);
            } else {
              v = holds(dir, kValue[i], kValue[j]);
            }
            absl::StrAppend(&expected, i + j ? ", " : "", v ? "1" : "0");
          }
        }
        expected += "}";
        const std::string body =
            absl::StrCat("a = ", type, "[64] constant({", lhs, "})\nb = ", type, "[64] constant({",
                         rhs, "})\nROOT r = pred[64] compare(a, b), direction=", dir,
                         *order ? absl::StrCat(", order=", order) : "");
        EXPECT_EQ(Eval(body), expected) << type << " " << dir << " order=" << order;
      }
    }
  }
}

// The older type= spelling means the same orders (XLA's ComparisonTypeToOrder).
TEST(EvalElementwiseTest, CompareTypeSpellingMapsToOrder) {
  const std::string consts =
      "a = f32[3] constant({-0, nan, 1})\nb = f32[3] constant({0, nan, 1})\n";
  EXPECT_EQ(Eval(consts + "ROOT r = pred[3] compare(a, b), direction=EQ, type=TOTALORDER"),
            Eval(consts + "ROOT r = pred[3] compare(a, b), direction=EQ, order=TOTAL"));
  EXPECT_EQ(Eval(consts + "ROOT r = pred[3] compare(a, b), direction=EQ, type=FLOAT"),
            Eval(consts + "ROOT r = pred[3] compare(a, b), direction=EQ, order=PARTIAL"));
  EXPECT_EQ(Eval(consts + "ROOT r = pred[3] compare(a, b), direction=EQ, order=TOTAL"),
            "{0, 1, 1}");
  EXPECT_EQ(Eval(consts + "ROOT r = pred[3] compare(a, b), direction=EQ, order=WEAK"), "{1, 1, 1}");
  EXPECT_EQ(Eval(consts + "ROOT r = pred[3] compare(a, b), direction=EQ"), "{1, 0, 1}");
}

// ---------------------------------------------------- select, clamp, copy

TEST(EvalElementwiseTest, SelectAndClamp) {
  EXPECT_EQ(Eval("p = pred[3] constant({1, 0, 1})\na = s32[3] constant({1, 2, 3})\n"
                 "b = s32[3] constant({-1, -2, -3})\nROOT r = s32[3] select(p, a, b)"),
            "{1, -2, 3}");
  EXPECT_EQ(Eval("lo = s32[] constant(0)\nhi = s32[] constant(10)\n"
                 "x = s32[4] constant({-5, 5, 15, 10})\nROOT r = s32[4] clamp(lo, x, hi)"),
            "{0, 5, 10, 10}");
  EXPECT_EQ(Eval("lo = f32[] constant(0)\nhi = f32[] parameter(1)\nx = f32[3] parameter(0)\n"
                 "ROOT r = f32[3] clamp(lo, x, hi)",
                 {F32s({-1, kNaN, 2}), Literal(Shape::Scalar(PrimitiveType::F32))}),
            "{0, nan, 0}");
}

TEST(EvalElementwiseTest, CopyKeepsValuesAndTuples) {
  EXPECT_EQ(Eval("a = s32[2] constant({4, 5})\nt = (s32[2], s32[2]) tuple(a, a)\n"
                 "ROOT r = (s32[2], s32[2]) copy(t)"),
            "( {4, 5}, {4, 5} )");
}

// ---------------------------------------------------------------- convert

TEST(EvalElementwiseTest, FloatToIntSaturatesAndNaNIsZero) {
  const std::vector<Literal> args = {F32s({1e10f, -1e10f, kNaN, 2.9f, -2.9f, kInf, -kInf})};
  const std::string param = "a = f32[7] parameter(0)\n";
  EXPECT_EQ(Eval(param + "ROOT r = s32[7] convert(a)", args),
            "{2147483647, -2147483648, 0, 2, -2, 2147483647, -2147483648}");
  EXPECT_EQ(Eval(param + "ROOT r = u8[7] convert(a)", args), "{255, 0, 0, 2, 0, 255, 0}");
  EXPECT_EQ(Eval(param + "ROOT r = s64[7] convert(a)", args),
            "{10000000000, -10000000000, 0, 2, -2, 9223372036854775807, "
            "-9223372036854775808}");
  EXPECT_EQ(Eval(param + "ROOT r = pred[7] convert(a)", args), "{1, 1, 1, 1, 1, 1, 1}");
}

TEST(EvalElementwiseTest, IntegerConversionsWrapAndRound) {
  EXPECT_EQ(Eval("a = s32[3] constant({300, -1, -129})\nROOT r = s8[3] convert(a)"),
            "{44, -1, 127}");
  EXPECT_EQ(Eval("a = s32[1] constant({-1})\nROOT r = u32[1] convert(a)"), "{4294967295}");
  EXPECT_EQ(Eval("a = s8[2] constant({-1, 5})\nROOT r = u64[2] convert(a)"),
            "{18446744073709551615, 5}");
  EXPECT_EQ(Eval("a = u8[1] constant({255})\nROOT r = s32[1] convert(a)"), "{255}");
  EXPECT_EQ(Eval("a = s4[1] constant({-2})\nROOT r = s16[1] convert(a)"), "{-2}");
  EXPECT_EQ(Eval("a = u32[1] constant({4294967295})\nROOT r = f32[1] convert(a)"),
            "{4.2949673e+09}");
  EXPECT_EQ(Eval("a = s32[1] constant({16777217})\nROOT r = f32[1] convert(a)"), "{16777216}");
  EXPECT_EQ(Eval("a = s8[2] constant({-3, 0})\nROOT r = pred[2] convert(a)"), "{1, 0}");
  EXPECT_EQ(Eval("a = pred[2] constant({1, 0})\nROOT r = f32[2] convert(a)"), "{1, 0}");
}

TEST(EvalElementwiseTest, FloatToBf16RoundsToNearestEven) {
  absl::StatusOr<Literal> r =
      Evaluated("a = f32[3] parameter(0)\nROOT r = bf16[3] convert(a)",
                {F32s({1.00390625f, 1.01171875f, std::nextafter(1.00390625f, 2.0f)})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->GetDouble(0), 1.0);        // tie, even is 1.0
  EXPECT_EQ(r->GetDouble(1), 1.015625);   // tie, even is 1 + 2^-6
  EXPECT_EQ(r->GetDouble(2), 1.0078125);  // just above the tie rounds up
}

TEST(EvalElementwiseTest, ComplexConversions) {
  EXPECT_EQ(Eval("a = c64[2] constant({(2.5, 7), (-1, 3)})\nROOT r = s32[2] convert(a)"),
            "{2, -1}");
  EXPECT_EQ(Eval("a = s32[2] constant({2, -1})\nROOT r = c128[2] convert(a)"), "{(2, 0), (-1, 0)}");
}

TEST(EvalElementwiseTest, StochasticConvert) {
  Literal random = FromBits(PrimitiveType::U32, {0, 0, 0xFFFFFFFF, 0, 0, 0x3FFFFFFF, 0x40000000});
  EXPECT_EQ(Eval("a = f32[7] parameter(0)\nb = u32[7] parameter(1)\n"
                 "ROOT r = s32[7] stochastic-convert(a, b)",
                 {F32s({2.25f, -2.25f, 2.25f, kNaN, kInf, 0.25f, 0.25f}), random}),
            "{3, -3, 2, 0, 2147483647, 1, 0}");
}

// ------------------------------------------------------- reduce-precision

TEST(EvalElementwiseTest, ReducePrecisionToHalfBits) {
  auto f32 = [](uint32_t exponent, uint32_t high, uint32_t low) -> uint64_t {
    return (exponent << 23) | (high << 13) | low;
  };
  // Cases from the rounding/overflow/underflow table in XLA's tests.
  Literal in = FromBits(PrimitiveType::F32,
                        {f32(0b01110000, 0, 0), f32(0b01110000, 0b1111111111, 0b1000000000000),
                         f32(0b01111111, 0, 0b1000000000000), f32(0b01111111, 1, 0b1000000000000),
                         f32(0b10001110, 0b1111111111, 0b0111111111111),
                         f32(0b10001110, 0b1111111111, 0b1000000000000), f32(0b11111111, 0, 1),
                         0x80000000u | f32(0b01101111, 5, 0)});
  absl::StatusOr<Literal> r = Evaluated(
      "a = f32[8] parameter(0)\nROOT r = f32[8] reduce-precision(a), exponent_bits=5, "
      "mantissa_bits=10",
      {in});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Bits(*r),
            (std::vector<uint64_t>{0, f32(0b01110001, 0, 0), f32(0b01111111, 0, 0),
                                   f32(0b01111111, 2, 0), f32(0b10001110, 0b1111111111, 0),
                                   f32(0b11111111, 0, 0), f32(0b11111111, 0, 1), 0x80000000u}));
}

TEST(EvalElementwiseTest, ReducePrecisionNaNWithoutMantissaBecomesInf) {
  absl::StatusOr<Literal> r = Evaluated(
      "a = f32[2] parameter(0)\nROOT r = f32[2] reduce-precision(a), exponent_bits=8, "
      "mantissa_bits=0",
      {F32s({kNaN, 1.5f})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->ToStringWithoutShapeOneline(), "{inf, 2}");
}

TEST(EvalElementwiseTest, ReducePrecisionOnBf16AndF64) {
  absl::StatusOr<Literal> r = Evaluated(
      "a = f64[2] constant({1.0000001, 3.4e+38})\nROOT r = f64[2] reduce-precision(a), "
      "exponent_bits=8, mantissa_bits=23");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->GetDouble(0), static_cast<double>(1.0000001f));
  EXPECT_EQ(r->GetDouble(1), static_cast<double>(3.4e38f));
  EXPECT_EQ(Eval("a = bf16[1] constant({3})\nROOT r = bf16[1] reduce-precision(a), "
                 "exponent_bits=8, mantissa_bits=0"),
            "{2}");  // 3 is a tie between 2 and 4; 2's exponent is even
}

// ---------------------------------------------------------- shapes, errors

TEST(EvalElementwiseTest, EmptyArrays) {
  EXPECT_EQ(Eval("a = f32[0,3] parameter(0)\nROOT r = f32[0,3] add(a, a)",
                 {Literal(Shape::Array(PrimitiveType::F32, {0, 3}))}),
            "{ }");
  EXPECT_EQ(Eval("a = s32[0] constant({})\nROOT r = pred[0] compare(a, a), direction=EQ"), "{}");
}

TEST(EvalElementwiseTest, BadInputIsAnErrorNotACrash) {
  // Integer-only and float-only opcodes on the wrong types.
  EXPECT_EQ(Eval("a = f32[1] constant({1})\nROOT r = f32[1] shift-left(a, a)").rfind("error:", 0),
            0u);
  EXPECT_EQ(Eval("a = s32[1] constant({1})\nROOT r = s32[1] exponential(a)").rfind("error:", 0),
            0u);
  EXPECT_EQ(Eval("a = f32[1] constant({1})\nROOT r = f32[1] reduce-precision(a), "
                 "exponent_bits=0, mantissa_bits=3")
                .rfind("error:", 0),
            0u);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
