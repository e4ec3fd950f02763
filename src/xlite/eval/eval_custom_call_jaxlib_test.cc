// JAX's CPU custom calls in the interpreter, driven through HLO text spelled
// as JAX spells them (column-major operand_layout_constraints, aliasing,
// backend_config dictionaries, num_batch_dims), each result checked by
// reconstructing the input another way; the layout rule on exact values; the
// errors; and the linalg_solve program from the JAX corpus.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "xlite/eval/evaluator.h"
#include "xlite/hostlib/lapack_test_util.h"
#include "xlite/support/npy.h"
#include "xlite/text/parser.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

using lapack_test::Adjoint;
using lapack_test::cd;
using lapack_test::HessenbergForm;
using lapack_test::Identity;
using lapack_test::Matrix;
using lapack_test::MaxDiff;
using lapack_test::Mul;
using lapack_test::Random;
using lapack_test::RandomSpd;
using lapack_test::ReflectorProduct;
using lapack_test::UnpackHessenberg;

// ---------------------------------------------------------------------------
// Building JAX-style custom calls.

// An array in a custom call's signature. Matrices get JAX's column-major
// layout {nb, nb+1, nb-1, ..., 0}; everything else the default layout.
struct Arr {
  std::string type;
  std::vector<int64_t> dims;
  bool matrix = false;
};

std::string LayoutOf(const Arr& a, bool jax_layout) {
  const int64_t rank = a.dims.size();
  std::vector<int64_t> order;
  if (jax_layout && a.matrix) {
    order = {rank - 2, rank - 1};
    for (int64_t d = rank - 3; d >= 0; --d) order.push_back(d);
  } else {
    for (int64_t d = rank - 1; d >= 0; --d) order.push_back(d);
  }
  return absl::StrCat("{", absl::StrJoin(order, ","), "}");
}

std::string ShapeOf(const Arr& a, bool jax_layout = true) {
  return absl::StrCat(a.type, "[", absl::StrJoin(a.dims, ","), "]", LayoutOf(a, jax_layout));
}

std::vector<int64_t> Dims(std::vector<int64_t> batch, std::vector<int64_t> tail) {
  batch.insert(batch.end(), tail.begin(), tail.end());
  return batch;
}

struct CallSpec {
  std::string target;
  std::vector<Arr> operands;
  std::vector<Arr> results;
  std::string aliasing;  // e.g. "{{0}: (0, {})}"
  std::string config;    // backend_config dictionary
  bool tuple = true;     // false: a single array result
};

// "ROOT? name = shape custom-call(args), ..." as JAX's HLO spells it.
std::string CustomCallLine(const CallSpec& spec, const std::string& name,
                           const std::vector<std::string>& args) {
  std::vector<std::string> results, constraints;
  for (const Arr& r : spec.results) results.push_back(ShapeOf(r));
  for (const Arr& o : spec.operands) constraints.push_back(ShapeOf(o));
  const std::string shape =
      spec.tuple ? absl::StrCat("(", absl::StrJoin(results, ", "), ")") : results[0];
  int64_t rank = 0;
  for (const Arr& o : spec.operands) rank = std::max<int64_t>(rank, o.dims.size());
  return absl::StrCat(
      "  ", name, " = ", shape, " custom-call(", absl::StrJoin(args, ", "),
      "), custom_call_target=\"", spec.target, "\", operand_layout_constraints={",
      absl::StrJoin(constraints, ", "), "}",
      spec.aliasing.empty() ? "" : absl::StrCat(", output_to_operand_aliasing=", spec.aliasing),
      ", api_version=API_VERSION_TYPED_FFI, frontend_attributes={num_batch_dims=\"", rank - 2,
      "\"}, backend_config=", spec.config.empty() ? "{}" : spec.config, "\n");
}

// A module whose entry computation is the one custom call on parameters.
std::string SingleCallModule(const CallSpec& spec) {
  std::string text = "HloModule m\n\nENTRY main {\n";
  std::vector<std::string> args;
  for (size_t i = 0; i < spec.operands.size(); ++i) {
    absl::StrAppend(&text, "  p", i, " = ", ShapeOf(spec.operands[i], false), " parameter(", i,
                    ")\n");
    args.push_back(absl::StrCat("p", i));
  }
  absl::StrAppend(&text, CustomCallLine(spec, "ROOT call", args), "}\n");
  return text;
}

absl::StatusOr<Literal> RunHlo(const std::string& text, const std::vector<Literal>& args) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "t.hlo");
  if (!module.ok()) return module.status();
  return Evaluate(**module, args);
}

// ---------------------------------------------------------------------------
// Literals <-> matrices (logical row-major, batch-major).

struct TypeCase {
  char prefix;
  PrimitiveType type;
  std::string name, real, complex;
  bool is_complex;
  double tol;
};

const TypeCase kTypes[] = {
    {'s', PrimitiveType::F32, "f32", "f32", "c64", false, 3e-4},
    {'d', PrimitiveType::F64, "f64", "f64", "c128", false, 1e-10},
    {'c', PrimitiveType::C64, "c64", "f32", "c64", true, 3e-4},
    {'z', PrimitiveType::C128, "c128", "f64", "c128", true, 1e-10},
};

void PrintTo(const TypeCase& t, std::ostream* os) { *os << t.name; }

Literal LiteralOf(PrimitiveType type, std::vector<int64_t> dims, const std::vector<Matrix>& ms) {
  Literal lit(Shape::Array(type, std::move(dims)));
  int64_t i = 0;
  for (const Matrix& m : ms) {
    for (const cd& x : m.v) {
      if (IsComplex(type)) {
        lit.SetComplex(i++, x);
      } else {
        lit.SetDouble(i++, x.real());
      }
    }
  }
  return lit;
}

Matrix MatOf(const Literal& lit, int64_t index, int64_t rows, int64_t cols) {
  Matrix m(rows, cols);
  for (int64_t i = 0; i < rows * cols; ++i) m.v[i] = lit.GetComplex(index * rows * cols + i);
  return m;
}

cd At(const Literal& lit, int64_t i) { return lit.GetComplex(i); }

class JaxlibCustomCallTest
    : public ::testing::TestWithParam<std::tuple<TypeCase, std::vector<int64_t>>> {
 protected:
  const TypeCase& t() const { return std::get<0>(GetParam()); }
  const std::vector<int64_t>& batch() const { return std::get<1>(GetParam()); }
  int64_t count() const {
    int64_t n = 1;
    for (int64_t d : batch()) n *= d;
    return n;
  }
  std::string Target(const std::string& routine) const {
    return absl::StrCat("lapack_", std::string(1, t().prefix), routine, "_ffi");
  }
  Arr Mat(int64_t rows, int64_t cols) const {
    return {t().name, Dims(batch(), {rows, cols}), true};
  }
  Arr Vec(const std::string& type, int64_t n) const { return {type, Dims(batch(), {n}), false}; }
  Arr Info() const { return {"s32", batch(), false}; }
  std::vector<Matrix> Randoms(int64_t rows, int64_t cols, uint32_t seed, double shift = 0) const {
    std::vector<Matrix> out;
    for (int64_t b = 0; b < count(); ++b) {
      Matrix m = Random(rows, cols, t().is_complex, seed + b);
      for (int64_t i = 0; i < std::min(rows, cols); ++i) m(i, i) += shift;
      out.push_back(m);
    }
    return out;
  }
  std::vector<Matrix> Spds(int64_t n, uint32_t seed) const {
    std::vector<Matrix> out;
    for (int64_t b = 0; b < count(); ++b) out.push_back(RandomSpd(n, t().is_complex, seed + b));
    return out;
  }
  Literal Input(const std::vector<Matrix>& ms) const {
    return LiteralOf(t().type, Dims(batch(), {ms[0].rows, ms[0].cols}), ms);
  }
  double tol() const { return t().tol; }
};

TEST_P(JaxlibCustomCallTest, Getrf) {
  const int64_t m = 4, n = 3, k = 3;
  const CallSpec spec{
      Target("getrf"), {Mat(m, n)}, {Mat(m, n), Vec("s32", k), Info()}, "{{0}: (0, {})}", ""};
  std::vector<Matrix> inputs = Randoms(m, n, 40);
  if (count() > 1) {
    for (int64_t i = 0; i < m; ++i) inputs.back()(i, 0) = 0;  // singular: a zero column
  }
  absl::StatusOr<Literal> out = RunHlo(SingleCallModule(spec), {Input(inputs)});
  ASSERT_TRUE(out.ok()) << out.status();
  const auto& r = out->tuple_elements();
  for (int64_t b = 0; b < count(); ++b) {
    const bool singular = count() > 1 && b == count() - 1;
    EXPECT_EQ(r[2].GetInt(b), singular ? 1 : 0);
    const Matrix lu = MatOf(r[0], b, m, n);
    Matrix l(m, k), u(k, n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < k; ++j) l(i, j) = i == j ? cd(1) : (i > j ? lu(i, j) : cd(0));
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = i; j < n; ++j) u(i, j) = lu(i, j);
    std::vector<int64_t> perm = {0, 1, 2, 3};
    for (int64_t i = 0; i < k; ++i) {
      const int64_t p = r[1].GetInt(b * k + i);
      ASSERT_GE(p, i + 1);
      ASSERT_LE(p, m);
      std::swap(perm[i], perm[p - 1]);
    }
    Matrix pa(m, n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) pa(i, j) = inputs[b](perm[i], j);
    EXPECT_LT(MaxDiff(Mul(l, u), pa), tol()) << "batch " << b;
  }
}

TEST_P(JaxlibCustomCallTest, Potrf) {
  const int64_t n = 4;
  const CallSpec spec{
      Target("potrf"), {Mat(n, n)}, {Mat(n, n), Info()}, "{{0}: (0, {})}", "{uplo = 76 : ui8}"};
  std::vector<Matrix> inputs = Spds(n, 50);
  if (count() > 1) inputs.back()(1, 1) = -50;  // not positive definite
  absl::StatusOr<Literal> out = RunHlo(SingleCallModule(spec), {Input(inputs)});
  ASSERT_TRUE(out.ok()) << out.status();
  const auto& r = out->tuple_elements();
  for (int64_t b = 0; b < count(); ++b) {
    if (count() > 1 && b == count() - 1) {
      EXPECT_EQ(r[1].GetInt(b), 2);
      continue;
    }
    EXPECT_EQ(r[1].GetInt(b), 0);
    Matrix l = MatOf(r[0], b, n, n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j) l(i, j) = 0;  // JAX's _tril
    EXPECT_LT(MaxDiff(Mul(l, Adjoint(l)), inputs[b]), tol() * 10);
  }
}

// jnp.linalg.qr's CPU lowering: geqrf, then orgqr (householder_product).
TEST_P(JaxlibCustomCallTest, GeqrfThenOrgqr) {
  const int64_t m = 5, n = 3;
  const CallSpec geqrf{
      Target("geqrf"), {Mat(m, n)}, {Mat(m, n), Vec(t().name, n)}, "{{0}: (0, {})}", ""};
  const CallSpec orgqr{Target(t().is_complex ? "ungqr" : "orgqr"),
                       {Mat(m, n), Vec(t().name, n)},
                       {Mat(m, n)},
                       "{{}: (0, {})}",
                       "",
                       /*tuple=*/false};
  std::string text = "HloModule m\n\nENTRY main {\n  p0 = " + ShapeOf(Mat(m, n), false) +
                     " parameter(0)\n" + CustomCallLine(geqrf, "qr", {"p0"});
  absl::StrAppend(&text, "  r = ", ShapeOf(Mat(m, n)), " get-tuple-element(qr), index=0\n",
                  "  tau = ", ShapeOf(Vec(t().name, n)), " get-tuple-element(qr), index=1\n",
                  CustomCallLine(orgqr, "q", {"r", "tau"}), "  ROOT out = (", ShapeOf(Mat(m, n)),
                  ", ", ShapeOf(Mat(m, n)), ") tuple(q, r)\n}\n");
  const std::vector<Matrix> inputs = Randoms(m, n, 60);
  absl::StatusOr<Literal> out = RunHlo(text, {Input(inputs)});
  ASSERT_TRUE(out.ok()) << out.status() << "\n" << text;
  for (int64_t b = 0; b < count(); ++b) {
    const Matrix q = MatOf(out->tuple_elements()[0], b, m, n);
    const Matrix qr = MatOf(out->tuple_elements()[1], b, m, n);
    Matrix r(n, n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i; j < n; ++j) r(i, j) = qr(i, j);
    EXPECT_LT(MaxDiff(Mul(q, r), inputs[b]), tol() * 10);
    EXPECT_LT(MaxDiff(Mul(Adjoint(q), q), Identity(n)), tol() * 10);
  }
}

TEST_P(JaxlibCustomCallTest, Geqp3ThenOrgqr) {
  const int64_t m = 4, n = 4;
  const CallSpec geqp3{Target("geqp3"),
                       {Mat(m, n), Vec("s32", n)},
                       {Mat(m, n), Vec("s32", n), Vec(t().name, n)},
                       "{{0}: (0, {}), {1}: (1, {})}",
                       ""};
  const std::vector<Matrix> inputs = Randoms(m, n, 65);
  Literal jpvt(Shape::Array(PrimitiveType::S32, Dims(batch(), {n})));  // zeros: all columns free
  absl::StatusOr<Literal> out = RunHlo(SingleCallModule(geqp3), {Input(inputs), jpvt});
  ASSERT_TRUE(out.ok()) << out.status();
  const auto& r = out->tuple_elements();
  // Q from the reflectors, as orgqr would build it.
  for (int64_t b = 0; b < count(); ++b) {
    const Matrix qr = MatOf(r[0], b, m, n);
    std::vector<std::vector<cd>> vs;
    std::vector<cd> taus;
    Matrix rr(n, n), permuted(m, n);
    for (int64_t i = 0; i < n; ++i) {
      std::vector<cd> v(m);
      v[i] = 1;
      for (int64_t j = i + 1; j < m; ++j) v[j] = qr(j, i);
      vs.push_back(v);
      taus.push_back(At(r[2], b * n + i));
      for (int64_t j = i; j < n; ++j) rr(i, j) = qr(i, j);
      const int64_t p = r[1].GetInt(b * n + i);
      ASSERT_GE(p, 1);
      for (int64_t j = 0; j < m; ++j) permuted(j, i) = inputs[b](j, p - 1);
    }
    EXPECT_LT(MaxDiff(Mul(ReflectorProduct(vs, taus), rr), permuted), tol() * 10);
  }
}

TEST_P(JaxlibCustomCallTest, Ormqr) {
  const int64_t m = 4, n = 2, k = 3;
  const std::vector<Matrix> a = Randoms(m, k, 66), c = Randoms(m, n, 67);
  // Reflectors: a's strictly lower part and taus.
  Literal tau_lit(Shape::Array(t().type, Dims(batch(), {k})));
  for (int64_t i = 0; i < count() * k; ++i) {
    if (t().is_complex) {
      tau_lit.SetComplex(i, cd(0.5 + 0.1 * i, 0.2));
    } else {
      tau_lit.SetDouble(i, 0.5 + 0.1 * i);
    }
  }
  const CallSpec spec{Target(t().is_complex ? "unmqr" : "ormqr"),
                      {Mat(m, k), Vec(t().name, k), Mat(m, n)},
                      {Mat(m, n)},
                      "{{}: (2, {})}",
                      "{left = true, transpose = true}",
                      false};
  absl::StatusOr<Literal> out = RunHlo(SingleCallModule(spec), {Input(a), tau_lit, Input(c)});
  ASSERT_TRUE(out.ok()) << out.status();
  for (int64_t b = 0; b < count(); ++b) {
    std::vector<std::vector<cd>> vs;
    std::vector<cd> taus;
    for (int64_t i = 0; i < k; ++i) {
      std::vector<cd> v(m);
      v[i] = 1;
      for (int64_t j = i + 1; j < m; ++j) v[j] = a[b](j, i);
      vs.push_back(v);
      taus.push_back(At(tau_lit, b * k + i));
    }
    const Matrix want = Mul(Adjoint(ReflectorProduct(vs, taus)), c[b]);
    EXPECT_LT(MaxDiff(MatOf(*out, b, m, n), want), tol() * 10);
  }
}

TEST_P(JaxlibCustomCallTest, SyevdOrHeevd) {
  const int64_t n = 4;
  const CallSpec spec{Target(t().is_complex ? "heevd" : "syevd"),
                      {Mat(n, n)},
                      {Mat(n, n), Vec(t().real, n), Info()},
                      "{{0}: (0, {})}",
                      "{mode = 86 : ui8, uplo = 76 : ui8}"};
  const std::vector<Matrix> inputs = Spds(n, 70);
  absl::StatusOr<Literal> out = RunHlo(SingleCallModule(spec), {Input(inputs)});
  ASSERT_TRUE(out.ok()) << out.status();
  const auto& r = out->tuple_elements();
  for (int64_t b = 0; b < count(); ++b) {
    EXPECT_EQ(r[2].GetInt(b), 0);
    const Matrix v = MatOf(r[0], b, n, n);
    Matrix vw = v;
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < n; ++i) vw(i, j) *= r[1].GetDouble(b * n + j);
    EXPECT_LT(MaxDiff(Mul(inputs[b], v), vw), tol() * 100);
  }
}

TEST_P(JaxlibCustomCallTest, TrsmBothSides) {
  const int64_t m = 4, n = 3;
  for (bool left : {true, false}) {
    const int64_t k = left ? m : n;
    // Left: lower, non-unit, no transpose. Right: upper, unit, transposed.
    const std::string config =
        left ? "{diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}"
             : "{diag = 85 : ui8, side = 82 : ui8, trans_x = 84 : ui8, uplo = 85 : ui8}";
    const CallSpec spec{
        Target("trsm"), {Mat(k, k), Mat(m, n)}, {Mat(m, n)}, "{{}: (1, {})}", config, false};
    const std::vector<Matrix> a = Randoms(k, k, 80, 3), rhs = Randoms(m, n, 81);
    absl::StatusOr<Literal> out = RunHlo(SingleCallModule(spec), {Input(a), Input(rhs)});
    ASSERT_TRUE(out.ok()) << out.status();
    for (int64_t b = 0; b < count(); ++b) {
      Matrix tri(k, k);
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < k; ++j) {
          if (i == j) tri(i, j) = left ? a[b](i, j) : cd(1);
          if (left ? i > j : i < j) tri(i, j) = a[b](i, j);
        }
      const Matrix x = MatOf(*out, b, m, n);
      const Matrix lhs = left ? Mul(tri, x) : Mul(x, lapack_test::Transpose(tri));
      EXPECT_LT(MaxDiff(lhs, rhs[b]), tol() * 10) << (left ? "left" : "right");
    }
  }
}

TEST_P(JaxlibCustomCallTest, GesddAndGesvd) {
  const int64_t m = 4, n = 3, k = 3;
  for (const std::string routine : {"gesdd", "gesvd"}) {
    for (const bool full : {true, false}) {
      const int64_t u_cols = full ? m : k, vt_rows = full ? n : k;
      const CallSpec spec{Target(routine),
                          {Mat(m, n)},
                          {Mat(m, n), Vec(t().real, k), Mat(m, u_cols), Mat(vt_rows, n), Info()},
                          "{{0}: (0, {})}",
                          full ? "{mode = 65 : ui8}" : "{mode = 83 : ui8}"};
      const std::vector<Matrix> inputs = Randoms(m, n, 90);
      absl::StatusOr<Literal> out = RunHlo(SingleCallModule(spec), {Input(inputs)});
      ASSERT_TRUE(out.ok()) << out.status();
      const auto& r = out->tuple_elements();
      for (int64_t b = 0; b < count(); ++b) {
        EXPECT_EQ(r[4].GetInt(b), 0);
        const Matrix u = MatOf(r[2], b, m, u_cols), vt = MatOf(r[3], b, vt_rows, n);
        Matrix us(m, k), vk(k, n);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < k; ++j) us(i, j) = u(i, j) * r[1].GetDouble(b * k + j);
        for (int64_t i = 0; i < k; ++i)
          for (int64_t j = 0; j < n; ++j) vk(i, j) = vt(i, j);
        EXPECT_LT(MaxDiff(Mul(us, vk), inputs[b]), tol() * 10) << routine << " full=" << full;
      }
    }
  }
}

TEST_P(JaxlibCustomCallTest, Geev) {
  const int64_t n = 4;
  std::vector<Arr> results;
  if (t().is_complex) {
    results = {Vec(t().name, n), Mat(n, n), Mat(n, n), Info()};
  } else {
    results = {Vec(t().name, n),
               Vec(t().name, n),
               {t().complex, Dims(batch(), {n, n}), true},
               {t().complex, Dims(batch(), {n, n}), true},
               Info()};
  }
  const CallSpec spec{Target("geev"),
                      {Mat(n, n)},
                      results,
                      "",
                      "{compute_left = 78 : ui8, compute_right = 86 : ui8}"};
  const std::vector<Matrix> inputs = Randoms(n, n, 100);
  absl::StatusOr<Literal> out = RunHlo(SingleCallModule(spec), {Input(inputs)});
  ASSERT_TRUE(out.ok()) << out.status();
  const auto& r = out->tuple_elements();
  const size_t vr = t().is_complex ? 2 : 3;
  for (int64_t b = 0; b < count(); ++b) {
    EXPECT_EQ(r[vr + 1].GetInt(b), 0);
    const Matrix v = MatOf(r[vr], b, n, n);
    Matrix vw = v;
    for (int64_t j = 0; j < n; ++j) {
      const cd w = t().is_complex ? At(r[0], b * n + j)
                                  : cd(r[0].GetDouble(b * n + j), r[1].GetDouble(b * n + j));
      for (int64_t i = 0; i < n; ++i) vw(i, j) *= w;
    }
    EXPECT_LT(MaxDiff(Mul(inputs[b], v), vw), tol() * 100);
  }
}

TEST_P(JaxlibCustomCallTest, Gees) {
  const int64_t n = 4;
  std::vector<Arr> results = {Mat(n, n), Mat(n, n), Vec(t().name, n)};
  if (!t().is_complex) results.push_back(Vec(t().name, n));
  results.push_back(Info());
  results.push_back(Info());
  const CallSpec spec{
      Target("gees"), {Mat(n, n)}, results, "{{0}: (0, {})}", "{mode = 86 : ui8, sort = 78 : ui8}"};
  const std::vector<Matrix> inputs = Randoms(n, n, 110);
  absl::StatusOr<Literal> out = RunHlo(SingleCallModule(spec), {Input(inputs)});
  ASSERT_TRUE(out.ok()) << out.status();
  const auto& r = out->tuple_elements();
  for (int64_t b = 0; b < count(); ++b) {
    EXPECT_EQ(r.back().GetInt(b), 0);
    const Matrix tt = MatOf(r[0], b, n, n), z = MatOf(r[1], b, n, n);
    EXPECT_LT(MaxDiff(Mul(Mul(z, tt), Adjoint(z)), inputs[b]), tol() * 100);
    EXPECT_EQ(tt(n - 1, 0), cd(0));
  }
}

TEST_P(JaxlibCustomCallTest, Gehrd) {
  const int64_t n = 5;
  const CallSpec spec{Target("gehrd"),
                      {Mat(n, n)},
                      {Mat(n, n), Vec(t().name, n - 1), Info()},
                      "{{0}: (0, {})}",
                      "{high = 5 : i32, low = 1 : i32}"};
  const std::vector<Matrix> inputs = Randoms(n, n, 120);
  absl::StatusOr<Literal> out = RunHlo(SingleCallModule(spec), {Input(inputs)});
  ASSERT_TRUE(out.ok()) << out.status();
  const auto& r = out->tuple_elements();
  for (int64_t b = 0; b < count(); ++b) {
    EXPECT_EQ(r[2].GetInt(b), 0);
    std::vector<cd> taus;
    for (int64_t j = 0; j + 1 < n; ++j) taus.push_back(At(r[1], b * (n - 1) + j));
    const HessenbergForm f = UnpackHessenberg(MatOf(r[0], b, n, n), taus);
    EXPECT_LT(MaxDiff(Mul(Mul(f.q, f.h), Adjoint(f.q)), inputs[b]), tol() * 10);
  }
}

TEST_P(JaxlibCustomCallTest, SytrdOrHetrd) {
  const int64_t n = 5;
  const CallSpec spec{
      Target(t().is_complex ? "hetrd" : "sytrd"),
      {Mat(n, n)},
      {Mat(n, n), Vec(t().real, n), Vec(t().real, n - 1), Vec(t().name, n - 1), Info()},
      "{{0}: (0, {})}",
      "{uplo = 76 : ui8}"};
  const std::vector<Matrix> inputs = Spds(n, 130);
  absl::StatusOr<Literal> out = RunHlo(SingleCallModule(spec), {Input(inputs)});
  ASSERT_TRUE(out.ok()) << out.status();
  const auto& r = out->tuple_elements();
  for (int64_t b = 0; b < count(); ++b) {
    EXPECT_EQ(r[4].GetInt(b), 0);
    const Matrix a = MatOf(r[0], b, n, n);
    Matrix tri(n, n);
    for (int64_t i = 0; i < n; ++i) tri(i, i) = r[1].GetDouble(b * n + i);
    for (int64_t i = 0; i + 1 < n; ++i) {
      tri(i + 1, i) = tri(i, i + 1) = r[2].GetDouble(b * (n - 1) + i);
    }
    std::vector<std::vector<cd>> vs;
    std::vector<cd> taus;
    for (int64_t i = 0; i + 1 < n; ++i) {
      std::vector<cd> v(n);
      v[i + 1] = 1;
      for (int64_t j = i + 2; j < n; ++j) v[j] = a(j, i);
      vs.push_back(v);
      taus.push_back(At(r[3], b * (n - 1) + i));
    }
    const Matrix q = ReflectorProduct(vs, taus);
    EXPECT_LT(MaxDiff(Mul(Mul(q, tri), Adjoint(q)), inputs[b]), tol() * 100);
  }
}

TEST_P(JaxlibCustomCallTest, Gtsv) {
  const int64_t n = 5, nrhs = 2;
  const Arr d = Vec(t().name, n);
  const CallSpec spec{Target("gtsv"),
                      {d, d, d, Mat(n, nrhs)},
                      {d, d, d, Mat(n, nrhs), Info()},
                      "{{0}: (0, {}), {1}: (1, {}), {2}: (2, {}), {3}: (3, {})}",
                      ""};
  const std::vector<Matrix> diags = Randoms(3, n, 140), rhs = Randoms(n, nrhs, 141);
  std::vector<Matrix> dl, dd, du;
  for (const Matrix& m : diags) {
    Matrix l(1, n), c(1, n), u(1, n);
    for (int64_t i = 0; i < n; ++i) {
      l(0, i) = i == 0 ? cd(0) : m(0, i);
      c(0, i) = m(1, i) + 4.0;
      u(0, i) = i == n - 1 ? cd(0) : m(2, i);
    }
    dl.push_back(l);
    dd.push_back(c);
    du.push_back(u);
  }
  auto vec = [&](const std::vector<Matrix>& ms) {
    return LiteralOf(t().type, Dims(batch(), {n}), ms);
  };
  absl::StatusOr<Literal> out =
      RunHlo(SingleCallModule(spec), {vec(dl), vec(dd), vec(du), Input(rhs)});
  ASSERT_TRUE(out.ok()) << out.status();
  const auto& r = out->tuple_elements();
  for (int64_t b = 0; b < count(); ++b) {
    EXPECT_EQ(r[4].GetInt(b), 0);
    Matrix a(n, n);
    for (int64_t i = 0; i < n; ++i) {
      a(i, i) = dd[b](0, i);
      if (i > 0) a(i, i - 1) = dl[b](0, i);
      if (i + 1 < n) a(i, i + 1) = du[b](0, i);
    }
    EXPECT_LT(MaxDiff(Mul(a, MatOf(r[3], b, n, nrhs)), rhs[b]), tol() * 10);
  }
}

std::string CaseName(
    const ::testing::TestParamInfo<std::tuple<TypeCase, std::vector<int64_t>>>& info) {
  const std::vector<int64_t>& batch = std::get<1>(info.param);
  return absl::StrCat(std::get<0>(info.param).name,
                      batch.empty() ? "_unbatched" : "_batch" + absl::StrJoin(batch, "x"));
}

INSTANTIATE_TEST_SUITE_P(AllTypes, JaxlibCustomCallTest,
                         ::testing::Combine(::testing::ValuesIn(kTypes),
                                            ::testing::Values(std::vector<int64_t>{},
                                                              std::vector<int64_t>{3},
                                                              std::vector<int64_t>{2, 2})),
                         CaseName);

// ---------------------------------------------------------------------------
// The layout rule, on exact values.

Literal F32Matrix(std::vector<double> values) {
  Literal lit(Shape::Array(PrimitiveType::F32, {2, 2}));
  for (int i = 0; i < 4; ++i) lit.SetDouble(i, values[i]);
  return lit;
}

std::string GetrfModule(const std::string& layout_attrs, const std::string& result_layout) {
  return absl::StrCat(
      "HloModule m\n\nENTRY main {\n  p = f32[2,2]{1,0} parameter(0)\n", "  ROOT lu = (f32[2,2]",
      result_layout, ", s32[2]{0}, s32[]) custom-call(p), custom_call_target=\"lapack_sgetrf_ffi\"",
      layout_attrs, ", api_version=API_VERSION_TYPED_FFI, backend_config={}\n}\n");
}

std::vector<double> Values(const Literal& lit) {
  std::vector<double> v;
  for (int64_t i = 0; i < lit.element_count(); ++i) v.push_back(lit.GetDouble(i));
  return v;
}

TEST(JaxlibLayout, ColumnMajorConstraintFactorsTheLogicalMatrix) {
  // JAX's spelling: LAPACK sees [[1,2],[3,4]]; rows swap, l = 1/3, u22 = 2/3.
  absl::StatusOr<Literal> out = RunHlo(GetrfModule(", operand_layout_constraints={f32[2,2]{0,1}}, "
                                                   "output_to_operand_aliasing={{0}: (0, {})}",
                                                   "{0,1}"),
                                       {F32Matrix({1, 2, 3, 4})});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> lu = Values(out->tuple_elements()[0]);
  EXPECT_DOUBLE_EQ(lu[0], 3);
  EXPECT_DOUBLE_EQ(lu[1], 4);
  EXPECT_NEAR(lu[2], 1.0 / 3, 1e-7);
  EXPECT_NEAR(lu[3], 2.0 / 3, 1e-6);
  EXPECT_EQ(out->tuple_elements()[1].GetInt(0), 2);  // 1-based pivots, as LAPACK writes them
  EXPECT_EQ(out->tuple_elements()[1].GetInt(1), 2);
  EXPECT_EQ(out->tuple_elements()[2].GetInt(0), 0);
}

TEST(JaxlibLayout, RowMajorMemoryIsReadAsTheTranspose) {
  // With row-major buffers (an explicit {1,0} constraint, or none at all) the
  // column-major kernel factors [[1,3],[2,4]]: LU' = [[2,4],[0.5,1]], which
  // reads back row-major as [[2,0.5],[4,1]] -- what XLA:CPU would compute.
  for (const std::string& attrs :
       {std::string(", operand_layout_constraints={f32[2,2]{1,0}}"), std::string()}) {
    absl::StatusOr<Literal> out = RunHlo(GetrfModule(attrs, "{1,0}"), {F32Matrix({1, 2, 3, 4})});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values(out->tuple_elements()[0]), (std::vector<double>{2, 0.5, 4, 1})) << attrs;
  }
}

TEST(JaxlibLayout, TrsmWithOlderJaxlibsAlphaOperand) {
  // Older jaxlib bound (x, y, alpha): alpha·op(x)⁻¹·y.
  const std::string text =
      "HloModule m\n\nENTRY main {\n  a = f32[2,2]{1,0} parameter(0)\n"
      "  b = f32[2,1]{1,0} parameter(1)\n  alpha = f32[] constant(3)\n"
      "  ROOT x = f32[2,1]{0,1} custom-call(a, b, alpha), custom_call_target=\"lapack_strsm_ffi\", "
      "operand_layout_constraints={f32[2,2]{0,1}, f32[2,1]{0,1}, f32[]}, "
      "output_to_operand_aliasing={{}: (1, {})}, api_version=API_VERSION_TYPED_FFI, "
      "backend_config={diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}\n}\n";
  Literal a = F32Matrix({2, 0, 1, 4});
  Literal b(Shape::Array(PrimitiveType::F32, {2, 1}));
  b.SetDouble(0, 2);
  b.SetDouble(1, 5);
  absl::StatusOr<Literal> out = RunHlo(text, {a, b});
  ASSERT_TRUE(out.ok()) << out.status();
  // [[2,0],[1,4]]·x = 3·[2,5]: x = [3, 3].
  EXPECT_EQ(Values(*out), (std::vector<double>{3, 3}));
}

// ---------------------------------------------------------------------------
// Errors.

std::string ErrorOf(const std::string& text, std::vector<Literal> args,
                    absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
  absl::StatusOr<Literal> out = RunHlo(text, args);
  EXPECT_FALSE(out.ok()) << text;
  EXPECT_EQ(out.status().code(), code) << out.status();
  return std::string(out.status().message());
}

std::string PotrfModule(const std::string& config, const std::string& extra = "",
                        const std::string& info_type = "s32[]") {
  return absl::StrCat(
      "HloModule m\n\nENTRY main {\n  p = f32[2,2]{1,0} parameter(0)\n",
      "  ROOT c = (f32[2,2]{0,1}, ", info_type,
      ") custom-call(p), custom_call_target=\"lapack_spotrf_ffi\", "
      "operand_layout_constraints={f32[2,2]{0,1}}, output_to_operand_aliasing={{0}: (0, {})}",
      extra, ", backend_config=", config, "\n}\n");
}

TEST(JaxlibErrors, BadCalls) {
  const std::string typed = ", api_version=API_VERSION_TYPED_FFI";
  Literal spd = F32Matrix({2, 1, 1, 2});
  EXPECT_NE(ErrorOf(PotrfModule("{}", typed), {spd}).find("missing attribute 'uplo'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(PotrfModule("{uplo = 88 : ui8}", typed), {spd})
                .find("attribute 'uplo' must be one of 76 ('L'), 85 ('U'), got 88"),
            std::string::npos);
  EXPECT_NE(ErrorOf(PotrfModule("{uplo = 76 : i32}", typed), {spd}).find("must be ui8"),
            std::string::npos);
  EXPECT_NE(ErrorOf(PotrfModule("{uplo = 76 : ui8, x = 1}", typed), {spd})
                .find("unexpected attribute 'x'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(PotrfModule("{uplo = L}", typed), {spd}).find("unsupported value"),
            std::string::npos);
  EXPECT_NE(ErrorOf(PotrfModule("{uplo = 76 : ui8}"), {spd})
                .find("needs api_version=API_VERSION_TYPED_FFI"),
            std::string::npos);
  EXPECT_NE(ErrorOf(PotrfModule("{uplo = 76 : ui8}", typed, "f32[]"), {spd})
                .find("result 1 must be s32, got f32"),
            std::string::npos);
  EXPECT_NE(ErrorOf(PotrfModule("{uplo = 76 : ui8}", typed, "s32[2]"), {spd})
                .find("info must be [], got [2]"),
            std::string::npos);
  EXPECT_NE(ErrorOf(PotrfModule("{uplo = 76 : ui8}",
                                typed + ", frontend_attributes={num_batch_dims=\"1\"}"),
                    {spd})
                .find("num_batch_dims=1 disagrees"),
            std::string::npos);
  const std::string bad_alias = absl::StrCat(
      "HloModule m\n\nENTRY main {\n  p = f32[2,2]{1,0} parameter(0)\n",
      "  ROOT c = (f32[2,2]{1,0}, s32[]) custom-call(p), custom_call_target=\"lapack_spotrf_ffi\", "
      "operand_layout_constraints={f32[2,2]{0,1}}, output_to_operand_aliasing={{0}: (0, {})}, "
      "api_version=API_VERSION_TYPED_FFI, backend_config={uplo = 76 : ui8}\n}\n");
  EXPECT_NE(ErrorOf(bad_alias, {spd}).find("shapes or layouts differ"), std::string::npos);
  const std::string not_square = absl::StrCat(
      "HloModule m\n\nENTRY main {\n  p = f32[2,3]{1,0} parameter(0)\n",
      "  ROOT c = (f32[2,3]{0,1}, s32[]) custom-call(p), custom_call_target=\"lapack_spotrf_ffi\", "
      "operand_layout_constraints={f32[2,3]{0,1}}, api_version=API_VERSION_TYPED_FFI, "
      "backend_config={uplo = 76 : ui8}\n}\n");
  Literal wide(Shape::Array(PrimitiveType::F32, {2, 3}));
  EXPECT_NE(ErrorOf(not_square, {wide}).find("expects square matrices, got 2x3"),
            std::string::npos);
}

std::string TargetModule(const std::string& target) {
  return absl::StrCat("HloModule m\n\nENTRY main {\n  p = f32[2]{0} parameter(0)\n",
                      "  ROOT c = f32[2]{0} custom-call(p), custom_call_target=\"", target,
                      "\", api_version=API_VERSION_TYPED_FFI\n}\n");
}

TEST(JaxlibErrors, UnsupportedTargetsSayWhy) {
  Literal v(Shape::Array(PrimitiveType::F32, {2}));
  auto message = [&](const std::string& target) {
    return ErrorOf(TargetModule(target), {v}, absl::StatusCode::kUnimplemented);
  };
  for (const std::string python :
       {"xla_python_cpu_callback", "xla_ffi_python_cpu_callback", "xla_ffi_python_gpu_callback"}) {
    const std::string m = message(python);
    EXPECT_NE(m.find("unsupported custom-call target \"" + python + "\""), std::string::npos) << m;
    EXPECT_NE(m.find("JAX's Python runtime"), std::string::npos) << m;
  }
  EXPECT_NE(message("lapack_sgetrf").find("legacy (pre-FFI)"), std::string::npos);
  EXPECT_NE(message("blas_strsm").find("legacy (pre-FFI)"), std::string::npos);
  EXPECT_NE(message("cusolver_getrf_ffi").find("GPU"), std::string::npos);
  EXPECT_NE(message("cu_lu_pivots_to_permutation").find("GPU"), std::string::npos);
  EXPECT_NE(message("ducc_fft").find("fft op"), std::string::npos);
  EXPECT_NE(message("Eigh").find("TPU"), std::string::npos);
  EXPECT_NE(message("lapack_sfoo_ffi").find("not a LAPACK target jaxlib registers"),
            std::string::npos);
  // Real-only and complex-only routine names keep to their prefixes.
  EXPECT_NE(message("lapack_corgqr_ffi").find("not a LAPACK target"), std::string::npos);
  EXPECT_NE(message("lapack_sheevd_ffi").find("not a LAPACK target"), std::string::npos);
  const std::string other = message("my_own_target");
  EXPECT_NE(other.find("unsupported custom-call target \"my_own_target\""), std::string::npos);
}

// ---------------------------------------------------------------------------
// The real program: jnp.linalg solve, cholesky, eigh and det, as JAX 0.11.2
// handed it to XLA:CPU, against XLA:CPU's outputs.

std::filesystem::path CorpusDir() {
  const char* env = std::getenv("XLITE_CORPUS");
  return env ? std::filesystem::path(env) : std::filesystem::path("../shared/corpus");
}

TEST(JaxlibCorpus, LinalgSolveMatchesXlaCpu) {
  const std::filesystem::path dir = CorpusDir() / "jax" / "linalg_solve";
  if (!std::filesystem::exists(dir / "before_optimizations.txt")) {
    std::cerr << "\n*** SKIPPING jax/linalg_solve: " << dir
              << " not found (set XLITE_CORPUS) ***\n\n";
    GTEST_SKIP();
  }
  std::ifstream file(dir / "before_optimizations.txt");
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  auto inputs = ReadNpz((dir / "inputs.npz").string());
  auto expected = ReadNpz((dir / "outputs.npz").string());
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  ASSERT_TRUE(expected.ok()) << expected.status();
  std::sort(inputs->begin(), inputs->end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::sort(expected->begin(), expected->end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Literal> args;
  for (auto& [name, lit] : *inputs) args.push_back(std::move(lit));
  absl::StatusOr<Literal> out = RunHlo(text, args);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->tuple_elements().size(), expected->size());
  for (size_t i = 0; i < expected->size(); ++i) {
    const Literal& want = (*expected)[i].second;
    const Literal& got = out->tuple_elements()[i];
    ASSERT_EQ(got.element_count(), want.element_count());
    double largest = 0;
    for (int64_t j = 0; j < want.element_count(); ++j) {
      if (std::isfinite(want.GetDouble(j)))
        largest = std::max(largest, std::abs(want.GetDouble(j)));
    }
    for (int64_t j = 0; j < want.element_count(); ++j) {
      const double w = want.GetDouble(j), g = got.GetDouble(j);
      if (!std::isfinite(w)) {
        EXPECT_EQ(g, w) << (*expected)[i].first << "[" << j << "]";
        continue;
      }
      EXPECT_LE(std::abs(g - w), std::max(2e-3 * std::abs(w), 1e-3 * largest))
          << (*expected)[i].first << "[" << j << "]: " << g << " vs " << w;
    }
  }
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
