// tuple-simplifier (XLA's TupleSimplifier): folds tuple/get-tuple-element
// pairs that cancel out.
//   get-tuple-element(tuple(a0, ..., an), i)  ->  ai
//   tuple(gte(t, 0), ..., gte(t, n-1))        ->  t
// where t has exactly n elements and the tuple's shape (layouts included).
// Replacements only redirect uses; the folded instructions are left dead for
// dce. A folded instruction's sharding must match its replacement's.
// Precondition: none beyond a well-formed module (verify_each_pass is fine).
#ifndef XLITE_PASSES_TUPLE_SIMPLIFIER_H_
#define XLITE_PASSES_TUPLE_SIMPLIFIER_H_

#include "xlite/passes/pass.h"

namespace xlite {

class TupleSimplifier : public HloPass {
 public:
  absl::string_view name() const override { return "tuple-simplifier"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace xlite

#endif  // XLITE_PASSES_TUPLE_SIMPLIFIER_H_
