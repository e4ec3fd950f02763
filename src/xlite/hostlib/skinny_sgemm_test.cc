#include "xlite/hostlib/skinny_sgemm.h"

#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace xlite::hostlib {
namespace {
namespace XLITE_UNITY_ID {

uint32_t Bits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}

// Runs C = op(A)·B with padded leading dimensions and checks every element
// bit for bit against one fused multiply-add per k in order (the kernel's
// arithmetic, skinny_sgemm.h), and that nothing outside C's m x n changed.
void Check(bool transpose_lhs, int64_t m, int64_t k, int64_t n, uint32_t seed,
           bool specials = false) {
  SCOPED_TRACE(absl::StrCat(m, "x", k, "x", n, transpose_lhs ? " lhs^T" : ""));
  const int64_t lda = (transpose_lhs ? m : k) + 3, ldb = n + 5, ldc = n + 2;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<float> a((transpose_lhs ? k : m) * lda), b(k * ldb);
  for (float& x : a) x = uniform(rng);
  for (float& x : b) x = uniform(rng);
  if (specials) {
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    a[0] = inf;
    a[a.size() / 2] = nan;
    b[b.size() / 3] = -inf;
    b[1] = -0.0f;
  }
  auto lhs = [&](int64_t i, int64_t kk) {
    return transpose_lhs ? a[kk * lda + i] : a[i * lda + kk];
  };
  constexpr float kGuard = 12345.0f;
  std::vector<float> c(m * ldc + 7, kGuard);
  ASSERT_TRUE(
      SkinnySgemm(transpose_lhs, m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc).ok());
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const float got = c[i * ldc + j];
      if (j >= n) {
        ASSERT_EQ(got, kGuard) << "wrote past column " << n << " at [" << i << "," << j << "]";
        continue;
      }
      float want = 0;
      for (int64_t kk = 0; kk < k; ++kk) want = std::fma(lhs(i, kk), b[kk * ldb + j], want);
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(got)) << "at [" << i << "," << j << "]: " << got;
      } else {
        ASSERT_EQ(Bits(got), Bits(want)) << "at [" << i << "," << j << "]: " << got << " " << want;
      }
    }
  }
  for (size_t at = m * ldc; at < c.size(); ++at) ASSERT_EQ(c[at], kGuard) << "past the last row";
}

TEST(SkinnySgemm, EveryRowCountAndEdgeMatchesOrderedFmaBitForBit) {
  if (!SkinnySgemmAvailable()) GTEST_SKIP() << "this CPU has no AVX-512F: the kernel never runs";
  uint32_t seed = 1;
  // Rows: one vector (1-16) and two (17-32), each partly padded or full.
  // Depths: within, at and across the kernel's 16-row transposes and 32-row
  // blocks of B. Columns: the 12- and 24-wide tiles, the 4- and 1-wide tails,
  // and the 16-wide transposes of the result.
  for (int64_t m : {1, 5, 16, 17, 28, 32}) {
    for (int64_t k : {1, 15, 16, 33, 100}) {
      for (int64_t n : {1, 3, 4, 11, 12, 13, 25, 40}) {
        for (bool transpose_lhs : {false, true}) Check(transpose_lhs, m, k, n, ++seed);
      }
    }
  }
}

// More columns than one pass takes (16384): the passes' results land side by
// side, each exact.
TEST(SkinnySgemm, ColumnsBeyondOnePass) {
  if (!SkinnySgemmAvailable()) GTEST_SKIP() << "this CPU has no AVX-512F: the kernel never runs";
  for (int64_t m : {3, 20}) {
    for (bool transpose_lhs : {false, true}) Check(transpose_lhs, m, 5, 16384 * 2 + 37, 91);
  }
}

TEST(SkinnySgemm, InfinitiesAndNansPropagateAsTheProductsDo) {
  if (!SkinnySgemmAvailable()) GTEST_SKIP() << "this CPU has no AVX-512F: the kernel never runs";
  for (int64_t m : {9, 32}) {
    for (bool transpose_lhs : {false, true}) Check(transpose_lhs, m, 40, 30, 77, /*specials=*/true);
  }
}

// A, B and C each end at a page followed by an inaccessible one, so a read or
// write past any operand's last element faults (the masked loads and stores
// of the tails must not touch it).
TEST(SkinnySgemm, TouchesNothingPastItsOperands) {
  if (!SkinnySgemmAvailable()) GTEST_SKIP() << "this CPU has no AVX-512F: the kernel never runs";
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  // `floats` floats ending where an inaccessible page begins (null, reported,
  // when the pages cannot be mapped or fenced).
  auto fenced = [page](size_t floats) -> std::pair<float*, std::pair<void*, size_t>> {
    const size_t bytes = (floats * sizeof(float) + page - 1) / page * page;
    void* region =
        mmap(nullptr, bytes + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED) {
      ADD_FAILURE() << "mmap of " << bytes + page << " bytes failed";
      return {nullptr, {nullptr, 0}};
    }
    if (mprotect(static_cast<char*>(region) + bytes, page, PROT_NONE) != 0) {
      ADD_FAILURE() << "mprotect failed";
      munmap(region, bytes + page);
      return {nullptr, {nullptr, 0}};
    }
    float* end = reinterpret_cast<float*>(static_cast<char*>(region) + bytes);
    return {end - floats, {region, bytes + page}};
  };
  for (bool transpose_lhs : {false, true}) {
    for (auto [m, k, n] : {std::tuple{32, 33, 29}, std::tuple{17, 1, 1}, std::tuple{5, 47, 13}}) {
      SCOPED_TRACE(absl::StrCat(m, "x", k, "x", n, transpose_lhs ? " lhs^T" : ""));
      auto [a, a_region] = fenced(size_t(m) * k);
      auto [b, b_region] = fenced(size_t(k) * n);
      auto [c, c_region] = fenced(size_t(m) * n);
      ASSERT_TRUE(a != nullptr && b != nullptr && c != nullptr);
      for (int64_t i = 0; i < m * k; ++i) a[i] = 0.5f;
      for (int64_t i = 0; i < k * n; ++i) b[i] = 2.0f;
      ASSERT_TRUE(SkinnySgemm(transpose_lhs, m, n, k, a, transpose_lhs ? m : k, b, n, c, n).ok());
      for (int64_t i = 0; i < m * n; ++i) ASSERT_EQ(c[i], float(k)) << "at " << i;
      for (auto [region, bytes] : {a_region, b_region, c_region}) munmap(region, bytes);
    }
  }
}

TEST(SkinnySgemm, RejectsWhatItDoesNotRun) {
  float x = 0;
  for (auto [m, n, k, lda, ldb, ldc] :
       {std::array<int64_t, 6>{0, 1, 1, 1, 1, 1}, std::array<int64_t, 6>{33, 1, 1, 1, 1, 1},
        std::array<int64_t, 6>{1, 0, 1, 1, 1, 1}, std::array<int64_t, 6>{1, 1, 0, 1, 1, 1},
        std::array<int64_t, 6>{2, 3, 4, 3, 3, 3}, std::array<int64_t, 6>{2, 3, 4, 4, 2, 3},
        std::array<int64_t, 6>{2, 3, 4, 4, 3, 2}}) {
    const absl::Status status = SkinnySgemm(false, m, n, k, &x, lda, &x, ldb, &x, ldc);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  }
  const absl::Status status = SkinnySgemm(false, 1, 1, 1, &x, 1, &x, 1, &x, 1);
  EXPECT_EQ(status.code(),
            SkinnySgemmAvailable() ? absl::StatusCode::kOk : absl::StatusCode::kUnimplemented)
      << status;
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::hostlib
