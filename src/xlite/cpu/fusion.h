// fusion: priority fusion of producers into consumers for the CPU code
// generator (pass name "fusion" as XLA:CPU's; the algorithm of XLA:GPU's
// PriorityFusion). Elementwise ops and data movement (broadcast, iota, scalar
// constants, reshape, bitcast, transpose, slice, reverse, pad, concatenate,
// dynamic-slice) fuse into the consumers that read them -- the same ops, or a
// reduce -- making kLoop fusions that compile to one kernel: one loop, no
// intermediate buffers, one dispatch.
//
// Each fusible instruction starts as a kernel of its own; the producer whose
// fusion saves the most time by FusionCostModel's estimate joins every kernel
// that reads it and can take it (duplicated, as XLA allows); producers whose
// savings a fusion changed are estimated again when they reach the queue's
// front, until none saves anything (savings within 1 ns of zero count as
// savings). A row reduction (over its operand's minor-most dimension), and
// any kernel holding one, joins only the one kernel that reads it, and only
// element for element (elementwise ops, reshapes, bitcasts): its
// epilogue runs in its kernel. Not fused: tuple-shaped values, instructions
// with control edges, in-place updates (dynamic-update-slice, scatter),
// library calls, control flow, scalar libm calls; only computations that run
// as sequences (entry, loop bodies and conditions, branches, calls). A fusion
// holds at most kMaxFusionSize instructions and kMaxFusionOperands operands.
// Modules that arrive scheduled keep their fusions (the compiler does not
// run this pass on them).
#ifndef XLITE_CPU_FUSION_H_
#define XLITE_CPU_FUSION_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "xlite/ir/computation.h"
#include "xlite/ir/name_uniquer.h"
#include "xlite/passes/pass.h"

namespace xlite::cpu {

// What the fusion passes (fusion, multi_output_fusion) share.

// Data movement a loop kernel computes element by element: broadcast, iota,
// reshape, bitcast, transpose, slice, reverse, pad, concatenate and
// dynamic-slice (with the elementwise ops, what fuses into loops).
bool IsElementalDataMovement(HloOpcode opcode);

// True for a reduce over its input's minor-most dimension (a row reduction:
// each result element folds a contiguous run, in its own inner loop).
bool ReducesMinorDimension(const HloInstruction& reduce);

// The computations the fusion passes work in: those the call graph runs as
// sequences (the entry, loop bodies and conditions, branches, calls), not
// embedded ones (reducers, which the emitters evaluate element by element)
// nor the computations async ops wrap.
absl::StatusOr<std::vector<HloComputation*>> FusibleComputations(const HloModule& module);

// Builds a fused computation -- parameters made as operands are first read,
// copies of instructions -- then the kLoop fusion in `computation` that
// calls it.
class FusedComputationBuilder {
 public:
  FusedComputationBuilder(HloModule& module, HloComputation& computation, NameUniquer& names,
                          NameUniquer& computation_names);

  // The parameter that reads `operand` (param_N, numbered in first-use order).
  HloInstruction* Parameter(HloInstruction* operand);
  // A copy of `instr` (its name made unique; attributes and called
  // computations kept) reading `operands`.
  HloInstruction* Clone(const HloInstruction& instr, absl::Span<HloInstruction* const> operands);
  // Adds `instr` to the body.
  HloInstruction* Add(std::unique_ptr<HloInstruction> instr);
  // Makes `root` the body's root, adds the body to the module just before
  // `computation` (fused computations print before their caller) and a kLoop
  // fusion of the parameters' operands to `computation`, with `metadata`;
  // returns the fusion, which nothing reads yet.
  HloInstruction* Finish(HloInstruction* root, const OpMetadata& metadata);

 private:
  HloModule& module_;
  HloComputation& computation_;
  NameUniquer& names_;
  std::unique_ptr<HloComputation> body_;
  std::vector<HloInstruction*> operands_;
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> parameter_of_;
};

class LoopFusion : public HloPass {
 public:
  static constexpr int64_t kMaxFusionSize = 128;
  static constexpr int64_t kMaxFusionOperands = 32;

  absl::string_view name() const override { return "fusion"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace xlite::cpu

#endif  // XLITE_CPU_FUSION_H_
