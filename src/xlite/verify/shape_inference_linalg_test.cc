// Shape inference for dot, convolution, fft, linear solvers, batch norm, topk
// and the random-number ops: each rule once valid, once broken.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "xlite/ir/computation.h"
#include "xlite/ir/module.h"
#include "xlite/text/parser.h"
#include "xlite/verify/shape_inference.h"
#include "xlite/verify/shape_inference_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

// The ENTRY root's inferred shape as text, or the error.
std::string InferRoot(absl::string_view hlo) { return shape_inference_test::InferModuleRoot(hlo); }

::testing::AssertionResult FailsWith(absl::string_view hlo, absl::string_view message) {
  return shape_inference_test::IsErrorContaining(InferRoot(hlo), message);
}

// A module whose ENTRY computation is `body` (parameters and root).
std::string Entry(absl::string_view body) {
  return absl::StrCat("HloModule m\nENTRY e {\n", body, "\n}\n");
}

// ---------------------------------------------------------------------------
// dot

TEST(LinalgDotShape, MatrixProduct) {
  EXPECT_EQ(InferRoot(Entry(R"(
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})")),
            "f32[2,4]");
}

TEST(LinalgDotShape, BatchDimensionsComeFirst) {
  EXPECT_EQ(InferRoot(Entry(R"(
  a = f32[5,7,2,3] parameter(0)
  b = f32[3,5,7,4] parameter(1)
  ROOT d = f32[5,7,2,4] dot(a, b), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={1,2}, rhs_contracting_dims={0})")),
            "f32[5,7,2,4]");
}

TEST(LinalgDotShape, NoContractionIsAnOuterProduct) {
  EXPECT_EQ(InferRoot(Entry(R"(
  a = s8[8] parameter(0)
  b = s8[6] parameter(1)
  ROOT d = s32[8,6] dot(a, b))")),
            "s32[8,6]");
}

TEST(LinalgDotShape, ResultTypeIsTheDeclaredPreferredType) {
  EXPECT_EQ(InferRoot(Entry(R"(
  a = bf16[2,3] parameter(0)
  b = bf16[3,4] parameter(1)
  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})")),
            "f32[2,4]");
}

TEST(LinalgDotShape, DynamicAndUnboundedDimensionsPropagate) {
  EXPECT_EQ(InferRoot(Entry(R"(
  a = f32[<=4,3] parameter(0)
  b = f32[3,?] parameter(1)
  ROOT d = f32[<=4,?] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})")),
            "f32[<=4,?]");
  EXPECT_EQ(InferRoot(Entry(R"(
  a = f32[?,3] parameter(0)
  b = f32[5,3] parameter(1)
  ROOT d = f32[5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1})")),
            "f32[5]");
}

TEST(LinalgDotShape, ContractingSizesMustMatch) {
  EXPECT_TRUE(FailsWith(Entry(R"(
  a = f32[2,3] parameter(0)
  b = f32[4,5] parameter(1)
  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})"),
                        "lhs contracting dimension 1 has size 3 but rhs contracting dimension 0 "
                        "has size 4"));
}

TEST(LinalgDotShape, BatchSizesMustMatch) {
  EXPECT_TRUE(FailsWith(Entry(R"(
  a = f32[2,3] parameter(0)
  b = f32[5,3] parameter(1)
  ROOT d = f32[2] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1})"),
                        "lhs batch dimension 0 has size 2 but rhs batch dimension 0 has size 5"));
}

TEST(LinalgDotShape, DimensionNumbersMustBeInRangeAndDistinct) {
  EXPECT_TRUE(FailsWith(Entry(R"(
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={2}, rhs_contracting_dims={0})"),
                        "lhs contracting dimension 2 is out of range for rank 2"));
  EXPECT_TRUE(FailsWith(Entry(R"(
  a = f32[3,3] parameter(0)
  b = f32[3,3] parameter(1)
  ROOT d = f32[] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={0}, rhs_batch_dims={0}, rhs_contracting_dims={1})"),
                        "lhs contracting dimension 0 is used more than once"));
  EXPECT_TRUE(FailsWith(Entry(R"(
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT d = f32[4] dot(a, b), lhs_contracting_dims={0,1}, rhs_contracting_dims={0})"),
                        "lhs has 2 contracting dimensions but rhs has 1"));
}

TEST(LinalgDotShape, ResultTypeMustHoldTheProduct) {
  EXPECT_TRUE(FailsWith(Entry(R"(
  a = s32[2,3] parameter(0)
  b = s32[3,4] parameter(1)
  ROOT d = s8[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})"),
                        "result type s8 is narrower than operands (s32, s32)"));
  EXPECT_TRUE(FailsWith(Entry(R"(
  a = c64[2,3] parameter(0)
  b = c64[3,4] parameter(1)
  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})"),
                        "complex operands (c64, c64) need a complex result"));
}

// ---------------------------------------------------------------------------
// ragged-dot and scaled-dot

TEST(LinalgRaggedDotShape, RaggedNonContractingDropsTheGroupDimension) {
  EXPECT_EQ(InferRoot(Entry(R"(
  a = f32[11,5] parameter(0)
  b = f32[3,5,7] parameter(1)
  g = s64[3] parameter(2)
  ROOT d = f32[11,7] ragged-dot(a, b, g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0})")),
            "f32[11,7]");
}

TEST(LinalgRaggedDotShape, RaggedContractingPrependsTheGroups) {
  EXPECT_EQ(InferRoot(Entry(R"(
  a = f32[11,19,5] parameter(0)
  b = f32[19,5,7] parameter(1)
  g = s64[19,3] parameter(2)
  ROOT d = f32[3,11,7] ragged-dot(a, b, g), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}, lhs_ragged_dims={2})")),
            "f32[3,11,7]");
}

TEST(LinalgRaggedDotShape, RaggedBatchKeepsTheDotShape) {
  EXPECT_EQ(InferRoot(Entry(R"(
  a = f32[19,17,11,5] parameter(0)
  b = f32[19,17,5,7] parameter(1)
  g = s64[19,3] parameter(2)
  ROOT d = f32[19,17,11,7] ragged-dot(a, b, g), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={2}, lhs_ragged_dims={1})")),
            "f32[19,17,11,7]");
}

TEST(LinalgRaggedDotShape, GroupCountsMustAgree) {
  EXPECT_TRUE(FailsWith(Entry(R"(
  a = f32[11,5] parameter(0)
  b = f32[3,5,7] parameter(1)
  g = s64[4] parameter(2)
  ROOT d = f32[11,7] ragged-dot(a, b, g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0})"),
                        "group_sizes has 4 groups but rhs group dimension 0 has size 3"));
  EXPECT_TRUE(FailsWith(Entry(R"(
  a = f32[11,5] parameter(0)
  b = f32[5,7] parameter(1)
  g = s64[3] parameter(2)
  ROOT d = f32[11,7] ragged-dot(a, b, g), lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_ragged_dims={0})"),
                        "needs exactly one rhs group dimension"));
}

TEST(LinalgScaledDotShape, BlockScalesDivideTheContractingDimension) {
  std::string hlo = Entry(R"(
  a = f8e4m3fn[2,256] parameter(0)
  b = f8e4m3fn[256,256] parameter(1)
  sa = f8e8m0fnu[2,8] parameter(2)
  sb = f8e8m0fnu[256,SB] parameter(3)
  ROOT d = f32[2,256] scaled-dot(a, b, sa, sb), lhs_contracting_dims={1}, rhs_contracting_dims={1})");
  std::string good = hlo, bad = hlo;
  good.replace(good.find("SB"), 2, "8");
  bad.replace(bad.find("SB"), 2, "7");
  EXPECT_EQ(InferRoot(good), "f32[2,256]");
  EXPECT_TRUE(FailsWith(bad,
                        "rhs scale dimension 1 has size 7, which does not fit rhs "
                        "dimension size 256"));
}

// ---------------------------------------------------------------------------
// convolution

TEST(LinalgConvolutionShape, StridedPaddedTwoDimensional) {
  EXPECT_EQ(InferRoot(Entry(R"(
  x = f32[8,32,32,3] parameter(0)
  k = f32[3,3,3,16] parameter(1)
  ROOT c = f32[8,16,16,16] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f)")),
            "f32[8,16,16,16]");
}

TEST(LinalgConvolutionShape, DilationsAndOutputLayout) {
  // lhs_dilate 2 turns 10 into 19; rhs_dilate 2 turns the 3-wide window into 5.
  EXPECT_EQ(InferRoot(Entry(R"(
  x = f32[1,4,10] parameter(0)
  k = f32[6,4,3] parameter(1)
  ROOT c = f32[6,1,15] convolution(x, k), window={size=3 lhs_dilate=2 rhs_dilate=2}, dim_labels=bf0_oi0->fb0)")),
            "f32[6,1,15]");
}

TEST(LinalgConvolutionShape, GroupCounts) {
  EXPECT_EQ(InferRoot(Entry(R"(
  x = f32[1,8,8,32] parameter(0)
  k = f32[3,3,1,32] parameter(1)
  ROOT c = f32[1,6,6,32] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=32)")),
            "f32[1,6,6,32]");
  EXPECT_EQ(InferRoot(Entry(R"(
  x = f32[4,5,5,3] parameter(0)
  k = f32[5,5,3,8] parameter(1)
  ROOT c = f32[1,1,1,8] convolution(x, k), window={size=5x5}, dim_labels=b01f_01io->b01f, batch_group_count=4)")),
            "f32[1,1,1,8]");
}

TEST(LinalgConvolutionShape, UnboundedSpatialDimensionStaysUnbounded) {
  EXPECT_EQ(InferRoot(Entry(R"(
  x = f32[2,?,3] parameter(0)
  k = f32[3,3,4] parameter(1)
  ROOT c = f32[2,?,4] convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f)")),
            "f32[2,?,4]");
}

TEST(LinalgConvolutionShape, KernelInputFeaturesMustMatch) {
  EXPECT_TRUE(FailsWith(Entry(R"(
  x = f32[1,8,8,3] parameter(0)
  k = f32[3,3,4,16] parameter(1)
  ROOT c = f32[1,6,6,16] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f)"),
                        "input feature size 3 / feature_group_count 1 does not match kernel input "
                        "feature size 4"));
}

TEST(LinalgConvolutionShape, WindowMustMatchKernel) {
  EXPECT_TRUE(FailsWith(Entry(R"(
  x = f32[1,8,8,3] parameter(0)
  k = f32[2,2,3,16] parameter(1)
  ROOT c = f32[1,6,6,16] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f)"),
                        "window dimension 0 has size 3 but kernel spatial dimension 0 has size 2"));
  EXPECT_TRUE(FailsWith(Entry(R"(
  x = f32[1,8,8,3] parameter(0)
  k = f32[3,3,3,16] parameter(1)
  ROOT c = f32[1,6,6,16] convolution(x, k), window={size=3}, dim_labels=b01f_01io->b01f)"),
                        "window has 1 dimensions but the convolution has 2 spatial dimensions"));
}

TEST(LinalgConvolutionShape, GroupsMustDivide) {
  EXPECT_TRUE(FailsWith(Entry(R"(
  x = f32[3,8,8,4] parameter(0)
  k = f32[3,3,4,6] parameter(1)
  ROOT c = f32[1,6,6,6] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=2)"),
                        "input batch size 3 is not a multiple of batch_group_count 2"));
  EXPECT_TRUE(FailsWith(Entry(R"(
  x = f32[2,8,8,4] parameter(0)
  k = f32[3,3,2,4] parameter(1)
  ROOT c = f32[1,6,6,4] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=2, batch_group_count=2)"),
                        "cannot both be above 1"));
}

// ---------------------------------------------------------------------------
// fft

TEST(LinalgFftShape, ComplexTransformsKeepTheShape) {
  EXPECT_EQ(InferRoot(Entry(R"(
  x = c64[5,8,32] parameter(0)
  ROOT f = c64[5,8,32] fft(x), fft_type=IFFT, fft_length={8,32})")),
            "c64[5,8,32]");
}

TEST(LinalgFftShape, RealTransformsHalveTheLastDimension) {
  EXPECT_EQ(InferRoot(Entry(R"(
  x = f32[5,64,32] parameter(0)
  ROOT f = c64[5,64,17] fft(x), fft_type=RFFT, fft_length={64,32})")),
            "c64[5,64,17]");
  EXPECT_EQ(InferRoot(Entry(R"(
  x = c128[5,64,17] parameter(0)
  ROOT f = f64[5,64,32] fft(x), fft_type=IRFFT, fft_length={64,32})")),
            "f64[5,64,32]");
}

TEST(LinalgFftShape, TypesAndLengthsMustFit) {
  EXPECT_TRUE(FailsWith(Entry(R"(
  x = c64[8] parameter(0)
  ROOT f = c64[5] fft(x), fft_type=RFFT, fft_length={8})"),
                        "RFFT needs an f32 or f64 operand, got c64"));
  EXPECT_TRUE(FailsWith(Entry(R"(
  x = f32[8] parameter(0)
  ROOT f = f32[8] fft(x), fft_type=FFT, fft_length={8})"),
                        "FFT needs a complex operand, got f32"));
  EXPECT_TRUE(FailsWith(Entry(R"(
  x = c64[5,16] parameter(0)
  ROOT f = f32[5,32] fft(x), fft_type=IRFFT, fft_length={32})"),
                        "IRFFT operand dimension 1 has size 16 but fft_length requires 17"));
  EXPECT_TRUE(FailsWith(Entry(R"(
  x = c64[2,2,2,2] parameter(0)
  ROOT f = c64[2,2,2,2] fft(x), fft_type=FFT, fft_length={2,2,2,2})"),
                        "fft_length must have 1 to 3 entries, got 4"));
}

// ---------------------------------------------------------------------------
// triangular-solve and cholesky

TEST(LinalgSolverShape, TriangularSolveReturnsB) {
  EXPECT_EQ(InferRoot(Entry(R"(
  a = f32[2,4,4] parameter(0)
  b = f32[2,4,3] parameter(1)
  ROOT x = f32[2,4,3] triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE)")),
            "f32[2,4,3]");
  EXPECT_EQ(InferRoot(Entry(R"(
  a = f32[4,4] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT x = f32[3,4] triangular-solve(a, b), lower=true, transpose_a=ADJOINT)")),
            "f32[3,4]");
}

TEST(LinalgSolverShape, TriangularSolveSidesMustMeet) {
  EXPECT_TRUE(FailsWith(Entry(R"(
  a = f32[4,4] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT x = f32[3,4] triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE)"),
                        "a is 4x4 but b dimension 0 has size 3 (left_side)"));
  EXPECT_TRUE(FailsWith(Entry(R"(
  a = f32[4,3] parameter(0)
  b = f32[4,3] parameter(1)
  ROOT x = f32[4,3] triangular-solve(a, b), left_side=true, transpose_a=NO_TRANSPOSE)"),
                        "a must be square in its two minor dimensions"));
}

TEST(LinalgSolverShape, Cholesky) {
  EXPECT_EQ(InferRoot(Entry(R"(
  a = c64[4,8,8] parameter(0)
  ROOT l = c64[4,8,8] cholesky(a), lower=true)")),
            "c64[4,8,8]");
  EXPECT_TRUE(FailsWith(Entry(R"(
  a = s32[8,8] parameter(0)
  ROOT l = s32[8,8] cholesky(a))"),
                        "operand must be floating-point or complex, got s32"));
}

// ---------------------------------------------------------------------------
// batch norm

TEST(LinalgBatchNormShape, TrainingAndGradReturnPerFeatureStatistics) {
  EXPECT_EQ(InferRoot(Entry(R"(
  x = f32[2,2,1,2] parameter(0)
  s = f32[2] parameter(1)
  o = f32[2] parameter(2)
  ROOT t = (f32[2,2,1,2], f32[2], f32[2]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=3)")),
            "(f32[2,2,1,2], f32[2], f32[2])");
  EXPECT_EQ(InferRoot(Entry(R"(
  x = f32[3,5] parameter(0)
  s = f32[5] parameter(1)
  m = f32[5] parameter(2)
  v = f32[5] parameter(3)
  g = f32[3,5] parameter(4)
  ROOT t = (f32[3,5], f32[5], f32[5]) batch-norm-grad(x, s, m, v, g), epsilon=0.001, feature_index=1)")),
            "(f32[3,5], f32[5], f32[5])");
}

TEST(LinalgBatchNormShape, InferenceReturnsTheOperandShape) {
  EXPECT_EQ(InferRoot(Entry(R"(
  x = bf16[4,6] parameter(0)
  s = bf16[4] parameter(1)
  o = bf16[4] parameter(2)
  m = bf16[4] parameter(3)
  v = bf16[4] parameter(4)
  ROOT t = bf16[4,6] batch-norm-inference(x, s, o, m, v), epsilon=0.001, feature_index=0)")),
            "bf16[4,6]");
}

TEST(LinalgBatchNormShape, OperandsMustFitTheFeatureDimension) {
  EXPECT_TRUE(FailsWith(Entry(R"(
  x = f32[3,5] parameter(0)
  s = f32[3] parameter(1)
  o = f32[5] parameter(2)
  ROOT t = (f32[3,5], f32[5], f32[5]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1)"),
                        "scale must be [5] (one value per feature), got f32[3]"));
  EXPECT_TRUE(FailsWith(Entry(R"(
  x = f32[3,5] parameter(0)
  s = f32[5] parameter(1)
  o = f32[5] parameter(2)
  ROOT t = (f32[3,5], f32[5], f32[5]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=2)"),
                        "feature_index 2 is out of range for operand rank 2"));
}

// ---------------------------------------------------------------------------
// topk and random numbers

TEST(LinalgTopKShape, ValuesAndIndices) {
  EXPECT_EQ(InferRoot(Entry(R"(
  x = bf16[1,50000] parameter(0)
  ROOT t = (bf16[1,10], s32[1,10]) topk(x), k=10, largest=true)")),
            "(bf16[1,10], s32[1,10])");
  EXPECT_TRUE(FailsWith(Entry(R"(
  x = f32[4,3] parameter(0)
  ROOT t = (f32[4,5], s32[4,5]) topk(x), k=5, largest=true)"),
                        "k=5 exceeds the last dimension size 3"));
}

TEST(LinalgRngShape, DeclaredShapeWithScalarParameters) {
  EXPECT_EQ(InferRoot(Entry(R"(
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[2,3,5] rng(a, b), distribution=rng_normal)")),
            "f32[2,3,5]");
  EXPECT_TRUE(FailsWith(Entry(R"(
  a = f32[] parameter(0)
  b = f32[2] parameter(1)
  ROOT r = f32[2,3] rng(a, b), distribution=rng_uniform)"),
                        "parameter 1 must be a f32 scalar like the result, got f32[2]"));
  EXPECT_TRUE(FailsWith(Entry(R"(
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT r = s32[4] rng(a, b), distribution=rng_normal)"),
                        "rng_normal needs a floating-point result, got s32"));
}

TEST(LinalgRngShape, BitGeneratorReturnsStateAndOutput) {
  EXPECT_EQ(InferRoot(Entry(R"(
  s = u64[2] parameter(0)
  ROOT r = (u64[2], u32[11,17]) rng-bit-generator(s), algorithm=rng_three_fry)")),
            "(u64[2], u32[11,17])");
  EXPECT_TRUE(FailsWith(Entry(R"(
  s = u64[3] parameter(0)
  ROOT r = u32[2,2] rng-bit-generator(s), algorithm=rng_default)"),
                        "result must be a (state, output) tuple"));
}

TEST(LinalgRngShape, GetAndUpdateStateIsTwoWords) {
  EXPECT_EQ(InferRoot(Entry("  ROOT r = u64[2] rng-get-and-update-state(), delta=4096")), "u64[2]");
}

TEST(LinalgShape, OtherOpcodesAreLeftToOtherFamilies) {
  auto module = ParseHloModule(Entry(R"(
  a = f32[2] parameter(0)
  ROOT n = f32[2] negate(a))"));
  ASSERT_TRUE(module.ok()) << module.status();
  const HloInstruction& root = *(*module)->entry_computation()->root_instruction();
  EXPECT_TRUE(absl::IsNotFound(shape_inference::InferLinalgShape(root).status()));
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
