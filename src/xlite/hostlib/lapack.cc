#include "xlite/hostlib/lapack.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "xlite/hostlib/lapack_fortran.h"
#include "xlite/support/status.h"

namespace xlite::hostlib {
namespace {

using fortran::Pick;

// A dimension as LAPACK's 32-bit integer.
absl::StatusOr<int> Dim(int64_t value, absl::string_view what) {
  if (value < 0 || value > std::numeric_limits<int>::max()) {
    return InvalidArgument(what, " = ", value, " is outside LAPACK's 32-bit integer range");
  }
  return static_cast<int>(value);
}

absl::Status CheckBatch(int64_t batch) {
  if (batch < 0) return InvalidArgument("negative batch count ", batch);
  return absl::OkStatus();
}

// The size a workspace query (lwork = -1) returned, at least 1.
template <typename T>
absl::StatusOr<int> QueriedSize(const T& answer, int info, absl::string_view routine) {
  if (info != 0) return Internal(routine, " workspace query failed with info = ", info);
  const double size = std::ceil(static_cast<double>(std::real(answer)));
  if (!(size <= std::numeric_limits<int>::max())) {
    return InvalidArgument(routine, " needs a workspace of ", size,
                           " elements, beyond LAPACK's 32-bit integers");
  }
  return std::max(1, static_cast<int>(size));
}

// A workspace size computed from a formula, checked against LAPACK's range.
absl::StatusOr<int> FormulaSize(int64_t size, absl::string_view what) {
  return Dim(std::max<int64_t>(1, size), what);
}

// LAPACK's workspace protocol: `call(work, lwork, info)` once with lwork = -1
// asks for the size; returns a workspace of that size.
template <typename T, typename Call>
absl::StatusOr<std::vector<T>> QueryWorkspace(absl::string_view routine, Call call) {
  T query{};
  int info = 0, lwork = -1;
  call(&query, &lwork, &info);
  ASSIGN_OR_RETURN(lwork, QueriedSize(query, info, routine));
  return std::vector<T>(lwork);
}

// Runs `call(i, work, lwork, info)` on each batch element i with one
// workspace, sized by a query on element 0; `info` (unless null) gets each
// element's result.
template <typename T, typename Call>
absl::Status RunBatched(absl::string_view routine, int64_t batch, int32_t* info, Call call) {
  if (batch == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::vector<T> work,
                   QueryWorkspace<T>(routine, [&](T* w, int* lw, int* r) { call(0, w, lw, r); }));
  int lwork = static_cast<int>(work.size());
  for (int64_t i = 0; i < batch; ++i) {
    int result = 0;
    call(i, work.data(), &lwork, &result);
    if (info != nullptr) info[i] = result;
  }
  return absl::OkStatus();
}

void ZeroInfo(int64_t batch, int32_t* info) {
  if (info != nullptr) std::fill(info, info + batch, 0);
}

constexpr fortran::len_t kOne = 1;  // hidden length of a CHARACTER*1 argument

template <typename T>
bool AllFinite(const T* data, int64_t size) {
  for (int64_t i = 0; i < size; ++i) {
    if constexpr (kIsComplex<T>) {
      if (!std::isfinite(data[i].real()) || !std::isfinite(data[i].imag())) return false;
    } else {
      if (!std::isfinite(data[i])) return false;
    }
  }
  return true;
}

// Real ?geev stores the eigenvector pair of a complex-conjugate eigenvalue
// pair (wi[j] > 0) as two real columns v_j, v_{j+1}: the vectors are
// v_j ± i·v_{j+1}. Writes all n vectors as complex columns.
template <typename T>
void UnpackEigenvectors(int n, const T* wi, const T* packed, std::complex<T>* out) {
  for (int j = 0; j < n; ++j) {
    const T* col = packed + static_cast<int64_t>(j) * n;
    std::complex<T>* dst = out + static_cast<int64_t>(j) * n;
    if (wi[j] == T(0) || j + 1 == n) {
      for (int i = 0; i < n; ++i) dst[i] = std::complex<T>(col[i], T(0));
      continue;
    }
    const T* next = col + n;
    std::complex<T>* dst_next = dst + n;
    for (int i = 0; i < n; ++i) {
      dst[i] = std::complex<T>(col[i], next[i]);
      dst_next[i] = std::complex<T>(col[i], -next[i]);
    }
    ++j;
  }
}

template <typename T>
absl::Status CheckSvdShapes(SvdMode mode, int64_t m, int64_t n, int64_t u_rows, int64_t u_cols,
                            int64_t vt_rows, int64_t vt_cols) {
  const int64_t k = std::min(m, n);
  switch (mode) {
    case SvdMode::kFull:
      if (u_rows == m && u_cols == m && vt_rows == n && vt_cols == n) return absl::OkStatus();
      return InvalidArgument("SVD mode 'A' of a ", m, "x", n, " matrix needs U ", m, "x", m,
                             " and Vt ", n, "x", n, ", got ", u_rows, "x", u_cols, " and ", vt_rows,
                             "x", vt_cols);
    case SvdMode::kMin:
      if (u_rows == m && u_cols == k && vt_rows == k && vt_cols == n) return absl::OkStatus();
      return InvalidArgument("SVD mode 'S' of a ", m, "x", n, " matrix needs U ", m, "x", k,
                             " and Vt ", k, "x", n, ", got ", u_rows, "x", u_cols, " and ", vt_rows,
                             "x", vt_cols);
    case SvdMode::kNone:
      return absl::OkStatus();
    case SvdMode::kOverwrite:
      return Unimplemented("SVD mode 'O' (overwrite A with U) is not supported (nor by jaxlib)");
  }
  return InvalidArgument("unknown SVD mode ", static_cast<int>(mode));
}

template <typename T>
absl::Status CheckFlag(T flag, absl::string_view allowed, absl::string_view what) {
  const char c = static_cast<char>(flag);
  if (c == 0 || allowed.find(c) == absl::string_view::npos) {
    return InvalidArgument(what, " must be one of '", allowed, "', got ", static_cast<int>(c));
  }
  return absl::OkStatus();
}

}  // namespace

template <typename T>
absl::Status Trsm(Side side, UpLo uplo, Transpose trans, Diag diag, T alpha, int64_t batch,
                  int64_t m, int64_t n, const T* a, T* b) {
  RETURN_IF_ERROR(CheckBatch(batch));
  RETURN_IF_ERROR(CheckFlag(side, "LR", "side"));
  RETURN_IF_ERROR(CheckFlag(uplo, "LU", "uplo"));
  RETURN_IF_ERROR(CheckFlag(trans, "NTC", "trans_x"));
  RETURN_IF_ERROR(CheckFlag(diag, "NU", "diag"));
  ASSIGN_OR_RETURN(const int m32, Dim(m, "m"));
  ASSIGN_OR_RETURN(const int n32, Dim(n, "n"));
  if (m == 0 || n == 0) return absl::OkStatus();
  const int64_t k = side == Side::kLeft ? m : n;
  const int lda = static_cast<int>(k), ldb = m32;
  const char s = static_cast<char>(side), u = static_cast<char>(uplo), t = static_cast<char>(trans),
             d = static_cast<char>(diag);
  auto* fn = Pick<T>(fortran::strsm_, fortran::dtrsm_, fortran::ctrsm_, fortran::ztrsm_);
  for (int64_t i = 0; i < batch; ++i) {
    fn(&s, &u, &t, &d, &m32, &n32, &alpha, a + i * k * k, &lda, b + i * m * n, &ldb, kOne, kOne,
       kOne, kOne);
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status Getrf(int64_t batch, int64_t m, int64_t n, T* a, int32_t* ipiv, int32_t* info) {
  RETURN_IF_ERROR(CheckBatch(batch));
  ASSIGN_OR_RETURN(const int m32, Dim(m, "m"));
  ASSIGN_OR_RETURN(const int n32, Dim(n, "n"));
  ZeroInfo(batch, info);
  if (m == 0 || n == 0) return absl::OkStatus();
  const int64_t k = std::min(m, n);
  auto* fn = Pick<T>(fortran::sgetrf_, fortran::dgetrf_, fortran::cgetrf_, fortran::zgetrf_);
  for (int64_t i = 0; i < batch; ++i) {
    int result = 0;
    fn(&m32, &n32, a + i * m * n, &m32, ipiv + i * k, &result);
    info[i] = result;
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status Geqrf(int64_t batch, int64_t m, int64_t n, T* a, T* tau) {
  RETURN_IF_ERROR(CheckBatch(batch));
  ASSIGN_OR_RETURN(const int m32, Dim(m, "m"));
  ASSIGN_OR_RETURN(const int n32, Dim(n, "n"));
  if (m == 0 || n == 0) return absl::OkStatus();
  auto* fn = Pick<T>(fortran::sgeqrf_, fortran::dgeqrf_, fortran::cgeqrf_, fortran::zgeqrf_);
  const int64_t k = std::min(m, n);
  return RunBatched<T>("geqrf", batch, nullptr, [&](int64_t i, T* work, int* lwork, int* info) {
    fn(&m32, &n32, a + i * m * n, &m32, tau + i * k, work, lwork, info);
  });
}

template <typename T>
absl::Status Geqp3(int64_t batch, int64_t m, int64_t n, T* a, int32_t* jpvt, T* tau) {
  RETURN_IF_ERROR(CheckBatch(batch));
  ASSIGN_OR_RETURN(const int m32, Dim(m, "m"));
  ASSIGN_OR_RETURN(const int n32, Dim(n, "n"));
  if (m == 0 || n == 0) return absl::OkStatus();
  auto* fn = Pick<T>(fortran::sgeqp3_, fortran::dgeqp3_, fortran::cgeqp3_, fortran::zgeqp3_);
  std::vector<RealOf<T>> rwork(kIsComplex<T> ? 2 * n : 0);
  const int64_t k = std::min(m, n);
  return RunBatched<T>("geqp3", batch, nullptr, [&](int64_t i, T* work, int* lwork, int* info) {
    T* matrix = a + i * m * n;
    int* pivots = jpvt + i * n;
    if constexpr (kIsComplex<T>) {
      fn(&m32, &n32, matrix, &m32, pivots, tau + i * k, work, lwork, rwork.data(), info);
    } else {
      fn(&m32, &n32, matrix, &m32, pivots, tau + i * k, work, lwork, info);
    }
  });
}

template <typename T>
absl::Status Orgqr(int64_t batch, int64_t m, int64_t n, int64_t k, T* a, const T* tau) {
  RETURN_IF_ERROR(CheckBatch(batch));
  ASSIGN_OR_RETURN(const int m32, Dim(m, "m"));
  ASSIGN_OR_RETURN(const int n32, Dim(n, "n"));
  ASSIGN_OR_RETURN(const int k32, Dim(k, "k"));
  if (!(m >= n && n >= k)) {
    return InvalidArgument("orgqr needs rows >= columns >= reflectors, got ", m, ", ", n, ", ", k);
  }
  if (n == 0) return absl::OkStatus();
  auto* fn = Pick<T>(fortran::sorgqr_, fortran::dorgqr_, fortran::cungqr_, fortran::zungqr_);
  return RunBatched<T>("orgqr", batch, nullptr, [&](int64_t i, T* work, int* lwork, int* info) {
    fn(&m32, &n32, &k32, a + i * m * n, &m32, tau + i * k, work, lwork, info);
  });
}

template <typename T>
absl::Status Ormqr(bool left, bool transpose, int64_t batch, int64_t m, int64_t n, int64_t k,
                   const T* a, int64_t a_rows, int64_t a_cols, const T* tau, T* c) {
  RETURN_IF_ERROR(CheckBatch(batch));
  ASSIGN_OR_RETURN(const int m32, Dim(m, "m"));
  ASSIGN_OR_RETURN(const int n32, Dim(n, "n"));
  ASSIGN_OR_RETURN(const int k32, Dim(k, "k"));
  const int64_t order = left ? m : n;  // Q is order×order
  if (a_rows != order || a_cols < k || k > order) {
    return InvalidArgument("ormqr: Q of order ", order, " from ", k, " reflectors needs A with ",
                           order, " rows and at least ", k, " columns, got ", a_rows, "x", a_cols);
  }
  if (m == 0 || n == 0) return absl::OkStatus();
  auto* fn = Pick<T>(fortran::sormqr_, fortran::dormqr_, fortran::cunmqr_, fortran::zunmqr_);
  const char side = left ? 'L' : 'R';
  const char trans = transpose ? (kIsComplex<T> ? 'C' : 'T') : 'N';
  const int lda = static_cast<int>(order);
  return RunBatched<T>("ormqr", batch, nullptr, [&](int64_t i, T* work, int* lwork, int* info) {
    fn(&side, &trans, &m32, &n32, &k32, a + i * a_rows * a_cols, &lda, tau + i * k, c + i * m * n,
       &m32, work, lwork, info, kOne, kOne);
  });
}

template <typename T>
absl::Status Potrf(UpLo uplo, int64_t batch, int64_t n, T* a, int32_t* info) {
  RETURN_IF_ERROR(CheckBatch(batch));
  RETURN_IF_ERROR(CheckFlag(uplo, "LU", "uplo"));
  ASSIGN_OR_RETURN(const int n32, Dim(n, "n"));
  ZeroInfo(batch, info);
  if (n == 0) return absl::OkStatus();
  auto* fn = Pick<T>(fortran::spotrf_, fortran::dpotrf_, fortran::cpotrf_, fortran::zpotrf_);
  const char u = static_cast<char>(uplo);
  for (int64_t i = 0; i < batch; ++i) {
    int result = 0;
    fn(&u, &n32, a + i * n * n, &n32, &result, kOne);
    info[i] = result;
  }
  return absl::OkStatus();
}

namespace {

// What gesdd and gesvd share: the argument checks, LAPACK's dimensions and
// the batch loop around one call.
template <typename T>
struct Svd {
  SvdMode mode;
  int64_t batch, m, n, k;
  T* a;
  RealOf<T>* s;
  T* u;
  int64_t u_rows, u_cols;
  T* vt;
  int64_t vt_rows, vt_cols;
  int32_t* info;
  int m32 = 0, n32 = 0, ldvt = 0;

  // False when there is nothing to compute.
  absl::StatusOr<bool> Check() {
    RETURN_IF_ERROR(CheckBatch(batch));
    RETURN_IF_ERROR(CheckSvdShapes<T>(mode, m, n, u_rows, u_cols, vt_rows, vt_cols));
    ASSIGN_OR_RETURN(m32, Dim(m, "m"));
    ASSIGN_OR_RETURN(n32, Dim(n, "n"));
    ASSIGN_OR_RETURN(ldvt, Dim(std::max<int64_t>(1, vt_rows), "Vt rows"));
    ZeroInfo(batch, info);
    return batch != 0 && m != 0 && n != 0;
  }

  // `call(a, s, u, vt, work, lwork, info)` once per matrix; U's leading
  // dimension is m.
  template <typename Call>
  absl::Status Run(absl::string_view routine, Call call) {
    return RunBatched<T>(routine, batch, info, [&](int64_t i, T* work, int* lwork, int* result) {
      call(a + i * m * n, s + i * k, u + i * u_rows * u_cols, vt + i * vt_rows * vt_cols, work,
           lwork, result);
    });
  }
};

}  // namespace

template <typename T>
absl::Status Gesdd(SvdMode mode, int64_t batch, int64_t m, int64_t n, T* a, RealOf<T>* s, T* u,
                   int64_t u_rows, int64_t u_cols, T* vt, int64_t vt_rows, int64_t vt_cols,
                   int32_t* info) {
  const int64_t k = std::min(m, n), big = std::max(m, n);
  Svd<T> svd{mode, batch, m, n, k, a, s, u, u_rows, u_cols, vt, vt_rows, vt_cols, info};
  ASSIGN_OR_RETURN(const bool work_to_do, svd.Check());
  if (!work_to_do) return absl::OkStatus();
  ASSIGN_OR_RETURN(const int iwork_size, FormulaSize(8 * k, "gesdd iwork"));
  int64_t rwork_size = 0;
  if constexpr (kIsComplex<T>) {
    rwork_size =
        mode == SvdMode::kNone ? 7 * k : std::max(5 * k * k + 5 * k, 2 * big * k + 2 * k * k + k);
  }
  std::vector<int> iwork(iwork_size);
  std::vector<RealOf<T>> rwork(std::max<int64_t>(1, rwork_size));
  const char job = static_cast<char>(mode);
  auto* fn = Pick<T>(fortran::sgesdd_, fortran::dgesdd_, fortran::cgesdd_, fortran::zgesdd_);
  return svd.Run("gesdd", [&](T* x, RealOf<T>* sv, T* uu, T* vv, T* work, int* lwork, int* result) {
    if constexpr (kIsComplex<T>) {
      fn(&job, &svd.m32, &svd.n32, x, &svd.m32, sv, uu, &svd.m32, vv, &svd.ldvt, work, lwork,
         rwork.data(), iwork.data(), result, kOne);
    } else {
      fn(&job, &svd.m32, &svd.n32, x, &svd.m32, sv, uu, &svd.m32, vv, &svd.ldvt, work, lwork,
         iwork.data(), result, kOne);
    }
  });
}

template <typename T>
absl::Status Gesvd(SvdMode mode, int64_t batch, int64_t m, int64_t n, T* a, RealOf<T>* s, T* u,
                   int64_t u_rows, int64_t u_cols, T* vt, int64_t vt_rows, int64_t vt_cols,
                   int32_t* info) {
  const int64_t k = std::min(m, n);
  Svd<T> svd{mode, batch, m, n, k, a, s, u, u_rows, u_cols, vt, vt_rows, vt_cols, info};
  ASSIGN_OR_RETURN(const bool work_to_do, svd.Check());
  if (!work_to_do) return absl::OkStatus();
  std::vector<RealOf<T>> rwork(kIsComplex<T> ? 5 * k : 1);
  const char job = static_cast<char>(mode);
  auto* fn = Pick<T>(fortran::sgesvd_, fortran::dgesvd_, fortran::cgesvd_, fortran::zgesvd_);
  return svd.Run("gesvd", [&](T* x, RealOf<T>* sv, T* uu, T* vv, T* work, int* lwork, int* result) {
    if constexpr (kIsComplex<T>) {
      fn(&job, &job, &svd.m32, &svd.n32, x, &svd.m32, sv, uu, &svd.m32, vv, &svd.ldvt, work, lwork,
         rwork.data(), result, kOne, kOne);
    } else {
      fn(&job, &job, &svd.m32, &svd.n32, x, &svd.m32, sv, uu, &svd.m32, vv, &svd.ldvt, work, lwork,
         result, kOne, kOne);
    }
  });
}

template <typename T>
absl::Status Syevd(EigMode mode, UpLo uplo, int64_t batch, int64_t n, T* a, RealOf<T>* w,
                   int32_t* info) {
  RETURN_IF_ERROR(CheckBatch(batch));
  RETURN_IF_ERROR(CheckFlag(mode, "NV", "mode"));
  RETURN_IF_ERROR(CheckFlag(uplo, "LU", "uplo"));
  ASSIGN_OR_RETURN(const int n32, Dim(n, "n"));
  ZeroInfo(batch, info);
  if (batch == 0 || n == 0) return absl::OkStatus();
  const bool vectors = mode == EigMode::kVectors;
  // jaxlib's fixed workspace sizes (LAPACK's documented minimums).
  ASSIGN_OR_RETURN(int iwork_size, FormulaSize(vectors ? 3 + 5 * n : 1, "syevd iwork"));
  std::vector<int> iwork(iwork_size);
  const char job = static_cast<char>(mode), u = static_cast<char>(uplo);
  if constexpr (kIsComplex<T>) {
    ASSIGN_OR_RETURN(int work_size, FormulaSize(vectors ? 2 * n + n * n : n + 1, "heevd work"));
    ASSIGN_OR_RETURN(int rwork_size,
                     FormulaSize(vectors ? 1 + 5 * n + 2 * n * n : n, "heevd rwork"));
    std::vector<T> work(work_size);
    std::vector<RealOf<T>> rwork(rwork_size);
    auto* fn = Pick<T>(nullptr, nullptr, fortran::cheevd_, fortran::zheevd_);
    for (int64_t i = 0; i < batch; ++i) {
      int result = 0;
      fn(&job, &u, &n32, a + i * n * n, &n32, w + i * n, work.data(), &work_size, rwork.data(),
         &rwork_size, iwork.data(), &iwork_size, &result, kOne, kOne);
      info[i] = result;
    }
  } else {
    ASSIGN_OR_RETURN(int work_size,
                     FormulaSize(vectors ? 1 + 6 * n + 2 * n * n : 2 * n + 1, "syevd work"));
    std::vector<T> work(work_size);
    auto* fn = Pick<T>(fortran::ssyevd_, fortran::dsyevd_, nullptr, nullptr);
    for (int64_t i = 0; i < batch; ++i) {
      int result = 0;
      fn(&job, &u, &n32, a + i * n * n, &n32, w + i * n, work.data(), &work_size, iwork.data(),
         &iwork_size, &result, kOne, kOne);
      info[i] = result;
    }
  }
  return absl::OkStatus();
}

namespace {

// The checks real and complex geev share; LAPACK's n.
absl::StatusOr<int> CheckGeev(EigMode left, EigMode right, int64_t batch, int64_t n,
                              int32_t* info) {
  RETURN_IF_ERROR(CheckBatch(batch));
  RETURN_IF_ERROR(CheckFlag(left, "NV", "compute_left"));
  RETURN_IF_ERROR(CheckFlag(right, "NV", "compute_right"));
  ASSIGN_OR_RETURN(const int n32, Dim(n, "n"));
  ZeroInfo(batch, info);
  return n32;
}

// geev's batch loop as jaxlib runs it: each matrix is copied (LAPACK
// overwrites it); one with a NaN or an infinity gets info = -4 and no call.
// `call(i, matrix, work, lwork, info)` runs LAPACK on element i's copy, and
// `done(i)` follows each call that returned info = 0.
template <typename T, typename Call, typename Done>
absl::Status RunGeev(int64_t batch, int64_t n, const T* a, int32_t* info, Call call, Done done) {
  if (batch == 0 || n == 0) return absl::OkStatus();
  const int64_t size = n * n;
  std::vector<T> copy(size);
  ASSIGN_OR_RETURN(std::vector<T> work, QueryWorkspace<T>("geev", [&](T* w, int* lw, int* r) {
                     call(0, copy.data(), w, lw, r);
                   }));
  int lwork = static_cast<int>(work.size());
  for (int64_t i = 0; i < batch; ++i) {
    std::copy_n(a + i * size, size, copy.data());
    if (!AllFinite(copy.data(), size)) {
      info[i] = -4;  // jaxlib's answer for NaN/infinite input; LAPACK is not called.
      continue;
    }
    int result = 0;
    call(i, copy.data(), work.data(), &lwork, &result);
    info[i] = result;
    if (result == 0) done(i);
  }
  return absl::OkStatus();
}

}  // namespace

template <typename T>
absl::Status GeevReal(EigMode left, EigMode right, int64_t batch, int64_t n, const T* a, T* wr,
                      T* wi, std::complex<T>* vl, std::complex<T>* vr, int32_t* info) {
  static_assert(!kIsComplex<T>);
  ASSIGN_OR_RETURN(const int n32, CheckGeev(left, right, batch, n, info));
  const char jl = static_cast<char>(left), jr = static_cast<char>(right);
  auto* fn = Pick<T>(fortran::sgeev_, fortran::dgeev_, nullptr, nullptr);
  const int64_t size = n * n;
  std::vector<T> left_packed(size), right_packed(size);
  return RunGeev<T>(
      batch, n, a, info,
      [&](int64_t i, T* matrix, T* work, int* lwork, int* result) {
        fn(&jl, &jr, &n32, matrix, &n32, wr + i * n, wi + i * n, left_packed.data(), &n32,
           right_packed.data(), &n32, work, lwork, result, kOne, kOne);
      },
      [&](int64_t i) {
        if (left == EigMode::kVectors) {
          UnpackEigenvectors(n32, wi + i * n, left_packed.data(), vl + i * size);
        }
        if (right == EigMode::kVectors) {
          UnpackEigenvectors(n32, wi + i * n, right_packed.data(), vr + i * size);
        }
      });
}

template <typename T>
absl::Status GeevComplex(EigMode left, EigMode right, int64_t batch, int64_t n, const T* a, T* w,
                         T* vl, T* vr, int32_t* info) {
  static_assert(kIsComplex<T>);
  ASSIGN_OR_RETURN(const int n32, CheckGeev(left, right, batch, n, info));
  const char jl = static_cast<char>(left), jr = static_cast<char>(right);
  auto* fn = Pick<T>(nullptr, nullptr, fortran::cgeev_, fortran::zgeev_);
  const int64_t size = n * n;
  std::vector<RealOf<T>> rwork(2 * n);
  return RunGeev<T>(
      batch, n, a, info,
      [&](int64_t i, T* matrix, T* work, int* lwork, int* result) {
        fn(&jl, &jr, &n32, matrix, &n32, w + i * n, vl + i * size, &n32, vr + i * size, &n32, work,
           lwork, rwork.data(), result, kOne, kOne);
      },
      [](int64_t) {});
}

namespace {

// The checks real and complex gees share; LAPACK's n.
absl::StatusOr<int> CheckGees(SchurMode mode, SchurSort sort, int64_t batch, int64_t n,
                              int32_t* sdim, int32_t* info) {
  RETURN_IF_ERROR(CheckBatch(batch));
  RETURN_IF_ERROR(CheckFlag(mode, "NV", "mode"));
  RETURN_IF_ERROR(CheckFlag(sort, "NS", "sort"));
  if (sort == SchurSort::kSort) {
    return Unimplemented(
        "gees with sort = 'S' (ordering eigenvalues on the diagonal needs a select function; "
        "jaxlib does not implement it either)");
  }
  ASSIGN_OR_RETURN(const int n32, Dim(n, "n"));
  ZeroInfo(batch, info);
  ZeroInfo(batch, sdim);
  return n32;
}

}  // namespace

template <typename T>
absl::Status GeesReal(SchurMode mode, SchurSort sort, int64_t batch, int64_t n, T* a, T* vs, T* wr,
                      T* wi, int32_t* sdim, int32_t* info) {
  static_assert(!kIsComplex<T>);
  ASSIGN_OR_RETURN(const int n32, CheckGees(mode, sort, batch, n, sdim, info));
  if (n == 0) return absl::OkStatus();
  const char job = static_cast<char>(mode), order = static_cast<char>(sort);
  auto* fn = Pick<T>(fortran::sgees_, fortran::dgees_, nullptr, nullptr);
  return RunBatched<T>("gees", batch, info, [&](int64_t i, T* work, int* lwork, int* result) {
    fn(&job, &order, nullptr, &n32, a + i * n * n, &n32, sdim + i, wr + i * n, wi + i * n,
       vs + i * n * n, &n32, work, lwork, nullptr, result, kOne, kOne);
  });
}

template <typename T>
absl::Status GeesComplex(SchurMode mode, SchurSort sort, int64_t batch, int64_t n, T* a, T* vs,
                         T* w, int32_t* sdim, int32_t* info) {
  static_assert(kIsComplex<T>);
  ASSIGN_OR_RETURN(const int n32, CheckGees(mode, sort, batch, n, sdim, info));
  if (n == 0) return absl::OkStatus();
  const char job = static_cast<char>(mode), order = static_cast<char>(sort);
  auto* fn = Pick<T>(nullptr, nullptr, fortran::cgees_, fortran::zgees_);
  std::vector<RealOf<T>> rwork(n);
  return RunBatched<T>("gees", batch, info, [&](int64_t i, T* work, int* lwork, int* result) {
    fn(&job, &order, nullptr, &n32, a + i * n * n, &n32, sdim + i, w + i * n, vs + i * n * n, &n32,
       work, lwork, rwork.data(), nullptr, result, kOne, kOne);
  });
}

template <typename T>
absl::Status Gehrd(int64_t batch, int64_t n, int32_t low, int32_t high, T* a, T* tau,
                   int32_t* info) {
  RETURN_IF_ERROR(CheckBatch(batch));
  ASSIGN_OR_RETURN(const int n32, Dim(n, "n"));
  // LAPACK's rule: 1 <= low <= max(1, n) and min(low, n) <= high <= n.
  if (low < 1 || low > std::max(1, n32) || high < std::min(low, n32) || high > n32) {
    return InvalidArgument(
        "gehrd needs 1 <= low <= max(1, n) and min(low, n) <= high <= n, got "
        "low = ",
        low, ", high = ", high, ", n = ", n);
  }
  ZeroInfo(batch, info);
  if (n == 0) return absl::OkStatus();
  auto* fn = Pick<T>(fortran::sgehrd_, fortran::dgehrd_, fortran::cgehrd_, fortran::zgehrd_);
  return RunBatched<T>("gehrd", batch, info, [&](int64_t i, T* work, int* lwork, int* result) {
    fn(&n32, &low, &high, a + i * n * n, &n32, tau + i * (n - 1), work, lwork, result);
  });
}

template <typename T>
absl::Status Sytrd(UpLo uplo, int64_t batch, int64_t n, T* a, RealOf<T>* d, RealOf<T>* e, T* tau,
                   int32_t* info) {
  RETURN_IF_ERROR(CheckBatch(batch));
  RETURN_IF_ERROR(CheckFlag(uplo, "LU", "uplo"));
  ASSIGN_OR_RETURN(const int n32, Dim(n, "n"));
  ZeroInfo(batch, info);
  if (n == 0) return absl::OkStatus();
  const char u = static_cast<char>(uplo);
  auto* fn = Pick<T>(fortran::ssytrd_, fortran::dsytrd_, fortran::chetrd_, fortran::zhetrd_);
  return RunBatched<T>("sytrd", batch, info, [&](int64_t i, T* work, int* lwork, int* result) {
    fn(&u, &n32, a + i * n * n, &n32, d + i * n, e + i * (n - 1), tau + i * (n - 1), work, lwork,
       result, kOne);
  });
}

template <typename T>
absl::Status Gtsv(int64_t batch, int64_t n, int64_t nrhs, T* dl, T* d, T* du, T* b, int32_t* info) {
  RETURN_IF_ERROR(CheckBatch(batch));
  ASSIGN_OR_RETURN(const int n32, Dim(n, "n"));
  ASSIGN_OR_RETURN(const int nrhs32, Dim(nrhs, "nrhs"));
  ZeroInfo(batch, info);
  if (n == 0) return absl::OkStatus();
  auto* fn = Pick<T>(fortran::sgtsv_, fortran::dgtsv_, fortran::cgtsv_, fortran::zgtsv_);
  for (int64_t i = 0; i < batch; ++i) {
    int result = 0;
    // LAPACK's DL is the n-1 subdiagonal entries A(2,1)..A(n,n-1): jax's dl[1:].
    fn(&n32, &nrhs32, dl + i * n + 1, d + i * n, du + i * n, b + i * n * nrhs, &n32, &result);
    info[i] = result;
  }
  return absl::OkStatus();
}

// Explicit instantiations for the four LAPACK types.
#define XLITE_HOSTLIB_INSTANTIATE(T)                                                              \
  template absl::Status Trsm<T>(Side, UpLo, Transpose, Diag, T, int64_t, int64_t, int64_t,        \
                                const T*, T*);                                                    \
  template absl::Status Getrf<T>(int64_t, int64_t, int64_t, T*, int32_t*, int32_t*);              \
  template absl::Status Geqrf<T>(int64_t, int64_t, int64_t, T*, T*);                              \
  template absl::Status Geqp3<T>(int64_t, int64_t, int64_t, T*, int32_t*, T*);                    \
  template absl::Status Orgqr<T>(int64_t, int64_t, int64_t, int64_t, T*, const T*);               \
  template absl::Status Ormqr<T>(bool, bool, int64_t, int64_t, int64_t, int64_t, const T*,        \
                                 int64_t, int64_t, const T*, T*);                                 \
  template absl::Status Potrf<T>(UpLo, int64_t, int64_t, T*, int32_t*);                           \
  template absl::Status Gesdd<T>(SvdMode, int64_t, int64_t, int64_t, T*, RealOf<T>*, T*, int64_t, \
                                 int64_t, T*, int64_t, int64_t, int32_t*);                        \
  template absl::Status Gesvd<T>(SvdMode, int64_t, int64_t, int64_t, T*, RealOf<T>*, T*, int64_t, \
                                 int64_t, T*, int64_t, int64_t, int32_t*);                        \
  template absl::Status Syevd<T>(EigMode, UpLo, int64_t, int64_t, T*, RealOf<T>*, int32_t*);      \
  template absl::Status Gehrd<T>(int64_t, int64_t, int32_t, int32_t, T*, T*, int32_t*);           \
  template absl::Status Sytrd<T>(UpLo, int64_t, int64_t, T*, RealOf<T>*, RealOf<T>*, T*,          \
                                 int32_t*);                                                       \
  template absl::Status Gtsv<T>(int64_t, int64_t, int64_t, T*, T*, T*, T*, int32_t*);

XLITE_HOSTLIB_INSTANTIATE(float)
XLITE_HOSTLIB_INSTANTIATE(double)
XLITE_HOSTLIB_INSTANTIATE(std::complex<float>)
XLITE_HOSTLIB_INSTANTIATE(std::complex<double>)
#undef XLITE_HOSTLIB_INSTANTIATE

template absl::Status GeevReal<float>(EigMode, EigMode, int64_t, int64_t, const float*, float*,
                                      float*, std::complex<float>*, std::complex<float>*, int32_t*);
template absl::Status GeevReal<double>(EigMode, EigMode, int64_t, int64_t, const double*, double*,
                                       double*, std::complex<double>*, std::complex<double>*,
                                       int32_t*);
template absl::Status GeevComplex<std::complex<float>>(EigMode, EigMode, int64_t, int64_t,
                                                       const std::complex<float>*,
                                                       std::complex<float>*, std::complex<float>*,
                                                       std::complex<float>*, int32_t*);
template absl::Status GeevComplex<std::complex<double>>(EigMode, EigMode, int64_t, int64_t,
                                                        const std::complex<double>*,
                                                        std::complex<double>*,
                                                        std::complex<double>*,
                                                        std::complex<double>*, int32_t*);
template absl::Status GeesReal<float>(SchurMode, SchurSort, int64_t, int64_t, float*, float*,
                                      float*, float*, int32_t*, int32_t*);
template absl::Status GeesReal<double>(SchurMode, SchurSort, int64_t, int64_t, double*, double*,
                                       double*, double*, int32_t*, int32_t*);
template absl::Status GeesComplex<std::complex<float>>(SchurMode, SchurSort, int64_t, int64_t,
                                                       std::complex<float>*, std::complex<float>*,
                                                       std::complex<float>*, int32_t*, int32_t*);
template absl::Status GeesComplex<std::complex<double>>(SchurMode, SchurSort, int64_t, int64_t,
                                                        std::complex<double>*,
                                                        std::complex<double>*,
                                                        std::complex<double>*, int32_t*, int32_t*);

}  // namespace xlite::hostlib
