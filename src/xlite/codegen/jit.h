// The JIT: one per executable. Emits kernels for HLO instructions as LLVM IR,
// optimizes them for the host CPU (its name and features, with
// prefer-vector-width=512: LLVM otherwise keeps to 256-bit vectors on cores
// that have AVX-512) and compiles them in an ORC LLJIT whose code lives as
// long as the Jit. No LLVM types in this header.
#ifndef XLITE_CODEGEN_JIT_H_
#define XLITE_CODEGEN_JIT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "xlite/codegen/kernel.h"

namespace xlite::codegen {

struct JitOptions {
  // The new pass manager's default pipeline at -O<opt_level> (0 to 3).
  int opt_level = 2;
  // The "prefer-vector-width" function attribute, in bits (0: LLVM's choice).
  int prefer_vector_width = 512;
  // --xla_dump_to: where each Compile() writes its module's LLVM IR before
  // and after optimization (<dump_name>.ir-no-opt.ll, .ir-with-opt.ll), as
  // XLA:CPU does. Empty: no dump.
  std::string dump_to;
  // Threads that compile independent kernels at once (each its own LLVM
  // module); 0: one per core this process may run on. Dumps and whole-loop kernels compile as one
  // module on the calling thread.
  int compile_threads = 0;
};

// Compile() must not run on two threads at once; compiled kernels may run on
// any number of threads, for as long as the Jit lives.
class Jit {
 public:
  static absl::StatusOr<std::unique_ptr<Jit>> Create(JitOptions options = {});
  ~Jit();
  Jit(const Jit&) = delete;
  Jit& operator=(const Jit&) = delete;

  // Emits `specs` as one LLVM module, optimizes and compiles it, and returns
  // one kernel per spec, in order. An instruction (opcode, element type or
  // feature) the code generator does not handle is an Unimplemented error
  // naming it; nothing is compiled then. `dump_name` names the dump files
  // (e.g. "module_0001.jit_f").
  absl::StatusOr<std::vector<CompiledKernel>> Compile(absl::Span<const KernelSpec> specs,
                                                      absl::string_view dump_name = "kernels");

  // The host CPU the code is compiled for, as LLVM names it ("znver4"), and
  // its features ("+avx512f,+fma,...").
  const std::string& cpu_name() const;
  const std::string& cpu_features() const;

 private:
  struct Impl;
  explicit Jit(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace xlite::codegen

#endif  // XLITE_CODEGEN_JIT_H_
