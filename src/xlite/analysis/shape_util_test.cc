#include "xlite/analysis/shape_util.h"

#include <vector>

#include "gtest/gtest.h"
#include "xlite/text/parser.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

int64_t Bytes(const char* shape) {
  absl::StatusOr<Shape> s = ParseShape(shape);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? ShapeSizeBytes(*s) : -1;
}

TEST(ShapeSizeBytes, FollowsTheCpuBackendsRule) {
  EXPECT_EQ(Bytes("f32[2,3]"), 24);
  EXPECT_EQ(Bytes("bf16[10]"), 20);
  EXPECT_EQ(Bytes("pred[7]"), 7);
  EXPECT_EQ(Bytes("c128[2]"), 32);
  EXPECT_EQ(Bytes("f32[]"), 4);
  EXPECT_EQ(Bytes("f32[0,5]"), 0);
  // Sub-byte types take a byte each unless the layout packs them.
  EXPECT_EQ(Bytes("s4[5]"), 5);
  EXPECT_EQ(Bytes("s4[5]{0:E(4)}"), 3);
  // A tuple is its pointer table; its elements are values of their own.
  EXPECT_EQ(Bytes("(f32[1000], s32[], (f32[2]))"), 24);
  EXPECT_EQ(Bytes("()"), 0);
  EXPECT_EQ(Bytes("token[]"), 0);
  // Dynamic dimensions count at their bound, plus 4 bytes per dimension.
  EXPECT_EQ(Bytes("f32[<=4,2]"), 32 + 8);
}

TEST(ShapeUtil, WalksSubshapesParentsFirst) {
  absl::StatusOr<Shape> s = ParseShape("(f32[1], (s32[], pred[2]), token[])");
  ASSERT_TRUE(s.ok());
  std::vector<std::string> seen;
  ForEachSubshape(*s, [&](const Shape& sub, const ShapeIndex& index) {
    seen.push_back(ShapeIndexToString(index) + sub.ToString(false));
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"{}(f32[1], (s32[], pred[2]), token[])", "{0}f32[1]",
                                            "{1}(s32[], pred[2])", "{1,0}s32[]", "{1,1}pred[2]",
                                            "{2}token[]"}));
  EXPECT_EQ(SubshapeCount(*s), 6);
  EXPECT_FALSE(HasUnboundedDimension(*s));
  absl::StatusOr<Shape> unbounded = ParseShape("(f32[?,2])");
  ASSERT_TRUE(unbounded.ok());
  EXPECT_TRUE(HasUnboundedDimension(*unbounded));
  EXPECT_TRUE(IsEffectiveScalar(*ParseShape("f32[1,1]")));
  EXPECT_FALSE(IsEffectiveScalar(*ParseShape("f32[2]")));
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
