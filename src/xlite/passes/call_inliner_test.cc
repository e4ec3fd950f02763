#include "xlite/passes/call_inliner.h"

#include <string>

#include "gtest/gtest.h"
#include "xlite/passes/pass_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

std::string RunInliner(const std::string& text, bool* changed) {
  return pass_test::RunPass<CallInliner>(text, changed);
}

TEST(CallInliner, InlinesCalleeBodyAndDceRemovesCallee) {
  bool changed = false;
  const std::string out = RunInliner(R"(
HloModule m
callee {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  s = f32[4] add(x, y)
  ROOT n = f32[4] negate(s)
}
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  c = f32[4] call(a, b), to_apply=callee
  ROOT r = f32[4] exponential(c)
})",
                                     &changed);
  EXPECT_TRUE(changed);
  EXPECT_EQ(out.find("call("), std::string::npos) << out;
  EXPECT_EQ(out.find("callee"), std::string::npos) << out;
  EXPECT_NE(out.find("%s.1 = f32[4]{0} add(f32[4]{0} %a, f32[4]{0} %b)"), std::string::npos) << out;
  EXPECT_NE(out.find("%n.1 = f32[4]{0} negate(f32[4]{0} %s.1)"), std::string::npos) << out;
  EXPECT_NE(out.find("ROOT %r = f32[4]{0} exponential(f32[4]{0} %n.1)"), std::string::npos) << out;
}

TEST(CallInliner, NestedCallsAndTwoCallSitesGetUniqueNames) {
  bool changed = false;
  const std::string out = RunInliner(R"(
HloModule m
inner {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
outer {
  y = f32[] parameter(0)
  ROOT c = f32[] call(y), to_apply=inner
}
ENTRY e {
  a = f32[] parameter(0)
  c1 = f32[] call(a), to_apply=outer
  c2 = f32[] call(c1), to_apply=outer
  ROOT r = f32[] add(c1, c2)
})",
                                     &changed);
  EXPECT_TRUE(changed);
  EXPECT_EQ(out.find("call("), std::string::npos) << out;
  EXPECT_EQ(out.find("inner"), std::string::npos) << out;
  EXPECT_EQ(out.find("outer"), std::string::npos) << out;
  EXPECT_NE(out.find("%n.2 = f32[] negate(f32[] %a)"), std::string::npos) << out;
  EXPECT_NE(out.find("%n.3 = f32[] negate(f32[] %n.2)"), std::string::npos) << out;
  EXPECT_NE(out.find("ROOT %r = f32[] add(f32[] %n.2, f32[] %n.3)"), std::string::npos) << out;
}

TEST(CallInliner, KeepsCalledComputationsAndControlDependencies) {
  bool changed = false;
  const std::string out = RunInliner(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
callee {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  red = f32[] reduce(x, z), dimensions={0}, to_apply=add
  ROOT k = f32[] negate(red), control-predecessors={z}
}
ENTRY e {
  p = f32[4] parameter(0)
  first = f32[4] exponential(p)
  c = f32[] call(p), to_apply=callee, control-predecessors={first}
  ROOT r = f32[] sqrt(c)
})",
                                     &changed);
  EXPECT_TRUE(changed);
  EXPECT_NE(out.find("to_apply=%add"), std::string::npos) << out;
  EXPECT_NE(
      out.find("%red.1 = f32[] reduce(f32[4]{0} %p, f32[] %z.1), dimensions={0}, to_apply=%add, "
               "control-predecessors={%first}"),
      std::string::npos)
      << out;
  EXPECT_NE(out.find("%k.1 = f32[] negate(f32[] %red.1), control-predecessors={%z.1, %first}"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("callee"), std::string::npos) << out;
}

TEST(CallInliner, ReturnsParameterDirectly) {
  bool changed = false;
  const std::string out = RunInliner(R"(
HloModule m
id {
  x = f32[2] parameter(0)
  ROOT x2 = f32[2] copy(x)
}
pass {
  y = f32[2] parameter(0)
  ROOT y2 = f32[2] parameter(1)
}
ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  c = f32[2] call(a, b), to_apply=pass
  ROOT r = f32[2] negate(c)
})",
                                     &changed);
  EXPECT_TRUE(changed);
  EXPECT_NE(out.find("ROOT %r = f32[2]{0} negate(f32[2]{0} %b)"), std::string::npos) << out;
}

TEST(CallInliner, NoCallsNoChange) {
  bool changed = true;
  const std::string out = RunInliner(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add
})",
                                     &changed);
  EXPECT_FALSE(changed);
  EXPECT_NE(out.find("to_apply=%add"), std::string::npos) << out;
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
