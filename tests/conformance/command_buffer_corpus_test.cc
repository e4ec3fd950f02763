// Command buffers and whole-loop kernels compute bit for bit what the
// unconverted thunks compute: every 4th single-device module of
// ../shared/corpus/xla with fake arguments of at most 16M elements
// (XLITE_CONFORMANCE_FULL=1: all of them) and the JAX programs, compiled with
// both off, with command buffers alone (--xlite_cpu_enable_command_buffer;
// loops then replay as while commands) and, for modules with a while or
// conditional, with both on (the default: --xlite_cpu_enable_loop_kernels),
// all run on the same seeded fake arguments on two threads. Results must be
// byte-identical; the compilations must fail alike or not at all. Prints the
// counts, and how many command buffers and loop kernels the modules got.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/conformance/jax_corpus_util.h"
#include "tests/conformance/xla_corpus_util.h"
#include "xlite/compiler.h"
#include "xlite/eval/evaluator.h"
#include "xlite/eval/fake_data.h"
#include "xlite/ir/elided_constants.h"
#include "xlite/runtime/task_runner.h"
#include "xlite/runtime/thread_pool.h"
#include "xlite/support/status.h"
#include "xlite/text/parser.h"
#include "xlite/verify/verifier.h"

namespace xlite {
namespace {

namespace fs = std::filesystem;

// Arguments of more elements are not made (time and memory in make test).
constexpr int64_t kArgumentElementBudget = 16'000'000;
// The full run's budget for the interpreter on a module with control flow.
constexpr double kInterpreterSeconds = 10;
constexpr int64_t kInterpreterElements = 250'000'000;

fs::path Corpus() {
  const char* env = std::getenv("XLITE_CORPUS");
  return env ? fs::path(env) : fs::path("../shared/corpus");
}

runtime::ThreadPool& Pool() {
  static runtime::ThreadPool* pool = new runtime::ThreadPool(2);
  return *pool;
}

std::string FirstLine(absl::string_view s) {
  std::string line(s.substr(0, s.find('\n')));
  return line.size() > 160 ? line.substr(0, 160) + "..." : line;
}

struct Run {
  absl::StatusOr<Literal> result;
  int64_t converted = 0;  // command buffers, or whole-loop kernels
};

// Makes a fresh copy of the module for each compilation (Compile consumes it).
using ModuleFactory = std::function<absl::StatusOr<std::unique_ptr<HloModule>>()>;

enum class Config { kThunks, kCommandBuffers, kLoopKernels };

bool IsLoopKernel(const cpu::Thunk& t) {
  return t.kind() == cpu::Thunk::Kind::kKernel &&
         (t.info().opcode == "while" || t.info().opcode == "conditional");
}

Run CompileAndRun(const ModuleFactory& make, absl::Span<const Literal> args, Config config) {
  Run run;
  absl::StatusOr<std::unique_ptr<HloModule>> module = make();
  if (!module.ok()) {
    run.result = module.status();
    return run;
  }
  CompileOptions options;
  options.debug.poison_dead_slices = true;
  options.debug.cpu_enable_command_buffer = config != Config::kThunks;
  options.debug.cpu_enable_loop_kernels = config == Config::kLoopKernels;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> e = Compile(std::move(*module), options);
  if (!e.ok()) {
    run.result = e.status();
    return run;
  }
  std::function<void(const cpu::ThunkSequence&)> count = [&](const cpu::ThunkSequence& s) {
    for (const auto& t : s) {
      if (config == Config::kLoopKernels ? IsLoopKernel(*t)
                                         : t->kind() == cpu::Thunk::Kind::kCommandBuffer) {
        ++run.converted;
      }
      for (const auto& [label, nested] : t->nested()) count(*nested);
    }
  };
  count((*e)->thunks());
  runtime::PoolTaskRunner runner(Pool());
  runtime::ExecuteOptions execute;
  execute.runner = &runner;
  run.result = (*e)->ExecuteLiterals(args, execute);
  return run;
}

struct Counts {
  int compared = 0, identical = 0, differ = 0, both_fail = 0, one_fails = 0;
  int64_t converted = 0;
  int with_converted = 0;
  std::vector<std::string> problems;
  std::map<std::string, int> both_fail_codes;  // status code -> modules
};

// Counts how `converted` compares with `reference` (the thunks alone).
void Count(const std::string& name, const Run& converted, const Run& reference, Counts& counts) {
  ++counts.compared;
  counts.converted += converted.converted;
  if (converted.converted > 0) ++counts.with_converted;
  const absl::StatusOr<Literal>& on = converted.result;
  const absl::StatusOr<Literal>& off = reference.result;
  if (!on.ok() || !off.ok()) {
    if (!on.ok() && !off.ok() && on.status() == off.status()) {
      ++counts.both_fail;
      ++counts.both_fail_codes[absl::StatusCodeToString(off.status().code())];
      return;
    }
    ++counts.one_fails;
    counts.problems.push_back(absl::StrCat(name, ": on: ", FirstLine(on.status().ToString()),
                                           " / off: ", FirstLine(off.status().ToString())));
    return;
  }
  if (*on == *off) {
    ++counts.identical;
  } else {
    ++counts.differ;
    counts.problems.push_back(absl::StrCat(name, ": results differ"));
  }
}

bool HasControlFlow(const HloModule& m) {
  for (const auto& c : m.computations()) {
    for (const auto& i : c->instructions()) {
      if (i->opcode() == HloOpcode::kWhile || i->opcode() == HloOpcode::kConditional) return true;
    }
  }
  return false;
}

struct BothCounts {
  Counts command_buffers, loop_kernels;
};

// Runs `module` with the thunks alone, with command buffers, and (where it
// has control flow) with whole-loop kernels, and counts the outcomes.
void Compare(const std::string& name, const ModuleFactory& make, absl::Span<const Literal> args,
             bool control_flow, BothCounts& counts) {
  Run off = CompileAndRun(make, args, Config::kThunks);
  Count(name, CompileAndRun(make, args, Config::kCommandBuffers), off, counts.command_buffers);
  if (control_flow) {
    Count(name, CompileAndRun(make, args, Config::kLoopKernels), off, counts.loop_kernels);
  }
}

void Print(const std::string& what, const std::string& converted, const Counts& c) {
  std::cout << absl::StrFormat(
      "%s: %d compared, %d bit-identical, %d differ, %d fail alike both ways, %d fail one way; "
      "%d modules got %d %s\n",
      what, c.compared, c.identical, c.differ, c.both_fail, c.one_fails, c.with_converted,
      c.converted, converted);
  if (!c.both_fail_codes.empty()) {
    std::vector<std::string> codes;
    for (const auto& [code, n] : c.both_fail_codes) codes.push_back(absl::StrCat(code, " ", n));
    std::cout << "  failing alike: " << absl::StrJoin(codes, ", ") << "\n";
  }
  for (const std::string& p : c.problems) std::cout << "  " << p << "\n";
}

void ExpectNoDifference(const Counts& c) {
  EXPECT_GT(c.identical, 0);
  EXPECT_GT(c.with_converted, 0);
  EXPECT_EQ(c.differ, 0);
  EXPECT_EQ(c.one_fails, 0);
}

bool SingleDevice(const HloModule& m) {
  if (m.config().replica_count * m.config().num_partitions > 1) return false;
  for (const auto& c : m.computations()) {
    for (const auto& i : c->instructions()) {
      const HloOpcode op = i->opcode();
      if ((HloOpcodeTraits(op) & kCollective) || op == HloOpcode::kSend || op == HloOpcode::kRecv ||
          op == HloOpcode::kInfeed || op == HloOpcode::kOutfeed) {
        return false;
      }
      if (op == HloOpcode::kCustomCall &&
          i->attrs().custom_call_target == "interpreter.run_parallel") {
        return false;
      }
    }
  }
  return true;
}

TEST(CommandBufferCorpus, XlaCorpusReplaysBitIdentically) {
  const fs::path dir = Corpus() / "xla";
  if (!fs::exists(dir / "manifest.tsv")) {
    std::cerr << "\n*** SKIPPING the command-buffer run over the XLA corpus: " << dir
              << "/manifest.tsv not found ***\n\n";
    GTEST_SKIP();
  }
  const char* full_env = std::getenv("XLITE_CONFORMANCE_FULL");
  const bool full = full_env != nullptr && std::string(full_env) == "1";
  std::ifstream manifest = xla_corpus::OpenManifest(dir);
  BothCounts counts;
  int candidates = 0, no_arguments = 0, unfinished = 0, interpreter_errors = 0;
  const auto start = std::chrono::steady_clock::now();
  xla_corpus::ModuleFile file;
  while (xla_corpus::NextModuleFile(manifest, dir, file)) {
    const std::string& text = file.text;
    const std::string name = file.path;
    const ModuleFactory make = [&]() -> absl::StatusOr<std::unique_ptr<HloModule>> {
      ASSIGN_OR_RETURN(std::unique_ptr<HloModule> m, ParseHloModule(text, name));
      RETURN_IF_ERROR(VerifyModule(*m));
      FillElidedConstants(*m);
      return m;
    };
    absl::StatusOr<std::unique_ptr<HloModule>> m = make();
    if (!m.ok()) continue;
    if (!SingleDevice(**m)) continue;
    if (!full && candidates++ % 4 != 0) continue;
    int64_t elements = 0;
    for (HloInstruction* p : (*m)->entry_computation()->parameter_instructions()) {
      ForEachSubshape(p->shape(), [&](const Shape& s, const ShapeIndex&) {
        if (s.IsArray()) elements += s.ElementCount();
      });
    }
    if (elements > kArgumentElementBudget) {
      ++no_arguments;
      continue;
    }
    absl::StatusOr<std::vector<Literal>> args = MakeFakeArguments(**m, FakeDataKind::kRandom, 0);
    if (!args.ok()) {
      ++no_arguments;
      continue;
    }
    // A loop's trip count may come from the random arguments (and never
    // end): in the full run, a module with control flow goes on only if
    // the interpreter finishes it within a budget (the compiled code is
    // faster). The sampled run's modules all finish.
    const bool control_flow = HasControlFlow(**m);
    if (full && control_flow) {
      EvalOptions budget;
      budget.max_seconds = kInterpreterSeconds;
      budget.max_total_elements = kInterpreterElements;
      if (absl::Status s = Evaluate(**m, *args, budget).status(); !s.ok()) {
        ++(absl::IsResourceExhausted(s) ? unfinished : interpreter_errors);
        continue;
      }
    }
    Compare(file.path, make, *args, control_flow, counts);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "\nCommand buffers and loop kernels vs thunks over the XLA corpus ("
            << (full ? "all" : "every 4th") << " single-device module, " << seconds << " s; "
            << no_arguments << " without arguments to run on";
  if (full) {
    std::cout << ", " << unfinished << " with control flow the interpreter did not finish in "
              << kInterpreterSeconds << " s, " << interpreter_errors
              << " with control flow it could not run";
  }
  std::cout << ")\n";
  Print("XLA corpus, command buffers", "command buffers", counts.command_buffers);
  Print("XLA corpus, loop kernels (modules with control flow)", "loop kernels",
        counts.loop_kernels);
  ExpectNoDifference(counts.command_buffers);
  ExpectNoDifference(counts.loop_kernels);
}

TEST(CommandBufferCorpus, JaxProgramsReplayBitIdentically) {
  const fs::path dir = jax_corpus::CorpusDir();
  if (!fs::exists(dir / "manifest.tsv")) {
    std::cerr << "\n*** SKIPPING the command-buffer run over the JAX corpus: " << dir
              << " not found ***\n\n";
    GTEST_SKIP();
  }
  BothCounts counts;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_directory()) continue;
    absl::StatusOr<std::unique_ptr<HloModule>> m =
        jax_corpus::Load(entry.path(), jax_corpus::Form::kHlo);
    ASSERT_TRUE(m.ok()) << m.status();
    absl::StatusOr<std::vector<Literal>> args =
        MakeFakeArguments(**m, FakeDataKind::kRandom, jax_corpus::kSeed);
    ASSERT_TRUE(args.ok()) << args.status();
    const fs::path path = entry.path();
    Compare(
        path.filename().string(), [&] { return jax_corpus::Load(path, jax_corpus::Form::kHlo); },
        *args, HasControlFlow(**m), counts);
  }
  std::cout << "\nCommand buffers and loop kernels vs thunks over the JAX programs\n";
  Print("JAX corpus, command buffers", "command buffers", counts.command_buffers);
  Print("JAX corpus, loop kernels (programs with control flow)", "loop kernels",
        counts.loop_kernels);
  EXPECT_EQ(counts.command_buffers.compared, 7);
  EXPECT_EQ(counts.command_buffers.identical, 7);
  EXPECT_GT(counts.command_buffers.with_converted, 0);
  ExpectNoDifference(counts.loop_kernels);
}

}  // namespace
}  // namespace xlite
