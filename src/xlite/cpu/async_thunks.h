// Asynchronous execution: async-start / async-done (and the ops that work the
// same way: copy-start/done, and later the collectives' -start/-done).
//
// An AsyncStartThunk holds the thunks of the asynchronous work (the wrapped
// computation, a copy, ...) and launches them on a side stream
// (side_streams.h) through ExecuteParams::executor, on the same buffers; the
// AsyncDoneThunk with the same slot waits for them and returns their status.
// An async-update waits for nothing (the emitter gives it no thunk unless it
// moves the context).
//
// Each start gets a slot number at emission (one per emitted start): the
// run's AsyncExecuteState keeps one in-flight record per slot. A start inside
// a while body reuses its slot every iteration, as its done comes before the
// next start.
//
// With ExecuteParams::async == nullptr the start runs the work itself,
// synchronously, and the done does nothing (the serial mode).
#ifndef XLITE_CPU_ASYNC_THUNKS_H_
#define XLITE_CPU_ASYNC_THUNKS_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "xlite/cpu/side_streams.h"
#include "xlite/cpu/thunk.h"

namespace xlite::cpu {

// The asynchronous work of one execution: one in-flight record per slot.
// Thread-safe. Destruction waits for whatever still runs.
class AsyncExecuteState {
 public:
  AsyncExecuteState(SideStreams& streams, int64_t num_slots);
  ~AsyncExecuteState();
  AsyncExecuteState(const AsyncExecuteState&) = delete;
  AsyncExecuteState& operator=(const AsyncExecuteState&) = delete;

  // Runs `work` on a side stream with `params` (whose `async` is this state)
  // through params.executor. Internal if the slot is out of range or still
  // has work that no done has waited for.
  absl::Status Launch(int64_t slot, const ThunkInfo& start, const ThunkSequence& work,
                      const ExecuteParams& params);

  // Waits for the work in `slot` and frees the slot. Its error, if any,
  // comes back with its code, naming `done` and the start that launched it.
  absl::Status Wait(int64_t slot, const ThunkInfo& done);

  // Waits for all work still in flight (the end of an execution, also after
  // an error) and frees the slots; the first error no done has collected.
  absl::Status WaitAll();

  int64_t num_slots() const { return static_cast<int64_t>(slots_.size()); }

 private:
  struct Slot {
    bool in_flight = false;  // launched, not yet waited for
    bool finished = false;   // the work has returned
    absl::Status status;
    std::string start;  // the start's instruction, for errors
  };

  SideStreams& streams_;
  std::mutex mu_;
  std::condition_variable finished_cv_;
  std::vector<Slot> slots_;  // guarded by mu_
};

// async-start (and copy-start, ...): launches `work` in `slot`. `stream` is
// the side stream's name (async_execution_thread), for dumps.
class AsyncStartThunk final : public Thunk {
 public:
  AsyncStartThunk(ThunkInfo info, int64_t slot, std::string stream, ThunkSequence work);

  absl::Status Execute(const ExecuteParams& params) const override;
  // What the work reads and writes.
  std::vector<BufferUse> buffer_uses() const override;
  std::vector<std::pair<std::string, const ThunkSequence*>> nested() const override;
  std::string Details() const override;

  int64_t slot() const { return slot_; }
  const std::string& stream() const { return stream_; }
  const ThunkSequence& work() const { return work_; }
  std::vector<ThunkSequence*> mutable_nested() override { return {&work_}; }

 private:
  int64_t slot_;
  std::string stream_;
  ThunkSequence work_;
};

// async-done (copy-done, ...): waits for the work of `slot` and returns its
// status. It declares the work's uses as its own: the outputs it makes
// visible are written here for whoever reads them, and the operands and
// temporaries stay in use until here, so later writers of that memory order
// after the done, not after the start.
class AsyncDoneThunk final : public Thunk {
 public:
  AsyncDoneThunk(ThunkInfo info, int64_t slot, std::string start, std::vector<BufferUse> uses);

  absl::Status Execute(const ExecuteParams& params) const override;
  std::vector<BufferUse> buffer_uses() const override { return uses_; }
  std::string Details() const override;

  int64_t slot() const { return slot_; }

 private:
  int64_t slot_;
  std::string start_;
  std::vector<BufferUse> uses_;
};

// Wraps the thunks of some work in a start/done pair: the start launches
// `work` on a side stream in `slot`, the done (with `done_info`) waits for
// it. For emitters whose start and done are separate instructions.
std::unique_ptr<AsyncStartThunk> MakeAsyncStart(ThunkInfo start_info, int64_t slot,
                                                std::string stream, ThunkSequence work);
std::unique_ptr<AsyncDoneThunk> MakeAsyncDone(ThunkInfo done_info, const AsyncStartThunk& start);

// 1 + the largest slot of the start thunks in `sequence`, nested ones
// included (0: none): the slots an AsyncExecuteState needs.
int64_t CountAsyncSlots(const ThunkSequence& sequence);

}  // namespace xlite::cpu

#endif  // XLITE_CPU_ASYNC_THUNKS_H_
