// Data movement opcodes: constants, shape changes (broadcast, reshape,
// transpose, slice, pad, concatenate, reverse, bitcast), indexing (dynamic
// slices, gather, scatter), tuples and the pass-through ops.
//
// Literals hold arrays row-major in logical order, so most ops map each
// result index to an operand index and copy one element.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "xlite/eval/eval_util.h"
#include "xlite/eval/evaluator.h"
#include "xlite/ir/computation.h"
#include "xlite/ir/instruction.h"
#include "xlite/support/status.h"

namespace xlite::eval {
namespace {

using Operands = absl::Span<const Literal* const>;
using Index = std::vector<int64_t>;

// ----------------------------------------------------------------- helpers

template <typename... Args>
absl::Status Invalid(const HloInstruction& instr, const Args&... args) {
  return InvalidArgument(HloOpcodeString(instr.opcode()), " '", instr.name(), "': ", args...);
}

const std::vector<int64_t>& DimsOf(const Literal& lit) { return lit.shape().dimensions(); }
int64_t RankOf(const Literal& lit) { return lit.shape().rank(); }

absl::Status ExpectOperandCount(const HloInstruction& instr, Operands operands, size_t count) {
  if (operands.size() == count) return absl::OkStatus();
  return Invalid(instr, "takes ", count, " operands, got ", operands.size());
}

absl::Status ExpectArray(const HloInstruction& instr, const Literal& lit, absl::string_view what) {
  if (lit.shape().IsArray()) return absl::OkStatus();
  return Invalid(instr, what, " must be an array, got ", lit.shape().ToString(false));
}

absl::Status ExpectSameType(const HloInstruction& instr, const Literal& lit, PrimitiveType type,
                            absl::string_view what) {
  if (TypeOf(lit) == type) return absl::OkStatus();
  return Invalid(instr, what, " has element type ", PrimitiveTypeName(TypeOf(lit)), ", expected ",
                 PrimitiveTypeName(type));
}

// Every entry of `dims` names a dimension of a rank-`rank` array.
absl::Status ExpectDimensions(const HloInstruction& instr, const std::vector<int64_t>& dims,
                              int64_t rank, absl::string_view what) {
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) return Invalid(instr, what, " names dimension ", d, " of rank ", rank);
  }
  return absl::OkStatus();
}

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// True if `v` holds each of 0..size-1 exactly once.
bool IsPermutation(const std::vector<int64_t>& v, int64_t size) {
  if (static_cast<int64_t>(v.size()) != size) return false;
  std::vector<bool> seen(size, false);
  for (int64_t d : v) {
    if (d < 0 || d >= size || seen[d]) return false;
    seen[d] = true;
  }
  return true;
}

int64_t Linearize(const Index& index, const std::vector<int64_t>& strides) {
  int64_t linear = 0;
  for (size_t i = 0; i < index.size(); ++i) linear += index[i] * strides[i];
  return linear;
}

int64_t ElementCount(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Calls fn(index, linear) for every index of `dims` in row-major order.
template <typename Fn>
void ForEachIndex(const std::vector<int64_t>& dims, Fn fn) {
  const int64_t count = ElementCount(dims);
  Index index(dims.size(), 0);
  for (int64_t linear = 0; linear < count; ++linear) {
    fn(index, linear);
    for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
}

// Like ForEachIndex, stopping at (and returning) the first error.
template <typename Fn>
absl::Status ForEachIndexWithStatus(const std::vector<int64_t>& dims, Fn fn) {
  absl::Status status;
  const int64_t count = ElementCount(dims);
  Index index(dims.size(), 0);
  for (int64_t linear = 0; linear < count && status.ok(); ++linear) {
    status = fn(index, linear);
    for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  return status;
}

bool InBounds(const Index& index, const std::vector<int64_t>& dims) {
  for (size_t d = 0; d < index.size(); ++d) {
    if (index[d] < 0 || index[d] >= dims[d]) return false;
  }
  return true;
}

// An integer element used as an index; unsigned values beyond int64 saturate.
int64_t ReadIndexValue(const Literal& lit, int64_t i) {
  const int64_t v = lit.GetInt(i);
  if (IsUnsignedInt(TypeOf(lit)) && v < 0) return std::numeric_limits<int64_t>::max();
  return v;
}

int64_t ClampStart(int64_t start, int64_t dim, int64_t size) {
  return std::clamp<int64_t>(start, 0, std::max<int64_t>(0, dim - size));
}

// ------------------------------------------------------------ simple ops

absl::StatusOr<Literal> EvalConstant(const HloInstruction& instr) {
  const auto& literal = instr.attrs().literal;
  if (!literal) return Invalid(instr, "has no literal");
  if (literal->elided()) return Unsupported(instr, "constant whose values were elided ({...})");
  return *literal;
}

absl::StatusOr<Literal> EvalBroadcast(const HloInstruction& instr, Operands operands) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, operands, 1));
  const Literal& in = *operands[0];
  RETURN_IF_ERROR(ExpectArray(instr, in, "operand"));
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  RETURN_IF_ERROR(ExpectSameType(instr, in, TypeOf(out), "operand"));
  const std::vector<int64_t> dims = instr.attrs().dimensions.value_or(std::vector<int64_t>{});
  if (static_cast<int64_t>(dims.size()) != RankOf(in)) {
    return Invalid(instr, "dimensions={...} has ", dims.size(), " entries for a rank-", RankOf(in),
                   " operand");
  }
  RETURN_IF_ERROR(ExpectDimensions(instr, dims, RankOf(out), "dimensions"));
  for (size_t i = 0; i < dims.size(); ++i) {
    if (DimsOf(in)[i] != DimsOf(out)[dims[i]]) {
      return Invalid(instr, "operand dimension ", i, " (size ", DimsOf(in)[i],
                     ") does not match result dimension ", dims[i]);
    }
  }
  const std::vector<int64_t> in_strides = Strides(in.shape());
  ForEachIndex(DimsOf(out), [&](const Index& index, int64_t linear) {
    int64_t from = 0;
    for (size_t i = 0; i < dims.size(); ++i) from += index[dims[i]] * in_strides[i];
    CopyElement(in, from, out, linear);
  });
  return out;
}

absl::StatusOr<Literal> EvalReshape(const HloInstruction& instr, Operands operands) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, operands, 1));
  const Literal& in = *operands[0];
  RETURN_IF_ERROR(ExpectArray(instr, in, "operand"));
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  RETURN_IF_ERROR(ExpectSameType(instr, in, TypeOf(out), "operand"));
  if (in.element_count() != out.element_count()) {
    return Invalid(instr, "operand has ", in.element_count(), " elements, result ",
                   out.element_count());
  }
  // Both are row-major: the elements keep their order.
  std::memcpy(out.mutable_raw_data(), in.raw_data().data(), in.raw_data().size());
  return out;
}

absl::StatusOr<Literal> EvalTranspose(const HloInstruction& instr, Operands operands) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, operands, 1));
  const Literal& in = *operands[0];
  RETURN_IF_ERROR(ExpectArray(instr, in, "operand"));
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  RETURN_IF_ERROR(ExpectSameType(instr, in, TypeOf(out), "operand"));
  const std::vector<int64_t> perm = instr.attrs().dimensions.value_or(std::vector<int64_t>{});
  if (!IsPermutation(perm, RankOf(in)) || RankOf(out) != RankOf(in)) {
    return Invalid(instr, "dimensions={...} is not a permutation of the operand's dimensions");
  }
  for (size_t i = 0; i < perm.size(); ++i) {
    if (DimsOf(out)[i] != DimsOf(in)[perm[i]]) {
      return Invalid(instr, "result dimension ", i, " does not match operand dimension ", perm[i]);
    }
  }
  const std::vector<int64_t> in_strides = Strides(in.shape());
  ForEachIndex(DimsOf(out), [&](const Index& index, int64_t linear) {
    int64_t from = 0;
    for (size_t i = 0; i < perm.size(); ++i) from += index[i] * in_strides[perm[i]];
    CopyElement(in, from, out, linear);
  });
  return out;
}

absl::StatusOr<Literal> EvalSlice(const HloInstruction& instr, Operands operands) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, operands, 1));
  const Literal& in = *operands[0];
  RETURN_IF_ERROR(ExpectArray(instr, in, "operand"));
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  RETURN_IF_ERROR(ExpectSameType(instr, in, TypeOf(out), "operand"));
  const std::vector<SliceDimension>& slice = instr.attrs().slice;
  if (static_cast<int64_t>(slice.size()) != RankOf(in) || RankOf(out) != RankOf(in)) {
    return Invalid(instr, "slice={...} needs one entry per operand dimension");
  }
  for (size_t d = 0; d < slice.size(); ++d) {
    const int64_t size = DimsOf(out)[d];
    const SliceDimension& s = slice[d];
    if (size > 0 &&
        (s.start < 0 || s.stride < 1 || s.start + (size - 1) * s.stride >= DimsOf(in)[d])) {
      return Invalid(instr, "slice dimension ", d, " reads outside the operand");
    }
  }
  const std::vector<int64_t> in_strides = Strides(in.shape());
  ForEachIndex(DimsOf(out), [&](const Index& index, int64_t linear) {
    int64_t from = 0;
    for (size_t d = 0; d < slice.size(); ++d) {
      from += (slice[d].start + index[d] * slice[d].stride) * in_strides[d];
    }
    CopyElement(in, from, out, linear);
  });
  return out;
}

// Start indices given as `rank` scalars or as one rank-1 array, from
// operands[first] on.
absl::StatusOr<Index> ReadStartIndices(const HloInstruction& instr, Operands operands, size_t first,
                                       int64_t rank) {
  const size_t count = operands.size() - std::min(first, operands.size());
  Index starts;
  auto check_integer = [&](const Literal& lit) -> absl::Status {
    if (lit.shape().IsArray() && IsInteger(TypeOf(lit))) return absl::OkStatus();
    return Invalid(instr, "start indices must be integers");
  };
  if (static_cast<int64_t>(count) == rank) {
    for (size_t i = first; i < operands.size(); ++i) {
      RETURN_IF_ERROR(check_integer(*operands[i]));
      if (RankOf(*operands[i]) != 0) return Invalid(instr, "start index ", i, " is not a scalar");
      starts.push_back(ReadIndexValue(*operands[i], 0));
    }
    return starts;
  }
  if (count == 1 && RankOf(*operands[first]) == 1 && operands[first]->element_count() == rank) {
    RETURN_IF_ERROR(check_integer(*operands[first]));
    for (int64_t i = 0; i < rank; ++i) starts.push_back(ReadIndexValue(*operands[first], i));
    return starts;
  }
  return Invalid(instr, "needs ", rank, " start indices, got ", count, " operands");
}

absl::StatusOr<Literal> EvalDynamicSlice(const HloInstruction& instr, Operands operands) {
  if (operands.empty()) return Invalid(instr, "needs an operand");
  const Literal& in = *operands[0];
  RETURN_IF_ERROR(ExpectArray(instr, in, "operand"));
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  RETURN_IF_ERROR(ExpectSameType(instr, in, TypeOf(out), "operand"));
  const int64_t rank = RankOf(in);
  if (RankOf(out) != rank) return Invalid(instr, "result rank differs from the operand's");
  ASSIGN_OR_RETURN(Index starts, ReadStartIndices(instr, operands, 1, rank));
  for (int64_t d = 0; d < rank; ++d) {
    if (DimsOf(out)[d] > DimsOf(in)[d]) return Invalid(instr, "slice larger than the operand");
    starts[d] = ClampStart(starts[d], DimsOf(in)[d], DimsOf(out)[d]);
  }
  const std::vector<int64_t> in_strides = Strides(in.shape());
  ForEachIndex(DimsOf(out), [&](const Index& index, int64_t linear) {
    int64_t from = 0;
    for (int64_t d = 0; d < rank; ++d) from += (starts[d] + index[d]) * in_strides[d];
    CopyElement(in, from, out, linear);
  });
  return out;
}

absl::StatusOr<Literal> EvalDynamicUpdateSlice(const HloInstruction& instr, Operands operands) {
  if (operands.size() < 2) return Invalid(instr, "needs an operand and an update");
  const Literal& in = *operands[0];
  const Literal& update = *operands[1];
  RETURN_IF_ERROR(ExpectArray(instr, in, "operand"));
  RETURN_IF_ERROR(ExpectArray(instr, update, "update"));
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  RETURN_IF_ERROR(ExpectSameType(instr, in, TypeOf(out), "operand"));
  RETURN_IF_ERROR(ExpectSameType(instr, update, TypeOf(out), "update"));
  const int64_t rank = RankOf(in);
  if (DimsOf(out) != DimsOf(in) || RankOf(update) != rank) {
    return Invalid(instr, "operand, update and result ranks or sizes disagree");
  }
  ASSIGN_OR_RETURN(Index starts, ReadStartIndices(instr, operands, 2, rank));
  for (int64_t d = 0; d < rank; ++d) {
    if (DimsOf(update)[d] > DimsOf(in)[d]) return Invalid(instr, "update larger than operand");
    starts[d] = ClampStart(starts[d], DimsOf(in)[d], DimsOf(update)[d]);
  }
  for (int64_t i = 0, n = out.element_count(); i < n; ++i) CopyElement(in, i, out, i);
  const std::vector<int64_t> out_strides = Strides(out.shape());
  ForEachIndex(DimsOf(update), [&](const Index& index, int64_t linear) {
    int64_t to = 0;
    for (int64_t d = 0; d < rank; ++d) to += (starts[d] + index[d]) * out_strides[d];
    CopyElement(update, linear, out, to);
  });
  return out;
}

// Result position p along a padded dimension comes from operand element
// (p - low) / (interior + 1) when that divides evenly and lies in range.
std::optional<int64_t> UnpaddedPosition(int64_t p, const PaddingDimension& pad, int64_t size) {
  const int64_t offset = p - pad.low;
  if (offset < 0 || offset % (pad.interior + 1) != 0) return std::nullopt;
  const int64_t i = offset / (pad.interior + 1);
  if (i >= size) return std::nullopt;
  return i;
}

absl::StatusOr<Literal> EvalPad(const HloInstruction& instr, Operands operands) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, operands, 2));
  const Literal& in = *operands[0];
  const Literal& value = *operands[1];
  RETURN_IF_ERROR(ExpectArray(instr, in, "operand"));
  RETURN_IF_ERROR(ExpectArray(instr, value, "padding value"));
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  RETURN_IF_ERROR(ExpectSameType(instr, in, TypeOf(out), "operand"));
  RETURN_IF_ERROR(ExpectSameType(instr, value, TypeOf(out), "padding value"));
  if (RankOf(value) != 0) return Invalid(instr, "padding value must be a scalar");
  const std::vector<PaddingDimension>& padding = instr.attrs().padding;
  const int64_t rank = RankOf(in);
  if (static_cast<int64_t>(padding.size()) != rank || RankOf(out) != rank) {
    return Invalid(instr, "padding={...} needs one entry per operand dimension");
  }
  for (const PaddingDimension& p : padding) {
    if (p.interior < 0) return Invalid(instr, "interior padding must be non-negative");
  }
  const std::vector<int64_t> in_strides = Strides(in.shape());
  ForEachIndex(DimsOf(out), [&](const Index& index, int64_t linear) {
    int64_t from = 0;
    for (int64_t d = 0; d < rank; ++d) {
      std::optional<int64_t> i = UnpaddedPosition(index[d], padding[d], DimsOf(in)[d]);
      if (!i) return CopyElement(value, 0, out, linear);
      from += *i * in_strides[d];
    }
    CopyElement(in, from, out, linear);
  });
  return out;
}

absl::StatusOr<Literal> EvalConcatenate(const HloInstruction& instr, Operands operands) {
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  const std::vector<int64_t> dims = instr.attrs().dimensions.value_or(std::vector<int64_t>{});
  if (dims.size() != 1 || dims[0] < 0 || dims[0] >= RankOf(out)) {
    return Invalid(instr, "needs one concatenation dimension of the result");
  }
  const int64_t axis = dims[0];
  int64_t total = 0;
  for (size_t i = 0; i < operands.size(); ++i) {
    const Literal& in = *operands[i];
    RETURN_IF_ERROR(ExpectArray(instr, in, "operand"));
    RETURN_IF_ERROR(ExpectSameType(instr, in, TypeOf(out), "operand"));
    if (RankOf(in) != RankOf(out)) return Invalid(instr, "operand ", i, " has the wrong rank");
    for (int64_t d = 0; d < RankOf(out); ++d) {
      if (d != axis && DimsOf(in)[d] != DimsOf(out)[d]) {
        return Invalid(instr, "operand ", i, " differs from the result in dimension ", d);
      }
    }
    total += DimsOf(in)[axis];
  }
  if (total != DimsOf(out)[axis]) return Invalid(instr, "operand sizes do not add up");
  const std::vector<int64_t> out_strides = Strides(out.shape());
  int64_t offset = 0;
  for (const Literal* in : operands) {
    ForEachIndex(DimsOf(*in), [&](const Index& index, int64_t linear) {
      Index to = index;
      to[axis] += offset;
      CopyElement(*in, linear, out, Linearize(to, out_strides));
    });
    offset += DimsOf(*in)[axis];
  }
  return out;
}

absl::StatusOr<Literal> EvalReverse(const HloInstruction& instr, Operands operands) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, operands, 1));
  const Literal& in = *operands[0];
  RETURN_IF_ERROR(ExpectArray(instr, in, "operand"));
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  RETURN_IF_ERROR(ExpectSameType(instr, in, TypeOf(out), "operand"));
  if (DimsOf(in) != DimsOf(out)) return Invalid(instr, "result shape differs from the operand's");
  const std::vector<int64_t> dims = instr.attrs().dimensions.value_or(std::vector<int64_t>{});
  RETURN_IF_ERROR(ExpectDimensions(instr, dims, RankOf(in), "dimensions"));
  const std::vector<int64_t> strides = Strides(in.shape());
  ForEachIndex(DimsOf(out), [&](const Index& index, int64_t linear) {
    Index from = index;
    for (int64_t d : dims) from[d] = DimsOf(in)[d] - 1 - index[d];
    CopyElement(in, Linearize(from, strides), out, linear);
  });
  return out;
}

absl::StatusOr<Literal> EvalIota(const HloInstruction& instr) {
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  const int64_t dim = instr.attrs().iota_dimension;
  if (dim < 0 || dim >= RankOf(out)) return Invalid(instr, "iota_dimension out of range");
  const PrimitiveType type = TypeOf(out);
  ForEachIndex(DimsOf(out), [&](const Index& index, int64_t linear) {
    const int64_t v = index[dim];
    if (IsComplex(type)) return out.SetComplex(linear, {static_cast<double>(v), 0});
    if (IsFloatingPoint(type)) return out.SetDouble(linear, static_cast<double>(v));
    out.SetInt(linear, v);
  });
  return out;
}

// ------------------------------------------------------------------ gather

// Where the index vector of each batch position lives in start_indices.
struct IndexVectorLayout {
  int64_t index_vector_dim;         // == rank when implicit (size 1)
  std::vector<int64_t> batch_dims;  // start_indices dimensions other than index_vector_dim
  int64_t vector_size;

  static IndexVectorLayout Of(const Literal& indices, int64_t index_vector_dim) {
    IndexVectorLayout layout{index_vector_dim, {}, 1};
    for (int64_t d = 0; d < RankOf(indices); ++d) {
      if (d != index_vector_dim) layout.batch_dims.push_back(d);
    }
    if (index_vector_dim < RankOf(indices)) layout.vector_size = DimsOf(indices)[index_vector_dim];
    return layout;
  }

  // The position in start_indices of batch index `batch` (one entry per
  // batch dimension), with the index vector position left at 0.
  Index Position(const Literal& indices, const Index& batch) const {
    Index position(RankOf(indices), 0);
    for (size_t k = 0; k < batch_dims.size(); ++k) position[batch_dims[k]] = batch[k];
    return position;
  }

  // Element k of the index vector at `position`.
  int64_t Read(const Literal& indices, const std::vector<int64_t>& strides, Index position,
               int64_t k) const {
    if (index_vector_dim < static_cast<int64_t>(position.size())) position[index_vector_dim] = k;
    return ReadIndexValue(indices, Linearize(position, strides));
  }
};

absl::Status CheckIndexVector(const HloInstruction& instr, const Literal& indices,
                              int64_t index_vector_dim) {
  RETURN_IF_ERROR(ExpectArray(instr, indices, "indices"));
  if (!IsInteger(TypeOf(indices))) return Invalid(instr, "indices must be integers");
  if (index_vector_dim < 0 || index_vector_dim > RankOf(indices)) {
    return Invalid(instr, "index_vector_dim ", index_vector_dim, " out of range");
  }
  return absl::OkStatus();
}

// Operand dimensions not in `a` or `b`, in increasing order.
std::vector<int64_t> RemainingDims(int64_t rank, const std::vector<int64_t>& a,
                                   const std::vector<int64_t>& b) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(a, d) && !Contains(b, d)) dims.push_back(d);
  }
  return dims;
}

absl::StatusOr<Literal> EvalGather(const HloInstruction& instr, Operands operands) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, operands, 2));
  const Literal& in = *operands[0];
  const Literal& indices = *operands[1];
  RETURN_IF_ERROR(ExpectArray(instr, in, "operand"));
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  RETURN_IF_ERROR(ExpectSameType(instr, in, TypeOf(out), "operand"));
  if (!instr.attrs().gather_dimension_numbers) return Invalid(instr, "no dimension numbers");
  const GatherDimensionNumbers& dn = *instr.attrs().gather_dimension_numbers;
  const std::vector<int64_t>& slice_sizes = instr.attrs().gather_slice_sizes;
  const int64_t rank = RankOf(in);
  RETURN_IF_ERROR(CheckIndexVector(instr, indices, dn.index_vector_dim));
  const IndexVectorLayout layout = IndexVectorLayout::Of(indices, dn.index_vector_dim);
  RETURN_IF_ERROR(ExpectDimensions(instr, dn.offset_dims, RankOf(out), "offset_dims"));
  RETURN_IF_ERROR(ExpectDimensions(instr, dn.collapsed_slice_dims, rank, "collapsed_slice_dims"));
  RETURN_IF_ERROR(ExpectDimensions(instr, dn.start_index_map, rank, "start_index_map"));
  RETURN_IF_ERROR(ExpectDimensions(instr, dn.operand_batching_dims, rank, "operand_batching_dims"));
  RETURN_IF_ERROR(ExpectDimensions(instr, dn.start_indices_batching_dims, RankOf(indices),
                                   "start_indices_batching_dims"));
  const std::vector<int64_t> batch_dims = RemainingDims(RankOf(out), dn.offset_dims, {});
  const std::vector<int64_t> offset_operand_dims =
      RemainingDims(rank, dn.collapsed_slice_dims, dn.operand_batching_dims);
  if (static_cast<int64_t>(slice_sizes.size()) != rank ||
      static_cast<int64_t>(dn.start_index_map.size()) != layout.vector_size ||
      batch_dims.size() != layout.batch_dims.size() ||
      offset_operand_dims.size() != dn.offset_dims.size() ||
      dn.operand_batching_dims.size() != dn.start_indices_batching_dims.size() ||
      Contains(dn.start_indices_batching_dims, dn.index_vector_dim)) {
    return Invalid(instr, "dimension numbers do not fit the operand, indices and result shapes");
  }
  for (size_t k = 0; k < batch_dims.size(); ++k) {
    if (DimsOf(out)[batch_dims[k]] != DimsOf(indices)[layout.batch_dims[k]]) {
      return Invalid(instr, "result batch dimension ", batch_dims[k],
                     " does not match the indices");
    }
  }
  const std::vector<int64_t> in_strides = Strides(in.shape());
  const std::vector<int64_t> index_strides = Strides(indices.shape());
  RETURN_IF_ERROR(ForEachIndexWithStatus(
      DimsOf(out), [&](const Index& out_index, int64_t linear) -> absl::Status {
        Index batch(batch_dims.size());
        for (size_t k = 0; k < batch_dims.size(); ++k) batch[k] = out_index[batch_dims[k]];
        const Index position = layout.Position(indices, batch);
        Index from(rank, 0);
        for (int64_t k = 0; k < layout.vector_size; ++k) {
          const int64_t d = dn.start_index_map[k];
          from[d] = ClampStart(layout.Read(indices, index_strides, position, k), DimsOf(in)[d],
                               slice_sizes[d]);
        }
        for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i) {
          from[dn.operand_batching_dims[i]] = position[dn.start_indices_batching_dims[i]];
        }
        for (size_t k = 0; k < offset_operand_dims.size(); ++k) {
          from[offset_operand_dims[k]] += out_index[dn.offset_dims[k]];
        }
        if (!InBounds(from, DimsOf(in))) return Invalid(instr, "gathers outside the operand");
        CopyElement(in, Linearize(from, in_strides), out, linear);
        return absl::OkStatus();
      }));
  return out;
}

// ----------------------------------------------------------------- scatter

struct ScatterArgs {
  std::vector<const Literal*> inputs;
  const Literal* indices = nullptr;
  std::vector<const Literal*> updates;
};

absl::StatusOr<ScatterArgs> SplitScatterOperands(const HloInstruction& instr, Operands operands) {
  if (operands.size() < 3 || operands.size() % 2 == 0) {
    return Invalid(instr, "needs N inputs, indices and N updates, got ", operands.size(),
                   " operands");
  }
  const size_t n = (operands.size() - 1) / 2;
  ScatterArgs args;
  args.inputs.assign(operands.begin(), operands.begin() + n);
  args.indices = operands[n];
  args.updates.assign(operands.begin() + n + 1, operands.end());
  for (size_t i = 0; i < n; ++i) {
    RETURN_IF_ERROR(ExpectArray(instr, *args.inputs[i], "input"));
    RETURN_IF_ERROR(ExpectArray(instr, *args.updates[i], "update"));
    RETURN_IF_ERROR(ExpectSameType(instr, *args.updates[i], TypeOf(*args.inputs[i]), "update"));
    if (DimsOf(*args.inputs[i]) != DimsOf(*args.inputs[0]) ||
        DimsOf(*args.updates[i]) != DimsOf(*args.updates[0])) {
      return Invalid(instr, "inputs (and updates) must share one shape");
    }
  }
  return args;
}

// Runs `combiner` on (current values..., update values...) of the elements
// `targets` (in the results) and `sources` (in the updates), and stores its
// result(s) at `targets`. `combiner` is the scatter's own computation (one
// element, scalars) or it lifted to arrays of targets.size() elements (the
// elements of one update window, which are distinct).
absl::Status Combine(const HloInstruction& instr, const HloComputation& combiner, bool lifted,
                     EvalContext& context, std::vector<Literal>& results,
                     const std::vector<int64_t>& targets, const ScatterArgs& args,
                     const std::vector<int64_t>& sources) {
  const size_t n = results.size();
  const int64_t size = static_cast<int64_t>(targets.size());
  const std::vector<int64_t> dims = lifted ? std::vector<int64_t>{size} : std::vector<int64_t>{};
  std::vector<Literal> values;
  values.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    values.emplace_back(Shape::Array(TypeOf(results[i]), dims));
    for (int64_t e = 0; e < size; ++e) CopyElement(results[i], targets[e], values.back(), e);
  }
  for (size_t i = 0; i < n; ++i) {
    values.emplace_back(Shape::Array(TypeOf(*args.updates[i]), dims));
    for (int64_t e = 0; e < size; ++e) CopyElement(*args.updates[i], sources[e], values.back(), e);
  }
  std::vector<const Literal*> pointers;
  for (const Literal& v : values) pointers.push_back(&v);
  ASSIGN_OR_RETURN(Literal combined, context.Call(combiner, pointers));
  for (size_t i = 0; i < n; ++i) {
    const bool is_tuple = combined.shape().IsTuple() && combined.tuple_elements().size() == n;
    const Literal* value = n == 1 ? &combined : is_tuple ? &combined.tuple_elements()[i] : nullptr;
    if (value == nullptr || !value->shape().IsArray() || value->element_count() != size ||
        TypeOf(*value) != TypeOf(results[i])) {
      return Invalid(instr, "the combiner must return ", n, " scalar(s) of the inputs' types");
    }
    for (int64_t e = 0; e < size; ++e) CopyElement(*value, e, results[i], targets[e]);
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> EvalScatter(const HloInstruction& instr, Operands operands,
                                    EvalContext& context) {
  ASSIGN_OR_RETURN(ScatterArgs args, SplitScatterOperands(instr, operands));
  if (instr.called_computations().size() != 1) return Invalid(instr, "needs one to_apply");
  if (!instr.attrs().scatter_dimension_numbers) return Invalid(instr, "no dimension numbers");
  const ScatterDimensionNumbers& dn = *instr.attrs().scatter_dimension_numbers;
  const Literal& input = *args.inputs[0];
  const Literal& updates = *args.updates[0];
  const Literal& indices = *args.indices;
  const int64_t rank = RankOf(input);
  RETURN_IF_ERROR(CheckIndexVector(instr, indices, dn.index_vector_dim));
  const IndexVectorLayout layout = IndexVectorLayout::Of(indices, dn.index_vector_dim);
  RETURN_IF_ERROR(
      ExpectDimensions(instr, dn.update_window_dims, RankOf(updates), "update_window_dims"));
  RETURN_IF_ERROR(ExpectDimensions(instr, dn.inserted_window_dims, rank, "inserted_window_dims"));
  RETURN_IF_ERROR(ExpectDimensions(instr, dn.scatter_dims_to_operand_dims, rank,
                                   "scatter_dims_to_operand_dims"));
  RETURN_IF_ERROR(ExpectDimensions(instr, dn.input_batching_dims, rank, "input_batching_dims"));
  RETURN_IF_ERROR(ExpectDimensions(instr, dn.scatter_indices_batching_dims, RankOf(indices),
                                   "scatter_indices_batching_dims"));
  const std::vector<int64_t> scatter_dims =
      RemainingDims(RankOf(updates), dn.update_window_dims, {});
  const std::vector<int64_t> window_operand_dims =
      RemainingDims(rank, dn.inserted_window_dims, dn.input_batching_dims);
  if (static_cast<int64_t>(dn.scatter_dims_to_operand_dims.size()) != layout.vector_size ||
      scatter_dims.size() != layout.batch_dims.size() ||
      window_operand_dims.size() != dn.update_window_dims.size() ||
      dn.input_batching_dims.size() != dn.scatter_indices_batching_dims.size() ||
      Contains(dn.scatter_indices_batching_dims, dn.index_vector_dim)) {
    return Invalid(instr, "dimension numbers do not fit the input, indices and update shapes");
  }
  std::vector<int64_t> scatter_shape, window_shape, window_size(rank, 1);
  for (int64_t d : scatter_dims) scatter_shape.push_back(DimsOf(updates)[d]);
  for (size_t k = 0; k < dn.update_window_dims.size(); ++k) {
    window_shape.push_back(DimsOf(updates)[dn.update_window_dims[k]]);
    window_size[window_operand_dims[k]] = window_shape.back();
  }
  for (size_t k = 0; k < scatter_dims.size(); ++k) {
    if (scatter_shape[k] != DimsOf(indices)[layout.batch_dims[k]]) {
      return Invalid(instr, "update scatter dimension ", scatter_dims[k],
                     " does not match the indices");
    }
  }
  std::vector<Literal> results;
  for (const Literal* in : args.inputs) results.push_back(*in);
  std::unique_ptr<HloComputation> lifted;
  const int64_t window_elements = Product(window_shape);
  if (window_elements > 1)
    lifted = LiftToArrays(*instr.called_computations()[0], {window_elements});
  std::vector<int64_t> targets, sources;
  const std::vector<int64_t> in_strides = Strides(input.shape());
  const std::vector<int64_t> update_strides = Strides(updates.shape());
  const std::vector<int64_t> index_strides = Strides(indices.shape());
  RETURN_IF_ERROR(
      ForEachIndexWithStatus(scatter_shape, [&](const Index& batch, int64_t) -> absl::Status {
        const Index position = layout.Position(indices, batch);
        Index start(rank, 0);
        for (int64_t k = 0; k < layout.vector_size; ++k) {
          start[dn.scatter_dims_to_operand_dims[k]] =
              layout.Read(indices, index_strides, position, k);
        }
        for (size_t i = 0; i < dn.input_batching_dims.size(); ++i) {
          start[dn.input_batching_dims[i]] = position[dn.scatter_indices_batching_dims[i]];
        }
        for (int64_t d = 0; d < rank; ++d) {  // a window not wholly inside is skipped
          if (start[d] < 0 || start[d] > DimsOf(input)[d] - window_size[d]) return absl::OkStatus();
        }
        targets.clear();
        sources.clear();
        RETURN_IF_ERROR(ForEachIndexWithStatus(window_shape, [&](const Index& window, int64_t) {
          Index update_index(RankOf(updates), 0), to = start;
          for (size_t k = 0; k < scatter_dims.size(); ++k) update_index[scatter_dims[k]] = batch[k];
          for (size_t k = 0; k < window.size(); ++k) {
            update_index[dn.update_window_dims[k]] = window[k];
            to[window_operand_dims[k]] += window[k];
          }
          targets.push_back(Linearize(to, in_strides));
          sources.push_back(Linearize(update_index, update_strides));
          return absl::OkStatus();
        }));
        // The elements of one window are distinct, so the combiner may run on
        // the whole window at once.
        if (lifted) return Combine(instr, *lifted, true, context, results, targets, args, sources);
        for (size_t e = 0; e < targets.size(); ++e) {
          RETURN_IF_ERROR(Combine(instr, *instr.called_computations()[0], false, context, results,
                                  {targets[e]}, args, {sources[e]}));
        }
        return absl::OkStatus();
      }));
  if (results.size() == 1) return std::move(results[0]);
  return Literal::Tuple(std::move(results));
}

// ---------------------------------------------------------------- bitcasts

std::vector<int64_t> MinorToMajor(const Shape& shape) {
  if (shape.has_layout() && IsPermutation(shape.layout().minor_to_major, shape.rank())) {
    return shape.layout().minor_to_major;
  }
  std::vector<int64_t> order;
  for (int64_t d = shape.rank() - 1; d >= 0; --d) order.push_back(d);
  return order;
}

bool IsDefaultOrder(const std::vector<int64_t>& minor_to_major) {
  for (size_t i = 0; i < minor_to_major.size(); ++i) {
    if (minor_to_major[i] != static_cast<int64_t>(minor_to_major.size() - 1 - i)) return false;
  }
  return true;
}

// Row-major position of the element stored at physical position `p`.
int64_t LogicalFromPhysical(int64_t p, const std::vector<int64_t>& dims,
                            const std::vector<int64_t>& minor_to_major,
                            const std::vector<int64_t>& strides) {
  int64_t logical = 0;
  for (int64_t d : minor_to_major) {
    logical += (p % dims[d]) * strides[d];
    p /= dims[d];
  }
  return logical;
}

// bitcast keeps the bytes in their physical (layout) order; the layouts are
// the instructions' own, since literals hold logical order.
absl::StatusOr<Literal> EvalBitcast(const HloInstruction& instr, Operands operands) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, operands, 1));
  const Literal& in = *operands[0];
  RETURN_IF_ERROR(ExpectArray(instr, in, "operand"));
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  if (in.element_count() != out.element_count()) {
    return Unsupported(instr, "bitcast that changes the element count");
  }
  if (PrimitiveByteWidth(TypeOf(in)) != PrimitiveByteWidth(TypeOf(out)) ||
      IsComplex(TypeOf(in)) != IsComplex(TypeOf(out))) {
    return Unsupported(instr, "bitcast between element types of different widths");
  }
  const Shape& in_shape = instr.operand_count() == 1 ? instr.operand(0)->shape() : in.shape();
  for (const Shape* s : {&in_shape, &instr.shape()}) {
    if (s->has_layout() && !s->layout().tiles.empty()) return Unsupported(instr, "tiled layout");
  }
  const std::vector<int64_t> in_order = MinorToMajor(in_shape);
  const std::vector<int64_t> out_order = MinorToMajor(instr.shape());
  const bool plain = (IsDefaultOrder(in_order) && IsDefaultOrder(out_order)) ||
                     in_shape.dimensions() != DimsOf(in);
  const std::vector<int64_t> in_strides = Strides(in.shape());
  const std::vector<int64_t> out_strides = Strides(out.shape());
  for (int64_t p = 0, n = out.element_count(); p < n; ++p) {
    if (plain) {
      CopyElement(in, p, out, p);
    } else {
      CopyElement(in, LogicalFromPhysical(p, DimsOf(in), in_order, in_strides), out,
                  LogicalFromPhysical(p, DimsOf(out), out_order, out_strides));
    }
  }
  return out;
}

// Writes one element from its little-endian bytes.
void WriteElementBytes(Literal& lit, int64_t i, const uint8_t* bytes) {
  const PrimitiveType t = TypeOf(lit);
  if (t == PrimitiveType::C64) {
    float parts[2];
    std::memcpy(parts, bytes, sizeof(parts));
    return lit.SetComplex(i, {parts[0], parts[1]});
  }
  if (t == PrimitiveType::C128) {
    double parts[2];
    std::memcpy(parts, bytes, sizeof(parts));
    return lit.SetComplex(i, {parts[0], parts[1]});
  }
  uint64_t bits = 0;
  std::memcpy(&bits, bytes, PrimitiveByteWidth(t));
  lit.SetBits(i, bits);
}

// Same width: reinterpret each element. A wider input splits into a new
// minor dimension, a narrower one is joined along its minor dimension, both
// little-endian. Either way the bytes keep their row-major order.
absl::StatusOr<Literal> EvalBitcastConvert(const HloInstruction& instr, Operands operands) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, operands, 1));
  const Literal& in = *operands[0];
  RETURN_IF_ERROR(ExpectArray(instr, in, "operand"));
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  const int in_bits = PrimitiveBitWidth(TypeOf(in)), out_bits = PrimitiveBitWidth(TypeOf(out));
  std::vector<int64_t> expected_out = DimsOf(in);
  if (in_bits == out_bits && in_bits < 8) {  // sub-byte: one element per byte, masked
    if (DimsOf(out) != DimsOf(in)) return Invalid(instr, "result shape differs from the operand's");
    for (int64_t i = 0, n = out.element_count(); i < n; ++i) {
      out.SetBits(i, in.GetBits(i) & ((uint64_t{1} << in_bits) - 1));
    }
    return out;
  }
  if (in_bits % 8 != 0 || out_bits % 8 != 0) {
    return Unsupported(instr, "bitcast-convert between sub-byte types of different widths");
  }
  if (in_bits > out_bits) {
    if (in_bits % out_bits != 0) return Invalid(instr, "widths do not divide");
    expected_out.push_back(in_bits / out_bits);
  } else if (in_bits < out_bits) {
    if (out_bits % in_bits != 0 || expected_out.empty() ||
        expected_out.back() != out_bits / in_bits) {
      return Invalid(instr, "operand's minor dimension must be ", out_bits / in_bits);
    }
    expected_out.pop_back();
  }
  if (DimsOf(out) != expected_out) return Invalid(instr, "result shape does not fit the widths");
  const int out_bytes = PrimitiveByteWidth(TypeOf(out));
  for (int64_t i = 0, n = out.element_count(); i < n; ++i) {
    WriteElementBytes(out, i, in.raw_data().data() + i * out_bytes);
  }
  return out;
}

// ------------------------------------------------------ tuples and friends

absl::StatusOr<Literal> EvalTuple(Operands operands) {
  std::vector<Literal> elements;
  for (const Literal* op : operands) elements.push_back(*op);
  return Literal::Tuple(std::move(elements));
}

absl::StatusOr<Literal> TupleElement(const HloInstruction& instr, const Literal& tuple,
                                     int64_t index) {
  if (!tuple.shape().IsTuple()) return Invalid(instr, "operand is not a tuple");
  if (index < 0 || index >= static_cast<int64_t>(tuple.tuple_elements().size())) {
    return Invalid(instr, "tuple index ", index, " out of range");
  }
  return tuple.tuple_elements()[index];
}

absl::StatusOr<Literal> EvalGetDimensionSize(const HloInstruction& instr, Operands operands) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, operands, 1));
  RETURN_IF_ERROR(ExpectArray(instr, *operands[0], "operand"));
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  const std::vector<int64_t> dims = instr.attrs().dimensions.value_or(std::vector<int64_t>{});
  if (dims.size() != 1 || out.element_count() != 1) return Invalid(instr, "needs one dimension");
  RETURN_IF_ERROR(ExpectDimensions(instr, dims, RankOf(*operands[0]), "dimensions"));
  out.SetInt(0, DimsOf(*operands[0])[dims[0]]);
  return out;
}

absl::StatusOr<Literal> FirstOperand(const HloInstruction& instr, Operands operands) {
  if (operands.empty()) return Invalid(instr, "needs an operand");
  return *operands[0];
}

bool IsDataMovementOpcode(HloOpcode op) {
  switch (op) {
    case HloOpcode::kConstant:
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
    case HloOpcode::kTranspose:
    case HloOpcode::kSlice:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kPad:
    case HloOpcode::kConcatenate:
    case HloOpcode::kReverse:
    case HloOpcode::kIota:
    case HloOpcode::kGather:
    case HloOpcode::kScatter:
    case HloOpcode::kBitcast:
    case HloOpcode::kBitcastConvert:
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kGetDimensionSize:
    case HloOpcode::kSetDimensionSize:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kAddDependency:
    case HloOpcode::kDomain:
    case HloOpcode::kAfterAll:
    case HloOpcode::kCopyStart:
    case HloOpcode::kCopyDone:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<Literal> Dispatch(const HloInstruction& instr, Operands operands,
                                 EvalContext& context) {
  switch (instr.opcode()) {
    case HloOpcode::kConstant:
      return EvalConstant(instr);
    case HloOpcode::kBroadcast:
      return EvalBroadcast(instr, operands);
    case HloOpcode::kReshape:
      return EvalReshape(instr, operands);
    case HloOpcode::kTranspose:
      return EvalTranspose(instr, operands);
    case HloOpcode::kSlice:
      return EvalSlice(instr, operands);
    case HloOpcode::kDynamicSlice:
      return EvalDynamicSlice(instr, operands);
    case HloOpcode::kDynamicUpdateSlice:
      return EvalDynamicUpdateSlice(instr, operands);
    case HloOpcode::kPad:
      return EvalPad(instr, operands);
    case HloOpcode::kConcatenate:
      return EvalConcatenate(instr, operands);
    case HloOpcode::kReverse:
      return EvalReverse(instr, operands);
    case HloOpcode::kIota:
      return EvalIota(instr);
    case HloOpcode::kGather:
      return EvalGather(instr, operands);
    case HloOpcode::kScatter:
      return EvalScatter(instr, operands, context);
    case HloOpcode::kBitcast:
      return EvalBitcast(instr, operands);
    case HloOpcode::kBitcastConvert:
      return EvalBitcastConvert(instr, operands);
    case HloOpcode::kTuple:
      return EvalTuple(operands);
    case HloOpcode::kGetTupleElement:
      RETURN_IF_ERROR(ExpectOperandCount(instr, operands, 1));
      return TupleElement(instr, *operands[0], instr.attrs().tuple_index);
    case HloOpcode::kGetDimensionSize:
      return EvalGetDimensionSize(instr, operands);
    // Shapes are static here, so set-dimension-size leaves the data as it is.
    case HloOpcode::kSetDimensionSize:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kAddDependency:
    case HloOpcode::kDomain:
      return FirstOperand(instr, operands);
    case HloOpcode::kAfterAll:
      return Literal(Shape::Token());
    case HloOpcode::kCopyStart: {
      RETURN_IF_ERROR(ExpectOperandCount(instr, operands, 1));
      std::vector<Literal> elements = {*operands[0], *operands[0],
                                       Literal(Shape::Scalar(PrimitiveType::U32))};
      return Literal::Tuple(std::move(elements));
    }
    case HloOpcode::kCopyDone:
      RETURN_IF_ERROR(ExpectOperandCount(instr, operands, 1));
      return TupleElement(instr, *operands[0], 1);
    default:
      return absl::NotFoundError("not handled");
  }
}

}  // namespace

absl::StatusOr<Literal> EvalDataMovement(const HloInstruction& instr, Operands operands,
                                         EvalContext& context) {
  if (!IsDataMovementOpcode(instr.opcode())) return absl::NotFoundError("not handled");
  try {
    return Dispatch(instr, operands, context);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat("out of memory evaluating '", instr.name(), "'"));
  }
}

}  // namespace xlite::eval
