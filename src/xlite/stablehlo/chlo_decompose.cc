#include "xlite/stablehlo/chlo_decompose.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <numbers>
#include <utility>
#include <vector>

#include "xlite/support/status.h"

namespace xlite::stablehlo {
namespace {

// ------------------------------------------------------- expression helper

class Ops;

// One emitted value; operators emit HLO so the formulas below read as math.
// A null `h` means an earlier emission failed (Ops keeps the error).
struct V {
  Ops* o = nullptr;
  HloInstruction* h = nullptr;
};

class Ops {
 public:
  explicit Ops(HloEmitter& e) : e_(e) {}
  const absl::Status& status() const { return status_; }

  V Wrap(HloInstruction* h) { return {this, h}; }
  V Op(HloOpcode opcode, std::initializer_list<V> args) {
    std::vector<HloInstruction*> operands;
    for (const V& a : args) {
      if (a.h == nullptr) return {this, nullptr};
      operands.push_back(a.h);
    }
    return Keep(e_.Op(opcode, operands));
  }
  V Compare(ComparisonDirection direction, V a, V b) {
    if (a.h == nullptr || b.h == nullptr) return {this, nullptr};
    return Keep(e_.Compare(direction, a.h, b.h));
  }
  // `value` in like's type and shape (all values of one emission share the
  // dimensions, so constants are cached by type and value).
  V Const(V like, double value) {
    if (like.h == nullptr) return {this, nullptr};
    HloInstruction*& cached =
        constants_[{like.h->shape().element_type(), std::bit_cast<uint64_t>(value)}];
    if (cached == nullptr) cached = Keep(e_.Splat(like.h, value)).h;
    return {this, cached};
  }
  V Convert(V x, PrimitiveType type) {
    if (x.h == nullptr) return {this, nullptr};
    return Keep(e_.Convert(x.h, type));
  }
  V BitcastConvert(V x, PrimitiveType type) {
    if (x.h == nullptr) return {this, nullptr};
    Shape shape = x.h->shape();
    shape.set_element_type(type);
    return Keep(e_.Add(e_.Make(HloOpcode::kBitcastConvert, {x.h}, shape)));
  }

 private:
  V Keep(absl::StatusOr<HloInstruction*> result) {
    if (!result.ok()) {
      if (status_.ok()) status_ = result.status();
      return {this, nullptr};
    }
    return {this, *result};
  }

  HloEmitter& e_;
  absl::Status status_;
  std::map<std::pair<PrimitiveType, uint64_t>, HloInstruction*> constants_;
};

V K(V like, double value) { return like.o->Const(like, value); }
V Un(HloOpcode opcode, V x) { return x.o->Op(opcode, {x}); }
V Bin(HloOpcode opcode, V a, V b) { return a.o->Op(opcode, {a, b}); }

V operator+(V a, V b) { return Bin(HloOpcode::kAdd, a, b); }
V operator-(V a, V b) { return Bin(HloOpcode::kSubtract, a, b); }
V operator*(V a, V b) { return Bin(HloOpcode::kMultiply, a, b); }
V operator/(V a, V b) { return Bin(HloOpcode::kDivide, a, b); }
V operator-(V a) { return Un(HloOpcode::kNegate, a); }
V operator+(V a, double b) { return a + K(a, b); }
V operator-(V a, double b) { return a - K(a, b); }
V operator*(V a, double b) { return a * K(a, b); }
V operator+(double a, V b) { return K(b, a) + b; }
V operator-(double a, V b) { return K(b, a) - b; }
V operator*(double a, V b) { return K(b, a) * b; }
V operator/(double a, V b) { return K(b, a) / b; }

V Cmp(ComparisonDirection d, V a, V b) { return a.o->Compare(d, a, b); }
V operator<(V a, V b) { return Cmp(ComparisonDirection::kLt, a, b); }
V operator<(V a, double b) { return a < K(a, b); }
V operator<=(V a, double b) { return Cmp(ComparisonDirection::kLe, a, K(a, b)); }
V operator>(V a, V b) { return Cmp(ComparisonDirection::kGt, a, b); }
V operator>(V a, double b) { return a > K(a, b); }
V Eq(V a, V b) { return Cmp(ComparisonDirection::kEq, a, b); }
V Eq(V a, double b) { return Eq(a, K(a, b)); }
V operator&(V a, V b) { return Bin(HloOpcode::kAnd, a, b); }
V operator|(V a, V b) { return Bin(HloOpcode::kOr, a, b); }

V Select(V p, V a, V b) { return p.o->Op(HloOpcode::kSelect, {p, a, b}); }
V Abs(V x) { return Un(HloOpcode::kAbs, x); }
V Floor(V x) { return Un(HloOpcode::kFloor, x); }
V RoundEven(V x) { return Un(HloOpcode::kRoundNearestEven, x); }
V Sqrt(V x) { return Un(HloOpcode::kSqrt, x); }
V Exp(V x) { return Un(HloOpcode::kExp, x); }
V Log(V x) { return Un(HloOpcode::kLog, x); }
V Sin(V x) { return Un(HloOpcode::kSin, x); }
V Tan(V x) { return Un(HloOpcode::kTan, x); }
V Erf(V x) { return Un(HloOpcode::kErf, x); }
V Min(V a, double b) { return Bin(HloOpcode::kMinimum, a, K(a, b)); }
V Min(V a, V b) { return Bin(HloOpcode::kMinimum, a, b); }
V Max(V a, double b) { return Bin(HloOpcode::kMaximum, a, K(a, b)); }
V IsNan(V x) { return Cmp(ComparisonDirection::kNe, x, x); }

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = std::numbers::pi;

// NaN inputs give NaN whatever the selects below picked.
V KeepNan(V x, V r) { return Select(IsNan(x), x, r); }

// sum c[i] x^i.
V Horner(V x, absl::Span<const double> c) {
  V p = K(x, c.back());
  for (int i = static_cast<int>(c.size()) - 2; i >= 0; --i) p = p * x + c[i];
  return p;
}

// sum c[i] T_i(t) for t in [-1, 1] by Clenshaw's recurrence (stable for any length).
V Chebyshev(V t, absl::Span<const double> c) {
  const V two_t = t + t;
  V b1 = K(t, c.back());
  V b2 = K(t, 0);
  for (int i = static_cast<int>(c.size()) - 2; i >= 1; --i) {
    const V b0 = two_t * b1 - b2 + c[i];
    b2 = b1;
    b1 = b0;
  }
  return t * b1 - b2 + c[0];
}

// Coefficients below were computed with 50-digit arithmetic (mpmath); the
// Chebyshev ones by interpolation at Chebyshev nodes, truncated where the
// terms fall below 1e-18.

// ----------------------------------------------------------------- lgamma

// lgamma(2 + t) / t = (1 - gamma) + sum_{k>=2} (-1)^k (zeta(k) - 1) / k t^(k-1),
// truncated for |t| <= 0.5 (relative error < 2e-18).
constexpr std::array<double, 28> kLgammaAt2 = {
    0.42278433509846713,     0.3224670334241132,     -0.0673523010531981,
    0.020580808427784546,    -0.007385551028673986,  0.0028905103307415234,
    -0.001192753911703261,   0.0005096695247430425,  -0.00022315475845357939,
    9.945751278180853e-05,   -4.492623673813314e-05, 2.050721277567069e-05,
    -9.439488275268397e-06,  4.374866789907488e-06,  -2.039215753801366e-06,
    9.55141213040742e-07,    -4.492469198764566e-07, 2.1207184805554665e-07,
    -1.0043224823968099e-07, 4.7698101693639804e-08, -2.2711094608943164e-08,
    1.0838659214896955e-08,  -5.183475041970047e-09, 2.4836745438024785e-09,
    -1.1921401405860912e-09, 5.731367241678862e-10,  -2.7595228851242334e-10,
    1.330476437424449e-10};

// Lanczos approximation, g = 7, n = 9 (Godfrey's coefficients).
constexpr std::array<double, 9> kLanczos = {
    0.99999999999980993,  676.5203681218851,     -1259.1392167224028,
    771.32342877765313,   -176.61502916214059,   12.507343278686905,
    -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7};

// lgamma(y) for y >= 0.5 (or NaN).
V LgammaAtLeastHalf(V y) {
  // On [0.5, 3.5) shift to the series about 2, which stays accurate at the
  // zeros of lgamma (1 and 2): lgamma(y) = lgamma(y + 1) - log(y) etc.
  const V below_15 = y < 1.5, below_25 = y < 2.5, below_35 = y < 3.5;
  const V shift = Select(below_15, K(y, 1), Select(below_25, K(y, 2), K(y, 3)));
  const V t = Select(below_35, y - shift, K(y, 0));  // exact (Sterbenz)
  const V series = t * Horner(t, kLgammaAt2) +
                   Select(below_15, -Log(y), Select(below_25, K(y, 0), Log(y - 1.0)));
  // Elsewhere Lanczos: (z + 0.5)(log(z + g + 0.5) - 1) + log(sqrt(2 pi)) - g + log(A(z)).
  const V z = Max(y, 3.5) - 1.0;
  V a = K(z, kLanczos[0]);
  for (int k = 1; k < 9; ++k) a = a + kLanczos[k] / (z + static_cast<double>(k));
  const double log_sqrt_2pi = 0.5 * std::log(2 * kPi);
  const V lanczos = (z + 0.5) * (Log(z + 7.5) - 1.0) + (log_sqrt_2pi - 7.0) + Log(a);
  return Select(below_35, series, lanczos);
}

V Lgamma(absl::Span<const V> args) {
  const V x = args[0];
  const V reflect = x <= -0.5, small = Abs(x) < 0.5;
  const V y = Select(reflect, 1.0 - x, Select(small, x + 1.0, x));
  const V g = LgammaAtLeastHalf(y);
  // Reflection: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x), with
  // |sin(pi x)| from the (exact) distance of x to the nearest integer.
  const V frac = x - Floor(x);
  const V dist = Min(frac, 1.0 - frac);
  const V reflected = (std::log(kPi) - Log(Sin(kPi * dist))) - g;
  const V r = Select(reflect, reflected, Select(small, g - Log(Abs(x)), g));
  // Poles at the non-positive integers; lgamma(+-inf) = +inf.
  const V pole = (reflect & Eq(dist, 0)) | Eq(Abs(x), kInf);
  return KeepNan(x, Select(pole, K(x, kInf), r));
}

// ---------------------------------------------------------------- digamma

// B_2k / 2k for k = 1..9: psi(z) ~ log z - 1/2z - sum B_2k / (2k z^2k).
constexpr std::array<double, 9> kDigammaAsymptotic = {1.0 / 12,   -1.0 / 120,     1.0 / 252,
                                                      -1.0 / 240, 1.0 / 132,      -691.0 / 32760,
                                                      1.0 / 12,   -3617.0 / 8160, 43867.0 / 14364};

// The positive zero x0 of digamma (as hi + lo) and the Taylor coefficients
// psi^(k)(x0) / k! = (-1)^(k+1) zeta(k + 1, x0), k = 1..15 (|t| <= 0.1).
constexpr double kDigammaRootHi = 1.4616321449683622;
constexpr double kDigammaRootLo = 9.549995429965697e-17;
constexpr std::array<double, 15> kDigammaAtRoot = {
    0.9676722454476212,   -0.4427631689835921,   0.258499760955651,    -0.16394270544240652,
    0.10782405069126237,  -0.07219956125645471,  0.04880428816414311,  -0.03316112647484736,
    0.022597648232218104, -0.01542476590494896,  0.010538791616612175, -0.007204534386356869,
    0.004926781395729853, -0.003369801655439328, 0.002305126326734928};

// digamma(y) for y >= 0.5 (or NaN).
V DigammaAtLeastHalf(V y) {
  // psi(y) = psi(y + n) - sum_{k<n} 1 / (y + k) with y + n >= 10, where the
  // asymptotic series converges to double precision.
  V z = y, sum = K(y, 0);
  for (int i = 0; i < 10; ++i) {
    const V shift = z < 10.0;
    sum = sum + Select(shift, 1.0 / z, K(z, 0));
    z = Select(shift, z + 1.0, z);
  }
  const V w = 1.0 / (z * z);
  const V asymptotic = Log(z) - 0.5 / z - w * Horner(w, kDigammaAsymptotic);
  // The shift cancels near the zero x0; a Taylor series about x0 does not.
  const V t = (y - kDigammaRootHi) - kDigammaRootLo;
  return Select(Abs(t) < 0.1, t * Horner(t, kDigammaAtRoot), asymptotic - sum);
}

V Digamma(absl::Span<const V> args) {
  const V x = args[0];
  // Reflect all negative x but tiny ones (where pi x would lose bits), so
  // psi(1 - x) and pi / tan(pi x) do not cancel near the zero at -0.504.
  const V reflect = x < -0x1p-20, small = x < 0.5;
  const V y = Select(reflect, 1.0 - x, Select(small, x + 1.0, x));
  const V psi = DigammaAtLeastHalf(y);
  // Reflection: psi(x) = psi(1 - x) - pi / tan(pi x); tan has period 1, so
  // reduce x exactly first.
  const V reflected = psi - kPi / Tan(kPi * (x - RoundEven(x)));
  const V r = Select(reflect, reflected, Select(small, psi - 1.0 / x, psi));
  // Like XLA: NaN at the poles (the non-positive integers) and at -inf.
  const V pole = (x <= 0.0) & Eq(x, Floor(x));
  return KeepNan(x, Select(pole, K(x, kNaN), r));
}

// -------------------------------------------------------------- erf, erfc

// G(x) = exp(x^2) erfc(x) (x + 2) on [0.5, inf) as a Chebyshev series in
// t = ((x - 2) / (x + 2) - 0.2) / 0.8; G tends to 1/sqrt(pi), so the
// relative error stays small for large x.
constexpr std::array<double, 26> kErfcTail = {
    0.9739949793186762,      -0.48202889723521325,    0.07834316039603868,
    -0.005640402632517939,   -0.0006380051760285968,  0.00015524916589267537,
    7.809517806133496e-06,   -4.21300201076712e-06,   -2.3438312290585955e-07,
    1.2917225955374607e-07,  1.3095856237953059e-08,  -4.035294124615644e-09,
    -7.964802351746033e-10,  9.952287242058099e-11,   4.4278896783197736e-11,
    3.471724705622777e-13,   -2.0524195752587755e-12, -2.8897982368264727e-13,
    6.317960107286004e-14,   2.4857919943788018e-14,  6.059166186014991e-16,
    -1.2844428695819703e-15, -2.6588485349271095e-16, 2.5593811585654566e-17,
    2.106457752042209e-17,   2.712898786317939e-18};

// erfc(x) for x >= 0.5.
V ErfcTail(V x_in) {
  const V x = Min(Max(x_in, 0.5), 64.0);  // erfc(64) underflows; keeps inf out
  // exp(-x^2) = exp(-h^2) exp(-(x - h)(x + h)) with h = x cut to 20 fraction
  // bits, so h^2 is exact and the rounding of x^2 is not amplified by exp.
  const V h = Floor(x * 1048576.0) * (1.0 / 1048576.0);
  const V e = Exp(-(h * h)) * Exp(-((x - h) * (x + h)));
  const V t = ((x - 2.0) / (x + 2.0) - 0.2) * 1.25;
  return e * Chebyshev(t, kErfcTail) / (x + 2.0);
}

// erfc(x); 1 - erf(x) only where that loses nothing (|x| < 0.5).
V ErfcOf(V x) {
  const V tail = ErfcTail(Abs(x));
  return Select(Abs(x) < 0.5, 1.0 - Erf(x), Select(x < 0.0, 2.0 - tail, tail));
}

V Erfc(absl::Span<const V> args) { return KeepNan(args[0], ErfcOf(args[0])); }

// ----------------------------------------------------------------- erf_inv

// erfinv(x) / x as Chebyshev series in w = -log(1 - x^2): on w in [0, 6.25]
// in w, on [6.25, 37.2] in sqrt(w) (w <= 36.1 for doubles). Relative error
// < 3e-10; one Halley step then gives full precision.
constexpr std::array<double, 14> kErfInvW = {
    1.6304220989459326,     0.7315674456742257,     -0.02123503214250459,    -0.00658088754244946,
    0.0019488711426908828,  -0.0001415834338639285, -4.9292864636140966e-05, 1.4752887932992058e-05,
    -6.111918767295173e-07, -5.106997578050524e-07, 1.159032379362454e-07,   1.489507602129742e-09,
    -5.250213013060913e-09, 9.027848308469164e-10};
constexpr std::array<double, 17> kErfInvSqrtW = {
    4.144960288545252,       1.8142936511700312,     0.0027512361417964754,
    -0.0015682019016953195,  0.0005936993908571357,  -0.00022618672512537063,
    8.991029707274697e-05,   -3.461299685534412e-05, 1.1711521274590257e-05,
    -3.0629792820912315e-06, 4.0315956466594755e-07, 1.3127447155109954e-07,
    -1.1541459882168002e-07, 4.4314202042124756e-08, -9.355722531017918e-09,
    -1.658825718907417e-10,  9.206061565562991e-10};

V ErfInv(absl::Span<const V> args) {
  const V x = args[0];
  const V ax = Abs(x);
  const V w = -Log((1.0 - ax) * (1.0 + ax));
  const V q = Select(w < 6.25, Chebyshev((w - 3.125) * 0.32, kErfInvW),
                     Chebyshev((Sqrt(w) - 4.3) * (1 / 1.8), kErfInvSqrtW));
  V y = ax * q;
  // Halley step on f(y) = erf(y) - ax (f''/f' = -2y). For ax > 0.5 the
  // residual is (1 - ax) - erfc(y): both exact or accurate near 1.
  const V f = Select(ax <= 0.5, Erf(y) - ax, (1.0 - ax) - ErfcOf(y));
  const V d = f * (std::sqrt(kPi) / 2) * Exp(y * y);
  y = y - d / (1.0 + y * d);
  V r = Select(x < 0.0, -y, y);
  r = Select(Eq(ax, 1.0), x * kInf, Select(ax > 1.0, K(x, kNaN), r));
  return KeepNan(x, Select(Eq(x, 0.0), x, r));  // keeps the sign of zero
}

// XLA's f32 erf_inv, op for op as the chlo legalization StableHLO and XLA
// share emits it (Giles' single-precision approximation: a degree-8
// polynomial in w - 2.5 for w = -log1p(-x^2) < 5, else in sqrt(w) - 3), so
// f32 programs give the values XLA gives.
constexpr std::array<double, 9> kErfInvF32Central = {
    2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
    -0.00125372503, -0.00417768164, 0.246640727,    1.50140941};
constexpr std::array<double, 9> kErfInvF32Tail = {-0.000200214257, 0.000100950558, 0.00134934322,
                                                  -0.00367342844,  0.00573950773,  -0.0076224613,
                                                  0.00943887047,   1.00167406,     2.83297682};

V ErfInvF32(absl::Span<const V> args) {
  const V x = args[0];
  const V w = -Un(HloOpcode::kLog1p, x * -x);
  const V central = w < 5.0;
  auto coefficient = [&](size_t i) {
    return Select(central, K(x, kErfInvF32Central[i]), K(x, kErfInvF32Tail[i]));
  };
  const V t = Select(central, w - 2.5, Sqrt(w) - 3.0);
  V p = coefficient(0);
  for (size_t i = 1; i < kErfInvF32Central.size(); ++i) p = coefficient(i) + p * t;
  return Select(Eq(Abs(x), 1.0), x * kInf, p * x);
}

// -------------------------------------------------------------- bessel_i1e

constexpr double kI1eSwitch = 20;

// I1(x) = x sum_k a_k x^2k with a_k = 1 / (2^(2k+1) k! (k+1)!); 36 terms
// reach 1e-17 at x = 20. All terms are positive: no cancellation.
const std::vector<double>& I1Series() {
  static const std::vector<double> c = [] {
    std::vector<double> v;
    long double a = 0.5L;
    for (int k = 0; k < 36; ++k) {
      if (k > 0) a /= 4.0L * k * (k + 1);
      v.push_back(static_cast<double>(a));
    }
    return v;
  }();
  return c;
}

// e^-x I1(x) sqrt(2 pi x) ~ sum_k (-1)^k prod_{j<=k} (4 - (2j-1)^2) / (k! 8^k) x^-k;
// 30 terms reach 2e-16 at x = 20.
const std::vector<double>& I1eAsymptotic() {
  static const std::vector<double> c = [] {
    std::vector<double> v;
    long double a = 1.0L;
    for (int k = 0; k < 30; ++k) {
      if (k > 0) a *= -(4.0L - (2.0L * k - 1) * (2.0L * k - 1)) / (8.0L * k);
      v.push_back(static_cast<double>(a));
    }
    return v;
  }();
  return c;
}

V BesselI1e(absl::Span<const V> args) {
  const V x = args[0];
  const V ax = Abs(x);
  const V series = x * Horner(x * x, I1Series()) * Exp(-ax);
  const V asymptotic = Horner(1.0 / ax, I1eAsymptotic()) / Sqrt(ax * (2 * kPi));
  const V r = Select(ax <= kI1eSwitch, series, Select(x < 0.0, -asymptotic, asymptotic));
  return KeepNan(x, r);
}

// -------------------------------------------------------------- next_after

// std::nextafter on the bits: a finite non-zero x steps its unsigned bit
// pattern by one, up when moving away from zero; zero goes to the smallest
// subnormal with y's sign; x == y gives y; NaNs give NaN.
V NextAfter(absl::Span<const V> args) {
  const V x = args[0], y = args[1];
  const PrimitiveType type = x.h ? x.h->shape().element_type() : PrimitiveType::F32;
  const PrimitiveType bits_type = type == PrimitiveType::F64   ? PrimitiveType::U64
                                  : type == PrimitiveType::F32 ? PrimitiveType::U32
                                                               : PrimitiveType::U16;
  const V bits = x.o->BitcastConvert(x, bits_type);
  const V one = K(bits, 1);
  const V away = Eq(y > x, x > 0.0);
  const V stepped = x.o->BitcastConvert(Select(away, bits + one, bits - one), type);
  const V tiny = x.o->BitcastConvert(one, type);
  V r = Select(Eq(x, 0.0), Select(y < 0.0, -tiny, tiny), stepped);
  r = Select(Eq(x, y), y, r);
  return Select(IsNan(x) | IsNan(y), x + y, r);
}

// ------------------------------------------------------------------ table

// Ops that HLO has as an opcode; the evaluator computes them with <cmath> and
// <complex> (principal branches), so they only need widening.
template <HloOpcode kOpcode>
V Direct(absl::Span<const V> args) {
  return Un(kOpcode, args[0]);
}

struct ChloOp {
  absl::string_view name;
  V (*emit)(absl::Span<const V> args);
  bool complex = false;  // also defined on c64/c128
  int arity = 1;
  bool widen = true;  // compute in f64/c128 and round back
};

constexpr ChloOp kChloOps[] = {
    {"lgamma", Lgamma},
    {"digamma", Digamma},
    {"erf", Direct<HloOpcode::kErf>},
    {"erfc", Erfc},
    {"erf_inv", ErfInv},
    {"bessel_i1e", BesselI1e},
    {"next_after", NextAfter, false, 2, false},
    {"tan", Direct<HloOpcode::kTan>, true},
    {"sinh", Direct<HloOpcode::kSinh>, true},
    {"cosh", Direct<HloOpcode::kCosh>, true},
    {"asin", Direct<HloOpcode::kAsin>, true},
    {"acos", Direct<HloOpcode::kAcos>, true},
    {"atan", Direct<HloOpcode::kAtan>, true},
    {"asinh", Direct<HloOpcode::kAsinh>, true},
    {"acosh", Direct<HloOpcode::kAcosh>, true},
    {"atanh", Direct<HloOpcode::kAtanh>, true},
};

const ChloOp* FindChloOp(absl::string_view name) {
  for (const ChloOp& op : kChloOps) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

}  // namespace

bool IsChloElementwise(absl::string_view op_name) { return FindChloOp(op_name) != nullptr; }

absl::StatusOr<HloInstruction*> EmitChloElementwise(HloEmitter& e, absl::string_view op_name,
                                                    absl::Span<HloInstruction* const> operands) {
  const ChloOp* op = FindChloOp(op_name);
  if (op == nullptr) return Unimplemented("chlo.", op_name, " is unsupported");
  if (static_cast<int>(operands.size()) != op->arity) {
    return InvalidArgument("chlo.", op_name, " takes ", op->arity, " operand(s), got ",
                           operands.size());
  }
  for (HloInstruction* operand : operands) {
    if (operand == nullptr || !operand->shape().IsArray() ||
        operand->shape().element_type() != operands[0]->shape().element_type() ||
        operand->shape().dimensions() != operands[0]->shape().dimensions()) {
      return InvalidArgument("chlo.", op_name, ": operands must be arrays of one shape");
    }
  }
  const PrimitiveType type = operands[0]->shape().element_type();
  const bool real = type == PrimitiveType::F16 || type == PrimitiveType::BF16 ||
                    type == PrimitiveType::F32 || type == PrimitiveType::F64;
  if (!real && !(op->complex && IsComplex(type))) {
    return Unimplemented("chlo.", op_name, " on ", PrimitiveTypeName(type), " is unsupported");
  }
  Ops ops(e);
  if (op_name == "erf_inv" && type != PrimitiveType::F64) {
    // As XLA: narrower types compute in f32 with its f32 approximation.
    const V x = ops.Convert(ops.Wrap(operands[0]), PrimitiveType::F32);
    const V result = ops.Convert(ErfInvF32({x}), type);
    RETURN_IF_ERROR(ops.status());
    return result.h;
  }
  const PrimitiveType wide = !op->widen ? type : real ? PrimitiveType::F64 : PrimitiveType::C128;
  std::vector<V> args;
  for (HloInstruction* operand : operands) args.push_back(ops.Convert(ops.Wrap(operand), wide));
  const V result = ops.Convert(op->emit(args), type);
  RETURN_IF_ERROR(ops.status());
  return result.h;
}

}  // namespace xlite::stablehlo
