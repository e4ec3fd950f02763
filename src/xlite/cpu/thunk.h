// Thunks: the CPU runtime's units of work. A thunk is emitted at compile time
// from one HLO instruction (cpu/thunk_emitter.h) and at run time sees only
// slices of the executable's allocations, never HLO: it declares the slices
// it reads and writes (buffer_uses) and does its work on the addresses an
// execution gives those allocations (BufferAllocations).
//
// Thunks are immutable once emitted: one executable runs its ThunkSequence
// from several threads at once, each call with its own allocations, so
// Execute() keeps no state in the thunk (rng-get-and-update-state's counter
// is atomic, as XLA keeps it per executable).
#ifndef XLITE_CPU_THUNK_H_
#define XLITE_CPU_THUNK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "xlite/buffers/buffer_assignment.h"
#include "xlite/hostlib/threads.h"

namespace xlite::cpu {

// A slice of no allocation: zero bytes (arrays with no elements get no
// memory). Its address is a valid, aligned, never dereferenced pointer.
inline BufferSlice EmptySlice() { return BufferSlice{-1, 0, 0}; }

// One slice a thunk touches and how.
struct BufferUse {
  enum class Access { kRead, kWrite };  // kWrite: written (maybe read as well)
  BufferSlice slice;
  Access access = Access::kRead;
  static BufferUse Read(BufferSlice s) { return {s, Access::kRead}; }
  static BufferUse Write(BufferSlice s) { return {s, Access::kWrite}; }
};

// The base address of every allocation for one execution (parameters bound
// to the arguments, a fresh temp heap and outputs, the executable's
// constants), indexed by allocation index.
class BufferAllocations {
 public:
  explicit BufferAllocations(absl::Span<uint8_t* const> bases) : bases_(bases) {}
  void* Get(const BufferSlice& slice) const {
    if (slice.allocation < 0) return EmptyAddress();
    return bases_[slice.allocation] + slice.offset;
  }
  int64_t size() const { return static_cast<int64_t>(bases_.size()); }
  // The address of every empty slice: 64-byte aligned, never read or written.
  static void* EmptyAddress();

 private:
  absl::Span<uint8_t* const> bases_;
};

// Where a kernel's partitions run: the client's thread pool (its thread
// budget), the calling thread included.
class TaskRunner {
 public:
  virtual ~TaskRunner() = default;
  // Threads that may work at once, the caller included (>= 1).
  virtual int num_threads() const = 0;
  // Calls fn(0) ... fn(n - 1), some on the calling thread, and returns when
  // all have returned. Each call may run on any of the threads.
  virtual void ParallelFor(int64_t n, absl::FunctionRef<void(int64_t)> fn) = 0;
};

class ThunkSequence;
struct ExecuteParams;
// Defined where their thunks are (forward-declared so ExecuteParams can carry
// them): several devices (cpu/collective_thunks.h), asynchronous work of one
// run (cpu/async_thunks.h), host queues and callbacks
// (cpu/host_transfer_thunks.h).
struct CollectiveExecuteParams;
class AsyncExecuteState;
class HostTransferParams;

// Runs a ThunkSequence in order (runtime/thunk_executor.h); control-flow
// thunks run their nested sequences through it, so a profile sees them too.
class SequenceExecutor {
 public:
  virtual ~SequenceExecutor() = default;
  virtual absl::Status Run(const ThunkSequence& sequence, const ExecuteParams& params) const = 0;
};

// The runner's threads as hostlib's kernels take them (one thread when
// `runner` is nullptr or has one).
hostlib::HostParallelism HostParallelismOf(TaskRunner* runner);

// What one execution gives every thunk.
struct ExecuteParams {
  const BufferAllocations* buffers = nullptr;
  TaskRunner* runner = nullptr;  // nullptr: all work on the calling thread
  const SequenceExecutor* executor = nullptr;
  int64_t replica_id = 0;
  int64_t partition_id = 0;
  // FTZ/DAZ on every thread that runs a kernel part (the runner's workers
  // too: MXCSR is per thread).
  bool flush_denormals = true;
  // This device's place among several (run id, device assignment, the
  // communicators); nullptr: one device.
  const CollectiveExecuteParams* collectives = nullptr;
  // The run's asynchronous work (side streams, in-flight starts); nullptr:
  // async pairs run synchronously on the calling thread.
  AsyncExecuteState* async = nullptr;
  // Infeed/outfeed queues and host send/recv callbacks; nullptr: none.
  HostTransferParams* host = nullptr;
};

// Where a thunk comes from, for dumps, profiles and errors.
struct ThunkInfo {
  std::string instruction;  // the HLO instruction's name
  std::string opcode;       // its opcode ("fusion", "while", ...)
  std::string op_name;      // metadata op_name (the framework's name), may be empty
  // The instruction has effects beyond the slices it declares (a custom call
  // with custom_call_has_side_effect=true): a concurrent executor keeps such
  // thunks in program order.
  bool has_side_effect = false;
  // The call forks an OpenMP team of the whole thread budget of its own (a
  // oneDNN convolution, an f32 dot as one team sgemm): a concurrent executor
  // runs such thunks one after another, so that two teams never share the
  // cores.
  bool forks_thread_team = false;
};

class Thunk {
 public:
  enum class Kind {
    kKernel,
    kCopy,
    kWhile,
    kConditional,
    kCall,
    kReplicaId,
    kPartitionId,
    kRngGetAndUpdateState,
    kCustomCall,
    kPoison,
    kLibrary,        // a host library call (dot, convolution, fft, sort, ...)
    kCollective,     // all-reduce, all-gather, ... among several devices
    kAsyncStart,     // launches nested thunks on a side stream
    kAsyncDone,      // waits for them
    kHostTransfer,   // infeed, outfeed, host send/recv
    kCommandBuffer,  // a recorded run of kernels, copies and control flow
  };

  Thunk(Kind kind, ThunkInfo info) : kind_(kind), info_(std::move(info)) {}
  virtual ~Thunk() = default;
  Thunk(const Thunk&) = delete;
  Thunk& operator=(const Thunk&) = delete;

  Kind kind() const { return kind_; }
  const ThunkInfo& info() const { return info_; }

  virtual absl::Status Execute(const ExecuteParams& params) const = 0;
  // Every slice this thunk (and its nested sequences) reads or writes.
  virtual std::vector<BufferUse> buffer_uses() const = 0;
  // Nested sequences (control flow), with a label each ("condition", "body",
  // "branch 0", ...).
  virtual std::vector<std::pair<std::string, const ThunkSequence*>> nested() const { return {}; }
  // The same sequences, for thunk passes that rewrite them before any run.
  virtual std::vector<ThunkSequence*> mutable_nested() { return {}; }
  // Kind-specific details for the dump ("partitions 4", "bytes 4096").
  virtual std::string Details() const { return ""; }

 private:
  Kind kind_;
  ThunkInfo info_;
};

// "kKernel", "kWhile", ... as the dump prints them.
const char* ThunkKindName(Thunk::Kind kind);

// "a3[64:+16]": allocation 3, offset 64, 16 bytes; "empty" for EmptySlice().
std::string SliceToString(const BufferSlice& slice);

class ThunkSequence {
 public:
  ThunkSequence() = default;
  ThunkSequence(ThunkSequence&&) = default;
  ThunkSequence& operator=(ThunkSequence&&) = default;

  void push_back(std::unique_ptr<Thunk> thunk) { thunks_.push_back(std::move(thunk)); }
  void Append(ThunkSequence&& other);
  // Inserts before position `at`.
  void Insert(size_t at, std::unique_ptr<Thunk> thunk);
  size_t size() const { return thunks_.size(); }
  bool empty() const { return thunks_.empty(); }
  const Thunk& operator[](size_t i) const { return *thunks_[i]; }
  Thunk& mutable_thunk(size_t i) { return *thunks_[i]; }
  auto begin() const { return thunks_.begin(); }
  auto end() const { return thunks_.end(); }
  // Moves the thunks out, leaving the sequence empty (for thunk passes).
  std::vector<std::unique_ptr<Thunk>> Release() {
    std::vector<std::unique_ptr<Thunk>> out;
    out.swap(thunks_);
    return out;
  }

  // The whole tree, one thunk a line, numbered in execution order:
  //   001: kKernel  add.3 (fusion)  reads a0[0:+64] a1[0:+64]  writes a2[0:+64]  partitions<=1
  //   002: kWhile   while.7 (while)  ...
  //     condition:
  //       003: ...
  std::string ToString() const;
  // Total number of thunks, nested ones included.
  int64_t CountAll() const;

 private:
  std::vector<std::unique_ptr<Thunk>> thunks_;
};

// For thunk implementations: uses of a sequence's thunks, nested included.
void AppendBufferUses(const ThunkSequence& sequence, std::vector<BufferUse>& uses);

// For thunks that call host libraries, which allocate their own temporaries:
// runs `call`, turning std::bad_alloc into ResourceExhausted (never an abort).
absl::Status CallCatchingOutOfMemory(absl::FunctionRef<absl::Status()> call);

}  // namespace xlite::cpu

#endif  // XLITE_CPU_THUNK_H_
