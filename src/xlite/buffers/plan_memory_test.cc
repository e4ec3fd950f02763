#include "xlite/buffers/plan_memory.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "xlite/buffers/buffers_test_util.h"

namespace xlite {
namespace {

using buffers_test::Plan;
using buffers_test::Planned;
using Kind = DonationVerdict::Kind;

constexpr char kDonors[] = R"(
HloModule m, input_output_alias={ {0}: (0, {}, must-alias) }, buffer_donor={ (1, {}), (2, {}) }

ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  c = s32[3] parameter(2)
  d = f32[4] parameter(3)
  x = f32[4] negate(a)
  y = f32[4] add(b, d)
  late = f32[4] multiply(b, d)
  ROOT t = (f32[4], f32[4], f32[4]) tuple(x, y, late)
}
)";

TEST(PlanMemory, DonationVerdicts) {
  Planned p = Plan(kDonors);
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();
  const std::vector<DonationVerdict>& v = p.plan->donations;
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].kind, Kind::kInPlace);
  EXPECT_TRUE(v[0].must_alias);
  EXPECT_EQ(v[0].output_index, ShapeIndex({0}));
  EXPECT_TRUE(absl::StrContains(v[0].text, "aliased to output {0} (must-alias); updated in place"))
      << v[0].text;
  // b backs output {1} (y), but `late` still reads b and need not run
  // before y: copied first.
  EXPECT_EQ(v[1].kind, Kind::kCopied) << v[1].text;
  EXPECT_TRUE(v[1].from_buffer_donor);
  EXPECT_TRUE(absl::StrContains(v[1].text, "still read by late")) << v[1].text;
  EXPECT_EQ(v[2].kind, Kind::kDonatedUnused);
  EXPECT_TRUE(absl::StrContains(v[2].text, "no output has its shape and layout, s32[3]"))
      << v[2].text;
  EXPECT_EQ(v[3].kind, Kind::kNotDonated);
  ASSERT_EQ(p.plan->donor_pairs.size(), 2u);
  EXPECT_EQ(p.plan->donor_pairs[0].output_index, ShapeIndex({1}));
}

TEST(PlanMemory, StrictDonationRefusesAnUnusableDonation) {
  PlanOptions options;
  options.strict_donation = true;
  Planned p = Plan(kDonors, options);
  ASSERT_FALSE(p.plan.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(p.plan.status()));
  EXPECT_TRUE(absl::StrContains(p.plan.status().message(), "parameter 2 {}")) << p.plan.status();
}

TEST(PlanMemory, FlattensACallGraphFirst) {
  Planned p = Plan(R"(
HloModule m

f {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}

ENTRY e {
  x = f32[4] parameter(0)
  c1 = f32[4] call(x), to_apply=f
  ROOT c2 = f32[4] call(c1), to_apply=f
}
)");
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();
  EXPECT_TRUE(p.plan->flattened);
  EXPECT_EQ(p.plan->schedule.chosen.empty(), false);
}

TEST(PlanMemory, ReturnedParameterIsCopiedAndSaysSo) {
  Planned p = Plan(R"(
HloModule m

ENTRY e {
  a = f32[4] parameter(0)
  n = f32[4] negate(a)
  ROOT t = (f32[4], f32[4]) tuple(a, n)
}
)");
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();
  ASSERT_EQ(p.plan->donations.size(), 1u);
  EXPECT_TRUE(absl::StrContains(p.plan->donations[0].text, "returned as output {0} through copy"))
      << p.plan->donations[0].text;
}

TEST(PlanMemory, RefusesUnboundedDimensions) {
  Planned p = Plan(R"(
HloModule m

ENTRY e {
  a = f32[?] parameter(0)
  ROOT n = f32[?] negate(a)
}
)");
  EXPECT_TRUE(absl::IsUnimplemented(p.plan.status())) << p.plan.status();
}

}  // namespace
}  // namespace xlite
