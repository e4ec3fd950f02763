#include "xlite/hostlib/threads.h"

#include <dlfcn.h>

#include <thread>

extern "C" int omp_get_max_threads(void);  // libgomp, oneDNN's OpenMP runtime

#include "gtest/gtest.h"

namespace xlite::hostlib {
namespace {
namespace XLITE_UNITY_ID {

// OpenBLAS's own threads would spin beside the runtime's: its pthreads build
// (Debian's default, the one hostlib confines) runs on the calling thread
// alone once hostlib is loaded.
TEST(HostThreads, OpenBlasRunsOnItsCallerAlone) {
  auto parallel = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_parallel"));
  auto get = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  if (parallel == nullptr || get == nullptr) {
    GTEST_SKIP() << "the BLAS in this process is not OpenBLAS";
  }
  if (parallel() != 1) GTEST_SKIP() << "OpenBLAS here is not its pthreads build";
  EXPECT_EQ(get(), 1);
}

TEST(HostThreads, BudgetReachesEveryCallingThreadsOpenMpTeam) {
  const int default_threads = HostThreads();
  EXPECT_GE(default_threads, 1);
  SetHostThreads(3);
  EXPECT_EQ(HostThreads(), 3);
  EXPECT_EQ(ApplyHostThreads(), 3);
  EXPECT_EQ(omp_get_max_threads(), 3);
  int other = 0;
  std::thread([&] {
    EXPECT_EQ(ApplyHostThreads(), 3);
    other = omp_get_max_threads();
  }).join();
  EXPECT_EQ(other, 3);
  SetHostThreads(1);
  EXPECT_EQ(ApplyHostThreads(), 1);
  EXPECT_EQ(ApplyHostThreads(), 1);  // already applied
  EXPECT_EQ(omp_get_max_threads(), 1);
  SetHostThreads(0);  // back to OpenMP's default
  EXPECT_EQ(HostThreads(), default_threads);
  EXPECT_EQ(ApplyHostThreads(), default_threads);
  EXPECT_EQ(omp_get_max_threads(), default_threads);
}

TEST(HostThreads, ScopedLimitNarrowsOneCallsTeamAndRestoresTheBudget) {
  SetHostThreads(3);
  {
    const ScopedHostThreadLimit limit(1);
    EXPECT_EQ(limit.threads(), 1);
    EXPECT_EQ(omp_get_max_threads(), 1);
  }
  EXPECT_EQ(omp_get_max_threads(), 3);
  {
    const ScopedHostThreadLimit limit(8);  // never above the budget
    EXPECT_EQ(limit.threads(), 3);
    EXPECT_EQ(omp_get_max_threads(), 3);
  }
  EXPECT_EQ(omp_get_max_threads(), 3);
  {
    const ScopedHostThreadLimit outer(2);
    {
      const ScopedHostThreadLimit inner(3);  // never above an enclosing limit
      EXPECT_EQ(inner.threads(), 2);
      const ScopedHostThreadLimit innermost(1);
      EXPECT_EQ(omp_get_max_threads(), 1);
    }
    EXPECT_EQ(omp_get_max_threads(), 2);  // the outer limit holds until it ends
  }
  EXPECT_EQ(omp_get_max_threads(), 3);
  SetHostThreads(0);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::hostlib
