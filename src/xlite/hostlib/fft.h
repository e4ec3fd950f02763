// FFTs with XLA's fft semantics, on kissfft's mixed-radix C++ template
// (Debian's libkissfft-dev, BSD-3-Clause; header-only, so one code path for
// f32 and f64). Transforms the last `fft_length.size()` (1 to 3) dimensions
// of `batch` row-major arrays:
//   FFT, IFFT: complex [batch, L...] -> complex [batch, L...]; IFFT scales by
//              1/n per axis.
//   RFFT:      real [batch, L...] -> complex [batch, L..., L_last/2+1] (the
//              last axis first, then the others).
//   IRFFT:     complex [batch, L..., L_last/2+1] -> real [batch, L...]: the
//              other axes inverted first, then the last one as a Hermitian
//              spectrum (the imaginary parts of the DC and Nyquist bins do
//              not contribute, as in numpy/pocketfft), scaled by 1/n per axis.
// `precision` is kF32 (f32/c64 buffers) or kF64 (f64/c128). input and output
// may be the same buffer.
#ifndef XLITE_HOSTLIB_FFT_H_
#define XLITE_HOSTLIB_FFT_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "xlite/hostlib/element_type.h"

namespace xlite::hostlib {

enum class FftType { kFft, kIfft, kRfft, kIrfft };

absl::Status Fft(FftType type, ElementType precision, int64_t batch,
                 absl::Span<const int64_t> fft_length, const void* input, void* output);

}  // namespace xlite::hostlib

#endif  // XLITE_HOSTLIB_FFT_H_
