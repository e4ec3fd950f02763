#include "xlite/verify/shape_inference.h"

#include "absl/strings/str_cat.h"

namespace xlite {
namespace shape_inference {

absl::Status Error(const HloInstruction& instr, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat(HloOpcodeString(instr.opcode()), " '", instr.name(), "': ", message));
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
