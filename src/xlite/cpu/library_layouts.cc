#include "xlite/cpu/library_layouts.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "xlite/cpu/library_emitter.h"
#include "xlite/ir/computation.h"

namespace xlite::cpu {
namespace {

bool IsRowMajor(const Shape& s) { return !s.IsArray() || s.HasRowMajorLayout(); }

Shape RowMajor(const Shape& s) {
  Shape out = s;
  out.clear_layout();
  out.SetDefaultLayoutIfMissing();
  return out;
}

// The computations that run as sequences (entry, while, conditional, call);
// the others are embedded in kernels.
std::vector<HloComputation*> SequentialComputations(const HloModule& module) {
  std::vector<HloComputation*> out;
  absl::flat_hash_set<const HloComputation*> seen;
  std::vector<HloComputation*> stack = {module.entry_computation()};
  while (!stack.empty()) {
    HloComputation* c = stack.back();
    stack.pop_back();
    if (c == nullptr || !seen.insert(c).second) continue;
    out.push_back(c);
    for (const auto& i : c->instructions()) {
      if (i->opcode() == HloOpcode::kWhile || i->opcode() == HloOpcode::kConditional ||
          i->opcode() == HloOpcode::kCall) {
        for (HloComputation* callee : i->called_computations()) stack.push_back(callee);
      }
    }
  }
  return out;
}

class Rewriter {
 public:
  explicit Rewriter(HloComputation& computation) : c_(computation) {
    for (const auto& i : c_.instructions()) names_.insert(i->name());
  }

  HloInstruction* Add(HloOpcode opcode, const std::string& base, Shape shape,
                      std::vector<HloInstruction*> operands, const HloInstruction& like) {
    std::string name = base;
    for (int n = 1; names_.contains(name); ++n) name = absl::StrCat(base, ".", n);
    names_.insert(name);
    auto instr = std::make_unique<HloInstruction>(opcode, name, std::move(shape));
    for (HloInstruction* op : operands) instr->AppendOperand(op);
    instr->attrs().metadata = like.attrs().metadata;
    return c_.AddInstruction(std::move(instr));
  }

  // `operand` of `call` copied into `layout_of`'s layout, placed before it.
  void CopyOperand(HloInstruction* call, int64_t i, const Shape& target) {
    HloInstruction* op = call->operand(i);
    HloInstruction* copy =
        Add(HloOpcode::kCopy, absl::StrCat(op->name(), ".relayout"), target, {op}, *call);
    call->ReplaceOperandWith(i, copy);
    before_[call].push_back(copy);
  }

  // Makes `call`'s non-row-major result leaves row-major, with copies back
  // to the old layouts for its users.
  void FixResult(HloInstruction* call) {
    const Shape old = call->shape();
    std::vector<HloInstruction*> users = call->users();
    const bool was_root = c_.root_instruction() == call;
    HloInstruction* replacement = nullptr;
    std::vector<HloInstruction*>& after = after_[call];
    if (old.IsArray()) {
      call->mutable_shape() = RowMajor(old);
      replacement =
          Add(HloOpcode::kCopy, absl::StrCat(call->name(), ".relayout"), old, {call}, *call);
      after.push_back(replacement);
    } else {
      Shape fixed = old;
      std::vector<HloInstruction*> elements;
      for (int64_t k = 0; k < old.tuple_shapes_size(); ++k) {
        const Shape& leaf = old.tuple_shapes(k);
        if (IsRowMajor(leaf)) continue;
        fixed.mutable_tuple_shapes()[k] = RowMajor(leaf);
      }
      call->mutable_shape() = fixed;
      for (int64_t k = 0; k < old.tuple_shapes_size(); ++k) {
        HloInstruction* gte =
            Add(HloOpcode::kGetTupleElement, absl::StrCat(call->name(), ".gte", k),
                fixed.tuple_shapes(k), {call}, *call);
        gte->attrs().tuple_index = k;
        after.push_back(gte);
        HloInstruction* element = gte;
        if (!(fixed.tuple_shapes(k) == old.tuple_shapes(k))) {
          element = Add(HloOpcode::kCopy, absl::StrCat(call->name(), ".relayout", k),
                        old.tuple_shapes(k), {gte}, *call);
          after.push_back(element);
        }
        elements.push_back(element);
      }
      replacement =
          Add(HloOpcode::kTuple, absl::StrCat(call->name(), ".relayout"), old, elements, *call);
      after.push_back(replacement);
    }
    for (HloInstruction* user : users) call->ReplaceUseWith(user, replacement);
    if (was_root) c_.set_root_instruction(replacement);
  }

  bool changed() const { return !before_.empty() || !after_.empty(); }

  // Puts the new instructions next to their calls in the instruction order
  // (the schedule, when the module is scheduled).
  void Reorder() {
    std::vector<HloInstruction*> added;
    for (auto& [call, list] : before_) added.insert(added.end(), list.begin(), list.end());
    for (auto& [call, list] : after_) added.insert(added.end(), list.begin(), list.end());
    absl::flat_hash_set<HloInstruction*> is_added(added.begin(), added.end());
    std::vector<HloInstruction*> order;
    for (const auto& i : c_.instructions()) {
      HloInstruction* instr = i.get();
      if (is_added.contains(instr)) continue;
      if (auto it = before_.find(instr); it != before_.end()) {
        order.insert(order.end(), it->second.begin(), it->second.end());
      }
      order.push_back(instr);
      if (auto it = after_.find(instr); it != after_.end()) {
        order.insert(order.end(), it->second.begin(), it->second.end());
      }
    }
    c_.SetInstructionOrder(order);
  }

 private:
  HloComputation& c_;
  absl::flat_hash_set<std::string> names_;
  absl::flat_hash_map<HloInstruction*, std::vector<HloInstruction*>> before_, after_;
};

}  // namespace

absl::StatusOr<bool> LibraryLayouts::Run(HloModule& module) {
  bool changed = false;
  for (HloComputation* c : SequentialComputations(module)) {
    Rewriter rewriter(*c);
    std::vector<HloInstruction*> calls;
    for (const auto& i : c->instructions()) calls.push_back(i.get());
    for (HloInstruction* call : calls) {
      if (IsHostLibraryOpcode(call->opcode())) {
        for (int64_t i = 0; i < call->operand_count(); ++i) {
          const Shape& s = call->operand(i)->shape();
          if (!IsRowMajor(s)) rewriter.CopyOperand(call, i, RowMajor(s));
        }
        bool result_row_major = true;
        if (call->shape().IsTuple()) {
          for (const Shape& leaf : call->shape().tuple_shapes()) {
            result_row_major &= IsRowMajor(leaf);
          }
        } else {
          result_row_major = IsRowMajor(call->shape());
        }
        if (!result_row_major) rewriter.FixResult(call);
      } else if (call->opcode() == HloOpcode::kCustomCall &&
                 call->attrs().operand_layout_constraints &&
                 call->attrs().operand_layout_constraints->size() ==
                     static_cast<size_t>(call->operand_count())) {
        for (int64_t i = 0; i < call->operand_count(); ++i) {
          const Shape& want = (*call->attrs().operand_layout_constraints)[i];
          const Shape& have = call->operand(i)->shape();
          if (!want.IsArray() || !have.IsArray() || !want.has_layout()) continue;
          Shape have_laid_out = have;
          have_laid_out.SetDefaultLayoutIfMissing();
          if (!(want.layout() == have_laid_out.layout())) {
            Shape target = have;
            target.set_layout(want.layout());
            rewriter.CopyOperand(call, i, target);
          }
        }
      }
    }
    if (rewriter.changed()) {
      rewriter.Reorder();
      changed = true;
    }
  }
  return changed;
}

}  // namespace xlite::cpu
