#include "xlite/passes/call_inliner.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace xlite {
namespace {

class Inliner {
 public:
  explicit Inliner(HloModule& module) {
    for (const auto& c : module.computations()) {
      for (const auto& i : c->instructions()) names_.insert(i->name());
    }
  }

  // `base` with any ".<digits>" suffix dropped, then ".N" for the first free N.
  std::string UniqueName(std::string base) {
    const size_t dot = base.rfind('.');
    if (dot != std::string::npos && dot + 1 < base.size() && dot > 0 &&
        base.find_first_not_of("0123456789", dot + 1) == std::string::npos) {
      base.resize(dot);
    }
    std::string name = base;
    for (int n = 1; names_.contains(name); ++n) name = absl::StrCat(base, ".", n);
    names_.insert(name);
    return name;
  }

  void Inline(HloInstruction* call) {
    HloComputation& caller = *call->parent();
    const HloComputation& callee = *call->called_computations()[0];
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
    std::vector<HloInstruction*> clones;
    for (HloInstruction* instr : callee.MakeInstructionPostOrder()) {
      if (instr->opcode() == HloOpcode::kParameter) {
        map[instr] = call->operand(instr->attrs().parameter_number);
        continue;
      }
      auto clone = std::make_unique<HloInstruction>(instr->opcode(), UniqueName(instr->name()),
                                                    instr->shape());
      clone->attrs() = instr->attrs();
      clone->set_called_computations(instr->called_computations());
      for (HloInstruction* op : instr->operands()) clone->AppendOperand(map.at(op));
      HloInstruction* added = caller.AddInstruction(std::move(clone));
      // The fused body now belongs to the clone (the original goes with the
      // callee once dce removes it).
      for (HloComputation* c : added->called_computations()) {
        if (c->fusion_instruction() == instr) c->set_fusion_instruction(added);
      }
      map[instr] = added;
      clones.push_back(added);
    }
    // Control edges inside the body.
    for (const auto& instr : callee.instructions()) {
      for (HloInstruction* succ : instr->control_successors()) {
        if (succ->parent() != &callee) continue;
        HloInstruction* from = map.at(instr.get());
        HloInstruction* to = map.at(succ);
        // An edge touching a parameter would land on a call operand; the
        // call's data dependence already orders those before the body.
        if (instr->opcode() == HloOpcode::kParameter || succ->opcode() == HloOpcode::kParameter) {
          continue;
        }
        from->AddControlDependencyTo(to);
      }
    }
    // The call's own control edges.
    const std::vector<HloInstruction*> preds = call->control_predecessors();
    const std::vector<HloInstruction*> succs = call->control_successors();
    for (HloInstruction* p : preds) {
      for (HloInstruction* c : clones) p->AddControlDependencyTo(c);
    }
    for (HloInstruction* s : succs) {
      for (HloInstruction* c : clones) c->AddControlDependencyTo(s);
      if (clones.empty()) {
        for (HloInstruction* p : preds) p->AddControlDependencyTo(s);
      }
    }
    call->DropControlDependencies();
    call->ReplaceAllUsesWith(map.at(callee.root_instruction()));
    caller.RemoveInstruction(call);
  }

 private:
  absl::flat_hash_set<std::string> names_;
};

bool Inlinable(const HloInstruction& instr) {
  if (instr.opcode() != HloOpcode::kCall || instr.called_computations().size() != 1) return false;
  const HloComputation* callee = instr.called_computations()[0];
  return callee != instr.parent() && callee->root_instruction() != nullptr &&
         callee->execution_thread() == instr.parent()->execution_thread() &&
         callee->num_parameters() == instr.operand_count();
}

}  // namespace

absl::StatusOr<bool> CallInliner::Run(HloModule& module) {
  Inliner inliner(module);
  bool changed = false;
  bool progress = true;
  // Each round inlines one level of nesting; more rounds than computations
  // means the calls are recursive, which HLO does not allow.
  const int64_t max_rounds = static_cast<int64_t>(module.computations().size()) + 1;
  for (int64_t round = 0; progress; ++round) {
    if (round > max_rounds) return absl::InvalidArgumentError("call-inliner: recursive calls");
    progress = false;
    std::vector<HloInstruction*> calls;
    for (const auto& c : module.computations()) {
      for (const auto& i : c->instructions()) {
        if (Inlinable(*i)) calls.push_back(i.get());
      }
    }
    for (HloInstruction* call : calls) {
      inliner.Inline(call);
      progress = changed = true;
    }
  }
  return changed;
}

}  // namespace xlite
