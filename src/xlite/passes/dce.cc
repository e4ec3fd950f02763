#include "xlite/passes/dce.h"

#include <vector>

#include "absl/container/flat_hash_set.h"

namespace xlite {
namespace {

bool IsDead(const HloInstruction& instr) {
  return instr.users().empty() && instr.parent()->root_instruction() != &instr &&
         instr.opcode() != HloOpcode::kParameter && instr.control_successors().empty() &&
         !instr.HasSideEffect();
}

// Removes dead instructions of `computation`, users before operands.
bool RemoveDeadInstructions(HloComputation& computation) {
  bool changed = false;
  // Instructions are in definition order, so a reverse sweep sees a dead user
  // before its operands; repeat while removals expose more dead operands.
  bool progress = true;
  while (progress) {
    progress = false;
    std::vector<HloInstruction*> dead;
    for (auto it = computation.instructions().rbegin(); it != computation.instructions().rend();
         ++it) {
      if (IsDead(**it)) dead.push_back(it->get());
    }
    for (HloInstruction* instr : dead) {
      if (!instr->users().empty()) continue;  // a later removal cannot revive it
      computation.RemoveInstruction(instr);
      progress = changed = true;
    }
  }
  return changed;
}

// Computations reachable from the entry through called computations.
absl::flat_hash_set<const HloComputation*> Reachable(const HloModule& module) {
  absl::flat_hash_set<const HloComputation*> seen;
  std::vector<const HloComputation*> stack;
  if (module.entry_computation() != nullptr) stack.push_back(module.entry_computation());
  while (!stack.empty()) {
    const HloComputation* c = stack.back();
    stack.pop_back();
    if (!seen.insert(c).second) continue;
    for (const auto& i : c->instructions()) {
      for (const HloComputation* callee : i->called_computations()) stack.push_back(callee);
    }
  }
  return seen;
}

}  // namespace

absl::StatusOr<bool> HloDce::Run(HloModule& module) {
  bool changed = false;
  for (const auto& c : module.computations()) changed |= RemoveDeadInstructions(*c);
  if (module.entry_computation() == nullptr) return changed;
  const absl::flat_hash_set<const HloComputation*> live = Reachable(module);
  std::vector<HloComputation*> dead;
  for (const auto& c : module.computations()) {
    if (!live.contains(c.get())) dead.push_back(c.get());
  }
  for (HloComputation* c : dead) module.RemoveComputation(c);
  return changed || !dead.empty();
}

}  // namespace xlite
