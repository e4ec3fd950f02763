// Structural equality and hashing of instructions and computations, with the
// semantics of XLA's HloInstruction::Identical and HloComputation::Equal: what
// an instruction computes (opcode, shape with layout, operands, attributes,
// called computations), never its name, metadata, statistics or origin.
// CSE and fusion compare instructions with these, never by printed text.
#ifndef XLITE_IR_IDENTICAL_H_
#define XLITE_IR_IDENTICAL_H_

#include <cstddef>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "xlite/ir/computation.h"

namespace xlite {

using InstructionEq = absl::FunctionRef<bool(const HloInstruction*, const HloInstruction*)>;
using ComputationEq = absl::FunctionRef<bool(const HloComputation*, const HloComputation*)>;

// Binary ops whose operands may be swapped: the opcode table's commutative
// ones (add, multiply, and, or, xor, maximum, minimum, multiply-high) and
// compare EQ/NE.
bool IsCommutative(const HloInstruction& instr);

// Same opcode, shape (layout included), operands pairwise by `eq_operands`,
// semantic attributes (InstructionAttributes::SameSemantics) and called
// computations pairwise by `eq_computations`. A constant whose literal was
// elided ({...} in the text) is identical to itself only: its values are not
// known. Control edges are not compared.
bool Identical(const HloInstruction& a, const HloInstruction& b, InstructionEq eq_operands,
               ComputationEq eq_computations);
// As Identical, and a commutative op also matches with its operands swapped.
bool IdenticalIgnoringCommutativeOperandOrder(const HloInstruction& a, const HloInstruction& b,
                                              InstructionEq eq_operands,
                                              ComputationEq eq_computations);

// A hash consistent with both Identical functions whenever `hash_operand`
// gives equal operands (by `eq_operands`) equal hashes: opcode, shape,
// parameter number, constant bytes and operand hashes (in either order for a
// commutative op). Called computations are left out (they compare
// structurally).
size_t HashInstruction(const HloInstruction& instr,
                       absl::FunctionRef<size_t(const HloInstruction*)> hash_operand);

// Structural equality of computations (XLA's HloComputation::Equal): the same
// parameters (number and shapes) and execution thread, and a one-to-one
// pairing of their instructions, starting from the roots, under which paired
// instructions are Identical with paired operands and called computations
// equal by `eq_computations`. Conservative: false when an instruction is not
// reachable from the root or has control edges.
bool ComputationsIdentical(const HloComputation& a, const HloComputation& b,
                           ComputationEq eq_computations);

// ComputationsIdentical applied recursively to called computations, with the
// answers kept: one per pass, as CSE uses it.
class StructuralComputationEquality {
 public:
  bool operator()(const HloComputation* a, const HloComputation* b) const;

 private:
  // Answers remembered; callers hold the object const (a ComputationEq).
  mutable absl::flat_hash_map<std::pair<const HloComputation*, const HloComputation*>, bool> known_;
};

}  // namespace xlite

#endif  // XLITE_IR_IDENTICAL_H_
