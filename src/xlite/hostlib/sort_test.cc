// hostlib::Sort and hostlib::TopK against std::stable_sort, along every
// dimension, with several operands; comparators that are not strict weak
// orders never crash. SortByKey against Sort with the comparator its key
// stands for: every key type, NaNs, zeros, both directions, all three packings,
// several threads.
#include "xlite/hostlib/sort.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "xlite/hostlib/top_k.h"

namespace xlite::hostlib {
namespace {
namespace XLITE_UNITY_ID {

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

// The comparator SortKey stands for, element by element (the test's
// reference; independent of SortByKey's codec: values, not bits).
struct KeyComparator {
  SortKey key;
  static double Value(ElementType type, uint64_t bits) {
    if (type == ElementType::kF64) {
      double d;
      std::memcpy(&d, &bits, 8);
      return d;
    }
    // f32, or bf16: the top half of an f32.
    const uint32_t b = static_cast<uint32_t>(type == ElementType::kBF16 ? bits << 16 : bits);
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  }
  static int64_t SignExtend(ElementType type, uint64_t bits) {
    const int width = ElementBitWidth(type);
    return width == 64 ? static_cast<int64_t>(bits)
                       : static_cast<int64_t>(bits << (64 - width)) >> (64 - width);
  }
  // Total order of floats: sign-magnitude bits as a signed integer.
  static int64_t Total(ElementType type, uint64_t bits) {
    const int width = ElementBitWidth(type);
    const bool negative = (bits >> (width - 1)) & 1;
    const uint64_t magnitude = bits & ((uint64_t{1} << (width - 1)) - 1);
    return negative ? -static_cast<int64_t>(magnitude) - 1 : static_cast<int64_t>(magnitude);
  }
  bool Less(uint64_t a, uint64_t b) const {
    if (IsSignedIntegerType(key.type)) return SignExtend(key.type, a) < SignExtend(key.type, b);
    if (!IsFloatType(key.type)) return a < b;
    const double x = Value(key.type, a), y = Value(key.type, b);
    if (key.ieee) return x < y;
    if (std::isnan(x) && key.nan_bits) a = *key.nan_bits;
    if (x == 0 && key.zero_bits) a = *key.zero_bits;
    if (std::isnan(y) && key.nan_bits) b = *key.nan_bits;
    if (y == 0 && key.zero_bits) b = *key.zero_bits;
    return Total(key.type, a) < Total(key.type, b);
  }
  static bool Call(const void* const* e, void* context) {
    const auto& self = *static_cast<const KeyComparator*>(context);
    const int bytes = ElementByteWidth(self.key.type);
    uint64_t a = 0, b = 0;
    std::memcpy(&a, e[2 * self.key.operand], bytes);
    std::memcpy(&b, e[2 * self.key.operand + 1], bytes);
    return self.key.descending ? self.Less(b, a) : self.Less(a, b);
  }
};

// A key on `operand` (the tests' payload is operand 0).
SortKey Key(ElementType type, bool descending = false, int operand = 1) {
  SortKey key;
  key.operand = operand;
  key.type = type;
  key.descending = descending;
  return key;
}
SortKey IeeeKey(ElementType type) {
  SortKey key = Key(type);
  key.ieee = true;
  return key;
}

// Runs SortByKey and Sort(KeyComparator) on the same random keys (drawn from
// `pool`, so with many ties) and a position payload; expects the same bits.
void ExpectRadixMatchesComparator(const SortKey& key, std::vector<uint64_t> pool,
                                  std::vector<int64_t> dims, int64_t dimension,
                                  const SortParallelism& parallelism = {}) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  const int bytes = ElementByteWidth(key.type);
  std::mt19937_64 rng(count + bytes);
  std::vector<uint8_t> keys(count * bytes);
  std::vector<int32_t> payload(count);
  for (int64_t i = 0; i < count; ++i) {
    const uint64_t v = pool.empty() ? rng() : pool[rng() % pool.size()];
    std::memcpy(keys.data() + i * bytes, &v, bytes);
    payload[i] = static_cast<int32_t>(i);
  }
  std::vector<uint8_t> radix_keys = keys, merge_keys = keys;
  std::vector<int32_t> radix_payload = payload, merge_payload = payload;
  // The key is operand 1 here, the payload operand 0.
  void* radix[] = {radix_payload.data(), radix_keys.data()};
  void* merge[] = {merge_payload.data(), merge_keys.data()};
  const int element_bytes[] = {4, bytes};
  absl::StatusOr<bool> sorted = SortByKey(dims, dimension, radix, element_bytes, key, parallelism);
  ASSERT_TRUE(sorted.ok()) << sorted.status();
  ASSERT_TRUE(*sorted);
  // Out of place: the inputs stay as they were, the outputs are the same.
  std::vector<uint8_t> out_keys(keys.size());
  std::vector<int32_t> out_payload(payload.size());
  const void* inputs[] = {payload.data(), keys.data()};
  void* outputs[] = {out_payload.data(), out_keys.data()};
  sorted = SortByKey(dims, dimension, inputs, outputs, element_bytes, key, parallelism);
  ASSERT_TRUE(sorted.ok() && *sorted);
  EXPECT_EQ(out_keys, radix_keys);
  EXPECT_EQ(out_payload, radix_payload);
  KeyComparator comparator{key};
  ASSERT_TRUE(Sort(dims, dimension, merge, element_bytes, &KeyComparator::Call, &comparator).ok());
  EXPECT_EQ(radix_keys, merge_keys) << ElementTypeName(key.type);
  EXPECT_EQ(radix_payload, merge_payload) << ElementTypeName(key.type);
}

TEST(SortByKey, FloatsUnderEveryOrder) {
  // bf16: NaN, -NaN, a payload NaN, +-0, +-inf, ordinary values.
  const std::vector<uint64_t> bf16 = {0x7FC0, 0xFFC0, 0x7F81, 0x0000, 0x8000, 0x7F80,
                                      0xFF80, 0x3F80, 0xBF80, 0x4000, 0x3F80, 0x0001};
  SortKey jax = Key(ElementType::kBF16);
  jax.nan_bits = 0x7FC0;
  jax.zero_bits = 0;
  for (bool descending : {false, true}) {
    jax.descending = descending;
    ExpectRadixMatchesComparator(jax, bf16, {4, 512}, 1);   // argsort's shape: 32-bit words
    ExpectRadixMatchesComparator(jax, bf16, {3, 7, 5}, 1);  // strided slices
    SortKey total = jax;
    total.nan_bits.reset();
    total.zero_bits.reset();
    ExpectRadixMatchesComparator(total, bf16, {2, 70000}, 1);  // 64-bit words
  }
  std::vector<uint64_t> f32;
  for (float v : {0.0f, -0.0f, 1.5f, -1.5f, 3e38f, -1e-45f, 1e-45f, 2.0f}) {
    uint32_t b;
    std::memcpy(&b, &v, 4);
    f32.push_back(b);
  }
  ExpectRadixMatchesComparator(IeeeKey(ElementType::kF32), f32, {5, 300}, 1);
  f32.push_back(0x7FC00000);
  ExpectRadixMatchesComparator(Key(ElementType::kF32), f32, {5, 300}, 0);
  // f64 keys do not fit a word with their position: key and index pairs.
  ExpectRadixMatchesComparator(Key(ElementType::kF64, true), {}, {3, 100}, 1);
}

TEST(SortByKey, Integers) {
  for (ElementType type : {ElementType::kS8, ElementType::kS32, ElementType::kU8, ElementType::kU16,
                           ElementType::kU64, ElementType::kPred}) {
    std::vector<uint64_t> pool;
    if (type == ElementType::kPred) pool = {0, 1};
    if (type == ElementType::kS8) pool = {0x80, 0x7F, 0xFF, 0, 1, 0x81};
    for (bool descending : {false, true}) {
      ExpectRadixMatchesComparator(Key(type, descending), pool, {6, 33}, 1);
      ExpectRadixMatchesComparator(Key(type, descending), pool, {40, 6}, 0);
    }
  }
}

TEST(SortByKey, SeveralThreads) {
  SortParallelism parallelism;
  parallelism.threads = 3;
  parallelism.run = [](int64_t parts, absl::FunctionRef<void(int64_t)> fn) {
    std::vector<std::thread> threads;
    for (int64_t p = 0; p < parts; ++p) threads.emplace_back([&fn, p] { fn(p); });
    for (std::thread& t : threads) t.join();
  };
  ExpectRadixMatchesComparator(Key(ElementType::kS32), {1, 2, 3, 4}, {64, 1024}, 1, parallelism);
  ExpectRadixMatchesComparator(Key(ElementType::kS32), {1, 2, 3, 4}, {1024, 64}, 0, parallelism);
}

TEST(SortByKey, DeclinesNaNsUnderIeeeOrderAndBadArguments) {
  std::vector<float> keys = {2.0f, std::numeric_limits<float>::quiet_NaN(), 1.0f};
  const std::vector<float> original = keys;
  void* operands[] = {keys.data()};
  const int bytes[] = {4};
  const int64_t dims[] = {3};
  SortKey ieee = IeeeKey(ElementType::kF32);
  ieee.operand = 0;
  absl::StatusOr<bool> sorted = SortByKey(dims, 0, operands, bytes, ieee);
  ASSERT_TRUE(sorted.ok());
  EXPECT_FALSE(*sorted);
  EXPECT_EQ(std::memcmp(keys.data(), original.data(), sizeof(float) * 3), 0);
  EXPECT_TRUE(absl::IsInvalidArgument(
      SortByKey(dims, 0, operands, bytes, Key(ElementType::kF32)).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      SortByKey(dims, 0, operands, bytes, Key(ElementType::kF64, false, 0)).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      SortByKey(dims, 0, operands, bytes, Key(ElementType::kC64, false, 0)).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      SortByKey(dims, 1, operands, bytes, Key(ElementType::kF32, false, 0)).status()));
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

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::hostlib
