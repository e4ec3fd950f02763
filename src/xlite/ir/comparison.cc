#include "xlite/ir/comparison.h"

#include "xlite/ir/instruction.h"

namespace xlite {

ComparisonOrder DefaultComparisonOrder(PrimitiveType operand_type) {
  return IsFloatingPoint(operand_type) || IsComplex(operand_type) ? ComparisonOrder::kPartial
                                                                  : ComparisonOrder::kTotal;
}

ComparisonOrder ComparisonTypeToOrder(ComparisonType type, PrimitiveType operand_type) {
  switch (type) {
    case ComparisonType::kFloat:
      return ComparisonOrder::kPartial;
    case ComparisonType::kTotalOrder:
    case ComparisonType::kSigned:
    case ComparisonType::kUnsigned:
      return ComparisonOrder::kTotal;
    case ComparisonType::kDefault:
      break;
  }
  return DefaultComparisonOrder(operand_type);
}

ComparisonOrder EffectiveComparisonOrder(const InstructionAttributes& attrs,
                                         PrimitiveType operand_type) {
  if (attrs.comparison_order) return *attrs.comparison_order;
  if (attrs.comparison_type) return ComparisonTypeToOrder(*attrs.comparison_type, operand_type);
  return DefaultComparisonOrder(operand_type);
}

absl::string_view ComparisonOrderShortString(ComparisonOrder order) {
  switch (order) {
    case ComparisonOrder::kTotal:
      return "TOTAL";
    case ComparisonOrder::kWeak:
      return "WEAK";
    case ComparisonOrder::kPartial:
      return "PARTIAL";
  }
  return "PARTIAL";
}

std::optional<ComparisonOrder> ComparisonOrderFromShortString(absl::string_view s) {
  if (s == "TOTAL") return ComparisonOrder::kTotal;
  if (s == "WEAK") return ComparisonOrder::kWeak;
  if (s == "PARTIAL") return ComparisonOrder::kPartial;
  return std::nullopt;
}

}  // namespace xlite
