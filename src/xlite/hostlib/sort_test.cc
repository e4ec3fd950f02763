// hostlib::Sort and hostlib::TopK against std::stable_sort, along every
// dimension, with several operands; comparators that are not strict weak
// orders never crash.
#include "xlite/hostlib/sort.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "xlite/hostlib/top_k.h"

namespace xlite::hostlib {
namespace {

// Operand 0 (float keys) ascending; ties by nothing (stability decides).
bool FloatLess(const void* const* e, void*) {
  return *static_cast<const float*>(e[0]) < *static_cast<const float*>(e[1]);
}
// Keys (s32) descending, then operand 1 (f64) ascending.
bool TwoKeys(const void* const* e, void*) {
  const int32_t a = *static_cast<const int32_t*>(e[0]), b = *static_cast<const int32_t*>(e[1]);
  if (a != b) return a > b;
  return *static_cast<const double*>(e[2]) < *static_cast<const double*>(e[3]);
}
// Not a strict weak order: <=, and an answer that ignores the arguments.
bool LessEqual(const void* const* e, void*) {
  return *static_cast<const float*>(e[0]) <= *static_cast<const float*>(e[1]);
}
bool CountCalls(const void* const*, void* context) {
  return ++*static_cast<int64_t*>(context) % 3 == 0;
}

TEST(Sort, EveryDimensionWithAPayload) {
  const std::vector<int64_t> dims = {3, 5, 4};
  const int64_t count = 60;
  std::mt19937 rng(3);
  for (int64_t dim = 0; dim < 3; ++dim) {
    std::vector<float> keys(count);
    std::vector<int32_t> payload(count);
    for (int64_t i = 0; i < count; ++i) {
      keys[i] = static_cast<float>(rng() % 4);  // many ties
      payload[i] = static_cast<int32_t>(i);
    }
    const std::vector<float> original = keys;
    void* operands[] = {keys.data(), payload.data()};
    const int bytes[] = {4, 4};
    ASSERT_TRUE(Sort(dims, dim, operands, bytes, FloatLess, nullptr).ok());
    // Each slice: stable order of the original slice.
    int64_t inner = 1;
    for (int64_t d = dim + 1; d < 3; ++d) inner *= dims[d];
    const int64_t length = dims[dim];
    for (int64_t start = 0; start < count; ++start) {
      if ((start / inner) % length != 0) continue;  // not a slice start
      std::vector<int64_t> order(length);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return original[start + a * inner] < original[start + b * inner];
      });
      for (int64_t p = 0; p < length; ++p) {
        EXPECT_EQ(keys[start + p * inner], original[start + order[p] * inner]);
        EXPECT_EQ(payload[start + p * inner], start + order[p] * inner);
      }
    }
  }
}

TEST(Sort, ComparatorSeesEveryOperandInParameterOrder) {
  std::vector<int32_t> keys = {1, 3, 3, 2, 1, 3};
  std::vector<double> second = {0.5, 2.0, 1.0, 7.0, 0.1, 1.5};
  void* operands[] = {keys.data(), second.data()};
  const int bytes[] = {4, 8};
  const int64_t dims[] = {6};
  ASSERT_TRUE(Sort(dims, 0, operands, bytes, TwoKeys, nullptr).ok());
  EXPECT_EQ(keys, (std::vector<int32_t>{3, 3, 3, 2, 1, 1}));
  EXPECT_EQ(second, (std::vector<double>{1.0, 1.5, 2.0, 7.0, 0.1, 0.5}));
}

TEST(Sort, BadComparatorsStayInBounds) {
  std::vector<float> keys(1000);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = static_cast<float>((i * 7919) % 13);
  std::vector<float> sorted = keys;
  void* operands[] = {sorted.data()};
  const int bytes[] = {4};
  const int64_t dims[] = {1000};
  ASSERT_TRUE(Sort(dims, 0, operands, bytes, LessEqual, nullptr).ok());
  EXPECT_TRUE(std::is_sorted(sorted.begin(), sorted.end()));
  int64_t calls = 0;
  ASSERT_TRUE(Sort(dims, 0, operands, bytes, CountCalls, &calls).ok());
  EXPECT_GT(calls, 0);
  std::vector<float> a = keys, b = sorted;  // still a permutation
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b);
}

TEST(Sort, Errors) {
  float x = 0;
  void* operands[] = {&x};
  const int bytes[] = {4};
  const int64_t dims[] = {1};
  EXPECT_TRUE(absl::IsInvalidArgument(Sort(dims, 1, operands, bytes, FloatLess, nullptr)));
  EXPECT_TRUE(absl::IsInvalidArgument(Sort(dims, 0, operands, bytes, nullptr, nullptr)));
  const int two[] = {4, 4};
  EXPECT_TRUE(absl::IsInvalidArgument(Sort(dims, 0, operands, two, FloatLess, nullptr)));
}

TEST(TopK, TotalOrderWithStableTies) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> row = {1.0f, -0.0f, 0.0f, nan, -nan, INFINITY, -INFINITY, 1.0f, 2.0f};
  const int64_t n = static_cast<int64_t>(row.size());
  std::vector<float> values(n);
  std::vector<int32_t> indices(n);
  ASSERT_TRUE(
      TopK(ElementType::kF32, 1, n, n, true, row.data(), values.data(), indices.data()).ok());
  EXPECT_EQ(indices, (std::vector<int32_t>{3, 5, 8, 0, 7, 2, 1, 6, 4}));
  ASSERT_TRUE(
      TopK(ElementType::kF32, 1, n, 3, false, row.data(), values.data(), indices.data()).ok());
  EXPECT_EQ(std::vector<int32_t>(indices.begin(), indices.begin() + 3),
            (std::vector<int32_t>{4, 6, 1}));
  EXPECT_TRUE(std::isinf(values[1]) && values[1] < 0);
}

TEST(TopK, IntegersAndRows) {
  const std::vector<int8_t> in = {-1, 5, 5, -128, 127, 0, 3, 3};
  std::vector<int8_t> values(4);
  std::vector<int32_t> indices(4);
  ASSERT_TRUE(TopK(ElementType::kS8, 2, 4, 2, true, in.data(), values.data(), indices.data()).ok());
  EXPECT_EQ(values, (std::vector<int8_t>{5, 5, 127, 3}));
  EXPECT_EQ(indices, (std::vector<int32_t>{1, 2, 0, 2}));
  const std::vector<uint16_t> u = {65535, 1, 0};
  std::vector<uint16_t> uv(1);
  ASSERT_TRUE(TopK(ElementType::kU16, 1, 3, 1, true, u.data(), uv.data(), indices.data()).ok());
  EXPECT_EQ(uv[0], 65535);
}

TEST(TopK, Errors) {
  float x = 0;
  int32_t i = 0;
  EXPECT_TRUE(absl::IsInvalidArgument(TopK(ElementType::kF32, 1, 1, 2, true, &x, &x, &i)));
  EXPECT_TRUE(absl::IsUnimplemented(TopK(ElementType::kC64, 1, 1, 1, true, &x, &x, &i)));
}

}  // namespace
}  // namespace xlite::hostlib
