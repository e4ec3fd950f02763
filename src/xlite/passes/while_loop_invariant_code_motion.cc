#include "xlite/passes/while_loop_invariant_code_motion.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "xlite/ir/computation.h"
#include "xlite/ir/name_uniquer.h"
#include "xlite/passes/while_loop_state.h"

namespace xlite {
namespace {

// Work worth a loop-state element of its own.
bool WorthHoisting(HloOpcode op) {
  switch (op) {
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kDot:
    case HloOpcode::kConvolution:
    case HloOpcode::kSort:
      return true;
    default:
      return false;
  }
}

class LoopMotion {
 public:
  LoopMotion(HloComputation& computation, NameUniquer& names)
      : computation_(computation), names_(names) {}

  bool Run(HloInstruction* loop) {
    if (loop->called_computations().size() != 2 || loop->operand_count() != 1) return false;
    HloComputation& condition = *loop->called_computations()[0];
    HloComputation& body = *loop->called_computations()[1];
    HloInstruction* init = loop->operand(0);
    HloInstruction* root = body.root_instruction();
    if (init->opcode() != HloOpcode::kTuple || root == nullptr ||
        root->opcode() != HloOpcode::kTuple || !loop->shape().IsTuple() ||
        !ReadsParameterByElement(body) || !ReadsParameterByElement(condition) ||
        loop->HasControlEdges()) {
      return false;
    }
    const HloInstruction* param = body.parameter_instruction(0);
    const int64_t n = loop->shape().tuple_shapes_size();
    if (root->operand_count() != n || init->operand_count() != n) return false;
    // Tuple elements the body passes through unchanged.
    std::vector<bool> invariant_element(n, false);
    for (int64_t i = 0; i < n; ++i) {
      const HloInstruction* r = root->operand(i);
      invariant_element[i] = r->opcode() == HloOpcode::kGetTupleElement && r->operand(0) == param &&
                             r->attrs().tuple_index == i;
    }
    // Invariant instructions, operands first.
    absl::flat_hash_set<const HloInstruction*> invariant;
    std::vector<HloInstruction*> order = body.MakeInstructionPostOrder();
    for (HloInstruction* instr : order) {
      if (instr->opcode() == HloOpcode::kGetTupleElement && instr->operand(0) == param) {
        if (invariant_element[instr->attrs().tuple_index]) invariant.insert(instr);
        continue;
      }
      if (instr->opcode() == HloOpcode::kParameter || instr->opcode() == HloOpcode::kFusion ||
          instr == root || !instr->shape().IsArray() || instr->HasSideEffect() ||
          instr->HasControlEdges()) {
        continue;
      }
      bool all = true;
      for (const HloInstruction* op : instr->operands()) all = all && invariant.contains(op);
      if (all) invariant.insert(instr);
    }
    // What to hoist: invariant work worth it that the loop still needs
    // (used by something not invariant), outermost first.
    std::vector<HloInstruction*> hoisted;
    for (HloInstruction* instr : order) {
      if (!invariant.contains(instr) || !WorthHoisting(instr->opcode())) continue;
      bool needed_inside = false;
      for (const HloInstruction* user : instr->users()) {
        needed_inside = needed_inside || !invariant.contains(user);
      }
      if (needed_inside) hoisted.push_back(instr);
    }
    if (hoisted.empty()) return false;

    // Clone each hoisted value, with what it is computed from, before the
    // loop: an invariant element is the init tuple's operand.
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> outside;
    std::vector<HloInstruction*> new_init = init->operands();
    for (HloInstruction* h : hoisted) new_init.push_back(CloneOutside(h, init, outside));

    // The loop state grows by one element per hoisted value.
    Shape state = loop->shape();
    for (HloInstruction* h : hoisted) state.mutable_tuple_shapes().push_back(h->shape());
    HloInstruction* tuple = Add(computation_, HloOpcode::kTuple, "tuple", state, new_init);
    body.parameter_instruction(0)->mutable_shape() = state;
    condition.parameter_instruction(0)->mutable_shape() = state;
    std::vector<HloInstruction*> root_operands = root->operands();
    for (size_t k = 0; k < hoisted.size(); ++k) {
      HloInstruction* element =
          Add(body, HloOpcode::kGetTupleElement, absl::StrCat(hoisted[k]->name(), ".hoisted"),
              hoisted[k]->shape(), {body.parameter_instruction(0)});
      element->attrs().tuple_index = n + static_cast<int64_t>(k);
      hoisted[k]->ReplaceAllUsesWith(element);
      root_operands.push_back(element);
    }
    HloInstruction* new_root = Add(body, HloOpcode::kTuple, root->name(), state, root_operands);
    body.set_root_instruction(new_root);

    // The while's users keep its old shape.
    const Shape old_shape = loop->shape();
    std::vector<HloInstruction*> users = loop->users();
    const bool was_root = computation_.root_instruction() == loop;
    loop->mutable_shape() = state;
    loop->ReplaceOperandWith(0, tuple);
    HloInstruction* old_view = nullptr;
    auto view = [&]() {
      if (old_view != nullptr) return old_view;
      std::vector<HloInstruction*> elements;
      for (int64_t i = 0; i < n; ++i) {
        HloInstruction* e = Add(computation_, HloOpcode::kGetTupleElement, "get-tuple-element",
                                old_shape.tuple_shapes(i), {loop});
        e->attrs().tuple_index = i;
        elements.push_back(e);
      }
      old_view = Add(computation_, HloOpcode::kTuple, "tuple", old_shape, elements);
      return old_view;
    };
    for (HloInstruction* user : users) {
      if (user->opcode() != HloOpcode::kGetTupleElement) loop->ReplaceUseWith(user, view());
    }
    if (was_root) computation_.set_root_instruction(view());
    // New instructions were appended: put every list in operand order again.
    for (HloComputation* c : {&computation_, &body}) {
      c->SetInstructionOrder(c->MakeInstructionPostOrder());
    }
    return true;
  }

 private:
  HloInstruction* Add(HloComputation& c, HloOpcode opcode, const std::string& name, Shape shape,
                      const std::vector<HloInstruction*>& operands) {
    auto instr = std::make_unique<HloInstruction>(opcode, names_.Get(name), std::move(shape));
    for (HloInstruction* op : operands) instr->AppendOperand(op);
    return c.AddInstruction(std::move(instr));
  }

  HloInstruction* CloneOutside(HloInstruction* instr, HloInstruction* init,
                               absl::flat_hash_map<const HloInstruction*, HloInstruction*>& done) {
    if (auto it = done.find(instr); it != done.end()) return it->second;
    HloInstruction* clone;
    if (instr->opcode() == HloOpcode::kGetTupleElement &&
        instr->operand(0)->opcode() == HloOpcode::kParameter) {
      clone = init->operand(instr->attrs().tuple_index);
    } else {
      std::vector<HloInstruction*> operands;
      for (HloInstruction* op : instr->operands()) operands.push_back(CloneOutside(op, init, done));
      clone = Add(computation_, instr->opcode(), instr->name(), instr->shape(), operands);
      clone->attrs() = instr->attrs();
      // Reducers and comparators (parallel call sites) may be shared.
      clone->set_called_computations(instr->called_computations());
    }
    done[instr] = clone;
    return clone;
  }

  HloComputation& computation_;
  NameUniquer& names_;
};

}  // namespace

absl::StatusOr<bool> WhileLoopInvariantCodeMotion::Run(HloModule& module) {
  // A schedule would need the new instructions placed: scheduled modules
  // keep their loops.
  if (module.config().is_scheduled) return false;
  NameUniquer names = NameUniquer::ForInstructions(module);
  bool changed = false;
  for (const auto& c : module.computations()) {
    if (c->fusion_instruction() != nullptr) continue;
    std::vector<HloInstruction*> loops;
    for (const auto& i : c->instructions()) {
      if (i->opcode() == HloOpcode::kWhile) loops.push_back(i.get());
    }
    for (HloInstruction* loop : loops) changed |= LoopMotion(*c, names).Run(loop);
  }
  return changed;
}

}  // namespace xlite
