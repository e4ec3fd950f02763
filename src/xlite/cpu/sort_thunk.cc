#include "xlite/cpu/sort_thunk.h"

#include <cstring>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "xlite/hostlib/sort.h"

namespace xlite::cpu {
namespace {

struct ComparatorCall {
  codegen::KernelFunction function;
  size_t num_elements;  // 2 * operands
};

// hostlib's comparator ABI on the kernel ABI: the 2n element pointers, then
// the pred the kernel writes.
bool CallComparator(const void* const* elements, void* context) {
  const ComparatorCall& call = *static_cast<const ComparatorCall*>(context);
  absl::InlinedVector<void*, 9> buffers(call.num_elements + 1);
  for (size_t i = 0; i < call.num_elements; ++i) buffers[i] = const_cast<void*>(elements[i]);
  uint8_t result = 0;
  buffers[call.num_elements] = &result;
  call.function(buffers.data(), 0, 1);
  return (result & 1) != 0;
}

}  // namespace

SortThunk::SortThunk(ThunkInfo info, std::vector<int64_t> dims, int64_t dimension,
                     std::vector<int> element_bytes, std::vector<BufferSlice> operands,
                     std::vector<BufferSlice> outputs, std::optional<hostlib::SortKey> key)
    : Thunk(Kind::kLibrary, std::move(info)),
      dims_(std::move(dims)),
      dimension_(dimension),
      element_bytes_(std::move(element_bytes)),
      operands_(std::move(operands)),
      outputs_(std::move(outputs)),
      key_(std::move(key)) {}

absl::Status SortThunk::Execute(const ExecuteParams& params) const {
  if (comparator_ == nullptr && !key_) {
    return absl::InternalError(
        absl::StrCat("sort thunk for '", info().instruction, "' has no compiled comparator"));
  }
  const size_t n = outputs_.size();
  absl::InlinedVector<void*, 4> outputs(n);
  absl::InlinedVector<const void*, 4> inputs(n);
  for (size_t i = 0; i < n; ++i) {
    outputs[i] = params.buffers->Get(outputs_[i]);
    inputs[i] = params.buffers->Get(operands_[i]);
  }
  // The radix sort reads the operands and writes the results; an operand
  // that partly overlaps a result (never seen from buffer assignment) is
  // copied first and sorted in place.
  bool disjoint = true;
  for (size_t i = 0; i < n; ++i) {
    const auto* in = static_cast<const uint8_t*>(inputs[i]);
    for (size_t j = 0; j < n; ++j) {
      const auto* out = static_cast<const uint8_t*>(outputs[j]);
      const bool overlap = in < out + outputs_[j].size && out < in + operands_[i].size;
      if (overlap && !(i == j && in == out)) disjoint = false;
    }
  }
  auto copy_in = [&] {
    for (size_t i = 0; i < n; ++i) {
      if (inputs[i] != outputs[i] && outputs_[i].size > 0) {
        std::memmove(outputs[i], inputs[i], static_cast<size_t>(outputs_[i].size));
      }
      inputs[i] = outputs[i];
    }
  };
  if (!disjoint) copy_in();
  const hostlib::SortParallelism parallelism = HostParallelismOf(params.runner);
  ComparatorCall call{comparator_, 2 * n};
  absl::Status s = CallCatchingOutOfMemory([&]() -> absl::Status {
    if (key_) {
      absl::StatusOr<bool> sorted = hostlib::SortByKey(dims_, dimension_, inputs, outputs,
                                                       element_bytes_, *key_, parallelism);
      if (!sorted.ok()) return sorted.status();
      if (*sorted) return absl::OkStatus();
    }
    if (comparator_ == nullptr) {
      return absl::InternalError("the radix sort declined a key it always takes");
    }
    copy_in();
    return hostlib::Sort(dims_, dimension_, outputs, element_bytes_, &CallComparator, &call,
                         parallelism);
  });
  if (!s.ok()) {
    return absl::Status(s.code(), absl::StrCat("sort '", info().instruction, "': ", s.message()));
  }
  return s;
}

std::vector<BufferUse> SortThunk::buffer_uses() const {
  std::vector<BufferUse> uses;
  for (const BufferSlice& s : operands_) uses.push_back(BufferUse::Read(s));
  for (const BufferSlice& s : outputs_) uses.push_back(BufferUse::Write(s));
  return uses;
}

std::string SortThunk::Details() const {
  return absl::StrCat(
      "sort dims=[", absl::StrJoin(dims_, ","), "] dimension=", dimension_,
      " operands=", operands_.size(),
      key_ ? absl::StrCat(" radix_key=", key_->operand, key_->descending ? " descending" : "")
           : "");
}

}  // namespace xlite::cpu
