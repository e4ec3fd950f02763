#include "xlite/passes/dot_decomposer.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "xlite/ir/computation.h"
#include "xlite/passes/canonicalize_util.h"
#include "xlite/support/status.h"

namespace xlite {
namespace {

using canonicalize::ArrayShapeLike;
using canonicalize::InstructionAdder;

const DotDimensionNumbers& DimensionNumbers(const HloInstruction& dot) {
  static const DotDimensionNumbers kNone;
  return dot.attrs().dot_dimension_numbers ? *dot.attrs().dot_dimension_numbers : kNone;
}

int64_t Product(const Shape& shape, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= shape.dimensions(d);
  return p;
}

std::vector<int64_t> Concat(std::vector<int64_t> a, const std::vector<int64_t>& b,
                            const std::vector<int64_t>& c) {
  a.insert(a.end(), b.begin(), b.end());
  a.insert(a.end(), c.begin(), c.end());
  return a;
}

bool IsIdentity(const std::vector<int64_t>& permutation) {
  for (size_t i = 0; i < permutation.size(); ++i) {
    if (permutation[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

bool Rewritable(const HloInstruction& dot) {
  if (dot.opcode() != HloOpcode::kDot || !dot.attrs().sparsity.empty()) return false;
  if (dot.operand_count() != 2 || !dot.shape().IsArray() || !dot.shape().is_static()) return false;
  for (const HloInstruction* op : dot.operands()) {
    if (!op->shape().IsArray() || !op->shape().is_static()) return false;
  }
  return !IsCanonicalDot(dot);
}

absl::Status Decompose(InstructionAdder& adder, HloInstruction* dot) {
  const DotDimensionNumbers& dnums = DimensionNumbers(*dot);
  HloInstruction* lhs = dot->operand(0);
  HloInstruction* rhs = dot->operand(1);
  const Shape& ls = lhs->shape();
  const Shape& rs = rhs->shape();
  const std::vector<int64_t> lhs_free = canonicalize::DotFreeDimensions(
      ls.rank(), dnums.lhs_batch_dimensions, dnums.lhs_contracting_dimensions);
  const std::vector<int64_t> rhs_free = canonicalize::DotFreeDimensions(
      rs.rank(), dnums.rhs_batch_dimensions, dnums.rhs_contracting_dimensions);
  const bool batched = !dnums.lhs_batch_dimensions.empty();
  const int64_t b = Product(ls, dnums.lhs_batch_dimensions);
  const int64_t m = Product(ls, lhs_free);
  const int64_t k = Product(ls, dnums.lhs_contracting_dimensions);
  const int64_t n = Product(rs, rhs_free);

  // An operand already in (batch, contracting, free) order for the lhs, or
  // (batch, free, contracting) for the rhs, stays as it is: the matmul reads
  // it transposed.
  const std::vector<int64_t> lhs_order =
      Concat(dnums.lhs_batch_dimensions, lhs_free, dnums.lhs_contracting_dimensions);
  const std::vector<int64_t> lhs_order_t =
      Concat(dnums.lhs_batch_dimensions, dnums.lhs_contracting_dimensions, lhs_free);
  const std::vector<int64_t> rhs_order =
      Concat(dnums.rhs_batch_dimensions, dnums.rhs_contracting_dimensions, rhs_free);
  const std::vector<int64_t> rhs_order_t =
      Concat(dnums.rhs_batch_dimensions, rhs_free, dnums.rhs_contracting_dimensions);
  const bool lhs_transposed = !IsIdentity(lhs_order) && IsIdentity(lhs_order_t);
  const bool rhs_transposed = !IsIdentity(rhs_order) && IsIdentity(rhs_order_t);
  ASSIGN_OR_RETURN(
      HloInstruction * lhs_t,
      adder.Transpose(*dot, lhs, lhs_transposed ? lhs_order_t : lhs_order, "lhs_transpose"));
  ASSIGN_OR_RETURN(
      HloInstruction * rhs_t,
      adder.Transpose(*dot, rhs, rhs_transposed ? rhs_order_t : rhs_order, "rhs_transpose"));
  std::vector<int64_t> lhs_dims = {m, k}, rhs_dims = {k, n}, out_dims = {m, n};
  if (lhs_transposed) lhs_dims = {k, m};
  if (rhs_transposed) rhs_dims = {n, k};
  if (batched) {
    lhs_dims.insert(lhs_dims.begin(), b);
    rhs_dims.insert(rhs_dims.begin(), b);
    out_dims.insert(out_dims.begin(), b);
  }
  ASSIGN_OR_RETURN(HloInstruction * lhs_r, adder.Reshape(*dot, lhs_t, lhs_dims, "lhs_reshape"));
  ASSIGN_OR_RETURN(HloInstruction * rhs_r, adder.Reshape(*dot, rhs_t, rhs_dims, "rhs_reshape"));

  auto canonical = std::make_unique<HloInstruction>(
      HloOpcode::kDot, "", ArrayShapeLike(dot->shape(), dot->shape().element_type(), out_dims));
  canonical->AppendOperand(lhs_r);
  canonical->AppendOperand(rhs_r);
  DotDimensionNumbers canonical_dnums;
  if (batched) {
    canonical_dnums.lhs_batch_dimensions = {0};
    canonical_dnums.rhs_batch_dimensions = {0};
  }
  const int64_t first = batched ? 1 : 0;  // the first non-batch dimension
  canonical_dnums.lhs_contracting_dimensions = {lhs_transposed ? first : first + 1};
  canonical_dnums.rhs_contracting_dimensions = {rhs_transposed ? first + 1 : first};
  canonical->attrs().dot_dimension_numbers = canonical_dnums;
  canonical->attrs().operand_precision = dot->attrs().operand_precision;
  canonical->attrs().algorithm = dot->attrs().algorithm;
  ASSIGN_OR_RETURN(HloInstruction * new_dot, adder.Add(*dot, std::move(canonical), "canonical"));

  HloInstruction* result = new_dot;
  if (new_dot->shape().dimensions() != dot->shape().dimensions()) {
    auto reshape = std::make_unique<HloInstruction>(HloOpcode::kReshape, "", dot->shape());
    reshape->AppendOperand(new_dot);
    ASSIGN_OR_RETURN(result, adder.Add(*dot, std::move(reshape), "reshape"));
  } else if (!(new_dot->shape() == dot->shape())) {
    new_dot->mutable_shape() = dot->shape();  // same dimensions: keep the dot's layout
  }
  adder.Replace(dot, result);
  return absl::OkStatus();
}

}  // namespace

bool IsCanonicalDot(const HloInstruction& dot) {
  if (dot.opcode() != HloOpcode::kDot || dot.operand_count() != 2) return false;
  const DotDimensionNumbers& d = DimensionNumbers(dot);
  const int64_t lhs_rank = dot.operand(0)->shape().rank();
  const int64_t rhs_rank = dot.operand(1)->shape().rank();
  // One contracting dimension in either of the two last places.
  auto contracts_one_of_the_last_two = [](const std::vector<int64_t>& dims, int64_t rank) {
    return dims.size() == 1 && (dims[0] == rank - 1 || dims[0] == rank - 2);
  };
  if (!contracts_one_of_the_last_two(d.lhs_contracting_dimensions, lhs_rank) ||
      !contracts_one_of_the_last_two(d.rhs_contracting_dimensions, rhs_rank)) {
    return false;
  }
  if (d.lhs_batch_dimensions.empty()) {
    return lhs_rank == 2 && rhs_rank == 2 && d.rhs_batch_dimensions.empty();
  }
  return lhs_rank == 3 && rhs_rank == 3 && d.lhs_batch_dimensions == std::vector<int64_t>{0} &&
         d.rhs_batch_dimensions == std::vector<int64_t>{0};
}

CanonicalDotDims DimsOfCanonicalDot(const HloInstruction& dot) {
  const DotDimensionNumbers& d = DimensionNumbers(dot);
  const std::vector<int64_t>& lhs = dot.operand(0)->shape().dimensions();
  const std::vector<int64_t>& rhs = dot.operand(1)->shape().dimensions();
  const int64_t rank = static_cast<int64_t>(lhs.size());
  CanonicalDotDims dims;
  dims.batch = rank == 3 ? lhs[0] : 1;
  dims.lhs_transposed = d.lhs_contracting_dimensions[0] == rank - 2;
  dims.rhs_transposed = d.rhs_contracting_dimensions[0] == rank - 1;
  dims.m = dims.lhs_transposed ? lhs[rank - 1] : lhs[rank - 2];
  dims.k = dims.lhs_transposed ? lhs[rank - 2] : lhs[rank - 1];
  dims.n = dims.rhs_transposed ? rhs[rank - 2] : rhs[rank - 1];
  return dims;
}

absl::StatusOr<bool> DotDecomposer::Run(HloModule& module) {
  InstructionAdder adder(module);
  bool changed = false;
  for (const auto& computation : module.computations()) {
    if (computation->fusion_instruction() != nullptr) continue;
    std::vector<HloInstruction*> dots;
    for (const auto& instr : computation->instructions()) {
      if (Rewritable(*instr)) dots.push_back(instr.get());
    }
    for (HloInstruction* dot : dots) {
      RETURN_IF_ERROR(Decompose(adder, dot));
      changed = true;
    }
  }
  return changed;
}

}  // namespace xlite
