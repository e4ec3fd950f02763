#include "xlite/hostlib/threads.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <new>
#include <string>
#include <vector>

// libgomp's API: the OpenMP runtime Debian's oneDNN is built with (declared
// here, not through <omp.h>, which a clang build would take from LLVM's
// libomp).
extern "C" {
void omp_set_num_threads(int n);
int omp_get_max_threads(void);
}

namespace xlite::hostlib {
namespace {

// 0: not set (OpenMP's default).
std::atomic<int> budget{0};
// Bumped by every SetHostThreads, so threads re-apply a changed budget.
std::atomic<int> generation{0};

int DefaultThreads() {
  static const int threads = omp_get_max_threads();
  return threads;
}

// OpenBLAS (Debian's BLAS and LAPACK) starts a thread per core when it loads,
// and those threads spin on sched_yield for a while after it starts and after
// each threaded call: on a 2-core host one of them took a core from the
// runtime's pool (sgemm_512 at 2 threads just after start-up ran 1.37 ms
// instead of 0.69). hostlib's BLAS and LAPACK calls are small or split by the
// runtime itself, so OpenBLAS runs on its caller alone and its threads are
// shut down, once, at load. Only its pthreads build (openblas_get_parallel()
// == 1): the OpenMP one would set this thread's OpenMP team, oneDNN's, to 1.
// Looked up at run time: other providers (the reference LAPACK) have none of
// these functions. In a process that embeds xlite this applies to every
// OpenBLAS caller of the process.
const bool kBlasOnCallerOnly = [] {
  auto parallel = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_parallel"));
  auto set = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  auto shutdown = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "blas_thread_shutdown_"));
  if (parallel == nullptr || parallel() != 1 || set == nullptr) return false;
  set(1);
  if (shutdown != nullptr) shutdown();
  return true;
}();

}  // namespace

void SetHostThreads(int n) {
  DefaultThreads();  // read OpenMP's default before anyone changes it
  budget.store(n > 0 ? n : 0);
  generation.fetch_add(1);
}

int HostThreads() {
  const int n = budget.load();
  return n > 0 ? n : DefaultThreads();
}

int ApplyHostThreads() {
  thread_local int applied_generation = 0;
  thread_local int applied_threads = DefaultThreads();
  const int current = generation.load();
  if (applied_generation == current) return applied_threads;
  applied_threads = HostThreads();
  omp_set_num_threads(applied_threads);
  applied_generation = current;
  return applied_threads;
}

absl::Status RunParts(const HostParallelism& parallelism, int64_t parts,
                      absl::FunctionRef<absl::Status(int64_t part)> part,
                      absl::string_view out_of_memory) {
  std::vector<absl::Status> status(parts);
  auto run_part = [&](int64_t p) {
    try {
      status[p] = part(p);
    } catch (const std::bad_alloc&) {
      status[p] = absl::ResourceExhaustedError(std::string(out_of_memory));
    }
  };
  if (parts == 1 || !parallelism.run) {
    for (int64_t p = 0; p < parts; ++p) run_part(p);
  } else {
    parallelism.run(parts, run_part);
  }
  for (const absl::Status& s : status) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

ScopedHostThreadLimit::ScopedHostThreadLimit(int n) {
  const int budget = ApplyHostThreads();
  previous_ = omp_get_max_threads();  // an enclosing limit's, else the budget
  threads_ = std::max(1, std::min({n, budget, previous_}));
  if (threads_ != previous_) omp_set_num_threads(threads_);
}

ScopedHostThreadLimit::~ScopedHostThreadLimit() {
  if (threads_ != previous_) omp_set_num_threads(previous_);
}

}  // namespace xlite::hostlib
