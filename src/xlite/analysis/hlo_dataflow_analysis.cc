#include "xlite/analysis/hlo_dataflow_analysis.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "xlite/analysis/in_place_pairs.h"
#include "xlite/support/status.h"

namespace xlite {

// Builds the analysis: slots, then values computation by computation (a
// callee after the operands of its call site, before the call's result),
// then phi inputs, positions, uses and in-place pairs.
class HloDataflowAnalysis::Builder {
 public:
  explicit Builder(HloDataflowAnalysis& a) : a_(a) {}

  absl::Status Run() {
    RETURN_IF_ERROR(BuildSlots());
    RETURN_IF_ERROR(ComputeParameterModes());
    // Callers before callees, so a callee whose parameters forward its only
    // caller's operands is reached through that caller.
    if (const HloComputation* entry = a_.module_->entry_computation(); entry != nullptr) {
      RETURN_IF_ERROR(Process(entry));
    }
    const auto& post_order = a_.call_graph_->ComputationsInPostOrder();
    for (auto it = post_order.rbegin(); it != post_order.rend(); ++it) {
      RETURN_IF_ERROR(Process(*it));
    }
    RETURN_IF_ERROR(ComputePhiInputs());
    RETURN_IF_ERROR(ComputePositionsAndUses());
    return ComputeInPlacePairs();
  }

 private:
  enum class ParamMode { kDefine, kForward, kPhi };
  enum class State : uint8_t { kUnvisited, kVisiting, kDone };

  static absl::Status Error(const HloInstruction& instr, const std::string& what) {
    return InvalidArgument("instruction '", instr.name(), "' in computation '",
                           instr.parent() ? instr.parent()->name() : "?", "': ", what);
  }

  void AddSlots(const Shape& shape, ShapeIndex& index) {
    const int32_t slot = static_cast<int32_t>(a_.slot_index_.size());
    a_.slot_index_.push_back(index);
    a_.slot_shape_.push_back(&shape);
    a_.slot_subtree_size_.push_back(1);
    a_.slot_children_.push_back(-1);
    if (shape.IsTuple()) {
      const int32_t first = static_cast<int32_t>(a_.child_slots_.size());
      a_.slot_children_[slot] = first;
      a_.child_slots_.resize(a_.child_slots_.size() + shape.tuple_shapes_size());
      for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
        a_.child_slots_[first + i] = static_cast<int32_t>(a_.slot_index_.size());
        index.push_back(i);
        AddSlots(shape.tuple_shapes(i), index);
        index.pop_back();
      }
      a_.slot_subtree_size_[slot] = static_cast<int32_t>(a_.slot_index_.size()) - slot;
    }
  }

  absl::Status BuildSlots() {
    size_t count = 0;
    for (const auto& c : a_.module_->computations()) count += c->instructions().size();
    a_.instruction_index_.reserve(count);
    a_.instructions_.reserve(count);
    a_.slot_begin_.reserve(count + 1);
    for (const auto& c : a_.module_->computations()) {
      for (const auto& instr : c->instructions()) {
        a_.instruction_index_[instr.get()] = static_cast<int32_t>(a_.instructions_.size());
        a_.instructions_.push_back(instr.get());
        a_.slot_begin_.push_back(static_cast<int32_t>(a_.slot_index_.size()));
        ShapeIndex index;
        AddSlots(instr->shape(), index);
      }
    }
    a_.slot_begin_.push_back(static_cast<int32_t>(a_.slot_index_.size()));
    a_.slot_value_.assign(a_.slot_index_.size(), -1);
    a_.operand_begin_.reserve(count + 1);
    a_.control_begin_.reserve(count + 1);
    a_.opcodes_.reserve(count);
    a_.is_root_.reserve(count);
    has_callees_.reserve(count);
    for (const HloInstruction* instr : a_.instructions_) {
      a_.opcodes_.push_back(instr->opcode());
      has_callees_.push_back(!instr->called_computations().empty());
      a_.is_root_.push_back(instr->parent() != nullptr &&
                            instr->parent()->root_instruction() == instr);
      a_.operand_begin_.push_back(static_cast<int32_t>(a_.operand_ids_.size()));
      for (int64_t k = 0; k < instr->operand_count(); ++k) {
        const int32_t id = a_.instruction_id(instr->operand(k));
        if (id < 0) return Error(*instr, absl::StrCat("operand ", k, " is not in the module"));
        a_.operand_ids_.push_back(id);
      }
      a_.control_begin_.push_back(static_cast<int32_t>(a_.control_ids_.size()));
      for (const HloInstruction* pred : instr->control_predecessors()) {
        const int32_t id = a_.instruction_id(pred);
        if (id < 0) return Error(*instr, "a control predecessor is not in the module");
        a_.control_ids_.push_back(id);
      }
    }
    a_.operand_begin_.push_back(static_cast<int32_t>(a_.operand_ids_.size()));
    a_.control_begin_.push_back(static_cast<int32_t>(a_.control_ids_.size()));
    return absl::OkStatus();
  }

  int32_t OperandId(int32_t id, int64_t k) const {
    return a_.operand_ids_[a_.operand_begin_[id] + k];
  }

  absl::StatusOr<int32_t> Slot(const HloInstruction& who, const HloInstruction* instr,
                               const ShapeIndex& index) const {
    const int32_t slot = a_.SlotOf(instr, index);
    if (slot < 0) {
      return Error(who, absl::StrCat("'", instr->name(), "' of shape ", instr->shape().ToString(),
                                     " has no element ", ShapeIndexToString(index)));
    }
    return slot;
  }

  // Every operand is in the module (BuildSlots checked).
  absl::StatusOr<const HloInstruction*> Operand(const HloInstruction& instr, int64_t k) const {
    if (k < 0 || k >= instr.operand_count()) {
      return Error(instr, absl::StrCat("has no operand ", k));
    }
    return instr.operand(k);
  }

  // The slot at `index` of instruction `id`, or an error naming `who`.
  absl::StatusOr<int32_t> SlotOfId(const HloInstruction& who, int32_t id,
                                   const ShapeIndex& index) const {
    int32_t slot = a_.slot_begin_[id];
    for (int64_t i : index) {
      const Shape& shape = *a_.slot_shape_[slot];
      if (!shape.IsTuple() || i < 0 || i >= shape.tuple_shapes_size()) {
        const HloInstruction& instr = *a_.instructions_[id];
        return Error(who, absl::StrCat("'", instr.name(), "' of shape ", instr.shape().ToString(),
                                       " has no element ", ShapeIndexToString(index)));
      }
      slot = a_.child_slots_[a_.slot_children_[slot] + i];
    }
    return slot;
  }

  HloValue::Id NewValue(int32_t slot, HloInstruction* instr, bool is_phi) {
    const HloValue::Id id = static_cast<HloValue::Id>(a_.values_.size());
    a_.values_.push_back(
        std::make_unique<HloValue>(id, HloPosition{instr, a_.slot_index_[slot]}, is_phi));
    a_.value_defining_slot_.push_back(slot);
    a_.slot_value_[slot] = id;
    return id;
  }

  // Gives slots [dst, dst + size) the values of [src, src + size); the two
  // subtrees must have the same tuple structure. With `define_tuples`, tuple
  // slots are left for the instruction to define (async ops build new tuples
  // around the arrays they pass on).
  absl::Status Forward(const HloInstruction& who, int32_t dst, int32_t src, bool define_tuples) {
    const int32_t size = a_.slot_subtree_size_[dst];
    if (a_.slot_subtree_size_[src] != size) {
      return Error(who, absl::StrCat("element ", ShapeIndexToString(a_.slot_index_[dst]),
                                     " has shape ", a_.slot_shape_[dst]->ToString(),
                                     ", but the value it passes on has shape ",
                                     a_.slot_shape_[src]->ToString()));
    }
    for (int32_t k = 0; k < size; ++k) {
      const Shape& d = *a_.slot_shape_[dst + k];
      const Shape& s = *a_.slot_shape_[src + k];
      if (d.IsTuple() != s.IsTuple() ||
          (d.IsTuple() && d.tuple_shapes_size() != s.tuple_shapes_size())) {
        return Error(who, absl::StrCat("element ", ShapeIndexToString(a_.slot_index_[dst]),
                                       " has shape ", a_.slot_shape_[dst]->ToString(),
                                       ", but the value it passes on has shape ",
                                       a_.slot_shape_[src]->ToString()));
      }
      if (define_tuples && d.IsTuple()) continue;
      if (a_.slot_value_[src + k] < 0) {
        return Internal("dataflow: '", who.name(), "' reads a position not yet computed");
      }
      a_.slot_value_[dst + k] = a_.slot_value_[src + k];
    }
    return absl::OkStatus();
  }

  // Element `out` of the instruction being defined takes the values of
  // element `in` of its operand `operand`.
  absl::Status ForwardOperand(const HloInstruction& instr, const ShapeIndex& out, int64_t operand,
                              const ShapeIndex& in, bool define_tuples = false) {
    RETURN_IF_ERROR(Operand(instr, operand).status());
    ASSIGN_OR_RETURN(int32_t dst, SlotOfId(instr, current_, out));
    ASSIGN_OR_RETURN(int32_t src, SlotOfId(instr, OperandId(current_, operand), in));
    return Forward(instr, dst, src, define_tuples);
  }

  absl::Status ComputeParameterModes() {
    const CallGraph& graph = *a_.call_graph_;
    for (const auto& c : a_.module_->computations()) {
      ParamMode mode = ParamMode::kDefine;
      const HloInstruction* binding = nullptr;
      if (graph.IsSequential(c.get())) {
        std::vector<const CallSite*> callers = graph.SequentialCallers(c.get());
        const bool both = graph.GetNode(c.get()).context() == CallContext::kBoth;
        if (callers.size() == 1 && !both &&
            callers[0]->instruction->opcode() != HloOpcode::kWhile) {
          mode = ParamMode::kForward;
          binding = callers[0]->instruction;
        } else if (!callers.empty()) {
          mode = ParamMode::kPhi;
        }
      }
      param_mode_[c.get()] = {mode, binding};
    }
    return absl::OkStatus();
  }

  // The operand of `site` that becomes parameter `number` of `callee`.
  absl::StatusOr<const HloInstruction*> BindingOperand(const HloInstruction& site,
                                                       const HloComputation* callee, int64_t number,
                                                       const HloInstruction& param) const {
    switch (site.opcode()) {
      case HloOpcode::kCall:
        return Operand(site, number);
      case HloOpcode::kAsyncStart:
        if (number >= site.operand_count()) {
          return Unimplemented("parameter ", number, " of async computation '", callee->name(),
                               "' is bound late (by an async-update of '", site.name(),
                               "'); xlite's dataflow needs every operand on the async-start");
        }
        return Operand(site, number);
      case HloOpcode::kConditional: {
        if (number != 0) return Error(param, "a conditional branch has one parameter");
        for (size_t j = 0; j < site.called_computations().size(); ++j) {
          if (site.called_computations()[j] == callee) return Operand(site, j + 1);
        }
        return Error(site, absl::StrCat("does not call '", callee->name(), "'"));
      }
      default:
        return Error(site, "binds no parameters");
    }
  }

  absl::Status Process(const HloComputation* c) {
    State& state = state_[c];
    if (state == State::kDone) return absl::OkStatus();
    if (state == State::kVisiting) {
      return InvalidArgument("computation '", c->name(), "' calls itself");
    }
    state = State::kVisiting;
    for (int32_t id : PostOrder(*c)) {
      HloInstruction& instr = *a_.instructions_[id];
      if (has_callees_[id]) {
        for (const HloComputation* callee : instr.called_computations()) {
          if (callee != nullptr) RETURN_IF_ERROR(Process(callee));
        }
      }
      current_ = id;
      RETURN_IF_ERROR(Define(instr));
    }
    state_[c] = State::kDone;
    return absl::OkStatus();
  }

  // The computation's instructions, each after its operands and control
  // predecessors (HloComputation::MakeInstructionPostOrder, on ids).
  std::vector<int32_t> PostOrder(const HloComputation& c) {
    std::vector<int32_t> order;
    order.reserve(c.instructions().size());
    if (visited_.empty()) visited_.assign(a_.instructions_.size(), false);
    std::vector<std::pair<int32_t, size_t>> stack;
    for (const auto& start : c.instructions()) {
      const int32_t first = a_.instruction_id(start.get());
      if (visited_[first]) continue;
      visited_[first] = true;
      stack.push_back({first, 0});
      while (!stack.empty()) {
        auto& [id, next] = stack.back();
        absl::Span<const int32_t> operands = a_.operand_ids(id);
        absl::Span<const int32_t> controls = a_.control_predecessor_ids(id);
        if (next == operands.size() + controls.size()) {
          order.push_back(id);
          stack.pop_back();
          continue;
        }
        const int32_t pred =
            next < operands.size() ? operands[next] : controls[next - operands.size()];
        ++next;
        if (visited_[pred] || a_.instructions_[pred]->parent() != &c) continue;
        visited_[pred] = true;
        stack.push_back({pred, 0});
      }
    }
    return order;
  }

  // Applies `instr`'s forwarding rule, then defines a value at every slot
  // the rule left empty.
  absl::Status Define(HloInstruction& instr) {
    const int32_t begin = a_.slot_begin_[current_], end = a_.slot_begin_[current_ + 1];
    bool phi = false;
    switch (a_.opcodes_[current_]) {
      case HloOpcode::kBitcast:
      case HloOpcode::kAddDependency:
      case HloOpcode::kDomain:
      case HloOpcode::kOptimizationBarrier:
        RETURN_IF_ERROR(ForwardOperand(instr, {}, 0, {}));
        break;
      case HloOpcode::kAllReduceDone:
        // The start is the result; in the older form the start is a
        // (operand, result) tuple.
        RETURN_IF_ERROR(ForwardDone(instr, {{}, {1}}));
        break;
      case HloOpcode::kTuple:
        if (!instr.shape().IsTuple() ||
            instr.shape().tuple_shapes_size() != instr.operand_count()) {
          return Error(instr, "a tuple's shape must have one element per operand");
        }
        for (int64_t i = 0; i < instr.operand_count(); ++i) {
          RETURN_IF_ERROR(ForwardOperand(instr, {i}, i, {}));
        }
        break;
      case HloOpcode::kGetTupleElement:
        RETURN_IF_ERROR(ForwardOperand(instr, {}, 0, {instr.attrs().tuple_index}));
        break;
      case HloOpcode::kCopy:
        // A copy defines its own top level; nested elements pass through.
        for (int64_t i = 0; instr.shape().IsTuple() && i < instr.shape().tuple_shapes_size(); ++i) {
          RETURN_IF_ERROR(ForwardOperand(instr, {i}, 0, {i}));
        }
        break;
      case HloOpcode::kCall: {
        const HloComputation* callee = Callee(instr, 0);
        if (callee == nullptr || callee->root_instruction() == nullptr) {
          return Error(instr, "calls no computation with a root");
        }
        ASSIGN_OR_RETURN(int32_t src, Slot(instr, callee->root_instruction(), {}));
        RETURN_IF_ERROR(Forward(instr, begin, src, /*define_tuples=*/false));
        break;
      }
      case HloOpcode::kWhile:
      case HloOpcode::kConditional:
        phi = true;
        break;
      case HloOpcode::kParameter: {
        const auto& [mode, binding] = param_mode_.at(instr.parent());
        if (mode == ParamMode::kPhi) {
          phi = true;
        } else if (mode == ParamMode::kForward) {
          ASSIGN_OR_RETURN(
              const HloInstruction* op,
              BindingOperand(*binding, instr.parent(), instr.attrs().parameter_number, instr));
          ASSIGN_OR_RETURN(int32_t src, Slot(instr, op, {}));
          RETURN_IF_ERROR(Forward(instr, begin, src, /*define_tuples=*/false));
        }
        break;
      }
      case HloOpcode::kAsyncStart:
        RETURN_IF_ERROR(DefineAsyncStart(instr));
        break;
      case HloOpcode::kAsyncUpdate:
        if (instr.operand_count() != 1) {
          return Unimplemented("async-update '", instr.name(),
                               "' binds operands late; xlite's dataflow needs every operand "
                               "on the async-start");
        }
        RETURN_IF_ERROR(ForwardOperand(instr, {}, 0, {}, /*define_tuples=*/true));
        break;
      case HloOpcode::kAsyncDone:
        RETURN_IF_ERROR(ForwardOperand(instr, {}, 0, {1}, /*define_tuples=*/true));
        break;
      case HloOpcode::kAllGatherDone:
      case HloOpcode::kCollectivePermuteDone:
        // The result element {1} of a (operand, result) start; a start in
        // the older form that returns the result itself is passed on whole.
        RETURN_IF_ERROR(ForwardDone(instr, {{1}, {}}));
        break;
      case HloOpcode::kCopyStart:  // (destination, source, context)
        RETURN_IF_ERROR(ForwardOperand(instr, {1}, 0, {}));
        break;
      case HloOpcode::kCopyDone:
        RETURN_IF_ERROR(ForwardOperand(instr, {}, 0, {0}));
        break;
      case HloOpcode::kAllGatherStart:    // (operand(s), result(s))
        if (!IsStartTuple(instr)) break;  // the older form: the result only
        if (instr.operand_count() == 1) {
          RETURN_IF_ERROR(ForwardOperand(instr, {0}, 0, {}, /*define_tuples=*/true));
        } else {
          for (int64_t i = 0; i < instr.operand_count(); ++i) {
            RETURN_IF_ERROR(ForwardOperand(instr, {0, i}, i, {}, /*define_tuples=*/true));
          }
        }
        break;
      case HloOpcode::kCollectivePermuteStart:  // (operand(s), result(s), contexts...)
        if (!IsStartTuple(instr)) break;        // the older form: the result only
        if (instr.operand_count() > 1 && !instr.attrs().slice_sizes_list.has_value()) {
          for (int64_t i = 0; i < instr.operand_count(); ++i) {
            RETURN_IF_ERROR(ForwardOperand(instr, {0, i}, i, {}));
          }
        } else {
          RETURN_IF_ERROR(ForwardOperand(instr, {0}, 0, {}));
        }
        break;
      case HloOpcode::kSend:  // (data, u32[] context, token[])
        RETURN_IF_ERROR(ForwardOperand(instr, {0}, 0, {}));
        break;
      case HloOpcode::kRecvDone:  // (data, token[])
        RETURN_IF_ERROR(ForwardOperand(instr, {0}, 0, {0}));
        break;
      default:
        break;
    }
    for (int32_t slot = begin; slot < end; ++slot) {
      if (a_.slot_value_[slot] < 0) NewValue(slot, &instr, phi);
    }
    return absl::OkStatus();
  }

  static bool SameStructure(const Shape& a, const Shape& b) {
    if (a.IsTuple() != b.IsTuple()) return false;
    if (!a.IsTuple()) return true;
    if (a.tuple_shapes_size() != b.tuple_shapes_size()) return false;
    for (int64_t i = 0; i < a.tuple_shapes_size(); ++i) {
      if (!SameStructure(a.tuple_shapes(i), b.tuple_shapes(i))) return false;
    }
    return true;
  }

  // A collective's done passes on the element of its start at the first of
  // `candidates` whose structure matches the done's shape.
  absl::Status ForwardDone(const HloInstruction& instr, std::vector<ShapeIndex> candidates) {
    ASSIGN_OR_RETURN(const HloInstruction* start, Operand(instr, 0));
    for (const ShapeIndex& index : candidates) {
      const Shape* element = SubshapeAt(start->shape(), index);
      if (element != nullptr && SameStructure(*element, instr.shape())) {
        return ForwardOperand(instr, {}, 0, index, /*define_tuples=*/true);
      }
    }
    return Error(instr, absl::StrCat("its shape ", instr.shape().ToString(),
                                     " is no element of its start's ", start->shape().ToString()));
  }

  static const HloComputation* Callee(const HloInstruction& instr, size_t i) {
    return i < instr.called_computations().size() ? instr.called_computations()[i] : nullptr;
  }

  // async-start: ((operands...), wrapped result, contexts...). The operand
  // elements are the operands' values, the result element is the wrapped
  // computation's result (which async-update and async-done pass on); tuple
  // tables and contexts are new.
  absl::Status DefineAsyncStart(const HloInstruction& instr) {
    const HloComputation* wrapped = Callee(instr, 0);
    if (wrapped == nullptr || wrapped->root_instruction() == nullptr) {
      return Error(instr, "wraps no computation with a root");
    }
    if (instr.operand_count() != wrapped->num_parameters()) {
      return Unimplemented("async-start '", instr.name(), "' binds ", instr.operand_count(),
                           " of the ", wrapped->num_parameters(), " parameters of '",
                           wrapped->name(),
                           "'; late binding by async-update is not supported by xlite's "
                           "dataflow");
    }
    for (int64_t i = 0; i < instr.operand_count(); ++i) {
      RETURN_IF_ERROR(ForwardOperand(instr, {0, i}, i, {}, /*define_tuples=*/true));
    }
    ASSIGN_OR_RETURN(int32_t out, Slot(instr, &instr, {1}));
    ASSIGN_OR_RETURN(int32_t root, Slot(instr, wrapped->root_instruction(), {}));
    const Shape& out_shape = *a_.slot_shape_[out];
    if (out_shape.IsTuple() && out_shape.tuple_shapes_size() == 0 &&
        a_.slot_subtree_size_[root] != 1) {
      return Unimplemented("async-start '", instr.name(),
                           "' leaves its output unbound (bound later); not supported by "
                           "xlite's dataflow");
    }
    return Forward(instr, out, root, /*define_tuples=*/true);
  }

  absl::StatusOr<HloValue::Id> ValueAt(const HloInstruction& who, const HloInstruction* instr,
                                       const ShapeIndex& index) const {
    ASSIGN_OR_RETURN(int32_t slot, Slot(who, instr, index));
    return a_.slot_value_[slot];
  }

  // The values that meet at each phi (see HloValue::is_phi).
  absl::Status ComputePhiInputs() {
    for (const auto& value : a_.values_) {
      if (!value->is_phi()) continue;
      const HloInstruction& at = *value->defining_instruction();
      const ShapeIndex& index = value->defining_index();
      std::vector<HloValue::Id> inputs;
      auto add = [&](const HloInstruction* instr) -> absl::Status {
        ASSIGN_OR_RETURN(HloValue::Id id, ValueAt(at, instr, index));
        inputs.push_back(id);
        return absl::OkStatus();
      };
      auto add_loop = [&](const HloInstruction& loop) -> absl::Status {
        ASSIGN_OR_RETURN(const HloInstruction* init, Operand(loop, 0));
        RETURN_IF_ERROR(add(init));
        const HloComputation* body = Callee(loop, 1);
        if (body == nullptr || body->root_instruction() == nullptr) {
          return Error(loop, "has no body with a root");
        }
        return add(body->root_instruction());
      };
      if (at.opcode() == HloOpcode::kWhile) {
        RETURN_IF_ERROR(add_loop(at));
      } else if (at.opcode() == HloOpcode::kConditional) {
        for (const HloComputation* branch : at.called_computations()) {
          if (branch == nullptr || branch->root_instruction() == nullptr) {
            return Error(at, "has a branch without a root");
          }
          RETURN_IF_ERROR(add(branch->root_instruction()));
        }
      } else if (at.opcode() == HloOpcode::kParameter) {
        for (const CallSite* site : a_.call_graph_->SequentialCallers(at.parent())) {
          const HloInstruction& caller = *site->instruction;
          if (caller.opcode() == HloOpcode::kWhile) {
            RETURN_IF_ERROR(add_loop(caller));
          } else if (caller.opcode() == HloOpcode::kConditional) {
            // Every branch this computation is (listed once per branch).
            for (size_t j = 0; j < caller.called_computations().size(); ++j) {
              if (caller.called_computations()[j] != at.parent()) continue;
              ASSIGN_OR_RETURN(const HloInstruction* op, Operand(caller, j + 1));
              RETURN_IF_ERROR(add(op));
            }
          } else {
            ASSIGN_OR_RETURN(
                const HloInstruction* op,
                BindingOperand(*site->instruction, at.parent(), at.attrs().parameter_number, at));
            RETURN_IF_ERROR(add(op));
          }
        }
      }
      std::sort(inputs.begin(), inputs.end());
      inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
      for (HloValue::Id id : inputs) {
        if (id != value->id()) value->phi_inputs_.push_back(a_.values_[id].get());
      }
    }
    return absl::OkStatus();
  }

  // Which operand slots `user` reads, by XLA's HloUse rules: tuple and
  // domain only pass their operands on, get-tuple-element and copy read the
  // operand's tuple table; everything else reads all of it.
  std::pair<int32_t, int32_t> ReadSlots(HloOpcode user, int32_t operand) const {
    const int32_t first = a_.slot_begin_[operand];
    switch (user) {
      case HloOpcode::kTuple:
      case HloOpcode::kDomain:
        return {first, first};
      case HloOpcode::kGetTupleElement:
      case HloOpcode::kCopy:
        return {first, first + 1};
      default:
        return {first, a_.slot_begin_[operand + 1]};
    }
  }

  // Positions and uses of every value, and their instruction ids in flat
  // arrays: one pass to count, one to fill.
  absl::Status ComputePositionsAndUses() {
    const int32_t n = static_cast<int32_t>(a_.instructions_.size());
    const size_t values = a_.values_.size();
    std::vector<int32_t> positions(values, 0), uses(values, 0);
    for (int32_t id = 0; id < n; ++id) {
      for (int32_t slot = a_.slot_begin_[id]; slot < a_.slot_begin_[id + 1]; ++slot) {
        ++positions[a_.slot_value_[slot]];
      }
      for (int32_t operand : a_.operand_ids(id)) {
        auto [first, last] = ReadSlots(a_.opcodes_[id], operand);
        for (int32_t slot = first; slot < last; ++slot) ++uses[a_.slot_value_[slot]];
      }
    }
    a_.position_begin_.assign(values + 1, 0);
    a_.use_begin_.assign(values + 1, 0);
    for (size_t v = 0; v < values; ++v) {
      a_.position_begin_[v + 1] = a_.position_begin_[v] + positions[v];
      a_.use_begin_[v + 1] = a_.use_begin_[v] + uses[v];
      a_.values_[v]->positions_.reserve(positions[v]);
      a_.values_[v]->uses_.reserve(uses[v]);
    }
    a_.position_ids_.assign(a_.position_begin_[values], -1);
    a_.use_ids_.assign(a_.use_begin_[values], -1);
    a_.value_definer_.assign(values, -1);
    // The defining position comes first.
    for (size_t v = 0; v < values; ++v) {
      const int32_t definer = a_.instruction_id(a_.values_[v]->defining_instruction());
      a_.value_definer_[v] = definer;
      a_.position_ids_[a_.position_begin_[v]] = definer;
      positions[v] = 1;
      uses[v] = 0;
    }
    for (int32_t id = 0; id < n; ++id) {
      HloInstruction* instr = a_.instructions_[id];
      for (int32_t slot = a_.slot_begin_[id]; slot < a_.slot_begin_[id + 1]; ++slot) {
        const HloValue::Id v = a_.slot_value_[slot];
        if (a_.value_defining_slot_[v] == slot) continue;
        a_.position_ids_[a_.position_begin_[v] + positions[v]++] = id;
        a_.values_[v]->positions_.push_back(HloPosition{instr, a_.slot_index_[slot]});
      }
      absl::Span<const int32_t> operands = a_.operand_ids(id);
      for (int64_t k = 0; k < static_cast<int64_t>(operands.size()); ++k) {
        auto [first, last] = ReadSlots(a_.opcodes_[id], operands[k]);
        for (int32_t slot = first; slot < last; ++slot) {
          const HloValue::Id v = a_.slot_value_[slot];
          a_.use_ids_[a_.use_begin_[v] + uses[v]++] = id;
          a_.values_[v]->uses_.push_back(HloUse{instr, k, a_.slot_index_[slot]});
        }
      }
    }
    if (const HloComputation* entry = a_.module_->entry_computation();
        entry != nullptr && entry->root_instruction() != nullptr) {
      const int32_t root = a_.instruction_id(entry->root_instruction());
      for (int32_t slot = a_.slot_begin_[root]; slot < a_.slot_begin_[root + 1]; ++slot) {
        a_.values_[a_.slot_value_[slot]]->live_out_of_module_ = true;
      }
    }
    return absl::OkStatus();
  }

  absl::Status ComputeInPlacePairs() {
    for (int32_t id = 0; id < static_cast<int32_t>(a_.instructions_.size()); ++id) {
      if (!MayHaveInPlacePairs(a_.opcodes_[id])) continue;
      HloInstruction* instr = a_.instructions_[id];
      for (auto& [input, output] : GetInPlaceInputOutputPairs(*instr)) {
        ASSIGN_OR_RETURN(const HloInstruction* operand, Operand(*instr, input.operand_number));
        RETURN_IF_ERROR(Slot(*instr, operand, input.operand_index).status());
        RETURN_IF_ERROR(Slot(*instr, instr, output).status());
        a_.in_place_pairs_.push_back(InPlacePair{instr, std::move(input), std::move(output)});
      }
    }
    return absl::OkStatus();
  }

  HloDataflowAnalysis& a_;
  absl::flat_hash_map<const HloComputation*, std::pair<ParamMode, const HloInstruction*>>
      param_mode_;
  absl::flat_hash_map<const HloComputation*, State> state_;
  std::vector<bool> visited_;      // by instruction id, for PostOrder
  std::vector<bool> has_callees_;  // by instruction id
  int32_t current_ = -1;           // the instruction Define is defining
};

absl::StatusOr<std::unique_ptr<HloDataflowAnalysis>> HloDataflowAnalysis::Run(
    const HloModule& module) {
  auto analysis = std::unique_ptr<HloDataflowAnalysis>(new HloDataflowAnalysis());
  analysis->module_ = &module;
  ASSIGN_OR_RETURN(analysis->call_graph_, CallGraph::Build(module));
  Builder builder(*analysis);
  RETURN_IF_ERROR(builder.Run());
  return analysis;
}

int32_t HloDataflowAnalysis::instruction_id(const HloInstruction* instruction) const {
  auto it = instruction_index_.find(instruction);
  return it == instruction_index_.end() ? -1 : it->second;
}

int32_t HloDataflowAnalysis::SlotOf(const HloInstruction* instruction,
                                    const ShapeIndex& index) const {
  auto it = instruction_index_.find(instruction);
  if (it == instruction_index_.end()) return -1;
  int32_t slot = slot_begin_[it->second];
  for (int64_t i : index) {
    const Shape& shape = *slot_shape_[slot];
    if (!shape.IsTuple() || i < 0 || i >= shape.tuple_shapes_size()) return -1;
    slot = child_slots_[slot_children_[slot] + i];
  }
  return slot;
}

const HloValue* HloDataflowAnalysis::GetValueAt(const HloInstruction* instruction,
                                                const ShapeIndex& index) const {
  const int32_t slot = SlotOf(instruction, index);
  return slot < 0 ? nullptr : values_[slot_value_[slot]].get();
}

bool HloDataflowAnalysis::ValueIsDefinedAt(const HloInstruction* instruction,
                                           const ShapeIndex& index) const {
  const int32_t slot = SlotOf(instruction, index);
  return slot >= 0 && value_defining_slot_[slot_value_[slot]] == slot;
}

void HloDataflowAnalysis::ForEachValueAt(
    const HloInstruction* instruction,
    absl::FunctionRef<void(const ShapeIndex&, const HloValue&)> fn) const {
  auto it = instruction_index_.find(instruction);
  if (it == instruction_index_.end()) return;
  for (int32_t slot = slot_begin_[it->second]; slot < slot_begin_[it->second + 1]; ++slot) {
    fn(slot_index_[slot], *values_[slot_value_[slot]]);
  }
}

std::vector<const HloValue*> HloDataflowAnalysis::GetValuesDefinedBy(
    const HloInstruction* instruction) const {
  std::vector<const HloValue*> out;
  auto it = instruction_index_.find(instruction);
  if (it == instruction_index_.end()) return out;
  for (int32_t slot = slot_begin_[it->second]; slot < slot_begin_[it->second + 1]; ++slot) {
    if (value_defining_slot_[slot_value_[slot]] == slot) {
      out.push_back(values_[slot_value_[slot]].get());
    }
  }
  return out;
}

absl::Status HloDataflowAnalysis::Verify() const {
  for (const auto& value : values_) {
    for (const HloPosition& p : value->positions()) {
      if (GetValueAt(p.instruction, p.index) != value.get()) {
        return Internal("dataflow: value ", value->ToShortString(), " lists position ",
                        p.ToString(), ", which holds another value");
      }
    }
    for (const HloUse& u : value->uses()) {
      if (u.operand_number >= u.instruction->operand_count() ||
          GetValueAt(u.instruction->operand(u.operand_number), u.operand_index) != value.get()) {
        return Internal("dataflow: value ", value->ToShortString(), " lists use ", u.ToString(),
                        ", which reads another value");
      }
    }
  }
  for (size_t i = 0; i < instructions_.size(); ++i) {
    for (int32_t slot = slot_begin_[i]; slot < slot_begin_[i + 1]; ++slot) {
      const HloValue& value = *values_[slot_value_[slot]];
      const HloPosition here{instructions_[i], slot_index_[slot]};
      if (std::find(value.positions().begin(), value.positions().end(), here) ==
          value.positions().end()) {
        return Internal("dataflow: position ", here.ToString(), " holds ", value.ToShortString(),
                        ", which does not list it");
      }
    }
  }
  return absl::OkStatus();
}

std::string HloDataflowAnalysis::ToString() const {
  std::string out =
      absl::StrCat("HloDataflowAnalysis of ", module_->name(), ": ", values_.size(), " values\n");
  for (const auto& value : values_) {
    out += value->ToString();
    if (value->is_phi()) {
      out += "  phi inputs:";
      for (const HloValue* input : value->phi_inputs()) {
        absl::StrAppend(&out, " ", input->ToShortString());
      }
      out += "\n";
    }
  }
  return out;
}

bool IsStartTuple(const HloInstruction& start) {
  const Shape& shape = start.shape();
  if (!shape.IsTuple() || shape.tuple_shapes_size() < 2 || start.operand_count() < 1) {
    return false;
  }
  const Shape& in = shape.tuple_shapes(0);
  if (start.operand_count() == 1) return in.EqualIgnoringLayout(start.operand(0)->shape());
  return in.IsTuple() && in.tuple_shapes_size() == start.operand_count();
}

}  // namespace xlite
