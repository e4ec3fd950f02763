#include "xlite/ir/primitive_type.h"

#include <array>

#include "absl/strings/string_view.h"

namespace xlite {
namespace {

struct TypeInfo {
  PrimitiveType type;
  absl::string_view name;
  int bits;
  PrimitiveKind kind;
};

constexpr TypeInfo kTypes[] = {
    {PrimitiveType::PRIMITIVE_TYPE_INVALID, "invalid", 0, PrimitiveKind::kOther},
#define XLITE_PRIMITIVE_TYPE(e, name, bits, kind) \
  {PrimitiveType::e, name, bits, PrimitiveKind::kind},
#include "xlite/ir/primitive_type.def"
#undef XLITE_PRIMITIVE_TYPE
};

const TypeInfo& Info(PrimitiveType type) {
  auto i = static_cast<size_t>(type);
  return i < std::size(kTypes) ? kTypes[i] : kTypes[0];
}

}  // namespace

absl::string_view PrimitiveTypeName(PrimitiveType type) { return Info(type).name; }

std::optional<PrimitiveType> PrimitiveTypeFromName(absl::string_view name) {
  for (size_t i = 1; i < std::size(kTypes); ++i) {
    if (kTypes[i].name == name) return kTypes[i].type;
  }
  return std::nullopt;
}

PrimitiveKind GetPrimitiveKind(PrimitiveType type) { return Info(type).kind; }

int PrimitiveBitWidth(PrimitiveType type) { return Info(type).bits; }

int PrimitiveByteWidth(PrimitiveType type) { return (Info(type).bits + 7) / 8; }

}  // namespace xlite
