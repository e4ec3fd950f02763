#include "xlite/cpu/library_layouts.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "xlite/cpu/cpu_test_util.h"
#include "xlite/ir/computation.h"
#include "xlite/text/printer.h"
#include "xlite/verify/verifier.h"

namespace xlite::cpu {
namespace {
namespace XLITE_UNITY_ID {

TEST(LibraryLayouts, NonRowMajorDotOperandsAndResultsGetCopies) {
  auto m = testing::ParseOrDie(R"(
HloModule m, is_scheduled=true
ENTRY e {
  x = f32[8,4]{0,1} parameter(0)
  y = f32[4,2]{1,0} parameter(1)
  ROOT d = f32[8,2]{0,1} dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_NE(m, nullptr);
  LibraryLayouts pass;
  absl::StatusOr<bool> changed = pass.Run(*m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_TRUE(VerifyModule(*m).ok());
  const std::string text = PrintModule(*m);
  EXPECT_TRUE(absl::StrContains(text, "%x.relayout = f32[8,4]{1,0} copy(f32[8,4]{0,1} %x)"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "%d = f32[8,2]{1,0} dot(")) << text;
  EXPECT_TRUE(absl::StrContains(text, "ROOT %d.relayout = f32[8,2]{0,1} copy(f32[8,2]{1,0} %d)"))
      << text;
  // Scheduled order: the operand copy first, the result copy last.
  const auto& order = m->entry_computation()->instructions();
  EXPECT_EQ(order.back()->name(), "d.relayout");
  EXPECT_FALSE(*LibraryLayouts().Run(*m));  // idempotent
}

TEST(LibraryLayouts, CustomCallOperandsTakeTheirConstraints) {
  auto m = testing::ParseOrDie(R"(
HloModule m
ENTRY e {
  a = f32[3,3]{1,0} parameter(0)
  ROOT c = (f32[3,3]{0,1}, s32[]) custom-call(a), custom_call_target="lapack_spotrf_ffi", operand_layout_constraints={f32[3,3]{0,1}}, api_version=API_VERSION_TYPED_FFI, backend_config={uplo = 76 : ui8}
})");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<bool> changed = LibraryLayouts().Run(*m);
  ASSERT_TRUE(changed.ok() && *changed);
  const std::string text = PrintModule(*m);
  EXPECT_TRUE(absl::StrContains(text, "f32[3,3]{0,1} copy(f32[3,3]{1,0} %a)")) << text;
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::cpu
