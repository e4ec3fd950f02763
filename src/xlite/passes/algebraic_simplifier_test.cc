#include "xlite/passes/algebraic_simplifier.h"

#include <string>

#include "gtest/gtest.h"
#include "xlite/passes/pass_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

// Runs algsimp then dce, verifying after each, and returns the printed module.
std::string Simplify(const std::string& text, bool* changed = nullptr) {
  return pass_test::RunPass<AlgebraicSimplifier>(text, changed);
}

// The entry's ROOT line (the entry is printed last).
std::string RootLine(const std::string& out) {
  size_t pos = out.rfind("ROOT ");
  if (pos == std::string::npos) return "";
  return out.substr(pos, out.find('\n', pos) - pos);
}

// Module with entry parameters `params` and body `body` (which sets ROOT r).
std::string Module(const std::string& body) { return "HloModule m\nENTRY e {\n" + body + "\n}\n"; }

void ExpectRoot(const std::string& body, const std::string& root_contains, bool expect_change) {
  bool changed = !expect_change;
  const std::string out = Simplify(Module(body), &changed);
  EXPECT_EQ(changed, expect_change) << out;
  EXPECT_NE(RootLine(out).find(root_contains), std::string::npos) << out;
}

// ------------------------------------------------------------ elementwise

TEST(AlgSimp, AddZeroIntegers) {
  ExpectRoot(R"(p = s32[4] parameter(0)
  z = s32[] constant(0)
  b = s32[4] broadcast(z), dimensions={}
  ROOT r = s32[4] add(b, p))",
             "%p = s32[4]{0} parameter(0)", true);
  ExpectRoot(R"(p = u8[2] parameter(0)
  z = u8[2] constant({0, 0})
  ROOT r = u8[2] add(p, z))",
             "%p = u8[2]{0} parameter(0)", true);
}

TEST(AlgSimp, AddZeroKeptForFloatsAndNonZero) {
  ExpectRoot(R"(p = f32[4] parameter(0)
  z = f32[] constant(0)
  b = f32[4] broadcast(z), dimensions={}
  ROOT r = f32[4] add(p, b))",
             "add(", false);
  ExpectRoot(R"(p = s32[2] parameter(0)
  z = s32[2] constant({0, 1})
  ROOT r = s32[2] add(p, z))",
             "add(", false);
}

TEST(AlgSimp, MultiplyOne) {
  ExpectRoot(R"(p = f32[4] parameter(0)
  o = f32[] constant(1)
  b = f32[4] broadcast(o), dimensions={}
  ROOT r = f32[4] multiply(b, p))",
             "%p = f32[4]{0} parameter(0)", true);
  ExpectRoot(R"(p = s64[] parameter(0)
  o = s64[] constant(1)
  ROOT r = s64[] multiply(p, o))",
             "%p = s64[] parameter(0)", true);
}

TEST(AlgSimp, MultiplyKeptForTwoComplexAndElided) {
  ExpectRoot(R"(p = f32[4] parameter(0)
  o = f32[] constant(2)
  b = f32[4] broadcast(o), dimensions={}
  ROOT r = f32[4] multiply(b, p))",
             "multiply(", false);
  ExpectRoot(R"(p = c64[] parameter(0)
  o = c64[] constant((1, 0))
  ROOT r = c64[] multiply(p, o))",
             "multiply(", false);
  ExpectRoot(R"(p = f32[2] parameter(0)
  o = f32[2] constant({...})
  ROOT r = f32[2] multiply(p, o))",
             "multiply(", false);
}

TEST(AlgSimp, SubtractSelfIntegers) {
  bool changed = false;
  const std::string out = Simplify(Module(R"(p = s32[3] parameter(0)
  ROOT r = s32[3] subtract(p, p))"),
                                   &changed);
  EXPECT_TRUE(changed);
  EXPECT_NE(RootLine(out).find("s32[3]{0} broadcast("), std::string::npos) << out;
  EXPECT_NE(out.find("s32[] constant(0)"), std::string::npos) << out;
  ExpectRoot(R"(p = s32[] parameter(0)
  ROOT r = s32[] subtract(p, p))",
             "s32[] constant(0)", true);
}

TEST(AlgSimp, SubtractKeptForFloatsAndDifferentOperands) {
  ExpectRoot(R"(p = f32[3] parameter(0)
  ROOT r = f32[3] subtract(p, p))",
             "subtract(", false);
  ExpectRoot(R"(p = s32[3] parameter(0)
  q = s32[3] parameter(1)
  ROOT r = s32[3] subtract(p, q))",
             "subtract(", false);
}

TEST(AlgSimp, DoubleNegateAndNot) {
  ExpectRoot(R"(p = f32[3] parameter(0)
  n = f32[3] negate(p)
  ROOT r = f32[3] negate(n))",
             "%p = f32[3]{0} parameter(0)", true);
  ExpectRoot(R"(p = pred[3] parameter(0)
  n = pred[3] not(p)
  ROOT r = pred[3] not(n))",
             "%p = pred[3]{0} parameter(0)", true);
  ExpectRoot(R"(p = f32[3] parameter(0)
  n = f32[3] exponential(p)
  ROOT r = f32[3] negate(n))",
             "negate(", false);
}

TEST(AlgSimp, SelectOnConstantPredicate) {
  ExpectRoot(R"(a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  t = pred[] constant(true)
  c = pred[2] broadcast(t), dimensions={}
  ROOT r = f32[2] select(c, a, b))",
             "%a = f32[2]{0} parameter(0)", true);
  ExpectRoot(R"(a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  c = pred[2] constant({false, false})
  ROOT r = f32[2] select(c, a, b))",
             "%b = f32[2]{0} parameter(1)", true);
  ExpectRoot(R"(a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  c = pred[2] constant({true, false})
  ROOT r = f32[2] select(c, a, b))",
             "select(", false);
}

// ------------------------------------------------------------ shape ops

TEST(AlgSimp, NoOpConvertReshapeTransposeBroadcastCopy) {
  ExpectRoot("p = f32[2,3] parameter(0)\n  ROOT r = f32[2,3] convert(p)",
             "%p = f32[2,3]{1,0} parameter(0)", true);
  ExpectRoot("p = f32[2,3] parameter(0)\n  ROOT r = f32[2,3] reshape(p)",
             "%p = f32[2,3]{1,0} parameter(0)", true);
  ExpectRoot("p = f32[2,3] parameter(0)\n  ROOT r = f32[2,3] transpose(p), dimensions={0,1}",
             "%p = f32[2,3]{1,0} parameter(0)", true);
  ExpectRoot("p = f32[2,3] parameter(0)\n  ROOT r = f32[2,3] broadcast(p), dimensions={0,1}",
             "%p = f32[2,3]{1,0} parameter(0)", true);
  ExpectRoot("p = f32[2,3] parameter(0)\n  ROOT r = f32[2,3] copy(p)",
             "%p = f32[2,3]{1,0} parameter(0)", true);
}

TEST(AlgSimp, RealConvertReshapeTransposeBroadcastCopyKept) {
  ExpectRoot("p = f32[2,3] parameter(0)\n  ROOT r = bf16[2,3] convert(p)", "convert(", false);
  ExpectRoot("p = f32[2,3] parameter(0)\n  ROOT r = f32[3,2] reshape(p)", "reshape(", false);
  ExpectRoot("p = f32[2,3] parameter(0)\n  ROOT r = f32[3,2] transpose(p), dimensions={1,0}",
             "transpose(", false);
  ExpectRoot("p = f32[2] parameter(0)\n  ROOT r = f32[2,2] broadcast(p), dimensions={1}",
             "broadcast(", false);
  ExpectRoot("p = f32[2,3]{1,0} parameter(0)\n  ROOT r = f32[2,3]{0,1} copy(p)", "copy(", false);
}

TEST(AlgSimp, ReshapeOfReshape) {
  ExpectRoot(R"(p = f32[2,3] parameter(0)
  a = f32[6] reshape(p)
  ROOT r = f32[3,2] reshape(a))",
             "reshape(f32[2,3]{1,0} %p)", true);
  ExpectRoot(R"(p = f32[2,3] parameter(0)
  a = f32[6] reshape(p)
  ROOT r = f32[2,3] reshape(a))",
             "%p = f32[2,3]{1,0} parameter(0)", true);
}

TEST(AlgSimp, TransposeOfTranspose) {
  ExpectRoot(R"(p = f32[2,3,4] parameter(0)
  a = f32[3,4,2] transpose(p), dimensions={1,2,0}
  ROOT r = f32[4,3,2] transpose(a), dimensions={1,0,2})",
             "transpose(f32[2,3,4]{2,1,0} %p), dimensions={2,1,0}", true);
  ExpectRoot(R"(p = f32[2,3] parameter(0)
  a = f32[3,2] transpose(p), dimensions={1,0}
  ROOT r = f32[2,3] transpose(a), dimensions={1,0})",
             "%p = f32[2,3]{1,0} parameter(0)", true);
}

TEST(AlgSimp, BroadcastOfBroadcast) {
  ExpectRoot(R"(p = f32[3] parameter(0)
  a = f32[2,3] broadcast(p), dimensions={1}
  ROOT r = f32[2,4,3] broadcast(a), dimensions={0,2})",
             "broadcast(f32[3]{0} %p), dimensions={2}", true);
}

TEST(AlgSimp, SliceWholeAndSliceOfSlice) {
  ExpectRoot("p = f32[4,5] parameter(0)\n  ROOT r = f32[4,5] slice(p), slice={[0:4], [0:5]}",
             "%p = f32[4,5]{1,0} parameter(0)", true);
  ExpectRoot("p = f32[4,5] parameter(0)\n  ROOT r = f32[4,4] slice(p), slice={[0:4], [1:5]}",
             "slice(", false);
  // x[1:9:2] = 1,3,5,7; then [1:4:2] of that = 3,7 = x[3:8:4].
  ExpectRoot(R"(p = f32[10] parameter(0)
  a = f32[4] slice(p), slice={[1:9:2]}
  ROOT r = f32[2] slice(a), slice={[1:4:2]})",
             "slice(f32[10]{0} %p), slice={[3:8:4]}", true);
}

TEST(AlgSimp, ConcatenatePad) {
  ExpectRoot("p = f32[4] parameter(0)\n  ROOT r = f32[4] concatenate(p), dimensions={0}",
             "%p = f32[4]{0} parameter(0)", true);
  ExpectRoot(R"(p = f32[4] parameter(0)
  ROOT r = f32[8] concatenate(p, p), dimensions={0})",
             "concatenate(", false);
  ExpectRoot(R"(p = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] pad(p, z), padding=0_0)",
             "%p = f32[4]{0} parameter(0)", true);
  ExpectRoot(R"(p = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[5] pad(p, z), padding=0_1)",
             "pad(", false);
}

TEST(AlgSimp, DynamicSliceWithConstantIndicesClamps) {
  ExpectRoot(R"(p = f32[8,6] parameter(0)
  i = s32[] constant(7)
  j = s32[] constant(-3)
  ROOT r = f32[2,4] dynamic-slice(p, i, j), dynamic_slice_sizes={2,4})",
             "slice(f32[8,6]{1,0} %p), slice={[6:8], [0:4]}", true);
  ExpectRoot(R"(p = f32[8,6] parameter(0)
  i = s32[] parameter(1)
  j = s32[] constant(1)
  ROOT r = f32[2,4] dynamic-slice(p, i, j), dynamic_slice_sizes={2,4})",
             "dynamic-slice(", false);
}

// ------------------------------------------------------------ dot

TEST(AlgSimp, DotOverEmptyContraction) {
  ExpectRoot(R"(a = f32[2,0] parameter(0)
  b = f32[0,3] parameter(1)
  ROOT r = f32[2,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})",
             "f32[2,3]{1,0} broadcast(", true);
  ExpectRoot(R"(a = f32[2,4] parameter(0)
  b = f32[4,3] parameter(1)
  ROOT r = f32[2,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})",
             "dot(", false);
}

// ------------------------------------------------------------ structure

TEST(AlgSimp, KeepsCalledComputationRootShapesAndControlDeps) {
  bool changed = false;
  const std::string out = Simplify(R"(
HloModule m
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  z = s32[] constant(0)
  s = s32[] add(a, z)
  ROOT r = s32[] add(s, b)
}
ENTRY e {
  p = s32[4] parameter(0)
  z = s32[] constant(0)
  n = s32[4] negate(p)
  nn = s32[4] negate(n), control-predecessors={z}
  ROOT r = s32[] reduce(nn, z), dimensions={0}, to_apply=add
})",
                                   &changed);
  EXPECT_TRUE(changed);
  EXPECT_NE(out.find("ROOT %r = s32[] add(s32[] %a, s32[] %b)"), std::string::npos) << out;
  EXPECT_NE(out.find("negate(s32[4]{0} %n)"), std::string::npos) << out;
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
