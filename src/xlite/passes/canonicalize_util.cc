#include "xlite/passes/canonicalize_util.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "xlite/ir/computation.h"
#include "xlite/support/status.h"
#include "xlite/verify/shape_inference.h"

namespace xlite::canonicalize {

InstructionAdder::InstructionAdder(const HloModule& module) {
  for (const auto& c : module.computations()) {
    for (const auto& i : c->instructions()) names_.insert(i->name());
  }
}

std::string InstructionAdder::UniqueName(const std::string& base) {
  std::string name = base;
  for (int n = 1; names_.contains(name); ++n) name = absl::StrCat(base, ".", n);
  names_.insert(name);
  return name;
}

absl::StatusOr<HloInstruction*> InstructionAdder::Add(const HloInstruction& like,
                                                      std::unique_ptr<HloInstruction> instr,
                                                      absl::string_view suffix) {
  absl::StatusOr<Shape> inferred = InferShape(*instr);
  if (!inferred.ok() || !shape_inference::Compatible(*inferred, instr->shape()) ||
      inferred->element_type() != instr->shape().element_type()) {
    const std::string shape = instr->shape().ToString();
    instr->DetachFromOperands();
    return Internal("canonicalizing ", like.name(), ": the new ", suffix, " ", shape,
                    " disagrees with shape inference (",
                    inferred.ok() ? inferred->ToString() : inferred.status().ToString(), ")");
  }
  instr->set_name(UniqueName(absl::StrCat(like.name(), ".", suffix)));
  instr->attrs().metadata = like.attrs().metadata;
  HloInstruction* added = like.parent()->AddInstruction(std::move(instr));
  added_.push_back(added);
  return added;
}

absl::StatusOr<HloInstruction*> InstructionAdder::Transpose(const HloInstruction& like,
                                                            HloInstruction* operand,
                                                            const std::vector<int64_t>& permutation,
                                                            absl::string_view suffix) {
  bool identity = true;
  for (size_t i = 0; i < permutation.size(); ++i) identity &= permutation[i] == int64_t(i);
  if (identity) return operand;
  const Shape& in = operand->shape();
  auto instr = std::make_unique<HloInstruction>(
      HloOpcode::kTranspose, "",
      ArrayShapeLike(in, in.element_type(), PermutedDims(in, permutation)));
  instr->attrs().dimensions = permutation;
  instr->AppendOperand(operand);
  return Add(like, std::move(instr), suffix);
}

absl::StatusOr<HloInstruction*> InstructionAdder::Reshape(const HloInstruction& like,
                                                          HloInstruction* operand,
                                                          const std::vector<int64_t>& dims,
                                                          absl::string_view suffix) {
  if (operand->shape().dimensions() == dims) return operand;
  auto instr = std::make_unique<HloInstruction>(
      HloOpcode::kReshape, "",
      ArrayShapeLike(operand->shape(), operand->shape().element_type(), dims));
  instr->AppendOperand(operand);
  return Add(like, std::move(instr), suffix);
}

void InstructionAdder::Replace(HloInstruction* old, HloInstruction* replacement) {
  HloComputation* computation = old->parent();
  computation->MoveInstructionsBefore(added_, old);
  added_.clear();
  old->ReplaceAllUsesWith(replacement);
  // Control edges keep their order through the replacement.
  for (HloInstruction* pred : std::vector<HloInstruction*>(old->control_predecessors())) {
    pred->AddControlDependencyTo(replacement);
  }
  for (HloInstruction* succ : std::vector<HloInstruction*>(old->control_successors())) {
    replacement->AddControlDependencyTo(succ);
  }
  old->DropControlDependencies();
  replacement->attrs().sharding = old->attrs().sharding;
  replacement->attrs().frontend_attributes = old->attrs().frontend_attributes;
  computation->RemoveInstruction(old);
}

Shape ArrayShapeLike(const Shape& like, PrimitiveType type, const std::vector<int64_t>& dims) {
  Shape shape = Shape::Array(type, dims);
  if (like.has_layout()) shape.SetDefaultLayoutIfMissing();
  return shape;
}

std::vector<int64_t> PermutedDims(const Shape& shape, const std::vector<int64_t>& order) {
  std::vector<int64_t> dims;
  for (int64_t d : order) dims.push_back(shape.dimensions(d));
  return dims;
}

std::vector<int64_t> DotFreeDimensions(int64_t rank, const std::vector<int64_t>& batch,
                                       const std::vector<int64_t>& contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
      free.push_back(d);
    }
  }
  return free;
}

}  // namespace xlite::canonicalize
