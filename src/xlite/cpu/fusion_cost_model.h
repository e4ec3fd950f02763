// The cost model priority fusion decides by: the estimated run time of one
// loop kernel on one core, a roofline of its memory traffic and its
// arithmetic plus a fixed cost per kernel. A kernel is a root and the
// instructions computed inline where it reads them (its members); every other
// value it reads comes from memory.
//
// Each member is evaluated once per element its readers ask for: an
// elementwise op or data movement asks each operand once per element it
// computes, a reduce asks its input for every element it folds, a
// concatenate or pad each operand only for the elements it covers, a
// broadcast its operand once per run of the kernel's inner loop where the
// value repeats (LLVM hoists it: a scalar's is computed once per kernel).
// Several elementwise members reading a value at the same index count once
// (the emitter keeps the value). An operand read through a slice costs only
// its window. The figures are this project's measurements (docs/cpu.md:
// 2-vCPU AMD EPYC Zen 5, one thread, f32).
#ifndef XLITE_CPU_FUSION_COST_MODEL_H_
#define XLITE_CPU_FUSION_COST_MODEL_H_

#include "absl/functional/function_ref.h"
#include "xlite/ir/instruction.h"

namespace xlite::cpu {

struct KernelCost {
  double compute_ns = 0;  // the members' arithmetic, each element as often as it is evaluated
  double bytes = 0;       // distinct bytes read from outside and written
  double memory_ns = 0;   // bytes at cache, then memory, bandwidth
  double time_ns = 0;     // kKernelLaunchNs + max(compute_ns, memory_ns)
};

class FusionCostModel {
 public:
  // A kernel's fixed cost in a replayed command buffer (11 kernels of 16
  // elements against one: 9 ns each).
  static constexpr double kKernelLaunchNs = 10;
  // Streaming bandwidth of one core: the first kCacheBytes a kernel moves at
  // cache speed (an add of 16 Ki..1 Mi floats: 67..88 B/ns), the rest at
  // memory's (4 Mi and 16 Mi: 24..25).
  static constexpr double kCacheBytesPerNs = 75;
  static constexpr double kMemoryBytesPerNs = 24;
  static constexpr double kCacheBytes = 16.0 * 1024 * 1024;

  // Nanoseconds to compute one element of `instr` from its operands' (a
  // reduce: one step of its reducer; data movement: none).
  static double ElementCostNs(const HloInstruction& instr);

  // The cost of a kernel computing `root` with the instructions for which
  // `is_member` holds (reached from `root` through operands) inline.
  static KernelCost Estimate(const HloInstruction& root,
                             absl::FunctionRef<bool(const HloInstruction*)> is_member);
};

}  // namespace xlite::cpu

#endif  // XLITE_CPU_FUSION_COST_MODEL_H_
