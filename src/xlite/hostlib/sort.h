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
//
// SortByKey is the fast path for the comparators that order by one operand's
// value (what JAX emits for sort and argsort; cpu/sort_key.h recognizes
// them): a stable LSD radix sort of the keys' order-preserving bits, each
// packed with its position, then every operand permuted alike. A stable sort
// by a strict weak order has one result, so it is the merge sort's.
#ifndef XLITE_HOSTLIB_SORT_H_
#define XLITE_HOSTLIB_SORT_H_

#include <cstdint>
#include <functional>
#include <optional>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "xlite/hostlib/element_type.h"
#include "xlite/hostlib/threads.h"

namespace xlite::hostlib {

using SortComparator = bool (*)(const void* const* elements, void* context);

// How a sort may spread its slices (the 1-D arrays along the sort dimension)
// over threads.
using SortParallelism = HostParallelism;

// Each of `operands` is a row-major array of `dims` with elements of
// `element_bytes[i]` bytes; sorts along `dimension`. The comparator must be
// safe to call from several threads when `parallelism` has more than one.
absl::Status Sort(absl::Span<const int64_t> dims, int64_t dimension,
                  absl::Span<void* const> operands, absl::Span<const int> element_bytes,
                  SortComparator comparator, void* context,
                  const SortParallelism& parallelism = {});

// A comparator that says "a goes first when operand `operand`'s key of a is
// smaller than b's" (larger when `descending`), keys equal otherwise. The key
// of a float is its place in the total order -NaN < -inf < ... < -0 < +0 <
// ... < inf < +NaN after every NaN becomes `nan_bits` and each zero
// `zero_bits` (where given; JAX's canonicalization); with `ieee`, IEEE `<`
// instead (-0 equals +0, and a NaN key makes the comparator no strict weak
// order). Integers and pred order by value.
struct SortKey {
  int operand = 0;
  ElementType type = ElementType::kF32;
  bool descending = false;
  bool ieee = false;
  std::optional<uint64_t> nan_bits;
  std::optional<uint64_t> zero_bits;
};

// Whether SortByKey takes keys of `type`: pred, 8- to 64-bit integers, f16,
// bf16, f32, f64.
bool SortByKeySupports(ElementType type);

// Sort() with the comparator `key` describes. Returns false, having changed
// nothing, when it cannot give that comparator's result: an `ieee` key array
// holding a NaN, or a slice of 2^32 elements or more. Sort() then gives it.
absl::StatusOr<bool> SortByKey(absl::Span<const int64_t> dims, int64_t dimension,
                               absl::Span<void* const> operands,
                               absl::Span<const int> element_bytes, const SortKey& key,
                               const SortParallelism& parallelism = {});
// The same reading `inputs` and writing `outputs`; inputs[k] is either
// outputs[k] (sorted in place) or an array that does not overlap any output.
absl::StatusOr<bool> SortByKey(absl::Span<const int64_t> dims, int64_t dimension,
                               absl::Span<const void* const> inputs,
                               absl::Span<void* const> outputs, absl::Span<const int> element_bytes,
                               const SortKey& key, const SortParallelism& parallelism = {});

}  // namespace xlite::hostlib

#endif  // XLITE_HOSTLIB_SORT_H_
