#include "xlite/runtime/thread_pool.h"

#include <algorithm>
#include <chrono>

namespace xlite::runtime {
namespace {

thread_local int task_depth = 0;

// How long an idle worker watches for new work before it sleeps, and a
// caller for the workers still inside its call: long enough to catch the next
// ParallelFor of a thunk sequence (or a worker's last index), short enough
// that an idle pool costs no CPU.
constexpr auto kSpinTime = std::chrono::microseconds(50);

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Polls `done` for up to kSpinTime; returns its last value.
template <typename Done>
bool SpinUntil(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  while (std::chrono::steady_clock::now() < deadline) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      CpuRelax();
    }
  }
  return done();
}

struct TaskScope {
  TaskScope() { ++task_depth; }
  ~TaskScope() { --task_depth; }
};

}  // namespace

// One ParallelFor call, on its caller's stack. Workers join it only while it
// is queued (under mu_) and leave it (under mu_) before the caller may
// return, so it is never used after it is gone.
struct ThreadPool::Job {
  Job(int64_t n, absl::FunctionRef<void(int64_t)> fn) : n(n), fn(fn) {}
  const int64_t n;
  const absl::FunctionRef<void(int64_t)> fn;
  std::atomic<int64_t> next{0};
  std::atomic<int> workers_inside{0};  // changed under mu_
  bool queued = true;                  // guarded by mu_
};

ThreadPool::ThreadPool(int num_threads) {
  const int workers = std::max(num_threads, 1) - 1;
  workers_.reserve(workers);
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

bool ThreadPool::InTask() { return task_depth > 0; }

void ThreadPool::RunIndices(Job& job) {
  TaskScope scope;
  for (int64_t i = job.next.fetch_add(1, std::memory_order_relaxed); i < job.n;
       i = job.next.fetch_add(1, std::memory_order_relaxed)) {
    job.fn(i);
  }
}

void ThreadPool::RemoveLocked(Job* job) {
  if (!job->queued) return;
  job->queued = false;
  queue_.erase(std::find(queue_.begin(), queue_.end(), job));
}

void ThreadPool::ParallelFor(int64_t n, absl::FunctionRef<void(int64_t)> fn) {
  if (n <= 0) return;
  if (n == 1 || workers_.empty() || InTask()) {
    TaskScope scope;
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  Job job(n, fn);
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(&job);
    wake = sleeping_ > 0;
  }
  generation_.fetch_add(1, std::memory_order_release);
  if (wake) {
    // Wake as many sleepers as there are indices the caller will not take.
    if (n - 1 >= static_cast<int64_t>(workers_.size())) {
      work_cv_.notify_all();
    } else {
      for (int64_t i = 0; i < n - 1; ++i) work_cv_.notify_one();
    }
  }
  RunIndices(job);
  std::unique_lock<std::mutex> lock(mu_);
  RemoveLocked(&job);
  // No worker joins from here on; wait for those inside to finish their
  // last index: spinning first, since a worker's last index usually ends
  // within microseconds of the caller's, and sleeping on done_cv_ costs a
  // wake-up (tens of microseconds on a virtual machine).
  if (job.workers_inside.load(std::memory_order_relaxed) != 0) {
    lock.unlock();
    SpinUntil([&] { return job.workers_inside.load(std::memory_order_relaxed) == 0; });
    // Re-taking mu_ (released by the last worker after its decrement) is
    // what orders the workers' writes before the return: never return
    // straight from the spin.
    lock.lock();
  }
  done_cv_.wait(lock, [&] { return job.workers_inside.load(std::memory_order_relaxed) == 0; });
}

void ThreadPool::WorkerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    if (stop_) return;
    if (!queue_.empty()) {
      // The oldest job first: it has waited longest for help.
      Job* job = queue_.front();
      job->workers_inside.fetch_add(1, std::memory_order_relaxed);
      lock.unlock();
      RunIndices(*job);
      lock.lock();
      RemoveLocked(job);  // no index left: spare others the visit
      if (job->workers_inside.fetch_sub(1, std::memory_order_relaxed) == 1) {
        done_cv_.notify_all();
      }
      continue;
    }
    // Spin a little for the next job, then sleep.
    const uint64_t seen = generation_.load(std::memory_order_acquire);
    lock.unlock();
    const bool more =
        SpinUntil([&] { return generation_.load(std::memory_order_acquire) != seen; });
    lock.lock();
    if (more || stop_ || !queue_.empty()) continue;
    ++sleeping_;
    work_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    --sleeping_;
  }
}

}  // namespace xlite::runtime
