#include "xlite/cpu/kernel_thunk.h"

#include <algorithm>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "xlite/codegen/denormals.h"

namespace xlite::cpu {

KernelThunk::KernelThunk(ThunkInfo info, std::vector<BufferSlice> buffers, int64_t num_operands,
                         int64_t work)
    : Thunk(Kind::kKernel, std::move(info)),
      buffers_(std::move(buffers)),
      num_operands_(num_operands),
      work_(work) {}

void KernelThunk::SetKernel(const codegen::CompiledKernel& kernel) {
  function_ = kernel.function;
  kernel_name_ = kernel.name;
  max_partitions_ = std::max<int64_t>(1, kernel.max_partitions);
}

int64_t KernelThunk::Partitions(int64_t work, int64_t max_partitions, int threads) {
  const int64_t by_work = std::max<int64_t>(1, work / kMinWorkPerPartition);
  return std::max<int64_t>(1, std::min({by_work, max_partitions, static_cast<int64_t>(threads)}));
}

absl::Status KernelThunk::Execute(const ExecuteParams& params) const {
  if (function_ == nullptr) {
    return absl::InternalError(
        absl::StrCat("kernel thunk for '", info().instruction, "' has no compiled kernel"));
  }
  absl::InlinedVector<void*, 16> pointers(buffers_.size());
  for (size_t i = 0; i < buffers_.size(); ++i) pointers[i] = params.buffers->Get(buffers_[i]);
  const int threads = params.runner == nullptr ? 1 : params.runner->num_threads();
  const int64_t parts = Partitions(work_, max_partitions_, threads);
  if (parts <= 1) {
    function_(pointers.data(), 0, 1);
    return absl::OkStatus();
  }
  void** data = pointers.data();
  const codegen::KernelFunction fn = function_;
  const bool flush = params.flush_denormals;
  params.runner->ParallelFor(parts, [&](int64_t p) {
    // Parts may run on pool threads, whose MXCSR the caller's setting does
    // not reach.
    codegen::ScopedFlushDenormals denormals(flush);
    fn(data, p, parts);
  });
  return absl::OkStatus();
}

std::vector<BufferUse> KernelThunk::buffer_uses() const {
  std::vector<BufferUse> uses;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    uses.push_back(static_cast<int64_t>(i) < num_operands_ ? BufferUse::Read(buffers_[i])
                                                           : BufferUse::Write(buffers_[i]));
  }
  return uses;
}

std::string KernelThunk::Details() const {
  return absl::StrCat("kernel=", kernel_name_, " partitions<=", max_partitions_, " work=", work_,
                      runs_control_flow_ ? " (whole loop)" : "");
}

}  // namespace xlite::cpu
