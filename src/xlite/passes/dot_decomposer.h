// dot-decomposer (XLA's DotDecomposer, in the form the CPU runtime's matmul
// takes): every dot becomes a canonical dot
//   lhs [B, M, K] · rhs [B, K, N] -> [B, M, N]
// (lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2},
// rhs_contracting_dims={1}), or [M, K] · [K, N] -> [M, N] when the dot has no
// batch dimensions; an operand may also be in the other order, lhs [B, K, M]
// (lhs_contracting_dims={1}) or rhs [B, N, K] (rhs_contracting_dims={2}),
// which the matmul reads transposed. Each operand is transposed to (batch,
// free, contracting) order for the lhs and (batch, contracting, free) for the
// rhs -- batch and contracting dimensions in dimension-number order, free
// dimensions in ascending order -- unless it needs a transpose for that order
// and none for the other, and reshaped so that each group is one dimension
// (size 1 when empty: a vector operand, an outer product). The result is reshaped
// back to the dot's shape, whose row-major order is the same. Element types,
// operand_precision and the algorithm are kept. Transposes and reshapes that
// would do nothing are not added; a dot already canonical is left alone.
//
// Skipped: sparse dots, dots with dynamic dimensions, dots in fusion bodies.
// The replaced dot is deleted; the new instructions take its place in the
// instruction order (a scheduled module stays scheduled). Precondition: a
// verified module.
#ifndef XLITE_PASSES_DOT_DECOMPOSER_H_
#define XLITE_PASSES_DOT_DECOMPOSER_H_

#include "xlite/passes/pass.h"

namespace xlite {

class DotDecomposer : public HloPass {
 public:
  absl::string_view name() const override { return "dot-decomposer"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

// True if `dot` is in the canonical form above.
bool IsCanonicalDot(const HloInstruction& dot);

// A canonical dot's sizes, and which operands are in the other order
// (lhs [B, K, M], rhs [B, N, K]); batch is 1 without batch dimensions.
struct CanonicalDotDims {
  int64_t batch = 1, m = 0, k = 0, n = 0;
  bool lhs_transposed = false, rhs_transposed = false;
};
// Precondition: IsCanonicalDot(dot).
CanonicalDotDims DimsOfCanonicalDot(const HloInstruction& dot);

}  // namespace xlite

#endif  // XLITE_PASSES_DOT_DECOMPOSER_H_
