// The concurrent executor: dependency graphs from declared uses, overlap of
// independent thunks (a rendezvous that only two thunks at once complete),
// errors, the profile, and bitwise agreement with the sequential executor on
// real programs.
#include "xlite/runtime/concurrent_executor.h"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "xlite/compiler.h"
#include "xlite/cpu/device_thunks.h"
#include "xlite/cpu/library_thunk.h"
#include "xlite/cpu/overlap_test_util.h"
#include "xlite/eval/fake_data.h"
#include "xlite/ir/elided_constants.h"
#include "xlite/runtime/task_runner.h"
#include "xlite/runtime/thread_pool.h"
#include "xlite/support/flags.h"
#include "xlite/support/npy.h"
#include "xlite/support/status.h"
#include "xlite/text/parser.h"

namespace xlite::runtime {
namespace {
namespace XLITE_UNITY_ID {

using cpu::BufferUse;
using ::xlite::BufferSlice;

// A custom call (never small) with the given uses that calls `fn`.
std::unique_ptr<cpu::Thunk> UsesThunk(std::vector<BufferUse> uses,
                                      std::function<absl::Status()> fn = nullptr,
                                      bool side_effect = false) {
  cpu::ThunkInfo info{"t", "test", "", side_effect};
  return std::make_unique<cpu::LibraryThunk>(
      cpu::Thunk::Kind::kCustomCall, info, std::move(uses),
      [fn = std::move(fn)](absl::Span<void* const>) { return fn ? fn() : absl::OkStatus(); },
      "test");
}

BufferUse R(int64_t a, int64_t offset, int64_t size) {
  return BufferUse::Read(BufferSlice{a, offset, size});
}
BufferUse W(int64_t a, int64_t offset, int64_t size) {
  return BufferUse::Write(BufferSlice{a, offset, size});
}

TEST(ExecutionGraph, EdgesFollowOverlappingUses) {
  cpu::ThunkSequence s;
  s.push_back(UsesThunk({R(0, 0, 16), W(1, 0, 16)}));   // 0
  s.push_back(UsesThunk({R(0, 0, 16), W(1, 16, 16)}));  // 1: independent of 0
  s.push_back(UsesThunk({R(1, 8, 16), W(2, 0, 8)}));    // 2: reads what 0 and 1 wrote
  s.push_back(UsesThunk({W(0, 12, 4)}));                // 3: writes what 0 and 1 read
  s.push_back(UsesThunk({W(2, 4, 4)}));                 // 4: writes what 2 wrote
  s.push_back(UsesThunk({R(3, 0, 4)}));                 // 5: touches nothing earlier
  ExecutionGraph g = ExecutionGraph::Build(s);
  EXPECT_EQ(g.ToString(), "0 -> 2 3\n1 -> 2 3\n2 -> 4\n3 ->\n4 ->\n5 ->\n");
  EXPECT_FALSE(g.is_chain);
  EXPECT_EQ(g.in_degree, (std::vector<int32_t>{0, 0, 2, 2, 1, 0}));
}

TEST(ExecutionGraph, AWriteCoversEarlierAccessesAndChainsAreSeen) {
  cpu::ThunkSequence s;
  s.push_back(UsesThunk({W(0, 0, 8)}));   // 0
  s.push_back(UsesThunk({R(0, 0, 8)}));   // 1
  s.push_back(UsesThunk({W(0, 0, 64)}));  // 2: after 0 (WAW) and 1 (WAR)
  s.push_back(UsesThunk({R(0, 4, 4)}));   // 3: after 2 only; 0 comes before 2
  ExecutionGraph g = ExecutionGraph::Build(s);
  EXPECT_EQ(g.ToString(), "0 -> 1 2\n1 -> 2\n2 -> 3\n3 ->\n");
  EXPECT_TRUE(g.is_chain);
}

TEST(ExecutionGraph, SequencesOfSmallThunksOrOneLargeRunInOrder) {
  auto library = [](std::vector<BufferUse> uses) {
    return std::make_unique<cpu::LibraryThunk>(
        cpu::Thunk::Kind::kLibrary, cpu::ThunkInfo{"l", "dot", ""}, std::move(uses),
        [](absl::Span<void* const>) { return absl::OkStatus(); }, "test");
  };
  cpu::ThunkSequence small;
  constexpr int64_t kSmall = ExecutionGraph::kSmallBytes;
  small.push_back(library({R(0, 0, kSmall), W(1, 0, kSmall)}));
  small.push_back(library({R(0, 0, kSmall), W(2, 0, kSmall)}));
  ExecutionGraph g = ExecutionGraph::Build(small);
  EXPECT_FALSE(g.is_chain);
  EXPECT_TRUE(g.all_small());
  EXPECT_TRUE(g.run_in_order());
  // One large thunk has nothing large to overlap with: in order.
  cpu::ThunkSequence one_large;
  one_large.push_back(library({R(0, 0, kSmall + 1), W(1, 0, 4)}));
  one_large.push_back(library({R(0, 0, 4), W(2, 0, 4)}));
  ExecutionGraph g1 = ExecutionGraph::Build(one_large);
  EXPECT_FALSE(g1.all_small());
  EXPECT_EQ(g1.num_large, 1);
  EXPECT_TRUE(g1.run_in_order());
  cpu::ThunkSequence large;
  large.push_back(library({R(0, 0, kSmall + 1), W(1, 0, 4)}));
  large.push_back(library({R(0, 0, kSmall + 1), W(2, 0, 4)}));
  EXPECT_FALSE(ExecutionGraph::Build(large).run_in_order());
  cpu::ThunkSequence custom;  // may block: never small
  custom.push_back(UsesThunk({W(1, 0, 4)}));
  custom.push_back(UsesThunk({W(2, 0, 4)}));
  EXPECT_FALSE(ExecutionGraph::Build(custom).run_in_order());
}

TEST(ExecutionGraph, SideEffectsAndRngStateKeepProgramOrder) {
  cpu::ThunkSequence s;
  s.push_back(UsesThunk({W(0, 0, 4)}, nullptr, /*side_effect=*/true));
  s.push_back(UsesThunk({W(1, 0, 4)}));  // free
  s.push_back(std::make_unique<cpu::RngGetAndUpdateStateThunk>(cpu::ThunkInfo{"rng", "rng", ""},
                                                               BufferSlice{2, 0, 16}, 1));
  s.push_back(std::make_unique<cpu::RngGetAndUpdateStateThunk>(cpu::ThunkInfo{"rng", "rng", ""},
                                                               BufferSlice{3, 0, 16}, 1));
  ExecutionGraph g = ExecutionGraph::Build(s);
  EXPECT_EQ(g.ToString(), "0 -> 2\n1 ->\n2 -> 3\n3 ->\n");
}

// Two oneDNN convolutions read the same input and write apart: each would
// fork an OpenMP team of the whole budget, so they run one after the other
// (cnn_b8 at 2 threads: 0.84-0.91x the time); a kernel beside them stays free.
TEST(ExecutionGraph, ThunksForkingThreadTeamsRunOneAfterAnother) {
  auto team = [](std::vector<BufferUse> uses) {
    cpu::ThunkInfo info{"conv", "convolution", ""};
    info.forks_thread_team = true;
    return std::make_unique<cpu::LibraryThunk>(
        cpu::Thunk::Kind::kLibrary, info, std::move(uses),
        [](absl::Span<void* const>) { return absl::OkStatus(); }, "test");
  };
  cpu::ThunkSequence s;
  s.push_back(team({R(0, 0, 4), W(1, 0, 4)}));
  s.push_back(team({R(0, 0, 4), W(2, 0, 4)}));
  s.push_back(UsesThunk({R(0, 0, 4), W(3, 0, 4)}));
  EXPECT_EQ(ExecutionGraph::Build(s).ToString(), "0 -> 1\n1 ->\n2 ->\n");
}

struct Memory {
  alignas(64) uint8_t memory[4][64] = {};
  uint8_t* bases[4] = {memory[0], memory[1], memory[2], memory[3]};
  cpu::BufferAllocations buffers{bases};
  cpu::ExecuteParams Params(const cpu::SequenceExecutor& executor) {
    cpu::ExecuteParams p;
    p.buffers = &buffers;
    p.executor = &executor;
    return p;
  }
};

TEST(ConcurrentThunkExecutor, AfterAnErrorNoFurtherThunkStarts) {
  cpu::ThunkSequence s;
  std::atomic<int> ran{0};
  s.push_back(UsesThunk({W(0, 0, 4)}, [&] { return absl::AbortedError("first fails"); }));
  s.push_back(UsesThunk({R(0, 0, 4), W(1, 0, 4)}, [&] {
    ++ran;
    return absl::OkStatus();
  }));
  s.push_back(UsesThunk({W(2, 0, 4)}, [&] {
    ++ran;
    return absl::OkStatus();
  }));
  ExecutionGraphs graphs(s);
  cpu::SideStreams streams;
  ConcurrentThunkExecutor executor(graphs, streams, 2);
  Memory run;
  absl::Status status = executor.Run(s, run.Params(executor));
  EXPECT_TRUE(absl::IsAborted(status)) << status;
  EXPECT_LE(ran.load(), 1);  // the independent one may have run; the dependent never
}

TEST(ConcurrentThunkExecutor, ProfilesEveryThunkOnce) {
  cpu::ThunkSequence s;
  for (int i = 0; i < 16; ++i) s.push_back(UsesThunk({W(i % 4, 4 * (i / 4), 4)}));
  ExecutionGraphs graphs(s);
  cpu::SideStreams streams;
  ThunkProfile profile;
  ConcurrentThunkExecutor executor(graphs, streams, 4, &profile);
  Memory run;
  for (int r = 0; r < 10; ++r) ASSERT_TRUE(executor.Run(s, run.Params(executor)).ok());
  std::vector<ThunkProfile::Entry> entries = profile.Sorted();
  ASSERT_EQ(entries.size(), 16u);
  for (const auto& e : entries) EXPECT_EQ(e.calls, 10);
}

// Two independent rendezvous calls: they complete only when two thunks run
// at once.
constexpr char kTwoIndependentThunks[] = R"(
HloModule two
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  a = f32[4] custom-call(x), custom_call_target="xlite_test.rendezvous", api_version=API_VERSION_TYPED_FFI
  b = f32[4] custom-call(y), custom_call_target="xlite_test.rendezvous", api_version=API_VERSION_TYPED_FFI
  ROOT t = (f32[4], f32[4]) tuple(a, b)
})";

Literal F32s(std::vector<float> values) {
  Literal l(Shape::Array(PrimitiveType::F32, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) l.SetDouble(static_cast<int64_t>(i), values[i]);
  return l;
}

std::vector<Literal> TwoArguments() {
  std::vector<Literal> args;
  args.push_back(F32s({1, 2, 3, 4}));
  args.push_back(F32s({5, 6, 7, 8}));
  return args;
}

absl::StatusOr<std::unique_ptr<Executable>> CompileTwo(DebugOptions debug = {}) {
  cpu::testing::RegisterOverlapTestTargets();
  ASSIGN_OR_RETURN(std::unique_ptr<HloModule> m, ParseHloModule(kTwoIndependentThunks, "two"));
  CompileOptions options;
  options.debug = debug;
  return Compile(std::move(m), options);
}

TEST(ConcurrentOverlap, IndependentThunksRunAtTheSameTime) {
  cpu::testing::RendezvousTimeoutMs() = 60'000;  // never reached when they overlap
  absl::StatusOr<std::unique_ptr<Executable>> e = CompileTwo();
  ASSERT_TRUE(e.ok()) << e.status();
  for (ExecutorKind kind : {ExecutorKind::kConcurrent, ExecutorKind::kDefault}) {
    ExecuteOptions options;
    options.executor = kind;
    absl::StatusOr<Literal> got = (*e)->ExecuteLiterals(TwoArguments(), options);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->tuple_elements()[0], TwoArguments()[0]);
    EXPECT_EQ(got->tuple_elements()[1], TwoArguments()[1]);
  }
}

TEST(ConcurrentOverlap, FailsByTimeoutUnderTheSequentialExecutor) {
  cpu::testing::RendezvousTimeoutMs() = 200;  // the partner can never come
  absl::StatusOr<std::unique_ptr<Executable>> e = CompileTwo();
  ASSERT_TRUE(e.ok()) << e.status();
  ExecuteOptions options;
  options.executor = ExecutorKind::kSequential;
  absl::StatusOr<Literal> sequential = (*e)->ExecuteLiterals(TwoArguments(), options);
  // --xlite_cpu_concurrent_executor=false makes the sequential one the default.
  DebugOptions debug;
  ASSERT_TRUE(ApplyDebugFlag("--xlite_cpu_concurrent_executor=false", debug).ok());
  EXPECT_FALSE(debug.cpu_concurrent_executor);
  absl::StatusOr<std::unique_ptr<Executable>> by_flag = CompileTwo(debug);
  ASSERT_TRUE(by_flag.ok()) << by_flag.status();
  absl::StatusOr<Literal> by_default = (*by_flag)->ExecuteLiterals(TwoArguments());
  cpu::testing::RendezvousTimeoutMs() = 60'000;
  for (const absl::StatusOr<Literal>* got : {&sequential, &by_default}) {
    ASSERT_FALSE(got->ok());
    EXPECT_TRUE(absl::IsDeadlineExceeded(got->status())) << got->status();
    EXPECT_TRUE(absl::StrContains(got->status().message(), "no partner arrived")) << got->status();
  }
  EXPECT_FALSE(ApplyDebugFlag("--xlite_cpu_concurrent_executor=maybe", debug).ok());
}

// Real programs: the JAX corpus's HLO dumps on their recorded inputs, and
// XLA's CPU benchmark modules on seeded random ones; both executors, two
// kernel threads, bitwise-identical results.
namespace fs = std::filesystem;

fs::path Corpus() {
  const char* env = std::getenv("XLITE_CORPUS");
  return env ? fs::path(env) : fs::path("../shared/corpus");
}

TEST(ConcurrentCorpus, ResultsAreBitwiseThoseOfTheSequentialExecutor) {
  if (!fs::exists(Corpus() / "jax")) {
    std::cerr << "\n*** SKIPPING: " << Corpus() << "/jax not found ***\n\n";
    GTEST_SKIP();
  }
  std::vector<std::pair<fs::path, fs::path>> programs;  // (module, inputs.npz or empty)
  for (const auto& entry : fs::directory_iterator(Corpus() / "jax")) {
    const fs::path hlo = entry.path() / "before_optimizations.txt";
    if (fs::exists(hlo)) programs.emplace_back(hlo, entry.path() / "inputs.npz");
  }
  int benchmarks = 0;
  for (const auto& entry : fs::directory_iterator(Corpus() / "xla/hlo_file")) {
    const std::string name = entry.path().filename().string();
    // Every 6th of XLA's CPU benchmark modules keeps the test short; and
    // xnn.parallel_dots, whose independent dots overlap (since the JAX
    // programs' top-level thunks became chains, the one that does).
    if (absl::StartsWith(name, "xla__backends__cpu__benchmarks__hlo__") &&
        (benchmarks++ % 6 == 0 || absl::StrContains(name, "parallel_dots"))) {
      programs.emplace_back(entry.path(), fs::path());
    }
  }
  std::sort(programs.begin(), programs.end());
  ThreadPool pool(2);
  PoolTaskRunner runner(pool);
  int compared = 0, with_overlap = 0;
  for (const auto& [path, npz] : programs) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(ss.str(), path.string());
    if (!m.ok()) continue;
    FillElidedConstants(**m);
    std::vector<Literal> args;
    if (!npz.empty() && fs::exists(npz)) {
      absl::StatusOr<std::vector<std::pair<std::string, Literal>>> arrays = ReadNpz(npz.string());
      ASSERT_TRUE(arrays.ok()) << arrays.status();
      for (auto& [n, l] : *arrays) args.push_back(std::move(l));
    } else {
      int64_t elements = 0;
      for (HloInstruction* p : (*m)->entry_computation()->parameter_instructions()) {
        if (p->shape().IsArray()) elements += p->shape().ElementCount();
      }
      if (elements > 8'000'000) continue;
      absl::StatusOr<std::vector<Literal>> fake = MakeFakeArguments(**m, FakeDataKind::kRandom, 0);
      if (!fake.ok()) continue;
      args = std::move(*fake);
    }
    absl::StatusOr<std::unique_ptr<Executable>> e = Compile(std::move(*m));
    if (!e.ok()) continue;  // cpu_conformance_test lists what the backend refuses
    ExecuteOptions options;
    options.runner = &runner;
    options.executor = ExecutorKind::kSequential;
    absl::StatusOr<Literal> sequential = (*e)->ExecuteLiterals(args, options);
    options.executor = ExecutorKind::kConcurrent;
    absl::StatusOr<Literal> concurrent = (*e)->ExecuteLiterals(args, options);
    ASSERT_EQ(sequential.ok(), concurrent.ok()) << path;
    if (!sequential.ok()) continue;
    EXPECT_TRUE(*sequential == *concurrent) << path << " differs under the concurrent executor";
    ++compared;
    const bool overlap = !ExecutionGraph::Build((*e)->thunks()).run_in_order();
    with_overlap += overlap;
    std::cout << "  " << path.filename().string() << " (" << path.parent_path().filename().string()
              << ")" << (overlap ? "" : ", runs in order") << "\n";
  }
  std::cout << "bitwise-identical under both executors: " << compared << " programs ("
            << with_overlap << " whose top-level thunks may overlap)\n";
  EXPECT_GE(compared, 8);
  EXPECT_GT(with_overlap, 0) << "no program ran under the concurrent executor";
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::runtime
