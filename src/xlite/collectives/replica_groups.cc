#include "xlite/collectives/replica_groups.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "xlite/ir/instruction.h"
#include "xlite/support/status.h"

namespace xlite::collectives {
namespace {

constexpr int64_t kMaxIds = int64_t{1} << 24;  // bounds what an attribute may expand to

// `flat` read as a row-major array of `dims`, transposed by `perm`
// (result axis k is input axis perm[k]), flattened again.
std::vector<int64_t> Transpose(const std::vector<int64_t>& flat, const std::vector<int64_t>& dims,
                               const std::vector<int64_t>& perm) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  std::vector<int64_t> strides(rank, 1);
  for (int64_t i = rank - 2; i >= 0; --i) strides[i] = strides[i + 1] * dims[i + 1];
  std::vector<int64_t> out(flat.size());
  for (int64_t linear = 0; linear < static_cast<int64_t>(flat.size()); ++linear) {
    int64_t rest = linear, source = 0;
    for (int64_t k = rank - 1; k >= 0; --k) {
      const int64_t extent = dims[perm[k]];
      source += (rest % extent) * strides[perm[k]];
      rest /= extent;
    }
    out[linear] = flat[source];
  }
  return out;
}

absl::Status CheckPermutation(const std::vector<int64_t>& perm, size_t rank, const char* what) {
  std::vector<bool> seen(rank, false);
  if (perm.size() != rank) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": transpose [", absl::StrJoin(perm, ","),
                                                   "] has ", perm.size(), " entries for ", rank,
                                                   " dimensions"));
  }
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[p]) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": transpose [", absl::StrJoin(perm, ","), "] is not a permutation"));
    }
    seen[p] = true;
  }
  return absl::OkStatus();
}

std::vector<std::vector<int64_t>> Chunk(const std::vector<int64_t>& flat, int64_t size) {
  std::vector<std::vector<int64_t>> groups;
  for (size_t i = 0; i < flat.size(); i += size) {
    groups.emplace_back(flat.begin() + i, flat.begin() + i + size);
  }
  return groups;
}

// ---------------------------------------------------------------- mesh text

struct MeshAxis {
  std::string name;
  int64_t size = 0;
};
struct AxisRef {
  int64_t axis = 0;
  std::optional<int64_t> pre_size, size;  // set for a sub-axis 'a':(pre)size
  int64_t Size(const std::vector<MeshAxis>& axes) const {
    return size.has_value() ? *size : axes[axis].size;
  }
};
struct MeshGroups {
  std::vector<MeshAxis> axes;
  std::vector<int64_t> device_ids;  // empty: iota
  std::vector<AxisRef> selected;
};

class MeshReader {
 public:
  explicit MeshReader(absl::string_view text) : text_(text) {}

  absl::StatusOr<MeshGroups> Read() {
    MeshGroups m;
    Space();
    if (!Consume("mesh")) return Error("expected 'mesh'");
    if (!Consume("[")) return Error("expected '['");
    while (!Consume("]")) {
      if (Consume("device_ids")) {
        if (!Consume("=") || !Consume("(")) return Error("expected device_ids=(...)");
        while (!Consume(")")) {
          ASSIGN_OR_RETURN(int64_t id, Int());
          m.device_ids.push_back(id);
          Consume(",");
        }
      } else {
        MeshAxis axis;
        ASSIGN_OR_RETURN(axis.name, Name());
        if (!Consume("=")) return Error("expected '=' after a mesh axis name");
        ASSIGN_OR_RETURN(axis.size, Int());
        if (axis.size < 1 || axis.size > kMaxIds) return Error("mesh axis size out of range");
        m.axes.push_back(std::move(axis));
      }
      if (!Consume(",") && !Peek("]")) return Error("expected ',' or ']'");
    }
    if (!Consume("{")) return Error("expected '{' listing the group's axes");
    while (!Consume("}")) {
      ASSIGN_OR_RETURN(std::string name, Name());
      auto it = std::find_if(m.axes.begin(), m.axes.end(),
                             [&](const MeshAxis& a) { return a.name == name; });
      if (it == m.axes.end()) return Error(absl::StrCat("mesh has no axis '", name, "'"));
      AxisRef ref{it - m.axes.begin(), std::nullopt, std::nullopt};
      if (Consume(":")) {
        if (!Consume("(")) return Error("expected ':(pre_size)size'");
        ASSIGN_OR_RETURN(int64_t pre, Int());
        if (!Consume(")")) return Error("expected ')'");
        ASSIGN_OR_RETURN(int64_t size, Int());
        ref.pre_size = pre;
        ref.size = size;
      }
      m.selected.push_back(ref);
      if (!Consume(",") && !Peek("}")) return Error("expected ',' or '}'");
    }
    Space();
    if (pos_ != text_.size()) return Error("unexpected text after the axes");
    return m;
  }

 private:
  void Space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Peek(absl::string_view s) {
    Space();
    return text_.substr(pos_, s.size()) == s;
  }
  bool Consume(absl::string_view s) {
    if (!Peek(s)) return false;
    pos_ += s.size();
    return true;
  }
  absl::StatusOr<std::string> Name() {
    Space();
    if (Consume("'")) {
      size_t end = text_.find('\'', pos_);
      if (end == absl::string_view::npos) return Error("unterminated axis name");
      std::string name(text_.substr(pos_, end - pos_));
      pos_ = end + 1;
      return name;
    }
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    if (start == pos_) return Error("expected an axis name");
    return std::string(text_.substr(start, pos_ - start));
  }
  absl::StatusOr<int64_t> Int() {
    Space();
    size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    int64_t v = 0;
    bool any = false;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      if (v > kMaxIds) return Error("integer out of range");
      v = v * 10 + (text_[pos_++] - '0');
      any = true;
    }
    if (!any) return Error("expected an integer");
    return text_[start] == '-' ? -v : v;
  }
  absl::Status Error(absl::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrCat("mesh replica groups \"", text_, "\" at offset ", pos_, ": ", message));
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

// Checks the device ids and the axis references as XLA's Mesh and
// ValidateSpanOfAxes do.
absl::Status ValidateMesh(const MeshGroups& m, absl::string_view text) {
  auto error = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("mesh replica groups \"", text, "\": ", why));
  };
  if (m.axes.empty()) return error("the mesh has no axes");
  int64_t devices = 1;
  for (const MeshAxis& a : m.axes) {
    devices *= a.size;
    if (devices > kMaxIds) return error("too many devices");
  }
  if (!m.device_ids.empty()) {
    if (static_cast<int64_t>(m.device_ids.size()) != devices) {
      return error(absl::StrCat("the mesh has ", devices, " devices but device_ids lists ",
                                m.device_ids.size()));
    }
    std::vector<int64_t> sorted = m.device_ids;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < devices; ++i) {
      if (sorted[i] != i) return error("device_ids must be a permutation of [0, devices)");
    }
  }
  for (size_t i = 0; i < m.selected.size(); ++i) {
    const AxisRef& a = m.selected[i];
    const int64_t full = m.axes[a.axis].size;
    if (a.size.has_value()) {
      if (*a.pre_size < 1 || *a.size < 2 || *a.size >= full || full % (*a.pre_size * *a.size)) {
        return error(absl::StrCat("sub-axis ", m.axes[a.axis].name, ":(", *a.pre_size, ")", *a.size,
                                  " does not divide axis size ", full));
      }
    }
    for (size_t j = 0; j < i; ++j) {
      const AxisRef& b = m.selected[j];
      if (a.axis != b.axis) continue;
      bool overlap = !a.size.has_value() || !b.size.has_value();
      if (!overlap) {
        overlap = *a.pre_size * *a.size > *b.pre_size && *b.pre_size * *b.size > *a.pre_size;
      }
      if (overlap) return error(absl::StrCat("axis '", m.axes[a.axis].name, "' is used twice"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::string_view GroupModeName(CollectiveOpGroupMode mode) {
  switch (mode) {
    case CollectiveOpGroupMode::kCrossReplica:
      return "cross_replica";
    case CollectiveOpGroupMode::kCrossPartition:
      return "cross_partition";
    case CollectiveOpGroupMode::kCrossReplicaAndPartition:
      return "cross_replica_and_partition";
    case CollectiveOpGroupMode::kFlattenedId:
      return "flattened_id";
  }
  return "unknown";
}

absl::StatusOr<CollectiveOpGroupMode> GroupMode(bool has_channel_id,
                                                std::optional<bool> use_global_device_ids) {
  if (!has_channel_id) {
    if (use_global_device_ids.value_or(false)) {
      return absl::InvalidArgumentError("use_global_device_ids=true requires a channel_id");
    }
    return CollectiveOpGroupMode::kCrossReplica;
  }
  if (!use_global_device_ids.has_value()) return CollectiveOpGroupMode::kCrossPartition;
  return *use_global_device_ids ? CollectiveOpGroupMode::kFlattenedId
                                : CollectiveOpGroupMode::kCrossReplicaAndPartition;
}

bool HasUseGlobalDeviceIds(HloOpcode opcode) {
  return opcode == HloOpcode::kAllReduce || opcode == HloOpcode::kAllReduceStart ||
         opcode == HloOpcode::kAllGather || opcode == HloOpcode::kAllGatherStart ||
         opcode == HloOpcode::kReduceScatter;
}

absl::StatusOr<CollectiveOpGroupMode> GroupModeOf(const HloInstruction& instr) {
  std::optional<bool> global_ids;
  if (HasUseGlobalDeviceIds(instr.opcode())) global_ids = instr.attrs().use_global_device_ids;
  return GroupMode(instr.attrs().channel_id.has_value(), global_ids);
}

absl::StatusOr<std::vector<std::vector<int64_t>>> ExpandIotaGroups(
    const std::vector<int64_t>& group_shape, const std::vector<int64_t>& reshape_dims,
    const std::vector<int64_t>& transpose_perm) {
  if (group_shape.size() != 2 || group_shape[0] < 1 || group_shape[1] < 1 ||
      group_shape[0] > kMaxIds || group_shape[1] > kMaxIds ||
      group_shape[0] * group_shape[1] > kMaxIds) {
    return absl::InvalidArgumentError(absl::StrCat("iota replica groups need [num_groups,",
                                                   "group_size] with both positive, got [",
                                                   absl::StrJoin(group_shape, ","), "]"));
  }
  const int64_t total = group_shape[0] * group_shape[1];
  std::vector<int64_t> dims = reshape_dims.empty() ? std::vector<int64_t>{total} : reshape_dims;
  int64_t elements = 1;
  for (int64_t d : dims) {
    if (d < 1 || d > kMaxIds) elements = -1;
    if (elements > 0) elements *= d;
    if (elements > kMaxIds) elements = -1;
  }
  if (elements != total) {
    return absl::InvalidArgumentError(
        absl::StrCat("iota replica groups [", absl::StrJoin(group_shape, ","), "]<=[",
                     absl::StrJoin(dims, ","), "]: the reshape does not hold ", total, " ids"));
  }
  std::vector<int64_t> perm = transpose_perm;
  if (perm.empty()) {
    perm.resize(dims.size());
    std::iota(perm.begin(), perm.end(), 0);
  }
  RETURN_IF_ERROR(CheckPermutation(perm, dims.size(), "iota replica groups"));
  std::vector<int64_t> flat(total);
  std::iota(flat.begin(), flat.end(), 0);
  return Chunk(Transpose(flat, dims, perm), group_shape[1]);
}

absl::StatusOr<std::vector<std::vector<int64_t>>> ExpandMeshGroups(absl::string_view text) {
  ASSIGN_OR_RETURN(MeshGroups m, MeshReader(text).Read());
  RETURN_IF_ERROR(ValidateMesh(m, text));
  // Split each mesh axis that the group names by sub-axes into the pieces
  // those sub-axes cover (with padding pieces between them); remember which
  // piece each reference names.
  const int64_t axis_count = static_cast<int64_t>(m.axes.size());
  std::vector<int64_t> sizes;  // the reshaped device array's dimensions
  std::vector<int64_t> piece_of(m.selected.size(), -1);
  for (int64_t axis = 0; axis < axis_count; ++axis) {
    const int64_t full = m.axes[axis].size;
    std::vector<size_t> refs;
    for (size_t i = 0; i < m.selected.size(); ++i) {
      if (m.selected[i].axis == axis) refs.push_back(i);
    }
    if (refs.size() == 1 && !m.selected[refs[0]].size.has_value()) {
      piece_of[refs[0]] = static_cast<int64_t>(sizes.size());
      sizes.push_back(full);
      continue;
    }
    if (refs.empty()) {
      sizes.push_back(full);
      continue;
    }
    std::sort(refs.begin(), refs.end(), [&](size_t a, size_t b) {
      return *m.selected[a].pre_size < *m.selected[b].pre_size;
    });
    int64_t covered = 1;
    for (size_t i : refs) {
      const AxisRef& ref = m.selected[i];
      if (*ref.pre_size != covered) {
        if (*ref.pre_size % covered != 0) {
          return absl::InvalidArgumentError(absl::StrCat("mesh replica groups \"", text,
                                                         "\": sub-axes of '", m.axes[axis].name,
                                                         "' do not tile it"));
        }
        sizes.push_back(*ref.pre_size / covered);
        covered = *ref.pre_size;
      }
      piece_of[i] = static_cast<int64_t>(sizes.size());
      sizes.push_back(*ref.size);
      covered *= *ref.size;
    }
    if (covered != full) sizes.push_back(full / covered);
  }
  // The unselected pieces first, in order, then the selected ones as listed.
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d) {
    if (std::find(piece_of.begin(), piece_of.end(), d) == piece_of.end()) perm.push_back(d);
  }
  int64_t group_size = 1;
  for (size_t i = 0; i < m.selected.size(); ++i) {
    perm.push_back(piece_of[i]);
    group_size *= m.selected[i].Size(m.axes);
  }
  std::vector<int64_t> devices = m.device_ids;
  if (devices.empty()) {
    int64_t count = 1;
    for (const MeshAxis& a : m.axes) count *= a.size;
    devices.resize(count);
    std::iota(devices.begin(), devices.end(), 0);
  }
  return Chunk(Transpose(devices, sizes, perm), group_size);
}

absl::StatusOr<std::vector<std::vector<int64_t>>> ExpandReplicaGroups(const ReplicaGroups& groups) {
  if (!groups.mesh.empty()) return ExpandMeshGroups(groups.mesh);
  if (groups.iota) {
    return ExpandIotaGroups(groups.iota_group_shape, groups.iota_reshape, groups.iota_transpose);
  }
  return groups.groups;
}

namespace {

absl::Status CheckId(int64_t id, int64_t bound, const char* what) {
  if (id < 0 || id >= bound) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", id, " in replica_groups is outside [0, ", bound, ")"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::vector<LogicalId>>> ParticipantGroups(
    CollectiveOpGroupMode mode, const std::vector<std::vector<int64_t>>& given, int64_t replicas,
    int64_t partitions) {
  if (replicas < 1 || partitions < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid device grid ", replicas, " x ", partitions));
  }
  std::vector<std::vector<int64_t>> all;
  const std::vector<std::vector<int64_t>>* lists = &given;
  if (given.empty()) {
    if (mode == CollectiveOpGroupMode::kFlattenedId) {
      return absl::InvalidArgumentError("flattened-id replica_groups cannot be empty");
    }
    all.emplace_back(mode == CollectiveOpGroupMode::kCrossPartition ? partitions : replicas);
    std::iota(all[0].begin(), all[0].end(), 0);
    lists = &all;
  }
  std::vector<std::vector<LogicalId>> groups;
  for (const std::vector<int64_t>& list : *lists) {
    switch (mode) {
      case CollectiveOpGroupMode::kCrossReplica:
        for (int64_t r : list) RETURN_IF_ERROR(CheckId(r, replicas, "replica"));
        for (int64_t p = 0; p < partitions; ++p) {
          std::vector<LogicalId>& group = groups.emplace_back();
          for (int64_t r : list) group.push_back({r, p});
        }
        break;
      case CollectiveOpGroupMode::kCrossPartition:
        for (int64_t p : list) RETURN_IF_ERROR(CheckId(p, partitions, "partition"));
        for (int64_t r = 0; r < replicas; ++r) {
          std::vector<LogicalId>& group = groups.emplace_back();
          for (int64_t p : list) group.push_back({r, p});
        }
        break;
      case CollectiveOpGroupMode::kCrossReplicaAndPartition: {
        for (int64_t r : list) RETURN_IF_ERROR(CheckId(r, replicas, "replica"));
        std::vector<LogicalId>& group = groups.emplace_back();
        for (int64_t p = 0; p < partitions; ++p) {
          for (int64_t r : list) group.push_back({r, p});
        }
        break;
      }
      case CollectiveOpGroupMode::kFlattenedId: {
        std::vector<LogicalId>& group = groups.emplace_back();
        for (int64_t id : list) {
          RETURN_IF_ERROR(CheckId(id, replicas * partitions, "device"));
          group.push_back({id / partitions, id % partitions});
        }
        break;
      }
    }
  }
  return groups;
}

absl::StatusOr<Participants> ParticipantsOf(const LogicalId& me, CollectiveOpGroupMode mode,
                                            const std::vector<std::vector<int64_t>>& lists,
                                            const DeviceAssignment& assignment) {
  const int64_t replicas = assignment.replica_count(), partitions = assignment.partition_count();
  if (me.replica < 0 || me.replica >= replicas || me.partition < 0 || me.partition >= partitions) {
    return absl::InvalidArgumentError(absl::StrCat("(replica ", me.replica, ", partition ",
                                                   me.partition, ") is outside the ", replicas,
                                                   " x ", partitions, " device grid"));
  }
  ASSIGN_OR_RETURN(std::vector<std::vector<LogicalId>> groups,
                   ParticipantGroups(mode, lists, replicas, partitions));
  std::optional<Participants> found;
  for (std::vector<LogicalId>& group : groups) {
    for (size_t i = 0; i < group.size(); ++i) {
      if (!(group[i] == me)) continue;
      if (found.has_value()) {
        return absl::InvalidArgumentError(absl::StrCat("(replica ", me.replica, ", partition ",
                                                       me.partition, ") appears twice in ",
                                                       GroupModeName(mode), " replica_groups"));
      }
      found.emplace();
      found->logical = group;
      found->rank = static_cast<int64_t>(i);
    }
  }
  if (!found.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat("device (replica ", me.replica, ", partition ",
                                                   me.partition, ") is in no replica group (",
                                                   GroupModeName(mode), " mode)"));
  }
  for (const LogicalId& id : found->logical) found->devices.push_back(assignment.DeviceOf(id));
  return *std::move(found);
}

absl::StatusOr<Participants> ParticipantsOf(const HloInstruction& instr, const LogicalId& me,
                                            const DeviceAssignment& assignment) {
  ASSIGN_OR_RETURN(CollectiveOpGroupMode mode, GroupModeOf(instr));
  std::vector<std::vector<int64_t>> lists;
  if (instr.attrs().replica_groups.has_value()) {
    ASSIGN_OR_RETURN(lists, ExpandReplicaGroups(*instr.attrs().replica_groups));
  }
  return ParticipantsOf(me, mode, lists, assignment);
}

absl::StatusOr<PermutePeers> PermutePeersOf(const HloInstruction& instr, const LogicalId& me,
                                            const DeviceAssignment& assignment) {
  ASSIGN_OR_RETURN(CollectiveOpGroupMode mode, GroupModeOf(instr));
  return PermutePeersOf(me, mode, instr.attrs().source_target_pairs.value_or(SourceTargetPairs{}),
                        assignment);
}

absl::StatusOr<PermutePeers> PermutePeersOf(const LogicalId& me, CollectiveOpGroupMode mode,
                                            const SourceTargetPairs& pairs,
                                            const DeviceAssignment& assignment) {
  PermutePeers peers;
  ASSIGN_OR_RETURN(peers.row, ParticipantsOf(me, mode, {}, assignment));
  const int64_t bound = peers.row.size();
  for (const auto& [from, to] : pairs) {
    RETURN_IF_ERROR(CheckId(from, bound, "source"));
    RETURN_IF_ERROR(CheckId(to, bound, "target"));
    if (from == peers.row.rank) peers.targets.push_back(to);
    if (to != peers.row.rank) continue;
    if (peers.source.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("id ", to, " is the target of two source_target_pairs"));
    }
    peers.source = from;
  }
  return peers;
}

}  // namespace xlite::collectives
