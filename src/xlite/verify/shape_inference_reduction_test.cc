// Shape inference for reduce, reduce-window, select-and-scatter, sort, map and
// scan: each rule once valid, once broken (including the called computation's
// signature).
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

// Called computations the tests share, then an ENTRY computation of `body`.
std::string Module(absl::string_view body) {
  return absl::StrCat(R"(HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

add_s32 {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] add(x, y)
}

argmax {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  ge = pred[] compare(v0, v1), direction=GE
  v = f32[] select(ge, v0, v1)
  i = s32[] select(ge, i0, i1)
  ROOT r = (f32[], s32[]) tuple(v, i)
}

ge {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT c = pred[] compare(x, y), direction=GE
}

less_kv {
  k0 = f32[] parameter(0)
  k1 = f32[] parameter(1)
  v0 = s32[] parameter(2)
  v1 = s32[] parameter(3)
  ROOT c = pred[] compare(k0, k1), direction=LT
}

returns_nothing {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT t = () tuple()
}

running_sum {
  x = f32[] parameter(0)
  carry = f32[] parameter(1)
  s = f32[] add(x, carry)
  ROOT t = (f32[], f32[]) tuple(s, s)
}

ENTRY e {
)",
                      body, "\n}\n");
}

// ---------------------------------------------------------------------------
// reduce

TEST(ReductionReduceShape, RemovesTheReducedDimensions) {
  EXPECT_EQ(InferRoot(Module(R"(
  x = f32[2,3,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(x, z), dimensions={0,2}, to_apply=add)")),
            "f32[3]");
  EXPECT_EQ(InferRoot(Module(R"(
  x = f32[<=5,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[<=5] reduce(x, z), dimensions={1}, to_apply=add)")),
            "f32[<=5]");
}

TEST(ReductionReduceShape, VariadicReduceReturnsATuple) {
  EXPECT_EQ(InferRoot(Module(R"(
  v = f32[8,16] parameter(0)
  i = s32[8,16] parameter(1)
  zv = f32[] constant(0)
  zi = s32[] constant(0)
  ROOT r = (f32[8], s32[8]) reduce(v, i, zv, zi), dimensions={1}, to_apply=argmax)")),
            "(f32[8], s32[8])");
}

TEST(ReductionReduceShape, AccumulatorMayBeWiderThanTheInput) {
  EXPECT_EQ(InferRoot(Module(R"(
  x = bf16[4,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(x, z), dimensions={0}, to_apply=add)")),
            "f32[4]");
}

TEST(ReductionReduceShape, OperandsMustPairInputsWithScalarInits) {
  EXPECT_TRUE(FailsWith(Module(R"(
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z, z), dimensions={0}, to_apply=add)"),
                        "expects N inputs followed by N init values, got 3 operands"));
  EXPECT_TRUE(FailsWith(Module(R"(
  x = f32[4,4] parameter(0)
  z = f32[4] parameter(1)
  ROOT r = f32[4] reduce(x, z), dimensions={0}, to_apply=add)"),
                        "init value 0 must be a scalar, got f32[4]"));
  EXPECT_TRUE(FailsWith(Module(R"(
  v = f32[8,16] parameter(0)
  i = s32[8,15] parameter(1)
  zv = f32[] constant(0)
  zi = s32[] constant(0)
  ROOT r = (f32[8], s32[8]) reduce(v, i, zv, zi), dimensions={1}, to_apply=argmax)"),
                        "input 1 is s32[8,15] but input 0 is f32[8,16]"));
}

TEST(ReductionReduceShape, DimensionsMustBeInRange) {
  EXPECT_TRUE(FailsWith(Module(R"(
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={1}, to_apply=add)"),
                        "dimension 1 is out of range for rank 1"));
}

TEST(ReductionReduceShape, ReducerMustFitTheOperands) {
  EXPECT_TRUE(FailsWith(Module(R"(
  x = f32[4] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[] reduce(x, z), dimensions={0}, to_apply=add)"),
                        "computation 'add' result 0 is f32[] but init value 0 is s32"));
  EXPECT_TRUE(FailsWith(Module(R"(
  x = s32[4] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[] reduce(x, z), dimensions={0}, to_apply=argmax)"),
                        "computation 'argmax' takes 4 parameters but needs 2"));
  EXPECT_TRUE(FailsWith(Module(R"(
  x = f32[4] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[] reduce(x, z), dimensions={0}, to_apply=add_s32)"),
                        "computation 'add_s32' parameter 1 is s32[] but must be a f32 scalar"));
}

// ---------------------------------------------------------------------------
// reduce-window

TEST(ReductionReduceWindowShape, StridedPooling) {
  EXPECT_EQ(InferRoot(Module(R"(
  x = f32[1,8,8,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[1,4,4,3] reduce-window(x, z), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=add)")),
            "f32[1,4,4,3]");
}

TEST(ReductionReduceWindowShape, PaddingAndDilations) {
  // base 5 dilated by 2 is 9, padded to 11; a 3-window dilated by 2 spans 5.
  EXPECT_EQ(InferRoot(Module(R"(
  x = f32[5,<=6] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4,<=6] reduce-window(x, z), window={size=3x1 stride=2x1 pad=1_1x0_0 lhs_dilate=2x1 rhs_dilate=2x1}, to_apply=add)")),
            "f32[4,<=6]");
}

TEST(ReductionReduceWindowShape, VariadicAndUnbounded) {
  EXPECT_EQ(InferRoot(Module(R"(
  v = f32[?,10] parameter(0)
  i = s32[?,10] parameter(1)
  zv = f32[] constant(0)
  zi = s32[] constant(0)
  ROOT r = (f32[?,5], s32[?,5]) reduce-window(v, i, zv, zi), window={size=1x2 stride=1x2}, to_apply=argmax)")),
            "(f32[?,5], s32[?,5])");
}

TEST(ReductionReduceWindowShape, WindowMustCoverEveryDimension) {
  EXPECT_TRUE(FailsWith(Module(R"(
  x = f32[8,8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce-window(x, z), window={size=2 stride=2}, to_apply=add)"),
                        "window has 1 dimensions but the operand has rank 2"));
  EXPECT_TRUE(FailsWith(Module(R"(
  x = f32[8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce-window(x, z), window={size=2 stride=0}, to_apply=add)"),
                        "window dimension 0 has non-positive stride 0"));
}

// ---------------------------------------------------------------------------
// select-and-scatter

TEST(ReductionSelectAndScatterShape, ResultIsTheOperandShape) {
  EXPECT_EQ(InferRoot(Module(R"(
  x = f32[4,5] parameter(0)
  s = f32[2,2] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[4,5] select-and-scatter(x, s, z), window={size=2x3 stride=2x3 pad=0_0x0_1}, select=ge, scatter=add)")),
            "f32[4,5]");
}

TEST(ReductionSelectAndScatterShape, SourceMustMatchTheWindows) {
  EXPECT_TRUE(FailsWith(Module(R"(
  x = f32[4,5] parameter(0)
  s = f32[2,3] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[4,5] select-and-scatter(x, s, z), window={size=2x3 stride=2x3 pad=0_0x0_1}, select=ge, scatter=add)"),
                        "source is f32[2,3] but the window over the operand gives f32[2,2]"));
}

TEST(ReductionSelectAndScatterShape, SelectMustReturnPred) {
  EXPECT_TRUE(FailsWith(Module(R"(
  x = f32[4] parameter(0)
  s = f32[2] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[4] select-and-scatter(x, s, z), window={size=2 stride=2}, select=add, scatter=add)"),
                        "select computation 'add' must return pred[], got f32[]"));
}

// ---------------------------------------------------------------------------
// sort

TEST(ReductionSortShape, KeysAndValues) {
  EXPECT_EQ(InferRoot(Module(R"(
  x = f32[2,3] parameter(0)
  ROOT r = f32[2,3] sort(x), dimensions={1}, to_apply=ge)")),
            "f32[2,3]");
  EXPECT_EQ(InferRoot(Module(R"(
  k = f32[1024] parameter(0)
  v = s32[1024] parameter(1)
  ROOT r = (f32[1024], s32[1024]) sort(k, v), dimensions={0}, is_stable=true, to_apply=less_kv)")),
            "(f32[1024], s32[1024])");
}

TEST(ReductionSortShape, ComparatorMustTakePairsAndReturnPred) {
  EXPECT_TRUE(FailsWith(Module(R"(
  k = f32[16] parameter(0)
  ROOT r = f32[16] sort(k), dimensions={0}, to_apply=less_kv)"),
                        "computation 'less_kv' takes 4 parameters but needs 2"));
  EXPECT_TRUE(FailsWith(Module(R"(
  k = f32[16] parameter(0)
  ROOT r = f32[16] sort(k), dimensions={0}, to_apply=add)"),
                        "comparator 'add' must return pred[], got f32[]"));
  EXPECT_TRUE(FailsWith(Module(R"(
  k = f32[16] parameter(0)
  ROOT r = f32[16] sort(k), dimensions={0}, to_apply=returns_nothing)"),
                        "comparator 'returns_nothing' must return pred[], got ()"));
  EXPECT_TRUE(FailsWith(Module(R"(
  k = f32[16] parameter(0)
  v = f32[16] parameter(1)
  ROOT r = (f32[16], f32[16]) sort(k, v), dimensions={0}, to_apply=less_kv)"),
                        "computation 'less_kv' parameter 2 is s32[] but must be a f32 scalar"));
}

TEST(ReductionSortShape, OperandsAndDimension) {
  EXPECT_TRUE(FailsWith(Module(R"(
  k = f32[16] parameter(0)
  v = s32[8] parameter(1)
  ROOT r = (f32[16], s32[8]) sort(k, v), dimensions={0}, to_apply=less_kv)"),
                        "operand 1 is s32[8] but operand 0 is f32[16]"));
  EXPECT_TRUE(FailsWith(Module(R"(
  k = f32[16] parameter(0)
  ROOT r = f32[16] sort(k), dimensions={1}, to_apply=ge)"),
                        "dimension 1 is out of range for rank 1"));
}

// ---------------------------------------------------------------------------
// map and scan

TEST(ReductionMapShape, ElementTypeComesFromTheComputation) {
  EXPECT_EQ(InferRoot(Module(R"(
  a = f32[4,<=3] parameter(0)
  b = f32[4,<=3] parameter(1)
  ROOT r = pred[4,<=3] map(a, b), dimensions={0,1}, to_apply=ge)")),
            "pred[4,<=3]");
}

TEST(ReductionMapShape, ComputationMustTakeOneScalarPerOperand) {
  EXPECT_TRUE(FailsWith(Module(R"(
  a = f32[4] parameter(0)
  ROOT r = f32[4] map(a), dimensions={0}, to_apply=add)"),
                        "computation 'add' takes 2 parameters but needs 1"));
  EXPECT_TRUE(FailsWith(Module(R"(
  a = s32[4] parameter(0)
  b = s32[4] parameter(1)
  ROOT r = f32[4] map(a, b), dimensions={0}, to_apply=add)"),
                        "computation 'add' parameter 0 is f32[] but must be a s32 scalar"));
  EXPECT_TRUE(FailsWith(Module(R"(
  a = f32[4,4] parameter(0)
  b = f32[4,4] parameter(1)
  ROOT r = f32[4,4] map(a, b), dimensions={1}, to_apply=add)"),
                        "dimensions {1} must list every operand dimension in order"));
}

TEST(ReductionScanShape, StacksOutputsAndReturnsCarries) {
  EXPECT_EQ(InferRoot(Module(R"(
  x = f32[10] parameter(0)
  z = f32[] constant(0)
  ROOT r = (f32[10], f32[]) scan(x, z), dimensions={0}, num_carries=1, is_reverse=true, to_apply=running_sum)")),
            "(f32[10], f32[])");
}

TEST(ReductionScanShape, DimensionAndBodyMustFit) {
  EXPECT_TRUE(FailsWith(Module(R"(
  x = f32[10] parameter(0)
  z = f32[] constant(0)
  ROOT r = (f32[10], f32[]) scan(x, z), dimensions={1}, num_carries=1, to_apply=running_sum)"),
                        "dimension 1 is out of range for rank 1"));
  EXPECT_TRUE(FailsWith(Module(R"(
  x = f32[10] parameter(0)
  y = f32[10] parameter(1)
  z = f32[] constant(0)
  ROOT r = (f32[10], f32[10], f32[]) scan(x, y, z), dimensions={0}, num_carries=1, to_apply=running_sum)"),
                        "computation 'running_sum' takes 2 parameters but needs 3"));
}

TEST(ReductionShape, OtherOpcodesAreLeftToOtherFamilies) {
  auto module = ParseHloModule(Module(R"(
  a = f32[2] parameter(0)
  ROOT n = f32[2] negate(a))"));
  ASSERT_TRUE(module.ok()) << module.status();
  const HloInstruction& root = *(*module)->entry_computation()->root_instruction();
  EXPECT_TRUE(absl::IsNotFound(shape_inference::InferReductionShape(root).status()));
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
