#include "xlite/hostlib/top_k.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "xlite/support/status.h"

namespace xlite::hostlib {
namespace {

// A signed key whose order is the type's total order.
int64_t TotalOrderKey(ElementType type, const uint8_t* element) {
  const int bytes = ElementByteWidth(type);
  uint64_t raw = 0;
  std::memcpy(&raw, element, bytes);
  const int bits = ElementBitWidth(type);
  if (bits < 64) raw &= (uint64_t{1} << bits) - 1;
  if (IsFloatType(type)) {
    if (type == ElementType::kF8E8M0FNU) return static_cast<int64_t>(raw);  // unsigned
    // Sign-magnitude to two's complement: negatives reversed below positives.
    const uint64_t magnitude = raw & ((uint64_t{1} << (bits - 1)) - 1);
    const bool negative = (raw >> (bits - 1)) & 1;
    return negative ? ~static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
  }
  if (IsSignedIntegerType(type)) {
    if (bits < 64 && (raw >> (bits - 1)) & 1) raw |= ~uint64_t{0} << bits;
    return static_cast<int64_t>(raw);
  }
  return static_cast<int64_t>(raw ^ (uint64_t{1} << 63));  // unsigned and pred
}

}  // namespace

absl::Status TopK(ElementType type, int64_t rows, int64_t n, int64_t k, bool largest,
                  const void* input, void* values, int32_t* indices) {
  if (IsComplexType(type)) {
    return Unimplemented("topk: ", ElementTypeName(type), " has no order");
  }
  if (rows < 0 || n < 0 || k < 0 || k > n) {
    return InvalidArgument("topk: needs 0 <= k <= n and rows >= 0, got rows=", rows, " n=", n,
                           " k=", k);
  }
  if (n > std::numeric_limits<int32_t>::max()) {
    return InvalidArgument("topk: a row of ", n, " elements does not fit s32 indices");
  }
  const int bytes = ElementByteWidth(type);
  const auto* in = static_cast<const uint8_t*>(input);
  auto* out = static_cast<uint8_t*>(values);
  std::vector<int64_t> keys(n);
  std::vector<int32_t> order(n);
  for (int64_t row = 0; row < rows; ++row) {
    const uint8_t* row_in = in + row * n * bytes;
    for (int64_t j = 0; j < n; ++j) keys[j] = TotalOrderKey(type, row_in + j * bytes);
    std::iota(order.begin(), order.end(), 0);
    // (key, index) is a strict total order, so the first k of a partial sort
    // are those of a stable sort.
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
      if (keys[a] != keys[b]) return largest ? keys[a] > keys[b] : keys[a] < keys[b];
      return a < b;
    });
    for (int64_t j = 0; j < k; ++j) {
      std::memcpy(out + (row * k + j) * bytes, row_in + order[j] * bytes, bytes);
      indices[row * k + j] = order[j];
    }
  }
  return absl::OkStatus();
}

}  // namespace xlite::hostlib
