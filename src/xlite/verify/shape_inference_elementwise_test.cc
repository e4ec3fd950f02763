// Tests for elementwise shape inference: each rule once where it holds and
// once where it is broken (asserting the message names the rule).
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "xlite/text/parser.h"
#include "xlite/verify/shape_inference.h"
#include "xlite/verify/shape_inference_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

// The inferred shape of the ROOT of entry computation `body`, or the error.
std::string Infer(absl::string_view body) {
  return shape_inference_test::InferModuleRoot(
      absl::StrCat("HloModule m\n\nENTRY e {\n", body, "\n}\n"));
}

// Inference of `body` fails with a message containing `needle`.
::testing::AssertionResult FailsWith(absl::string_view body, absl::string_view needle) {
  return shape_inference_test::IsErrorContaining(Infer(body), needle);
}

// ------------------------------------------------------------------- unary

TEST(ElementwiseShapeTest, FloatOrComplexUnaryKeepsShape) {
  EXPECT_EQ(Infer("p = f32[2,3] parameter(0)\nROOT r = f32[2,3] exponential(p)"), "f32[2,3]");
  EXPECT_EQ(Infer("p = c64[4] parameter(0)\nROOT r = c64[4] tanh(p)"), "c64[4]");
  EXPECT_EQ(Infer("p = bf16[] parameter(0)\nROOT r = bf16[] rsqrt(p)"), "bf16[]");
}

TEST(ElementwiseShapeTest, FloatOrComplexUnaryRejectsIntegers) {
  EXPECT_TRUE(FailsWith("p = s32[2] parameter(0)\nROOT r = s32[2] exponential(p)",
                        "operand type s32 is not one of: floating-point, complex"));
}

TEST(ElementwiseShapeTest, RoundingIsFloatOnly) {
  EXPECT_EQ(Infer("p = f16[3] parameter(0)\nROOT r = f16[3] round-nearest-even(p)"), "f16[3]");
  EXPECT_TRUE(FailsWith("p = c64[3] parameter(0)\nROOT r = c64[3] floor(p)",
                        "operand type c64 is not one of: floating-point"));
}

TEST(ElementwiseShapeTest, AbsOfComplexIsReal) {
  EXPECT_EQ(Infer("p = c64[2] parameter(0)\nROOT r = f32[2] abs(p)"), "f32[2]");
  EXPECT_EQ(Infer("p = c128[2] parameter(0)\nROOT r = f64[2] abs(p)"), "f64[2]");
  EXPECT_EQ(Infer("p = s32[2] parameter(0)\nROOT r = s32[2] abs(p)"), "s32[2]");
  EXPECT_TRUE(FailsWith("p = u32[2] parameter(0)\nROOT r = u32[2] abs(p)",
                        "operand type u32 is not one of: signed integer, floating-point, complex"));
}

TEST(ElementwiseShapeTest, RealAndImagGiveComponentType) {
  EXPECT_EQ(Infer("p = c128[5] parameter(0)\nROOT r = f64[5] real(p)"), "f64[5]");
  EXPECT_EQ(Infer("p = c64[5] parameter(0)\nROOT r = f32[5] imag(p)"), "f32[5]");
  EXPECT_EQ(Infer("p = f32[5] parameter(0)\nROOT r = f32[5] real(p)"), "f32[5]");
  EXPECT_TRUE(FailsWith("p = s32[5] parameter(0)\nROOT r = s32[5] imag(p)",
                        "operand type s32 is not one of"));
}

TEST(ElementwiseShapeTest, IsFiniteGivesPred) {
  EXPECT_EQ(Infer("p = f32[2,2] parameter(0)\nROOT r = pred[2,2] is-finite(p)"), "pred[2,2]");
  EXPECT_TRUE(FailsWith("p = c64[2] parameter(0)\nROOT r = pred[2] is-finite(p)",
                        "operand type c64 is not one of: floating-point"));
}

TEST(ElementwiseShapeTest, BitCountingIsIntegerOnly) {
  EXPECT_EQ(Infer("p = u8[4] parameter(0)\nROOT r = u8[4] count-leading-zeros(p)"), "u8[4]");
  EXPECT_EQ(Infer("p = s64[4] parameter(0)\nROOT r = s64[4] popcnt(p)"), "s64[4]");
  EXPECT_TRUE(FailsWith("p = f32[4] parameter(0)\nROOT r = f32[4] popcnt(p)",
                        "operand type f32 is not one of: integer"));
}

TEST(ElementwiseShapeTest, NotTakesPredOrInteger) {
  EXPECT_EQ(Infer("p = pred[4] parameter(0)\nROOT r = pred[4] not(p)"), "pred[4]");
  EXPECT_EQ(Infer("p = u16[4] parameter(0)\nROOT r = u16[4] not(p)"), "u16[4]");
  EXPECT_TRUE(FailsWith("p = f32[4] parameter(0)\nROOT r = f32[4] not(p)",
                        "operand type f32 is not one of: pred, integer"));
}

TEST(ElementwiseShapeTest, SignAndNegate) {
  EXPECT_EQ(Infer("p = s8[4] parameter(0)\nROOT r = s8[4] sign(p)"), "s8[4]");
  EXPECT_TRUE(
      FailsWith("p = u8[4] parameter(0)\nROOT r = u8[4] sign(p)", "operand type u8 is not one of"));
  EXPECT_EQ(Infer("p = u32[4] parameter(0)\nROOT r = u32[4] negate(p)"), "u32[4]");
  EXPECT_TRUE(FailsWith("p = pred[4] parameter(0)\nROOT r = pred[4] negate(p)",
                        "operand type pred is not one of"));
}

TEST(ElementwiseShapeTest, UnaryRejectsTuples) {
  EXPECT_TRUE(FailsWith("p = (f32[2]) parameter(0)\nROOT r = f32[2] sine(p)",
                        "operand must be an array, got (f32[2])"));
}

TEST(ElementwiseShapeTest, CopyAcceptsTuplesAndDropsLayout) {
  EXPECT_EQ(Infer("p = (f32[2], s32[]) parameter(0)\nROOT r = (f32[2], s32[]) copy(p)"),
            "(f32[2], s32[])");
  absl::StatusOr<Shape> shape = shape_inference_test::InferModuleRootShape(
      "HloModule m\nENTRY e {\np = f32[2,3]{0,1} parameter(0)\nROOT r = f32[2,3]{1,0} "
      "copy(p)\n}\n");
  ASSERT_TRUE(shape.ok()) << shape.status();
  EXPECT_FALSE(shape->has_layout());
}

TEST(ElementwiseShapeTest, ReducePrecision) {
  EXPECT_EQ(Infer("p = f32[3] parameter(0)\n"
                  "ROOT r = f32[3] reduce-precision(p), exponent_bits=5, mantissa_bits=10"),
            "f32[3]");
  EXPECT_TRUE(
      FailsWith("p = f32[3] parameter(0)\n"
                "ROOT r = f32[3] reduce-precision(p), exponent_bits=0, mantissa_bits=10",
                "exponent_bits must be >= 1, got 0"));
  EXPECT_TRUE(
      FailsWith("p = f32[3] parameter(0)\n"
                "ROOT r = f32[3] reduce-precision(p), exponent_bits=5, mantissa_bits=-1",
                "mantissa_bits must be >= 0, got -1"));
  EXPECT_TRUE(
      FailsWith("p = s32[3] parameter(0)\n"
                "ROOT r = s32[3] reduce-precision(p), exponent_bits=5, mantissa_bits=10",
                "operand type s32 is not one of: floating-point"));
}

// ------------------------------------------------------------------ binary

TEST(ElementwiseShapeTest, BinaryNeedsIdenticalDimensions) {
  EXPECT_EQ(Infer("a = f32[2,3] parameter(0)\nb = f32[2,3] parameter(1)\n"
                  "ROOT r = f32[2,3] add(a, b)"),
            "f32[2,3]");
  EXPECT_TRUE(
      FailsWith("a = f32[2,3] parameter(0)\nb = f32[2,4] parameter(1)\n"
                "ROOT r = f32[2,3] add(a, b)",
                "lhs f32[2,3] and rhs f32[2,4] differ in dimension 1"));
  EXPECT_TRUE(
      FailsWith("a = f32[2] parameter(0)\nb = f32[] parameter(1)\n"
                "ROOT r = f32[2] multiply(a, b)",
                "have different ranks"));
}

TEST(ElementwiseShapeTest, BinaryNeedsMatchingTypes) {
  EXPECT_TRUE(
      FailsWith("a = s32[2] parameter(0)\nb = f32[2] parameter(1)\n"
                "ROOT r = s32[2] add(a, b)",
                "operand types differ: s32 and f32"));
}

TEST(ElementwiseShapeTest, MixedFloatPrecisionGivesTheWiderType) {
  EXPECT_EQ(Infer("a = f32[2] parameter(0)\nb = bf16[2] parameter(1)\n"
                  "ROOT r = f32[2] add(a, b)"),
            "f32[2]");
  EXPECT_EQ(Infer("a = bf16[2] parameter(0)\nb = f16[2] parameter(1)\n"
                  "ROOT r = f16[2] maximum(a, b)"),
            "f16[2]");
}

TEST(ElementwiseShapeTest, ArithmeticTypeRules) {
  EXPECT_EQ(Infer("a = pred[2] parameter(0)\nb = pred[2] parameter(1)\n"
                  "ROOT r = pred[2] add(a, b)"),
            "pred[2]");
  EXPECT_TRUE(
      FailsWith("a = pred[2] parameter(0)\nb = pred[2] parameter(1)\n"
                "ROOT r = pred[2] subtract(a, b)",
                "operand type pred is not one of"));
  EXPECT_EQ(Infer("a = c64[2] parameter(0)\nb = c64[2] parameter(1)\n"
                  "ROOT r = c64[2] power(a, b)"),
            "c64[2]");
}

TEST(ElementwiseShapeTest, LogicalOpsTakePredOrInteger) {
  EXPECT_EQ(Infer("a = pred[2] parameter(0)\nb = pred[2] parameter(1)\n"
                  "ROOT r = pred[2] xor(a, b)"),
            "pred[2]");
  EXPECT_TRUE(
      FailsWith("a = f32[2] parameter(0)\nb = f32[2] parameter(1)\n"
                "ROOT r = f32[2] and(a, b)",
                "operand type f32 is not one of: pred, integer"));
}

TEST(ElementwiseShapeTest, ShiftsAreIntegerOnly) {
  EXPECT_EQ(Infer("a = u32[2] parameter(0)\nb = u32[2] parameter(1)\n"
                  "ROOT r = u32[2] shift-right-logical(a, b)"),
            "u32[2]");
  EXPECT_TRUE(
      FailsWith("a = f32[2] parameter(0)\nb = f32[2] parameter(1)\n"
                "ROOT r = f32[2] shift-left(a, b)",
                "operand type f32 is not one of: integer"));
}

TEST(ElementwiseShapeTest, DynamicDimensionsPropagate) {
  EXPECT_EQ(Infer("a = f32[<=4,2] parameter(0)\nb = f32[4,2] parameter(1)\n"
                  "ROOT r = f32[<=4,2] add(a, b)"),
            "f32[<=4,2]");
  EXPECT_EQ(Infer("a = f32[4,2] parameter(0)\nb = f32[4,<=2] parameter(1)\n"
                  "ROOT r = f32[4,<=2] add(a, b)"),
            "f32[4,<=2]");
}

TEST(ElementwiseShapeTest, UnboundedDimensionTakesTheOtherSize) {
  EXPECT_EQ(Infer("a = f32[?,2] parameter(0)\nb = f32[4,2] parameter(1)\n"
                  "ROOT r = f32[4,2] add(a, b)"),
            "f32[4,2]");
  EXPECT_EQ(Infer("a = f32[?] parameter(0)\nb = f32[?] parameter(1)\n"
                  "ROOT r = f32[?] add(a, b)"),
            "f32[?]");
}

TEST(ElementwiseShapeTest, ComplexComposesFloatParts) {
  EXPECT_EQ(Infer("a = f32[3] parameter(0)\nb = f32[3] parameter(1)\n"
                  "ROOT r = c64[3] complex(a, b)"),
            "c64[3]");
  EXPECT_EQ(Infer("a = f64[3] parameter(0)\nb = f64[3] parameter(1)\n"
                  "ROOT r = c128[3] complex(a, b)"),
            "c128[3]");
  EXPECT_TRUE(
      FailsWith("a = f16[3] parameter(0)\nb = f16[3] parameter(1)\n"
                "ROOT r = c64[3] complex(a, b)",
                "parts must be f32 or f64, got f16"));
  EXPECT_TRUE(
      FailsWith("a = f32[3] parameter(0)\nb = f64[3] parameter(1)\n"
                "ROOT r = c64[3] complex(a, b)",
                "real and imaginary parts differ in type: f32 and f64"));
}

TEST(ElementwiseShapeTest, CompareGivesPredFromSameTypedOperands) {
  EXPECT_EQ(Infer("a = s32[2,2] parameter(0)\nb = s32[2,2] parameter(1)\n"
                  "ROOT r = pred[2,2] compare(a, b), direction=LT"),
            "pred[2,2]");
  EXPECT_TRUE(
      FailsWith("a = s32[2] parameter(0)\nb = u32[2] parameter(1)\n"
                "ROOT r = pred[2] compare(a, b), direction=EQ",
                "operand types differ: s32 and u32"));
  EXPECT_TRUE(
      FailsWith("a = f32[2] parameter(0)\nb = f32[3] parameter(1)\n"
                "ROOT r = pred[2] compare(a, b), direction=EQ",
                "differ in dimension 0"));
}

// ----------------------------------------------------------------- ternary

TEST(ElementwiseShapeTest, SelectWithFullOrScalarPredicate) {
  EXPECT_EQ(Infer("p = pred[2,3] parameter(0)\na = f32[2,3] parameter(1)\n"
                  "b = f32[2,3] parameter(2)\nROOT r = f32[2,3] select(p, a, b)"),
            "f32[2,3]");
  EXPECT_EQ(Infer("p = pred[] parameter(0)\na = f32[2,3] parameter(1)\n"
                  "b = f32[2,3] parameter(2)\nROOT r = f32[2,3] select(p, a, b)"),
            "f32[2,3]");
}

TEST(ElementwiseShapeTest, SelectRules) {
  EXPECT_TRUE(
      FailsWith("p = s32[2] parameter(0)\na = f32[2] parameter(1)\n"
                "b = f32[2] parameter(2)\nROOT r = f32[2] select(p, a, b)",
                "predicate type must be pred, got s32"));
  EXPECT_TRUE(
      FailsWith("p = pred[3] parameter(0)\na = f32[2] parameter(1)\n"
                "b = f32[2] parameter(2)\nROOT r = f32[2] select(p, a, b)",
                "branches f32[2] and predicate pred[3] differ in dimension 0"));
  EXPECT_TRUE(
      FailsWith("p = pred[2] parameter(0)\na = f32[2] parameter(1)\n"
                "b = bf16[2] parameter(2)\nROOT r = f32[2] select(p, a, b)",
                "on_true and on_false types differ: f32 and bf16"));
  EXPECT_TRUE(
      FailsWith("p = pred[2] parameter(0)\na = f32[2] parameter(1)\n"
                "b = f32[3] parameter(2)\nROOT r = f32[2] select(p, a, b)",
                "on_true f32[2] and on_false f32[3] differ in dimension 0"));
}

TEST(ElementwiseShapeTest, ClampWithScalarOrFullBounds) {
  EXPECT_EQ(Infer("lo = f32[] parameter(0)\nx = f32[4] parameter(1)\n"
                  "hi = f32[] parameter(2)\nROOT r = f32[4] clamp(lo, x, hi)"),
            "f32[4]");
  EXPECT_EQ(Infer("lo = s32[4] parameter(0)\nx = s32[4] parameter(1)\n"
                  "hi = s32[] parameter(2)\nROOT r = s32[4] clamp(lo, x, hi)"),
            "s32[4]");
  EXPECT_TRUE(
      FailsWith("lo = f32[3] parameter(0)\nx = f32[4] parameter(1)\n"
                "hi = f32[] parameter(2)\nROOT r = f32[4] clamp(lo, x, hi)",
                "operand f32[4] and min f32[3] differ in dimension 0"));
  EXPECT_TRUE(
      FailsWith("lo = s32[] parameter(0)\nx = f32[4] parameter(1)\n"
                "hi = f32[] parameter(2)\nROOT r = f32[4] clamp(lo, x, hi)",
                "min type s32 differs from operand type f32"));
}

// ------------------------------------------------------------- conversions

TEST(ElementwiseShapeTest, ConvertTakesTypeFromDeclaredShape) {
  EXPECT_EQ(Infer("p = f32[2,<=3] parameter(0)\nROOT r = s8[2,<=3] convert(p)"), "s8[2,<=3]");
  EXPECT_EQ(Infer("p = c64[2] parameter(0)\nROOT r = f32[2] convert(p)"), "f32[2]");
  EXPECT_TRUE(FailsWith("p = (f32[2]) parameter(0)\nROOT r = s32[2] convert(p)",
                        "operand must be an array"));
}

TEST(ElementwiseShapeTest, BitcastConvertSameWidthKeepsDimensions) {
  EXPECT_EQ(Infer("p = f32[2,3] parameter(0)\nROOT r = s32[2,3] bitcast-convert(p)"), "s32[2,3]");
}

TEST(ElementwiseShapeTest, BitcastConvertToNarrowerAppendsDimension) {
  EXPECT_EQ(Infer("p = f32[2] parameter(0)\nROOT r = u8[2,4] bitcast-convert(p)"), "u8[2,4]");
  EXPECT_EQ(Infer("p = c128[] parameter(0)\nROOT r = c64[2] bitcast-convert(p)"), "c64[2]");
}

TEST(ElementwiseShapeTest, BitcastConvertToWiderConsumesDimension) {
  EXPECT_EQ(Infer("p = u8[2,4] parameter(0)\nROOT r = f32[2] bitcast-convert(p)"), "f32[2]");
  EXPECT_TRUE(FailsWith("p = u8[2,3] parameter(0)\nROOT r = f32[2] bitcast-convert(p)",
                        "bitcast from u8 to f32 needs a minor dimension of size 4"));
  EXPECT_TRUE(FailsWith("p = u8[] parameter(0)\nROOT r = f32[] bitcast-convert(p)",
                        "needs a minor dimension of size 4"));
}

TEST(ElementwiseShapeTest, BitcastConvertKeepsComplexness) {
  EXPECT_TRUE(FailsWith("p = c64[2] parameter(0)\nROOT r = f64[2] bitcast-convert(p)",
                        "cannot bitcast between complex and real types: c64 => f64"));
}

TEST(ElementwiseShapeTest, StochasticConvert) {
  EXPECT_EQ(Infer("x = f32[4] parameter(0)\nr = u32[4] parameter(1)\n"
                  "ROOT c = s8[4] stochastic-convert(x, r)"),
            "s8[4]");
  EXPECT_TRUE(
      FailsWith("x = f32[4] parameter(0)\nr = u16[4] parameter(1)\n"
                "ROOT c = s8[4] stochastic-convert(x, r)",
                "random operand type u16 must have the bit width of operand type f32"));
  EXPECT_TRUE(
      FailsWith("x = f32[4] parameter(0)\nr = s32[4] parameter(1)\n"
                "ROOT c = s8[4] stochastic-convert(x, r)",
                "random operand type s32 is not one of: unsigned integer"));
  EXPECT_TRUE(
      FailsWith("x = f32[4] parameter(0)\nr = u32[4] parameter(1)\n"
                "ROOT c = f16[4] stochastic-convert(x, r)",
                "result type f16 must be a signed integer type"));
  EXPECT_TRUE(
      FailsWith("x = f32[4] parameter(0)\nr = u32[5] parameter(1)\n"
                "ROOT c = s8[4] stochastic-convert(x, r)",
                "differ in dimension 0"));
}

TEST(ElementwiseShapeTest, OtherOpcodesAreLeftToOtherFamilies) {
  auto module = ParseHloModule("HloModule m\n\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n");
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<Shape> shape =
      shape_inference::InferElementwiseShape(*(*module)->entry_computation()->root_instruction());
  EXPECT_TRUE(absl::IsNotFound(shape.status())) << shape.status();
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
