// Shape inference: the result shape of an instruction from its operands'
// shapes and its attributes, following XLA's operation semantics and the
// StableHLO spec. Used by the verifier (checks declared shapes) and by the
// builder (computes shapes). Layouts are ignored: results have no layout.
#ifndef XLITE_VERIFY_SHAPE_INFERENCE_H_
#define XLITE_VERIFY_SHAPE_INFERENCE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "xlite/ir/instruction.h"

namespace xlite {

// The inferred shape of `instr` (operands must be set; called computations too
// for ops that take them). Errors say which rule was broken, e.g.
// "dot: lhs contracting dimension 1 has size 3 but rhs dimension 0 has size 4".
// Opcodes whose result is declared rather than inferred (custom-call,
// parameter, constant, infeed, recv, fusion, ...) return the instruction's own
// shape after the checks that apply to them.
absl::StatusOr<Shape> InferShape(const HloInstruction& instr);

// Families, one file each (shape_inference_<family>.cc). Each returns
// std::nullopt-equivalent absl::NotFoundError for opcodes it does not handle.
namespace shape_inference {
absl::StatusOr<Shape> InferElementwiseShape(const HloInstruction& instr);
absl::StatusOr<Shape> InferDataMovementShape(const HloInstruction& instr);
absl::StatusOr<Shape> InferLinalgShape(const HloInstruction& instr);
absl::StatusOr<Shape> InferReductionShape(const HloInstruction& instr);
absl::StatusOr<Shape> InferControlShape(const HloInstruction& instr);
absl::StatusOr<Shape> InferCollectiveShape(const HloInstruction& instr);

// Helpers shared by the families.
// "opcode 'name': message" as an InvalidArgument status.
absl::Status Error(const HloInstruction& instr, absl::string_view message);
// "expects 1 operand, got M" / "expects N operands, got M" unless `instr`
// has exactly `count` operands.
absl::Status ExpectOperandCount(const HloInstruction& instr, int64_t count);
// "<role> must be an array, got <shape>" unless `shape` is an array.
absl::Status ExpectArray(const HloInstruction& instr, const Shape& shape, absl::string_view role);
// `shape` with no layout, at every level of a tuple.
Shape WithoutLayout(Shape shape);
// `shape` as text, without its layout (for messages).
std::string ShapeText(const Shape& shape);
// The element type's name ("f32").
std::string TypeName(PrimitiveType type);
// The '?' size of an unbounded dynamic dimension.
bool IsUnbounded(int64_t size);
// Sizes agree when equal or when either is unbounded ('?').
bool SizesMatch(int64_t a, int64_t b);
// Same rank and matching sizes (SizesMatch) in every dimension.
bool SameDimensions(const Shape& a, const Shape& b);
bool Contains(const std::vector<int64_t>& dims, int64_t dim);
// One result dimension: its size (the bound when dynamic) and its dynamic flag.
struct Dim {
  int64_t size;
  bool dynamic;
};
Dim DimOf(const Shape& shape, int64_t i);
std::vector<Dim> DimsOf(const Shape& shape);
// An array of `type` with `dims` (unbounded sizes dynamic).
Shape MakeArray(PrimitiveType type, const std::vector<Dim>& dims);
// Shapes compatible ignoring layout; dynamic '<=N' dimensions match N.
bool Compatible(const Shape& a, const Shape& b);
// XLA lets floating-point operands differ in precision
// (SameElementTypeIgnoringFpPrecision); everything else must match exactly.
bool SameTypeIgnoringFpPrecision(PrimitiveType a, PrimitiveType b);
// The wider of two floating-point types (XLA's HigherPrecisionElementType):
// more bits first, then more mantissa bits.
PrimitiveType HigherPrecision(PrimitiveType a, PrimitiveType b);
// Window dimension `i` has a positive size and stride and dilations >= 1;
// the dilations are named as the op names them ("base"/"window", "lhs"/"rhs").
absl::Status CheckWindowDimension(const HloInstruction& instr, int64_t i, const WindowDimension& w,
                                  absl::string_view base_dilation_name,
                                  absl::string_view window_dilation_name);
// Output size of one windowed dimension: the number of window positions, at
// the stride, that fit in the dilated and padded base.
absl::StatusOr<int64_t> WindowedSize(const HloInstruction& instr, int64_t base,
                                     const WindowDimension& w);
}  // namespace shape_inference

}  // namespace xlite

#endif  // XLITE_VERIFY_SHAPE_INFERENCE_H_
