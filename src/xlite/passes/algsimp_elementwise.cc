// algsimp rules for elementwise ops (see algebraic_simplifier.h).
#include <cmath>

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

// x / c -> x * (1/c) for a constant c = +-2^k of f16, bf16, f32 or f64 whose
// reciprocal the type holds exactly (XLA turns every float constant divisor
// into a multiply; only these keep every result bit: x/c and x*(1/c) are then
// the same real number, rounded once). A multiply is cheap: the fusion pass
// recomputes it where read instead of storing it (a softmax's x/8, a mean's
// sum/1024).
bool SimplifyDivide(Rewriter& rw, HloInstruction* div) {
  const PrimitiveType t = div->shape().element_type();
  if (t != PrimitiveType::F16 && t != PrimitiveType::BF16 && t != PrimitiveType::F32 &&
      t != PrimitiveType::F64) {
    return false;
  }
  const Splat s = GetSplat(*div->operand(1));
  if (s.literal == nullptr || s.literal->shape().element_type() != t ||
      div->operand(0)->shape() != div->shape()) {
    return false;
  }
  const double c = s.literal->GetDouble(s.index);
  int exponent = 0;
  if (!std::isfinite(c) || c == 0 || std::fabs(std::frexp(c, &exponent)) != 0.5) return false;
  const double reciprocal = 1.0 / c;  // exact in double: a power of two
  Shape scalar = Shape::Scalar(t);
  if (div->shape().has_layout()) scalar.SetDefaultLayoutIfMissing();
  InstructionAttributes attrs;
  attrs.literal = Literal(scalar);
  attrs.literal->SetDouble(0, reciprocal);
  if (attrs.literal->GetDouble(0) != reciprocal) return false;  // beyond the type's range
  HloInstruction* factor = rw.Add(*div, HloOpcode::kConstant, scalar, {}, &attrs);
  if (factor == nullptr) return false;
  if (div->shape().rank() > 0) {
    InstructionAttributes battrs;
    battrs.dimensions = std::vector<int64_t>{};
    factor = rw.Add(*div, HloOpcode::kBroadcast, div->shape(), {factor}, &battrs);
    if (factor == nullptr) return false;
  }
  return rw.ReplaceWithNew(
      div, rw.Add(*div, HloOpcode::kMultiply, div->shape(), {div->operand(0), factor}));
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
    case HloOpcode::kDivide:
      return instr->operand_count() == 2 && SimplifyDivide(rw, instr);
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
