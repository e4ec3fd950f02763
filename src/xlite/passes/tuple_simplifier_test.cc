#include "xlite/passes/tuple_simplifier.h"

#include <string>

#include "gtest/gtest.h"
#include "xlite/passes/pass_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

// Runs tuple-simplifier then dce, verifying after each; returns the printed
// module and whether tuple-simplifier changed it.
std::string RunTupleSimplifier(const std::string& text, bool* changed) {
  return pass_test::RunPass<TupleSimplifier>(text, changed);
}

TEST(TupleSimplifier, GteOfTupleIsTheElement) {
  bool changed = false;
  const std::string out = RunTupleSimplifier(R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = s32[] parameter(1)
  t = (f32[4], s32[]) tuple(a, b)
  g = s32[] get-tuple-element(t), index=1
  ROOT r = s32[] negate(g)
})",
                                             &changed);
  EXPECT_TRUE(changed);
  EXPECT_NE(out.find("ROOT %r = s32[] negate(s32[] %b)"), std::string::npos) << out;
  EXPECT_EQ(out.find("get-tuple-element"), std::string::npos) << out;
  EXPECT_EQ(out.find("tuple("), std::string::npos) << out;
}

TEST(TupleSimplifier, TupleOfAllGtesIsTheSource) {
  bool changed = false;
  const std::string out = RunTupleSimplifier(R"(
HloModule m
ENTRY e {
  p = (f32[4], s32[]) parameter(0)
  g0 = f32[4] get-tuple-element(p), index=0
  g1 = s32[] get-tuple-element(p), index=1
  ROOT t = (f32[4], s32[]) tuple(g0, g1)
})",
                                             &changed);
  EXPECT_TRUE(changed);
  EXPECT_NE(out.find("ROOT %p = (f32[4]{0}, s32[]) parameter(0)"), std::string::npos) << out;
  EXPECT_EQ(out.find("get-tuple-element"), std::string::npos) << out;
}

TEST(TupleSimplifier, NestedGteChainsFold) {
  bool changed = false;
  const std::string out = RunTupleSimplifier(R"(
HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  inner = (f32[2], f32[2]) tuple(a, b)
  outer = ((f32[2], f32[2]), f32[2]) tuple(inner, a)
  g = (f32[2], f32[2]) get-tuple-element(outer), index=0
  ROOT h = f32[2] get-tuple-element(g), index=1
})",
                                             &changed);
  EXPECT_TRUE(changed);
  EXPECT_NE(out.find("ROOT %b = f32[2]{0} parameter(1)"), std::string::npos) << out;
}

TEST(TupleSimplifier, LeavesPartialOrReorderedTuplesAlone) {
  bool changed = true;
  const std::string text = R"(
HloModule m
ENTRY e {
  p = (f32[4], f32[4], f32[4]) parameter(0)
  g0 = f32[4] get-tuple-element(p), index=0
  g1 = f32[4] get-tuple-element(p), index=1
  g2 = f32[4] get-tuple-element(p), index=2
  swapped = (f32[4], f32[4], f32[4]) tuple(g1, g0, g2)
  prefix = (f32[4], f32[4]) tuple(g0, g1)
  ROOT r = ((f32[4], f32[4], f32[4]), (f32[4], f32[4])) tuple(swapped, prefix)
})";
  const std::string out = RunTupleSimplifier(text, &changed);
  EXPECT_FALSE(changed);
  EXPECT_NE(out.find("tuple(f32[4]{0} %g1, f32[4]{0} %g0, f32[4]{0} %g2)"), std::string::npos)
      << out;
  EXPECT_NE(out.find("tuple(f32[4]{0} %g0, f32[4]{0} %g1)"), std::string::npos) << out;
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
