// flatten-call-graph (XLA's FlattenCallGraph): gives every computation called
// in a sequential context — call's callee, while's condition and body,
// conditional's branches — exactly one call site, by cloning the callee for
// each further site. Computations called only from parallel contexts (reduce,
// map, sort, scatter, ... to_apply) may stay shared, as in XLA; a computation
// called both ways is cloned for its sequential sites. A clone is named
// "<name>.clone" (".clone.N" when taken), its instructions "<name>.clone",
// and it sits right after its original; fused computations inside a clone
// are cloned too (a fusion body belongs to one fusion instruction). Only
// computations reachable from the entry are considered.
// Afterwards a later pass may rewrite a loop body or branch without
// affecting another site. Precondition: a well-formed module without
// recursion.
#ifndef XLITE_PASSES_FLATTEN_CALL_GRAPH_H_
#define XLITE_PASSES_FLATTEN_CALL_GRAPH_H_

#include "xlite/passes/pass.h"

namespace xlite {

class FlattenCallGraph : public HloPass {
 public:
  absl::string_view name() const override { return "flatten-call-graph"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace xlite

#endif  // XLITE_PASSES_FLATTEN_CALL_GRAPH_H_
