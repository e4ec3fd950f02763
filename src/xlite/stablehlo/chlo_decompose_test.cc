// Tests for the CHLO decompositions: each op is emitted into a module,
// verified, run by the reference interpreter and compared with <cmath>,
// <complex>, or a long-double reference computed here (digamma, erf_inv,
// bessel_i1e), on grids that include the special values.
#include "xlite/stablehlo/chlo_decompose.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "xlite/eval/evaluator.h"
#include "xlite/ir/module.h"
#include "xlite/support/status.h"
#include "xlite/verify/verifier.h"

namespace xlite::stablehlo {
namespace {
namespace XLITE_UNITY_ID {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Emits chlo.<op> on parameters shaped like `args`, verifies and evaluates.
absl::StatusOr<Literal> RunChlo(absl::string_view op, const std::vector<Literal>& args) {
  HloModule module("m");
  HloComputation* comp = module.AddComputation(std::make_unique<HloComputation>("e"));
  int64_t counter = 0;
  HloEmitter e(comp, &counter);
  std::vector<HloInstruction*> params;
  for (size_t i = 0; i < args.size(); ++i) {
    auto p = e.Make(HloOpcode::kParameter, {}, args[i].shape());
    p->attrs().parameter_number = static_cast<int64_t>(i);
    ASSIGN_OR_RETURN(HloInstruction * param, e.Add(std::move(p), /*infer=*/false));
    comp->SetParameter(static_cast<int64_t>(i), param);
    params.push_back(param);
  }
  ASSIGN_OR_RETURN(HloInstruction * root, EmitChloElementwise(e, op, params));
  comp->set_root_instruction(root);
  module.set_entry_computation(comp);
  RETURN_IF_ERROR(VerifyModule(module));
  return Evaluate(module, args);
}

Literal Doubles(PrimitiveType type, const std::vector<double>& values) {
  Literal lit(Shape::Array(type, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) {
    if (type == PrimitiveType::F64) {
      lit.SetBits(i, std::bit_cast<uint64_t>(values[i]));
    } else if (type == PrimitiveType::F32) {
      lit.SetBits(i, std::bit_cast<uint32_t>(static_cast<float>(values[i])));
    } else {
      lit.SetDouble(i, values[i]);
    }
  }
  return lit;
}

// Runs a unary op on f64 values.
std::vector<double> RunF64(absl::string_view op, const std::vector<double>& xs) {
  absl::StatusOr<Literal> r = RunChlo(op, {Doubles(PrimitiveType::F64, xs)});
  EXPECT_TRUE(r.ok()) << op << ": " << r.status();
  std::vector<double> out;
  for (size_t i = 0; r.ok() && i < xs.size(); ++i)
    out.push_back(std::bit_cast<double>(r->GetBits(i)));
  return out;
}

std::vector<float> RunF32(absl::string_view op, const std::vector<float>& xs) {
  std::vector<double> wide(xs.begin(), xs.end());
  absl::StatusOr<Literal> r = RunChlo(op, {Doubles(PrimitiveType::F32, wide)});
  EXPECT_TRUE(r.ok()) << op << ": " << r.status();
  std::vector<float> out;
  for (size_t i = 0; r.ok() && i < xs.size(); ++i) {
    out.push_back(std::bit_cast<float>(static_cast<uint32_t>(r->GetBits(i))));
  }
  return out;
}

bool SameSpecial(double got, double want) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want) || want == 0) return got == want && std::signbit(got) == std::signbit(want);
  return false;
}

// Error of a float result in units of the float ulp at the reference.
double UlpError(float got, double want) {
  const float rounded = static_cast<float>(want);
  if (SameSpecial(got, rounded)) return 0;
  if (std::isnan(got) || std::isnan(want) || std::isinf(got) || std::isinf(rounded)) return kInf;
  const float next = std::nextafter(std::fabs(rounded), std::numeric_limits<float>::infinity());
  const double ulp = static_cast<double>(next) - std::fabs(static_cast<double>(rounded));
  return std::fabs(got - want) / ulp;
}

double RelError(double got, double want) {
  if (SameSpecial(got, want)) return 0;
  if (std::isnan(got) || std::isnan(want) || std::isinf(got) || std::isinf(want)) return kInf;
  if (std::fabs(want) < std::numeric_limits<double>::min()) {
    // Subnormal results have few bits: count 1000 ulps of 2^-1074 as 1e-13.
    return std::fabs(got - want) / std::numeric_limits<double>::denorm_min() * 1e-16;
  }
  return std::fabs(got - want) / std::fabs(want);
}

// A function with its reference; `scale(x)` is the magnitude of the terms that
// cancel near the zeros of the function (the tolerance is relative to it).
struct Case {
  std::string op;
  std::function<long double(long double)> ref;
  std::function<double(double)> scale = [](double) { return 0.0; };
  // The f32 bound in ulps (erf_inv: XLA's single-precision approximation).
  double f32_ulps = 2;
};

// Checks f64 (relative 1e-13 of max(|ref|, scale)) and f32 (<= c.f32_ulps, or
// the same absolute slack) results on `xs`; prints the largest errors seen.
void CheckReal(const Case& c, const std::vector<double>& xs) {
  const std::vector<double> got64 = RunF64(c.op, xs);
  ASSERT_EQ(got64.size(), xs.size());
  double worst64 = 0, worst64_x = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double want = static_cast<double>(c.ref(xs[i]));
    double err = RelError(got64[i], want);
    const double scale = std::max(std::fabs(want), c.scale(xs[i]));
    if (std::isfinite(err) && scale > std::fabs(want)) {
      err = std::fabs(got64[i] - want) / scale;
    }
    if (err > worst64) worst64 = err, worst64_x = xs[i];
    EXPECT_LE(err, 1e-13) << c.op << "(" << xs[i] << ") = " << got64[i] << ", want " << want;
  }
  std::vector<float> xs32;
  for (double x : xs) xs32.push_back(static_cast<float>(x));
  const std::vector<float> got32 = RunF32(c.op, xs32);
  ASSERT_EQ(got32.size(), xs.size());
  double worst32 = 0, worst32_x = 0;
  for (size_t i = 0; i < xs32.size(); ++i) {
    const double want = static_cast<double>(c.ref(xs32[i]));
    double err = UlpError(got32[i], want);
    if (std::isfinite(err) && std::fabs(got32[i] - want) <= 1e-13 * c.scale(xs32[i])) err = 0;
    if (err > worst32) worst32 = err, worst32_x = xs32[i];
    EXPECT_LE(err, c.f32_ulps) << c.op << "(" << xs32[i] << "f) = " << got32[i] << ", want "
                               << want;
  }
  std::cout << "chlo." << c.op << ": f64 max rel error " << worst64 << " at " << worst64_x
            << "; f32 max " << worst32 << " ulp at " << worst32_x << "\n";
}

// n + 1 evenly spaced points from lo to hi.
std::vector<double> Grid(double lo, double hi, int n) {
  std::vector<double> xs;
  for (int i = 0; i <= n; ++i) xs.push_back(lo + (hi - lo) * i / n);
  return xs;
}

std::vector<double> Concat(std::vector<std::vector<double>> parts) {
  std::vector<double> all;
  for (const auto& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

std::vector<double> LogGrid(double lo_exp, double hi_exp, int n, bool both_signs) {
  std::vector<double> xs;
  for (int i = 0; i <= n; ++i) {
    const double x = std::pow(10.0, lo_exp + (hi_exp - lo_exp) * i / n);
    xs.push_back(x);
    if (both_signs) xs.push_back(-x);
  }
  return xs;
}

const std::vector<double> kSpecial = {0.0,  -0.0, kInf, -kInf, kNaN, 1.0,
                                      -1.0, 2.0,  -2.0, 0.5,   -0.5};

// --------------------------------------------------------- long-double references

long double DigammaRef(long double x) {
  if (std::isnan(x) || x == -INFINITY || (x <= 0 && x == std::floor(x))) return NAN;
  if (x == INFINITY) return INFINITY;
  long double shift = 0;
  if (x < 0.5L) {  // psi(x) = psi(1 - x) - pi / tan(pi x)
    shift = std::numbers::pi_v<long double> /
            std::tan(std::numbers::pi_v<long double> * (x - std::nearbyint(x)));
    x = 1 - x;
  }
  long double sum = 0;
  for (; x < 40; x += 1) sum += 1 / x;
  const long double w = 1 / (x * x);
  const long double series =
      w * (1.0L / 12 - w * (1.0L / 120 - w * (1.0L / 252 - w * (1.0L / 240 - w / 132))));
  return std::log(x) - 0.5L / x - series - sum - shift;
}

// Bisection on erf (or erfc near +-1) in long double.
long double ErfInvRef(long double x) {
  if (std::isnan(x) || std::fabs(x) > 1) return NAN;
  if (std::fabs(x) == 1) return std::copysign(INFINITY, x);
  const long double a = std::fabs(x);
  const long double pi = std::numbers::pi_v<long double>;
  if (a < 1e-9L) return x * std::sqrt(pi) / 2 * (1 + a * a * pi / 12);  // Taylor series
  long double lo = 0, hi = 7;
  for (int i = 0; i < 200; ++i) {
    const long double mid = (lo + hi) / 2;
    const bool below = a <= 0.5L ? std::erf(mid) < a : std::erfc(mid) > 1 - a;
    (below ? lo : hi) = mid;
  }
  return std::copysign((lo + hi) / 2, x);
}

// e^-|x| I1(x) in long double: the power series (all terms positive) up to 5000.
long double BesselI1eRef(long double x) {
  if (std::isnan(x)) return x;
  const long double a = std::fabs(x), q = a * a / 4;
  if (a > 5000) {  // asymptotic expansion; its terms shrink fast out here
    long double term = 1, sum = 0;
    for (int k = 1; k < 12; ++k) {
      sum += term;
      term *= -(4 - (2 * k - 1.0L) * (2 * k - 1.0L)) / (8 * k * a);
    }
    return std::copysign(sum / std::sqrt(2 * std::numbers::pi_v<long double> * a), x);
  }
  long double term = a / 2, sum = 0;
  for (int k = 0; term > sum * 1e-22L || k < 2; ++k) {
    sum += term;
    term *= q / ((k + 1.0L) * (k + 2.0L));
  }
  return std::copysign(sum * std::exp(-a), x);
}

// ------------------------------------------------------------------- tests

TEST(ChloDecomposeTest, Lgamma) {
  Case c{"lgamma", [](long double x) { return std::lgamma(static_cast<double>(x)); },
         [](double x) { return x < 0 ? std::fabs(std::lgamma(1 - x)) + 1 : 0.0; }};
  CheckReal(c, Concat({kSpecial,
                       Grid(-10.03, 10.07, 2011),
                       LogGrid(-300, 305, 200, false),
                       LogGrid(-10, 10, 60, true),
                       {-1e10, -3.0, 3.0, 1.5, 2.5, 3.5, 1 + 1e-9, 2 - 1e-9, 1e-320,
                        std::numeric_limits<double>::max(), -2.4570247, -100.5}}));
}

TEST(ChloDecomposeTest, Digamma) {
  Case c{"digamma", DigammaRef, [](double x) {
           return x < 0.5 ? std::fabs(static_cast<double>(DigammaRef(1 - x))) +
                                std::fabs(std::numbers::pi / std::tan(std::numbers::pi * x))
                          : 1e-4;
         }};
  CheckReal(c, Concat({kSpecial,
                       Grid(-10.03, 20.07, 3011),
                       LogGrid(-300, 300, 200, false),
                       LogGrid(-8, 8, 40, true),
                       {1.36, 1.56, -0.504, -1e15 - 0.5, 1e-320}}));
  // Golden values (mpmath): digamma(1) = -euler_gamma, and at and near the
  // zero, where the long-double reference above is only good to ~1e-18.
  const std::vector<double> x = {1.0, 1.4, 1.5, 1.4616321449683622, 1.4616321449683625, 1.46163214};
  const std::vector<double> want = {-0.5772156649015329,    -0.06138454458511624,
                                    0.03648997397857652,    -9.241265521729427e-17,
                                    1.2245374622004068e-16, -4.807746276832806e-09};
  const std::vector<double> got = RunF64("digamma", x);
  ASSERT_EQ(got.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 2e-15 * std::fabs(want[i])) << "digamma(" << x[i] << ")";
  }
}

TEST(ChloDecomposeTest, ErfAndErfc) {
  CheckReal({"erf", [](long double x) { return std::erf(static_cast<double>(x)); }},
            Concat({kSpecial, Grid(-6.01, 6.03, 1201), LogGrid(-300, 3, 100, true)}));
  CheckReal({"erfc", [](long double x) { return std::erfc(static_cast<double>(x)); }},
            Concat({kSpecial,
                    Grid(-6.01, 27.3, 3331),
                    LogGrid(-300, 3, 100, true),
                    {0.4999999999, 0.5, 26.5, 27.2, 30.0, 1e300}}));
}

TEST(ChloDecomposeTest, ErfInv) {
  std::vector<double> xs =
      Concat({kSpecial, Grid(-0.9995, 0.9995, 2001), LogGrid(-300, -0.01, 150, true), {1.5, -1.5}});
  for (int k = 1; k <= 53; k += 2) {  // 1 - 2^-k, near the poles
    xs.push_back(1 - std::ldexp(1.0, -k));
    xs.push_back(-1 + std::ldexp(1.0, -k));
  }
  // f32 is XLA's approximation (see ErfInvF32IsXlasApproximation): up to 44
  // ulp near +-1, where x * x rounds in f32 before log1p.
  Case c{"erf_inv", ErfInvRef};
  c.f32_ulps = 48;
  CheckReal(c, xs);
  // Golden value (mpmath): erfinv(0.5).
  EXPECT_DOUBLE_EQ(RunF64("erf_inv", {0.5})[0], 0.4769362762044699);
}

// XLA lowers f32 chlo.erf_inv to Giles' single-precision approximation;
// xlite emits the same operations, so results match XLA's wherever log1p does.
// The reference here is that approximation in float arithmetic, as the
// interpreter evaluates each HLO operation.
TEST(ChloDecomposeTest, ErfInvF32IsXlasApproximation) {
  const float central[] = {2.81022636e-08f,  3.43273939e-07f, -3.5233877e-06f,
                           -4.39150654e-06f, 0.00021858087f,  -0.00125372503f,
                           -0.00417768164f,  0.246640727f,    1.50140941f};
  const float tail[] = {-0.000200214257f, 0.000100950558f, 0.00134934322f,
                        -0.00367342844f,  0.00573950773f,  -0.0076224613f,
                        0.00943887047f,   1.00167406f,     2.83297682f};
  auto xla = [&](float x) {
    const float w = -std::log1p(x * -x);
    const bool c = w < 5.0f;
    const float t = c ? w - 2.5f : std::sqrt(w) - 3.0f;
    float p = c ? central[0] : tail[0];
    for (int i = 1; i < 9; ++i) p = (c ? central[i] : tail[i]) + p * t;
    return std::fabs(x) == 1.0f ? x * std::numeric_limits<float>::infinity() : p * x;
  };
  std::vector<float> xs;
  for (double x : Grid(-0.99995, 0.99995, 4001)) xs.push_back(static_cast<float>(x));
  for (float x : {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1e-30f, -0.99999994f, 0.99999994f}) {
    xs.push_back(x);
  }
  const std::vector<float> got = RunF32("erf_inv", xs);
  ASSERT_EQ(got.size(), xs.size());
  int differ = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const float want = xla(xs[i]);
    if (std::bit_cast<uint32_t>(got[i]) != std::bit_cast<uint32_t>(want)) {
      ++differ;
      ADD_FAILURE() << "erf_inv(" << xs[i] << "f) = " << got[i] << ", XLA's approximation gives "
                    << want;
      if (differ > 5) break;
    }
  }
}

TEST(ChloDecomposeTest, BesselI1e) {
  CheckReal({"bessel_i1e", BesselI1eRef},
            Concat({kSpecial,
                    Grid(-30.01, 30.03, 3001),
                    LogGrid(-300, 2.8, 150, true),
                    {19.999999, 20.0, 20.000001, 4999.0, 5001.0, 1e10, 1e300}}));
  // Golden value (mpmath): besseli(1, 1) * exp(-1).
  EXPECT_DOUBLE_EQ(RunF64("bessel_i1e", {1.0})[0], 0.20791041534970844);
}

TEST(ChloDecomposeTest, DirectRealOps) {
  const std::vector<double> trig = Concat({kSpecial, Grid(-3.7, 3.9, 301)});
  const std::vector<double> unit = Concat({kSpecial, Grid(-1.2, 1.2, 241)});
  CheckReal({"tan", [](long double x) { return std::tan(static_cast<double>(x)); }}, trig);
  CheckReal({"sinh", [](long double x) { return std::sinh(static_cast<double>(x)); }}, trig);
  CheckReal({"cosh", [](long double x) { return std::cosh(static_cast<double>(x)); }}, trig);
  CheckReal({"atan", [](long double x) { return std::atan(static_cast<double>(x)); }}, trig);
  CheckReal({"asinh", [](long double x) { return std::asinh(static_cast<double>(x)); }}, trig);
  CheckReal({"acosh", [](long double x) { return std::acosh(static_cast<double>(x)); }}, trig);
  CheckReal({"asin", [](long double x) { return std::asin(static_cast<double>(x)); }}, unit);
  CheckReal({"acos", [](long double x) { return std::acos(static_cast<double>(x)); }}, unit);
  CheckReal({"atanh", [](long double x) { return std::atanh(static_cast<double>(x)); }}, unit);
}

// f16 and bf16 compute in f64 and round once more: within 1 ulp of the reference.
TEST(ChloDecomposeTest, HalfTypes) {
  const std::vector<double> xs = {-3.3, -0.7, 0.1, 0.3, 0.9, 1.0, 1.7, 2.0, 5.5, 12.25};
  struct Op {
    std::string name;
    std::function<long double(long double)> ref;
    double input_scale = 1;
  };
  const std::vector<Op> ops = {
      {"lgamma", [](long double x) { return std::lgamma(static_cast<double>(x)); }},
      {"digamma", DigammaRef},
      {"erf_inv", ErfInvRef, 1.0 / 13},
      {"bessel_i1e", BesselI1eRef},
      {"asinh", [](long double x) { return std::asinh(static_cast<double>(x)); }}};
  for (PrimitiveType type : {PrimitiveType::F16, PrimitiveType::BF16}) {
    for (const Op& op : ops) {
      std::vector<double> in = xs;
      for (double& x : in) x *= op.input_scale;
      const Literal args = Doubles(type, in);
      absl::StatusOr<Literal> r = RunChlo(op.name, {args});
      ASSERT_TRUE(r.ok()) << op.name << ": " << r.status();
      ASSERT_EQ(r->shape().element_type(), type);
      for (size_t i = 0; i < xs.size(); ++i) {
        const double x = args.GetDouble(i);
        Literal want(Shape::Scalar(type));
        want.SetDouble(0, static_cast<double>(op.ref(x)));
        // Adjacent finite values of one sign have adjacent bit patterns.
        const int64_t ulps =
            static_cast<int64_t>(r->GetBits(i)) - static_cast<int64_t>(want.GetBits(0));
        EXPECT_LE(std::abs(ulps), 1) << op.name << " " << PrimitiveTypeName(type) << "(" << x
                                     << ") = " << r->GetDouble(i) << ", want " << want.GetDouble(0);
      }
    }
  }
}

TEST(ChloDecomposeTest, ComplexOps) {
  using C = std::complex<double>;
  std::vector<C> zs;
  for (double re : {-2.5, -1.0, -0.3, 0.0, 0.7, 1.0, 3.0}) {
    for (double im : {-1.5, -0.0, 0.0, 0.4, 2.0}) zs.push_back({re, im});
  }
  const std::vector<std::pair<std::string, C (*)(const C&)>> ops = {
      {"tan", std::tan},     {"sinh", std::sinh},   {"cosh", std::cosh},
      {"asin", std::asin},   {"acos", std::acos},   {"atan", std::atan},
      {"asinh", std::asinh}, {"acosh", std::acosh}, {"atanh", std::atanh}};
  for (PrimitiveType type : {PrimitiveType::C64, PrimitiveType::C128}) {
    Literal args(Shape::Array(type, {static_cast<int64_t>(zs.size())}));
    for (size_t i = 0; i < zs.size(); ++i) args.SetComplex(i, zs[i]);
    for (const auto& [op, fn] : ops) {
      absl::StatusOr<Literal> r = RunChlo(op, {args});
      ASSERT_TRUE(r.ok()) << op << ": " << r.status();
      ASSERT_EQ(r->shape().element_type(), type);
      const double tol = type == PrimitiveType::C64 ? 2e-7 : 1e-15;
      for (size_t i = 0; i < zs.size(); ++i) {
        const C z = args.GetComplex(i), want = fn(z), got = r->GetComplex(i);
        const bool finite = std::isfinite(want.real()) && std::isfinite(want.imag());
        EXPECT_TRUE(finite ? std::abs(got - want) <= tol * std::max(1.0, std::abs(want))
                           : got == want)
            << op << PrimitiveTypeName(type) << z << " = " << got << ", want " << want;
        if (z.imag() == 0 && std::isfinite(want.imag())) {  // branch cuts follow the zero's sign
          EXPECT_EQ(std::signbit(got.imag()), std::signbit(want.imag())) << op << z;
        }
      }
    }
  }
}

TEST(ChloDecomposeTest, NextAfterMatchesStd) {
  const double dmin = std::numeric_limits<double>::denorm_min();
  const double dmax = std::numeric_limits<double>::max();
  const std::vector<double> v = {0.0,   -0.0, 1.0,    -1.0, dmin,  -dmin, dmax,    -dmax, kInf,
                                 -kInf, kNaN, 1e-310, 3.5,  -2.25, 1e-38, 1.2e-38, 3.4e38};
  std::vector<double> xs, ys;
  for (double x : v) {
    for (double y : v) xs.push_back(x), ys.push_back(y);
  }
  absl::StatusOr<Literal> r64 =
      RunChlo("next_after", {Doubles(PrimitiveType::F64, xs), Doubles(PrimitiveType::F64, ys)});
  absl::StatusOr<Literal> r32 =
      RunChlo("next_after", {Doubles(PrimitiveType::F32, xs), Doubles(PrimitiveType::F32, ys)});
  ASSERT_TRUE(r64.ok()) << r64.status();
  ASSERT_TRUE(r32.ok()) << r32.status();
  for (size_t i = 0; i < xs.size(); ++i) {
    const double want64 = std::nextafter(xs[i], ys[i]);
    const double got64 = std::bit_cast<double>(r64->GetBits(i));
    if (std::isnan(want64)) {
      EXPECT_TRUE(std::isnan(got64)) << xs[i] << " " << ys[i];
    } else {
      EXPECT_EQ(std::bit_cast<uint64_t>(got64), std::bit_cast<uint64_t>(want64))
          << "f64 " << xs[i] << " " << ys[i] << " -> " << got64;
    }
    const float x32 = static_cast<float>(xs[i]), y32 = static_cast<float>(ys[i]);
    const float want32 = std::nextafter(x32, y32);
    const float got32 = std::bit_cast<float>(static_cast<uint32_t>(r32->GetBits(i)));
    if (std::isnan(want32)) {
      EXPECT_TRUE(std::isnan(got32)) << x32 << " " << y32;
    } else {
      EXPECT_EQ(std::bit_cast<uint32_t>(got32), std::bit_cast<uint32_t>(want32))
          << "f32 " << x32 << " " << y32 << " -> " << got32;
    }
  }
}

TEST(ChloDecomposeTest, NextAfterHalfTypesBits) {
  // {x bits, y, result bits}: 1 -> up/down, 0 -> +-smallest subnormal,
  // inf -> largest finite, largest finite -> inf, -0 toward +0 gives +0.
  struct Row {
    uint64_t x;
    double y;
    uint64_t want;
  };
  const std::vector<std::pair<PrimitiveType, std::vector<Row>>> cases = {
      {PrimitiveType::F16,
       {{0x3C00, 2, 0x3C01},
        {0x3C00, 0, 0x3BFF},
        {0x0000, -1, 0x8001},
        {0x0000, 1, 0x0001},
        {0x7C00, 0, 0x7BFF},
        {0x7BFF, kInf, 0x7C00},
        {0x8000, 0, 0x0000},
        {0xBC00, -2, 0xBC01}}},
      {PrimitiveType::BF16,
       {{0x3F80, 0, 0x3F7F}, {0x3F80, 2, 0x3F81}, {0x0000, -1, 0x8001}, {0xFF80, 0, 0xFF7F}}}};
  for (const auto& [type, rows] : cases) {
    Literal x(Shape::Array(type, {static_cast<int64_t>(rows.size())}));
    std::vector<double> ys;
    for (size_t i = 0; i < rows.size(); ++i) x.SetBits(i, rows[i].x), ys.push_back(rows[i].y);
    absl::StatusOr<Literal> r = RunChlo("next_after", {x, Doubles(type, ys)});
    ASSERT_TRUE(r.ok()) << r.status();
    for (size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(r->GetBits(i), rows[i].want) << PrimitiveTypeName(type) << " row " << i;
    }
  }
}

TEST(ChloDecomposeTest, ScalarOperands) {
  Literal x(Shape::Scalar(PrimitiveType::F32)), y(Shape::Scalar(PrimitiveType::F32));
  x.SetDouble(0, 3.0);
  y.SetDouble(0, 4.0);
  absl::StatusOr<Literal> lgamma = RunChlo("lgamma", {x});
  ASSERT_TRUE(lgamma.ok()) << lgamma.status();
  EXPECT_EQ(lgamma->GetDouble(0), static_cast<double>(std::log(2.0f)));
  absl::StatusOr<Literal> next = RunChlo("next_after", {x, y});
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->GetDouble(0), static_cast<double>(std::nextafter(3.0f, 4.0f)));
}

TEST(ChloDecomposeTest, Errors) {
  EXPECT_TRUE(IsChloElementwise("lgamma"));
  EXPECT_TRUE(IsChloElementwise("next_after"));
  EXPECT_FALSE(IsChloElementwise("polygamma"));
  EXPECT_FALSE(IsChloElementwise("chlo.lgamma"));
  auto status = [](absl::string_view op, PrimitiveType type) {
    Literal lit(Shape::Array(type, {2}));
    return RunChlo(op, {lit}).status();
  };
  EXPECT_EQ(status("lgamma", PrimitiveType::C64).message(), "chlo.lgamma on c64 is unsupported");
  EXPECT_EQ(status("erf", PrimitiveType::S32).code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(status("next_after", PrimitiveType::F32).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status("zeta", PrimitiveType::F32).code(), absl::StatusCode::kUnimplemented);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::stablehlo
