#include "xlite/buffers/donor_pairing.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "xlite/buffers/buffers_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

using buffers_test::Parse;

TEST(DonorPairing, EachOutputTakesTheFirstDonorOfItsShape) {
  std::unique_ptr<HloModule> m = Parse(R"(
HloModule m, buffer_donor={ (0, {}), (1, {}), (2, {}) }

ENTRY e {
  a = f32[4] parameter(0)
  b = f32[8] parameter(1)
  c = f32[4] parameter(2)
  x = f32[8] negate(b)
  y = f32[4] add(a, c)
  ROOT t = (f32[8], f32[4]) tuple(x, y)
}
)");
  ASSERT_NE(m, nullptr);
  std::vector<DonorPairing> pairs = PairBufferDonors(*m);
  ASSERT_EQ(pairs.size(), 3u);
  EXPECT_EQ(pairs[0].output_index, ShapeIndex({1}));  // a backs y
  EXPECT_EQ(pairs[1].output_index, ShapeIndex({0}));  // b backs x
  EXPECT_FALSE(pairs[2].output_index.has_value());    // c: every f32[4] output is taken
  EXPECT_TRUE(absl::StrContains(pairs[2].why_unused, "already backed")) << pairs[2].why_unused;
  // The chosen pairs became may-alias entries; the unused donor stays.
  const ModuleConfig& config = m->config();
  ASSERT_EQ(config.input_output_alias.size(), 2u);
  EXPECT_TRUE(config.input_output_alias_present);
  EXPECT_EQ(config.input_output_alias[0].kind, AliasKind::kMayAlias);
  ASSERT_EQ(config.buffer_donor.size(), 1u);
  EXPECT_EQ(config.buffer_donor[0].parameter_number, 2);
}

TEST(DonorPairing, ShapeAndLayoutMustMatch) {
  std::unique_ptr<HloModule> m = Parse(R"(
HloModule m, buffer_donor={ (0, {}), (1, {}) }

ENTRY e {
  a = f32[4,4]{0,1} parameter(0)
  b = s32[4] parameter(1)
  ROOT x = f32[4,4]{1,0} negate(a)
}
)");
  ASSERT_NE(m, nullptr);
  std::vector<DonorPairing> pairs = PairBufferDonors(*m);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_FALSE(pairs[0].output_index.has_value());  // another layout
  EXPECT_TRUE(absl::StrContains(pairs[0].why_unused, "no output has its shape and layout"))
      << pairs[0].why_unused;
  EXPECT_FALSE(pairs[1].output_index.has_value());
  EXPECT_TRUE(m->config().input_output_alias.empty());
}

TEST(DonorPairing, OutputsAlreadyAliasedAreSkipped) {
  std::unique_ptr<HloModule> m = Parse(R"(
HloModule m, input_output_alias={ {0}: (0, {}) }, buffer_donor={ (1, {}) }

ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  x = f32[4] negate(a)
  y = f32[4] negate(b)
  ROOT t = (f32[4], f32[4]) tuple(x, y)
}
)");
  ASSERT_NE(m, nullptr);
  std::vector<DonorPairing> pairs = PairBufferDonors(*m);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].output_index, ShapeIndex({1}));
}

TEST(DonorPairing, NoDonorsNothingChanges) {
  std::unique_ptr<HloModule> m = Parse(R"(
HloModule m

ENTRY e {
  a = f32[4] parameter(0)
  ROOT x = f32[4] negate(a)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(PairBufferDonors(*m).empty());
  EXPECT_FALSE(m->config().input_output_alias_present);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
