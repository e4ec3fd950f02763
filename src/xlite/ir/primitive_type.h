// Element types of HLO shapes, spelled as in XLA's text format.
#ifndef XLITE_IR_PRIMITIVE_TYPE_H_
#define XLITE_IR_PRIMITIVE_TYPE_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace xlite {

enum class PrimitiveType : uint8_t {
  PRIMITIVE_TYPE_INVALID = 0,
#define XLITE_PRIMITIVE_TYPE(e, name, bits, kind) e,
#include "xlite/ir/primitive_type.def"
#undef XLITE_PRIMITIVE_TYPE
};

enum class PrimitiveKind : uint8_t { kPred, kSigned, kUnsigned, kFloat, kComplex, kOther };

absl::string_view PrimitiveTypeName(PrimitiveType type);
std::optional<PrimitiveType> PrimitiveTypeFromName(absl::string_view name);
PrimitiveKind GetPrimitiveKind(PrimitiveType type);
// Bits per element as XLA counts them for sub-byte types (s4 -> 4, pred -> 8).
int PrimitiveBitWidth(PrimitiveType type);
// Bytes one element occupies in an unpacked buffer (s4 -> 1, c64 -> 8).
int PrimitiveByteWidth(PrimitiveType type);

inline bool IsArrayType(PrimitiveType t) {
  return GetPrimitiveKind(t) != PrimitiveKind::kOther && t != PrimitiveType::PRIMITIVE_TYPE_INVALID;
}
inline bool IsFloatingPoint(PrimitiveType t) {
  return GetPrimitiveKind(t) == PrimitiveKind::kFloat;
}
inline bool IsComplex(PrimitiveType t) { return GetPrimitiveKind(t) == PrimitiveKind::kComplex; }
inline bool IsSignedInt(PrimitiveType t) { return GetPrimitiveKind(t) == PrimitiveKind::kSigned; }
inline bool IsUnsignedInt(PrimitiveType t) {
  return GetPrimitiveKind(t) == PrimitiveKind::kUnsigned;
}
inline bool IsInteger(PrimitiveType t) { return IsSignedInt(t) || IsUnsignedInt(t); }

}  // namespace xlite

#endif  // XLITE_IR_PRIMITIVE_TYPE_H_
