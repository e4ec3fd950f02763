// The StableHLO interpreter's check dialect, run by xlite's evaluator as
// side-effecting custom calls (the lowering turns check.* ops into them):
//   check.expect_eq        exact equality (NaN matches NaN)
//   check.expect_almost_eq |actual - expected| <= tolerance (default 1e-4)
//   check.expect_close     ULP distance in [min_ulp_difference, max_ulp_difference]
//                          (default [0, 3]), per component for complex
//   check.eq               expect_eq on integers, expect_almost_eq on floats;
//                          returns tensor<i1> true
// Integers and booleans compare exactly under every check. A failing check is
// an error naming the check's file:line:col and a few differing elements.
#ifndef XLITE_STABLEHLO_CHECK_OPS_H_
#define XLITE_STABLEHLO_CHECK_OPS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "xlite/ir/instruction.h"

namespace xlite::stablehlo {

// Registers the check.* targets with the evaluator; idempotent.
void RegisterCheckTargets();

// ULP distance between two values of floating-point type `type` given as raw
// element bits (for tests and reports); NaN vs NaN is 0, NaN vs number is max.
uint64_t UlpDistance(PrimitiveType type, uint64_t a_bits, uint64_t b_bits);

// Compares per the check's rules; OK or FailedPrecondition with the report.
absl::Status RunCheck(const HloInstruction& check, const Literal& actual, const Literal& expected);

}  // namespace xlite::stablehlo

#endif  // XLITE_STABLEHLO_CHECK_OPS_H_
