// Micro-benchmark of the HLO text parser and printer on the largest module of
// the XLA corpus.
//
//   build/bin/parse_print_bench [--benchmark_* flags]
//
// The module is the largest *.hlo under ../shared/corpus/xla (relative to the
// current directory). XLITE_CORPUS overrides that: a corpus folder (its xla/
// subfolder is used when present, so XLITE_CORPUS=../shared/corpus works) or
// one .hlo file. Without a corpus the benchmark says so and exits 0.
//
// Benchmarks (single thread):
//   BM_Parse       ParseHloModule on the file text (module destruction
//                  included); bytes = file size.
//   BM_PrintLong   PrintModule(Long()) of the parsed module; bytes = size of
//                  the printed text.
//   BM_ParsePrint  parse then print(Long()); bytes = file size.
// Google Benchmark shows bytes_per_second in binary units (MiB/s).
//
// At the end one line in the peers' format (shared/bench/peers/README.md) goes
// to stdout:
//   parse_print_largest<TAB>xlite@1t<TAB><median_ms><TAB><MB/s> MB/s
// median_ms is the median wall time of one parse+print (module and text
// destruction included, as in BM_ParsePrint) over all timed iterations of
// BM_ParsePrint (at least one per repetition, 10 repetitions; the untimed parse
// and print in main() are the warm-up); MB/s is file bytes / median time, with
// MB = 10^6 bytes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/string_view.h"
#include "bench/micro/bench_corpus.h"
#include "benchmark/benchmark.h"
#include "xlite/text/parser.h"
#include "xlite/text/printer.h"

namespace {

using namespace xlite::bench;

struct Input {
  std::string path;
  std::string text;
  std::unique_ptr<xlite::HloModule> module;  // parsed once, for BM_PrintLong
  size_t printed_bytes = 0;
};

Input* g_input = nullptr;
std::vector<double> g_parse_print_ms;  // one sample per BM_ParsePrint iteration

void BM_Parse(benchmark::State& state) {
  const std::string& text = g_input->text;
  for (auto _ : state) {
    auto module = xlite::ParseHloModule(text, g_input->path);
    if (!module.ok()) {
      state.SkipWithError("parse failed");
      break;
    }
    benchmark::DoNotOptimize(module->get());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
}

void BM_PrintLong(benchmark::State& state) {
  const xlite::PrintOptions options = xlite::PrintOptions::Long();
  for (auto _ : state) {
    std::string printed = xlite::PrintModule(*g_input->module, options);
    benchmark::DoNotOptimize(printed.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(g_input->printed_bytes));
}

void BM_ParsePrint(benchmark::State& state) {
  const std::string& text = g_input->text;
  const xlite::PrintOptions options = xlite::PrintOptions::Long();
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    {  // Destroying the module and the text is part of the timed work.
      auto module = xlite::ParseHloModule(text, g_input->path);
      if (!module.ok()) {
        state.SkipWithError("parse failed");
        break;
      }
      std::string printed = xlite::PrintModule(**module, options);
      benchmark::DoNotOptimize(printed.data());
    }
    auto end = std::chrono::steady_clock::now();
    g_parse_print_ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  const std::string location = CorpusLocation();
  if (location.empty()) {
    std::fprintf(
        stderr,
        "parse_print_bench: SKIPPED: no HLO corpus (looked for ../shared/corpus/xla "
        "relative to the current directory; set XLITE_CORPUS=<corpus dir or .hlo file>)\n");
    std::printf("# parse_print_bench skipped: no corpus\n");
    return 0;
  }
  Input input;
  input.path = LargestHloFile(location);
  if (input.path.empty()) {
    std::fprintf(stderr, "parse_print_bench: SKIPPED: no *.hlo file under %s\n", location.c_str());
    std::printf("# parse_print_bench skipped: no .hlo file\n");
    return 0;
  }
  if (!ReadFile(input.path, &input.text)) {
    std::fprintf(stderr, "parse_print_bench: cannot read %s\n", input.path.c_str());
    return 1;
  }
  {
    auto parsed = xlite::ParseHloModule(input.text, input.path);
    if (!parsed.ok()) {
      std::fprintf(stderr, "parse_print_bench: the largest corpus file does not parse: %s\n",
                   std::string(parsed.status().message()).c_str());
      return 1;
    }
    input.module = std::move(*parsed);
  }
  // Also the warm-up for the timed runs.
  input.printed_bytes = xlite::PrintModule(*input.module, xlite::PrintOptions::Long()).size();
  g_input = &input;
  std::fprintf(stderr, "parse_print_bench: %s (%zu bytes; long form prints %zu bytes)\n",
               input.path.c_str(), input.text.size(), input.printed_bytes);

  // Ten repetitions each; the console shows mean/median/stddev/cv.
  for (auto* b : {benchmark::RegisterBenchmark("BM_Parse", BM_Parse),
                  benchmark::RegisterBenchmark("BM_PrintLong", BM_PrintLong),
                  benchmark::RegisterBenchmark("BM_ParsePrint", BM_ParsePrint)}) {
    b->Unit(benchmark::kMillisecond)->UseRealTime()->Repetitions(10)->ReportAggregatesOnly(true);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  // Peer-format summary (see shared/bench/peers/README.md). The parse and
  // print above, before any benchmark ran, were the warm-up.
  if (!g_parse_print_ms.empty()) {
    const std::vector<double>& timed = g_parse_print_ms;
    const double median_ms = Median(timed);
    const double mb_per_s = static_cast<double>(input.text.size()) / 1e6 / (median_ms / 1e3);
    std::fprintf(stderr, "parse_print_bench: parse+print median over %zu iterations\n",
                 timed.size());
    std::printf("parse_print_largest\txlite@1t\t%.3f\t%.1f MB/s\n", median_ms, mb_per_s);
    std::fflush(stdout);
  }
  return 0;
}
