// HLO opcodes, generated from opcodes.def.
#ifndef XLITE_IR_OPCODE_H_
#define XLITE_IR_OPCODE_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace xlite {

enum class HloOpcode : uint8_t {
#define XLITE_OPCODE(e, name, arity, traits) e,
#include "xlite/ir/opcodes.def"
#undef XLITE_OPCODE
};

enum OpcodeTraits : uint32_t {
  kNoTraits = 0,
  kElementwise = 1 << 0,
  kCommutative = 1 << 1,
  kSideEffect = 1 << 2,
  kCollective = 1 << 3,
  // May carry result_accuracy= (XLA's unary ops "with result accuracy").
  kResultAccuracy = 1 << 4,
};

constexpr int kVariadic = -1;

absl::string_view HloOpcodeString(HloOpcode op);
std::optional<HloOpcode> StringToHloOpcode(absl::string_view name);
// Operand count, or kVariadic.
int HloOpcodeArity(HloOpcode op);
uint32_t HloOpcodeTraits(HloOpcode op);
int HloOpcodeCount();

inline bool IsElementwiseOpcode(HloOpcode op) { return HloOpcodeTraits(op) & kElementwise; }
inline bool IsCommutativeOpcode(HloOpcode op) { return HloOpcodeTraits(op) & kCommutative; }
inline bool AllowsResultAccuracy(HloOpcode op) { return HloOpcodeTraits(op) & kResultAccuracy; }
inline bool IsAsyncOpcode(HloOpcode op) {
  return op == HloOpcode::kAsyncStart || op == HloOpcode::kAsyncUpdate ||
         op == HloOpcode::kAsyncDone;
}

}  // namespace xlite

#endif  // XLITE_IR_OPCODE_H_
