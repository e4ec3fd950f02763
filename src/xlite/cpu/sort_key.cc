#include "xlite/cpu/sort_key.h"

#include <cmath>
#include <cstdint>

#include "xlite/ir/comparison.h"
#include "xlite/ir/computation.h"

namespace xlite::cpu {
namespace {

// A comparator operand: parameter `parameter`, after JAX's canonicalization
// where `nan_bits`/`zero_bits` are set.
struct KeyOperand {
  int64_t parameter = -1;
  std::optional<uint64_t> nan_bits, zero_bits;
};

bool IsScalarConstant(const HloInstruction* instr) {
  return instr->opcode() == HloOpcode::kConstant && instr->attrs().literal &&
         instr->shape().IsArray() && instr->shape().rank() == 0 &&
         !instr->attrs().literal->elided();
}

// compare(a, b) with `direction` under IEEE (partial) order.
bool IsIeeeCompare(const HloInstruction* instr, ComparisonDirection direction) {
  return instr->opcode() == HloOpcode::kCompare &&
         instr->attrs().comparison_direction == direction &&
         EffectiveComparisonOrder(instr->attrs(), instr->operand(0)->shape().element_type()) ==
             ComparisonOrder::kPartial;
}

std::optional<KeyOperand> MatchKeyOperand(const HloInstruction* instr) {
  if (instr->opcode() == HloOpcode::kParameter) {
    return KeyOperand{instr->attrs().parameter_number, std::nullopt, std::nullopt};
  }
  // select(ne(x, x), nan, select(eq(x, zero), zero, x))
  if (instr->opcode() != HloOpcode::kSelect) return std::nullopt;
  const HloInstruction* is_nan = instr->operand(0);
  const HloInstruction* nan = instr->operand(1);
  const HloInstruction* inner = instr->operand(2);
  if (inner->opcode() != HloOpcode::kSelect) return std::nullopt;
  const HloInstruction* x = inner->operand(2);
  const HloInstruction* is_zero = inner->operand(0);
  const HloInstruction* zero = inner->operand(1);
  if (x->opcode() != HloOpcode::kParameter || !IsIeeeCompare(is_nan, ComparisonDirection::kNe) ||
      is_nan->operand(0) != x || is_nan->operand(1) != x ||
      !IsIeeeCompare(is_zero, ComparisonDirection::kEq) || !IsScalarConstant(nan) ||
      !IsScalarConstant(zero) || !std::isnan(nan->attrs().literal->GetDouble(0)) ||
      zero->attrs().literal->GetDouble(0) != 0) {
    return std::nullopt;
  }
  const bool zero_compared = (is_zero->operand(0) == x && is_zero->operand(1) == zero) ||
                             (is_zero->operand(1) == x && is_zero->operand(0) == zero);
  if (!zero_compared) return std::nullopt;
  return KeyOperand{x->attrs().parameter_number, nan->attrs().literal->GetBits(0),
                    zero->attrs().literal->GetBits(0)};
}

}  // namespace

std::optional<hostlib::SortKey> SortKeyOf(const HloInstruction& sort) {
  if (sort.called_computations().size() != 1 || sort.called_computations()[0] == nullptr) {
    return std::nullopt;
  }
  const HloInstruction* root = sort.called_computations()[0]->root_instruction();
  if (root == nullptr || root->opcode() != HloOpcode::kCompare) return std::nullopt;
  const ComparisonDirection direction = root->attrs().comparison_direction;
  if (direction != ComparisonDirection::kLt && direction != ComparisonDirection::kGt) {
    return std::nullopt;
  }
  const std::optional<KeyOperand> lhs = MatchKeyOperand(root->operand(0));
  const std::optional<KeyOperand> rhs = MatchKeyOperand(root->operand(1));
  if (!lhs || !rhs || lhs->nan_bits != rhs->nan_bits || lhs->zero_bits != rhs->zero_bits ||
      lhs->parameter / 2 != rhs->parameter / 2 || lhs->parameter == rhs->parameter) {
    return std::nullopt;
  }
  const int64_t operand = lhs->parameter / 2;
  if (operand >= sort.operand_count()) return std::nullopt;
  const PrimitiveType type = sort.operand(operand)->shape().element_type();
  const std::optional<hostlib::ElementType> key_type =
      hostlib::ElementTypeFromName(PrimitiveTypeName(type));
  if (!key_type || !hostlib::SortByKeySupports(*key_type)) return std::nullopt;

  hostlib::SortKey key;
  key.operand = static_cast<int>(operand);
  key.type = *key_type;
  // compare(rhs parameter, lhs parameter) LT is "lhs greater".
  const bool swapped = lhs->parameter % 2 == 1;
  key.descending = (direction == ComparisonDirection::kGt) != swapped;
  const ComparisonOrder order = EffectiveComparisonOrder(root->attrs(), type);
  if (!hostlib::IsFloatType(*key_type)) {
    const std::optional<ComparisonType> written = root->attrs().comparison_type;
    const bool is_signed = hostlib::IsSignedIntegerType(*key_type);
    if (lhs->nan_bits || (written == ComparisonType::kSigned && !is_signed) ||
        (written == ComparisonType::kUnsigned && is_signed)) {
      return std::nullopt;
    }
    return key;
  }
  switch (order) {
    case ComparisonOrder::kPartial:
      // The canonicalization changes nothing IEEE sees (a NaN stays a NaN,
      // which SortByKey declines; zeros are equal anyway).
      key.ieee = true;
      break;
    case ComparisonOrder::kTotal:
      key.nan_bits = lhs->nan_bits;
      key.zero_bits = lhs->zero_bits;
      break;
    case ComparisonOrder::kWeak: {
      // Every NaN equal and above +inf, -0 == +0: the largest positive NaN
      // stands for all of them.
      const int bits = hostlib::ElementBitWidth(*key_type);
      key.nan_bits = (bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1) >> 1;
      key.zero_bits = 0;
      break;
    }
  }
  return key;
}

}  // namespace xlite::cpu
