// XLA's sort: the slices of several same-shaped row-major arrays along one
// dimension are sorted together, in place, by a comparator over their
// elements. The comparator is a plain function (the CPU runtime passes its
// JIT-compiled comparator computation) called with 2·n element pointers in
// the comparator computation's parameter order -- lhs of operand 0, rhs of
// operand 0, lhs of operand 1, ... -- returning true when lhs goes first.
//
// The sort is a bottom-up merge sort making the same comparisons in the same
// order as the interpreter's (eval_util.h's StableMergeSort), so it is stable
// and gives the interpreter's result for any deterministic comparator, even
// one that is not a strict weak order; is_stable=false gets the same stable
// order (a valid one). It never reads out of bounds whatever the comparator
// answers.
#ifndef XLITE_HOSTLIB_SORT_H_
#define XLITE_HOSTLIB_SORT_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace xlite::hostlib {

using SortComparator = bool (*)(const void* const* elements, void* context);

// Each of `operands` is a row-major array of `dims` with elements of
// `element_bytes[i]` bytes; sorts along `dimension`.
absl::Status Sort(absl::Span<const int64_t> dims, int64_t dimension,
                  absl::Span<void* const> operands, absl::Span<const int> element_bytes,
                  SortComparator comparator, void* context);

}  // namespace xlite::hostlib

#endif  // XLITE_HOSTLIB_SORT_H_
