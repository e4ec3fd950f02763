// The attributes each opcode accepts, in the order XLA prints them. The parser
// accepts exactly these (plus the common ones), the printer prints in this
// order: one list per opcode family.
#ifndef XLITE_TEXT_ATTRIBUTE_ORDER_H_
#define XLITE_TEXT_ATTRIBUTE_ORDER_H_

#include <vector>

#include "absl/strings/string_view.h"
#include "xlite/ir/opcode.h"

namespace xlite {

// Opcode-specific attributes, printed right after the operands.
const std::vector<absl::string_view>& OpcodeAttributeOrder(HloOpcode op);

// Attributes every instruction may carry, printed after the specific ones.
const std::vector<absl::string_view>& CommonAttributeOrder();

}  // namespace xlite

#endif  // XLITE_TEXT_ATTRIBUTE_ORDER_H_
