#include "xlite/passes/transpose_folding.h"

#include <string>

#include "gtest/gtest.h"
#include "xlite/passes/equivalence_test_util.h"
#include "xlite/passes/pass_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

std::string Fold(const std::string& text, bool* changed = nullptr) {
  return pass_test::RunPass<TransposeFolding>(text, changed);
}

// A backward pass's weight gradient, transposed for the optimizer's update:
// transpose(dot(dy, x)) is dot(x, dy).
constexpr char kTransposedProduct[] = R"(
HloModule m
ENTRY e {
  dy = f32[32,10] parameter(0)
  x = f32[32,64] parameter(1)
  g = f32[10,64] dot(dy, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}, operand_precision={high,default}
  ROOT t = f32[64,10] transpose(g), dimensions={1,0}
})";

TEST(TransposeFolding, TransposedProductIsTheSwappedProduct) {
  bool changed = false;
  const std::string out = Fold(kTransposedProduct, &changed);
  EXPECT_TRUE(changed);
  EXPECT_NE(out.find("ROOT %g.transposed = f32[64,10]{1,0} dot(f32[32,64]{1,0} %x, "
                     "f32[32,10]{1,0} %dy), lhs_contracting_dims={0}, rhs_contracting_dims={0}, "
                     "operand_precision={default,high}"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("transpose("), std::string::npos) << out;
  EXPECT_EQ(pass_test::CheckPassKeepsResults<TransposeFolding>(kTransposedProduct), "");
}

// Batched: (batch, rhs free, lhs free) swaps; another permutation does not.
TEST(TransposeFolding, BatchedSwapAndOtherPermutations) {
  const std::string batched = R"(
HloModule m
ENTRY e {
  a = f32[2,3,5] parameter(0)
  b = f32[2,5,4] parameter(1)
  d = f32[2,3,4] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  ROOT t = f32[2,4,3] transpose(d), dimensions={0,2,1}
})";
  bool changed = false;
  EXPECT_EQ(Fold(batched, &changed).find("transpose("), std::string::npos);
  EXPECT_TRUE(changed);
  EXPECT_EQ(pass_test::CheckPassKeepsResults<TransposeFolding>(batched), "");
  std::string other = batched;
  other.replace(other.find("f32[2,4,3] transpose(d), dimensions={0,2,1}"), 43,
                "f32[3,2,4] transpose(d), dimensions={1,0,2}");
  changed = true;
  Fold(other, &changed);
  EXPECT_FALSE(changed);
}

// dot(transpose(x), y): the dimension numbers read x; a transpose that would
// reorder the free dimensions stays.
TEST(TransposeFolding, OperandTransposesFoldIntoDimensionNumbers) {
  const std::string text = R"(
HloModule m
ENTRY e {
  x = f32[64,32] parameter(0)
  y = f32[32,10] parameter(1)
  xt = f32[32,64] transpose(x), dimensions={1,0}
  ROOT d = f32[64,10] dot(xt, y), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})";
  bool changed = false;
  const std::string out = Fold(text, &changed);
  EXPECT_TRUE(changed);
  EXPECT_NE(out.find("ROOT %d = f32[64,10]{1,0} dot(f32[64,32]{1,0} %x, f32[32,10]{1,0} %y), "
                     "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
            std::string::npos)
      << out;
  EXPECT_EQ(pass_test::CheckPassKeepsResults<TransposeFolding>(text), "");
  const std::string reorder = R"(
HloModule m
ENTRY e {
  x = f32[3,4,5] parameter(0)
  y = f32[5,2] parameter(1)
  xt = f32[4,3,5] transpose(x), dimensions={1,0,2}
  ROOT d = f32[4,3,2] dot(xt, y), lhs_contracting_dims={2}, rhs_contracting_dims={0}
})";
  changed = true;
  Fold(reorder, &changed);
  EXPECT_FALSE(changed);
  EXPECT_EQ(pass_test::CheckPassKeepsResults<TransposeFolding>(reorder), "");
}

// A dot that is its computation's root stays (the swap would delete it).
TEST(TransposeFolding, RootDotStays) {
  bool changed = true;
  const std::string out = Fold(R"(
HloModule m
ENTRY e {
  a = f32[3,4] parameter(0)
  b = f32[4,5] parameter(1)
  tok = token[] after-all()
  ROOT d = f32[3,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[5,3] transpose(d), dimensions={1,0}
  o = token[] outfeed(t, tok)
})",
                               &changed);
  EXPECT_FALSE(changed) << out;
  EXPECT_NE(out.find("ROOT %d = "), std::string::npos) << out;
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
