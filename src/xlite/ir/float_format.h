// Encoding of XLA's small floating-point types (f16, bf16, the f8/f4 family,
// e8m0) to and from double, with round-to-nearest-even.
#ifndef XLITE_IR_FLOAT_FORMAT_H_
#define XLITE_IR_FLOAT_FORMAT_H_

#include <cstdint>
#include <optional>

#include "xlite/ir/primitive_type.h"

namespace xlite {

struct FloatFormat {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  bool has_sign;
  bool has_inf;
  // kIeee: all-ones exponent is inf/NaN. kFiniteAllOnesNan: only S.1..1.1..1 is NaN
  // (the "fn" types). kNegZeroNan: the negative-zero pattern is the only NaN ("fnuz").
  // kNone: no NaN at all (f4e2m1fn). kAllOnesNan: 0xFF is NaN (e8m0fnu).
  enum class Nan { kIeee, kFiniteAllOnesNan, kNegZeroNan, kNone, kAllOnesNan } nan;
  int total_bits() const { return (has_sign ? 1 : 0) + exponent_bits + mantissa_bits; }
  // Significant decimal digits that always survive a round trip, and the
  // digits needed to make every value round-trip (std::numeric_limits style).
  int digits10() const;
  int max_digits10() const;
};

// Formats for f16, bf16, f32, f64 and the small types; nullopt for others.
std::optional<FloatFormat> GetFloatFormat(PrimitiveType type);

double DecodeFloat(const FloatFormat& f, uint64_t bits);
uint64_t EncodeFloat(const FloatFormat& f, double value);
// Bits of the canonical quiet NaN (sign clear).
uint64_t QuietNanBits(const FloatFormat& f);

}  // namespace xlite

#endif  // XLITE_IR_FLOAT_FORMAT_H_
