// algsimp rules for shape and data-movement ops: broadcast, reshape,
// transpose, slice, concatenate, pad, dynamic-slice, convert, copy (see
// algebraic_simplifier.h).
#include <algorithm>
#include <vector>

#include "xlite/passes/algebraic_simplifier.h"

namespace xlite {
namespace algsimp_internal {
namespace {

bool IsIdentity(const std::vector<int64_t>& v) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

bool SimplifyReshape(Rewriter& rw, HloInstruction* reshape) {
  HloInstruction* x = reshape->operand(0);
  if (rw.Replace(reshape, x)) return true;
  if (x->opcode() != HloOpcode::kReshape || !reshape->shape().is_static() ||
      reshape->attrs().inferred_dimension || x->attrs().inferred_dimension) {
    return false;
  }
  return rw.ReplaceWithNew(
      reshape, rw.Add(*reshape, HloOpcode::kReshape, reshape->shape(), {x->operand(0)}));
}

bool SimplifyTranspose(Rewriter& rw, HloInstruction* transpose) {
  if (!transpose->attrs().dimensions) return false;
  const std::vector<int64_t>& perm = *transpose->attrs().dimensions;
  HloInstruction* x = transpose->operand(0);
  if (IsIdentity(perm) && rw.Replace(transpose, x)) return true;
  if (x->opcode() != HloOpcode::kTranspose || !x->attrs().dimensions) return false;
  const std::vector<int64_t>& inner = *x->attrs().dimensions;
  // result dim j = x dim perm[j] = x's operand dim inner[perm[j]].
  std::vector<int64_t> composed;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(inner.size())) return false;
    composed.push_back(inner[p]);
  }
  HloInstruction* y = x->operand(0);
  if (IsIdentity(composed) && rw.Replace(transpose, y)) return true;
  InstructionAttributes attrs;
  attrs.dimensions = composed;
  return rw.ReplaceWithNew(
      transpose, rw.Add(*transpose, HloOpcode::kTranspose, transpose->shape(), {y}, &attrs));
}

bool SimplifyBroadcast(Rewriter& rw, HloInstruction* broadcast) {
  if (!broadcast->attrs().dimensions) return false;
  const std::vector<int64_t>& dims = *broadcast->attrs().dimensions;
  HloInstruction* x = broadcast->operand(0);
  if (IsIdentity(dims) && rw.Replace(broadcast, x)) return true;
  if (x->opcode() != HloOpcode::kBroadcast || !x->attrs().dimensions) return false;
  // operand dim i -> x dim inner[i] -> result dim dims[inner[i]].
  std::vector<int64_t> composed;
  for (int64_t d : *x->attrs().dimensions) {
    if (d < 0 || d >= static_cast<int64_t>(dims.size())) return false;
    composed.push_back(dims[d]);
  }
  InstructionAttributes attrs;
  attrs.dimensions = composed;
  return rw.ReplaceWithNew(broadcast, rw.Add(*broadcast, HloOpcode::kBroadcast, broadcast->shape(),
                                             {x->operand(0)}, &attrs));
}

bool SimplifySlice(Rewriter& rw, HloInstruction* slice) {
  HloInstruction* x = slice->operand(0);
  const std::vector<SliceDimension>& s = slice->attrs().slice;
  if (!x->shape().IsArray() || static_cast<int64_t>(s.size()) != x->shape().rank()) return false;
  bool whole = true;
  for (int64_t i = 0; i < x->shape().rank(); ++i) {
    if (s[i].start != 0 || s[i].stride != 1 || s[i].limit != x->shape().dimensions(i)) {
      whole = false;
    }
  }
  if (whole && rw.Replace(slice, x)) return true;
  if (x->opcode() != HloOpcode::kSlice || !slice->shape().is_static()) return false;
  const std::vector<SliceDimension>& inner = x->attrs().slice;
  const Shape& y = x->operand(0)->shape();
  if (!y.IsArray() || !y.is_static() || static_cast<int64_t>(inner.size()) != y.rank() ||
      inner.size() != s.size()) {
    return false;
  }
  // x[k] = y[a1 + k*t1]; result[m] = x[a2 + m*t2] = y[a1 + a2*t1 + m*t1*t2].
  std::vector<SliceDimension> composed(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i].stride <= 0 || inner[i].stride <= 0) return false;
    const int64_t count = slice->shape().dimensions(static_cast<int64_t>(i));
    SliceDimension& c = composed[i];
    c.stride = inner[i].stride * s[i].stride;
    if (count == 0) {
      c.start = c.limit = 0;
      c.stride = 1;
    } else {
      c.start = inner[i].start + s[i].start * inner[i].stride;
      c.limit = c.start + (count - 1) * c.stride + 1;
    }
    if (count == 1) c.stride = 1;
  }
  InstructionAttributes attrs;
  attrs.slice = composed;
  return rw.ReplaceWithNew(
      slice, rw.Add(*slice, HloOpcode::kSlice, slice->shape(), {x->operand(0)}, &attrs));
}

// dynamic-slice with constant start indices -> slice; dynamic-slice clamps
// each start to [0, dim - size].
bool SimplifyDynamicSlice(Rewriter& rw, HloInstruction* ds) {
  HloInstruction* x = ds->operand(0);
  const Shape& shape = x->shape();
  const std::vector<int64_t>& sizes = ds->attrs().dynamic_slice_sizes;
  if (!shape.IsArray() || !shape.is_static() || !ds->shape().is_static() ||
      static_cast<int64_t>(sizes.size()) != shape.rank()) {
    return false;
  }
  const int64_t rank = shape.rank();
  std::vector<int64_t> starts;
  auto read = [&](const HloInstruction& index, int64_t element) -> bool {
    if (index.opcode() != HloOpcode::kConstant || !index.attrs().literal) return false;
    const Literal& lit = *index.attrs().literal;
    if (lit.elided() || element >= lit.element_count()) return false;
    const PrimitiveType t = lit.shape().element_type();
    if (!IsInteger(t)) return false;
    int64_t v = lit.GetInt(element);
    // An unsigned value past INT64_MAX reads as negative: it is huge.
    if (IsUnsignedInt(t) && v < 0) v = INT64_MAX;
    starts.push_back(v);
    return true;
  };
  if (ds->operand_count() == 1 + rank) {
    for (int64_t i = 0; i < rank; ++i) {
      if (!ds->operand(1 + i)->shape().IsScalar() || !read(*ds->operand(1 + i), 0)) return false;
    }
  } else if (ds->operand_count() == 2 && ds->operand(1)->shape().IsArray() &&
             ds->operand(1)->shape().rank() == 1 && ds->operand(1)->shape().dimensions(0) == rank) {
    for (int64_t i = 0; i < rank; ++i) {
      if (!read(*ds->operand(1), i)) return false;
    }
  } else {
    return false;
  }
  InstructionAttributes attrs;
  for (int64_t i = 0; i < rank; ++i) {
    if (sizes[i] < 0 || sizes[i] > shape.dimensions(i)) return false;
    const int64_t start = std::clamp<int64_t>(starts[i], 0, shape.dimensions(i) - sizes[i]);
    attrs.slice.push_back({start, start + sizes[i], 1});
  }
  return rw.ReplaceWithNew(ds, rw.Add(*ds, HloOpcode::kSlice, ds->shape(), {x}, &attrs));
}

bool SimplifyPad(Rewriter& rw, HloInstruction* pad) {
  for (const PaddingDimension& p : pad->attrs().padding) {
    if (p.low != 0 || p.high != 0 || p.interior != 0) return false;
  }
  return rw.Replace(pad, pad->operand(0));
}

}  // namespace

bool SimplifyShape(Rewriter& rw, HloInstruction* instr) {
  switch (instr->opcode()) {
    case HloOpcode::kConvert:
      return instr->operand_count() == 1 &&
             instr->operand(0)->shape().element_type() == instr->shape().element_type() &&
             rw.Replace(instr, instr->operand(0));
    case HloOpcode::kCopy:
      // Exact shape equality includes the layout.
      return instr->operand_count() == 1 && rw.Replace(instr, instr->operand(0));
    case HloOpcode::kConcatenate:
      return instr->operand_count() == 1 && rw.Replace(instr, instr->operand(0));
    case HloOpcode::kReshape:
      return instr->operand_count() == 1 && SimplifyReshape(rw, instr);
    case HloOpcode::kTranspose:
      return instr->operand_count() == 1 && SimplifyTranspose(rw, instr);
    case HloOpcode::kBroadcast:
      return instr->operand_count() == 1 && SimplifyBroadcast(rw, instr);
    case HloOpcode::kSlice:
      return instr->operand_count() == 1 && SimplifySlice(rw, instr);
    case HloOpcode::kPad:
      return instr->operand_count() == 2 && SimplifyPad(rw, instr);
    case HloOpcode::kDynamicSlice:
      return instr->operand_count() >= 1 && SimplifyDynamicSlice(rw, instr);
    default:
      return false;
  }
}

}  // namespace algsimp_internal
}  // namespace xlite
