// XLA's NamedSharding rules and text: meshes with named axes, the axes each
// dimension is split over, and the replicated/unreduced/manual axes
// (mesh_and_axis.cc, named_sharding.cc in XLA).
#ifndef XLITE_IR_NAMED_SHARDING_H_
#define XLITE_IR_NAMED_SHARDING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "xlite/ir/attributes.h"

namespace xlite {

// Devices in the mesh: the product of the axis sizes; 1 for a maximal mesh.
int64_t MeshDeviceCount(const ShardingMesh& mesh);
// The device ids in mesh order (row-major over the axes).
std::vector<int64_t> MeshDeviceIds(const ShardingMesh& mesh);
// Size of an axis reference: the sub-axis size, or the whole axis.
int64_t AxisRefSize(const MeshAxisRef& ref, const ShardingMesh& mesh);

// XLA's Mesh rules: positive sizes (whose product fits int64), unique axis
// names that are not integers, device ids a permutation of 0..n-1 that is not
// plain iota (iota is written by leaving device_ids out), an iota form whose
// reshape covers the mesh.
absl::Status ValidateShardingMesh(const ShardingMesh& mesh);

// XLA's VerifyNamedSharding rules: axis indices in range; sub-axes of size > 1
// strictly inside their axis, pre_size * size dividing it; no axis used twice
// or overlapping another (across dimensions, replicated, unreduced, manual);
// no two neighbours that could be merged into one; replicated, unreduced and
// manual axes sorted by axis, then pre-size. Also validates the mesh.
absl::Status ValidateNamedSharding(const NamedSharding& sharding);

// 'name', or 'name':(pre_size)size for a sub-axis.
std::string MeshAxisRefToString(const MeshAxisRef& ref, const ShardingMesh& mesh);
// mesh['a'=2,'b'=4], device_ids=(...) | maximal_mesh[device_id=N]
std::string ShardingMeshToString(const ShardingMesh& mesh);
// The whole {...} as XLA prints it; `metadata` holds each OpMetadata already
// printed as "{...}" (empty: none printed).
std::string NamedShardingToString(const NamedSharding& sharding,
                                  const std::vector<std::string>& metadata);

}  // namespace xlite

#endif  // XLITE_IR_NAMED_SHARDING_H_
