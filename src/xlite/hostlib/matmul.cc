#include "xlite/hostlib/matmul.h"

#include <atomic>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "xlite/hostlib/element_access.h"
#include "xlite/hostlib/lapack_fortran.h"
#include "xlite/hostlib/onednn.h"
#include "xlite/hostlib/skinny_sgemm.h"
#include "xlite/support/status.h"

// gperftools' C interface: defined only when tcmalloc is linked or preloaded.
extern "C" int MallocExtension_GetNumericProperty(const char* property, size_t* value)
    __attribute__((weak));

namespace xlite::hostlib {
namespace {

absl::Status CheckShape(const MatmulShape& s) {
  if (s.batch < 0 || s.m < 0 || s.k < 0 || s.n < 0) {
    return InvalidArgument("matmul: negative dimension in [", s.batch, ",", s.m, ",", s.k, "] x [",
                           s.batch, ",", s.k, ",", s.n, "]");
  }
  // Every buffer's element count must fit int64.
  const int64_t limit = std::numeric_limits<int64_t>::max();
  for (auto [a, b] : {std::pair{s.m, s.k}, std::pair{s.k, s.n}, std::pair{s.m, s.n}}) {
    if (a != 0 && b != 0 && (b > limit / a || (s.batch != 0 && a * b > limit / s.batch))) {
      return InvalidArgument("matmul: [", s.batch, ",", s.m, ",", s.k, ",", s.n,
                             "] has more elements than int64 counts");
    }
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// BLAS: row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ, so ?gemm gets B first.

// A row-major [k, n] matrix is column-major [n, k] (its transpose), so op(B)
// is "N" unless B is stored [n, k]; likewise for A.
template <typename T>
void Gemm(int m, int n, int k, bool transpose_a, bool transpose_b, const T* a, const T* b, T* c) {
  const T one(1), zero(0);
  const auto gemm =
      fortran::Pick<T>(fortran::sgemm_, fortran::dgemm_, fortran::cgemm_, fortran::zgemm_);
  const int lda = std::max(transpose_a ? m : k, 1), ldb = std::max(transpose_b ? k : n, 1);
  const int ldc = std::max(n, 1);
  gemm(transpose_b ? "T" : "N", transpose_a ? "T" : "N", &n, &m, &k, &one, b, &ldb, a, &lda, &zero,
       c, &ldc, 1, 1);
}

template <typename T>
void BlasMatmul(const MatmulShape& s, const void* lhs, const void* rhs, void* out) {
  const T* a = static_cast<const T*>(lhs);
  const T* b = static_cast<const T*>(rhs);
  T* c = static_cast<T*>(out);
  for (int64_t i = 0; i < s.batch; ++i) {
    Gemm<T>(static_cast<int>(s.m), static_cast<int>(s.n), static_cast<int>(s.k), s.transpose_lhs,
            s.transpose_rhs, a + i * s.m * s.k, b + i * s.k * s.n, c + i * s.m * s.n);
  }
}

absl::Status Blas(const MatmulShape& s, ElementType lhs_type, const void* lhs, ElementType rhs_type,
                  const void* rhs, ElementType out_type, void* out) {
  if (lhs_type != rhs_type || lhs_type != out_type) {
    return Unimplemented("BLAS gemm: mixed types ", ElementTypeName(lhs_type), " x ",
                         ElementTypeName(rhs_type), " -> ", ElementTypeName(out_type));
  }
  const int64_t int_max = std::numeric_limits<int>::max();
  if (s.m > int_max || s.n > int_max || s.k > int_max) {
    return Unimplemented("BLAS gemm: a dimension of [", s.m, ",", s.k, ",", s.n,
                         "] exceeds BLAS's 32-bit integers");
  }
  switch (lhs_type) {
    case ElementType::kF32:
      BlasMatmul<float>(s, lhs, rhs, out);
      return absl::OkStatus();
    case ElementType::kF64:
      BlasMatmul<double>(s, lhs, rhs, out);
      return absl::OkStatus();
    case ElementType::kC64:
      BlasMatmul<std::complex<float>>(s, lhs, rhs, out);
      return absl::OkStatus();
    case ElementType::kC128:
      BlasMatmul<std::complex<double>>(s, lhs, rhs, out);
      return absl::OkStatus();
    default:
      return Unimplemented("BLAS gemm: no routine for ", ElementTypeName(lhs_type));
  }
}

// ---------------------------------------------------------------------------
// Own loops, in the computation type T (matmul.h's rules).

template <typename T>
void LoopMatmul(const MatmulShape& s, ElementType lhs_type, const void* lhs, ElementType rhs_type,
                const void* rhs, ElementType out_type, void* out) {
  const std::vector<T> a = LoadAll<T>(lhs_type, lhs, s.batch * s.m * s.k);
  const std::vector<T> b = LoadAll<T>(rhs_type, rhs, s.batch * s.k * s.n);
  std::vector<T> row(s.n);
  for (int64_t batch = 0; batch < s.batch; ++batch) {
    const T* a_batch = a.data() + batch * s.m * s.k;
    const T* b_batch = b.data() + batch * s.k * s.n;
    for (int64_t i = 0; i < s.m; ++i) {
      std::fill(row.begin(), row.end(), T{});
      // i-k-j order: the inner loop runs along contiguous rows of b.
      for (int64_t k = 0; k < s.k; ++k) {
        const T x = s.transpose_lhs ? a_batch[k * s.m + i] : a_batch[i * s.k + k];
        if (s.transpose_rhs) {
          for (int64_t j = 0; j < s.n; ++j) row[j] += x * b_batch[j * s.k + k];
          continue;
        }
        const T* b_row = b_batch + k * s.n;
        for (int64_t j = 0; j < s.n; ++j) row[j] += x * b_row[j];
      }
      const int64_t base = (batch * s.m + i) * s.n;
      for (int64_t j = 0; j < s.n; ++j) StoreElement<T>(out_type, out, base + j, row[j]);
    }
  }
}

bool IsF32Matrix(const MatmulShape& s, ElementType lhs_type, ElementType rhs_type,
                 ElementType out_type) {
  return lhs_type == ElementType::kF32 && rhs_type == ElementType::kF32 &&
         out_type == ElementType::kF32 && s.batch == 1;
}

std::atomic<RowBlockKernel> row_block_kernel{RowBlockKernel::kAuto};

bool SgemmRowBlocks() {
  switch (row_block_kernel.load(std::memory_order_relaxed)) {
    case RowBlockKernel::kSgemm:
      return true;
    case RowBlockKernel::kPrimitive:
      return false;
    case RowBlockKernel::kAuto:
      break;
  }
  return MallocKeepsFreedPages();
}

// A single f32 matmul with a few rows (n >= 4m: a batch times a weight
// matrix). Such a product runs as dnnl_sgemm over blocks of columns: each
// block reads all of the small lhs and its share of the weights, where a split
// by rows reads all the weights on every thread (mlp_b32's 32x784x1024 at 2
// threads: 0.63 -> 0.45 ms for the whole model). Others split by rows, each
// block a single-threaded dnnl_sgemm when malloc keeps the pages of its
// packing buffers (MallocKeepsFreedPages: encoder_b8s128 at 2 threads 0.97x),
// else oneDNN's primitive.
bool IsWideF32(const MatmulShape& s, ElementType lhs_type, ElementType rhs_type,
               ElementType out_type) {
  return IsF32Matrix(s, lhs_type, rhs_type, out_type) && 4 * s.m <= s.n;
}

// Columns [begin, end) of an f32 matmul of batch 1 on an OpenMP team of
// `threads` (1: the calling thread alone).
absl::Status SgemmColumns(const MatmulShape& s, const void* lhs, const void* rhs, void* out,
                          int64_t begin, int64_t end, int threads = 1) {
  // Row-major leading dimensions of the whole operands (transposed ones are
  // stored [k,m] and [n,k]).
  const int64_t lda = s.transpose_lhs ? s.m : s.k, ldb = s.transpose_rhs ? s.k : s.n;
  const float* b = static_cast<const float*>(rhs) + (s.transpose_rhs ? begin * s.k : begin);
  return onednn::SgemmBlock(s.transpose_lhs, s.transpose_rhs, s.m, end - begin, s.k,
                            static_cast<const float*>(lhs), lda, b, ldb,
                            static_cast<float*>(out) + begin, s.n, threads);
}

// Rows [begin, end) of an f32 matmul of batch 1 on the calling thread.
absl::Status SgemmRows(const MatmulShape& s, const void* lhs, const void* rhs, void* out,
                       int64_t begin, int64_t end) {
  const int64_t lda = s.transpose_lhs ? s.m : s.k, ldb = s.transpose_rhs ? s.k : s.n;
  const float* a = static_cast<const float*>(lhs) + (s.transpose_lhs ? begin : begin * s.k);
  return onednn::SgemmBlock(s.transpose_lhs, s.transpose_rhs, end - begin, s.n, s.k, a, lda,
                            static_cast<const float*>(rhs), ldb,
                            static_cast<float*>(out) + begin * s.n, s.n);
}

// A wide f32 product of 28 to 32 rows times weights past L2, or of 12 to 32
// times weights of 64 MiB or more (skinny_sgemm.h),
// run on one thread or, with the caller's threads, as one block of columns
// each (where it would otherwise be dnnl_sgemm calls: not a team's product).
bool UsesSkinnySgemm(const MatmulShape& s, ElementType lhs_type, ElementType rhs_type,
                     ElementType out_type, int threads, const HostParallelism& parallelism) {
  const int64_t weights = s.k * s.n;
  const bool rows = (s.m >= kSkinnySgemmMinRows && weights >= kSkinnySgemmMinWeights) ||
                    (s.m >= kSkinnySgemmMinRowsLargeWeights && weights >= kSkinnySgemmLargeWeights);
  return IsWideF32(s, lhs_type, rhs_type, out_type) && rows && s.m <= kSkinnySgemmMaxRows &&
         !s.transpose_rhs && (threads == 1 || parallelism.run) &&
         !IsTeamSgemm(s, lhs_type, rhs_type, out_type, threads) && SkinnySgemmAvailable();
}

// On `threads` of the caller's (one block of columns each), or on the calling
// thread when there are fewer than two or no `parallelism.run`. Any f32
// product of batch 1 and 1 to 32 rows, weights not stored transposed;
// Unimplemented for others (a forced kSkinny).
absl::Status SkinnyMatmul(const MatmulShape& s, ElementType lhs_type, ElementType rhs_type,
                          ElementType out_type, const void* lhs, const void* rhs, void* out,
                          int threads, const HostParallelism& parallelism) {
  if (!IsF32Matrix(s, lhs_type, rhs_type, out_type) || s.transpose_rhs ||
      s.m > kSkinnySgemmMaxRows || s.k == 0) {
    return Unimplemented("skinny sgemm: runs f32 products of batch 1, at most ",
                         kSkinnySgemmMaxRows, " rows and k > 0, weights stored [k,n]");
  }
  auto columns = [&](int64_t begin, int64_t end) {
    return SkinnySgemm(s.transpose_lhs, s.m, end - begin, s.k, static_cast<const float*>(lhs),
                       s.transpose_lhs ? s.m : s.k, static_cast<const float*>(rhs) + begin, s.n,
                       static_cast<float*>(out) + begin, s.n);
  };
  const int64_t parts = parallelism.run ? std::clamp<int64_t>(threads, 1, s.n) : 1;
  if (parts == 1) return columns(0, s.n);
  return RunParts(
      parallelism, parts,
      [&](int64_t part) { return columns(s.n * part / parts, s.n * (part + 1) / parts); },
      "matmul: out of memory");
}

// One single-threaded oneDNN call per block on the caller's threads: blocks
// of columns for a wide f32 matmul (SgemmColumns), of rows or columns for an
// f32 one whose lhs is stored transposed, else of batches (or of rows, when
// the lhs is not transposed: its rows and the result's are then contiguous).
// Unimplemented (no kernel for the types) when any block is; nullopt when the
// shape does not split.
std::optional<absl::Status> SplitOneDnnMatmul(const MatmulShape& s, ElementType lhs_type,
                                              const void* lhs, ElementType rhs_type,
                                              const void* rhs, ElementType out_type, void* out,
                                              const HostParallelism& parallelism) {
  const double flops = MatmulFlops(s);
  if (!parallelism.run || parallelism.threads < 2 || flops < kParallelMatmulFlops) {
    return std::nullopt;
  }
  const bool by_batch = s.batch >= parallelism.threads;
  // dnnl_sgemm blocks with leading dimensions: a wide f32 product by columns
  // (see IsWideF32); one whose lhs is stored transposed ([k,m]: a weight
  // gradient xT.dy), which has no contiguous block of rows for the primitive
  // and unsplit runs on an OpenMP team beside the pool (adam_mlp_train_step's
  // 784x64x512 at 2 threads 0.36 ms, 0.30 on one), along the larger of m and
  // n so that each thread reads its share of the larger operand -- the latter
  // only where malloc keeps a thread's freed pages (SgemmRowBlocks), as for
  // row blocks.
  const bool wide = IsWideF32(s, lhs_type, rhs_type, out_type);
  const bool transposed_lhs =
      s.transpose_lhs && IsF32Matrix(s, lhs_type, rhs_type, out_type) && SgemmRowBlocks();
  if (!by_batch && (wide || transposed_lhs)) {
    const bool by_rows = !wide && s.m >= s.n;
    const int64_t extent = by_rows ? s.m : s.n, parts = parallelism.threads;
    if (extent < 2 * parts) return std::nullopt;
    return RunParts(
        parallelism, parts,
        [&](int64_t part) {
          const int64_t begin = extent * part / parts, end = extent * (part + 1) / parts;
          return by_rows ? SgemmRows(s, lhs, rhs, out, begin, end)
                         : SgemmColumns(s, lhs, rhs, out, begin, end);
        },
        "matmul: out of memory");
  }
  const int64_t extent = by_batch ? s.batch : s.m;
  if (!by_batch && (s.batch != 1 || s.transpose_lhs || s.m < 2 * parallelism.threads)) {
    return std::nullopt;
  }
  const int64_t parts = std::min<int64_t>(parallelism.threads, extent);
  const bool sgemm_rows =
      !by_batch && IsF32Matrix(s, lhs_type, rhs_type, out_type) && SgemmRowBlocks();
  const int lhs_bytes = ElementByteWidth(lhs_type), rhs_bytes = ElementByteWidth(rhs_type);
  const int out_bytes = ElementByteWidth(out_type);
  return RunParts(
      parallelism, parts,
      [&](int64_t part) {
        const int64_t begin = extent * part / parts, end = extent * (part + 1) / parts;
        MatmulShape block = s;
        const auto* a = static_cast<const uint8_t*>(lhs);
        const auto* b = static_cast<const uint8_t*>(rhs);
        auto* c = static_cast<uint8_t*>(out);
        if (by_batch) {
          block.batch = end - begin;
          a += begin * s.m * s.k * lhs_bytes;
          b += begin * s.k * s.n * rhs_bytes;
          c += begin * s.m * s.n * out_bytes;
        } else {
          block.m = end - begin;
          a += begin * s.k * lhs_bytes;
          c += begin * s.n * out_bytes;
          if (sgemm_rows) return SgemmRows(s, lhs, rhs, out, begin, end);
        }
        return onednn::Matmul(block, lhs_type, a, rhs_type, b, out_type, c, /*max_threads=*/1);
      },
      "matmul: out of memory");
}

}  // namespace

bool MallocKeepsFreedPages() {
  static const bool tcmalloc = MallocExtension_GetNumericProperty != nullptr;
  return tcmalloc;
}

void SetRowBlockKernelForTesting(RowBlockKernel kernel) {
  row_block_kernel.store(kernel, std::memory_order_relaxed);
}

bool IsTeamSgemm(const MatmulShape& shape, ElementType lhs_type, ElementType rhs_type,
                 ElementType out_type, int threads) {
  return threads > 1 && IsF32Matrix(shape, lhs_type, rhs_type, out_type) &&
         MatmulFlops(shape) >= kTeamSgemmFlops;
}

absl::Status Matmul(const MatmulShape& shape, ElementType lhs_type, const void* lhs,
                    ElementType rhs_type, const void* rhs, ElementType out_type, void* out,
                    MatmulBackend backend, MatmulBackend* used,
                    const HostParallelism& parallelism) {
  RETURN_IF_ERROR(CheckShape(shape));
  const int64_t out_count = shape.batch * shape.m * shape.n;
  if (out_count == 0) {
    if (used != nullptr) *used = MatmulBackend::kLoops;
    return absl::OkStatus();
  }
  // oneDNN's s32 sum of 8-bit products cannot overflow below 2^31 / 2^15.
  const bool int8 = IsIntegerType(lhs_type);
  const bool onednn_fits = shape.k > 0 && (!int8 || shape.k <= (int64_t{1} << 16));
  // The threads this call may use: the runtime's, else an OpenMP team's.
  const double flops = MatmulFlops(shape);
  const int threads = flops < kParallelMatmulFlops ? 1
                      : parallelism.run            ? parallelism.threads
                                                   : HostThreads();
  if (backend == MatmulBackend::kSkinny ||
      (backend == MatmulBackend::kAuto &&
       UsesSkinnySgemm(shape, lhs_type, rhs_type, out_type, threads, parallelism))) {
    const absl::Status status =
        SkinnyMatmul(shape, lhs_type, rhs_type, out_type, lhs, rhs, out, threads, parallelism);
    if (status.ok() && used != nullptr) *used = MatmulBackend::kSkinny;
    return status;
  }
  if (backend == MatmulBackend::kAuto || backend == MatmulBackend::kOneDnn) {
    absl::Status status = Unimplemented("oneDNN: k = ", shape.k, " is outside the range it runs");
    if (onednn_fits) {
      // One dnnl_sgemm (on a team of `threads`): small f32 products, where
      // the primitive's per-call costs dominate (lstm_scan's 16x128x512 steps:
      // the program 0.74x), large ones, where its brgemm is slower (2048^3
      // 0.91x, 3072^3 0.54-0.65x), wide ones on one thread, and on one thread
      // those of kOneThreadSgemmFlops or more when malloc keeps freed pages
      // (SgemmRowBlocks: sgemm's packing buffers are not faulted in again on
      // every call): there the primitive was slower (medians of 8 alternated
      // processes, 2026-11-30: 1024^3 12.3 ms against 11.2, encoder_b8s128
      // at 1 thread 39.6 against 37.0), while on 512^3 it was faster (1.46
      // against 1.56, 5 processes). Under glibc's malloc sgemm ran 1024^3 in
      // 10 or 16 ms from process to process: the primitive stays.
      const bool one_thread_sgemm =
          threads == 1 && (IsWideF32(shape, lhs_type, rhs_type, out_type) ||
                           (flops >= kOneThreadSgemmFlops && SgemmRowBlocks()));
      const bool one_sgemm =
          IsF32Matrix(shape, lhs_type, rhs_type, out_type) &&
          (flops < kParallelMatmulFlops || flops >= kTeamSgemmFlops || one_thread_sgemm);
      if (one_sgemm) {
        status = SgemmColumns(shape, lhs, rhs, out, 0, shape.n, threads);  // one block: all of it
      } else if (std::optional<absl::Status> split = SplitOneDnnMatmul(
                     shape, lhs_type, lhs, rhs_type, rhs, out_type, out, parallelism);
                 split) {
        status = *split;
      } else {
        status = onednn::Matmul(shape, lhs_type, lhs, rhs_type, rhs, out_type, out);
      }
    }
    if (status.ok() || backend == MatmulBackend::kOneDnn || !absl::IsUnimplemented(status)) {
      if (status.ok() && used != nullptr) *used = MatmulBackend::kOneDnn;
      return status;
    }
  }
  const bool blas_types = lhs_type == rhs_type && lhs_type == out_type &&
                          (lhs_type == ElementType::kF64 || IsComplexType(lhs_type));
  if (backend == MatmulBackend::kBlas || (backend == MatmulBackend::kAuto && blas_types)) {
    absl::Status status = Blas(shape, lhs_type, lhs, rhs_type, rhs, out_type, out);
    if (status.ok() || backend == MatmulBackend::kBlas) {
      if (status.ok() && used != nullptr) *used = MatmulBackend::kBlas;
      return status;
    }
  }
  if (used != nullptr) *used = MatmulBackend::kLoops;
  WithComputationType(lhs_type, rhs_type, out_type, [&](auto zero) {
    LoopMatmul<decltype(zero)>(shape, lhs_type, lhs, rhs_type, rhs, out_type, out);
  });
  return absl::OkStatus();
}

}  // namespace xlite::hostlib
