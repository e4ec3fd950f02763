// Moving array values between Literals (row-major, logical order) and the
// runtime's memory (the physical layout of the shape, codegen/kernel.h's
// ABI): the executable's arguments, constants and results.
#ifndef XLITE_CPU_PHYSICAL_LAYOUT_H_
#define XLITE_CPU_PHYSICAL_LAYOUT_H_

#include "absl/status/status.h"
#include "xlite/ir/literal.h"
#include "xlite/ir/shape.h"

namespace xlite::cpu {

// Unimplemented for layouts the CPU backend does not run (tiles, packed
// sub-byte elements, dynamic dimensions), naming `what`.
// `shape` with every layout removed (tuples element by element).
Shape WithoutLayouts(Shape shape);

absl::Status CheckRunnableLayout(const Shape& shape, absl::string_view what);

// Writes array `literal` into `dest` laid out as `physical` (same
// dimensions and element type; ShapeSizeBytes(physical) bytes).
void LiteralToPhysical(const Literal& literal, const Shape& physical, void* dest);

// Reads `src` laid out as `physical` into array `literal` (of the same
// dimensions and element type).
void PhysicalToLiteral(const void* src, const Shape& physical, Literal& literal);

}  // namespace xlite::cpu

#endif  // XLITE_CPU_PHYSICAL_LAYOUT_H_
