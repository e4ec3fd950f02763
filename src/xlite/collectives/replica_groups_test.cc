#include "xlite/collectives/replica_groups.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xlite/collectives/device_assignment.h"
#include "xlite/text/parser.h"

namespace xlite::collectives {
namespace {
namespace XLITE_UNITY_ID {

using Groups = std::vector<std::vector<int64_t>>;

TEST(DeviceAssignment, DefaultIsXlaComputationPlacer) {
  absl::StatusOr<DeviceAssignment> a = DeviceAssignment::Default(2, 3);
  ASSERT_TRUE(a.ok()) << a.status();
  // device(r, p) = p * replicas + r
  EXPECT_EQ((*a)(0, 0), 0);
  EXPECT_EQ((*a)(1, 0), 1);
  EXPECT_EQ((*a)(0, 1), 2);
  EXPECT_EQ((*a)(1, 2), 5);
  absl::StatusOr<LogicalId> id = a->LogicalIdOf(3);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*id, (LogicalId{1, 1}));
  EXPECT_EQ(a->ToString(),
            "Computations: 3 Replicas: 2\nComputation 0: 0 1 \nComputation 1: 2 3 \n"
            "Computation 2: 4 5 \n");
  EXPECT_EQ(a->LogicalIdOf(6).status().code(), absl::StatusCode::kNotFound);
}

TEST(DeviceAssignment, RejectsBadInput) {
  EXPECT_FALSE(DeviceAssignment::Default(0, 2).ok());
  EXPECT_FALSE(DeviceAssignment::Create(1, 2, {0, 0}).ok());
  EXPECT_FALSE(DeviceAssignment::Create(1, 2, {0}).ok());
  EXPECT_FALSE(DeviceAssignment::Create(1, 2, {0, -1}).ok());
  absl::StatusOr<DeviceAssignment> a = DeviceAssignment::Create(2, 1, {7, 3});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ((*a)(1, 0), 3);
}

TEST(ReplicaGroups, GroupModesFollowXla) {
  EXPECT_EQ(*GroupMode(false, std::nullopt), CollectiveOpGroupMode::kCrossReplica);
  EXPECT_EQ(*GroupMode(false, false), CollectiveOpGroupMode::kCrossReplica);
  EXPECT_FALSE(GroupMode(false, true).ok());
  EXPECT_EQ(*GroupMode(true, std::nullopt), CollectiveOpGroupMode::kCrossPartition);
  EXPECT_EQ(*GroupMode(true, false), CollectiveOpGroupMode::kCrossReplicaAndPartition);
  EXPECT_EQ(*GroupMode(true, true), CollectiveOpGroupMode::kFlattenedId);
}

TEST(ReplicaGroups, IotaGroups) {
  EXPECT_EQ(*ExpandIotaGroups({2, 4}, {8}, {}), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(*ExpandIotaGroups({2, 4}, {}, {}), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(*ExpandIotaGroups({4, 2}, {2, 4}, {1, 0}), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(*ExpandIotaGroups({2, 4}, {4, 2}, {1, 0}), (Groups{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  // [2,2]<=[2,2,2]T(2,1,0): iota 0..7 as [2,2,2], axes reversed.
  EXPECT_EQ(*ExpandIotaGroups({2, 4}, {2, 2, 2}, {2, 1, 0}), (Groups{{0, 4, 2, 6}, {1, 5, 3, 7}}));
  EXPECT_FALSE(ExpandIotaGroups({2, 4}, {6}, {}).ok());
  EXPECT_FALSE(ExpandIotaGroups({2, 4}, {2, 4}, {0, 0}).ok());
  EXPECT_FALSE(ExpandIotaGroups({2}, {2}, {}).ok());
  EXPECT_FALSE(ExpandIotaGroups({0, 4}, {}, {}).ok());
}

TEST(ReplicaGroups, MeshGroupsAsXlaMeshAxesReplicaGroupList) {
  EXPECT_EQ(*ExpandMeshGroups("mesh['axis_0'=2,'axis_1'=2] {'axis_1'}"), (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(*ExpandMeshGroups("mesh['axis_0'=2,'axis_1'=2] {'axis_0'}"), (Groups{{0, 2}, {1, 3}}));
  EXPECT_EQ(*ExpandMeshGroups("mesh['axis_0'=4,'axis_1'=2] {'axis_0'}"),
            (Groups{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  // Both axes, listed in reverse order: the group walks axis_1 slowest.
  EXPECT_EQ(*ExpandMeshGroups("mesh['a'=2,'b'=2] {'b', 'a'}"), (Groups{{0, 2, 1, 3}}));
  EXPECT_EQ(*ExpandMeshGroups("mesh['a'=2,'b'=2] {}"), (Groups{{0}, {1}, {2}, {3}}));
  // A device order of its own.
  EXPECT_EQ(*ExpandMeshGroups("mesh['a'=2,'b'=2, device_ids=(3,2,1,0)] {'b'}"),
            (Groups{{3, 2}, {1, 0}}));
  // Sub-axes: 'a':(1)2 is the minor half of a=4, 'a':(2)2 the major half.
  EXPECT_EQ(*ExpandMeshGroups("mesh['a'=4] {'a':(1)2}"), (Groups{{0, 2}, {1, 3}}));
  EXPECT_EQ(*ExpandMeshGroups("mesh['a'=4] {'a':(2)2}"), (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(*ExpandMeshGroups("mesh['a'=8,'b'=2] {'a':(2)2, 'b'}"),
            (Groups{{0, 1, 4, 5}, {2, 3, 6, 7}, {8, 9, 12, 13}, {10, 11, 14, 15}}));
  // Two sub-axes of one axis, listed major first.
  EXPECT_EQ(*ExpandMeshGroups("mesh['a'=8] {'a':(4)2, 'a':(1)2}"),
            (Groups{{0, 4, 1, 5}, {2, 6, 3, 7}}));
}

TEST(ReplicaGroups, MeshGroupErrorsNameTheProblem) {
  auto message = [](const std::string& text) {
    return std::string(ExpandMeshGroups(text).status().message());
  };
  EXPECT_NE(message("mesh['a'=2,'b'=2] {'bogus'}").find("no axis 'bogus'"), std::string::npos);
  EXPECT_NE(message("mesh['a'=2,'b'=2, device_ids=(0,1,2)] {'a'}").find("device_ids lists 3"),
            std::string::npos);
  EXPECT_NE(message("mesh['a'=2,'b'=2, device_ids=(0,1,2,2)] {'a'}").find("permutation"),
            std::string::npos);
  EXPECT_NE(message("mesh['a'=2] {'a', 'a'}").find("used twice"), std::string::npos);
  EXPECT_NE(message("mesh['a'=4] {'a':(1)3}").find("does not divide"), std::string::npos);
  EXPECT_NE(message("mesh['a'=4] {'a':(1)2, 'a':(1)2}").find("used twice"), std::string::npos);
  EXPECT_NE(message("mesh['a'=4 {'a'}").find("expected"), std::string::npos);
  EXPECT_NE(message("mesh['a'=4] {'a'} extra").find("unexpected text"), std::string::npos);
}

std::vector<std::vector<int64_t>> Flattened(const std::vector<std::vector<LogicalId>>& groups,
                                            int64_t partitions) {
  std::vector<std::vector<int64_t>> out;
  for (const auto& g : groups) {
    out.emplace_back();
    for (const LogicalId& id : g) out.back().push_back(id.replica * partitions + id.partition);
  }
  return out;
}

TEST(ReplicaGroups, ParticipantGroupsPerMode) {
  // 2 replicas x 2 partitions; flattened id = r * 2 + p.
  auto groups = [](CollectiveOpGroupMode mode, Groups lists) {
    absl::StatusOr<std::vector<std::vector<LogicalId>>> g = ParticipantGroups(mode, lists, 2, 2);
    EXPECT_TRUE(g.ok()) << g.status();
    return g.ok() ? Flattened(*g, 2) : Groups{};
  };
  EXPECT_EQ(groups(CollectiveOpGroupMode::kCrossReplica, {{0, 1}}), (Groups{{0, 2}, {1, 3}}));
  EXPECT_EQ(groups(CollectiveOpGroupMode::kCrossReplica, {}), (Groups{{0, 2}, {1, 3}}));
  EXPECT_EQ(groups(CollectiveOpGroupMode::kCrossPartition, {{1, 0}}), (Groups{{1, 0}, {3, 2}}));
  EXPECT_EQ(groups(CollectiveOpGroupMode::kCrossPartition, {}), (Groups{{0, 1}, {2, 3}}));
  // Partition-major, as the StableHLO spec orders it.
  EXPECT_EQ(groups(CollectiveOpGroupMode::kCrossReplicaAndPartition, {{0, 1}}),
            (Groups{{0, 2, 1, 3}}));
  EXPECT_EQ(groups(CollectiveOpGroupMode::kCrossReplicaAndPartition, {{0}, {1}}),
            (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(groups(CollectiveOpGroupMode::kFlattenedId, {{3, 0}, {1, 2}}),
            (Groups{{3, 0}, {1, 2}}));
  EXPECT_FALSE(ParticipantGroups(CollectiveOpGroupMode::kFlattenedId, {}, 2, 2).ok());
  EXPECT_FALSE(ParticipantGroups(CollectiveOpGroupMode::kCrossReplica, {{0, 2}}, 2, 2).ok());
  EXPECT_FALSE(ParticipantGroups(CollectiveOpGroupMode::kFlattenedId, {{4}}, 2, 2).ok());
}

TEST(ReplicaGroups, ParticipantsOfADeviceUseTheAssignment) {
  DeviceAssignment a = *DeviceAssignment::Default(2, 2);
  absl::StatusOr<Participants> p = ParticipantsOf(
      LogicalId{1, 0}, CollectiveOpGroupMode::kCrossReplicaAndPartition, {{0, 1}}, a);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->rank, 1);
  EXPECT_EQ(p->devices, (std::vector<int64_t>{0, 1, 2, 3}));  // (0,0) (1,0) (0,1) (1,1)
  p = ParticipantsOf(LogicalId{1, 1}, CollectiveOpGroupMode::kCrossReplica, {{1, 0}}, a);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->rank, 0);
  EXPECT_EQ(p->devices, (std::vector<int64_t>{3, 2}));
  absl::Status missing =
      ParticipantsOf(LogicalId{1, 0}, CollectiveOpGroupMode::kCrossReplica, {{0}}, a).status();
  EXPECT_NE(missing.message().find("no replica group"), std::string::npos) << missing;
  absl::Status twice =
      ParticipantsOf(LogicalId{0, 0}, CollectiveOpGroupMode::kCrossReplica, {{0}, {0, 1}}, a)
          .status();
  EXPECT_NE(twice.message().find("twice"), std::string::npos) << twice;
}

TEST(ReplicaGroups, FromInstructions) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  ar = f32[4] all-reduce(x), replica_groups=mesh['axis_0'=2,'axis_1'=4] {'axis_0'}, to_apply=add
  ag = f32[16] all-gather(x), channel_id=1, replica_groups=[2,4]<=[4,2]T(1,0), dimensions={0}, use_global_device_ids=true
  ROOT t = (f32[4], f32[16]) tuple(ar, ag)
})",
                                                                     "t.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  const HloComputation* entry = (*module)->entry_computation();
  const HloInstruction* ar = entry->root_instruction()->operand(0);
  const HloInstruction* ag = entry->root_instruction()->operand(1);
  DeviceAssignment a = *DeviceAssignment::Default(8, 1);
  absl::StatusOr<Participants> p = ParticipantsOf(*ar, LogicalId{5, 0}, a);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->devices, (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(p->rank, 1);
  p = ParticipantsOf(*ag, LogicalId{3, 0}, a);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->devices, (std::vector<int64_t>{1, 3, 5, 7}));
  EXPECT_EQ(*GroupModeOf(*ag), CollectiveOpGroupMode::kFlattenedId);
}

TEST(ReplicaGroups, PermutePeersRankByTheIdsOfTheMode) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  a = f32[2] collective-permute(x), source_target_pairs={{0,1},{1,0},{0,2}}
  b = f32[2] collective-permute(x), channel_id=1, source_target_pairs={{3,0},{0,3}}
  c = f32[2] collective-permute(x), source_target_pairs={{0,1},{2,1}}
  ROOT t = (f32[2], f32[2], f32[2]) tuple(a, b, c)
})",
                                                                     "t.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  const HloInstruction* root = (*module)->entry_computation()->root_instruction();
  DeviceAssignment a = *DeviceAssignment::Default(3, 4);
  // Cross-replica: the row is partition 2's replicas; replica 0 sends to 1 and 2.
  absl::StatusOr<PermutePeers> p = PermutePeersOf(*root->operand(0), LogicalId{0, 2}, a);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->row.devices, (std::vector<int64_t>{6, 7, 8}));
  EXPECT_EQ(p->source, 1);
  EXPECT_EQ(p->targets, (std::vector<int64_t>{1, 2}));
  p = PermutePeersOf(*root->operand(0), LogicalId{2, 0}, a);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->source, 0);
  EXPECT_TRUE(p->targets.empty());
  // Cross-partition: the row is replica 1's partitions.
  p = PermutePeersOf(*root->operand(1), LogicalId{1, 3}, a);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->row.devices, (std::vector<int64_t>{1, 4, 7, 10}));
  EXPECT_EQ(p->source, 0);
  EXPECT_EQ(p->targets, (std::vector<int64_t>{0}));
  absl::Status twice = PermutePeersOf(*root->operand(2), LogicalId{1, 0}, a).status();
  EXPECT_NE(twice.message().find("target of two"), std::string::npos) << twice;
  DeviceAssignment small = *DeviceAssignment::Default(2, 1);
  EXPECT_FALSE(PermutePeersOf(*root->operand(0), LogicalId{0, 0}, small).ok());
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::collectives
