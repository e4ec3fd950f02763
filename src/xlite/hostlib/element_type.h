// Element types of the buffers host kernels read and write, spelled as XLA's
// text spells them ("f32", "bf16", "f8e4m3fn"). Hostlib sits below the IR, so
// it has its own enum; callers map an HLO element type by name
// (ElementTypeFromName(PrimitiveTypeName(t))).
//
// Memory: one element per ElementByteWidth() bytes, little-endian, complex as
// (real, imaginary); sub-byte integers and f4e2m1fn take one byte each, the
// value in the low bits (xlite's unpacked buffers).
#ifndef XLITE_HOSTLIB_ELEMENT_TYPE_H_
#define XLITE_HOSTLIB_ELEMENT_TYPE_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace xlite::hostlib {

enum class ElementType : uint8_t {
  kPred,
  kS1,
  kS2,
  kS4,
  kS8,
  kS16,
  kS32,
  kS64,
  kU1,
  kU2,
  kU4,
  kU8,
  kU16,
  kU32,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kF8E5M2,
  kF8E4M3,
  kF8E4M3FN,
  kF8E4M3B11FNUZ,
  kF8E5M2FNUZ,
  kF8E4M3FNUZ,
  kF8E3M4,
  kF4E2M1FN,
  kF8E8M0FNU,
  kC64,
  kC128,
};

// XLA's spelling: "f32".
absl::string_view ElementTypeName(ElementType type);
// The type XLA spells `name`; nullopt for tuple/token/opaque and unknown names.
std::optional<ElementType> ElementTypeFromName(absl::string_view name);
// Bytes per element in a host buffer.
int ElementByteWidth(ElementType type);
// Value bits (s4 -> 4, pred -> 8).
int ElementBitWidth(ElementType type);

bool IsSignedIntegerType(ElementType type);
bool IsUnsignedIntegerType(ElementType type);  // pred included
inline bool IsIntegerType(ElementType type) {
  return IsSignedIntegerType(type) || IsUnsignedIntegerType(type);
}
bool IsComplexType(ElementType type);
// Every real floating-point type.
inline bool IsFloatType(ElementType type) { return !IsIntegerType(type) && !IsComplexType(type); }
// Floating-point types narrower than f32 (f16, bf16, the f8/f4/e8m0 family):
// hostlib computes with them in f32 (float_convert.h).
inline bool IsNarrowFloatType(ElementType type) {
  return IsFloatType(type) && type != ElementType::kF32 && type != ElementType::kF64;
}

}  // namespace xlite::hostlib

#endif  // XLITE_HOSTLIB_ELEMENT_TYPE_H_
