#include "xlite/ir/named_sharding.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace xlite {
namespace {

absl::Status Invalid(absl::string_view message) { return absl::InvalidArgumentError(message); }

int64_t PreSize(const MeshAxisRef& r) { return r.size ? r.pre_size : 1; }

bool IsSubAxis(const MeshAxisRef& r) { return r.size != 0; }

// XLA's AxisRef::CanCoexistWithoutOverlap.
bool CanCoexist(const MeshAxisRef& a, const MeshAxisRef& b) {
  if (a.axis != b.axis) return true;
  if (!IsSubAxis(a) || !IsSubAxis(b)) return false;
  const int64_t a_next = a.pre_size * a.size, b_next = b.pre_size * b.size;
  if (a_next > b.pre_size && b_next > a.pre_size) return false;  // overlap
  return std::max(a.pre_size, b.pre_size) % std::min(a_next, b_next) == 0;
}

// XLA's AxisRef::CanMerge: two sub-axes of one axis, b right after a.
bool CanMerge(const MeshAxisRef& a, const MeshAxisRef& b) {
  return a.axis == b.axis && IsSubAxis(a) && IsSubAxis(b) && a.pre_size * a.size == b.pre_size;
}

absl::Status ValidateAxisRef(const MeshAxisRef& r, const ShardingMesh& mesh) {
  const int64_t n = static_cast<int64_t>(mesh.axis_names.size());
  if (r.axis < 0 || r.axis >= n) {
    return Invalid(
        absl::StrCat("axis index ", r.axis, " is out of range for a mesh with ", n, " axes"));
  }
  if (!IsSubAxis(r)) return absl::OkStatus();
  const std::string name = MeshAxisRefToString(r, mesh);
  const int64_t axis_size = mesh.axis_sizes[r.axis];
  if (r.pre_size < 1) {
    return Invalid(absl::StrCat("sub-axis ", name, " must have a pre-size of at least 1"));
  }
  if (r.size <= 1) return Invalid(absl::StrCat("sub-axis ", name, " must have a size above 1"));
  if (r.size >= axis_size) {
    return Invalid(
        absl::StrCat("sub-axis ", name, " must be smaller than its axis (size ", axis_size, ")"));
  }
  // pre_size * size divides the axis; by division, as the product may overflow.
  if (axis_size % r.size != 0 || (axis_size / r.size) % r.pre_size != 0) {
    return Invalid(absl::StrCat("sub-axis ", name, ": pre-size ", r.pre_size, " times size ",
                                r.size, " must divide the axis size ", axis_size));
  }
  return absl::OkStatus();
}

// a * b, or false when the product does not fit int64 (both positive).
bool MultiplyPositive(int64_t a, int64_t b, int64_t& product) {
  if (a > std::numeric_limits<int64_t>::max() / b) return false;
  product = a * b;
  return true;
}

}  // namespace

int64_t MeshDeviceCount(const ShardingMesh& mesh) {
  if (mesh.maximal_device) return 1;
  int64_t n = 1;
  for (int64_t s : mesh.axis_sizes) n *= s;
  return n;
}

std::vector<int64_t> MeshDeviceIds(const ShardingMesh& mesh) {
  if (mesh.maximal_device) return {*mesh.maximal_device};
  if (!mesh.device_ids.empty()) return mesh.device_ids;
  const int64_t n = MeshDeviceCount(mesh);
  std::vector<int64_t> ids(n);
  std::iota(ids.begin(), ids.end(), 0);
  const std::vector<int64_t>& dims = mesh.device_ids_iota_reshape;
  const std::vector<int64_t>& perm = mesh.device_ids_iota_transpose;
  if (dims.empty() || perm.empty()) return ids;
  // Transpose the iota reshaped to `dims` by `perm`.
  std::vector<int64_t> out_dims(perm.size()), strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  for (size_t i = 0; i < perm.size(); ++i) out_dims[i] = dims[perm[i]];
  std::vector<int64_t> index(perm.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t src = 0;
    for (size_t i = 0; i < perm.size(); ++i) src += index[i] * strides[perm[i]];
    ids[k] = src;
    for (int64_t i = static_cast<int64_t>(index.size()) - 1; i >= 0; --i) {
      if (++index[i] < out_dims[i]) break;
      index[i] = 0;
    }
  }
  return ids;
}

int64_t AxisRefSize(const MeshAxisRef& ref, const ShardingMesh& mesh) {
  return ref.size ? ref.size : mesh.axis_sizes[ref.axis];
}

absl::Status ValidateShardingMesh(const ShardingMesh& mesh) {
  if (mesh.maximal_device) {
    if (*mesh.maximal_device < 0) {
      return Invalid(
          absl::StrCat("maximal mesh device id ", *mesh.maximal_device, " must be non-negative"));
    }
    if (!mesh.axis_names.empty() || !mesh.axis_sizes.empty() || !mesh.device_ids.empty() ||
        !mesh.device_ids_iota_reshape.empty()) {
      return Invalid("a maximal mesh has no axes or device list");
    }
    return absl::OkStatus();
  }
  if (mesh.axis_names.size() != mesh.axis_sizes.size()) {
    return Invalid("mesh axis names and sizes differ in number");
  }
  absl::flat_hash_set<std::string> names;
  for (size_t i = 0; i < mesh.axis_names.size(); ++i) {
    const std::string& name = mesh.axis_names[i];
    if (!names.insert(name).second) {
      return Invalid(absl::StrCat("mesh axis name '", name, "' is used twice"));
    }
    int64_t as_int;
    if (absl::SimpleAtoi(name, &as_int)) {
      return Invalid(absl::StrCat("mesh axis name '", name,
                                  "' is an integer, which would read as an axis index"));
    }
    if (mesh.axis_sizes[i] <= 0) {
      return Invalid(absl::StrCat("mesh axis '", name, "' must have a positive size"));
    }
  }
  int64_t n = 1;
  for (int64_t size : mesh.axis_sizes) {
    if (!MultiplyPositive(n, size, n)) {
      return Invalid("mesh has more devices than a 64-bit count holds");
    }
  }
  if (!mesh.device_ids.empty()) {
    if (static_cast<int64_t>(mesh.device_ids.size()) != n) {
      return Invalid(
          absl::StrCat("mesh has ", n, " devices but device_ids lists ", mesh.device_ids.size()));
    }
    std::vector<int64_t> sorted = mesh.device_ids;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < n; ++i) {
      if (sorted[i] != i) {
        return Invalid(absl::StrCat("mesh device_ids must be a permutation of 0..", n - 1));
      }
    }
    if (sorted == mesh.device_ids) {
      return Invalid("mesh device_ids are in iota order; XLA writes that mesh without device_ids");
    }
  }
  if (!mesh.device_ids_iota_reshape.empty()) {
    if (!mesh.device_ids.empty()) return Invalid("mesh has both a device id list and an iota");
    int64_t product = 1;
    for (int64_t d : mesh.device_ids_iota_reshape) {
      if (d <= 0) return Invalid("mesh device_ids iota dimensions must be positive");
      if (!MultiplyPositive(product, d, product)) {
        return Invalid("mesh device_ids iota covers more devices than a 64-bit count holds");
      }
    }
    if (product != n) {
      return Invalid(
          absl::StrCat("mesh has ", n, " devices but its device_ids iota covers ", product));
    }
    const std::vector<int64_t>& perm = mesh.device_ids_iota_transpose;
    if (!perm.empty()) {
      std::vector<int64_t> sorted = perm;
      std::sort(sorted.begin(), sorted.end());
      for (size_t i = 0; i < sorted.size(); ++i) {
        if (sorted[i] != static_cast<int64_t>(i) ||
            perm.size() != mesh.device_ids_iota_reshape.size()) {
          return Invalid("mesh device_ids iota transpose must permute its reshape dimensions");
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateNamedSharding(const NamedSharding& s) {
  if (absl::Status st = ValidateShardingMesh(s.mesh); !st.ok()) return st;
  std::vector<MeshAxisRef> seen;
  auto track = [&](const MeshAxisRef& r) -> absl::Status {
    if (absl::Status st = ValidateAxisRef(r, s.mesh); !st.ok()) return st;
    for (const MeshAxisRef& o : seen) {
      if (!CanCoexist(r, o)) {
        return Invalid(absl::StrCat("axis ", MeshAxisRefToString(r, s.mesh), " overlaps ",
                                    MeshAxisRefToString(o, s.mesh),
                                    "; each part of a mesh axis may be used once"));
      }
    }
    seen.push_back(r);
    return absl::OkStatus();
  };
  for (size_t d = 0; d < s.dims.size(); ++d) {
    const std::vector<MeshAxisRef>& axes = s.dims[d].axes;
    for (size_t i = 0; i < axes.size(); ++i) {
      if (absl::Status st = track(axes[i]); !st.ok()) return st;
      if (i > 0 && CanMerge(axes[i - 1], axes[i])) {
        return Invalid(absl::StrCat("dimension ", d, " lists ",
                                    MeshAxisRefToString(axes[i - 1], s.mesh), ", ",
                                    MeshAxisRefToString(axes[i], s.mesh),
                                    ", which merge into one sub-axis and must be written so"));
      }
    }
  }
  auto sorted_list = [&](const std::vector<MeshAxisRef>& axes,
                         absl::string_view what) -> absl::Status {
    auto key = [&](const MeshAxisRef& r) {
      return std::make_tuple(r.axis, PreSize(r), AxisRefSize(r, s.mesh));
    };
    for (size_t i = 0; i < axes.size(); ++i) {
      if (absl::Status st = track(axes[i]); !st.ok()) return st;
      if (i == 0) continue;
      if (key(axes[i]) < key(axes[i - 1])) {
        return Invalid(absl::StrCat(what,
                                    " axes must be sorted by mesh axis, then sub-axis "
                                    "pre-size; ",
                                    MeshAxisRefToString(axes[i], s.mesh), " comes after ",
                                    MeshAxisRefToString(axes[i - 1], s.mesh)));
      }
      if (CanMerge(axes[i - 1], axes[i])) {
        return Invalid(absl::StrCat(what, " axes ", MeshAxisRefToString(axes[i - 1], s.mesh), ", ",
                                    MeshAxisRefToString(axes[i], s.mesh),
                                    " merge into one sub-axis and must be written so"));
      }
    }
    return absl::OkStatus();
  };
  if (absl::Status st = sorted_list(s.replicated_axes, "replicated"); !st.ok()) return st;
  if (absl::Status st = sorted_list(s.unreduced_axes, "unreduced"); !st.ok()) return st;
  if (absl::Status st = sorted_list(s.manual_axes, "manual"); !st.ok()) return st;
  if (s.mesh.maximal_device && (!s.dims.empty() || !s.replicated_axes.empty() ||
                                !s.unreduced_axes.empty() || !s.manual_axes.empty())) {
    return Invalid("a maximal mesh sharding has no dimension or axis lists");
  }
  return absl::OkStatus();
}

std::string MeshAxisRefToString(const MeshAxisRef& ref, const ShardingMesh& mesh) {
  std::string name = ref.axis >= 0 && ref.axis < static_cast<int64_t>(mesh.axis_names.size())
                         ? absl::StrCat("'", mesh.axis_names[ref.axis], "'")
                         : absl::StrCat(ref.axis);
  if (IsSubAxis(ref)) absl::StrAppend(&name, ":(", ref.pre_size, ")", ref.size);
  return name;
}

std::string ShardingMeshToString(const ShardingMesh& mesh) {
  if (mesh.maximal_device)
    return absl::StrCat("maximal_mesh[device_id=", *mesh.maximal_device, "]");
  std::vector<std::string> axes;
  for (size_t i = 0; i < mesh.axis_names.size(); ++i) {
    axes.push_back(absl::StrCat("'", mesh.axis_names[i], "'=", mesh.axis_sizes[i]));
  }
  std::string out = absl::StrCat("mesh[", absl::StrJoin(axes, ","), "]");
  if (!mesh.device_ids.empty()) {
    absl::StrAppend(&out, ", device_ids=(", absl::StrJoin(mesh.device_ids, ","), ")");
  } else if (!mesh.device_ids_iota_reshape.empty()) {
    absl::StrAppend(&out, ", device_ids=([", absl::StrJoin(mesh.device_ids_iota_reshape, ","), "]");
    if (!mesh.device_ids_iota_transpose.empty()) {
      absl::StrAppend(&out, "T(", absl::StrJoin(mesh.device_ids_iota_transpose, ","), ")");
    }
    out += ")";
  }
  return out;
}

std::string NamedShardingToString(const NamedSharding& s,
                                  const std::vector<std::string>& metadata) {
  auto axis_list = [&](const std::vector<MeshAxisRef>& axes) {
    std::vector<std::string> v;
    for (const MeshAxisRef& r : axes) v.push_back(MeshAxisRefToString(r, s.mesh));
    return absl::StrCat("{", absl::StrJoin(v, ", "), "}");
  };
  auto all_axes_in_order = [&](const std::vector<MeshAxisRef>& axes) {
    if (axes.size() != s.mesh.axis_names.size()) return false;
    for (size_t i = 0; i < axes.size(); ++i) {
      if (axes[i].axis != static_cast<int64_t>(i) || IsSubAxis(axes[i])) return false;
    }
    return true;
  };
  static constexpr const char* kReduction[] = {"", "max", "min"};
  const char* reduction = kReduction[static_cast<int>(s.unreduced_reduction)];
  std::string out = absl::StrCat("{", ShardingMeshToString(s.mesh));
  const bool no_dims = s.dims.empty();
  const bool no_repl = s.replicated_axes.empty(), no_unred = s.unreduced_axes.empty(),
             no_manual = s.manual_axes.empty();
  if (s.mesh.maximal_device) {
    // maximal_mesh[device_id=N] says it all.
  } else if (no_dims && no_repl && no_unred && no_manual) {
    out += ", replicated";
  } else if (no_dims && no_repl && no_manual && all_axes_in_order(s.unreduced_axes)) {
    absl::StrAppend(&out, ", unreduced",
                    s.unreduced_reduction == NamedSharding::Reduction::kSum
                        ? ""
                        : absl::StrCat("=", reduction, axis_list(s.unreduced_axes)));
  } else if (no_dims && no_repl && no_unred && all_axes_in_order(s.manual_axes)) {
    out += ", manual";
  } else {
    std::vector<std::string> dims;
    for (const NamedSharding::Dim& d : s.dims) {
      std::vector<std::string> v;
      for (const MeshAxisRef& r : d.axes) v.push_back(MeshAxisRefToString(r, s.mesh));
      if (!d.is_closed) v.push_back("?");
      dims.push_back(absl::StrCat("{", absl::StrJoin(v, ", "), "}"));
    }
    absl::StrAppend(&out, ", [", absl::StrJoin(dims, ", "), "]");
    if (!no_repl) absl::StrAppend(&out, ", replicated=", axis_list(s.replicated_axes));
    if (!no_unred) {
      absl::StrAppend(&out, ", unreduced=", reduction, axis_list(s.unreduced_axes));
    }
    if (!no_manual) absl::StrAppend(&out, ", manual=", axis_list(s.manual_axes));
  }
  if (!metadata.empty()) absl::StrAppend(&out, ", metadata={", absl::StrJoin(metadata, ", "), "}");
  return out + "}";
}

}  // namespace xlite
