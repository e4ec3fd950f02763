#include "xlite/cpu/reshape_bitcast.h"

#include <memory>
#include <vector>

#include "xlite/ir/computation.h"
#include "xlite/passes/canonicalize_util.h"
#include "xlite/support/status.h"

namespace xlite::cpu {
namespace {

bool IsRowMajorArray(const Shape& shape) {
  return shape.IsArray() && shape.is_static() && shape.HasRowMajorLayout();
}

}  // namespace

absl::StatusOr<bool> ReshapeToBitcast::Run(HloModule& module) {
  canonicalize::InstructionAdder adder(module);
  bool changed = false;
  for (const auto& computation : module.computations()) {
    if (computation->fusion_instruction() != nullptr) continue;
    std::vector<HloInstruction*> reshapes;
    for (const auto& instr : computation->instructions()) {
      if (instr->opcode() != HloOpcode::kReshape || instr->operand_count() != 1 ||
          instr.get() == computation->root_instruction()) {
        continue;
      }
      const Shape& from = instr->operand(0)->shape();
      const Shape& to = instr->shape();
      if (from.element_type() == to.element_type() && IsRowMajorArray(from) &&
          IsRowMajorArray(to)) {
        reshapes.push_back(instr.get());
      }
    }
    for (HloInstruction* reshape : reshapes) {
      auto bitcast = std::make_unique<HloInstruction>(HloOpcode::kBitcast, "", reshape->shape());
      bitcast->AppendOperand(reshape->operand(0));
      ASSIGN_OR_RETURN(HloInstruction * added, adder.Add(*reshape, std::move(bitcast), "bitcast"));
      adder.Replace(reshape, added);
      changed = true;
    }
  }
  return changed;
}

}  // namespace xlite::cpu
