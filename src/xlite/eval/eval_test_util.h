// Literal builders and readers shared by the evaluator's tests.
#ifndef XLITE_EVAL_EVAL_TEST_UTIL_H_
#define XLITE_EVAL_EVAL_TEST_UTIL_H_

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "xlite/ir/literal.h"

namespace xlite::eval_test {

// An array of `type` and `dims` holding `values` in row-major order.
inline Literal Array(PrimitiveType type, std::vector<int64_t> dims,
                     const std::vector<double>& values) {
  Literal lit(Shape::Array(type, std::move(dims)));
  EXPECT_EQ(lit.element_count(), static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size() && i < static_cast<size_t>(lit.element_count()); ++i) {
    if (IsInteger(type) || type == PrimitiveType::PRED) {
      lit.SetInt(i, static_cast<int64_t>(values[i]));
    } else {
      lit.SetDouble(i, values[i]);
    }
  }
  return lit;
}

inline Literal F32(std::vector<int64_t> dims, const std::vector<double>& values) {
  return Array(PrimitiveType::F32, std::move(dims), values);
}
inline Literal S32(std::vector<int64_t> dims, const std::vector<double>& values) {
  return Array(PrimitiveType::S32, std::move(dims), values);
}
inline Literal S64(std::vector<int64_t> dims, const std::vector<double>& values) {
  return Array(PrimitiveType::S64, std::move(dims), values);
}

inline std::vector<double> Doubles(const Literal& lit) {
  std::vector<double> v;
  for (int64_t i = 0; i < lit.element_count(); ++i) v.push_back(lit.GetDouble(i));
  return v;
}

inline std::vector<int64_t> Ints(const Literal& lit) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < lit.element_count(); ++i) v.push_back(lit.GetInt(i));
  return v;
}

}  // namespace xlite::eval_test

#endif  // XLITE_EVAL_EVAL_TEST_UTIL_H_
