// Encoding tables shared by the VHLO bytecode reader (bytecode_attributes.cc)
// and writer (bytecode_writer.cc): one place for each code, so the two sides
// cannot disagree.
#ifndef XLITE_VHLO_BYTECODE_CODES_H_
#define XLITE_VHLO_BYTECODE_CODES_H_

#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/string_view.h"

namespace xlite::vhlo::bytecode {

// MLIR's ShapedType::kDynamic (INT64_MIN) marks '?' dimensions and bounds.
inline constexpr int64_t kMlirDynamic = std::numeric_limits<int64_t>::min();

// ---------------------------------------------------------------------------
// The VHLO kind codes: the first varint of a VHLO attribute or type entry.
// (StableHLO's VhloBytecode encoding; codes never change between versions.)
// ---------------------------------------------------------------------------
enum class VhloAttr : uint8_t {
  kEnum,                  // value: varint, an index into `enum_values`
  kArray,                 // elements: attribute[]
  kBool,                  // value: varint 0/1
  kDictionary,            // (name: attribute, value: attribute)[]
  kFloat,                 // type, APFloat of the type's width
  kInteger,               // type, APInt of the type's width
  kOutputOperandAlias,    // outputTupleIndices: svarint[], operandIndex: svarint,
                          // operandTupleIndices: svarint[]
  kString,                // string
  kTensor,                // type, blob (i1 bit-packed)
  kType,                  // type
  kTypeExtensions,        // bounds: svarint[]
  kResultAccuracy,        // atol: f64, rtol: f64, ulps: svarint, mode: attribute
  kSubAxisInfo,           // pre_size: svarint, size: svarint
  kAxisRef,               // name: attribute, has_sub_axis_info: varint, sub_axis_info?
  kReplicaGroupMeshAxes,  // mesh: attribute, axes: attribute
};

struct VhloAttrCode {
  uint64_t code;
  const char* mnemonic;  // as in #vhlo.array_v1<..> / #vhlo<comparison_direction_v1 EQ>
  VhloAttr shape;
  std::vector<const char*> enum_values;  // kEnum: the name of each value, by number
};

// Every VHLO attribute kind, by code.
const std::vector<VhloAttrCode>& VhloAttrCodes();

enum class VhloType : uint8_t {
  kScalar,                    // no fields; `spelling` is the builtin element type
  kComplex,                   // element: type
  kFunction,                  // inputs: type[], outputs: type[]
  kRankedTensor,              // shape: svarint[], element: type
  kRankedTensorWithEncoding,  // encoding: attribute, shape: svarint[], element: type
  kToken,
  kTuple,             // elements: type[]
  kQuantized,         // flags, storage, expressed, scale: f64, zero_point, min, max
  kQuantizedPerAxis,  // flags, storage, expressed, axis: varint, min, max, scales[], zps[]
  kUnrankedTensor,    // element: type
  kBuffer,            // shape: svarint[], element: type
  kFuture,            // types: type[]
};

struct VhloTypeCode {
  uint64_t code;
  const char* mnemonic;  // as in !vhlo.f32_v1
  VhloType shape;
  const char* spelling;  // kScalar: the builtin spelling the text reader uses
};

// Every VHLO type kind, by code.
const std::vector<VhloTypeCode>& VhloTypeCodes();

template <typename Code>
const Code* FindCode(const std::vector<Code>& codes, uint64_t code) {
  for (const Code& c : codes) {
    if (c.code == code) return &c;
  }
  return nullptr;
}

// The writer's side: the code of the one kind of `shape` (not kEnum), of the
// one type kind of `shape` (not kScalar), of an enum by mnemonic and of a
// scalar type by builtin spelling (null when VHLO has none).
uint64_t VhloAttrCodeOf(VhloAttr shape);
uint64_t VhloTypeCodeOf(VhloType shape);
const VhloAttrCode* FindVhloEnumCode(absl::string_view mnemonic);
const VhloTypeCode* FindVhloScalarTypeCode(absl::string_view spelling);

// Bit width of a float spelling ("f32" -> 32, "tf32" -> 19); 0 if not a float.
int FloatWidthOf(absl::string_view element);

// Builtin dialect codes (MLIR's BuiltinDialectBytecode: position in its list).
enum BuiltinAttrCode : uint64_t {
  kBuiltinArray = 0,
  kBuiltinDictionary = 1,
  kBuiltinString = 2,
  kBuiltinStringWithType = 3,
  kBuiltinFlatSymbolRef = 4,
  kBuiltinSymbolRef = 5,
  kBuiltinTypeAttr = 6,
  kBuiltinUnit = 7,
  kBuiltinInteger = 8,
  kBuiltinFloat = 9,
  kBuiltinCallSiteLoc = 10,
  kBuiltinFileLineColLoc = 11,
  kBuiltinFusedLoc = 12,
  kBuiltinFusedLocWithMetadata = 13,
  kBuiltinNameLoc = 14,
  kBuiltinUnknownLoc = 15,
  kBuiltinDenseResourceElements = 16,
  kBuiltinDenseArray = 17,
  kBuiltinDenseIntOrFPElements = 18,
  kBuiltinDenseStringElements = 19,
  kBuiltinSparseElements = 20,
  kBuiltinDistinct = 21,
};

enum BuiltinTypeCode : uint64_t {
  kBuiltinIntegerType = 0,
  kBuiltinIndexType = 1,
  kBuiltinFunctionType = 2,
  kBuiltinBF16 = 3,
  kBuiltinF16 = 4,
  kBuiltinF32 = 5,
  kBuiltinF64 = 6,
  kBuiltinF80 = 7,
  kBuiltinF128 = 8,
  kBuiltinComplex = 9,
  kBuiltinMemRef = 10,
  kBuiltinMemRefWithMemSpace = 11,
  kBuiltinNone = 12,
  kBuiltinRankedTensor = 13,
  kBuiltinRankedTensorWithEncoding = 14,
  kBuiltinTuple = 15,
  kBuiltinUnrankedMemRef = 16,
  kBuiltinUnrankedMemRefWithMemSpace = 17,
  kBuiltinUnrankedTensor = 18,
  kBuiltinVector = 19,
  kBuiltinVectorScalable = 20,
};

// Dialect numbers in the dialect section: both files list builtin first.
enum Dialect : uint64_t { kBuiltinDialect = 0, kVhloDialect = 1 };

}  // namespace xlite::vhlo::bytecode

#endif  // XLITE_VHLO_BYTECODE_CODES_H_
