#include "xlite/hostlib/sort.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "absl/strings/str_join.h"
#include "xlite/support/status.h"

namespace xlite::hostlib {
namespace {

// Bottom-up merge sort of `order` by less(a, b) ("a goes before b"); the
// interpreter's algorithm, comparison for comparison.
template <typename Less>
void MergeSort(std::vector<int64_t>& order, std::vector<int64_t>& buffer, Less less) {
  const size_t n = order.size();
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t begin = 0; begin < n; begin += 2 * width) {
      const size_t mid = std::min(begin + width, n), end = std::min(begin + 2 * width, n);
      size_t left = begin, right = mid, out = begin;
      while (left < mid && right < end) {
        buffer[out++] = less(order[right], order[left]) ? order[right++] : order[left++];
      }
      while (left < mid) buffer[out++] = order[left++];
      while (right < end) buffer[out++] = order[right++];
    }
    order.swap(buffer);
  }
}

}  // namespace

absl::Status Sort(absl::Span<const int64_t> dims, int64_t dimension,
                  absl::Span<void* const> operands, absl::Span<const int> element_bytes,
                  SortComparator comparator, void* context) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (dimension < 0 || dimension >= rank) {
    return InvalidArgument("sort: dimension ", dimension, " is outside [", absl::StrJoin(dims, ","),
                           "]");
  }
  if (operands.empty() || operands.size() != element_bytes.size()) {
    return InvalidArgument("sort: needs at least one operand and one element size per operand");
  }
  if (comparator == nullptr) return InvalidArgument("sort: no comparator");
  for (int64_t d : dims) {
    if (d < 0)
      return InvalidArgument("sort: negative dimension in [", absl::StrJoin(dims, ","), "]");
  }
  for (int bytes : element_bytes) {
    if (bytes <= 0) return InvalidArgument("sort: element sizes must be positive");
  }
  const int64_t length = dims[dimension];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dimension; ++d) outer *= dims[d];
  for (int64_t d = dimension + 1; d < rank; ++d) inner *= dims[d];
  if (length <= 1 || outer == 0 || inner == 0) return absl::OkStatus();

  const size_t n = operands.size();
  std::vector<const void*> elements(2 * n);
  std::vector<int64_t> order(length), buffer(length);
  std::vector<uint8_t> scratch;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * length * inner + i;  // element index of the slice's start
      auto less = [&](int64_t a, int64_t b) {
        for (size_t k = 0; k < n; ++k) {
          const auto* data = static_cast<const uint8_t*>(operands[k]);
          elements[2 * k] = data + (base + a * inner) * element_bytes[k];
          elements[2 * k + 1] = data + (base + b * inner) * element_bytes[k];
        }
        return comparator(elements.data(), context);
      };
      std::iota(order.begin(), order.end(), 0);
      MergeSort(order, buffer, less);
      for (size_t k = 0; k < n; ++k) {
        const int bytes = element_bytes[k];
        auto* data = static_cast<uint8_t*>(operands[k]);
        scratch.resize(length * bytes);
        for (int64_t p = 0; p < length; ++p) {
          std::memcpy(scratch.data() + p * bytes, data + (base + order[p] * inner) * bytes, bytes);
        }
        for (int64_t p = 0; p < length; ++p) {
          std::memcpy(data + (base + p * inner) * bytes, scratch.data() + p * bytes, bytes);
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace xlite::hostlib
