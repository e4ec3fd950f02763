// The thunk emitter: a scheduled, memory-planned module (its
// BufferAssignment) -> the entry's ThunkSequence, each instruction in
// schedule order giving 0..n thunks:
//   kLoop fusions and every instruction codegen compiles  -> kernel
//   dot, convolution, fft, topk, cholesky, triangular-solve,
//   custom calls of hostlib's registry                    -> library call
//   sort                                                  -> sort (JIT'd comparator)
//   while, conditional, call                              -> control flow with nested sequences
//   replica-id, partition-id, rng-get-and-update-state    -> their thunks
//   parameter, constant, tuple, get-tuple-element, bitcast, add-dependency,
//   opt-barrier, after-all, pass-through custom calls     -> nothing where the
//       assignment gives the values one slice; copies where it does not
//   collectives (and their -start/-done forms)          -> collective thunks
//                                                          (collective_emitter.cc)
//   async-start/update/done, copy-start/done            -> async start/done thunks
//                                                          (async_emitter.cc)
//   infeed, outfeed, send/recv (+ -done)                -> host transfer thunks
//                                                          (host_transfer_emitter.cc)
// Kernels are compiled afterwards in one batch: kernel_specs() lists them,
// BindKernels() hands the compiled code to their thunks.
#ifndef XLITE_CPU_THUNK_EMITTER_H_
#define XLITE_CPU_THUNK_EMITTER_H_

#include <functional>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "xlite/buffers/buffer_assignment.h"
#include "xlite/codegen/kernel.h"
#include "xlite/cpu/thunk.h"
#include "xlite/ir/module.h"

namespace xlite::cpu {

class AsyncStartThunk;

struct ThunkEmitterOptions {
  // After the last use of each temp buffer, a PoisonThunk overwrites its
  // slice (--xlite_poison_dead_slices).
  bool poison_dead_slices = false;
  // A while or conditional of small kernels becomes one whole-loop kernel
  // (loop_kernels.h; --xlite_cpu_enable_loop_kernels).
  bool loop_kernels = true;
};

// A constant the executable places once: its slice and value.
struct ConstantSlice {
  BufferSlice slice;
  const HloInstruction* instruction = nullptr;
  ShapeIndex index;  // the leaf of a tuple-shaped constant
};

class ThunkEmitter {
 public:
  ThunkEmitter(const BufferAssignment& assignment, ThunkEmitterOptions options = {});
  ~ThunkEmitter();

  absl::StatusOr<ThunkSequence> EmitEntry();

  // The kernels the emitted thunks need, in the order BindKernels expects.
  const std::vector<codegen::KernelSpec>& kernel_specs() const { return specs_; }
  absl::Status BindKernels(absl::Span<const codegen::CompiledKernel> kernels);

  // Every constant of the emitted computations with its slice.
  const std::vector<ConstantSlice>& constants() const { return constants_; }

 private:
  absl::StatusOr<ThunkSequence> EmitComputation(const HloComputation& computation);
  absl::Status EmitInstruction(const HloInstruction& instr, ThunkSequence& out);
  absl::Status EmitKernel(const HloInstruction& instr, ThunkSequence& out);
  absl::Status EmitSort(const HloInstruction& instr, ThunkSequence& out);
  absl::Status EmitWhile(const HloInstruction& instr, ThunkSequence& out);
  absl::Status EmitConditional(const HloInstruction& instr, ThunkSequence& out);
  absl::Status EmitCall(const HloInstruction& instr, ThunkSequence& out);
  // `control_flow` (the while or conditional emitted for `instr`), or the
  // whole-loop kernel that replaces it (loop_kernels.h).
  std::unique_ptr<Thunk> MaybeLoopKernel(const HloInstruction& instr,
                                         std::unique_ptr<Thunk> control_flow);
  // Opcodes with the kCollective trait (collective_emitter.cc).
  absl::Status EmitCollective(const HloInstruction& instr, ThunkSequence& out);
  // One collective's work alone (no -start/-done bookkeeping): its operands
  // into the result leaves at `result_index` of `instr` (the instruction's
  // result, or {1} of a -start's (operands, results) tuple).
  absl::Status EmitCollectiveWork(const HloInstruction& instr, const ShapeIndex& result_index,
                                  ThunkSequence& out);
  // Whether every slice `work` touches lies inside `start`'s own value (which
  // the memory plan keeps alive until its done) or is only read from
  // constants or unaliased entry parameters, so it may run on a side stream.
  absl::StatusOr<bool> WorkStaysInsideValue(const HloInstruction& start,
                                            const ThunkSequence& work) const;
  // async-start/update/done, copy-start/done (async_emitter.cc).
  absl::Status EmitAsync(const HloInstruction& instr, ThunkSequence& out);
  // The reusable halves (async_emitter.cc): `work` (the thunks of `start`)
  // launched on a side stream in a new slot; and the wait for it at `done`,
  // whose start is found through async-updates.
  absl::Status EmitAsyncStart(const HloInstruction& start, ThunkSequence work, ThunkSequence& out);
  absl::Status EmitAsyncDone(const HloInstruction& done, ThunkSequence& out);
  // infeed, outfeed, send, send-done, recv, recv-done (host_transfer_emitter.cc).
  absl::Status EmitHostTransfer(const HloInstruction& instr, ThunkSequence& out);

  // The slice of `instr`'s value at `index`: EmptySlice() for arrays of no
  // bytes; Internal when the assignment has none for another array.
  absl::StatusOr<BufferSlice> Slice(const HloInstruction* instr, const ShapeIndex& index) const;
  // The slices of `instr`'s array operands and its result's array leaves.
  absl::StatusOr<std::vector<BufferSlice>> OperandSlices(const HloInstruction& instr) const;
  absl::StatusOr<std::vector<BufferSlice>> ResultSlices(const HloInstruction& instr) const;
  // Copies of each array leaf of `shape` from `from` at `from_index` to `to`
  // at `to_index`, where their slices differ.
  absl::Status CopyLeaves(const HloInstruction* from, const ShapeIndex& from_index,
                          const HloInstruction* to, const ShapeIndex& to_index, const Shape& shape,
                          const HloInstruction& reason, ThunkSequence& out) const;

  const BufferAssignment& assignment_;
  ThunkEmitterOptions options_;
  std::vector<codegen::KernelSpec> specs_;
  std::vector<std::function<void(const codegen::CompiledKernel&)>> binders_;
  // The spec of each kernel thunk emitted (whole-loop kernels call them).
  absl::flat_hash_map<const Thunk*, int64_t> kernel_specs_;
  std::vector<ConstantSlice> constants_;
  // Temp slices to poison after the instruction at each schedule time.
  absl::flat_hash_map<int64_t, std::vector<BufferSlice>> poison_at_;
  // The last emitted start thunk of each asynchronous start instruction
  // (owned by the sequence being built), and the next free slot.
  absl::flat_hash_map<const HloInstruction*, const AsyncStartThunk*> async_starts_;
  int64_t next_async_slot_ = 0;
  // Comparator fusions (sort) and reducers (collectives) for the JIT: alive
  // until the kernels compile.
  std::unique_ptr<HloModule> scratch_;
  // Collective thunks emitted so far (each gets its own meeting ids).
  int64_t next_collective_id_ = 0;
};

ThunkInfo InfoOf(const HloInstruction& instr);

// Unimplemented: "<opcode> '<name>': <what> is not supported by the CPU backend".
absl::Status Unsupported(const HloInstruction& instr, absl::string_view what);

}  // namespace xlite::cpu

#endif  // XLITE_CPU_THUNK_EMITTER_H_
