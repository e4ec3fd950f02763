// The host kernels' thread budget. oneDNN (Debian's build runs on OpenMP)
// parallelizes each matmul and convolution over an OpenMP team; its size is
// set here, from the same budget as the runtime's other threads
// (--xlite_cpu_threads=N). OpenMP keeps the team size per calling thread, so
// every oneDNN call applies the current budget on its own thread first.
#ifndef XLITE_HOSTLIB_THREADS_H_
#define XLITE_HOSTLIB_THREADS_H_

#include <cstdint>
#include <functional>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace xlite::hostlib {

// The caller's threads for one host kernel call (the runtime's pool): `run`
// calls fn(0), ..., fn(parts - 1), possibly at once; an empty `run` means
// one thread.
struct HostParallelism {
  int threads = 1;
  std::function<void(int64_t parts, absl::FunctionRef<void(int64_t)> fn)> run;
};

// Runs part(0), ..., part(parts - 1) on `parallelism` (inline when there is
// one part or no `run`) and returns the first error. A part that runs out of
// memory gives ResourceExhausted(`out_of_memory`): no exception crosses a
// worker thread.
absl::Status RunParts(const HostParallelism& parallelism, int64_t parts,
                      absl::FunctionRef<absl::Status(int64_t part)> part,
                      absl::string_view out_of_memory);

// n >= 1 threads for each host kernel call; n <= 0 restores the default
// (OpenMP's: OMP_NUM_THREADS, else one per core).
void SetHostThreads(int n);
// The budget in force (the OpenMP default when none was set).
int HostThreads();
// Makes the calling thread's OpenMP team size the budget (cheap when it
// already is) and returns that size; hostlib calls it before every oneDNN
// call (and keys its primitives by the size, which oneDNN plans them for).
int ApplyHostThreads();

// For one call on this thread: a team of at most `n` (a small problem, where
// a team's fork and join cost more than the extra threads save); the budget
// applies again when it is destroyed.
class ScopedHostThreadLimit {
 public:
  explicit ScopedHostThreadLimit(int n);
  ~ScopedHostThreadLimit();
  ScopedHostThreadLimit(const ScopedHostThreadLimit&) = delete;
  ScopedHostThreadLimit& operator=(const ScopedHostThreadLimit&) = delete;
  int threads() const { return threads_; }

 private:
  int threads_, previous_;
};

}  // namespace xlite::hostlib

#endif  // XLITE_HOSTLIB_THREADS_H_
