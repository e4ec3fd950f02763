#include "xlite/passes/dce.h"

#include <string>

#include "gtest/gtest.h"
#include "xlite/passes/pass_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

// Runs dce (verifying after it, as every pass test does) and returns the
// printed module.
std::string RunDce(const std::string& text, bool* changed = nullptr) {
  return pass_test::RunPass<HloDce>(text, changed, /*then_dce=*/false);
}

TEST(Dce, RemovesUnusedChainsKeepsSideEffectsAndParameters) {
  bool changed = false;
  const std::string out = RunDce(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  unused = f32[4] parameter(1)
  dead1 = f32[4] negate(p)
  dead2 = f32[4] add(dead1, dead1)
  effect = () custom-call(p), custom_call_target="log", custom_call_has_side_effect=true
  ROOT r = f32[4] exponential(p)
})",
                                 &changed);
  EXPECT_TRUE(changed);
  EXPECT_EQ(out.find("dead1"), std::string::npos) << out;
  EXPECT_EQ(out.find("dead2"), std::string::npos) << out;
  EXPECT_NE(out.find("%unused = f32[4]{0} parameter(1)"), std::string::npos) << out;
  EXPECT_NE(out.find("custom_call_target=\"log\""), std::string::npos) << out;
  EXPECT_NE(out.find("ROOT %r = f32[4]{0} exponential"), std::string::npos) << out;
}

TEST(Dce, RemovesComputationsNothingCalls) {
  bool changed = false;
  const std::string out = RunDce(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
orphan {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add
})",
                                 &changed);
  EXPECT_TRUE(changed);
  EXPECT_EQ(out.find("orphan"), std::string::npos) << out;
  EXPECT_NE(out.find("to_apply=%add"), std::string::npos) << out;
}

TEST(Dce, NothingToRemoveReportsNoChange) {
  bool changed = true;
  RunDce(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT r = f32[4] negate(p)
})",
         &changed);
  EXPECT_FALSE(changed);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
