// hostlib::Fft against a direct DFT computed here in long double, for every
// transform type, both precisions, 1 to 3 dimensions and lengths with large
// prime factors.
#include "xlite/hostlib/fft.h"

#include <cmath>
#include <complex>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

namespace xlite::hostlib {
namespace {
namespace XLITE_UNITY_ID {

using Wide = std::complex<long double>;

// DFT along `axis` of a row-major array, keeping the first `keep` outputs.
std::vector<Wide> Dft(const std::vector<Wide>& x, std::vector<int64_t>& dims, size_t axis,
                      bool inverse, int64_t keep) {
  const int64_t n = dims[axis];
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= dims[d];
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  std::vector<Wide> y(outer * keep * inner);
  const long double pi = 3.141592653589793238462643383279502884L;
  std::vector<Wide> twiddle(n);
  for (int64_t m = 0; m < n; ++m) {
    const long double angle = (inverse ? 2 : -2) * pi * m / n;
    twiddle[m] = Wide(std::cos(angle), std::sin(angle));
  }
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t k = 0; k < keep; ++k) {
        Wide sum = 0;
        for (int64_t j = 0; j < n; ++j) sum += x[(o * n + j) * inner + i] * twiddle[(j * k) % n];
        y[(o * keep + k) * inner + i] = inverse ? sum / static_cast<long double>(n) : sum;
      }
    }
  }
  dims[axis] = keep;
  return y;
}

template <typename Real>
void Check(FftType type, int64_t batch, std::vector<int64_t> length) {
  SCOPED_TRACE(absl::StrCat("type ", static_cast<int>(type), " batch ", batch, " length {",
                            absl::StrJoin(length, ","), "} ", sizeof(Real) == 4 ? "f32" : "f64"));
  using C = std::complex<Real>;
  std::vector<int64_t> dims = {batch};
  dims.insert(dims.end(), length.begin(), length.end());
  const size_t last = dims.size() - 1;
  const int64_t n = dims[last], half = n / 2 + 1;
  std::vector<int64_t> in_dims = dims;
  if (type == FftType::kIrfft) in_dims[last] = half;
  int64_t in_count = 1;
  for (int64_t d : in_dims) in_count *= d;
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<Wide> x(in_count);
  for (Wide& v : x) v = type == FftType::kRfft ? Wide(u(rng), 0) : Wide(u(rng), u(rng));
  // Expected, by the definition.
  std::vector<Wide> want = x;
  std::vector<int64_t> want_dims = in_dims;
  if (type == FftType::kFft || type == FftType::kIfft) {
    for (size_t a = last; a >= 1; --a) {
      want = Dft(want, want_dims, a, type == FftType::kIfft, want_dims[a]);
    }
  } else if (type == FftType::kRfft) {
    want = Dft(want, want_dims, last, false, half);
    for (size_t a = last - 1; a >= 1; --a) want = Dft(want, want_dims, a, false, want_dims[a]);
  } else {
    for (size_t a = last - 1; a >= 1; --a) want = Dft(want, want_dims, a, true, want_dims[a]);
    int64_t rows = want.size() / half;
    std::vector<Wide> full(rows * n);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < n; ++j) {
        full[r * n + j] = j < half ? want[r * half + j] : std::conj(want[r * half + n - j]);
      }
    }
    want_dims[last] = n;
    want = Dft(full, want_dims, last, true, n);
  }
  // Run.
  const bool real_in = type == FftType::kRfft, real_out = type == FftType::kIrfft;
  std::vector<Real> real_input(in_count);
  std::vector<C> complex_input(in_count);
  for (int64_t i = 0; i < in_count; ++i) {
    real_input[i] = static_cast<Real>(x[i].real());
    complex_input[i] = C(static_cast<Real>(x[i].real()), static_cast<Real>(x[i].imag()));
  }
  std::vector<Real> real_output(want.size());
  std::vector<C> complex_output(want.size());
  const ElementType precision = sizeof(Real) == 4 ? ElementType::kF32 : ElementType::kF64;
  absl::Status status =
      Fft(type, precision, batch, length,
          real_in ? static_cast<const void*>(real_input.data()) : complex_input.data(),
          real_out ? static_cast<void*>(real_output.data()) : complex_output.data());
  ASSERT_TRUE(status.ok()) << status;
  double scale = 1;  // the size of the transform's values
  for (int64_t l : length) scale *= type == FftType::kFft || type == FftType::kRfft ? l : 1;
  const double eps = sizeof(Real) == 4 ? 2e-6 : 4e-15;
  for (size_t i = 0; i < want.size(); ++i) {
    const std::complex<double> got =
        real_out ? std::complex<double>(real_output[i]) : std::complex<double>(complex_output[i]);
    // IRFFT's output is the real part (the imaginary parts of the DC and
    // Nyquist inputs only reach the imaginary part).
    const std::complex<double> expected(static_cast<double>(want[i].real()),
                                        real_out ? 0.0 : static_cast<double>(want[i].imag()));
    ASSERT_LE(std::abs(got - expected), eps * std::sqrt(scale) * 20) << "at " << i;
  }
}

TEST(Fft, MatchesTheDefinition) {
  const std::vector<std::vector<int64_t>> lengths = {
      {1}, {2}, {8}, {12}, {17}, {97}, {1024}, {4, 6}, {5, 3}, {2, 3, 4}, {3, 1, 5}};
  for (FftType type : {FftType::kFft, FftType::kIfft, FftType::kRfft, FftType::kIrfft}) {
    for (const std::vector<int64_t>& length : lengths) {
      Check<float>(type, 3, length);
      Check<double>(type, 2, length);
    }
  }
}

TEST(Fft, InPlaceFftAndEmptyInputs) {
  std::vector<std::complex<float>> x = {{1, 0}, {2, 0}, {3, 0}, {4, 0}};
  const int64_t n[] = {4};
  ASSERT_TRUE(Fft(FftType::kFft, ElementType::kF32, 1, n, x.data(), x.data()).ok());
  EXPECT_EQ(x[0], std::complex<float>(10, 0));
  EXPECT_EQ(x[2], std::complex<float>(-2, 0));
  const int64_t zero[] = {0};
  EXPECT_TRUE(Fft(FftType::kRfft, ElementType::kF64, 3, zero, nullptr, nullptr).ok());
  EXPECT_TRUE(Fft(FftType::kFft, ElementType::kF32, 0, n, nullptr, nullptr).ok());
}

TEST(Fft, Errors) {
  float x = 0;
  const int64_t n[] = {4};
  const int64_t four[] = {2, 2, 2, 2};
  const int64_t negative[] = {-1};
  EXPECT_TRUE(absl::IsInvalidArgument(Fft(FftType::kFft, ElementType::kBF16, 1, n, &x, &x)));
  EXPECT_TRUE(absl::IsInvalidArgument(Fft(FftType::kFft, ElementType::kF32, 1, four, &x, &x)));
  EXPECT_TRUE(absl::IsInvalidArgument(Fft(FftType::kFft, ElementType::kF32, 1, {}, &x, &x)));
  EXPECT_TRUE(absl::IsInvalidArgument(Fft(FftType::kFft, ElementType::kF32, 1, negative, &x, &x)));
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::hostlib
