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
// At the end, one line per row in the peers' format
// (shared/bench/peers/README.md), medians over every timed iteration:
//   ew_chain_16M<TAB>xlite-jit-O2@<T>t<TAB><median_ms><TAB><GB/s> GB/s
//   ew_chain_16M<TAB>cpp-loop-std-tanh@<T>t<TAB><median_ms><TAB><GB/s> GB/s
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

// Modules whose entry root is the kernel the compile benchmark builds.
const std::vector<std::pair<std::string, std::string>>& CompileCases() {
  static const auto* cases = new std::vector<std::pair<std::string, std::string>>{
      {"ew_chain_fusion", EwChainModule(4096)},
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
  benchmark::RegisterBenchmark("BM_EwChain/jit", BM_EwChainJit)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(10);
  benchmark::RegisterBenchmark("BM_EwChain/cpp", BM_EwChainCpp)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(10);
  benchmark::Initialize(&count, args.data());
  benchmark::RunSpecifiedBenchmarks();
  const double ew_bytes = 2.0 * kEwElements * sizeof(float);
  for (const auto& [key, ms] : g_ms) {
    const double median = Median(ms);
    if (key.rfind("compile_", 0) == 0) {
      std::printf("%s\txlite-jit-O2@1t\t%.3f\t%.1f kernels/s\n", key.c_str(), median, 1e3 / median);
    } else {
      std::printf("%s\t%.3f\t%.2f GB/s\n", key.c_str(), median, ew_bytes / median / 1e6);
    }
  }
  return 0;
}
