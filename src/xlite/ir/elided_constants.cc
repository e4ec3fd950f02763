#include "xlite/ir/elided_constants.h"

#include <cstring>

namespace xlite {

bool HasElidedValues(const Literal& lit) {
  if (lit.elided()) return true;
  for (const Literal& e : lit.tuple_elements()) {
    if (HasElidedValues(e)) return true;
  }
  return false;
}

void ElidedConstantFiller::Fill(Literal& lit) {
  for (Literal& e : lit.tuple_elements()) Fill(e);
  if (!lit.elided()) return;
  lit.set_elided(false);
  const PrimitiveType t = lit.shape().element_type();
  const int64_t size = lit.element_count() * lit.element_stride();
  if (size == 0) return;
  // pred must hold 0 or 1 in every byte.
  const uint32_t mask = t == PrimitiveType::PRED ? 0x01010101u : 0xFFFFFFFFu;
  uint8_t* data = lit.mutable_raw_data();
  for (int64_t i = 0; i < size / 4; ++i) {
    const uint32_t v = word_++ & mask;
    // Little-endian, as XLA writes through a uint32_t* on its hosts.
    const uint8_t bytes[4] = {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8),
                              static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 24)};
    std::memcpy(data + 4 * i, bytes, 4);
  }
  for (int64_t i = 0; i < size % 4; ++i) {
    data[size / 4 + i] = static_cast<uint8_t>(byte_++ & mask);
  }
  // Sub-byte types take one byte per element; keep only their bits so every
  // element is a value of its type.
  const int bits = PrimitiveBitWidth(t);
  if (bits < 8 && t != PrimitiveType::PRED) {
    for (int64_t i = 0; i < lit.element_count(); ++i) {
      lit.SetBits(i, lit.GetBits(i) & ((1u << bits) - 1));
    }
  }
}

std::vector<std::string> FillElidedConstants(HloModule& module) {
  std::vector<std::string> filled;
  ElidedConstantFiller filler;
  for (const auto& comp : module.computations()) {
    for (const auto& instr : comp->instructions()) {
      auto& lit = instr->attrs().literal;
      if (!lit || !HasElidedValues(*lit)) continue;
      filler.Fill(*lit);
      filled.push_back(instr->name());
    }
  }
  return filled;
}

}  // namespace xlite
