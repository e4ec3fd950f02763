// hostlib's LAPACK kernels, each checked by reconstructing its input another
// way (P·L·U = A, L·Lᴴ = A, Q·R = A, A·V = V·diag(w), U·Σ·Vᴴ = A, Z·T·Zᴴ = A,
// ...), for all four types, with batches, and their info outputs.
#include "xlite/hostlib/lapack.h"

#include <complex>
#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "xlite/hostlib/lapack_test_util.h"

namespace xlite::hostlib {
namespace {
namespace XLITE_UNITY_ID {

using lapack_test::Adjoint;
using lapack_test::cd;
using lapack_test::FromColumnMajor;
using lapack_test::HessenbergForm;
using lapack_test::Identity;
using lapack_test::Matrix;
using lapack_test::MaxDiff;
using lapack_test::Mul;
using lapack_test::Random;
using lapack_test::RandomSpd;
using lapack_test::ReflectorProduct;
using lapack_test::ToColumnMajor;
using lapack_test::UnpackHessenberg;

template <typename T>
class LapackTest : public ::testing::Test {
 protected:
  static constexpr bool kComplex = kIsComplex<T>;
  // Reconstruction tolerance for matrices of size <= 6 with entries O(1).
  static double Tol() { return std::is_same_v<RealOf<T>, float> ? 2e-4 : 1e-11; }

  // `batch` random matrices stored one after another, column-major.
  static std::vector<T> Batch(const std::vector<Matrix>& ms) {
    std::vector<T> out;
    for (const Matrix& m : ms) {
      std::vector<T> one = ToColumnMajor<T>(m);
      out.insert(out.end(), one.begin(), one.end());
    }
    return out;
  }
  static Matrix At(const std::vector<T>& data, int64_t index, int64_t rows, int64_t cols) {
    return FromColumnMajor(data.data() + index * rows * cols, rows, cols);
  }
  // A general matrix kept away from singularity: random + shift·I.
  static Matrix General(int64_t rows, int64_t cols, uint32_t seed, double shift = 0) {
    Matrix m = Random(rows, cols, kComplex, seed);
    for (int64_t i = 0; i < std::min(rows, cols); ++i) m(i, i) += shift;
    return m;
  }
};

using LapackTypes = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(LapackTest, LapackTypes);

TYPED_TEST(LapackTest, GetrfReconstructsPLU) {
  using T = TypeParam;
  for (auto [m, n] : {std::pair<int64_t, int64_t>{4, 4}, {5, 3}, {3, 5}}) {
    const std::vector<Matrix> inputs = {this->General(m, n, 1), this->General(m, n, 2)};
    std::vector<T> a = this->Batch(inputs);
    const int64_t k = std::min(m, n);
    std::vector<int32_t> ipiv(2 * k), info(2, -7);
    ASSERT_TRUE(Getrf<T>(2, m, n, a.data(), ipiv.data(), info.data()).ok());
    for (int b = 0; b < 2; ++b) {
      EXPECT_EQ(info[b], 0);
      const Matrix lu = this->At(a, b, m, n);
      Matrix l(m, k), u(k, n);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < k; ++j) l(i, j) = i == j ? cd(1) : (i > j ? lu(i, j) : cd(0));
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = i; j < n; ++j) u(i, j) = lu(i, j);
      std::vector<int64_t> perm(m);
      for (int64_t i = 0; i < m; ++i) perm[i] = i;
      for (int64_t i = 0; i < k; ++i) {
        const int32_t p = ipiv[b * k + i];
        ASSERT_GE(p, i + 1);  // 1-based, and LAPACK only swaps with rows below
        ASSERT_LE(p, m);
        std::swap(perm[i], perm[p - 1]);
      }
      Matrix pa(m, n);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) pa(i, j) = inputs[b](perm[i], j);
      EXPECT_LT(MaxDiff(Mul(l, u), pa), this->Tol()) << m << "x" << n << " batch " << b;
    }
  }
}

TYPED_TEST(LapackTest, GetrfReportsSingular) {
  using T = TypeParam;
  Matrix singular = this->General(3, 3, 3);
  for (int64_t i = 0; i < 3; ++i) singular(i, 1) = 0;  // a zero column
  std::vector<T> a = this->Batch({this->General(3, 3, 4, 3), singular});
  std::vector<int32_t> ipiv(6), info(2);
  ASSERT_TRUE(Getrf<T>(2, 3, 3, a.data(), ipiv.data(), info.data()).ok());
  EXPECT_EQ(info[0], 0);
  EXPECT_EQ(info[1], 2);  // U(2,2) is exactly zero
}

TYPED_TEST(LapackTest, PotrfReconstructsBothTriangles) {
  using T = TypeParam;
  const std::vector<Matrix> inputs = {RandomSpd(4, this->kComplex, 5),
                                      RandomSpd(4, this->kComplex, 6)};
  for (UpLo uplo : {UpLo::kLower, UpLo::kUpper}) {
    std::vector<T> a = this->Batch(inputs);
    std::vector<int32_t> info(2, -1);
    ASSERT_TRUE(Potrf<T>(uplo, 2, 4, a.data(), info.data()).ok());
    for (int b = 0; b < 2; ++b) {
      EXPECT_EQ(info[b], 0);
      Matrix f = this->At(a, b, 4, 4);
      for (int64_t i = 0; i < 4; ++i)
        for (int64_t j = 0; j < 4; ++j)
          if (uplo == UpLo::kLower ? j > i : j < i) f(i, j) = 0;  // LAPACK leaves it as input
      const Matrix product = uplo == UpLo::kLower ? Mul(f, Adjoint(f)) : Mul(Adjoint(f), f);
      EXPECT_LT(MaxDiff(product, inputs[b]), this->Tol() * 10);
    }
  }
}

TYPED_TEST(LapackTest, PotrfReportsNotPositiveDefinite) {
  using T = TypeParam;
  Matrix bad = RandomSpd(3, this->kComplex, 7);
  bad(2, 2) = -100;
  std::vector<T> a = this->Batch({RandomSpd(3, this->kComplex, 8), bad});
  std::vector<int32_t> info(2);
  ASSERT_TRUE(Potrf<T>(UpLo::kLower, 2, 3, a.data(), info.data()).ok());
  EXPECT_EQ(info[0], 0);
  EXPECT_EQ(info[1], 3);
}

// The reflectors geqrf leaves below the diagonal of `qr`.
std::vector<std::vector<cd>> QrReflectors(const Matrix& qr, int64_t k) {
  std::vector<std::vector<cd>> vs;
  for (int64_t i = 0; i < k; ++i) {
    std::vector<cd> v(qr.rows);
    v[i] = 1;
    for (int64_t r = i + 1; r < qr.rows; ++r) v[r] = qr(r, i);
    vs.push_back(v);
  }
  return vs;
}

TYPED_TEST(LapackTest, GeqrfOrgqrOrmqr) {
  using T = TypeParam;
  const int64_t m = 5, n = 3;
  const std::vector<Matrix> inputs = {this->General(m, n, 9), this->General(m, n, 10)};
  std::vector<T> a = this->Batch(inputs), tau(2 * n);
  ASSERT_TRUE(Geqrf<T>(2, m, n, a.data(), tau.data()).ok());
  const std::vector<T> factored = a;
  ASSERT_TRUE(Orgqr<T>(2, m, n, n, a.data(), tau.data()).ok());
  for (int b = 0; b < 2; ++b) {
    const Matrix qr = this->At(factored, b, m, n);
    Matrix r(n, n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i; j < n; ++j) r(i, j) = qr(i, j);
    const Matrix q = this->At(a, b, m, n);
    EXPECT_LT(MaxDiff(Mul(q, r), inputs[b]), this->Tol() * 10);
    EXPECT_LT(MaxDiff(Mul(Adjoint(q), q), Identity(n)), this->Tol() * 10);

    // ormqr applies the full m×m Q = H(0)·H(1)·H(2) to C.
    std::vector<cd> taus;
    for (int64_t i = 0; i < n; ++i) taus.push_back(cd(tau[b * n + i]));
    const Matrix full_q = ReflectorProduct(QrReflectors(qr, n), taus);
    const Matrix c = Random(m, 2, this->kComplex, 11);
    for (bool transpose : {false, true}) {
      std::vector<T> out = ToColumnMajor<T>(c);
      ASSERT_TRUE(Ormqr<T>(true, transpose, 1, m, 2, n, factored.data() + b * m * n, m, n,
                           tau.data() + b * n, out.data())
                      .ok());
      const Matrix want = Mul(transpose ? Adjoint(full_q) : full_q, c);
      EXPECT_LT(MaxDiff(FromColumnMajor(out.data(), m, 2), want), this->Tol() * 10);
    }
    const Matrix c_right = Random(2, m, this->kComplex, 12);
    std::vector<T> out = ToColumnMajor<T>(c_right);
    ASSERT_TRUE(Ormqr<T>(false, false, 1, 2, m, n, factored.data() + b * m * n, m, n,
                         tau.data() + b * n, out.data())
                    .ok());
    EXPECT_LT(MaxDiff(FromColumnMajor(out.data(), 2, m), Mul(c_right, full_q)), this->Tol() * 10);
  }
}

TYPED_TEST(LapackTest, Geqp3PivotsColumns) {
  using T = TypeParam;
  const int64_t m = 4, n = 4;
  const Matrix input = this->General(m, n, 13);
  std::vector<T> a = ToColumnMajor<T>(input), tau(n);
  std::vector<int32_t> jpvt(n, 0);
  ASSERT_TRUE(Geqp3<T>(1, m, n, a.data(), jpvt.data(), tau.data()).ok());
  Matrix r(n, n);
  const Matrix qr = FromColumnMajor(a.data(), m, n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i; j < n; ++j) r(i, j) = qr(i, j);
  for (int64_t i = 0; i + 1 < n; ++i) EXPECT_GE(std::abs(r(i, i)), std::abs(r(i + 1, i + 1)));
  ASSERT_TRUE(Orgqr<T>(1, m, n, n, a.data(), tau.data()).ok());
  Matrix permuted(m, n);
  for (int64_t j = 0; j < n; ++j) {
    ASSERT_GE(jpvt[j], 1);
    for (int64_t i = 0; i < m; ++i) permuted(i, j) = input(i, jpvt[j] - 1);
  }
  EXPECT_LT(MaxDiff(Mul(FromColumnMajor(a.data(), m, n), r), permuted), this->Tol() * 10);
}

TYPED_TEST(LapackTest, SyevdEigenpairs) {
  using T = TypeParam;
  using R = RealOf<T>;
  const int64_t n = 4;
  const std::vector<Matrix> inputs = {RandomSpd(n, this->kComplex, 14),
                                      RandomSpd(n, this->kComplex, 15)};
  for (UpLo uplo : {UpLo::kLower, UpLo::kUpper}) {
    std::vector<T> a = this->Batch(inputs), values_only = a;
    std::vector<R> w(2 * n), w_only(2 * n);
    std::vector<int32_t> info(2, -1);
    ASSERT_TRUE(Syevd<T>(EigMode::kVectors, uplo, 2, n, a.data(), w.data(), info.data()).ok());
    ASSERT_TRUE(
        Syevd<T>(EigMode::kNoVectors, uplo, 2, n, values_only.data(), w_only.data(), info.data())
            .ok());
    for (int b = 0; b < 2; ++b) {
      EXPECT_EQ(info[b], 0);
      const Matrix v = this->At(a, b, n, n);
      Matrix vw = v;
      for (int64_t j = 0; j < n; ++j) {
        if (j > 0) {
          EXPECT_LE(w[b * n + j - 1], w[b * n + j]);
        }
        EXPECT_NEAR(w[b * n + j], w_only[b * n + j], this->Tol() * 100);
        for (int64_t i = 0; i < n; ++i) vw(i, j) *= static_cast<double>(w[b * n + j]);
      }
      EXPECT_LT(MaxDiff(Mul(inputs[b], v), vw), this->Tol() * 100);
      EXPECT_LT(MaxDiff(Mul(Adjoint(v), v), Identity(n)), this->Tol() * 10);
    }
  }
}

template <typename T>
void CheckSvd(bool divide_and_conquer, int64_t m, int64_t n, double tol) {
  const bool complex = kIsComplex<T>;
  const int64_t k = std::min(m, n);
  const std::vector<Matrix> inputs = {Random(m, n, complex, 16), Random(m, n, complex, 17)};
  for (SvdMode mode : {SvdMode::kFull, SvdMode::kMin, SvdMode::kNone}) {
    const int64_t u_cols = mode == SvdMode::kMin ? k : m;
    const int64_t vt_rows = mode == SvdMode::kMin ? k : n;
    std::vector<T> a;
    for (const Matrix& x : inputs) {
      std::vector<T> one = ToColumnMajor<T>(x);
      a.insert(a.end(), one.begin(), one.end());
    }
    std::vector<RealOf<T>> s(2 * k);
    std::vector<T> u(2 * m * u_cols), vt(2 * vt_rows * n);
    std::vector<int32_t> info(2, -1);
    auto* kernel = divide_and_conquer ? &Gesdd<T> : &Gesvd<T>;
    ASSERT_TRUE(kernel(mode, 2, m, n, a.data(), s.data(), u.data(), m, u_cols, vt.data(), vt_rows,
                       n, info.data())
                    .ok());
    for (int b = 0; b < 2; ++b) {
      EXPECT_EQ(info[b], 0);
      for (int64_t i = 0; i + 1 < k; ++i) EXPECT_GE(s[b * k + i], s[b * k + i + 1]);
      if (mode == SvdMode::kNone) {
        // Σ's squares are the eigenvalues of A·Aᴴ: compare traces.
        double trace = 0, sum = 0;
        const Matrix aa = Mul(inputs[b], Adjoint(inputs[b]));
        for (int64_t i = 0; i < m; ++i) trace += aa(i, i).real();
        for (int64_t i = 0; i < k; ++i) sum += double(s[b * k + i]) * s[b * k + i];
        EXPECT_NEAR(trace, sum, tol * 100);
        continue;
      }
      const Matrix uu = FromColumnMajor(u.data() + b * m * u_cols, m, u_cols);
      const Matrix vv = FromColumnMajor(vt.data() + b * vt_rows * n, vt_rows, n);
      Matrix us(m, k), vk(k, n);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < k; ++j) us(i, j) = uu(i, j) * double(s[b * k + j]);
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < n; ++j) vk(i, j) = vv(i, j);
      EXPECT_LT(MaxDiff(Mul(us, vk), inputs[b]), tol * 10) << m << "x" << n;
      EXPECT_LT(MaxDiff(Mul(Adjoint(uu), uu), Identity(u_cols)), tol * 10);
    }
  }
}

TYPED_TEST(LapackTest, GesddAndGesvdReconstruct) {
  for (bool dc : {true, false}) {
    CheckSvd<TypeParam>(dc, 4, 3, this->Tol());
    CheckSvd<TypeParam>(dc, 3, 5, this->Tol());
  }
}

TYPED_TEST(LapackTest, GeevEigenpairs) {
  using T = TypeParam;
  using R = RealOf<T>;
  using C = std::complex<R>;
  const int64_t n = 4;
  const std::vector<Matrix> inputs = {this->General(n, n, 18), this->General(n, n, 19)};
  std::vector<T> a = this->Batch(inputs);
  std::vector<C> w(2 * n), vl(2 * n * n), vr(2 * n * n);
  std::vector<int32_t> info(2, -1);
  if constexpr (kIsComplex<T>) {
    ASSERT_TRUE(GeevComplex<T>(EigMode::kVectors, EigMode::kVectors, 2, n, a.data(), w.data(),
                               vl.data(), vr.data(), info.data())
                    .ok());
  } else {
    std::vector<R> wr(2 * n), wi(2 * n);
    ASSERT_TRUE(GeevReal<T>(EigMode::kVectors, EigMode::kVectors, 2, n, a.data(), wr.data(),
                            wi.data(), vl.data(), vr.data(), info.data())
                    .ok());
    for (int64_t i = 0; i < 2 * n; ++i) w[i] = C(wr[i], wi[i]);
  }
  EXPECT_EQ(a, this->Batch(inputs));  // geev works on a copy
  for (int b = 0; b < 2; ++b) {
    EXPECT_EQ(info[b], 0);
    const Matrix right = FromColumnMajor(vr.data() + b * n * n, n, n);
    const Matrix left = FromColumnMajor(vl.data() + b * n * n, n, n);
    Matrix right_w = right, w_left = Adjoint(left);
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t i = 0; i < n; ++i) {
        right_w(i, j) *= cd(w[b * n + j]);
        w_left(j, i) *= cd(w[b * n + j]);
      }
    }
    EXPECT_LT(MaxDiff(Mul(inputs[b], right), right_w), this->Tol() * 100);
    EXPECT_LT(MaxDiff(Mul(Adjoint(left), inputs[b]), w_left), this->Tol() * 100);
  }
}

TYPED_TEST(LapackTest, GeevRefusesNonFiniteInputLikeJaxlib) {
  using T = TypeParam;
  using R = RealOf<T>;
  using C = std::complex<R>;
  Matrix bad = this->General(3, 3, 20);
  bad(1, 1) = std::numeric_limits<double>::quiet_NaN();
  std::vector<T> a = this->Batch({this->General(3, 3, 21), bad});
  std::vector<C> w(6), vl(18), vr(18);
  std::vector<int32_t> info(2, 7);
  if constexpr (kIsComplex<T>) {
    ASSERT_TRUE(GeevComplex<T>(EigMode::kNoVectors, EigMode::kVectors, 2, 3, a.data(), w.data(),
                               vl.data(), vr.data(), info.data())
                    .ok());
  } else {
    std::vector<R> wr(6), wi(6);
    ASSERT_TRUE(GeevReal<T>(EigMode::kNoVectors, EigMode::kVectors, 2, 3, a.data(), wr.data(),
                            wi.data(), vl.data(), vr.data(), info.data())
                    .ok());
  }
  EXPECT_EQ(info[0], 0);
  EXPECT_EQ(info[1], -4);
}

TYPED_TEST(LapackTest, GeesSchurForm) {
  using T = TypeParam;
  const int64_t n = 4;
  const std::vector<Matrix> inputs = {this->General(n, n, 22), this->General(n, n, 23)};
  std::vector<T> a = this->Batch(inputs), vs(2 * n * n), w(2 * n), wi(2 * n);
  std::vector<int32_t> sdim(2, 9), info(2, -1);
  if constexpr (kIsComplex<T>) {
    ASSERT_TRUE(GeesComplex<T>(SchurMode::kVectors, SchurSort::kNoSort, 2, n, a.data(), vs.data(),
                               w.data(), sdim.data(), info.data())
                    .ok());
  } else {
    ASSERT_TRUE(GeesReal<T>(SchurMode::kVectors, SchurSort::kNoSort, 2, n, a.data(), vs.data(),
                            w.data(), wi.data(), sdim.data(), info.data())
                    .ok());
  }
  for (int b = 0; b < 2; ++b) {
    EXPECT_EQ(info[b], 0);
    EXPECT_EQ(sdim[b], 0);
    const Matrix t = this->At(a, b, n, n), z = this->At(vs, b, n, n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j + (kIsComplex<T> ? 1 : 2) <= i; ++j)
        EXPECT_EQ(t(i, j), cd(0)) << "T is not (quasi-)upper triangular at " << i << "," << j;
    EXPECT_LT(MaxDiff(Mul(Mul(z, t), Adjoint(z)), inputs[b]), this->Tol() * 100);
    EXPECT_LT(MaxDiff(Mul(Adjoint(z), z), Identity(n)), this->Tol() * 10);
  }
}

TYPED_TEST(LapackTest, GehrdHessenbergForm) {
  using T = TypeParam;
  const int64_t n = 5;
  const std::vector<Matrix> inputs = {this->General(n, n, 24), this->General(n, n, 25)};
  std::vector<T> a = this->Batch(inputs), tau(2 * (n - 1));
  std::vector<int32_t> info(2, -1);
  ASSERT_TRUE(Gehrd<T>(2, n, 1, n, a.data(), tau.data(), info.data()).ok());
  for (int b = 0; b < 2; ++b) {
    EXPECT_EQ(info[b], 0);
    std::vector<cd> taus;
    for (int64_t j = 0; j + 1 < n; ++j) taus.push_back(cd(tau[b * (n - 1) + j]));
    const HessenbergForm f = UnpackHessenberg(this->At(a, b, n, n), taus);
    EXPECT_LT(MaxDiff(Mul(Mul(f.q, f.h), Adjoint(f.q)), inputs[b]), this->Tol() * 10);
  }
}

TYPED_TEST(LapackTest, SytrdTridiagonalForm) {
  using T = TypeParam;
  using R = RealOf<T>;
  const int64_t n = 5;
  const std::vector<Matrix> inputs = {RandomSpd(n, this->kComplex, 26),
                                      RandomSpd(n, this->kComplex, 27)};
  for (UpLo uplo : {UpLo::kLower, UpLo::kUpper}) {
    std::vector<T> a = this->Batch(inputs), tau(2 * (n - 1));
    std::vector<R> d(2 * n), e(2 * (n - 1));
    std::vector<int32_t> info(2, -1);
    ASSERT_TRUE(Sytrd<T>(uplo, 2, n, a.data(), d.data(), e.data(), tau.data(), info.data()).ok());
    for (int b = 0; b < 2; ++b) {
      EXPECT_EQ(info[b], 0);
      const Matrix out = this->At(a, b, n, n);
      Matrix t(n, n);
      for (int64_t i = 0; i < n; ++i) t(i, i) = double(d[b * n + i]);
      for (int64_t i = 0; i + 1 < n; ++i) t(i + 1, i) = t(i, i + 1) = double(e[b * (n - 1) + i]);
      std::vector<std::vector<cd>> vs;
      std::vector<cd> taus;
      for (int64_t i = 0; i + 1 < n; ++i) {
        std::vector<cd> v(n);
        if (uplo == UpLo::kLower) {  // Q = H(0)…H(n-2), v = [0…0, 1, A(i+2:, i)]
          v[i + 1] = 1;
          for (int64_t r = i + 2; r < n; ++r) v[r] = out(r, i);
        } else {  // Q = H(n-2)…H(0), v = [A(0:i, i+1), 1, 0…0]
          v[i] = 1;
          for (int64_t r = 0; r < i; ++r) v[r] = out(r, i + 1);
        }
        vs.push_back(v);
        taus.push_back(cd(tau[b * (n - 1) + i]));
      }
      const Matrix q = ReflectorProduct(vs, taus, /*reverse=*/uplo == UpLo::kUpper);
      EXPECT_LT(MaxDiff(Mul(Mul(q, t), Adjoint(q)), inputs[b]), this->Tol() * 100);
    }
  }
}

TYPED_TEST(LapackTest, GtsvSolvesTridiagonal) {
  using T = TypeParam;
  const int64_t n = 5, nrhs = 2;
  const Matrix diagonals = Random(3, n, this->kComplex, 28);
  const Matrix rhs = Random(n, nrhs, this->kComplex, 29);
  std::vector<T> dl = ToColumnMajor<T>(lapack_test::Transpose(diagonals)), d, du;
  // Rows of `diagonals` are dl, d, du; make d dominant.
  d.assign(dl.begin() + n, dl.begin() + 2 * n);
  du.assign(dl.begin() + 2 * n, dl.end());
  dl.resize(n);
  for (T& x : d) x += T(4);
  std::vector<T> b = ToColumnMajor<T>(rhs);
  const std::vector<T> dl0 = dl, d0 = d, du0 = du;
  std::vector<int32_t> info(1, -1);
  ASSERT_TRUE(Gtsv<T>(1, n, nrhs, dl.data(), d.data(), du.data(), b.data(), info.data()).ok());
  EXPECT_EQ(info[0], 0);
  Matrix a(n, n);
  for (int64_t i = 0; i < n; ++i) {
    a(i, i) = cd(d0[i]);
    if (i > 0) a(i, i - 1) = cd(dl0[i]);
    if (i + 1 < n) a(i, i + 1) = cd(du0[i]);
  }
  EXPECT_LT(MaxDiff(Mul(a, FromColumnMajor(b.data(), n, nrhs)), rhs), this->Tol() * 10);

  std::vector<T> zeros(n, T(0)), b2 = ToColumnMajor<T>(rhs);
  std::vector<T> zl = zeros, zd = zeros, zu = zeros;
  ASSERT_TRUE(Gtsv<T>(1, n, nrhs, zl.data(), zd.data(), zu.data(), b2.data(), info.data()).ok());
  EXPECT_GT(info[0], 0);
}

TYPED_TEST(LapackTest, TrsmSolvesEveryVariant) {
  using T = TypeParam;
  const int64_t m = 4, n = 3;
  const Matrix b = Random(m, n, this->kComplex, 30);
  for (Side side : {Side::kLeft, Side::kRight}) {
    const int64_t k = side == Side::kLeft ? m : n;
    const Matrix a = this->General(k, k, 31, 3);
    for (UpLo uplo : {UpLo::kLower, UpLo::kUpper}) {
      for (Transpose trans : {Transpose::kNoTrans, Transpose::kTrans, Transpose::kConjTrans}) {
        for (Diag diag : {Diag::kNonUnit, Diag::kUnit}) {
          Matrix tri(k, k);
          for (int64_t i = 0; i < k; ++i)
            for (int64_t j = 0; j < k; ++j) {
              if (i == j) tri(i, j) = diag == Diag::kUnit ? cd(1) : a(i, j);
              if (uplo == UpLo::kLower ? i > j : i < j) tri(i, j) = a(i, j);
            }
          Matrix op = tri;
          if (trans == Transpose::kTrans) op = lapack_test::Transpose(tri);
          if (trans == Transpose::kConjTrans) op = Adjoint(tri);
          std::vector<T> av = ToColumnMajor<T>(a), x = ToColumnMajor<T>(b);
          ASSERT_TRUE(Trsm<T>(side, uplo, trans, diag, T(2), 1, m, n, av.data(), x.data()).ok());
          const Matrix xm = FromColumnMajor(x.data(), m, n);
          Matrix two_b = b;
          for (cd& v : two_b.v) v *= 2.0;
          const Matrix lhs = side == Side::kLeft ? Mul(op, xm) : Mul(xm, op);
          EXPECT_LT(MaxDiff(lhs, two_b), this->Tol() * 10)
              << static_cast<char>(side) << static_cast<char>(uplo) << static_cast<char>(trans)
              << static_cast<char>(diag);
        }
      }
    }
  }
}

TEST(LapackErrors, RejectsWhatLapackWouldStopOn) {
  std::vector<float> a(16), tau(4);
  std::vector<int32_t> info(1);
  EXPECT_EQ(Orgqr<float>(1, 2, 3, 1, a.data(), tau.data()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Gehrd<float>(1, 4, 0, 4, a.data(), tau.data(), info.data()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Gehrd<float>(1, 4, 1, 5, a.data(), tau.data(), info.data()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Trsm<float>(static_cast<Side>('X'), UpLo::kLower, Transpose::kNoTrans, Diag::kUnit,
                        1.0f, 1, 2, 2, a.data(), a.data())
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Getrf<float>(1, int64_t{1} << 31, 1, a.data(), info.data(), info.data()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Ormqr<float>(true, false, 1, 4, 2, 3, a.data(), 3, 3, tau.data(), a.data()).code(),
            absl::StatusCode::kInvalidArgument);
  std::vector<float> s(4), u(16), vt(16);
  const absl::Status overwrite = Gesdd<float>(SvdMode::kOverwrite, 1, 2, 2, a.data(), s.data(),
                                              u.data(), 2, 2, vt.data(), 2, 2, info.data());
  EXPECT_EQ(overwrite.code(), absl::StatusCode::kUnimplemented) << overwrite;
  EXPECT_EQ(Gesvd<float>(SvdMode::kFull, 1, 3, 2, a.data(), s.data(), u.data(), 3, 2, vt.data(), 2,
                         2, info.data())
                .code(),
            absl::StatusCode::kInvalidArgument);
  std::vector<int32_t> sdim(1);
  EXPECT_EQ(GeesReal<float>(SchurMode::kVectors, SchurSort::kSort, 1, 2, a.data(), u.data(),
                            s.data(), vt.data(), sdim.data(), info.data())
                .code(),
            absl::StatusCode::kUnimplemented);
}

TEST(LapackEmpty, ZeroSizedMatricesAreNoOps) {
  std::vector<int32_t> info(2, 5);
  EXPECT_TRUE(Getrf<double>(2, 0, 3, nullptr, nullptr, info.data()).ok());
  EXPECT_EQ(info, (std::vector<int32_t>{0, 0}));
  info = {5, 5};
  EXPECT_TRUE(Potrf<double>(UpLo::kLower, 2, 0, nullptr, info.data()).ok());
  EXPECT_EQ(info, (std::vector<int32_t>{0, 0}));
  EXPECT_TRUE(Syevd<double>(EigMode::kVectors, UpLo::kLower, 0, 3, nullptr, nullptr, nullptr).ok());
}

TEST(LapackEmpty, EmptyBatchesTouchNoMemoryButCheckArguments) {
  // No matrices: no workspace query either (it would read the first one).
  using cf = std::complex<float>;
  float* f = nullptr;
  cf* c = nullptr;
  int32_t* i32 = nullptr;
  EXPECT_TRUE(Geqrf<float>(0, 3, 2, f, f).ok());
  EXPECT_TRUE(Geqp3<cf>(0, 3, 2, c, i32, c).ok());
  EXPECT_TRUE(Orgqr<float>(0, 3, 2, 2, f, f).ok());
  EXPECT_TRUE(Ormqr<cf>(true, true, 0, 3, 2, 2, c, 3, 2, c, c).ok());
  EXPECT_TRUE(Gesdd<cf>(SvdMode::kFull, 0, 3, 2, c, f, c, 3, 3, c, 2, 2, i32).ok());
  EXPECT_TRUE(Gesvd<float>(SvdMode::kMin, 0, 3, 2, f, f, f, 3, 2, f, 2, 2, i32).ok());
  EXPECT_TRUE(GeevReal<float>(EigMode::kVectors, EigMode::kVectors, 0, 3, f, f, f, c, c, i32).ok());
  EXPECT_TRUE(GeevComplex<cf>(EigMode::kNoVectors, EigMode::kVectors, 0, 3, c, c, c, c, i32).ok());
  EXPECT_TRUE(
      GeesReal<float>(SchurMode::kVectors, SchurSort::kNoSort, 0, 3, f, f, f, f, i32, i32).ok());
  EXPECT_TRUE(
      GeesComplex<cf>(SchurMode::kNoVectors, SchurSort::kNoSort, 0, 3, c, c, c, i32, i32).ok());
  EXPECT_TRUE(Gehrd<float>(0, 3, 1, 3, f, f, i32).ok());
  EXPECT_TRUE(Sytrd<cf>(UpLo::kUpper, 0, 3, c, f, f, c, i32).ok());
  // Nor a workspace size: these would be beyond LAPACK's 32-bit integers.
  const int64_t big = std::numeric_limits<int32_t>::max();
  EXPECT_TRUE(Syevd<cf>(EigMode::kVectors, UpLo::kLower, 0, big, c, f, i32).ok());
  EXPECT_TRUE(Gesdd<cf>(SvdMode::kMin, 0, big, big, c, f, c, big, big, c, big, big, i32).ok());
  // The arguments are still checked.
  EXPECT_EQ(Gesdd<float>(SvdMode::kOverwrite, 0, 3, 2, f, f, f, 3, 3, f, 2, 2, i32).code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(GeevReal<float>(static_cast<EigMode>('X'), EigMode::kVectors, 0, 3, f, f, f, c, c, i32)
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Gehrd<float>(0, 3, 2, 1, f, f, i32).code(), absl::StatusCode::kInvalidArgument);
  // Zero-sized matrices in a batch: info and sdim are zeroed, nothing else.
  std::vector<int32_t> info(2, 7), sdim(2, 7);
  EXPECT_TRUE(GeesReal<float>(SchurMode::kVectors, SchurSort::kNoSort, 2, 0, f, f, f, f,
                              sdim.data(), info.data())
                  .ok());
  EXPECT_EQ(info, (std::vector<int32_t>{0, 0}));
  EXPECT_EQ(sdim, (std::vector<int32_t>{0, 0}));
  info = {7, 7};
  EXPECT_TRUE(
      GeevComplex<cf>(EigMode::kVectors, EigMode::kVectors, 2, 0, c, c, c, c, info.data()).ok());
  EXPECT_EQ(info, (std::vector<int32_t>{0, 0}));
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::hostlib
