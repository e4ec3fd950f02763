#include "xlite/cpu/unfuse.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "xlite/cpu/cpu_test_util.h"
#include "xlite/text/printer.h"
#include "xlite/verify/verifier.h"

namespace xlite::cpu {
namespace {
namespace XLITE_UNITY_ID {

constexpr char kCustomFusion[] = R"(
HloModule m, is_scheduled=true
gemm {
  a = f32[8,16] parameter(0)
  b = f32[16,4] parameter(1)
  d = f32[8,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = f32[8,4] tanh(d)
}
loop {
  x = f32[8,4] parameter(0)
  ROOT n = f32[8,4] negate(x)
}
ENTRY e {
  p = f32[8,16] parameter(0)
  q = f32[16,4] parameter(1)
  g = f32[8,4] fusion(p, q), kind=kCustom, calls=gemm
  ROOT l = f32[8,4] fusion(g), kind=kLoop, calls=loop
})";

TEST(Unfuse, CustomFusionsBecomeTheirBodiesInPlace) {
  auto m = testing::ParseOrDie(kCustomFusion);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<bool> changed = Unfuse().Run(*m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_TRUE(VerifyModule(*m).ok()) << VerifyModule(*m);
  const std::string text = PrintModule(*m);
  EXPECT_FALSE(absl::StrContains(text, "kind=kCustom")) << text;
  EXPECT_TRUE(absl::StrContains(text, "kind=kLoop")) << text;  // kept: one kernel
  EXPECT_FALSE(absl::StrContains(text, "gemm {")) << text;     // the body went
  EXPECT_FALSE(*Unfuse().Run(*m));
}

TEST(Unfuse, UnfusedModulesRunCompiled) { testing::ExpectAgreesWithInterpreter(kCustomFusion); }

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::cpu
