// Client: the CPU runtime's process-wide resources: the thread budget, the
// ThreadPool that runs thunks' parallel loops (XLA's PjRtCpuClient with its
// intra-op pool), and N CPU devices (--xla_force_host_platform_device_count),
// each with its own executor thread, sharing that pool, and the in-process
// transport their collectives meet through. Executables run on a client: one
// device from any thread (Executable::Execute), or on several devices at once
// (runtime/execute_on_devices.h).
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Client> client,
//                    Client::Create(ClientOptionsFrom(debug_options)));
//   client->thread_pool().ParallelFor(n, fn);
//
// The budget N (--xlite_cpu_threads=N; default: the cores this process may
// run on, sched_getaffinity) is shared by xlite's pool (N-1 workers plus the
// caller) and by oneDNN, which runs on OpenMP: Create sets its team size to
// N (hostlib::SetHostThreads). That setting is process-wide, so the client
// created last decides it.
#ifndef XLITE_RUNTIME_CLIENT_H_
#define XLITE_RUNTIME_CLIENT_H_

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "xlite/cpu/collective_thunks.h"
#include "xlite/runtime/thread_pool.h"
#include "xlite/support/flags.h"

namespace xlite::runtime {

struct ClientOptions {
  // Threads for running one program; 0 = DefaultCpuThreads().
  int cpu_threads = 0;
  // CPU devices, each with an executor thread (>= 1).
  int device_count = 1;
  // How long a device waits at a collective for its peers before failing
  // with DeadlineExceeded naming the missing ones.
  std::chrono::milliseconds collective_timeout = std::chrono::seconds(60);
};

// The cores this process may run on (sched_getaffinity), at least 1.
int DefaultCpuThreads();

// The options --xlite_cpu_threads, --xla_force_host_platform_device_count and
// --xla_cpu_collective_call_terminate_timeout_seconds ask for.
ClientOptions ClientOptionsFrom(const DebugOptions& debug);

class Client {
 public:
  // InvalidArgument for cpu_threads < 0 or above kMaxCpuThreads, for
  // device_count outside [1, kMaxDevices], for a timeout <= 0.
  static absl::StatusOr<std::unique_ptr<Client>> Create(const ClientOptions& options = {});
  ~Client();

  static constexpr int kMaxCpuThreads = 1024;
  static constexpr int kMaxDevices = 4096;

  int cpu_threads() const { return pool_.num_threads(); }
  ThreadPool& thread_pool() { return pool_; }

  int device_count() const { return static_cast<int>(devices_.size()); }
  // Runs `work` on device `device`'s executor thread, after the work
  // scheduled there before; returns at once. `device` must be in range.
  void Schedule(int device, std::function<void()> work);
  // The transport of the devices' collectives.
  const cpu::CommunicatorFactory& communicators() const { return communicators_; }
  std::chrono::milliseconds collective_timeout() const { return collective_timeout_; }

 private:
  class DeviceThread;
  Client(int threads, int devices, std::chrono::milliseconds timeout);
  ThreadPool pool_;
  cpu::InProcessCommunicatorFactory communicators_;
  std::chrono::milliseconds collective_timeout_;
  std::vector<std::unique_ptr<DeviceThread>> devices_;
};

}  // namespace xlite::runtime

#endif  // XLITE_RUNTIME_CLIENT_H_
