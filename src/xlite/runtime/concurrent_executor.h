// The concurrent thunk executor: runs the thunks of a sequence as soon as
// the thunks they depend on have finished, several at once, next to the
// sequential ThunkExecutor (thunk_executor.h). XLA:CPU's thunk executor works
// this way.
//
// Dependencies come from the declared buffer uses (cpu::Thunk::buffer_uses,
// nested sequences included): a thunk waits for every earlier thunk whose
// slices overlap one of its own where either writes (read-after-write,
// write-after-read, write-after-write). Thunks whose effects their slices do
// not show stay in program order among themselves: rng-get-and-update-state
// (its state), collectives, host transfers, async starts and dones, custom
// calls with side effects, and control flow containing any of them. Library
// calls that fork an OpenMP team of the whole budget of their own (oneDNN
// convolutions, f32 dots of batch 1 from 2*2048^3 FLOPs:
// ThunkInfo::forks_thread_team) also run one after another:
// two teams at once would share the cores with each other's spinning
// workers (cnn_b8's two independent convolutions at 2 threads: 0.84-0.91x
// the time in that order, 8 rounds).
//
// Ready thunks run on the calling thread and on helpers from cpu::SideStreams
// (threads that may block, never the kernel pool's workers); kernels inside
// still split over ExecuteParams::runner. The lowest ready thunk in program
// order goes first. At most `max_threads` threads run one sequence's thunks
// at once (the caller included). A sequence runs in order on the calling
// thread, as the sequential executor would, when its graph is a chain or
// when at most one thunk is not small (as XLA:CPU's executor does when all
// are: waking a thread costs microseconds, a kernel on a few hundred bytes
// tens of nanoseconds, and one large thunk has nothing large to overlap
// with). Small: kernels, copies and host library calls whose slices all have
// at most kSmallBytes. Custom calls, control flow (whole-loop kernels
// included) and the rest are never small (they may run long or block).
//
// Graphs are built once per sequence (ExecutionGraphs, at executable
// creation) and shared by every run. After an error no further thunk starts,
// and Run returns only when every started thunk has returned.
#ifndef XLITE_RUNTIME_CONCURRENT_EXECUTOR_H_
#define XLITE_RUNTIME_CONCURRENT_EXECUTOR_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "xlite/cpu/side_streams.h"
#include "xlite/cpu/thunk.h"
#include "xlite/runtime/thunk_executor.h"

namespace xlite::runtime {

// The dependency graph of one sequence: thunk i may start once every thunk
// in its in-edges has finished.
struct ExecutionGraph {
  std::vector<int32_t> in_degree;
  std::vector<std::vector<int32_t>> out_edges;
  // Every thunk depends on the one before it: nothing can overlap.
  bool is_chain = true;
  // Thunks that are not small (see above). With none, overlap cannot pay for
  // itself; with one, it could only hide small work behind it, which never
  // pays for waking a thread (a loop beside a few scalar copies took 26 us
  // concurrently, 0.5 us in order).
  int32_t num_large = 0;
  bool all_small() const { return num_large == 0; }
  bool run_in_order() const { return is_chain || num_large <= 1; }

  static constexpr int64_t kSmallBytes = 64 * 1024;

  static ExecutionGraph Build(const cpu::ThunkSequence& sequence);
  int64_t num_edges() const;
  // "0 -> 2 3\n1 -> 3\n..." for tests and dumps.
  std::string ToString() const;
};

// The graphs of a sequence and every sequence nested in it, built at
// construction; a sequence not among them gets its graph on first use
// (thread-safe).
class ExecutionGraphs {
 public:
  explicit ExecutionGraphs(const cpu::ThunkSequence& top);
  const ExecutionGraph& For(const cpu::ThunkSequence& sequence) const;
  // Whether every graph built at construction runs in order (the concurrent
  // executor would only add its lookups to the sequential one).
  bool AllRunInOrder() const;

 private:
  void Add(const cpu::ThunkSequence& sequence);
  absl::flat_hash_map<const cpu::ThunkSequence*, std::unique_ptr<ExecutionGraph>> built_;
  mutable std::mutex mu_;
  mutable absl::flat_hash_map<const cpu::ThunkSequence*, std::unique_ptr<ExecutionGraph>>
      late_;  // guarded by mu_
};

class ConcurrentThunkExecutor final : public cpu::SequenceExecutor {
 public:
  // max_threads >= 2 (smaller values mean 2).
  ConcurrentThunkExecutor(const ExecutionGraphs& graphs, cpu::SideStreams& helpers, int max_threads,
                          ThunkProfile* profile = nullptr);
  absl::Status Run(const cpu::ThunkSequence& sequence,
                   const cpu::ExecuteParams& params) const override;

 private:
  struct RunState;
  // Takes ready thunks and runs them, waiting for more, until all have
  // finished. Helpers see only the state: Run returns once every thunk has
  // finished, without waiting for the helpers to leave.
  static void Work(const std::shared_ptr<RunState>& state, bool is_caller);
  // Under the state's lock: helpers for the ready thunks no thread takes.
  static void SpawnHelpers(const std::shared_ptr<RunState>& state);

  const ExecutionGraphs& graphs_;
  cpu::SideStreams& helpers_;
  int max_threads_;
  ThunkProfile* profile_;
  ThunkExecutor sequential_;
};

}  // namespace xlite::runtime

#endif  // XLITE_RUNTIME_CONCURRENT_EXECUTOR_H_
