// Shape inference for collectives: all-reduce, all-gather, reduce-scatter,
// all-to-all, ragged-all-to-all, collective-permute, collective-broadcast,
// collective-reduce (with their -start/-done forms), replica-id and
// partition-id. Rules follow XLA's operation_semantics.md, its shape inference
// and HLO verifier.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "xlite/ir/computation.h"
#include "xlite/ir/module.h"
#include "xlite/verify/shape_inference.h"

namespace xlite::shape_inference {
namespace {

// One result per data operand: the shape itself for one, a tuple for several.
Shape VariadicResult(std::vector<Shape> shapes) {
  if (shapes.size() == 1) return std::move(shapes[0]);
  return Shape::Tuple(std::move(shapes));
}

int64_t CeilOfRatio(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The shapes of operands [begin, end), each of which must be an array.
absl::StatusOr<std::vector<Shape>> ArrayOperands(const HloInstruction& instr, int64_t begin,
                                                 int64_t end) {
  if (begin >= end) return Error(instr, "needs at least one data operand");
  std::vector<Shape> shapes;
  for (int64_t i = begin; i < end; ++i) {
    const Shape& shape = instr.operand(i)->shape();
    if (!shape.IsArray()) {
      return Error(instr, absl::StrCat("operand ", i, " must be an array, got ", ShapeText(shape)));
    }
    shapes.push_back(shape);
  }
  return shapes;
}

absl::StatusOr<std::vector<Shape>> AllArrayOperands(const HloInstruction& instr) {
  return ArrayOperands(instr, 0, instr.operand_count());
}

// ---------------------------------------------------------------------------
// Replica groups: how many participants each group has (XLA's
// GetSubgroupSize). 1 means unknown: XLA skips its group-size checks then.

enum class GroupMode { kCrossReplica, kCrossPartition, kCrossReplicaAndPartition, kFlattenedId };

// Ops with a use_global_device_ids attribute: all-reduce, all-gather,
// reduce-scatter. The others (all-to-all, collective-permute) have none.
GroupMode GroupModeOf(const HloInstruction& instr, bool has_global_device_ids_attr) {
  if (!instr.attrs().channel_id) return GroupMode::kCrossReplica;
  if (!has_global_device_ids_attr) return GroupMode::kCrossPartition;
  return instr.attrs().use_global_device_ids ? GroupMode::kFlattenedId
                                             : GroupMode::kCrossReplicaAndPartition;
}

// mesh['a'=4,'b'=2] {'a'}: a group spans the named axes.
std::optional<int64_t> MeshGroupSize(absl::string_view mesh) {
  size_t open = mesh.find('['), close = mesh.find(']');
  size_t brace = mesh.find('{', close == absl::string_view::npos ? 0 : close);
  if (open == absl::string_view::npos || close == absl::string_view::npos ||
      brace == absl::string_view::npos) {
    return std::nullopt;
  }
  std::vector<std::pair<std::string, int64_t>> axes;
  for (absl::string_view item : absl::StrSplit(mesh.substr(open + 1, close - open - 1), ',')) {
    std::vector<absl::string_view> kv = absl::StrSplit(item, '=');
    int64_t size = 0;
    if (kv.size() != 2 || !absl::SimpleAtoi(kv[1], &size)) continue;  // device_ids=(...)
    axes.emplace_back(std::string(absl::StripAsciiWhitespace(kv[0])), size);
  }
  int64_t product = 1;
  absl::string_view selected = mesh.substr(brace + 1);
  selected = selected.substr(0, selected.find('}'));
  for (absl::string_view name : absl::StrSplit(selected, ',', absl::SkipWhitespace())) {
    name = absl::StripAsciiWhitespace(name);
    auto axis = std::find_if(axes.begin(), axes.end(),
                             [&](const auto& entry) { return entry.first == name; });
    if (axis == axes.end()) return std::nullopt;
    product *= axis->second;
  }
  return product;
}

// Participants per group as written, or nullopt when no groups are given.
std::optional<int64_t> WrittenGroupSize(const ReplicaGroups& groups) {
  if (!groups.mesh.empty()) return MeshGroupSize(groups.mesh);
  if (groups.iota) {
    if (groups.iota_group_shape.size() != 2) return std::nullopt;
    return groups.iota_group_shape[1];
  }
  if (groups.groups.empty()) return std::nullopt;
  return static_cast<int64_t>(groups.groups[0].size());
}

bool HasWrittenGroups(const HloInstruction& instr) {
  const auto& groups = instr.attrs().replica_groups;
  return groups && (!groups->mesh.empty() || groups->iota || !groups->groups.empty());
}

int64_t SubgroupSizeOrZero(const HloInstruction& instr, GroupMode mode) {
  int64_t replicas = 1, partitions = 1;
  if (instr.parent() != nullptr && instr.parent()->parent() != nullptr) {
    replicas = instr.parent()->parent()->config().replica_count;
    partitions = instr.parent()->parent()->config().num_partitions;
  }
  std::optional<int64_t> written;
  if (HasWrittenGroups(instr)) {
    written = WrittenGroupSize(*instr.attrs().replica_groups);
    if (!written) return 1;  // groups we cannot size: stay lenient
  }
  switch (mode) {
    case GroupMode::kCrossReplica:
      return written.value_or(replicas);
    case GroupMode::kCrossReplicaAndPartition:
      return written.value_or(replicas) * partitions;
    case GroupMode::kCrossPartition:
      return written.value_or(partitions);
    case GroupMode::kFlattenedId:
      return written.value_or(1);
  }
  return 1;
}

// Never below 1, so that empty groups or counts cannot divide by zero.
int64_t SubgroupSize(const HloInstruction& instr, GroupMode mode) {
  return std::max<int64_t>(1, SubgroupSizeOrZero(instr, mode));
}

// all-gather, reduce-scatter and all-to-all need groups of one size.
absl::Status CheckUniformGroups(const HloInstruction& instr) {
  const auto& groups = instr.attrs().replica_groups;
  if (!groups || groups->iota) return absl::OkStatus();
  for (const std::vector<int64_t>& group : groups->groups) {
    if (group.size() != groups->groups[0].size()) {
      return Error(instr, absl::StrCat("replica groups must all have the same size; got ",
                                       groups->groups[0].size(), " and ", group.size()));
    }
  }
  return absl::OkStatus();
}

// The single dimension in dimensions={d}, checked against every operand.
absl::StatusOr<int64_t> CollectiveDimension(const HloInstruction& instr,
                                            const std::vector<Shape>& operands) {
  const std::optional<std::vector<int64_t>>& dims = instr.attrs().dimensions;
  if (!dims || dims->size() != 1) return Error(instr, "needs exactly one dimension in dimensions");
  int64_t dim = (*dims)[0];
  for (size_t i = 0; i < operands.size(); ++i) {
    if (dim < 0 || dim >= operands[i].rank()) {
      return Error(instr, absl::StrCat("dimension ", dim, " is out of range for operand ", i,
                                       " of shape ", ShapeText(operands[i])));
    }
  }
  return dim;
}

// ---------------------------------------------------------------------------
// all-reduce, collective-reduce, collective-broadcast.

// Element `index` of a tuple, or nullptr when `shape` has no such element.
const Shape* TupleElement(const Shape& shape, int64_t index) {
  if (!shape.IsTuple() || index >= shape.tuple_shapes_size()) return nullptr;
  return &shape.tuple_shapes(index);
}

// all-reduce returns its operands' shapes.
absl::StatusOr<Shape> InferAllReduce(const HloInstruction& instr) {
  absl::StatusOr<std::vector<Shape>> operands = AllArrayOperands(instr);
  if (!operands.ok()) return operands.status();
  return WithoutLayout(VariadicResult(*operands));
}

// all-reduce-start has all-reduce's shape. Older XLA wrote (operand, result)
// for one operand; the MHLO importer still reads it, so it is accepted.
absl::StatusOr<Shape> InferAllReduceStart(const HloInstruction& instr) {
  absl::StatusOr<Shape> result = InferAllReduce(instr);
  if (!result.ok()) return result;
  const Shape& declared = instr.shape();
  if (instr.operand_count() == 1 && declared.IsTuple() && declared.tuple_shapes_size() == 2) {
    return Shape::Tuple({*result, *result});
  }
  return result;
}

absl::StatusOr<Shape> InferAllReduceDone(const HloInstruction& instr) {
  if (absl::Status s = ExpectOperandCount(instr, 1); !s.ok()) return s;
  const HloInstruction& start = *instr.operand(0);
  const Shape& context = start.shape();
  bool legacy_pair = start.opcode() == HloOpcode::kAllReduceStart && start.operand_count() == 1 &&
                     context.IsTuple() && context.tuple_shapes_size() == 2;
  return WithoutLayout(legacy_pair ? context.tuple_shapes(1) : context);
}

// With has_dynamic_root the last operand picks the root at run time.
int64_t DataOperandCount(const HloInstruction& instr) {
  return instr.operand_count() - (instr.attrs().has_dynamic_root ? 1 : 0);
}

// collective-broadcast and collective-reduce return their data operands' shapes.
absl::StatusOr<Shape> InferRootedCollective(const HloInstruction& instr) {
  absl::StatusOr<std::vector<Shape>> operands = ArrayOperands(instr, 0, DataOperandCount(instr));
  if (!operands.ok()) return operands.status();
  return WithoutLayout(VariadicResult(*operands));
}

// ---------------------------------------------------------------------------
// all-gather and reduce-scatter: the collective dimension grows or shrinks
// by the group size.

// The declared result array for operand 0, used to recover the shard count
// when the group size is unknown (as XLA's verifier does).
const Shape* DeclaredFirstResult(const HloInstruction& instr, bool is_start) {
  const Shape* result = &instr.shape();
  if (is_start) {
    result = result->IsTuple() ? TupleElement(*result, 1) : result;  // array: legacy form
    if (result == nullptr) return nullptr;
  }
  if (instr.operand_count() > 1) result = TupleElement(*result, 0);
  return result != nullptr && result->IsArray() ? result : nullptr;
}

// The group size, or the ratio between the declared result and operand 0
// along `dim` when the groups do not say.
int64_t ShardCount(const HloInstruction& instr, bool is_start, const Shape& operand, int64_t dim,
                   bool grows) {
  int64_t group_size = SubgroupSize(instr, GroupModeOf(instr, /*has_global_device_ids_attr=*/true));
  if (group_size > 1) return group_size;
  const Shape* declared = DeclaredFirstResult(instr, is_start);
  if (declared == nullptr || declared->rank() != operand.rank()) return 1;
  int64_t in = operand.dimensions(dim), out = declared->dimensions(dim);
  if (in <= 0 || out <= 0) return 1;  // unbounded, or nothing to divide
  return grows ? CeilOfRatio(out, in) : CeilOfRatio(in, out);
}

// Scales `dim` of `shape` by shard_count; unbounded sizes stay unbounded.
Shape GatheredShape(Shape shape, int64_t dim, int64_t shard_count) {
  if (shape.dimensions(dim) != Shape::kUnboundedSize) {
    shape.set_dimensions(dim, shape.dimensions(dim) * shard_count);
  }
  return shape;
}

absl::StatusOr<Shape> InferAllGatherResult(const HloInstruction& instr, bool is_start) {
  if (absl::Status s = CheckUniformGroups(instr); !s.ok()) return s;
  absl::StatusOr<std::vector<Shape>> operands = AllArrayOperands(instr);
  if (!operands.ok()) return operands.status();
  absl::StatusOr<int64_t> dim = CollectiveDimension(instr, *operands);
  if (!dim.ok()) return dim.status();
  int64_t shard_count = ShardCount(instr, is_start, (*operands)[0], *dim, /*grows=*/true);
  std::vector<Shape> gathered;
  for (const Shape& operand : *operands)
    gathered.push_back(GatheredShape(operand, *dim, shard_count));
  return WithoutLayout(VariadicResult(std::move(gathered)));
}

absl::StatusOr<Shape> InferAllGather(const HloInstruction& instr) {
  return InferAllGatherResult(instr, /*is_start=*/false);
}

// all-gather-start: (operand or (operands...), gathered result). Old MHLO
// exports declared only the gathered array; the importer accepts that.
absl::StatusOr<Shape> InferAllGatherStart(const HloInstruction& instr) {
  absl::StatusOr<Shape> gathered = InferAllGatherResult(instr, /*is_start=*/true);
  if (!gathered.ok()) return gathered;
  if (instr.operand_count() == 1 && instr.shape().IsArray()) return gathered;
  std::vector<Shape> operands;
  for (const HloInstruction* operand : instr.operands()) operands.push_back(operand->shape());
  return WithoutLayout(Shape::Tuple({VariadicResult(std::move(operands)), *gathered}));
}

// The -done of all-gather and collective-permute: element 1 of the context.
absl::StatusOr<Shape> InferResultOfContext(const HloInstruction& instr) {
  if (absl::Status s = ExpectOperandCount(instr, 1); !s.ok()) return s;
  const Shape& context = instr.operand(0)->shape();
  if (const Shape* result = TupleElement(context, 1)) return WithoutLayout(*result);
  if (context.IsArray()) return WithoutLayout(context);  // legacy array-shaped start
  return Error(instr, absl::StrCat("operand must be a (operand, result, ...) context, got ",
                                   ShapeText(context)));
}

absl::StatusOr<Shape> InferReduceScatter(const HloInstruction& instr) {
  if (absl::Status s = CheckUniformGroups(instr); !s.ok()) return s;
  absl::StatusOr<std::vector<Shape>> operands = AllArrayOperands(instr);
  if (!operands.ok()) return operands.status();
  absl::StatusOr<int64_t> dim = CollectiveDimension(instr, *operands);
  if (!dim.ok()) return dim.status();
  int64_t shard_count =
      ShardCount(instr, /*is_start=*/false, (*operands)[0], *dim, /*grows=*/false);
  std::vector<Shape> scattered;
  for (Shape operand : *operands) {
    int64_t size = operand.dimensions(*dim);
    if (size != Shape::kUnboundedSize) {
      if (size % shard_count != 0) {
        return Error(instr,
                     absl::StrCat("scatter dimension ", *dim, " has size ", size,
                                  ", which is not divisible by the shard count ", shard_count));
      }
      operand.set_dimensions(*dim, size / shard_count);
    }
    scattered.push_back(std::move(operand));
  }
  return WithoutLayout(VariadicResult(std::move(scattered)));
}

// ---------------------------------------------------------------------------
// all-to-all and ragged-all-to-all.

// dimensions={d}: each operand is split along d into group-size pieces and
// the received pieces are concatenated along d, so shapes are unchanged.
// Without dimensions (tuple form) the result is the tuple of operand shapes.
absl::StatusOr<Shape> InferAllToAll(const HloInstruction& instr) {
  if (absl::Status s = CheckUniformGroups(instr); !s.ok()) return s;
  absl::StatusOr<std::vector<Shape>> operands = AllArrayOperands(instr);
  if (!operands.ok()) return operands.status();
  const std::optional<std::vector<int64_t>>& dims = instr.attrs().dimensions;
  if (!dims || dims->empty()) return WithoutLayout(Shape::Tuple(*operands));
  absl::StatusOr<int64_t> dim = CollectiveDimension(instr, *operands);
  if (!dim.ok()) return dim.status();
  int64_t split_count =
      SubgroupSize(instr, GroupModeOf(instr, /*has_global_device_ids_attr=*/false));
  for (size_t i = 0; i < operands->size(); ++i) {
    int64_t size = (*operands)[i].dimensions(*dim);
    if (split_count > 1 && size != Shape::kUnboundedSize && size % split_count != 0) {
      return Error(instr,
                   absl::StrCat("split dimension ", *dim, " of operand ", i, " has size ", size,
                                ", which is not divisible by the split count ", split_count));
    }
  }
  return WithoutLayout(VariadicResult(*operands));
}

// ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets,
// recv_sizes) writes into `output` and returns its shape.
absl::StatusOr<Shape> InferRaggedAllToAll(const HloInstruction& instr) {
  if (instr.operand_count() != 6) {
    return Error(instr, absl::StrCat("expects 6 operands (input, output, input_offsets, "
                                     "send_sizes, output_offsets, recv_sizes), got ",
                                     instr.operand_count()));
  }
  absl::StatusOr<std::vector<Shape>> operands = AllArrayOperands(instr);
  if (!operands.ok()) return operands.status();
  const Shape& input = (*operands)[0];
  const Shape& output = (*operands)[1];
  if (input.element_type() != output.element_type() || input.rank() != output.rank()) {
    return Error(instr, absl::StrCat("input ", ShapeText(input), " and output ", ShapeText(output),
                                     " must have the same element type and rank"));
  }
  for (int64_t i = 2; i < 6; ++i) {
    const Shape& sizes = (*operands)[i];
    if (sizes.element_type() != PrimitiveType::S32 && sizes.element_type() != PrimitiveType::S64) {
      return Error(instr, absl::StrCat("offsets and sizes must be s32 or s64; operand ", i, " is ",
                                       ShapeText(sizes)));
    }
    if (!Compatible(sizes, (*operands)[2])) {
      return Error(instr,
                   absl::StrCat("offsets and sizes must have one shape; operand ", i, " is ",
                                ShapeText(sizes), " but operand 2 is ", ShapeText((*operands)[2])));
    }
  }
  return WithoutLayout(output);
}

// ---------------------------------------------------------------------------
// collective-permute.

// In-place form: (input, output, input_start_indices, output_start_indices)
// with slice_sizes; the result is the output buffer.
bool IsInPlacePermute(const HloInstruction& instr) {
  return instr.attrs().slice_sizes_list.has_value();
}

// The permuted value: the output buffer (in place) or the operand(s).
absl::StatusOr<Shape> PermuteResult(const HloInstruction& instr) {
  if (!IsInPlacePermute(instr)) {
    absl::StatusOr<std::vector<Shape>> operands = AllArrayOperands(instr);
    if (!operands.ok()) return operands.status();
    return VariadicResult(*operands);
  }
  if (instr.operand_count() != 4) {
    return Error(instr, absl::StrCat("the in-place form (with slice_sizes) expects 4 operands "
                                     "(input, output, input_start_indices, "
                                     "output_start_indices), got ",
                                     instr.operand_count()));
  }
  const Shape& input = instr.operand(0)->shape();
  const Shape& output = instr.operand(1)->shape();
  if (input.IsTuple() != output.IsTuple() ||
      (input.IsTuple() && input.tuple_shapes_size() != output.tuple_shapes_size())) {
    return Error(instr, absl::StrCat("in-place input ", ShapeText(input), " and output ",
                                     ShapeText(output), " must have the same structure"));
  }
  return output;
}

absl::StatusOr<Shape> InferCollectivePermute(const HloInstruction& instr) {
  absl::StatusOr<Shape> result = PermuteResult(instr);
  if (!result.ok()) return result;
  return WithoutLayout(*result);
}

// collective-permute-start: (input, output, context...), where input and
// output are both the operand(s) unless the op is in place. The u32[] context
// elements are the backend's choice and are taken as declared.
absl::StatusOr<Shape> InferCollectivePermuteStart(const HloInstruction& instr) {
  absl::StatusOr<Shape> result = PermuteResult(instr);
  if (!result.ok()) return result;
  const Shape& declared = instr.shape();
  // Old MHLO exports declared only the result array; the importer accepts it.
  if (!IsInPlacePermute(instr) && instr.operand_count() == 1 && declared.IsArray()) {
    return WithoutLayout(*result);
  }
  Shape input = IsInPlacePermute(instr) ? instr.operand(0)->shape() : *result;
  std::vector<Shape> elements = {std::move(input), std::move(*result)};
  for (int64_t i = 2; declared.IsTuple() && i < declared.tuple_shapes_size(); ++i) {
    elements.push_back(declared.tuple_shapes(i));
  }
  return WithoutLayout(Shape::Tuple(std::move(elements)));
}

}  // namespace

absl::StatusOr<Shape> InferCollectiveShape(const HloInstruction& instr) {
  switch (instr.opcode()) {
    case HloOpcode::kAllReduce:
      return InferAllReduce(instr);
    case HloOpcode::kAllReduceStart:
      return InferAllReduceStart(instr);
    case HloOpcode::kAllReduceDone:
      return InferAllReduceDone(instr);
    case HloOpcode::kAllGather:
      return InferAllGather(instr);
    case HloOpcode::kAllGatherStart:
      return InferAllGatherStart(instr);
    case HloOpcode::kAllGatherDone:
      return InferResultOfContext(instr);
    case HloOpcode::kReduceScatter:
      return InferReduceScatter(instr);
    case HloOpcode::kAllToAll:
      return InferAllToAll(instr);
    case HloOpcode::kRaggedAllToAll:
      return InferRaggedAllToAll(instr);
    case HloOpcode::kCollectivePermute:
      return InferCollectivePermute(instr);
    case HloOpcode::kCollectivePermuteStart:
      return InferCollectivePermuteStart(instr);
    case HloOpcode::kCollectivePermuteDone:
      return InferResultOfContext(instr);
    case HloOpcode::kCollectiveBroadcast:
      return InferRootedCollective(instr);
    case HloOpcode::kCollectiveReduce:
      return InferRootedCollective(instr);
    case HloOpcode::kReplicaId:
    case HloOpcode::kPartitionId:
      return Shape::Scalar(PrimitiveType::U32);
    default:
      return absl::NotFoundError("not handled");
  }
}

}  // namespace xlite::shape_inference
