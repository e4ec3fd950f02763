// MLIR element type spellings and the HLO element types they stand for,
// shared by the MLIR reader (mlir_parser.h) and printer (printer.h).
#ifndef XLITE_STABLEHLO_ELEMENT_TYPES_H_
#define XLITE_STABLEHLO_ELEMENT_TYPES_H_

#include <optional>

#include "absl/strings/string_view.h"
#include "xlite/ir/primitive_type.h"

namespace xlite::mlir {

// Element type spelling -> HLO element type: f32 -> F32, i1 -> PRED, ui8 -> U8,
// complex<f64> -> C128; quantized types give their storage type.
std::optional<PrimitiveType> PrimitiveTypeOf(absl::string_view element);
// A quantized type's storage type: i8, ui8, or the quant dialect's u8.
std::optional<PrimitiveType> QuantStorageTypeOf(absl::string_view storage);

}  // namespace xlite::mlir

#endif  // XLITE_STABLEHLO_ELEMENT_TYPES_H_
