#include "xlite/passes/zero_sized_hlo_elimination.h"

#include <string>

#include "gtest/gtest.h"
#include "xlite/passes/pass_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

std::string RunZeroSized(const std::string& text, bool* changed) {
  return pass_test::RunPass<ZeroSizedHloElimination>(text, changed);
}

TEST(ZeroSizedHloElimination, ReplacesZeroElementArraysWithConstants) {
  bool changed = false;
  const std::string out = RunZeroSized(R"(
HloModule m
ENTRY e {
  p = f32[0,3] parameter(0)
  q = f32[4] parameter(1)
  n = f32[0,3] negate(p)
  s = f32[0] slice(q), slice={[0:0]}
  ns = f32[0] negate(s)
  nq = f32[4] negate(q)
  ROOT t = (f32[0,3], f32[0], f32[4]) tuple(n, ns, nq)
})",
                                       &changed);
  EXPECT_TRUE(changed);
  EXPECT_NE(out.find("%n.empty = f32[0,3]{1,0} constant({ })"), std::string::npos) << out;
  EXPECT_NE(out.find("%ns.empty = f32[0]{0} constant({})"), std::string::npos) << out;
  EXPECT_EQ(out.find("slice("), std::string::npos) << out;
  EXPECT_NE(out.find("%nq = f32[4]{0} negate(f32[4]{0} %q)"), std::string::npos) << out;
  EXPECT_NE(out.find("%p = f32[0,3]{1,0} parameter(0)"), std::string::npos) << out;
  EXPECT_NE(out.find("tuple(f32[0,3]{1,0} %n.empty, f32[0]{0} %ns.empty, f32[4]{0} %nq)"),
            std::string::npos)
      << out;
}

TEST(ZeroSizedHloElimination, KeepsSideEffectsAndFusionBodies) {
  bool changed = true;
  const std::string out = RunZeroSized(R"(
HloModule m
fused {
  x = f32[0] parameter(0)
  w = f32[3] parameter(1)
  y = f32[0] negate(x)
  v = f32[3] negate(w)
  ROOT o = (f32[0], f32[3]) tuple(y, v)
}
ENTRY e {
  p = f32[0] parameter(0)
  q = f32[3] parameter(1)
  c = f32[0] custom-call(p), custom_call_target="io", custom_call_has_side_effect=true
  f = (f32[0], f32[3]) fusion(c, q), kind=kLoop, calls=fused
  g = f32[0] get-tuple-element(f), index=0
  ROOT r = (f32[0], (f32[0], f32[3])) tuple(g, f)
})",
                                       &changed);
  // Only the caller's zero-sized gte is replaced; the fusion body and the side
  // effect (whose result is zero-sized too) stay.
  EXPECT_TRUE(changed);
  EXPECT_NE(out.find("%y = f32[0]{0} negate(f32[0]{0} %x)"), std::string::npos) << out;
  EXPECT_NE(out.find("custom_call_target=\"io\""), std::string::npos) << out;
  EXPECT_NE(out.find("%g.empty = f32[0]{0} constant({})"), std::string::npos) << out;
}

TEST(ZeroSizedHloElimination, NoZeroSizedValuesNoChange) {
  bool changed = true;
  const std::string out = RunZeroSized(R"(
HloModule m
ENTRY e {
  p = f32[0] parameter(0)
  c = f32[0] constant({})
  q = f32[3] parameter(1)
  n = f32[3] negate(q)
  ROOT t = (f32[0], f32[0], f32[3]) tuple(p, c, n)
})",
                                       &changed);
  EXPECT_FALSE(changed);
  EXPECT_NE(out.find("%n = f32[3]{0} negate(f32[3]{0} %q)"), std::string::npos) << out;
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
