// Executable: what Compile() returns for one CPU device. It owns the module,
// its memory plan (BufferAssignment), the JIT with the compiled kernels, the
// ThunkSequence and the constants (placed once, at creation). Execute may be
// called from several threads at once: each call gets its own parameter,
// output and temp memory (an arena from the executable's ArenaPool, reused
// by later calls, never by two calls at once); the thunks keep no per-call
// state.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Executable> e, Compile(std::move(module), options));
//   ASSIGN_OR_RETURN(std::vector<std::unique_ptr<runtime::Buffer>> outputs,
//                    e->Execute(argument_buffers, options));
//   ASSIGN_OR_RETURN(Literal result, e->ExecuteLiterals(arguments));  // tests, tools
//
// Kernels run with denormals flushed to zero (FTZ/DAZ), as XLA:CPU runs
// them (ExecuteOptions::flush_denormals).
#ifndef XLITE_RUNTIME_EXECUTABLE_H_
#define XLITE_RUNTIME_EXECUTABLE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "xlite/buffers/plan_memory.h"
#include "xlite/codegen/jit.h"
#include "xlite/cpu/collective_thunks.h"
#include "xlite/cpu/thunk.h"
#include "xlite/cpu/thunk_emitter.h"
#include "xlite/eval/host_transfers.h"
#include "xlite/ir/literal.h"
#include "xlite/ir/module.h"
#include "xlite/runtime/arena_pool.h"
#include "xlite/runtime/buffer.h"
#include "xlite/runtime/concurrent_executor.h"
#include "xlite/runtime/donation.h"
#include "xlite/runtime/thunk_executor.h"
#include "xlite/support/flags.h"

namespace xlite::runtime {

// Which executor runs the thunks (concurrent_executor.h, thunk_executor.h).
enum class ExecutorKind {
  kDefault,     // the executable's (--xlite_cpu_concurrent_executor at compile time)
  kSequential,  // in program order on the calling thread
  kConcurrent,  // independent thunks at once, as their declared slices allow
};

// Set at creation (Compile reads them from DebugOptions).
struct ExecutableOptions {
  // Whether ExecutorKind::kDefault runs the concurrent executor
  // (--xlite_cpu_concurrent_executor, DebugOptions::cpu_concurrent_executor).
  bool concurrent_executor = DebugOptions{}.cpu_concurrent_executor;
};

struct ExecuteOptions {
  // Where kernels split into partitions run; nullptr: the calling thread.
  cpu::TaskRunner* runner = nullptr;
  // Times every thunk of this call (--xlite_profile).
  ThunkProfile* profile = nullptr;
  // FTZ/DAZ while the thunks run (XLA:CPU's behaviour).
  bool flush_denormals = true;
  int64_t replica_id = 0;
  int64_t partition_id = 0;
  // This device's place among several (ExecuteOnDevices sets it); nullptr:
  // one device, where only a 1 x 1 module's collectives run (as groups of one).
  const cpu::CollectiveExecuteParams* collectives = nullptr;
  // Execute: arguments that must not be donated even where the module
  // aliases them (PjRt's non_donatable_input_indices); they get copy
  // protection (may-alias) or are an error (must-alias).
  absl::flat_hash_set<int64_t> non_donatable_input_indices;
  // Infeed/outfeed queues and host send/recv callbacks (eval/host_transfers.h);
  // this run's queues are the device partition_id * replicas + replica_id's.
  // nullptr: infeed, outfeed and host send/recv fail, saying none was given.
  HostTransfers* host_transfers = nullptr;
  ExecutorKind executor = ExecutorKind::kDefault;
  // Asynchronous ops (async-start, copy-start, ...) launch their work on side
  // streams and their dones wait for it; false: each start runs its work
  // itself, synchronously (the serial mode).
  bool async = true;
  // Threads that may block, for async work and the concurrent executor's
  // helpers; nullptr: cpu::SideStreams::Default().
  cpu::SideStreams* side_streams = nullptr;
};

class Executable {
 public:
  static absl::StatusOr<std::unique_ptr<Executable>> Create(
      std::unique_ptr<HloModule> module, MemoryPlan plan, std::unique_ptr<codegen::Jit> jit,
      cpu::ThunkSequence thunks, absl::Span<const cpu::ConstantSlice> constants,
      const ExecutableOptions& executable_options = {});
  ~Executable();

  // Runs the entry on `arguments` (one literal per entry parameter, in
  // order; dimensions and element types must match, layouts are the
  // literals' row-major order) and returns the result. Arguments are copied
  // in, so nothing the caller holds is written. InvalidArgument naming the
  // argument for a wrong count or shape; ResourceExhausted when the memory
  // for one run cannot be allocated.
  absl::StatusOr<Literal> ExecuteLiterals(absl::Span<const Literal> arguments,
                                          const ExecuteOptions& options = {}) const;

  // Runs the entry on one buffer per array of the entry's parameters (in
  // parameter order, ForEachSubshape order within each) and returns one
  // buffer per array of the result, with donation as runtime/donation.h
  // defines it: a donated argument backs its aliased output and is deleted; a
  // may-alias argument that is not donated gets copy protection; any other
  // argument is only read. Errors (before anything runs) name the argument:
  // wrong count, shape, element type or layout, a deleted buffer, one buffer
  // passed twice where either use is donated, a must-alias argument not
  // donated. ResourceExhausted when memory runs out.
  absl::StatusOr<std::vector<std::unique_ptr<Buffer>>> Execute(
      absl::Span<Buffer* const> arguments, const ExecuteOptions& options = {}) const;

  // The entry's signature and aliasing (Execute's argument and output
  // leaves); an error for entries Execute cannot take (tokens in parameters).
  absl::StatusOr<const DonationRules*> donation_rules() const;

  const HloModule& module() const { return *module_; }
  const MemoryPlan& plan() const { return plan_; }
  const BufferAssignment& assignment() const { return *plan_.assignment; }
  const cpu::ThunkSequence& thunks() const { return thunks_; }
  // Bytes one Execute allocates (parameters, outputs and the temp heap).
  int64_t bytes_per_run() const { return arena_bytes_; }
  // The runs' arenas (tests: how many were allocated, how many wait).
  const ArenaPool& arenas() const { return *arenas_; }
  // Whether every sequence's dependency graph runs in program order, so
  // that ExecutorKind::kConcurrent runs the sequential executor directly.
  bool runs_in_order() const { return runs_in_order_; }

 private:
  Executable() = default;
  struct Aligned {
    void operator()(uint8_t* p) const;
  };
  using Memory = std::unique_ptr<uint8_t[], Aligned>;
  static absl::StatusOr<Memory> Allocate(int64_t bytes, absl::string_view what);

  // One address per allocation; most modules have few.
  using Bases = absl::InlinedVector<uint8_t*, 16>;
  // Runs the thunks on `bases` (one address per allocation).
  absl::Status Run(absl::Span<uint8_t* const> bases, const ExecuteOptions& options) const;

  std::unique_ptr<HloModule> module_;
  MemoryPlan plan_;
  std::unique_ptr<codegen::Jit> jit_;
  cpu::ThunkSequence thunks_;
  ExecutableOptions options_;
  // The concurrent executor's dependency graphs, one per sequence.
  std::unique_ptr<ExecutionGraphs> graphs_;
  bool runs_in_order_ = false;
  int64_t async_slots_ = 0;
  // The runs' arenas of arena_bytes_ (poisoned when the thunks poison dead
  // slices: --xlite_poison_dead_slices).
  std::unique_ptr<ArenaPool> arenas_;
  // Per allocation: the constants' memory (constant allocations) or the
  // offset in a run's arena (the others; -1 for constants).
  std::vector<Memory> constant_memory_;
  std::vector<int64_t> arena_offset_;
  int64_t arena_bytes_ = 0;
  // The entry's parameters: for each allocation of kind parameter, the
  // array it holds (number, index, shape), when it holds one.
  struct ParameterSlot {
    int64_t allocation = 0;
    int64_t number = 0;
    ShapeIndex index;
    Shape shape;
  };
  std::vector<ParameterSlot> parameter_slots_;
  // The result's array leaves.
  struct OutputSlot {
    ShapeIndex index;
    Shape shape;
    BufferSlice slice;
    // The slice is the whole of an output allocation no other leaf uses:
    // Execute binds that allocation to the output buffer's memory.
    bool owns_allocation = false;
  };
  std::vector<OutputSlot> output_slots_;
  // Execute's argument leaf for each parameter allocation index (-1: none).
  std::vector<int64_t> argument_of_allocation_;
  absl::StatusOr<DonationRules> rules_ = absl::UnknownError("not created");
};

}  // namespace xlite::runtime

#endif  // XLITE_RUNTIME_EXECUTABLE_H_
