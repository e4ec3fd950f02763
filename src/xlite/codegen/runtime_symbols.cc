// Host functions for kernels. The complex ones follow the interpreter's
// definitions (eval_elementwise.cc) on std::complex, so both agree bit for bit.
#include "xlite/codegen/runtime_symbols.h"

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>

#include "xlite/ir/opcode.h"

namespace xlite::codegen {
namespace {

template <typename C>
C ComplexUnary(HloOpcode op, C z) {
  using F = typename C::value_type;
  switch (op) {
    case HloOpcode::kAbs:
      return C{std::abs(z), F{0}};
    case HloOpcode::kNegate:
      return -z;
    case HloOpcode::kSign: {
      const F magnitude = std::abs(z);
      return magnitude == F{0} ? C{0} : z / magnitude;
    }
    case HloOpcode::kSqrt:
      return std::sqrt(z);
    case HloOpcode::kRsqrt:
      return C{1} / std::sqrt(z);
    case HloOpcode::kCbrt:
      return std::pow(z, C{F{1} / F{3}});
    case HloOpcode::kExp:
      return std::exp(z);
    case HloOpcode::kExpm1:
      return std::exp(z) - C{1};
    case HloOpcode::kLog:
      return std::log(z);
    case HloOpcode::kLog1p:
      return std::log(C{1} + z);
    case HloOpcode::kLogistic:
      return C{1} / (C{1} + std::exp(-z));
    case HloOpcode::kSin:
      return std::sin(z);
    case HloOpcode::kCos:
      return std::cos(z);
    case HloOpcode::kTan:
      return std::tan(z);
    case HloOpcode::kTanh:
      return std::tanh(z);
    case HloOpcode::kSinh:
      return std::sinh(z);
    case HloOpcode::kCosh:
      return std::cosh(z);
    case HloOpcode::kAsin:
      return std::asin(z);
    case HloOpcode::kAcos:
      return std::acos(z);
    case HloOpcode::kAtan:
      return std::atan(z);
    case HloOpcode::kAsinh:
      return std::asinh(z);
    case HloOpcode::kAcosh:
      return std::acosh(z);
    case HloOpcode::kAtanh:
      return std::atanh(z);
    default:
      return C{std::nan(""), std::nan("")};  // the emitter never asks for others
  }
}

template <typename C>
C ComplexBinary(HloOpcode op, C x, C y) {
  using F = typename C::value_type;
  switch (op) {
    case HloOpcode::kMultiply:
      return x * y;
    case HloOpcode::kDivide:
      return x / y;
    case HloOpcode::kPower: {
      if (x == C{1} || y == C{0}) return C{1};
      const bool x_is_positive_infinity =
          x.imag() == F{0} && x.real() > F{0} && std::isinf(x.real());
      if (x_is_positive_infinity && y.imag() == F{0} && y.real() > F{0}) return x;
      if (x_is_positive_infinity && y.imag() == F{0} && y.real() < F{0}) return C{0};
      return std::pow(x, y);
    }
    case HloOpcode::kAtan2: {
      // atan2(x, y) = -i * log((y + i*x) / sqrt(y^2 + x^2)); x is the lhs.
      const C i{0, 1};
      return -i * std::log((y + i * x) / std::sqrt(y * y + x * x));
    }
    default:
      return C{std::nan(""), std::nan("")};
  }
}

template <typename F>
void Unary(int32_t op, F re, F im, F* out) {
  const std::complex<F> r = ComplexUnary(static_cast<HloOpcode>(op), std::complex<F>(re, im));
  out[0] = r.real();
  out[1] = r.imag();
}

template <typename F>
void Binary(int32_t op, F a_re, F a_im, F b_re, F b_im, F* out) {
  const std::complex<F> r = ComplexBinary(static_cast<HloOpcode>(op), std::complex<F>(a_re, a_im),
                                          std::complex<F>(b_re, b_im));
  out[0] = r.real();
  out[1] = r.imag();
}

extern "C" {
void xlite_complex_unary_c64(int32_t op, float re, float im, float* out) { Unary(op, re, im, out); }
void xlite_complex_unary_c128(int32_t op, double re, double im, double* out) {
  Unary(op, re, im, out);
}
void xlite_complex_binary_c64(int32_t op, float a, float b, float c, float d, float* out) {
  Binary(op, a, b, c, d, out);
}
void xlite_complex_binary_c128(int32_t op, double a, double b, double c, double d, double* out) {
  Binary(op, a, b, c, d, out);
}
}

template <typename Fn>
void* Address(Fn* fn) {
  return reinterpret_cast<void*>(fn);
}

// glibc's libmvec: the 4- and 8-lane (SSE, AVX2) variants LLVM's LIBMVEC_X86
// table maps sin, cos, pow, exp and log to when it vectorizes a loop, listed
// once and expanded twice (declarations, table entries). Their vector
// signatures do not matter here: only the addresses are taken (which also
// keeps libmvec linked).
// clang-format off
#define XLITE_LIBMVEC_SYMBOLS(X)                                          \
  X(_ZGVbN2v_sin)  X(_ZGVdN4v_sin)  X(_ZGVbN4v_sinf)  X(_ZGVdN8v_sinf)    \
  X(_ZGVbN2v_cos)  X(_ZGVdN4v_cos)  X(_ZGVbN4v_cosf)  X(_ZGVdN8v_cosf)    \
  X(_ZGVbN2v_exp)  X(_ZGVdN4v_exp)  X(_ZGVbN4v_expf)  X(_ZGVdN8v_expf)    \
  X(_ZGVbN2v_log)  X(_ZGVdN4v_log)  X(_ZGVbN4v_logf)  X(_ZGVdN8v_logf)    \
  X(_ZGVbN2vv_pow) X(_ZGVdN4vv_pow) X(_ZGVbN4vv_powf) X(_ZGVdN8vv_powf)
// clang-format on
extern "C" {
#define XLITE_DECLARE(symbol) void symbol();
XLITE_LIBMVEC_SYMBOLS(XLITE_DECLARE)
#undef XLITE_DECLARE
#define XLITE_DECLARE_EXTRA(scalar, vector, lanes) void vector();
XLITE_LIBMVEC_EXTRAS(XLITE_DECLARE_EXTRA)
#undef XLITE_DECLARE_EXTRA
#define XLITE_DECLARE_AVX512(scalar, vector, lanes, intrinsic) void vector();
XLITE_LIBMVEC_AVX512(XLITE_DECLARE_AVX512)
#undef XLITE_DECLARE_AVX512
}

}  // namespace

const std::vector<std::pair<const char*, void*>>& KernelRuntimeSymbols() {
  // float and double overloads of the libm functions the emitter names, and
  // those LLVM lowers its intrinsics (llvm.exp, llvm.pow, frem, ...) to.
  static const auto* symbols = new std::vector<std::pair<const char*, void*>>{
#define XLITE_LIBM(name)                                           \
  {#name "f", Address(static_cast<float (*)(float)>(&::name##f))}, \
      {#name, Address(static_cast<double (*)(double)>(&::name))}
      XLITE_LIBM(exp),
      XLITE_LIBM(expm1),
      XLITE_LIBM(log),
      XLITE_LIBM(log1p),
      XLITE_LIBM(sin),
      XLITE_LIBM(cos),
      XLITE_LIBM(tan),
      XLITE_LIBM(tanh),
      XLITE_LIBM(sinh),
      XLITE_LIBM(cosh),
      XLITE_LIBM(asin),
      XLITE_LIBM(acos),
      XLITE_LIBM(atan),
      XLITE_LIBM(asinh),
      XLITE_LIBM(acosh),
      XLITE_LIBM(atanh),
      XLITE_LIBM(erf),
      XLITE_LIBM(cbrt),
      XLITE_LIBM(exp2),
      XLITE_LIBM(log2),
      XLITE_LIBM(log10),
      XLITE_LIBM(exp10),
      XLITE_LIBM(sqrt),
      XLITE_LIBM(ceil),
      XLITE_LIBM(floor),
      XLITE_LIBM(round),
      XLITE_LIBM(trunc),
      XLITE_LIBM(nearbyint),
      XLITE_LIBM(rint),
#undef XLITE_LIBM
      {"powf", Address(static_cast<float (*)(float, float)>(&::powf))},
      {"pow", Address(static_cast<double (*)(double, double)>(&::pow))},
      {"fmodf", Address(static_cast<float (*)(float, float)>(&::fmodf))},
      {"fmod", Address(static_cast<double (*)(double, double)>(&::fmod))},
      {"atan2f", Address(static_cast<float (*)(float, float)>(&::atan2f))},
      {"atan2", Address(static_cast<double (*)(double, double)>(&::atan2))},
      {"hypotf", Address(static_cast<float (*)(float, float)>(&::hypotf))},
      {"hypot", Address(static_cast<double (*)(double, double)>(&::hypot))},
      {"ldexpf", Address(static_cast<float (*)(float, int)>(&::ldexpf))},
      {"ldexp", Address(static_cast<double (*)(double, int)>(&::ldexp))},
      {"sincosf", Address(static_cast<void (*)(float, float*, float*)>(&::sincosf))},
      {"sincos", Address(static_cast<void (*)(double, double*, double*)>(&::sincos))},
#define XLITE_ENTRY(symbol) {#symbol, Address(&symbol)},
      XLITE_LIBMVEC_SYMBOLS(XLITE_ENTRY)
#undef XLITE_ENTRY
#define XLITE_EXTRA_ENTRY(scalar, vector, lanes) {#vector, Address(&vector)},
          XLITE_LIBMVEC_EXTRAS(XLITE_EXTRA_ENTRY)
#undef XLITE_EXTRA_ENTRY
#define XLITE_AVX512_ENTRY(scalar, vector, lanes, intrinsic) {#vector, Address(&vector)},
              XLITE_LIBMVEC_AVX512(XLITE_AVX512_ENTRY)
#undef XLITE_AVX512_ENTRY
      // LLVM turns copy and fill loops into calls of these.
      {"memcpy", Address(&::memcpy)},
      {"memmove", Address(&::memmove)},
      {"memset", Address(&::memset)},
      {kComplexUnaryC64, Address(&xlite_complex_unary_c64)},
      {kComplexUnaryC128, Address(&xlite_complex_unary_c128)},
      {kComplexBinaryC64, Address(&xlite_complex_binary_c64)},
      {kComplexBinaryC128, Address(&xlite_complex_binary_c128)},
  };
  return *symbols;
}

}  // namespace xlite::codegen
