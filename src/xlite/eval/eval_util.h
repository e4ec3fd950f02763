// Helpers shared by the evaluator's op families: index walking, element
// copies and conversion, the stable sort user comparators drive, and lifting
// scalar computations to whole arrays.
#ifndef XLITE_EVAL_EVAL_UTIL_H_
#define XLITE_EVAL_EVAL_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "xlite/ir/computation.h"
#include "xlite/ir/literal.h"
#include "xlite/support/status.h"

namespace xlite::eval {

// "opcode 'name': ", the start of an error about `instr`.
std::string Where(const HloInstruction& instr);

// Same element types and dimensions (recursively for tuples); layouts ignored.
bool SameDimensionsAndType(const Shape& a, const Shape& b);

inline PrimitiveType TypeOf(const Literal& lit) { return lit.shape().element_type(); }

// A zero-filled literal of `instr`'s array shape, bounded dynamic dimensions
// at their bound; an error for a tuple result or an unbounded dimension.
absl::StatusOr<Literal> ArrayResult(const HloInstruction& instr);

// Shape checks for the families whose index arithmetic relies on them
// (after these, every index computed from the shapes is in bounds):
// the operand values have their instructions' shapes;
absl::Status CheckOperandValues(const HloInstruction& instr,
                                absl::Span<const Literal* const> operands);
// the declared result shape is `expected` (XLA's inference), with no
// unbounded dimension and not too large to allocate;
absl::Status CheckDeclaredShape(const HloInstruction& instr, const Shape& expected);
// both, with `expected` inferred from the instruction.
absl::Status CheckShapes(const HloInstruction& instr, absl::Span<const Literal* const> operands);

// Steps through the multi-indices of `sizes` in row-major order.
class MultiIndex {
 public:
  explicit MultiIndex(std::vector<int64_t> sizes)
      : sizes_(std::move(sizes)), index_(sizes_.size(), 0) {}
  int64_t operator[](size_t d) const { return index_[d]; }
  void Next() {
    for (int64_t d = static_cast<int64_t>(sizes_.size()) - 1; d >= 0; --d) {
      if (++index_[d] < sizes_[d]) return;
      index_[d] = 0;
    }
  }

 private:
  std::vector<int64_t> sizes_;
  std::vector<int64_t> index_;
};

inline int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// Linear offsets, with `strides`, of every multi-index of `sizes` in row-major order.
std::vector<int64_t> OffsetTable(const std::vector<int64_t>& sizes,
                                 const std::vector<int64_t>& strides);

// to[j] = from[i], same element type, bits exact (NaN payloads included).
inline void CopyElement(const Literal& from, int64_t i, Literal& to, int64_t j) {
  const int stride = from.element_stride();
  std::memcpy(to.mutable_raw_data() + j * stride, from.raw_data().data() + i * stride, stride);
}
// Element `i` of `array` as a scalar literal.
Literal ScalarAt(const Literal& array, int64_t i);
// out[j] = in[i] converted to out's element type with XLA's convert semantics.
void ConvertElement(const Literal& in, int64_t i, Literal& out, int64_t j);

// Sorts `order` stably by `less`, a user comparator that may fail or be
// inconsistent: a bottom-up merge sort that stays in bounds whatever it says.
// An element of the right run goes first only if it is strictly less.
template <typename Less>
absl::Status StableMergeSort(std::vector<int64_t>& order, Less less) {
  std::vector<int64_t> buffer(order.size());
  const size_t n = order.size();
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t begin = 0; begin < n; begin += 2 * width) {
      const size_t mid = std::min(begin + width, n), end = std::min(begin + 2 * width, n);
      size_t left = begin, right = mid, out = begin;
      while (left < mid && right < end) {
        ASSIGN_OR_RETURN(bool right_first, less(order[right], order[left]));
        buffer[out++] = right_first ? order[right++] : order[left++];
      }
      while (left < mid) buffer[out++] = order[left++];
      while (right < end) buffer[out++] = order[right++];
    }
    order.swap(buffer);
  }
  return absl::OkStatus();
}

// The computation's instructions, each after its operands and control
// predecessors (unreachable ones included).
std::vector<const HloInstruction*> PostOrder(const HloComputation& computation);

// `scalar_computation` rebuilt to act on arrays of `dimensions`: parameters
// become arrays of their element type, constants are broadcast, and every
// other instruction, which must be elementwise, applies per element. Calling
// it once on whole arrays gives what calling the original on every element
// would. Null when the computation has any other form (non-scalar values,
// called computations, non-elementwise or side-effecting ops).
std::unique_ptr<HloComputation> LiftToArrays(const HloComputation& scalar_computation,
                                             const std::vector<int64_t>& dimensions);

}  // namespace xlite::eval

#endif  // XLITE_EVAL_EVAL_UTIL_H_
