// XLA's topk instruction: the k largest (or smallest) elements of each row
// (the last dimension) of a row-major array, with their s32 indices, in
// order. Elements compare by their type's total order -- for floats IEEE's
// totalOrder (-NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN), integers by
// value -- and ties keep the lower index first, as the interpreter orders
// them. Complex types have no order.
#ifndef XLITE_HOSTLIB_TOP_K_H_
#define XLITE_HOSTLIB_TOP_K_H_

#include <cstdint>

#include "absl/status/status.h"
#include "xlite/hostlib/element_type.h"

namespace xlite::hostlib {

// input [rows, n]; values [rows, k] of the same type; indices [rows, k].
absl::Status TopK(ElementType type, int64_t rows, int64_t n, int64_t k, bool largest,
                  const void* input, void* values, int32_t* indices);

}  // namespace xlite::hostlib

#endif  // XLITE_HOSTLIB_TOP_K_H_
