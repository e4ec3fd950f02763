#include "xlite/hostlib/linalg_ops.h"

#include <cmath>
#include <complex>
#include <cstring>
#include <vector>

#include "xlite/hostlib/lapack.h"
#include "xlite/support/status.h"

namespace xlite::hostlib {
namespace {

template <typename T>
RealOf<T> RealPart(T v) {
  return std::real(v);
}

template <typename T>
T Conj(T v) {
  if constexpr (kIsComplex<T>) {
    return std::conj(v);
  } else {
    return v;
  }
}

// The interpreter's algorithm for one row-major matrix whose lower triangle
// (i >= j) `entry(i, j)` gives: l column by column, NaN spreading from a
// non-positive pivot.
template <typename T, typename Entry>
void CholeskyColumns(int64_t n, Entry entry, T* l) {
  for (int64_t j = 0; j < n; ++j) {
    RealOf<T> diagonal = RealPart(entry(j, j));
    for (int64_t k = 0; k < j; ++k) diagonal -= std::norm(l[j * n + k]);
    const RealOf<T> pivot = std::sqrt(diagonal);
    l[j * n + j] = pivot;
    for (int64_t i = j + 1; i < n; ++i) {
      T v = entry(i, j);
      for (int64_t k = 0; k < j; ++k) v -= l[i * n + k] * Conj(l[j * n + k]);
      l[i * n + j] = v / pivot;
    }
  }
}

template <typename T>
absl::Status CholeskyTyped(bool lower, int64_t batch, int64_t n, const T* a, T* out) {
  const int64_t size = n * n;
  // A matrix that is not positive definite is redone from its input, which
  // potrf overwrites when it works in place.
  std::vector<T> saved;
  if (a == out) saved.assign(a, a + batch * size);
  const T* input = a == out ? saved.data() : a;
  if (a != out) std::memmove(out, a, batch * size * sizeof(T));
  // A row-major matrix is its transpose in column-major terms, so potrf on
  // the other triangle computes lᵀ = (the column-major upper factor) in
  // place: read row-major, it is the factor asked for, no conjugation.
  std::vector<int32_t> info(batch);
  RETURN_IF_ERROR(Potrf<T>(lower ? UpLo::kUpper : UpLo::kLower, batch, n, out, info.data()));
  for (int64_t b = 0; b < batch; ++b) {
    T* m = out + b * size;
    if (info[b] != 0) {
      // Not positive definite: the interpreter's column-by-column result.
      const T* in = input + b * size;
      std::vector<T> l(size, T(0));
      CholeskyColumns<T>(
          n, [&](int64_t i, int64_t j) { return lower ? in[i * n + j] : Conj(in[j * n + i]); },
          l.data());
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j <= i; ++j) {
          if (lower) {
            m[i * n + j] = l[i * n + j];
          } else {
            m[j * n + i] = Conj(l[i * n + j]);
          }
        }
      }
    }
    // Zeros in the other triangle.
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        if (lower ? j > i : j < i) m[i * n + j] = T(0);
      }
    }
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status TriangularSolveTyped(bool left_side, bool lower, bool unit_diagonal,
                                  TriangularTranspose transpose_a, int64_t batch, int64_t m,
                                  int64_t n, const T* a, const T* b, T* x) {
  if (b != x) std::memmove(x, b, batch * m * n * sizeof(T));
  // Row-major a, b, x are aᵀ, bᵀ, xᵀ column-major: op(a)·x = b becomes
  // xᵀ·op(a)ᵀ = bᵀ, so trsm runs on the other side and triangle with the
  // same op (op(a)ᵀ = op(aᵀ) for N, T and C alike).
  const Side side = left_side ? Side::kRight : Side::kLeft;
  const UpLo uplo = lower ? UpLo::kUpper : UpLo::kLower;
  const Transpose trans = transpose_a == TriangularTranspose::kNoTranspose ? Transpose::kNoTrans
                          : transpose_a == TriangularTranspose::kTranspose ? Transpose::kTrans
                                                                           : Transpose::kConjTrans;
  const Diag diag = unit_diagonal ? Diag::kUnit : Diag::kNonUnit;
  return Trsm<T>(side, uplo, trans, diag, T(1), batch, /*m=*/n, /*n=*/m, a, x);
}

}  // namespace

absl::Status Cholesky(ElementType type, bool lower, int64_t batch, int64_t n, const void* a,
                      void* out) {
  if (batch < 0 || n < 0) return InvalidArgument("cholesky: negative dimension");
  switch (type) {
    case ElementType::kF32:
      return CholeskyTyped(lower, batch, n, static_cast<const float*>(a), static_cast<float*>(out));
    case ElementType::kF64:
      return CholeskyTyped(lower, batch, n, static_cast<const double*>(a),
                           static_cast<double*>(out));
    case ElementType::kC64:
      return CholeskyTyped(lower, batch, n, static_cast<const std::complex<float>*>(a),
                           static_cast<std::complex<float>*>(out));
    case ElementType::kC128:
      return CholeskyTyped(lower, batch, n, static_cast<const std::complex<double>*>(a),
                           static_cast<std::complex<double>*>(out));
    default:
      return Unimplemented("cholesky of ", ElementTypeName(type),
                           " (LAPACK takes f32, f64, c64, c128)");
  }
}

absl::Status TriangularSolve(ElementType type, bool left_side, bool lower, bool unit_diagonal,
                             TriangularTranspose transpose_a, int64_t batch, int64_t m, int64_t n,
                             const void* a, const void* b, void* x) {
  if (batch < 0 || m < 0 || n < 0) return InvalidArgument("triangular-solve: negative dimension");
  switch (type) {
    case ElementType::kF32:
      return TriangularSolveTyped(left_side, lower, unit_diagonal, transpose_a, batch, m, n,
                                  static_cast<const float*>(a), static_cast<const float*>(b),
                                  static_cast<float*>(x));
    case ElementType::kF64:
      return TriangularSolveTyped(left_side, lower, unit_diagonal, transpose_a, batch, m, n,
                                  static_cast<const double*>(a), static_cast<const double*>(b),
                                  static_cast<double*>(x));
    case ElementType::kC64:
      return TriangularSolveTyped(left_side, lower, unit_diagonal, transpose_a, batch, m, n,
                                  static_cast<const std::complex<float>*>(a),
                                  static_cast<const std::complex<float>*>(b),
                                  static_cast<std::complex<float>*>(x));
    case ElementType::kC128:
      return TriangularSolveTyped(left_side, lower, unit_diagonal, transpose_a, batch, m, n,
                                  static_cast<const std::complex<double>*>(a),
                                  static_cast<const std::complex<double>*>(b),
                                  static_cast<std::complex<double>*>(x));
    default:
      return Unimplemented("triangular-solve of ", ElementTypeName(type),
                           " (BLAS takes f32, f64, c64, c128)");
  }
}

}  // namespace xlite::hostlib
