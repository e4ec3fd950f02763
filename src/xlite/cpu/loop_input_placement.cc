#include "xlite/cpu/loop_input_placement.h"

#include <vector>

#include "xlite/cpu/kernel_thunk.h"

namespace xlite::cpu {
namespace {

// Larger kernels keep their split: one thread streams this many elements in
// well under a millisecond if they are cheap, and a costly kernel on a large
// pool would lose more than the loop gains (measured only at 2 threads).
constexpr int64_t kMaxWorkKeptOnOneThread = int64_t{1} << 21;

bool IsLoopKernel(const Thunk& thunk) {
  const auto* kernel = dynamic_cast<const KernelThunk*>(&thunk);
  return kernel != nullptr && kernel->runs_control_flow();
}

// True when whole-loop kernels read the outputs of the kernel at `index`
// and nothing else touches them before each is written again (exactly, by a
// kernel that does not read it) or poisoned. `uses` holds each thunk's
// buffer uses.
bool OnlyLoopKernelsRead(const ThunkSequence& sequence,
                         const std::vector<std::vector<BufferUse>>& uses, size_t index) {
  std::vector<BufferSlice> outputs;
  for (const BufferUse& use : uses[index]) {
    if (use.access == BufferUse::Access::kWrite && use.slice.size > 0) outputs.push_back(use.slice);
  }
  bool read_by_a_loop = false;
  for (size_t i = index + 1; i < sequence.size() && !outputs.empty(); ++i) {
    const bool loop = IsLoopKernel(sequence[i]);
    const Thunk::Kind kind = sequence[i].kind();
    for (auto out = outputs.begin(); out != outputs.end();) {
      bool touches = false, reads = false, covers = false;
      for (const BufferUse& use : uses[i]) {
        if (!Overlap(use.slice, *out)) continue;
        touches = true;
        // A write may read too (in place): a thunk that also reads it lists
        // a read of it.
        reads |= use.access == BufferUse::Access::kRead;
        covers |= use.access == BufferUse::Access::kWrite && use.slice == *out;
      }
      if (!touches) {
        ++out;
      } else if (loop) {
        read_by_a_loop = true;
        ++out;
      } else if (!reads && covers &&
                 (kind == Thunk::Kind::kKernel || kind == Thunk::Kind::kPoison)) {
        out = outputs.erase(out);  // this value ends here
      } else {
        return false;
      }
    }
  }
  return read_by_a_loop;
}

}  // namespace

void KeepLoopInputsOnOneThread(ThunkSequence& sequence) {
  // Most programs have no whole-loop kernel: nothing to look at.
  bool any_loop = false;
  for (size_t i = 0; i < sequence.size(); ++i) any_loop |= IsLoopKernel(sequence[i]);
  if (!any_loop) return;
  std::vector<std::vector<BufferUse>> uses;
  uses.reserve(sequence.size());
  for (size_t i = 0; i < sequence.size(); ++i) uses.push_back(sequence[i].buffer_uses());
  for (size_t i = 0; i < sequence.size(); ++i) {
    auto* kernel = dynamic_cast<KernelThunk*>(&sequence.mutable_thunk(i));
    if (kernel == nullptr || kernel->runs_control_flow() || kernel->max_partitions() <= 1 ||
        kernel->work() > kMaxWorkKeptOnOneThread) {
      continue;
    }
    if (OnlyLoopKernelsRead(sequence, uses, i)) kernel->KeepOnOneThread();
  }
}

}  // namespace xlite::cpu
