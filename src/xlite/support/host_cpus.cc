#include "xlite/support/host_cpus.h"

#include <sched.h>

#include <algorithm>
#include <thread>

namespace xlite {

int UsableCpuCount() {
  cpu_set_t set;
  CPU_ZERO(&set);
  // A fixed set covers 1024 CPUs; beyond that the call fails (EINVAL).
  if (sched_getaffinity(0, sizeof(set), &set) != 0) {
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }
  const int count = CPU_COUNT(&set);
  return count > 0 ? count : 1;
}

}  // namespace xlite
