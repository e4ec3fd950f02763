#include "xlite/runtime/execute_on_devices.h"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "xlite/runtime/task_runner.h"
#include "xlite/support/status.h"

namespace xlite::runtime {
namespace {

// Run ids unique in the process: the rendezvous tells runs apart by them.
int64_t NextRunId() {
  static std::atomic<int64_t> next{1};
  return next.fetch_add(1);
}

// Runs `run(d, options)` for every logical device d on its client device's
// thread, each with its ExecuteOptions; waits for all. The first failure
// aborts the run's collectives and is returned, naming its device.
absl::Status RunOnDevices(Client& client, const collectives::DeviceAssignment& assignment,
                          int64_t argument_lists, const DevicesExecuteOptions& options,
                          const std::function<absl::Status(int64_t, const ExecuteOptions&)>& run) {
  const int64_t replicas = assignment.replica_count(), partitions = assignment.partition_count();
  const int64_t n = assignment.device_count();
  if (argument_lists != n) {
    return absl::InvalidArgumentError(absl::StrCat("got ", argument_lists, " argument lists for ",
                                                   replicas, " replicas x ", partitions,
                                                   " partitions"));
  }
  for (int64_t d = 0; d < n; ++d) {
    const int64_t device = assignment(d / partitions, d % partitions);
    if (device >= client.device_count()) {
      return absl::InvalidArgumentError(absl::StrCat("the device assignment uses device ", device,
                                                     " but the client has ", client.device_count(),
                                                     " (--xla_force_host_platform_device_count)"));
    }
  }
  const int64_t run_id = NextRunId();
  const cpu::CommunicatorFactory& communicators = client.communicators();
  std::vector<std::unique_ptr<cpu::CollectiveExecuteParams>> params(n);
  for (int64_t d = 0; d < n; ++d) {
    auto& p = params[d] = std::make_unique<cpu::CollectiveExecuteParams>();
    p->run_id = run_id;
    p->assignment = &assignment;
    p->logical = collectives::LogicalId{d / partitions, d % partitions};
    p->device = assignment.DeviceOf(p->logical);
    p->communicators = &communicators;
    p->timeout = client.collective_timeout();
  }
  PoolTaskRunner runner(client.thread_pool());
  std::mutex mu;
  std::condition_variable cv;
  int64_t finished = 0;
  absl::Status first_error;  // guarded by mu
  for (int64_t d = 0; d < n; ++d) {
    client.Schedule(static_cast<int>(params[d]->device), [&, d] {
      const cpu::CollectiveExecuteParams& p = *params[d];
      ExecuteOptions execute;
      execute.runner = &runner;
      execute.profile = options.profile;
      execute.flush_denormals = options.flush_denormals;
      execute.replica_id = p.logical.replica;
      execute.partition_id = p.logical.partition;
      execute.collectives = &p;
      execute.host_transfers = options.host_transfers;
      absl::Status s = run(d, execute);
      std::lock_guard<std::mutex> lock(mu);
      if (!s.ok() && first_error.ok()) {
        first_error = absl::Status(
            s.code(), absl::StrCat("device ", p.device, " (replica ", p.logical.replica,
                                   ", partition ", p.logical.partition, "): ", s.message()));
        // The peers waiting for this device fail now, with its error.
        communicators.AbortRun(run_id, first_error);
      }
      if (++finished == n) cv.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return finished == n; });
  communicators.ForgetRun(run_id);
  return first_error;
}

}  // namespace

absl::StatusOr<std::vector<Literal>> ExecuteOnDevices(
    Client& client, const Executable& executable,
    const std::vector<std::vector<Literal>>& arguments,
    const collectives::DeviceAssignment& assignment, const DevicesExecuteOptions& options) {
  std::vector<absl::StatusOr<Literal>> results(arguments.size(), absl::UnknownError("not run"));
  RETURN_IF_ERROR(RunOnDevices(client, assignment, static_cast<int64_t>(arguments.size()), options,
                               [&](int64_t d, const ExecuteOptions& execute) {
                                 results[d] = executable.ExecuteLiterals(arguments[d], execute);
                                 return results[d].status();
                               }));
  std::vector<Literal> out;
  for (absl::StatusOr<Literal>& r : results) out.push_back(std::move(*r));
  return out;
}

absl::StatusOr<std::vector<std::vector<std::unique_ptr<Buffer>>>> ExecuteBuffersOnDevices(
    Client& client, const Executable& executable,
    const std::vector<std::vector<Buffer*>>& arguments,
    const collectives::DeviceAssignment& assignment, const DevicesExecuteOptions& options) {
  std::vector<absl::StatusOr<std::vector<std::unique_ptr<Buffer>>>> results;
  for (size_t d = 0; d < arguments.size(); ++d) results.emplace_back(absl::UnknownError("not run"));
  RETURN_IF_ERROR(RunOnDevices(client, assignment, static_cast<int64_t>(arguments.size()), options,
                               [&](int64_t d, const ExecuteOptions& execute) {
                                 results[d] = executable.Execute(arguments[d], execute);
                                 return results[d].status();
                               }));
  std::vector<std::vector<std::unique_ptr<Buffer>>> out;
  for (auto& r : results) out.push_back(std::move(*r));
  return out;
}

}  // namespace xlite::runtime
