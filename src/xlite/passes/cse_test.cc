#include "xlite/passes/cse.h"

#include <string>

#include "gtest/gtest.h"
#include "xlite/passes/pass_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

std::string RunCse(const std::string& text, bool* changed) {
  return pass_test::RunPass<HloCse>(text, changed, /*then_dce=*/false, PrintOptions::Short());
}

TEST(Cse, MergesEqualInstructionsConstantsAndCommutedOperands) {
  bool changed = false;
  const std::string out = RunCse(R"(
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  q = f32[2] parameter(1)
  c1 = f32[] constant(2)
  c2 = f32[] constant(2)
  a1 = f32[2] add(p, q)
  a2 = f32[2] add(q, p)
  s1 = f32[2] subtract(p, q)
  s2 = f32[2] subtract(q, p)
  b1 = f32[2] broadcast(c1), dimensions={}
  b2 = f32[2] broadcast(c2), dimensions={}
  m1 = f32[2] multiply(a1, b1)
  m2 = f32[2] multiply(a2, b2)
  ROOT t = (f32[2], f32[2], f32[2], f32[2]) tuple(m1, m2, s1, s2)
})",
                                 &changed);
  EXPECT_TRUE(changed);
  EXPECT_NE(out.find("tuple(m1, m1, s1, s2)"), std::string::npos) << out;
  EXPECT_EQ(out.find("c2 ="), std::string::npos) << out;
  EXPECT_EQ(out.find("a2 ="), std::string::npos) << out;
  EXPECT_NE(out.find("s2 ="), std::string::npos) << out;  // subtract does not commute
}

TEST(Cse, KeepsSideEffectsAndDifferentAttributes) {
  bool changed = true;
  const std::string kept = RunCse(R"(
HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  t1 = f32[3,2] transpose(p), dimensions={1,0}
  s1 = f32[2,1] slice(p), slice={[0:2], [0:1]}
  s2 = f32[2,1] slice(p), slice={[0:2], [1:2]}
  c1 = () custom-call(p), custom_call_target="log", custom_call_has_side_effect=true
  c2 = () custom-call(p), custom_call_target="log", custom_call_has_side_effect=true
  ROOT t = (f32[3,2]) tuple(t1)
})",
                                  &changed);
  EXPECT_FALSE(changed);
  EXPECT_NE(kept.find("c1 ="), std::string::npos);
  EXPECT_NE(kept.find("c2 ="), std::string::npos);
  EXPECT_NE(kept.find("s2 ="), std::string::npos);
}

// The shape jnp.searchsorted leaves after inlining: the same loop over cloned
// bodies, once per query. XLA's CSE compares called computations
// structurally, so the loops merge (20 into 1 in jax issue 33666's module).
constexpr char kTwoLoops[] = R"(
HloModule m
body_a {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  n = s32[] add(i, one)
  v = f32[4] get-tuple-element(p), index=1
  ROOT t = (s32[], f32[4]) tuple(n, v)
}
cond_a {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(8)
  ROOT lt = pred[] compare(i, k), direction=LT
}
body_b {
  q = (s32[], f32[4]) parameter(0)
  j = s32[] get-tuple-element(q), index=0
  c = s32[] constant(ONE)
  m = s32[] add(j, c), metadata={op_name="elsewhere"}
  w = f32[4] get-tuple-element(q), index=1
  ROOT u = (s32[], f32[4]) tuple(m, w)
}
cond_b {
  q = (s32[], f32[4]) parameter(0)
  j = s32[] get-tuple-element(q), index=0
  k = s32[] constant(8)
  ROOT lt = pred[] compare(j, k), direction=LT
}
ENTRY e {
  x = f32[4] parameter(0)
  z = s32[] constant(0)
  z2 = s32[] constant(0)
  t1 = (s32[], f32[4]) tuple(z, x)
  t2 = (s32[], f32[4]) tuple(z2, x)
  w1 = (s32[], f32[4]) while(t1), condition=cond_a, body=body_a
  w2 = (s32[], f32[4]) while(t2), condition=cond_b, body=body_b
  r1 = s32[] get-tuple-element(w1), index=0
  r2 = s32[] get-tuple-element(w2), index=0
  ROOT r = (s32[], s32[]) tuple(r1, r2)
})";

std::string TwoLoops(const std::string& one) {
  std::string text = kTwoLoops;
  text.replace(text.find("ONE"), 3, one);
  return text;
}

TEST(Cse, MergesLoopsWhoseBodiesAreStructurallyEqual) {
  bool changed = false;
  const std::string out =
      pass_test::RunPass<HloCse>(TwoLoops("1"), &changed, /*then_dce=*/true, PrintOptions::Short());
  EXPECT_TRUE(changed);
  EXPECT_NE(out.find("tuple(r1, r1)"), std::string::npos) << out;
  EXPECT_EQ(out.find("w2 ="), std::string::npos) << out;
  EXPECT_EQ(out.find("body_b"), std::string::npos) << out;  // dce removed the clone
}

TEST(Cse, KeepsLoopsWhoseBodiesDiffer) {
  bool changed = false;
  const std::string out =
      pass_test::RunPass<HloCse>(TwoLoops("2"), &changed, /*then_dce=*/true, PrintOptions::Short());
  EXPECT_TRUE(changed);  // z2 and t2 still merge
  EXPECT_NE(out.find("w2 = (s32[], f32[4]{0}) while(t1)"), std::string::npos) << out;
  EXPECT_NE(out.find("tuple(r1, r2)"), std::string::npos) << out;
}

TEST(Cse, IgnoresMetadataButNotBackendConfigOrElidedValues) {
  bool changed = false;
  const std::string out = RunCse(R"(
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  a1 = f32[2] negate(p), metadata={op_name="x"}
  a2 = f32[2] negate(p), metadata={op_name="y"}
  b1 = f32[2] abs(p), backend_config={"k":1}
  b2 = f32[2] abs(p), backend_config={"k":2}
  e1 = f32[20] constant({...})
  e2 = f32[20] constant({...})
  ROOT t = (f32[2], f32[2], f32[2], f32[2], f32[20], f32[20]) tuple(a1, a2, b1, b2, e1, e2)
})",
                                 &changed);
  EXPECT_TRUE(changed);
  EXPECT_NE(out.find("tuple(a1, a1, b1, b2, e1, e2)"), std::string::npos) << out;
}

TEST(Cse, MergesFusionsWithEqualBodies) {
  bool changed = false;
  const std::string out =
      pass_test::RunPass<HloCse>(R"(
HloModule m
f1 {
  a = f32[2] parameter(0)
  ROOT n = f32[2] negate(a)
}
f2 {
  b = f32[2] parameter(0)
  ROOT m = f32[2] negate(b)
}
ENTRY e {
  p = f32[2] parameter(0)
  x = f32[2] fusion(p), kind=kLoop, calls=f1
  y = f32[2] fusion(p), kind=kLoop, calls=f2
  ROOT t = (f32[2], f32[2]) tuple(x, y)
})",
                                 &changed, /*then_dce=*/true, PrintOptions::Short());
  EXPECT_TRUE(changed);
  EXPECT_NE(out.find("tuple(x, x)"), std::string::npos) << out;
  EXPECT_EQ(out.find("f2"), std::string::npos) << out;
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
