#include "xlite/text/shape_inference_lite.h"

#include "absl/strings/str_cat.h"

namespace xlite {
namespace {

Shape WithoutLayout(Shape s) {
  s.clear_layout();
  if (s.IsTuple()) {
    for (Shape& e : s.mutable_tuple_shapes()) e = WithoutLayout(e);
  }
  return s;
}

}  // namespace

absl::StatusOr<Shape> InferShapeForParser(const HloInstruction& instr) {
  const auto& ops = instr.operands();
  auto fail = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("cannot infer the shape of '", instr.name(),
                                                   "' (", HloOpcodeString(instr.opcode()),
                                                   "): ", why, "; write the shape explicitly"));
  };
  switch (instr.opcode()) {
    case HloOpcode::kTuple: {
      std::vector<Shape> elems;
      for (const HloInstruction* op : ops) elems.push_back(op->shape());
      return Shape::Tuple(std::move(elems));
    }
    case HloOpcode::kGetTupleElement: {
      if (ops.size() != 1 || !ops[0]->shape().IsTuple()) return fail("operand is not a tuple");
      int64_t i = instr.attrs().tuple_index;
      if (i < 0 || i >= ops[0]->shape().tuple_shapes_size()) return fail("index out of range");
      return ops[0]->shape().tuple_shapes(i);
    }
    case HloOpcode::kCompare: {
      if (ops.empty() || !ops[0]->shape().IsArray()) return fail("operand is not an array");
      Shape s = WithoutLayout(ops[0]->shape());
      s.set_element_type(PrimitiveType::PRED);
      return s;
    }
    case HloOpcode::kSelect:
    case HloOpcode::kClamp:
      if (ops.size() != 3) return fail("expects 3 operands");
      return WithoutLayout(ops[1]->shape());
    case HloOpcode::kDot: {
      if (ops.size() != 2 || !instr.attrs().dot_dimension_numbers)
        return fail("needs dimension numbers");
      const DotDimensionNumbers& d = *instr.attrs().dot_dimension_numbers;
      const Shape& l = ops[0]->shape();
      const Shape& r = ops[1]->shape();
      if (!l.IsArray() || !r.IsArray()) return fail("operands are not arrays");
      std::vector<int64_t> dims;
      auto contains = [](const std::vector<int64_t>& v, int64_t x) {
        return std::find(v.begin(), v.end(), x) != v.end();
      };
      for (int64_t b : d.lhs_batch_dimensions) {
        if (b < 0 || b >= l.rank()) return fail("batch dimension out of range");
        dims.push_back(l.dimensions(b));
      }
      for (int64_t i = 0; i < l.rank(); ++i) {
        if (!contains(d.lhs_batch_dimensions, i) && !contains(d.lhs_contracting_dimensions, i)) {
          dims.push_back(l.dimensions(i));
        }
      }
      for (int64_t i = 0; i < r.rank(); ++i) {
        if (!contains(d.rhs_batch_dimensions, i) && !contains(d.rhs_contracting_dimensions, i)) {
          dims.push_back(r.dimensions(i));
        }
      }
      return Shape::Array(l.element_type(), dims);
    }
    default:
      break;
  }
  if (IsElementwiseOpcode(instr.opcode()) && instr.opcode() != HloOpcode::kConvert &&
      instr.opcode() != HloOpcode::kReal && instr.opcode() != HloOpcode::kImag &&
      instr.opcode() != HloOpcode::kComplex && instr.opcode() != HloOpcode::kIsFinite &&
      instr.opcode() != HloOpcode::kStochasticConvert) {
    if (ops.empty() || !ops[0]->shape().IsArray()) return fail("operand is not an array");
    return WithoutLayout(ops[0]->shape());
  }
  if (instr.opcode() == HloOpcode::kIsFinite && !ops.empty()) {
    Shape s = WithoutLayout(ops[0]->shape());
    s.set_element_type(PrimitiveType::PRED);
    return s;
  }
  return fail("no rule for this opcode");
}

}  // namespace xlite
