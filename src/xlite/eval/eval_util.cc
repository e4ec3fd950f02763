#include "xlite/eval/eval_util.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "xlite/eval/evaluator.h"
#include "xlite/ir/opcode.h"
#include "xlite/verify/shape_inference.h"

namespace xlite::eval {

namespace {

bool HasUnboundedDimension(const Shape& s) {
  for (const Shape& e : s.tuple_shapes()) {
    if (HasUnboundedDimension(e)) return true;
  }
  for (int64_t d : s.dimensions()) {
    if (d < 0) return true;
  }
  return false;
}

// Result arrays beyond this many elements are refused rather than allocated
// (a huge padding can declare an enormous result from tiny operands).
constexpr int64_t kMaxResultElements = int64_t{1} << 32;

// Elements of all arrays in `s`, saturating at kMaxResultElements + 1.
int64_t TotalElements(const Shape& s) {
  if (s.IsTuple()) {
    int64_t total = 0;
    for (const Shape& e : s.tuple_shapes()) {
      total = std::min(total + TotalElements(e), kMaxResultElements + 1);
    }
    return total;
  }
  int64_t n = 1;
  for (int64_t d : s.dimensions()) {
    if (d == 0) return 0;
    if (n > (kMaxResultElements + 1) / d) return kMaxResultElements + 1;
    n *= d;
  }
  return n;
}

}  // namespace

std::vector<int64_t> OffsetTable(const std::vector<int64_t>& sizes,
                                 const std::vector<int64_t>& strides) {
  std::vector<int64_t> offsets;
  offsets.reserve(Product(sizes));
  MultiIndex index(sizes);
  for (int64_t n = Product(sizes); n > 0; --n, index.Next()) {
    int64_t offset = 0;
    for (size_t d = 0; d < sizes.size(); ++d) offset += index[d] * strides[d];
    offsets.push_back(offset);
  }
  return offsets;
}

absl::Status CheckOperandValues(const HloInstruction& instr,
                                absl::Span<const Literal* const> operands) {
  if (static_cast<int64_t>(operands.size()) != instr.operand_count()) {
    return InvalidArgument(Where(instr), "got ", operands.size(), " operand values for ",
                           instr.operand_count(), " operands");
  }
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    if (!SameDimensionsAndType(operands[i]->shape(), instr.operand(i)->shape())) {
      return InvalidArgument(Where(instr), "operand ", i, " has value of shape ",
                             operands[i]->shape().ToString(false), " but is declared ",
                             instr.operand(i)->shape().ToString(false));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckDeclaredShape(const HloInstruction& instr, const Shape& expected) {
  if (!shape_inference::Compatible(expected, instr.shape())) {
    return InvalidArgument(Where(instr), "declared shape ", instr.shape().ToString(false),
                           " does not match the inferred shape ", expected.ToString(false));
  }
  if (HasUnboundedDimension(instr.shape())) return Unsupported(instr, "unbounded dimensions");
  if (TotalElements(instr.shape()) > kMaxResultElements) {
    return absl::ResourceExhaustedError(absl::StrCat(
        Where(instr), "result ", instr.shape().ToString(false), " is too large to evaluate"));
  }
  return absl::OkStatus();
}

absl::Status CheckShapes(const HloInstruction& instr, absl::Span<const Literal* const> operands) {
  RETURN_IF_ERROR(CheckOperandValues(instr, operands));
  ASSIGN_OR_RETURN(Shape inferred, InferShape(instr));
  return CheckDeclaredShape(instr, inferred);
}

bool SameDimensionsAndType(const Shape& a, const Shape& b) {
  if (a.element_type() != b.element_type()) return false;
  if (a.IsTuple()) {
    if (a.tuple_shapes_size() != b.tuple_shapes_size()) return false;
    for (int64_t i = 0; i < a.tuple_shapes_size(); ++i) {
      if (!SameDimensionsAndType(a.tuple_shapes(i), b.tuple_shapes(i))) return false;
    }
    return true;
  }
  return a.dimensions() == b.dimensions();
}

std::string Where(const HloInstruction& instr) {
  return absl::StrCat(HloOpcodeString(instr.opcode()), " '", instr.name(), "': ");
}

Literal ScalarAt(const Literal& array, int64_t i) {
  Literal scalar(Shape::Scalar(array.shape().element_type()));
  CopyElement(array, i, scalar, 0);
  return scalar;
}

std::vector<const HloInstruction*> PostOrder(const HloComputation& computation) {
  std::vector<HloInstruction*> order = computation.MakeInstructionPostOrder();
  return {order.begin(), order.end()};
}

std::unique_ptr<HloComputation> LiftToArrays(const HloComputation& scalar_computation,
                                             const std::vector<int64_t>& dimensions) {
  const HloInstruction* root = scalar_computation.root_instruction();
  if (root == nullptr) return nullptr;
  for (const auto& instr : scalar_computation.instructions()) {
    const HloOpcode op = instr->opcode();
    if (op == HloOpcode::kTuple && instr.get() == root) {
      for (const HloInstruction* element : instr->operands()) {
        if (element->opcode() == HloOpcode::kTuple) return nullptr;
      }
      continue;
    }
    const bool liftable = op == HloOpcode::kParameter ||
                          (op == HloOpcode::kConstant && instr->attrs().literal.has_value()) ||
                          (IsElementwiseOpcode(op) && op != HloOpcode::kStochasticConvert);
    if (!liftable || !instr->shape().IsArray() || instr->shape().rank() != 0 ||
        !instr->called_computations().empty() || !instr->control_predecessors().empty()) {
      return nullptr;
    }
  }
  for (const HloInstruction* p : scalar_computation.parameter_instructions()) {
    if (p == nullptr) return nullptr;
  }
  auto ArrayOf = [&](const Shape& scalar) {
    return Shape::Array(scalar.element_type(), dimensions);
  };
  auto lifted =
      std::make_unique<HloComputation>(absl::StrCat(scalar_computation.name(), ".lifted"));
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
  for (const HloInstruction* instr : PostOrder(scalar_computation)) {
    std::unique_ptr<HloInstruction> copy;
    if (instr->opcode() == HloOpcode::kConstant) {
      // broadcast(constant): the scalar constant stays, its users see an array.
      auto scalar = std::make_unique<HloInstruction>(
          HloOpcode::kConstant, absl::StrCat(instr->name(), ".scalar"), instr->shape());
      scalar->attrs().literal = instr->attrs().literal;
      HloInstruction* constant = lifted->AddInstruction(std::move(scalar));
      copy = std::make_unique<HloInstruction>(HloOpcode::kBroadcast, instr->name(),
                                              ArrayOf(instr->shape()));
      copy->attrs().dimensions = std::vector<int64_t>{};
      copy->AppendOperand(constant);
    } else if (instr->opcode() == HloOpcode::kTuple) {
      std::vector<Shape> elements;
      for (const HloInstruction* op : instr->operands()) elements.push_back(ArrayOf(op->shape()));
      copy = std::make_unique<HloInstruction>(HloOpcode::kTuple, instr->name(),
                                              Shape::Tuple(std::move(elements)));
      for (const HloInstruction* op : instr->operands()) copy->AppendOperand(map.at(op));
    } else {
      copy =
          std::make_unique<HloInstruction>(instr->opcode(), instr->name(), ArrayOf(instr->shape()));
      copy->attrs() = instr->attrs();
      for (const HloInstruction* op : instr->operands()) copy->AppendOperand(map.at(op));
    }
    HloInstruction* added = lifted->AddInstruction(std::move(copy));
    map[instr] = added;
    if (instr->opcode() == HloOpcode::kParameter) {
      lifted->SetParameter(instr->attrs().parameter_number, added);
    }
  }
  lifted->set_root_instruction(map.at(root));
  return lifted;
}

absl::StatusOr<Literal> ArrayResult(const HloInstruction& instr) {
  if (!instr.shape().IsArray()) {
    return InvalidArgument(Where(instr), "result must be an array, got ",
                           instr.shape().ToString(false));
  }
  for (int64_t d : instr.shape().dimensions()) {
    if (d < 0) return Unsupported(instr, "unbounded dynamic dimension");
  }
  return ResultLiteral(instr);
}

}  // namespace xlite::eval
