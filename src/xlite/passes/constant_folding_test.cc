#include "xlite/passes/constant_folding.h"

#include <string>

#include "gtest/gtest.h"
#include "xlite/passes/pass_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

std::string Fold(const std::string& text, bool* changed) {
  return pass_test::RunPass<ConstantFolding>(text, changed, true, PrintOptions::Short());
}

TEST(ConstantFolding, TupleShapedWhileStays) {
  bool changed = false;
  const std::string out = Fold(R"(
HloModule m
cond {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = s32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  acc1 = s32[] add(acc, i)
  ROOT t = (s32[], s32[]) tuple(i1, acc1)
}
ENTRY e {
  zero = s32[] constant(0)
  init = (s32[], s32[]) tuple(zero, zero)
  w = (s32[], s32[]) while(init), condition=cond, body=body
  ROOT sum = s32[] get-tuple-element(w), index=1
})",
                               &changed);
  // The tuple result of the while is not an array, so the while stays; the
  // get-tuple-element of it does not see a constant operand either.
  EXPECT_FALSE(changed) << out;
}

TEST(ConstantFolding, ReduceOverConstantsAndCaps) {
  bool changed = false;
  std::string out = Fold(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  c = f32[4] constant({1, 2, 3, 4.5})
  z = f32[] constant(0)
  ROOT r = f32[] reduce(c, z), dimensions={0}, to_apply=add
})",
                         &changed);
  EXPECT_TRUE(changed);
  EXPECT_NE(out.find("ROOT r.folded = f32[] constant(10.5)"), std::string::npos) << out;

  // A result larger than the literals it comes from stays unless small.
  out = Fold(R"(
HloModule m
ENTRY e {
  i = s32[5000] iota(), iota_dimension=0
  one = s32[] constant(1)
  b = s32[5000] broadcast(one), dimensions={}
  ROOT r = s32[5000] add(i, b)
})",
             &changed);
  EXPECT_FALSE(changed) << out;
  out = Fold(R"(
HloModule m
ENTRY e {
  i = s32[50] iota(), iota_dimension=0
  one = s32[] constant(1)
  b = s32[50] broadcast(one), dimensions={}
  ROOT r = s32[50] add(i, b)
})",
             &changed);
  EXPECT_TRUE(changed) << out;
  EXPECT_NE(out.find("ROOT r.folded = s32[50]{0} constant({1, 2, 3,"), std::string::npos) << out;
}

TEST(ConstantFolding, DeviceDependentAndEffectfulStay) {
  bool changed = true;
  const std::string out = Fold(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  c = f32[2] constant({1, 2})
  ar = f32[2] all-reduce(c), replica_groups={}, to_apply=add
  cc = f32[2] custom-call(c), custom_call_target="foo"
  ROOT t = (f32[2], f32[2]) tuple(ar, cc)
})",
                               &changed);
  EXPECT_FALSE(changed) << out;
}

TEST(ConstantFolding, LayoutAndNameKept) {
  bool changed = false;
  const std::string out = Fold(R"(
HloModule m
ENTRY e {
  c = f32[2,2]{0,1} constant({{1, 2}, {3, 4}})
  ROOT n = f32[2,2]{0,1} negate(c)
})",
                               &changed);
  EXPECT_TRUE(changed);
  EXPECT_NE(out.find("ROOT n.folded = f32[2,2]{0,1} constant({ { -1, -2 }, { -3, -4 } })"),
            std::string::npos)
      << out;
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
