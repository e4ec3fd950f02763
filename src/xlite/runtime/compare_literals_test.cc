#include "xlite/runtime/compare_literals.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace xlite::runtime {
namespace {
namespace XLITE_UNITY_ID {

Literal Vector(PrimitiveType t, std::vector<double> v) {
  Literal l(Shape::Array(t, {static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) l.SetDouble(i, v[i]);
  return l;
}

TEST(CompareLiterals, IntegersAreBitwise) {
  Literal a(Shape::Array(PrimitiveType::S32, {3})), b(Shape::Array(PrimitiveType::S32, {3}));
  for (int i = 0; i < 3; ++i) a.SetInt(i, i), b.SetInt(i, i);
  EXPECT_TRUE(CompareLiterals(a, b).matches);
  b.SetInt(2, 3);
  Comparison c = CompareLiterals(a, b);
  EXPECT_FALSE(c.matches);
  EXPECT_TRUE(absl::StrContains(c.ToString(), "at element 2")) << c.ToString();
}

TEST(CompareLiterals, FloatsWithinTheReadmeTolerance) {
  EXPECT_TRUE(CompareLiterals(Vector(PrimitiveType::F32, {1.001, 100}),
                              Vector(PrimitiveType::F32, {1.0, 100}))
                  .matches);  // 1e-3 relative
  EXPECT_TRUE(CompareLiterals(Vector(PrimitiveType::F32, {0.05, 100}),
                              Vector(PrimitiveType::F32, {0.0, 100}))
                  .matches);  // 1e-3 of the largest
  EXPECT_FALSE(
      CompareLiterals(Vector(PrimitiveType::F32, {1.01, 1}), Vector(PrimitiveType::F32, {1.0, 1}))
          .matches);
  const double nan = std::nan("");
  EXPECT_TRUE(CompareLiterals(Vector(PrimitiveType::F32, {nan}), Vector(PrimitiveType::F32, {nan}))
                  .matches);
  EXPECT_FALSE(
      CompareLiterals(Vector(PrimitiveType::F32, {1}), Vector(PrimitiveType::F32, {nan})).matches);
}

TEST(CompareLiterals, OneUlpOfBf16AndFlushedDenormals) {
  // 34.25 and 34.5 are neighbours in bf16.
  EXPECT_TRUE(CompareLiterals(Vector(PrimitiveType::BF16, {34.25, 0}),
                              Vector(PrimitiveType::BF16, {34.5, 0}))
                  .matches);
  Tolerance strict;
  strict.one_ulp_of_narrow_types = false;
  EXPECT_FALSE(CompareLiterals(Vector(PrimitiveType::BF16, {34.25, 0}),
                               Vector(PrimitiveType::BF16, {34.5, 0}), strict)
                   .matches);
  EXPECT_TRUE(
      CompareLiterals(Vector(PrimitiveType::F32, {0}), Vector(PrimitiveType::F32, {1.1e-38}))
          .matches);
  strict.denormals_flushed = false;
  EXPECT_FALSE(CompareLiterals(Vector(PrimitiveType::F32, {0}),
                               Vector(PrimitiveType::F32, {1.1e-38}), strict)
                   .matches);
}

TEST(CompareLiterals, TuplesLeafByLeaf) {
  std::vector<Literal> a, b;
  a.push_back(Vector(PrimitiveType::F32, {1}));
  a.push_back(Vector(PrimitiveType::F32, {2}));
  b.push_back(Vector(PrimitiveType::F32, {1}));
  b.push_back(Vector(PrimitiveType::F32, {3}));
  Comparison c = CompareLiterals(Literal::Tuple(std::move(a)), Literal::Tuple(std::move(b)));
  EXPECT_FALSE(c.matches);
  ASSERT_EQ(c.leaves.size(), 2u);
  EXPECT_TRUE(c.leaves[0].matches);
  EXPECT_FALSE(c.leaves[1].matches);
}

TEST(CompareLiterals, DynamicDimensionsAtTheirBounds) {
  Shape bounded = Shape::Array(PrimitiveType::S32, {3});
  bounded.set_dynamic_dimension(0, true);  // s32[<=3]
  Literal a(bounded), b(Shape::Array(PrimitiveType::S32, {3}));
  for (int i = 0; i < 3; ++i) a.SetInt(i, i), b.SetInt(i, i);
  EXPECT_TRUE(CompareLiterals(a, b).matches);
  b.SetInt(2, 7);  // the padding is compared too
  EXPECT_FALSE(CompareLiterals(a, b).matches);
  Comparison other = CompareLiterals(a, Literal(Shape::Array(PrimitiveType::S32, {4})));
  EXPECT_FALSE(other.matches);
  EXPECT_TRUE(absl::StrContains(other.ToString(), "shape s32[<=3] vs s32[4]")) << other.ToString();
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::runtime
