#include "xlite/passes/cse.h"

#include <string>

#include "gtest/gtest.h"
#include "xlite/passes/pass_test_util.h"

namespace xlite {
namespace {

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

}  // namespace
}  // namespace xlite
