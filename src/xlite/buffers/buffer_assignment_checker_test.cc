#include "xlite/buffers/buffer_assignment_checker.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "xlite/buffers/buffers_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

using buffers_test::Plan;
using buffers_test::Planned;

constexpr char kModule[] = R"(
HloModule m, is_scheduled=true

ENTRY e {
  x = f32[256] parameter(0)
  a = f32[256] negate(x)
  b = f32[128] slice(a), slice={[0:128]}
  c = f32[256] exponential(a)
  d = f32[128] slice(c), slice={[0:128]}
  e = f32[128] add(b, d)
  ROOT r = f32[4] slice(e), slice={[0:4]}
}
)";

TEST(BufferAssignmentChecker, CleanAssignmentAndItsBounds) {
  Planned p = Plan(kModule);
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();
  const AssignmentCheck& check = *p.plan->check;
  // a, b, c live together at c (1024 + 512 + 1024 bytes), with x (1024);
  // but c takes a's bytes there (exponential reads element i for element
  // i, and a dies at c), so the heap needs 2048 at most: b, c, d at d.
  EXPECT_EQ(check.temp_lower_bound_unaligned, 2048);
  EXPECT_EQ(check.temp_lower_bound_bytes, 2048);
  EXPECT_EQ(check.peak_live_bytes, 2560 + 1024);
  // Counting c from the time after it is made: x, b, c and d at d.
  EXPECT_EQ(check.lower_bound_bytes, 3072);
  EXPECT_GT(check.values_checked, 0);
  EXPECT_GE(check.buffers_checked, 7);
}

TEST(BufferAssignmentChecker, CatchesAPlantedOverlap) {
  Planned p = Plan(kModule);
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();
  BufferAssignment& a = *p.plan->assignment;
  // Move b onto a's bytes: both are live at once (b is a slice of a while
  // a is still read by c).
  const HloBuffer* a_buffer = a.alias_analysis().GetBufferAt(p["a"]);
  const HloBuffer* b_buffer = a.alias_analysis().GetBufferAt(p["b"]);
  ASSERT_NE(a_buffer, nullptr);
  ASSERT_NE(b_buffer, nullptr);
  ASSERT_EQ(p.Slice("a").allocation, p.Slice("b").allocation);
  a.MoveBufferForTesting(*b_buffer, p.Slice("a").offset);
  absl::StatusOr<AssignmentCheck> check = CheckBufferAssignment(a);
  ASSERT_FALSE(check.ok());
  EXPECT_TRUE(absl::StrContains(check.status().message(), "share bytes")) << check.status();
  EXPECT_TRUE(absl::StrContains(check.status().message(), "{a}")) << check.status();
  EXPECT_TRUE(absl::StrContains(check.status().message(), "{b}")) << check.status();
}

// Taking an operand's bytes where it dies is allowed only to a user that
// reads element i for element i: a reverse on its operand's bytes is caught.
TEST(BufferAssignmentChecker, CatchesAReverseOnItsOperandsBytes) {
  Planned p = Plan(R"(
HloModule m, is_scheduled=true

ENTRY e {
  x = f32[256] parameter(0)
  a = f32[256] negate(x)
  b = f32[256] reverse(a), dimensions={0}
  ROOT r = f32[4] slice(b), slice={[0:4]}
}
)");
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();
  BufferAssignment& a = *p.plan->assignment;
  ASSERT_NE(p.Slice("a").offset, p.Slice("b").offset);
  a.MoveBufferForTesting(*a.alias_analysis().GetBufferAt(p["b"]), p.Slice("a").offset);
  absl::StatusOr<AssignmentCheck> check = CheckBufferAssignment(a);
  ASSERT_FALSE(check.ok());
  EXPECT_TRUE(absl::StrContains(check.status().message(), "share bytes")) << check.status();
}

TEST(BufferAssignmentChecker, CatchesAMisalignedTemp) {
  Planned p = Plan(kModule);
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();
  BufferAssignment& a = *p.plan->assignment;
  const HloBuffer* e_buffer = a.alias_analysis().GetBufferAt(p["e"]);
  a.MoveBufferForTesting(*e_buffer, p.Slice("e").offset + 4);
  absl::StatusOr<AssignmentCheck> check = CheckBufferAssignment(a);
  ASSERT_FALSE(check.ok());
  EXPECT_TRUE(absl::StrContains(check.status().message(), "aligned")) << check.status();
}

TEST(BufferAssignmentChecker, CatchesASliceOutsideItsAllocation) {
  Planned p = Plan(kModule);
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();
  BufferAssignment& a = *p.plan->assignment;
  const HloBuffer* r_buffer = a.alias_analysis().GetBufferAt(p["r"]);
  a.MoveBufferForTesting(*r_buffer, 64);  // the output allocation has 512 bytes
  absl::StatusOr<AssignmentCheck> check = CheckBufferAssignment(a);
  ASSERT_FALSE(check.ok());
  EXPECT_TRUE(absl::StrContains(check.status().message(), "outside allocation")) << check.status();
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
