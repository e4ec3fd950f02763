#include "xlite/passes/layout_normalization.h"

#include <string>

#include "gtest/gtest.h"
#include "xlite/passes/equivalence_test_util.h"
#include "xlite/passes/pass_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

std::string Normalize(const std::string& text, bool* changed = nullptr) {
  return pass_test::RunPass<LayoutNormalization>(text, changed, /*then_dce=*/false);
}

// adam_mlp_train_step's shape: a transpose written as a layout change ({0,1})
// and the elementwise ops after it, next to a row-major parameter; the result
// keeps the entry layout.
constexpr char kTransposedChain[] = R"(
HloModule m, entry_computation_layout={(f32[4,6]{1,0}, f32[6,4]{1,0})->f32[6,4]{1,0}}
ENTRY e {
  g = f32[4,6]{1,0} parameter(0)
  nu = f32[6,4]{1,0} parameter(1)
  t = f32[6,4]{0,1} transpose(g), dimensions={1,0}
  sq = f32[6,4]{0,1} multiply(t, t)
  ROOT r = f32[6,4]{1,0} add(sq, nu)
})";

TEST(LayoutNormalization, IntermediatesBecomeRowMajor) {
  bool changed = false;
  const std::string out = Normalize(kTransposedChain, &changed);
  EXPECT_TRUE(changed);
  EXPECT_NE(out.find("%t = f32[6,4]{1,0} transpose(f32[4,6]{1,0} %g), dimensions={1,0}"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("%sq = f32[6,4]{1,0} multiply("), std::string::npos) << out;
  EXPECT_EQ(pass_test::CheckPassKeepsResults<LayoutNormalization>(kTransposedChain), "");
}

// Parameters, roots, layout-sensitive instructions and the operands of such
// instructions keep their layouts.
TEST(LayoutNormalization, BindingLayoutsStay) {
  bool changed = true;
  const std::string out = Normalize(R"(
HloModule m, entry_computation_layout={(f32[4,6]{0,1})->(f32[6,4]{0,1}, f32[4,6]{0,1}, f32[24]{0})}
ENTRY e {
  p = f32[4,6]{0,1} parameter(0)
  n = f32[4,6]{0,1} negate(p)
  t = f32[6,4]{0,1} transpose(p), dimensions={1,0}
  b = f32[24]{0} bitcast(n)
  ROOT r = (f32[6,4]{0,1}, f32[4,6]{0,1}, f32[24]{0}) tuple(t, n, b)
})",
                                    &changed);
  EXPECT_FALSE(changed) << out;
}

// The root tuple's operands take the entry result's layouts (JAX writes the
// transposed layout there too; entry_computation_layout says row-major).
TEST(LayoutNormalization, RootTupleOperandsTakeTheEntryResultLayouts) {
  const std::string text = R"(
HloModule m, entry_computation_layout={(f32[4,6]{1,0}, f32[6,4]{1,0})->(f32[6,4]{1,0}, f32[4,6]{1,0})}
ENTRY e {
  g = f32[4,6]{1,0} parameter(0)
  nu = f32[6,4]{1,0} parameter(1)
  t = f32[6,4]{0,1} transpose(g), dimensions={1,0}
  a = f32[6,4]{0,1} add(t, nu)
  ROOT r = (f32[6,4]{0,1}, f32[4,6]{1,0}) tuple(a, g)
})";
  const std::string out = Normalize(text);
  EXPECT_NE(out.find("%a = f32[6,4]{1,0} add("), std::string::npos) << out;
  EXPECT_NE(out.find("ROOT %r = (f32[6,4]{1,0}, f32[4,6]{1,0}) tuple("), std::string::npos) << out;
  EXPECT_EQ(pass_test::CheckPassKeepsResults<LayoutNormalization>(text), "");
}

// A root tuple that others read keeps its element layouts (a
// get-tuple-element of it would read the old one).
TEST(LayoutNormalization, ARootTupleWithUsersStays) {
  bool changed = true;
  const std::string out = Normalize(R"(
HloModule m, entry_computation_layout={(f32[2,3]{1,0})->(f32[2,3]{1,0})}
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  a = f32[2,3]{0,1} add(p, p)
  ROOT t = (f32[2,3]{0,1}) tuple(a)
  g = f32[2,3]{0,1} get-tuple-element(t), index=0
  tok = token[] after-all()
  o = token[] outfeed(g, tok)
})",
                                    &changed);
  EXPECT_FALSE(changed) << out;
}

// A parameter's tiled layout gives way where entry_computation_layout gives
// it none (the multihost runner's dynamic_shaped_arguments.hlo, a TPU dump);
// a tiling the entry layout itself asks for stays (and the backend refuses it).
TEST(LayoutNormalization, ParametersDropTilingsTheEntryLayoutDoesNotAskFor) {
  const std::string text = R"(
HloModule m, entry_computation_layout={(f32[4096], f32[2048]{0:T(1024)})->f32[4096]{0}}
ENTRY e {
  p = f32[4096]{0:T(1024)} parameter(0)
  q = f32[2048]{0:T(1024)} parameter(1)
  ROOT r = f32[4096]{0} reshape(p)
})";
  bool changed = false;
  const std::string out = Normalize(text, &changed);
  EXPECT_TRUE(changed);
  EXPECT_NE(out.find("%p = f32[4096]{0} parameter(0)"), std::string::npos) << out;
  EXPECT_NE(out.find("%q = f32[2048]{0:T(1024)} parameter(1)"), std::string::npos) << out;
}

TEST(LayoutNormalization, ScheduledModulesStay) {
  std::string text = kTransposedChain;
  text.replace(text.find("HloModule m,"), 12, "HloModule m, is_scheduled=true,");
  bool changed = true;
  Normalize(text, &changed);
  EXPECT_FALSE(changed);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
