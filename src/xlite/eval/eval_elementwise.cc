// Elementwise opcodes (every opcodes.def row with the kElementwise trait) on
// every element type, with the semantics of XLA's reference evaluator:
//  - integers wrap (two's complement, computed in uint64); x/0 = -1 (all ones),
//    x%0 = x, INT_MIN/-1 = INT_MIN, INT_MIN%-1 = 0; out-of-range shift amounts
//    give 0 (logical) or the sign fill (arithmetic);
//  - pred arithmetic behaves like int8 arithmetic followed by "!= 0";
//  - f16, bf16 and the f8/f4 types compute in float, f32 in float, f64 in
//    double; c64 in std::complex<float>, c128 in std::complex<double>;
//  - convert saturates float->int (NaN -> 0) and takes the real part of complex.
#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <new>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "xlite/eval/eval_util.h"
#include "xlite/eval/evaluator.h"
#include "xlite/ir/comparison.h"
#include "xlite/ir/float_format.h"
#include "xlite/ir/instruction.h"
#include "xlite/support/status.h"

namespace xlite::eval {
namespace {

using Operands = absl::Span<const Literal* const>;

// ------------------------------------------------------------------ shapes

absl::Status BadOperand(const HloInstruction& instr, int64_t i, absl::string_view why) {
  return InvalidArgument(HloOpcodeString(instr.opcode()), " '", instr.name(), "': operand ", i, " ",
                         why);
}

// Index of element `i` of the result in an operand that is either the same
// shape as the result or a broadcast scalar.
struct Input {
  const Literal* literal = nullptr;
  bool is_broadcast_scalar = false;
  int64_t At(int64_t i) const { return is_broadcast_scalar ? 0 : i; }
};

// Checks that operand `i` is an array with the result's dimensions (or a
// scalar, where `allow_scalar`).
absl::StatusOr<Input> ArrayInput(const HloInstruction& instr, Operands operands, int64_t i,
                                 const Shape& result, bool allow_scalar = false) {
  if (i >= static_cast<int64_t>(operands.size())) {
    return InvalidArgument(HloOpcodeString(instr.opcode()), " '", instr.name(), "' needs ", i + 1,
                           " operands, got ", operands.size());
  }
  const Literal* lit = operands[i];
  if (!lit->shape().IsArray()) return BadOperand(instr, i, "is not an array");
  if (lit->shape().dimensions() == result.dimensions()) return Input{lit, false};
  if (allow_scalar && lit->shape().rank() == 0) return Input{lit, true};
  return BadOperand(instr, i,
                    absl::StrCat("has shape ", lit->shape().ToString(false),
                                 ", expected dimensions of ", result.ToString(false)));
}

absl::Status UnsupportedType(const HloInstruction& instr, PrimitiveType type) {
  return InvalidArgument(HloOpcodeString(instr.opcode()), " '", instr.name(), "': element type ",
                         PrimitiveTypeName(type), " is not supported");
}

// ------------------------------------------------------------ real floats

bool IsHalfWidth(PrimitiveType t) { return t == PrimitiveType::F16 || t == PrimitiveType::BF16; }

// The exact value of a floating-point element.
double ReadFloatAsDouble(const Literal& lit, int64_t i) {
  switch (TypeOf(lit)) {
    case PrimitiveType::F32:
      return std::bit_cast<float>(static_cast<uint32_t>(lit.GetBits(i)));
    case PrimitiveType::F64:
      return std::bit_cast<double>(lit.GetBits(i));
    default:
      return lit.GetDouble(i);
  }
}

template <typename F>
F ReadFloat(const Literal& lit, int64_t i) {
  return static_cast<F>(ReadFloatAsDouble(lit, i));
}

// Rounds `v` to the literal's floating-point type. f16/bf16 round through f32
// as Eigen's half types do; the f8/f4 types round once, as ml_dtypes does.
void WriteFloat(Literal& lit, int64_t i, double v) {
  const PrimitiveType t = TypeOf(lit);
  if (t == PrimitiveType::F64) return lit.SetBits(i, std::bit_cast<uint64_t>(v));
  if (t == PrimitiveType::F32) {
    return lit.SetBits(i, std::bit_cast<uint32_t>(static_cast<float>(v)));
  }
  if (IsHalfWidth(t)) v = static_cast<float>(v);
  lit.SetBits(i, EncodeFloat(*GetFloatFormat(t), v));
}

template <typename F>
std::optional<F> FloatUnary(HloOpcode op, F x) {
  switch (op) {
    case HloOpcode::kAbs:
      return std::fabs(x);
    case HloOpcode::kNegate:
      return -x;
    case HloOpcode::kSign:
      return std::isnan(x) ? x : std::copysign(x != F{0} ? F{1} : F{0}, x);
    case HloOpcode::kCeil:
      return std::ceil(x);
    case HloOpcode::kFloor:
      return std::floor(x);
    case HloOpcode::kRoundNearestAfz:
      return std::round(x);
    case HloOpcode::kRoundNearestEven:
      return std::nearbyint(x);
    case HloOpcode::kSqrt:
      return std::sqrt(x);
    case HloOpcode::kRsqrt:
      return F{1} / std::sqrt(x);
    case HloOpcode::kCbrt:
      return std::cbrt(x);
    case HloOpcode::kExp:
      return std::exp(x);
    case HloOpcode::kExpm1:
      return std::expm1(x);
    case HloOpcode::kLog:
      return std::log(x);
    case HloOpcode::kLog1p:
      return std::log1p(x);
    case HloOpcode::kLogistic:
      return F{1} / (F{1} + std::exp(-x));
    case HloOpcode::kSin:
      return std::sin(x);
    case HloOpcode::kCos:
      return std::cos(x);
    case HloOpcode::kTan:
      return std::tan(x);
    case HloOpcode::kTanh:
      return std::tanh(x);
    case HloOpcode::kSinh:
      return std::sinh(x);
    case HloOpcode::kCosh:
      return std::cosh(x);
    case HloOpcode::kAsin:
      return std::asin(x);
    case HloOpcode::kAcos:
      return std::acos(x);
    case HloOpcode::kAtan:
      return std::atan(x);
    case HloOpcode::kAsinh:
      return std::asinh(x);
    case HloOpcode::kAcosh:
      return std::acosh(x);
    case HloOpcode::kAtanh:
      return std::atanh(x);
    case HloOpcode::kErf:
      return std::erf(x);
    default:
      return std::nullopt;
  }
}

// maximum/minimum propagate NaN (the lhs one first); otherwise std::max/min.
template <typename F>
std::optional<F> FloatBinary(HloOpcode op, F x, F y) {
  switch (op) {
    case HloOpcode::kAdd:
      return x + y;
    case HloOpcode::kSubtract:
      return x - y;
    case HloOpcode::kMultiply:
      return x * y;
    case HloOpcode::kDivide:
      return x / y;
    case HloOpcode::kRemainder:
      return std::fmod(x, y);
    case HloOpcode::kAtan2:
      return std::atan2(x, y);
    case HloOpcode::kMaximum:
      if (std::isnan(x)) return x;
      if (std::isnan(y)) return y;
      return std::max(x, y);
    case HloOpcode::kMinimum:
      if (std::isnan(x)) return x;
      if (std::isnan(y)) return y;
      return std::min(x, y);
    case HloOpcode::kPower:
      // 1^y = 1 and x^0 = 1 for every x and y, NaN included.
      if (x == F{1} || y == F{0}) return F{1};
      return std::pow(x, y);
    default:
      return std::nullopt;
  }
}

// ----------------------------------------------------------------- complex

template <typename C>
C ReadComplex(const Literal& lit, int64_t i) {
  return static_cast<C>(lit.GetComplex(i));
}

template <typename C>
void WriteComplex(Literal& lit, int64_t i, C v) {
  lit.SetComplex(i, std::complex<double>(v.real(), v.imag()));
}

template <typename C>
std::optional<C> ComplexUnary(HloOpcode op, C z) {
  using F = typename C::value_type;
  switch (op) {
    case HloOpcode::kNegate:
      return -z;
    case HloOpcode::kSign: {
      F magnitude = std::abs(z);
      return magnitude == F{0} ? C{0} : z / magnitude;
    }
    case HloOpcode::kSqrt:
      return std::sqrt(z);
    case HloOpcode::kRsqrt:
      return C{1} / std::sqrt(z);
    case HloOpcode::kCbrt:  // principal cube root
      return std::pow(z, C{F{1} / F{3}});
    case HloOpcode::kExp:
      return std::exp(z);
    case HloOpcode::kExpm1:
      return std::exp(z) - C{1};
    case HloOpcode::kLog:
      return std::log(z);
    case HloOpcode::kLog1p:
      return std::log(C{1} + z);
    case HloOpcode::kLogistic:
      return C{1} / (C{1} + std::exp(-z));
    case HloOpcode::kSin:
      return std::sin(z);
    case HloOpcode::kCos:
      return std::cos(z);
    case HloOpcode::kTan:
      return std::tan(z);
    case HloOpcode::kTanh:
      return std::tanh(z);
    case HloOpcode::kSinh:
      return std::sinh(z);
    case HloOpcode::kCosh:
      return std::cosh(z);
    case HloOpcode::kAsin:
      return std::asin(z);
    case HloOpcode::kAcos:
      return std::acos(z);
    case HloOpcode::kAtan:
      return std::atan(z);
    case HloOpcode::kAsinh:
      return std::asinh(z);
    case HloOpcode::kAcosh:
      return std::acosh(z);
    case HloOpcode::kAtanh:
      return std::atanh(z);
    default:
      return std::nullopt;
  }
}

template <typename C>
C ComplexPower(C x, C y) {
  using F = typename C::value_type;
  if (x == C{1} || y == C{0}) return C{1};
  const bool x_is_positive_infinity = x.imag() == F{0} && x.real() > F{0} && std::isinf(x.real());
  if (x_is_positive_infinity && y.imag() == F{0} && y.real() > F{0}) return x;
  if (x_is_positive_infinity && y.imag() == F{0} && y.real() < F{0}) return C{0};
  return std::pow(x, y);
}

template <typename C>
std::optional<C> ComplexBinary(HloOpcode op, C x, C y) {
  switch (op) {
    case HloOpcode::kAdd:
      return x + y;
    case HloOpcode::kSubtract:
      return x - y;
    case HloOpcode::kMultiply:
      return x * y;
    case HloOpcode::kDivide:
      return x / y;
    case HloOpcode::kPower:
      return ComplexPower(x, y);
    case HloOpcode::kMaximum:  // lexicographic on (real, imag), as StableHLO defines it
      return std::pair(x.real(), x.imag()) < std::pair(y.real(), y.imag()) ? y : x;
    case HloOpcode::kMinimum:
      return std::pair(y.real(), y.imag()) < std::pair(x.real(), x.imag()) ? y : x;
    case HloOpcode::kAtan2: {
      // atan2(y, x) = -i * log((x + i*y) / sqrt(x^2 + y^2)), lhs is y.
      const C i{0, 1};
      return -i * std::log((y + i * x) / std::sqrt(y * y + x * x));
    }
    default:
      return std::nullopt;
  }
}

// ---------------------------------------------------------------- integers

// An integer type of `bits` bits. Values travel as uint64 holding the
// two's-complement bit pattern, zero-extended ("canonical").
struct IntType {
  int bits = 64;
  bool is_signed = true;

  static IntType Of(PrimitiveType t) {
    if (t == PrimitiveType::PRED) return {8, true};  // pred computes as int8
    return {PrimitiveBitWidth(t), IsSignedInt(t)};
  }
  uint64_t Mask() const { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }
  uint64_t Wrap(uint64_t v) const { return v & Mask(); }
  int64_t AsSigned(uint64_t v) const {
    v = Wrap(v);
    if (bits < 64 && ((v >> (bits - 1)) & 1)) v |= ~Mask();
    return static_cast<int64_t>(v);
  }
  bool Less(uint64_t a, uint64_t b) const {
    return is_signed ? AsSigned(a) < AsSigned(b) : Wrap(a) < Wrap(b);
  }
  uint64_t Min() const { return is_signed ? Wrap(uint64_t{1} << (bits - 1)) : 0; }
  uint64_t Max() const { return is_signed ? Mask() >> 1 : Mask(); }
  // The extreme values as doubles (rounded: 2^63 for s64's maximum).
  double MinValue() const { return is_signed ? static_cast<double>(AsSigned(Min())) : 0.0; }
  double MaxValue() const {
    return is_signed ? static_cast<double>(AsSigned(Max())) : static_cast<double>(Max());
  }
};

uint64_t ReadInt(const Literal& lit, int64_t i) {
  return IntType::Of(TypeOf(lit)).Wrap(lit.GetBits(i));
}

// Writes a value computed in `type`'s arithmetic; pred stores "!= 0".
void WriteInt(Literal& lit, int64_t i, uint64_t v) {
  const PrimitiveType t = TypeOf(lit);
  const IntType type = IntType::Of(t);
  if (t == PrimitiveType::PRED) return lit.SetBits(i, type.Wrap(v) != 0 ? 1 : 0);
  lit.SetBits(i, type.Wrap(v));
}

uint64_t IntDivide(IntType t, uint64_t x, uint64_t y) {
  if (t.Wrap(y) == 0) return t.Mask();
  if (!t.is_signed) return t.Wrap(x) / t.Wrap(y);
  const int64_t sy = t.AsSigned(y);
  if (sy == -1) return t.Wrap(0 - x);  // INT_MIN / -1 wraps to INT_MIN
  return t.Wrap(static_cast<uint64_t>(t.AsSigned(x) / sy));
}

uint64_t IntRemainder(IntType t, uint64_t x, uint64_t y) {
  if (t.Wrap(y) == 0) return t.Wrap(x);
  if (!t.is_signed) return t.Wrap(x) % t.Wrap(y);
  const int64_t sy = t.AsSigned(y);
  if (sy == -1) return 0;
  return t.Wrap(static_cast<uint64_t>(t.AsSigned(x) % sy));
}

// x^y; for signed types a negative exponent gives 0 unless x == 1.
uint64_t IntPower(IntType t, uint64_t x, uint64_t y) {
  if (t.Wrap(x) == 1 || t.Wrap(y) == 0) return 1;
  if (t.is_signed && t.AsSigned(y) < 0) return 0;
  uint64_t result = 1, base = x, exponent = t.Wrap(y);
  while (exponent != 0) {
    if (exponent & 1) result *= base;
    base *= base;
    exponent >>= 1;
  }
  return t.Wrap(result);
}

// The high half of the double-width product.
uint64_t IntMulhi(IntType t, uint64_t x, uint64_t y) {
  if (t.is_signed) {
    const __int128 product = static_cast<__int128>(t.AsSigned(x)) * t.AsSigned(y);
    return t.Wrap(static_cast<uint64_t>(product >> t.bits));
  }
  const unsigned __int128 product = static_cast<unsigned __int128>(t.Wrap(x)) * t.Wrap(y);
  return t.Wrap(static_cast<uint64_t>(product >> t.bits));
}

uint64_t ShiftRightArithmetic(IntType t, uint64_t x, uint64_t amount) {
  const int64_t value = t.AsSigned(x);
  if (amount >= static_cast<uint64_t>(t.bits)) return value < 0 ? t.Mask() : 0;
  return t.Wrap(static_cast<uint64_t>(value >> amount));
}

std::optional<uint64_t> IntUnary(HloOpcode op, IntType t, uint64_t x) {
  switch (op) {
    case HloOpcode::kAbs:
      return t.is_signed && t.AsSigned(x) < 0 ? t.Wrap(0 - x) : t.Wrap(x);
    case HloOpcode::kNegate:
      return t.Wrap(0 - x);
    case HloOpcode::kSign:
      if (t.Wrap(x) == 0) return 0;
      return t.is_signed && t.AsSigned(x) < 0 ? t.Mask() : 1;
    case HloOpcode::kNot:
      return t.Wrap(~x);
    case HloOpcode::kPopulationCount:
      return std::popcount(t.Wrap(x));
    case HloOpcode::kClz:
      return t.bits - std::bit_width(t.Wrap(x));
    default:
      return std::nullopt;
  }
}

std::optional<uint64_t> IntBinary(HloOpcode op, IntType t, uint64_t x, uint64_t y) {
  const uint64_t shift = t.Wrap(y);  // shift amounts are read as unsigned
  const bool shift_out_of_range = shift >= static_cast<uint64_t>(t.bits);
  switch (op) {
    case HloOpcode::kAdd:
      return t.Wrap(x + y);
    case HloOpcode::kSubtract:
      return t.Wrap(x - y);
    case HloOpcode::kMultiply:
      return t.Wrap(x * y);
    case HloOpcode::kDivide:
      return IntDivide(t, x, y);
    case HloOpcode::kRemainder:
      return IntRemainder(t, x, y);
    case HloOpcode::kMaximum:
      return t.Less(x, y) ? y : x;
    case HloOpcode::kMinimum:
      return t.Less(y, x) ? y : x;
    case HloOpcode::kAnd:
      return x & y;
    case HloOpcode::kOr:
      return x | y;
    case HloOpcode::kXor:
      return x ^ y;
    case HloOpcode::kPower:
      return IntPower(t, x, y);
    case HloOpcode::kMulhi:
      return IntMulhi(t, x, y);
    case HloOpcode::kShiftLeft:
      return shift_out_of_range ? 0 : t.Wrap(x << shift);
    case HloOpcode::kShiftRightLogical:
      return shift_out_of_range ? 0 : t.Wrap(x) >> shift;
    case HloOpcode::kShiftRightArithmetic:
      return ShiftRightArithmetic(t, x, shift);
    default:
      return std::nullopt;
  }
}

// pred: logical not; bit-level ops have no pred meaning; the rest computes as
// int8 (the caller stores "!= 0").
std::optional<uint64_t> PredUnary(HloOpcode op, uint64_t x) {
  if (op == HloOpcode::kNot) return x == 0 ? 1 : 0;
  if (op == HloOpcode::kPopulationCount || op == HloOpcode::kClz) return std::nullopt;
  return IntUnary(op, IntType::Of(PrimitiveType::PRED), x);
}

std::optional<uint64_t> PredBinary(HloOpcode op, uint64_t x, uint64_t y) {
  switch (op) {
    case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightLogical:
    case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kMulhi:
      return std::nullopt;
    default:
      return IntBinary(op, IntType::Of(PrimitiveType::PRED), x, y);
  }
}

// ------------------------------------------------- arithmetic, one domain

// Applies `compute(x)` (an optional) to every element: `read` and `write`
// move values of one domain between literals and the computation.
template <typename Read, typename Compute, typename Write>
absl::StatusOr<Literal> MapUnary(const HloInstruction& instr, const Input& x, Read read,
                                 Compute compute, Write write) {
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  using Value = decltype(read(*x.literal, int64_t{0}));
  if (!compute(Value{}).has_value()) return UnsupportedType(instr, TypeOf(*x.literal));
  for (int64_t i = 0, n = out.element_count(); i < n; ++i) {
    write(out, i, *compute(read(*x.literal, x.At(i))));
  }
  return out;
}

template <typename Read, typename Compute, typename Write>
absl::StatusOr<Literal> MapBinary(const HloInstruction& instr, const Input& x, const Input& y,
                                  Read read, Compute compute, Write write) {
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  using Value = decltype(read(*x.literal, int64_t{0}));
  if (!compute(Value{}, Value{}).has_value()) return UnsupportedType(instr, TypeOf(*x.literal));
  for (int64_t i = 0, n = out.element_count(); i < n; ++i) {
    write(out, i, *compute(read(*x.literal, x.At(i)), read(*y.literal, y.At(i))));
  }
  return out;
}

template <typename F>
absl::StatusOr<Literal> FloatArithmetic(const HloInstruction& instr, const std::vector<Input>& in) {
  const HloOpcode op = instr.opcode();
  auto read = [](const Literal& l, int64_t i) { return ReadFloat<F>(l, i); };
  auto write = [](Literal& l, int64_t i, F v) { WriteFloat(l, i, static_cast<double>(v)); };
  if (in.size() == 1)
    return MapUnary(
        instr, in[0], read, [op](F x) { return FloatUnary(op, x); }, write);
  return MapBinary(
      instr, in[0], in[1], read, [op](F x, F y) { return FloatBinary(op, x, y); }, write);
}

template <typename C>
absl::StatusOr<Literal> ComplexArithmetic(const HloInstruction& instr,
                                          const std::vector<Input>& in) {
  const HloOpcode op = instr.opcode();
  auto read = [](const Literal& l, int64_t i) { return ReadComplex<C>(l, i); };
  auto write = [](Literal& l, int64_t i, C v) { WriteComplex(l, i, v); };
  if (in.size() == 1) {
    return MapUnary(
        instr, in[0], read, [op](C x) { return ComplexUnary(op, x); }, write);
  }
  return MapBinary(
      instr, in[0], in[1], read, [op](C x, C y) { return ComplexBinary(op, x, y); }, write);
}

absl::StatusOr<Literal> IntArithmetic(const HloInstruction& instr, const std::vector<Input>& in) {
  const HloOpcode op = instr.opcode();
  const PrimitiveType type = TypeOf(*in[0].literal);
  const IntType t = IntType::Of(type);
  const bool is_pred = type == PrimitiveType::PRED;
  auto read = [](const Literal& l, int64_t i) { return ReadInt(l, i); };
  auto write = [](Literal& l, int64_t i, uint64_t v) { WriteInt(l, i, v); };
  if (in.size() == 1) {
    return MapUnary(
        instr, in[0], read,
        [&](uint64_t x) { return is_pred ? PredUnary(op, x) : IntUnary(op, t, x); }, write);
  }
  return MapBinary(
      instr, in[0], in[1], read,
      [&](uint64_t x, uint64_t y) {
        return is_pred ? PredBinary(op, x, y) : IntBinary(op, t, x, y);
      },
      write);
}

// Unary and binary opcodes whose operands and result share one element type.
absl::StatusOr<Literal> EvalArithmetic(const HloInstruction& instr, Operands operands, int arity) {
  if (static_cast<int>(operands.size()) != arity) {
    return InvalidArgument(HloOpcodeString(instr.opcode()), " '", instr.name(), "' takes ", arity,
                           " operands, got ", operands.size());
  }
  std::vector<Input> in;
  for (int i = 0; i < arity; ++i) {
    ASSIGN_OR_RETURN(Input input, ArrayInput(instr, operands, i, instr.shape()));
    if (TypeOf(*input.literal) != instr.shape().element_type()) {
      return BadOperand(instr, i, "has a different element type than the result");
    }
    in.push_back(input);
  }
  const PrimitiveType type = instr.shape().element_type();
  switch (GetPrimitiveKind(type)) {
    case PrimitiveKind::kPred:
    case PrimitiveKind::kSigned:
    case PrimitiveKind::kUnsigned:
      return IntArithmetic(instr, in);
    case PrimitiveKind::kFloat:
      if (type == PrimitiveType::F64) return FloatArithmetic<double>(instr, in);
      return FloatArithmetic<float>(instr, in);
    case PrimitiveKind::kComplex:
      if (type == PrimitiveType::C128) return ComplexArithmetic<std::complex<double>>(instr, in);
      return ComplexArithmetic<std::complex<float>>(instr, in);
    default:
      return UnsupportedType(instr, type);
  }
}

// ----------------------------------------------------------------- compare

template <typename T>
bool Compare(ComparisonDirection direction, const T& a, const T& b) {
  switch (direction) {
    case ComparisonDirection::kEq:
      return a == b;
    case ComparisonDirection::kNe:
      return a != b;
    case ComparisonDirection::kGe:
      return a >= b;
    case ComparisonDirection::kGt:
      return a > b;
    case ComparisonDirection::kLe:
      return a <= b;
    case ComparisonDirection::kLt:
      return a < b;
  }
  return false;
}

// A key whose signed order is the total order of floats:
// -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
int64_t TotalOrderKey(const Literal& lit, int64_t i) {
  const PrimitiveType t = TypeOf(lit);
  const IntType bits_type{PrimitiveBitWidth(t), true};
  const uint64_t bits = bits_type.Wrap(lit.GetBits(i));
  if (!GetFloatFormat(t)->has_sign) return static_cast<int64_t>(bits);
  const int64_t as_signed = bits_type.AsSigned(bits);
  return as_signed < 0 ? as_signed ^ static_cast<int64_t>(bits_type.Mask() >> 1) : as_signed;
}

// The weak order's key: the total order after -0 becomes +0 and every NaN one
// NaN above +inf (what JAX's sort canonicalization gives, and what XLA's
// comparison expander lowers order=WEAK to).
int64_t WeakOrderKey(const Literal& lit, int64_t i) {
  const double v = ReadFloatAsDouble(lit, i);
  if (std::isnan(v)) return std::numeric_limits<int64_t>::max();
  if (v == 0) return 0;
  return TotalOrderKey(lit, i);
}

absl::StatusOr<Literal> EvalCompare(const HloInstruction& instr, Operands operands) {
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  ASSIGN_OR_RETURN(Input a, ArrayInput(instr, operands, 0, instr.shape()));
  ASSIGN_OR_RETURN(Input b, ArrayInput(instr, operands, 1, instr.shape()));
  const PrimitiveType type = TypeOf(*a.literal);
  if (TypeOf(*b.literal) != type) return BadOperand(instr, 1, "has a different element type");
  const ComparisonDirection dir = instr.attrs().comparison_direction;
  const ComparisonOrder order = EffectiveComparisonOrder(instr.attrs(), type);
  const int64_t n = out.element_count();
  const Literal& x = *a.literal;
  const Literal& y = *b.literal;
  auto set = [&](int64_t i, bool v) { out.SetBits(i, v ? 1 : 0); };
  switch (GetPrimitiveKind(type)) {
    case PrimitiveKind::kPred:
    case PrimitiveKind::kSigned:
    case PrimitiveKind::kUnsigned: {
      // As XLA: the element type decides signedness; type=SIGNED/UNSIGNED
      // only ever meant a total order.
      const IntType t = IntType::Of(type);
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t u = ReadInt(x, a.At(i)), v = ReadInt(y, b.At(i));
        set(i, t.is_signed ? Compare(dir, t.AsSigned(u), t.AsSigned(v)) : Compare(dir, u, v));
      }
      return out;
    }
    case PrimitiveKind::kFloat:
      for (int64_t i = 0; i < n; ++i) {
        switch (order) {
          case ComparisonOrder::kTotal:
            set(i, Compare(dir, TotalOrderKey(x, a.At(i)), TotalOrderKey(y, b.At(i))));
            break;
          case ComparisonOrder::kWeak:
            set(i, Compare(dir, WeakOrderKey(x, a.At(i)), WeakOrderKey(y, b.At(i))));
            break;
          case ComparisonOrder::kPartial:
            set(i, Compare(dir, ReadFloatAsDouble(x, a.At(i)), ReadFloatAsDouble(y, b.At(i))));
            break;
        }
      }
      return out;
    case PrimitiveKind::kComplex:
      if (dir != ComparisonDirection::kEq && dir != ComparisonDirection::kNe) {
        return InvalidArgument("compare '", instr.name(), "': complex values are unordered");
      }
      for (int64_t i = 0; i < n; ++i) {
        const bool equal = x.GetComplex(a.At(i)) == y.GetComplex(b.At(i));
        set(i, dir == ComparisonDirection::kEq ? equal : !equal);
      }
      return out;
    default:
      return UnsupportedType(instr, type);
  }
}

// ------------------------------------------------------ select, clamp, copy

absl::StatusOr<Literal> EvalSelect(const HloInstruction& instr, Operands operands) {
  if (operands.size() != 3) return InvalidArgument("select '", instr.name(), "' takes 3 operands");
  const Literal& pred = *operands[0];
  if (TypeOf(pred) != PrimitiveType::PRED) return BadOperand(instr, 0, "is not pred");
  if (!instr.shape().IsArray()) {  // the old tuple-select: a scalar picks a whole value
    if (pred.shape().rank() != 0) return BadOperand(instr, 0, "must be a scalar");
    return pred.GetBits(0) ? *operands[1] : *operands[2];
  }
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  ASSIGN_OR_RETURN(Input p, ArrayInput(instr, operands, 0, instr.shape(), true));
  ASSIGN_OR_RETURN(Input on_true, ArrayInput(instr, operands, 1, instr.shape()));
  ASSIGN_OR_RETURN(Input on_false, ArrayInput(instr, operands, 2, instr.shape()));
  for (int i = 1; i <= 2; ++i) {
    if (TypeOf(*operands[i]) != TypeOf(out)) return BadOperand(instr, i, "has the wrong type");
  }
  for (int64_t i = 0, n = out.element_count(); i < n; ++i) {
    const Input& chosen = (p.literal->GetBits(p.At(i)) & 1) ? on_true : on_false;
    CopyElement(*chosen.literal, chosen.At(i), out, i);
  }
  return out;
}

// clamp(lo, x, hi) = min(max(x, lo), hi); a NaN in lo, x or hi (in that
// order) is the result.
absl::StatusOr<Literal> EvalClamp(const HloInstruction& instr, Operands operands) {
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  ASSIGN_OR_RETURN(Input lo, ArrayInput(instr, operands, 0, instr.shape(), true));
  ASSIGN_OR_RETURN(Input x, ArrayInput(instr, operands, 1, instr.shape()));
  ASSIGN_OR_RETURN(Input hi, ArrayInput(instr, operands, 2, instr.shape(), true));
  const PrimitiveType type = TypeOf(out);
  for (int i = 0; i < 3; ++i) {
    if (TypeOf(*operands[i]) != type) return BadOperand(instr, i, "has the wrong type");
  }
  const int64_t n = out.element_count();
  if (IsFloatingPoint(type)) {
    for (int64_t i = 0; i < n; ++i) {
      const double l = ReadFloatAsDouble(*lo.literal, lo.At(i));
      const double v = ReadFloatAsDouble(*x.literal, x.At(i));
      const double h = ReadFloatAsDouble(*hi.literal, hi.At(i));
      // max(x, lo) first, then min with hi: hi wins when lo > hi.
      const Input& low_clamped = v < l ? lo : x;
      const double m = v < l ? l : v;
      const Input& pick = std::isnan(l)   ? lo
                          : std::isnan(v) ? x
                          : std::isnan(h) ? hi
                          : h < m         ? hi
                                          : low_clamped;
      CopyElement(*pick.literal, pick.At(i), out, i);
    }
    return out;
  }
  if (IsComplex(type) || !IsArrayType(type)) return UnsupportedType(instr, type);
  const IntType t = IntType::Of(type);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t l = ReadInt(*lo.literal, lo.At(i));
    const uint64_t v = ReadInt(*x.literal, x.At(i));
    const uint64_t h = ReadInt(*hi.literal, hi.At(i));
    const uint64_t low_clamped = t.Less(v, l) ? l : v;
    WriteInt(out, i, t.Less(h, low_clamped) ? h : low_clamped);
  }
  return out;
}

// ----------------------------------------------------------------- convert

// Saturates to `t`'s range; NaN -> 0; otherwise truncates toward zero.
uint64_t FloatToInt(double v, IntType t) {
  if (std::isnan(v)) return 0;
  if (v >= t.MaxValue()) return t.Max();
  if (v <= t.MinValue()) return t.Min();
  if (t.is_signed) return t.Wrap(static_cast<uint64_t>(static_cast<int64_t>(v)));
  return static_cast<uint64_t>(v);
}

// An integer or pred element as the signed or unsigned value it denotes.
struct IntegerValue {
  int64_t as_signed;
  uint64_t as_unsigned;
  bool is_signed;
  template <typename F>
  F To() const {
    return is_signed ? static_cast<F>(as_signed) : static_cast<F>(as_unsigned);
  }
};

IntegerValue ReadIntegerValue(const Literal& lit, int64_t i) {
  const PrimitiveType t = TypeOf(lit);
  if (t == PrimitiveType::PRED) return {int64_t(lit.GetBits(i) & 1), lit.GetBits(i) & 1, false};
  const IntType type = IntType::Of(t);
  const uint64_t bits = type.Wrap(lit.GetBits(i));
  return {type.AsSigned(bits), bits, type.is_signed};
}

// Integers reach f32 and narrower types through float (one rounding to f32,
// as XLA's evaluator does), f64 directly.
double IntegerToFloat(const IntegerValue& v, PrimitiveType to) {
  if (to == PrimitiveType::F64 || to == PrimitiveType::C128) return v.To<double>();
  return static_cast<double>(v.To<float>());
}

void ConvertValue(const Literal& in, int64_t i, Literal& out, int64_t j) {
  const PrimitiveType from = TypeOf(in), to = TypeOf(out);
  const PrimitiveKind from_kind = GetPrimitiveKind(from), to_kind = GetPrimitiveKind(to);
  const bool from_integer = from_kind == PrimitiveKind::kPred || IsInteger(from);
  if (from == to) return CopyElement(in, i, out, j);  // exact, NaN payloads included
  if (to_kind == PrimitiveKind::kComplex) {
    std::complex<double> v;
    if (from_integer) v = IntegerToFloat(ReadIntegerValue(in, i), to);
    if (IsFloatingPoint(from)) v = ReadFloatAsDouble(in, i);
    if (IsComplex(from)) v = in.GetComplex(i);
    return out.SetComplex(j, v);  // SetComplex rounds each part to c64's float
  }
  if (from_integer) {
    const IntegerValue v = ReadIntegerValue(in, i);
    if (to == PrimitiveType::PRED) return out.SetBits(j, v.as_unsigned != 0);
    if (IsFloatingPoint(to)) return WriteFloat(out, j, IntegerToFloat(v, to));
    const uint64_t extended = v.is_signed ? static_cast<uint64_t>(v.as_signed) : v.as_unsigned;
    return out.SetBits(j, IntType::Of(to).Wrap(extended));
  }
  // Floating-point or complex source (complex contributes its real part).
  const double v = IsComplex(from) ? in.GetComplex(i).real() : ReadFloatAsDouble(in, i);
  if (to == PrimitiveType::PRED) return out.SetBits(j, v != 0 ? 1 : 0);  // NaN is true
  if (IsFloatingPoint(to)) return WriteFloat(out, j, v);
  out.SetBits(j, FloatToInt(v, IntType::Of(to)));
}

absl::StatusOr<Literal> EvalConvert(const HloInstruction& instr, Operands operands) {
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  ASSIGN_OR_RETURN(Input x, ArrayInput(instr, operands, 0, instr.shape()));
  if (!IsArrayType(TypeOf(*x.literal))) return UnsupportedType(instr, TypeOf(*x.literal));
  for (int64_t i = 0, n = out.element_count(); i < n; ++i) ConvertValue(*x.literal, i, out, i);
  return out;
}

// XLA's stochastic rounding: round |x| up when random < frac(|x|) * 2^bits.
uint64_t StochasticRound(double x, uint64_t random, int random_bits, IntType t) {
  if (std::isinf(x)) return x < 0 ? t.Min() : t.Max();
  if (std::isnan(x)) return 0;
  if (x >= t.MaxValue()) return t.Max();
  if (x <= t.MinValue()) return t.Min();
  const bool negative = std::signbit(x);
  const double magnitude = std::fabs(x);
  uint64_t truncated = static_cast<uint64_t>(magnitude);
  const double fraction = magnitude - static_cast<double>(truncated);
  if (fraction != 0) {
    const uint64_t threshold = static_cast<uint64_t>(std::ldexp(fraction, random_bits));
    if (random < threshold) {
      if (truncated == t.Max()) return t.Min();
      ++truncated;
    }
  }
  return t.Wrap(negative ? 0 - truncated : truncated);
}

absl::StatusOr<Literal> EvalStochasticConvert(const HloInstruction& instr, Operands operands) {
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  ASSIGN_OR_RETURN(Input x, ArrayInput(instr, operands, 0, instr.shape()));
  ASSIGN_OR_RETURN(Input random, ArrayInput(instr, operands, 1, instr.shape()));
  const PrimitiveType from = TypeOf(*x.literal), bits = TypeOf(*random.literal);
  if (!IsFloatingPoint(from)) return UnsupportedType(instr, from);
  if (!IsUnsignedInt(bits) || PrimitiveBitWidth(bits) != PrimitiveBitWidth(from)) {
    return BadOperand(instr, 1, "must be unsigned with the operand's bit width");
  }
  if (!IsInteger(TypeOf(out))) return UnsupportedType(instr, TypeOf(out));
  const IntType t = IntType::Of(TypeOf(out));
  for (int64_t i = 0, n = out.element_count(); i < n; ++i) {
    out.SetBits(i, StochasticRound(ReadFloatAsDouble(*x.literal, i), ReadInt(*random.literal, i),
                                   PrimitiveBitWidth(bits), t));
  }
  return out;
}

// ------------------------------------------------------- reduce-precision

// XLA's bit manipulation: round the mantissa to nearest even, then flush
// values beyond the reduced exponent range to signed inf / signed zero
// (denormals of the reduced type flush to zero). NaN stays NaN (inf when no
// mantissa bits remain).
template <typename U>
U ReducePrecisionBits(U v, int src_exponent_bits, int src_mantissa_bits, int exponent_bits,
                      int mantissa_bits, bool is_nan) {
  const U original = v;
  if (mantissa_bits < src_mantissa_bits) {
    const int dropped = src_mantissa_bits - mantissa_bits;
    const U last_kept_bit = U{1} << dropped;
    const U rounding_bias = ((last_kept_bit >> 1) - 1) + ((v & last_kept_bit) >> dropped);
    v = (v + rounding_bias) & ~(last_kept_bit - 1);
  }
  if (exponent_bits < src_exponent_bits) {
    const U sign_mask = U{1} << (src_exponent_bits + src_mantissa_bits);
    const U exponent_mask = ((U{1} << src_exponent_bits) - 1) << src_mantissa_bits;
    const U bias = (U{1} << (src_exponent_bits - 1)) - 1;
    const U reduced_bias = (U{1} << (exponent_bits - 1)) - 1;
    const U exponent = v & exponent_mask;
    const U signed_zero = v & sign_mask;
    if (exponent > ((bias + reduced_bias) << src_mantissa_bits)) v = signed_zero | exponent_mask;
    if (exponent <= ((bias - reduced_bias) << src_mantissa_bits)) v = signed_zero;
  }
  if (is_nan) {
    const U positive_infinity = ((U{1} << src_exponent_bits) - 1) << src_mantissa_bits;
    return mantissa_bits > 0 ? original : positive_infinity;
  }
  return v;
}

absl::StatusOr<Literal> EvalReducePrecision(const HloInstruction& instr, Operands operands) {
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  ASSIGN_OR_RETURN(Input x, ArrayInput(instr, operands, 0, instr.shape()));
  const PrimitiveType type = TypeOf(out);
  if (!IsFloatingPoint(type) || TypeOf(*x.literal) != type) return UnsupportedType(instr, type);
  const int64_t exponent_bits = instr.attrs().exponent_bits;
  const int64_t mantissa_bits = instr.attrs().mantissa_bits;
  if (exponent_bits < 1 || mantissa_bits < 0) {
    return InvalidArgument("reduce-precision '", instr.name(),
                           "': needs exponent_bits >= 1 and mantissa_bits >= 0");
  }
  // Values above the source's own widths leave that part unchanged.
  const int e = static_cast<int>(std::min<int64_t>(exponent_bits, 64));
  const int m = static_cast<int>(std::min<int64_t>(mantissa_bits, 64));
  for (int64_t i = 0, n = out.element_count(); i < n; ++i) {
    // f32 and f64 work on their own bits (NaN payloads survive); the
    // narrower types go through f32, as XLA's evaluator does.
    if (type == PrimitiveType::F64) {
      const uint64_t bits = x.literal->GetBits(i);
      const bool nan = std::isnan(std::bit_cast<double>(bits));
      out.SetBits(i, ReducePrecisionBits<uint64_t>(bits, 11, 52, e, m, nan));
    } else if (type == PrimitiveType::F32) {
      const uint32_t bits = static_cast<uint32_t>(x.literal->GetBits(i));
      const bool nan = std::isnan(std::bit_cast<float>(bits));
      out.SetBits(i, ReducePrecisionBits<uint32_t>(bits, 8, 23, e, m, nan));
    } else {
      const float v = ReadFloat<float>(*x.literal, i);
      const uint32_t bits =
          ReducePrecisionBits<uint32_t>(std::bit_cast<uint32_t>(v), 8, 23, e, m, std::isnan(v));
      WriteFloat(out, i, std::bit_cast<float>(bits));
    }
  }
  return out;
}

// ------------------------------------------ real, imag, complex, abs, is-finite

absl::StatusOr<Literal> EvalRealImag(const HloInstruction& instr, Operands operands) {
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  ASSIGN_OR_RETURN(Input x, ArrayInput(instr, operands, 0, instr.shape()));
  const PrimitiveType from = TypeOf(*x.literal);
  if (!IsFloatingPoint(TypeOf(out)) || !(IsComplex(from) || IsFloatingPoint(from))) {
    return UnsupportedType(instr, from);
  }
  const bool real = instr.opcode() == HloOpcode::kReal;
  for (int64_t i = 0, n = out.element_count(); i < n; ++i) {
    const std::complex<double> v =
        IsComplex(from) ? x.literal->GetComplex(i) : ReadFloatAsDouble(*x.literal, i);
    WriteFloat(out, i, real ? v.real() : v.imag());
  }
  return out;
}

absl::StatusOr<Literal> EvalComplex(const HloInstruction& instr, Operands operands) {
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  ASSIGN_OR_RETURN(Input re, ArrayInput(instr, operands, 0, instr.shape(), true));
  ASSIGN_OR_RETURN(Input im, ArrayInput(instr, operands, 1, instr.shape(), true));
  if (!IsComplex(TypeOf(out)) || !IsFloatingPoint(TypeOf(*re.literal)) ||
      TypeOf(*im.literal) != TypeOf(*re.literal)) {
    return UnsupportedType(instr, TypeOf(*re.literal));
  }
  for (int64_t i = 0, n = out.element_count(); i < n; ++i) {
    out.SetComplex(
        i, {ReadFloatAsDouble(*re.literal, re.At(i)), ReadFloatAsDouble(*im.literal, im.At(i))});
  }
  return out;
}

template <typename C>
absl::StatusOr<Literal> ComplexAbs(const HloInstruction& instr, const Input& x) {
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  if (!IsFloatingPoint(TypeOf(out))) return UnsupportedType(instr, TypeOf(out));
  for (int64_t i = 0, n = out.element_count(); i < n; ++i) {
    WriteFloat(out, i, static_cast<double>(std::abs(ReadComplex<C>(*x.literal, i))));
  }
  return out;
}

absl::StatusOr<Literal> EvalAbs(const HloInstruction& instr, Operands operands) {
  if (operands.size() == 1 && operands[0]->shape().IsArray()) {
    const PrimitiveType from = TypeOf(*operands[0]);
    ASSIGN_OR_RETURN(Input x, ArrayInput(instr, operands, 0, instr.shape()));
    if (from == PrimitiveType::C64) return ComplexAbs<std::complex<float>>(instr, x);
    if (from == PrimitiveType::C128) return ComplexAbs<std::complex<double>>(instr, x);
  }
  return EvalArithmetic(instr, operands, 1);
}

absl::StatusOr<Literal> EvalIsFinite(const HloInstruction& instr, Operands operands) {
  ASSIGN_OR_RETURN(Literal out, ArrayResult(instr));
  ASSIGN_OR_RETURN(Input x, ArrayInput(instr, operands, 0, instr.shape()));
  if (!IsFloatingPoint(TypeOf(*x.literal))) return UnsupportedType(instr, TypeOf(*x.literal));
  for (int64_t i = 0, n = out.element_count(); i < n; ++i) {
    out.SetBits(i, std::isfinite(ReadFloatAsDouble(*x.literal, i)) ? 1 : 0);
  }
  return out;
}

absl::StatusOr<Literal> Dispatch(const HloInstruction& instr, Operands operands) {
  const HloOpcode op = instr.opcode();
  switch (op) {
    case HloOpcode::kCopy:
      if (operands.size() != 1) return InvalidArgument("copy '", instr.name(), "' takes 1 operand");
      return *operands[0];
    case HloOpcode::kConvert:
      return EvalConvert(instr, operands);
    case HloOpcode::kStochasticConvert:
      return EvalStochasticConvert(instr, operands);
    case HloOpcode::kCompare:
      return EvalCompare(instr, operands);
    case HloOpcode::kSelect:
      return EvalSelect(instr, operands);
    case HloOpcode::kClamp:
      return EvalClamp(instr, operands);
    case HloOpcode::kReducePrecision:
      return EvalReducePrecision(instr, operands);
    case HloOpcode::kReal:
    case HloOpcode::kImag:
      return EvalRealImag(instr, operands);
    case HloOpcode::kComplex:
      return EvalComplex(instr, operands);
    case HloOpcode::kAbs:
      return EvalAbs(instr, operands);
    case HloOpcode::kIsFinite:
      return EvalIsFinite(instr, operands);
    default:
      return EvalArithmetic(instr, operands, HloOpcodeArity(op));
  }
}

}  // namespace

void ConvertElement(const Literal& in, int64_t i, Literal& out, int64_t j) {
  ConvertValue(in, i, out, j);
}

absl::StatusOr<Literal> EvalElementwise(const HloInstruction& instr, Operands operands,
                                        EvalContext& /*context*/) {
  if (!IsElementwiseOpcode(instr.opcode())) return absl::NotFoundError("not handled");
  try {
    return Dispatch(instr, operands);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat("out of memory evaluating '", instr.name(), "'"));
  }
}

}  // namespace xlite::eval
