// Collectives as thunks: all-reduce, all-gather, reduce-scatter, all-to-all,
// collective-permute, collective-broadcast and ragged-all-to-all (and the
// synchronous work of their -start forms) among the devices of one
// execution, through a collectives::Communicator.
//
// Each device runs the executable with its own CollectiveExecuteParams
// (runtime::ExecuteOnDevices builds them): the run id every device of the
// execution shares, the device assignment, this device's ids, where its
// communicators come from, the rendezvous timeout. A thunk finds its group at
// run time (collectives::ParticipantsOf / PermutePeersOf, every replica-group
// form and mode) and meets its peers under an op key unique per (run,
// thunk, invocation): each device counts its own invocations of each thunk,
// so the n-th run of a collective in a while body meets only the other
// devices' n-th run of it.
//
// Without CollectiveExecuteParams (ExecuteParams::collectives == nullptr) a
// module of 1 replica x 1 partition runs its collectives as a group of one;
// a module for several devices is an InvalidArgument naming the instruction.
#ifndef XLITE_CPU_COLLECTIVE_THUNKS_H_
#define XLITE_CPU_COLLECTIVE_THUNKS_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "xlite/codegen/kernel.h"
#include "xlite/collectives/communicator.h"
#include "xlite/collectives/device_assignment.h"
#include "xlite/collectives/reduction.h"
#include "xlite/collectives/rendezvous.h"
#include "xlite/collectives/replica_groups.h"
#include "xlite/cpu/thunk.h"

namespace xlite::cpu {

// Where a device gets its communicator for a clique. In process: one shared
// Rendezvous (InProcessCommunicatorFactory); an MPI or Gloo transport
// between processes implements the same interface.
class CommunicatorFactory {
 public:
  virtual ~CommunicatorFactory() = default;
  // This device's communicator among `devices` (global ids, in rank order),
  // acting as `rank`.
  virtual absl::StatusOr<std::unique_ptr<collectives::Communicator>> Create(
      std::vector<int64_t> devices, int64_t rank) const = 0;
  // One device of run `run_id` failed with `error`: its peers' pending and
  // later meetings in that run fail at once with it. ForgetRun once every
  // device of the run has returned.
  virtual void AbortRun(int64_t run_id, const absl::Status& error) const = 0;
  virtual void ForgetRun(int64_t run_id) const = 0;
};

class InProcessCommunicatorFactory final : public CommunicatorFactory {
 public:
  InProcessCommunicatorFactory() : rendezvous_(std::make_shared<collectives::Rendezvous>()) {}
  absl::StatusOr<std::unique_ptr<collectives::Communicator>> Create(std::vector<int64_t> devices,
                                                                    int64_t rank) const override;
  void AbortRun(int64_t run_id, const absl::Status& error) const override;
  void ForgetRun(int64_t run_id) const override;
  const collectives::Rendezvous& rendezvous() const { return *rendezvous_; }

 private:
  std::shared_ptr<collectives::Rendezvous> rendezvous_;
};

// How often one device has run each collective thunk in one run.
class InvocationCounter {
 public:
  // The number of this invocation of `thunk` (0, 1, ...).
  int64_t Next(const Thunk* thunk);

 private:
  std::mutex mu_;
  absl::flat_hash_map<const Thunk*, int64_t> counts_;  // guarded by mu_
};

// One device's place in one execution on several devices.
struct CollectiveExecuteParams {
  int64_t run_id = 0;  // shared by every device of the execution
  const collectives::DeviceAssignment* assignment = nullptr;
  int64_t device = 0;              // this device's global id
  collectives::LogicalId logical;  // its (replica, partition)
  const CommunicatorFactory* communicators = nullptr;
  collectives::Timeout timeout = std::chrono::seconds(60);
  // Per device and run (a thunk may run on the device's side streams too).
  mutable InvocationCounter invocations;
};

// What a collective thunk does; the emitter (collective_emitter.cc) fills it
// from the instruction, so that the thunk sees no HLO.
struct CollectiveOp {
  enum class Kind {
    kAllReduce,
    kReduceScatter,
    kAllGather,
    kAllToAll,       // array form: blocks along `dimension`
    kAllToAllTuple,  // operand j goes to rank j
    kCollectivePermute,
    kCollectiveBroadcast,
    kRaggedAllToAll,
  };
  // One operand and the result it gives, as arrays in physical order:
  // `dims` are the source's dimensions major to minor (the destination's
  // along the collective dimension may differ), `dimension` is the collective
  // dimension among them.
  struct Operand {
    BufferSlice source, destination;
    PrimitiveType type = PrimitiveType::F32;
    std::vector<int64_t> dims;
    int64_t dimension = 0;
    int64_t elements = 0;
  };
  Kind kind = Kind::kAllReduce;
  std::string opcode;  // for errors ("all-gather-start")
  collectives::CollectiveOpGroupMode mode = collectives::CollectiveOpGroupMode::kCrossReplica;
  std::vector<std::vector<int64_t>> groups;  // replica_groups as id lists; empty: all
  SourceTargetPairs pairs;                   // collective-permute
  std::vector<Operand> operands;
  // all-reduce, reduce-scatter: the plain reduction, or none when the
  // reducer is compiled (CollectiveThunk::SetReducer).
  std::optional<collectives::ReductionKind> reduction;
  // ragged-all-to-all: the four offset/size arrays (s32 or s64).
  std::vector<BufferSlice> ragged_sizes;
  std::vector<PrimitiveType> ragged_size_types;
  // The module runs on 1 replica x 1 partition: without
  // CollectiveExecuteParams the op runs as a group of one.
  bool single_device = false;
  // Distinguishes this thunk's meetings from the executable's other ones.
  int64_t id = 0;
};

class CollectiveThunk final : public Thunk {
 public:
  CollectiveThunk(ThunkInfo info, CollectiveOp op);

  // A reducer that is not a plain kind, JIT-compiled as a kernel over two
  // scalars writing one (buffers: a, b, out).
  void SetReducer(codegen::KernelFunction reducer) { reducer_ = reducer; }
  const CollectiveOp& op() const { return op_; }

  absl::Status Execute(const ExecuteParams& params) const override;
  std::vector<BufferUse> buffer_uses() const override;
  std::string Details() const override;

 private:
  absl::Status Run(const ExecuteParams& params, const CollectiveExecuteParams& device) const;
  absl::StatusOr<collectives::Reduction> Reduction() const;

  CollectiveOp op_;
  codegen::KernelFunction reducer_ = nullptr;
};

// "all-reduce", "collective-permute", ... as the dump prints them.
const char* CollectiveKindName(CollectiveOp::Kind kind);

}  // namespace xlite::cpu

#endif  // XLITE_CPU_COLLECTIVE_THUNKS_H_
