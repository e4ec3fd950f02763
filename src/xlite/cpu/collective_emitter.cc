// ThunkEmitter::EmitCollective: collectives among several devices
// (cpu/collective_thunks.h). The -start/-done pairs run synchronously for
// now, as copy-start/done do (async_emitter.cc): the whole work happens at
// the -start, into the slices its -done returns; the -done forwards them.
// EmitCollectiveWork emits one collective's work alone, for a caller that
// runs it elsewhere (an async wrapper).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "xlite/analysis/hlo_dataflow_analysis.h"
#include "xlite/analysis/shape_util.h"
#include "xlite/codegen/kernel.h"
#include "xlite/collectives/reduction.h"
#include "xlite/collectives/replica_groups.h"
#include "xlite/cpu/collective_thunks.h"
#include "xlite/cpu/physical_layout.h"
#include "xlite/cpu/thunk_emitter.h"
#include "xlite/ir/computation.h"
#include "xlite/support/status.h"

namespace xlite::cpu {
namespace {

// The dimensions in memory order, major to minor, and where logical
// dimension `dim` lands among them.
std::vector<int64_t> PhysicalDims(const Shape& shape) {
  const std::vector<int64_t> order = codegen::MinorToMajor(shape);
  std::vector<int64_t> dims;
  for (auto it = order.rbegin(); it != order.rend(); ++it) dims.push_back(shape.dimensions(*it));
  return dims;
}

int64_t PhysicalPosition(const Shape& shape, int64_t dim) {
  const std::vector<int64_t> order = codegen::MinorToMajor(shape);
  for (size_t k = 0; k < order.size(); ++k) {
    if (order[order.size() - 1 - k] == dim) return static_cast<int64_t>(k);
  }
  return -1;
}

ShapeIndex Append(ShapeIndex index, int64_t i) {
  index.push_back(i);
  return index;
}

}  // namespace

absl::Status ThunkEmitter::EmitCollective(const HloInstruction& instr, ThunkSequence& out) {
  switch (instr.opcode()) {
    case HloOpcode::kAllReduce:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kAllGather:
    case HloOpcode::kAllToAll:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kRaggedAllToAll:
      return EmitCollectiveWork(instr, {}, out);
    case HloOpcode::kAllReduceStart:
      // The start is the result (or a tuple of results); the older
      // (operand, result) form is refused, as by the interpreter.
      if (instr.operand_count() == 1 && instr.shape().IsTuple()) {
        return Unsupported(instr, "all-reduce-start declared as (operand, result) (old form)");
      }
      [[fallthrough]];
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kCollectivePermuteStart: {
      ThunkSequence work;
      if (instr.opcode() == HloOpcode::kAllReduceStart || !IsStartTuple(instr)) {
        RETURN_IF_ERROR(EmitCollectiveWork(instr, {}, work));
      } else {
        // {0} holds the operands (the same slices, as the dataflow forwards
        // them: no copy then), {1} the results.
        if (instr.operand_count() == 1) {
          RETURN_IF_ERROR(CopyLeaves(instr.operand(0), {}, &instr, {0}, instr.operand(0)->shape(),
                                     instr, work));
        } else {
          for (int64_t i = 0; i < instr.operand_count(); ++i) {
            RETURN_IF_ERROR(CopyLeaves(instr.operand(i), {}, &instr, {0, i},
                                       instr.operand(i)->shape(), instr, work));
          }
        }
        RETURN_IF_ERROR(EmitCollectiveWork(instr, {1}, work));
      }
      // On a side stream only when every slice the work touches is part of
      // the start's own value, which the memory plan keeps alive until the
      // -done, or is read-only memory; otherwise (an operand in a buffer of its own, free for reuse
      // after the start) the work runs at the start, synchronously.
      ASSIGN_OR_RETURN(bool contained, WorkStaysInsideValue(instr, work));
      if (!contained) {
        out.Append(std::move(work));
        return absl::OkStatus();
      }
      return EmitAsyncStart(instr, std::move(work), out);
    }
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kCollectivePermuteDone: {
      const HloInstruction* start = instr.operand(0);
      if (async_starts_.contains(start)) RETURN_IF_ERROR(EmitAsyncDone(instr, out));
      const ShapeIndex from = start->opcode() != HloOpcode::kAllReduceStart && IsStartTuple(*start)
                                  ? ShapeIndex{1}
                                  : ShapeIndex{};
      return CopyLeaves(start, from, &instr, {}, instr.shape(), instr, out);
    }
    default:
      return Unsupported(instr, "this collective");
  }
}

absl::StatusOr<bool> ThunkEmitter::WorkStaysInsideValue(const HloInstruction& start,
                                                        const ThunkSequence& work) const {
  std::vector<ShapeIndex> leaves;
  ForEachSubshape(start.shape(), [&](const Shape& s, const ShapeIndex& index) {
    if (s.IsArray()) leaves.push_back(index);
  });
  std::vector<BufferSlice> own;
  for (const ShapeIndex& index : leaves) {
    ASSIGN_OR_RETURN(BufferSlice s, Slice(&start, index));
    own.push_back(s);
  }
  std::vector<BufferUse> uses;
  AppendBufferUses(work, uses);
  for (const BufferUse& use : uses) {
    const BufferSlice& u = use.slice;
    if (u.allocation < 0 || u.size == 0) continue;
    // Constants and entry parameters no output aliases are never written
    // while the program runs: reading them later is safe.
    const BufferAllocation& a = assignment_.allocations()[u.allocation];
    if (use.access == BufferUse::Access::kRead &&
        (a.kind() == AllocationKind::kConstant ||
         (a.kind() == AllocationKind::kParameter && !a.maybe_live_out()))) {
      continue;
    }
    const bool inside = std::any_of(own.begin(), own.end(), [&](const BufferSlice& s) {
      return s.allocation == u.allocation && s.offset <= u.offset &&
             u.offset + u.size <= s.offset + s.size;
    });
    if (!inside) return false;
  }
  return true;
}

absl::Status ThunkEmitter::EmitCollectiveWork(const HloInstruction& instr,
                                              const ShapeIndex& result_index, ThunkSequence& out) {
  using Kind = CollectiveOp::Kind;
  CollectiveOp op;
  op.opcode = std::string(HloOpcodeString(instr.opcode()));
  op.id = next_collective_id_++;
  const ModuleConfig& config = assignment_.module().config();
  op.single_device = config.replica_count * config.num_partitions == 1;
  const std::optional<std::vector<int64_t>>& dims = instr.attrs().dimensions;
  switch (instr.opcode()) {
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
      op.kind = Kind::kAllReduce;
      break;
    case HloOpcode::kReduceScatter:
      op.kind = Kind::kReduceScatter;
      break;
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
      op.kind = Kind::kAllGather;
      break;
    case HloOpcode::kAllToAll:
      op.kind = dims.has_value() ? Kind::kAllToAll : Kind::kAllToAllTuple;
      break;
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
      op.kind = Kind::kCollectivePermute;
      if (instr.attrs().slice_sizes_list.has_value()) {
        return Unsupported(instr, "collective-permute with input/output slices");
      }
      op.pairs = instr.attrs().source_target_pairs.value_or(SourceTargetPairs{});
      break;
    case HloOpcode::kCollectiveBroadcast:
      if (instr.attrs().has_dynamic_root) {
        return Unsupported(instr, "collective-broadcast with has_dynamic_root");
      }
      op.kind = Kind::kCollectiveBroadcast;
      break;
    case HloOpcode::kRaggedAllToAll:
      op.kind = Kind::kRaggedAllToAll;
      break;
    default:
      return Unsupported(instr, "this collective");
  }
  ASSIGN_OR_RETURN(op.mode, collectives::GroupModeOf(instr));
  if (instr.attrs().replica_groups.has_value()) {
    ASSIGN_OR_RETURN(op.groups, collectives::ExpandReplicaGroups(*instr.attrs().replica_groups));
  }
  const Shape* result_shape = SubshapeAt(instr.shape(), result_index);
  if (result_shape == nullptr) {
    return absl::InternalError(
        absl::StrCat("'", instr.name(), "' has no result at ", ShapeIndexToString(result_index)));
  }

  // Operand i -> result leaf i (ragged-all-to-all: input and output -> the result).
  const bool ragged = op.kind == Kind::kRaggedAllToAll;
  const int64_t arrays = ragged ? 2 : instr.operand_count();
  if (ragged && instr.operand_count() != 6) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ragged-all-to-all '", instr.name(), "' takes 6 operands, got ", instr.operand_count()));
  }
  if (!ragged && !result_shape->IsTuple() && arrays != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", instr.name(), "': ", arrays, " operands but one result array"));
  }
  if (!ragged && result_shape->IsTuple() && result_shape->tuple_shapes_size() != arrays) {
    return absl::InvalidArgumentError(absl::StrCat("'", instr.name(), "': ", arrays,
                                                   " operands but ",
                                                   result_shape->tuple_shapes_size(), " results"));
  }
  for (int64_t i = 0; i < arrays; ++i) {
    const Shape& source = instr.operand(i)->shape();
    const ShapeIndex index = result_shape->IsTuple() ? Append(result_index, i) : result_index;
    const Shape& destination = *SubshapeAt(instr.shape(), index);
    if (!source.IsArray() || !destination.IsArray()) {
      return Unsupported(instr, "a non-array operand or result");
    }
    RETURN_IF_ERROR(CheckRunnableLayout(source, absl::StrCat("operand ", i)));
    RETURN_IF_ERROR(CheckRunnableLayout(destination, absl::StrCat("result ", i)));
    if (codegen::MinorToMajor(source) != codegen::MinorToMajor(destination)) {
      return Unsupported(instr, "an operand and its result in different layouts");
    }
    if (source.element_type() != destination.element_type()) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", instr.name(), "': operand ", i, " and its result differ in type"));
    }
    CollectiveOp::Operand o;
    ASSIGN_OR_RETURN(o.source, Slice(instr.operand(i), {}));
    ASSIGN_OR_RETURN(o.destination, Slice(&instr, index));
    o.type = source.element_type();
    o.dims = PhysicalDims(source);
    o.elements = source.ElementCount();
    const bool along_dimension = op.kind == Kind::kAllGather || op.kind == Kind::kAllToAll ||
                                 op.kind == Kind::kReduceScatter;
    if (along_dimension) {
      if (!dims.has_value() || dims->size() != 1 || (*dims)[0] < 0 || (*dims)[0] >= source.rank()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "'", instr.name(), "' needs dimensions={d} with d in [0, ", source.rank(), ")"));
      }
      o.dimension = PhysicalPosition(source, (*dims)[0]);
    }
    if (ragged && source.rank() > 0 && PhysicalPosition(source, 0) != 0) {
      return Unsupported(instr, "ragged-all-to-all on arrays whose dimension 0 is not major");
    }
    op.operands.push_back(std::move(o));
  }
  if (ragged) {
    for (int64_t i = 2; i < 6; ++i) {
      const Shape& s = instr.operand(i)->shape();
      if (!s.IsArray() ||
          (s.element_type() != PrimitiveType::S32 && s.element_type() != PrimitiveType::S64)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "ragged-all-to-all '", instr.name(), "': operand ", i, " must be an s32 or s64 array"));
      }
      ASSIGN_OR_RETURN(BufferSlice s_slice, Slice(instr.operand(i), {}));
      op.ragged_sizes.push_back(s_slice);
      op.ragged_size_types.push_back(s.element_type());
    }
  }

  // The reduction: a plain kind, or the reducer compiled as a kernel.
  const HloComputation* reducer = nullptr;
  if (op.kind == Kind::kAllReduce || op.kind == Kind::kReduceScatter) {
    if (instr.called_computations().size() != 1 || instr.called_computations()[0] == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", instr.name(), "' needs one reduction computation (to_apply)"));
    }
    reducer = instr.called_computations()[0];
    for (const CollectiveOp::Operand& o : op.operands) {
      auto scalar = [&](const Shape& shape) {
        return shape.IsArray() && shape.rank() == 0 && shape.element_type() == o.type;
      };
      if (reducer->num_parameters() != 2 || !scalar(reducer->root_instruction()->shape()) ||
          !scalar(reducer->parameter_instruction(0)->shape()) ||
          !scalar(reducer->parameter_instruction(1)->shape())) {
        return Unsupported(
            instr, absl::StrCat("a reduction computation that is not (", PrimitiveTypeName(o.type),
                                ", ", PrimitiveTypeName(o.type), ") -> ", PrimitiveTypeName(o.type),
                                " on scalars"));
      }
    }
    op.reduction = collectives::MatchReductionComputation(*reducer);
  }

  auto thunk = std::make_unique<CollectiveThunk>(InfoOf(instr), std::move(op));
  if (reducer != nullptr && !thunk->op().reduction.has_value()) {
    // The reducer as a kLoop fusion over its two scalars, for the JIT.
    if (scratch_ == nullptr) scratch_ = std::make_unique<HloModule>("scalar_kernels");
    auto computation = std::make_unique<HloComputation>(absl::StrCat(instr.name(), ".reducer"));
    auto fusion =
        std::make_unique<HloInstruction>(HloOpcode::kFusion, absl::StrCat(instr.name(), "_reducer"),
                                         reducer->root_instruction()->shape());
    for (int64_t i = 0; i < 2; ++i) {
      auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter, absl::StrCat("p", i),
                                                reducer->parameter_instruction(i)->shape());
      p->attrs().parameter_number = i;
      HloInstruction* added = computation->AddInstruction(std::move(p));
      computation->SetParameter(i, added);
      fusion->AppendOperand(added);
    }
    fusion->attrs().fusion_kind = "kLoop";
    fusion->AppendCalledComputation(const_cast<HloComputation*>(reducer));
    HloInstruction* root = computation->AddInstruction(std::move(fusion));
    computation->set_root_instruction(root);
    scratch_->AddComputation(std::move(computation));
    CollectiveThunk* raw = thunk.get();
    specs_.push_back(codegen::KernelSpec{root, absl::StrCat(instr.name(), ".reducer"), nullptr});
    binders_.push_back([raw](const codegen::CompiledKernel& k) { raw->SetReducer(k.function); });
  }
  out.push_back(std::move(thunk));
  return absl::OkStatus();
}

}  // namespace xlite::cpu
