// cse: common-subexpression elimination with XLA's HloCSE semantics. Within
// each computation, an instruction equal to an earlier one (same opcode,
// shape, operands, attributes and called computations; constants by value;
// operands of commutative ops in either order) is replaced by it. Instructions
// with side effects, parameters and instructions with control edges are left
// alone. Leaves no dead code (the duplicate is removed).
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
