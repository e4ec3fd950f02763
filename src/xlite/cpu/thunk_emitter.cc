#include "xlite/cpu/thunk_emitter.h"

#include <algorithm>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "xlite/analysis/shape_util.h"
#include "xlite/cpu/control_flow_thunks.h"
#include "xlite/cpu/copy_thunk.h"
#include "xlite/cpu/device_thunks.h"
#include "xlite/cpu/kernel_thunk.h"
#include "xlite/cpu/library_emitter.h"
#include "xlite/cpu/loop_kernels.h"
#include "xlite/cpu/sort_key.h"
#include "xlite/cpu/sort_thunk.h"
#include "xlite/ir/computation.h"
#include "xlite/support/status.h"

namespace xlite::cpu {
namespace {

ShapeIndex Concat(const ShapeIndex& a, const ShapeIndex& b) {
  ShapeIndex out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

// The array leaves of `shape` with their indices, in leaf order.
std::vector<std::pair<ShapeIndex, const Shape*>> ArrayLeaves(const Shape& shape) {
  std::vector<std::pair<ShapeIndex, const Shape*>> out;
  ForEachSubshape(shape, [&](const Shape& s, const ShapeIndex& index) {
    if (s.IsArray()) out.emplace_back(index, &s);
  });
  return out;
}

int64_t ElementsOf(const Shape& shape) {
  int64_t n = 0;
  for (const auto& [index, leaf] : ArrayLeaves(shape)) n += leaf->ElementCount();
  return n;
}

bool ReadsAWindow(const HloInstruction& user, const HloInstruction& operand) {
  switch (user.opcode()) {
    case HloOpcode::kSlice:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kGather:
      return user.operand(0) == &operand &&
             std::count(user.operands().begin(), user.operands().end(), &operand) == 1;
    default:
      return false;
  }
}

// How many elements of operand `i` a kernel reads: all of them, unless it
// only slices a window out of it (a dynamic-slice of a big loop-state array
// reads one element, and the kernel is small).
int64_t ElementsRead(const HloInstruction& instr, int64_t i) {
  const HloInstruction& operand = *instr.operand(i);
  const int64_t all = operand.shape().ElementCount();
  if (ReadsAWindow(instr, operand)) return std::min(all, ElementsOf(instr.shape()));
  if (instr.opcode() != HloOpcode::kFusion || instr.called_computations().size() != 1 ||
      instr.called_computations()[0] == nullptr ||
      i >= instr.called_computations()[0]->num_parameters()) {
    return all;
  }
  const HloInstruction* param = instr.called_computations()[0]->parameter_instruction(i);
  if (param == nullptr || param->users().empty()) return all;
  int64_t read = 0;
  for (const HloInstruction* user : param->users()) {
    if (!ReadsAWindow(*user, *param)) return all;
    read += user->shape().ElementCount();
  }
  return std::min(all, read);
}

}  // namespace

absl::Status Unsupported(const HloInstruction& instr, absl::string_view what) {
  return absl::UnimplementedError(absl::StrCat(HloOpcodeString(instr.opcode()), " '", instr.name(),
                                               "': ", what,
                                               " is not supported by the CPU backend"));
}

ThunkInfo InfoOf(const HloInstruction& instr) {
  return ThunkInfo{instr.name(), std::string(HloOpcodeString(instr.opcode())),
                   instr.attrs().metadata.op_name, instr.attrs().custom_call_has_side_effect};
}

ThunkEmitter::ThunkEmitter(const BufferAssignment& assignment, ThunkEmitterOptions options)
    : assignment_(assignment), options_(options) {
  if (!options_.poison_dead_slices || assignment_.temp_allocation() < 0) return;
  const BufferAllocation& temp = assignment_.allocations()[assignment_.temp_allocation()];
  const HloLiveRange& live = assignment_.live_range();
  // A temp that dies where a result taking its bytes is made (buffer
  // assignment's in-place sharing: the same slice, made by an instruction
  // reading it) holds that result: not poisoned. Any other overlap stays
  // poisoned, so a planner error still shows.
  const HloAliasAnalysis& alias = assignment_.alias_analysis();
  absl::flat_hash_set<std::pair<int64_t, int64_t>> taken;  // (time, offset)
  for (const auto& [buffer, offset] : temp.buffers()) {
    const LiveRange* range = live.buffer_live_range(*buffer);
    if (range == nullptr || range->start < 0 || buffer->values().size() != 1) continue;
    const HloInstruction& user = *buffer->values()[0]->defining_instruction();
    for (const HloInstruction* operand : user.operands()) {
      const HloBuffer* read = alias.GetBufferAt(operand);
      if (read == nullptr || read == buffer) continue;
      std::optional<BufferSlice> s = assignment_.GetSlice(operand, {});
      const LiveRange* read_range = live.buffer_live_range(*read);
      if (s && s->allocation == temp.index() && s->offset == offset && read_range != nullptr &&
          read_range->end == range->start) {
        taken.insert({range->start, offset});
      }
    }
  }
  for (const auto& [buffer, offset] : temp.buffers()) {
    const LiveRange* range = live.buffer_live_range(*buffer);
    if (range == nullptr || range->start < 0 || taken.contains({range->end, offset})) continue;
    int64_t size = 0;
    for (const HloValue* v : buffer->values()) {
      if (std::optional<BufferSlice> s = assignment_.GetSlice(*v)) size = std::max(size, s->size);
    }
    if (size > 0) poison_at_[range->end].push_back(BufferSlice{temp.index(), offset, size});
  }
}

ThunkEmitter::~ThunkEmitter() = default;

absl::StatusOr<BufferSlice> ThunkEmitter::Slice(const HloInstruction* instr,
                                                const ShapeIndex& index) const {
  if (std::optional<BufferSlice> s = assignment_.GetSlice(instr, index)) {
    return s->size == 0 ? EmptySlice() : *s;
  }
  const Shape* shape = &instr->shape();
  for (int64_t i : index) {
    if (!shape->IsTuple() || i < 0 || i >= shape->tuple_shapes_size()) break;
    shape = &shape->tuple_shapes(i);
  }
  if (shape->IsArray() && ShapeSizeBytes(*shape) == 0) return EmptySlice();
  return absl::InternalError(absl::StrCat("the buffer assignment has no slice for '", instr->name(),
                                          "' at ", ShapeIndexToString(index)));
}

absl::StatusOr<std::vector<BufferSlice>> ThunkEmitter::OperandSlices(
    const HloInstruction& instr) const {
  std::vector<BufferSlice> out;
  for (const HloInstruction* op : instr.operands()) {
    if (!op->shape().IsArray()) continue;
    ASSIGN_OR_RETURN(BufferSlice s, Slice(op, {}));
    out.push_back(s);
  }
  return out;
}

absl::StatusOr<std::vector<BufferSlice>> ThunkEmitter::ResultSlices(
    const HloInstruction& instr) const {
  std::vector<BufferSlice> out;
  for (const auto& [index, leaf] : ArrayLeaves(instr.shape())) {
    ASSIGN_OR_RETURN(BufferSlice s, Slice(&instr, index));
    out.push_back(s);
  }
  return out;
}

absl::Status ThunkEmitter::CopyLeaves(const HloInstruction* from, const ShapeIndex& from_index,
                                      const HloInstruction* to, const ShapeIndex& to_index,
                                      const Shape& shape, const HloInstruction& reason,
                                      ThunkSequence& out) const {
  for (const auto& [index, leaf] : ArrayLeaves(shape)) {
    ASSIGN_OR_RETURN(BufferSlice source, Slice(from, Concat(from_index, index)));
    ASSIGN_OR_RETURN(BufferSlice destination, Slice(to, Concat(to_index, index)));
    if (source == destination) continue;
    if (source.size != destination.size) {
      return absl::InternalError(absl::StrCat("'", reason.name(), "': the slices of '",
                                              from->name(), "' and '", to->name(), "' at ",
                                              ShapeIndexToString(index), " differ in size"));
    }
    out.push_back(std::make_unique<CopyThunk>(InfoOf(reason), source, destination));
  }
  return absl::OkStatus();
}

absl::StatusOr<ThunkSequence> ThunkEmitter::EmitEntry() {
  const HloComputation* entry = assignment_.module().entry_computation();
  if (entry == nullptr) return absl::InvalidArgumentError("the module has no entry computation");
  return EmitComputation(*entry);
}

absl::StatusOr<ThunkSequence> ThunkEmitter::EmitComputation(const HloComputation& computation) {
  std::vector<const HloInstruction*> order;
  if (assignment_.schedule().is_computation_scheduled(&computation)) {
    for (const HloInstruction* i : assignment_.schedule().sequence(&computation)) {
      order.push_back(i);
    }
  } else {
    for (const auto& i : computation.instructions()) order.push_back(i.get());
  }
  ThunkSequence sequence;
  for (const HloInstruction* instr : order) {
    RETURN_IF_ERROR(EmitInstruction(*instr, sequence));
    if (!poison_at_.empty()) {
      const int64_t time = assignment_.live_range().instruction_time(instr);
      if (auto it = poison_at_.find(time); time >= 0 && it != poison_at_.end()) {
        sequence.push_back(std::make_unique<PoisonThunk>(InfoOf(*instr), it->second));
      }
    }
  }
  return sequence;
}

absl::Status ThunkEmitter::EmitInstruction(const HloInstruction& instr, ThunkSequence& out) {
  if (HloOpcodeTraits(instr.opcode()) & kCollective) return EmitCollective(instr, out);
  switch (instr.opcode()) {
    case HloOpcode::kParameter:
    case HloOpcode::kAfterAll:
      return absl::OkStatus();
    case HloOpcode::kConstant: {
      for (const auto& [index, leaf] : ArrayLeaves(instr.shape())) {
        ASSIGN_OR_RETURN(BufferSlice s, Slice(&instr, index));
        if (s.allocation < 0) continue;
        constants_.push_back(ConstantSlice{s, &instr, index});
      }
      return absl::OkStatus();
    }
    case HloOpcode::kTuple:
      for (int64_t i = 0; i < instr.operand_count(); ++i) {
        RETURN_IF_ERROR(
            CopyLeaves(instr.operand(i), {}, &instr, {i}, instr.operand(i)->shape(), instr, out));
      }
      return absl::OkStatus();
    case HloOpcode::kGetTupleElement:
      return CopyLeaves(instr.operand(0), {instr.attrs().tuple_index}, &instr, {}, instr.shape(),
                        instr, out);
    case HloOpcode::kBitcast:
    case HloOpcode::kAddDependency:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kDomain:
      return CopyLeaves(instr.operand(0), {}, &instr, {}, instr.shape(), instr, out);
    case HloOpcode::kCopy:
      // Same layout: bytes. Another layout: a transposing kernel.
      if (instr.shape() == instr.operand(0)->shape()) {
        return CopyLeaves(instr.operand(0), {}, &instr, {}, instr.shape(), instr, out);
      }
      return EmitKernel(instr, out);
    case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncDone:
    case HloOpcode::kCopyStart:
    case HloOpcode::kCopyDone:
      return EmitAsync(instr, out);
    case HloOpcode::kInfeed:
    case HloOpcode::kOutfeed:
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
      return EmitHostTransfer(instr, out);
    case HloOpcode::kWhile:
      return EmitWhile(instr, out);
    case HloOpcode::kConditional:
      return EmitConditional(instr, out);
    case HloOpcode::kCall:
      return EmitCall(instr, out);
    case HloOpcode::kSort:
      return EmitSort(instr, out);
    case HloOpcode::kReplicaId:
    case HloOpcode::kPartitionId: {
      ASSIGN_OR_RETURN(BufferSlice s, Slice(&instr, {}));
      out.push_back(std::make_unique<DeviceIdThunk>(instr.opcode() == HloOpcode::kReplicaId
                                                        ? Thunk::Kind::kReplicaId
                                                        : Thunk::Kind::kPartitionId,
                                                    InfoOf(instr), s));
      return absl::OkStatus();
    }
    case HloOpcode::kRngGetAndUpdateState: {
      if (!instr.shape().IsArray() || instr.shape().ElementCount() != 2 ||
          PrimitiveByteWidth(instr.shape().element_type()) != 8) {
        return Unsupported(instr, "a result other than u64[2]");
      }
      ASSIGN_OR_RETURN(BufferSlice s, Slice(&instr, {}));
      out.push_back(
          std::make_unique<RngGetAndUpdateStateThunk>(InfoOf(instr), s, instr.attrs().delta));
      return absl::OkStatus();
    }
    default:
      break;
  }
  if (IsPassThroughCustomCall(instr)) {
    return CopyLeaves(instr.operand(0), {}, &instr, {}, instr.shape(), instr, out);
  }
  if (IsLibraryInstruction(instr)) {
    ASSIGN_OR_RETURN(std::vector<BufferSlice> operands, OperandSlices(instr));
    ASSIGN_OR_RETURN(std::vector<BufferSlice> outputs, ResultSlices(instr));
    if (static_cast<int64_t>(operands.size()) != instr.operand_count()) {
      return Unsupported(instr, "a non-array operand of a library call");
    }
    ASSIGN_OR_RETURN(std::unique_ptr<Thunk> thunk,
                     EmitLibraryThunk(instr, InfoOf(instr), operands, outputs));
    out.push_back(std::move(thunk));
    return absl::OkStatus();
  }
  return EmitKernel(instr, out);
}

absl::Status ThunkEmitter::EmitKernel(const HloInstruction& instr, ThunkSequence& out) {
  std::vector<BufferSlice> buffers;
  int64_t work = ElementsOf(instr.shape());
  for (const HloInstruction* op : instr.operands()) {
    if (!op->shape().IsArray()) return Unsupported(instr, "a kernel with a non-array operand");
    ASSIGN_OR_RETURN(BufferSlice s, Slice(op, {}));
    buffers.push_back(s);
  }
  for (int64_t i = 0; i < instr.operand_count(); ++i) work += ElementsRead(instr, i);
  ASSIGN_OR_RETURN(std::vector<BufferSlice> outputs, ResultSlices(instr));
  // A dynamic-update-slice in place (its result shares operand 0's slice)
  // touches only the update: a scan's per-step write into its stacked output
  // is small work, not worth waking threads for.
  if (instr.opcode() == HloOpcode::kDynamicUpdateSlice && outputs.size() == 1 && !buffers.empty() &&
      outputs[0] == buffers[0] && instr.operand_count() > 1) {
    work = 2 * instr.operand(1)->shape().ElementCount();
  }
  // So does a scatter whose results share its inputs' slices: the updates
  // and indices (in_place_dynamic_update_slice_fusion's loop writes one
  // element of 100000 per step, and becomes a whole-loop kernel).
  if (instr.opcode() == HloOpcode::kScatter && instr.operand_count() >= 3 &&
      instr.operand_count() % 2 == 1) {
    const int64_t n = instr.operand_count() / 2;
    bool in_place = static_cast<int64_t>(outputs.size()) == n;
    for (int64_t i = 0; in_place && i < n; ++i) in_place = outputs[i] == buffers[i];
    if (in_place) {
      work = instr.operand(n)->shape().ElementCount();
      for (int64_t i = 0; i < n; ++i) work += 2 * instr.operand(n + 1 + i)->shape().ElementCount();
    }
  }
  buffers.insert(buffers.end(), outputs.begin(), outputs.end());
  auto thunk =
      std::make_unique<KernelThunk>(InfoOf(instr), std::move(buffers), instr.operand_count(), work);
  KernelThunk* raw = thunk.get();
  // A suffix keeps kernel symbols apart from the JIT's runtime symbols
  // (an instruction named "log" would clash with libm's log).
  kernel_specs_[raw] = static_cast<int64_t>(specs_.size());
  specs_.push_back(codegen::KernelSpec{&instr, absl::StrCat(instr.name(), ".kernel"), nullptr});
  binders_.push_back([raw](const codegen::CompiledKernel& k) { raw->SetKernel(k); });
  out.push_back(std::move(thunk));
  return absl::OkStatus();
}

absl::Status ThunkEmitter::EmitSort(const HloInstruction& instr, ThunkSequence& out) {
  if (instr.called_computations().size() != 1 || instr.called_computations()[0] == nullptr ||
      !instr.attrs().dimensions || instr.attrs().dimensions->size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("sort '", instr.name(), "' needs one comparator and one dimension"));
  }
  if (!HasRowMajorArrays(instr)) {
    return absl::InternalError(
        absl::StrCat("sort '", instr.name(), "' reaches the emitter with a non-row-major layout"));
  }
  const HloComputation& comparator = *instr.called_computations()[0];
  const int64_t n = instr.operand_count();
  if (comparator.num_parameters() != 2 * n) {
    return absl::InvalidArgumentError(
        absl::StrCat("sort '", instr.name(), "': the comparator takes ",
                     comparator.num_parameters(), " parameters, not 2 per operand"));
  }
  std::vector<int> element_bytes;
  for (const HloInstruction* op : instr.operands()) {
    if (!op->shape().IsArray() ||
        op->shape().dimensions() != instr.operand(0)->shape().dimensions()) {
      return Unsupported(instr, "operands of different dimensions");
    }
    element_bytes.push_back(PrimitiveByteWidth(op->shape().element_type()));
  }
  ASSIGN_OR_RETURN(std::vector<BufferSlice> operands, OperandSlices(instr));
  ASSIGN_OR_RETURN(std::vector<BufferSlice> outputs, ResultSlices(instr));
  if (static_cast<int64_t>(outputs.size()) != n) {
    return Unsupported(instr, "a result that is not one array per operand");
  }
  std::optional<hostlib::SortKey> key = SortKeyOf(instr);
  auto thunk = std::make_unique<SortThunk>(InfoOf(instr), instr.operand(0)->shape().dimensions(),
                                           (*instr.attrs().dimensions)[0], std::move(element_bytes),
                                           std::move(operands), std::move(outputs), key);
  // A key the radix sort always takes needs no compiled comparator; IEEE
  // float keys fall back to it when they hold a NaN, slices of 2^32 elements
  // or more always.
  const int64_t length = instr.operand(0)->shape().dimensions((*instr.attrs().dimensions)[0]);
  if (key && !(key->ieee && hostlib::IsFloatType(key->type)) &&
      length <= std::numeric_limits<uint32_t>::max()) {
    out.push_back(std::move(thunk));
    return absl::OkStatus();
  }
  // The comparator as a kLoop fusion over 2n scalars, for the JIT.
  if (scratch_ == nullptr) scratch_ = std::make_unique<HloModule>("sort_comparators");
  auto computation = std::make_unique<HloComputation>(absl::StrCat(instr.name(), ".comparator"));
  std::vector<HloInstruction*> parameters;
  for (int64_t i = 0; i < 2 * n; ++i) {
    auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter, absl::StrCat("p", i),
                                              comparator.parameter_instruction(i)->shape());
    p->attrs().parameter_number = i;
    HloInstruction* added = computation->AddInstruction(std::move(p));
    computation->SetParameter(i, added);
    parameters.push_back(added);
  }
  auto fusion = std::make_unique<HloInstruction>(HloOpcode::kFusion,
                                                 absl::StrCat(instr.name(), "_comparator"),
                                                 comparator.root_instruction()->shape());
  for (HloInstruction* p : parameters) fusion->AppendOperand(p);
  fusion->attrs().fusion_kind = "kLoop";
  fusion->AppendCalledComputation(const_cast<HloComputation*>(&comparator));
  HloInstruction* root = computation->AddInstruction(std::move(fusion));
  computation->set_root_instruction(root);
  scratch_->AddComputation(std::move(computation));

  SortThunk* raw = thunk.get();
  specs_.push_back(codegen::KernelSpec{root, absl::StrCat(instr.name(), ".comparator"), nullptr});
  binders_.push_back([raw](const codegen::CompiledKernel& k) { raw->SetComparator(k.function); });
  out.push_back(std::move(thunk));
  return absl::OkStatus();
}

absl::Status ThunkEmitter::EmitWhile(const HloInstruction& instr, ThunkSequence& out) {
  if (instr.called_computations().size() != 2 || instr.operand_count() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("while '", instr.name(), "' needs one operand, a condition and a body"));
  }
  const HloComputation& condition = *instr.called_computations()[0];
  const HloComputation& body = *instr.called_computations()[1];
  const HloInstruction* state = body.parameter_instruction(0);
  const Shape& shape = instr.shape();
  // The loop state lives in the body parameter's slices; the assignment
  // normally gives the init, both parameters, the body's root and the result
  // the same ones, and then no copy is emitted.
  RETURN_IF_ERROR(CopyLeaves(instr.operand(0), {}, state, {}, shape, instr, out));
  ThunkSequence condition_thunks;
  RETURN_IF_ERROR(CopyLeaves(state, {}, condition.parameter_instruction(0), {}, shape, instr,
                             condition_thunks));
  ASSIGN_OR_RETURN(ThunkSequence condition_body, EmitComputation(condition));
  condition_thunks.Append(std::move(condition_body));
  ASSIGN_OR_RETURN(BufferSlice predicate, Slice(condition.root_instruction(), {}));
  ASSIGN_OR_RETURN(ThunkSequence body_thunks, EmitComputation(body));
  RETURN_IF_ERROR(CopyLeaves(body.root_instruction(), {}, state, {}, shape, instr, body_thunks));
  out.push_back(MaybeLoopKernel(
      instr, std::make_unique<WhileThunk>(InfoOf(instr), std::move(condition_thunks), predicate,
                                          std::move(body_thunks))));
  return CopyLeaves(state, {}, &instr, {}, shape, instr, out);
}

absl::Status ThunkEmitter::EmitConditional(const HloInstruction& instr, ThunkSequence& out) {
  const std::vector<HloComputation*>& branches = instr.called_computations();
  if (branches.empty() || instr.operand_count() != static_cast<int64_t>(branches.size()) + 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "conditional '", instr.name(), "' needs a selector and one operand per branch"));
  }
  const Shape& selector_shape = instr.operand(0)->shape();
  const bool is_pred = selector_shape.element_type() == PrimitiveType::PRED;
  if (!selector_shape.IsScalar() ||
      (!is_pred && selector_shape.element_type() != PrimitiveType::S32)) {
    return Unsupported(instr, "a selector other than pred[] or s32[]");
  }
  ASSIGN_OR_RETURN(BufferSlice selector, Slice(instr.operand(0), {}));
  std::vector<ThunkSequence> sequences;
  for (size_t b = 0; b < branches.size(); ++b) {
    const HloComputation& branch = *branches[b];
    ThunkSequence s;
    if (branch.num_parameters() == 1) {
      RETURN_IF_ERROR(CopyLeaves(instr.operand(b + 1), {}, branch.parameter_instruction(0), {},
                                 instr.operand(b + 1)->shape(), instr, s));
    }
    ASSIGN_OR_RETURN(ThunkSequence body, EmitComputation(branch));
    s.Append(std::move(body));
    RETURN_IF_ERROR(CopyLeaves(branch.root_instruction(), {}, &instr, {}, instr.shape(), instr, s));
    sequences.push_back(std::move(s));
  }
  out.push_back(MaybeLoopKernel(
      instr,
      std::make_unique<ConditionalThunk>(InfoOf(instr), selector, is_pred, std::move(sequences))));
  return absl::OkStatus();
}

absl::Status ThunkEmitter::EmitCall(const HloInstruction& instr, ThunkSequence& out) {
  if (instr.called_computations().size() != 1 || instr.called_computations()[0] == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("call '", instr.name(), "' needs one callee"));
  }
  const HloComputation& callee = *instr.called_computations()[0];
  if (callee.num_parameters() != instr.operand_count()) {
    return absl::InvalidArgumentError(
        absl::StrCat("call '", instr.name(), "': operand and parameter counts differ"));
  }
  ThunkSequence s;
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    RETURN_IF_ERROR(CopyLeaves(instr.operand(i), {}, callee.parameter_instruction(i), {},
                               instr.operand(i)->shape(), instr, s));
  }
  ASSIGN_OR_RETURN(ThunkSequence body, EmitComputation(callee));
  s.Append(std::move(body));
  RETURN_IF_ERROR(CopyLeaves(callee.root_instruction(), {}, &instr, {}, instr.shape(), instr, s));
  out.push_back(std::make_unique<CallThunk>(InfoOf(instr), std::move(s)));
  return absl::OkStatus();
}

std::unique_ptr<Thunk> ThunkEmitter::MaybeLoopKernel(const HloInstruction& instr,
                                                     std::unique_ptr<Thunk> control_flow) {
  if (!options_.loop_kernels) return control_flow;
  std::optional<LoopKernel> loop = BuildLoopKernel(*control_flow, [&](const KernelThunk& k) {
    auto it = kernel_specs_.find(&k);
    return it == kernel_specs_.end() ? int64_t{-1} : it->second;
  });
  if (!loop.has_value()) return control_flow;
  // The callees' thunks go away with `control_flow`: only the program calls
  // their code now (BindKernels skips internal specs).
  for (const KernelThunk* callee : loop->callees) {
    specs_[kernel_specs_[callee]].internal = true;
    kernel_specs_.erase(callee);
  }
  auto kernel =
      std::make_unique<KernelThunk>(InfoOf(instr), loop->buffers, loop->num_operands, /*work=*/0);
  kernel->set_runs_control_flow();
  KernelThunk* raw = kernel.get();
  kernel_specs_[raw] = static_cast<int64_t>(specs_.size());
  specs_.push_back(
      codegen::KernelSpec{&instr, absl::StrCat(instr.name(), ".loop"), std::move(loop->program)});
  binders_.push_back([raw](const codegen::CompiledKernel& k) { raw->SetKernel(k); });
  return kernel;
}

absl::Status ThunkEmitter::BindKernels(absl::Span<const codegen::CompiledKernel> kernels) {
  if (kernels.size() != binders_.size()) {
    return absl::InternalError(absl::StrCat("got ", kernels.size(), " compiled kernels for ",
                                            binders_.size(), " kernel thunks"));
  }
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (!specs_[i].internal) binders_[i](kernels[i]);
  }
  return absl::OkStatus();
}

}  // namespace xlite::cpu
