#include "xlite/passes/transpose_folding.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "xlite/ir/computation.h"
#include "xlite/passes/canonicalize_util.h"
#include "xlite/support/status.h"

namespace xlite {
namespace {

std::vector<int64_t> Mapped(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(perm[d]);
  return out;
}

bool Foldable(const HloInstruction& dot) {
  if (dot.opcode() != HloOpcode::kDot || dot.operand_count() != 2 ||
      !dot.attrs().dot_dimension_numbers || !dot.attrs().sparsity.empty() ||
      !dot.shape().IsArray()) {
    return false;
  }
  return true;
}

// Folds transposed operands into `dot`'s dimension numbers.
bool FoldOperandTransposes(HloInstruction* dot) {
  DotDimensionNumbers& dnums = *dot->attrs().dot_dimension_numbers;
  bool changed = false;
  for (int side = 0; side < 2; ++side) {
    HloInstruction* operand = dot->operand(side);
    if (operand->opcode() != HloOpcode::kTranspose || !operand->attrs().dimensions ||
        !operand->operand(0)->shape().IsArray()) {
      continue;
    }
    const std::vector<int64_t>& perm = *operand->attrs().dimensions;
    std::vector<int64_t>& batch =
        side == 0 ? dnums.lhs_batch_dimensions : dnums.rhs_batch_dimensions;
    std::vector<int64_t>& contracting =
        side == 0 ? dnums.lhs_contracting_dimensions : dnums.rhs_contracting_dimensions;
    const std::vector<int64_t> free =
        Mapped(canonicalize::DotFreeDimensions(operand->shape().rank(), batch, contracting), perm);
    if (!std::is_sorted(free.begin(), free.end())) continue;  // would reorder the result
    batch = Mapped(batch, perm);
    contracting = Mapped(contracting, perm);
    dot->ReplaceOperandWith(side, operand->operand(0));
    changed = true;
  }
  return changed;
}

// transpose(dot(a, b)) -> dot(b, a) where the permutation swaps the free
// blocks; returns the new dot or nullptr.
absl::StatusOr<bool> SwapTransposedResult(canonicalize::InstructionAdder& adder,
                                          HloInstruction* transpose) {
  if (transpose->opcode() != HloOpcode::kTranspose || !transpose->attrs().dimensions) {
    return false;
  }
  HloInstruction* dot = transpose->operand(0);
  if (!Foldable(*dot) || dot->users().size() != 1 || !dot->control_successors().empty() ||
      !dot->control_predecessors().empty() || dot == dot->parent()->root_instruction()) {
    return false;
  }
  const DotDimensionNumbers& d = *dot->attrs().dot_dimension_numbers;
  const int64_t batch = static_cast<int64_t>(d.lhs_batch_dimensions.size());
  const int64_t lhs_free = dot->operand(0)->shape().rank() - batch -
                           static_cast<int64_t>(d.lhs_contracting_dimensions.size());
  const int64_t rhs_free = dot->operand(1)->shape().rank() - batch -
                           static_cast<int64_t>(d.rhs_contracting_dimensions.size());
  if (lhs_free == 0 || rhs_free == 0) return false;  // nothing to swap
  std::vector<int64_t> swapped;
  for (int64_t i = 0; i < batch; ++i) swapped.push_back(i);
  for (int64_t i = 0; i < rhs_free; ++i) swapped.push_back(batch + lhs_free + i);
  for (int64_t i = 0; i < lhs_free; ++i) swapped.push_back(batch + i);
  if (*transpose->attrs().dimensions != swapped) return false;

  auto product = std::make_unique<HloInstruction>(HloOpcode::kDot, "", transpose->shape());
  product->AppendOperand(dot->operand(1));
  product->AppendOperand(dot->operand(0));
  DotDimensionNumbers dnums;
  dnums.lhs_batch_dimensions = d.rhs_batch_dimensions;
  dnums.rhs_batch_dimensions = d.lhs_batch_dimensions;
  dnums.lhs_contracting_dimensions = d.rhs_contracting_dimensions;
  dnums.rhs_contracting_dimensions = d.lhs_contracting_dimensions;
  product->attrs().dot_dimension_numbers = dnums;
  product->attrs().operand_precision = dot->attrs().operand_precision;
  std::reverse(product->attrs().operand_precision.begin(),
               product->attrs().operand_precision.end());
  product->attrs().algorithm = dot->attrs().algorithm;
  ASSIGN_OR_RETURN(HloInstruction * added, adder.Add(*dot, std::move(product), "transposed"));
  adder.Replace(transpose, added);
  dot->parent()->RemoveInstruction(dot);
  return true;
}

}  // namespace

absl::StatusOr<bool> TransposeFolding::Run(HloModule& module) {
  if (module.config().is_scheduled) return false;
  canonicalize::InstructionAdder adder(module);
  bool changed = false;
  for (const auto& computation : module.computations()) {
    if (computation->fusion_instruction() != nullptr) continue;
    std::vector<HloInstruction*> dots, transposes;
    for (const auto& instr : computation->instructions()) {
      if (Foldable(*instr)) dots.push_back(instr.get());
      if (instr->opcode() == HloOpcode::kTranspose) transposes.push_back(instr.get());
    }
    for (HloInstruction* dot : dots) changed |= FoldOperandTransposes(dot);
    for (HloInstruction* transpose : transposes) {
      ASSIGN_OR_RETURN(bool swapped, SwapTransposedResult(adder, transpose));
      changed |= swapped;
    }
  }
  return changed;
}

}  // namespace xlite
