// zero-sized-hlo-elimination (XLA's ZeroSizedHloElimination): replaces every
// instruction whose value is a static array with zero elements by a constant
// of the same shape (an empty literal; the default layout if it had none).
// Skipped: parameters, constants, instructions with side effects or control
// dependencies, and every computation called by a fusion or async op (those
// are rewritten only together with their caller). The replaced instructions
// are left dead for dce. Precondition: none.
#ifndef XLITE_PASSES_ZERO_SIZED_HLO_ELIMINATION_H_
#define XLITE_PASSES_ZERO_SIZED_HLO_ELIMINATION_H_

#include "xlite/passes/pass.h"

namespace xlite {

class ZeroSizedHloElimination : public HloPass {
 public:
  absl::string_view name() const override { return "zero-sized-hlo-elimination"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace xlite

#endif  // XLITE_PASSES_ZERO_SIZED_HLO_ELIMINATION_H_
