#include "xlite/passes/while_loop_simplifier.h"

#include <vector>

#include "xlite/ir/module.h"
#include "xlite/ir/name_uniquer.h"
#include "xlite/passes/while_loop_state.h"

namespace xlite {

absl::StatusOr<bool> WhileLoopSimplifier::Run(HloModule& module) {
  const auto callers = CountCallers(module);
  NameUniquer names = NameUniquer::ForInstructions(module);
  std::vector<HloInstruction*> loops;
  for (const auto& c : module.computations()) {
    if (c->fusion_instruction() != nullptr) continue;
    for (const auto& i : c->instructions()) {
      if (i->opcode() == HloOpcode::kWhile) loops.push_back(i.get());
    }
  }
  bool changed = false;
  for (HloInstruction* loop : loops) {
    if (HasElementwiseState(*loop, callers)) changed |= RemoveDeadElements(*loop, names) > 0;
  }
  return changed;
}

}  // namespace xlite
