// The cores the calling thread may run on.
#ifndef XLITE_SUPPORT_HOST_CPUS_H_
#define XLITE_SUPPORT_HOST_CPUS_H_

namespace xlite {

// CPUs in the calling thread's affinity mask (sched_getaffinity: what taskset
// or a container's cpuset leaves the process, unless a thread narrowed its own;
// std::thread::hardware_concurrency counts the machine's), at least 1; the
// machine's count where the mask cannot be read.
int UsableCpuCount();

}  // namespace xlite

#endif  // XLITE_SUPPORT_HOST_CPUS_H_
