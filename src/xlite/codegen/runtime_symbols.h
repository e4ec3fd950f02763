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

// (name, address) of every function kernels may call.
const std::vector<std::pair<const char*, void*>>& KernelRuntimeSymbols();

}  // namespace xlite::codegen

#endif  // XLITE_CODEGEN_RUNTIME_SYMBOLS_H_
