#include "xlite/ir/opcode.h"

#include <iterator>

#include "absl/strings/string_view.h"

namespace xlite {
namespace {

struct OpcodeInfo {
  absl::string_view name;
  int arity;
  uint32_t traits;
};

constexpr OpcodeInfo kOpcodes[] = {
#define XLITE_OPCODE(e, name, arity, traits) {name, arity, traits},
#include "xlite/ir/opcodes.def"
#undef XLITE_OPCODE
};

}  // namespace

absl::string_view HloOpcodeString(HloOpcode op) { return kOpcodes[static_cast<int>(op)].name; }

std::optional<HloOpcode> StringToHloOpcode(absl::string_view name) {
  for (size_t i = 0; i < std::size(kOpcodes); ++i) {
    if (kOpcodes[i].name == name) return static_cast<HloOpcode>(i);
  }
  return std::nullopt;
}

int HloOpcodeArity(HloOpcode op) { return kOpcodes[static_cast<int>(op)].arity; }
uint32_t HloOpcodeTraits(HloOpcode op) { return kOpcodes[static_cast<int>(op)].traits; }
int HloOpcodeCount() { return static_cast<int>(std::size(kOpcodes)); }

}  // namespace xlite
