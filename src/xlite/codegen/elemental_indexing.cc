// Data movement and reductions as elements: each result index maps to operand
// indices (broadcast, reshape, bitcast, transpose, slice, pad, concatenate,
// reverse, dynamic slices, gather), or loops over operand elements in the
// interpreter's order and applies the called computation inline (reduce,
// reduce-window, map). Semantics: src/xlite/eval/eval_data_movement.cc and
// eval_reduction.cc.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "xlite/codegen/ir_emitter.h"
#include "xlite/codegen/kernel.h"
#include "xlite/support/status.h"

namespace xlite::codegen {
namespace {

using llvm::Value;

const std::vector<int64_t>& Dims(const HloInstruction& instr) { return instr.shape().dimensions(); }

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

bool AllInRange(const std::vector<int64_t>& dims, int64_t rank) {
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) return false;
  }
  return true;
}

// Operand dimensions not in `a` or `b`, in increasing order.
std::vector<int64_t> RemainingDims(int64_t rank, const std::vector<int64_t>& a,
                                   const std::vector<int64_t>& b) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(a, d) && !Contains(b, d)) dims.push_back(d);
  }
  return dims;
}

}  // namespace

// A reshape maps runs of result dimensions to runs of operand dimensions with
// the same element count (splits, merges, or both); each run is linearized
// and delinearized on its own. A split thus costs multiplies and adds, and a
// dimension that passes through is the same index: the minor index of a
// reshape that keeps its minor dimension stays the loop's induction variable,
// so the loop vectorizes. (Linearizing the whole index put a division by
// every operand dimension on each element.)
IrIndex IrEmitter::ReshapeOperandIndex(const std::vector<int64_t>& result_dims,
                                       const std::vector<int64_t>& operand_dims,
                                       const IrIndex& index) {
  int64_t count = 1;
  for (int64_t d : result_dims) count *= d;
  if (count == 0) return DelinearizeRowMajor(operand_dims, RowMajorLinear(result_dims, index));
  IrIndex from;
  size_t r = 0, o = 0;
  while (r < result_dims.size() || o < operand_dims.size()) {
    const size_t r0 = r, o0 = o;
    int64_t result_count = 1, operand_count = 1;
    if (r < result_dims.size()) result_count *= result_dims[r++];
    if (o < operand_dims.size()) operand_count *= operand_dims[o++];
    while (result_count != operand_count) {
      if (result_count < operand_count) {
        result_count *= result_dims[r++];
      } else {
        operand_count *= operand_dims[o++];
      }
    }
    const std::vector<int64_t> result_run(result_dims.begin() + r0, result_dims.begin() + r);
    const std::vector<int64_t> operand_run(operand_dims.begin() + o0, operand_dims.begin() + o);
    if (operand_run.empty()) continue;  // size-1 result dimensions
    if (result_run.size() == 1 && operand_run.size() == 1) {
      from.push_back(index[r0]);
      continue;
    }
    const IrIndex run_index(index.begin() + r0, index.begin() + r);
    for (Value* v : DelinearizeRowMajor(operand_run, RowMajorLinear(result_run, run_index))) {
      from.push_back(v);
    }
  }
  return from;
}

absl::Status IrEmitter::ForLoopNest(const std::vector<int64_t>& sizes,
                                    absl::FunctionRef<absl::Status(const IrIndex&)> body) {
  IrIndex index;
  std::function<absl::Status(size_t)> level = [&](size_t d) -> absl::Status {
    if (d == sizes.size()) return body(index);
    return ForLoop(I64(0), I64(sizes[d]), [&](Value* iv) -> absl::Status {
      index.push_back(iv);
      absl::Status status = level(d + 1);
      index.pop_back();
      return status;
    });
  };
  return level(0);
}

absl::StatusOr<IrValues> IrEmitter::EmitConvertingCall(const HloComputation& computation,
                                                       const IrValues& args,
                                                       const std::vector<PrimitiveType>& types,
                                                       const HloInstruction& caller) {
  if (computation.num_parameters() != static_cast<int64_t>(args.size())) {
    return InvalidInstruction(
        caller, absl::StrCat("computation '", computation.name(), "' takes ",
                             computation.num_parameters(), " parameters, got ", args.size()));
  }
  IrValues converted;
  for (size_t i = 0; i < args.size(); ++i) {
    const HloInstruction* p = computation.parameter_instruction(i);
    if (p == nullptr || !p->shape().IsArray()) {
      return UnsupportedInstruction(caller, "a computation with non-array parameters");
    }
    ASSIGN_OR_RETURN(Value * v, Convert(caller, types[i], p->shape().element_type(), args[i]));
    converted.push_back(v);
  }
  return EmitCall(computation, converted, caller);
}

absl::StatusOr<IrIndex> IrEmitter::ClampedStarts(const HloInstruction& instr, int64_t first_operand,
                                                 const std::vector<int64_t>& operand_dims,
                                                 const std::vector<int64_t>& sizes) {
  const int64_t rank = static_cast<int64_t>(operand_dims.size());
  const int64_t count = instr.operand_count() - first_operand;
  IrIndex starts;
  auto index_operand = [&](int64_t i) -> absl::StatusOr<const HloInstruction*> {
    const HloInstruction* op = instr.operand(i);
    if (!op->shape().IsArray() || !IsInteger(op->shape().element_type())) {
      return InvalidInstruction(instr, "start indices must be integers");
    }
    return op;
  };
  if (count == rank) {
    for (int64_t i = first_operand; i < instr.operand_count(); ++i) {
      ASSIGN_OR_RETURN(const HloInstruction* op, index_operand(i));
      if (op->shape().rank() != 0)
        return InvalidInstruction(instr, "start indices must be scalars");
      ASSIGN_OR_RETURN(Value * v, EmitOne(*op, {}));
      starts.push_back(IndexValue(op->shape().element_type(), v));
    }
  } else if (count == 1 && instr.operand(first_operand)->shape().rank() == 1 &&
             instr.operand(first_operand)->shape().dimensions(0) == rank) {
    ASSIGN_OR_RETURN(const HloInstruction* op, index_operand(first_operand));
    for (int64_t d = 0; d < rank; ++d) {
      ASSIGN_OR_RETURN(Value * v, EmitOne(*op, {I64(d)}));
      starts.push_back(IndexValue(op->shape().element_type(), v));
    }
  } else {
    return InvalidInstruction(instr, absl::StrCat("needs ", rank, " start indices"));
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] > operand_dims[d])
      return InvalidInstruction(instr, "slice larger than the operand");
    Value* limit = I64(std::max<int64_t>(0, operand_dims[d] - sizes[d]));
    Value* s = b_.CreateSelect(b_.CreateICmpSLT(starts[d], I64(0)), I64(0), starts[d]);
    starts[d] = b_.CreateSelect(b_.CreateICmpSGT(s, limit), limit, s);
  }
  return starts;
}

absl::StatusOr<IrValues> IrEmitter::EmitDataMovement(const HloInstruction& instr,
                                                     const IrIndex& index) {
  const int64_t rank = instr.shape().rank();
  auto operand = [&](int64_t i) -> absl::StatusOr<const HloInstruction*> {
    if (i >= instr.operand_count()) return InvalidInstruction(instr, "missing an operand");
    const HloInstruction* op = instr.operand(i);
    if (!op->shape().IsArray()) return InvalidInstruction(instr, "operands must be arrays");
    return op;
  };
  const std::vector<int64_t> dims_attr = instr.attrs().dimensions.value_or(std::vector<int64_t>{});
  switch (instr.opcode()) {
    case HloOpcode::kBroadcast: {
      ASSIGN_OR_RETURN(const HloInstruction* op, operand(0));
      if (static_cast<int64_t>(dims_attr.size()) != op->shape().rank() ||
          !AllInRange(dims_attr, rank)) {
        return InvalidInstruction(instr, "dimensions={...} does not fit the operand");
      }
      IrIndex from;
      for (int64_t d : dims_attr) from.push_back(index[d]);
      return Emit(*op, from);
    }
    case HloOpcode::kReshape: {
      ASSIGN_OR_RETURN(const HloInstruction* op, operand(0));
      return Emit(*op, ReshapeOperandIndex(Dims(instr), op->shape().dimensions(), index));
    }
    case HloOpcode::kBitcast: {
      // The bytes keep their physical position: map through both layouts.
      ASSIGN_OR_RETURN(const HloInstruction* op, operand(0));
      const PrimitiveType from = op->shape().element_type(), to = instr.shape().element_type();
      if (op->shape().ElementCount() != instr.shape().ElementCount()) {
        return UnsupportedInstruction(instr, "a bitcast that changes the element count");
      }
      if (PrimitiveByteWidth(from) != PrimitiveByteWidth(to) || IsComplex(from) != IsComplex(to) ||
          IrType(from) == nullptr) {
        return UnsupportedInstruction(instr, "a bitcast between element types of different widths");
      }
      Value* p = PhysicalOffset(instr.shape(), index);
      IrIndex from_index(op->shape().rank());
      for (int64_t d : MinorToMajor(op->shape())) {
        const int64_t size = std::max<int64_t>(op->shape().dimensions(d), 1);
        from_index[d] = b_.CreateURem(p, I64(size));
        p = b_.CreateUDiv(p, I64(size));
      }
      ASSIGN_OR_RETURN(Value * v, EmitOne(*op, from_index));
      if (from == to) return IrValues{v};
      Value* bits = ToBits(from, v);
      if (to == PrimitiveType::PRED) {
        return UnsupportedInstruction(instr, "a bitcast to pred");
      }
      return IrValues{FromBits(to, b_.CreateZExtOrTrunc(bits, ToBits(to, Zero(to))->getType()))};
    }
    case HloOpcode::kTranspose: {
      ASSIGN_OR_RETURN(const HloInstruction* op, operand(0));
      if (static_cast<int64_t>(dims_attr.size()) != rank || !AllInRange(dims_attr, rank)) {
        return InvalidInstruction(instr, "dimensions={...} is not a permutation");
      }
      IrIndex from(rank);
      for (int64_t i = 0; i < rank; ++i) from[dims_attr[i]] = index[i];
      return Emit(*op, from);
    }
    case HloOpcode::kSlice: {
      ASSIGN_OR_RETURN(const HloInstruction* op, operand(0));
      const std::vector<SliceDimension>& slice = instr.attrs().slice;
      if (static_cast<int64_t>(slice.size()) != rank)
        return InvalidInstruction(instr, "bad slice={...}");
      IrIndex from(rank);
      for (int64_t d = 0; d < rank; ++d) {
        from[d] = b_.CreateAdd(I64(slice[d].start), b_.CreateMul(index[d], I64(slice[d].stride)));
      }
      return Emit(*op, from);
    }
    case HloOpcode::kPad: {
      ASSIGN_OR_RETURN(const HloInstruction* op, operand(0));
      ASSIGN_OR_RETURN(const HloInstruction* value, operand(1));
      const std::vector<PaddingDimension>& padding = instr.attrs().padding;
      if (static_cast<int64_t>(padding.size()) != rank || value->shape().rank() != 0) {
        return InvalidInstruction(instr, "bad padding={...}");
      }
      Value* in_operand = b_.getTrue();
      IrIndex from(rank);
      for (int64_t d = 0; d < rank; ++d) {
        const PaddingDimension& p = padding[d];
        if (p.interior < 0) return InvalidInstruction(instr, "negative interior padding");
        Value* offset = b_.CreateSub(index[d], I64(p.low));
        Value* ok = b_.CreateICmpSGE(offset, I64(0));
        if (p.interior > 0) {
          ok =
              b_.CreateAnd(ok, b_.CreateICmpEQ(b_.CreateSRem(offset, I64(p.interior + 1)), I64(0)));
          from[d] = b_.CreateSDiv(offset, I64(p.interior + 1));
        } else {
          from[d] = offset;
        }
        ok = b_.CreateAnd(ok, b_.CreateICmpSLT(from[d], I64(op->shape().dimensions(d))));
        in_operand = b_.CreateAnd(in_operand, ok);
      }
      ASSIGN_OR_RETURN(Value * pad_value, EmitOne(*value, {}));
      return If(
          in_operand, [&]() { return Emit(*op, from); },
          [&]() -> absl::StatusOr<IrValues> { return IrValues{pad_value}; });
    }
    case HloOpcode::kConcatenate: {
      if (dims_attr.size() != 1 || dims_attr[0] < 0 || dims_attr[0] >= rank ||
          instr.operand_count() < 1) {
        return InvalidInstruction(instr, "needs one concatenation dimension");
      }
      const int64_t axis = dims_attr[0];
      // Operand k covers [offsets[k], offsets[k+1]) along the axis.
      std::function<absl::StatusOr<IrValues>(int64_t, int64_t)> pick =
          [&](int64_t k, int64_t offset) -> absl::StatusOr<IrValues> {
        ASSIGN_OR_RETURN(const HloInstruction* op, operand(k));
        if (op->shape().rank() != rank) return InvalidInstruction(instr, "operand ranks differ");
        IrIndex from = index;
        from[axis] = b_.CreateSub(index[axis], I64(offset));
        if (k + 1 == instr.operand_count()) return Emit(*op, from);
        const int64_t end = offset + op->shape().dimensions(axis);
        return If(
            b_.CreateICmpSLT(index[axis], I64(end)), [&]() { return Emit(*op, from); },
            [&]() { return pick(k + 1, end); });
      };
      return pick(0, 0);
    }
    case HloOpcode::kReverse: {
      ASSIGN_OR_RETURN(const HloInstruction* op, operand(0));
      if (!AllInRange(dims_attr, rank)) return InvalidInstruction(instr, "bad dimensions={...}");
      IrIndex from = index;
      for (int64_t d : dims_attr) from[d] = b_.CreateSub(I64(Dims(instr)[d] - 1), index[d]);
      return Emit(*op, from);
    }
    case HloOpcode::kIota: {
      const int64_t dim = instr.attrs().iota_dimension;
      if (dim < 0 || dim >= rank) return InvalidInstruction(instr, "iota_dimension out of range");
      const PrimitiveType type = instr.shape().element_type();
      Value* v = index[dim];
      if (IsComplex(type)) {
        llvm::Type* part = ComputeFloatType(type);
        Value* z = llvm::UndefValue::get(IrType(type));
        z = b_.CreateInsertValue(z, b_.CreateSIToFP(v, part), 0);
        return IrValues{b_.CreateInsertValue(z, llvm::ConstantFP::get(part, 0.0), 1)};
      }
      if (type == PrimitiveType::F32) return IrValues{b_.CreateSIToFP(v, b_.getFloatTy())};
      if (IsFloatingPoint(type)) {
        return IrValues{FromCompute(type, b_.CreateSIToFP(v, b_.getDoubleTy()))};
      }
      if (type == PrimitiveType::PRED) {
        return IrValues{b_.CreateZExt(b_.CreateICmpNE(v, I64(0)), b_.getInt8Ty())};
      }
      return IrValues{b_.CreateTrunc(v, IrType(type))};
    }
    default:
      return UnsupportedInstruction(instr, "this opcode");
  }
}

absl::StatusOr<IrValues> IrEmitter::EmitConstant(const HloInstruction& instr,
                                                 const IrIndex& index) {
  const auto& literal = instr.attrs().literal;
  if (!literal || !literal->shape().IsArray())
    return InvalidInstruction(instr, "has no array literal");
  if (literal->elided())
    return UnsupportedInstruction(instr, "a constant whose values were elided");
  const PrimitiveType type = literal->shape().element_type();
  if (type != instr.shape().element_type() ||
      literal->shape().dimensions() != instr.shape().dimensions()) {
    return InvalidInstruction(instr, "literal shape differs from the instruction's");
  }
  if (literal->element_count() == 1) {
    if (IsComplex(type)) {
      const std::complex<double> z = literal->GetComplex(0);
      llvm::Type* part = ComputeFloatType(type);
      Value* v = llvm::UndefValue::get(IrType(type));
      v = b_.CreateInsertValue(v, llvm::ConstantFP::get(part, z.real()), 0);
      return IrValues{b_.CreateInsertValue(v, llvm::ConstantFP::get(part, z.imag()), 1)};
    }
    const int bits = PrimitiveBitWidth(type);
    return IrValues{
        FromBits(type, llvm::ConstantInt::get(b_.getIntNTy(bits), literal->GetBits(0)))};
  }
  llvm::GlobalVariable*& global = constants_[&instr];
  if (global == nullptr) {
    const std::vector<uint8_t>& raw = literal->raw_data();
    llvm::Constant* data = llvm::ConstantDataArray::get(context(), llvm::ArrayRef<uint8_t>(raw));
    global = new llvm::GlobalVariable(module_, data->getType(), /*isConstant=*/true,
                                      llvm::GlobalValue::PrivateLinkage, data,
                                      absl::StrCat("constant.", instr.name()));
    global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    global->setAlignment(llvm::Align(64));
  }
  // Literals hold their elements row-major.
  return IrValues{Load(type, global, RowMajorLinear(Dims(instr), index))};
}

absl::StatusOr<IrValues> IrEmitter::EmitDynamicSlice(const HloInstruction& instr,
                                                     const IrIndex& index) {
  const HloInstruction* op = instr.operand(0);
  if (op->shape().rank() != instr.shape().rank()) return InvalidInstruction(instr, "rank mismatch");
  ASSIGN_OR_RETURN(IrIndex starts, ClampedStarts(instr, 1, op->shape().dimensions(), Dims(instr)));
  IrIndex from(index.size());
  for (size_t d = 0; d < index.size(); ++d) from[d] = b_.CreateAdd(starts[d], index[d]);
  return Emit(*op, from);
}

absl::StatusOr<IrValues> IrEmitter::EmitDynamicUpdateSlice(const HloInstruction& instr,
                                                           const IrIndex& index) {
  if (instr.operand_count() < 2) return InvalidInstruction(instr, "needs an operand and an update");
  const HloInstruction* op = instr.operand(0);
  const HloInstruction* update = instr.operand(1);
  const int64_t rank = instr.shape().rank();
  if (update->shape().rank() != rank) return InvalidInstruction(instr, "rank mismatch");
  ASSIGN_OR_RETURN(IrIndex starts,
                   ClampedStarts(instr, 2, Dims(instr), update->shape().dimensions()));
  Value* inside = b_.getTrue();
  IrIndex in_update(rank);
  for (int64_t d = 0; d < rank; ++d) {
    in_update[d] = b_.CreateSub(index[d], starts[d]);
    inside = b_.CreateAnd(inside, b_.CreateICmpSGE(in_update[d], I64(0)));
    inside =
        b_.CreateAnd(inside, b_.CreateICmpSLT(in_update[d], I64(update->shape().dimensions(d))));
  }
  return If(
      inside, [&]() { return Emit(*update, in_update); }, [&]() { return Emit(*op, index); });
}

absl::StatusOr<IrValues> IrEmitter::EmitGather(const HloInstruction& instr, const IrIndex& index) {
  if (instr.operand_count() != 2 || !instr.attrs().gather_dimension_numbers) {
    return InvalidInstruction(instr, "needs an operand, indices and dimension numbers");
  }
  const HloInstruction* op = instr.operand(0);
  const HloInstruction* indices = instr.operand(1);
  const GatherDimensionNumbers& dn = *instr.attrs().gather_dimension_numbers;
  const std::vector<int64_t>& slice_sizes = instr.attrs().gather_slice_sizes;
  const int64_t rank = op->shape().rank();
  const int64_t indices_rank = indices->shape().rank();
  if (!IsInteger(indices->shape().element_type()))
    return InvalidInstruction(instr, "indices must be integers");
  if (dn.index_vector_dim < 0 || dn.index_vector_dim > indices_rank ||
      static_cast<int64_t>(slice_sizes.size()) != rank ||
      !AllInRange(dn.offset_dims, index.size()) || !AllInRange(dn.start_index_map, rank) ||
      !AllInRange(dn.operand_batching_dims, rank) ||
      !AllInRange(dn.start_indices_batching_dims, indices_rank) ||
      dn.operand_batching_dims.size() != dn.start_indices_batching_dims.size()) {
    return InvalidInstruction(instr, "dimension numbers do not fit the shapes");
  }
  std::vector<int64_t> index_batch_dims;  // indices dimensions holding batch positions
  for (int64_t d = 0; d < indices_rank; ++d) {
    if (d != dn.index_vector_dim) index_batch_dims.push_back(d);
  }
  const int64_t vector_size =
      dn.index_vector_dim < indices_rank ? indices->shape().dimensions(dn.index_vector_dim) : 1;
  const std::vector<int64_t> batch_dims =
      RemainingDims(static_cast<int64_t>(index.size()), dn.offset_dims, {});
  const std::vector<int64_t> offset_operand_dims =
      RemainingDims(rank, dn.collapsed_slice_dims, dn.operand_batching_dims);
  if (batch_dims.size() != index_batch_dims.size() ||
      offset_operand_dims.size() != dn.offset_dims.size() ||
      static_cast<int64_t>(dn.start_index_map.size()) != vector_size) {
    return InvalidInstruction(instr, "dimension numbers do not fit the shapes");
  }
  IrIndex position(indices_rank, I64(0));
  for (size_t k = 0; k < batch_dims.size(); ++k)
    position[index_batch_dims[k]] = index[batch_dims[k]];
  IrIndex from(rank, I64(0));
  for (int64_t k = 0; k < vector_size; ++k) {
    const int64_t d = dn.start_index_map[k];
    IrIndex at = position;
    if (dn.index_vector_dim < indices_rank) at[dn.index_vector_dim] = I64(k);
    ASSIGN_OR_RETURN(Value * raw, EmitOne(*indices, at));
    Value* start = IndexValue(indices->shape().element_type(), raw);
    Value* limit = I64(std::max<int64_t>(0, op->shape().dimensions(d) - slice_sizes[d]));
    start = b_.CreateSelect(b_.CreateICmpSLT(start, I64(0)), I64(0), start);
    from[d] = b_.CreateSelect(b_.CreateICmpSGT(start, limit), limit, start);
  }
  for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i) {
    from[dn.operand_batching_dims[i]] = position[dn.start_indices_batching_dims[i]];
  }
  for (size_t k = 0; k < offset_operand_dims.size(); ++k) {
    from[offset_operand_dims[k]] =
        b_.CreateAdd(from[offset_operand_dims[k]], index[dn.offset_dims[k]]);
  }
  return Emit(*op, from);
}

absl::StatusOr<IrValues> IrEmitter::EmitBitcastConvert(const HloInstruction& instr,
                                                       const IrIndex& index) {
  const HloInstruction* op = instr.operand(0);
  const PrimitiveType from = op->shape().element_type(), to = instr.shape().element_type();
  if (from == PrimitiveType::PRED || to == PrimitiveType::PRED || IrType(from) == nullptr) {
    return UnsupportedInstruction(instr, "bitcast-convert of pred");
  }
  const int in_bits = PrimitiveBitWidth(from), out_bits = PrimitiveBitWidth(to);
  if (in_bits == out_bits) {
    ASSIGN_OR_RETURN(Value * v, EmitOne(*op, index));
    return IrValues{FromBits(to, ToBits(from, v))};
  }
  if (in_bits % 8 != 0 || out_bits % 8 != 0) {
    return UnsupportedInstruction(instr,
                                  "bitcast-convert between sub-byte types of different widths");
  }
  if (in_bits > out_bits) {  // the result's new minor dimension picks a piece
    IrIndex at(index.begin(), index.end() - 1);
    ASSIGN_OR_RETURN(Value * v, EmitOne(*op, at));
    Value* bits = ToBits(from, v);
    Value* shift = b_.CreateZExtOrTrunc(b_.CreateMul(index.back(), I64(out_bits)), bits->getType());
    Value* piece = b_.CreateTrunc(b_.CreateLShr(bits, shift), b_.getIntNTy(out_bits));
    return IrValues{FromBits(to, piece)};
  }
  // Narrower operand: its minor dimension's elements join, little-endian.
  const int64_t ratio = out_bits / in_bits;
  llvm::Type* wide = b_.getIntNTy(out_bits);
  Value* bits = llvm::ConstantInt::get(wide, 0);
  for (int64_t k = 0; k < ratio; ++k) {
    IrIndex at = index;
    at.push_back(I64(k));
    ASSIGN_OR_RETURN(Value * v, EmitOne(*op, at));
    Value* piece = b_.CreateZExt(ToBits(from, v), wide);
    bits = b_.CreateOr(bits, b_.CreateShl(piece, k * in_bits));
  }
  return IrValues{FromBits(to, bits)};
}

// ---------------------------------------------------------------- reductions

namespace {

// The opcode of a reducer that applies one binary op to its two distinct
// f32 or f64 parameters (add: a sum; maximum, minimum); nullopt otherwise.
std::optional<HloOpcode> FloatBinaryReducer(const HloComputation& reducer) {
  const HloInstruction* root = reducer.root_instruction();
  if (reducer.num_parameters() != 2 || root == nullptr || root->operand_count() != 2) {
    return std::nullopt;
  }
  const PrimitiveType t = root->shape().element_type();
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  if ((t != PrimitiveType::F32 && t != PrimitiveType::F64) ||
      a->opcode() != HloOpcode::kParameter || b->opcode() != HloOpcode::kParameter || a == b) {
    return std::nullopt;
  }
  return root->opcode();
}

// The operand index that reduced index `reduced` and result index `index`
// make: reduced dimensions from the first, the others from the second.
IrIndex ReduceOperandIndex(int64_t rank, const std::vector<int64_t>& reduced_dims,
                           const IrIndex& index, const IrIndex& reduced) {
  IrIndex at(rank);
  size_t kept = 0, r = 0;
  for (int64_t d = 0; d < rank; ++d) {
    at[d] = Contains(reduced_dims, d) ? reduced[r++] : index[kept++];
  }
  return at;
}

}  // namespace

// The maximum (minimum) of a float reduce, as a loop LLVM vectorizes with
// several partial results: maxnum (minnum) under no-NaNs / no-signed-zeros
// beside an or of "is NaN" (XLA's maximum propagates NaN: a NaN anywhere, the
// init value included, makes the result NaN). The order of equal-valued
// zeros is then unspecified, as in XLA:CPU's vectorized reductions.
absl::StatusOr<IrValues> IrEmitter::EmitFloatMaxMinReduce(
    const HloInstruction& instr, const IrIndex& index, HloOpcode op,
    const std::vector<int64_t>& reduced_dims, const std::vector<int64_t>& reduced_sizes) {
  const Shape& input = instr.operand(0)->shape();
  const PrimitiveType type = input.element_type();
  llvm::Type* t = IrType(type);
  ASSIGN_OR_RETURN(Value * init, EmitOne(*instr.operand(1), {}));
  llvm::AllocaInst* acc = Alloca(t, "acc");
  llvm::AllocaInst* nan = Alloca(b_.getInt1Ty(), "nan");
  b_.CreateStore(init, acc);
  b_.CreateStore(b_.CreateFCmpUNO(init, init), nan);
  llvm::FastMathFlags flags;
  flags.setNoNaNs();
  flags.setNoSignedZeros();
  const llvm::Intrinsic::ID id =
      op == HloOpcode::kMaximum ? llvm::Intrinsic::maxnum : llvm::Intrinsic::minnum;
  RETURN_IF_ERROR(ForLoopNest(reduced_sizes, [&](const IrIndex& reduced) -> absl::Status {
    ASSIGN_OR_RETURN(
        Value * x,
        EmitOne(*instr.operand(0), ReduceOperandIndex(input.rank(), reduced_dims, index, reduced)));
    Value* a = b_.CreateLoad(t, acc);
    llvm::CallInst* m = b_.CreateBinaryIntrinsic(id, a, x);
    m->setFastMathFlags(flags);
    b_.CreateStore(m, acc);
    b_.CreateStore(b_.CreateOr(b_.CreateLoad(b_.getInt1Ty(), nan), b_.CreateFCmpUNO(x, x)), nan);
    return absl::OkStatus();
  }));
  Value* result = b_.CreateSelect(b_.CreateLoad(b_.getInt1Ty(), nan), llvm::ConstantFP::getNaN(t),
                                  b_.CreateLoad(t, acc));
  ASSIGN_OR_RETURN(result, Convert(instr, type, instr.shape().element_type(), result));
  return IrValues{result};
}

absl::StatusOr<IrValues> IrEmitter::EmitReduce(const HloInstruction& instr, const IrIndex& index) {
  const int64_t n = instr.operand_count() / 2;
  if (n < 1 || instr.operand_count() != 2 * n || instr.called_computations().size() != 1) {
    return InvalidInstruction(instr, "needs inputs, as many init values and one computation");
  }
  const HloComputation& reducer = *instr.called_computations()[0];
  const Shape& input = instr.operand(0)->shape();
  const std::vector<int64_t> reduced_dims =
      instr.attrs().dimensions.value_or(std::vector<int64_t>{});
  if (!AllInRange(reduced_dims, input.rank()))
    return InvalidInstruction(instr, "bad dimensions={...}");
  std::vector<int64_t> reduced_sizes;
  for (int64_t d = 0; d < input.rank(); ++d) {
    if (Contains(reduced_dims, d)) reduced_sizes.push_back(input.dimensions(d));
  }
  if (std::optional<HloOpcode> op = FloatBinaryReducer(reducer);
      (op == HloOpcode::kMaximum || op == HloOpcode::kMinimum) && n == 1 &&
      input.element_type() == reducer.root_instruction()->shape().element_type() &&
      instr.operand(1)->shape().element_type() == input.element_type() && instr.shape().IsArray() &&
      instr.shape().element_type() == input.element_type()) {
    return EmitFloatMaxMinReduce(instr, index, *op, reduced_dims, reduced_sizes);
  }
  std::vector<PrimitiveType> types;
  std::vector<llvm::AllocaInst*> acc;
  for (int64_t i = 0; i < n; ++i) {
    const PrimitiveType init_type = instr.operand(n + i)->shape().element_type();
    const HloInstruction* p = reducer.parameter_instruction(i);
    if (p == nullptr || !p->shape().IsScalar())
      return InvalidInstruction(instr, "bad reducer parameters");
    const PrimitiveType acc_type = p->shape().element_type();
    ASSIGN_OR_RETURN(Value * init, EmitOne(*instr.operand(n + i), {}));
    ASSIGN_OR_RETURN(init, Convert(instr, init_type, acc_type, init));
    acc.push_back(Alloca(IrType(acc_type), "acc"));
    b_.CreateStore(init, acc.back());
    types.push_back(acc_type);
  }
  for (int64_t i = 0; i < n; ++i) types.push_back(instr.operand(i)->shape().element_type());
  RETURN_IF_ERROR(ForLoopNest(reduced_sizes, [&](const IrIndex& reduced) -> absl::Status {
    const IrIndex at = ReduceOperandIndex(input.rank(), reduced_dims, index, reduced);
    IrValues args;
    for (int64_t i = 0; i < n; ++i)
      args.push_back(b_.CreateLoad(acc[i]->getAllocatedType(), acc[i]));
    for (int64_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(Value * x, EmitOne(*instr.operand(i), at));
      args.push_back(x);
    }
    ASSIGN_OR_RETURN(IrValues result, EmitConvertingCall(reducer, args, types, instr));
    if (static_cast<int64_t>(result.size()) != n)
      return InvalidInstruction(instr, "reducer result count");
    // A float sum may be reassociated, as XLA:CPU's reductions are: LLVM
    // then vectorizes the loop with several partial sums (the result can
    // differ from the interpreter's sequential order in the last bits; it
    // does not change between runs or partition counts). Other reducers keep
    // the interpreter's order.
    if (n == 1 && FloatBinaryReducer(reducer) == HloOpcode::kAdd) {
      if (auto* sum = llvm::dyn_cast<llvm::Instruction>(result[0]);
          sum != nullptr && sum->getOpcode() == llvm::Instruction::FAdd) {
        sum->setHasAllowReassoc(true);
      }
    }
    const Shape& root = reducer.root_instruction()->shape();
    for (int64_t i = 0; i < n; ++i) {
      const PrimitiveType result_type =
          root.IsTuple() ? root.tuple_shapes(i).element_type() : root.element_type();
      ASSIGN_OR_RETURN(Value * v, Convert(instr, result_type, types[i], result[i]));
      b_.CreateStore(v, acc[i]);
    }
    return absl::OkStatus();
  }));
  IrValues out;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& s = instr.shape().IsTuple() ? instr.shape().tuple_shapes(i) : instr.shape();
    Value* v = b_.CreateLoad(acc[i]->getAllocatedType(), acc[i]);
    ASSIGN_OR_RETURN(v, Convert(instr, types[i], s.element_type(), v));
    out.push_back(v);
  }
  return out;
}

absl::StatusOr<IrValues> IrEmitter::EmitReduceWindow(const HloInstruction& instr,
                                                     const IrIndex& index) {
  const int64_t n = instr.operand_count() / 2;
  if (n < 1 || instr.operand_count() != 2 * n || instr.called_computations().size() != 1) {
    return InvalidInstruction(instr, "needs inputs, as many init values and one computation");
  }
  const HloComputation& reducer = *instr.called_computations()[0];
  const Shape& input = instr.operand(0)->shape();
  static const Window kNoWindow;
  const Window& window = instr.attrs().window ? *instr.attrs().window : kNoWindow;
  if (static_cast<int64_t>(window.dimensions.size()) != input.rank()) {
    return InvalidInstruction(instr, "window rank differs from the input's");
  }
  std::vector<int64_t> sizes;
  for (const WindowDimension& w : window.dimensions) {
    if (w.window_reversal) return UnsupportedInstruction(instr, "window reversal");
    if (w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1) {
      return InvalidInstruction(instr, "window strides and dilations must be positive");
    }
    sizes.push_back(w.size);
  }
  std::vector<PrimitiveType> types;
  std::vector<llvm::AllocaInst*> acc;
  IrValues inits;
  for (int64_t i = 0; i < n; ++i) {
    const PrimitiveType init_type = instr.operand(n + i)->shape().element_type();
    const HloInstruction* p = reducer.parameter_instruction(i);
    if (p == nullptr || !p->shape().IsScalar())
      return InvalidInstruction(instr, "bad reducer parameters");
    ASSIGN_OR_RETURN(Value * init, EmitOne(*instr.operand(n + i), {}));
    inits.push_back(init);
    ASSIGN_OR_RETURN(Value * converted, Convert(instr, init_type, p->shape().element_type(), init));
    acc.push_back(Alloca(IrType(p->shape().element_type()), "acc"));
    b_.CreateStore(converted, acc.back());
    types.push_back(p->shape().element_type());
  }
  for (int64_t i = 0; i < n; ++i) types.push_back(instr.operand(i)->shape().element_type());
  RETURN_IF_ERROR(ForLoopNest(sizes, [&](const IrIndex& k) -> absl::Status {
    IrIndex at(input.rank());
    Value* valid = b_.getTrue();
    for (int64_t d = 0; d < input.rank(); ++d) {
      const WindowDimension& w = window.dimensions[d];
      Value* x = b_.CreateSub(b_.CreateAdd(b_.CreateMul(index[d], I64(w.stride)),
                                           b_.CreateMul(k[d], I64(w.window_dilation))),
                              I64(w.padding_low));
      valid = b_.CreateAnd(valid, b_.CreateICmpSGE(x, I64(0)));
      if (w.base_dilation > 1) {
        valid =
            b_.CreateAnd(valid, b_.CreateICmpEQ(b_.CreateSRem(x, I64(w.base_dilation)), I64(0)));
        x = b_.CreateSDiv(x, I64(w.base_dilation));
      }
      valid = b_.CreateAnd(valid, b_.CreateICmpSLT(x, I64(input.dimensions(d))));
      at[d] = x;
    }
    // Padding and base-dilation holes contribute the init values.
    ASSIGN_OR_RETURN(IrValues xs, If(
                                      valid,
                                      [&]() -> absl::StatusOr<IrValues> {
                                        IrValues values;
                                        for (int64_t i = 0; i < n; ++i) {
                                          ASSIGN_OR_RETURN(Value * v,
                                                           EmitOne(*instr.operand(i), at));
                                          values.push_back(v);
                                        }
                                        return values;
                                      },
                                      [&]() -> absl::StatusOr<IrValues> { return inits; }));
    IrValues args;
    for (int64_t i = 0; i < n; ++i)
      args.push_back(b_.CreateLoad(acc[i]->getAllocatedType(), acc[i]));
    args.insert(args.end(), xs.begin(), xs.end());
    ASSIGN_OR_RETURN(IrValues result, EmitConvertingCall(reducer, args, types, instr));
    if (static_cast<int64_t>(result.size()) != n)
      return InvalidInstruction(instr, "reducer result count");
    const Shape& root = reducer.root_instruction()->shape();
    for (int64_t i = 0; i < n; ++i) {
      const PrimitiveType result_type =
          root.IsTuple() ? root.tuple_shapes(i).element_type() : root.element_type();
      ASSIGN_OR_RETURN(Value * v, Convert(instr, result_type, types[i], result[i]));
      b_.CreateStore(v, acc[i]);
    }
    return absl::OkStatus();
  }));
  IrValues out;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& s = instr.shape().IsTuple() ? instr.shape().tuple_shapes(i) : instr.shape();
    Value* v = b_.CreateLoad(acc[i]->getAllocatedType(), acc[i]);
    ASSIGN_OR_RETURN(v, Convert(instr, types[i], s.element_type(), v));
    out.push_back(v);
  }
  return out;
}

absl::StatusOr<IrValues> IrEmitter::EmitMap(const HloInstruction& instr, const IrIndex& index) {
  if (instr.called_computations().size() != 1)
    return InvalidInstruction(instr, "needs one computation");
  IrValues args;
  std::vector<PrimitiveType> types;
  for (const HloInstruction* op : instr.operands()) {
    ASSIGN_OR_RETURN(Value * v, EmitOne(*op, index));
    args.push_back(v);
    types.push_back(op->shape().element_type());
  }
  const HloComputation& f = *instr.called_computations()[0];
  ASSIGN_OR_RETURN(IrValues result, EmitConvertingCall(f, args, types, instr));
  if (result.size() != 1)
    return InvalidInstruction(instr, "the computation must return one scalar");
  ASSIGN_OR_RETURN(Value * v, Convert(instr, f.root_instruction()->shape().element_type(),
                                      instr.shape().element_type(), result[0]));
  return IrValues{v};
}

}  // namespace xlite::codegen
