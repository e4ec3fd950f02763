// hostlib's calls into oneDNN (Debian's libdnnl 2.6, OpenMP runtime). Only
// onednn.cc includes dnnl.hpp (a heavy header). Internal to hostlib: callers
// use matmul.h and convolution.h, which fall back to other backends when
// these return Unimplemented (no oneDNN kernel for the types on this CPU).
// Primitives are cached by shape, types and team size, so a repeated call pays
// only for the computation. Both may be called from any number of threads at
// once: each call runs on its own thread's scratchpad.
#ifndef XLITE_HOSTLIB_ONEDNN_H_
#define XLITE_HOSTLIB_ONEDNN_H_

#include "absl/status/status.h"
#include "xlite/hostlib/convolution.h"
#include "xlite/hostlib/element_type.h"
#include "xlite/hostlib/matmul.h"

namespace xlite::hostlib::onednn {

// `max_threads` > 0 caps the OpenMP team (1: none); 0: the host budget, one
// thread below kParallelMatmulFlops.
absl::Status Matmul(const MatmulShape& shape, ElementType lhs_type, const void* lhs,
                    ElementType rhs_type, const void* rhs, ElementType out_type, void* out,
                    int max_threads = 0);

// C[m,n] = op(A)·op(B) on f32, row-major with leading dimensions (a
// transposed operand stored [k,m] / [n,k]), on an OpenMP team of at most
// `threads` (1: the calling thread alone, as one block of a matmul split
// across the caller's threads). dnnl_sgemm, whose leading dimensions let a
// block be any rows or columns of the whole.
absl::Status SgemmBlock(bool transpose_lhs, bool transpose_rhs, int64_t m, int64_t n, int64_t k,
                        const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                        int64_t ldc, int threads = 1);

// How many SgemmBlock calls this process made (tests check which kernel a
// product went to).
int64_t SgemmBlockCalls();

// `rhs` already reversed where the window says so; no lhs dilation, one
// batch group (the caller checks).
absl::Status Convolution(const ConvolutionShape& shape, ElementType lhs_type, const void* lhs,
                         ElementType rhs_type, const void* rhs, ElementType out_type, void* out);

}  // namespace xlite::hostlib::onednn

#endif  // XLITE_HOSTLIB_ONEDNN_H_
