// PlanMemory: the memory planner as one call, for Compile() and
// `xlite memory`:
//   flatten-call-graph (when needed) -> buffer_donor pairing
//   -> copy-insertion -> schedule (list / dfs / post-order, lowest peak)
//   -> rematerialization (when a memory limit is set) -> buffer assignment -> the independent
//   checker (options.verify)
// and a donation verdict for every entry parameter element. The module is
// changed (copies, schedule, aliases from donors); the plan refers to it and
// must not outlive it.
//
//   ASSIGN_OR_RETURN(MemoryPlan plan, PlanMemory(module, {.verify = true}));
//   plan.assignment->GetSlice(instruction, index);
#ifndef XLITE_BUFFERS_PLAN_MEMORY_H_
#define XLITE_BUFFERS_PLAN_MEMORY_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "xlite/buffers/buffer_assignment.h"
#include "xlite/buffers/buffer_assignment_checker.h"
#include "xlite/buffers/donor_pairing.h"
#include "xlite/passes/copy_insertion.h"
#include "xlite/schedule/rematerialization.h"
#include "xlite/schedule/schedule_module.h"
#include "xlite/support/flags.h"

namespace xlite {

struct PlanOptions {
  // Run the independent checker (--xlite_verify_buffer_assignment).
  bool verify = false;
  // A donated parameter no output can use is an error
  // (--xlite_strict_donation).
  bool strict_donation = false;
  // --xlite_memory_limit: rematerialize until the schedule's peak is at most
  // this many bytes (0: no limit); a limit not met is ResourceExhausted.
  RematerializationOptions rematerialization;
  ScheduleOptions schedule;
  AssignmentOptions assignment;
};

// What became of one donated (or not donated) entry parameter element.
struct DonationVerdict {
  enum class Kind {
    kNotDonated,     // read-only; an output that returns it gets a copy
    kInPlace,        // aliased to an output, updated in place
    kCopied,         // aliased, but the old value is copied first (still read)
    kDonatedUnused,  // buffer_donor with no output of its shape and layout
  };
  int64_t parameter_number = 0;
  ShapeIndex parameter_index;
  Kind kind = Kind::kNotDonated;
  std::optional<ShapeIndex> output_index;  // kInPlace, kCopied
  bool from_buffer_donor = false;          // chosen by the compiler from buffer_donor
  bool must_alias = false;                 // input_output_alias says must-alias
  std::string text;                        // one line for reports
};

struct MemoryPlan {
  bool flattened = false;  // flatten-call-graph changed the module
  std::vector<DonorPairing> donor_pairs;
  std::vector<InsertedCopy> copies;
  ScheduleResult schedule;  // order as planned; peak_bytes the scheduler's
  std::optional<RematerializationResult> rematerialization;  // when a limit was set
  std::unique_ptr<BufferAssignment> assignment;
  std::optional<AssignmentCheck> check;  // when options.verify
  std::vector<DonationVerdict> donations;
};

// The options the debug flags ask for: --xlite_verify_buffer_assignment
// (verify), --xlite_strict_donation and --xlite_memory_limit.
PlanOptions PlanOptionsFrom(const DebugOptions& debug);

// Errors: what the passes, scheduler, assigner or checker report; with
// strict_donation, an unusable donation (FailedPrecondition naming it).
absl::StatusOr<MemoryPlan> PlanMemory(HloModule& module, const PlanOptions& options = {});

}  // namespace xlite

#endif  // XLITE_BUFFERS_PLAN_MEMORY_H_
