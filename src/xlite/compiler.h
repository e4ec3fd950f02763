// Compile(): the CPU backend's whole pipeline for one device (compiler.cc
// reads as the list of stages). The module becomes the executable's.
//
//   CompileOptions options;
//   options.debug = debug_options;   // --xla_dump_to, pass flags, --xlite_*
//   ASSIGN_OR_RETURN(std::unique_ptr<runtime::Executable> e,
//                    Compile(std::move(module), options));
#ifndef XLITE_COMPILER_H_
#define XLITE_COMPILER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "xlite/ir/module.h"
#include "xlite/runtime/executable.h"
#include "xlite/support/flags.h"

namespace xlite {

struct CompileOptions {
  // --xla_dump_to (before/after_optimizations HLO, the buffer assignment,
  // the thunks, the kernels' LLVM IR), --xla_disable_hlo_passes,
  // --xla_disable_all_hlo_passes, --xlite_verify_each_pass,
  // --xlite_poison_dead_slices, ...
  DebugOptions debug;
  // The NNNN of the dump files' module_NNNN prefix.
  int64_t module_id = 1;
  // LLVM's optimization level for the kernels (0 to 3).
  int opt_level = 2;
};

// Errors: the verifier's, the passes' and the memory planner's; an
// instruction the backend cannot run (an opcode, element type, layout or
// custom-call target) is Unimplemented naming it.
absl::StatusOr<std::unique_ptr<runtime::Executable>> Compile(std::unique_ptr<HloModule> module,
                                                             const CompileOptions& options = {});

// The HLO half of Compile (`xlite opt --pipeline=cpu`): verification,
// simplification, the lowering passes, fusion and memory planning (which
// schedules the module and inserts copies). `module` is left as Compile dumps
// it in cpu_after_optimizations.txt; the same dumps are written.
absl::Status OptimizeHloModuleForCpu(HloModule& module, const CompileOptions& options = {});

}  // namespace xlite

#endif  // XLITE_COMPILER_H_
