// Rules on attribute values XLA checks when it builds an instruction: the
// compare order for the operand type, result_accuracy and the ops that may
// carry it. Each returns the broken rule, without the instruction's name
// (the verifier adds it).
#ifndef XLITE_VERIFY_ATTRIBUTE_RULES_H_
#define XLITE_VERIFY_ATTRIBUTE_RULES_H_

#include "absl/status/status.h"
#include "xlite/ir/instruction.h"

namespace xlite {

// Integer and pred comparisons are total orders (XLA's IsValidComparison);
// order=WEAK/PARTIAL and type=FLOAT are for floating-point operands.
absl::Status CheckCompareOrder(const HloInstruction& instr);

// result_accuracy= only on the transcendental unary ops XLA allows it on, and
// its tolerances are not negative (the StableHLO ResultAccuracy rule).
absl::Status CheckResultAccuracy(const HloInstruction& instr);

}  // namespace xlite

#endif  // XLITE_VERIFY_ATTRIBUTE_RULES_H_
