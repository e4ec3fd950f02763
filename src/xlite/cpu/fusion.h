// fusion: producer-consumer loop fusion for the CPU code generator (XLA's
// CpuInstructionFusion, pass name "fusion"). Elementwise ops and data movement
// (broadcast, iota, scalar constants, reshape, bitcast, transpose, slice,
// reverse, pad, concatenate, dynamic-slice) fuse into the consumers that read
// them -- the same ops, or a reduce -- making kLoop fusions that compile to one
// kernel: one loop, no intermediate buffers, one dispatch.
//
// Walking consumers before producers, a producer joins every fusion that
// reads it when it is cheap to recompute (duplication, as XLA allows); an
// expensive one (divide, power, transcendentals) only when a single fusion
// holds all its users and none of them reads an element twice (a broadcast of
// it). Not fused: tuple-shaped values, instructions with control edges,
// in-place updates (dynamic-update-slice, scatter), library calls, control
// flow; only computations that run as sequences (entry, loop bodies and
// conditions, branches, calls). A fusion holds at most kMaxFusionSize
// instructions and kMaxFusionOperands operands. Modules that arrive scheduled
// keep their fusions (the compiler does not run this pass on them).
#ifndef XLITE_CPU_FUSION_H_
#define XLITE_CPU_FUSION_H_

#include <cstdint>

#include "xlite/passes/pass.h"

namespace xlite::cpu {

class LoopFusion : public HloPass {
 public:
  static constexpr int64_t kMaxFusionSize = 128;
  static constexpr int64_t kMaxFusionOperands = 32;

  absl::string_view name() const override { return "fusion"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace xlite::cpu

#endif  // XLITE_CPU_FUSION_H_
