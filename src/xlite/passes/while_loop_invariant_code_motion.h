// while-loop-invariant-code-motion (XLA's WhileLoopInvariantCodeMotion, the
// part that pays): work in a loop body that reads only loop-invariant values
// -- tuple elements the body passes through unchanged, constants -- is
// computed once before the loop and enters it as a new loop-state element.
//
// Hoisted: a reduce, reduce-window, dot, convolution or sort that is
// invariant, with the invariant instructions it is computed from (cheap ops
// alone are left in place: hoisting them would only add loop state). Only
// loops whose init is a tuple instruction, whose body root is a tuple and
// whose body and condition read their parameter through get-tuple-element;
// nothing with side effects or control edges, no fusions (their bodies have
// one caller), no scheduled modules. The while's users see its old
// shape (get-tuple-elements keep their indices; others read a tuple of the
// old elements). What the body no longer uses is left for dce.
#ifndef XLITE_PASSES_WHILE_LOOP_INVARIANT_CODE_MOTION_H_
#define XLITE_PASSES_WHILE_LOOP_INVARIANT_CODE_MOTION_H_

#include "xlite/passes/pass.h"

namespace xlite {

class WhileLoopInvariantCodeMotion : public HloPass {
 public:
  absl::string_view name() const override { return "while-loop-invariant-code-motion"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace xlite

#endif  // XLITE_PASSES_WHILE_LOOP_INVARIANT_CODE_MOTION_H_
