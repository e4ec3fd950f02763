// The fixed costs of one Executable::Execute (issue 17 item 3):
//
//   build/bin/executor_bench [--batch=100] [--samples=200] [--benchmark_* flags]
//
// Whole calls (one client thread, the calling thread runs everything):
//   execute_empty_parameter   Execute of `ROOT p = f32[] parameter(0)`
//   execute_empty_constant    Execute of `ROOT c = f32[] constant(1)`
//   literals_empty_parameter  ExecuteLiterals of the first
//   execute_tiny_elementwise  Execute of f32[16] x*x+x (one kernel)
//   execute_eight_outputs     Execute of 8 f32[16] results (8 output buffers)
//   literals_tiny_elementwise ExecuteLiterals of it
//   dispatch_kernel_thunk     the slope between chains of 1 and 1025 scalar
//                             kernels, per executor (ns per thunk)
//   dispatch_while            the same for while loops of 1 and 4097
//                             iterations of scalar kernels
// The pieces Execute is made of, timed alone on the tiny program:
//   fixed_argument_checks     PreparedArguments::Prepare + release (shape,
//                             layout, donation checks and holds), 1 argument
//   fixed_arena_malloc        aligned_alloc + free of bytes_per_run (what
//                             every run did before the pool)
//   fixed_arena_pool          ArenaPool acquire + release (when built)
//   fixed_output_allocation   Buffer::AllocateUninitialized(f32[16]) + free
//   fixed_output_memory       the memory alone: aligned operator new + delete
//                             of 64 bytes (what one block for all outputs
//                             would save per output)
//   fixed_concurrent_executor constructing a ConcurrentThunkExecutor
//   fixed_async_state         AsyncExecuteState(1 slot) + WaitAll
//   fixed_denormals           ScopedFlushDenormals on and off
//   fixed_parallel_for_2x20us ThreadPool(2).ParallelFor of two 20 us busy
//                             tasks: the time above 20 us is the fork and
//                             the join (a matmul split in two pays it)
//
// Each sample times --batch calls back to back; medians over --samples
// samples. Output: one line per row in the peers' format
// (shared/bench/peers/README.md), the per-call time in the unit column:
//   <row><TAB>xlite-cpu[-<executor>]@1t<TAB><median_ms per call><TAB><value> ns/call
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/micro/bench_corpus.h"
#include "benchmark/benchmark.h"
#include "xlite/codegen/denormals.h"
#include "xlite/compiler.h"
#include "xlite/cpu/async_thunks.h"
#include "xlite/cpu/side_streams.h"
#include "xlite/runtime/arena_pool.h"
#include "xlite/runtime/buffer.h"
#include "xlite/runtime/client.h"
#include "xlite/runtime/concurrent_executor.h"
#include "xlite/runtime/donation.h"
#include "xlite/runtime/executable.h"
#include "xlite/runtime/task_runner.h"
#include "xlite/runtime/thread_pool.h"
#include "xlite/runtime/thunk_executor.h"
#include "xlite/text/parser.h"

namespace {

using xlite::Literal;
using xlite::bench::Median;
using xlite::runtime::Buffer;
using xlite::runtime::Executable;

int g_batch = 100;
int g_samples = 200;
// Samples (ms per call) per row, keyed "row\timpl".
std::map<std::string, std::vector<double>> g_ms;

std::unique_ptr<xlite::runtime::Client> g_client;
std::unique_ptr<xlite::runtime::PoolTaskRunner> g_runner;

std::unique_ptr<Executable> CompileOrDie(const std::string& text, bool all_passes_off = false) {
  absl::StatusOr<std::unique_ptr<xlite::HloModule>> module = xlite::ParseHloModule(text);
  if (!module.ok()) {
    std::fprintf(stderr, "executor_bench: %s\n", std::string(module.status().message()).c_str());
    std::exit(1);
  }
  xlite::CompileOptions options;
  options.debug.disable_all_hlo_passes = all_passes_off;
  // Dispatch is what this measures: a command buffer or a whole-loop kernel
  // has none per thunk (cpu_bench's cb_* and lk_while measure those), and a
  // profile would count it as one thunk.
  options.debug.cpu_enable_command_buffer = false;
  options.debug.cpu_enable_loop_kernels = false;
  absl::StatusOr<std::unique_ptr<Executable>> exe = xlite::Compile(std::move(*module), options);
  if (!exe.ok()) {
    std::fprintf(stderr, "executor_bench: %s\n", std::string(exe.status().message()).c_str());
    std::exit(1);
  }
  return std::move(*exe);
}

constexpr char kEmptyParameter[] = R"(HloModule empty_parameter
ENTRY e {
  ROOT p = f32[] parameter(0)
})";

constexpr char kEmptyConstant[] = R"(HloModule empty_constant
ENTRY e {
  p = f32[] parameter(0)
  ROOT c = f32[] constant(1)
})";

constexpr char kTiny[] = R"(HloModule tiny_elementwise
ENTRY e {
  x = f32[16] parameter(0)
  y = f32[16] multiply(x, x)
  ROOT z = f32[16] add(y, x)
})";

constexpr char kEightOutputs[] = R"(HloModule eight_outputs
ENTRY e {
  x = f32[16] parameter(0)
  a = f32[16] add(x, x)
  b = f32[16] multiply(x, x)
  c = f32[16] subtract(x, a)
  d = f32[16] add(b, x)
  e = f32[16] multiply(a, b)
  f = f32[16] add(c, d)
  g = f32[16] negate(x)
  h = f32[16] abs(x)
  ROOT t = (f32[16], f32[16], f32[16], f32[16], f32[16], f32[16], f32[16], f32[16])
      tuple(a, b, c, d, e, f, g, h)
})";

Literal Filled(const xlite::Shape& shape, double v) {
  Literal l(shape);
  for (int64_t i = 0; i < l.element_count(); ++i) l.SetDouble(i, v);
  return l;
}

// Times `call` --batch times per sample; records ms per call under `key`.
template <typename F>
void Sample(benchmark::State& state, const std::string& key, F&& call) {
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < g_batch; ++i) call();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    g_ms[key].push_back(ms / g_batch);
    state.SetIterationTime(ms / 1e3 / g_batch);
  }
}

struct Program {
  std::unique_ptr<Executable> exe;
  std::unique_ptr<Buffer> argument;
  Literal literal;
  int64_t executed = 0;  // thunks one run executes (nested ones per execution)
};
std::map<std::string, Program> g_programs;

Program& Prepare(const std::string& name, const std::string& text, const xlite::Shape& shape,
                 bool all_passes_off = false) {
  Program p;
  p.exe = CompileOrDie(text, all_passes_off);
  p.literal = Filled(shape, 1.0);
  p.argument = *Buffer::FromLiteral(p.literal);
  xlite::runtime::ThunkProfile profile;
  xlite::runtime::ExecuteOptions options;
  options.profile = &profile;
  if (!p.exe->ExecuteLiterals(absl::MakeConstSpan(&p.literal, 1), options).ok()) std::exit(1);
  for (const auto& e : profile.Sorted()) p.executed += e.calls;
  return g_programs[name] = std::move(p);
}

xlite::runtime::ExecuteOptions Options(bool concurrent) {
  xlite::runtime::ExecuteOptions o;
  o.runner = g_runner.get();
  o.executor = concurrent ? xlite::runtime::ExecutorKind::kConcurrent
                          : xlite::runtime::ExecutorKind::kSequential;
  return o;
}

const char* Impl(bool concurrent) {
  return concurrent ? "xlite-cpu-concurrent@1t" : "xlite-cpu-sequential@1t";
}

void BM_Execute(benchmark::State& state, const std::string& name, bool concurrent) {
  Program& p = g_programs.at(name);
  const xlite::runtime::ExecuteOptions options = Options(concurrent);
  Buffer* args[] = {p.argument.get()};
  std::vector<std::vector<std::unique_ptr<Buffer>>> keep;
  keep.reserve(g_batch);
  const std::string row = name.rfind("dispatch_", 0) == 0 ? name : "execute_" + name;
  for (auto _ : state) {
    keep.clear();  // outputs are freed outside the clock
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < g_batch; ++i) {
      absl::StatusOr<std::vector<std::unique_ptr<Buffer>>> out = p.exe->Execute(args, options);
      if (!out.ok()) return state.SkipWithError(std::string(out.status().message()).c_str());
      keep.push_back(std::move(*out));
    }
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    g_ms[absl::StrCat(row, "\t", Impl(concurrent))].push_back(ms / g_batch);
    state.SetIterationTime(ms / 1e3 / g_batch);
  }
}

void BM_ExecuteLiterals(benchmark::State& state, const std::string& name, bool concurrent) {
  Program& p = g_programs.at(name);
  const xlite::runtime::ExecuteOptions options = Options(concurrent);
  const Literal* args = &p.literal;
  Sample(state, absl::StrCat("literals_", name, "\t", Impl(concurrent)), [&] {
    absl::StatusOr<Literal> out = p.exe->ExecuteLiterals(absl::MakeConstSpan(args, 1), options);
    benchmark::DoNotOptimize(out);
  });
}

void BM_ArgumentChecks(benchmark::State& state) {
  Program& p = g_programs.at("tiny_elementwise");
  const xlite::runtime::DonationRules* rules = *p.exe->donation_rules();
  Buffer* args[] = {p.argument.get()};
  const absl::flat_hash_set<int64_t> none;
  Sample(state, "fixed_argument_checks\txlite-cpu@1t", [&] {
    auto prepared = xlite::runtime::PreparedArguments::Prepare(*rules, args, none);
    benchmark::DoNotOptimize(prepared);
  });
}

void BM_ArenaMalloc(benchmark::State& state) {
  const size_t bytes =
      static_cast<size_t>((g_programs.at("tiny_elementwise").exe->bytes_per_run() + 63) / 64 * 64);
  Sample(state, "fixed_arena_malloc\txlite-cpu@1t", [&] {
    void* p = std::aligned_alloc(64, bytes);
    benchmark::DoNotOptimize(p);
    std::free(p);
  });
}

void BM_ArenaPool(benchmark::State& state) {
  xlite::runtime::ArenaPool pool(g_programs.at("tiny_elementwise").exe->bytes_per_run());
  Sample(state, "fixed_arena_pool\txlite-cpu@1t", [&] {
    absl::StatusOr<xlite::runtime::ArenaPool::Lease> lease = pool.Acquire();
    benchmark::DoNotOptimize(lease);
  });
}

void BM_OutputAllocation(benchmark::State& state) {
  const xlite::Shape shape = xlite::Shape::Array(xlite::PrimitiveType::F32, {16});
  Sample(state, "fixed_output_allocation\txlite-cpu@1t", [&] {
    auto b = Buffer::AllocateUninitialized(shape);
    benchmark::DoNotOptimize(b);
  });
}

void BM_OutputMemory(benchmark::State& state) {
  Sample(state, "fixed_output_memory\txlite-cpu@1t", [&] {
    void* p = ::operator new(64, std::align_val_t(64), std::nothrow);
    benchmark::DoNotOptimize(p);
    ::operator delete(p, std::align_val_t(64));
  });
}

void BM_ConcurrentExecutorSetup(benchmark::State& state) {
  const Executable& exe = *g_programs.at("tiny_elementwise").exe;
  xlite::runtime::ExecutionGraphs graphs(exe.thunks());
  Sample(state, "fixed_concurrent_executor\txlite-cpu@1t", [&] {
    xlite::runtime::ConcurrentThunkExecutor executor(graphs, xlite::cpu::SideStreams::Default(), 1);
    benchmark::DoNotOptimize(&executor);
  });
}

void BM_AsyncState(benchmark::State& state) {
  Sample(state, "fixed_async_state\txlite-cpu@1t", [&] {
    xlite::cpu::AsyncExecuteState async(xlite::cpu::SideStreams::Default(), 1);
    absl::Status s = async.WaitAll();
    benchmark::DoNotOptimize(s);
  });
}

void BM_Denormals(benchmark::State& state) {
  Sample(state, "fixed_denormals\txlite-cpu@1t", [&] {
    xlite::codegen::ScopedFlushDenormals flush(true);
    benchmark::ClobberMemory();
  });
}

void SpinFor(std::chrono::microseconds time) {
  const auto end = std::chrono::steady_clock::now() + time;
  while (std::chrono::steady_clock::now() < end) {
  }
}

void BM_ParallelForJoin(benchmark::State& state) {
  xlite::runtime::ThreadPool pool(2);
  Sample(state, "fixed_parallel_for_2x20us\txlite-cpu@2t",
         [&] { pool.ParallelFor(2, [](int64_t) { SpinFor(std::chrono::microseconds(20)); }); });
}

void Register(const std::string& name, void (*fn)(benchmark::State&)) {
  benchmark::RegisterBenchmark(name.c_str(), fn)->UseManualTime()->Iterations(g_samples);
}

void PrintPeerLines() {
  std::printf("# executor_bench: batch %d, samples %d, medians\n", g_batch, g_samples);
  for (bool concurrent : {false, true}) {
    for (const auto& [family, small, large] :
         {std::tuple<std::string, int, int>{"kernel", 1, 1025}, {"while", 1, 4097}}) {
      auto s = g_ms.find(absl::StrCat("dispatch_", family, "_", small, "\t", Impl(concurrent)));
      auto l = g_ms.find(absl::StrCat("dispatch_", family, "_", large, "\t", Impl(concurrent)));
      if (s == g_ms.end() || l == g_ms.end()) continue;
      const double thunks = static_cast<double>(
          g_programs.at(absl::StrCat("dispatch_", family, "_", large)).executed -
          g_programs.at(absl::StrCat("dispatch_", family, "_", small)).executed);
      std::printf("dispatch_%s_thunk\t%s\t%.6f\t%.1f ns/thunk\n", family.c_str(), Impl(concurrent),
                  Median(l->second), (Median(l->second) - Median(s->second)) * 1e6 / thunks);
    }
  }
  for (const auto& [key, ms] : g_ms) {
    if (key.rfind("dispatch_", 0) == 0) continue;
    std::printf("%s\t%.6f\t%.1f ns/call\n", key.c_str(), Median(ms), Median(ms) * 1e6);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--batch=", 8) == 0) {
      g_batch = std::max(1, std::atoi(argv[i] + 8));
    } else if (std::strncmp(argv[i], "--samples=", 10) == 0) {
      g_samples = std::max(1, std::atoi(argv[i] + 10));
    } else {
      args.push_back(argv[i]);
    }
  }
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;

  g_client = *xlite::runtime::Client::Create({.cpu_threads = 1});
  g_runner = std::make_unique<xlite::runtime::PoolTaskRunner>(g_client->thread_pool());
  const xlite::Shape scalar = xlite::Shape::Scalar(xlite::PrimitiveType::F32);
  Prepare("empty_parameter", kEmptyParameter, scalar);
  Prepare("empty_constant", kEmptyConstant, scalar);
  Prepare("tiny_elementwise", kTiny, xlite::Shape::Array(xlite::PrimitiveType::F32, {16}));
  Prepare("eight_outputs", kEightOutputs, xlite::Shape::Array(xlite::PrimitiveType::F32, {16}));
  for (int n : {1, 1025}) {
    Prepare(absl::StrCat("dispatch_kernel_", n), xlite::bench::ScalarAddChainModule(n, "chain"),
            scalar, /*all_passes_off=*/true);
  }
  for (int n : {1, 4097})
    Prepare(absl::StrCat("dispatch_while_", n), xlite::bench::WhileLoopModule(n), scalar);

  // Small programs and the pieces first, the dispatch chains last: after
  // the large ones the allocator's state slows every later small call.
  for (bool dispatch : {false, true}) {
    for (bool concurrent : {false, true}) {
      for (const auto& [name, p] : g_programs) {
        if ((name.rfind("dispatch_", 0) == 0) != dispatch) continue;
        const bool large =
            name.find("_1025") != std::string::npos || name.find("_4097") != std::string::npos;
        benchmark::RegisterBenchmark(
            absl::StrCat("BM_Execute/", name, "/", Impl(concurrent)).c_str(), BM_Execute, name,
            concurrent)
            ->UseManualTime()
            ->Iterations(large ? std::max(5, g_samples / 10) : g_samples);
        if (!dispatch && name != "empty_constant" && name != "eight_outputs") {
          benchmark::RegisterBenchmark(
              absl::StrCat("BM_ExecuteLiterals/", name, "/", Impl(concurrent)).c_str(),
              BM_ExecuteLiterals, name, concurrent)
              ->UseManualTime()
              ->Iterations(g_samples);
        }
      }
    }
    if (dispatch) continue;
    Register("BM_Fixed/argument_checks", BM_ArgumentChecks);
    Register("BM_Fixed/arena_malloc", BM_ArenaMalloc);
    Register("BM_Fixed/arena_pool", BM_ArenaPool);
    Register("BM_Fixed/output_allocation", BM_OutputAllocation);
    Register("BM_Fixed/output_memory", BM_OutputMemory);
    Register("BM_Fixed/concurrent_executor", BM_ConcurrentExecutorSetup);
    Register("BM_Fixed/async_state", BM_AsyncState);
    Register("BM_Fixed/denormals", BM_Denormals);
    Register("BM_Fixed/parallel_for_join", BM_ParallelForJoin);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  PrintPeerLines();
  return 0;
}
