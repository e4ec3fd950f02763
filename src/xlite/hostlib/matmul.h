// Batched matrix product of row-major operands: out[b] = lhs[b] · rhs[b] with
// lhs [batch, m, k] (stored [batch, k, m] when transpose_lhs), rhs
// [batch, k, n] (stored [batch, n, k] when transpose_rhs) and out
// [batch, m, n] -- the canonical dots that the dot-decomposer pass leaves
// (src/xlite/passes/dot_decomposer.h). The libraries read a transposed
// operand in place (oneDNN's strides, BLAS's trans flags).
//
// Element types follow HLO's dot: lhs, rhs and out may differ (the result
// type is the dot's, e.g. preferred_element_type). Arithmetic, as XLA:CPU
// computes and the interpreter checks:
// - integers and pred only: products and sums wrap (64-bit, then truncated
//   to out's width), exactly XLA's wrapping arithmetic in the result type;
// - a complex type anywhere: complex, in double precision if any type is f64
//   c128 or an integer type, else in single precision;
// - otherwise real: in f32 when every type is f32 or a narrower float (f16,
//   bf16 and the f8/f4 types are widened to f32, as XLA:CPU upcasts them),
//   else in double; the result is rounded once to out's type (floats to
//   integers saturate, NaN to 0).
// precision_config is not an input: every dot is computed at least at the
// precision its types ask for.
//
// Backends: skinny_sgemm.h's kernel for a wide f32 product of a few rows
// with large weights (28-32 rows past L2, 12-32 with 64 MiB; on AVX-512),
// oneDNN matmul for f32, bf16 and f16 (with an f32 or same-type result) and
// s8/u8 x s8 -> s32 where this CPU has kernels for them; BLAS
// (?gemm) for f64, c64 and c128; hostlib's own loops for the rest. Buffers
// may not overlap.
#ifndef XLITE_HOSTLIB_MATMUL_H_
#define XLITE_HOSTLIB_MATMUL_H_

#include <cstdint>

#include "absl/status/status.h"
#include "xlite/hostlib/element_type.h"
#include "xlite/hostlib/threads.h"

namespace xlite::hostlib {

struct MatmulShape {
  int64_t batch = 1;
  int64_t m = 0;
  int64_t k = 0;
  int64_t n = 0;
  bool transpose_lhs = false;  // lhs stored [batch, k, m]
  bool transpose_rhs = false;  // rhs stored [batch, n, k]
};

enum class MatmulBackend {
  kAuto,    // the fastest that supports the types (see above)
  kOneDnn,  // Unimplemented where oneDNN has no kernel for the types here
  kBlas,    // f32, f64, c64, c128 with one type throughout; else Unimplemented
  kLoops,   // hostlib's own loops: every type
  kSkinny,  // skinny_sgemm.h's kernel: f32, batch 1, <= 32 rows, rhs [k,n]; else Unimplemented
};

// `used` (when given) is set to the backend that ran.
//
// With `parallelism` (the runtime's threads), oneDNN matmuls of at least
// kParallelMatmulFlops run as one single-threaded oneDNN call per block of
// batches or rows (a wide f32 one: of columns; when MallocKeepsFreedPages,
// an f32 one with a transposed lhs: of the larger of rows and columns) on
// those threads, so that no OpenMP team runs beside the runtime's pool
// (libgomp's workers spin after each call, taking the cores the pool's next
// kernel runs on). Smaller ones run on one thread; without `parallelism`,
// oneDNN's OpenMP team takes the host budget (threads.h). f32 products of
// batch 1 below kParallelMatmulFlops or of kTeamSgemmFlops or more, and on
// one thread wide ones and (when MallocKeepsFreedPages) those of
// kOneThreadSgemmFlops or more, are one dnnl_sgemm call instead (the large
// ones on an OpenMP team of the budget, which the thunk marks): oneDNN 2.6's
// matmul primitive costs more per call on small ones, and is slower than
// sgemm on large ones on this CPU family (bench/RESULTS.md). What does not
// split still runs on a team of the budget beside the pool: a transposed
// lhs of another type (or of f32 under glibc's malloc), a batch between 1
// and the thread count, fewer rows or columns than two per thread.
absl::Status Matmul(const MatmulShape& shape, ElementType lhs_type, const void* lhs,
                    ElementType rhs_type, const void* rhs, ElementType out_type, void* out,
                    MatmulBackend backend = MatmulBackend::kAuto, MatmulBackend* used = nullptr,
                    const HostParallelism& parallelism = {});

// 2·batch·m·k·n.
inline double MatmulFlops(const MatmulShape& s) {
  return 2.0 * static_cast<double>(s.batch) * static_cast<double>(s.m) * static_cast<double>(s.k) *
         static_cast<double>(s.n);
}

// Below this many FLOPs (MatmulFlops) a matmul runs on one thread: one
// core finishes in microseconds, less than a team's fork and join (an LSTM
// step's 16x128x512: 19 us on one thread, 32 us on two).
inline constexpr double kParallelMatmulFlops = 8e6;

// Products of at least this many FLOPs (a 2048^3 one) run as one dnnl_sgemm
// with an OpenMP team of the whole budget when every type is f32 and the
// batch is 1 (see IsTeamSgemm).
inline constexpr double kTeamSgemmFlops = 2.0 * 2048 * 2048 * 2048;
// On one thread, f32 products of this many FLOPs or more (1024x512x512, the
// encoder's smallest projection) are one dnnl_sgemm when malloc keeps freed
// pages; smaller ones (512^3) run faster on the matmul primitive.
inline constexpr double kOneThreadSgemmFlops = 2.0 * 1024 * 512 * 512;

// True when Matmul runs `shape` as one dnnl_sgemm with an OpenMP team of
// `threads` > 1: a caller that schedules several host calls at once (the
// runtime's concurrent executor) keeps such calls apart, as it does
// convolutions.
bool IsTeamSgemm(const MatmulShape& shape, ElementType lhs_type, ElementType rhs_type,
                 ElementType out_type, int threads);

// Whether the process's malloc keeps a thread's freed pages for its next
// allocation: true under tcmalloc (linked into the CLI and the benchmarks, or
// preloaded), false under glibc's malloc, which hands a worker thread's freed
// top of arena back to the kernel. dnnl_sgemm allocates its packing buffers on
// every call, so only then do row blocks of an f32 split run as single-threaded
// dnnl_sgemm calls (else oneDNN's primitive, whose scratchpad is allocated
// once): at 2 threads 1024^3 took 16 ms as sgemm blocks under glibc, 5.7-5.9
// under tcmalloc against 5.9 on the primitive.
bool MallocKeepsFreedPages();

// The row blocks' kernel: kAuto as above; tests force either.
enum class RowBlockKernel { kAuto, kSgemm, kPrimitive };
void SetRowBlockKernelForTesting(RowBlockKernel kernel);

}  // namespace xlite::hostlib

#endif  // XLITE_HOSTLIB_MATMUL_H_
