// Shape inference for data-movement opcodes: broadcast, reshape, transpose,
// slices, pad, concatenate, reverse, iota, gather, scatter, tuples, bitcast,
// dynamic-dimension ops, tokens, copies, parameters and constants. Rules follow
// XLA's shape inference and HLO verifier (operation_semantics.md) and the
// StableHLO spec. Where the result is declared rather than computed
// (broadcast, reshape, iota, bitcast, parameter, constant), the declared
// dimensions are checked against the operands and returned without layout.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "xlite/ir/computation.h"
#include "xlite/support/status.h"
#include "xlite/verify/shape_inference.h"

namespace xlite::shape_inference {
namespace {

// ------------------------------------------------------------------ helpers

std::string DimsString(const std::vector<int64_t>& dims) {
  return absl::StrCat("{", absl::StrJoin(dims, ","), "}");
}

// `type` with the dimensions and dynamic flags of `dims_from`.
Shape ArrayWithDims(PrimitiveType type, const Shape& dims_from) {
  Shape result = Shape::Array(type, dims_from.dimensions());
  for (int64_t i = 0; i < result.rank(); ++i) {
    result.set_dynamic_dimension(i, dims_from.is_dynamic_dimension(i));
  }
  return result;
}

absl::Status ExpectAtLeastOperands(const HloInstruction& instr, int64_t count) {
  if (instr.operand_count() < count) {
    return Error(instr,
                 absl::StrCat("expects at least ", count, count == 1 ? " operand" : " operands",
                              ", got ", instr.operand_count()));
  }
  return absl::OkStatus();
}

absl::Status ExpectIntegerArray(const HloInstruction& instr, const Shape& shape,
                                absl::string_view role) {
  RETURN_IF_ERROR(ExpectArray(instr, shape, role));
  if (!IsInteger(shape.element_type())) {
    return Error(instr, absl::StrCat(role, " type ", TypeName(shape.element_type()),
                                     " is not an integer type"));
  }
  return absl::OkStatus();
}

// Product of the dimension sizes (bounds for dynamic ones); nullopt when a
// dimension is unbounded or the product overflows.
std::optional<int64_t> ElementCountOf(const Shape& shape) {
  int64_t count = 1;
  for (int64_t size : shape.dimensions()) {
    if (IsUnbounded(size) || size < 0 || __builtin_mul_overflow(count, size, &count)) {
      return std::nullopt;
    }
  }
  return count;
}

enum class Order { kAny, kSorted };

// Each entry of `dims` names a distinct dimension in [0, bound); with
// kSorted, entries must also increase.
absl::Status CheckDimensionList(const HloInstruction& instr, absl::string_view field,
                                const std::vector<int64_t>& dims, int64_t bound,
                                Order order = Order::kAny) {
  absl::flat_hash_set<int64_t> seen;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= bound) {
      return Error(instr,
                   absl::StrCat(field, " entry ", dims[i], " is out of range [0, ", bound, ")"));
    }
    if (!seen.insert(dims[i]).second) {
      return Error(instr, absl::StrCat(field, " repeats dimension ", dims[i]));
    }
    if (order == Order::kSorted && i > 0 && dims[i - 1] > dims[i]) {
      return Error(instr, absl::StrCat(field, " ", DimsString(dims), " must be sorted"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckDisjoint(const HloInstruction& instr, absl::string_view a_field,
                           const std::vector<int64_t>& a, absl::string_view b_field,
                           const std::vector<int64_t>& b) {
  for (int64_t dim : a) {
    if (std::find(b.begin(), b.end(), dim) != b.end()) {
      return Error(instr, absl::StrCat(a_field, " and ", b_field, " both contain dimension ", dim));
    }
  }
  return absl::OkStatus();
}

// The single dimension named by `dimensions={d}` (concatenate,
// get-dimension-size, set-dimension-size), checked against `rank`.
absl::StatusOr<int64_t> DimensionAttribute(const HloInstruction& instr, int64_t rank) {
  const auto& dims = instr.attrs().dimensions;
  if (!dims || dims->size() != 1) {
    return Error(instr, "dimensions must name exactly one dimension");
  }
  int64_t dim = dims->front();
  if (dim < 0 || dim >= rank) {
    return Error(instr, absl::StrCat("dimension ", dim, " is out of range for rank ", rank));
  }
  return dim;
}

// Start indices of dynamic-slice/dynamic-update-slice from operand `first`
// on: one integer scalar per dimension, all of one type, or XLA's legacy
// single 1-D index vector.
absl::Status CheckStartIndices(const HloInstruction& instr, int64_t first, int64_t rank) {
  int64_t count = instr.operand_count() - first;
  if (count == 1 && instr.operand(first)->shape().IsArray() &&
      instr.operand(first)->shape().rank() == 1) {
    const Shape& vector = instr.operand(first)->shape();
    RETURN_IF_ERROR(ExpectIntegerArray(instr, vector, "start index vector"));
    if (!SizesMatch(vector.dimensions(0), rank)) {
      return Error(instr, absl::StrCat("start index vector has ", vector.dimensions(0),
                                       " entries but operand rank is ", rank));
    }
    return absl::OkStatus();
  }
  if (count != rank) {
    return Error(instr,
                 absl::StrCat("expects ", rank,
                              " scalar start indices (one per operand dimension), got ", count));
  }
  for (int64_t i = first; i < instr.operand_count(); ++i) {
    const Shape& index = instr.operand(i)->shape();
    std::string role = absl::StrCat("start index ", i - first);
    RETURN_IF_ERROR(ExpectIntegerArray(instr, index, role));
    if (index.rank() != 0) {
      return Error(instr, absl::StrCat(role, " must be a scalar, got ", index.ToString(false)));
    }
    PrimitiveType first_type = instr.operand(first)->shape().element_type();
    if (index.element_type() != first_type) {
      return Error(instr, absl::StrCat("start indices differ in type: ", TypeName(first_type),
                                       " and ", TypeName(index.element_type())));
    }
  }
  return absl::OkStatus();
}

// ------------------------------------------------ declared-result reshapes

// HLO broadcast: operand dimension i becomes result dimension dimensions[i]
// with the same size (XLA's verifier; no size-1 expansion in HLO).
absl::StatusOr<Shape> InferBroadcast(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 1));
  const Shape& operand = instr.operand(0)->shape();
  const Shape& declared = instr.shape();
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  RETURN_IF_ERROR(ExpectArray(instr, declared, "result"));
  std::vector<int64_t> dims = instr.attrs().dimensions.value_or(std::vector<int64_t>{});
  if (static_cast<int64_t>(dims.size()) != operand.rank()) {
    return Error(instr, absl::StrCat("dimensions ", DimsString(dims), " has ", dims.size(),
                                     " entries but operand rank is ", operand.rank()));
  }
  RETURN_IF_ERROR(CheckDimensionList(instr, "dimensions", dims, declared.rank()));
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (!SizesMatch(operand.dimensions(i), declared.dimensions(dims[i]))) {
      return Error(instr, absl::StrCat("operand dimension ", i, " of size ", operand.dimensions(i),
                                       " maps to result dimension ", dims[i], " of size ",
                                       declared.dimensions(dims[i])));
    }
  }
  return ArrayWithDims(operand.element_type(), declared);
}

absl::Status CheckSameElementCount(const HloInstruction& instr, const Shape& operand,
                                   const Shape& result) {
  std::optional<int64_t> from = ElementCountOf(operand), to = ElementCountOf(result);
  if (from && to && *from != *to) {
    return Error(instr,
                 absl::StrCat("element count changes from ", *from, " (", operand.ToString(false),
                              ") to ", *to, " (", result.ToString(false), ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferReshape(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 1));
  const Shape& operand = instr.operand(0)->shape();
  const Shape& declared = instr.shape();
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  RETURN_IF_ERROR(ExpectArray(instr, declared, "result"));
  RETURN_IF_ERROR(CheckSameElementCount(instr, operand, declared));
  return ArrayWithDims(operand.element_type(), declared);
}

// dynamic-reshape(operand, size_0, ..., size_{R-1}): one s32 scalar per
// result dimension; the declared shape gives the bounds.
absl::StatusOr<Shape> InferDynamicReshape(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectAtLeastOperands(instr, 1));
  const Shape& operand = instr.operand(0)->shape();
  const Shape& declared = instr.shape();
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  RETURN_IF_ERROR(ExpectArray(instr, declared, "result"));
  if (instr.operand_count() - 1 != declared.rank()) {
    return Error(instr, absl::StrCat("expects one size operand per result dimension (",
                                     declared.rank(), "), got ", instr.operand_count() - 1));
  }
  for (int64_t i = 1; i < instr.operand_count(); ++i) {
    const Shape& size = instr.operand(i)->shape();
    if (!size.IsScalar() || size.element_type() != PrimitiveType::S32) {
      return Error(instr, absl::StrCat("size operand ", i - 1, " must be s32[], got ",
                                       size.ToString(false)));
    }
  }
  RETURN_IF_ERROR(CheckSameElementCount(instr, operand, declared));
  return ArrayWithDims(operand.element_type(), declared);
}

absl::StatusOr<Shape> InferTranspose(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 1));
  const Shape& operand = instr.operand(0)->shape();
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  std::vector<int64_t> perm = instr.attrs().dimensions.value_or(std::vector<int64_t>{});
  if (static_cast<int64_t>(perm.size()) != operand.rank()) {
    return Error(instr, absl::StrCat("dimensions ", DimsString(perm),
                                     " is not a permutation of the operand's ", operand.rank(),
                                     " dimensions"));
  }
  RETURN_IF_ERROR(CheckDimensionList(instr, "dimensions", perm, operand.rank()));
  Shape result = Shape::Array(operand.element_type(), {});
  for (int64_t from : perm) {
    result.add_dimension(operand.dimensions(from), operand.is_dynamic_dimension(from));
  }
  return result;
}

absl::StatusOr<Shape> InferReverse(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 1));
  const Shape& operand = instr.operand(0)->shape();
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  RETURN_IF_ERROR(CheckDimensionList(instr, "dimensions",
                                     instr.attrs().dimensions.value_or(std::vector<int64_t>{}),
                                     operand.rank()));
  return WithoutLayout(operand);
}

absl::StatusOr<Shape> InferIota(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 0));
  const Shape& declared = instr.shape();
  RETURN_IF_ERROR(ExpectArray(instr, declared, "result"));
  if (declared.rank() == 0) return Error(instr, "result must not be a scalar");
  int64_t dim = instr.attrs().iota_dimension;
  if (dim < 0 || dim >= declared.rank()) {
    return Error(
        instr, absl::StrCat("iota_dimension ", dim, " is out of range for rank ", declared.rank()));
  }
  if (declared.element_type() == PrimitiveType::PRED) {
    return Error(instr, "result type must be an integer, floating-point or complex type, got pred");
  }
  return WithoutLayout(declared);
}

// ------------------------------------------------------------------ slices

absl::StatusOr<Shape> InferSlice(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 1));
  const Shape& operand = instr.operand(0)->shape();
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  const std::vector<SliceDimension>& slice = instr.attrs().slice;
  if (static_cast<int64_t>(slice.size()) != operand.rank()) {
    return Error(instr, absl::StrCat("slice has ", slice.size(), " dimensions but operand rank is ",
                                     operand.rank()));
  }
  Shape result = Shape::Array(operand.element_type(), {});
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const SliceDimension& s = slice[i];
    int64_t size = operand.dimensions(i);
    if (s.stride <= 0) {
      return Error(instr,
                   absl::StrCat("stride ", s.stride, " of dimension ", i, " must be positive"));
    }
    if (s.start < 0) {
      return Error(instr, absl::StrCat("start ", s.start, " of dimension ", i, " is negative"));
    }
    if (s.limit < s.start) {
      return Error(
          instr, absl::StrCat("limit ", s.limit, " of dimension ", i, " is below start ", s.start));
    }
    if (!IsUnbounded(size) && s.limit > size) {
      return Error(instr, absl::StrCat("limit ", s.limit, " of dimension ", i,
                                       " exceeds operand size ", size));
    }
    int64_t span = s.limit - s.start;
    bool whole_dimension = s.start == 0 && s.limit == size && s.stride == 1;
    result.add_dimension(span / s.stride + (span % s.stride != 0),
                         operand.is_dynamic_dimension(i) && whole_dimension);
  }
  return result;
}

absl::StatusOr<Shape> InferDynamicSlice(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectAtLeastOperands(instr, 1));
  const Shape& operand = instr.operand(0)->shape();
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  const std::vector<int64_t>& sizes = instr.attrs().dynamic_slice_sizes;
  if (static_cast<int64_t>(sizes.size()) != operand.rank()) {
    return Error(instr, absl::StrCat("dynamic_slice_sizes has ", sizes.size(),
                                     " entries but operand rank is ", operand.rank()));
  }
  RETURN_IF_ERROR(CheckStartIndices(instr, 1, operand.rank()));
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (sizes[i] < 0) {
      return Error(instr,
                   absl::StrCat("slice size ", sizes[i], " of dimension ", i, " is negative"));
    }
    if (!IsUnbounded(operand.dimensions(i)) && sizes[i] > operand.dimensions(i)) {
      return Error(instr, absl::StrCat("slice size ", sizes[i], " of dimension ", i,
                                       " exceeds operand size ", operand.dimensions(i)));
    }
  }
  return Shape::Array(operand.element_type(), sizes);
}

absl::StatusOr<Shape> InferDynamicUpdateSlice(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectAtLeastOperands(instr, 2));
  const Shape& operand = instr.operand(0)->shape();
  const Shape& update = instr.operand(1)->shape();
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  RETURN_IF_ERROR(ExpectArray(instr, update, "update"));
  if (update.rank() != operand.rank()) {
    return Error(instr, absl::StrCat("update rank ", update.rank(), " differs from operand rank ",
                                     operand.rank()));
  }
  if (!SameTypeIgnoringFpPrecision(update.element_type(), operand.element_type())) {
    return Error(instr,
                 absl::StrCat("update type ", TypeName(update.element_type()),
                              " differs from operand type ", TypeName(operand.element_type())));
  }
  RETURN_IF_ERROR(CheckStartIndices(instr, 2, operand.rank()));
  for (int64_t i = 0; i < operand.rank(); ++i) {
    int64_t u = update.dimensions(i), o = operand.dimensions(i);
    if (!IsUnbounded(u) && !IsUnbounded(o) && u > o) {
      return Error(
          instr, absl::StrCat("update dimension ", i, " of size ", u, " exceeds operand size ", o));
    }
  }
  return WithoutLayout(operand);
}

// ------------------------------------------------------- pad, concatenate

absl::StatusOr<int64_t> PaddedSize(const HloInstruction& instr, int64_t dim, int64_t size,
                                   const PaddingDimension& p) {
  int64_t result = 0;
  int64_t interior_total = 0;
  bool overflow =
      __builtin_mul_overflow(std::max<int64_t>(size - 1, 0), p.interior, &interior_total) ||
      __builtin_add_overflow(size, interior_total, &result) ||
      __builtin_add_overflow(result, p.low, &result) ||
      __builtin_add_overflow(result, p.high, &result);
  if (overflow || result < 0) {
    return Error(
        instr, absl::StrCat("padding ", p.low, "_", p.high, "_", p.interior, " of dimension ", dim,
                            " (size ", size, ") gives a negative or overflowing size"));
  }
  return result;
}

absl::StatusOr<Shape> InferPad(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 2));
  const Shape& operand = instr.operand(0)->shape();
  const Shape& value = instr.operand(1)->shape();
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  if (!value.IsScalar()) {
    return Error(instr,
                 absl::StrCat("padding value must be a scalar, got ", value.ToString(false)));
  }
  if (!SameTypeIgnoringFpPrecision(value.element_type(), operand.element_type())) {
    return Error(instr,
                 absl::StrCat("padding value type ", TypeName(value.element_type()),
                              " differs from operand type ", TypeName(operand.element_type())));
  }
  const std::vector<PaddingDimension>& padding = instr.attrs().padding;
  if (static_cast<int64_t>(padding.size()) != operand.rank()) {
    return Error(instr, absl::StrCat("padding has ", padding.size(),
                                     " dimensions but operand rank is ", operand.rank()));
  }
  Shape result = Shape::Array(HigherPrecision(operand.element_type(), value.element_type()), {});
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (padding[i].interior < 0) {
      return Error(instr, absl::StrCat("interior padding ", padding[i].interior, " of dimension ",
                                       i, " is negative"));
    }
    int64_t size = operand.dimensions(i);
    if (!IsUnbounded(size)) {
      ASSIGN_OR_RETURN(size, PaddedSize(instr, i, size, padding[i]));
    }
    result.add_dimension(size, operand.is_dynamic_dimension(i));
  }
  return result;
}

absl::StatusOr<Shape> InferConcatenate(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectAtLeastOperands(instr, 1));
  const Shape& first = instr.operand(0)->shape();
  RETURN_IF_ERROR(ExpectArray(instr, first, "operand 0"));
  ASSIGN_OR_RETURN(int64_t dim, DimensionAttribute(instr, first.rank()));
  Shape result = WithoutLayout(first);
  for (int64_t i = 1; i < instr.operand_count(); ++i) {
    const Shape& next = instr.operand(i)->shape();
    std::string role = absl::StrCat("operand ", i);
    RETURN_IF_ERROR(ExpectArray(instr, next, role));
    if (next.rank() != first.rank()) {
      return Error(instr, absl::StrCat(role, " has rank ", next.rank(), " but operand 0 has rank ",
                                       first.rank()));
    }
    if (!SameTypeIgnoringFpPrecision(next.element_type(), first.element_type())) {
      return Error(instr,
                   absl::StrCat(role, " type ", TypeName(next.element_type()),
                                " differs from operand 0 type ", TypeName(first.element_type())));
    }
    result.set_element_type(HigherPrecision(result.element_type(), next.element_type()));
    for (int64_t d = 0; d < first.rank(); ++d) {
      int64_t have = result.dimensions(d), add = next.dimensions(d);
      bool dynamic = result.is_dynamic_dimension(d) || next.is_dynamic_dimension(d);
      if (d == dim) {
        int64_t sum = Shape::kUnboundedSize;
        if (!IsUnbounded(have) && !IsUnbounded(add) && __builtin_add_overflow(have, add, &sum)) {
          return Error(instr, absl::StrCat("dimension ", d, " size overflows"));
        }
        result.set_dimensions(d, sum);
      } else if (!SizesMatch(have, add)) {
        return Error(instr, absl::StrCat(role, " ", next.ToString(false),
                                         " differs from operand 0 ", first.ToString(false),
                                         " in dimension ", d, ", which is not concatenated"));
      } else if (IsUnbounded(have) != IsUnbounded(add)) {
        // The bounded side is the more specific one, dynamism included.
        bool take_next = IsUnbounded(have);
        result.set_dimensions(d, take_next ? add : have);
        dynamic = take_next ? next.is_dynamic_dimension(d) : result.is_dynamic_dimension(d);
      }
      result.set_dynamic_dimension(d, dynamic);
    }
  }
  return result;
}

// ---------------------------------------------------------- gather/scatter

// The index space of gather/scatter indices: every dimension but
// index_vector_dim is a batch dimension; index_vector_dim == rank means an
// implicit trailing dimension of size 1.
struct IndexSpace {
  int64_t vector_size = 1;
  std::vector<int64_t> batch_sizes;
  std::vector<bool> batch_dynamic;
};

absl::StatusOr<IndexSpace> ExpandIndices(const HloInstruction& instr, const Shape& indices,
                                         int64_t index_vector_dim) {
  if (index_vector_dim < 0 || index_vector_dim > indices.rank()) {
    return Error(instr, absl::StrCat("index_vector_dim ", index_vector_dim, " is out of range [0, ",
                                     indices.rank(), "]"));
  }
  IndexSpace space;
  for (int64_t i = 0; i < indices.rank(); ++i) {
    if (i == index_vector_dim) {
      space.vector_size = indices.dimensions(i);
      continue;
    }
    space.batch_sizes.push_back(indices.dimensions(i));
    space.batch_dynamic.push_back(indices.is_dynamic_dimension(i));
  }
  return space;
}

// Batching dimensions pair operand (or input) dims with index dims of equal size.
absl::Status CheckBatchingDims(const HloInstruction& instr, const Shape& operand,
                               absl::string_view operand_field,
                               const std::vector<int64_t>& operand_dims, const Shape& indices,
                               absl::string_view indices_field,
                               const std::vector<int64_t>& indices_dims, int64_t index_vector_dim) {
  RETURN_IF_ERROR(CheckDimensionList(instr, indices_field, indices_dims, indices.rank()));
  if (Contains(indices_dims, index_vector_dim)) {
    return Error(instr,
                 absl::StrCat(indices_field, " contains index_vector_dim ", index_vector_dim));
  }
  if (operand_dims.size() != indices_dims.size()) {
    return Error(instr, absl::StrCat(operand_field, " has ", operand_dims.size(), " entries but ",
                                     indices_field, " has ", indices_dims.size()));
  }
  for (size_t i = 0; i < operand_dims.size(); ++i) {
    int64_t a = operand.dimensions(operand_dims[i]), b = indices.dimensions(indices_dims[i]);
    if (!SizesMatch(a, b)) {
      return Error(instr, absl::StrCat(operand_field, " dimension ", operand_dims[i], " (size ", a,
                                       ") and ", indices_field, " dimension ", indices_dims[i],
                                       " (size ", b, ") differ in size"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckIndexMap(const HloInstruction& instr, absl::string_view field,
                           const std::vector<int64_t>& map, const IndexSpace& space,
                           int64_t operand_rank, absl::string_view batching_field,
                           const std::vector<int64_t>& batching) {
  if (!SizesMatch(static_cast<int64_t>(map.size()), space.vector_size)) {
    return Error(instr, absl::StrCat(field, " has ", map.size(),
                                     " entries but the index vector has ", space.vector_size));
  }
  RETURN_IF_ERROR(CheckDimensionList(instr, field, map, operand_rank));
  return CheckDisjoint(instr, field, map, batching_field, batching);
}

absl::Status CheckGatherSliceSizes(const HloInstruction& instr, const Shape& operand,
                                   const GatherDimensionNumbers& dnums,
                                   const std::vector<int64_t>& slice_sizes) {
  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank()) {
    return Error(instr, absl::StrCat("slice_sizes has ", slice_sizes.size(),
                                     " entries but operand rank is ", operand.rank()));
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    int64_t size = slice_sizes[i], bound = operand.dimensions(i);
    if (size < 0 || (!IsUnbounded(bound) && size > bound)) {
      return Error(instr, absl::StrCat("slice size ", size, " of dimension ", i, " is outside [0, ",
                                       bound, "]"));
    }
    bool collapsed = Contains(dnums.collapsed_slice_dims, i);
    if ((collapsed || Contains(dnums.operand_batching_dims, i)) && size > 1) {
      return Error(instr, absl::StrCat(collapsed ? "collapsed" : "batching", " dimension ", i,
                                       " has slice size ", size, ", must be 0 or 1"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferGather(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 2));
  const Shape& operand = instr.operand(0)->shape();
  const Shape& indices = instr.operand(1)->shape();
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  RETURN_IF_ERROR(ExpectIntegerArray(instr, indices, "start_indices"));
  if (!instr.attrs().gather_dimension_numbers) return Error(instr, "missing dimension numbers");
  const GatherDimensionNumbers& dnums = *instr.attrs().gather_dimension_numbers;
  const std::vector<int64_t>& slice_sizes = instr.attrs().gather_slice_sizes;
  ASSIGN_OR_RETURN(IndexSpace space, ExpandIndices(instr, indices, dnums.index_vector_dim));

  int64_t result_rank = dnums.offset_dims.size() + space.batch_sizes.size();
  RETURN_IF_ERROR(
      CheckDimensionList(instr, "offset_dims", dnums.offset_dims, result_rank, Order::kSorted));
  RETURN_IF_ERROR(CheckDimensionList(instr, "collapsed_slice_dims", dnums.collapsed_slice_dims,
                                     operand.rank(), Order::kSorted));
  RETURN_IF_ERROR(CheckDimensionList(instr, "operand_batching_dims", dnums.operand_batching_dims,
                                     operand.rank(), Order::kSorted));
  RETURN_IF_ERROR(CheckDisjoint(instr, "collapsed_slice_dims", dnums.collapsed_slice_dims,
                                "operand_batching_dims", dnums.operand_batching_dims));
  RETURN_IF_ERROR(CheckIndexMap(instr, "start_index_map", dnums.start_index_map, space,
                                operand.rank(), "operand_batching_dims",
                                dnums.operand_batching_dims));
  RETURN_IF_ERROR(CheckBatchingDims(
      instr, operand, "operand_batching_dims", dnums.operand_batching_dims, indices,
      "start_indices_batching_dims", dnums.start_indices_batching_dims, dnums.index_vector_dim));
  int64_t accounted = dnums.offset_dims.size() + dnums.collapsed_slice_dims.size() +
                      dnums.operand_batching_dims.size();
  if (accounted != operand.rank()) {
    return Error(instr,
                 absl::StrCat("operand rank ", operand.rank(), " must equal offset_dims (",
                              dnums.offset_dims.size(), ") + collapsed_slice_dims (",
                              dnums.collapsed_slice_dims.size(), ") + operand_batching_dims (",
                              dnums.operand_batching_dims.size(), ")"));
  }
  RETURN_IF_ERROR(CheckGatherSliceSizes(instr, operand, dnums, slice_sizes));

  // Result: offset dims take the kept slice sizes in order, the rest take
  // the batch dimensions of the indices in order.
  Shape result = Shape::Array(operand.element_type(), {});
  int64_t next_operand_dim = 0, next_batch = 0;
  for (int64_t i = 0; i < result_rank; ++i) {
    if (!Contains(dnums.offset_dims, i)) {
      result.add_dimension(space.batch_sizes[next_batch], space.batch_dynamic[next_batch]);
      ++next_batch;
      continue;
    }
    while (Contains(dnums.collapsed_slice_dims, next_operand_dim) ||
           Contains(dnums.operand_batching_dims, next_operand_dim)) {
      ++next_operand_dim;
    }
    int64_t size = slice_sizes[next_operand_dim];
    bool dynamic = operand.is_dynamic_dimension(next_operand_dim) &&
                   size == operand.dimensions(next_operand_dim);
    result.add_dimension(size, dynamic);
    ++next_operand_dim;
  }
  return result;
}

// Scatter operands: N inputs, the indices, N updates.
struct ScatterOperands {
  std::vector<const Shape*> inputs;
  const Shape* indices = nullptr;
  std::vector<const Shape*> updates;
};

absl::StatusOr<ScatterOperands> SplitScatterOperands(const HloInstruction& instr) {
  int64_t count = instr.operand_count();
  if (count < 3 || count % 2 == 0) {
    return Error(instr, absl::StrCat("expects N inputs, 1 indices and N updates (an odd count "
                                     ">= 3), got ",
                                     count, " operands"));
  }
  int64_t n = (count - 1) / 2;
  ScatterOperands ops;
  for (int64_t i = 0; i < n; ++i) ops.inputs.push_back(&instr.operand(i)->shape());
  ops.indices = &instr.operand(n)->shape();
  for (int64_t i = 0; i < n; ++i) ops.updates.push_back(&instr.operand(n + 1 + i)->shape());
  for (int64_t i = 0; i < n; ++i) {
    const Shape& input = *ops.inputs[i];
    const Shape& update = *ops.updates[i];
    RETURN_IF_ERROR(ExpectArray(instr, input, absl::StrCat("input ", i)));
    RETURN_IF_ERROR(ExpectArray(instr, update, absl::StrCat("update ", i)));
    if (!SameDimensions(*ops.inputs[0], input)) {
      return Error(instr, absl::StrCat("input ", i, " ", input.ToString(false),
                                       " differs in dimensions from input 0 ",
                                       ops.inputs[0]->ToString(false)));
    }
    if (!SameDimensions(*ops.updates[0], update)) {
      return Error(instr, absl::StrCat("update ", i, " ", update.ToString(false),
                                       " differs in dimensions from update 0 ",
                                       ops.updates[0]->ToString(false)));
    }
    if (!SameTypeIgnoringFpPrecision(update.element_type(), input.element_type())) {
      return Error(instr,
                   absl::StrCat("update ", i, " type ", TypeName(update.element_type()),
                                " differs from input type ", TypeName(input.element_type())));
    }
  }
  RETURN_IF_ERROR(ExpectIntegerArray(instr, *ops.indices, "scatter_indices"));
  return ops;
}

// Updates dims: update_window_dims are slices of the operand's kept dims (no
// larger than them); the others are the indices' batch dims, in order.
absl::Status CheckScatterUpdates(const HloInstruction& instr, const Shape& input,
                                 const Shape& update, const ScatterDimensionNumbers& dnums,
                                 const IndexSpace& space) {
  int64_t expected_rank = dnums.update_window_dims.size() + space.batch_sizes.size();
  if (update.rank() != expected_rank) {
    return Error(instr,
                 absl::StrCat("updates rank ", update.rank(), " must equal update_window_dims (",
                              dnums.update_window_dims.size(), ") + scatter dimensions (",
                              space.batch_sizes.size(), ")"));
  }
  int64_t next_input_dim = 0, next_batch = 0;
  for (int64_t d = 0; d < update.rank(); ++d) {
    int64_t size = update.dimensions(d);
    if (!Contains(dnums.update_window_dims, d)) {
      int64_t expected = space.batch_sizes[next_batch++];
      if (!SizesMatch(size, expected)) {
        return Error(
            instr, absl::StrCat("update scatter dimension ", d, " has size ", size,
                                " but the matching scatter_indices dimension has size ", expected));
      }
      continue;
    }
    while (Contains(dnums.inserted_window_dims, next_input_dim) ||
           Contains(dnums.input_batching_dims, next_input_dim)) {
      ++next_input_dim;
    }
    int64_t bound = input.dimensions(next_input_dim);
    if (!IsUnbounded(size) && !IsUnbounded(bound) && size > bound) {
      return Error(instr,
                   absl::StrCat("update window dimension ", d, " of size ", size,
                                " exceeds input dimension ", next_input_dim, " of size ", bound));
    }
    ++next_input_dim;
  }
  return absl::OkStatus();
}

// to_apply combines N current values with N updates into N new values: a
// scalar (N == 1) or a tuple of N scalars (any N, as XLA's reducer check).
absl::Status CheckScatterComputation(const HloInstruction& instr, int64_t n) {
  if (instr.called_computations().empty()) return Error(instr, "missing to_apply computation");
  const HloComputation& comp = *instr.called_computations().front();
  if (comp.num_parameters() != 2 * n) {
    return Error(instr, absl::StrCat("to_apply takes ", comp.num_parameters(),
                                     " parameters, expected ", 2 * n));
  }
  if (comp.root_instruction() == nullptr) return Error(instr, "to_apply has no root");
  const Shape& root = comp.root_instruction()->shape();
  bool scalars = root.IsTuple() && root.tuple_shapes_size() == n &&
                 std::all_of(root.tuple_shapes().begin(), root.tuple_shapes().end(),
                             [](const Shape& s) { return s.IsScalar(); });
  if (!scalars && !(n == 1 && root.IsScalar())) {
    return Error(instr, absl::StrCat("to_apply must return ", n, " scalar(s), returns ",
                                     root.ToString(false)));
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferScatter(const HloInstruction& instr) {
  ASSIGN_OR_RETURN(ScatterOperands ops, SplitScatterOperands(instr));
  if (!instr.attrs().scatter_dimension_numbers) return Error(instr, "missing dimension numbers");
  const ScatterDimensionNumbers& dnums = *instr.attrs().scatter_dimension_numbers;
  const Shape& input = *ops.inputs[0];
  const Shape& indices = *ops.indices;
  const Shape& update = *ops.updates[0];
  ASSIGN_OR_RETURN(IndexSpace space, ExpandIndices(instr, indices, dnums.index_vector_dim));

  RETURN_IF_ERROR(CheckDimensionList(instr, "update_window_dims", dnums.update_window_dims,
                                     update.rank(), Order::kSorted));
  RETURN_IF_ERROR(CheckDimensionList(instr, "inserted_window_dims", dnums.inserted_window_dims,
                                     input.rank(), Order::kSorted));
  RETURN_IF_ERROR(CheckDimensionList(instr, "input_batching_dims", dnums.input_batching_dims,
                                     input.rank(), Order::kSorted));
  RETURN_IF_ERROR(CheckDisjoint(instr, "inserted_window_dims", dnums.inserted_window_dims,
                                "input_batching_dims", dnums.input_batching_dims));
  RETURN_IF_ERROR(CheckIndexMap(instr, "scatter_dims_to_operand_dims",
                                dnums.scatter_dims_to_operand_dims, space, input.rank(),
                                "input_batching_dims", dnums.input_batching_dims));
  RETURN_IF_ERROR(CheckBatchingDims(instr, input, "input_batching_dims", dnums.input_batching_dims,
                                    indices, "scatter_indices_batching_dims",
                                    dnums.scatter_indices_batching_dims, dnums.index_vector_dim));
  int64_t accounted = dnums.update_window_dims.size() + dnums.inserted_window_dims.size() +
                      dnums.input_batching_dims.size();
  if (accounted != input.rank()) {
    return Error(instr,
                 absl::StrCat("input rank ", input.rank(), " must equal update_window_dims (",
                              dnums.update_window_dims.size(), ") + inserted_window_dims (",
                              dnums.inserted_window_dims.size(), ") + input_batching_dims (",
                              dnums.input_batching_dims.size(), ")"));
  }
  RETURN_IF_ERROR(CheckScatterUpdates(instr, input, update, dnums, space));
  int64_t n = ops.inputs.size();
  RETURN_IF_ERROR(CheckScatterComputation(instr, n));
  if (n == 1) return WithoutLayout(input);
  std::vector<Shape> results;
  for (const Shape* s : ops.inputs) results.push_back(WithoutLayout(*s));
  return Shape::Tuple(std::move(results));
}

// ----------------------------------------------------- tuples and tokens

absl::StatusOr<Shape> InferGetTupleElement(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 1));
  const Shape& operand = instr.operand(0)->shape();
  if (!operand.IsTuple()) {
    return Error(instr, absl::StrCat("operand must be a tuple, got ", operand.ToString(false)));
  }
  int64_t index = instr.attrs().tuple_index;
  if (index < 0 || index >= operand.tuple_shapes_size()) {
    return Error(instr, absl::StrCat("index ", index, " is out of range for a tuple of ",
                                     operand.tuple_shapes_size(), " elements"));
  }
  return WithoutLayout(operand.tuple_shapes(index));
}

absl::StatusOr<Shape> InferTuple(const HloInstruction& instr) {
  std::vector<Shape> elements;
  for (const HloInstruction* operand : instr.operands()) {
    elements.push_back(WithoutLayout(operand->shape()));
  }
  return Shape::Tuple(std::move(elements));
}

// XLA's verifier accepts any operands here (after-all orders, e.g. after-all(x)).
absl::StatusOr<Shape> InferAfterAll(const HloInstruction& instr) { return Shape::Token(); }

absl::StatusOr<Shape> InferAddDependency(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 2));
  if (!instr.operand(1)->shape().IsToken()) {
    return Error(instr, absl::StrCat("operand 1 must be a token, got ",
                                     instr.operand(1)->shape().ToString(false)));
  }
  return WithoutLayout(instr.operand(0)->shape());
}

// opt-barrier, domain: the operand passes through unchanged.
absl::StatusOr<Shape> InferPassThrough(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 1));
  return WithoutLayout(instr.operand(0)->shape());
}

// copy-start returns (destination, source, u32[] context); copy-done the
// destination.
absl::StatusOr<Shape> InferCopyStart(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 1));
  Shape operand = WithoutLayout(instr.operand(0)->shape());
  return Shape::Tuple({operand, operand, Shape::Scalar(PrimitiveType::U32)});
}

absl::StatusOr<Shape> InferCopyDone(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 1));
  const Shape& operand = instr.operand(0)->shape();
  if (!operand.IsTuple() || operand.tuple_shapes_size() < 2) {
    return Error(instr,
                 absl::StrCat("operand must be a copy-start tuple, got ", operand.ToString(false)));
  }
  return WithoutLayout(operand.tuple_shapes(0));
}

// ------------------------------------------------------- dynamic dimensions

absl::StatusOr<Shape> InferGetDimensionSize(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 1));
  const Shape& operand = instr.operand(0)->shape();
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  RETURN_IF_ERROR(DimensionAttribute(instr, operand.rank()).status());
  return Shape::Scalar(PrimitiveType::S32);
}

absl::StatusOr<Shape> InferSetDimensionSize(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 2));
  const Shape& operand = instr.operand(0)->shape();
  const Shape& size = instr.operand(1)->shape();
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  if (!size.IsScalar() || size.element_type() != PrimitiveType::S32) {
    return Error(instr, absl::StrCat("size operand must be s32[], got ", size.ToString(false)));
  }
  ASSIGN_OR_RETURN(int64_t dim, DimensionAttribute(instr, operand.rank()));
  Shape result = WithoutLayout(operand);
  result.set_dynamic_dimension(dim, true);
  return result;
}

// ---------------------------------------------------- leaves and bitcast

absl::StatusOr<Shape> InferConstant(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 0));
  const auto& literal = instr.attrs().literal;
  if (literal && !Compatible(literal->shape(), instr.shape())) {
    return Error(instr,
                 absl::StrCat("literal shape ", literal->shape().ToString(false),
                              " differs from declared shape ", instr.shape().ToString(false)));
  }
  return WithoutLayout(instr.shape());
}

// parameter's shape is declared; bitcast's is too (XLA checks only that
// byte sizes agree once layouts are assigned).
absl::StatusOr<Shape> InferDeclared(const HloInstruction& instr, int64_t operand_count) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, operand_count));
  return WithoutLayout(instr.shape());
}

}  // namespace

absl::StatusOr<Shape> InferDataMovementShape(const HloInstruction& instr) {
  switch (instr.opcode()) {
    case HloOpcode::kBroadcast:
      return InferBroadcast(instr);
    case HloOpcode::kReshape:
      return InferReshape(instr);
    case HloOpcode::kDynamicReshape:
      return InferDynamicReshape(instr);
    case HloOpcode::kTranspose:
      return InferTranspose(instr);
    case HloOpcode::kReverse:
      return InferReverse(instr);
    case HloOpcode::kIota:
      return InferIota(instr);
    case HloOpcode::kSlice:
      return InferSlice(instr);
    case HloOpcode::kDynamicSlice:
      return InferDynamicSlice(instr);
    case HloOpcode::kDynamicUpdateSlice:
      return InferDynamicUpdateSlice(instr);
    case HloOpcode::kPad:
      return InferPad(instr);
    case HloOpcode::kConcatenate:
      return InferConcatenate(instr);
    case HloOpcode::kGather:
      return InferGather(instr);
    case HloOpcode::kScatter:
      return InferScatter(instr);
    case HloOpcode::kGetTupleElement:
      return InferGetTupleElement(instr);
    case HloOpcode::kTuple:
      return InferTuple(instr);
    case HloOpcode::kAfterAll:
      return InferAfterAll(instr);
    case HloOpcode::kAddDependency:
      return InferAddDependency(instr);
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kDomain:
      return InferPassThrough(instr);
    case HloOpcode::kCopyStart:
      return InferCopyStart(instr);
    case HloOpcode::kCopyDone:
      return InferCopyDone(instr);
    case HloOpcode::kGetDimensionSize:
      return InferGetDimensionSize(instr);
    case HloOpcode::kSetDimensionSize:
      return InferSetDimensionSize(instr);
    case HloOpcode::kConstant:
      return InferConstant(instr);
    case HloOpcode::kParameter:
      return InferDeclared(instr, 0);
    case HloOpcode::kBitcast:
      return InferDeclared(instr, 1);
    default:
      return absl::NotFoundError("not handled");
  }
}

}  // namespace xlite::shape_inference
