// KernelThunk: calls one JIT-compiled kernel (codegen/kernel.h) on the
// addresses of its slices -- the instruction's operands, then its output
// leaves. Large kernels are split into partitions that run on the client's
// threads; small ones run in one call on the calling thread.
#ifndef XLITE_CPU_KERNEL_THUNK_H_
#define XLITE_CPU_KERNEL_THUNK_H_

#include <string>
#include <vector>

#include "xlite/codegen/kernel.h"
#include "xlite/cpu/thunk.h"

namespace xlite::cpu {

class KernelThunk final : public Thunk {
 public:
  // `buffers`: operands then outputs, as the kernel ABI orders them. `work`:
  // elements the kernel touches (outputs plus operands), which decides
  // whether it is worth splitting.
  KernelThunk(ThunkInfo info, std::vector<BufferSlice> buffers, int64_t num_operands, int64_t work);

  // Filled in once the JIT has compiled the executable's kernels (all in one
  // batch, after emission). Execute() before that is an Internal error.
  void SetKernel(const codegen::CompiledKernel& kernel);

  // Partitions worth running for `work` elements on `threads` threads, at
  // most `max_partitions`: one per kMinWorkPerPartition elements. Most
  // kernels stream memory at a fraction of a nanosecond per element, so a
  // part below this is done before a second thread has taken its share
  // (random_dropout at 2 threads: 0.10 ms with 64 Ki, 0.028 with 256 Ki).
  static int64_t Partitions(int64_t work, int64_t max_partitions, int threads);
  static constexpr int64_t kMinWorkPerPartition = 1 << 18;

  absl::Status Execute(const ExecuteParams& params) const override;
  std::vector<BufferUse> buffer_uses() const override;
  std::string Details() const override;

  const std::vector<BufferSlice>& buffers() const { return buffers_; }
  int64_t num_operands() const { return num_operands_; }
  const std::string& kernel_name() const { return kernel_name_; }
  // nullptr until SetKernel.
  codegen::KernelFunction function() const { return function_; }
  int64_t work() const { return work_; }
  int64_t max_partitions() const { return max_partitions_; }
  // Runs in one call on the calling thread whatever its work
  // (loop_input_placement.h). After SetKernel.
  void KeepOnOneThread() { max_partitions_ = 1; }
  // A whole-loop kernel (loop_kernels.h) runs a while or conditional: it may
  // run long however few bytes it touches.
  bool runs_control_flow() const { return runs_control_flow_; }
  void set_runs_control_flow() { runs_control_flow_ = true; }

 private:
  std::vector<BufferSlice> buffers_;
  int64_t num_operands_;
  int64_t work_;
  codegen::KernelFunction function_ = nullptr;
  std::string kernel_name_;
  int64_t max_partitions_ = 1;
  bool runs_control_flow_ = false;
};

}  // namespace xlite::cpu

#endif  // XLITE_CPU_KERNEL_THUNK_H_
