// SortThunk: XLA's sort on hostlib::Sort, with the comparator computation
// JIT-compiled as a kernel (a kLoop fusion of the comparator over 2n scalar
// parameters: lhs of operand 0, rhs of operand 0, lhs of operand 1, ...,
// writing one pred). Operands are copied to the results (unless they share
// slices), which are then sorted in place. Row-major arrays only. A
// comparator that orders by one operand's value (cpu/sort_key.h) sorts by
// hostlib::SortByKey's radix sort instead, falling back to the comparator
// where that declines. Slices are spread over the run's threads.
#ifndef XLITE_CPU_SORT_THUNK_H_
#define XLITE_CPU_SORT_THUNK_H_

#include <optional>
#include <vector>

#include "xlite/codegen/kernel.h"
#include "xlite/cpu/thunk.h"
#include "xlite/hostlib/sort.h"

namespace xlite::cpu {

class SortThunk final : public Thunk {
 public:
  SortThunk(ThunkInfo info, std::vector<int64_t> dims, int64_t dimension,
            std::vector<int> element_bytes, std::vector<BufferSlice> operands,
            std::vector<BufferSlice> outputs, std::optional<hostlib::SortKey> key);

  // The compiled comparator (needed unless the key is one the radix sort
  // always takes); Execute() without one is then an Internal error.
  void SetComparator(codegen::KernelFunction comparator) { comparator_ = comparator; }

  absl::Status Execute(const ExecuteParams& params) const override;
  std::vector<BufferUse> buffer_uses() const override;
  std::string Details() const override;

 private:
  std::vector<int64_t> dims_;
  int64_t dimension_;
  std::vector<int> element_bytes_;
  std::vector<BufferSlice> operands_, outputs_;
  std::optional<hostlib::SortKey> key_;
  codegen::KernelFunction comparator_ = nullptr;
};

}  // namespace xlite::cpu

#endif  // XLITE_CPU_SORT_THUNK_H_
