// Scheduling a module for memory (XLA's HloMemoryScheduler with its default
// module scheduler): every sequential computation gets a sequence from each
// scheduler (memory_schedulers.h), the module's peak under each is simulated
// with HloLiveRange, and the lowest wins (list, then dfs, then post-order on
// ties). A module that arrives with is_scheduled=true keeps its order (the
// text's), which is checked.
//
//   ASSIGN_OR_RETURN(ScheduleResult r, ScheduleModule(module));
//   // module now prints with is_scheduled=true in r.schedule's order;
//   // r.chosen, r.peak_bytes and r.peaks say what was tried.
#ifndef XLITE_SCHEDULE_SCHEDULE_MODULE_H_
#define XLITE_SCHEDULE_SCHEDULE_MODULE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "xlite/analysis/hlo_alias_analysis.h"
#include "xlite/ir/hlo_schedule.h"

namespace xlite {

enum class MemoryScheduler { kList, kDfs, kPostOrder };

// "list", "dfs", "post-order".
absl::string_view MemorySchedulerName(MemoryScheduler scheduler);

struct ScheduleOptions {
  // Tried in this order; the first of equal peaks wins.
  std::vector<MemoryScheduler> schedulers = {MemoryScheduler::kList, MemoryScheduler::kDfs,
                                             MemoryScheduler::kPostOrder};
  // A module with is_scheduled=true keeps its instruction order.
  bool keep_existing_schedule = true;
};

struct SchedulerPeak {
  MemoryScheduler scheduler;
  int64_t peak_bytes = 0;
};

struct ScheduleResult {
  HloSchedule schedule;
  std::string chosen;                // a scheduler's name, or "existing"
  int64_t peak_bytes = 0;            // HloLiveRange::peak_bytes of `schedule`
  std::vector<SchedulerPeak> peaks;  // every scheduler run, in order
};

// The computations that get a sequence: those run in a sequential context
// (call graph), callees first.
std::vector<const HloComputation*> ScheduledComputations(const CallGraph& call_graph);

// One scheduler's sequence for every computation ScheduledComputations lists.
absl::StatusOr<HloSchedule> RunMemoryScheduler(const HloAliasAnalysis& alias,
                                               MemoryScheduler scheduler);

// OK if every computation ScheduledComputations lists has a valid sequence
// (HloSchedule::VerifySequence).
absl::Status VerifySchedule(const HloModule& module, const HloSchedule& schedule);

// Chooses a schedule without changing the module. Errors: a module the
// analyses refuse, an invalid kept schedule (InvalidArgument), an unbounded
// dynamic dimension (Unimplemented: sizes unknown). The schedulers' orders
// are valid by construction and not checked again here (ApplyTo checks).
absl::StatusOr<ScheduleResult> ProposeSchedule(const HloModule& module,
                                               const ScheduleOptions& options = {});

// ProposeSchedule, then writes the schedule into the module (instruction
// order, is_scheduled=true). On error the module is unchanged.
absl::StatusOr<ScheduleResult> ScheduleModule(HloModule& module,
                                              const ScheduleOptions& options = {});

}  // namespace xlite

#endif  // XLITE_SCHEDULE_SCHEDULE_MODULE_H_
