// XLA's debug flags as xlite reads them: from the XLA_FLAGS environment
// variable ("--xla_dump_to=/tmp/d --xla_dump_hlo_pass_re=.*") and from the
// command line, which wins. Unknown --xla_ / --xlite_ flags are errors naming
// the flag, as XLA's are.
#ifndef XLITE_SUPPORT_FLAGS_H_
#define XLITE_SUPPORT_FLAGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace xlite {

struct DebugOptions {
  std::string dump_to;             // --xla_dump_to=DIR
  std::string dump_hlo_pass_re;    // --xla_dump_hlo_pass_re=REGEX: per-pass snapshots
  std::string dump_hlo_module_re;  // --xla_dump_hlo_module_re=REGEX: which modules to dump
  bool dump_hlo_as_text = true;    // --xla_dump_hlo_as_text (the only format so far)
  std::vector<std::string> disable_hlo_passes;      // --xla_disable_hlo_passes=a,b
  std::vector<std::string> enable_hlo_passes_only;  // --xla_enable_hlo_passes_only=a,b
  bool verify_each_pass = false;                    // --xlite_verify_each_pass
  bool pass_timing = false;                         // --xlite_pass_timing
  bool dump_pass_diffs = false;                     // --xlite_dump_pass_diffs
  bool verify_buffer_assignment = false;            // --xlite_verify_buffer_assignment
  bool strict_donation = false;                     // --xlite_strict_donation
  // --xlite_memory_limit=BYTES: rematerialize until the schedule's peak is at
  // most this (schedule/rematerialization.h); 0: no limit.
  int64_t memory_limit = 0;
  bool disable_all_hlo_passes = false;  // --xla_disable_all_hlo_passes
  bool poison_dead_slices = false;      // --xlite_poison_dead_slices: poison temp slices once dead
  bool profile = false;                 // --xlite_profile: time per thunk
  int cpu_threads = 0;  // --xlite_cpu_threads=N: the CPU runtime's threads; 0 = cores usable
  // --xla_force_host_platform_device_count=N: the CPU client's devices.
  int host_platform_device_count = 1;
  // --xla_cpu_collective_call_terminate_timeout_seconds=N: how long a device
  // waits at a collective for its peers (XLA's rendezvous timeout; 60 here).
  int collective_timeout_seconds = 60;
  // --xlite_cpu_concurrent_executor=true|false: run independent thunks at
  // once (runtime/concurrent_executor.h) or in program order.
  bool cpu_concurrent_executor = true;
  // --xlite_cpu_enable_command_buffer=true|false: record runs of kernels,
  // copies and control flow over them as command buffers
  // (cpu/command_buffer_conversion.h). XLA:GPU's --xla_gpu_enable_command_buffer
  // takes a list of command types; on the CPU one kind of run qualifies.
  bool cpu_enable_command_buffer = true;
  // --xlite_cpu_enable_loop_kernels=true|false: compile a while (or
  // conditional) whose condition and body are all small kernels and copies
  // into one JIT-compiled function that runs the loop itself
  // (cpu/loop_kernels.h).
  bool cpu_enable_loop_kernels = true;
  // --xla_allow_excess_precision=true|false (XLA's flag and default): a
  // fusion may compute bf16/f16 arithmetic in f32 and round once where the
  // value leaves it (cpu/excess_precision.h). False: every op rounds, as the
  // interpreter does.
  bool allow_excess_precision = true;
};

// Applies one "--name[=value]" flag. Returns false (and leaves `options`
// alone) if `arg` is not an --xla_/--xlite_ debug flag this struct knows.
absl::StatusOr<bool> ApplyDebugFlag(absl::string_view arg, DebugOptions& options);

// XLA_FLAGS first, then `args`; the debug flags are removed from `args`.
absl::StatusOr<DebugOptions> ReadDebugOptions(std::vector<std::string>& args);

}  // namespace xlite

#endif  // XLITE_SUPPORT_FLAGS_H_
