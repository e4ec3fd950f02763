// Comparing a compiled result with a reference (the interpreter's, or
// XLA's outputs): integers and pred bitwise; floating point within
// jax/README.md's tolerance -- relative 2e-3 per element, or 1e-3 of the
// array's largest reference magnitude (summation order) -- NaN matching
// NaN, infinities matching exactly; complex numbers per component; bounded
// dynamic dimensions at their bounds (f32[<=4] against f32[4]). Used by
// `xlite run --reference_platform=interpreter` and the conformance tests.
#ifndef XLITE_RUNTIME_COMPARE_LITERALS_H_
#define XLITE_RUNTIME_COMPARE_LITERALS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xlite/analysis/shape_util.h"
#include "xlite/ir/literal.h"

namespace xlite::runtime {

struct Tolerance {
  double relative = 2e-3;
  double of_largest = 1e-3;
  bool one_ulp_of_narrow_types = true;
  // With one_ulp_of_narrow_types: how many ulps of a narrow type (< 9
  // mantissa bits: bf16, f8, ...) a value may differ by, relatively.
  int narrow_type_ulps = 1;
  bool denormals_flushed = true;
};

// For results computed with excess precision (--xla_allow_excess_precision,
// the default, as in XLA): a fusion rounds bf16/f16 once at its output where
// the interpreter rounds after every op, so a narrow value may differ from
// the interpreter's by a few ulps (3 bf16 ulps measured on XLA's layer_norm
// benchmark). Types of fewer than 9 mantissa bits (bf16, f8) get 4 ulps;
// f16 and wider keep the default (2e-3 relative is 2 f16 ulps).
inline Tolerance ExcessPrecisionTolerance() {
  Tolerance t;
  t.narrow_type_ulps = 4;
  return t;
}

// One array leaf: its largest difference.
struct LeafComparison {
  ShapeIndex index;
  bool matches = true;
  int64_t mismatches = 0;
  int64_t worst_element = -1;  // row-major; -1 when every element is equal
  double max_abs_diff = 0;
  std::string actual, expected;  // the worst element's values
  std::string message;           // a shape mismatch
};

struct Comparison {
  bool matches = true;
  std::vector<LeafComparison> leaves;
  // "out1: 3 of 64 elements differ; largest |diff| 0.5 at 7 (1.5 vs 1)" per
  // leaf that differs, or per leaf when `all`.
  std::string ToString(bool all = false) const;
};

Comparison CompareLiterals(const Literal& actual, const Literal& expected,
                           const Tolerance& tolerance = {});

}  // namespace xlite::runtime

#endif  // XLITE_RUNTIME_COMPARE_LITERALS_H_
