// transpose-folding (XLA's pass of that name, for dots, plus the result side):
//  - dot(transpose(x), y) reads x itself, its batch and contracting dimension
//    numbers mapped through the permutation, where the free dimensions keep
//    their order (so the result is the same); likewise for the rhs;
//  - transpose(dot(a, b)) whose permutation puts the rhs's free dimensions
//    before the lhs's, (batch, rhs free, lhs free), is dot(b, a) -- the
//    transposed product computed directly -- when the transpose is the dot's
//    only user.
// dot-decomposer then picks, per operand, the canonical order that needs no
// transpose (the matmul reads an operand transposed in place). Operand
// precisions follow their operands; the algorithm is kept. Not for scheduled
// modules.
#ifndef XLITE_PASSES_TRANSPOSE_FOLDING_H_
#define XLITE_PASSES_TRANSPOSE_FOLDING_H_

#include "xlite/passes/pass.h"

namespace xlite {

class TransposeFolding : public HloPass {
 public:
  absl::string_view name() const override { return "transpose-folding"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace xlite

#endif  // XLITE_PASSES_TRANSPOSE_FOLDING_H_
