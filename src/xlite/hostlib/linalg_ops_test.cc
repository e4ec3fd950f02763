// hostlib::Cholesky and hostlib::TriangularSolve on row-major batches,
// checked by reconstruction (l·lᴴ = a, op(a)·x = b) for the four types and
// every flag, and the interpreter's NaN pattern for a matrix that is not
// positive definite.
#include "xlite/hostlib/linalg_ops.h"

#include <cmath>
#include <complex>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "xlite/hostlib/lapack.h"

namespace xlite::hostlib {
namespace {
namespace XLITE_UNITY_ID {

using cd = std::complex<double>;

template <typename T>
constexpr ElementType TypeOf() {
  if constexpr (std::is_same_v<T, float>) return ElementType::kF32;
  if constexpr (std::is_same_v<T, double>) return ElementType::kF64;
  if constexpr (std::is_same_v<T, std::complex<float>>) return ElementType::kC64;
  return ElementType::kC128;
}

template <typename T>
T Random(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  if constexpr (kIsComplex<T>) {
    return T(u(rng), u(rng));
  } else {
    return T(u(rng));
  }
}

template <typename T>
class LinalgOpsTest : public ::testing::Test {
 protected:
  static double Tol() { return std::is_same_v<RealOf<T>, float> ? 1e-4 : 1e-11; }
};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(LinalgOpsTest, Types);

TYPED_TEST(LinalgOpsTest, CholeskyReconstructsAndZerosTheOtherTriangle) {
  using T = TypeParam;
  const int64_t n = 5, batch = 2;
  std::mt19937 rng(9);
  // a = g·gᴴ + n·I, Hermitian positive definite; the unread triangle is junk.
  std::vector<T> a(batch * n * n);
  std::vector<cd> full(batch * n * n);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<T> g(n * n);
    for (T& v : g) v = Random<T>(rng);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        cd s = i == j ? cd(n) : cd(0);
        for (int64_t k = 0; k < n; ++k) s += cd(g[i * n + k]) * std::conj(cd(g[j * n + k]));
        full[b * n * n + i * n + j] = s;
      }
    }
  }
  for (bool lower : {true, false}) {
    for (int64_t i = 0; i < batch * n * n; ++i) {
      const int64_t r = (i / n) % n, c = i % n;
      const bool read = lower ? c <= r : c >= r;
      if constexpr (kIsComplex<T>) {
        a[i] = read ? T(full[i]) : T(99, 99);
      } else {
        a[i] = read ? T(full[i].real()) : T(99);
      }
    }
    std::vector<T> out(a.size());
    ASSERT_TRUE(Cholesky(TypeOf<T>(), lower, batch, n, a.data(), out.data()).ok());
    for (int64_t b = 0; b < batch; ++b) {
      const T* f = out.data() + b * n * n;
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          if (lower ? j > i : j < i) {
            EXPECT_EQ(f[i * n + j], T(0));
          }
          cd s = 0;  // (l·lᴴ) or (uᴴ·u)
          for (int64_t k = 0; k < n; ++k) {
            s += lower ? cd(f[i * n + k]) * std::conj(cd(f[j * n + k]))
                       : std::conj(cd(f[k * n + i])) * cd(f[k * n + j]);
          }
          EXPECT_NEAR(std::abs(s - full[b * n * n + i * n + j]), 0, this->Tol() * n) << lower;
        }
      }
    }
    // In place gives the same.
    std::vector<T> in_place = a;
    ASSERT_TRUE(Cholesky(TypeOf<T>(), lower, batch, n, in_place.data(), in_place.data()).ok());
    EXPECT_EQ(in_place, out);
  }
}

TYPED_TEST(LinalgOpsTest, CholeskyOfANonPositiveMatrixSpreadsNan) {
  using T = TypeParam;
  // Leading 1x1 minor fine, 2x2 not: column 0 is exact, columns 1.. NaN.
  const std::vector<T> a = {T(4), T(0), T(0), T(2), T(0.5), T(0), T(1), T(3), T(5)};
  for (bool in_place : {false, true}) {
    std::vector<T> out = in_place ? a : std::vector<T>(9);
    ASSERT_TRUE(
        Cholesky(TypeOf<T>(), true, 1, 3, a.data(), in_place ? out.data() : out.data()).ok());
    if (in_place) {
      out = a;
      ASSERT_TRUE(Cholesky(TypeOf<T>(), true, 1, 3, out.data(), out.data()).ok());
    }
    EXPECT_EQ(out[0], T(2));
    EXPECT_EQ(out[3], T(1));
    EXPECT_EQ(out[6], T(0.5));
    EXPECT_TRUE(std::isnan(std::real(out[4])));
    EXPECT_TRUE(std::isnan(std::real(out[7])));
    EXPECT_TRUE(std::isnan(std::real(out[8])));
    EXPECT_EQ(out[1], T(0));
  }
}

TYPED_TEST(LinalgOpsTest, TriangularSolveEveryFlag) {
  using T = TypeParam;
  std::mt19937 rng(4);
  const int64_t batch = 2, m = 4, n = 3;
  for (bool left : {true, false}) {
    const int64_t k = left ? m : n;
    for (bool lower : {true, false}) {
      for (bool unit : {false, true}) {
        for (TriangularTranspose t :
             {TriangularTranspose::kNoTranspose, TriangularTranspose::kTranspose,
              TriangularTranspose::kAdjoint}) {
          SCOPED_TRACE(absl::StrCat(left, lower, unit, static_cast<int>(t)));
          std::vector<T> a(batch * k * k), b(batch * m * n), x(batch * m * n);
          for (T& v : a) v = Random<T>(rng);
          for (int64_t bi = 0; bi < batch; ++bi) {
            for (int64_t i = 0; i < k; ++i) a[bi * k * k + i * k + i] += T(3);  // well conditioned
          }
          for (T& v : b) v = Random<T>(rng);
          ASSERT_TRUE(TriangularSolve(TypeOf<T>(), left, lower, unit, t, batch, m, n, a.data(),
                                      b.data(), x.data())
                          .ok());
          for (int64_t bi = 0; bi < batch; ++bi) {
            // op(a) from the read triangle.
            auto op = [&](int64_t i, int64_t j) {
              const int64_t r = t == TriangularTranspose::kNoTranspose ? i : j;
              const int64_t c = t == TriangularTranspose::kNoTranspose ? j : i;
              const bool in = lower ? c <= r : c >= r;
              cd v = !in ? cd(0) : (r == c && unit ? cd(1) : cd(a[bi * k * k + r * k + c]));
              return t == TriangularTranspose::kAdjoint ? std::conj(v) : v;
            };
            for (int64_t i = 0; i < m; ++i) {
              for (int64_t j = 0; j < n; ++j) {
                cd s = 0;
                for (int64_t q = 0; q < k; ++q) {
                  s += left ? op(i, q) * cd(x[bi * m * n + q * n + j])
                            : cd(x[bi * m * n + i * n + q]) * op(q, j);
                }
                EXPECT_NEAR(std::abs(s - cd(b[bi * m * n + i * n + j])), 0, this->Tol() * 10);
              }
            }
          }
        }
      }
    }
  }
}

TEST(LinalgOps, UnsupportedTypesAndNegativeDimensions) {
  float x = 0;
  EXPECT_TRUE(absl::IsUnimplemented(Cholesky(ElementType::kBF16, true, 1, 1, &x, &x)));
  EXPECT_TRUE(absl::IsUnimplemented(TriangularSolve(ElementType::kF16, true, true, false,
                                                    TriangularTranspose::kNoTranspose, 1, 1, 1, &x,
                                                    &x, &x)));
  EXPECT_TRUE(absl::IsInvalidArgument(Cholesky(ElementType::kF32, true, 1, -1, &x, &x)));
  EXPECT_TRUE(absl::IsInvalidArgument(TriangularSolve(ElementType::kF32, true, true, false,
                                                      TriangularTranspose::kNoTranspose, -1, 1, 1,
                                                      &x, &x, &x)));
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::hostlib
