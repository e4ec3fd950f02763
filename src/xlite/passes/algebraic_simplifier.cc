#include "xlite/passes/algebraic_simplifier.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "xlite/verify/shape_inference.h"

namespace xlite {
namespace algsimp_internal {

Rewriter::Rewriter(HloModule& module) {
  for (const auto& c : module.computations()) {
    for (const auto& i : c->instructions()) names_.insert(i->name());
  }
}

std::string Rewriter::UniqueName(const std::string& base) {
  std::string name = absl::StrCat(base, ".simp");
  for (int n = 1; names_.contains(name); ++n) name = absl::StrCat(base, ".simp", n);
  names_.insert(name);
  return name;
}

bool Rewriter::Replace(HloInstruction* old, HloInstruction* replacement) {
  if (old == replacement || !(old->shape() == replacement->shape())) return false;
  old->ReplaceAllUsesWith(replacement);
  return true;
}

HloInstruction* Rewriter::Add(const HloInstruction& like, HloOpcode opcode, const Shape& shape,
                              const std::vector<HloInstruction*>& operands,
                              const InstructionAttributes* attrs,
                              const std::vector<HloComputation*>& called) {
  auto instr = std::make_unique<HloInstruction>(opcode, like.name(), shape);
  if (attrs != nullptr) instr->attrs() = *attrs;
  instr->attrs().metadata = like.attrs().metadata;
  instr->attrs().sharding.reset();
  if (shape == like.shape()) instr->attrs().sharding = like.attrs().sharding;
  for (HloInstruction* op : operands) instr->AppendOperand(op);
  instr->set_called_computations(called);
  absl::StatusOr<Shape> inferred = InferShape(*instr);
  if (!inferred.ok() || !shape.IsArray() || !shape.is_static() ||
      inferred->element_type() != shape.element_type() ||
      !shape_inference::Compatible(*inferred, shape)) {
    instr->DetachFromOperands();
    return nullptr;
  }
  instr->set_name(UniqueName(like.name()));
  return like.parent()->AddInstruction(std::move(instr));
}

HloInstruction* Rewriter::Zeros(const HloInstruction& like, const Shape& shape) {
  if (!shape.IsArray() || !shape.is_static()) return nullptr;
  Shape scalar = Shape::Scalar(shape.element_type());
  if (shape.has_layout()) scalar.SetDefaultLayoutIfMissing();
  InstructionAttributes attrs;
  attrs.literal = Literal(scalar);
  HloInstruction* zero = Add(like, HloOpcode::kConstant, scalar, {}, &attrs);
  if (zero == nullptr || shape.rank() == 0) return zero;
  InstructionAttributes battrs;
  battrs.dimensions = std::vector<int64_t>{};
  return Add(like, HloOpcode::kBroadcast, shape, {zero}, &battrs);
}

Splat GetSplat(const HloInstruction& instr) {
  if (instr.opcode() == HloOpcode::kBroadcast) {
    const HloInstruction& op = *instr.operand(0);
    if (op.opcode() != HloOpcode::kConstant || !op.shape().IsScalar()) return {};
    return GetSplat(op);
  }
  if (instr.opcode() != HloOpcode::kConstant || !instr.attrs().literal) return {};
  const Literal& lit = *instr.attrs().literal;
  if (lit.elided() || !lit.shape().IsArray() || !instr.shape().IsArray() ||
      lit.element_count() == 0 || lit.element_count() != instr.shape().ElementCount()) {
    return {};
  }
  const int stride = lit.element_stride();
  const uint8_t* data = lit.raw_data().data();
  for (int64_t i = 1; i < lit.element_count(); ++i) {
    if (std::memcmp(data, data + i * stride, stride) != 0) return {};
  }
  return {&lit, 0};
}

namespace {

bool Simplify(Rewriter& rw, HloInstruction* instr) {
  return SimplifyElementwise(rw, instr) || SimplifyShape(rw, instr) || SimplifyReduction(rw, instr);
}

}  // namespace
}  // namespace algsimp_internal

absl::StatusOr<bool> AlgebraicSimplifier::Run(HloModule& module) {
  algsimp_internal::Rewriter rw(module);
  bool changed = false;
  for (const auto& computation : module.computations()) {
    HloComputation* comp = computation.get();
    // Each round looks at the instructions there were at its start; a
    // rewrite may enable another on its users, so repeat to a fixed point.
    for (int round = 0; round < 32; ++round) {
      std::vector<HloInstruction*> snapshot;
      for (const auto& i : comp->instructions()) snapshot.push_back(i.get());
      bool progress = false;
      for (HloInstruction* instr : snapshot) {
        const bool live = !instr->users().empty() || comp->root_instruction() == instr;
        if (!live || !instr->control_predecessors().empty() ||
            !instr->control_successors().empty() || !instr->shape().IsArray()) {
          continue;
        }
        progress |= algsimp_internal::Simplify(rw, instr);
      }
      changed |= progress;
      if (!progress) break;
    }
  }
  return changed;
}

}  // namespace xlite
