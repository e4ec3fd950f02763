// while-loop-constant-sinking (XLA's WhileLoopConstantSinking): a loop-state
// element the body passes through unchanged whose initial value is a constant
// is read as that constant inside the loop -- in the body (but for handing it
// on) and in the condition -- so that constant folding and the simplifier see
// it. XLA's option sink_broadcast_of_constants also sinks broadcasts of
// constants; xlite's sink_iotas sinks iotas (and broadcasts, reshapes and
// converts of them), which rematerialization uses to stop carrying a value
// the loop can make again. The element itself stays (while-loop-simplifier
// drops it once nothing reads it). Needs while_loop_state.h's loop form: a
// tuple init, a tuple body root, body and condition called by this loop only.
#ifndef XLITE_PASSES_WHILE_LOOP_CONSTANT_SINKING_H_
#define XLITE_PASSES_WHILE_LOOP_CONSTANT_SINKING_H_

#include "xlite/passes/pass.h"

namespace xlite {

class WhileLoopConstantSinking : public HloPass {
 public:
  struct Options {
    bool sink_broadcast_of_constants = false;  // XLA's default
    bool sink_iotas = false;
  };
  WhileLoopConstantSinking() = default;
  explicit WhileLoopConstantSinking(Options options) : options_(options) {}

  absl::string_view name() const override { return "while-loop-constant-sinking"; }
  absl::StatusOr<bool> Run(HloModule& module) override;

 private:
  Options options_;
};

}  // namespace xlite

#endif  // XLITE_PASSES_WHILE_LOOP_CONSTANT_SINKING_H_
