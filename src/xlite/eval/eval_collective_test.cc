// Tests of the collective family over several simulated devices.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "xlite/eval/eval_test_util.h"
#include "xlite/eval/evaluator.h"
#include "xlite/text/parser.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

using eval_test::Ints;

std::unique_ptr<HloModule> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "t.hlo");
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? std::move(*module) : nullptr;
}

Literal Array(PrimitiveType type, std::vector<int64_t> values, std::vector<int64_t> dims) {
  Literal lit(Shape::Array(type, std::move(dims)));
  for (size_t i = 0; i < values.size(); ++i) lit.SetInt(i, values[i]);
  return lit;
}
Literal S32(std::vector<int64_t> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return Array(PrimitiveType::S32, std::move(values), {n});
}

// Runs `module` on `devices` = replicas * partitions devices, device d
// getting the single argument make_arg(d).
std::vector<Literal> RunOnDevices(const HloModule& module, int64_t replicas, int64_t partitions,
                                  const std::function<Literal(int64_t)>& make_arg) {
  EvalOptions options;
  options.replica_count = replicas;
  options.num_partitions = partitions;
  std::vector<std::vector<Literal>> args;
  for (int64_t d = 0; d < replicas * partitions; ++d) {
    args.emplace_back();
    if (make_arg) args.back().push_back(make_arg(d));
  }
  absl::StatusOr<std::vector<Literal>> results = EvaluateReplicated(module, args, options);
  EXPECT_TRUE(results.ok()) << results.status();
  return results.ok() ? std::move(*results) : std::vector<Literal>{};
}

constexpr char kAdd[] = R"(
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
)";

TEST(EvalCollective, AllReduceWithinReplicaGroups) {
  auto module = Parse(absl::StrCat("HloModule m\n", kAdd, R"(
ENTRY e {
  x = s32[2] parameter(0)
  ROOT r = s32[2] all-reduce(x), replica_groups={{0,1},{2,3}}, to_apply=add
})"));
  ASSERT_NE(module, nullptr);
  std::vector<Literal> out = RunOnDevices(*module, 4, 1, [](int64_t d) {
    return S32({d, 10 * d});
  });
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{1, 10}));
  EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{1, 10}));
  EXPECT_EQ(Ints(out[2]), (std::vector<int64_t>{5, 50}));
  EXPECT_EQ(Ints(out[3]), (std::vector<int64_t>{5, 50}));
}

TEST(EvalCollective, AllReduceWithIotaGroupsAndStartDone) {
  // [2,2]<=[2,2]T(1,0) is {{0,2},{1,3}}.
  auto module = Parse(absl::StrCat("HloModule m\n", kAdd, R"(
ENTRY e {
  x = s32[1] parameter(0)
  start = s32[1] all-reduce-start(x), replica_groups=[2,2]<=[2,2]T(1,0), to_apply=add
  ROOT done = s32[1] all-reduce-done(start)
})"));
  ASSERT_NE(module, nullptr);
  std::vector<Literal> out = RunOnDevices(*module, 4, 1, [](int64_t d) { return S32({1 << d}); });
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{1 + 4}));
  EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{2 + 8}));
  EXPECT_EQ(Ints(out[2]), (std::vector<int64_t>{1 + 4}));
  EXPECT_EQ(Ints(out[3]), (std::vector<int64_t>{2 + 8}));
}

TEST(EvalCollective, AllReduceWithEmptyGroupsReducesEveryReplica) {
  auto module = Parse(absl::StrCat("HloModule m\n", kAdd, R"(
ENTRY e {
  x = s32[] parameter(0)
  ROOT r = s32[] all-reduce(x), replica_groups={}, to_apply=add
})"));
  ASSERT_NE(module, nullptr);
  std::vector<Literal> out =
      RunOnDevices(*module, 3, 1, [](int64_t d) { return Array(PrimitiveType::S32, {d + 1}, {}); });
  ASSERT_EQ(out.size(), 3u);
  for (const Literal& r : out) EXPECT_EQ(r.GetInt(0), 6);
}

TEST(EvalCollective, AsyncWrappedReduceScatter) {
  // reduce-scatter-start/done is the generic async form wrapping a reduce-scatter.
  auto module = Parse(absl::StrCat("HloModule m\n", kAdd, R"(
ENTRY e {
  x = s32[4] parameter(0)
  start = ((s32[4]), s32[2]) reduce-scatter-start(x), replica_groups={{0,1}}, dimensions={0}, to_apply=add
  ROOT done = s32[2] reduce-scatter-done(start)
})"));
  ASSERT_NE(module, nullptr);
  std::vector<Literal> out = RunOnDevices(*module, 2, 1, [](int64_t d) {
    return S32({1 + d, 2 + d, 3 + d, 4 + d});
  });
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{7, 9}));
}

TEST(EvalCollective, AllReduceWithAReducerOfSeveralInstructions) {
  // Not a single elementwise op: the reducer runs once per element.
  auto module = Parse(R"(
HloModule m
sum_of_squares_so_far {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  bb = f32[] multiply(b, b)
  ROOT s = f32[] add(a, bb)
}
ENTRY e {
  x = f32[3] parameter(0)
  ROOT r = f32[3] all-reduce(x), replica_groups={{0,1,2}}, to_apply=sum_of_squares_so_far
})");
  ASSERT_NE(module, nullptr);
  std::vector<Literal> out = RunOnDevices(*module, 3, 1, [](int64_t d) {
    Literal x(Shape::Array(PrimitiveType::F32, {3}));
    for (int64_t i = 0; i < 3; ++i) x.SetDouble(i, d + i);
    return x;
  });
  ASSERT_EQ(out.size(), 3u);
  // Element i: i + (1 + i)^2 + (2 + i)^2.
  for (const Literal& r : out) {
    EXPECT_EQ(r.GetDouble(0), 0 + 1 + 4);
    EXPECT_EQ(r.GetDouble(1), 1 + 4 + 9);
    EXPECT_EQ(r.GetDouble(2), 2 + 9 + 16);
  }
}

TEST(EvalCollective, AllGatherConcatenatesInGroupOrder) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  x = s32[2] parameter(0)
  ROOT g = s32[4] all-gather(x), replica_groups={{1,0}}, dimensions={0}
})");
  ASSERT_NE(module, nullptr);
  std::vector<Literal> out = RunOnDevices(*module, 2, 1, [](int64_t d) {
    return S32({10 * d, 10 * d + 1});
  });
  ASSERT_EQ(out.size(), 2u);
  for (const Literal& r : out) EXPECT_EQ(Ints(r), (std::vector<int64_t>{10, 11, 0, 1}));
}

TEST(EvalCollective, AllGatherStartDoneOnAnInnerDimension) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  x = s32[2,1] parameter(0)
  start = (s32[2,1], s32[2,2]) all-gather-start(x), replica_groups={{0,1}}, dimensions={1}
  ROOT done = s32[2,2] all-gather-done(start)
})");
  ASSERT_NE(module, nullptr);
  std::vector<Literal> out = RunOnDevices(*module, 2, 1, [](int64_t d) {
    return Array(PrimitiveType::S32, {10 * d, 10 * d + 1}, {2, 1});
  });
  ASSERT_EQ(out.size(), 2u);
  for (const Literal& r : out) EXPECT_EQ(Ints(r), (std::vector<int64_t>{0, 10, 1, 11}));
}

TEST(EvalCollective, AllGatherAcrossPartitionsWithAChannel) {
  // A channel without use_global_device_ids: the groups list replicas, each
  // spanning every partition of its replicas.
  auto module = Parse(R"(
HloModule m
ENTRY e {
  x = s32[1] parameter(0)
  ROOT g = s32[2] all-gather(x), channel_id=1, replica_groups={{0},{1}}, dimensions={0}
})");
  ASSERT_NE(module, nullptr);
  std::vector<Literal> out = RunOnDevices(*module, 2, 2, [](int64_t d) { return S32({d}); });
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(Ints(out[2]), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Ints(out[3]), (std::vector<int64_t>{2, 3}));
}

TEST(EvalCollective, CrossReplicaAndPartitionGroupsArePartitionMajor) {
  // Group {0,1} of replicas over 2 partitions gathers (r0,p0), (r1,p0), (r0,p1),
  // (r1,p1), as the StableHLO spec orders cross_replica_and_partition groups.
  auto module = Parse(R"(
HloModule m
ENTRY e {
  x = s32[1] parameter(0)
  ROOT g = s32[4] all-gather(x), channel_id=1, replica_groups={{0,1}}, dimensions={0}
})");
  ASSERT_NE(module, nullptr);
  std::vector<Literal> out = RunOnDevices(*module, 2, 2, [](int64_t d) { return S32({d}); });
  ASSERT_EQ(out.size(), 4u);
  for (const Literal& l : out) EXPECT_EQ(Ints(l), (std::vector<int64_t>{0, 2, 1, 3}));
}

TEST(EvalCollective, AllGatherWithFlattenedIds) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  x = s32[1] parameter(0)
  ROOT g = s32[2] all-gather(x), channel_id=1, replica_groups={{0,3},{2,1}}, use_global_device_ids=true, dimensions={0}
})");
  ASSERT_NE(module, nullptr);
  std::vector<Literal> out = RunOnDevices(*module, 2, 2, [](int64_t d) { return S32({d}); });
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(Ints(out[2]), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(Ints(out[3]), (std::vector<int64_t>{0, 3}));
}

TEST(EvalCollective, ReduceScatterKeepsThisDevicesShard) {
  auto module = Parse(absl::StrCat("HloModule m\n", kAdd, R"(
ENTRY e {
  x = s32[4] parameter(0)
  ROOT r = s32[2] reduce-scatter(x), replica_groups={{0,1}}, dimensions={0}, to_apply=add
})"));
  ASSERT_NE(module, nullptr);
  std::vector<Literal> out = RunOnDevices(*module, 2, 1, [](int64_t d) {
    return S32({1 + d, 2 + d, 3 + d, 4 + d});
  });
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{7, 9}));
}

TEST(EvalCollective, AllToAllSplitsAndConcatenatesOneDimension) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  x = s32[4] parameter(0)
  ROOT a = s32[4] all-to-all(x), replica_groups={{0,1}}, dimensions={0}
})");
  ASSERT_NE(module, nullptr);
  std::vector<Literal> out = RunOnDevices(*module, 2, 1, [](int64_t d) {
    return S32({10 * d, 10 * d + 1, 10 * d + 2, 10 * d + 3});
  });
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{0, 1, 10, 11}));
  EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{2, 3, 12, 13}));
}

TEST(EvalCollective, AllToAllTupleForm) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  x = s32[2] parameter(0)
  y = s32[2] negate(x)
  ROOT a = (s32[2], s32[2]) all-to-all(x, y), replica_groups={{0,1}}
})");
  ASSERT_NE(module, nullptr);
  std::vector<Literal> out = RunOnDevices(*module, 2, 1, [](int64_t d) {
    return S32({d + 1, d + 2});
  });
  ASSERT_EQ(out.size(), 2u);
  // Device j receives operand j of every device, in group order.
  EXPECT_EQ(Ints(out[0].tuple_elements()[0]), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Ints(out[0].tuple_elements()[1]), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Ints(out[1].tuple_elements()[0]), (std::vector<int64_t>{-1, -2}));
  EXPECT_EQ(Ints(out[1].tuple_elements()[1]), (std::vector<int64_t>{-2, -3}));
}

TEST(EvalCollective, CollectivePermuteGivesZerosToDevicesThatAreNoTarget) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  x = s32[2] parameter(0)
  ROOT p = s32[2] collective-permute(x), source_target_pairs={{0,1},{1,2}}
})");
  ASSERT_NE(module, nullptr);
  std::vector<Literal> out = RunOnDevices(*module, 3, 1, [](int64_t d) {
    return S32({d + 1, 10 * (d + 1)});
  });
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{1, 10}));
  EXPECT_EQ(Ints(out[2]), (std::vector<int64_t>{2, 20}));
}

TEST(EvalCollective, CollectivePermuteStartDoneAcrossPartitions) {
  // With a channel, the pairs name partitions of the same replica.
  auto module = Parse(R"(
HloModule m
ENTRY e {
  x = s32[1] parameter(0)
  start = (s32[1], s32[1], u32[], u32[]) collective-permute-start(x), channel_id=2, source_target_pairs={{0,1},{1,0}}
  ROOT done = s32[1] collective-permute-done(start)
})");
  ASSERT_NE(module, nullptr);
  std::vector<Literal> out = RunOnDevices(*module, 2, 2, [](int64_t d) { return S32({d}); });
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{1}));
  EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{0}));
  EXPECT_EQ(Ints(out[2]), (std::vector<int64_t>{3}));
  EXPECT_EQ(Ints(out[3]), (std::vector<int64_t>{2}));
}

TEST(EvalCollective, CollectiveBroadcastSendsTheFirstDevicesValue) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  x = s32[1] parameter(0)
  ROOT b = s32[1] collective-broadcast(x), replica_groups={{1,0},{2,3}}
})");
  ASSERT_NE(module, nullptr);
  std::vector<Literal> out = RunOnDevices(*module, 4, 1, [](int64_t d) { return S32({d}); });
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{1}));
  EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{1}));
  EXPECT_EQ(Ints(out[2]), (std::vector<int64_t>{2}));
  EXPECT_EQ(Ints(out[3]), (std::vector<int64_t>{2}));
}

TEST(EvalCollective, ReplicaIdAndPartitionId) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  r = u32[] replica-id()
  p = u32[] partition-id()
  ROOT t = (u32[], u32[]) tuple(r, p)
})");
  ASSERT_NE(module, nullptr);
  std::vector<Literal> out = RunOnDevices(*module, 2, 3, nullptr);
  ASSERT_EQ(out.size(), 6u);
  for (int64_t d = 0; d < 6; ++d) {
    EXPECT_EQ(out[d].tuple_elements()[0].shape().element_type(), PrimitiveType::U32);
    EXPECT_EQ(out[d].tuple_elements()[0].GetInt(0), d / 3);
    EXPECT_EQ(out[d].tuple_elements()[1].GetInt(0), d % 3);
  }
}

TEST(EvalCollective, DeviceOutsideEveryGroupIsAnError) {
  auto module = Parse(absl::StrCat("HloModule m\n", kAdd, R"(
ENTRY e {
  x = s32[1] parameter(0)
  ROOT r = s32[1] all-reduce(x), replica_groups={{0,1}}, to_apply=add
})"));
  ASSERT_NE(module, nullptr);
  EvalOptions options;
  options.replica_count = 3;
  std::vector<std::vector<Literal>> args;
  for (int64_t d = 0; d < 3; ++d) args.push_back({S32({d})});
  absl::StatusOr<std::vector<Literal>> results = EvaluateReplicated(*module, args, options);
  ASSERT_FALSE(results.ok());
  EXPECT_NE(results.status().message().find("no replica group"), absl::string_view::npos)
      << results.status();
}

// Mesh and iota replica groups expand as XLA's MeshAxesReplicaGroupList and
// IotaReplicaGroupList do (src/xlite/collectives/replica_groups.h).
TEST(EvalCollective, MeshAndIotaReplicaGroups) {
  for (const char* groups : {"mesh['a'=2,'b'=2] {'a'}", "[2,2]<=[2,2]T(1,0)"}) {
    auto module = Parse(absl::StrCat("HloModule m\n", kAdd, R"(
ENTRY e {
  x = s32[1] parameter(0)
  ROOT r = s32[1] all-reduce(x), replica_groups=)",
                                     groups, R"(, to_apply=add
})"));
    ASSERT_NE(module, nullptr);
    std::vector<Literal> results =
        RunOnDevices(*module, 4, 1, [](int64_t d) { return S32({10 * d}); });
    ASSERT_EQ(results.size(), 4u) << groups;
    // Groups {0,2} and {1,3}.
    EXPECT_EQ(Ints(results[0]), (std::vector<int64_t>{20})) << groups;
    EXPECT_EQ(Ints(results[1]), (std::vector<int64_t>{40})) << groups;
    EXPECT_EQ(Ints(results[2]), (std::vector<int64_t>{20})) << groups;
    EXPECT_EQ(Ints(results[3]), (std::vector<int64_t>{40})) << groups;
  }
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
