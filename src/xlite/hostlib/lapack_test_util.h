// Small dense matrices (complex<double>, row-major) for checking LAPACK
// results another way: products, adjoints, Householder reflector products.
// Shared by hostlib's tests and the interpreter's custom-call tests.
#ifndef XLITE_HOSTLIB_LAPACK_TEST_UTIL_H_
#define XLITE_HOSTLIB_LAPACK_TEST_UTIL_H_

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <random>
#include <vector>

namespace xlite::lapack_test {

using cd = std::complex<double>;

struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<cd> v;  // row-major
  Matrix() = default;
  Matrix(int64_t r, int64_t c) : rows(r), cols(c), v(r * c) {}
  cd& operator()(int64_t r, int64_t c) { return v[r * cols + c]; }
  cd operator()(int64_t r, int64_t c) const { return v[r * cols + c]; }
};

inline Matrix Identity(int64_t n) {
  Matrix m(n, n);
  for (int64_t i = 0; i < n; ++i) m(i, i) = 1;
  return m;
}

inline Matrix Mul(const Matrix& a, const Matrix& b) {
  Matrix c(a.rows, b.cols);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t k = 0; k < a.cols; ++k)
      for (int64_t j = 0; j < b.cols; ++j) c(i, j) += a(i, k) * b(k, j);
  return c;
}

inline Matrix Adjoint(const Matrix& a) {
  Matrix t(a.cols, a.rows);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < a.cols; ++j) t(j, i) = std::conj(a(i, j));
  return t;
}

inline Matrix Transpose(const Matrix& a) {
  Matrix t(a.cols, a.rows);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < a.cols; ++j) t(j, i) = a(i, j);
  return t;
}

// Largest |a - b| (infinity when shapes differ).
inline double MaxDiff(const Matrix& a, const Matrix& b) {
  if (a.rows != b.rows || a.cols != b.cols) return INFINITY;
  double d = 0;
  for (size_t i = 0; i < a.v.size(); ++i) d = std::max(d, std::abs(a.v[i] - b.v[i]));
  return d;
}

// Uniform entries in [-1, 1] (complex when `complex`), deterministic per seed.
inline Matrix Random(int64_t rows, int64_t cols, bool complex, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  Matrix m(rows, cols);
  for (cd& x : m.v) {
    const double re = dist(gen);
    x = complex ? cd(re, dist(gen)) : cd(re, 0);
  }
  return m;
}

// A well-conditioned Hermitian positive-definite matrix: B·Bᴴ + n·I.
inline Matrix RandomSpd(int64_t n, bool complex, uint32_t seed) {
  Matrix b = Random(n, n, complex, seed);
  Matrix a = Mul(b, Adjoint(b));
  for (int64_t i = 0; i < n; ++i) a(i, i) += static_cast<double>(n);
  return a;
}

// The product H(0)·H(1)·…·H(k-1) (or the reverse order) of reflectors
// H = I - tau·v·vᴴ, each v an n-vector.
inline Matrix ReflectorProduct(const std::vector<std::vector<cd>>& vs, const std::vector<cd>& taus,
                               bool reverse = false) {
  const int64_t n = vs.empty() ? 0 : static_cast<int64_t>(vs[0].size());
  Matrix q = Identity(n);
  for (size_t step = 0; step < vs.size(); ++step) {
    const size_t i = reverse ? vs.size() - 1 - step : step;
    Matrix h = Identity(n);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < n; ++c) h(r, c) -= taus[i] * vs[i][r] * std::conj(vs[i][c]);
    q = Mul(q, h);
  }
  return q;
}

// gehrd's packed result split: H, the upper Hessenberg part, and Q, the
// product of the reflectors stored below the subdiagonal (v_j = e_{j+1} +
// packed(j+2:n, j)) with `taus`, so that A = Q·H·Qᴴ.
struct HessenbergForm {
  Matrix h, q;
};
inline HessenbergForm UnpackHessenberg(const Matrix& packed, const std::vector<cd>& taus) {
  const int64_t n = packed.rows;
  HessenbergForm out{packed, Matrix()};
  std::vector<std::vector<cd>> vs;
  for (int64_t j = 0; j + 1 < n; ++j) {
    std::vector<cd> v(n);
    v[j + 1] = 1;
    for (int64_t i = j + 2; i < n; ++i) {
      v[i] = packed(i, j);
      out.h(i, j) = 0;
    }
    vs.push_back(v);
  }
  out.q = ReflectorProduct(vs, taus);
  return out;
}

// Column-major storage of T (float, double, complex) <-> Matrix.
template <typename T>
Matrix FromColumnMajor(const T* data, int64_t rows, int64_t cols) {
  Matrix m(rows, cols);
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = 0; r < rows; ++r) m(r, c) = cd(data[c * rows + r]);
  return m;
}

template <typename T>
std::vector<T> ToColumnMajor(const Matrix& m) {
  std::vector<T> out(m.rows * m.cols);
  for (int64_t c = 0; c < m.cols; ++c)
    for (int64_t r = 0; r < m.rows; ++r) {
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        out[c * m.rows + r] = static_cast<T>(m(r, c).real());
      } else {
        out[c * m.rows + r] = T(m(r, c).real(), m(r, c).imag());
      }
    }
  return out;
}

}  // namespace xlite::lapack_test

#endif  // XLITE_HOSTLIB_LAPACK_TEST_UTIL_H_
