// Whole-loop kernels: a while whose condition and body are all small kernels
// and copies (the shape of a scan: counter, dynamic-slice, a little math,
// dynamic-update-slice) becomes one JIT-compiled function that runs the loop
// itself, its kernels inlined -- no thunk dispatch per iteration. The same
// for a conditional whose branches are all kernels, and for control flow
// nested in either (an inner loop already converted is a kernel like any
// other). XLA:CPU runs such loops thunk by thunk (its users see scans 10-60x
// slower than in its former runtime); XLA:GPU's closest is a command buffer
// with a while command.
//
// The thunk emitter asks for one right after emitting a while or conditional
// (before the JIT compiles the batch: the program calls the batch's other
// kernels). Qualifying: kernels whose work never splits over threads
// (KernelThunk::Partitions is 1 for any thread count), copies, poison writes,
// and while / conditional / call thunks whose nested sequences qualify, with
// at least one kernel. Anything else (library calls, sort, collectives,
// custom calls, rng state, device ids, async work) keeps the thunks.
//
// The result is a KernelThunk over a table of the distinct slices the loop
// touches (read-only ones first, as operands; written ones as outputs), so
// the executors, command buffers and buffer uses treat it as any kernel.
// --xlite_cpu_enable_loop_kernels=false (and --xlite_profile, which times
// each kernel) keep the thunks.
#ifndef XLITE_CPU_LOOP_KERNELS_H_
#define XLITE_CPU_LOOP_KERNELS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "xlite/codegen/kernel.h"
#include "xlite/cpu/kernel_thunk.h"
#include "xlite/cpu/thunk.h"

namespace xlite::cpu {

struct LoopKernel {
  std::shared_ptr<const codegen::KernelProgram> program;
  // The program's table: read-only slices, then written ones.
  std::vector<BufferSlice> buffers;
  int64_t num_operands = 0;
  // The kernel thunks it calls (their specs are the program's callees).
  std::vector<const KernelThunk*> callees;
};

// The whole-loop kernel for `thunk` (a while or a conditional), or nullopt
// when it does not qualify. `spec_of` gives the index of a kernel thunk's
// spec in the JIT batch (< 0: unknown, which disqualifies it).
std::optional<LoopKernel> BuildLoopKernel(const Thunk& thunk,
                                          absl::FunctionRef<int64_t(const KernelThunk&)> spec_of);

}  // namespace xlite::cpu

#endif  // XLITE_CPU_LOOP_KERNELS_H_
