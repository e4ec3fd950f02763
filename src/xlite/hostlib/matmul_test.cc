// hostlib::Matmul against a naive product computed here (in double, or in
// wrapping 64-bit integers), for every backend and the type combinations XLA's
// dots use.
#include "xlite/hostlib/matmul.h"

#include <complex>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "xlite/hostlib/element_access.h"
#include "xlite/hostlib/kernel_test_util.h"
#include "xlite/hostlib/onednn.h"
#include "xlite/hostlib/skinny_sgemm.h"
#include "xlite/hostlib/threads.h"

namespace xlite::hostlib {
namespace {
namespace XLITE_UNITY_ID {

using kernel_test::RandomBuffer;
using kernel_test::UnitRoundoff;
using kernel_test::Value;
using E = ElementType;

struct Case {
  E lhs, rhs, out;
};

std::string Name(const Case& c) {
  return absl::StrCat(ElementTypeName(c.lhs), "x", ElementTypeName(c.rhs), "->",
                      ElementTypeName(c.out));
}

// Runs one matmul and compares it with the naive product. Integer results
// must match exactly (wrapping in the result's width); floating-point results
// within the roundings of the computation and the result type.
void CheckMatmul(const Case& c, const MatmulShape& s, MatmulBackend backend, uint32_t seed,
                 MatmulBackend* used = nullptr, const HostParallelism& parallelism = {}) {
  SCOPED_TRACE(absl::StrCat(Name(c), " [", s.batch, ",", s.m, ",", s.k, ",", s.n, "]",
                            s.transpose_lhs ? " lhs^T" : "", s.transpose_rhs ? " rhs^T" : ""));
  // Where element (batch, i, k) of lhs and (batch, k, j) of rhs are stored.
  auto lhs_at = [&](int64_t batch, int64_t i, int64_t k) {
    return s.transpose_lhs ? (batch * s.k + k) * s.m + i : (batch * s.m + i) * s.k + k;
  };
  auto rhs_at = [&](int64_t batch, int64_t k, int64_t j) {
    return s.transpose_rhs ? (batch * s.n + j) * s.k + k : (batch * s.k + k) * s.n + j;
  };
  const std::vector<uint8_t> a = RandomBuffer(c.lhs, s.batch * s.m * s.k, seed);
  const std::vector<uint8_t> b = RandomBuffer(c.rhs, s.batch * s.k * s.n, seed + 1);
  std::vector<uint8_t> out(s.batch * s.m * s.n * ElementByteWidth(c.out), 0xAB);
  MatmulBackend ran;
  absl::Status status =
      Matmul(s, c.lhs, a.data(), c.rhs, b.data(), c.out, out.data(), backend, &ran, parallelism);
  ASSERT_TRUE(status.ok()) << status;
  if (used != nullptr) *used = ran;
  const bool integer = IsIntegerType(c.lhs) && IsIntegerType(c.rhs) && IsIntegerType(c.out);
  // The computation's own rounding: f32 unless something is wide.
  const bool wide = !integer && (c.lhs == E::kF64 || c.rhs == E::kF64 || c.out == E::kF64 ||
                                 c.lhs == E::kC128 || c.rhs == E::kC128 || c.out == E::kC128);
  const double eps = wide ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
  for (int64_t batch = 0; batch < s.batch; ++batch) {
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < s.n; ++j) {
        const int64_t at = (batch * s.m + i) * s.n + j;
        if (integer) {
          uint64_t sum = 0;
          for (int64_t k = 0; k < s.k; ++k) {
            sum += LoadElement<uint64_t>(c.lhs, a.data(), lhs_at(batch, i, k)) *
                   LoadElement<uint64_t>(c.rhs, b.data(), rhs_at(batch, k, j));
          }
          std::vector<uint8_t> expected(ElementByteWidth(c.out));
          StoreElement<uint64_t>(c.out, expected.data(), 0, sum);
          ASSERT_EQ(LoadElement<uint64_t>(c.out, out.data(), at),
                    LoadElement<uint64_t>(c.out, expected.data(), 0))
              << "at " << at;
          continue;
        }
        std::complex<double> sum = 0;
        double magnitude = 0;
        for (int64_t k = 0; k < s.k; ++k) {
          const std::complex<double> p =
              Value(c.lhs, a, lhs_at(batch, i, k)) * Value(c.rhs, b, rhs_at(batch, k, j));
          sum += p;
          magnitude += std::abs(p);
        }
        const std::complex<double> got = Value(c.out, out, at);
        if (IsIntegerType(c.out)) {  // a float sum converted to an integer
          ASSERT_LE(std::abs(got.real() - std::trunc(sum.real())), 1 + 2 * s.k * eps * magnitude);
          continue;
        }
        const std::complex<double> want = IsComplexType(c.out) ? sum : sum.real();
        const double tolerance =
            UnitRoundoff(c.out) * std::abs(want) + 2 * s.k * eps * magnitude + 1e-30;
        ASSERT_LE(std::abs(got - want), tolerance)
            << "at " << at << ": got " << got << " want " << want;
      }
    }
  }
}

const MatmulShape kShapes[] = {
    {1, 1, 1, 1}, {1, 7, 5, 3}, {3, 4, 17, 6}, {2, 1, 33, 1}, {1, 16, 64, 32}};

const Case kFloatCases[] = {
    {E::kF32, E::kF32, E::kF32},           {E::kF64, E::kF64, E::kF64},
    {E::kC64, E::kC64, E::kC64},           {E::kC128, E::kC128, E::kC128},
    {E::kBF16, E::kBF16, E::kBF16},        {E::kBF16, E::kBF16, E::kF32},
    {E::kF16, E::kF16, E::kF16},           {E::kF16, E::kF16, E::kF32},
    {E::kF8E4M3FN, E::kF8E4M3FN, E::kF32}, {E::kF8E5M2, E::kF8E5M2, E::kBF16},
    {E::kF8E4M3FN, E::kF8E5M2, E::kF16},   {E::kF8E4M3B11FNUZ, E::kF8E4M3FNUZ, E::kF32},
    {E::kF8E3M4, E::kF8E4M3, E::kF32},     {E::kF4E2M1FN, E::kF4E2M1FN, E::kF32},
    {E::kF32, E::kF32, E::kF64},           {E::kS8, E::kBF16, E::kF32},
    {E::kF32, E::kC64, E::kC64},           {E::kF32, E::kF32, E::kS32},
    {E::kF64, E::kF64, E::kF32},
};

const Case kIntegerCases[] = {
    {E::kS8, E::kS8, E::kS32},   {E::kU8, E::kS8, E::kS32},      {E::kS32, E::kS32, E::kS32},
    {E::kS64, E::kS64, E::kS64}, {E::kU8, E::kU8, E::kU8},       {E::kS8, E::kS8, E::kS8},
    {E::kS16, E::kU16, E::kS32}, {E::kPred, E::kPred, E::kPred}, {E::kS4, E::kS4, E::kS32},
    {E::kU32, E::kU32, E::kU64},
};

TEST(Matmul, AutoMatchesNaiveProduct) {
  uint32_t seed = 1;
  for (const Case& c : kFloatCases) {
    for (const MatmulShape& s : kShapes) CheckMatmul(c, s, MatmulBackend::kAuto, seed += 2);
  }
  for (const Case& c : kIntegerCases) {
    for (const MatmulShape& s : kShapes) CheckMatmul(c, s, MatmulBackend::kAuto, seed += 2);
  }
}

TEST(Matmul, OwnLoopsMatchNaiveProduct) {
  uint32_t seed = 100;
  for (const Case& c : kFloatCases) {
    for (const MatmulShape& s : kShapes) CheckMatmul(c, s, MatmulBackend::kLoops, seed += 2);
  }
  for (const Case& c : kIntegerCases) {
    for (const MatmulShape& s : kShapes) CheckMatmul(c, s, MatmulBackend::kLoops, seed += 2);
  }
}

TEST(Matmul, BlasMatchesNaiveProduct) {
  for (E t : {E::kF32, E::kF64, E::kC64, E::kC128}) {
    for (const MatmulShape& s : kShapes) CheckMatmul({t, t, t}, s, MatmulBackend::kBlas, 7);
  }
}

TEST(Matmul, OneDnnRunsF32AndMatchesNaiveProduct) {
  for (const MatmulShape& s : kShapes) {
    CheckMatmul({E::kF32, E::kF32, E::kF32}, s, MatmulBackend::kOneDnn, 11);
  }
  // bf16 and f16 where this CPU has kernels; an Unimplemented refusal is the
  // contract otherwise.
  for (const Case& c : {Case{E::kBF16, E::kBF16, E::kF32}, Case{E::kBF16, E::kBF16, E::kBF16},
                        Case{E::kF16, E::kF16, E::kF32}, Case{E::kS8, E::kS8, E::kS32},
                        Case{E::kU8, E::kS8, E::kS32}}) {
    std::vector<uint8_t> a(64 * ElementByteWidth(c.lhs)), b(64 * ElementByteWidth(c.rhs)),
        out(64 * ElementByteWidth(c.out));
    absl::Status probe = Matmul({1, 8, 8, 8}, c.lhs, a.data(), c.rhs, b.data(), c.out, out.data(),
                                MatmulBackend::kOneDnn);
    if (!probe.ok()) {
      EXPECT_TRUE(absl::IsUnimplemented(probe)) << Name(c) << ": " << probe;
      continue;
    }
    for (const MatmulShape& s : kShapes) CheckMatmul(c, s, MatmulBackend::kOneDnn, 13);
  }
}

// Operands stored transposed, through every backend.
TEST(Matmul, TransposedOperandsOnEveryBackend) {
  uint32_t seed = 500;
  for (bool transpose_lhs : {false, true}) {
    for (bool transpose_rhs : {false, true}) {
      for (MatmulShape s : kShapes) {
        s.transpose_lhs = transpose_lhs;
        s.transpose_rhs = transpose_rhs;
        for (MatmulBackend backend :
             {MatmulBackend::kOneDnn, MatmulBackend::kBlas, MatmulBackend::kLoops}) {
          CheckMatmul({E::kF32, E::kF32, E::kF32}, s, backend, seed += 2);
        }
        CheckMatmul({E::kF64, E::kF64, E::kF64}, s, MatmulBackend::kBlas, seed += 2);
        CheckMatmul({E::kC64, E::kC64, E::kC64}, s, MatmulBackend::kBlas, seed += 2);
        CheckMatmul({E::kS32, E::kS32, E::kS32}, s, MatmulBackend::kLoops, seed += 2);
        CheckMatmul({E::kBF16, E::kBF16, E::kF32}, s, MatmulBackend::kAuto, seed += 2);
      }
    }
  }
}

// Forces the row blocks' kernel for a scope (a failed assertion inside
// leaves kAuto for the tests after it).
struct ForcedRowBlockKernel {
  explicit ForcedRowBlockKernel(RowBlockKernel kernel) { SetRowBlockKernelForTesting(kernel); }
  ~ForcedRowBlockKernel() { SetRowBlockKernelForTesting(RowBlockKernel::kAuto); }
};

// `threads` caller's threads: each part on a thread of its own, the parts
// counted in `*parts_run` when given.
HostParallelism ThreadPerPart(int threads, int64_t* parts_run = nullptr) {
  HostParallelism parallelism;
  parallelism.threads = threads;
  parallelism.run = [parts_run](int64_t parts, absl::FunctionRef<void(int64_t)> fn) {
    std::vector<std::thread> workers;
    for (int64_t p = 0; p < parts; ++p) workers.emplace_back([&fn, p] { fn(p); });
    for (std::thread& t : workers) t.join();
    if (parts_run != nullptr) *parts_run += parts;
  };
  return parallelism;
}

// Matmuls from kParallelMatmulFlops up to kTeamSgemmFlops on the caller's
// threads: one single-threaded oneDNN call per block of batches, rows or
// columns.
TEST(Matmul, SplitsAcrossTheCallersThreads) {
  int64_t calls = 0;
  const HostParallelism parallelism = ThreadPerPart(3, &calls);
  uint32_t seed = 900;
  {
    // dnnl_sgemm for row blocks and transposed lhs blocks (tcmalloc's choice;
    // both kernels are forced in turn below).
    const ForcedRowBlockKernel sgemm_rows(RowBlockKernel::kSgemm);
    for (MatmulShape s : {MatmulShape{1, 200, 100, 300}, MatmulShape{7, 80, 100, 120},
                          MatmulShape{1, 40, 400, 301}, MatmulShape{1, 301, 100, 200}}) {
      for (bool transpose_rhs : {false, true}) {
        for (bool transpose_lhs : {false, true}) {
          s.transpose_lhs = transpose_lhs;
          s.transpose_rhs = transpose_rhs;
          CheckMatmul({E::kF32, E::kF32, E::kF32}, s, MatmulBackend::kAuto, seed += 2, nullptr,
                      parallelism);
        }
      }
    }
    // Every product splits in 3: batches; columns of a wide f32 result (n >=
    // 4m) whatever is transposed; rows when the lhs is not transposed, and of a
    // transposed one (f32) the larger of rows (the last shape) and columns.
    EXPECT_EQ(calls, 4 * 3 * 4);
  }
  // The row blocks' two kernels, each forced: dnnl_sgemm (under tcmalloc)
  // and the primitive (otherwise); a transposed lhs splits on the first and
  // runs unsplit (on a team) with the second.
  calls = 0;
  for (RowBlockKernel kernel : {RowBlockKernel::kSgemm, RowBlockKernel::kPrimitive}) {
    const ForcedRowBlockKernel forced(kernel);
    for (bool transpose_lhs : {false, true}) {
      for (bool transpose_rhs : {false, true}) {
        MatmulShape s{1, 200, 100, 300};
        s.transpose_lhs = transpose_lhs;
        s.transpose_rhs = transpose_rhs;
        CheckMatmul({E::kF32, E::kF32, E::kF32}, s, MatmulBackend::kAuto, seed += 2, nullptr,
                    parallelism);
      }
    }
  }
  EXPECT_EQ(calls, 2 * 2 * 3 + 2 * 3);
}

// 64 sampled elements of the f32 product `out` of `a` and `b` (batch 1,
// either stored transposed) against double-precision sums.
void ExpectSampledF32Product(const MatmulShape& s, const std::vector<uint8_t>& a,
                             const std::vector<uint8_t>& b, const std::vector<uint8_t>& out) {
  const double eps = std::ldexp(1.0, -24);
  for (int64_t sample = 0; sample < 64; ++sample) {
    const int64_t i = (sample * 797) % s.m, j = (sample * 1259 + 7) % s.n;
    double sum = 0, magnitude = 0;
    for (int64_t k = 0; k < s.k; ++k) {
      const int64_t at_a = s.transpose_lhs ? k * s.m + i : i * s.k + k;
      const int64_t at_b = s.transpose_rhs ? j * s.k + k : k * s.n + j;
      const double p = Value(E::kF32, a, at_a).real() * Value(E::kF32, b, at_b).real();
      sum += p;
      magnitude += std::abs(p);
    }
    const double got = Value(E::kF32, out, i * s.n + j).real();
    ASSERT_LE(std::abs(got - sum), eps * std::abs(sum) + 2 * s.k * eps * magnitude)
        << "at [" << i << "," << j << "]";
  }
}

// F32 products on one host thread -- wide, small, or neither (a product of
// kOneThreadSgemmFlops: dnnl_sgemm under tcmalloc, else the primitive, each
// forced here) -- give the same results whatever is transposed.
TEST(Matmul, F32OnOneThread) {
  SetHostThreads(1);
  uint32_t seed = 950;
  for (RowBlockKernel kernel : {RowBlockKernel::kSgemm, RowBlockKernel::kPrimitive}) {
    const ForcedRowBlockKernel forced(kernel);
    for (bool transpose_rhs : {false, true}) {
      for (bool transpose_lhs : {false, true}) {
        MatmulShape s{1, 512, 1024, 512};
        ASSERT_EQ(MatmulFlops(s), kOneThreadSgemmFlops);
        s.transpose_lhs = transpose_lhs;
        s.transpose_rhs = transpose_rhs;
        const std::vector<uint8_t> a = RandomBuffer(E::kF32, s.m * s.k, seed += 2);
        const std::vector<uint8_t> b = RandomBuffer(E::kF32, s.k * s.n, seed += 2);
        std::vector<uint8_t> out(s.m * s.n * sizeof(float), 0xAB);
        MatmulBackend used;
        const int64_t sgemm_calls = onednn::SgemmBlockCalls();
        ASSERT_TRUE(Matmul(s, E::kF32, a.data(), E::kF32, b.data(), E::kF32, out.data(),
                           MatmulBackend::kAuto, &used)
                        .ok());
        EXPECT_EQ(used, MatmulBackend::kOneDnn);
        EXPECT_EQ(onednn::SgemmBlockCalls() - sgemm_calls,
                  kernel == RowBlockKernel::kSgemm ? 1 : 0);
        ExpectSampledF32Product(s, a, b, out);
      }
    }
  }
  for (MatmulShape s : {MatmulShape{1, 40, 400, 301}, MatmulShape{1, 130, 70, 90}}) {
    for (bool transpose_rhs : {false, true}) {
      for (bool transpose_lhs : {false, true}) {
        s.transpose_lhs = transpose_lhs;
        s.transpose_rhs = transpose_rhs;
        MatmulBackend used;
        CheckMatmul({E::kF32, E::kF32, E::kF32}, s, MatmulBackend::kAuto, seed += 2, &used);
        EXPECT_EQ(used, MatmulBackend::kOneDnn);
      }
    }
  }
  SetHostThreads(0);
}

// A batch of 28-32 rows times weights past L2, or of 12-32 times 64 MiB of
// weights, runs on the skinny kernel, on one thread and in column blocks
// across the caller's threads; fewer rows, smaller weights or transposed ones
// stay on oneDNN.
TEST(Matmul, FewRowsTimesLargeWeightsReadTheWeightsInPlace) {
  if (!SkinnySgemmAvailable()) GTEST_SKIP() << "this CPU has no AVX-512F: the kernel never runs";
  SetHostThreads(1);
  const HostParallelism two = ThreadPerPart(2);
  struct Expectation {
    MatmulShape shape;
    int calls_on_one, calls_on_two;
  };
  const Expectation expectations[] = {
      {{1, 32, 784, 1024}, 1, 2},       {{1, 28, 1024, 768}, 1, 2},
      {{1, 27, 1024, 1024}, 0, 0},      {{1, 32, 512, 1024}, 0, 0},
      {{1, 32, 784, 1024, true}, 1, 2}, {{1, 32, 784, 1024, false, true}, 0, 0},
      {{1, 12, 4096, 4096}, 1, 2},      {{1, 11, 4096, 4096}, 0, 0},
      {{1, 12, 2048, 2048}, 0, 0}};
  uint32_t seed = 1300;
  for (const Expectation& e : expectations) {
    const MatmulShape& s = e.shape;
    const std::vector<uint8_t> a = RandomBuffer(E::kF32, s.m * s.k, seed += 2);
    const std::vector<uint8_t> b = RandomBuffer(E::kF32, s.k * s.n, seed += 2);
    std::vector<uint8_t> one_thread;
    for (bool split : {false, true}) {
      SCOPED_TRACE(absl::StrCat(s.m, "x", s.k, "x", s.n, s.transpose_lhs ? " lhs^T" : "",
                                s.transpose_rhs ? " rhs^T" : "", split ? " 2t" : " 1t"));
      std::vector<uint8_t> out(s.m * s.n * sizeof(float), 0xAB);
      const int64_t calls = SkinnySgemmCalls();
      MatmulBackend used;
      ASSERT_TRUE(Matmul(s, E::kF32, a.data(), E::kF32, b.data(), E::kF32, out.data(),
                         MatmulBackend::kAuto, &used, split ? two : HostParallelism{})
                      .ok());
      EXPECT_EQ(SkinnySgemmCalls() - calls, split ? e.calls_on_two : e.calls_on_one);
      EXPECT_EQ(used, e.calls_on_one > 0 ? MatmulBackend::kSkinny : MatmulBackend::kOneDnn);
      ExpectSampledF32Product(s, a, b, out);
      // Each column is the same chain of multiply-adds whichever thread
      // makes it: the split result is the one-thread result, bit for bit.
      if (split && used == MatmulBackend::kSkinny) EXPECT_EQ(out, one_thread);
      one_thread = std::move(out);
    }
  }
  SetHostThreads(0);
}

// A forced kOneDnn never takes the skinny kernel; a forced kSkinny takes any
// f32 product of up to 32 rows (where the CPU has the kernel) and refuses the
// rest on any CPU.
TEST(Matmul, ForcedBackendsKeepToTheirKernels) {
  const MatmulShape s{1, 32, 784, 1024};
  const std::vector<uint8_t> a = RandomBuffer(E::kF32, s.m * s.k, 1400);
  const std::vector<uint8_t> b = RandomBuffer(E::kF32, s.k * s.n, 1401);
  std::vector<uint8_t> out(s.m * s.n * sizeof(float));
  const int64_t calls = SkinnySgemmCalls();
  ASSERT_TRUE(
      Matmul(s, E::kF32, a.data(), E::kF32, b.data(), E::kF32, out.data(), MatmulBackend::kOneDnn)
          .ok());
  EXPECT_EQ(SkinnySgemmCalls(), calls);
  ExpectSampledF32Product(s, a, b, out);
  if (SkinnySgemmAvailable()) {
    MatmulBackend used;
    CheckMatmul({E::kF32, E::kF32, E::kF32}, {1, 5, 7, 3}, MatmulBackend::kSkinny, 1402, &used);
    EXPECT_EQ(used, MatmulBackend::kSkinny);
  }
  for (const auto& [c, shape] :
       {std::pair{Case{E::kF32, E::kF32, E::kF32}, MatmulShape{1, 33, 7, 3}},
        std::pair{Case{E::kF32, E::kF32, E::kF32}, MatmulShape{2, 5, 7, 3}},
        std::pair{Case{E::kF32, E::kF32, E::kF32}, MatmulShape{1, 5, 7, 3, false, true}},
        std::pair{Case{E::kBF16, E::kBF16, E::kF32}, MatmulShape{1, 5, 7, 3}}}) {
    std::vector<uint8_t> buffer(4096);
    const absl::Status status = Matmul(shape, c.lhs, buffer.data(), c.rhs, buffer.data(), c.out,
                                       buffer.data(), MatmulBackend::kSkinny);
    EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented) << status;
  }
}

// A product of kTeamSgemmFlops or more is one dnnl_sgemm on an OpenMP team,
// not split across the caller's threads; its elements (sampled: the product
// has 2^33 multiply-adds) match double-precision sums.
TEST(Matmul, LargeF32IsOneTeamSgemm) {
  const MatmulShape s{1, 2048, 2048, 2048};
  EXPECT_TRUE(IsTeamSgemm(s, E::kF32, E::kF32, E::kF32, 2));
  EXPECT_FALSE(IsTeamSgemm(s, E::kF32, E::kF32, E::kF32, 1));
  EXPECT_FALSE(IsTeamSgemm(s, E::kBF16, E::kBF16, E::kF32, 2));
  EXPECT_FALSE(IsTeamSgemm({2, 2048, 2048, 2048}, E::kF32, E::kF32, E::kF32, 2));
  EXPECT_FALSE(IsTeamSgemm({1, 2048, 2047, 2048}, E::kF32, E::kF32, E::kF32, 2));
  HostParallelism parallelism;
  parallelism.threads = 2;
  int64_t calls = 0;
  parallelism.run = [&calls](int64_t parts, absl::FunctionRef<void(int64_t)> fn) {
    for (int64_t p = 0; p < parts; ++p) fn(p);
    calls += parts;
  };
  const std::vector<uint8_t> a = RandomBuffer(E::kF32, s.m * s.k, 31);
  const std::vector<uint8_t> b = RandomBuffer(E::kF32, s.k * s.n, 32);
  std::vector<uint8_t> out(s.m * s.n * sizeof(float), 0xAB);
  MatmulBackend used;
  ASSERT_TRUE(Matmul(s, E::kF32, a.data(), E::kF32, b.data(), E::kF32, out.data(),
                     MatmulBackend::kAuto, &used, parallelism)
                  .ok());
  EXPECT_EQ(used, MatmulBackend::kOneDnn);
  EXPECT_EQ(calls, 0);
  ExpectSampledF32Product(s, a, b, out);
}

TEST(Matmul, AutoPicksTheLibraries) {
  MatmulBackend used;
  CheckMatmul({E::kF32, E::kF32, E::kF32}, {2, 8, 8, 8}, MatmulBackend::kAuto, 3, &used);
  EXPECT_EQ(used, MatmulBackend::kOneDnn);
  CheckMatmul({E::kF64, E::kF64, E::kF64}, {2, 8, 8, 8}, MatmulBackend::kAuto, 3, &used);
  EXPECT_EQ(used, MatmulBackend::kBlas);
  CheckMatmul({E::kC64, E::kC64, E::kC64}, {2, 8, 8, 8}, MatmulBackend::kAuto, 3, &used);
  EXPECT_EQ(used, MatmulBackend::kBlas);
  CheckMatmul({E::kS32, E::kS32, E::kS32}, {2, 8, 8, 8}, MatmulBackend::kAuto, 3, &used);
  EXPECT_EQ(used, MatmulBackend::kLoops);
  CheckMatmul({E::kF8E4M3FN, E::kF8E4M3FN, E::kF32}, {2, 8, 8, 8}, MatmulBackend::kAuto, 3, &used);
  EXPECT_EQ(used, MatmulBackend::kLoops);
}

TEST(Matmul, IntegerSumsWrapInTheResultType) {
  // 2^30 * 4 wraps to 0 in s32; 200 * 2 wraps to 144 in u8.
  const int32_t a[4] = {1 << 30, 1 << 30, 1 << 30, 1 << 30};
  const int32_t b[4] = {1, 1, 1, 1};
  int32_t out = -1;
  ASSERT_TRUE(Matmul({1, 1, 4, 1}, E::kS32, a, E::kS32, b, E::kS32, &out).ok());
  EXPECT_EQ(out, 0);
  const uint8_t c[2] = {200, 200};
  const uint8_t d[2] = {1, 1};
  uint8_t small = 0;
  ASSERT_TRUE(Matmul({1, 1, 2, 1}, E::kU8, c, E::kU8, d, E::kU8, &small).ok());
  EXPECT_EQ(small, 144);
}

TEST(Matmul, FloatToIntegerResultSaturatesAndNanIsZero) {
  const float a[2] = {3e9f, NAN};
  const float b[2] = {1, 1};
  int32_t out[2] = {0, 7};
  ASSERT_TRUE(Matmul({2, 1, 1, 1}, E::kF32, a, E::kF32, b, E::kS32, out).ok());
  EXPECT_EQ(out[0], INT32_MAX);
  EXPECT_EQ(out[1], 0);
}

TEST(Matmul, EmptyContractionGivesZeros) {
  float out[6] = {1, 2, 3, 4, 5, 6};
  ASSERT_TRUE(Matmul({1, 2, 0, 3}, E::kF32, nullptr, E::kF32, nullptr, E::kF32, out).ok());
  for (float v : out) EXPECT_EQ(v, 0);
  double wide[2] = {1, 1};
  ASSERT_TRUE(Matmul({2, 1, 0, 1}, E::kF64, nullptr, E::kF64, nullptr, E::kF64, wide).ok());
  EXPECT_EQ(wide[0], 0);
  EXPECT_EQ(wide[1], 0);
}

TEST(Matmul, Errors) {
  float x = 0;
  absl::Status negative = Matmul({1, -1, 2, 2}, E::kF32, &x, E::kF32, &x, E::kF32, &x);
  EXPECT_TRUE(absl::IsInvalidArgument(negative)) << negative;
  absl::Status blas =
      Matmul({1, 1, 1, 1}, E::kBF16, &x, E::kBF16, &x, E::kBF16, &x, MatmulBackend::kBlas);
  EXPECT_TRUE(absl::IsUnimplemented(blas)) << blas;
  absl::Status onednn =
      Matmul({1, 1, 1, 1}, E::kF64, &x, E::kF64, &x, E::kF64, &x, MatmulBackend::kOneDnn);
  EXPECT_TRUE(absl::IsUnimplemented(onednn)) << onednn;
  absl::Status huge = Matmul({1 << 30, 1 << 30, 1 << 30, 1}, E::kF32, &x, E::kF32, &x, E::kF32, &x);
  EXPECT_TRUE(absl::IsInvalidArgument(huge)) << huge;
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::hostlib
