// Placeholder until this family is written: every opcode is "not handled".
#include "xlite/eval/evaluator.h"

namespace xlite::eval {

absl::StatusOr<Literal> EvalControl(const HloInstruction& instr, absl::Span<const Literal* const> operands,
                                 EvalContext& context) {
  return absl::NotFoundError("not handled");
}

}  // namespace xlite::eval
