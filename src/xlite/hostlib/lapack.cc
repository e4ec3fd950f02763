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
  if (batch == 0 || m == 0 || n == 0) return absl::OkStatus();
  auto* fn = Pick<T>(fortran::sgeqrf_, fortran::dgeqrf_, fortran::cgeqrf_, fortran::zgeqrf_);
  T query{};
  int info = 0, lwork = -1;
  fn(&m32, &n32, a, &m32, tau, &query, &lwork, &info);
  ASSIGN_OR_RETURN(lwork, QueriedSize(query, info, "geqrf"));
  std::vector<T> work(lwork);
  const int64_t k = std::min(m, n);
  for (int64_t i = 0; i < batch; ++i) {
    fn(&m32, &n32, a + i * m * n, &m32, tau + i * k, work.data(), &lwork, &info);
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status Geqp3(int64_t batch, int64_t m, int64_t n, T* a, int32_t* jpvt, T* tau) {
  RETURN_IF_ERROR(CheckBatch(batch));
  ASSIGN_OR_RETURN(const int m32, Dim(m, "m"));
  ASSIGN_OR_RETURN(const int n32, Dim(n, "n"));
  if (batch == 0 || m == 0 || n == 0) return absl::OkStatus();
  auto* fn = Pick<T>(fortran::sgeqp3_, fortran::dgeqp3_, fortran::cgeqp3_, fortran::zgeqp3_);
  std::vector<RealOf<T>> rwork(kIsComplex<T> ? 2 * n : 0);
  auto call = [&](T* matrix, int* pivots, T* taus, T* work, int* lwork, int* info) {
    if constexpr (kIsComplex<T>) {
      fn(&m32, &n32, matrix, &m32, pivots, taus, work, lwork, rwork.data(), info);
    } else {
      fn(&m32, &n32, matrix, &m32, pivots, taus, work, lwork, info);
    }
  };
  T query{};
  int info = 0, lwork = -1;
  call(a, jpvt, tau, &query, &lwork, &info);
  ASSIGN_OR_RETURN(lwork, QueriedSize(query, info, "geqp3"));
  std::vector<T> work(lwork);
  const int64_t k = std::min(m, n);
  for (int64_t i = 0; i < batch; ++i) {
    call(a + i * m * n, jpvt + i * n, tau + i * k, work.data(), &lwork, &info);
  }
  return absl::OkStatus();
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
  if (batch == 0 || n == 0) return absl::OkStatus();
  auto* fn = Pick<T>(fortran::sorgqr_, fortran::dorgqr_, fortran::cungqr_, fortran::zungqr_);
  T query{};
  int info = 0, lwork = -1;
  fn(&m32, &n32, &k32, a, &m32, tau, &query, &lwork, &info);
  ASSIGN_OR_RETURN(lwork, QueriedSize(query, info, "orgqr"));
  std::vector<T> work(lwork);
  for (int64_t i = 0; i < batch; ++i) {
    fn(&m32, &n32, &k32, a + i * m * n, &m32, tau + i * k, work.data(), &lwork, &info);
  }
  return absl::OkStatus();
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
  if (batch == 0 || m == 0 || n == 0) return absl::OkStatus();
  auto* fn = Pick<T>(fortran::sormqr_, fortran::dormqr_, fortran::cunmqr_, fortran::zunmqr_);
  const char side = left ? 'L' : 'R';
  const char trans = transpose ? (kIsComplex<T> ? 'C' : 'T') : 'N';
  const int lda = static_cast<int>(order);
  T query{};
  int info = 0, lwork = -1;
  fn(&side, &trans, &m32, &n32, &k32, a, &lda, tau, c, &m32, &query, &lwork, &info, kOne, kOne);
  ASSIGN_OR_RETURN(lwork, QueriedSize(query, info, "ormqr"));
  std::vector<T> work(lwork);
  for (int64_t i = 0; i < batch; ++i) {
    fn(&side, &trans, &m32, &n32, &k32, a + i * a_rows * a_cols, &lda, tau + i * k, c + i * m * n,
       &m32, work.data(), &lwork, &info, kOne, kOne);
  }
  return absl::OkStatus();
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

template <typename T>
absl::Status Gesdd(SvdMode mode, int64_t batch, int64_t m, int64_t n, T* a, RealOf<T>* s, T* u,
                   int64_t u_rows, int64_t u_cols, T* vt, int64_t vt_rows, int64_t vt_cols,
                   int32_t* info) {
  RETURN_IF_ERROR(CheckBatch(batch));
  RETURN_IF_ERROR(CheckSvdShapes<T>(mode, m, n, u_rows, u_cols, vt_rows, vt_cols));
  ASSIGN_OR_RETURN(const int m32, Dim(m, "m"));
  ASSIGN_OR_RETURN(const int n32, Dim(n, "n"));
  ZeroInfo(batch, info);
  if (batch == 0 || m == 0 || n == 0) return absl::OkStatus();
  const int64_t k = std::min(m, n), big = std::max(m, n);
  const int ldu = m32;
  ASSIGN_OR_RETURN(const int ldvt, Dim(std::max<int64_t>(1, vt_rows), "Vt rows"));
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
  auto call = [&](T* x, RealOf<T>* sv, T* uu, T* vv, T* work, int* lwork, int* result) {
    if constexpr (kIsComplex<T>) {
      fn(&job, &m32, &n32, x, &m32, sv, uu, &ldu, vv, &ldvt, work, lwork, rwork.data(),
         iwork.data(), result, kOne);
    } else {
      fn(&job, &m32, &n32, x, &m32, sv, uu, &ldu, vv, &ldvt, work, lwork, iwork.data(), result,
         kOne);
    }
  };
  T query{};
  int result = 0, lwork = -1;
  call(a, s, u, vt, &query, &lwork, &result);
  ASSIGN_OR_RETURN(lwork, QueriedSize(query, result, "gesdd"));
  std::vector<T> work(lwork);
  for (int64_t i = 0; i < batch; ++i) {
    call(a + i * m * n, s + i * k, u + i * u_rows * u_cols, vt + i * vt_rows * vt_cols, work.data(),
         &lwork, &result);
    info[i] = result;
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status Gesvd(SvdMode mode, int64_t batch, int64_t m, int64_t n, T* a, RealOf<T>* s, T* u,
                   int64_t u_rows, int64_t u_cols, T* vt, int64_t vt_rows, int64_t vt_cols,
                   int32_t* info) {
  RETURN_IF_ERROR(CheckBatch(batch));
  RETURN_IF_ERROR(CheckSvdShapes<T>(mode, m, n, u_rows, u_cols, vt_rows, vt_cols));
  ASSIGN_OR_RETURN(const int m32, Dim(m, "m"));
  ASSIGN_OR_RETURN(const int n32, Dim(n, "n"));
  ZeroInfo(batch, info);
  if (batch == 0 || m == 0 || n == 0) return absl::OkStatus();
  const int64_t k = std::min(m, n);
  const int ldu = m32;
  ASSIGN_OR_RETURN(const int ldvt, Dim(std::max<int64_t>(1, vt_rows), "Vt rows"));
  std::vector<RealOf<T>> rwork(kIsComplex<T> ? 5 * k : 1);
  const char job = static_cast<char>(mode);
  auto* fn = Pick<T>(fortran::sgesvd_, fortran::dgesvd_, fortran::cgesvd_, fortran::zgesvd_);
  auto call = [&](T* x, RealOf<T>* sv, T* uu, T* vv, T* work, int* lwork, int* result) {
    if constexpr (kIsComplex<T>) {
      fn(&job, &job, &m32, &n32, x, &m32, sv, uu, &ldu, vv, &ldvt, work, lwork, rwork.data(),
         result, kOne, kOne);
    } else {
      fn(&job, &job, &m32, &n32, x, &m32, sv, uu, &ldu, vv, &ldvt, work, lwork, result, kOne, kOne);
    }
  };
  T query{};
  int result = 0, lwork = -1;
  call(a, s, u, vt, &query, &lwork, &result);
  ASSIGN_OR_RETURN(lwork, QueriedSize(query, result, "gesvd"));
  std::vector<T> work(lwork);
  for (int64_t i = 0; i < batch; ++i) {
    call(a + i * m * n, s + i * k, u + i * u_rows * u_cols, vt + i * vt_rows * vt_cols, work.data(),
         &lwork, &result);
    info[i] = result;
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status Syevd(EigMode mode, UpLo uplo, int64_t batch, int64_t n, T* a, RealOf<T>* w,
                   int32_t* info) {
  RETURN_IF_ERROR(CheckBatch(batch));
  RETURN_IF_ERROR(CheckFlag(mode, "NV", "mode"));
  RETURN_IF_ERROR(CheckFlag(uplo, "LU", "uplo"));
  ASSIGN_OR_RETURN(const int n32, Dim(n, "n"));
  ZeroInfo(batch, info);
  if (n == 0) return absl::OkStatus();
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

template <typename T>
absl::Status GeevReal(EigMode left, EigMode right, int64_t batch, int64_t n, const T* a, T* wr,
                      T* wi, std::complex<T>* vl, std::complex<T>* vr, int32_t* info) {
  static_assert(!kIsComplex<T>);
  RETURN_IF_ERROR(CheckBatch(batch));
  RETURN_IF_ERROR(CheckFlag(left, "NV", "compute_left"));
  RETURN_IF_ERROR(CheckFlag(right, "NV", "compute_right"));
  ASSIGN_OR_RETURN(const int n32, Dim(n, "n"));
  ZeroInfo(batch, info);
  if (batch == 0 || n == 0) return absl::OkStatus();
  const char jl = static_cast<char>(left), jr = static_cast<char>(right);
  auto* fn = Pick<T>(fortran::sgeev_, fortran::dgeev_, nullptr, nullptr);
  const int64_t size = n * n;
  std::vector<T> copy(size), left_packed(size), right_packed(size);
  T query{};
  int result = 0, lwork = -1;
  fn(&jl, &jr, &n32, copy.data(), &n32, wr, wi, left_packed.data(), &n32, right_packed.data(), &n32,
     &query, &lwork, &result, kOne, kOne);
  ASSIGN_OR_RETURN(lwork, QueriedSize(query, result, "geev"));
  std::vector<T> work(lwork);
  for (int64_t i = 0; i < batch; ++i) {
    std::copy_n(a + i * size, size, copy.data());
    if (!AllFinite(copy.data(), size)) {
      info[i] = -4;  // jaxlib's answer for NaN/infinite input; LAPACK is not called.
      continue;
    }
    fn(&jl, &jr, &n32, copy.data(), &n32, wr + i * n, wi + i * n, left_packed.data(), &n32,
       right_packed.data(), &n32, work.data(), &lwork, &result, kOne, kOne);
    info[i] = result;
    if (result != 0) continue;
    if (left == EigMode::kVectors) {
      UnpackEigenvectors(n32, wi + i * n, left_packed.data(), vl + i * size);
    }
    if (right == EigMode::kVectors) {
      UnpackEigenvectors(n32, wi + i * n, right_packed.data(), vr + i * size);
    }
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status GeevComplex(EigMode left, EigMode right, int64_t batch, int64_t n, const T* a, T* w,
                         T* vl, T* vr, int32_t* info) {
  static_assert(kIsComplex<T>);
  RETURN_IF_ERROR(CheckBatch(batch));
  RETURN_IF_ERROR(CheckFlag(left, "NV", "compute_left"));
  RETURN_IF_ERROR(CheckFlag(right, "NV", "compute_right"));
  ASSIGN_OR_RETURN(const int n32, Dim(n, "n"));
  ZeroInfo(batch, info);
  if (batch == 0 || n == 0) return absl::OkStatus();
  const char jl = static_cast<char>(left), jr = static_cast<char>(right);
  auto* fn = Pick<T>(nullptr, nullptr, fortran::cgeev_, fortran::zgeev_);
  const int64_t size = n * n;
  std::vector<T> copy(size);
  std::vector<RealOf<T>> rwork(2 * n);
  T query{};
  int result = 0, lwork = -1;
  fn(&jl, &jr, &n32, copy.data(), &n32, w, vl, &n32, vr, &n32, &query, &lwork, rwork.data(),
     &result, kOne, kOne);
  ASSIGN_OR_RETURN(lwork, QueriedSize(query, result, "geev"));
  std::vector<T> work(lwork);
  for (int64_t i = 0; i < batch; ++i) {
    std::copy_n(a + i * size, size, copy.data());
    if (!AllFinite(copy.data(), size)) {
      info[i] = -4;
      continue;
    }
    fn(&jl, &jr, &n32, copy.data(), &n32, w + i * n, vl + i * size, &n32, vr + i * size, &n32,
       work.data(), &lwork, rwork.data(), &result, kOne, kOne);
    info[i] = result;
  }
  return absl::OkStatus();
}

namespace {

absl::Status CheckSchurFlags(SchurMode mode, SchurSort sort) {
  RETURN_IF_ERROR(CheckFlag(mode, "NV", "mode"));
  RETURN_IF_ERROR(CheckFlag(sort, "NS", "sort"));
  if (sort == SchurSort::kSort) {
    return Unimplemented(
        "gees with sort = 'S' (ordering eigenvalues on the diagonal needs a select function; "
        "jaxlib does not implement it either)");
  }
  return absl::OkStatus();
}

}  // namespace

template <typename T>
absl::Status GeesReal(SchurMode mode, SchurSort sort, int64_t batch, int64_t n, T* a, T* vs, T* wr,
                      T* wi, int32_t* sdim, int32_t* info) {
  static_assert(!kIsComplex<T>);
  RETURN_IF_ERROR(CheckBatch(batch));
  RETURN_IF_ERROR(CheckSchurFlags(mode, sort));
  ASSIGN_OR_RETURN(const int n32, Dim(n, "n"));
  ZeroInfo(batch, info);
  ZeroInfo(batch, sdim);
  if (batch == 0 || n == 0) return absl::OkStatus();
  const char job = static_cast<char>(mode), order = static_cast<char>(sort);
  auto* fn = Pick<T>(fortran::sgees_, fortran::dgees_, nullptr, nullptr);
  T query{};
  int selected = 0, result = 0, lwork = -1;
  fn(&job, &order, nullptr, &n32, a, &n32, &selected, wr, wi, vs, &n32, &query, &lwork, nullptr,
     &result, kOne, kOne);
  ASSIGN_OR_RETURN(lwork, QueriedSize(query, result, "gees"));
  std::vector<T> work(lwork);
  for (int64_t i = 0; i < batch; ++i) {
    fn(&job, &order, nullptr, &n32, a + i * n * n, &n32, &selected, wr + i * n, wi + i * n,
       vs + i * n * n, &n32, work.data(), &lwork, nullptr, &result, kOne, kOne);
    sdim[i] = selected;
    info[i] = result;
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status GeesComplex(SchurMode mode, SchurSort sort, int64_t batch, int64_t n, T* a, T* vs,
                         T* w, int32_t* sdim, int32_t* info) {
  static_assert(kIsComplex<T>);
  RETURN_IF_ERROR(CheckBatch(batch));
  RETURN_IF_ERROR(CheckSchurFlags(mode, sort));
  ASSIGN_OR_RETURN(const int n32, Dim(n, "n"));
  ZeroInfo(batch, info);
  ZeroInfo(batch, sdim);
  if (batch == 0 || n == 0) return absl::OkStatus();
  const char job = static_cast<char>(mode), order = static_cast<char>(sort);
  auto* fn = Pick<T>(nullptr, nullptr, fortran::cgees_, fortran::zgees_);
  std::vector<RealOf<T>> rwork(n);
  T query{};
  int selected = 0, result = 0, lwork = -1;
  fn(&job, &order, nullptr, &n32, a, &n32, &selected, w, vs, &n32, &query, &lwork, rwork.data(),
     nullptr, &result, kOne, kOne);
  ASSIGN_OR_RETURN(lwork, QueriedSize(query, result, "gees"));
  std::vector<T> work(lwork);
  for (int64_t i = 0; i < batch; ++i) {
    fn(&job, &order, nullptr, &n32, a + i * n * n, &n32, &selected, w + i * n, vs + i * n * n, &n32,
       work.data(), &lwork, rwork.data(), nullptr, &result, kOne, kOne);
    sdim[i] = selected;
    info[i] = result;
  }
  return absl::OkStatus();
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
  if (batch == 0 || n == 0) return absl::OkStatus();
  auto* fn = Pick<T>(fortran::sgehrd_, fortran::dgehrd_, fortran::cgehrd_, fortran::zgehrd_);
  T query{};
  int result = 0, lwork = -1;
  fn(&n32, &low, &high, a, &n32, tau, &query, &lwork, &result);
  ASSIGN_OR_RETURN(lwork, QueriedSize(query, result, "gehrd"));
  std::vector<T> work(lwork);
  for (int64_t i = 0; i < batch; ++i) {
    fn(&n32, &low, &high, a + i * n * n, &n32, tau + i * (n - 1), work.data(), &lwork, &result);
    info[i] = result;
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status Sytrd(UpLo uplo, int64_t batch, int64_t n, T* a, RealOf<T>* d, RealOf<T>* e, T* tau,
                   int32_t* info) {
  RETURN_IF_ERROR(CheckBatch(batch));
  RETURN_IF_ERROR(CheckFlag(uplo, "LU", "uplo"));
  ASSIGN_OR_RETURN(const int n32, Dim(n, "n"));
  ZeroInfo(batch, info);
  if (batch == 0 || n == 0) return absl::OkStatus();
  const char u = static_cast<char>(uplo);
  auto* fn = Pick<T>(fortran::ssytrd_, fortran::dsytrd_, fortran::chetrd_, fortran::zhetrd_);
  T query{};
  int result = 0, lwork = -1;
  fn(&u, &n32, a, &n32, d, e, tau, &query, &lwork, &result, kOne);
  ASSIGN_OR_RETURN(lwork, QueriedSize(query, result, "sytrd"));
  std::vector<T> work(lwork);
  for (int64_t i = 0; i < batch; ++i) {
    fn(&u, &n32, a + i * n * n, &n32, d + i * n, e + i * (n - 1), tau + i * (n - 1), work.data(),
       &lwork, &result, kOne);
    info[i] = result;
  }
  return absl::OkStatus();
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
