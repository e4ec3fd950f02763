// The HLO ops cholesky and triangular-solve on LAPACK ?potrf and BLAS ?trsm,
// with XLA's semantics on row-major batches of matrices (the two minor
// dimensions; batches one after another). f32, f64, c64 and c128.
#ifndef XLITE_HOSTLIB_LINALG_OPS_H_
#define XLITE_HOSTLIB_LINALG_OPS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "xlite/hostlib/element_type.h"

namespace xlite::hostlib {

// cholesky(a), lower=`lower`: a = l·lᴴ (lower) or uᴴ·u (upper), reading only
// that triangle of a (the diagonal's imaginary parts ignored) and writing
// zeros to the other one, as the interpreter does. A matrix that is not
// positive definite gets what the interpreter's column-by-column algorithm
// gives: the factor's columns before the failing pivot, NaN from it on (no
// error: XLA's cholesky has no info output). `a` and `out` may be the same.
absl::Status Cholesky(ElementType type, bool lower, int64_t batch, int64_t n, const void* a,
                      void* out);

// triangular-solve(a, b): op(a)·x = b (left_side) or x·op(a) = b, a [n×n]
// with n = m (left) or n (right), b and x [m×n]. Only the `lower` (or upper)
// triangle of a is read; unit_diagonal takes its diagonal as ones; op is
// transpose_a: NO_TRANSPOSE, TRANSPOSE or ADJOINT. A zero pivot divides by
// zero (inf/NaN), as the interpreter does. `b` and `x` may be the same.
enum class TriangularTranspose { kNoTranspose, kTranspose, kAdjoint };
absl::Status TriangularSolve(ElementType type, bool left_side, bool lower, bool unit_diagonal,
                             TriangularTranspose transpose_a, int64_t batch, int64_t m, int64_t n,
                             const void* a, const void* b, void* x);

}  // namespace xlite::hostlib

#endif  // XLITE_HOSTLIB_LINALG_OPS_H_
