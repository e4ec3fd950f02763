// An f32 matrix product with few rows and large weights (a batch of 28 to 32
// times a weight matrix that does not fit L2, or of 12 to 32 times one of 64
// MiB or more: C[m,n] = A[m,k]·B[k,n]), on AVX-512.
//
// Why not oneDNN's sgemm: with so few rows each weight is used m times, so
// the product is bound by reading B, and sgemm first copies (packs) B into
// its own layout on every call. This kernel reads B in place, once: it keeps
// the lhs transposed (k rows of 32 values, two vectors) and, for each row of
// B, multiplies those vectors by each of 12 columns' weights broadcast, so 24
// vector accumulators hold a 32x12 block of the result transposed. Rows of B
// are read in blocks of 32 so that the cache lines a block of columns leaves
// half-read are still in cache for the next block.
//
// Where it runs (medians of 200-500 calls beside dnnl_sgemm in one process,
// one core of the Intel AMX host, bench/RESULTS.md 2026-11-30): m = 32 with
// k x n of 784x1024 0.86-0.97x sgemm's time, 1024x1024 0.73-0.87x, 2048^2
// 0.82x, 768x3072 0.70x, 4096^2 0.56x; below 28 rows a vector of the lhs is
// mostly padding (24 rows: 1.09-1.18x), and with weights that fit L2 sgemm's
// packed copy is read from L1 and wins (512^2 1.12x, 64x1024 1.49x).
//
// Products are summed in order of k, one fused multiply-add each, in f32.
#ifndef XLITE_HOSTLIB_SKINNY_SGEMM_H_
#define XLITE_HOSTLIB_SKINNY_SGEMM_H_

#include <cstdint>

#include "absl/status/status.h"

namespace xlite::hostlib {

// Rows and weights (k·n floats: 3 MiB, past a core's 2 MiB L2) it takes.
inline constexpr int64_t kSkinnySgemmMinRows = 28;
inline constexpr int64_t kSkinnySgemmMaxRows = 32;
inline constexpr int64_t kSkinnySgemmMinWeights = 768 * 1024;
// With weights of 64 MiB or more (an LLM's layers) sgemm slows down further
// at few rows (12 to 24 rows times 4096^2, 2048x8192 or 2304x9216 floats:
// 25-76 GFLOP/s on one thread) and the kernel, its one-vector form partly
// padding, wins from 12 rows: through `xlite run`, 0.51-0.54x sgemm's time on
// one thread, 0.5-0.85x on two. At 8 rows it lost on two threads (4096^2
// 1.21x, 2048x8192 1.32x), at 2048^2 (16 MiB) on one (1.43x).
inline constexpr int64_t kSkinnySgemmMinRowsLargeWeights = 12;
inline constexpr int64_t kSkinnySgemmLargeWeights = 16 * 1024 * 1024;

// Whether this CPU runs the kernel (x86-64 with AVX-512F).
bool SkinnySgemmAvailable();

// C[m,n] = op(A)·B on f32 with row-major leading dimensions, A stored [k,m]
// when transpose_lhs; any 1 <= m <= kSkinnySgemmMaxRows, k and n >= 1 (the
// row and weight bounds above are Matmul's choice). On the calling thread;
// its scratch (the transposed lhs and a block of the result transposed,
// (k + min(n, 16384))·32 floats) stays with the thread. InvalidArgument for
// other shapes or leading dimensions below a row's length, Unimplemented
// without AVX-512F, ResourceExhausted when the scratch cannot be allocated.
absl::Status SkinnySgemm(bool transpose_lhs, int64_t m, int64_t n, int64_t k, const float* a,
                         int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc);

// How many SkinnySgemm calls this process made (tests check which kernel a
// product went to).
int64_t SkinnySgemmCalls();

}  // namespace xlite::hostlib

#endif  // XLITE_HOSTLIB_SKINNY_SGEMM_H_
