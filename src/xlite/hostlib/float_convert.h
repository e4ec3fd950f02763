// Conversions between f32 and the floating-point types narrower than it
// (f16, bf16, the f8 family, f4e2m1fn, f8e8m0fnu), with XLA's encodings:
// round to nearest even; on overflow, infinity where the type has one, NaN
// for the "fn"/"fnuz" f8 types, the largest finite value for f4e2m1fn (no NaN
// either). Host kernels compute with narrow operands in f32, as XLA:CPU
// upcasts them, and round each result once.
#ifndef XLITE_HOSTLIB_FLOAT_CONVERT_H_
#define XLITE_HOSTLIB_FLOAT_CONVERT_H_

#include <cstdint>

#include "xlite/hostlib/element_type.h"

namespace xlite::hostlib {

// `bits` holds one element of `type` in its low bits. `type` must satisfy
// IsNarrowFloatType.
float NarrowToFloat(ElementType type, uint32_t bits);
// Rounds once, from double (exact for every f32 value).
uint32_t FloatToNarrow(ElementType type, double value);

// `count` elements of `type` (f32 or a narrow float) at `src` as f32, and
// back. FromFloat rounds each element once.
void ToFloat(ElementType type, const void* src, int64_t count, float* dst);
void FromFloat(ElementType type, const float* src, int64_t count, void* dst);

}  // namespace xlite::hostlib

#endif  // XLITE_HOSTLIB_FLOAT_CONVERT_H_
