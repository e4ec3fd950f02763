// The cores this process may run on.
#ifndef XLITE_SUPPORT_HOST_CPUS_H_
#define XLITE_SUPPORT_HOST_CPUS_H_

namespace xlite {

// CPUs in this process's affinity mask (sched_getaffinity: what taskset or a
// container's cpuset leaves it, where std::thread::hardware_concurrency counts
// the machine's), at least 1.
int UsableCpuCount();

}  // namespace xlite

#endif  // XLITE_SUPPORT_HOST_CPUS_H_
