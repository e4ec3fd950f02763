// Running one Executable on R replicas x P partitions of a Client's devices
// at once (XLA's Execute on a DeviceAssignment): each device runs on its own
// executor thread, with its own memory (its own Execute call), its
// replica_id / partition_id and its cpu::CollectiveExecuteParams (one run id
// for all, the assignment, the client's in-process transport and collective
// timeout), so the module's collectives meet across the devices.
//
//   ASSIGN_OR_RETURN(DeviceAssignment a, DeviceAssignment::Default(2, 1));
//   ASSIGN_OR_RETURN(std::vector<Literal> results,
//                    ExecuteOnDevices(client, executable, {args0, args1}, a));
//
// Arguments and results are indexed by logical device, replica * P +
// partition (as EvaluateReplicated indexes them); which client device runs
// it is the assignment's. If a device fails, the run's pending collectives
// are aborted: the other devices fail at once instead of waiting for the
// timeout, and the first error is returned, prefixed with
// "device D (replica r, partition p): ".
#ifndef XLITE_RUNTIME_EXECUTE_ON_DEVICES_H_
#define XLITE_RUNTIME_EXECUTE_ON_DEVICES_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "xlite/collectives/device_assignment.h"
#include "xlite/ir/literal.h"
#include "xlite/runtime/buffer.h"
#include "xlite/runtime/client.h"
#include "xlite/runtime/executable.h"

namespace xlite::runtime {

struct DevicesExecuteOptions {
  ThunkProfile* profile = nullptr;  // shared by the devices
  bool flush_denormals = true;
  // Every device's infeed/outfeed queues and host callbacks (keyed by global
  // device id); nullptr: none.
  HostTransfers* host_transfers = nullptr;
};

// One result literal per logical device. InvalidArgument for a wrong
// number of argument lists or an assignment that names a device the client
// does not have.
absl::StatusOr<std::vector<Literal>> ExecuteOnDevices(
    Client& client, const Executable& executable,
    const std::vector<std::vector<Literal>>& arguments,
    const collectives::DeviceAssignment& assignment, const DevicesExecuteOptions& options = {});

// The same with Executable::Execute's buffers (donation rules per device):
// arguments[d] are logical device d's argument buffers; returns its outputs.
absl::StatusOr<std::vector<std::vector<std::unique_ptr<Buffer>>>> ExecuteBuffersOnDevices(
    Client& client, const Executable& executable,
    const std::vector<std::vector<Buffer*>>& arguments,
    const collectives::DeviceAssignment& assignment, const DevicesExecuteOptions& options = {});

}  // namespace xlite::runtime

#endif  // XLITE_RUNTIME_EXECUTE_ON_DEVICES_H_
