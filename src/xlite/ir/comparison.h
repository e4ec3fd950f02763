// The order a compare instruction uses (XLA's Comparison::Order): PARTIAL is
// IEEE comparison, TOTAL orders -NaN < -inf < ... < -0 < +0 < ... < inf < +NaN
// by sign-magnitude bits, WEAK is TOTAL after making -0 equal to +0 and every
// NaN equal to every other NaN and greater than everything else. Integers and
// pred are always totally ordered.
#ifndef XLITE_IR_COMPARISON_H_
#define XLITE_IR_COMPARISON_H_

#include <optional>

#include "absl/strings/string_view.h"
#include "xlite/ir/attributes.h"
#include "xlite/ir/primitive_type.h"

namespace xlite {

struct InstructionAttributes;

// PARTIAL for floating-point and complex types, TOTAL otherwise.
ComparisonOrder DefaultComparisonOrder(PrimitiveType operand_type);

// The order the older type= spelling stands for (XLA's ComparisonTypeToOrder):
// FLOAT is PARTIAL, TOTALORDER, SIGNED and UNSIGNED are TOTAL.
ComparisonOrder ComparisonTypeToOrder(ComparisonType type, PrimitiveType operand_type);

// The order a compare uses: order= if given, else type=, else the default.
ComparisonOrder EffectiveComparisonOrder(const InstructionAttributes& attrs,
                                         PrimitiveType operand_type);

// "TOTAL", "WEAK", "PARTIAL" (XLA's ComparisonOrderToShortString) and back.
absl::string_view ComparisonOrderShortString(ComparisonOrder order);
std::optional<ComparisonOrder> ComparisonOrderFromShortString(absl::string_view s);

}  // namespace xlite

#endif  // XLITE_IR_COMPARISON_H_
