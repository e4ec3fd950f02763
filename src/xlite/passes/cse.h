// cse: common-subexpression elimination with XLA's HloCSE semantics. Within
// each computation, an instruction Identical (ir/identical.h) to an earlier
// one -- same opcode, shape, operands and semantic attributes; constants by
// value; operands of commutative ops in either order; called computations
// structurally equal, so two loops over cloned bodies merge -- is replaced by
// it. Instructions with side effects, parameters and instructions with control
// edges are left alone. Leaves no dead instructions (the duplicate is
// removed); a merged call's computation is left for dce.
#ifndef XLITE_PASSES_CSE_H_
#define XLITE_PASSES_CSE_H_

#include "xlite/passes/pass.h"

namespace xlite {

class HloCse : public HloPass {
 public:
  absl::string_view name() const override { return "cse"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace xlite

#endif  // XLITE_PASSES_CSE_H_
