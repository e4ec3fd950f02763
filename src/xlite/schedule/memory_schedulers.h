// The memory-minimizing schedulers of one computation (XLA's
// hlo_memory_scheduler): each returns an order of the computation's
// instructions (indices into the model) with every instruction after its
// operands and control predecessors.
//
//   post-order  the computation's post order (HloComputation::
//               MakeInstructionPostOrder: operands, then control
//               predecessors, before each instruction), no heuristic.
//   dfs         a post order from the root that visits first the operand
//               with the larger memory effect: more users beyond the first
//               (fan-out) reachable through it, then more bytes defined
//               through it, then by name.
//   list        greedy: of the instructions whose predecessors have run,
//               run the one that frees the most bytes net of what it
//               allocates (a callee's peak counts as allocated while it
//               runs), more users first on ties, scalars first of all.
//
// `callee_bytes[i]` is the peak memory of what instruction i runs (the
// largest of its callees), 0 for most.
#ifndef XLITE_SCHEDULE_MEMORY_SCHEDULERS_H_
#define XLITE_SCHEDULE_MEMORY_SCHEDULERS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "xlite/schedule/memory_model.h"

namespace xlite {

// dfs and list fail (InvalidArgument) on a cycle through operands and control
// edges, which a verified module does not have; post-order then returns an
// order that breaks the cycle somewhere (the caller's check rejects it).
absl::StatusOr<std::vector<int32_t>> PostOrderSchedule(const ComputationMemoryModel& model);
absl::StatusOr<std::vector<int32_t>> DfsSchedule(const ComputationMemoryModel& model);
absl::StatusOr<std::vector<int32_t>> ListSchedule(const ComputationMemoryModel& model,
                                                  const std::vector<int64_t>& callee_bytes);

}  // namespace xlite

#endif  // XLITE_SCHEDULE_MEMORY_SCHEDULERS_H_
