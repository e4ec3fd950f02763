// algsimp rules for contractions and reductions: dot, reduce (see
// algebraic_simplifier.h).
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "xlite/passes/algebraic_simplifier.h"

namespace xlite {
namespace algsimp_internal {
namespace {

// dot with a contracting dimension of size 0 sums nothing: all zeros.
bool SimplifyDot(Rewriter& rw, HloInstruction* dot) {
  if (!dot->attrs().dot_dimension_numbers || !dot->attrs().sparsity.empty() ||
      dot->operand_count() != 2) {
    return false;
  }
  const Shape& lhs = dot->operand(0)->shape();
  if (!lhs.IsArray() || !lhs.is_static()) return false;
  bool empty = false;
  for (int64_t d : dot->attrs().dot_dimension_numbers->lhs_contracting_dimensions) {
    if (d >= 0 && d < lhs.rank() && lhs.dimensions(d) == 0) empty = true;
  }
  if (!empty) return false;
  return rw.ReplaceWithNew(dot, rw.Zeros(*dot, dot->shape()));
}

// The reducer's root when it is `op(p0, p1)` or `op(p1, p0)` of its two
// scalar parameters with an elementwise binary opcode; `swapped` tells which.
const HloInstruction* BinaryReducer(const HloComputation& reducer, bool* swapped) {
  const HloInstruction* root = reducer.root_instruction();
  if (reducer.num_parameters() != 2 || root == nullptr || root->operand_count() != 2 ||
      !IsElementwiseOpcode(root->opcode()) || !root->shape().IsScalar()) {
    return nullptr;
  }
  const HloInstruction* p0 = reducer.parameter_instruction(0);
  const HloInstruction* p1 = reducer.parameter_instruction(1);
  if (root->operand(0) == p0 && root->operand(1) == p1) {
    *swapped = false;
  } else if (root->operand(0) == p1 && root->operand(1) == p0) {
    *swapped = true;
  } else {
    return nullptr;
  }
  return root;
}

// reduce over size-1 dimensions (single input):
//   all reduced dimensions have size 1 -> reducer(broadcast(init), reshape(x)),
//     when the reducer is one elementwise binary op of its parameters;
//   some do -> reshape them away and reduce over the others.
// Each output element reduces the same input elements as before, so the
// result is exact.
bool SimplifyReduce(Rewriter& rw, HloInstruction* reduce) {
  if (reduce->operand_count() != 2 || !reduce->attrs().dimensions ||
      reduce->called_computations().size() != 1 || !reduce->shape().IsArray() ||
      !reduce->shape().is_static()) {
    return false;
  }
  HloInstruction* x = reduce->operand(0);
  HloInstruction* init = reduce->operand(1);
  const Shape& xs = x->shape();
  if (!xs.IsArray() || !xs.is_static() || !init->shape().IsScalar()) return false;
  const std::vector<int64_t>& dims = *reduce->attrs().dimensions;
  absl::flat_hash_set<int64_t> ones;
  for (int64_t d : dims) {
    if (d < 0 || d >= xs.rank()) return false;
    if (xs.dimensions(d) == 1) ones.insert(d);
  }
  if (ones.empty() && !dims.empty()) return false;
  // x without its size-1 reduced dimensions.
  std::vector<int64_t> squeezed_dims;
  std::vector<int64_t> new_index(xs.rank(), -1);
  for (int64_t d = 0; d < xs.rank(); ++d) {
    if (ones.contains(d)) continue;
    new_index[d] = static_cast<int64_t>(squeezed_dims.size());
    squeezed_dims.push_back(xs.dimensions(d));
  }
  Shape squeezed = Shape::Array(xs.element_type(), squeezed_dims);
  if (reduce->shape().has_layout()) squeezed.SetDefaultLayoutIfMissing();

  if (ones.size() == dims.size()) {
    bool swapped = false;
    const HloInstruction* op = BinaryReducer(*reduce->called_computations()[0], &swapped);
    if (op == nullptr || op->shape().element_type() != reduce->shape().element_type()) {
      return false;
    }
    HloInstruction* values = rw.Add(*reduce, HloOpcode::kReshape, reduce->shape(), {x});
    if (values == nullptr) return false;
    InstructionAttributes battrs;
    battrs.dimensions = std::vector<int64_t>{};
    HloInstruction* inits =
        rw.Add(*reduce, HloOpcode::kBroadcast, reduce->shape(), {init}, &battrs);
    if (inits == nullptr) return false;
    // reduce computes reducer(accumulator, element) starting from init.
    std::vector<HloInstruction*> operands = {inits, values};
    if (swapped) std::swap(operands[0], operands[1]);
    InstructionAttributes attrs = op->attrs();
    return rw.ReplaceWithNew(reduce,
                             rw.Add(*reduce, op->opcode(), reduce->shape(), operands, &attrs));
  }
  HloInstruction* reshaped = rw.Add(*reduce, HloOpcode::kReshape, squeezed, {x});
  if (reshaped == nullptr) return false;
  InstructionAttributes attrs = reduce->attrs();
  std::vector<int64_t> remaining;
  for (int64_t d : dims) {
    if (!ones.contains(d)) remaining.push_back(new_index[d]);
  }
  attrs.dimensions = remaining;
  HloInstruction* smaller = rw.Add(*reduce, HloOpcode::kReduce, reduce->shape(), {reshaped, init},
                                   &attrs, reduce->called_computations());
  return rw.ReplaceWithNew(reduce, smaller);
}

}  // namespace

bool SimplifyReduction(Rewriter& rw, HloInstruction* instr) {
  switch (instr->opcode()) {
    case HloOpcode::kDot:
      return SimplifyDot(rw, instr);
    case HloOpcode::kReduce:
      return SimplifyReduce(rw, instr);
    default:
      return false;
  }
}

}  // namespace algsimp_internal
}  // namespace xlite
