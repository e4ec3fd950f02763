// Elementwise opcodes (opcodes.def's kElementwise rows) as IR, with the
// interpreter's semantics (src/xlite/eval/eval_elementwise.cc):
//  - integers wrap; x/0 = -1, x%0 = x, INT_MIN/-1 = INT_MIN, INT_MIN%-1 = 0;
//    shift amounts are unsigned, out-of-range ones give 0 or the sign fill;
//  - pred arithmetic is int8 arithmetic followed by "!= 0";
//  - f16, bf16, f8 and f4 compute in float and round once (to nearest even,
//    in integer arithmetic), f32 in float, f64 in double;
//  - maximum/minimum propagate NaN (lhs first); power has 1^y = x^0 = 1;
//  - transcendental functions call the C library (libm), complex functions
//    the helpers in runtime_symbols.cc (std::complex, as the interpreter);
//    tanh and exp (and logistic, through exp) of float (f32, and f16/bf16/f8
//    computed in float) are inline approximations instead, which vectorize.
#include <cmath>
#include <initializer_list>
#include <limits>

#include "absl/strings/str_cat.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Intrinsics.h"
#include "xlite/codegen/ir_emitter.h"
#include "xlite/codegen/runtime_symbols.h"
#include "xlite/ir/comparison.h"
#include "xlite/ir/float_format.h"
#include "xlite/support/status.h"

namespace xlite::codegen {
namespace {

using llvm::Value;

PrimitiveType TypeOf(const HloInstruction& instr) { return instr.shape().element_type(); }

// libm's name for `base` at the precision of `t` ("tanhf" / "tanh").
std::string LibmName(const char* base, llvm::Type* t) {
  return t->isFloatTy() ? absl::StrCat(base, "f") : std::string(base);
}

bool IsComplexHelperOp(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAbs:
    case HloOpcode::kSign:
    case HloOpcode::kSqrt:
    case HloOpcode::kRsqrt:
    case HloOpcode::kCbrt:
    case HloOpcode::kExp:
    case HloOpcode::kExpm1:
    case HloOpcode::kLog:
    case HloOpcode::kLog1p:
    case HloOpcode::kLogistic:
    case HloOpcode::kSin:
    case HloOpcode::kCos:
    case HloOpcode::kTan:
    case HloOpcode::kTanh:
    case HloOpcode::kSinh:
    case HloOpcode::kCosh:
    case HloOpcode::kAsin:
    case HloOpcode::kAcos:
    case HloOpcode::kAtan:
    case HloOpcode::kAsinh:
    case HloOpcode::kAcosh:
    case HloOpcode::kAtanh:
    case HloOpcode::kMultiply:  // the helper recovers infinities
    case HloOpcode::kDivide:
    case HloOpcode::kPower:
    case HloOpcode::kAtan2:
      return true;
    default:
      return false;
  }
}

// Constants, fused multiply-adds, polynomials and clamps in one float type:
// what the inline approximations below are written with.
class FloatMath {
 public:
  FloatMath(llvm::IRBuilder<>& b, llvm::Type* t) : b_(b), t_(t) {}

  Value* C(double v) const { return llvm::ConstantFP::get(t_, v); }
  // a * m + add, fused where the target has FMA.
  Value* Fma(Value* a, Value* m, Value* add) const {
    return b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {t_}, {a, m, add});
  }
  // coefficients[0] x^n + ... + coefficients[n], by Horner's rule.
  Value* Polynomial(Value* x, std::initializer_list<double> coefficients) const {
    Value* p = nullptr;
    for (double k : coefficients) p = p == nullptr ? C(k) : Fma(p, x, C(k));
    return p;
  }
  // x clamped to [lo, hi] with maxnum/minnum (a NaN x becomes a bound:
  // callers put it back with KeepNaN).
  Value* Clamp(Value* x, double lo, double hi) const {
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum,
                                    b_.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, x, C(hi)),
                                    C(lo));
  }
  // x where x is NaN, else r.
  Value* KeepNaN(Value* x, Value* r) const { return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, r); }

 private:
  llvm::IRBuilder<>& b_;
  llvm::Type* t_;
};

// tanh of a float without a call, so that a loop holding it vectorizes: the
// rational approximation XLA:CPU and Eigen use (odd polynomial of degree 13
// over even of degree 6 on x clamped to +-7.9988, where it reaches +-1; x
// itself below |x| < 0.0004). Accuracy against the correctly rounded value:
// docs/codegen.md's table (codegen_test measures it). NaN stays NaN.
Value* EmitRationalTanhF32(llvm::IRBuilder<>& b, Value* x) {
  const FloatMath m(b, x->getType());
  constexpr double kClamp = 7.99881172180175781;
  Value* clamped = m.Clamp(x, -kClamp, kClamp);
  Value* x2 = b.CreateFMul(clamped, clamped);
  Value* p = b.CreateFMul(
      clamped, m.Polynomial(x2, {-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11,
                                 5.12229709037114e-08, 1.48572235717979e-05, 6.37261928875436e-04,
                                 4.89352455891786e-03}));
  Value* q = m.Polynomial(
      x2, {1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03, 4.89352518554385e-03});
  Value* tiny = b.CreateFCmpOLT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x), m.C(0.0004));
  return m.KeepNaN(x, b.CreateSelect(tiny, x, b.CreateFDiv(p, q)));
}

// exp of a float without a call (vectorizes): exp(x) = 2^n * e^r with
// n = round(x / ln 2) and r = x - n ln 2 in two steps (Cody-Waite), e^r by
// Cephes' degree-7 polynomial, 2^n applied as two exact power-of-two factors
// so that n from -150 to 128 neither overflows the exponent field nor skips
// the subnormal range. x is clamped to [-104, 89] (0 and inf beyond). Within
// 1 ulp of the correctly rounded value for every float whose exp is normal
// (measured over all 2^32 patterns; docs/codegen.md); NaN stays NaN.
Value* EmitExpF32(llvm::IRBuilder<>& b, Value* x) {
  llvm::Type* t = x->getType();
  llvm::Type* i32 = b.getInt32Ty();
  const FloatMath m(b, t);
  auto ci = [&](int32_t v) { return llvm::ConstantInt::get(i32, v); };
  Value* clamped = m.Clamp(x, -104.0, 89.0);
  Value* n = b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven,
                                    b.CreateFMul(clamped, m.C(1.44269504088896341)));
  Value* r = m.Fma(n, m.C(-0.693359375), clamped);
  r = m.Fma(n, m.C(2.12194440e-4), r);
  Value* p = m.Polynomial(r, {1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
                              1.6666665459e-1, 5.0000001201e-1});
  Value* y = b.CreateFAdd(m.Fma(p, b.CreateFMul(r, r), r), m.C(1.0));
  Value* ni = b.CreateFPToSI(n, i32);
  Value* half = b.CreateAShr(ni, ci(1));
  Value* rest = b.CreateSub(ni, half);
  auto power_of_two = [&](Value* e) {
    return b.CreateBitCast(b.CreateShl(b.CreateAdd(e, ci(127)), ci(23)), t);
  };
  return m.KeepNaN(x, b.CreateFMul(b.CreateFMul(y, power_of_two(half)), power_of_two(rest)));
}

// log of a float without a call (vectorizes): Cephes' logf. x = 2^e * m
// with m in [sqrt(1/2), sqrt(2)) (subnormals scaled by 2^23 first), f = m - 1
// exact, log(1 + f) = f - f^2/2 + f^3 P(f) with P of degree 8, and e ln 2 added
// in two parts. Within 1 ulp of the correctly rounded value for every float
// (all 2^32 patterns; docs/codegen.md). 0 -> -inf, +inf -> +inf, x < 0 and
// NaN -> NaN.
Value* EmitLogF32(llvm::IRBuilder<>& b, Value* x) {
  llvm::Type* t = x->getType();
  llvm::Type* i32 = b.getInt32Ty();
  const FloatMath m(b, t);
  auto ci = [&](int32_t v) { return llvm::ConstantInt::get(i32, v); };
  Value* subnormal = b.CreateFCmpOLT(x, m.C(1.17549435082228751e-38));
  Value* scaled = b.CreateSelect(subnormal, b.CreateFMul(x, m.C(8388608.0)), x);
  Value* bits = b.CreateBitCast(scaled, i32);
  Value* e = b.CreateSub(b.CreateAnd(b.CreateLShr(bits, ci(23)), ci(0xFF)), ci(126));
  e = b.CreateSelect(subnormal, b.CreateSub(e, ci(23)), e);
  Value* mantissa = b.CreateBitCast(b.CreateOr(b.CreateAnd(bits, ci(0x7FFFFF)), ci(0x3F000000)), t);
  Value* low = b.CreateFCmpOLT(mantissa, m.C(0.707106781186547524));  // in [0.5, 1)
  Value* fe = b.CreateSIToFP(b.CreateSelect(low, b.CreateSub(e, ci(1)), e), t);
  Value* f =
      b.CreateFSub(b.CreateSelect(low, b.CreateFAdd(mantissa, mantissa), mantissa), m.C(1.0));
  Value* z = b.CreateFMul(f, f);
  Value* p = m.Polynomial(
      f, {7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
          -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1});
  Value* y = b.CreateFMul(b.CreateFMul(f, z), p);
  y = m.Fma(fe, m.C(-2.12194440e-4), y);
  y = m.Fma(z, m.C(-0.5), y);
  Value* r = m.Fma(fe, m.C(0.693359375), b.CreateFAdd(f, y));
  const double inf = std::numeric_limits<double>::infinity();
  r = b.CreateSelect(b.CreateFCmpOEQ(x, m.C(inf)), x, r);
  r = b.CreateSelect(b.CreateFCmpOEQ(x, m.C(0.0)), m.C(-inf), r);
  // x < 0 or NaN: NaN.
  return b.CreateSelect(b.CreateFCmpULT(x, m.C(0.0)), m.C(std::numeric_limits<double>::quiet_NaN()),
                        r);
}

// log1p of a float without a call: u = 1 + x, then log(u) * x / (u - 1), which
// cancels the rounding error of u (Goldberg); x itself where u rounds to 1.
// Within 2 ulp for every float (all 2^32 patterns). +inf -> +inf, -1 -> -inf,
// x < -1 and NaN -> NaN.
Value* EmitLog1pF32(llvm::IRBuilder<>& b, Value* x) {
  const FloatMath m(b, x->getType());
  Value* u = b.CreateFAdd(x, m.C(1.0));
  Value* log_u = EmitLogF32(b, u);
  Value* r = b.CreateFMul(log_u, b.CreateFDiv(x, b.CreateFSub(u, m.C(1.0))));
  r = b.CreateSelect(b.CreateFCmpOEQ(u, m.C(1.0)), x, r);
  // +inf (inf / inf above) and -1 (log(0) = -inf) take log(u) itself.
  Value* log_u_itself = b.CreateOr(b.CreateFCmpOEQ(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, u),
                                                   m.C(std::numeric_limits<double>::infinity())),
                                   b.CreateFCmpOEQ(u, m.C(0.0)));
  return b.CreateSelect(log_u_itself, log_u, r);
}

// erf of a float without a call: the odd rational approximation Eigen and
// XLA use, x P(x^2) / Q(x^2) with P of degree 6 and Q of degree 4, on x clamped
// to [-4, 4] (erf(4) rounds to 1), evaluated as x * (P / Q) so that tiny x
// keeps its precision. Accuracy: docs/codegen.md's table. NaN stays NaN.
Value* EmitErfF32(llvm::IRBuilder<>& b, Value* x) {
  const FloatMath m(b, x->getType());
  Value* clamped = m.Clamp(x, -4.0, 4.0);
  Value* x2 = b.CreateFMul(clamped, clamped);
  Value* p = m.Polynomial(x2, {-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
                               -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
                               -1.60960333262415e-02});
  Value* q = m.Polynomial(x2, {-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
                               -7.37332916720468e-03, -1.42647390514189e-02});
  return m.KeepNaN(x, b.CreateFMul(clamped, b.CreateFDiv(p, q)));
}

}  // namespace

// Kept next to the emitters below, which make these calls: EmitUnary's
// libm() and intrinsics LLVM lowers to libm (exp, log, sin, cos, pow),
// EmitBinary's fmod (frem) and atan2, EmitComplexOp's helper().
bool CallsScalarLibrary(const HloInstruction& instr) {
  const PrimitiveType type = TypeOf(instr);
  const HloOpcode op = instr.opcode();
  if (!(HloOpcodeTraits(op) & kElementwise)) return false;
  if (IsComplex(type) || (instr.operand_count() > 0 && IsComplex(TypeOf(*instr.operand(0))))) {
    return IsComplexHelperOp(op);
  }
  if (!IsFloatingPoint(type)) return false;
  // Inline approximations (f32 tanh, exp, logistic, log, log1p, erf), and
  // libm calls LLVM turns into libmvec's vector variants in loops on AVX2
  // hosts (sin, cos, pow and f64 exp, log through its own table; tan, the
  // hyperbolic and inverse trigonometric functions, cbrt, expm1, atan2 and
  // f64 tanh, log1p, erf through XLITE_LIBMVEC_EXTRAS): all vector code.
  // fmod (remainder) has no vector variant.
  return op == HloOpcode::kRemainder;
}

absl::StatusOr<Value*> IrEmitter::EmitElementwise(const HloInstruction& instr,
                                                  const IrIndex& index) {
  const HloOpcode op = instr.opcode();
  const int arity = HloOpcodeArity(op);
  if (arity >= 0 && instr.operand_count() != arity) {
    return InvalidArgument(HloOpcodeString(op), " '", instr.name(), "' takes ", arity,
                           " operands, got ", instr.operand_count());
  }
  IrValues args;
  for (const HloInstruction* operand : instr.operands()) {
    // A scalar operand of an array-shaped op (clamp bounds, select's
    // predicate) is broadcast.
    const bool scalar = operand->shape().IsArray() && operand->shape().rank() == 0;
    ASSIGN_OR_RETURN(Value * v, EmitOne(*operand, scalar ? IrIndex{} : index));
    args.push_back(v);
  }
  const PrimitiveType out = TypeOf(instr);
  const PrimitiveType in = instr.operand_count() > 0 ? TypeOf(*instr.operand(0)) : out;
  if (IrType(in) == nullptr) {
    return UnsupportedInstruction(instr, absl::StrCat("element type ", PrimitiveTypeName(in)));
  }
  switch (op) {
    case HloOpcode::kCopy:
      return args[0];
    case HloOpcode::kConvert:
      return Convert(instr, in, out, args[0]);
    case HloOpcode::kCompare:
      return EmitCompare(instr, args[0], args[1]);
    case HloOpcode::kSelect: {
      if (in != PrimitiveType::PRED)
        return InvalidArgument("select '", instr.name(), "': predicate must be pred");
      Value* p = b_.CreateICmpNE(b_.CreateAnd(args[0], b_.getInt8(1)), b_.getInt8(0));
      return b_.CreateSelect(p, args[1], args[2]);
    }
    case HloOpcode::kClamp: {
      Value *lo = args[0], *x = args[1], *hi = args[2];
      if (IsFloatingPoint(out)) {
        Value* l = ToCompute(out, lo);
        Value* v = ToCompute(out, x);
        Value* h = ToCompute(out, hi);
        // max(x, lo) first, then min with hi; a NaN in lo, x, hi (in order) wins.
        Value* v_lt_l = b_.CreateFCmpOLT(v, l);
        Value* low_clamped = b_.CreateSelect(v_lt_l, lo, x);
        Value* m = b_.CreateSelect(v_lt_l, l, v);
        Value* pick = b_.CreateSelect(b_.CreateFCmpOLT(h, m), hi, low_clamped);
        pick = b_.CreateSelect(b_.CreateFCmpUNO(h, h), hi, pick);
        pick = b_.CreateSelect(b_.CreateFCmpUNO(v, v), x, pick);
        return b_.CreateSelect(b_.CreateFCmpUNO(l, l), lo, pick);
      }
      if (IsComplex(out)) return UnsupportedInstruction(instr, "complex clamp");
      const bool is_signed = IsSignedInt(out) || out == PrimitiveType::PRED;
      auto less = [&](Value* a, Value* c) {
        return is_signed ? b_.CreateICmpSLT(a, c) : b_.CreateICmpULT(a, c);
      };
      Value* low_clamped = b_.CreateSelect(less(x, lo), lo, x);
      return b_.CreateSelect(less(hi, low_clamped), hi, low_clamped);
    }
    case HloOpcode::kReducePrecision:
      return EmitReducePrecision(instr, args[0]);
    case HloOpcode::kStochasticConvert:
      return EmitStochasticConvert(instr, args[0], args[1]);
    case HloOpcode::kReal:
    case HloOpcode::kImag: {
      if (!IsFloatingPoint(out)) return UnsupportedInstruction(instr, "a non-float result");
      if (IsComplex(in)) {
        return FromCompute(out, b_.CreateExtractValue(args[0], op == HloOpcode::kReal ? 0 : 1));
      }
      if (!IsFloatingPoint(in)) return UnsupportedInstruction(instr, "a non-float operand");
      Value* x = ToCompute(in, args[0]);
      if (op == HloOpcode::kImag) x = llvm::ConstantFP::get(x->getType(), 0.0);
      return FromCompute(out, x);
    }
    case HloOpcode::kComplex: {
      if (!IsComplex(out) || !IsFloatingPoint(in)) {
        return UnsupportedInstruction(instr, "complex of non-float parts");
      }
      llvm::Type* part = ComputeFloatType(out);
      Value* re = b_.CreateFPCast(ToCompute(in, args[0]), part);
      Value* im = b_.CreateFPCast(ToCompute(TypeOf(*instr.operand(1)), args[1]), part);
      Value* z = llvm::UndefValue::get(IrType(out));
      z = b_.CreateInsertValue(z, re, 0);
      return b_.CreateInsertValue(z, im, 1);
    }
    case HloOpcode::kIsFinite: {
      if (!IsFloatingPoint(in)) return UnsupportedInstruction(instr, "a non-float operand");
      Value* x = ToCompute(in, args[0]);
      Value* finite = b_.CreateFCmpOLT(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x),
                                       llvm::ConstantFP::getInfinity(x->getType()));
      return b_.CreateZExt(finite, b_.getInt8Ty());
    }
    default:
      break;
  }
  // Arithmetic: operands and result share one element type (abs of complex
  // is real).
  if (IsComplex(in)) return EmitComplexOp(instr, args);
  for (const HloInstruction* operand : instr.operands()) {
    if (TypeOf(*operand) != out) {
      return InvalidArgument(HloOpcodeString(op), " '", instr.name(),
                             "': operand type differs from the result type");
    }
  }
  if (args.size() == 1) return EmitUnary(instr, args[0]);
  if (args.size() == 2) return EmitBinary(instr, args[0], args[1]);
  return UnsupportedInstruction(instr, "this elementwise opcode");
}

absl::StatusOr<Value*> IrEmitter::EmitCompare(const HloInstruction& instr, Value* x, Value* y) {
  const PrimitiveType type = TypeOf(*instr.operand(0));
  const ComparisonDirection dir = instr.attrs().comparison_direction;
  const ComparisonOrder order = EffectiveComparisonOrder(instr.attrs(), type);
  using P = llvm::CmpInst::Predicate;
  auto int_predicate = [&](bool is_signed) {
    switch (dir) {
      case ComparisonDirection::kEq:
        return P::ICMP_EQ;
      case ComparisonDirection::kNe:
        return P::ICMP_NE;
      case ComparisonDirection::kGe:
        return is_signed ? P::ICMP_SGE : P::ICMP_UGE;
      case ComparisonDirection::kGt:
        return is_signed ? P::ICMP_SGT : P::ICMP_UGT;
      case ComparisonDirection::kLe:
        return is_signed ? P::ICMP_SLE : P::ICMP_ULE;
      case ComparisonDirection::kLt:
        return is_signed ? P::ICMP_SLT : P::ICMP_ULT;
    }
    return P::ICMP_EQ;
  };
  Value* result = nullptr;
  switch (GetPrimitiveKind(type)) {
    case PrimitiveKind::kPred:
    case PrimitiveKind::kSigned:
    case PrimitiveKind::kUnsigned: {
      // As XLA and the interpreter: the element type decides signedness; the
      // older type=SIGNED/UNSIGNED only ever meant a total order.
      result = b_.CreateICmp(int_predicate(IsSignedInt(type)), x, y);
      break;
    }
    case PrimitiveKind::kFloat: {
      if (order != ComparisonOrder::kPartial) {
        // Signed order of (bits ^ (sign ? 0x7f..f : 0)) is the total order;
        // the weak order first maps -0 to +0 and every NaN above +inf.
        const FloatFormat f = *GetFloatFormat(type);
        const int bits = PrimitiveBitWidth(type);
        auto key = [&](Value* v) {
          Value* k = ToBits(type, v);
          llvm::Type* t = k->getType();
          if (f.has_sign) {
            llvm::Value* magnitude = llvm::ConstantInt::get(
                t, bits >= 64 ? ~uint64_t{0} >> 1 : (uint64_t{1} << (bits - 1)) - 1);
            k = b_.CreateSelect(b_.CreateICmpSLT(k, llvm::ConstantInt::get(t, 0)),
                                b_.CreateXor(k, magnitude), k);
          }
          // Keys compare as signed i64, as the interpreter's do.
          llvm::Type* i64 = b_.getInt64Ty();
          k = f.has_sign ? b_.CreateSExtOrTrunc(k, i64) : b_.CreateZExtOrTrunc(k, i64);
          if (order == ComparisonOrder::kWeak) {
            Value* value = ToCompute(type, v);
            Value* zero = llvm::ConstantFP::get(value->getType(), 0.0);
            k = b_.CreateSelect(b_.CreateFCmpOEQ(value, zero), b_.getInt64(0), k);
            k = b_.CreateSelect(b_.CreateFCmpUNO(value, value),
                                b_.getInt64(std::numeric_limits<int64_t>::max()), k);
          }
          return k;
        };
        result = b_.CreateICmp(int_predicate(true), key(x), key(y));
        break;
      }
      Value* a = ToCompute(type, x);
      Value* c = ToCompute(type, y);
      P p = P::FCMP_OEQ;
      switch (dir) {
        case ComparisonDirection::kEq:
          p = P::FCMP_OEQ;
          break;
        case ComparisonDirection::kNe:
          p = P::FCMP_UNE;
          break;
        case ComparisonDirection::kGe:
          p = P::FCMP_OGE;
          break;
        case ComparisonDirection::kGt:
          p = P::FCMP_OGT;
          break;
        case ComparisonDirection::kLe:
          p = P::FCMP_OLE;
          break;
        case ComparisonDirection::kLt:
          p = P::FCMP_OLT;
          break;
      }
      result = b_.CreateFCmp(p, a, c);
      break;
    }
    case PrimitiveKind::kComplex: {
      if (dir != ComparisonDirection::kEq && dir != ComparisonDirection::kNe) {
        return InvalidArgument("compare '", instr.name(), "': complex values are unordered");
      }
      Value* equal =
          b_.CreateAnd(b_.CreateFCmpOEQ(b_.CreateExtractValue(x, 0), b_.CreateExtractValue(y, 0)),
                       b_.CreateFCmpOEQ(b_.CreateExtractValue(x, 1), b_.CreateExtractValue(y, 1)));
      result = dir == ComparisonDirection::kEq ? equal : b_.CreateNot(equal);
      break;
    }
    default:
      return UnsupportedInstruction(instr, absl::StrCat("comparison of ", PrimitiveTypeName(type)));
  }
  return b_.CreateZExt(result, b_.getInt8Ty());
}

absl::StatusOr<Value*> IrEmitter::EmitUnary(const HloInstruction& instr, Value* x) {
  const HloOpcode op = instr.opcode();
  const PrimitiveType type = TypeOf(instr);
  if (IsFloatingPoint(type)) {
    Value* v = ToCompute(type, x);
    llvm::Type* t = v->getType();
    auto one = [&]() { return llvm::ConstantFP::get(t, 1.0); };
    auto libm = [&](const char* name) { return CallMath(LibmName(name, t), t, {v}); };
    auto intrinsic = [&](llvm::Intrinsic::ID id) { return b_.CreateUnaryIntrinsic(id, v); };
    Value* r = nullptr;
    switch (op) {
      case HloOpcode::kAbs:
        r = intrinsic(llvm::Intrinsic::fabs);
        break;
      case HloOpcode::kNegate:
        r = b_.CreateFNeg(v);
        break;
      case HloOpcode::kSign: {
        Value* nonzero = b_.CreateFCmpUNE(v, llvm::ConstantFP::get(t, 0.0));
        Value* magnitude = b_.CreateSelect(nonzero, one(), llvm::ConstantFP::get(t, 0.0));
        Value* s = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, magnitude, v);
        r = b_.CreateSelect(b_.CreateFCmpUNO(v, v), v, s);
        break;
      }
      case HloOpcode::kCeil:
        r = intrinsic(llvm::Intrinsic::ceil);
        break;
      case HloOpcode::kFloor:
        r = intrinsic(llvm::Intrinsic::floor);
        break;
      case HloOpcode::kRoundNearestAfz:
        r = intrinsic(llvm::Intrinsic::round);
        break;
      case HloOpcode::kRoundNearestEven:
        r = intrinsic(llvm::Intrinsic::roundeven);
        break;
      case HloOpcode::kSqrt:
        r = intrinsic(llvm::Intrinsic::sqrt);
        break;
      case HloOpcode::kRsqrt:
        r = b_.CreateFDiv(one(), intrinsic(llvm::Intrinsic::sqrt));
        break;
      case HloOpcode::kCbrt:
        r = libm("cbrt");
        break;
      case HloOpcode::kExp:
        r = t->isFloatTy() ? EmitExpF32(b_, v) : intrinsic(llvm::Intrinsic::exp);
        break;
      case HloOpcode::kExpm1:
        r = libm("expm1");
        break;
      case HloOpcode::kLog:
        r = t->isFloatTy() ? EmitLogF32(b_, v) : intrinsic(llvm::Intrinsic::log);
        break;
      case HloOpcode::kLog1p:
        r = t->isFloatTy() ? EmitLog1pF32(b_, v) : libm("log1p");
        break;
      case HloOpcode::kLogistic: {
        Value* e = t->isFloatTy() ? EmitExpF32(b_, b_.CreateFNeg(v))
                                  : b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, b_.CreateFNeg(v));
        r = b_.CreateFDiv(one(), b_.CreateFAdd(one(), e));
        break;
      }
      case HloOpcode::kSin:
        r = intrinsic(llvm::Intrinsic::sin);
        break;
      case HloOpcode::kCos:
        r = intrinsic(llvm::Intrinsic::cos);
        break;
      case HloOpcode::kTan:
        r = libm("tan");
        break;
      case HloOpcode::kTanh:
        r = t->isFloatTy() ? EmitRationalTanhF32(b_, v) : libm("tanh");
        break;
      case HloOpcode::kSinh:
        r = libm("sinh");
        break;
      case HloOpcode::kCosh:
        r = libm("cosh");
        break;
      case HloOpcode::kAsin:
        r = libm("asin");
        break;
      case HloOpcode::kAcos:
        r = libm("acos");
        break;
      case HloOpcode::kAtan:
        r = libm("atan");
        break;
      case HloOpcode::kAsinh:
        r = libm("asinh");
        break;
      case HloOpcode::kAcosh:
        r = libm("acosh");
        break;
      case HloOpcode::kAtanh:
        r = libm("atanh");
        break;
      case HloOpcode::kErf:
        r = t->isFloatTy() ? EmitErfF32(b_, v) : libm("erf");
        break;
      default:
        return UnsupportedInstruction(instr,
                                      absl::StrCat("element type ", PrimitiveTypeName(type)));
    }
    return FromCompute(type, r);
  }
  if (type == PrimitiveType::PRED) {
    if (op == HloOpcode::kNot)
      return b_.CreateZExt(b_.CreateICmpEQ(x, b_.getInt8(0)), b_.getInt8Ty());
    if (op == HloOpcode::kPopulationCount || op == HloOpcode::kClz) {
      return UnsupportedInstruction(instr, "element type pred");
    }
  }
  if (type != PrimitiveType::PRED && !IsInteger(type)) {
    return UnsupportedInstruction(instr, absl::StrCat("element type ", PrimitiveTypeName(type)));
  }
  llvm::Type* t = x->getType();
  const bool is_signed = IsSignedInt(type) || type == PrimitiveType::PRED;
  auto c = [&](uint64_t v) { return llvm::ConstantInt::get(t, v); };
  Value* r = nullptr;
  switch (op) {
    case HloOpcode::kAbs:
      r = is_signed ? b_.CreateSelect(b_.CreateICmpSLT(x, c(0)), b_.CreateNeg(x), x) : x;
      break;
    case HloOpcode::kNegate:
      r = b_.CreateNeg(x);
      break;
    case HloOpcode::kSign: {
      Value* one_or_minus = is_signed ? b_.CreateSelect(b_.CreateICmpSLT(x, c(0)),
                                                        llvm::ConstantInt::getAllOnesValue(t), c(1))
                                      : c(1);
      r = b_.CreateSelect(b_.CreateICmpEQ(x, c(0)), c(0), one_or_minus);
      break;
    }
    case HloOpcode::kNot:
      r = b_.CreateNot(x);
      break;
    case HloOpcode::kPopulationCount:
      r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, x);
      break;
    case HloOpcode::kClz:
      r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, x, b_.getFalse());
      break;
    default:
      return UnsupportedInstruction(instr, absl::StrCat("element type ", PrimitiveTypeName(type)));
  }
  if (type == PrimitiveType::PRED) return b_.CreateZExt(b_.CreateICmpNE(r, c(0)), t);
  return r;
}

absl::StatusOr<Value*> IrEmitter::EmitBinary(const HloInstruction& instr, Value* x, Value* y) {
  const HloOpcode op = instr.opcode();
  const PrimitiveType type = TypeOf(instr);
  if (IsFloatingPoint(type)) {
    Value* a = ToCompute(type, x);
    Value* c = ToCompute(type, y);
    llvm::Type* t = a->getType();
    Value* r = nullptr;
    switch (op) {
      case HloOpcode::kAdd:
        r = b_.CreateFAdd(a, c);
        break;
      case HloOpcode::kSubtract:
        r = b_.CreateFSub(a, c);
        break;
      case HloOpcode::kMultiply:
        r = b_.CreateFMul(a, c);
        break;
      case HloOpcode::kDivide:
        r = b_.CreateFDiv(a, c);
        break;
      case HloOpcode::kRemainder:
        r = b_.CreateFRem(a, c);  // fmod
        break;
      case HloOpcode::kAtan2:
        r = CallMath(LibmName("atan2", t), t, {a, c});
        break;
      case HloOpcode::kMaximum:
      case HloOpcode::kMinimum: {
        Value* pick_c = op == HloOpcode::kMaximum ? b_.CreateFCmpOLT(a, c) : b_.CreateFCmpOLT(c, a);
        r = b_.CreateSelect(pick_c, c, a);
        r = b_.CreateSelect(b_.CreateFCmpUNO(c, c), c, r);
        r = b_.CreateSelect(b_.CreateFCmpUNO(a, a), a, r);
        break;
      }
      case HloOpcode::kPower: {
        Value* one = llvm::ConstantFP::get(t, 1.0);
        Value* trivial = b_.CreateOr(b_.CreateFCmpOEQ(a, one),
                                     b_.CreateFCmpOEQ(c, llvm::ConstantFP::get(t, 0.0)));
        r = b_.CreateSelect(trivial, one, b_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, a, c));
        break;
      }
      default:
        return UnsupportedInstruction(instr,
                                      absl::StrCat("element type ", PrimitiveTypeName(type)));
    }
    return FromCompute(type, r);
  }
  if (type != PrimitiveType::PRED && !IsInteger(type)) {
    return UnsupportedInstruction(instr, absl::StrCat("element type ", PrimitiveTypeName(type)));
  }
  const bool is_pred = type == PrimitiveType::PRED;
  if (is_pred && (op == HloOpcode::kShiftLeft || op == HloOpcode::kShiftRightLogical ||
                  op == HloOpcode::kShiftRightArithmetic || op == HloOpcode::kMulhi)) {
    return UnsupportedInstruction(instr, "element type pred");
  }
  llvm::Type* t = x->getType();
  const unsigned bits = t->getIntegerBitWidth();
  const bool is_signed = IsSignedInt(type) || is_pred;  // pred computes as int8
  auto c = [&](uint64_t v) { return llvm::ConstantInt::get(t, v); };
  Value* zero = c(0);
  Value* all_ones = llvm::ConstantInt::getAllOnesValue(t);
  Value* r = nullptr;
  switch (op) {
    case HloOpcode::kAdd:
      r = b_.CreateAdd(x, y);
      break;
    case HloOpcode::kSubtract:
      r = b_.CreateSub(x, y);
      break;
    case HloOpcode::kMultiply:
      r = b_.CreateMul(x, y);
      break;
    case HloOpcode::kDivide:
    case HloOpcode::kRemainder: {
      Value* y_zero = b_.CreateICmpEQ(y, zero);
      Value* y_minus_one = is_signed ? b_.CreateICmpEQ(y, all_ones) : b_.getFalse();
      // A divisor that is never 0 or -1 keeps sdiv/srem defined.
      Value* safe = b_.CreateSelect(b_.CreateOr(y_zero, y_minus_one), c(1), y);
      // x86 has no vector integer division: up to 32 bits the quotient is
      // taken in double, which vectorizes, and truncated. That is exact: the
      // rounding error, below 2^-53 * 2^32 / |y|, is less than the 1 / |y|
      // between a quotient that is not an integer and the next one. A
      // constant divisor stays an integer division (LLVM multiplies and
      // shifts).
      const bool in_double = bits <= 32 && !llvm::isa<llvm::Constant>(y);
      Value* q = nullptr;
      if (in_double) {
        llvm::IRBuilderBase::FastMathFlagGuard exact(b_);
        b_.clearFastMathFlags();
        llvm::Type* f64 = b_.getDoubleTy();
        Value* quotient =
            b_.CreateFDiv(is_signed ? b_.CreateSIToFP(x, f64) : b_.CreateUIToFP(x, f64),
                          is_signed ? b_.CreateSIToFP(safe, f64) : b_.CreateUIToFP(safe, f64));
        q = is_signed ? b_.CreateFPToSI(quotient, t) : b_.CreateFPToUI(quotient, t);
      }
      if (op == HloOpcode::kDivide) {
        if (!in_double) q = is_signed ? b_.CreateSDiv(x, safe) : b_.CreateUDiv(x, safe);
        q = b_.CreateSelect(y_minus_one, b_.CreateNeg(x), q);
        r = b_.CreateSelect(y_zero, all_ones, q);
      } else {
        Value* m = in_double ? b_.CreateSub(x, b_.CreateMul(q, safe))
                             : (is_signed ? b_.CreateSRem(x, safe) : b_.CreateURem(x, safe));
        m = b_.CreateSelect(y_minus_one, zero, m);
        r = b_.CreateSelect(y_zero, x, m);
      }
      break;
    }
    case HloOpcode::kMaximum:
      r = b_.CreateSelect(is_signed ? b_.CreateICmpSLT(x, y) : b_.CreateICmpULT(x, y), y, x);
      break;
    case HloOpcode::kMinimum:
      r = b_.CreateSelect(is_signed ? b_.CreateICmpSLT(y, x) : b_.CreateICmpULT(y, x), y, x);
      break;
    case HloOpcode::kAnd:
      r = b_.CreateAnd(x, y);
      break;
    case HloOpcode::kOr:
      r = b_.CreateOr(x, y);
      break;
    case HloOpcode::kXor:
      r = b_.CreateXor(x, y);
      break;
    case HloOpcode::kPower: {
      // Square-and-multiply over every exponent bit, branch-free.
      Value* result = c(1);
      Value* base = x;
      for (unsigned i = 0; i < bits; ++i) {
        Value* bit = b_.CreateICmpNE(b_.CreateAnd(b_.CreateLShr(y, c(i)), c(1)), zero);
        result = b_.CreateSelect(bit, b_.CreateMul(result, base), result);
        base = b_.CreateMul(base, base);
      }
      if (is_signed) result = b_.CreateSelect(b_.CreateICmpSLT(y, zero), zero, result);
      Value* trivial = b_.CreateOr(b_.CreateICmpEQ(x, c(1)), b_.CreateICmpEQ(y, zero));
      r = b_.CreateSelect(trivial, c(1), result);
      break;
    }
    case HloOpcode::kMulhi: {
      llvm::Type* wide = b_.getIntNTy(2 * bits);
      Value* xw = is_signed ? b_.CreateSExt(x, wide) : b_.CreateZExt(x, wide);
      Value* yw = is_signed ? b_.CreateSExt(y, wide) : b_.CreateZExt(y, wide);
      Value* product = b_.CreateMul(xw, yw);
      r = b_.CreateTrunc(is_signed ? b_.CreateAShr(product, bits) : b_.CreateLShr(product, bits),
                         t);
      break;
    }
    case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightLogical:
    case HloOpcode::kShiftRightArithmetic: {
      Value* out_of_range = b_.CreateICmpUGE(y, c(bits));
      Value* amount = b_.CreateSelect(out_of_range, zero, y);
      if (op == HloOpcode::kShiftLeft) {
        r = b_.CreateSelect(out_of_range, zero, b_.CreateShl(x, amount));
      } else if (op == HloOpcode::kShiftRightLogical) {
        r = b_.CreateSelect(out_of_range, zero, b_.CreateLShr(x, amount));
      } else {
        Value* fill = b_.CreateSelect(b_.CreateICmpSLT(x, zero), all_ones, zero);
        r = b_.CreateSelect(out_of_range, fill, b_.CreateAShr(x, amount));
      }
      break;
    }
    default:
      return UnsupportedInstruction(instr, absl::StrCat("element type ", PrimitiveTypeName(type)));
  }
  if (is_pred) return b_.CreateZExt(b_.CreateICmpNE(r, zero), t);
  return r;
}

absl::StatusOr<Value*> IrEmitter::EmitComplexOp(const HloInstruction& instr, const IrValues& args) {
  const HloOpcode op = instr.opcode();
  const PrimitiveType type = TypeOf(*instr.operand(0));
  llvm::Type* part = ComputeFloatType(type);
  llvm::Type* complex = IrType(type);
  auto re = [&](Value* z) { return b_.CreateExtractValue(z, 0); };
  auto im = [&](Value* z) { return b_.CreateExtractValue(z, 1); };
  auto make = [&](Value* r, Value* i) {
    Value* z = llvm::UndefValue::get(complex);
    z = b_.CreateInsertValue(z, r, 0);
    return b_.CreateInsertValue(z, i, 1);
  };
  const bool c128 = type == PrimitiveType::C128;
  // A helper from runtime_symbols.cc: (op, parts..., out) -> void.
  auto helper = [&](const char* name, llvm::ArrayRef<Value*> parts) {
    llvm::AllocaInst* out = Alloca(complex, "complex.out");
    std::vector<Value*> call_args = {b_.getInt32(static_cast<int>(op))};
    call_args.insert(call_args.end(), parts.begin(), parts.end());
    call_args.push_back(out);
    CallC(name, b_.getVoidTy(), call_args);
    return b_.CreateLoad(complex, out);
  };
  if (op == HloOpcode::kAbs) {
    if (TypeOf(instr) != (c128 ? PrimitiveType::F64 : PrimitiveType::F32)) {
      return UnsupportedInstruction(instr, "abs of complex to this type");
    }
    Value* z = helper(c128 ? kComplexUnaryC128 : kComplexUnaryC64, {re(args[0]), im(args[0])});
    return re(z);  // |z| comes back as the real part
  }
  for (const HloInstruction* operand : instr.operands()) {
    if (TypeOf(*operand) != TypeOf(instr)) {
      return InvalidArgument(HloOpcodeString(op), " '", instr.name(),
                             "': operand type differs from the result type");
    }
  }
  if (args.size() == 1) {
    Value* z = args[0];
    if (op == HloOpcode::kNegate) return make(b_.CreateFNeg(re(z)), b_.CreateFNeg(im(z)));
    if (IsComplexHelperOp(op)) {
      return helper(c128 ? kComplexUnaryC128 : kComplexUnaryC64, {re(z), im(z)});
    }
    return UnsupportedInstruction(instr, absl::StrCat("element type ", PrimitiveTypeName(type)));
  }
  Value *x = args[0], *y = args[1];
  switch (op) {
    case HloOpcode::kAdd:
      return make(b_.CreateFAdd(re(x), re(y)), b_.CreateFAdd(im(x), im(y)));
    case HloOpcode::kSubtract:
      return make(b_.CreateFSub(re(x), re(y)), b_.CreateFSub(im(x), im(y)));
    case HloOpcode::kMultiply: {
      // The textbook product; C's recovery of infinities when both parts are
      // NaN (what std::complex does) is left to the helper.
      Value* r = b_.CreateFSub(b_.CreateFMul(re(x), re(y)), b_.CreateFMul(im(x), im(y)));
      Value* i = b_.CreateFAdd(b_.CreateFMul(re(x), im(y)), b_.CreateFMul(im(x), re(y)));
      Value* both_nan = b_.CreateAnd(b_.CreateFCmpUNO(r, r), b_.CreateFCmpUNO(i, i));
      ASSIGN_OR_RETURN(IrValues product,
                       If(
                           both_nan,
                           [&]() -> absl::StatusOr<IrValues> {
                             return IrValues{helper(c128 ? kComplexBinaryC128 : kComplexBinaryC64,
                                                    {re(x), im(x), re(y), im(y)})};
                           },
                           [&]() -> absl::StatusOr<IrValues> { return IrValues{make(r, i)}; }));
      return product[0];
    }
    case HloOpcode::kDivide:
    case HloOpcode::kPower:
    case HloOpcode::kAtan2:
      return helper(c128 ? kComplexBinaryC128 : kComplexBinaryC64, {re(x), im(x), re(y), im(y)});
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum: {
      // Lexicographic on (real, imaginary).
      auto less = [&](Value* a, Value* c) {
        return b_.CreateOr(b_.CreateFCmpOLT(re(a), re(c)),
                           b_.CreateAnd(b_.CreateNot(b_.CreateFCmpOLT(re(c), re(a))),
                                        b_.CreateFCmpOLT(im(a), im(c))));
      };
      if (op == HloOpcode::kMaximum) return b_.CreateSelect(less(x, y), y, x);
      return b_.CreateSelect(less(y, x), y, x);
    }
    default:
      (void)part;
      return UnsupportedInstruction(instr, absl::StrCat("element type ", PrimitiveTypeName(type)));
  }
}

absl::StatusOr<Value*> IrEmitter::EmitReducePrecision(const HloInstruction& instr, Value* x) {
  const PrimitiveType type = TypeOf(instr);
  if (!IsFloatingPoint(type) || TypeOf(*instr.operand(0)) != type) {
    return UnsupportedInstruction(instr, absl::StrCat("element type ", PrimitiveTypeName(type)));
  }
  const int64_t exponent_bits = instr.attrs().exponent_bits;
  const int64_t mantissa_bits = instr.attrs().mantissa_bits;
  if (exponent_bits < 1 || mantissa_bits < 0) {
    return InvalidArgument("reduce-precision '", instr.name(),
                           "': needs exponent_bits >= 1 and mantissa_bits >= 0");
  }
  const bool f64 = type == PrimitiveType::F64;
  Value* v = ToCompute(type, x);  // f32 for the narrow types, as the interpreter
  const int width = f64 ? 64 : 32, src_e = f64 ? 11 : 8, src_m = f64 ? 52 : 23;
  const int e = static_cast<int>(std::min<int64_t>(exponent_bits, 64));
  const int m = static_cast<int>(std::min<int64_t>(mantissa_bits, 64));
  llvm::Type* t = b_.getIntNTy(width);
  auto c = [&](uint64_t value) { return llvm::ConstantInt::get(t, value); };
  Value* original = b_.CreateBitCast(v, t);
  Value* bits = original;
  if (m < src_m) {
    const int dropped = src_m - m;
    const uint64_t last_kept_bit = uint64_t{1} << dropped;
    Value* rounding_bias =
        b_.CreateAdd(c((last_kept_bit >> 1) - 1),
                     b_.CreateLShr(b_.CreateAnd(bits, c(last_kept_bit)), c(dropped)));
    bits = b_.CreateAnd(b_.CreateAdd(bits, rounding_bias), c(~(last_kept_bit - 1)));
  }
  if (e < src_e) {
    const uint64_t sign_mask = uint64_t{1} << (src_e + src_m);
    const uint64_t exponent_mask = ((uint64_t{1} << src_e) - 1) << src_m;
    const uint64_t bias = (uint64_t{1} << (src_e - 1)) - 1;
    const uint64_t reduced_bias = (uint64_t{1} << (e - 1)) - 1;
    Value* exponent = b_.CreateAnd(bits, c(exponent_mask));
    Value* signed_zero = b_.CreateAnd(bits, c(sign_mask));
    Value* overflow = b_.CreateICmpUGT(exponent, c((bias + reduced_bias) << src_m));
    Value* underflow = b_.CreateICmpULE(exponent, c((bias - reduced_bias) << src_m));
    bits = b_.CreateSelect(overflow, b_.CreateOr(signed_zero, c(exponent_mask)), bits);
    bits = b_.CreateSelect(underflow, signed_zero, bits);
  }
  const uint64_t positive_infinity = ((uint64_t{1} << src_e) - 1) << src_m;
  Value* nan_result = m > 0 ? original : c(positive_infinity);
  bits = b_.CreateSelect(b_.CreateFCmpUNO(v, v), nan_result, bits);
  return FromCompute(type, b_.CreateBitCast(bits, v->getType()));
}

absl::StatusOr<Value*> IrEmitter::EmitStochasticConvert(const HloInstruction& instr, Value* x,
                                                        Value* random) {
  const PrimitiveType from = TypeOf(*instr.operand(0));
  const PrimitiveType bits_type = TypeOf(*instr.operand(1));
  const PrimitiveType to = TypeOf(instr);
  if (!IsFloatingPoint(from) || !IsUnsignedInt(bits_type) ||
      PrimitiveBitWidth(bits_type) != PrimitiveBitWidth(from) || !IsInteger(to)) {
    return UnsupportedInstruction(instr, "these element types");
  }
  const int bits = PrimitiveBitWidth(to);
  const bool is_signed = IsSignedInt(to);
  const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  const uint64_t max_bits = is_signed ? mask >> 1 : mask;
  const uint64_t min_bits = is_signed ? (uint64_t{1} << (bits - 1)) & mask : 0;
  const double max_value = is_signed ? static_cast<double>(static_cast<int64_t>(max_bits))
                                     : static_cast<double>(max_bits);
  const double min_value = is_signed ? -std::ldexp(1.0, bits - 1) : 0.0;
  llvm::Type* dbl = b_.getDoubleTy();
  llvm::Type* i64 = b_.getInt64Ty();
  Value* v = ToCompute(from, x);
  Value* d = v->getType()->isDoubleTy() ? v : b_.CreateFPExt(v, dbl);
  Value* negative = b_.CreateICmpSLT(b_.CreateBitCast(d, i64), I64(0));
  Value* magnitude = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, d);
  Value* truncated = b_.CreateFPToUI(magnitude, i64);
  Value* fraction = b_.CreateFSub(magnitude, b_.CreateUIToFP(truncated, dbl));
  Value* threshold = b_.CreateFPToUI(
      b_.CreateFMul(fraction,
                    llvm::ConstantFP::get(dbl, std::ldexp(1.0, PrimitiveBitWidth(bits_type)))),
      i64);
  Value* round_up = b_.CreateAnd(b_.CreateFCmpUNE(fraction, llvm::ConstantFP::get(dbl, 0.0)),
                                 b_.CreateICmpULT(b_.CreateZExt(random, i64), threshold));
  Value* at_max = b_.CreateICmpEQ(truncated, I64(max_bits));
  Value* bumped = b_.CreateAdd(truncated, b_.CreateZExt(round_up, i64));
  Value* result = b_.CreateSelect(negative, b_.CreateNeg(bumped), bumped);
  result = b_.CreateSelect(b_.CreateAnd(round_up, at_max), I64(min_bits), result);
  llvm::Type* t = IrType(to);
  Value* r = b_.CreateTrunc(result, t);
  r = b_.CreateSelect(b_.CreateFCmpOLE(d, llvm::ConstantFP::get(dbl, min_value)),
                      llvm::ConstantInt::get(t, min_bits), r);
  r = b_.CreateSelect(b_.CreateFCmpOGE(d, llvm::ConstantFP::get(dbl, max_value)),
                      llvm::ConstantInt::get(t, max_bits), r);
  r = b_.CreateSelect(b_.CreateFCmpUNO(d, d), llvm::ConstantInt::get(t, 0), r);
  Value* is_inf = b_.CreateFCmpOEQ(magnitude, llvm::ConstantFP::getInfinity(dbl));
  return b_.CreateSelect(is_inf,
                         b_.CreateSelect(negative, llvm::ConstantInt::get(t, min_bits),
                                         llvm::ConstantInt::get(t, max_bits)),
                         r);
}

}  // namespace xlite::codegen
