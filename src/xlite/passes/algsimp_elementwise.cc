// algsimp rules for elementwise ops (see algebraic_simplifier.h).
#include "xlite/passes/algebraic_simplifier.h"

namespace xlite {
namespace algsimp_internal {
namespace {

bool IsSplatInt(const HloInstruction& instr, int64_t value) {
  Splat s = GetSplat(instr);
  if (s.literal == nullptr) return false;
  const PrimitiveType t = s.literal->shape().element_type();
  if (!IsInteger(t) && t != PrimitiveType::PRED) return false;
  return s.literal->GetInt(s.index) == value;
}

bool IsSplatOne(const HloInstruction& instr) {
  Splat s = GetSplat(instr);
  if (s.literal == nullptr) return false;
  const PrimitiveType t = s.literal->shape().element_type();
  if (IsFloatingPoint(t)) return s.literal->GetDouble(s.index) == 1.0;
  if (IsInteger(t) || t == PrimitiveType::PRED) return s.literal->GetInt(s.index) == 1;
  return false;
}

// x + 0 -> x for integers (for floats, -0.0 + 0.0 is +0.0).
bool SimplifyAdd(Rewriter& rw, HloInstruction* add) {
  if (!IsInteger(add->shape().element_type())) return false;
  for (int i = 0; i < 2; ++i) {
    HloInstruction* x = add->operand(1 - i);
    if (IsSplatInt(*add->operand(i), 0) && rw.Replace(add, x)) return true;
  }
  return false;
}

// x * 1 -> x for pred, integers and real floats (exact, NaN stays NaN);
// not for complex.
bool SimplifyMultiply(Rewriter& rw, HloInstruction* mul) {
  const PrimitiveType t = mul->shape().element_type();
  if (!IsInteger(t) && !IsFloatingPoint(t) && t != PrimitiveType::PRED) return false;
  for (int i = 0; i < 2; ++i) {
    HloInstruction* x = mul->operand(1 - i);
    if (x->shape().element_type() != t) continue;
    if (IsSplatOne(*mul->operand(i)) && rw.Replace(mul, x)) return true;
  }
  return false;
}

// x - x -> 0 for integers (inf - inf and NaN - NaN are NaN).
bool SimplifySubtract(Rewriter& rw, HloInstruction* sub) {
  if (!IsInteger(sub->shape().element_type()) || sub->operand(0) != sub->operand(1)) return false;
  return rw.ReplaceWithNew(sub, rw.Zeros(*sub, sub->shape()));
}

// op(op(x)) -> x for involutions (negate, not).
bool SimplifyInvolution(Rewriter& rw, HloInstruction* instr) {
  HloInstruction* inner = instr->operand(0);
  if (inner->opcode() != instr->opcode()) return false;
  return rw.Replace(instr, inner->operand(0));
}

bool SimplifySelect(Rewriter& rw, HloInstruction* select) {
  Splat s = GetSplat(*select->operand(0));
  if (s.literal == nullptr || s.literal->shape().element_type() != PrimitiveType::PRED) {
    return false;
  }
  return rw.Replace(select, select->operand(s.literal->GetInt(s.index) != 0 ? 1 : 2));
}

}  // namespace

bool SimplifyElementwise(Rewriter& rw, HloInstruction* instr) {
  switch (instr->opcode()) {
    case HloOpcode::kAdd:
      return instr->operand_count() == 2 && SimplifyAdd(rw, instr);
    case HloOpcode::kMultiply:
      return instr->operand_count() == 2 && SimplifyMultiply(rw, instr);
    case HloOpcode::kSubtract:
      return instr->operand_count() == 2 && SimplifySubtract(rw, instr);
    case HloOpcode::kNegate:
    case HloOpcode::kNot:
      return instr->operand_count() == 1 && SimplifyInvolution(rw, instr);
    case HloOpcode::kSelect:
      return instr->operand_count() == 3 && SimplifySelect(rw, instr);
    default:
      return false;
  }
}

}  // namespace algsimp_internal
}  // namespace xlite
