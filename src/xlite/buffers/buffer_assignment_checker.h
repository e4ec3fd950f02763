// An independent check of a buffer assignment (--xlite_verify_buffer_
// assignment; always on in tests). Written apart from the assigner: it
// takes only the allocations and slices, and recomputes from the module
// itself the alias analysis, the schedule (its instruction order), the live
// ranges and the lower bound. It checks that
//   - every value run sequentially from the entry has a slice of its own
//     size inside its allocation, and every value of one buffer (alias
//     analysis) the same allocation and offset;
//   - no two buffers whose live ranges overlap share a byte (a sweep over
//     time per allocation, the live buffers ordered by offset);
//   - entry parameter values lie in their parameter's allocation (number and
//     index), outputs in maybe-live-out allocations, constants in constant
//     allocations, temp buffers at aligned offsets in the temp heap or in
//     an output's allocation (the sweep checks the times);
//   - the temp heap is no smaller than the schedule's lower bound for it.
// It returns the lower bounds it computed: the largest number of bytes live
// at one time, all buffers and temp buffers only (each rounded up to the
// alignment: with aligned offsets, live buffers occupy disjoint aligned
// blocks, so no heap of whole blocks is smaller).
#ifndef XLITE_BUFFERS_BUFFER_ASSIGNMENT_CHECKER_H_
#define XLITE_BUFFERS_BUFFER_ASSIGNMENT_CHECKER_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "xlite/buffers/buffer_assignment.h"

namespace xlite {

struct AssignmentCheck {
  int64_t values_checked = 0;
  int64_t buffers_checked = 0;
  // Bytes live at once at the worst time of the schedule, all buffers
  // (HloLiveRange's peak: what rematerialization counts).
  int64_t peak_live_bytes = 0;
  int64_t peak_live_time = 0;
  // The same with a buffer that takes its operand's bytes where it is made
  // (buffer assignment's in-place sharing) counted from the time after: the
  // bytes any placement of this schedule and these sharings needs.
  int64_t lower_bound_bytes = 0;
  int64_t lower_bound_time = 0;
  // The same for the buffers in the temp heap, each rounded up to the
  // alignment; and without rounding.
  int64_t temp_lower_bound_bytes = 0;
  int64_t temp_lower_bound_unaligned = 0;
};

// An InternalError naming the values, slices and time of the first problem.
absl::StatusOr<AssignmentCheck> CheckBufferAssignment(const BufferAssignment& assignment);

}  // namespace xlite

#endif  // XLITE_BUFFERS_BUFFER_ASSIGNMENT_CHECKER_H_
