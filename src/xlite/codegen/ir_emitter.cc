// The IrEmitter's core: element dispatch and caching, types, memory, control
// flow, and the floating-point encodings and conversions every family uses.
#include "xlite/codegen/ir_emitter.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/Analysis/VectorUtils.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Metadata.h"
#include "xlite/codegen/kernel.h"
#include "xlite/ir/float_format.h"
#include "xlite/support/status.h"
#include "xlite/verify/shape_inference.h"

namespace xlite::codegen {

absl::Status InvalidInstruction(const HloInstruction& instr, absl::string_view what) {
  return InvalidArgument(HloOpcodeString(instr.opcode()), " '", instr.name(), "': ", what);
}

absl::Status UnsupportedInstruction(const HloInstruction& instr, absl::string_view what) {
  return Unimplemented(HloOpcodeString(instr.opcode()), " '", instr.name(), "': ", what,
                       " is not supported by the CPU code generator");
}

IrEmitter::IrEmitter(llvm::Module& module, llvm::Function& function, llvm::IRBuilder<>& builder)
    : module_(module), function_(function), b_(builder) {
  cache_scopes_.emplace_back();
}

// ---------------------------------------------------------------- elements

void IrEmitter::Bind(const HloInstruction* instr, Generator generator) {
  bindings_[instr] = std::move(generator);
}

void IrEmitter::Unbind(const HloInstruction* instr) { bindings_.erase(instr); }

namespace {

// The instruction's declared shape is the one shape inference gives
// (layouts aside), so the index arithmetic below stays in bounds.
absl::Status CheckInferredShape(const HloInstruction& instr) {
  switch (instr.opcode()) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kBitcast:
    case HloOpcode::kFusion:
      return absl::OkStatus();
    default:
      break;
  }
  absl::StatusOr<Shape> inferred = InferShape(instr);
  if (!inferred.ok()) return inferred.status();
  if (!inferred->EqualIgnoringLayout(instr.shape())) {
    return InvalidArgument(HloOpcodeString(instr.opcode()), " '", instr.name(), "': shape ",
                           instr.shape().ToString(false), " differs from the inferred ",
                           inferred->ToString(false));
  }
  return absl::OkStatus();
}

absl::Status CheckCompilableShape(const HloInstruction& instr, const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) {
      if (s.IsTuple()) return UnsupportedInstruction(instr, "a nested tuple shape");
      RETURN_IF_ERROR(CheckCompilableShape(instr, s));
    }
    return absl::OkStatus();
  }
  if (!shape.IsArray()) {
    return UnsupportedInstruction(instr, absl::StrCat("shape ", shape.ToString(false)));
  }
  if (!shape.is_static()) return UnsupportedInstruction(instr, "a dynamic shape");
  if (shape.has_layout()) {
    const Layout& layout = shape.layout();
    if (!layout.tiles.empty()) return UnsupportedInstruction(instr, "a tiled layout");
    if (layout.element_size_in_bits != 0 &&
        layout.element_size_in_bits != 8 * PrimitiveByteWidth(shape.element_type())) {
      return UnsupportedInstruction(instr, "a packed sub-byte layout (E(n))");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<IrValues> IrEmitter::Emit(const HloInstruction& instr, const IrIndex& index) {
  CacheKey key;
  key.reserve(index.size() + 1);
  key.push_back(&instr);
  for (llvm::Value* v : index) key.push_back(v);
  for (auto scope = cache_scopes_.rbegin(); scope != cache_scopes_.rend(); ++scope) {
    auto it = scope->find(key);
    if (it != scope->end()) return it->second;
  }
  IrValues values;
  if (auto it = bindings_.find(&instr); it != bindings_.end()) {
    Generator generator = it->second;  // may rebind while it runs
    ASSIGN_OR_RETURN(values, generator(index));
  } else {
    if (!checked_.contains(&instr)) {
      RETURN_IF_ERROR(CheckCompilableShape(instr, instr.shape()));
      RETURN_IF_ERROR(CheckInferredShape(instr));
      checked_.insert(&instr);
    }
    const int64_t rank = instr.shape().IsTuple() ? -1 : instr.shape().rank();
    if (rank >= 0 && static_cast<int64_t>(index.size()) != rank) {
      return Internal("index of rank ", index.size(), " for ", instr.name());
    }
    ASSIGN_OR_RETURN(values, EmitUncached(instr, index));
  }
  cache_scopes_.back()[std::move(key)] = values;
  return values;
}

absl::StatusOr<llvm::Value*> IrEmitter::EmitOne(const HloInstruction& instr, const IrIndex& index) {
  ASSIGN_OR_RETURN(IrValues values, Emit(instr, index));
  if (values.size() != 1) return UnsupportedInstruction(instr, "a tuple-shaped operand here");
  return values[0];
}

absl::StatusOr<IrValues> IrEmitter::EmitUncached(const HloInstruction& instr,
                                                 const IrIndex& index) {
  if (!instr.shape().IsTuple() && IrType(instr.shape().element_type()) == nullptr) {
    return UnsupportedInstruction(
        instr, absl::StrCat("element type ", PrimitiveTypeName(instr.shape().element_type())));
  }
  if (IsElementwiseOpcode(instr.opcode())) {
    ASSIGN_OR_RETURN(llvm::Value * v, EmitElementwise(instr, index));
    return IrValues{v};
  }
  switch (instr.opcode()) {
    case HloOpcode::kConstant:
      return EmitConstant(instr, index);
    case HloOpcode::kDynamicSlice:
      return EmitDynamicSlice(instr, index);
    case HloOpcode::kDynamicUpdateSlice:
      return EmitDynamicUpdateSlice(instr, index);
    case HloOpcode::kGather:
      return EmitGather(instr, index);
    case HloOpcode::kBitcastConvert:
      return EmitBitcastConvert(instr, index);
    case HloOpcode::kReduce:
      return EmitReduce(instr, index);
    case HloOpcode::kReduceWindow:
      return EmitReduceWindow(instr, index);
    case HloOpcode::kMap:
      return EmitMap(instr, index);
    case HloOpcode::kFusion:
      return EmitFusion(instr, index);
    case HloOpcode::kTuple: {
      IrValues values;
      for (const HloInstruction* operand : instr.operands()) {
        ASSIGN_OR_RETURN(llvm::Value * v, EmitOne(*operand, index));
        values.push_back(v);
      }
      return values;
    }
    case HloOpcode::kGetTupleElement: {
      if (instr.operand_count() != 1)
        return InvalidArgument("get-tuple-element '", instr.name(), "' takes 1 operand");
      ASSIGN_OR_RETURN(IrValues values, Emit(*instr.operand(0), index));
      const int64_t i = instr.attrs().tuple_index;
      if (i < 0 || i >= static_cast<int64_t>(values.size())) {
        return InvalidArgument("get-tuple-element '", instr.name(), "': index ", i,
                               " out of range");
      }
      return IrValues{values[i]};
    }
    case HloOpcode::kParameter:
      return UnsupportedInstruction(instr, "a parameter outside a kernel's operands");
    default:
      return EmitDataMovement(instr, index);
  }
}

absl::StatusOr<IrValues> IrEmitter::EmitCall(const HloComputation& computation,
                                             const IrValues& args, const HloInstruction& caller) {
  if (computation.num_parameters() != static_cast<int64_t>(args.size())) {
    return InvalidArgument(HloOpcodeString(caller.opcode()), " '", caller.name(),
                           "': computation '", computation.name(), "' takes ",
                           computation.num_parameters(), " parameters, got ", args.size());
  }
  std::vector<std::pair<const HloInstruction*, std::optional<Generator>>> saved;
  for (int64_t i = 0; i < computation.num_parameters(); ++i) {
    const HloInstruction* p = computation.parameter_instruction(i);
    if (p == nullptr || !p->shape().IsScalar()) {
      return UnsupportedInstruction(caller, absl::StrCat("computation '", computation.name(),
                                                         "' with non-scalar parameters"));
    }
    if (IrType(p->shape().element_type()) != args[i]->getType()) {
      return InvalidArgument(HloOpcodeString(caller.opcode()), " '", caller.name(), "': argument ",
                             i, " of computation '", computation.name(), "' has the wrong type");
    }
  }
  for (int64_t i = 0; i < computation.num_parameters(); ++i) {
    const HloInstruction* p = computation.parameter_instruction(i);
    auto it = bindings_.find(p);
    saved.emplace_back(p, it == bindings_.end() ? std::nullopt : std::optional(it->second));
    llvm::Value* arg = args[i];
    Bind(p, [arg](const IrIndex&) -> absl::StatusOr<IrValues> { return IrValues{arg}; });
  }
  cache_scopes_.emplace_back();
  absl::StatusOr<IrValues> result = Emit(*computation.root_instruction(), {});
  cache_scopes_.pop_back();
  for (auto& [p, generator] : saved) {
    if (generator) {
      Bind(p, std::move(*generator));
    } else {
      Unbind(p);
    }
  }
  if (result.ok() && !computation.root_instruction()->shape().IsTuple() &&
      !computation.root_instruction()->shape().IsScalar()) {
    return UnsupportedInstruction(
        caller, absl::StrCat("computation '", computation.name(), "' with a non-scalar result"));
  }
  return result;
}

absl::StatusOr<IrValues> IrEmitter::EmitFusion(const HloInstruction& instr, const IrIndex& index) {
  if (instr.called_computations().size() != 1 || instr.called_computations()[0] == nullptr) {
    return InvalidArgument("fusion '", instr.name(), "' needs one fused computation");
  }
  const HloComputation& fused = *instr.called_computations()[0];
  if (fused.num_parameters() != instr.operand_count()) {
    return InvalidArgument("fusion '", instr.name(), "': ", instr.operand_count(), " operands for ",
                           fused.num_parameters(), " parameters");
  }
  std::vector<std::pair<const HloInstruction*, std::optional<Generator>>> saved;
  for (int64_t i = 0; i < fused.num_parameters(); ++i) {
    const HloInstruction* p = fused.parameter_instruction(i);
    if (p == nullptr) return InvalidArgument("fusion '", instr.name(), "': missing parameter");
    auto it = bindings_.find(p);
    saved.emplace_back(p, it == bindings_.end() ? std::nullopt : std::optional(it->second));
    const HloInstruction* operand = instr.operand(i);
    Bind(p, [this, operand](const IrIndex& at) { return Emit(*operand, at); });
  }
  cache_scopes_.emplace_back();
  absl::StatusOr<IrValues> result = Emit(*fused.root_instruction(), index);
  cache_scopes_.pop_back();
  for (auto& [p, generator] : saved) {
    if (generator) {
      Bind(p, std::move(*generator));
    } else {
      Unbind(p);
    }
  }
  return result;
}

// ---------------------------------------------------------------- types

bool IrEmitter::IsSmallFloat(PrimitiveType type) {
  return IsFloatingPoint(type) && type != PrimitiveType::F32 && type != PrimitiveType::F64;
}

llvm::Type* IrEmitter::IrType(PrimitiveType type) {
  llvm::LLVMContext& ctx = context();
  switch (GetPrimitiveKind(type)) {
    case PrimitiveKind::kPred:
      return b_.getInt8Ty();
    case PrimitiveKind::kSigned:
    case PrimitiveKind::kUnsigned:
      return b_.getIntNTy(PrimitiveBitWidth(type));
    case PrimitiveKind::kFloat:
      if (type == PrimitiveType::F32) return b_.getFloatTy();
      if (type == PrimitiveType::F64) return b_.getDoubleTy();
      if (!GetFloatFormat(type)) return nullptr;
      return b_.getIntNTy(PrimitiveBitWidth(type));
    case PrimitiveKind::kComplex: {
      llvm::Type* part = type == PrimitiveType::C64 ? b_.getFloatTy() : b_.getDoubleTy();
      return llvm::StructType::get(ctx, {part, part});
    }
    default:
      return nullptr;
  }
}

llvm::Type* IrEmitter::StorageType(PrimitiveType type) {
  if (PrimitiveBitWidth(type) < 8 && GetPrimitiveKind(type) != PrimitiveKind::kOther) {
    return b_.getInt8Ty();
  }
  return IrType(type);
}

llvm::Type* IrEmitter::ComputeFloatType(PrimitiveType type) {
  return type == PrimitiveType::F64 || type == PrimitiveType::C128 ? b_.getDoubleTy()
                                                                   : b_.getFloatTy();
}

llvm::Value* IrEmitter::IntConstant(PrimitiveType type, uint64_t bits) {
  return llvm::ConstantInt::get(IrType(type), bits);
}

llvm::Value* IrEmitter::Zero(PrimitiveType type) {
  return llvm::Constant::getNullValue(IrType(type));
}

// ---------------------------------------------------------------- memory

namespace {
llvm::Align ElementAlign(PrimitiveType type) {
  const int bytes = PrimitiveByteWidth(type);
  return llvm::Align(IsComplex(type) ? bytes / 2 : bytes);
}
}  // namespace

llvm::Value* IrEmitter::Load(PrimitiveType type, llvm::Value* base, llvm::Value* offset) {
  llvm::Type* storage = StorageType(type);
  llvm::Value* ptr = b_.CreateInBoundsGEP(storage, base, offset);
  llvm::Value* v = b_.CreateAlignedLoad(storage, ptr, ElementAlign(type));
  llvm::Type* ir_type = IrType(type);
  if (ir_type != storage) v = b_.CreateTrunc(v, ir_type);
  return v;
}

void IrEmitter::Store(PrimitiveType type, llvm::Value* value, llvm::Value* base,
                      llvm::Value* offset) {
  llvm::Type* storage = StorageType(type);
  if (value->getType() != storage) value = b_.CreateZExt(value, storage);
  llvm::Value* ptr = b_.CreateInBoundsGEP(storage, base, offset);
  b_.CreateAlignedStore(value, ptr, ElementAlign(type));
}

llvm::Value* IrEmitter::PhysicalOffset(const Shape& shape, const IrIndex& index) {
  const std::vector<int64_t> strides = PhysicalStrides(shape);
  llvm::Value* offset = I64(0);
  for (size_t d = 0; d < index.size() && d < strides.size(); ++d) {
    if (shape.dimensions(d) == 1) continue;  // the index is 0
    offset = b_.CreateAdd(offset, b_.CreateMul(index[d], I64(strides[d])), "", true, true);
  }
  return offset;
}

llvm::Value* IrEmitter::RowMajorLinear(const std::vector<int64_t>& dims, const IrIndex& index) {
  llvm::Value* linear = I64(0);
  for (size_t d = 0; d < dims.size(); ++d) {
    linear =
        b_.CreateAdd(b_.CreateMul(linear, I64(dims[d]), "", true, true), index[d], "", true, true);
  }
  return linear;
}

IrIndex IrEmitter::DelinearizeRowMajor(const std::vector<int64_t>& dims, llvm::Value* linear) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  // `linear` is below the product of `dims`, so the most major dimension
  // larger than 1 takes what is left of it whole: no remainder, which LLVM
  // cannot always prove redundant, and which keeps a loop from vectorizing
  // (a bias read through [1536] -> [1, 1, 1536] at an offset of 1024 + j).
  int64_t major = 0;
  while (major + 1 < rank && dims[major] <= 1) ++major;
  IrIndex index(rank);
  for (int64_t d = rank - 1; d >= 0; --d) {
    const int64_t size = std::max<int64_t>(dims[d], 1);
    if (d < major) {
      index[d] = I64(0);
    } else if (d == major) {
      index[d] = linear;
    } else {
      index[d] = b_.CreateURem(linear, I64(size));
      linear = b_.CreateUDiv(linear, I64(size));
    }
  }
  return index;
}

llvm::AllocaInst* IrEmitter::Alloca(llvm::Type* type, const char* name) {
  llvm::BasicBlock& entry = function_.getEntryBlock();
  llvm::IRBuilder<> at_entry(&entry, entry.getFirstInsertionPt());
  return at_entry.CreateAlloca(type, nullptr, name);
}

// ---------------------------------------------------------------- control flow

void IrEmitter::SetLoopId(llvm::BranchInst& back_edge, std::vector<llvm::Metadata*> properties) {
  properties.insert(properties.begin(), nullptr);  // the loop ID refers to itself first
  llvm::MDNode* loop_id = llvm::MDNode::getDistinct(context(), properties);
  loop_id->replaceOperandWith(0, loop_id);
  back_edge.setMetadata(llvm::LLVMContext::MD_loop, loop_id);
}

std::vector<llvm::Metadata*> IrEmitter::LoopHintProperties(LoopHints hints) {
  llvm::LLVMContext& ctx = context();
  std::vector<llvm::Metadata*> properties;
  if (!hints.unroll) {
    properties.push_back(
        llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.unroll.disable")}));
  }
  if (!hints.vectorize) {
    properties.push_back(
        llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.vectorize.enable"),
                                llvm::ConstantAsMetadata::get(b_.getFalse())}));
  }
  return properties;
}

absl::Status IrEmitter::ForLoop(llvm::Value* begin, llvm::Value* end,
                                absl::FunctionRef<absl::Status(llvm::Value*)> body,
                                const char* name, LoopHints hints) {
  llvm::LLVMContext& ctx = context();
  llvm::BasicBlock* preheader = b_.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx, absl::StrCat(name, "loop"), &function_);
  llvm::BasicBlock* body_block =
      llvm::BasicBlock::Create(ctx, absl::StrCat(name, "body"), &function_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, absl::StrCat(name, "exit"), &function_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* iv = b_.CreatePHI(b_.getInt64Ty(), 2, absl::StrCat(name, "iv"));
  iv->addIncoming(begin, preheader);
  b_.CreateCondBr(b_.CreateICmpSLT(iv, end), body_block, exit);
  b_.SetInsertPoint(body_block);
  cache_scopes_.emplace_back();
  absl::Status status = body(iv);
  cache_scopes_.pop_back();
  RETURN_IF_ERROR(status);
  llvm::Value* next = b_.CreateAdd(iv, I64(1), "", true, true);
  iv->addIncoming(next, b_.GetInsertBlock());
  llvm::BranchInst* back_edge = b_.CreateBr(header);
  if (std::vector<llvm::Metadata*> properties = LoopHintProperties(hints); !properties.empty()) {
    SetLoopId(*back_edge, std::move(properties));
  }
  b_.SetInsertPoint(exit);
  return absl::OkStatus();
}

absl::Status IrEmitter::ForIndependentIterations(llvm::Value* begin, llvm::Value* end,
                                                 absl::FunctionRef<absl::Status(llvm::Value*)> body,
                                                 const char* name, LoopHints hints) {
  llvm::LLVMContext& ctx = context();
  llvm::BasicBlock* last_before = &function_.back();
  RETURN_IF_ERROR(ForLoop(begin, end, body, name));
  // ForLoop's blocks follow `last_before`: header, body..., exit, then the
  // blocks the body made; the back edge is the branch to the header.
  llvm::BasicBlock* header = last_before->getNextNode();
  llvm::MDNode* group = llvm::MDNode::getDistinct(ctx, {});
  llvm::BranchInst* back_edge = nullptr;
  for (llvm::BasicBlock* block = header->getNextNode(); block != nullptr;
       block = block->getNextNode()) {
    for (llvm::Instruction& instr : *block) {
      llvm::Value* pointer = llvm::getLoadStorePointerOperand(&instr);
      if (pointer != nullptr && !llvm::isa<llvm::AllocaInst>(llvm::getUnderlyingObject(pointer))) {
        instr.setMetadata(
            llvm::LLVMContext::MD_access_group,
            llvm::uniteAccessGroups(instr.getMetadata(llvm::LLVMContext::MD_access_group), group));
      }
      if (auto* branch = llvm::dyn_cast<llvm::BranchInst>(&instr);
          branch != nullptr && branch->isUnconditional() && branch->getSuccessor(0) == header) {
        back_edge = branch;
      }
    }
  }
  if (back_edge == nullptr) return Internal("loop '", name, "' has no back edge");
  llvm::MDNode* parallel =
      llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.parallel_accesses"), group});
  std::vector<llvm::Metadata*> properties = LoopHintProperties(hints);
  properties.insert(properties.begin(), parallel);
  SetLoopId(*back_edge, std::move(properties));
  return absl::OkStatus();
}

absl::StatusOr<IrValues> IrEmitter::If(llvm::Value* cond,
                                       absl::FunctionRef<absl::StatusOr<IrValues>()> then_fn,
                                       absl::FunctionRef<absl::StatusOr<IrValues>()> else_fn) {
  llvm::LLVMContext& ctx = context();
  llvm::BasicBlock* then_block = llvm::BasicBlock::Create(ctx, "then", &function_);
  llvm::BasicBlock* else_block = llvm::BasicBlock::Create(ctx, "else", &function_);
  llvm::BasicBlock* merge = llvm::BasicBlock::Create(ctx, "merge", &function_);
  b_.CreateCondBr(cond, then_block, else_block);
  auto arm = [&](llvm::BasicBlock* block, absl::FunctionRef<absl::StatusOr<IrValues>()> fn,
                 llvm::BasicBlock*& end) -> absl::StatusOr<IrValues> {
    b_.SetInsertPoint(block);
    cache_scopes_.emplace_back();
    absl::StatusOr<IrValues> values = fn();
    cache_scopes_.pop_back();
    end = b_.GetInsertBlock();
    b_.CreateBr(merge);
    return values;
  };
  llvm::BasicBlock *then_end = nullptr, *else_end = nullptr;
  ASSIGN_OR_RETURN(IrValues then_values, arm(then_block, then_fn, then_end));
  ASSIGN_OR_RETURN(IrValues else_values, arm(else_block, else_fn, else_end));
  if (then_values.size() != else_values.size()) return Internal("If arms yield different counts");
  b_.SetInsertPoint(merge);
  IrValues merged;
  for (size_t i = 0; i < then_values.size(); ++i) {
    if (then_values[i]->getType() != else_values[i]->getType()) {
      return Internal("If arms yield different types");
    }
    llvm::PHINode* phi = b_.CreatePHI(then_values[i]->getType(), 2);
    phi->addIncoming(then_values[i], then_end);
    phi->addIncoming(else_values[i], else_end);
    merged.push_back(phi);
  }
  return merged;
}

absl::Status IrEmitter::When(llvm::Value* cond, absl::FunctionRef<absl::Status()> then_fn) {
  llvm::LLVMContext& ctx = context();
  llvm::BasicBlock* then_block = llvm::BasicBlock::Create(ctx, "when", &function_);
  llvm::BasicBlock* merge = llvm::BasicBlock::Create(ctx, "when.end", &function_);
  b_.CreateCondBr(cond, then_block, merge);
  b_.SetInsertPoint(then_block);
  cache_scopes_.emplace_back();
  absl::Status status = then_fn();
  cache_scopes_.pop_back();
  RETURN_IF_ERROR(status);
  b_.CreateBr(merge);
  b_.SetInsertPoint(merge);
  return absl::OkStatus();
}

// ---------------------------------------------------------------- floats

llvm::Value* IrEmitter::ToCompute(PrimitiveType type, llvm::Value* v) {
  if (type == PrimitiveType::F32 || type == PrimitiveType::F64) return v;
  if (type == PrimitiveType::BF16) {
    // Exact: bf16 is the high half of an f32 (NaN payloads are kept).
    return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(v, b_.getInt32Ty()), 16), b_.getFloatTy());
  }
  return b_.CreateFPTrunc(DecodeSmallFloat(type, v), b_.getFloatTy());
}

llvm::Value* IrEmitter::FromCompute(PrimitiveType type, llvm::Value* f) {
  if (type == PrimitiveType::F32) {
    return f->getType()->isDoubleTy() ? b_.CreateFPTrunc(f, b_.getFloatTy()) : f;
  }
  if (type == PrimitiveType::F64) {
    return f->getType()->isFloatTy() ? b_.CreateFPExt(f, b_.getDoubleTy()) : f;
  }
  return EncodeSmallFloat(type, f);
}

llvm::Value* IrEmitter::DecodeSmallFloat(PrimitiveType type, llvm::Value* bits) {
  const FloatFormat f = *GetFloatFormat(type);
  using Nan = FloatFormat::Nan;
  llvm::Type* i32 = b_.getInt32Ty();
  auto c32 = [&](int64_t v) { return llvm::ConstantInt::get(i32, v); };
  const int mb = f.mantissa_bits, eb = f.exponent_bits;
  llvm::Value* x = b_.CreateZExt(bits, i32);
  llvm::Value* mant = b_.CreateAnd(x, c32((1 << mb) - 1));
  llvm::Value* exp = b_.CreateAnd(b_.CreateLShr(x, c32(mb)), c32((1 << eb) - 1));
  llvm::Value* neg =
      f.has_sign ? b_.CreateICmpNE(b_.CreateAnd(b_.CreateLShr(x, c32(eb + mb)), c32(1)), c32(0))
                 : b_.getFalse();
  llvm::Value* exp_zero = b_.CreateICmpEQ(exp, c32(0));
  llvm::Value* subnormal = mb > 0 ? exp_zero : b_.getFalse();
  llvm::Value* sig = b_.CreateSelect(subnormal, mant, b_.CreateOr(mant, c32(1 << mb)));
  llvm::Value* e =
      b_.CreateSelect(subnormal, c32(1 - f.bias - mb), b_.CreateSub(exp, c32(f.bias + mb)));
  // 2^e as a double (e is well inside double's normal range).
  llvm::Value* scale_bits =
      b_.CreateShl(b_.CreateAdd(b_.CreateSExt(e, b_.getInt64Ty()), I64(1023)), I64(52));
  llvm::Value* scale = b_.CreateBitCast(scale_bits, b_.getDoubleTy());
  llvm::Value* magnitude = b_.CreateFMul(b_.CreateUIToFP(sig, b_.getDoubleTy()), scale);
  llvm::Value* value = b_.CreateSelect(neg, b_.CreateFNeg(magnitude), magnitude);
  llvm::Type* dbl = b_.getDoubleTy();
  llvm::Value* nan = llvm::ConstantFP::getNaN(dbl);
  llvm::Value* signed_nan = b_.CreateSelect(neg, llvm::ConstantFP::getNaN(dbl, true), nan);
  llvm::Value* exp_all = b_.CreateICmpEQ(exp, c32((1 << eb) - 1));
  llvm::Value* mant_zero = b_.CreateICmpEQ(mant, c32(0));
  switch (f.nan) {
    case Nan::kIeee: {
      llvm::Value* inf = b_.CreateSelect(neg, llvm::ConstantFP::getInfinity(dbl, true),
                                         llvm::ConstantFP::getInfinity(dbl));
      value = b_.CreateSelect(exp_all, b_.CreateSelect(mant_zero, inf, signed_nan), value);
      break;
    }
    case Nan::kFiniteAllOnesNan:
      value = b_.CreateSelect(b_.CreateAnd(exp_all, b_.CreateICmpEQ(mant, c32((1 << mb) - 1))),
                              signed_nan, value);
      break;
    case Nan::kNegZeroNan:
      value = b_.CreateSelect(b_.CreateAnd(neg, b_.CreateAnd(exp_zero, mant_zero)), nan, value);
      break;
    case Nan::kAllOnesNan:
      value = b_.CreateSelect(exp_all, nan, value);
      break;
    case Nan::kNone:
      break;
  }
  return value;
}

namespace {

// Rounds x / 2^s to nearest, ties to even (x, s of one integer type; s >= 0).
llvm::Value* ShiftRightRoundingToEven(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* s) {
  llvm::Type* t = x->getType();
  auto c = [&](uint64_t v) { return llvm::ConstantInt::get(t, v); };
  llvm::Value* s_safe = b.CreateSelect(b.CreateICmpEQ(s, c(0)), c(1), s);
  llvm::Value* truncated = b.CreateLShr(x, s_safe);
  llvm::Value* remainder = b.CreateAnd(x, b.CreateSub(b.CreateShl(c(1), s_safe), c(1)));
  llvm::Value* half = b.CreateShl(c(1), b.CreateSub(s_safe, c(1)));
  llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(truncated, c(1)), c(0));
  llvm::Value* up = b.CreateOr(b.CreateICmpUGT(remainder, half),
                               b.CreateAnd(b.CreateICmpEQ(remainder, half), odd));
  llvm::Value* rounded = b.CreateAdd(truncated, b.CreateZExt(up, t));
  return b.CreateSelect(b.CreateICmpEQ(s, c(0)), x, rounded);
}

}  // namespace

llvm::Value* IrEmitter::EncodeSmallFloat(PrimitiveType type, llvm::Value* value) {
  const FloatFormat f = *GetFloatFormat(type);
  using Nan = FloatFormat::Nan;
  // f16 and bf16 round through f32 first, as Eigen's half types do.
  if ((type == PrimitiveType::F16 || type == PrimitiveType::BF16) &&
      value->getType()->isDoubleTy()) {
    value = b_.CreateFPTrunc(value, b_.getFloatTy());
  }
  if (type == PrimitiveType::BF16 && value->getType()->isFloatTy()) {
    // bf16 is the high half of an f32 (same exponent range, subnormals
    // included): adding 0x7FFF plus the kept half's lowest bit rounds to
    // nearest even, carrying into the exponent up to infinity. NaN becomes
    // the quiet NaN with its sign, as below. A handful of vector
    // instructions instead of the general path's ~60.
    llvm::Type* i32 = b_.getInt32Ty();
    auto c = [&](uint32_t v) { return llvm::ConstantInt::get(i32, v); };
    llvm::Value* bits = b_.CreateBitCast(value, i32);
    llvm::Value* high = b_.CreateLShr(bits, c(16));
    llvm::Value* bias = b_.CreateAdd(c(0x7FFF), b_.CreateAnd(high, c(1)));
    llvm::Value* rounded = b_.CreateLShr(b_.CreateAdd(bits, bias), c(16));
    llvm::Value* is_nan = b_.CreateICmpUGT(b_.CreateAnd(bits, c(0x7FFFFFFF)), c(0x7F800000));
    llvm::Value* nan =
        b_.CreateOr(b_.CreateAnd(high, c(0x8000)), c(QuietNanBits(*GetFloatFormat(type))));
    return b_.CreateTrunc(b_.CreateSelect(is_nan, nan, rounded), b_.getInt16Ty());
  }
  const bool from_double = value->getType()->isDoubleTy();
  const int width = from_double ? 64 : 32;
  const int se = from_double ? 11 : 8, sm = from_double ? 52 : 23;
  const int64_t sbias = from_double ? 1023 : 127;
  llvm::Type* t = b_.getIntNTy(width);
  auto c = [&](uint64_t v) { return llvm::ConstantInt::get(t, v); };
  llvm::Value* s = b_.CreateBitCast(value, t);
  const uint64_t src_sign = uint64_t{1} << (width - 1);
  llvm::Value* neg = b_.CreateICmpSLT(s, c(0));
  llvm::Value* a = b_.CreateAnd(s, c(~src_sign));
  const uint64_t src_inf = ((uint64_t{1} << se) - 1) << sm;
  llvm::Value* is_nan = b_.CreateICmpUGT(a, c(src_inf));
  llvm::Value* is_inf = b_.CreateICmpEQ(a, c(src_inf));
  llvm::Value* is_zero = b_.CreateICmpEQ(a, c(0));

  const int mb = f.mantissa_bits;
  const uint64_t sign_bit = f.has_sign ? uint64_t{1} << (f.exponent_bits + mb) : 0;
  const uint64_t exp_all = (uint64_t{1} << f.exponent_bits) - 1;
  uint64_t max_exp_field = exp_all;
  uint64_t max_mant = (uint64_t{1} << mb) - 1;
  if (f.nan == Nan::kIeee || f.nan == Nan::kAllOnesNan) max_exp_field = exp_all - 1;
  if (f.nan == Nan::kFiniteAllOnesNan) max_mant -= 1;
  const uint64_t max_finite = (max_exp_field << mb) | max_mant;
  const uint64_t quiet_nan = QuietNanBits(f);
  llvm::Value* sign = b_.CreateSelect(neg, c(sign_bit), c(0));

  // The source value is sig * 2^e2, sig < 2^(sm+1).
  llvm::Value* src_exp = b_.CreateLShr(a, c(sm));
  llvm::Value* src_mant = b_.CreateAnd(a, c((uint64_t{1} << sm) - 1));
  llvm::Value* src_subnormal = b_.CreateICmpEQ(src_exp, c(0));
  llvm::Value* sig =
      b_.CreateSelect(src_subnormal, src_mant, b_.CreateOr(src_mant, c(uint64_t{1} << sm)));
  // Unbiased exponent (of the leading bit for normal sources).
  llvm::Value* unbiased = b_.CreateSelect(src_subnormal, c(static_cast<uint64_t>(1 - sbias)),
                                          b_.CreateSub(src_exp, c(sbias)));
  const int64_t min_exp = 1 - f.bias;
  llvm::Value* below_normal =
      b_.CreateOr(src_subnormal, b_.CreateICmpSLT(unbiased, c(static_cast<uint64_t>(min_exp))));

  // Below the smallest normal: round sig * 2^(e2 - (min_exp - mb)).
  llvm::Value* e2 = b_.CreateSub(unbiased, c(sm));
  llvm::Value* shift = b_.CreateSub(c(static_cast<uint64_t>(min_exp - mb)), e2);
  llvm::Value* shift_clamped =
      b_.CreateSelect(b_.CreateICmpSGT(shift, c(sm + 2)), c(sm + 2), shift);
  shift_clamped = b_.CreateSelect(b_.CreateICmpSLT(shift_clamped, c(0)), c(0), shift_clamped);
  llvm::Value* field_subnormal = ShiftRightRoundingToEven(b_, sig, shift_clamped);

  // Normal: round the significand to mb bits; a carry bumps the exponent.
  llvm::Value* ni = ShiftRightRoundingToEven(b_, sig, c(sm - mb));
  llvm::Value* carry = b_.CreateICmpEQ(ni, c(uint64_t{2} << mb));
  llvm::Value* unbiased_n = b_.CreateAdd(unbiased, b_.CreateZExt(carry, t));
  ni = b_.CreateSelect(carry, c(uint64_t{1} << mb), ni);
  llvm::Value* exp_field = b_.CreateAdd(unbiased_n, c(static_cast<uint64_t>(f.bias)));
  llvm::Value* exp_overflow = b_.CreateICmpSGT(exp_field, c(max_exp_field));
  llvm::Value* field_normal =
      b_.CreateOr(b_.CreateShl(exp_field, c(mb)), b_.CreateSub(ni, c(uint64_t{1} << mb)));

  llvm::Value* field = b_.CreateSelect(below_normal, field_subnormal, field_normal);
  llvm::Value* overflow = b_.CreateOr(b_.CreateAnd(b_.CreateNot(below_normal), exp_overflow),
                                      b_.CreateICmpUGT(field, c(max_finite)));
  llvm::Value* finite = b_.CreateOr(sign, field);
  if (f.nan == Nan::kNegZeroNan) {
    finite = b_.CreateSelect(b_.CreateICmpEQ(field, c(0)), c(0), finite);
  }
  const bool nan_keeps_sign = f.nan != Nan::kNegZeroNan;
  llvm::Value* signed_nan = nan_keeps_sign ? b_.CreateOr(c(quiet_nan), sign) : c(quiet_nan);
  llvm::Value* overflow_value;
  if (f.has_inf) {
    overflow_value = b_.CreateOr(sign, c(exp_all << mb));
  } else if (f.nan == Nan::kNone) {
    overflow_value = b_.CreateOr(sign, c(max_finite));
  } else {
    overflow_value = signed_nan;
  }
  llvm::Value* nan_value =
      f.nan == Nan::kNone ? c((exp_all << mb) | ((uint64_t{1} << mb) - 1)) : signed_nan;
  llvm::Value* zero_value = (f.nan == Nan::kNegZeroNan || !f.has_sign) ? c(0) : sign;

  llvm::Value* r = b_.CreateSelect(overflow, overflow_value, finite);
  r = b_.CreateSelect(is_zero, zero_value, r);
  if (!f.has_sign) {
    r = b_.CreateSelect(b_.CreateAnd(neg, b_.CreateNot(is_zero)), c(quiet_nan), r);
  }
  r = b_.CreateSelect(is_inf, overflow_value, r);
  r = b_.CreateSelect(is_nan, nan_value, r);
  return b_.CreateTrunc(r, IrType(type));
}

// ---------------------------------------------------------------- conversion

llvm::Value* IrEmitter::IndexValue(PrimitiveType type, llvm::Value* v) {
  llvm::Type* i64 = b_.getInt64Ty();
  if (IsSignedInt(type)) return b_.CreateSExtOrTrunc(v, i64);
  llvm::Value* wide = b_.CreateZExtOrTrunc(v, i64);
  if (PrimitiveBitWidth(type) < 64) return wide;
  return b_.CreateSelect(b_.CreateICmpSLT(wide, I64(0)), I64(std::numeric_limits<int64_t>::max()),
                         wide);
}

absl::StatusOr<llvm::Value*> IrEmitter::Convert(const HloInstruction& instr, PrimitiveType from,
                                                PrimitiveType to, llvm::Value* v) {
  if (from == to) return v;
  if (IrType(from) == nullptr || IrType(to) == nullptr) {
    return UnsupportedInstruction(instr, absl::StrCat("conversion from ", PrimitiveTypeName(from),
                                                      " to ", PrimitiveTypeName(to)));
  }
  const bool from_integer = from == PrimitiveType::PRED || IsInteger(from);
  const bool from_signed = IsSignedInt(from);
  // The value of a float or complex source in its natural precision.
  auto real_value = [&]() -> llvm::Value* {
    if (IsComplex(from)) return b_.CreateExtractValue(v, 0);
    return ToCompute(from, v);
  };
  auto int_to_float = [&](llvm::Type* t) {
    return from_signed ? b_.CreateSIToFP(v, t) : b_.CreateUIToFP(v, t);
  };
  if (IsComplex(to)) {
    llvm::Type* part = ComputeFloatType(to);
    llvm::Value *re, *im = llvm::ConstantFP::get(part, 0.0);
    if (from_integer) {
      // Integers reach c64 through float, c128 through double.
      re = int_to_float(part);
    } else if (IsComplex(from)) {
      re = b_.CreateFPCast(b_.CreateExtractValue(v, 0), part);
      im = b_.CreateFPCast(b_.CreateExtractValue(v, 1), part);
    } else {
      re = b_.CreateFPCast(ToCompute(from, v), part);
    }
    llvm::Value* out = llvm::UndefValue::get(IrType(to));
    out = b_.CreateInsertValue(out, re, 0);
    return b_.CreateInsertValue(out, im, 1);
  }
  if (from_integer) {
    if (to == PrimitiveType::PRED) {
      return b_.CreateZExt(b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0)),
                           b_.getInt8Ty());
    }
    if (IsFloatingPoint(to)) {
      // One rounding to f32 (or f64), then to the narrow type.
      if (to == PrimitiveType::F64) return int_to_float(b_.getDoubleTy());
      return FromCompute(to, int_to_float(b_.getFloatTy()));
    }
    llvm::Type* t = IrType(to);
    return from_signed ? b_.CreateSExtOrTrunc(v, t) : b_.CreateZExtOrTrunc(v, t);
  }
  // Floating-point or complex (its real part) source.
  llvm::Value* x = real_value();
  if (to == PrimitiveType::PRED) {
    return b_.CreateZExt(b_.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0)),
                         b_.getInt8Ty());
  }
  if (IsFloatingPoint(to)) return FromCompute(to, x);
  // Saturating float -> integer; NaN -> 0; truncation toward zero.
  const int bits = PrimitiveBitWidth(to);
  const bool is_signed = IsSignedInt(to);
  const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  const uint64_t max_bits = is_signed ? mask >> 1 : mask;
  const uint64_t min_bits = is_signed ? (uint64_t{1} << (bits - 1)) & mask : 0;
  const double max_value = is_signed ? static_cast<double>(static_cast<int64_t>(max_bits))
                                     : static_cast<double>(max_bits);
  const double min_value = is_signed ? -std::ldexp(1.0, bits - 1) : 0.0;
  llvm::Value* d = b_.CreateFPExt(x, b_.getDoubleTy());
  if (x->getType()->isDoubleTy()) d = x;
  llvm::Type* t = IrType(to);
  llvm::Value* truncated =
      is_signed ? b_.CreateFPToSI(d, b_.getInt64Ty()) : b_.CreateFPToUI(d, b_.getInt64Ty());
  llvm::Value* r = b_.CreateTrunc(truncated, t);
  r = b_.CreateSelect(b_.CreateFCmpOLE(d, llvm::ConstantFP::get(d->getType(), min_value)),
                      llvm::ConstantInt::get(t, min_bits), r);
  r = b_.CreateSelect(b_.CreateFCmpOGE(d, llvm::ConstantFP::get(d->getType(), max_value)),
                      llvm::ConstantInt::get(t, max_bits), r);
  return b_.CreateSelect(b_.CreateFCmpUNO(d, d), llvm::ConstantInt::get(t, 0), r);
}

llvm::Value* IrEmitter::ToBits(PrimitiveType type, llvm::Value* v) {
  if (IsComplex(type)) {
    const int half = PrimitiveBitWidth(type) / 2;
    llvm::Type* part = b_.getIntNTy(half);
    llvm::Type* whole = b_.getIntNTy(2 * half);
    llvm::Value* re = b_.CreateZExt(b_.CreateBitCast(b_.CreateExtractValue(v, 0), part), whole);
    llvm::Value* im = b_.CreateZExt(b_.CreateBitCast(b_.CreateExtractValue(v, 1), part), whole);
    return b_.CreateOr(re, b_.CreateShl(im, half));
  }
  if (v->getType()->isFloatingPointTy()) {
    return b_.CreateBitCast(v, b_.getIntNTy(PrimitiveBitWidth(type)));
  }
  return v;
}

llvm::Value* IrEmitter::FromBits(PrimitiveType type, llvm::Value* bits) {
  llvm::Type* t = IrType(type);
  if (IsComplex(type)) {
    const int half = PrimitiveBitWidth(type) / 2;
    llvm::Type* part_int = b_.getIntNTy(half);
    llvm::Type* part = ComputeFloatType(type);
    llvm::Value* re = b_.CreateBitCast(b_.CreateTrunc(bits, part_int), part);
    llvm::Value* im = b_.CreateBitCast(b_.CreateTrunc(b_.CreateLShr(bits, half), part_int), part);
    llvm::Value* out = llvm::UndefValue::get(t);
    out = b_.CreateInsertValue(out, re, 0);
    return b_.CreateInsertValue(out, im, 1);
  }
  if (type == PrimitiveType::PRED) {
    return b_.CreateZExt(b_.CreateICmpNE(bits, llvm::ConstantInt::get(bits->getType(), 0)),
                         b_.getInt8Ty());
  }
  if (t->isFloatingPointTy()) return b_.CreateBitCast(bits, t);
  return b_.CreateZExtOrTrunc(bits, t);
}

llvm::Value* IrEmitter::CallC(const char* name, llvm::Type* result,
                              llvm::ArrayRef<llvm::Value*> args) {
  std::vector<llvm::Type*> types;
  for (llvm::Value* a : args) types.push_back(a->getType());
  llvm::FunctionCallee callee =
      module_.getOrInsertFunction(name, llvm::FunctionType::get(result, types, false));
  if (auto* fn = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    fn->addFnAttr(llvm::Attribute::NoUnwind);
  }
  return b_.CreateCall(callee, args);
}

llvm::Value* IrEmitter::CallMath(const std::string& name, llvm::Type* result,
                                 llvm::ArrayRef<llvm::Value*> args) {
  llvm::Value* call = CallC(name.c_str(), result, args);
  if (auto* fn = module_.getFunction(name)) {
    fn->setDoesNotAccessMemory();
    fn->setWillReturn();
  }
  return call;
}

}  // namespace xlite::codegen
