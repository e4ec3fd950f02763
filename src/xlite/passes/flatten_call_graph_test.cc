#include "xlite/passes/flatten_call_graph.h"

#include <string>

#include "gtest/gtest.h"
#include "xlite/passes/pass_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

std::string Flatten(const std::string& text, bool* changed) {
  return pass_test::RunPass<FlattenCallGraph>(text, changed, false, PrintOptions::Short());
}

TEST(FlattenCallGraph, WhileWithTheSameConditionAndBodyComputationTwice) {
  bool changed = false;
  const std::string out = Flatten(R"(
HloModule m
loop_body {
  p = s32[] parameter(0)
  ROOT n = s32[] negate(p)
}
cond {
  p = s32[] parameter(0)
  z = s32[] constant(0)
  ROOT lt = pred[] compare(p, z), direction=LT
}
ENTRY e {
  a = s32[] parameter(0)
  w1 = s32[] while(a), condition=cond, body=loop_body
  ROOT w2 = s32[] while(w1), condition=cond, body=loop_body
})",
                                  &changed);
  EXPECT_TRUE(changed);
  EXPECT_NE(out.find("w1 = s32[] while(a), condition=cond, body=loop_body"), std::string::npos)
      << out;
  EXPECT_NE(out.find("w2 = s32[] while(w1), condition=cond.clone, body=loop_body.clone"),
            std::string::npos)
      << out;
}

TEST(FlattenCallGraph, NestedCallsCloneTransitively) {
  bool changed = false;
  const std::string out = Flatten(R"(
HloModule m
inner {
  p = f32[] parameter(0)
  ROOT n = f32[] negate(p)
}
outer {
  p = f32[] parameter(0)
  ROOT c = f32[] call(p), to_apply=inner
}
ENTRY e {
  a = f32[] parameter(0)
  c1 = f32[] call(a), to_apply=outer
  ROOT c2 = f32[] call(c1), to_apply=outer
})",
                                  &changed);
  EXPECT_TRUE(changed);
  // outer.clone calls its own copy of inner.
  EXPECT_NE(out.find("outer.clone {"), std::string::npos) << out;
  EXPECT_NE(out.find("inner.clone {"), std::string::npos) << out;
  EXPECT_NE(out.find("to_apply=inner.clone"), std::string::npos) << out;
  EXPECT_NE(out.find("c2 = f32[] call(c1), to_apply=outer.clone"), std::string::npos) << out;
}

TEST(FlattenCallGraph, AlreadyFlatIsUnchanged) {
  bool changed = true;
  Flatten(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  r1 = f32[] reduce(p, z), dimensions={0}, to_apply=add
  ROOT r2 = f32[] reduce(p, z), dimensions={0}, to_apply=add
})",
          &changed);
  EXPECT_FALSE(changed);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
