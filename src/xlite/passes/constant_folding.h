// constant-folding (XLA's HloConstantFolding): replaces an instruction whose
// operands are all constants by a constant holding its value, computed by
// the reference evaluator. Folds in every computation, operands first, so
// chains of constant expressions fold in one run.
//
// Not folded, as in XLA:
//   - broadcast and iota (their constants would be large; an instruction
//     reading a broadcast or iota of constants still folds);
//   - constants, parameters, instructions without operands, tuples and
//     tokens (array results only), dynamic shapes;
//   - anything whose value depends on the device or has an effect: side
//     effects, collectives, replica-id/partition-id, rng, custom-call, and
//     instructions calling computations that contain one;
//   - instructions with control dependencies;
//   - results larger than the literals they come from, beyond 4096 elements
//     (a mask computed from iotas stays a computation, not a large constant);
//   - results over the size cap (default 1M elements) or whose evaluation
//     takes longer than the time cap (default 0.25 s) or fails: left alone.
// The new constant is named "<name>.folded" and keeps the shape (layout
// included), metadata and sharding; the old instruction is left for dce.
// Precondition: the module verifies.
#ifndef XLITE_PASSES_CONSTANT_FOLDING_H_
#define XLITE_PASSES_CONSTANT_FOLDING_H_

#include <cstdint>

#include "xlite/passes/pass.h"

namespace xlite {

class ConstantFolding : public HloPass {
 public:
  struct Options {
    int64_t max_result_elements = int64_t{1} << 20;
    // Results larger than the constants they are computed from (as when an
    // operand is a broadcast or iota) fold only up to this size.
    int64_t small_result_elements = 4096;
    double max_seconds = 0.25;
  };
  ConstantFolding() = default;
  explicit ConstantFolding(Options options) : options_(options) {}
  absl::string_view name() const override { return "constant-folding"; }
  absl::StatusOr<bool> Run(HloModule& module) override;

 private:
  Options options_;
};

}  // namespace xlite

#endif  // XLITE_PASSES_CONSTANT_FOLDING_H_
