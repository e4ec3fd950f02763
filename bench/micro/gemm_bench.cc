// Benchmark of hostlib's matmul and convolution (src/xlite/hostlib):
//
//   build/bin/gemm_bench [--threads=T] [--benchmark_* flags]
//
// BM_Matmul/<workload>: hostlib::Matmul (oneDNN for f32, or skinny_sgemm) on the peers' GEMM
//   shapes (shared/bench/peers/README.md): sgemm_512/1024/2048 (C = A·B,
//   row-major f32), and the matrix products inside the peers' mlp_b32 and
//   encoder_b8s128 workloads, named gemm_<M>x<K>x<N> (batched ones
//   bgemm_<B>x<M>x<K>x<N>).
// BM_Sgemm/<workload>: oneDNN's dnnl_sgemm called directly, on the shapes
//   where hostlib's Matmul runs its own kernel instead at --threads=1
//   (mlp_b32's wide layers and the few-row LLM shapes: hostlib/skinny_sgemm.h;
//   with more threads and no pool Matmul stays on oneDNN), so that one run
//   compares the two.
// BM_Conv/<workload>: hostlib::Convolution on jax/cnn_b8's convolutions
//   (b01f_01io->b01f, f32).
// T threads: hostlib::SetHostThreads(T) (oneDNN's OpenMP team).
//
// At the end, one line per row in the peers' format, medians over every
// timed iteration, 2·M·K·N (2·N·OH·OW·O·KH·KW·C/G) FLOP per call:
//   sgemm_1024<TAB>xlite-hostlib@<T>t<TAB><median_ms><TAB><GFLOP/s> GFLOP/s
// and, as '#' lines, XLA:CPU's figures from shared/bench/xla_cpu_reference.md
// (measured on the device host, not here: compare fractions of each
// machine's peak, as that file explains).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "xlite/hostlib/convolution.h"
#include "xlite/hostlib/matmul.h"
#include "xlite/hostlib/onednn.h"
#include "xlite/hostlib/threads.h"

namespace {

using xlite::hostlib::ElementType;

int g_threads = 1;
struct Row {
  std::vector<double> ms;
  double flop = 0;
};
std::map<std::string, Row> g_rows;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// Times `run` (already run once and checked) for the row `key` of `flop`
// FLOP per call.
void TimeRow(benchmark::State& state, const std::string& key, double flop,
             const std::function<absl::Status()>& run) {
  Row& row = g_rows[key];
  row.flop = flop;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    (void)run();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    row.ms.push_back(ms);
    state.SetIterationTime(ms / 1e3);
  }
}

void BM_Matmul(benchmark::State& state, std::string name, xlite::hostlib::MatmulShape s) {
  const std::vector<float> a = Random(s.batch * s.m * s.k, 1), b = Random(s.batch * s.k * s.n, 2);
  std::vector<float> c(s.batch * s.m * s.n);
  auto run = [&] {
    return xlite::hostlib::Matmul(s, ElementType::kF32, a.data(), ElementType::kF32, b.data(),
                                  ElementType::kF32, c.data());
  };
  if (absl::Status st = run(); !st.ok()) return state.SkipWithError(st.ToString().c_str());
  // Spot check one element against a double-precision dot product.
  double want = 0;
  for (int64_t k = 0; k < s.k; ++k) want += double(a[k]) * b[k * s.n];
  if (std::fabs(c[0] - want) > 1e-4 * (1 + std::sqrt(double(s.k)))) {
    return state.SkipWithError("matmul result differs from the reference");
  }
  TimeRow(state, absl::StrCat(name, "\txlite-hostlib@", g_threads, "t"),
          2.0 * s.batch * s.m * s.k * s.n, run);
}

void BM_Sgemm(benchmark::State& state, std::string name, xlite::hostlib::MatmulShape s) {
  const std::vector<float> a = Random(s.m * s.k, 1), b = Random(s.k * s.n, 2);
  std::vector<float> c(s.m * s.n);
  auto run = [&] {
    return xlite::hostlib::onednn::SgemmBlock(false, false, s.m, s.n, s.k, a.data(), s.k, b.data(),
                                              s.n, c.data(), s.n, g_threads);
  };
  if (absl::Status st = run(); !st.ok()) return state.SkipWithError(st.ToString().c_str());
  TimeRow(state, absl::StrCat(name, "\tonednn-dnnl_sgemm@", g_threads, "t"), 2.0 * s.m * s.k * s.n,
          run);
}

xlite::hostlib::ConvolutionShape Conv(int64_t n, int64_t c, int64_t o, int64_t hw, int64_t k,
                                      int64_t stride, int64_t pad_lo, int64_t pad_hi) {
  xlite::hostlib::ConvolutionShape s;
  s.batch = n;
  s.input_features = c;
  s.output_features = o;
  const int64_t out = (hw + pad_lo + pad_hi - k) / stride + 1;
  s.input_spatial = {hw, hw};
  s.kernel_spatial = {k, k};
  s.output_spatial = {out, out};
  s.strides = {stride, stride};
  s.padding_low = {pad_lo, pad_lo};
  s.padding_high = {pad_hi, pad_hi};
  s.lhs_dilation = {1, 1};
  s.rhs_dilation = {1, 1};
  s.window_reversal = {false, false};
  return s;
}

void BM_Conv(benchmark::State& state, std::string name, xlite::hostlib::ConvolutionShape s) {
  const int64_t in = s.batch * s.input_spatial[0] * s.input_spatial[1] * s.input_features;
  const int64_t kernel =
      s.kernel_spatial[0] * s.kernel_spatial[1] * s.input_features * s.output_features;
  const int64_t out = s.batch * s.output_spatial[0] * s.output_spatial[1] * s.output_features;
  const std::vector<float> a = Random(in, 3), w = Random(kernel, 4);
  std::vector<float> c(out);
  auto run = [&] {
    return xlite::hostlib::Convolution(s, ElementType::kF32, a.data(), ElementType::kF32, w.data(),
                                       ElementType::kF32, c.data());
  };
  if (absl::Status st = run(); !st.ok()) return state.SkipWithError(st.ToString().c_str());
  TimeRow(state, absl::StrCat(name, "\txlite-hostlib@", g_threads, "t"),
          2.0 * out * s.kernel_spatial[0] * s.kernel_spatial[1] * s.input_features, run);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0) {
      g_threads = std::max(1, std::atoi(argv[i] + 10));
    } else {
      args.push_back(argv[i]);
    }
  }
  xlite::hostlib::SetHostThreads(g_threads);
  const std::vector<std::pair<std::string, xlite::hostlib::MatmulShape>> gemms = {
      {"sgemm_512", {1, 512, 512, 512}},
      {"sgemm_1024", {1, 1024, 1024, 1024}},
      {"sgemm_2048", {1, 2048, 2048, 2048}},
      // Beside the peers' sizes, where oneDNN's matmul primitive and its
      // sgemm differ most (hostlib::kTeamSgemmFlops).
      {"sgemm_1536", {1, 1536, 1536, 1536}},
      {"sgemm_3072", {1, 3072, 3072, 3072}},
      {"gemm_1024x3072x3072", {1, 1024, 3072, 3072}},
      // mlp_b32's three Linear layers.
      {"gemm_32x784x1024", {1, 32, 784, 1024}},
      {"gemm_32x1024x1024", {1, 32, 1024, 1024}},
      {"gemm_32x1024x10", {1, 32, 1024, 10}},
      // A few rows times an LLM's weights: gemma2_2b's FFN (31 tokens), and 12
      // rows times 4096^2 (hostlib/skinny_sgemm.h rule for large weights).
      {"gemm_31x2304x9216", {1, 31, 2304, 9216}},
      {"gemm_12x4096x4096", {1, 12, 4096, 4096}},
      // encoder_b8s128: QKV, out-proj, FFN, and the 64 heads' QKᵀ and PV.
      {"gemm_1024x512x1536", {1, 1024, 512, 1536}},
      {"gemm_1024x512x512", {1, 1024, 512, 512}},
      {"gemm_1024x512x2048", {1, 1024, 512, 2048}},
      {"gemm_1024x2048x512", {1, 1024, 2048, 512}},
      {"bgemm_64x128x64x128", {64, 128, 64, 128}},
      {"bgemm_64x128x128x64", {64, 128, 128, 64}},
  };
  for (const auto& [name, shape] : gemms) {
    benchmark::RegisterBenchmark(("BM_Matmul/" + name).c_str(), BM_Matmul, name, shape)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(shape.m * shape.k * shape.n * shape.batch >= (int64_t{1} << 32) ? 10 : 30);
  }
  for (const auto& [name, shape] : gemms) {
    if (name != "gemm_32x784x1024" && name != "gemm_32x1024x1024" && name != "gemm_31x2304x9216" &&
        name != "gemm_12x4096x4096") {
      continue;
    }
    benchmark::RegisterBenchmark(("BM_Sgemm/" + name).c_str(), BM_Sgemm, name, shape)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(30);
  }
  const std::vector<std::pair<std::string, xlite::hostlib::ConvolutionShape>> convs = {
      {"cnn_b8_conv_3x3_3to32", Conv(8, 3, 32, 32, 3, 1, 1, 1)},
      {"cnn_b8_conv_3x3_32to32", Conv(8, 32, 32, 32, 3, 1, 1, 1)},
      {"cnn_b8_conv_3x3s2_32to64", Conv(8, 32, 64, 32, 3, 2, 0, 1)},
      {"cnn_b8_conv_1x1s2_32to64", Conv(8, 32, 64, 32, 1, 2, 0, 0)},
  };
  for (const auto& [name, shape] : convs) {
    benchmark::RegisterBenchmark(("BM_Conv/" + name).c_str(), BM_Conv, name, shape)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(30);
  }
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  benchmark::RunSpecifiedBenchmarks();
  for (const auto& [key, row] : g_rows) {
    const double median = Median(row.ms);
    std::printf("%s\t%.3f\t%.1f GFLOP/s\n", key.c_str(), median, row.flop / median / 1e6);
  }
  std::printf(
      "# XLA:CPU (JAX 0.11.2) on the device host, shared/bench/xla_cpu_reference.md: sgemm "
      "512/1024/2048 @2 cores 200/187/253 GFLOP/s (0.61/0.57/0.77 of its 328 GFLOP/s peak); "
      "sgemm 1024 @1 core 148 GFLOP/s\n");
  return 0;
}
