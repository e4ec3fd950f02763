#include "xlite/analysis/hlo_value.h"

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "xlite/ir/computation.h"

namespace xlite {

const Shape& HloPosition::shape() const {
  static const Shape* const kInvalid = new Shape();
  const Shape* s = SubshapeAt(instruction->shape(), index);
  return s != nullptr ? *s : *kInvalid;
}

std::string HloPosition::ToString() const {
  std::string out = instruction->name();
  if (!index.empty()) out += ShapeIndexToString(index);
  return out;
}

std::string HloUse::ToString() const {
  return absl::StrCat(instruction->name(), ", operand ", operand_number, ", ",
                      ShapeIndexToString(operand_index));
}

std::string HloValue::ToShortString() const {
  std::string out = defining_instruction()->name();
  if (defining_instruction()->shape().IsTuple()) out += ShapeIndexToString(defining_index());
  if (is_phi_) out += " (phi)";
  return out;
}

std::string HloValue::ToString() const {
  std::string out = absl::StrCat(id_, " ", ToShortString(), "\n  positions:\n");
  for (const HloPosition& p : positions_) absl::StrAppend(&out, "    ", p.ToString(), "\n");
  out += "  uses:\n";
  for (const HloUse& u : uses_) absl::StrAppend(&out, "    ", u.ToString(), "\n");
  return out;
}

int64_t ValueSizeBytes(const HloValue& value) {
  const HloInstruction* definer = value.defining_instruction();
  if (definer->opcode() == HloOpcode::kFusion && value.defining_index().empty() &&
      definer->shape().IsTuple() && definer->parent() != nullptr &&
      definer->parent()->root_instruction() != definer && !definer->users().empty() &&
      absl::c_all_of(definer->users(), [](const HloInstruction* user) {
        return user->opcode() == HloOpcode::kGetTupleElement;
      })) {
    return 0;
  }
  return ShapeSizeBytes(value.shape());
}

}  // namespace xlite
