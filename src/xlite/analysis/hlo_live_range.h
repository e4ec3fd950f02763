// HloLiveRange: when each value and buffer is alive under a schedule (XLA's
// HloLiveRange, module scoped), and the peak of bytes alive at once.
//
// Time is the position in the flattened schedule: the entry's sequence with
// each sequential callee's sequence spliced in just before the instruction
// that runs it (a while's condition, then its body; a call's callee; a
// conditional's branches in order; an async-start's wrapped computation).
// Embedded computations (fusion bodies, to_apply) allocate nothing and have
// no times. A computation's span is [its first time, one past its last).
//
// A value lives over [start, end], both inclusive:
//   start  its defining instruction's time; a parameter's is its
//          computation's span start.
//   end    the latest of its definition, the times of its other positions
//          (a position in a computation's root counts as that computation's
//          span end) and of its uses, where a use by a call whose callee it
//          flows into is not counted (the callee's own uses are) and a use as
//          a while's init counts at the loop body's parameter. Entry
//          parameters not in input_output_alias live to the schedule's end;
//          so does anything in the entry's result (its root's span end).
//          Values defined in a computation run by async-start live at least
//          to the chain's async-done.
// A buffer lives from its values' earliest start to their latest end, and
// takes the largest of its values' sizes (ValueSizeBytes).
//
// peak_bytes() is the largest sum of the sizes of the buffers alive at one
// time: any placement that gives every buffer its own bytes for its whole
// live range needs at least that much memory.
#ifndef XLITE_ANALYSIS_HLO_LIVE_RANGE_H_
#define XLITE_ANALYSIS_HLO_LIVE_RANGE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "xlite/analysis/hlo_alias_analysis.h"
#include "xlite/ir/hlo_schedule.h"

namespace xlite {

struct LiveRange {
  int64_t start = 0;
  int64_t end = 0;  // inclusive
  bool operator==(const LiveRange&) const = default;
};

// ValueSizeBytes of every value, by id; -1 for a value with an unbounded
// dimension (no size).
std::vector<int64_t> ComputeValueSizes(const HloDataflowAnalysis& dataflow);

struct LiveRangeOptions {
  // A computation run from several sequential sites is flattened once, at
  // its first site, and its values' ranges then describe only that site: a
  // close estimate, which schedulers use to compare orders. Memory planning
  // must not: without this option such a module is FailedPrecondition (run
  // flatten-call-graph first).
  bool allow_unflattened = false;
  // ComputeValueSizes(dataflow), when the caller has it (runs on several
  // schedules share it); computed otherwise.
  const std::vector<int64_t>* value_sizes = nullptr;
};

class HloLiveRange {
 public:
  // Errors: a sequential computation reachable from the entry without a
  // sequence in `schedule` (FailedPrecondition), an unflattened call graph
  // (see LiveRangeOptions), an array with an unbounded dimension in the
  // schedule, whose size is unknown (Unimplemented), a sequence holding an
  // instruction twice or one of another computation (InvalidArgument).
  // Sequences are not otherwise checked (HloSchedule::VerifySequence does).
  static absl::StatusOr<std::unique_ptr<HloLiveRange>> Run(const HloSchedule& schedule,
                                                           const HloAliasAnalysis& alias,
                                                           const LiveRangeOptions& options = {});

  const std::vector<HloInstruction*>& flattened_instruction_sequence() const { return sequence_; }
  // The instruction's time; -1 if it is not in the flattened schedule.
  int64_t instruction_time(const HloInstruction* instruction) const;
  // [start, end) of a flattened computation; nullptr if not flattened.
  const LiveRange* computation_span(const HloComputation* computation) const;
  int64_t schedule_end_time() const { return static_cast<int64_t>(sequence_.size()); }

  // nullptr for values and buffers defined outside the flattened schedule.
  const LiveRange* value_live_range(const HloValue& value) const;
  const LiveRange* buffer_live_range(const HloBuffer& buffer) const;
  int64_t buffer_size(const HloBuffer& buffer) const { return buffer_size_[buffer.id()]; }

  // The lower bound on memory (see above), the first time it is reached, and
  // how many times of the schedule reach it.
  int64_t peak_bytes() const { return peak_bytes_; }
  int64_t peak_time() const { return peak_time_; }
  int64_t peak_times() const { return peak_times_; }
  // The bytes live at each time (schedule_end_time() + 2 entries; the peak
  // is their maximum).
  const std::vector<int64_t>& live_bytes() const { return live_bytes_; }

  const HloAliasAnalysis& alias_analysis() const { return *alias_; }
  std::string ToString() const;

 private:
  class Builder;
  HloLiveRange() = default;

  const HloAliasAnalysis* alias_ = nullptr;
  std::vector<HloInstruction*> sequence_;
  std::vector<int64_t> time_;  // by dataflow instruction id; -1: not flattened
  absl::flat_hash_map<const HloComputation*, LiveRange> span_;
  std::vector<LiveRange> value_range_;   // by value id; start < 0: none
  std::vector<LiveRange> buffer_range_;  // by buffer id; start < 0: none
  std::vector<int64_t> buffer_size_;
  std::vector<int64_t> live_bytes_;
  int64_t peak_bytes_ = 0;
  int64_t peak_time_ = 0;
  int64_t peak_times_ = 0;
};

}  // namespace xlite

#endif  // XLITE_ANALYSIS_HLO_LIVE_RANGE_H_
