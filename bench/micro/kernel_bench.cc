// Benchmark of the code generator (src/xlite/codegen):
//
//   build/bin/kernel_bench [--threads=T] [--xla_dump_to=DIR] [--benchmark_* flags]
//
// BM_Compile/<kernel>: Jit::Create + Compile of one kernel (emission, the O2
//   pipeline, machine code), for a few kinds of kernel.
// BM_EwChain/<impl>: the peers' ew_chain_16M, y = tanh(0.7x + 0.1) * x + 1
//   over f32[16777216]: the JIT-compiled kLoop fusion (run as T partitions on
//   T threads) next to a plain C++ loop calling std::tanh (T threads, same
//   split), both with flush-to-zero and denormals-are-zero set, as XLA:CPU
//   runs its kernels.
//
// BM_TransposeAdd/<impl>: out = x.T + y over f32[4096,4096] (a kLoop fusion
//   whose transpose moves x's minor dimension: made in tiles), the JIT'd
//   fusion next to a plain C++ loop over 16 x 16 tiles, same split.
//
// At the end, one line per row in the peers' format
// (shared/bench/peers/README.md), medians over every timed iteration:
//   ew_chain_16M<TAB>xlite-jit-O2@<T>t<TAB><median_ms><TAB><GB/s> GB/s
//   ew_chain_16M<TAB>cpp-loop-std-tanh@<T>t<TAB><median_ms><TAB><GB/s> GB/s
//   transpose_add_4096<TAB>xlite-jit-O2@<T>t<TAB><median_ms><TAB><GB/s> GB/s
//   transpose_add_4096<TAB>cpp-tiled-loop@<T>t<TAB><median_ms><TAB><GB/s> GB/s
//   compile_<kernel><TAB>xlite-jit-O2@1t<TAB><median_ms><TAB><kernels/s> kernels/s
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "xlite/codegen/denormals.h"
#include "xlite/codegen/jit.h"
#include "xlite/text/parser.h"

namespace {

using xlite::codegen::CompiledKernel;
using xlite::codegen::Jit;
using xlite::codegen::KernelSpec;

constexpr int64_t kEwElements = int64_t{1} << 24;
constexpr int64_t kTransposeSide = 4096;
int g_threads = 1;
std::string g_dump_to;  // --xla_dump_to=DIR: the ew_chain kernel's IR
std::map<std::string, std::vector<double>> g_ms;

std::string EwChainModule(int64_t n) {
  return absl::StrCat(R"(
HloModule ew_chain
fused {
  x = f32[)",
                      n, R"(] parameter(0)
  a = f32[] constant(0.7)
  ab = f32[)",
                      n, R"(] broadcast(a), dimensions={}
  b = f32[] constant(0.1)
  bb = f32[)",
                      n, R"(] broadcast(b), dimensions={}
  ax = f32[)",
                      n, R"(] multiply(ab, x)
  axb = f32[)",
                      n, R"(] add(ax, bb)
  t = f32[)",
                      n, R"(] tanh(axb)
  tx = f32[)",
                      n, R"(] multiply(t, x)
  one = f32[] constant(1)
  ones = f32[)",
                      n, R"(] broadcast(one), dimensions={}
  ROOT y = f32[)",
                      n, R"(] add(tx, ones)
}
ENTRY e {
  p = f32[)",
                      n, R"(] parameter(0)
  ROOT f = f32[)",
                      n, R"(] fusion(p), kind=kLoop, calls=fused
}
)");
}

std::string TransposeAddModule(int64_t n) {
  const std::string shape = absl::StrCat("f32[", n, ",", n, "]");
  return absl::StrCat(
      "HloModule transpose_add\nfused {\n  x = ", shape, " parameter(0)\n  y = ", shape,
      " parameter(1)\n  t = ", shape, " transpose(x), dimensions={1,0}\n  ROOT s = ", shape,
      " add(t, y)\n}\nENTRY e {\n  x = ", shape, " parameter(0)\n  y = ", shape,
      " parameter(1)\n  ROOT f = ", shape, " fusion(x, y), kind=kLoop, calls=fused\n}\n");
}

// Modules whose entry root is the kernel the compile benchmark builds.
const std::vector<std::pair<std::string, std::string>>& CompileCases() {
  static const auto* cases = new std::vector<std::pair<std::string, std::string>>{
      {"ew_chain_fusion", EwChainModule(4096)},
      {"transposing_fusion_f32", TransposeAddModule(512)},
      {"add_f32", R"(
HloModule m
ENTRY e {
  a = f32[1024,1024] parameter(0)
  b = f32[1024,1024] parameter(1)
  ROOT r = f32[1024,1024] add(a, b)
})"},
      {"transpose_f32", R"(
HloModule m
ENTRY e {
  a = f32[512,256] parameter(0)
  ROOT r = f32[256,512] transpose(a), dimensions={1,0}
})"},
      {"reduce_rows_f32", R"(
HloModule m
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  a = f32[4096,4096] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4096] reduce(a, z), dimensions={1}, to_apply=add
})"},
      {"gather_f32", R"(
HloModule m
ENTRY e {
  a = f32[1000,64] parameter(0)
  i = s32[32,1] parameter(1)
  ROOT r = f32[32,64] gather(a, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,64}
})"},
      {"scatter_add_f32", R"(
HloModule m
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  a = f32[1000,64] parameter(0)
  i = s32[32,1] parameter(1)
  u = f32[32,64] parameter(2)
  ROOT r = f32[1000,64] scatter(a, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})"},
      {"reduce_window_max_f32", R"(
HloModule m
max { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] maximum(x, y) }
ENTRY e {
  a = f32[8,32,32,16] parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[8,16,16,16] reduce-window(a, z), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=max
})"},
  };
  return *cases;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void BM_Compile(benchmark::State& state, const std::string& name, const std::string& text) {
  auto module = xlite::ParseHloModule(text);
  if (!module.ok()) return state.SkipWithError(std::string(module.status().message()).c_str());
  const xlite::HloInstruction* root = (*module)->entry_computation()->root_instruction();
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    auto jit = Jit::Create();
    if (!jit.ok()) return state.SkipWithError(std::string(jit.status().message()).c_str());
    auto kernels = (*jit)->Compile({KernelSpec{root, name}});
    if (!kernels.ok()) return state.SkipWithError(std::string(kernels.status().message()).c_str());
    g_ms["compile_" + name].push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
}

// Runs `body(part, parts)` on g_threads threads (the calling one included).
template <typename Body>
void RunParallel(Body body) {
  std::vector<std::thread> threads;
  for (int t = 1; t < g_threads; ++t) {
    threads.emplace_back([&, t] {
      xlite::codegen::ScopedFlushDenormals flush;
      body(t, g_threads);
    });
  }
  body(0, g_threads);
  for (std::thread& t : threads) t.join();
}

struct EwData {
  std::vector<float> x, y;
  EwData() : x(kEwElements), y(kEwElements) {
    for (int64_t i = 0; i < kEwElements; ++i) x[i] = static_cast<float>((i % 2001) - 1000) / 500.0f;
  }
};

EwData& Data() {
  static EwData* data = new EwData();
  return *data;
}

void Record(benchmark::State& state, const std::string& key, double ms) {
  g_ms[key].push_back(ms);
  state.SetIterationTime(ms / 1e3);
}

void BM_EwChainJit(benchmark::State& state) {
  xlite::codegen::ScopedFlushDenormals flush;
  auto module = xlite::ParseHloModule(EwChainModule(kEwElements));
  if (!module.ok()) return state.SkipWithError(std::string(module.status().message()).c_str());
  xlite::codegen::JitOptions options;
  options.dump_to = g_dump_to;
  auto jit = Jit::Create(options);
  if (!jit.ok()) return state.SkipWithError(std::string(jit.status().message()).c_str());
  auto kernels = (*jit)->Compile(
      {KernelSpec{(*module)->entry_computation()->root_instruction(), "ew_chain"}}, "ew_chain");
  if (!kernels.ok()) return state.SkipWithError(std::string(kernels.status().message()).c_str());
  const xlite::codegen::KernelFunction fn = (*kernels)[0].function;
  EwData& d = Data();
  void* buffers[] = {d.x.data(), d.y.data()};
  fn(buffers, 0, 1);  // warm-up
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    RunParallel([&](int part, int parts) { fn(buffers, part, parts); });
    Record(state, absl::StrCat("ew_chain_16M\txlite-jit-O2@", g_threads, "t"),
           std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
               .count());
  }
  // Spot check against the formula.
  for (int64_t i : {int64_t{0}, int64_t{12345}, kEwElements - 1}) {
    const float x = d.x[i];
    const float expected = std::tanh(0.7f * x + 0.1f) * x + 1.0f;
    if (std::fabs(d.y[i] - expected) > 1e-5f * (1 + std::fabs(expected))) {
      return state.SkipWithError("the kernel's result differs from the formula");
    }
  }
}

void BM_EwChainCpp(benchmark::State& state) {
  xlite::codegen::ScopedFlushDenormals flush;
  EwData& d = Data();
  auto loop = [&](int part, int parts) {
    const int64_t chunk = (kEwElements + parts - 1) / parts;
    const int64_t begin = part * chunk, end = std::min(kEwElements, begin + chunk);
    const float* x = d.x.data();
    float* y = d.y.data();
    for (int64_t i = begin; i < end; ++i) y[i] = std::tanh(0.7f * x[i] + 0.1f) * x[i] + 1.0f;
  };
  loop(0, 1);  // warm-up
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    RunParallel(loop);
    Record(state, absl::StrCat("ew_chain_16M\tcpp-loop-std-tanh@", g_threads, "t"),
           std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
               .count());
  }
}

struct TransposeData {
  std::vector<float> x, y, out;
  TransposeData()
      : x(kTransposeSide * kTransposeSide),
        y(kTransposeSide * kTransposeSide),
        out(kTransposeSide * kTransposeSide) {
    for (size_t i = 0; i < x.size(); ++i) {
      x[i] = static_cast<float>(i % 1001);
      y[i] = static_cast<float>(i % 997) / 7.0f;
    }
  }
};

TransposeData& Transposed() {
  static TransposeData* data = new TransposeData();
  return *data;
}

void BM_TransposeAddJit(benchmark::State& state) {
  xlite::codegen::ScopedFlushDenormals flush;
  auto module = xlite::ParseHloModule(TransposeAddModule(kTransposeSide));
  if (!module.ok()) return state.SkipWithError(std::string(module.status().message()).c_str());
  auto jit = Jit::Create();
  if (!jit.ok()) return state.SkipWithError(std::string(jit.status().message()).c_str());
  auto kernels = (*jit)->Compile(
      {KernelSpec{(*module)->entry_computation()->root_instruction(), "transpose_add"}});
  if (!kernels.ok()) return state.SkipWithError(std::string(kernels.status().message()).c_str());
  const xlite::codegen::KernelFunction fn = (*kernels)[0].function;
  TransposeData& d = Transposed();
  void* buffers[] = {d.x.data(), d.y.data(), d.out.data()};
  fn(buffers, 0, 1);  // warm-up
  // The timed runs must write every element again.
  std::fill(d.out.begin(), d.out.end(), std::nanf(""));
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    RunParallel([&](int part, int parts) { fn(buffers, part, parts); });
    Record(state, absl::StrCat("transpose_add_4096\txlite-jit-O2@", g_threads, "t"),
           std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
               .count());
  }
  // Off the diagonal (where x.T and x differ), in both halves' partitions.
  for (int64_t i : {int64_t{1}, int64_t{12345}, kTransposeSide * kTransposeSide / 2 + 7,
                    kTransposeSide * kTransposeSide - 2}) {
    const int64_t r = i / kTransposeSide, c = i % kTransposeSide;
    if (d.out[i] != d.x[c * kTransposeSide + r] + d.y[i]) {
      return state.SkipWithError("the kernel's result differs from x.T + y");
    }
  }
}

void BM_TransposeAddCpp(benchmark::State& state) {
  TransposeData& d = Transposed();
  constexpr int64_t n = kTransposeSide, t = 16;
  auto loop = [&](int part, int parts) {
    const int64_t bands = n / t, chunk = (bands + parts - 1) / parts;
    const float* x = d.x.data();
    const float* y = d.y.data();
    float* out = d.out.data();
    for (int64_t band = part * chunk; band < std::min(bands, (part + 1) * chunk); ++band) {
      for (int64_t c0 = 0; c0 < n; c0 += t) {
        for (int64_t r = band * t; r < (band + 1) * t; ++r) {
          for (int64_t c = c0; c < c0 + t; ++c) out[r * n + c] = x[c * n + r] + y[r * n + c];
        }
      }
    }
  };
  loop(0, 1);  // warm-up
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    RunParallel(loop);
    Record(state, absl::StrCat("transpose_add_4096\tcpp-tiled-loop@", g_threads, "t"),
           std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
               .count());
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0) {
      g_threads = std::max(1, std::atoi(argv[i] + 10));
    } else if (std::strncmp(argv[i], "--xla_dump_to=", 14) == 0) {
      g_dump_to = argv[i] + 14;
    } else {
      args.push_back(argv[i]);
    }
  }
  int count = static_cast<int>(args.size());
  for (const auto& [name, text] : CompileCases()) {
    benchmark::RegisterBenchmark(("BM_Compile/" + name).c_str(), BM_Compile, name, text)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(5)
        ->Repetitions(2);
  }
  for (const auto& [name, run] : std::vector<std::pair<const char*, void (*)(benchmark::State&)>>{
           {"BM_EwChain/jit", BM_EwChainJit},
           {"BM_EwChain/cpp", BM_EwChainCpp},
           {"BM_TransposeAdd/jit", BM_TransposeAddJit},
           {"BM_TransposeAdd/cpp", BM_TransposeAddCpp}}) {
    benchmark::RegisterBenchmark(name, run)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(10);
  }
  benchmark::Initialize(&count, args.data());
  benchmark::RunSpecifiedBenchmarks();
  const double ew_bytes = 2.0 * kEwElements * sizeof(float);
  const double transpose_bytes = 3.0 * kTransposeSide * kTransposeSide * sizeof(float);
  for (const auto& [key, ms] : g_ms) {
    const double median = Median(ms);
    if (key.rfind("compile_", 0) == 0) {
      std::printf("%s\txlite-jit-O2@1t\t%.3f\t%.1f kernels/s\n", key.c_str(), median, 1e3 / median);
    } else {
      const double bytes = key.rfind("transpose_add", 0) == 0 ? transpose_bytes : ew_bytes;
      std::printf("%s\t%.3f\t%.2f GB/s\n", key.c_str(), median, bytes / median / 1e6);
    }
  }
  return 0;
}
