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

// (name, address) of every function kernels may call.
const std::vector<std::pair<const char*, void*>>& KernelRuntimeSymbols();

}  // namespace xlite::codegen

#endif  // XLITE_CODEGEN_RUNTIME_SYMBOLS_H_
