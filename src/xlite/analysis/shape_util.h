// Shape helpers the memory analyses share: shape indices, walking the
// subshapes of a (tuple) shape, and the bytes a value of a shape occupies.
#ifndef XLITE_ANALYSIS_SHAPE_UTIL_H_
#define XLITE_ANALYSIS_SHAPE_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "xlite/ir/shape.h"

namespace xlite {

// A path into a tuple shape: {} is the shape itself, {1, 0} element 0 of
// element 1 (XLA's ShapeIndex).
using ShapeIndex = std::vector<int64_t>;

// "{}", "{1,0}" as XLA prints shape indices.
std::string ShapeIndexToString(const ShapeIndex& index);

// Calls `fn` for `shape` and every nested tuple element, parents before
// children, elements in order (XLA's ForEachSubshape order).
void ForEachSubshape(const Shape& shape,
                     absl::FunctionRef<void(const Shape&, const ShapeIndex&)> fn);

// Number of subshapes ForEachSubshape visits.
int64_t SubshapeCount(const Shape& shape);

// True if some array in `shape` has an unbounded dynamic dimension ('?'),
// whose size is unknown until run time.
bool HasUnboundedDimension(const Shape& shape);

// True for arrays of one element (rank 0, or every dimension 1).
bool IsEffectiveScalar(const Shape& shape);

// Bytes the CPU backend allocates for one value of `shape` (XLA's
// CpuExecutable::ShapeSizeBytes): a tuple is its table of 8-byte element
// pointers (the elements are values of their own); a token is 0 bytes; an
// opaque is a pointer (8); an array is elements * element bytes (or
// ceil(elements * E(n) / 8) with a packed layout E(n)), dimensions at their
// bound, plus 4 bytes per dimension of size metadata when some dimension is
// dynamic; a buffer b(...) is the array it holds. An unbounded dimension
// ('?') counts as size 0: callers check HasUnboundedDimension first.
int64_t ShapeSizeBytes(const Shape& shape);

}  // namespace xlite

#endif  // XLITE_ANALYSIS_SHAPE_UTIL_H_
