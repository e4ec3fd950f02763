#include "xlite/verify/sharding_rules.h"

#include "absl/strings/str_cat.h"
#include "xlite/ir/named_sharding.h"

namespace xlite {
namespace {

absl::Status CheckNamed(const NamedSharding& n, const Shape& shape, const ModuleConfig& config) {
  if (absl::Status s = ValidateNamedSharding(n); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("invalid named sharding: ", s.message()));
  }
  const int64_t partitions = config.num_partitions;
  if (n.mesh.maximal_device) {
    if (*n.mesh.maximal_device >= partitions) {
      return absl::InvalidArgumentError(
          absl::StrCat("sharding maximal_mesh[device_id=", *n.mesh.maximal_device,
                       "] names a device outside the module's num_partitions=", partitions));
    }
  } else if (const int64_t devices = MeshDeviceCount(n.mesh);
             devices > 1 && devices != partitions) {
    return absl::InvalidArgumentError(
        absl::StrCat("sharding mesh ", ShardingMeshToString(n.mesh), " has ", devices,
                     " devices but the module has num_partitions=", partitions));
  }
  if (!n.dims.empty() && shape.IsArray() && static_cast<int64_t>(n.dims.size()) != shape.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("named sharding shards ", n.dims.size(),
                                                   " dimensions but ", shape.ToString(false),
                                                   " has rank ", shape.rank()));
  }
  return absl::OkStatus();
}

absl::Status CheckOne(const HloSharding& s, const Shape& shape, const ModuleConfig& config) {
  if (s.kind == HloSharding::Kind::kNamed && s.named) return CheckNamed(*s.named, shape, config);
  if (s.kind == HloSharding::Kind::kTuple) {
    // Tuple shardings match the tuple's elements when the counts agree (XLA
    // also accepts one entry per leaf, which it normalizes).
    const bool per_element = shape.IsTuple() && static_cast<int64_t>(s.tuple_elements.size()) ==
                                                    shape.tuple_shapes_size();
    for (size_t i = 0; i < s.tuple_elements.size(); ++i) {
      const Shape& element = per_element ? shape.tuple_shapes(i) : Shape();
      if (absl::Status st = CheckOne(s.tuple_elements[i], element, config); !st.ok()) return st;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckSharding(const HloInstruction& instr, const ModuleConfig& config) {
  if (!instr.attrs().sharding) return absl::OkStatus();
  return CheckOne(*instr.attrs().sharding, instr.shape(), config);
}

}  // namespace xlite
