// call-inliner (XLA's CallInliner): replaces every call instruction by a copy
// of its callee's body in the caller. Callee parameters map to the call's
// operands; every other callee instruction is cloned with the mapped
// operands, the same shape, attributes and called computations, and a name
// unique in the module. Uses of the call move to the cloned root and the
// call is removed. Repeats until no call remains, so nested calls (and calls
// inside inlined bodies) are inlined too. Callees left unused stay for dce.
// Control dependencies: edges between callee instructions are cloned; each
// control predecessor of the call precedes every clone, and every clone
// precedes each control successor of the call (when the body has no clones,
// the call's predecessors precede its successors directly).
// Not inlined: a call whose callee runs on another execution thread than the
// caller, and (cycle guard) a call whose callee is the caller itself.
// Limitation: in a scheduled module (is_scheduled=true) the clones are
// appended after the caller's existing instructions, so the caller's
// instruction order is no longer a valid schedule; run before scheduling.
// Precondition: none beyond a well-formed module.
#ifndef XLITE_PASSES_CALL_INLINER_H_
#define XLITE_PASSES_CALL_INLINER_H_

#include "xlite/passes/pass.h"

namespace xlite {

class CallInliner : public HloPass {
 public:
  absl::string_view name() const override { return "call-inliner"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace xlite

#endif  // XLITE_PASSES_CALL_INLINER_H_
