#include "xlite/passes/cse.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "xlite/ir/identical.h"

namespace xlite {
namespace {

bool Eligible(const HloInstruction& instr) {
  return instr.opcode() != HloOpcode::kParameter && !instr.HasSideEffect() &&
         !instr.HasControlEdges();
}

}  // namespace

// Instructions are visited after their operands, so an operand is already the
// one representative of its class: operands compare (and hash) by identity.
absl::StatusOr<bool> HloCse::Run(HloModule& module) {
  const StructuralComputationEquality equal_computations;
  auto by_identity = [](const HloInstruction* a, const HloInstruction* b) { return a == b; };
  auto hash = [](const HloInstruction* i) {
    return HashInstruction(*i, [](const HloInstruction* op) { return absl::HashOf(op); });
  };
  auto equal = [&](const HloInstruction* a, const HloInstruction* b) {
    return IdenticalIgnoringCommutativeOperandOrder(*a, *b, by_identity, equal_computations);
  };
  bool changed = false;
  for (const auto& computation : module.computations()) {
    absl::flat_hash_set<HloInstruction*, decltype(hash), decltype(equal)> seen(0, hash, equal);
    std::vector<HloInstruction*> duplicates;
    for (HloInstruction* instr : computation->MakeInstructionPostOrder()) {
      if (!Eligible(*instr)) continue;
      auto [it, inserted] = seen.insert(instr);
      if (inserted) continue;
      instr->ReplaceAllUsesWith(*it);
      // A merged fusion's body is no one's now (dce removes it).
      for (HloComputation* called : instr->called_computations()) {
        if (called != nullptr && called->fusion_instruction() == instr) {
          called->set_fusion_instruction(nullptr);
        }
      }
      duplicates.push_back(instr);
    }
    computation->RemoveInstructions(duplicates);
    changed |= !duplicates.empty();
  }
  return changed;
}

}  // namespace xlite
