// CommandBufferThunk: a run of kernels, copies, poison writes and control
// flow over them, recorded once as a flat array of plain commands and
// replayed without a virtual call or a Status per command (XLA:GPU's
// command buffers, on the CPU: the replay is the "graph launch").
//
// The recording is made when the thunk is built (thunk passes run after the
// JIT has bound every kernel): it needs nothing from a run. Each command
// names its slices as indices into one argument table of (allocation,
// offset) pairs; a run resolves that table once against its own
// BufferAllocations and replays the commands on those addresses, so several
// concurrent Executes share one recording and keep no state in it.
//
// Kernels keep their partitions over the TaskRunner (as KernelThunk does);
// while and conditional commands replay their nested ranges of the same
// array; a call's callee is recorded in place.
#ifndef XLITE_CPU_COMMAND_BUFFER_THUNK_H_
#define XLITE_CPU_COMMAND_BUFFER_THUNK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "xlite/codegen/kernel.h"
#include "xlite/cpu/thunk.h"

namespace xlite::cpu {

// One recorded command: plain data, replayed by a switch.
struct Command {
  enum class Op : uint8_t { kKernel, kCopy, kPoison, kWhile, kConditional };
  Op op = Op::kKernel;
  bool selector_is_pred = false;  // kConditional
  int32_t first_arg = 0;          // into the argument table
  int32_t num_args = 0;
  // kWhile, kConditional: their nested ranges (condition, body; or one per
  // branch) in the range table, and the command after all of them.
  int32_t first_range = 0;
  int32_t num_ranges = 0;
  int32_t next = 0;
  codegen::KernelFunction kernel = nullptr;  // kKernel
  // kKernel: the most partitions its work is worth (<= 1: one call);
  // kCopy, kPoison: bytes.
  int64_t size = 0;
  int64_t work = 0;  // kKernel: elements, for KernelThunk::Partitions
};

// A half-open range of commands [begin, end).
struct CommandRange {
  int32_t begin = 0, end = 0;
};

class CommandBufferThunk final : public Thunk {
 public:
  // Whether `thunk` can be recorded: a kernel with its function bound, a
  // copy, a poison write, or a while / conditional / call whose nested
  // sequences can be recorded entirely. Never library calls (they allocate,
  // may fail with a Status and run oneDNN's OpenMP team), custom calls,
  // collectives, async start/done, host transfers, rng state, device ids.
  static bool CanRecord(const Thunk& thunk);
  // Commands `thunk` records to (a call's callee inlined, control flow
  // counting itself and its nested commands); 0 if it cannot be recorded.
  static int64_t CountCommands(const Thunk& thunk);

  // Records `thunks`; InvalidArgument naming the first one CanRecord refuses.
  static absl::StatusOr<std::unique_ptr<CommandBufferThunk>> Create(ThunkSequence thunks);

  absl::Status Execute(const ExecuteParams& params) const override;
  // The union of its thunks' uses (duplicates dropped).
  std::vector<BufferUse> buffer_uses() const override;
  std::vector<std::pair<std::string, const ThunkSequence*>> nested() const override;
  std::string Details() const override;

  const std::vector<Command>& commands() const { return commands_; }
  int64_t num_args() const { return static_cast<int64_t>(args_.size()); }
  // True when it records a while or conditional.
  bool has_control_flow() const { return has_control_flow_; }

 private:
  CommandBufferThunk(ThunkInfo info, ThunkSequence thunks);
  absl::Status Record(const ThunkSequence& sequence);
  absl::Status RecordThunk(const Thunk& thunk);
  int32_t AddArg(const BufferSlice& slice);
  void Replay(CommandRange range, void* const* args, const ExecuteParams& params) const;

  ThunkSequence thunks_;  // what was recorded, for dumps and buffer uses
  std::vector<Command> commands_;
  std::vector<CommandRange> ranges_;
  std::vector<BufferSlice> args_;
  std::vector<BufferUse> uses_;
  bool has_control_flow_ = false;
};

}  // namespace xlite::cpu

#endif  // XLITE_CPU_COMMAND_BUFFER_THUNK_H_
