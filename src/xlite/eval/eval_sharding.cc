// Sharding annotations and Shardy's manual computations.
//
// xlite runs a sharded program as one logical device: annotations ("Sharding",
// "xla.sdy.FuncResultSharding", "xla.sdy.PropagationBarrier") pass their
// operand through and "xla.sdy.ShardingGroup" yields nothing. A manual
// computation (shard_map) is different: its body is written per device, with
// collectives between devices. Its HLO forms are
//
//   xla.sdy.GlobalToLocalShape -> call(body) -> xla.sdy.LocalToGlobalShape
//       (XLA's sdy round trip; xla.sdy.in_shardings / out_shardings /
//        manual_axes frontend attributes, meshes in the module's xla.sdy.meshes)
//   SPMDFullToShardShape -> call(body) -> [copy] -> SPMDShardToFullShape
//       (named shardings with manual axes on the instructions)
//
// The boundary custom calls pass the global values through; the call slices
// each operand by its in-sharding over the manual axes, runs the body once per
// device of the mesh (partition id = the device's id, collectives across those
// devices), and assembles the global results by the out-shardings.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "xlite/eval/evaluator.h"
#include "xlite/ir/module.h"
#include "xlite/ir/named_sharding.h"
#include "xlite/support/status.h"
#include "xlite/text/sdy_attributes.h"

namespace xlite::eval {
namespace {

// Manual computations on more simulated devices than this are refused.
constexpr int64_t kMaxDevices = 4096;

constexpr char kGlobalToLocal[] = "xla.sdy.GlobalToLocalShape";
constexpr char kLocalToGlobal[] = "xla.sdy.LocalToGlobalShape";
constexpr char kFullToShard[] = "SPMDFullToShardShape";
constexpr char kShardToFull[] = "SPMDShardToFullShape";

bool IsCustomCall(const HloInstruction* h, absl::string_view target) {
  return h->opcode() == HloOpcode::kCustomCall && h->attrs().custom_call_target == target;
}

bool IsEntryBoundary(const HloInstruction* h) {
  return IsCustomCall(h, kGlobalToLocal) || IsCustomCall(h, kFullToShard);
}

// Looks through get-tuple-element to the instruction that makes the value.
const HloInstruction* Source(const HloInstruction* h) {
  while (h->opcode() == HloOpcode::kGetTupleElement) h = h->operand(0);
  return h;
}

bool IsManualBodyCall(const HloInstruction& call) {
  if (call.opcode() != HloOpcode::kCall || call.called_computations().size() != 1) return false;
  if (call.attrs().frontend_attributes.contains("xla.sdy.manual_axes")) return true;
  const std::string& callee = call.called_computations()[0]->name();
  if (absl::StartsWith(callee, "xla.sdy.manual_computation_body") ||
      absl::StartsWith(callee, "xla.sdy.inlinable_manual_computation_body")) {
    return true;
  }
  for (const HloInstruction* op : call.operands()) {
    if (IsEntryBoundary(Source(op))) return true;
  }
  return false;
}

// The instructions that read `h`'s value, through get-tuple-element and copy.
std::vector<const HloInstruction*> Readers(const HloInstruction* h) {
  std::vector<const HloInstruction*> out;
  for (const HloInstruction* user : h->users()) {
    if (user->opcode() == HloOpcode::kGetTupleElement || user->opcode() == HloOpcode::kCopy) {
      for (const HloInstruction* r : Readers(user)) out.push_back(r);
    } else {
      out.push_back(user);
    }
  }
  return out;
}

// ---------------------------------------------------------------- the spec

// What slicing and assembling need, from either HLO form.
struct ManualSpec {
  sdy::Mesh mesh;
  sdy::MeshTable meshes;  // mesh symbol table for the shardings
  std::vector<std::string> manual_axes;
  std::vector<sdy::TensorSharding> in;
  std::vector<sdy::TensorSharding> out;
};

absl::StatusOr<std::string> FrontendAttribute(const HloInstruction& h, absl::string_view key) {
  auto it = h.attrs().frontend_attributes.find(std::string(key));
  if (it == h.attrs().frontend_attributes.end()) {
    return absl::NotFoundError(absl::StrCat("'", h.name(), "' has no ", key));
  }
  return it->second;
}

// The first of `candidates` carrying frontend attribute `key`.
absl::StatusOr<std::string> FindAttribute(const std::vector<const HloInstruction*>& candidates,
                                          absl::string_view key) {
  for (const HloInstruction* h : candidates) {
    absl::StatusOr<std::string> v = FrontendAttribute(*h, key);
    if (v.ok()) return v;
  }
  return absl::InvalidArgumentError(absl::StrCat("manual computation without ", key));
}

// XLA's sdy round trip: shardings in frontend attributes.
absl::StatusOr<ManualSpec> SpecFromFrontendAttributes(const HloInstruction& call) {
  std::vector<const HloInstruction*> candidates = {&call};
  for (const HloInstruction* op : call.operands()) candidates.push_back(Source(op));
  for (const HloInstruction* r : Readers(&call)) candidates.push_back(r);
  ManualSpec spec;
  const HloModule* module = call.parent() ? call.parent()->parent() : nullptr;
  if (module != nullptr) {
    auto it = module->config().frontend_attributes.find("xla.sdy.meshes");
    if (it != module->config().frontend_attributes.end()) {
      ASSIGN_OR_RETURN(spec.meshes, sdy::ParseMeshTable(it->second));
    }
  }
  ASSIGN_OR_RETURN(std::string manual_text, FindAttribute(candidates, "xla.sdy.manual_axes"));
  ASSIGN_OR_RETURN(sdy::ManualAxes manual,
                   sdy::ParseAttrTextAs<sdy::ManualAxes>(manual_text, "#sdy<manual_axes{...}>"));
  spec.manual_axes = manual.axes;
  if (!call.operands().empty()) {
    ASSIGN_OR_RETURN(std::string in, FindAttribute(candidates, "xla.sdy.in_shardings"));
    ASSIGN_OR_RETURN(sdy::ShardingPerValue v,
                     sdy::ParseAttrTextAs<sdy::ShardingPerValue>(in, "#sdy.sharding_per_value"));
    spec.in = v.shardings;
  }
  const bool has_results = !(call.shape().IsTuple() && call.shape().tuple_shapes_size() == 0);
  if (has_results) {
    ASSIGN_OR_RETURN(std::string out, FindAttribute(candidates, "xla.sdy.out_shardings"));
    ASSIGN_OR_RETURN(sdy::ShardingPerValue v,
                     sdy::ParseAttrTextAs<sdy::ShardingPerValue>(out, "#sdy.sharding_per_value"));
    spec.out = v.shardings;
  }
  const sdy::TensorSharding* any = !spec.in.empty()    ? &spec.in[0]
                                   : !spec.out.empty() ? &spec.out[0]
                                                       : nullptr;
  if (any == nullptr) return absl::InvalidArgumentError("manual computation without values");
  ASSIGN_OR_RETURN(spec.mesh, sdy::MeshOf(*any, spec.meshes));
  for (const auto* list : {&spec.in, &spec.out}) {
    for (const sdy::TensorSharding& s : *list) {
      ASSIGN_OR_RETURN(sdy::Mesh mesh, sdy::MeshOf(s, spec.meshes));
      if (!(mesh == spec.mesh)) {
        return absl::InvalidArgumentError(
            absl::StrCat("the shardings of a manual computation must share one mesh; ",
                         sdy::Print(s), " is on another mesh than ", sdy::Print(*any)));
      }
    }
  }
  return spec;
}

// A named HLO sharding of a rank-`rank` value as the sdy sharding it came
// from (a replicated one keeps no dimensions), its mesh inlined.
absl::StatusOr<sdy::TensorSharding> FromNamed(const HloSharding& h, int64_t rank) {
  if (h.kind != HloSharding::Kind::kNamed || !h.named) {
    return absl::UnimplementedError(
        "a manual computation whose shardings are not named (mesh) shardings is unsupported");
  }
  const NamedSharding& n = *h.named;
  sdy::Mesh mesh;
  if (n.mesh.axis_names.size() != n.mesh.axis_sizes.size()) {
    return absl::InvalidArgumentError("mesh with different numbers of axis names and sizes");
  }
  int64_t total = 1;
  for (size_t i = 0; i < n.mesh.axis_names.size(); ++i) {
    const int64_t size = n.mesh.axis_sizes[i];
    if (size < 1 || size > kMaxDevices || total * size > kMaxDevices) {
      return absl::UnimplementedError(absl::StrCat("a mesh of more than ", kMaxDevices,
                                                   " devices (or an axis of size ", size,
                                                   ") is unsupported"));
    }
    total *= size;
    mesh.axes.push_back({n.mesh.axis_names[i], size});
  }
  // Listed or iota-transposed (device_ids=([4,2]T(1,0))) device ids alike.
  if (!n.mesh.maximal_device) mesh.device_ids = MeshDeviceIds(n.mesh);
  auto axis = [&](const MeshAxisRef& r) -> absl::StatusOr<sdy::AxisRef> {
    if (r.axis < 0 || r.axis >= static_cast<int64_t>(mesh.axes.size())) {
      return absl::InvalidArgumentError("mesh axis index out of range");
    }
    sdy::AxisRef a{mesh.axes[r.axis].name, std::nullopt};
    if (r.size != 0) a.sub_axis = sdy::SubAxisInfo{r.pre_size, r.size};
    return a;
  };
  sdy::TensorSharding t;
  t.mesh = mesh;
  for (const NamedSharding::Dim& d : n.dims) {
    sdy::DimSharding dim;
    dim.is_closed = d.is_closed;
    for (const MeshAxisRef& r : d.axes) {
      ASSIGN_OR_RETURN(sdy::AxisRef a, axis(r));
      dim.axes.push_back(std::move(a));
    }
    t.dims.push_back(std::move(dim));
  }
  if (t.dims.empty()) t.dims.resize(rank);
  return t;
}

// The first sharding read sets the computation's mesh; the others must share it.
absl::Status OnOneMesh(const sdy::TensorSharding& t, ManualSpec& spec) {
  if (spec.in.empty() && spec.out.empty()) {
    spec.mesh = *t.mesh;
    return absl::OkStatus();
  }
  if (*t.mesh == spec.mesh) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "the shardings of a manual computation must share one mesh; ", sdy::Print(t),
      " is on another mesh than ", sdy::Print(spec.in.empty() ? spec.out[0] : spec.in[0])));
}

// SPMDFullToShardShape / SPMDShardToFullShape: the global shardings are on
// the value entering FullToShard and on ShardToFull; the manual axes on
// FullToShard (or the call).
absl::StatusOr<ManualSpec> SpecFromNamedShardings(const HloInstruction& call) {
  ManualSpec spec;
  const HloSharding* manual = nullptr;
  for (const HloInstruction* op : call.operands()) {
    const HloInstruction* entry = Source(op);
    if (!IsCustomCall(entry, kFullToShard) || entry->operand_count() != 1) {
      return absl::UnimplementedError(absl::StrCat("manual computation call '", call.name(),
                                                   "' with an operand not from ", kFullToShard));
    }
    const HloInstruction* global = entry->operand(0);
    if (!global->attrs().sharding) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", global->name(), "' entering a manual computation has no sharding"));
    }
    ASSIGN_OR_RETURN(sdy::TensorSharding t,
                     FromNamed(*global->attrs().sharding, global->shape().rank()));
    RETURN_IF_ERROR(OnOneMesh(t, spec));
    spec.in.push_back(std::move(t));
    if (entry->attrs().sharding) manual = &*entry->attrs().sharding;
  }
  if (manual == nullptr && call.attrs().sharding) manual = &*call.attrs().sharding;
  if (manual != nullptr && manual->kind == HloSharding::Kind::kTuple &&
      !manual->tuple_elements.empty()) {
    manual = &manual->tuple_elements[0];
  }
  if (manual == nullptr || manual->kind != HloSharding::Kind::kNamed || !manual->named) {
    return absl::UnimplementedError(
        "a manual computation without named manual shardings is unsupported");
  }
  for (const MeshAxisRef& r : manual->named->manual_axes) {
    if (r.axis < 0 || r.axis >= static_cast<int64_t>(manual->named->mesh.axis_names.size())) {
      return absl::InvalidArgumentError("manual axis index out of range");
    }
    spec.manual_axes.push_back(manual->named->mesh.axis_names[r.axis]);
  }
  const std::vector<const HloInstruction*> readers = Readers(&call);
  const int64_t results = call.shape().IsTuple() ? call.shape().tuple_shapes_size() : int64_t{1};
  spec.out.resize(results);
  std::vector<bool> seen(results, false);
  for (const HloInstruction* r : readers) {
    if (!IsCustomCall(r, kShardToFull) || !r->attrs().sharding || r->operand_count() != 1) {
      return absl::UnimplementedError(absl::StrCat("manual computation call '", call.name(),
                                                   "' read by '", r->name(), "', not ",
                                                   kShardToFull, " of one operand"));
    }
    // Which result: the tuple index on the way (none for one result); the
    // way is get-tuple-elements and copies, as Readers found it.
    int64_t index = 0;
    for (const HloInstruction* h = r->operand(0); h != &call; h = h->operand(0)) {
      if (h->opcode() == HloOpcode::kGetTupleElement) index = h->attrs().tuple_index;
    }
    if (index < 0 || index >= results) return absl::InvalidArgumentError("bad result index");
    ASSIGN_OR_RETURN(spec.out[index], FromNamed(*r->attrs().sharding, r->shape().rank()));
    RETURN_IF_ERROR(OnOneMesh(spec.out[index], spec));
    seen[index] = true;
  }
  for (int64_t i = 0; i < results; ++i) {
    if (!seen[i]) {
      return absl::UnimplementedError(absl::StrCat("result ", i, " of manual computation call '",
                                                   call.name(), "' does not reach an ",
                                                   kShardToFull));
    }
  }
  spec.meshes.clear();
  return spec;
}

// ---------------------------------------------------------------- slicing

// Device position p's coordinate along each mesh axis (row-major).
std::vector<int64_t> Coordinates(const sdy::Mesh& mesh, int64_t p) {
  std::vector<int64_t> c(mesh.axes.size());
  for (int64_t a = static_cast<int64_t>(mesh.axes.size()) - 1; a >= 0; --a) {
    c[a] = p % mesh.axes[a].size;
    p /= mesh.axes[a].size;
  }
  return c;
}

// For each dimension, the shard index and count over the manual axes of its
// sharding (major first), at the given device coordinates.
struct Block {
  std::vector<int64_t> index, count;
};

absl::StatusOr<Block> BlockOf(const sdy::TensorSharding& s, const sdy::Mesh& mesh,
                              const std::vector<std::string>& manual,
                              const std::vector<int64_t>& coords) {
  Block b;
  for (const sdy::DimSharding& d : s.dims) {
    int64_t index = 0, count = 1;
    for (const sdy::AxisRef& a : d.axes) {
      if (std::find(manual.begin(), manual.end(), a.name) == manual.end()) continue;
      std::optional<int64_t> axis = mesh.AxisIndex(a.name);
      if (!axis) return absl::InvalidArgumentError(absl::StrCat("unknown axis ", a.name));
      index = index * mesh.axes[*axis].size + coords[*axis];
      count *= mesh.axes[*axis].size;
    }
    b.index.push_back(index);
    b.count.push_back(count);
  }
  return b;
}

// Copies the block of `global` at `block` (local dims `local`) into `out`
// (to_local) or the other way.
void CopyBlock(Literal& global, Literal& local, const Block& block, bool to_local) {
  const std::vector<int64_t>& gdims = global.shape().dimensions();
  const std::vector<int64_t>& ldims = local.shape().dimensions();
  const int64_t rank = static_cast<int64_t>(ldims.size());
  const int64_t n = local.element_count();
  const int width = local.element_stride();
  std::vector<int64_t> gstride(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d) gstride[d] = gstride[d + 1] * gdims[d + 1];
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t g = 0;
    for (int64_t d = 0; d < rank; ++d) g += (block.index[d] * ldims[d] + idx[d]) * gstride[d];
    uint8_t* gp = global.mutable_raw_data() + g * width;
    uint8_t* lp = local.mutable_raw_data() + i * width;
    if (to_local) {
      std::copy(gp, gp + width, lp);
    } else {
      std::copy(lp, lp + width, gp);
    }
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < ldims[d]) break;
      idx[d] = 0;
    }
  }
}

absl::StatusOr<Literal> EvalManualComputation(const HloInstruction& call,
                                              absl::Span<const Literal* const> operands,
                                              EvalContext& context) {
  bool named_form = false;
  for (const HloInstruction* op : call.operands()) {
    named_form = named_form || IsCustomCall(Source(op), kFullToShard);
  }
  absl::StatusOr<ManualSpec> spec_or =
      named_form ? SpecFromNamedShardings(call) : SpecFromFrontendAttributes(call);
  if (!spec_or.ok()) {
    return absl::Status(spec_or.status().code(), absl::StrCat("manual computation '", call.name(),
                                                              "': ", spec_or.status().message()));
  }
  const ManualSpec& spec = *spec_or;
  const HloComputation& body = *call.called_computations()[0];
  // Operands arrive as global values (the entry boundary passes them on);
  // a tuple when the boundary took several.
  std::vector<Literal> mine;
  for (const Literal* op : operands) {
    if (op->shape().IsTuple()) {
      for (const Literal& e : op->tuple_elements()) mine.push_back(e);
    } else {
      mine.push_back(*op);
    }
  }
  const size_t num_operands = mine.size();
  if (num_operands != spec.in.size() ||
      static_cast<int64_t>(num_operands) != body.num_parameters()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "manual computation '", call.name(), "' has ", num_operands, " operands, ", spec.in.size(),
        " in-shardings and a body of ", body.num_parameters(), " parameters"));
  }
  const sdy::Mesh& mesh = spec.mesh;
  const int64_t devices = mesh.TotalSize();
  if (devices < 1 || devices > kMaxDevices) {
    return Unsupported(call, absl::StrCat("manual computation on ", devices, " devices"));
  }
  for (const std::string& axis : spec.manual_axes) {
    if (!mesh.AxisIndex(axis)) {
      return absl::InvalidArgumentError(absl::StrCat("manual axis \"", axis, "\" not in the mesh"));
    }
  }
  // Device position -> partition id, and back.
  std::vector<int64_t> id_of(devices), position_of(devices, -1);
  if (!mesh.device_ids.empty() && static_cast<int64_t>(mesh.device_ids.size()) != devices) {
    return absl::InvalidArgumentError("mesh device ids do not match its size");
  }
  for (int64_t p = 0; p < devices; ++p) {
    id_of[p] = mesh.device_ids.empty() ? p : mesh.device_ids[p];
    if (id_of[p] < 0 || id_of[p] >= devices || position_of[id_of[p]] >= 0) {
      return absl::InvalidArgumentError("mesh device ids are not a permutation");
    }
    position_of[id_of[p]] = p;
  }
  // Inside another manual computation on this mesh, each device of the outer
  // run holds the operands local to its own position: the device at position
  // p of this mesh slices what the outer device at p holds. Otherwise (one
  // logical device, or devices that all hold the global values) every device
  // slices this device's values.
  ASSIGN_OR_RETURN(std::vector<Literal> contributions,
                   context.Exchange(call, Literal::Tuple(mine)));
  const bool per_position = static_cast<int64_t>(contributions.size()) == devices && devices > 1;
  const int64_t my_id =
      context.replica_id() * context.options().num_partitions + context.partition_id();
  if (per_position && (my_id < 0 || my_id >= devices)) {
    return absl::InternalError("device id out of range in a manual computation");
  }
  const std::vector<int64_t> my_coords = per_position ? Coordinates(mesh, position_of[my_id])
                                                      : std::vector<int64_t>(mesh.axes.size(), 0);
  // Slice the operands.
  std::vector<std::vector<Literal>> args(devices);
  for (size_t i = 0; i < num_operands; ++i) {
    const Shape& param = body.parameter_instruction(static_cast<int64_t>(i))->shape();
    for (int64_t id = 0; id < devices; ++id) {
      Literal& source = per_position ? contributions[id].tuple_elements()[i] : mine[i];
      if (!source.shape().IsArray() || !param.IsArray()) {
        return Unsupported(call, "manual computation operand that is not an array");
      }
      ASSIGN_OR_RETURN(
          std::vector<int64_t> local_dims,
          sdy::LocalDimensions(spec.in[i], mesh, spec.manual_axes, source.shape().dimensions()));
      if (local_dims != param.dimensions()) {
        return absl::InvalidArgumentError(
            absl::StrCat("manual computation '", call.name(), "': operand ", i, " of shape ",
                         source.shape().ToString(false), " does not split into the body's ",
                         param.ToString(false)));
      }
      ASSIGN_OR_RETURN(Block block, BlockOf(spec.in[i], mesh, spec.manual_axes,
                                            Coordinates(mesh, position_of[id])));
      Literal local(Shape::Array(source.shape().element_type(), local_dims));
      CopyBlock(source, local, block, /*to_local=*/true);
      args[id].push_back(std::move(local));
    }
  }
  EvalOptions options = context.options();
  options.replica_count = 1;
  options.num_partitions = devices;
  absl::StatusOr<std::vector<Literal>> results = EvaluateComputationReplicated(body, args, options);
  if (!results.ok()) return results.status();
  // Assemble the global results: each block from a device whose coordinates
  // off the block's manual axes are this device's (the others hold copies of
  // it, or belong to other devices of an enclosing manual computation).
  const bool tuple_result = call.shape().IsTuple();
  const size_t count = tuple_result ? call.shape().tuple_shapes_size() : 1;
  if (spec.out.size() != count) {
    return absl::InvalidArgumentError(absl::StrCat("manual computation '", call.name(), "' has ",
                                                   count, " results and ", spec.out.size(),
                                                   " out-shardings"));
  }
  std::vector<Literal> outs;
  for (size_t j = 0; j < count; ++j) {
    const sdy::TensorSharding& s = spec.out[j];
    std::vector<int64_t> local_dims =
        tuple_result ? call.shape().tuple_shapes(j).dimensions() : call.shape().dimensions();
    if (local_dims.size() != s.dims.size()) {
      return absl::InvalidArgumentError(absl::StrCat("manual computation '", call.name(),
                                                     "': out-sharding ", j,
                                                     " does not match the result's rank"));
    }
    // Checked before its shard counts are taken; then the manual axes must
    // lead each dimension as whole axes, as for the operands.
    if (absl::Status st = sdy::Verify(s, spec.meshes); !st.ok()) {
      return absl::Status(st.code(), absl::StrCat("manual computation '", call.name(),
                                                  "': out-sharding ", j, ": ", st.message()));
    }
    std::vector<int64_t> global_dims = local_dims;
    ASSIGN_OR_RETURN(Block whole,
                     BlockOf(s, mesh, spec.manual_axes, std::vector<int64_t>(mesh.axes.size(), 0)));
    for (size_t d = 0; d < global_dims.size(); ++d) global_dims[d] *= whole.count[d];
    absl::StatusOr<std::vector<int64_t>> back =
        sdy::LocalDimensions(s, mesh, spec.manual_axes, global_dims);
    if (!back.ok()) {
      return absl::Status(back.status().code(),
                          absl::StrCat("manual computation '", call.name(), "': out-sharding ", j,
                                       ": ", back.status().message()));
    }
    absl::flat_hash_set<int64_t> used_axes;
    for (const sdy::DimSharding& d : s.dims) {
      for (const sdy::AxisRef& a : d.axes) {
        if (std::find(spec.manual_axes.begin(), spec.manual_axes.end(), a.name) !=
            spec.manual_axes.end()) {
          used_axes.insert(*mesh.AxisIndex(a.name));
        }
      }
    }
    const PrimitiveType type =
        tuple_result ? call.shape().tuple_shapes(j).element_type() : call.shape().element_type();
    Literal global(Shape::Array(type, global_dims));
    for (int64_t p = 0; p < devices; ++p) {
      const std::vector<int64_t> coords = Coordinates(mesh, p);
      bool representative = true;
      for (size_t a = 0; a < coords.size(); ++a) {
        if (!used_axes.contains(static_cast<int64_t>(a)) && coords[a] != my_coords[a]) {
          representative = false;
        }
      }
      if (!representative) continue;
      Literal& device_result = (*results)[id_of[p]];
      Literal& local = tuple_result ? device_result.tuple_elements()[j] : device_result;
      if (local.shape().dimensions() != local_dims) {
        return absl::InternalError("manual computation body returned an unexpected shape");
      }
      ASSIGN_OR_RETURN(Block block, BlockOf(s, mesh, spec.manual_axes, coords));
      CopyBlock(global, local, block, /*to_local=*/false);
    }
    outs.push_back(std::move(global));
  }
  if (!tuple_result) return std::move(outs[0]);
  return Literal::Tuple(std::move(outs));
}

// A manual computation's boundary: the global value passes on to (or from)
// the call that runs the body per device. Anything else reading it would see
// a global value where the HLO says local, so it is refused.
absl::StatusOr<Literal> EvalEntryBoundary(const HloInstruction& instr,
                                          absl::Span<const Literal* const> operands) {
  for (const HloInstruction* reader : Readers(&instr)) {
    if (!IsManualBodyCall(*reader)) {
      return Unsupported(
          instr, absl::StrCat(instr.attrs().custom_call_target, " read by '", reader->name(),
                              "', which is no manual computation "
                              "call"));
    }
  }
  if (operands.size() == 1) return *operands[0];
  std::vector<Literal> elements;
  for (const Literal* op : operands) elements.push_back(*op);
  return Literal::Tuple(std::move(elements));
}

absl::StatusOr<Literal> EvalExitBoundary(const HloInstruction& instr,
                                         absl::Span<const Literal* const> operands) {
  // The operands are the global results of the manual computation call.
  std::vector<const Literal*> values;
  for (const Literal* op : operands) values.push_back(op);
  const Shape& shape = instr.shape();
  auto fits = [](const Literal& v, const Shape& s) {
    return v.shape().IsArray() && s.IsArray() && v.shape().dimensions() == s.dimensions() &&
           v.shape().element_type() == s.element_type();
  };
  if (!shape.IsTuple()) {
    if (values.size() != 1 || !fits(*values[0], shape)) {
      return Unsupported(instr, absl::StrCat(instr.attrs().custom_call_target,
                                             " of a value that no manual computation made"));
    }
    return *values[0];
  }
  if (static_cast<int64_t>(values.size()) != shape.tuple_shapes_size()) {
    return Unsupported(instr, "local-to-global boundary with a tuple operand");
  }
  std::vector<Literal> elements;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!fits(*values[i], shape.tuple_shapes(i))) {
      return Unsupported(instr, absl::StrCat(instr.attrs().custom_call_target,
                                             " of a value that no manual computation made"));
    }
    elements.push_back(*values[i]);
  }
  return Literal::Tuple(std::move(elements));
}

// Annotations whose value is their operand's.
bool IsPassThrough(const std::string& target) {
  return target == "Sharding" || target == "xla.sdy.FuncResultSharding" ||
         target == "xla.sdy.PropagationBarrier";
}

}  // namespace

absl::StatusOr<Literal> EvalSharding(const HloInstruction& instr,
                                     absl::Span<const Literal* const> operands,
                                     EvalContext& context) {
  if (instr.opcode() == HloOpcode::kCall) {
    if (!IsManualBodyCall(instr)) return absl::NotFoundError("not handled");
    return EvalManualComputation(instr, operands, context);
  }
  if (instr.opcode() != HloOpcode::kCustomCall) return absl::NotFoundError("not handled");
  const std::string& target = instr.attrs().custom_call_target;
  if (IsPassThrough(target)) {
    if (operands.size() != 1 || !operands[0]->shape().EqualIgnoringLayout(instr.shape())) {
      return Unsupported(instr, absl::StrCat("custom-call target \"", target,
                                             "\" that changes its operand's shape"));
    }
    return *operands[0];
  }
  if (target == "xla.sdy.ShardingGroup") {
    if (!instr.shape().IsTuple() || instr.shape().tuple_shapes_size() != 0) {
      return absl::InvalidArgumentError("xla.sdy.ShardingGroup returns ()");
    }
    return Literal::Tuple({});
  }
  if (target == kGlobalToLocal || target == kFullToShard) {
    return EvalEntryBoundary(instr, operands);
  }
  if (target == kLocalToGlobal || target == kShardToFull) {
    return EvalExitBoundary(instr, operands);
  }
  return absl::NotFoundError("not handled");
}

}  // namespace xlite::eval
