// The C functions JIT-compiled kernels call: the C library's math functions
// and the complex-number helpers below (std::complex, so kernels compute what
// the interpreter computes). The Jit defines every one of them in the kernels'
// symbol table, so nothing is looked up by chance.
#ifndef XLITE_CODEGEN_RUNTIME_SYMBOLS_H_
#define XLITE_CODEGEN_RUNTIME_SYMBOLS_H_

#include <utility>
#include <vector>

namespace xlite::codegen {

// void f(int32 opcode, T re, T im, T* out) for a unary HloOpcode (abs puts
// |z| in out[0]); void f(int32 opcode, T a_re, T a_im, T b_re, T b_im, T* out)
// for divide, power, atan2 and multiply.
inline constexpr char kComplexUnaryC64[] = "xlite_complex_unary_c64";
inline constexpr char kComplexUnaryC128[] = "xlite_complex_unary_c128";
inline constexpr char kComplexBinaryC64[] = "xlite_complex_binary_c64";
inline constexpr char kComplexBinaryC128[] = "xlite_complex_binary_c128";

// glibc's (2.35+) AVX2 vector variants of the libm functions the emitter
// calls that LLVM 16's LIBMVEC_X86 table lacks, as (scalar name, vector name,
// lanes): the JIT lets the loop vectorizer use them (jit.cc) and defines them
// (KernelRuntimeSymbols). The vector names follow the x86 vector ABI
// (_ZGV, d: AVX2, N: unmasked, lanes, one v per argument).
// clang-format off
#define XLITE_LIBMVEC_EXTRAS(X)                                                        \
  X(tanf, _ZGVdN8v_tanf, 8)       X(tan, _ZGVdN4v_tan, 4)                              \
  X(sinhf, _ZGVdN8v_sinhf, 8)     X(sinh, _ZGVdN4v_sinh, 4)                            \
  X(coshf, _ZGVdN8v_coshf, 8)     X(cosh, _ZGVdN4v_cosh, 4)                            \
  X(asinf, _ZGVdN8v_asinf, 8)     X(asin, _ZGVdN4v_asin, 4)                            \
  X(acosf, _ZGVdN8v_acosf, 8)     X(acos, _ZGVdN4v_acos, 4)                            \
  X(atanf, _ZGVdN8v_atanf, 8)     X(atan, _ZGVdN4v_atan, 4)                            \
  X(asinhf, _ZGVdN8v_asinhf, 8)   X(asinh, _ZGVdN4v_asinh, 4)                          \
  X(acoshf, _ZGVdN8v_acoshf, 8)   X(acosh, _ZGVdN4v_acosh, 4)                          \
  X(atanhf, _ZGVdN8v_atanhf, 8)   X(atanh, _ZGVdN4v_atanh, 4)                          \
  X(cbrtf, _ZGVdN8v_cbrtf, 8)     X(cbrt, _ZGVdN4v_cbrt, 4)                            \
  X(expm1f, _ZGVdN8v_expm1f, 8)   X(expm1, _ZGVdN4v_expm1, 4)                          \
  X(atan2f, _ZGVdN8vv_atan2f, 8)  X(atan2, _ZGVdN4vv_atan2, 4)                         \
  X(tanh, _ZGVdN4v_tanh, 4)       X(log1p, _ZGVdN4v_log1p, 4)  X(erf, _ZGVdN4v_erf, 4)
// clang-format on

// glibc's AVX-512 variants (_ZGVe: 16 f32 or 8 f64 lanes) of the functions
// above and of those LLVM's LIBMVEC_X86 table maps only to SSE and AVX2
// variants (sin, cos, exp, log, pow: also by their intrinsics' names), as
// (scalar name, vector name, lanes, intrinsic name or ""): on hosts with
// AVX-512F the JIT's 512-bit loops call them whole rather than as two
// 8-lane AVX2 calls (1 Mi elements, one thread: cbrtf 2.8x, expm1f 2.1x,
// asinhf, atanhf 1.7-2x, coshf, sinf, tanf 1.1-1.3x faster, bench/RESULTS.md).
// Not atanf: its AVX-512 variant was 4-8% slower than two AVX2 calls.
// clang-format off
#define XLITE_LIBMVEC_AVX512(X)                                                           \
  X(sinf, _ZGVeN16v_sinf, 16, "llvm.sin.f32")     X(sin, _ZGVeN8v_sin, 8, "llvm.sin.f64")      \
  X(cosf, _ZGVeN16v_cosf, 16, "llvm.cos.f32")     X(cos, _ZGVeN8v_cos, 8, "llvm.cos.f64")      \
  X(expf, _ZGVeN16v_expf, 16, "llvm.exp.f32")     X(exp, _ZGVeN8v_exp, 8, "llvm.exp.f64")      \
  X(logf, _ZGVeN16v_logf, 16, "llvm.log.f32")     X(log, _ZGVeN8v_log, 8, "llvm.log.f64")      \
  X(powf, _ZGVeN16vv_powf, 16, "llvm.pow.f32")    X(pow, _ZGVeN8vv_pow, 8, "llvm.pow.f64")     \
  X(tanf, _ZGVeN16v_tanf, 16, "")       X(tan, _ZGVeN8v_tan, 8, "")                            \
  X(sinhf, _ZGVeN16v_sinhf, 16, "")     X(sinh, _ZGVeN8v_sinh, 8, "")                          \
  X(coshf, _ZGVeN16v_coshf, 16, "")     X(cosh, _ZGVeN8v_cosh, 8, "")                          \
  X(asinf, _ZGVeN16v_asinf, 16, "")     X(asin, _ZGVeN8v_asin, 8, "")                          \
  X(acosf, _ZGVeN16v_acosf, 16, "")     X(acos, _ZGVeN8v_acos, 8, "")                          \
  X(atan, _ZGVeN8v_atan, 8, "")                                                               \
  X(asinhf, _ZGVeN16v_asinhf, 16, "")   X(asinh, _ZGVeN8v_asinh, 8, "")                        \
  X(acoshf, _ZGVeN16v_acoshf, 16, "")   X(acosh, _ZGVeN8v_acosh, 8, "")                        \
  X(atanhf, _ZGVeN16v_atanhf, 16, "")   X(atanh, _ZGVeN8v_atanh, 8, "")                        \
  X(cbrtf, _ZGVeN16v_cbrtf, 16, "")     X(cbrt, _ZGVeN8v_cbrt, 8, "")                          \
  X(expm1f, _ZGVeN16v_expm1f, 16, "")   X(expm1, _ZGVeN8v_expm1, 8, "")                        \
  X(atan2f, _ZGVeN16vv_atan2f, 16, "")  X(atan2, _ZGVeN8vv_atan2, 8, "")                       \
  X(tanh, _ZGVeN8v_tanh, 8, "")         X(log1p, _ZGVeN8v_log1p, 8, "")  X(erf, _ZGVeN8v_erf, 8, "")
// clang-format on

// (name, address) of every function kernels may call.
const std::vector<std::pair<const char*, void*>>& KernelRuntimeSymbols();

}  // namespace xlite::codegen

#endif  // XLITE_CODEGEN_RUNTIME_SYMBOLS_H_
