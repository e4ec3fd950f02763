// while-loop-simplifier (XLA's WhileLoopSimplifier, the part that removes
// dead loop state): a loop-state element that the condition does not read,
// that the body reads only to hand on unchanged (or not at all) and that no
// user of the loop reads is removed from the loop -- from its init, the
// body's root and both parameters -- with what only it needed. Loops of
// while_loop_state.h's form whose users are all get-tuple-elements.
#ifndef XLITE_PASSES_WHILE_LOOP_SIMPLIFIER_H_
#define XLITE_PASSES_WHILE_LOOP_SIMPLIFIER_H_

#include "xlite/passes/pass.h"

namespace xlite {

class WhileLoopSimplifier : public HloPass {
 public:
  absl::string_view name() const override { return "while-loop-simplifier"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace xlite

#endif  // XLITE_PASSES_WHILE_LOOP_SIMPLIFIER_H_
