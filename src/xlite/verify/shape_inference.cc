#include "xlite/verify/shape_inference.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "xlite/ir/float_format.h"

namespace xlite {
namespace shape_inference {

absl::Status Error(const HloInstruction& instr, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat(HloOpcodeString(instr.opcode()), " '", instr.name(), "': ", message));
}

absl::Status ExpectOperandCount(const HloInstruction& instr, int64_t count) {
  if (instr.operand_count() == count) return absl::OkStatus();
  return Error(instr, absl::StrCat("expects ", count, count == 1 ? " operand" : " operands",
                                   ", got ", instr.operand_count()));
}

absl::Status ExpectArray(const HloInstruction& instr, const Shape& shape, absl::string_view role) {
  if (shape.IsArray()) return absl::OkStatus();
  return Error(instr, absl::StrCat(role, " must be an array, got ", ShapeText(shape)));
}

Shape WithoutLayout(Shape shape) {
  shape.clear_layout();
  for (Shape& element : shape.mutable_tuple_shapes()) element = WithoutLayout(std::move(element));
  return shape;
}

std::string ShapeText(const Shape& shape) { return shape.ToString(/*print_layout=*/false); }

std::string TypeName(PrimitiveType type) { return std::string(PrimitiveTypeName(type)); }

bool IsUnbounded(int64_t size) { return size == Shape::kUnboundedSize; }

bool SizesMatch(int64_t a, int64_t b) { return a == b || IsUnbounded(a) || IsUnbounded(b); }

bool SameDimensions(const Shape& a, const Shape& b) {
  if (a.rank() != b.rank()) return false;
  for (int64_t i = 0; i < a.rank(); ++i) {
    if (!SizesMatch(a.dimensions(i), b.dimensions(i))) return false;
  }
  return true;
}

bool Contains(const std::vector<int64_t>& dims, int64_t dim) {
  return std::find(dims.begin(), dims.end(), dim) != dims.end();
}

Dim DimOf(const Shape& shape, int64_t i) {
  return {shape.dimensions(i), shape.is_dynamic_dimension(i)};
}

std::vector<Dim> DimsOf(const Shape& shape) {
  std::vector<Dim> dims;
  for (int64_t i = 0; i < shape.rank(); ++i) dims.push_back(DimOf(shape, i));
  return dims;
}

Shape MakeArray(PrimitiveType type, const std::vector<Dim>& dims) {
  Shape shape = Shape::Array(type, {});
  for (const Dim& d : dims) shape.add_dimension(d.size, d.dynamic || IsUnbounded(d.size));
  return shape;
}

bool Compatible(const Shape& a, const Shape& b) {
  if (a.element_type() != b.element_type()) return false;
  if (a.IsTuple() || a.IsBuffer()) {
    if (a.tuple_shapes_size() != b.tuple_shapes_size()) return false;
    for (int64_t i = 0; i < a.tuple_shapes_size(); ++i) {
      if (!Compatible(a.tuple_shapes(i), b.tuple_shapes(i))) return false;
    }
    return true;
  }
  return a.dimensions() == b.dimensions();
}

bool SameTypeIgnoringFpPrecision(PrimitiveType a, PrimitiveType b) {
  return a == b || (IsFloatingPoint(a) && IsFloatingPoint(b));
}

PrimitiveType HigherPrecision(PrimitiveType a, PrimitiveType b) {
  if (a == b || !IsFloatingPoint(a) || !IsFloatingPoint(b)) return a;
  if (PrimitiveBitWidth(a) != PrimitiveBitWidth(b)) {
    return PrimitiveBitWidth(a) > PrimitiveBitWidth(b) ? a : b;
  }
  return GetFloatFormat(a)->mantissa_bits >= GetFloatFormat(b)->mantissa_bits ? a : b;
}

absl::Status CheckWindowDimension(const HloInstruction& instr, int64_t i, const WindowDimension& w,
                                  absl::string_view base_dilation_name,
                                  absl::string_view window_dilation_name) {
  const std::string where = absl::StrCat("window dimension ", i);
  if (w.size <= 0) return Error(instr, absl::StrCat(where, " has non-positive size ", w.size));
  if (w.stride <= 0) {
    return Error(instr, absl::StrCat(where, " has non-positive stride ", w.stride));
  }
  if (w.base_dilation < 1 || w.window_dilation < 1) {
    return Error(instr, absl::StrCat(where, " has dilation below 1 (", base_dilation_name, " ",
                                     w.base_dilation, ", ", window_dilation_name, " ",
                                     w.window_dilation, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> WindowedSize(const HloInstruction& instr, int64_t base,
                                     const WindowDimension& w) {
  if (base == Shape::kUnboundedSize) return Shape::kUnboundedSize;
  int64_t dilated_base = 0, padded = 0, dilated_window = 0;
  bool overflow = false;
  if (base > 0) {
    overflow |= __builtin_mul_overflow(base - 1, w.base_dilation, &dilated_base);
    dilated_base += 1;
  }
  overflow |= __builtin_add_overflow(dilated_base, w.padding_low, &padded);
  overflow |= __builtin_add_overflow(padded, w.padding_high, &padded);
  overflow |= __builtin_mul_overflow(w.size - 1, w.window_dilation, &dilated_window);
  if (overflow) return Error(instr, "window arithmetic overflows int64");
  dilated_window += 1;
  if (padded < dilated_window) return 0;
  return (padded - dilated_window) / w.stride + 1;
}

}  // namespace shape_inference

absl::StatusOr<Shape> InferShape(const HloInstruction& instr) {
  using Family = absl::StatusOr<Shape> (*)(const HloInstruction&);
  static constexpr Family kFamilies[] = {
      shape_inference::InferElementwiseShape, shape_inference::InferDataMovementShape,
      shape_inference::InferLinalgShape,      shape_inference::InferReductionShape,
      shape_inference::InferControlShape,     shape_inference::InferCollectiveShape,
  };
  for (Family f : kFamilies) {
    absl::StatusOr<Shape> s = f(instr);
    if (s.ok() || !absl::IsNotFound(s.status())) return s;
  }
  return absl::UnimplementedError(
      absl::StrCat("shape inference for ", HloOpcodeString(instr.opcode()), " is not implemented"));
}

}  // namespace xlite
