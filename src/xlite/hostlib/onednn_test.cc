// oneDNN's matmul and convolution run from several threads at once (several
// devices, or the concurrent executor, share hostlib's primitive cache): every
// concurrent result must equal, bit for bit, the same call run alone.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "xlite/hostlib/convolution.h"
#include "xlite/hostlib/kernel_test_util.h"
#include "xlite/hostlib/matmul.h"
#include "xlite/hostlib/threads.h"

namespace xlite::hostlib {
namespace {
namespace XLITE_UNITY_ID {

using kernel_test::RandomBuffer;
using E = ElementType;

constexpr int kThreads = 4;
constexpr int kIterations = 200;

// One thread's call: its own operands and the result it gave when run alone.
struct Call {
  std::function<absl::Status(const void* lhs, const void* rhs, void* out)> run;
  std::vector<uint8_t> lhs, rhs, expected;
};

// Runs every call once alone (the expected results), then all of them from
// their own threads at once, `iterations` times each. Returns the number of
// concurrent runs whose result differs from the expected one in any bit.
int ConcurrentMismatches(std::vector<Call>& calls, int iterations) {
  for (Call& c : calls) {
    std::fill(c.expected.begin(), c.expected.end(), 0xAB);
    absl::Status status = c.run(c.lhs.data(), c.rhs.data(), c.expected.data());
    EXPECT_TRUE(status.ok()) << status;
    if (!status.ok()) return -1;
  }
  std::atomic<int> mismatches{0}, failures{0}, ready{0};
  std::vector<std::thread> threads;
  for (Call& c : calls) {
    threads.emplace_back([&, &c = c] {
      std::vector<uint8_t> out(c.expected.size());
      // Start together, so that the runs overlap from the first one.
      ready.fetch_add(1);
      while (ready.load() < static_cast<int>(calls.size())) std::this_thread::yield();
      for (int i = 0; i < iterations; ++i) {
        std::fill(out.begin(), out.end(), 0xAB);
        if (!c.run(c.lhs.data(), c.rhs.data(), out.data()).ok()) {
          failures.fetch_add(1);
          return;
        }
        if (std::memcmp(out.data(), c.expected.data(), out.size()) != 0) mismatches.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  return mismatches.load();
}

Call MatmulCall(const MatmulShape& s, E in, E out, uint32_t seed) {
  Call c;
  c.run = [s, in, out](const void* lhs, const void* rhs, void* result) {
    return Matmul(s, in, lhs, in, rhs, out, result, MatmulBackend::kOneDnn);
  };
  c.lhs = RandomBuffer(in, s.batch * s.m * s.k, seed);
  c.rhs = RandomBuffer(in, s.batch * s.k * s.n, seed + 1);
  c.expected.resize(s.batch * s.m * s.n * ElementByteWidth(out));
  return c;
}

ConvolutionShape Conv2d(int64_t n, int64_t c, int64_t o, int64_t size, int64_t kernel) {
  ConvolutionShape s;
  s.batch = n;
  s.input_features = c;
  s.output_features = o;
  s.input_spatial = {size, size};
  s.kernel_spatial = {kernel, kernel};
  s.output_spatial = {size - kernel + 1, size - kernel + 1};
  s.strides = {1, 1};
  s.padding_low = s.padding_high = {0, 0};
  s.lhs_dilation = s.rhs_dilation = {1, 1};
  s.window_reversal = {false, false};
  return s;
}

Call ConvolutionCall(const ConvolutionShape& s, E type, uint32_t seed) {
  Call c;
  c.run = [s, type](const void* lhs, const void* rhs, void* result) {
    return Convolution(s, type, lhs, type, rhs, type, result, ConvolutionBackend::kOneDnn);
  };
  const int64_t spatial_in = s.input_spatial[0] * s.input_spatial[1];
  const int64_t spatial_kernel = s.kernel_spatial[0] * s.kernel_spatial[1];
  const int64_t spatial_out = s.output_spatial[0] * s.output_spatial[1];
  c.lhs = RandomBuffer(type, s.batch * spatial_in * s.input_features, seed);
  c.rhs = RandomBuffer(type, spatial_kernel * s.input_features * s.output_features, seed + 1);
  c.expected.resize(s.batch * spatial_out * s.output_features * ElementByteWidth(type));
  return c;
}

// The same cached primitive (one shape) from every thread, each thread with
// its own operands: the case of several devices running one program.
TEST(OneDnnConcurrency, SameMatmulFromSeveralThreadsMatchesItsSerialResult) {
  for (E type : {E::kF32, E::kBF16}) {
    SCOPED_TRACE(ElementTypeName(type));
    std::vector<Call> calls;
    for (int t = 0; t < kThreads; ++t) {
      calls.push_back(MatmulCall({.batch = 1, .m = 24, .k = 64, .n = 1024}, type, E::kF32, 10 * t));
    }
    EXPECT_EQ(ConcurrentMismatches(calls, kIterations), 0)
        << "of " << kThreads * kIterations << " concurrent runs";
  }
}

TEST(OneDnnConcurrency, SameConvolutionFromSeveralThreadsMatchesItsSerialResult) {
  std::vector<Call> calls;
  for (int t = 0; t < kThreads; ++t) {
    calls.push_back(ConvolutionCall(Conv2d(2, 16, 16, 12, 3), E::kF32, 10 * t));
  }
  EXPECT_EQ(ConcurrentMismatches(calls, kIterations), 0)
      << "of " << kThreads * kIterations << " concurrent runs";
}

// Different primitives at once, most of them created on a thread other than
// the one that runs them (the cache hands a primitive to whichever thread
// asks): the concurrent executor's independent dots and convolutions.
TEST(OneDnnConcurrency, DifferentPrimitivesFromSeveralThreadsMatchTheirSerialResults) {
  std::vector<Call> calls;
  calls.push_back(MatmulCall({.batch = 1, .m = 24, .k = 64, .n = 768}, E::kF32, E::kF32, 1));
  calls.push_back(MatmulCall({.batch = 3, .m = 16, .k = 512, .n = 40}, E::kF32, E::kF32, 2));
  calls.push_back(MatmulCall({.batch = 1, .m = 8, .k = 256, .n = 96}, E::kBF16, E::kBF16, 3));
  calls.push_back(ConvolutionCall(Conv2d(2, 8, 24, 10, 3), E::kF32, 4));
  EXPECT_EQ(ConcurrentMismatches(calls, kIterations), 0)
      << "of " << calls.size() * kIterations << " concurrent runs";
}

// A thread budget that changes between calls: a primitive made for one team
// size must not run on another.
TEST(OneDnnConcurrency, ResultsHoldWhenTheThreadBudgetChanges) {
  std::vector<Call> calls;
  for (int t = 0; t < 2; ++t) {
    calls.push_back(MatmulCall({.batch = 1, .m = 64, .k = 512, .n = 256}, E::kF32, E::kF32, t));
  }
  for (int threads : {1, 3, 2}) {
    SCOPED_TRACE(absl::StrCat(threads, " threads"));
    SetHostThreads(threads);
    EXPECT_EQ(ConcurrentMismatches(calls, 20), 0);
  }
  SetHostThreads(0);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::hostlib
