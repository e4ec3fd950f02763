#include "xlite/hostlib/element_type.h"

#include <array>

namespace xlite::hostlib {
namespace {

struct TypeInfo {
  ElementType type;
  absl::string_view name;
  int bits;   // value bits
  int bytes;  // host buffer bytes per element
};

// One row per ElementType, in enum order.
constexpr std::array<TypeInfo, 30> kTypes = {{
    {ElementType::kPred, "pred", 8, 1},
    {ElementType::kS1, "s1", 1, 1},
    {ElementType::kS2, "s2", 2, 1},
    {ElementType::kS4, "s4", 4, 1},
    {ElementType::kS8, "s8", 8, 1},
    {ElementType::kS16, "s16", 16, 2},
    {ElementType::kS32, "s32", 32, 4},
    {ElementType::kS64, "s64", 64, 8},
    {ElementType::kU1, "u1", 1, 1},
    {ElementType::kU2, "u2", 2, 1},
    {ElementType::kU4, "u4", 4, 1},
    {ElementType::kU8, "u8", 8, 1},
    {ElementType::kU16, "u16", 16, 2},
    {ElementType::kU32, "u32", 32, 4},
    {ElementType::kU64, "u64", 64, 8},
    {ElementType::kF16, "f16", 16, 2},
    {ElementType::kBF16, "bf16", 16, 2},
    {ElementType::kF32, "f32", 32, 4},
    {ElementType::kF64, "f64", 64, 8},
    {ElementType::kF8E5M2, "f8e5m2", 8, 1},
    {ElementType::kF8E4M3, "f8e4m3", 8, 1},
    {ElementType::kF8E4M3FN, "f8e4m3fn", 8, 1},
    {ElementType::kF8E4M3B11FNUZ, "f8e4m3b11fnuz", 8, 1},
    {ElementType::kF8E5M2FNUZ, "f8e5m2fnuz", 8, 1},
    {ElementType::kF8E4M3FNUZ, "f8e4m3fnuz", 8, 1},
    {ElementType::kF8E3M4, "f8e3m4", 8, 1},
    {ElementType::kF4E2M1FN, "f4e2m1fn", 4, 1},
    {ElementType::kF8E8M0FNU, "f8e8m0fnu", 8, 1},
    {ElementType::kC64, "c64", 64, 8},
    {ElementType::kC128, "c128", 128, 16},
}};

constexpr bool TableInEnumOrder() {
  for (size_t i = 0; i < kTypes.size(); ++i) {
    if (static_cast<size_t>(kTypes[i].type) != i) return false;
  }
  return true;
}
static_assert(TableInEnumOrder(), "kTypes must list ElementType in enum order");

const TypeInfo& Info(ElementType type) { return kTypes[static_cast<size_t>(type)]; }

}  // namespace

absl::string_view ElementTypeName(ElementType type) { return Info(type).name; }

std::optional<ElementType> ElementTypeFromName(absl::string_view name) {
  for (const TypeInfo& info : kTypes) {
    if (info.name == name) return info.type;
  }
  return std::nullopt;
}

int ElementByteWidth(ElementType type) { return Info(type).bytes; }
int ElementBitWidth(ElementType type) { return Info(type).bits; }

bool IsSignedIntegerType(ElementType type) {
  return type >= ElementType::kS1 && type <= ElementType::kS64;
}
bool IsUnsignedIntegerType(ElementType type) {
  return type == ElementType::kPred || (type >= ElementType::kU1 && type <= ElementType::kU64);
}
bool IsComplexType(ElementType type) {
  return type == ElementType::kC64 || type == ElementType::kC128;
}

}  // namespace xlite::hostlib
