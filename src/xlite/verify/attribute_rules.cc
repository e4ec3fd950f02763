#include "xlite/verify/attribute_rules.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "xlite/ir/comparison.h"

namespace xlite {

absl::Status CheckCompareOrder(const HloInstruction& instr) {
  if (instr.opcode() != HloOpcode::kCompare || instr.operand_count() < 1) {
    return absl::OkStatus();
  }
  const PrimitiveType t = instr.operand(0)->shape().element_type();
  if (!IsArrayType(t) || IsFloatingPoint(t) || IsComplex(t)) return absl::OkStatus();
  const ComparisonOrder order = EffectiveComparisonOrder(instr.attrs(), t);
  if (order != ComparisonOrder::kTotal) {
    return absl::InvalidArgumentError(absl::StrCat(
        "comparisons of ", PrimitiveTypeName(t), " are total orders; ",
        instr.attrs().comparison_order ? absl::StrCat("order=", ComparisonOrderShortString(order))
                                       : std::string("type=FLOAT"),
        " is only for floating-point operands"));
  }
  return absl::OkStatus();
}

absl::Status CheckResultAccuracy(const HloInstruction& instr) {
  const std::optional<ResultAccuracy>& r = instr.attrs().result_accuracy;
  if (!r || r->IsDefault()) return absl::OkStatus();
  if (!AllowsResultAccuracy(instr.opcode())) {
    return absl::InvalidArgumentError(
        absl::StrCat("result_accuracy is only allowed on exponential, log, sqrt and the other "
                     "transcendental unary ops, not on ",
                     HloOpcodeString(instr.opcode())));
  }
  if (r->tolerance) {
    const ResultAccuracy::Tolerance& t = *r->tolerance;
    if (!(t.atol >= 0) || !(t.rtol >= 0) || t.ulps < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("result_accuracy tolerances must be non-negative, got atol=", t.atol,
                       " rtol=", t.rtol, " ulps=", t.ulps));
    }
  }
  return absl::OkStatus();
}

}  // namespace xlite
