#include "xlite/eval/host_transfers.h"

#include <thread>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "xlite/eval/fake_data.h"
#include "xlite/text/parser.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

Literal S32(std::vector<int64_t> values) {
  Literal l(Shape::Array(PrimitiveType::S32, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) l.SetInt(static_cast<int64_t>(i), values[i]);
  return l;
}

TEST(HostTransfers, AWaitingInfeedTakesABlockPushedLater) {
  HostTransfers host(std::chrono::seconds(20));
  std::thread feeder([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    host.PushInfeed(0, S32({4, 5}));
  });
  absl::StatusOr<Literal> block =
      host.TakeInfeed(0, Shape::Array(PrimitiveType::S32, {2}), "infeed 'x'");
  feeder.join();
  ASSERT_TRUE(block.ok()) << block.status();
  EXPECT_EQ(block->GetInt(1), 5);
}

TEST(HostTransfers, QueuesAreFifoPerDeviceAndAMismatchLeavesTheBlockQueued) {
  HostTransfers host(std::chrono::milliseconds(10));
  host.PushInfeed(1, S32({1}));
  host.PushInfeed(1, S32({2}));
  const Shape one = Shape::Array(PrimitiveType::S32, {1});
  absl::StatusOr<Literal> wrong =
      host.TakeInfeed(1, Shape::Array(PrimitiveType::F32, {1}), "infeed 'x'");
  ASSERT_FALSE(wrong.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(wrong.status()));
  EXPECT_EQ(host.infeed_size(1), 2);
  EXPECT_EQ(host.TakeInfeed(1, one, "infeed 'x'")->GetInt(0), 1);
  EXPECT_EQ(host.TakeInfeed(1, one, "infeed 'x'")->GetInt(0), 2);
  absl::StatusOr<Literal> none = host.TakeInfeed(0, one, "infeed 'x'");
  EXPECT_TRUE(absl::IsDeadlineExceeded(none.status())) << none.status();
  host.PutOutfeed(2, S32({7}));
  host.PutOutfeed(2, S32({8}));
  EXPECT_EQ(host.PopOutfeed(2)->GetInt(0), 7);
  EXPECT_EQ(host.PopOutfeed(2)->GetInt(0), 8);
  absl::StatusOr<Literal> empty = host.PopOutfeed(2, std::chrono::milliseconds(5));
  EXPECT_TRUE(absl::IsDeadlineExceeded(empty.status())) << empty.status();
}

TEST(HostTransfers, ASendCallbacksErrorKeepsItsCodeAndNamesTheInstruction) {
  HostTransfers host;
  host.SetSendCallback(2, [](const HostTransferMetadata&, const Literal&) {
    return absl::ResourceExhaustedError("host buffer full");
  });
  absl::Status s = host.Send({0, 2, Shape::Array(PrimitiveType::S32, {1}), "send 's'"}, S32({1}));
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "send 's'")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "host buffer full")) << s;
  absl::Status missing =
      host.Send({0, 9, Shape::Array(PrimitiveType::S32, {1}), "send 't'"}, S32({1}));
  EXPECT_TRUE(absl::IsFailedPrecondition(missing)) << missing;
  EXPECT_TRUE(absl::StrContains(missing.message(), "channel 9")) << missing;
}

TEST(HostTransfers, FakeHostDataIsTheSameForTheSameSeed) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(R"(
HloModule m
ENTRY e {
  t = token[] after-all()
  in = ((f32[4], s32[2]), token[]) infeed(t)
  r = (f32[3], u32[], token[]) recv(t), channel_id=4, is_host_transfer=true
  ROOT rd = (f32[3], token[]) recv-done(r), channel_id=4, is_host_transfer=true
})",
                                                                "m");
  ASSERT_TRUE(m.ok()) << m.status();
  HostTransfers a, b, c;
  ASSERT_TRUE(AddFakeHostTransfers(**m, 5, 2, a).ok());
  ASSERT_TRUE(AddFakeHostTransfers(**m, 5, 2, b).ok());
  ASSERT_TRUE(AddFakeHostTransfers(**m, 6, 2, c).ok());
  EXPECT_EQ(a.infeed_size(0), 1);
  EXPECT_EQ(a.infeed_size(1), 1);
  const Shape data =
      Shape::Tuple({Shape::Array(PrimitiveType::F32, {4}), Shape::Array(PrimitiveType::S32, {2})});
  Literal x = *a.TakeInfeed(0, data, "infeed 'in'");
  Literal y = *b.TakeInfeed(0, data, "infeed 'in'");
  Literal z = *c.TakeInfeed(0, data, "infeed 'in'");
  EXPECT_EQ(x.ToStringOneline(), y.ToStringOneline());
  EXPECT_NE(x.ToStringOneline(), z.ToStringOneline());
  HostTransferMetadata recv{0, 4, Shape::Array(PrimitiveType::F32, {3}), "recv 'r'"};
  Literal first = *a.Recv(recv);
  EXPECT_EQ(first.ToStringOneline(), b.Recv(recv)->ToStringOneline());
  EXPECT_NE(first.ToStringOneline(), a.Recv(recv)->ToStringOneline());  // fresh per call
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
