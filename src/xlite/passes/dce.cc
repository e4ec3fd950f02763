#include "xlite/passes/dce.h"

#include <vector>

#include "absl/container/flat_hash_set.h"

namespace xlite {
namespace {

// Must stay whatever uses it: the root, parameters, side effects, and
// instructions other instructions are ordered after.
bool IsLiveRoot(const HloInstruction& instr) {
  return instr.parent()->root_instruction() == &instr || instr.opcode() == HloOpcode::kParameter ||
         !instr.control_successors().empty() || instr.HasSideEffect();
}

// Mark (from the live roots through operands) and sweep, in O(instructions).
bool RemoveDeadInstructions(HloComputation& computation) {
  absl::flat_hash_set<const HloInstruction*> live;
  std::vector<const HloInstruction*> stack;
  for (const auto& instr : computation.instructions()) {
    if (IsLiveRoot(*instr) && live.insert(instr.get()).second) stack.push_back(instr.get());
  }
  while (!stack.empty()) {
    const HloInstruction* instr = stack.back();
    stack.pop_back();
    for (const HloInstruction* op : instr->operands()) {
      if (live.insert(op).second) stack.push_back(op);
    }
  }
  std::vector<HloInstruction*> dead;
  for (const auto& instr : computation.instructions()) {
    if (!live.contains(instr.get())) dead.push_back(instr.get());
  }
  computation.RemoveInstructions(dead);
  return !dead.empty();
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
