// Shardy's (`sdy` dialect) attributes: meshes, tensor shardings, manual axes,
// sharding rules and the collective parameters, with their MLIR text forms
// (as openxla/shardy prints them) and the conversion of a tensor sharding to
// the IR's HloSharding of kind kNamed (XLA's NamedSharding).
//
//   #sdy.mesh<["a"=2, "b"=4], device_ids=[...]>        mesh, maximal: <[], device_ids=[3]>
//   #sdy.sharding<@mesh, [{"a", ?}, {"b":(1)2}p1], replicated={"c"}, unreduced={"d"}>
//   #sdy.sharding_per_value<[<@mesh, [{}, {"a"}]>, ...]>
//   #sdy<manual_axes{"a", "b"}>
//   #sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=8, j=4, k=2} reduction={j}, custom>
//
// The same texts appear inside strings in HLO frontend attributes
// (xla.sdy.sharding="#sdy.sharding<...>") and StableHLO portable artifacts;
// ParseAttrText reads those too (C escapes such as \" are undone first).
#ifndef XLITE_TEXT_SDY_ATTRIBUTES_H_
#define XLITE_TEXT_SDY_ATTRIBUTES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "xlite/ir/attributes.h"
#include "xlite/text/cursor.h"

namespace xlite::sdy {

struct MeshAxis {
  std::string name;
  int64_t size = 0;
  bool operator==(const MeshAxis&) const = default;
};

// No axes: the empty mesh; no axes and one device id: a maximal mesh.
struct Mesh {
  std::vector<MeshAxis> axes;
  std::vector<int64_t> device_ids;  // empty: iota over the axes
  int64_t TotalSize() const;
  std::optional<int64_t> AxisIndex(absl::string_view name) const;
  bool operator==(const Mesh&) const = default;
};

// `(pre_size)size`: the sub-axis of size `size` after `pre_size` major parts.
struct SubAxisInfo {
  int64_t pre_size = 1;
  int64_t size = 1;
  bool operator==(const SubAxisInfo&) const = default;
};

struct AxisRef {
  std::string name;
  std::optional<SubAxisInfo> sub_axis;
  bool operator==(const AxisRef&) const = default;
};

struct DimSharding {
  std::vector<AxisRef> axes;
  bool is_closed = true;
  std::optional<int64_t> priority;
  bool operator==(const DimSharding&) const = default;
};

// unreduced=max{...} / min{...}; sum is the default and not spelled.
enum class ReductionOp { kSum, kMax, kMin };

struct TensorSharding {
  std::string mesh_name;     // @mesh_name, or empty with `mesh` inlined
  std::optional<Mesh> mesh;  // mesh<[...]> written in place of a name
  std::vector<DimSharding> dims;
  std::vector<AxisRef> replicated;
  std::vector<AxisRef> unreduced;
  ReductionOp unreduced_op = ReductionOp::kSum;
  bool operator==(const TensorSharding&) const = default;
};

struct ShardingPerValue {
  std::vector<TensorSharding> shardings;
  bool operator==(const ShardingPerValue&) const = default;
};

struct ManualAxes {
  std::vector<std::string> axes;
  bool operator==(const ManualAxes&) const = default;
};

struct AxisRefList {
  std::vector<AxisRef> axes;
  bool operator==(const AxisRefList&) const = default;
};

struct ListOfAxisRefLists {
  std::vector<AxisRefList> lists;
  bool operator==(const ListOfAxisRefLists&) const = default;
};

// The factors one tensor dimension maps to (empty: none).
struct DimMapping {
  std::vector<int64_t> factors;
  bool operator==(const DimMapping&) const = default;
};

struct TensorMapping {
  std::vector<DimMapping> dims;
  bool operator==(const TensorMapping&) const = default;
};

struct OpShardingRule {
  std::vector<int64_t> factor_sizes;
  std::vector<TensorMapping> operands;
  std::vector<TensorMapping> results;
  std::vector<int64_t> reduction;
  std::vector<int64_t> need_replication;
  std::vector<int64_t> permutation;
  std::vector<int64_t> blocked_propagation;
  bool is_custom = false;
  bool operator==(const OpShardingRule&) const = default;
};

// `{"a"}: 0->2` of sdy.all_to_all.
struct AllToAllParam {
  std::vector<AxisRef> axes;
  int64_t src_dim = 0;
  int64_t tgt_dim = 0;
  bool operator==(const AllToAllParam&) const = default;
};

struct AllToAllParamList {
  std::vector<AllToAllParam> params;
  bool operator==(const AllToAllParamList&) const = default;
};

// Any one sdy attribute.
using Attr = std::variant<Mesh, MeshAxis, SubAxisInfo, AxisRef, DimSharding, TensorSharding,
                          ShardingPerValue, ManualAxes, AxisRefList, ListOfAxisRefLists, DimMapping,
                          TensorMapping, OpShardingRule, AllToAllParam, AllToAllParamList>;

// The attribute's full text, canonically spelled (as Shardy prints it):
// "#sdy.sharding<@mesh, [{\"a\"}, {}]>", "#sdy<manual_axes{\"a\"}>".
std::string Print(const Attr& attr);
// Its mnemonic: "sharding", "manual_axes", "op_sharding_rule", ...
std::string Mnemonic(const Attr& attr);
// The factor name Shardy prints for factor `index`: i, j, ..., z, z_1, z_2, ...
std::string FactorName(int64_t index);

// Reads one full attribute ("#sdy..." ) at the cursor.
absl::StatusOr<Attr> ParseAttr(Cursor& cursor);
// Reads `text`, which must hold exactly one attribute; text escaped for an
// MLIR or HLO string (\" or \22 around axis names) is unescaped first.
absl::StatusOr<Attr> ParseAttrText(absl::string_view text);
// ParseAttrText, requiring the kind `T`; `what` names it in the error.
template <typename T>
absl::StatusOr<T> ParseAttrTextAs(absl::string_view text, absl::string_view what) {
  absl::StatusOr<Attr> a = ParseAttrText(text);
  if (!a.ok()) return a.status();
  if (T* v = std::get_if<T>(&*a)) return std::move(*v);
  return absl::InvalidArgumentError(absl::StrCat("expected ", what, ", got ", Print(*a)));
}

// The stripped forms of the sdy ops' custom syntax.
absl::StatusOr<TensorSharding> ParseStrippedSharding(Cursor& cursor);        // <@m, [...]>
absl::StatusOr<ShardingPerValue> ParseStrippedShardingList(Cursor& cursor);  // [<..>, ..]
absl::StatusOr<Mesh> ParseStrippedMesh(Cursor& cursor);                      // <["a"=2]>
absl::StatusOr<AxisRefList> ParseAxisRefList(Cursor& cursor);                // {"a", "b"}
absl::StatusOr<ManualAxes> ParseManualAxes(Cursor& cursor);                  // {"a", "b"}
absl::StatusOr<ListOfAxisRefLists> ParseListOfAxisRefLists(Cursor& cursor);  // [{"a"}, {}]
absl::StatusOr<AllToAllParamList> ParseAllToAllParamList(Cursor& cursor);    // [{"a"}: 0->1]

// ---- Meshes of a program and the conversion to HLO shardings.

// Mesh symbols (sdy.mesh ops, or the xla.sdy.meshes frontend attribute).
using MeshTable = std::map<std::string, Mesh>;

// `{mesh = #sdy.mesh<[...]>, other = #sdy.mesh<[...]>}`: the xla.sdy.meshes
// frontend attribute's value (escaped or not).
absl::StatusOr<MeshTable> ParseMeshTable(absl::string_view text);
std::string PrintMeshTable(const MeshTable& meshes);

// The mesh a sharding is bound to; NotFound names a missing symbol.
absl::StatusOr<Mesh> MeshOf(const TensorSharding& sharding, const MeshTable& meshes);

// Checks the sharding against its mesh with XLA's NamedSharding rules
// (ValidateNamedSharding: axes exist, sub-axes fit, no part of an axis used
// twice, replicated/unreduced axes sorted, no mergeable neighbours) and, when
// `dims` is given, that there is one dimension sharding per dimension. Errors
// name the sharding.
absl::Status Verify(const TensorSharding& sharding, const MeshTable& meshes,
                    const std::vector<int64_t>* dims = nullptr);

// The mesh as XLA's: iota device ids are left out (as XLA writes that mesh),
// no axes and one device id is a maximal mesh.
ShardingMesh ToShardingMesh(const Mesh& mesh);

// The HLO sharding of a value with this sdy sharding, as XLA's named
// shardings (hlo sharding v3) spell it: kNamed with the mesh, the dimension
// axes (all-empty dimensions dropped), replicated and unreduced axes and the
// unreduced reduction; priorities are not part of it. With `manual_axes`, the
// value is local to those axes: they move out of the dimensions and
// replicated axes into NamedSharding::manual_axes. Checked as Verify checks,
// and again with the manual axes (in mesh order, none also unreduced).
absl::StatusOr<HloSharding> ToHloSharding(const TensorSharding& sharding, const MeshTable& meshes,
                                          const std::vector<std::string>& manual_axes = {});

// The dimensions of a value inside a manual computation: `global_dims` split
// over the manual axes of `sharding`, which must be whole axes before the
// free ones in each dimension and divide it. The sharding is checked as
// Verify checks it.
absl::StatusOr<std::vector<int64_t>> LocalDimensions(const TensorSharding& sharding,
                                                     const Mesh& mesh,
                                                     const std::vector<std::string>& manual_axes,
                                                     const std::vector<int64_t>& global_dims);

}  // namespace xlite::sdy

#endif  // XLITE_TEXT_SDY_ATTRIBUTES_H_
