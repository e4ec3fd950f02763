#include "xlite/hostlib/fft.h"

#include <complex>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/strings/str_join.h"
#include "kissfft.hh"
#include "xlite/support/status.h"

namespace xlite::hostlib {
namespace {

// Transforms every line along `axis` of the row-major array `x` (dims),
// in place; scales by 1/n when inverse.
template <typename Real>
void TransformAxis(std::vector<std::complex<Real>>& x, const std::vector<int64_t>& dims,
                   size_t axis, bool inverse) {
  const int64_t n = dims[axis];
  if (n <= 1) return;  // a length-1 DFT (and its 1/1 scaling) is the identity
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= dims[d];
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  const kissfft<Real> plan(static_cast<size_t>(n), inverse);
  std::vector<std::complex<Real>> out(n);
  const Real scale = inverse ? Real(1) / static_cast<Real>(n) : Real(1);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      std::complex<Real>* line = x.data() + o * n * inner + i;
      // kissfft reads with a stride; it writes contiguously.
      plan.transform(line, out.data(), 0, 1, static_cast<size_t>(inner));
      for (int64_t k = 0; k < n; ++k) line[k * inner] = inverse ? out[k] * scale : out[k];
    }
  }
}

// Keeps the first `keep` entries along the last axis.
template <typename Real>
std::vector<std::complex<Real>> TruncateLast(const std::vector<std::complex<Real>>& x, int64_t rows,
                                             int64_t n, int64_t keep) {
  std::vector<std::complex<Real>> y(rows * keep);
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(y.data() + r * keep, x.data() + r * n, keep * sizeof(std::complex<Real>));
  }
  return y;
}

template <typename Real>
void RunFft(FftType type, int64_t batch, absl::Span<const int64_t> length, const void* input,
            void* output) {
  using C = std::complex<Real>;
  std::vector<int64_t> dims = {batch};
  dims.insert(dims.end(), length.begin(), length.end());
  const size_t last = dims.size() - 1;
  const int64_t n = dims[last];
  int64_t rows = 1;  // lines along the last axis
  for (size_t d = 0; d < last; ++d) rows *= dims[d];
  const int64_t half = n / 2 + 1;
  switch (type) {
    case FftType::kFft:
    case FftType::kIfft: {
      std::vector<C> x(rows * n);
      std::memcpy(x.data(), input, x.size() * sizeof(C));
      for (size_t axis = last; axis >= 1; --axis) {
        TransformAxis<Real>(x, dims, axis, type == FftType::kIfft);
      }
      std::memcpy(output, x.data(), x.size() * sizeof(C));
      return;
    }
    case FftType::kRfft: {
      std::vector<C> x(rows * n);
      const Real* in = static_cast<const Real*>(input);
      for (size_t i = 0; i < x.size(); ++i) x[i] = C(in[i], 0);
      TransformAxis<Real>(x, dims, last, false);
      x = TruncateLast(x, rows, n, half);
      dims[last] = half;
      for (size_t axis = last - 1; axis >= 1; --axis) TransformAxis<Real>(x, dims, axis, false);
      std::memcpy(output, x.data(), x.size() * sizeof(C));
      return;
    }
    case FftType::kIrfft: {
      std::vector<int64_t> half_dims = dims;
      half_dims[last] = half;
      std::vector<C> h(rows * half);
      std::memcpy(h.data(), input, h.size() * sizeof(C));
      for (size_t axis = last - 1; axis >= 1; --axis) TransformAxis<Real>(h, half_dims, axis, true);
      // The full spectrum of each line: x[j] = conj(x[n - j]) past the half.
      std::vector<C> x(rows * n);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < n; ++j) {
          x[r * n + j] = j < half ? h[r * half + j] : std::conj(h[r * half + (n - j)]);
        }
      }
      TransformAxis<Real>(x, dims, last, true);
      Real* out = static_cast<Real*>(output);
      for (size_t i = 0; i < x.size(); ++i) out[i] = x[i].real();
      return;
    }
  }
}

}  // namespace

absl::Status Fft(FftType type, ElementType precision, int64_t batch,
                 absl::Span<const int64_t> fft_length, const void* input, void* output) {
  if (precision != ElementType::kF32 && precision != ElementType::kF64) {
    return InvalidArgument("fft: precision must be f32 or f64, got ", ElementTypeName(precision));
  }
  if (fft_length.empty() || fft_length.size() > 3) {
    return InvalidArgument("fft: transforms 1 to 3 dimensions, got fft_length {",
                           absl::StrJoin(fft_length, ","), "}");
  }
  if (batch < 0) return InvalidArgument("fft: negative batch ", batch);
  int64_t count = batch;
  for (int64_t n : fft_length) {
    if (n < 0) {
      return InvalidArgument("fft: negative fft_length {", absl::StrJoin(fft_length, ","), "}");
    }
    if (n != 0 && count > std::numeric_limits<int64_t>::max() / 2 / n) {
      return InvalidArgument("fft: too many elements");
    }
    count *= n;
  }
  if (count == 0) return absl::OkStatus();  // nothing to write
  if (precision == ElementType::kF32) {
    RunFft<float>(type, batch, fft_length, input, output);
  } else {
    RunFft<double>(type, batch, fft_length, input, output);
  }
  return absl::OkStatus();
}

}  // namespace xlite::hostlib
