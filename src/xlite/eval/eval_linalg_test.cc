// Tests of the reference interpreter's linear-algebra family. Expected values
// are worked out by hand from XLA's operation semantics.
#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "xlite/eval/eval_test_util.h"
#include "xlite/eval/evaluator.h"
#include "xlite/text/parser.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

using eval_test::Array;
using eval_test::Doubles;
using eval_test::F32;
using eval_test::Ints;
using eval_test::S64;

using Complex = std::complex<double>;
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

Literal C64(std::vector<int64_t> dims, const std::vector<Complex>& values) {
  Literal lit(Shape::Array(PrimitiveType::C64, std::move(dims)));
  for (size_t i = 0; i < values.size(); ++i) lit.SetComplex(i, values[i]);
  return lit;
}

// Parses `hlo` (the body of an ENTRY computation, or a whole module when it
// starts with "HloModule") and evaluates it on `args`.
absl::StatusOr<Literal> EvalHlo(const std::string& hlo, const std::vector<Literal>& args) {
  std::string text =
      hlo.rfind("HloModule", 0) == 0 ? hlo : "HloModule t\nENTRY e {\n" + hlo + "\n}\n";
  auto module = ParseHloModule(text, "t.hlo");
  if (!module.ok()) return module.status();
  return Evaluate(**module, args);
}

void ExpectNear(const Literal& lit, const std::vector<double>& expected, double tolerance = 1e-5) {
  ASSERT_EQ(lit.element_count(), static_cast<int64_t>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(lit.GetDouble(i))) << "element " << i;
    } else {
      EXPECT_NEAR(lit.GetDouble(i), expected[i], tolerance) << "element " << i;
    }
  }
}

void ExpectComplexNear(const Literal& lit, const std::vector<Complex>& expected,
                       double tolerance = 1e-5) {
  ASSERT_EQ(lit.element_count(), static_cast<int64_t>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(lit.GetComplex(i).real(), expected[i].real(), tolerance) << "element " << i;
    EXPECT_NEAR(lit.GetComplex(i).imag(), expected[i].imag(), tolerance) << "element " << i;
  }
}

// ---------------------------------------------------------------------------
// Dot

TEST(EvalDot, MatrixProduct) {
  auto r = EvalHlo(R"(
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})",
                   {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({3, 2}, {7, 8, 9, 10, 11, 12})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{58, 64, 139, 154}));
}

TEST(EvalDot, BatchDimensionsComeFirst) {
  auto r = EvalHlo(R"(
  a = f32[2,1,2] parameter(0)
  b = f32[2,2,1] parameter(1)
  ROOT d = f32[2,1,1] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1})",
                   {F32({2, 1, 2}, {1, 2, 5, 6}), F32({2, 2, 1}, {3, 4, 7, 8})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{11, 83}));
}

TEST(EvalDot, ContractsAnyDimension) {
  auto r = EvalHlo(R"(
  a = f32[3,2] parameter(0)
  v = f32[3] parameter(1)
  ROOT d = f32[2] dot(a, v), lhs_contracting_dims={0}, rhs_contracting_dims={0})",
                   {F32({3, 2}, {1, 2, 3, 4, 5, 6}), F32({3}, {1, 1, 1})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{9, 12}));
}

TEST(EvalDot, NoContractingDimensionsIsAnOuterProduct) {
  auto r = EvalHlo(R"(
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  ROOT d = f32[2,2] dot(a, b))",
                   {F32({2}, {1, 2}), F32({2}, {3, 4})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{3, 4, 6, 8}));
}

TEST(EvalDot, EmptyContractionGivesZeros) {
  auto r = EvalHlo(R"(
  a = f32[2,0] parameter(0)
  b = f32[0,3] parameter(1)
  ROOT d = f32[2,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})",
                   {F32({2, 0}, {}), F32({0, 3}, {})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>(6, 0.0)));
}

TEST(EvalDot, IntegerProductsWrapInTheResultType) {
  auto r = EvalHlo(
      R"(
  a = s32[2] parameter(0)
  b = s32[2] parameter(1)
  ROOT d = s32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0})",
      {Array(PrimitiveType::S32, {2}, {65536, 3}), Array(PrimitiveType::S32, {2}, {65536, 5})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Ints(*r), (std::vector<int64_t>{15}));  // 2^32 + 15 wraps to 15
}

TEST(EvalDot, NarrowOperandsWidenToThePreferredType) {
  auto r = EvalHlo(
      R"(
  a = s8[2] parameter(0)
  b = s8[2] parameter(1)
  ROOT d = s32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0})",
      {Array(PrimitiveType::S8, {2}, {-128, 100}), Array(PrimitiveType::S8, {2}, {-128, 100})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Ints(*r), (std::vector<int64_t>{16384 + 10000}));
  auto f = EvalHlo(
      R"(
  a = bf16[2] parameter(0)
  b = bf16[2] parameter(1)
  ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0})",
      {Array(PrimitiveType::BF16, {2}, {256, 1}), Array(PrimitiveType::BF16, {2}, {256, 1})});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(Doubles(*f), (std::vector<double>{65537}));  // not representable in bf16
}

TEST(EvalDot, ComplexProducts) {
  auto r = EvalHlo(R"(
  a = c64[2] parameter(0)
  b = c64[2] parameter(1)
  ROOT d = c64[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0})",
                   {C64({2}, {{1, 2}, {3, -1}}), C64({2}, {{2, 0}, {1, 1}})});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectComplexNear(*r, {{6, 6}});
}

TEST(EvalDot, BadShapesAreErrorsNotCrashes) {
  auto r = EvalHlo(R"(
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  ROOT d = f32[3,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})",
                   {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({3, 2}, {7, 8, 9, 10, 11, 12})});
  EXPECT_FALSE(r.ok());
  auto s = EvalHlo(R"(
  a = f32[2,3] parameter(0)
  b = f32[2,2] parameter(1)
  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})",
                   {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({2, 2}, {7, 8, 9, 10})});
  EXPECT_FALSE(s.ok());
}

TEST(EvalDot, WorkBeyondTheElementBudgetIsTooSlow) {
  auto module = ParseHloModule(R"(HloModule t
ENTRY e {
  a = f32[20,1000] parameter(0)
  b = f32[1000,20] parameter(1)
  ROOT d = f32[20,20] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                               "t.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<Literal> args = {F32({20, 1000}, std::vector<double>(20000, 1)),
                               F32({1000, 20}, std::vector<double>(20000, 1))};
  EvalOptions options;
  options.max_total_elements = 500;  // 400 results, but 400,000 multiply-adds > 500 * 100
  auto r = Evaluate(**module, args, options);
  EXPECT_TRUE(absl::IsResourceExhausted(r.status())) << r.status();
  options.max_total_elements = 1'000'000;
  auto ok = Evaluate(**module, args, options);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->GetDouble(0), 1000);
}

// A time limit stops one long dot or convolution in the middle (before,
// only the next instruction checked it). Each takes seconds here; the limit
// is 10 ms.
TEST(EvalLinalg, TimeLimitStopsALongDotOrConvolution) {
  for (const char* root :
       {"ROOT d = f32[512,512] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
        "ROOT c = f32[1,512,512,1] convolution(a4, b4), window={size=64x64 pad=32_31x32_31}, "
        "dim_labels=b01f_01io->b01f"}) {
    auto module = ParseHloModule(absl::StrCat(R"(HloModule t
ENTRY e {
  a = f32[512,2048] parameter(0)
  b = f32[2048,512] parameter(1)
  a2 = f32[512,512] slice(a), slice={[0:512], [0:512]}
  a4 = f32[1,512,512,1] reshape(a2)
  b2 = f32[2,2048] slice(a), slice={[0:2], [0:2048]}
  b4 = f32[64,64,1,1] reshape(b2)
  )",
                                              root, "\n}"),
                                 "t.hlo");
    ASSERT_TRUE(module.ok()) << module.status();
    std::vector<Literal> args = {F32({512, 2048}, std::vector<double>(512 * 2048, 1)),
                                 F32({2048, 512}, std::vector<double>(2048 * 512, 1))};
    EvalOptions options;
    options.max_seconds = 0.01;
    auto r = Evaluate(**module, args, options);
    EXPECT_TRUE(absl::IsResourceExhausted(r.status())) << root << ": " << r.status();
    EXPECT_TRUE(absl::StrContains(r.status().message(), "still running")) << r.status();
  }
}

TEST(EvalRaggedDot, NonContractingRowsUseTheirGroupsMatrix) {
  // Rows 0 | 1,2 | 3 (in no group, so zero).
  auto r = EvalHlo(
      "l = f32[4,1] parameter(0)\n r = f32[2,1,1] parameter(1)\n g = s64[2] parameter(2)\n"
      " ROOT d = f32[4,1] ragged-dot(l, r, g), lhs_contracting_dims={1}, "
      "rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}",
      {F32({4, 1}, {1, 2, 3, 4}), F32({2, 1, 1}, {10, 100}), S64({2}, {1, 2})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{10, 200, 300, 0}));
}

TEST(EvalRaggedDot, ContractingGroupsGiveOneProductEach) {
  // k = 0,1 | 2; k = 3 is in no group, so its infinity never meets a zero.
  const double inf = std::numeric_limits<double>::infinity();
  auto r = EvalHlo(
      "l = f32[1,4] parameter(0)\n r = f32[4,1] parameter(1)\n g = s64[2] parameter(2)\n"
      " ROOT d = f32[2,1,1] ragged-dot(l, r, g), lhs_contracting_dims={1}, "
      "rhs_contracting_dims={0}, lhs_ragged_dims={1}",
      {F32({1, 4}, {1, 2, 3, 4}), F32({4, 1}, {1, 1, 1, inf}), S64({2}, {2, 1})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{3, 3}));
}

TEST(EvalRaggedDot, BatchOutsideEveryGroupIsZero) {
  auto r = EvalHlo(
      "l = f32[2,1,1] parameter(0)\n r = f32[2,1,1] parameter(1)\n g = s64[1] parameter(2)\n"
      " ROOT d = f32[2,1,1] ragged-dot(l, r, g), lhs_batch_dims={0}, rhs_batch_dims={0}, "
      "lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={0}",
      {F32({2, 1, 1}, {1, 2}), F32({2, 1, 1}, {3, 4}), S64({1}, {1})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{3, 0}));
}

TEST(EvalRaggedDot, NegativeGroupSizeIsAnError) {
  auto r = EvalHlo(
      "l = f32[4,1] parameter(0)\n r = f32[2,1,1] parameter(1)\n g = s64[2] parameter(2)\n"
      " ROOT d = f32[4,1] ragged-dot(l, r, g), lhs_contracting_dims={1}, "
      "rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}",
      {F32({4, 1}, {1, 2, 3, 4}), F32({2, 1, 1}, {10, 100}), S64({2}, {-1, 2})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("negative group size"), std::string::npos);
}

TEST(EvalScaledDot, BlockScalesMultiplyBeforeTheProduct) {
  // lhs [2,4] with scale [2,2]: blocks of 2 along k; rhs [4,1] with a scalar scale.
  auto r = EvalHlo(
      "l = f32[2,4] parameter(0)\n r = f32[4,1] parameter(1)\n"
      " ls = f32[2,2] parameter(2)\n rs = f32[] parameter(3)\n"
      " ROOT d = f32[2,1] scaled-dot(l, r, ls, rs), lhs_contracting_dims={1}, "
      "rhs_contracting_dims={0}",
      {F32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), F32({4, 1}, {1, 1, 1, 1}), F32({2, 2}, {1, 10, 2, 0}),
       F32({}, {0.5})});
  ASSERT_TRUE(r.ok()) << r.status();
  // Row 0: (1+2)*1 + (3+4)*10 = 73; row 1: (5+6)*2 + 0 = 22; times 0.5.
  EXPECT_EQ(Doubles(*r), (std::vector<double>{36.5, 11}));
}

TEST(EvalScaledDot, ScaleBlocksMustDivideTheOperand) {
  auto r = EvalHlo(
      "l = f32[2,3] parameter(0)\n r = f32[3,1] parameter(1)\n"
      " ls = f32[2,2] parameter(2)\n rs = f32[] parameter(3)\n"
      " ROOT d = f32[2,1] scaled-dot(l, r, ls, rs), lhs_contracting_dims={1}, "
      "rhs_contracting_dims={0}",
      {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({3, 1}, {1, 1, 1}), F32({2, 2}, {1, 1, 1, 1}),
       F32({}, {1})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("does not fit lhs dimension size 3"), std::string::npos)
      << r.status();
}

// ---------------------------------------------------------------------------
// Convolution. The 1-D cases convolve [1,2,3,4,5] with the kernel [1,0,-1],
// so each output is x[i] - x[i+2] over the (padded, dilated) input.

absl::StatusOr<Literal> Conv1D(const std::string& window) {
  return EvalHlo(R"(
  x = f32[1,1,5] parameter(0)
  k = f32[1,1,3] parameter(1)
  ROOT c = f32[1,1,)" +
                     window,
                 {F32({1, 1, 5}, {1, 2, 3, 4, 5}), F32({1, 1, 3}, {1, 0, -1})});
}

TEST(EvalConvolution, Valid) {
  auto r = Conv1D("3] convolution(x, k), window={size=3}, dim_labels=bf0_oi0->bf0");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{-2, -2, -2}));
}

TEST(EvalConvolution, PaddingIsZero) {
  auto r = Conv1D("5] convolution(x, k), window={size=3 pad=1_1}, dim_labels=bf0_oi0->bf0");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{-2, -2, -2, -2, 4}));
}

TEST(EvalConvolution, StrideSkipsPositions) {
  auto r =
      Conv1D("3] convolution(x, k), window={size=3 stride=2 pad=1_1}, dim_labels=bf0_oi0->bf0");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{-2, -2, 4}));
}

TEST(EvalConvolution, NegativePaddingCropsTheInput) {
  auto r = Conv1D("2] convolution(x, k), window={size=3 pad=-1_0}, dim_labels=bf0_oi0->bf0");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{-2, -2}));
}

TEST(EvalConvolution, WindowDilationSpreadsTheKernel) {
  auto r = Conv1D("1] convolution(x, k), window={size=3 rhs_dilate=2}, dim_labels=bf0_oi0->bf0");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{1 - 5}));
}

TEST(EvalConvolution, BaseDilationInsertsZeroHoles) {
  // Dilated input: [1,0,2,0,3,0,4,0,5].
  auto r = Conv1D("7] convolution(x, k), window={size=3 lhs_dilate=2}, dim_labels=bf0_oi0->bf0");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{-1, 0, -1, 0, -1, 0, -1}));
}

TEST(EvalConvolution, WindowReversalFlipsTheKernel) {
  auto r = Conv1D("3] convolution(x, k), window={size=3 rhs_reversal=1}, dim_labels=bf0_oi0->bf0");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{2, 2, 2}));
}

TEST(EvalConvolution, TwoDimensionsWithFeatureLastLayout) {
  // Output feature 0 sums the 2x2 window; feature 1 is top-left minus bottom-right.
  auto r = EvalHlo(R"(
  x = f32[1,2,2,1] parameter(0)
  k = f32[2,2,1,2] parameter(1)
  ROOT c = f32[1,1,1,2] convolution(x, k), window={size=2x2}, dim_labels=b01f_01io->b01f)",
                   {F32({1, 2, 2, 1}, {1, 2, 3, 4}), F32({2, 2, 1, 2}, {1, 1, 1, 0, 1, 0, 1, -1})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{10, -3}));
}

TEST(EvalConvolution, FeatureGroupsConvolvePairwise) {
  // Group 0: features {0,1} with kernel [1,1]; group 1: features {2,3} with [1,10].
  auto r = EvalHlo(R"(
  x = f32[1,4,1] parameter(0)
  k = f32[2,2,1] parameter(1)
  ROOT c = f32[1,2,1] convolution(x, k), window={size=1}, dim_labels=bf0_oi0->bf0, feature_group_count=2)",
                   {F32({1, 4, 1}, {1, 2, 3, 4}), F32({2, 2, 1}, {1, 1, 1, 10})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{3, 43}));
}

TEST(EvalConvolution, BatchGroupsSplitTheBatch) {
  // Output feature g sees batch group g (batches 2g, 2g+1).
  auto r = EvalHlo(R"(
  x = f32[4,1,1] parameter(0)
  k = f32[2,1,1] parameter(1)
  ROOT c = f32[2,2,1] convolution(x, k), window={size=1}, dim_labels=bf0_oi0->bf0, batch_group_count=2)",
                   {F32({4, 1, 1}, {1, 2, 3, 4}), F32({2, 1, 1}, {1, 10})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{1, 30, 2, 40}));
}

TEST(EvalConvolution, MismatchedKernelIsAnError) {
  auto r = EvalHlo(R"(
  x = f32[1,2,5] parameter(0)
  k = f32[1,1,3] parameter(1)
  ROOT c = f32[1,1,3] convolution(x, k), window={size=3}, dim_labels=bf0_oi0->bf0)",
                   {F32({1, 2, 5}, std::vector<double>(10, 1)), F32({1, 1, 3}, {1, 0, -1})});
  EXPECT_FALSE(r.ok());
}

TEST(EvalConvolution, IntegerAndEmptyBatch) {
  auto r = EvalHlo(R"(
  x = s32[1,1,3] parameter(0)
  k = s32[1,1,2] parameter(1)
  ROOT c = s32[1,1,2] convolution(x, k), window={size=2}, dim_labels=bf0_oi0->bf0)",
                   {Array(PrimitiveType::S32, {1, 1, 3}, {1, 2, 3}),
                    Array(PrimitiveType::S32, {1, 1, 2}, {10, 1})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Ints(*r), (std::vector<int64_t>{12, 23}));
  auto e = EvalHlo(R"(
  x = f32[0,1,3] parameter(0)
  k = f32[1,1,2] parameter(1)
  ROOT c = f32[0,1,2] convolution(x, k), window={size=2}, dim_labels=bf0_oi0->bf0)",
                   {F32({0, 1, 3}, {}), F32({1, 1, 2}, {1, 1})});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->element_count(), 0);
}

// ---------------------------------------------------------------------------
// FFT

TEST(EvalFft, ForwardAndInverse) {
  auto f = EvalHlo(R"(
  x = c64[4] parameter(0)
  ROOT f = c64[4] fft(x), fft_type=FFT, fft_length={4})",
                   {C64({4}, {1, 2, 3, 4})});
  ASSERT_TRUE(f.ok()) << f.status();
  ExpectComplexNear(*f, {{10, 0}, {-2, 2}, {-2, 0}, {-2, -2}});
  auto i = EvalHlo(R"(
  x = c64[4] parameter(0)
  ROOT f = c64[4] fft(x), fft_type=IFFT, fft_length={4})",
                   {C64({4}, {{10, 0}, {-2, 2}, {-2, 0}, {-2, -2}})});
  ASSERT_TRUE(i.ok()) << i.status();
  ExpectComplexNear(*i, {1, 2, 3, 4});
}

TEST(EvalFft, TransformsOnlyTheTrailingDimensions) {
  auto batched = EvalHlo(R"(
  x = c64[2,2] parameter(0)
  ROOT f = c64[2,2] fft(x), fft_type=FFT, fft_length={2})",
                         {C64({2, 2}, {1, 2, 3, 4})});
  ASSERT_TRUE(batched.ok()) << batched.status();
  ExpectComplexNear(*batched, {3, -1, 7, -1});
  auto two_d = EvalHlo(R"(
  x = c64[2,2] parameter(0)
  ROOT f = c64[2,2] fft(x), fft_type=FFT, fft_length={2,2})",
                       {C64({2, 2}, {1, 2, 3, 4})});
  ASSERT_TRUE(two_d.ok()) << two_d.status();
  ExpectComplexNear(*two_d, {10, -2, -4, 0});
}

TEST(EvalFft, RealTransformsKeepHalfTheSpectrum) {
  auto r = EvalHlo(R"(
  x = f32[4] parameter(0)
  ROOT f = c64[3] fft(x), fft_type=RFFT, fft_length={4})",
                   {F32({4}, {1, 2, 3, 4})});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectComplexNear(*r, {{10, 0}, {-2, 2}, {-2, 0}});
  auto i = EvalHlo(R"(
  x = c64[3] parameter(0)
  ROOT f = f32[4] fft(x), fft_type=IRFFT, fft_length={4})",
                   {C64({3}, {{10, 0}, {-2, 2}, {-2, 0}})});
  ASSERT_TRUE(i.ok()) << i.status();
  ExpectNear(*i, {1, 2, 3, 4});
}

TEST(EvalFft, OddLengthRealRoundTrip) {
  const double s = std::sqrt(3.0) / 2;
  auto r = EvalHlo(R"(
  x = f32[3] parameter(0)
  ROOT f = c64[2] fft(x), fft_type=RFFT, fft_length={3})",
                   {F32({3}, {1, 2, 3})});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectComplexNear(*r, {{6, 0}, {-1.5, s}});
  auto i = EvalHlo(R"(
  x = c64[2] parameter(0)
  ROOT f = f32[3] fft(x), fft_type=IRFFT, fft_length={3})",
                   {C64({2}, {{6, 0}, {-1.5, s}})});
  ASSERT_TRUE(i.ok()) << i.status();
  ExpectNear(*i, {1, 2, 3});
}

TEST(EvalFft, TwoDimensionalRealRoundTrip) {
  // RFFT over [[1,2],[3,4]] with fft_length {2,2} keeps both columns (2/2+1 = 2).
  auto r = EvalHlo(R"(
  x = f32[2,2] parameter(0)
  ROOT f = c64[2,2] fft(x), fft_type=RFFT, fft_length={2,2})",
                   {F32({2, 2}, {1, 2, 3, 4})});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectComplexNear(*r, {10, -2, -4, 0});
  auto i = EvalHlo(R"(
  x = c64[2,2] parameter(0)
  ROOT f = f32[2,2] fft(x), fft_type=IRFFT, fft_length={2,2})",
                   {C64({2, 2}, {10, -2, -4, 0})});
  ASSERT_TRUE(i.ok()) << i.status();
  ExpectNear(*i, {1, 2, 3, 4});
}

TEST(EvalFft, LengthMustMatchTheOperand) {
  auto r = EvalHlo(R"(
  x = c64[4] parameter(0)
  ROOT f = c64[4] fft(x), fft_type=FFT, fft_length={8})",
                   {C64({4}, {1, 2, 3, 4})});
  EXPECT_FALSE(r.ok());
}

// ---------------------------------------------------------------------------
// Triangular solve

TEST(EvalTriangularSolve, LeftLowerIgnoresTheOtherTriangle) {
  auto r = EvalHlo(R"(
  a = f32[2,2] parameter(0)
  b = f32[2,1] parameter(1)
  ROOT x = f32[2,1] triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE)",
                   {F32({2, 2}, {2, 99, 1, 4}), F32({2, 1}, {2, 9})});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectNear(*r, {1, 2});
}

TEST(EvalTriangularSolve, TransposedAndRightSide) {
  // a^T x = b with a = [[2,0],[1,4]]: [[2,1],[0,4]] x = [4,8] gives x = [1,2].
  auto t = EvalHlo(R"(
  a = f32[2,2] parameter(0)
  b = f32[2,1] parameter(1)
  ROOT x = f32[2,1] triangular-solve(a, b), left_side=true, lower=true, transpose_a=TRANSPOSE)",
                   {F32({2, 2}, {2, 0, 1, 4}), F32({2, 1}, {4, 8})});
  ASSERT_TRUE(t.ok()) << t.status();
  ExpectNear(*t, {1, 2});
  // x a = b: [2 x0 + x1, 4 x1] = [4, 8].
  auto r = EvalHlo(R"(
  a = f32[2,2] parameter(0)
  b = f32[1,2] parameter(1)
  ROOT x = f32[1,2] triangular-solve(a, b), lower=true, transpose_a=NO_TRANSPOSE)",
                   {F32({2, 2}, {2, 0, 1, 4}), F32({1, 2}, {4, 8})});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectNear(*r, {1, 2});
}

TEST(EvalTriangularSolve, UpperUnitDiagonalBatched) {
  // Batch 0: [[1,3],[0,1]] x = [7,2] -> x = [1,2]. Batch 1: [[1,-1],[0,1]] x = [0,5] -> [5,5].
  auto r = EvalHlo(R"(
  a = f32[2,2,2] parameter(0)
  b = f32[2,2,1] parameter(1)
  ROOT x = f32[2,2,1] triangular-solve(a, b), left_side=true, lower=false, unit_diagonal=true, transpose_a=NO_TRANSPOSE)",
                   {F32({2, 2, 2}, {9, 3, 9, 9, 0, -1, 0, 0}), F32({2, 2, 1}, {7, 2, 0, 5})});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectNear(*r, {1, 2, 5, 5});
}

TEST(EvalTriangularSolve, AdjointConjugates) {
  // a = [[2,0],[i,1]]; a^H = [[2,-i],[0,1]]; a^H x = [2-i, 1] gives x = [1, 1].
  auto r = EvalHlo(R"(
  a = c64[2,2] parameter(0)
  b = c64[2,1] parameter(1)
  ROOT x = c64[2,1] triangular-solve(a, b), left_side=true, lower=true, transpose_a=ADJOINT)",
                   {C64({2, 2}, {{2, 0}, {0, 0}, {0, 1}, {1, 0}}), C64({2, 1}, {{2, -1}, {1, 0}})});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectComplexNear(*r, {1, 1});
}

// ---------------------------------------------------------------------------
// Cholesky

TEST(EvalCholesky, LowerAndUpper) {
  auto l = EvalHlo(R"(
  a = f32[2,2] parameter(0)
  ROOT l = f32[2,2] cholesky(a), lower=true)",
                   {F32({2, 2}, {4, 99, 2, 5})});
  ASSERT_TRUE(l.ok()) << l.status();
  ExpectNear(*l, {2, 0, 1, 2});
  auto u = EvalHlo(R"(
  a = f32[2,2] parameter(0)
  ROOT u = f32[2,2] cholesky(a), lower=false)",
                   {F32({2, 2}, {4, 2, 99, 5})});
  ASSERT_TRUE(u.ok()) << u.status();
  ExpectNear(*u, {2, 1, 0, 2});
}

TEST(EvalCholesky, BatchedAndComplex) {
  auto b = EvalHlo(R"(
  a = f32[2,1,1] parameter(0)
  ROOT l = f32[2,1,1] cholesky(a), lower=true)",
                   {F32({2, 1, 1}, {9, 16})});
  ASSERT_TRUE(b.ok()) << b.status();
  ExpectNear(*b, {3, 4});
  // [[4, -2i], [2i, 5]] = l l^H with l = [[2, 0], [i, 2]].
  auto c = EvalHlo(R"(
  a = c64[2,2] parameter(0)
  ROOT l = c64[2,2] cholesky(a), lower=true)",
                   {C64({2, 2}, {{4, 0}, {0, -2}, {0, 2}, {5, 0}})});
  ASSERT_TRUE(c.ok()) << c.status();
  ExpectComplexNear(*c, {{2, 0}, {0, 0}, {0, 1}, {2, 0}});
}

TEST(EvalCholesky, NotPositiveDefiniteGivesNan) {
  auto r = EvalHlo(R"(
  a = f32[2,2] parameter(0)
  ROOT l = f32[2,2] cholesky(a), lower=true)",
                   {F32({2, 2}, {1, 2, 2, 1})});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectNear(*r, {1, 0, 2, kNan});
}

// ---------------------------------------------------------------------------
// TopK

TEST(EvalTopK, LargestWithStableTies) {
  auto r = EvalHlo(R"(
  x = f32[5] parameter(0)
  ROOT t = (f32[3], s32[3]) topk(x), k=3, largest=true)",
                   {F32({5}, {3, 1, 4, 1, 5})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(r->tuple_elements()[0]), (std::vector<double>{5, 4, 3}));
  EXPECT_EQ(Ints(r->tuple_elements()[1]), (std::vector<int64_t>{4, 2, 0}));
  auto ties = EvalHlo(R"(
  x = f32[4] parameter(0)
  ROOT t = (f32[2], s32[2]) topk(x), k=2)",
                      {F32({4}, {2, 7, 7, 1})});
  ASSERT_TRUE(ties.ok()) << ties.status();
  EXPECT_EQ(Ints(ties->tuple_elements()[1]), (std::vector<int64_t>{1, 2}));
}

TEST(EvalTopK, SmallestPerRow) {
  auto r = EvalHlo(R"(
  x = s32[2,3] parameter(0)
  ROOT t = (s32[2,2], s32[2,2]) topk(x), k=2, largest=false)",
                   {Array(PrimitiveType::S32, {2, 3}, {1, 3, 1, 6, -5, 4})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Ints(r->tuple_elements()[0]), (std::vector<int64_t>{1, 1, -5, 4}));
  EXPECT_EQ(Ints(r->tuple_elements()[1]), (std::vector<int64_t>{0, 2, 1, 2}));
}

TEST(EvalTopK, TotalOrderPutsNanFirstAndPositiveZeroAboveNegative) {
  auto r = EvalHlo(R"(
  x = f32[5] parameter(0)
  ROOT t = (f32[4], s32[4]) topk(x), k=4)",
                   {F32({5}, {1, kNan, -0.0, 0.0, -kNan})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Ints(r->tuple_elements()[1]), (std::vector<int64_t>{1, 0, 3, 2}));
  auto u = EvalHlo(R"(
  x = u32[2] parameter(0)
  ROOT t = (u32[1], s32[1]) topk(x), k=1)",
                   {Array(PrimitiveType::U32, {2}, {1, 4000000000.0})});
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(Ints(u->tuple_elements()[1]), (std::vector<int64_t>{1}));
}

// ---------------------------------------------------------------------------
// Batch normalization (feature_index=1: columns are features)

TEST(EvalBatchNorm, Training) {
  auto r = EvalHlo(R"(
  x = f32[2,2] parameter(0)
  s = f32[2] parameter(1)
  o = f32[2] parameter(2)
  ROOT t = (f32[2,2], f32[2], f32[2]) batch-norm-training(x, s, o), epsilon=0, feature_index=1)",
                   {F32({2, 2}, {1, 2, 3, 6}), F32({2}, {1, 2}), F32({2}, {0, 1})});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectNear(r->tuple_elements()[0], {-1, -1, 1, 3});
  ExpectNear(r->tuple_elements()[1], {2, 4});
  ExpectNear(r->tuple_elements()[2], {1, 4});
}

TEST(EvalBatchNorm, Inference) {
  auto r = EvalHlo(R"(
  x = f32[2,2] parameter(0)
  s = f32[2] parameter(1)
  o = f32[2] parameter(2)
  m = f32[2] parameter(3)
  v = f32[2] parameter(4)
  ROOT y = f32[2,2] batch-norm-inference(x, s, o, m, v), epsilon=0.5, feature_index=1)",
                   {F32({2, 2}, {1, 2, 3, 6}), F32({2}, {1, 2}), F32({2}, {0, 1}), F32({2}, {2, 4}),
                    F32({2}, {3.5, 3.5})});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectNear(*r, {-0.5, -1, 0.5, 3});  // (x - mean) / 2 * scale + offset
}

TEST(EvalBatchNorm, Grad) {
  // One feature over x = [0,3,3] with mean 2, variance 2, epsilon 2 (so
  // var + eps = 4), dy = [0,0,1]: grad_offset = 1, grad_scale = 1/2,
  // grad_x = 1/2 * (dy - 1/3 - (x - 2)/12).
  auto r = EvalHlo(R"(
  x = f32[3,1] parameter(0)
  s = f32[1] parameter(1)
  m = f32[1] parameter(2)
  v = f32[1] parameter(3)
  dy = f32[3,1] parameter(4)
  ROOT t = (f32[3,1], f32[1], f32[1]) batch-norm-grad(x, s, m, v, dy), epsilon=2, feature_index=1)",
                   {F32({3, 1}, {0, 3, 3}), F32({1}, {1}), F32({1}, {2}), F32({1}, {2}),
                    F32({3, 1}, {0, 0, 1})});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectNear(r->tuple_elements()[0], {-1.0 / 12, -5.0 / 24, 7.0 / 24});
  ExpectNear(r->tuple_elements()[1], {0.5});
  ExpectNear(r->tuple_elements()[2], {1});
}

TEST(EvalBatchNorm, GradWithNoElementsPerFeatureIsZero) {
  // Sums over nothing: grad_scale and grad_offset are 0 (not 0 * NaN).
  auto r = EvalHlo(
      R"(
  x = f32[0,2] parameter(0)
  s = f32[2] parameter(1)
  m = f32[2] parameter(2)
  v = f32[2] parameter(3)
  dy = f32[0,2] parameter(4)
  ROOT t = (f32[0,2], f32[2], f32[2]) batch-norm-grad(x, s, m, v, dy), epsilon=1, feature_index=1)",
      {F32({0, 2}, {}), F32({2}, {1, 1}), F32({2}, {0, 0}), F32({2}, {1, 1}), F32({0, 2}, {})});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectNear(r->tuple_elements()[1], {0, 0});
  ExpectNear(r->tuple_elements()[2], {0, 0});
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
