#include "xlite/ir/identical.h"

#include <vector>

#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"

namespace xlite {
namespace {

bool HasElidedLiteral(const HloInstruction& instr) {
  return instr.opcode() == HloOpcode::kConstant && instr.attrs().literal.has_value() &&
         instr.attrs().literal->elided();
}

// Everything but the operands.
bool IdenticalIgnoringOperands(const HloInstruction& a, const HloInstruction& b,
                               ComputationEq eq_computations) {
  if (&a == &b) return true;
  if (a.opcode() != b.opcode() || a.operand_count() != b.operand_count()) return false;
  if (!(a.shape() == b.shape())) return false;
  if (HasElidedLiteral(a) || HasElidedLiteral(b)) return false;
  if (!a.attrs().SameSemantics(b.attrs())) return false;
  if (a.called_computations().size() != b.called_computations().size()) return false;
  for (size_t i = 0; i < a.called_computations().size(); ++i) {
    const HloComputation* ca = a.called_computations()[i];
    const HloComputation* cb = b.called_computations()[i];
    if (ca == cb) continue;
    if (ca == nullptr || cb == nullptr || !eq_computations(ca, cb)) return false;
  }
  return true;
}

}  // namespace

bool IsCommutative(const HloInstruction& instr) {
  if (instr.operand_count() != 2) return false;
  if (HloOpcodeTraits(instr.opcode()) & kCommutative) return true;
  return instr.opcode() == HloOpcode::kCompare &&
         (instr.attrs().comparison_direction == ComparisonDirection::kEq ||
          instr.attrs().comparison_direction == ComparisonDirection::kNe);
}

bool Identical(const HloInstruction& a, const HloInstruction& b, InstructionEq eq_operands,
               ComputationEq eq_computations) {
  if (&a == &b) return true;
  if (!IdenticalIgnoringOperands(a, b, eq_computations)) return false;
  for (int64_t i = 0; i < a.operand_count(); ++i) {
    if (!eq_operands(a.operand(i), b.operand(i))) return false;
  }
  return true;
}

bool IdenticalIgnoringCommutativeOperandOrder(const HloInstruction& a, const HloInstruction& b,
                                              InstructionEq eq_operands,
                                              ComputationEq eq_computations) {
  if (&a == &b) return true;
  if (!IdenticalIgnoringOperands(a, b, eq_computations)) return false;
  if (IsCommutative(a) && eq_operands(a.operand(0), b.operand(1)) &&
      eq_operands(a.operand(1), b.operand(0))) {
    return true;
  }
  for (int64_t i = 0; i < a.operand_count(); ++i) {
    if (!eq_operands(a.operand(i), b.operand(i))) return false;
  }
  return true;
}

size_t HashInstruction(const HloInstruction& instr,
                       absl::FunctionRef<size_t(const HloInstruction*)> hash_operand) {
  const Shape& shape = instr.shape();
  size_t h = absl::HashOf(static_cast<int>(instr.opcode()), static_cast<int>(shape.element_type()),
                          shape.dimensions(), shape.tuple_shapes_size(), instr.operand_count());
  if (instr.opcode() == HloOpcode::kParameter) {
    h = absl::HashOf(h, instr.attrs().parameter_number);
  }
  if (instr.opcode() == HloOpcode::kConstant && instr.attrs().literal.has_value()) {
    const std::vector<uint8_t>& bytes = instr.attrs().literal->raw_data();
    h = absl::HashOf(h,
                     absl::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }
  if (IsCommutative(instr)) {
    // Either order hashes alike.
    const size_t x = hash_operand(instr.operand(0));
    const size_t y = hash_operand(instr.operand(1));
    return absl::HashOf(h, x < y ? x : y, x < y ? y : x);
  }
  for (const HloInstruction* op : instr.operands()) h = absl::HashOf(h, hash_operand(op));
  return h;
}

bool ComputationsIdentical(const HloComputation& a, const HloComputation& b,
                           ComputationEq eq_computations) {
  if (&a == &b) return true;
  if (a.num_parameters() != b.num_parameters() || a.instruction_count() != b.instruction_count() ||
      a.execution_thread() != b.execution_thread() ||
      a.IsAsyncComputation() != b.IsAsyncComputation() || a.root_instruction() == nullptr ||
      b.root_instruction() == nullptr) {
    return false;
  }
  // Pair instructions from the roots down: a worklist, not recursion (a
  // computation may be a chain of many thousands).
  absl::flat_hash_map<const HloInstruction*, const HloInstruction*> a_to_b;
  absl::flat_hash_map<const HloInstruction*, const HloInstruction*> b_to_a;
  std::vector<std::pair<const HloInstruction*, const HloInstruction*>> work = {
      {a.root_instruction(), b.root_instruction()}};
  while (!work.empty()) {
    auto [x, y] = work.back();
    work.pop_back();
    auto xy = a_to_b.find(x);
    auto yx = b_to_a.find(y);
    if (xy != a_to_b.end() || yx != b_to_a.end()) {
      // Paired already: only with each other.
      if (xy == a_to_b.end() || yx == b_to_a.end() || xy->second != y || yx->second != x) {
        return false;
      }
      continue;
    }
    if (x->HasControlEdges() || y->HasControlEdges()) {
      return false;
    }
    if (!IdenticalIgnoringOperands(*x, *y, eq_computations)) return false;
    a_to_b.emplace(x, y);
    b_to_a.emplace(y, x);
    for (int64_t i = 0; i < x->operand_count(); ++i) work.push_back({x->operand(i), y->operand(i)});
  }
  // Every instruction paired (none unreachable from the root), parameters by
  // number.
  if (static_cast<int64_t>(a_to_b.size()) != a.instruction_count()) return false;
  for (int64_t i = 0; i < a.num_parameters(); ++i) {
    auto it = a_to_b.find(a.parameter_instruction(i));
    if (it == a_to_b.end() || it->second != b.parameter_instruction(i)) return false;
  }
  return true;
}

bool StructuralComputationEquality::operator()(const HloComputation* a,
                                               const HloComputation* b) const {
  if (a == b) return true;
  if (a == nullptr || b == nullptr) return false;
  if (a > b) std::swap(a, b);
  if (auto it = known_.find({a, b}); it != known_.end()) return it->second;
  const bool equal = ComputationsIdentical(*a, *b, *this);
  known_[{a, b}] = equal;
  return equal;
}

}  // namespace xlite
