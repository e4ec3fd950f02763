// HloSchedule: the order in which each sequential computation runs (XLA's
// HloSchedule). In the module itself a schedule is the instruction order of
// each computation, flagged by `config().is_scheduled` (the printer prints
// that order, the parser keeps the text's); this class is the value the
// schedulers produce and liveness reads, and ApplyTo writes it into the
// module.
#ifndef XLITE_IR_HLO_SCHEDULE_H_
#define XLITE_IR_HLO_SCHEDULE_H_

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "xlite/ir/module.h"

namespace xlite {

class HloSchedule {
 public:
  bool is_computation_scheduled(const HloComputation* computation) const {
    return sequences_.contains(computation);
  }
  // The sequence of `computation`; empty if it has none.
  const std::vector<HloInstruction*>& sequence(const HloComputation* computation) const;
  void set_sequence(const HloComputation* computation, std::vector<HloInstruction*> sequence) {
    sequences_[computation] = std::move(sequence);
  }
  const absl::flat_hash_map<const HloComputation*, std::vector<HloInstruction*>>& sequences()
      const {
    return sequences_;
  }

  // The schedule a scheduled module carries: the instruction order of each
  // of `computations`.
  static HloSchedule FromInstructionOrder(absl::Span<const HloComputation* const> computations);

  // OK if `sequence` holds every instruction of `computation` exactly once,
  // each after its operands and control predecessors; otherwise an error
  // naming the computation and the first instruction out of place.
  static absl::Status VerifySequence(const HloComputation& computation,
                                     absl::Span<HloInstruction* const> sequence);

  // Verifies every sequence, writes it into its computation's instruction
  // order and marks the module scheduled. Computations without a sequence
  // keep their order. Nothing changes on error.
  absl::Status ApplyTo(HloModule& module) const;

 private:
  absl::flat_hash_map<const HloComputation*, std::vector<HloInstruction*>> sequences_;
};

}  // namespace xlite

#endif  // XLITE_IR_HLO_SCHEDULE_H_
