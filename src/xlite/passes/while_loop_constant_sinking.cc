#include "xlite/passes/while_loop_constant_sinking.h"

#include <vector>

#include "xlite/ir/module.h"
#include "xlite/ir/name_uniquer.h"
#include "xlite/passes/while_loop_state.h"

namespace xlite {
namespace {

// What sinking `value` needs: it is computed from nothing, and each kind of
// instruction in it is allowed.
bool MaySink(const HloInstruction& value, const WhileLoopConstantSinking::Options& options) {
  if (!IsComputedFromNothing(value)) return false;
  bool iota = false, shaped = false;
  std::vector<const HloInstruction*> stack = {&value};
  while (!stack.empty()) {
    const HloInstruction* i = stack.back();
    stack.pop_back();
    iota = iota || i->opcode() == HloOpcode::kIota;
    shaped = shaped || i->opcode() != HloOpcode::kConstant;
    for (const HloInstruction* op : i->operands()) stack.push_back(op);
  }
  if (iota) return options.sink_iotas;
  return !shaped || options.sink_broadcast_of_constants;
}

}  // namespace

absl::StatusOr<bool> WhileLoopConstantSinking::Run(HloModule& module) {
  const auto callers = CountCallers(module);
  NameUniquer names = NameUniquer::ForInstructions(module);
  std::vector<HloInstruction*> loops;
  // Callers before callees: a constant sunk into an outer loop's body can
  // then sink into an inner loop in the same run.
  for (auto c = module.computations().rbegin(); c != module.computations().rend(); ++c) {
    if ((*c)->fusion_instruction() != nullptr) continue;
    for (const auto& i : (*c)->instructions()) {
      if (i->opcode() == HloOpcode::kWhile) loops.push_back(i.get());
    }
  }
  bool changed = false;
  for (HloInstruction* loop : loops) {
    if (!HasElementwiseState(*loop, callers)) continue;
    const HloInstruction* init = loop->operand(0);
    if (init->opcode() != HloOpcode::kTuple) continue;
    for (int64_t i = 0; i < init->operand_count(); ++i) {
      if (!IsInvariantElement(*loop, i) || !MaySink(*init->operand(i), options_)) continue;
      changed |= !SinkInvariantElement(*loop, i, *init->operand(i), names).empty();
    }
  }
  return changed;
}

}  // namespace xlite
