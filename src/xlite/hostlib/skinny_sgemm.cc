#include "xlite/hostlib/skinny_sgemm.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>
#include <new>

#include "xlite/support/status.h"

// The kernel is compiled for AVX-512F alone (the rest of the library stays
// portable); SkinnySgemmAvailable guards every call.
#define XLITE_AVX512 __attribute__((target("avx512f")))

namespace xlite::hostlib {
namespace {

std::atomic<int64_t> calls{0};

}  // namespace

int64_t SkinnySgemmCalls() { return calls.load(std::memory_order_relaxed); }

#if defined(__x86_64__)
namespace {

constexpr int kLanes = 16;
// Rows of B per pass over the columns (see the header): 32 rows of 4 KiB
// weights stay in L2 while the next block of columns reads the rest of their
// cache lines; 64 and 128 were slower on mlp_b32's products.
constexpr int64_t kRowBlock = 32;
// Columns per pass over all of k, so that the result's transposed block and
// the thread's scratch stay at most 16384 x 32 floats (2 MiB) however wide the
// product (an LM head's 256000 columns: 32 MiB, read and written again for
// every block of rows). Narrower passes were slower: 31x2304x9216 in passes of
// 2048 columns 13.1 against 11.7 ms; 16384 changed nothing measured (28 and
// 16 rows times 65536 columns, gemma2's FFN, 12x4096x4096).
constexpr int64_t kColumnChunk = 16384;
// The cache line two lines along the row of B the tile reads: the next tiles'.
constexpr int64_t kPrefetchFloats = 32;

// Accumulators: kColumns columns of B times kVectors vectors of 16 rows.
// 24 of the 32 vector registers, with the lhs's vectors and a broadcast.
template <int kVectors>
constexpr int kFullTile = 24 / kVectors;

// ct[j] (one column of the result, kVectors·16 rows) += Σ over kc rows of B:
// at[k] (kVectors·16 rows of the transposed lhs) · b[k][j].
template <int kVectors, int kColumns>
XLITE_AVX512 inline void Tile(int64_t kc, const float* at, const float* b, int64_t ldb, float* ct,
                              bool first) {
  constexpr int kWidth = kVectors * kLanes;
  __m512 acc[kColumns][kVectors];
#pragma GCC unroll 24
  for (int j = 0; j < kColumns; ++j) {
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v) {
      acc[j][v] = first ? _mm512_setzero_ps() : _mm512_load_ps(ct + j * kWidth + v * kLanes);
    }
  }
  for (int64_t k = 0; k < kc; ++k, b += ldb, at += kWidth) {
    _mm_prefetch(reinterpret_cast<const char*>(b + kPrefetchFloats), _MM_HINT_T0);
    __m512 a[kVectors];
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v) a[v] = _mm512_load_ps(at + v * kLanes);
#pragma GCC unroll 24
    for (int j = 0; j < kColumns; ++j) {
      const __m512 weight = _mm512_set1_ps(b[j]);
#pragma GCC unroll 2
      for (int v = 0; v < kVectors; ++v) acc[j][v] = _mm512_fmadd_ps(a[v], weight, acc[j][v]);
    }
  }
#pragma GCC unroll 24
  for (int j = 0; j < kColumns; ++j) {
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v) _mm512_store_ps(ct + j * kWidth + v * kLanes, acc[j][v]);
  }
}

XLITE_AVX512 inline __m512 UnpackLoPd(__m512 x, __m512 y) {
  return _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(x), _mm512_castps_pd(y)));
}
XLITE_AVX512 inline __m512 UnpackHiPd(__m512 x, __m512 y) {
  return _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(x), _mm512_castps_pd(y)));
}

// r[i][j] -> r[j][i] for a 16x16 block.
XLITE_AVX512 void Transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // u[4i + j]: in each 128-bit lane L, column 4L + j of rows 4i..4i+3.
  for (int i = 0; i < 4; ++i) {
    u[4 * i] = UnpackLoPd(t[4 * i], t[4 * i + 2]);
    u[4 * i + 1] = UnpackHiPd(t[4 * i], t[4 * i + 2]);
    u[4 * i + 2] = UnpackLoPd(t[4 * i + 1], t[4 * i + 3]);
    u[4 * i + 3] = UnpackHiPd(t[4 * i + 1], t[4 * i + 3]);
  }
  for (int j = 0; j < 4; ++j) {
    const __m512 even_lo = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88);
    const __m512 odd_lo = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xdd);
    const __m512 even_hi = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88);
    const __m512 odd_hi = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xdd);
    r[j] = _mm512_shuffle_f32x4(even_lo, even_hi, 0x88);
    r[4 + j] = _mm512_shuffle_f32x4(odd_lo, odd_hi, 0x88);
    r[8 + j] = _mm512_shuffle_f32x4(even_lo, even_hi, 0xdd);
    r[12 + j] = _mm512_shuffle_f32x4(odd_lo, odd_hi, 0xdd);
  }
}

XLITE_AVX512 inline __mmask16 FirstLanes(int64_t count) {
  return count >= kLanes ? __mmask16(0xffff) : __mmask16((1u << count) - 1);
}

// dst's rows [0, dst_rows), each `dst_lanes` wide (at most 16), from the
// transpose of src's rows [0, rows) x columns [0, columns) (zero past them):
// a 16x16 block moved through registers, masked at the edges.
XLITE_AVX512 void TransposeBlock(const float* src, int64_t src_stride, int64_t rows,
                                 int64_t columns, float* dst, int64_t dst_stride, int64_t dst_rows,
                                 int64_t dst_lanes) {
  const __mmask16 in = FirstLanes(columns), out = FirstLanes(dst_lanes);
  __m512 block[kLanes];
  for (int i = 0; i < kLanes; ++i) {
    block[i] = i < rows ? _mm512_maskz_loadu_ps(in, src + i * src_stride) : _mm512_setzero_ps();
  }
  Transpose16(block);
  for (int64_t i = 0; i < std::min<int64_t>(kLanes, dst_rows); ++i) {
    _mm512_mask_storeu_ps(dst + i * dst_stride, out, block[i]);
  }
}

// at[k][0, width) = op(A)[0, m) x [k], zero past m.
template <int kVectors>
XLITE_AVX512 void PackLhs(bool transpose_lhs, int64_t m, int64_t k, const float* a, int64_t lda,
                          float* at) {
  constexpr int kWidth = kVectors * kLanes;
  for (int v = 0; v < kVectors; ++v) {
    const int64_t rows = std::max<int64_t>(m - v * kLanes, 0);  // of this vector
    if (transpose_lhs) {  // A stored [k, m]: its rows are already the vectors
      for (int64_t kk = 0; kk < k; ++kk) {
        _mm512_store_ps(at + kk * kWidth + v * kLanes,
                        _mm512_maskz_loadu_ps(FirstLanes(rows), a + kk * lda + v * kLanes));
      }
      continue;
    }
    for (int64_t k0 = 0; k0 < k; k0 += kLanes) {
      TransposeBlock(a + v * kLanes * lda + k0, lda, rows, k - k0, at + k0 * kWidth + v * kLanes,
                     kWidth, k - k0, kLanes);
    }
  }
}

// C[0, m) x [0, n) = the transpose of ct[n][width).
template <int kVectors>
XLITE_AVX512 void UnpackResult(int64_t m, int64_t n, const float* ct, float* c, int64_t ldc) {
  constexpr int kWidth = kVectors * kLanes;
  for (int v = 0; v < kVectors && v * kLanes < m; ++v) {
    for (int64_t n0 = 0; n0 < n; n0 += kLanes) {
      TransposeBlock(ct + n0 * kWidth + v * kLanes, kWidth, n - n0, kLanes,
                     c + v * kLanes * ldc + n0, ldc, m - v * kLanes, n - n0);
    }
  }
}

template <int kVectors>
XLITE_AVX512 void Product(bool transpose_lhs, int64_t m, int64_t n, int64_t k, const float* a,
                          int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                          float* at, float* ct) {
  constexpr int kWidth = kVectors * kLanes, kColumns = kFullTile<kVectors>;
  PackLhs<kVectors>(transpose_lhs, m, k, a, lda, at);
  for (int64_t n0 = 0; n0 < n; n0 += kColumnChunk) {
    const int64_t columns = std::min(kColumnChunk, n - n0);
    for (int64_t k0 = 0; k0 < k; k0 += kRowBlock) {
      const int64_t kc = std::min(kRowBlock, k - k0);
      const float* at_block = at + k0 * kWidth;
      const float* b_block = b + k0 * ldb + n0;
      const bool first = k0 == 0;
      int64_t j = 0;
      for (; j + kColumns <= columns; j += kColumns) {
        Tile<kVectors, kColumns>(kc, at_block, b_block + j, ldb, ct + j * kWidth, first);
      }
      for (; j + 4 <= columns; j += 4) {
        Tile<kVectors, 4>(kc, at_block, b_block + j, ldb, ct + j * kWidth, first);
      }
      for (; j < columns; ++j) {
        Tile<kVectors, 1>(kc, at_block, b_block + j, ldb, ct + j * kWidth, first);
      }
    }
    UnpackResult<kVectors>(m, columns, ct, c + n0, ldc);
  }
}

struct AlignedFree {
  void operator()(float* p) const { ::operator delete[](p, std::align_val_t(64)); }
};

// Grow-only scratch of the calling thread.
float* Scratch(size_t floats) {
  thread_local std::unique_ptr<float[], AlignedFree> buffer;
  thread_local size_t capacity = 0;
  if (floats > capacity) {
    buffer.reset(static_cast<float*>(
        ::operator new[](floats * sizeof(float), std::align_val_t(64), std::nothrow)));
    capacity = buffer == nullptr ? 0 : floats;
  }
  return buffer.get();
}

}  // namespace

bool SkinnySgemmAvailable() {
  static const bool available = __builtin_cpu_supports("avx512f");
  return available;
}

absl::Status SkinnySgemm(bool transpose_lhs, int64_t m, int64_t n, int64_t k, const float* a,
                         int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  if (m < 1 || m > kSkinnySgemmMaxRows || n < 1 || k < 1 || lda < (transpose_lhs ? m : k) ||
      ldb < n || ldc < n) {
    return InvalidArgument("skinny sgemm: [", m, ",", k, "] x [", k, ",", n, "] with lda ", lda,
                           ", ldb ", ldb, ", ldc ", ldc, " is not a product it runs (1 to ",
                           kSkinnySgemmMaxRows, " rows)");
  }
  if (!SkinnySgemmAvailable()) return Unimplemented("skinny sgemm: this CPU has no AVX-512F");
  // One vector of rows serves m <= 16 (Matmul: 12 to 16 rows times large weights).
  const int vectors = m > kLanes ? 2 : 1;
  const size_t width = static_cast<size_t>(vectors) * kLanes;
  float* scratch =
      Scratch((static_cast<size_t>(k) + static_cast<size_t>(std::min(n, kColumnChunk))) * width);
  if (scratch == nullptr) return absl::ResourceExhaustedError("skinny sgemm: out of memory");
  calls.fetch_add(1, std::memory_order_relaxed);
  float* at = scratch;
  float* ct = scratch + static_cast<size_t>(k) * width;
  if (vectors == 2) {
    Product<2>(transpose_lhs, m, n, k, a, lda, b, ldb, c, ldc, at, ct);
  } else {
    Product<1>(transpose_lhs, m, n, k, a, lda, b, ldb, c, ldc, at, ct);
  }
  return absl::OkStatus();
}

#else  // not x86-64: no kernel

bool SkinnySgemmAvailable() { return false; }

absl::Status SkinnySgemm(bool, int64_t, int64_t, int64_t, const float*, int64_t, const float*,
                         int64_t, float*, int64_t) {
  return Unimplemented("skinny sgemm: an x86-64 kernel (AVX-512F)");
}

#endif

}  // namespace xlite::hostlib
