#include "xlite/stablehlo/hlo_emitter.h"

#include "absl/strings/str_cat.h"
#include "xlite/support/status.h"
#include "xlite/verify/shape_inference.h"

namespace xlite::stablehlo {

std::unique_ptr<HloInstruction> HloEmitter::Make(HloOpcode opcode,
                                                 absl::Span<HloInstruction* const> operands,
                                                 const Shape& shape) {
  auto instr = std::make_unique<HloInstruction>(
      opcode, absl::StrCat(HloOpcodeString(opcode), ".", (*name_counter_)++), shape);
  for (HloInstruction* operand : operands) instr->AppendOperand(operand);
  return instr;
}

absl::StatusOr<HloInstruction*> HloEmitter::Add(std::unique_ptr<HloInstruction> instr, bool infer) {
  instr->set_parent(computation_);
  if (infer) {
    absl::StatusOr<Shape> shape = InferShape(*instr);
    if (!shape.ok()) {
      instr->DetachFromOperands();
      return shape.status();
    }
    instr->mutable_shape() = *std::move(shape);
  }
  instr->mutable_shape().SetDefaultLayoutIfMissing();
  return computation_->AddInstruction(std::move(instr));
}

absl::StatusOr<HloInstruction*> HloEmitter::Op(HloOpcode opcode,
                                               absl::Span<HloInstruction* const> operands) {
  return Add(Make(opcode, operands));
}

absl::StatusOr<HloInstruction*> HloEmitter::Compare(ComparisonDirection direction,
                                                    HloInstruction* lhs, HloInstruction* rhs) {
  auto instr = Make(HloOpcode::kCompare, {lhs, rhs});
  instr->attrs().comparison_direction = direction;
  return Add(std::move(instr));
}

absl::StatusOr<HloInstruction*> HloEmitter::Convert(HloInstruction* x, PrimitiveType type) {
  if (x->shape().element_type() == type) return x;
  Shape shape = x->shape();
  shape.set_element_type(type);
  return Add(Make(HloOpcode::kConvert, {x}, shape), /*infer=*/false);
}

absl::StatusOr<HloInstruction*> HloEmitter::Constant(Literal literal) {
  Shape shape = literal.shape();
  auto instr = Make(HloOpcode::kConstant, {}, shape);
  instr->attrs().literal = std::move(literal);
  return Add(std::move(instr), /*infer=*/false);
}

absl::StatusOr<HloInstruction*> HloEmitter::Splat(HloInstruction* like, double value) {
  const PrimitiveType type = like->shape().element_type();
  Literal scalar(Shape::Scalar(type));
  if (IsComplex(type)) {
    scalar.SetComplex(0, {value, 0});
  } else if (IsFloatingPoint(type)) {
    scalar.SetDouble(0, value);
  } else {
    scalar.SetInt(0, static_cast<int64_t>(value));
  }
  ASSIGN_OR_RETURN(HloInstruction * constant, Constant(std::move(scalar)));
  if (like->shape().rank() == 0) return constant;
  return Broadcast(constant, like->shape(), {});
}

absl::StatusOr<HloInstruction*> HloEmitter::Broadcast(HloInstruction* x, const Shape& shape,
                                                      absl::Span<const int64_t> dimensions) {
  Shape result = shape;
  result.set_element_type(x->shape().element_type());
  auto instr = Make(HloOpcode::kBroadcast, {x}, result);
  instr->attrs().dimensions = std::vector<int64_t>(dimensions.begin(), dimensions.end());
  return Add(std::move(instr));
}

absl::StatusOr<HloInstruction*> HloEmitter::Select(HloInstruction* pred, HloInstruction* on_true,
                                                   HloInstruction* on_false) {
  return Op(HloOpcode::kSelect, {pred, on_true, on_false});
}

}  // namespace xlite::stablehlo
