#include "xlite/support/host_cpus.h"

#include <sched.h>

#include <thread>

#include "gtest/gtest.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

// taskset's view, not the machine's: a thread limited to one CPU counts one.
TEST(UsableCpuCount, FollowsTheAffinityMask) {
  cpu_set_t all;
  ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
  EXPECT_EQ(UsableCpuCount(), CPU_COUNT(&all));
  int first = 0;
  while (!CPU_ISSET(first, &all)) ++first;
  int limited = 0;
  std::thread([&] {  // sched_setaffinity(0) changes the calling thread alone
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
    limited = UsableCpuCount();
  }).join();
  EXPECT_EQ(limited, 1);
  EXPECT_EQ(UsableCpuCount(), CPU_COUNT(&all));
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
