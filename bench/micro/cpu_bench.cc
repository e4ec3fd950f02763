// Benchmark of the CPU backend (compiler.h, runtime/, cpu/; issue 15 item 7):
//
//   build/bin/cpu_bench [--threads=1,2] [--only=SUBSTR[,SUBSTR...]] [--no_corpus]
//                       [--interpreter_cap_s=10] [--compiled_cap_s=10]
//                       [--run_budget_s=2] [--max_argument_mib=1024]
//                       [--compiles=N]
//                       [--benchmark_* flags]
//
// BM_Dispatch/kernels/N/Tt/E: a module of N dependent scalar adds, compiled
//   with every HLO pass off (N kernel thunks), run through
//   Executable::Execute with a client of T threads and executor E
//   (sequential or concurrent). BM_Dispatch/independent/N/Tt/E: N scalar
//   adds that depend on nothing but the parameter (the concurrent
//   executor's graph has no edges, but they are small: it runs them in
//   order); BM_Dispatch/wide/N/Tt/E: the same on f32[32768] (128 KiB, run
//   concurrently). BM_Dispatch/while/N/Tt/E: a while loop
//   of N iterations whose condition and body are scalar kernels. The
//   executor's cost per thunk is the slope between the smallest and the
//   largest N: (t_large - t_small) / (thunks run_large - thunks run_small),
//   thunks counted by a ThunkProfile. These run with command buffers off
//   (--xlite_cpu_enable_command_buffer=false): they measure thunk dispatch.
//   Whole-loop kernels are off for all of these.
// BM_Dispatch/cb_kernels/..., BM_Dispatch/cb_while/...: the same modules
//   with command buffers on (the whole chain, or the whole loop, is one
//   CommandBufferThunk); the slope per replayed command counts one command
//   per thunk the unconverted module runs.
// BM_Dispatch/lk_while/...: the while module with whole-loop kernels on
//   (cpu/loop_kernels.h: the loop is one kernel); the slope counts one per
//   thunk the unconverted loop runs.
// BM_NoopDispatch/{thunks,command_buffer}: dispatch alone (see there).
// BM_Compile/<program>: Compile() of one corpus program (parsing excluded),
//   with the debug flags of XLA_FLAGS (--xlite_pass_timing: a table per
//   compile on stderr).
// BM_Run/<program>/<impl>: one run of it on the same arguments: compiled
//   (xlite-cpu, Execute on runtime::Buffers with the client's T threads;
//   fresh copies of donated arguments are made before each timed run, as
//   XLA's reference did) or on the reference interpreter (xlite::Evaluate,
//   one thread).
//
// Programs: ../shared/corpus/jax/* (the HLO dump, before_optimizations.txt;
// inputs.npz where the program has one, else seeded random arguments) and
// ../shared/corpus/xla/hlo_file/xla__backends__cpu__benchmarks__hlo__*
// (seeded random arguments: MakeFakeArguments(kRandom, seed 0), as `xlite
// run` makes them; constant({...}) filled as `xlite run` fills them).
// XLITE_CORPUS names another corpus root. A program whose arguments exceed
// --max_argument_mib is skipped; one the backend refuses is listed with its
// error; the interpreter is skipped for a program whose one run exceeds
// --interpreter_cap_s (EvalOptions::max_seconds stops it), and a compiled
// program whose one run (the probe, 1 thread) exceeds --compiled_cap_s is
// not run again: that run is its 1-thread figure.
//
// Repetitions: a probe run (one thread; not counted below the cap) picks
// the count so that each benchmark takes about --run_budget_s: compiled
// runs 3 to 1000 after a warm-up (1, without warm-up, when one run exceeds
// the budget), interpreter runs 1 to 10 (its probe run is one of them),
// compiles 1 to 3 (--compiles=N: N).
//
// At the end, one line per measurement in the peers' format
// (shared/bench/peers/README.md), medians over every timed iteration:
//   dispatch_kernel_thunk<TAB>xlite-cpu-<E>@<T>t<TAB><ms per run><TAB><ns> ns/thunk
//   execute_one_kernel<TAB>xlite-cpu@<T>t<TAB><median_ms><TAB><us> us/run
//   <program><TAB>xlite-cpu@<T>t<TAB><median_ms><TAB><runs/s> runs/s
//   <program><TAB>xlite-interpreter@1t<TAB><median_ms><TAB><runs/s> runs/s
//   <program><TAB>xlite-compile@1t<TAB><median_ms><TAB><compiles/s> compiles/s
// and '#' lines: `# program NAME<TAB>key=value...` (thunks, inputs, result
// check against the interpreter), `# refused NAME<TAB>error`,
// `# skipped NAME<TAB>impl<TAB>reason`. bench/cpu_table.py turns them into
// the README's table.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "bench/micro/bench_corpus.h"
#include "bench/micro/bench_run.h"
#include "benchmark/benchmark.h"
#include "xlite/analysis/shape_util.h"
#include "xlite/compiler.h"
#include "xlite/cpu/command_buffer_conversion.h"
#include "xlite/cpu/kernel_thunk.h"
#include "xlite/eval/evaluator.h"
#include "xlite/eval/fake_data.h"
#include "xlite/runtime/buffer.h"
#include "xlite/runtime/client.h"
#include "xlite/runtime/compare_literals.h"
#include "xlite/runtime/executable.h"
#include "xlite/runtime/task_runner.h"
#include "xlite/runtime/thunk_executor.h"
#include "xlite/support/flags.h"
#include "xlite/support/npy.h"
#include "xlite/text/parser.h"

namespace {

namespace fs = std::filesystem;
using xlite::Literal;
using xlite::bench::Arguments;
using xlite::bench::CorpusRoot;
using xlite::bench::FirstLine;
using xlite::bench::MakeContext;
using xlite::bench::Median;
using xlite::bench::MillisecondsSince;
using xlite::bench::RunContext;
using xlite::bench::TimedExecute;
using xlite::runtime::Buffer;
using xlite::runtime::Executable;

struct Flags {
  std::vector<int> threads = {1, 2};
  std::string only;
  bool corpus = true;
  double interpreter_cap_s = 10;
  double compiled_cap_s = 10;
  double run_budget_s = 2;
  int64_t max_argument_mib = 1024;
  int compiles = 0;  // BM_Compile's count; 0: up to 3 within the run budget
};
Flags g_flags;

// Samples per peers-format row, keyed "workload\timpl@Tt".
std::map<std::string, std::vector<double>> g_ms;
std::vector<std::string> g_notes;  // '#' lines, printed at the end

// Thunks one run executes (nested ones once per execution), by a profile.
absl::StatusOr<int64_t> ExecutedThunks(const Executable& exe, Arguments& args) {
  xlite::runtime::ThunkProfile profile;
  xlite::runtime::ExecuteOptions options;
  options.profile = &profile;
  absl::StatusOr<double> ms = TimedExecute(exe, args, options);
  if (!ms.ok()) return ms.status();
  int64_t calls = 0;
  for (const auto& e : profile.Sorted()) calls += e.calls;
  return calls;
}

// --- Dispatch cost ----------------------------------------------------------

// N independent adds of `shape` (f32[]: small thunks, which the concurrent
// executor runs in order; f32[32768]: 128 KiB each, which it runs
// concurrently).
std::string IndependentKernelsModule(int n, const std::string& shape) {
  std::string body =
      absl::StrCat("HloModule dispatch_independent\nENTRY e {\n  p = ", shape, " parameter(0)\n");
  std::string root = "  ROOT t = (";
  std::string operands;
  for (int i = 1; i <= n; ++i) {
    absl::StrAppend(&body, "  a", i, " = ", shape, " add(p, p)\n");
    absl::StrAppend(&root, i > 1 ? ", " : "", shape);
    absl::StrAppend(&operands, i > 1 ? ", " : "", "a", i);
  }
  return absl::StrCat(body, root, ") tuple(", operands, ")\n}\n");
}

struct DispatchCase {
  std::unique_ptr<Executable> exe;
  std::optional<Arguments> args;
  int64_t executed = 0;  // thunks per run
  float expected = 0;    // the result for argument 1.0
};

// family "kernels" or "while"; n kernels or iterations.
std::map<std::pair<std::string, int>, DispatchCase> g_dispatch;

// "cb_kernels", "cb_while": the module of "kernels" / "while" with command
// buffers on; "lk_while": with whole-loop kernels on (the others run with
// both off: they measure thunk dispatch).
std::string BaseFamily(const std::string& family) {
  return family.rfind("cb_", 0) == 0 || family.rfind("lk_", 0) == 0 ? family.substr(3) : family;
}

absl::Status PrepareDispatch(const std::string& family, int n) {
  const std::string base = BaseFamily(family);
  const bool converted = base != family;
  const bool command_buffers = family.rfind("cb_", 0) == 0;
  const std::string text = base == "kernels"
                               ? xlite::bench::ScalarAddChainModule(n, "dispatch_kernels")
                           : base == "independent" ? IndependentKernelsModule(n, "f32[]")
                           : base == "wide"        ? IndependentKernelsModule(n, "f32[32768]")
                                            : xlite::bench::WhileLoopModule(n, "dispatch_while");
  absl::StatusOr<std::unique_ptr<xlite::HloModule>> module = xlite::ParseHloModule(text);
  if (!module.ok()) return module.status();
  xlite::CompileOptions options;
  options.debug.disable_all_hlo_passes = true;  // keep one kernel per add
  options.debug.cpu_enable_command_buffer = command_buffers;
  options.debug.cpu_enable_loop_kernels = family.rfind("lk_", 0) == 0;
  absl::StatusOr<std::unique_ptr<Executable>> exe = xlite::Compile(std::move(*module), options);
  if (!exe.ok()) return exe.status();
  std::vector<Literal> args;
  args.push_back(Literal(family == "wide" ? xlite::Shape::Array(xlite::PrimitiveType::F32, {32768})
                                          : xlite::Shape::Scalar(xlite::PrimitiveType::F32)));
  for (int64_t i = 0; i < args[0].element_count(); ++i) args[0].SetDouble(i, 1.0);
  DispatchCase c;
  absl::StatusOr<Arguments> a = Arguments::Create(**exe, args);
  if (!a.ok()) return a.status();
  c.args.emplace(std::move(*a));
  absl::StatusOr<int64_t> executed = ExecutedThunks(**exe, *c.args);
  if (!executed.ok()) return executed.status();
  c.executed = *executed;
  if (converted) {
    // A profile sees one command-buffer thunk (or loop kernel); it replays
    // one command per thunk the unconverted module runs (prepared first).
    auto twin = g_dispatch.find({base, n});
    if (twin == g_dispatch.end()) return absl::InternalError("prepare the base family first");
    c.executed = twin->second.executed;
  }
  c.expected = base == "kernels"                         ? static_cast<float>(n + 1)
               : base == "independent" || base == "wide" ? 2.0f
                                                         : 1.0f + 0.5f * n;
  c.exe = std::move(*exe);
  g_dispatch[{family, n}] = std::move(c);
  return absl::OkStatus();
}

const char* ExecutorName(bool concurrent) { return concurrent ? "concurrent" : "sequential"; }

void BM_Dispatch(benchmark::State& state, const std::string& family, int n, int threads,
                 bool concurrent) {
  auto it = g_dispatch.find({family, n});
  if (it == g_dispatch.end()) return state.SkipWithError("not prepared (see stderr)");
  DispatchCase& c = it->second;
  absl::StatusOr<RunContext> context = MakeContext(threads);
  if (!context.ok()) return state.SkipWithError(FirstLine(context.status().message()).c_str());
  xlite::runtime::ExecuteOptions options;
  options.runner = context->runner.get();
  options.executor = concurrent ? xlite::runtime::ExecutorKind::kConcurrent
                                : xlite::runtime::ExecutorKind::kSequential;
  std::vector<std::unique_ptr<Buffer>> out;
  for (auto _ : state) {
    absl::StatusOr<double> ms = TimedExecute(*c.exe, *c.args, options, &out);
    if (!ms.ok()) return state.SkipWithError(FirstLine(ms.status().message()).c_str());
    g_ms[absl::StrCat("dispatch_", family, "_", n, "\txlite-cpu-", ExecutorName(concurrent), "@",
                      threads, "t")]
        .push_back(*ms);
    state.SetIterationTime(*ms / 1e3);
  }
  absl::StatusOr<Literal> result = out.at(0)->ToLiteral();
  if (!result.ok() || result->GetDouble(0) != c.expected) {
    return state.SkipWithError("the result differs from the expected value");
  }
  state.counters["thunks"] = static_cast<double>(c.executed);
}

// --- Dispatch alone: a no-op kernel ------------------------------------------
//
// BM_NoopDispatch/{thunks,command_buffer}: 1024 kernel thunks whose kernel
// (a plain C function) copies one byte, run by the sequential ThunkExecutor
// one virtual call each, or converted into one CommandBufferThunk and
// replayed. No JIT'd code, no Execute around it: what is left is dispatch.

void CopyOneByte(void** buffers, int64_t, int64_t) {
  *static_cast<volatile uint8_t*>(buffers[1]) = *static_cast<volatile uint8_t*>(buffers[0]);
}

constexpr int kNoopKernels = 1024;
std::map<std::string, std::vector<double>> g_noop_ns;  // ns per thunk, per iteration

void BM_NoopDispatch(benchmark::State& state, bool command_buffer) {
  xlite::cpu::ThunkSequence sequence;
  for (int i = 0; i < kNoopKernels; ++i) {
    auto k = std::make_unique<xlite::cpu::KernelThunk>(
        xlite::cpu::ThunkInfo{absl::StrCat("k", i), "add", ""},
        std::vector<xlite::BufferSlice>{{0, i, 1}, {0, i + 1, 1}}, 1, 2);
    xlite::codegen::CompiledKernel compiled;
    compiled.function = CopyOneByte;
    k->SetKernel(compiled);
    sequence.push_back(std::move(k));
  }
  if (command_buffer) {
    absl::StatusOr<int64_t> made = xlite::cpu::ConvertToCommandBuffers(sequence);
    if (!made.ok() || *made != 1) return state.SkipWithError("conversion failed");
  }
  alignas(64) static uint8_t memory[kNoopKernels + 64];
  uint8_t* bases[1] = {memory};
  xlite::cpu::BufferAllocations buffers(bases);
  xlite::runtime::ThunkExecutor executor;
  xlite::cpu::ExecuteParams params;
  params.buffers = &buffers;
  params.executor = &executor;
  std::vector<double>& ns =
      g_noop_ns[command_buffer ? "replay_noop_kernel_command" : "dispatch_noop_kernel_thunk"];
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    absl::Status s = executor.Run(sequence, params);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!s.ok()) return state.SkipWithError(std::string(s.message()).c_str());
    ns.push_back(seconds * 1e9 / kNoopKernels);
    state.SetIterationTime(seconds);
  }
}

// --- Corpus programs ----------------------------------------------------------

struct Program {
  std::string name;  // "jax/mlp_b32", "xla/argsort_axis_1024x512_bf16"
  std::string path;
  std::string inputs;  // where the arguments come from
  std::string text;
  std::vector<Literal> args;
  std::unique_ptr<xlite::HloModule> module;  // for the interpreter
  std::unique_ptr<Executable> exe;
  std::optional<Arguments> buffers;
  double compile_probe_ms = 0;
  double run_probe_ms = 0;
  double interpreter_probe_ms = 0;
  std::optional<Literal> interpreter_result;
};

std::vector<std::unique_ptr<Program>> g_programs;

// (name, path, inputs.npz or "") of every program, in table order.
std::vector<std::tuple<std::string, fs::path, fs::path>> ListPrograms() {
  std::vector<std::tuple<std::string, fs::path, fs::path>> out;
  const fs::path root = CorpusRoot();
  std::string manifest;
  if (xlite::bench::ReadFile((root / "jax" / "manifest.tsv").string(), &manifest)) {
    for (absl::string_view line : absl::StrSplit(manifest, '\n', absl::SkipEmpty())) {
      std::vector<std::string> cols = absl::StrSplit(line, '\t');
      if (cols.empty() || cols[0] == "name") continue;
      const fs::path dir = root / "jax" / cols[0];
      std::error_code ec;
      out.emplace_back("jax/" + cols[0], dir / "before_optimizations.txt",
                       fs::exists(dir / "inputs.npz", ec) ? dir / "inputs.npz" : fs::path());
    }
  } else {
    std::fprintf(stderr, "cpu_bench: no %s: the JAX programs are not benchmarked\n",
                 (root / "jax" / "manifest.tsv").string().c_str());
  }
  const std::string prefix = "xla__backends__cpu__benchmarks__hlo__";
  std::vector<std::tuple<std::string, fs::path, fs::path>> xla;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root / "xla" / "hlo_file", ec)) {
    const std::string file = entry.path().filename().string();
    if (file.rfind(prefix, 0) != 0 || entry.path().extension() != ".hlo") continue;
    xla.emplace_back("xla/" + file.substr(prefix.size(), file.size() - prefix.size() - 4),
                     entry.path(), fs::path());
  }
  if (ec) {
    std::fprintf(stderr, "cpu_bench: cannot list %s: the XLA modules are not benchmarked\n",
                 (root / "xla" / "hlo_file").string().c_str());
  }
  std::sort(xla.begin(), xla.end());
  out.insert(out.end(), xla.begin(), xla.end());
  return out;
}

absl::StatusOr<std::unique_ptr<xlite::HloModule>> ParseProgram(const Program& p) {
  return xlite::bench::ParseRunnable(p.text, p.path);
}

int64_t LiteralBytes(const Literal& l) {
  if (l.shape().IsTuple()) {
    int64_t n = 0;
    for (const Literal& e : l.tuple_elements()) n += LiteralBytes(e);
    return n;
  }
  return l.shape().IsArray() ? xlite::ShapeSizeBytes(l.shape()) : 0;
}

void Note(const std::string& line) {
  std::fprintf(stderr, "%s\n", line.c_str());
  g_notes.push_back(line);
}

// The interpreter's result leaves (arrays, ForEachSubshape order).
void ArrayLeaves(const Literal& l, std::vector<const Literal*>& out) {
  if (l.shape().IsTuple()) {
    for (const Literal& e : l.tuple_elements()) ArrayLeaves(e, out);
  } else if (l.shape().IsArray()) {
    out.push_back(&l);
  }
}

// "match", "MISMATCH: ..." or "" (nothing to compare with).
std::string CheckAgainstInterpreter(const Program& p,
                                    const std::vector<std::unique_ptr<Buffer>>& outputs) {
  if (!p.interpreter_result) return "";
  std::vector<const Literal*> want;
  ArrayLeaves(*p.interpreter_result, want);
  if (want.size() != outputs.size()) {
    return absl::StrCat("MISMATCH: ", outputs.size(), " outputs, the interpreter has ",
                        want.size());
  }
  for (size_t i = 0; i < want.size(); ++i) {
    absl::StatusOr<Literal> got = outputs[i]->ToLiteral();
    if (!got.ok()) return absl::StrCat("MISMATCH: out", i, ": ", got.status().message());
    xlite::runtime::Comparison c =
        xlite::runtime::CompareLiterals(*got, *want[i], xlite::runtime::ExcessPrecisionTolerance());
    if (c.matches) continue;
    // The leaf's own message names it out0: say which output it is.
    std::string why = FirstLine(c.ToString());
    if (absl::StartsWith(why, "out0: ")) why = why.substr(6);
    return absl::StrCat("MISMATCH: out", i, ": ", why);
  }
  return "match";
}

// Parses, makes the arguments, compiles once, runs once on each path (the
// probes); registers nothing. Returns nullptr when the program is skipped or
// refused (noted).
std::unique_ptr<Program> PrepareProgram(const std::string& name, const fs::path& path,
                                        const fs::path& npz) {
  auto p = std::make_unique<Program>();
  p->name = name;
  p->path = path.string();
  if (!xlite::bench::ReadFile(p->path, &p->text)) {
    Note(absl::StrCat("# refused ", name, "\tcannot read ", p->path));
    return nullptr;
  }
  absl::StatusOr<std::unique_ptr<xlite::HloModule>> module = ParseProgram(*p);
  if (!module.ok()) {
    Note(absl::StrCat("# refused ", name, "\t", FirstLine(module.status().message())));
    return nullptr;
  }
  // Arguments: the program's recorded inputs, else xlite run's.
  if (!npz.empty()) {
    absl::StatusOr<std::vector<std::pair<std::string, Literal>>> arrays =
        xlite::ReadNpz(npz.string());
    if (!arrays.ok()) {
      Note(absl::StrCat("# refused ", name, "\t", FirstLine(arrays.status().message())));
      return nullptr;
    }
    for (auto& [n, lit] : *arrays) p->args.push_back(std::move(lit));
    p->inputs = "inputs.npz";
  } else {
    // Sizes first: MakeFakeArguments would allocate them.
    int64_t bytes = 0;
    const xlite::HloComputation* entry = (*module)->entry_computation();
    for (int64_t i = 0; i < entry->num_parameters(); ++i) {
      xlite::ForEachSubshape(entry->parameter_instruction(i)->shape(),
                             [&](const xlite::Shape& s, const xlite::ShapeIndex&) {
                               if (s.IsArray()) bytes += xlite::ShapeSizeBytes(s);
                             });
    }
    if (bytes > g_flags.max_argument_mib * (int64_t{1} << 20)) {
      Note(absl::StrCat("# skipped ", name, "\tall\targuments of ", bytes >> 20, " MiB exceed ",
                        g_flags.max_argument_mib, " MiB"));
      return nullptr;
    }
    absl::StatusOr<std::vector<Literal>> fake =
        xlite::MakeFakeArguments(**module, xlite::FakeDataKind::kRandom, /*seed=*/0);
    if (!fake.ok()) {
      Note(absl::StrCat("# refused ", name, "\tinputs: ", FirstLine(fake.status().message())));
      return nullptr;
    }
    p->args = std::move(*fake);
    p->inputs = "random seed 0";
  }
  int64_t argument_bytes = 0;
  for (const Literal& a : p->args) argument_bytes += LiteralBytes(a);
  p->module = std::move(*module);

  // Compile (a second parse: Compile takes the module).
  absl::StatusOr<std::unique_ptr<xlite::HloModule>> to_compile = ParseProgram(*p);
  if (!to_compile.ok()) return nullptr;
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<Executable>> exe = xlite::Compile(std::move(*to_compile));
  p->compile_probe_ms = MillisecondsSince(start);
  std::string refused;
  if (!exe.ok()) {
    refused = FirstLine(exe.status().message());
  } else {
    p->exe = std::move(*exe);
    absl::StatusOr<Arguments> buffers = Arguments::Create(*p->exe, p->args);
    if (!buffers.ok()) {
      refused = absl::StrCat("arguments: ", FirstLine(buffers.status().message()));
    } else {
      p->buffers.emplace(std::move(*buffers));
    }
  }

  // The interpreter's probe run (also the oracle for the result check).
  xlite::EvalOptions eval_options;
  eval_options.replica_count = p->module->config().replica_count;
  eval_options.num_partitions = p->module->config().num_partitions;
  eval_options.max_seconds = g_flags.interpreter_cap_s;
  start = std::chrono::steady_clock::now();
  absl::StatusOr<Literal> interpreted = xlite::Evaluate(*p->module, p->args, eval_options);
  p->interpreter_probe_ms = MillisecondsSince(start);
  if (interpreted.ok()) {
    p->interpreter_result = std::move(*interpreted);
    g_ms[absl::StrCat(name, "\txlite-interpreter@1t")].push_back(p->interpreter_probe_ms);
  } else if (absl::IsResourceExhausted(interpreted.status())) {
    Note(absl::StrCat("# skipped ", name, "\txlite-interpreter@1t\tone run exceeds ",
                      g_flags.interpreter_cap_s, " s (", FirstLine(interpreted.status().message()),
                      ")"));
  } else {
    Note(absl::StrCat("# skipped ", name, "\txlite-interpreter@1t\t",
                      FirstLine(interpreted.status().message())));
  }

  std::string check;
  std::string executed = "?";
  if (refused.empty()) {
    // The compiled probe at one thread: the result check and a first time
    // (it picks the repetitions).
    absl::StatusOr<RunContext> context = MakeContext(1);
    xlite::runtime::ExecuteOptions options;
    if (context.ok()) options.runner = context->runner.get();
    std::vector<std::unique_ptr<Buffer>> outputs;
    absl::StatusOr<double> ms = TimedExecute(*p->exe, *p->buffers, options, &outputs);
    if (!ms.ok()) {
      refused = absl::StrCat("run: ", FirstLine(ms.status().message()));
    } else {
      p->run_probe_ms = *ms;
      check = CheckAgainstInterpreter(*p, outputs);
    }
  }
  if (refused.empty() && p->run_probe_ms > g_flags.compiled_cap_s * 1e3) {
    // Too slow to repeat: the probe is the one sample.
    g_ms[absl::StrCat(name, "\txlite-cpu@1t")].push_back(p->run_probe_ms);
    for (int t : g_flags.threads) {
      Note(absl::StrCat("# skipped ", name, "\txlite-cpu@", t, "t\tone run exceeds ",
                        g_flags.compiled_cap_s,
                        " s: ", t == 1 ? "the probe's one run is the figure" : "not repeated"));
    }
  } else if (refused.empty()) {
    // Thunks one run executes (the profile's timing slows the run: only
    // the counts are kept).
    absl::StatusOr<int64_t> count = ExecutedThunks(*p->exe, *p->buffers);
    if (count.ok()) executed = absl::StrCat(*count);
  }
  if (!refused.empty()) {
    Note(absl::StrCat("# refused ", name, "\t", refused));
    p->exe.reset();
  }
  Note(absl::StrCat("# program ", name, "\tinputs=", p->inputs, "\targument_bytes=", argument_bytes,
                    p->exe ? absl::StrCat("\tthunks=", p->exe->thunks().CountAll(), "\tthunks_run=",
                                          executed, "\tbytes_per_run=", p->exe->bytes_per_run())
                           : "",
                    check.empty() ? "" : absl::StrCat("\tcheck=", check)));
  p->interpreter_result.reset();  // only the check needed it
  return p;
}

void BM_Compile(benchmark::State& state, Program* p) {
  std::vector<std::string> no_args;
  absl::StatusOr<xlite::DebugOptions> debug = xlite::ReadDebugOptions(no_args);
  if (!debug.ok()) return state.SkipWithError(FirstLine(debug.status().message()).c_str());
  xlite::CompileOptions options;
  options.debug = *std::move(debug);
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<xlite::HloModule>> module = ParseProgram(*p);
    if (!module.ok()) return state.SkipWithError(FirstLine(module.status().message()).c_str());
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::unique_ptr<Executable>> exe = xlite::Compile(std::move(*module), options);
    const double ms = MillisecondsSince(start);
    if (!exe.ok()) return state.SkipWithError(FirstLine(exe.status().message()).c_str());
    g_ms[absl::StrCat(p->name, "\txlite-compile@1t")].push_back(ms);
    state.SetIterationTime(ms / 1e3);
  }
}

void BM_RunCompiled(benchmark::State& state, Program* p, int threads) {
  absl::StatusOr<RunContext> context = MakeContext(threads);
  if (!context.ok()) return state.SkipWithError(FirstLine(context.status().message()).c_str());
  xlite::runtime::ExecuteOptions options;
  options.runner = context->runner.get();
  // A warm-up on these threads, unless one run takes the whole budget.
  if (p->run_probe_ms < g_flags.run_budget_s * 1e3) {
    if (absl::StatusOr<double> warm = TimedExecute(*p->exe, *p->buffers, options); !warm.ok()) {
      return state.SkipWithError(FirstLine(warm.status().message()).c_str());
    }
  }
  for (auto _ : state) {
    absl::StatusOr<double> ms = TimedExecute(*p->exe, *p->buffers, options);
    if (!ms.ok()) return state.SkipWithError(FirstLine(ms.status().message()).c_str());
    g_ms[absl::StrCat(p->name, "\txlite-cpu@", threads, "t")].push_back(*ms);
    state.SetIterationTime(*ms / 1e3);
  }
}

void BM_RunInterpreter(benchmark::State& state, Program* p) {
  xlite::EvalOptions options;
  options.replica_count = p->module->config().replica_count;
  options.num_partitions = p->module->config().num_partitions;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<Literal> r = xlite::Evaluate(*p->module, p->args, options);
    const double ms = MillisecondsSince(start);
    if (!r.ok()) return state.SkipWithError(FirstLine(r.status().message()).c_str());
    g_ms[absl::StrCat(p->name, "\txlite-interpreter@1t")].push_back(ms);
    state.SetIterationTime(ms / 1e3);
  }
}

int64_t Clamp(double v, int64_t lo, int64_t hi) {
  return std::clamp<int64_t>(static_cast<int64_t>(v), lo, hi);
}

void RegisterProgram(Program* p) {
  const double budget_ms = g_flags.run_budget_s * 1e3;
  if (p->exe) {
    benchmark::RegisterBenchmark(("BM_Compile/" + p->name).c_str(), BM_Compile, p)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(g_flags.compiles > 0
                         ? g_flags.compiles
                         : Clamp(budget_ms / std::max(p->compile_probe_ms, 1e-3), 1, 3));
    for (int t : g_flags.threads) {
      if (p->run_probe_ms > g_flags.compiled_cap_s * 1e3) break;
      benchmark::RegisterBenchmark(absl::StrCat("BM_Run/", p->name, "/xlite-cpu@", t, "t").c_str(),
                                   BM_RunCompiled, p, t)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->Iterations(p->run_probe_ms <= budget_ms
                           ? Clamp(budget_ms / std::max(p->run_probe_ms, 1e-3), 3, 1000)
                           : 1);
    }
  }
  // The interpreter's probe is its first sample; more when they fit.
  const int64_t more = p->interpreter_probe_ms > 0 && g_ms.count(p->name + "\txlite-interpreter@1t")
                           ? Clamp(budget_ms / p->interpreter_probe_ms - 1, 0, 9)
                           : 0;
  if (more > 0) {
    benchmark::RegisterBenchmark(("BM_Run/" + p->name + "/xlite-interpreter@1t").c_str(),
                                 BM_RunInterpreter, p)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(more);
  }
}

// --- Flags and output -----------------------------------------------------------

// --only=A,B: programs whose name contains A or B (all without the flag).
bool Selected(const std::string& name) {
  if (g_flags.only.empty()) return true;
  for (absl::string_view part : absl::StrSplit(g_flags.only, ',', absl::SkipEmpty())) {
    if (absl::StrContains(name, part)) return true;
  }
  return false;
}

bool ParseFlag(const char* arg) {
  auto value = [&](absl::string_view flag) -> const char* {
    const size_t n = flag.size();
    return std::strncmp(arg, flag.data(), n) == 0 && arg[n] == '=' ? arg + n + 1 : nullptr;
  };
  if (const char* v = value("--threads")) {
    g_flags.threads.clear();
    for (absl::string_view t : absl::StrSplit(v, ',', absl::SkipEmpty())) {
      int n = 0;
      if (absl::SimpleAtoi(t, &n) && n >= 1) g_flags.threads.push_back(n);
    }
    if (g_flags.threads.empty()) g_flags.threads = {1};
  } else if (const char* v = value("--only")) {
    g_flags.only = v;
  } else if (const char* v = value("--interpreter_cap_s")) {
    g_flags.interpreter_cap_s = std::max(0.1, std::atof(v));
  } else if (const char* v = value("--compiled_cap_s")) {
    g_flags.compiled_cap_s = std::max(0.01, std::atof(v));
  } else if (const char* v = value("--run_budget_s")) {
    g_flags.run_budget_s = std::max(0.01, std::atof(v));
  } else if (const char* v = value("--compiles")) {
    g_flags.compiles = std::max(1, std::atoi(v));
  } else if (const char* v = value("--max_argument_mib")) {
    g_flags.max_argument_mib = std::max<int64_t>(1, std::atoll(v));
  } else if (std::strcmp(arg, "--no_corpus") == 0) {
    g_flags.corpus = false;
  } else {
    return false;
  }
  return true;
}

void PrintPeerLines() {
  std::printf("# cpu_bench: threads %s, interpreter cap %g s, compiled cap %g s, run budget %g s\n",
              absl::StrJoin(g_flags.threads, ",").c_str(), g_flags.interpreter_cap_s,
              g_flags.compiled_cap_s, g_flags.run_budget_s);
  for (const std::string& note : g_notes) std::printf("%s\n", note.c_str());
  // Dispatch: the slope between the smallest and largest N of each family.
  for (int t : g_flags.threads) {
    for (bool concurrent : {false, true}) {
      for (const std::string family :
           {"kernels", "independent", "wide", "while", "cb_kernels", "cb_while", "lk_while"}) {
        const DispatchCase* small = nullptr;
        const DispatchCase* large = nullptr;
        std::vector<double> large_ms, small_ms;
        for (const auto& [key, c] : g_dispatch) {
          if (key.first != family) continue;
          auto it = g_ms.find(absl::StrCat("dispatch_", family, "_", key.second, "\txlite-cpu-",
                                           ExecutorName(concurrent), "@", t, "t"));
          if (it == g_ms.end()) continue;
          if (small == nullptr) small = &c, small_ms = it->second;
          large = &c, large_ms = it->second;
        }
        if (small == nullptr) continue;
        if (family == "kernels" || family == "cb_kernels") {
          // The whole Execute of a one-kernel module: its fixed cost.
          std::printf("execute_one_kernel%s\txlite-cpu-%s@%dt\t%.4f\t%.2f us/run\n",
                      family == "kernels" ? "" : "_command_buffers_on", ExecutorName(concurrent), t,
                      Median(small_ms), Median(small_ms) * 1e3);
        }
        if (small == large || large->executed <= small->executed) continue;
        const double ns = (Median(large_ms) - Median(small_ms)) * 1e6 /
                          static_cast<double>(large->executed - small->executed);
        if (family == "lk_while") {
          std::printf("loop_kernel_while_thunk\txlite-cpu-%s@%dt\t%.4f\t%.1f ns/thunk replaced\n",
                      ExecutorName(concurrent), t, Median(large_ms), ns);
          continue;
        }
        if (family.rfind("cb_", 0) == 0) {
          std::printf("replay_command_buffer_%s_command\txlite-cpu-%s@%dt\t%.4f\t%.1f ns/command\n",
                      family == "cb_kernels" ? "kernel" : "while", ExecutorName(concurrent), t,
                      Median(large_ms), ns);
          continue;
        }
        std::printf("dispatch_%s_thunk\txlite-cpu-%s@%dt\t%.4f\t%.1f ns/thunk\n",
                    family == "kernels"       ? "kernel"
                    : family == "independent" ? "independent_kernel"
                    : family == "wide"        ? "independent_128KiB_kernel"
                                              : "while",
                    ExecutorName(concurrent), t, Median(large_ms), ns);
      }
    }
  }
  for (const auto& [name, ns] : g_noop_ns) {
    if (ns.empty()) continue;
    std::printf("%s\txlite-cpu-sequential@1t\t%.4f\t%.1f ns/%s\n", name.c_str(),
                Median(ns) * kNoopKernels * 1e-6, Median(ns),
                absl::StrContains(name, "command") ? "command" : "thunk");
  }
  for (const auto& [key, ms] : g_ms) {
    if (key.rfind("dispatch_", 0) == 0) continue;
    const double median = Median(ms);
    const bool compile = key.find("\txlite-compile@") != std::string::npos;
    std::printf("%s\t%.4f\t%.3f %s\n", key.c_str(), median, 1e3 / median,
                compile ? "compiles/s" : "runs/s");
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (i == 0 || !ParseFlag(argv[i])) args.push_back(argv[i]);
  }
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;

  for (bool command_buffer : {false, true}) {
    benchmark::RegisterBenchmark(
        absl::StrCat("BM_NoopDispatch/", command_buffer ? "command_buffer" : "thunks").c_str(),
        BM_NoopDispatch, command_buffer)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond)
        ->Iterations(3000);
  }
  // Dispatch cost: N = 1 and N = 1024 kernels; 1 and 4096 iterations.
  const std::vector<std::pair<std::string, std::vector<int>>> dispatch = {
      {"kernels", {1, 64, 1024}}, {"independent", {1, 1024}},    {"wide", {1, 64}},
      {"while", {1, 4096}},       {"cb_kernels", {1, 64, 1024}}, {"cb_while", {1, 4096}},
      {"lk_while", {1, 4096}}};
  for (const auto& [family, sizes] : dispatch) {
    for (int n : sizes) {
      if (absl::Status s = PrepareDispatch(family, n); !s.ok()) {
        std::fprintf(stderr, "cpu_bench: dispatch %s/%d: %s\n", family.c_str(), n,
                     std::string(s.message()).c_str());
        continue;
      }
      for (int t : g_flags.threads) {
        for (bool concurrent : {false, true}) {
          benchmark::RegisterBenchmark(
              absl::StrCat("BM_Dispatch/", family, "/", n, "/", t, "t/", ExecutorName(concurrent))
                  .c_str(),
              BM_Dispatch, family, n, t, concurrent)
              ->UseManualTime()
              ->Unit(benchmark::kMicrosecond)
              ->Iterations(n >= 1024 ? 300 : 2000);
        }
      }
    }
  }

  if (g_flags.corpus) {
    for (const auto& [name, path, npz] : ListPrograms()) {
      if (!Selected(name)) continue;
      std::fprintf(stderr, "cpu_bench: preparing %s\n", name.c_str());
      if (std::unique_ptr<Program> p = PrepareProgram(name, path, npz)) {
        RegisterProgram(p.get());
        g_programs.push_back(std::move(p));
      }
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  PrintPeerLines();
  return 0;
}
