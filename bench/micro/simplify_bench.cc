// Benchmark of `--pipeline=simplify` on the largest module of the XLA corpus
// (the file chosen as in parse_print_bench: XLITE_CORPUS or
// ../shared/corpus/xla; without a corpus it says so and exits 0).
//
//   build/bin/simplify_bench [--benchmark_* flags]
//
// BM_SimplifyPipeline: each iteration parses the module (not timed) and runs
// the whole pipeline on it (timed; the verifier off, as in `xlite opt`).
// At the end one line in the peers' format (shared/bench/peers/README.md):
//   simplify_largest<TAB>xlite@1t<TAB><median_ms><TAB><instructions/s> Minstr/s
// with the median over every timed iteration (10 repetitions; one untimed
// run before them is the warm-up) and the module's instruction count before
// the pipeline divided by that median.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench/micro/bench_corpus.h"
#include "benchmark/benchmark.h"
#include "xlite/passes/simplify.h"
#include "xlite/text/parser.h"

namespace {

using namespace xlite::bench;

std::string g_path, g_text;
std::vector<double> g_ms;

void BM_SimplifyPipeline(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    auto module = xlite::ParseHloModule(g_text, g_path);
    auto pipeline = xlite::SimplifyPipeline();
    if (!module.ok() || !pipeline.ok()) {
      state.SkipWithError("parse or pipeline setup failed");
      break;
    }
    state.ResumeTiming();
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<bool> changed = (*pipeline)->Run(**module);
    const auto end = std::chrono::steady_clock::now();
    if (!changed.ok()) {
      state.SkipWithError("pipeline failed");
      break;
    }
    g_ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    state.PauseTiming();
    module->reset();  // destruction is not the pipeline's work
    state.ResumeTiming();
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const std::string location = CorpusLocation();
  g_path = location.empty() ? "" : LargestHloFile(location);
  if (g_path.empty()) {
    std::fprintf(stderr, "simplify_bench: SKIPPED: no HLO corpus (set XLITE_CORPUS)\n");
    std::printf("# simplify_bench skipped: no corpus\n");
    return 0;
  }
  if (!ReadFile(g_path, &g_text)) {
    std::fprintf(stderr, "simplify_bench: cannot read %s\n", g_path.c_str());
    return 1;
  }
  int64_t instructions = 0;
  {  // Warm-up, and the size of the module.
    auto module = xlite::ParseHloModule(g_text, g_path);
    auto pipeline = xlite::SimplifyPipeline();
    if (!module.ok() || !pipeline.ok() || !(*pipeline)->Run(**module).ok()) {
      std::fprintf(stderr, "simplify_bench: %s does not parse or simplify\n", g_path.c_str());
      return 1;
    }
    auto fresh = xlite::ParseHloModule(g_text, g_path);
    for (const auto& c : (*fresh)->computations()) instructions += c->instruction_count();
  }
  std::fprintf(stderr, "simplify_bench: %s (%lld instructions)\n", g_path.c_str(),
               static_cast<long long>(instructions));
  benchmark::RegisterBenchmark("BM_SimplifyPipeline", BM_SimplifyPipeline)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime()
      ->Repetitions(10)
      ->ReportAggregatesOnly(true);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (!g_ms.empty()) {
    const double median_ms = Median(g_ms);
    std::fprintf(stderr, "simplify_bench: median over %zu iterations\n", g_ms.size());
    std::printf("simplify_largest\txlite@1t\t%.3f\t%.3f Minstr/s\n", median_ms,
                static_cast<double>(instructions) / 1e6 / (median_ms / 1e3));
  }
  return 0;
}
