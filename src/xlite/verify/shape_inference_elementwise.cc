// Shape inference for elementwise opcodes: unary math, binary arithmetic and
// logic, compare, select, clamp, and the conversions (convert, bitcast-convert,
// stochastic-convert, reduce-precision). Rules follow XLA's shape inference and
// verifier (operation_semantics.md) and the StableHLO spec: operands have
// identical dimensions (no implicit broadcasting) except a scalar select
// predicate and scalar clamp bounds.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "xlite/support/status.h"
#include "xlite/verify/shape_inference.h"

namespace xlite::shape_inference {
namespace {

// Element-type classes, combined as bit sets to state what an opcode accepts.
enum TypeClass : uint32_t {
  kPredClass = 1 << 0,
  kSignedClass = 1 << 1,
  kUnsignedClass = 1 << 2,
  kFloatClass = 1 << 3,
  kComplexClass = 1 << 4,
};
constexpr uint32_t kIntegerClasses = kSignedClass | kUnsignedClass;
constexpr uint32_t kFloatOrComplex = kFloatClass | kComplexClass;
constexpr uint32_t kAnyArrayType = kPredClass | kIntegerClasses | kFloatClass | kComplexClass;

uint32_t ClassOf(PrimitiveType type) {
  switch (GetPrimitiveKind(type)) {
    case PrimitiveKind::kPred:
      return kPredClass;
    case PrimitiveKind::kSigned:
      return kSignedClass;
    case PrimitiveKind::kUnsigned:
      return kUnsignedClass;
    case PrimitiveKind::kFloat:
      return kFloatClass;
    case PrimitiveKind::kComplex:
      return kComplexClass;
    case PrimitiveKind::kOther:
      return 0;
  }
  return 0;
}

std::string DescribeClasses(uint32_t classes) {
  std::vector<std::string> names;
  if (classes & kPredClass) names.push_back("pred");
  if ((classes & kIntegerClasses) == kIntegerClasses) {
    names.push_back("integer");
  } else if (classes & kSignedClass) {
    names.push_back("signed integer");
  } else if (classes & kUnsignedClass) {
    names.push_back("unsigned integer");
  }
  if (classes & kFloatClass) names.push_back("floating-point");
  if (classes & kComplexClass) names.push_back("complex");
  return absl::StrJoin(names, ", ");
}

absl::Status ExpectTypeClass(const HloInstruction& instr, const Shape& shape,
                             absl::string_view role, uint32_t allowed) {
  if (!(ClassOf(shape.element_type()) & allowed)) {
    return Error(instr, absl::StrCat(role, " type ", TypeName(shape.element_type()),
                                     " is not one of: ", DescribeClasses(allowed)));
  }
  return absl::OkStatus();
}

// Dimensions of two same-shaped operands, merged: an unbounded '?' takes the
// other side's size (and dynamism), otherwise a dimension is dynamic if either
// side's is.
absl::StatusOr<Shape> MergeDimensions(const HloInstruction& instr, const Shape& a,
                                      absl::string_view a_role, const Shape& b,
                                      absl::string_view b_role) {
  if (a.rank() != b.rank()) {
    return Error(instr, absl::StrCat(a_role, " ", a.ToString(false), " and ", b_role, " ",
                                     b.ToString(false), " have different ranks"));
  }
  Shape merged = Shape::Array(a.element_type(), a.dimensions());
  for (int64_t i = 0; i < a.rank(); ++i) {
    int64_t a_size = a.dimensions(i), b_size = b.dimensions(i);
    if (!IsUnbounded(a_size) && !IsUnbounded(b_size) && a_size != b_size) {
      return Error(instr, absl::StrCat(a_role, " ", a.ToString(false), " and ", b_role, " ",
                                       b.ToString(false), " differ in dimension ", i));
    }
    if (IsUnbounded(a_size)) {
      merged.set_dimensions(i, b_size);
      merged.set_dynamic_dimension(i, b.is_dynamic_dimension(i));
    } else if (IsUnbounded(b_size)) {
      merged.set_dynamic_dimension(i, a.is_dynamic_dimension(i));
    } else {
      merged.set_dynamic_dimension(i, a.is_dynamic_dimension(i) || b.is_dynamic_dimension(i));
    }
  }
  return merged;
}

Shape WithElementType(Shape shape, PrimitiveType type) {
  shape.set_element_type(type);
  return shape;
}

PrimitiveType ComplexComponentType(PrimitiveType type) {
  return type == PrimitiveType::C128 ? PrimitiveType::F64 : PrimitiveType::F32;
}

// ---------------------------------------------------------------- unary ops

struct UnaryRule {
  uint32_t allowed = 0;  // 0: not a plain unary op
  enum class Result { kSame, kComplexComponent, kPred } result = Result::kSame;
};

UnaryRule UnaryRuleFor(HloOpcode opcode) {
  using R = UnaryRule::Result;
  switch (opcode) {
    case HloOpcode::kFloor:
    case HloOpcode::kCeil:
    case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven:
    case HloOpcode::kErf:
      return {kFloatClass, R::kSame};
    case HloOpcode::kIsFinite:
      return {kFloatClass, R::kPred};
    case HloOpcode::kCos:
    case HloOpcode::kSin:
    case HloOpcode::kTan:
    case HloOpcode::kExp:
    case HloOpcode::kExpm1:
    case HloOpcode::kLog:
    case HloOpcode::kLog1p:
    case HloOpcode::kLogistic:
    case HloOpcode::kRsqrt:
    case HloOpcode::kSqrt:
    case HloOpcode::kCbrt:
    case HloOpcode::kTanh:
    case HloOpcode::kAcos:
    case HloOpcode::kAcosh:
    case HloOpcode::kAsin:
    case HloOpcode::kAsinh:
    case HloOpcode::kAtan:
    case HloOpcode::kAtanh:
    case HloOpcode::kCosh:
    case HloOpcode::kSinh:
      return {kFloatOrComplex, R::kSame};
    case HloOpcode::kReal:
    case HloOpcode::kImag:
      return {kFloatOrComplex, R::kComplexComponent};
    case HloOpcode::kAbs:
      return {kSignedClass | kFloatOrComplex, R::kComplexComponent};
    case HloOpcode::kSign:
      return {kSignedClass | kFloatOrComplex, R::kSame};
    case HloOpcode::kNegate:
      return {kIntegerClasses | kFloatOrComplex, R::kSame};
    case HloOpcode::kClz:
    case HloOpcode::kPopulationCount:
      return {kIntegerClasses, R::kSame};
    case HloOpcode::kNot:
      return {kPredClass | kIntegerClasses, R::kSame};
    default:
      return {};
  }
}

absl::StatusOr<Shape> InferUnary(const HloInstruction& instr, const UnaryRule& rule) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 1));
  const Shape& operand = instr.operand(0)->shape();
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  RETURN_IF_ERROR(ExpectTypeClass(instr, operand, "operand", rule.allowed));
  Shape result = WithoutLayout(operand);
  switch (rule.result) {
    case UnaryRule::Result::kSame:
      break;
    case UnaryRule::Result::kPred:
      result.set_element_type(PrimitiveType::PRED);
      break;
    case UnaryRule::Result::kComplexComponent:
      if (IsComplex(operand.element_type())) {
        result.set_element_type(ComplexComponentType(operand.element_type()));
      }
      break;
  }
  return result;
}

absl::StatusOr<Shape> InferCopy(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 1));
  return WithoutLayout(instr.operand(0)->shape());  // copy may also copy a tuple
}

absl::StatusOr<Shape> InferReducePrecision(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 1));
  const Shape& operand = instr.operand(0)->shape();
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  RETURN_IF_ERROR(ExpectTypeClass(instr, operand, "operand", kFloatClass));
  // One exponent bit is needed to tell zero from infinity.
  if (instr.attrs().exponent_bits < 1) {
    return Error(instr,
                 absl::StrCat("exponent_bits must be >= 1, got ", instr.attrs().exponent_bits));
  }
  if (instr.attrs().mantissa_bits < 0) {
    return Error(instr,
                 absl::StrCat("mantissa_bits must be >= 0, got ", instr.attrs().mantissa_bits));
  }
  return WithoutLayout(operand);
}

// ------------------------------------------------------------- conversions

absl::StatusOr<Shape> InferConvert(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 1));
  const Shape& operand = instr.operand(0)->shape();
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  PrimitiveType target = instr.shape().element_type();
  if (!IsArrayType(target)) {
    return Error(instr, absl::StrCat("cannot convert to non-array type ", TypeName(target)));
  }
  return WithElementType(WithoutLayout(operand), target);
}

// Equal widths keep the dimensions; a narrower target appends a minor
// dimension of size ratio, a wider one consumes a minor dimension of that size.
absl::StatusOr<Shape> InferBitcastConvert(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 1));
  const Shape& operand = instr.operand(0)->shape();
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  PrimitiveType from = operand.element_type();
  PrimitiveType to = instr.shape().element_type();
  if (!IsArrayType(to)) {
    return Error(instr, absl::StrCat("cannot bitcast to non-array type ", TypeName(to)));
  }
  if (IsComplex(from) != IsComplex(to)) {
    return Error(instr, absl::StrCat("cannot bitcast between complex and real types: ",
                                     TypeName(from), " => ", TypeName(to)));
  }
  int from_bits = PrimitiveBitWidth(from), to_bits = PrimitiveBitWidth(to);
  if (std::max(from_bits, to_bits) % std::min(from_bits, to_bits) != 0) {
    return Error(instr, absl::StrCat("bit widths ", from_bits, " (", TypeName(from), ") and ",
                                     to_bits, " (", TypeName(to), ") do not divide"));
  }
  Shape result = WithElementType(WithoutLayout(operand), to);
  if (from_bits > to_bits) result.add_dimension(from_bits / to_bits);
  if (from_bits < to_bits) {
    int64_t ratio = to_bits / from_bits;
    if (operand.rank() == 0 || operand.dimensions(operand.rank() - 1) != ratio) {
      return Error(instr, absl::StrCat("bitcast from ", TypeName(from), " to ", TypeName(to),
                                       " needs a minor dimension of size ", ratio, ", operand is ",
                                       operand.ToString(false)));
    }
    result = Shape::Array(to, {operand.dimensions().begin(), operand.dimensions().end() - 1});
    for (int64_t i = 0; i < result.rank(); ++i) {
      result.set_dynamic_dimension(i, operand.is_dynamic_dimension(i));
    }
  }
  return result;
}

absl::StatusOr<Shape> InferStochasticConvert(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 2));
  const Shape& operand = instr.operand(0)->shape();
  const Shape& random = instr.operand(1)->shape();
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  RETURN_IF_ERROR(ExpectArray(instr, random, "random operand"));
  RETURN_IF_ERROR(ExpectTypeClass(instr, operand, "operand", kFloatClass));
  RETURN_IF_ERROR(ExpectTypeClass(instr, random, "random operand", kUnsignedClass));
  if (PrimitiveBitWidth(operand.element_type()) != PrimitiveBitWidth(random.element_type())) {
    return Error(instr, absl::StrCat("random operand type ", TypeName(random.element_type()),
                                     " must have the bit width of operand type ",
                                     TypeName(operand.element_type())));
  }
  PrimitiveType target = instr.shape().element_type();
  if (!IsSignedInt(target)) {
    return Error(instr,
                 absl::StrCat("result type ", TypeName(target), " must be a signed integer type"));
  }
  ASSIGN_OR_RETURN(Shape merged, MergeDimensions(instr, operand, "operand", random, "random"));
  return WithElementType(merged, target);
}

// --------------------------------------------------------------- binary ops

uint32_t BinaryAllowedClasses(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAdd:
    case HloOpcode::kMultiply:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
      return kAnyArrayType;
    // XLA rejects pred for the non-monotone arithmetic ops.
    case HloOpcode::kSubtract:
    case HloOpcode::kDivide:
    case HloOpcode::kRemainder:
    case HloOpcode::kPower:
    case HloOpcode::kAtan2:
      return kIntegerClasses | kFloatOrComplex;
    case HloOpcode::kAnd:
    case HloOpcode::kOr:
    case HloOpcode::kXor:
      return kPredClass | kIntegerClasses;
    case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kShiftRightLogical:
    case HloOpcode::kMulhi:
      return kIntegerClasses;
    default:
      return 0;
  }
}

absl::StatusOr<Shape> InferBinaryArithmetic(const HloInstruction& instr, uint32_t allowed) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 2));
  const Shape& lhs = instr.operand(0)->shape();
  const Shape& rhs = instr.operand(1)->shape();
  RETURN_IF_ERROR(ExpectArray(instr, lhs, "lhs"));
  RETURN_IF_ERROR(ExpectArray(instr, rhs, "rhs"));
  if (!SameTypeIgnoringFpPrecision(lhs.element_type(), rhs.element_type())) {
    return Error(instr, absl::StrCat("operand types differ: ", TypeName(lhs.element_type()),
                                     " and ", TypeName(rhs.element_type())));
  }
  RETURN_IF_ERROR(ExpectTypeClass(instr, lhs, "operand", allowed));
  ASSIGN_OR_RETURN(Shape merged, MergeDimensions(instr, lhs, "lhs", rhs, "rhs"));
  return WithElementType(merged, HigherPrecision(lhs.element_type(), rhs.element_type()));
}

absl::StatusOr<Shape> InferComplex(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 2));
  const Shape& real = instr.operand(0)->shape();
  const Shape& imag = instr.operand(1)->shape();
  RETURN_IF_ERROR(ExpectArray(instr, real, "real part"));
  RETURN_IF_ERROR(ExpectArray(instr, imag, "imaginary part"));
  if (real.element_type() != imag.element_type()) {
    return Error(
        instr, absl::StrCat("real and imaginary parts differ in type: ",
                            TypeName(real.element_type()), " and ", TypeName(imag.element_type())));
  }
  PrimitiveType result_type;
  if (real.element_type() == PrimitiveType::F32) {
    result_type = PrimitiveType::C64;
  } else if (real.element_type() == PrimitiveType::F64) {
    result_type = PrimitiveType::C128;
  } else {
    return Error(instr,
                 absl::StrCat("parts must be f32 or f64, got ", TypeName(real.element_type())));
  }
  ASSIGN_OR_RETURN(Shape merged, MergeDimensions(instr, real, "real part", imag, "imaginary part"));
  return WithElementType(merged, result_type);
}

absl::StatusOr<Shape> InferCompare(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 2));
  const Shape& lhs = instr.operand(0)->shape();
  const Shape& rhs = instr.operand(1)->shape();
  RETURN_IF_ERROR(ExpectArray(instr, lhs, "lhs"));
  RETURN_IF_ERROR(ExpectArray(instr, rhs, "rhs"));
  if (lhs.element_type() != rhs.element_type()) {
    return Error(instr, absl::StrCat("operand types differ: ", TypeName(lhs.element_type()),
                                     " and ", TypeName(rhs.element_type())));
  }
  ASSIGN_OR_RETURN(Shape merged, MergeDimensions(instr, lhs, "lhs", rhs, "rhs"));
  return WithElementType(merged, PrimitiveType::PRED);
}

// -------------------------------------------------------------- ternary ops

// select(pred, on_true, on_false): pred is a scalar or has the branches' dims.
absl::StatusOr<Shape> InferSelect(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 3));
  const Shape& pred = instr.operand(0)->shape();
  const Shape& on_true = instr.operand(1)->shape();
  const Shape& on_false = instr.operand(2)->shape();
  RETURN_IF_ERROR(ExpectArray(instr, pred, "predicate"));
  RETURN_IF_ERROR(ExpectArray(instr, on_true, "on_true"));
  RETURN_IF_ERROR(ExpectArray(instr, on_false, "on_false"));
  if (pred.element_type() != PrimitiveType::PRED) {
    return Error(instr,
                 absl::StrCat("predicate type must be pred, got ", TypeName(pred.element_type())));
  }
  if (on_true.element_type() != on_false.element_type()) {
    return Error(
        instr, absl::StrCat("on_true and on_false types differ: ", TypeName(on_true.element_type()),
                            " and ", TypeName(on_false.element_type())));
  }
  ASSIGN_OR_RETURN(Shape result, MergeDimensions(instr, on_true, "on_true", on_false, "on_false"));
  if (pred.rank() == 0) return result;
  return MergeDimensions(instr, result, "branches", pred, "predicate");
}

// clamp(min, operand, max): min and max are scalars or have operand's dims.
absl::StatusOr<Shape> InferClamp(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 3));
  const Shape& min = instr.operand(0)->shape();
  const Shape& operand = instr.operand(1)->shape();
  const Shape& max = instr.operand(2)->shape();
  RETURN_IF_ERROR(ExpectArray(instr, min, "min"));
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  RETURN_IF_ERROR(ExpectArray(instr, max, "max"));
  Shape result = WithoutLayout(operand);
  for (const auto& [bound, role] : {std::pair<const Shape*, const char*>{&min, "min"},
                                    std::pair<const Shape*, const char*>{&max, "max"}}) {
    if (!SameTypeIgnoringFpPrecision(bound->element_type(), operand.element_type())) {
      return Error(instr,
                   absl::StrCat(role, " type ", TypeName(bound->element_type()),
                                " differs from operand type ", TypeName(operand.element_type())));
    }
    if (bound->rank() == 0) continue;
    ASSIGN_OR_RETURN(result, MergeDimensions(instr, result, "operand", *bound, role));
  }
  return WithElementType(result, operand.element_type());
}

}  // namespace

absl::StatusOr<Shape> InferElementwiseShape(const HloInstruction& instr) {
  HloOpcode opcode = instr.opcode();
  if (UnaryRule rule = UnaryRuleFor(opcode); rule.allowed != 0) return InferUnary(instr, rule);
  if (uint32_t allowed = BinaryAllowedClasses(opcode); allowed != 0) {
    return InferBinaryArithmetic(instr, allowed);
  }
  switch (opcode) {
    case HloOpcode::kCopy:
      return InferCopy(instr);
    case HloOpcode::kReducePrecision:
      return InferReducePrecision(instr);
    case HloOpcode::kConvert:
      return InferConvert(instr);
    case HloOpcode::kBitcastConvert:
      return InferBitcastConvert(instr);
    case HloOpcode::kStochasticConvert:
      return InferStochasticConvert(instr);
    case HloOpcode::kComplex:
      return InferComplex(instr);
    case HloOpcode::kCompare:
      return InferCompare(instr);
    case HloOpcode::kSelect:
      return InferSelect(instr);
    case HloOpcode::kClamp:
      return InferClamp(instr);
    default:
      return absl::NotFoundError("not handled");
  }
}

}  // namespace xlite::shape_inference
