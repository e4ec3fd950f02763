#include "xlite/eval/eval_util.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "xlite/ir/opcode.h"

namespace xlite::eval {

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

std::string Where(const HloInstruction& instr) {
  return absl::StrCat(HloOpcodeString(instr.opcode()), " '", instr.name(), "': ");
}

Literal ScalarAt(const Literal& array, int64_t i) {
  Literal scalar(Shape::Scalar(array.shape().element_type()));
  CopyElement(array, i, scalar, 0);
  return scalar;
}

namespace {

// The computation's instructions, each after its operands.
std::vector<const HloInstruction*> OperandsFirst(const HloComputation& computation) {
  std::vector<const HloInstruction*> order;
  absl::flat_hash_map<const HloInstruction*, bool> seen;
  for (const auto& start : computation.instructions()) {
    std::vector<std::pair<const HloInstruction*, size_t>> stack;
    if (!seen.emplace(start.get(), true).second) continue;
    stack.push_back({start.get(), 0});
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next == static_cast<size_t>(node->operand_count())) {
        order.push_back(node);
        stack.pop_back();
        continue;
      }
      const HloInstruction* op = node->operand(next++);
      if (seen.emplace(op, true).second) stack.push_back({op, 0});
    }
  }
  return order;
}

}  // namespace

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
  for (const HloInstruction* instr : OperandsFirst(scalar_computation)) {
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

}  // namespace xlite::eval
