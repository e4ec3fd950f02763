// ThreadPool: the CPU runtime's intra-op threads. A pool of N threads is
// N-1 workers plus the thread that calls ParallelFor, which works too, so N
// is the number of cores the pool keeps busy.
//
//   ThreadPool pool(4);
//   pool.ParallelFor(n, [&](int64_t i) { ... });   // returns when all n ran
//
// ParallelFor may be called from several threads at once (concurrent Execute
// calls share one pool): the workers help every call in flight. Called from
// inside a ParallelFor task (a nested call, on a worker or on a caller), it
// runs the loop inline on the calling thread, so nesting never deadlocks and
// never oversubscribes. Workers spin briefly for new work before sleeping,
// and a caller briefly for the workers to finish before it sleeps, which
// keeps back-to-back ParallelFor calls and their joins cheap without burning
// idle CPU (executor_bench's fixed_parallel_for_2x20us).
#ifndef XLITE_RUNTIME_THREAD_POOL_H_
#define XLITE_RUNTIME_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"

namespace xlite::runtime {

class ThreadPool {
 public:
  // `num_threads` >= 1 (smaller values mean 1): num_threads - 1 workers.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();  // joins the workers; no ParallelFor may be in flight
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(i) once for each i in [0, n), on the caller and the workers, in
  // no particular order, and returns when every call has returned. fn must
  // not throw.
  void ParallelFor(int64_t n, absl::FunctionRef<void(int64_t)> fn);

  // True on a thread that is running a ParallelFor task (of any pool).
  static bool InTask();

 private:
  struct Job;
  void WorkerLoop();
  // Runs indices of `job` until none is left.
  static void RunIndices(Job& job);
  // Removes `job` from the queue if it is still there. Needs mu_.
  void RemoveLocked(Job* job);

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable work_cv_;  // a job was queued, or stop
  std::condition_variable done_cv_;  // a worker left a job
  std::vector<Job*> queue_;          // jobs with indices left; guarded by mu_
  bool stop_ = false;                // guarded by mu_
  int sleeping_ = 0;                 // workers waiting on work_cv_; guarded by mu_
  // Bumped on every queued job: spinning workers watch it instead of mu_.
  std::atomic<uint64_t> generation_{0};
};

}  // namespace xlite::runtime

#endif  // XLITE_RUNTIME_THREAD_POOL_H_
