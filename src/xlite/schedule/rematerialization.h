// Rematerialization under a memory limit (the role of XLA's
// HloRematerialization): when a scheduled module's peak (HloLiveRange::
// peak_bytes: every buffer live at once, parameters and outputs included)
// exceeds the limit, values live across the peak that are cheap to compute
// again are recomputed just before their later uses, so they need no memory
// in between.
//
// Each round finds the time of the peak and, among the buffers live there,
// the candidates: a value of one buffer (no aliasing), defined before the
// peak by a deterministic instruction of the same computation that writes a
// new array — data movement and elementwise math (cheap), dots,
// convolutions, reductions and gathers (their FLOPs), fusions of at most 16
// such ops; never copies, in-place updates, sorts, rng, side-effecting ops,
// collectives, parameters, calls or control flow — read only directly (a
// tuple holding it only as the entry's output), with uses before the peak
// and after it but none at it. The operands it reads must each be the only
// value of their buffer (nothing writes them in place later); an operand
// dead at the peak is kept alive over it, or recomputed with the value (its
// block, up to 4 levels and 16 instructions) when its own operands take
// fewer bytes. An element of batch-norm-training/grad's tuple is recomputed
// by a clone of the whole op and a get-tuple-element of it. A candidate
// saves its size less the bytes it keeps alive over the peak; the cheapest
// per byte freed go first (FLOPs per byte; data movement before dots), then
// the largest. Their blocks are cloned, placed just before the first later
// use, and the later uses rerouted to the clone. A round stays only when it
// lowers the peak or the number of times it is reached (clones may make
// another peak); otherwise it is undone, its values tried one at a time,
// and one that alone makes no progress is not tried again
// (XLITE_REMAT_DEBUG=1 prints each round). At the end the originals nothing
// reads any more are removed (the value was moved, not recomputed). Rounds
// repeat until the peak is at most the limit, nothing helps, or
// `max_rounds`.
//
// Before the rounds, values live at the peak that are made from scalars (a
// broadcast or iota, through reshapes and converts) are made again right
// before each of their later users, each user its own copy (the scalar
// included): no FLOPs, and live only from just before that user (XLA fuses
// such producers into their users). All at once, kept only when the peak
// falls; when that raises it (a copy landing on a higher point), the largest
// few alone.
//
// Each round first tries to make later work earlier, a reordering with no
// extra FLOPs: a value live across the peak whose users after it can all run
// before it (with the work after the peak they need, none of it at the peak
// or reading what the peak makes: calls and loops never move) is freed
// before the peak when those users move there, together with their own
// users where that leaves fewer bytes live across it (maxtext's loss,
// computed from the logits and labels after the backward loop). The block
// goes after its last operand, right before the computation's site of the
// peak, or at the lowest point between them, whichever lowers the peak; kept
// only when the peak level falls. Instructions that write a buffer shared
// with another value never move.
//
// Before the rounds, loop state live at the peak that the loop can make
// again from nothing -- a constant, an iota or a broadcast of one that the
// body hands on unchanged and nothing reads after the loop -- is made again
// where the body and condition read it and leaves the loop state
// (jax.b380442861 carries a 4 MB iota through a million iterations to read
// one element of it in each).
//
// The module's instruction order is its schedule (is_scheduled=true) and
// stays one; the call graph must be flattened (PlanMemory does both).
// Recomputing is deterministic, so results do not change.
//
//   ASSIGN_OR_RETURN(RematerializationResult r,
//                    Rematerialize(module, {.memory_limit_bytes = 1 << 30}));
//   std::cout << r.Summary();
#ifndef XLITE_SCHEDULE_REMATERIALIZATION_H_
#define XLITE_SCHEDULE_REMATERIALIZATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "xlite/ir/module.h"

namespace xlite {

struct RematerializationOptions {
  int64_t memory_limit_bytes = 0;  // 0: no limit, nothing happens
  // A limit not met is ResourceExhausted; otherwise the result says so.
  bool error_if_not_met = true;
  // Rounds of copies before each user (at most), then rounds of the rest.
  int max_rounds = 500;
  // How often the rounds may recompute one original value (clones of its
  // clones included): a bound that keeps rounds from trading the same bytes.
  // Values made from scalars copied before each user are not held to it.
  int max_clones_per_value = 8;
};

// The largest working set of one scheduled instruction: the buffers it reads
// and those at its own positions (operands and outputs), all live while it
// runs in any schedule that keeps it (loop state the pass takes out of its
// loop may lower it; bound_bytes allows for that).
struct WorkingSet {
  int64_t bytes = 0;
  std::string instruction;  // "%name in %computation"
  // Bytes live when the program ends, in any schedule: the entry's
  // parameters (live throughout) and its outputs. Also a floor, often the
  // higher one: rematerialization frees only temporaries.
  int64_t resident_bytes = 0;
  // The larger of resident_bytes and, over the instructions but calls, a
  // working set together with the entry parameters not donated (live
  // throughout) and, inside a while body or condition, a conditional's branch
  // or an async computation, the operands of the site that runs it (read at
  // the site's time, after the callee's instructions; loop state the pass
  // may take out of the loop excepted): a lower bound on the peak of any
  // schedule, with or without recomputation. Higher where what an
  // instruction is made from must be made in some order, each array live
  // until its reader runs (OrderingBound in the .cc), and where values the
  // pass never copies (a loop's results, say) are live across it from their
  // making to a reader it feeds (HeldValues): that part bounds the schedules
  // this pass can make.
  int64_t bound_bytes = 0;
  std::string bound_reason;  // what reaches bound_bytes
};

struct Recomputation {
  std::string instruction;  // the original
  std::string clone;        // the instruction that now computes it for later uses
  std::string computation;
  bool moved = false;  // the original had no earlier use and is gone
  // An element of a while loop's state (computation: the body) that the loop
  // now makes again where it reads it instead of carrying it; flops and
  // bytes_accessed are then per iteration.
  bool loop_state = false;
  int with_operands = 0;  // operands (dead at the peak) recomputed with it
  // A value made from scalars (a broadcast or iota, through reshapes and
  // converts) made again right before each of its later users: how many
  // times (the clone names the first); 1 otherwise.
  int copies = 1;
  // Later work made earlier (no clone): how many instructions moved before
  // the peak, now before %clone; 0 otherwise.
  int made_earlier = 0;
  // Made earlier: how much the peak fell (bytes_freed leave the old peak's
  // time, but another time may then be the peak).
  int64_t peak_lowered = 0;
  int64_t peak_time = 0;    // the peak it was chosen at
  int64_t bytes_freed = 0;  // its size less the operand bytes kept over that peak
  // Estimated extra cost: FLOPs and bytes (operands read + results written)
  // of computing it and those operands once more (a moved value: only the
  // operands, whose originals may stay).
  int64_t flops = 0;
  int64_t bytes_accessed = 0;
};

struct RematerializationResult {
  int64_t limit_bytes = 0;
  int64_t peak_before = 0;       // the schedule's peak when the pass began
  int64_t peak_after = 0;        // and when it ended
  std::string peak_instruction;  // where peak_after is reached
  bool met = true;
  int rounds = 0;
  WorkingSet floor;
  std::vector<Recomputation> recomputed;
  int64_t total_flops() const;
  int64_t total_bytes_accessed() const;
  // One line of figures, then one line per recomputed value.
  std::string Summary() const;
};

// The largest instruction working set under the module's instruction order
// (a schedule). Errors: those of the alias analysis and HloLiveRange.
absl::StatusOr<WorkingSet> LargestWorkingSet(const HloModule& module);

// Errors: a module whose order is not a schedule or whose call graph is not
// flattened (the analyses' errors); with error_if_not_met, ResourceExhausted
// naming the limit, the peak reached, where, and the working-set floor. The
// clones stay in the module on that error (it is still a valid schedule).
absl::StatusOr<RematerializationResult> Rematerialize(HloModule& module,
                                                      const RematerializationOptions& options);

// The ResourceExhausted error Rematerialize returns for a limit `result` did
// not meet (with error_if_not_met).
absl::Status NotMetError(const HloModule& module, const RematerializationResult& result);

}  // namespace xlite

#endif  // XLITE_SCHEDULE_REMATERIALIZATION_H_
