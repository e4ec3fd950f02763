#include "xlite/compiler.h"

#include <chrono>
#include <iostream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "xlite/buffers/buffer_assignment_text.h"
#include "xlite/buffers/plan_memory.h"
#include "xlite/codegen/jit.h"
#include "xlite/cpu/command_buffer_conversion.h"
#include "xlite/cpu/excess_precision.h"
#include "xlite/cpu/fusion.h"
#include "xlite/cpu/library_layouts.h"
#include "xlite/cpu/loop_input_placement.h"
#include "xlite/cpu/multi_output_fusion.h"
#include "xlite/cpu/reshape_bitcast.h"
#include "xlite/cpu/thunk_emitter.h"
#include "xlite/cpu/unfuse.h"
#include "xlite/passes/conv_canonicalization.h"
#include "xlite/passes/cse.h"
#include "xlite/passes/dce.h"
#include "xlite/passes/dot_decomposer.h"
#include "xlite/passes/dump.h"
#include "xlite/passes/dynamic_padder.h"
#include "xlite/passes/expanders.h"
#include "xlite/passes/layout_normalization.h"
#include "xlite/passes/scan_expander.h"
#include "xlite/passes/simplify.h"
#include "xlite/passes/sub_byte_normalization.h"
#include "xlite/passes/transpose_folding.h"
#include "xlite/support/status.h"
#include "xlite/text/printer.h"
#include "xlite/verify/verifier.h"

namespace xlite {
namespace {

// --xlite_pass_timing: every pass of the stage pipelines and the backend's
// steps (memory planning, thunk emission, JIT compilation, ...), one table
// on stderr when the compile ends, as `xlite opt --passes` prints its own.
class PassTiming {
 public:
  explicit PassTiming(bool on) : on_(on), mark_(std::chrono::steady_clock::now()) {}
  PassTiming(const PassTiming&) = delete;
  PassTiming& operator=(const PassTiming&) = delete;
  ~PassTiming() {
    if (on_ && !records_.empty()) std::cerr << FormatPassTiming(records_);
  }
  // Every pass a stage pipeline runs (PipelineOptionsFrom's after_pass).
  void Pass(const PassRecord& record) {
    if (on_) records_.push_back(record);
  }
  // Starts the clock of the next backend step.
  void Mark() { mark_ = std::chrono::steady_clock::now(); }
  // Records the backend step since the last mark.
  void Step(std::string name) {
    const auto now = std::chrono::steady_clock::now();
    if (on_) {
      records_.push_back({"cpu-backend", std::move(name),
                          std::chrono::duration<double, std::milli>(now - mark_).count(), true});
    }
    mark_ = now;
  }

 private:
  bool on_;
  std::chrono::steady_clock::time_point mark_;
  std::vector<PassRecord> records_;
};

PipelineOptions PipelineOptionsFrom(const DebugOptions& debug, ModuleDumper& dumper,
                                    PassTiming& timing) {
  PipelineOptions options;
  options.verify_each_pass = debug.verify_each_pass;
  options.disabled_passes = debug.disable_hlo_passes;
  options.enabled_passes_only = debug.enable_hlo_passes_only;
  options.after_pass = [&dumper, &timing](const HloModule& m, const PassRecord& r) {
    dumper.AfterPass(m, r);
    timing.Pass(r);
  };
  return options;
}

// The passes that change what runs: simplification, unless the module
// arrives with its passes' decisions (scheduled, or all passes disabled).
absl::Status Optimize(HloModule& module, const DebugOptions& debug, ModuleDumper& dumper,
                      PassTiming& timing) {
  if (debug.disable_all_hlo_passes || module.config().is_scheduled) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::unique_ptr<HloPassPipeline> simplify, SimplifyPipeline());
  simplify->set_options(PipelineOptionsFrom(debug, dumper, timing));
  return simplify->Run(module).status();
}

// Layouts the module does not bind become row-major (so transposes move data
// and loops read in order) and transposes fold into dots, before the
// lowering's dot-decomposer picks each operand's order. Scheduled modules
// keep their layouts.
absl::Status AssignLayouts(HloModule& module, const DebugOptions& debug, ModuleDumper& dumper,
                           PassTiming& timing) {
  if (debug.disable_all_hlo_passes || module.config().is_scheduled) return absl::OkStatus();
  HloPassPipeline pipeline("cpu-layout");
  pipeline.AddPass<LayoutNormalization>();
  pipeline.AddPass<TransposeFolding>();
  pipeline.AddPass<HloDce>();
  pipeline.set_options(PipelineOptionsFrom(debug, dumper, timing));
  return pipeline.Run(module).status();
}

// The rewrites the CPU runtime needs (they keep a schedule): fusions that
// are not one kernel unfused, rng and batch norms expanded, canonical dots
// and convolutions, row-major library operands.
absl::Status LowerForTheRuntime(HloModule& module, const DebugOptions& debug, ModuleDumper& dumper,
                                PassTiming& timing) {
  HloPassPipeline pipeline("cpu-lowering");
  pipeline.AddPass<DynamicPadder>();         // bounded dynamic dimensions static at their bounds
  pipeline.AddPass<SubByteNormalization>();  // sub-byte values stored one per byte
  pipeline.AddPass<cpu::Unfuse>();
  pipeline.AddPass<ScanExpander>();
  AddExpanderPasses(pipeline);  // rng, batch norm, ragged/scaled dot, narrow linalg
  pipeline.AddPass<DotDecomposer>();
  pipeline.AddPass<ConvCanonicalization>();
  pipeline.AddPass<cpu::LibraryLayouts>();
  PipelineOptions options = PipelineOptionsFrom(debug, dumper, timing);
  options.disabled_passes.clear();  // required for correctness, not optimizations
  options.enabled_passes_only.clear();
  pipeline.set_options(options);
  return pipeline.Run(module).status();
}

// Loop fusion (and CSE of what it makes), after the lowering so that what
// the expanders and library layouts add fuses too. Scheduled modules keep
// their own fusion decisions; --xla_disable_hlo_passes=fusion turns it off.
absl::Status Fuse(HloModule& module, const DebugOptions& debug, ModuleDumper& dumper,
                  PassTiming& timing) {
  if (debug.disable_all_hlo_passes || module.config().is_scheduled) return absl::OkStatus();
  HloPassPipeline pipeline("cpu-fusion");
  pipeline.AddPass<cpu::LoopFusion>();
  if (debug.allow_excess_precision) pipeline.AddPass<cpu::ExcessPrecision>();
  // Identical fusions (a producer duplicated into readers that then became
  // the same) become one first, so multi-output fusion does not make each of
  // them an output of its own.
  pipeline.AddPass<HloCse>();
  pipeline.AddPass<cpu::MultiOutputFusion>();
  pipeline.AddPass<HloCse>();
  pipeline.AddPass<HloDce>();
  pipeline.AddPass<cpu::ReshapeToBitcast>();
  pipeline.set_options(PipelineOptionsFrom(debug, dumper, timing));
  return pipeline.Run(module).status();
}

std::string DumpName(const HloModule& module, int64_t id) {
  return absl::StrFormat("module_%04d.%s", id, module.name());
}

// The thunk passes (after the kernels are bound, before the executable
// builds its execution graphs from the thunks' buffer uses), with the
// sequence dumped before and after as XLA:GPU names those files.
absl::Status RunThunkPasses(cpu::ThunkSequence& thunks, const DebugOptions& debug,
                            ModuleDumper& dumper) {
  if (dumper.enabled()) {
    RETURN_IF_ERROR(dumper.DumpFile(".thunk_sequence.txt", thunks.ToString()));
  }
  cpu::KeepLoopInputsOnOneThread(thunks);
  // A profile (--xlite_profile) times each thunk: keep every kernel its own.
  if (debug.cpu_enable_command_buffer && !debug.profile) {
    RETURN_IF_ERROR(cpu::ConvertToCommandBuffers(thunks).status());
  }
  if (!dumper.enabled()) return absl::OkStatus();
  return dumper.DumpFile(".thunk_sequence_after_thunk_passes.txt", thunks.ToString());
}

// Everything up to the memory plan, with its dumps.
absl::StatusOr<MemoryPlan> OptimizeAndPlan(HloModule& module, const DebugOptions& debug,
                                           ModuleDumper& dumper, PassTiming& timing) {
  RETURN_IF_ERROR(VerifyModule(module));
  RETURN_IF_ERROR(dumper.DumpStage(module, "before_optimizations"));

  RETURN_IF_ERROR(Optimize(module, debug, dumper, timing));
  RETURN_IF_ERROR(AssignLayouts(module, debug, dumper, timing));
  RETURN_IF_ERROR(LowerForTheRuntime(module, debug, dumper, timing));
  RETURN_IF_ERROR(Fuse(module, debug, dumper, timing));
  RETURN_IF_ERROR(dumper.DumpStage(module, "after_optimizations"));

  timing.Mark();
  ASSIGN_OR_RETURN(MemoryPlan plan, PlanMemory(module, PlanOptionsFrom(debug)));
  timing.Step("plan-memory");
  if (plan.rematerialization.has_value()) {  // --xlite_memory_limit
    RETURN_IF_ERROR(
        dumper.DumpFile(".xlite-rematerialization.txt", plan.rematerialization->Summary()));
  }
  RETURN_IF_ERROR(dumper.DumpFile(".cpu_after_optimizations.txt", PrintModule(module)));
  RETURN_IF_ERROR(dumper.DumpFile(".cpu_after_optimizations-buffer-assignment.txt",
                                  BufferAssignmentToXlaString(*plan.assignment)));
  return plan;
}

}  // namespace

absl::Status OptimizeHloModuleForCpu(HloModule& module, const CompileOptions& options) {
  ModuleDumper dumper(options.debug, module, options.module_id);
  PassTiming timing(options.debug.pass_timing);
  RETURN_IF_ERROR(OptimizeAndPlan(module, options.debug, dumper, timing).status());
  return dumper.Finish();
}

absl::StatusOr<std::unique_ptr<runtime::Executable>> Compile(std::unique_ptr<HloModule> module,
                                                             const CompileOptions& options) {
  const DebugOptions& debug = options.debug;
  ModuleDumper dumper(debug, *module, options.module_id);
  PassTiming timing(debug.pass_timing);
  ASSIGN_OR_RETURN(MemoryPlan plan, OptimizeAndPlan(*module, debug, dumper, timing));
  const BufferAssignment& assignment = *plan.assignment;
  timing.Mark();

  // A profile (--xlite_profile) times each kernel: no whole-loop kernels.
  cpu::ThunkEmitter emitter(assignment,
                            {.poison_dead_slices = debug.poison_dead_slices,
                             .loop_kernels = debug.cpu_enable_loop_kernels && !debug.profile});
  ASSIGN_OR_RETURN(cpu::ThunkSequence thunks, emitter.EmitEntry());
  timing.Step("emit-thunks");

  codegen::JitOptions jit_options;
  jit_options.opt_level = options.opt_level;
  if (dumper.enabled()) jit_options.dump_to = debug.dump_to;
  ASSIGN_OR_RETURN(std::unique_ptr<codegen::Jit> jit, codegen::Jit::Create(jit_options));
  timing.Step("jit-create");
  ASSIGN_OR_RETURN(std::vector<codegen::CompiledKernel> kernels,
                   jit->Compile(emitter.kernel_specs(), DumpName(*module, options.module_id)));
  timing.Step(absl::StrCat("jit-compile (kernels: ", kernels.size(), ")"));
  RETURN_IF_ERROR(emitter.BindKernels(kernels));
  RETURN_IF_ERROR(RunThunkPasses(thunks, debug, dumper));
  timing.Step("thunk-passes");
  RETURN_IF_ERROR(dumper.DumpFile(".xlite-thunks.txt", thunks.ToString()));
  RETURN_IF_ERROR(dumper.Finish());

  timing.Mark();
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable = runtime::Executable::Create(
      std::move(module), std::move(plan), std::move(jit), std::move(thunks), emitter.constants(),
      {.concurrent_executor = debug.cpu_concurrent_executor});
  timing.Step("executable");
  return executable;
}

}  // namespace xlite
