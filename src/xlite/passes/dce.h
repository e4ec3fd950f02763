// dce: removes instructions whose values nothing uses and that have no side
// effect (HloInstruction::HasSideEffect), and computations nothing calls.
// Parameters and roots stay. Precondition: none; the module need not verify.
#ifndef XLITE_PASSES_DCE_H_
#define XLITE_PASSES_DCE_H_

#include "xlite/passes/pass.h"

namespace xlite {

class HloDce : public HloPass {
 public:
  absl::string_view name() const override { return "dce"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace xlite

#endif  // XLITE_PASSES_DCE_H_
