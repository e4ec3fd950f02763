#include "xlite/runtime/compare_literals.h"

#include <cmath>
#include <complex>
#include <limits>

#include "absl/strings/str_cat.h"

namespace xlite::runtime {
namespace {

bool IsFloat(PrimitiveType t) { return IsFloatingPoint(t); }

// Mantissa bits (without the implicit one) of the narrow float types.
int MantissaBits(PrimitiveType t) {
  const absl::string_view name = PrimitiveTypeName(t);
  if (name == "bf16") return 7;
  if (name == "f16") return 10;
  if (name == "f8e5m2" || name == "f8e5m2fnuz") return 2;
  if (name == "f8e4m3" || name == "f8e4m3fn" || name == "f8e4m3fnuz" || name == "f8e4m3b11fnuz") {
    return 3;
  }
  if (name == "f8e3m4") return 4;
  if (name == "f4e2m1fn") return 1;
  if (name == "f8e8m0fnu") return 0;
  return 52;
}

// The smallest normal number of the precision the CPU computes `t` in.
double SmallestNormal(PrimitiveType t) {
  const absl::string_view name = PrimitiveTypeName(t);
  return name == "f64" || name == "c128" ? std::numeric_limits<double>::min()
                                         : std::numeric_limits<float>::min();
}

void CompareLeaf(const Literal& actual, const Literal& expected, const Tolerance& tolerance,
                 LeafComparison& out) {
  const Shape& a = actual.shape();
  const Shape& e = expected.shape();
  // Dynamic dimensions are compared at their bounds: both sides hold the
  // padded data (f32[<=4] and f32[4] hold the same four elements).
  if (!a.IsArray() || !e.IsArray() || a.element_type() != e.element_type() ||
      a.dimensions() != e.dimensions()) {
    out.matches = false;
    out.message = absl::StrCat("shape ", a.ToString(false), " vs ", e.ToString(false));
    return;
  }
  const PrimitiveType t = a.element_type();
  const int64_t n = actual.element_count();
  if (!IsFloat(t) && !xlite::IsComplex(t)) {
    for (int64_t i = 0; i < n; ++i) {
      if (actual.GetBits(i) == expected.GetBits(i)) continue;
      if (out.mismatches++ == 0) {
        out.worst_element = i;
        out.actual = actual.ElementToString(i);
        out.expected = expected.ElementToString(i);
      }
      const double d =
          std::abs(static_cast<double>(actual.GetInt(i)) - static_cast<double>(expected.GetInt(i)));
      out.max_abs_diff = std::max(out.max_abs_diff, d);
    }
    out.matches = out.mismatches == 0;
    return;
  }
  // Components: one for reals, (re, im) for complex.
  auto component = [&](const Literal& l, int64_t i, int c) -> double {
    if (!xlite::IsComplex(t)) return l.GetDouble(i);
    const std::complex<double> z = l.GetComplex(i);
    return c == 0 ? z.real() : z.imag();
  };
  const int components = xlite::IsComplex(t) ? 2 : 1;
  double relative = tolerance.relative;
  if (tolerance.one_ulp_of_narrow_types && MantissaBits(t) < 9) {
    relative = std::max(relative, tolerance.narrow_type_ulps * std::ldexp(1.0, -MantissaBits(t)));
  }
  const double flushed = tolerance.denormals_flushed ? SmallestNormal(t) : 0;
  double largest = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int c = 0; c < components; ++c) {
      const double v = component(expected, i, c);
      if (std::isfinite(v)) largest = std::max(largest, std::abs(v));
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    bool bad = false;
    double diff = 0;
    for (int c = 0; c < components; ++c) {
      const double x = component(actual, i, c), y = component(expected, i, c);
      if (std::isnan(x) || std::isnan(y)) {
        bad |= std::isnan(x) != std::isnan(y);
        continue;
      }
      if (std::isinf(x) || std::isinf(y)) {
        bad |= x != y;
        continue;
      }
      const double d = std::abs(x - y);
      diff = std::max(diff, d);
      bad |= d > relative * std::abs(y) && d > tolerance.of_largest * largest &&
             !(std::abs(y) < flushed && std::abs(x) < flushed);
    }
    if (diff > out.max_abs_diff || (bad && out.worst_element < 0)) {
      out.max_abs_diff = std::max(out.max_abs_diff, diff);
      out.worst_element = i;
      out.actual = actual.ElementToString(i);
      out.expected = expected.ElementToString(i);
    }
    if (bad) ++out.mismatches;
  }
  out.matches = out.mismatches == 0;
}

void Walk(const Literal& actual, const Literal& expected, const Tolerance& tolerance,
          ShapeIndex& index, Comparison& out) {
  if (actual.shape().IsTuple() || expected.shape().IsTuple()) {
    if (actual.tuple_elements().size() != expected.tuple_elements().size() ||
        !actual.shape().IsTuple() || !expected.shape().IsTuple()) {
      LeafComparison leaf;
      leaf.index = index;
      leaf.matches = false;
      leaf.message = absl::StrCat("shape ", actual.shape().ToString(false), " vs ",
                                  expected.shape().ToString(false));
      out.leaves.push_back(leaf);
      out.matches = false;
      return;
    }
    for (size_t i = 0; i < actual.tuple_elements().size(); ++i) {
      index.push_back(static_cast<int64_t>(i));
      Walk(actual.tuple_elements()[i], expected.tuple_elements()[i], tolerance, index, out);
      index.pop_back();
    }
    return;
  }
  if (!actual.shape().IsArray() && !expected.shape().IsArray()) return;  // tokens
  LeafComparison leaf;
  leaf.index = index;
  CompareLeaf(actual, expected, tolerance, leaf);
  out.matches &= leaf.matches;
  out.leaves.push_back(std::move(leaf));
}

}  // namespace

Comparison CompareLiterals(const Literal& actual, const Literal& expected,
                           const Tolerance& tolerance) {
  Comparison out;
  ShapeIndex index;
  Walk(actual, expected, tolerance, index, out);
  return out;
}

std::string Comparison::ToString(bool all) const {
  std::string s;
  for (size_t k = 0; k < leaves.size(); ++k) {
    const LeafComparison& l = leaves[k];
    if (l.matches && !all) continue;
    absl::StrAppend(&s, "out", k, ": ");
    if (!l.message.empty()) {
      absl::StrAppend(&s, l.message, "\n");
      continue;
    }
    absl::StrAppend(&s, l.matches ? "matches" : absl::StrCat(l.mismatches, " elements differ"),
                    "; largest |diff| ", l.max_abs_diff);
    if (l.worst_element >= 0) {
      absl::StrAppend(&s, " at element ", l.worst_element, " (", l.actual, " vs reference ",
                      l.expected, ")");
    }
    s += "\n";
  }
  return s;
}

}  // namespace xlite::runtime
