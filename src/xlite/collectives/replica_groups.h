// Who takes part in a collective: XLA's CollectiveOpGroupMode, the expansion
// of every replica_groups form (explicit lists, iota [G,S]<=[dims]T(perm),
// mesh['a'=2,'b'=4] {'a'}, empty = all) into id lists, and the participants
// of one device in rank order. One implementation for the interpreter and the
// CPU runtime.
#ifndef XLITE_COLLECTIVES_REPLICA_GROUPS_H_
#define XLITE_COLLECTIVES_REPLICA_GROUPS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "xlite/collectives/device_assignment.h"
#include "xlite/ir/attributes.h"
#include "xlite/ir/opcode.h"

namespace xlite {
class HloInstruction;
}

namespace xlite::collectives {

// XLA's CollectiveOpGroupMode: what the ids in replica_groups name.
enum class CollectiveOpGroupMode {
  kCrossReplica,              // replica ids; one group per partition
  kCrossPartition,            // partition ids; one group per replica
  kCrossReplicaAndPartition,  // replica ids; a group spans all partitions
  kFlattenedId,               // replica * num_partitions + partition
};

absl::string_view GroupModeName(CollectiveOpGroupMode mode);

// XLA's GetCollectiveOpGroupMode. `use_global_device_ids` is nullopt for ops
// that have no such attribute (all-to-all, collective-permute, broadcast, ...).
absl::StatusOr<CollectiveOpGroupMode> GroupMode(bool has_channel_id,
                                                std::optional<bool> use_global_device_ids);

// Whether `opcode` carries use_global_device_ids (all-reduce, all-gather,
// reduce-scatter and their -start forms).
bool HasUseGlobalDeviceIds(HloOpcode opcode);

// The mode of a collective instruction from its channel_id and attributes.
absl::StatusOr<CollectiveOpGroupMode> GroupModeOf(const HloInstruction& instr);

// The groups of an iota list [group_count, group_size] <= [dims] T(perm):
// iota over dims, transposed by perm, read row-major, cut into groups.
absl::StatusOr<std::vector<std::vector<int64_t>>> ExpandIotaGroups(
    const std::vector<int64_t>& group_shape, const std::vector<int64_t>& reshape_dims,
    const std::vector<int64_t>& transpose_perm);

// The groups of a mesh form as XLA's MeshAxesReplicaGroupList forms them:
// "mesh['a'=4,'b'=2(, device_ids=(...))] {'a', 'b':(1)2}" -- the mesh's device
// array, the unselected axes first, the selected (sub-)axes last in the order
// listed, read row-major and cut into groups of the selected size.
absl::StatusOr<std::vector<std::vector<int64_t>>> ExpandMeshGroups(absl::string_view mesh);

// Any replica_groups form as id lists; empty for {} (meaning all).
absl::StatusOr<std::vector<std::vector<int64_t>>> ExpandReplicaGroups(const ReplicaGroups& groups);

// Every group as (replica, partition) pairs in rank order, as XLA's
// GetParticipatingDevicesGroups forms them for `mode`. Empty `lists` mean one
// group of every replica (every partition in kCrossPartition). In
// kCrossReplicaAndPartition a group is ordered partition-major --
// (r0,p0), (r1,p0), ..., (r0,p1), ... -- as the StableHLO spec and the
// interpreter order it (XLA's GetParticipatingDevices lists it replica-major).
// Ids out of range are an error naming them.
absl::StatusOr<std::vector<std::vector<LogicalId>>> ParticipantGroups(
    CollectiveOpGroupMode mode, const std::vector<std::vector<int64_t>>& lists, int64_t replicas,
    int64_t partitions);

// One device's group: its members in rank order (logical ids and, through the
// device assignment, global device ids) and the device's rank in it.
struct Participants {
  std::vector<LogicalId> logical;
  std::vector<int64_t> devices;
  int64_t rank = 0;
  int64_t size() const { return static_cast<int64_t>(logical.size()); }
};

// The group of `me`; an error if `me` is in no group or in two.
absl::StatusOr<Participants> ParticipantsOf(const LogicalId& me, CollectiveOpGroupMode mode,
                                            const std::vector<std::vector<int64_t>>& lists,
                                            const DeviceAssignment& assignment);

// The same for a collective instruction (its mode and replica_groups).
absl::StatusOr<Participants> ParticipantsOf(const HloInstruction& instr, const LogicalId& me,
                                            const DeviceAssignment& assignment);

// collective-permute: the pairs name ids of the mode (replica ids without a
// channel_id, partition ids with one); the clique is every device of this
// device's row, ranked by those ids. `source` is the rank this device receives
// from (none: it receives zeros), `targets` the ranks it sends to.
struct PermutePeers {
  Participants row;
  std::optional<int64_t> source;
  std::vector<int64_t> targets;
};

// An error for ids out of range and for a device that is the target of two pairs.
absl::StatusOr<PermutePeers> PermutePeersOf(const HloInstruction& instr, const LogicalId& me,
                                            const DeviceAssignment& assignment);
// The same from the instruction's mode and pairs (what a thunk keeps).
absl::StatusOr<PermutePeers> PermutePeersOf(const LogicalId& me, CollectiveOpGroupMode mode,
                                            const SourceTargetPairs& pairs,
                                            const DeviceAssignment& assignment);

}  // namespace xlite::collectives

#endif  // XLITE_COLLECTIVES_REPLICA_GROUPS_H_
