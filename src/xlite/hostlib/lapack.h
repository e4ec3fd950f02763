// Host linear-algebra kernels with the semantics of jaxlib's CPU custom calls
// (jaxlib/cpu/lapack_kernels.cc), on the system LAPACK. Plain pointers and
// dimensions, no HLO types: the reference interpreter and the CPU backend
// both call these.
//
// Memory conventions (the ones jaxlib's kernels assume):
// - Matrices are column-major with a leading dimension equal to their row
//   count; `batch` matrices of one shape follow one another.
// - Per-matrix vectors (tau, pivots, eigenvalues...) follow one another too,
//   one vector per batch element; `info` holds one int32 per batch element.
// - Pivots and permutation indices are 1-based, as LAPACK writes them.
//
// T is float, double, std::complex<float> or std::complex<double>. Every
// function validates its dimensions and flags first (LAPACK itself would stop
// the process on an illegal argument) and returns InvalidArgument naming the
// broken rule; dimensions must fit LAPACK's 32-bit integers.
#ifndef XLITE_HOSTLIB_LAPACK_H_
#define XLITE_HOSTLIB_LAPACK_H_

#include <complex>
#include <cstdint>
#include <type_traits>

#include "absl/status/status.h"

namespace xlite::hostlib {

template <typename T>
struct RealTypeOf {
  using type = T;
};
template <typename T>
struct RealTypeOf<std::complex<T>> {
  using type = T;
};
// float for float and complex<float>; double for double and complex<double>.
template <typename T>
using RealOf = typename RealTypeOf<T>::type;
template <typename T>
inline constexpr bool kIsComplex = !std::is_same_v<T, RealOf<T>>;

// jaxlib's attribute enums; the values are LAPACK's flag characters.
enum class Side : char { kLeft = 'L', kRight = 'R' };
enum class UpLo : char { kLower = 'L', kUpper = 'U' };
enum class Transpose : char { kNoTrans = 'N', kTrans = 'T', kConjTrans = 'C' };
enum class Diag : char { kNonUnit = 'N', kUnit = 'U' };
// gesdd/gesvd: all of U and Vᵀ, their min(m,n) leading vectors, (overwrite
// A: unsupported, as in jaxlib), or none.
enum class SvdMode : char { kFull = 'A', kMin = 'S', kOverwrite = 'O', kNone = 'N' };
enum class EigMode : char { kNoVectors = 'N', kVectors = 'V' };
enum class SchurMode : char { kNoVectors = 'N', kVectors = 'V' };
enum class SchurSort : char { kNoSort = 'N', kSort = 'S' };

// ?trsm: solves op(A)·X = alpha·B (left) or X·op(A) = alpha·B (right) in place
// of B (m×n). A is m×m (left) or n×n (right).
template <typename T>
absl::Status Trsm(Side side, UpLo uplo, Transpose trans, Diag diag, T alpha, int64_t batch,
                  int64_t m, int64_t n, const T* a, T* b);

// ?getrf: LU with partial pivoting in place of A (m×n); ipiv gets min(m,n)
// 1-based row swaps; info > 0 marks an exactly zero U(info,info).
template <typename T>
absl::Status Getrf(int64_t batch, int64_t m, int64_t n, T* a, int32_t* ipiv, int32_t* info);

// ?geqrf: Householder QR in place of A (m×n); tau gets min(m,n) scalars.
template <typename T>
absl::Status Geqrf(int64_t batch, int64_t m, int64_t n, T* a, T* tau);

// ?geqp3: QR with column pivoting. jpvt (n per matrix, 1-based) is read (a
// nonzero entry pins that column to the front) and overwritten with A's
// permutation; tau gets min(m,n) scalars.
template <typename T>
absl::Status Geqp3(int64_t batch, int64_t m, int64_t n, T* a, int32_t* jpvt, T* tau);

// ?orgqr/?ungqr: the m×n matrix Q with orthonormal columns from the first k
// reflectors stored in A (m×n, m ≥ n ≥ k) and tau (k per matrix).
template <typename T>
absl::Status Orgqr(int64_t batch, int64_t m, int64_t n, int64_t k, T* a, const T* tau);

// ?ormqr/?unmqr: C (m×n) := op(Q)·C (left) or C·op(Q) (right), Q given by k
// reflectors in A (a_rows×a_cols) and tau (k per matrix); op is Qᵀ/Qᴴ when
// `transpose`.
template <typename T>
absl::Status Ormqr(bool left, bool transpose, int64_t batch, int64_t m, int64_t n, int64_t k,
                   const T* a, int64_t a_rows, int64_t a_cols, const T* tau, T* c);

// ?potrf: Cholesky in place of the `uplo` triangle of A (n×n); info > 0: the
// leading minor of that order is not positive definite.
template <typename T>
absl::Status Potrf(UpLo uplo, int64_t batch, int64_t n, T* a, int32_t* info);

// ?gesdd (divide and conquer) and ?gesvd (QR iteration): A (m×n) = U·Σ·Vᵀ.
// A is overwritten; s gets min(m,n) singular values; U is u_rows×u_cols and
// Vᵀ is vt_rows×vt_cols: m×m and n×n (kFull), m×k and k×n (kMin, k =
// min(m,n)), any shape (kNone: not written). kOverwrite is unsupported.
template <typename T>
absl::Status Gesdd(SvdMode mode, int64_t batch, int64_t m, int64_t n, T* a, RealOf<T>* s, T* u,
                   int64_t u_rows, int64_t u_cols, T* vt, int64_t vt_rows, int64_t vt_cols,
                   int32_t* info);
template <typename T>
absl::Status Gesvd(SvdMode mode, int64_t batch, int64_t m, int64_t n, T* a, RealOf<T>* s, T* u,
                   int64_t u_rows, int64_t u_cols, T* vt, int64_t vt_rows, int64_t vt_cols,
                   int32_t* info);

// ?syevd/?heevd: eigenvalues w (n, ascending) of the symmetric/Hermitian A
// (n×n, `uplo` triangle read); with kVectors A is overwritten by the
// orthonormal eigenvectors (columns). Workspace sizes are jaxlib's.
template <typename T>
absl::Status Syevd(EigMode mode, UpLo uplo, int64_t batch, int64_t n, T* a, RealOf<T>* w,
                   int32_t* info);

// ?geev for real A (n×n, not modified): eigenvalues wr + i·wi; left/right
// eigenvectors unpacked to complex columns (LAPACK stores a conjugate pair as
// two real columns). As jaxlib: a matrix with a NaN or infinity gets
// info = -4 and no call; vectors are unpacked only when info = 0.
template <typename T>
absl::Status GeevReal(EigMode left, EigMode right, int64_t batch, int64_t n, const T* a, T* wr,
                      T* wi, std::complex<T>* vl, std::complex<T>* vr, int32_t* info);
// ?geev for complex A; same NaN rule.
template <typename T>
absl::Status GeevComplex(EigMode left, EigMode right, int64_t batch, int64_t n, const T* a, T* w,
                         T* vl, T* vr, int32_t* info);

// ?gees: Schur form T in place of A (n×n), Schur vectors vs (n×n, written
// with kVectors), eigenvalues; sdim gets 0 (sorting is unsupported, as in
// jaxlib).
template <typename T>
absl::Status GeesReal(SchurMode mode, SchurSort sort, int64_t batch, int64_t n, T* a, T* vs, T* wr,
                      T* wi, int32_t* sdim, int32_t* info);
template <typename T>
absl::Status GeesComplex(SchurMode mode, SchurSort sort, int64_t batch, int64_t n, T* a, T* vs,
                         T* w, int32_t* sdim, int32_t* info);

// ?gehrd: upper Hessenberg form in place of A (n×n) with reflectors below
// the subdiagonal, tau (n-1 per matrix); rows/columns outside [low, high]
// (1-based) are assumed already reduced.
template <typename T>
absl::Status Gehrd(int64_t batch, int64_t n, int32_t low, int32_t high, T* a, T* tau,
                   int32_t* info);

// ?sytrd/?hetrd: tridiagonal form of the symmetric/Hermitian A (n×n) in
// place, diagonal d (n), off-diagonal e (n-1), tau (n-1).
template <typename T>
absl::Status Sytrd(UpLo uplo, int64_t batch, int64_t n, T* a, RealOf<T>* d, RealOf<T>* e, T* tau,
                   int32_t* info);

// ?gtsv: solves the tridiagonal system in place of B (n×nrhs). dl, d, du hold
// n entries each per matrix, as jax.lax.linalg.tridiagonal_solve takes them
// (dl[0] and du[n-1] unused); they are overwritten by the factorization.
template <typename T>
absl::Status Gtsv(int64_t batch, int64_t n, int64_t nrhs, T* dl, T* d, T* du, T* b, int32_t* info);

}  // namespace xlite::hostlib

#endif  // XLITE_HOSTLIB_LAPACK_H_
