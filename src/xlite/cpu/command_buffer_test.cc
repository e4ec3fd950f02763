// Command buffers: what the conversion groups and what breaks a run, nested
// control flow, replay against the unconverted sequence, partitions over the
// TaskRunner, and concurrent runs sharing one recording. Kernels here are
// plain C functions with the JIT's kernel ABI.
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "xlite/cpu/command_buffer_conversion.h"
#include "xlite/cpu/command_buffer_thunk.h"
#include "xlite/cpu/control_flow_thunks.h"
#include "xlite/cpu/copy_thunk.h"
#include "xlite/cpu/cpu_test_util.h"
#include "xlite/cpu/device_thunks.h"
#include "xlite/cpu/kernel_thunk.h"
#include "xlite/cpu/library_thunk.h"
#include "xlite/runtime/concurrent_executor.h"
#include "xlite/support/flags.h"

namespace xlite::cpu {
namespace {
namespace XLITE_UNITY_ID {

class SimpleExecutor final : public SequenceExecutor {
 public:
  absl::Status Run(const ThunkSequence& sequence, const ExecuteParams& params) const override {
    for (const auto& t : sequence) {
      if (absl::Status s = t->Execute(params); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
};

// A runner that reports `threads` threads and runs the parts in order.
class CountingRunner final : public TaskRunner {
 public:
  explicit CountingRunner(int threads) : threads_(threads) {}
  int num_threads() const override { return threads_; }
  void ParallelFor(int64_t n, absl::FunctionRef<void(int64_t)> fn) override {
    calls.fetch_add(1);
    for (int64_t i = 0; i < n; ++i) fn(i);
  }
  std::atomic<int> calls{0};

 private:
  int threads_;
};

ThunkInfo Info(const char* name) { return ThunkInfo{name, "test", ""}; }

// out[0] = in[0] + 1 (s32); with partitions, partition p of n adds into
// its own element out[p].
void AddOne(void** buffers, int64_t partition, int64_t num_partitions) {
  int32_t v;
  std::memcpy(&v, buffers[0], 4);
  if (num_partitions == 1) {
    v += 1;
    std::memcpy(buffers[1], &v, 4);
    return;
  }
  static_cast<int32_t*>(buffers[1])[partition] = v + static_cast<int32_t>(num_partitions);
}
// out = (in < 10) as a pred.
void LessThanTen(void** buffers, int64_t, int64_t) {
  int32_t v;
  std::memcpy(&v, buffers[0], 4);
  *static_cast<uint8_t*>(buffers[1]) = v < 10 ? 1 : 0;
}
// out = in * 3.
void TimesThree(void** buffers, int64_t, int64_t) {
  int32_t v;
  std::memcpy(&v, buffers[0], 4);
  v *= 3;
  std::memcpy(buffers[1], &v, 4);
}

std::unique_ptr<KernelThunk> Kernel(const char* name, codegen::KernelFunction fn, BufferSlice in,
                                    BufferSlice out, int64_t work = 2, int64_t max_parts = 1) {
  auto k = std::make_unique<KernelThunk>(Info(name), std::vector<BufferSlice>{in, out}, 1, work);
  codegen::CompiledKernel compiled;
  compiled.name = name;
  compiled.function = fn;
  compiled.max_partitions = max_parts;
  if (fn != nullptr) k->SetKernel(compiled);
  return k;
}

BufferSlice S(int64_t allocation, int64_t offset, int64_t size = 4) {
  return BufferSlice{allocation, offset, size};
}

struct Memory {
  alignas(64) uint8_t bytes[2][256] = {};
  uint8_t* bases[2] = {bytes[0], bytes[1]};
  BufferAllocations buffers{bases};
  SimpleExecutor executor;
  ExecuteParams params(TaskRunner* runner = nullptr) {
    ExecuteParams p;
    p.buffers = &buffers;
    p.executor = &executor;
    p.runner = runner;
    return p;
  }
  int32_t At(int allocation, int offset) const {
    int32_t v;
    std::memcpy(&v, bytes[allocation] + offset, 4);
    return v;
  }
  void Set(int allocation, int offset, int32_t v) {
    std::memcpy(bytes[allocation] + offset, &v, 4);
  }
};

std::string Kinds(const ThunkSequence& s) {
  std::string out;
  for (const auto& t : s) absl::StrAppend(&out, out.empty() ? "" : " ", ThunkKindName(t->kind()));
  return out;
}

// A while computing x = x + 1 until x >= 10 at a0[0], then x * 3 into a0[8].
// The predicate lives at a1[0].
ThunkSequence CountingLoop(bool with_rng_in_body) {
  ThunkSequence condition;
  condition.push_back(Kernel("lt", LessThanTen, S(0, 0), S(1, 0, 1)));
  ThunkSequence body;
  body.push_back(Kernel("inc", AddOne, S(0, 0), S(0, 4)));
  body.push_back(std::make_unique<CopyThunk>(Info("back"), S(0, 4), S(0, 0)));
  if (with_rng_in_body) {
    body.push_back(std::make_unique<RngGetAndUpdateStateThunk>(Info("rng"), S(1, 64, 16), 1));
  }
  ThunkSequence out;
  out.push_back(std::make_unique<WhileThunk>(Info("while"), std::move(condition), S(1, 0, 1),
                                             std::move(body)));
  out.push_back(Kernel("triple", TimesThree, S(0, 0), S(0, 8)));
  return out;
}

TEST(CommandBufferConversion, GroupsMaximalRunsAndBreaksAtUnrecordableThunks) {
  ThunkSequence s;
  s.push_back(Kernel("k1", AddOne, S(0, 0), S(0, 4)));
  s.push_back(std::make_unique<CopyThunk>(Info("c1"), S(0, 4), S(0, 8)));
  s.push_back(std::make_unique<PoisonThunk>(Info("p1"), std::vector<BufferSlice>{S(0, 4)}));
  // Rng state breaks the run.
  s.push_back(std::make_unique<RngGetAndUpdateStateThunk>(Info("rng"), S(1, 64, 16), 1));
  // A lone kernel between two breaks stays a kernel.
  s.push_back(Kernel("lone", AddOne, S(0, 8), S(0, 12)));
  s.push_back(std::make_unique<LibraryThunk>(
      Thunk::Kind::kLibrary, Info("dot"), std::vector<BufferUse>{BufferUse::Read(S(0, 0))},
      [](absl::Span<void* const>) { return absl::OkStatus(); }, "test"));
  s.push_back(Kernel("k2", AddOne, S(0, 12), S(0, 16)));
  s.push_back(Kernel("k3", AddOne, S(0, 16), S(0, 20)));
  // A kernel with a side effect, and one the JIT never bound, break runs.
  ThunkInfo effect = Info("effect");
  effect.has_side_effect = true;
  auto effectful =
      std::make_unique<KernelThunk>(effect, std::vector<BufferSlice>{S(0, 0), S(0, 4)}, 1, 2);
  codegen::CompiledKernel compiled;
  compiled.function = AddOne;
  effectful->SetKernel(compiled);
  s.push_back(std::move(effectful));
  s.push_back(Kernel("k4", AddOne, S(0, 20), S(0, 24)));
  s.push_back(Kernel("unbound", nullptr, S(0, 24), S(0, 28)));
  s.push_back(Kernel("k5", AddOne, S(0, 28), S(0, 32)));

  absl::StatusOr<int64_t> made = ConvertToCommandBuffers(s);
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(*made, 2);
  EXPECT_EQ(Kinds(s),
            "kCommandBuffer kRngGetAndUpdateState kKernel kLibrary kCommandBuffer kKernel kKernel "
            "kKernel kKernel");
  const auto& first = static_cast<const CommandBufferThunk&>(s[0]);
  EXPECT_EQ(first.commands().size(), 3u);  // kernel, copy, poison
  EXPECT_EQ(first.info().instruction, "k1..p1");
  EXPECT_FALSE(first.has_control_flow());
  // Union of uses, duplicates dropped: a0[4] is written by k1 and p1 and read by c1.
  EXPECT_EQ(first.buffer_uses().size(), 4u);
  EXPECT_TRUE(absl::StrContains(s.ToString(), "kCommandBuffer"));
  EXPECT_TRUE(absl::StrContains(s.ToString(), "commands:"));
}

TEST(CommandBufferConversion, EmptyCopiesAndPoisonRecordNoCommands) {
  ThunkSequence s;
  s.push_back(std::make_unique<CopyThunk>(Info("c"), EmptySlice(), EmptySlice()));
  s.push_back(std::make_unique<PoisonThunk>(Info("p"), std::vector<BufferSlice>{EmptySlice()}));
  ASSERT_EQ(*ConvertToCommandBuffers(s), 0);
  EXPECT_EQ(Kinds(s), "kCopy kPoison");
}

TEST(CommandBufferConversion, AWhileOfKernelsBecomesOneCommandBufferAndReplaysIt) {
  Memory reference, converted;
  ThunkSequence plain = CountingLoop(false);
  ThunkSequence s = CountingLoop(false);
  ASSERT_EQ(*ConvertToCommandBuffers(s), 1);
  ASSERT_EQ(Kinds(s), "kCommandBuffer");
  const auto& buffer = static_cast<const CommandBufferThunk&>(s[0]);
  EXPECT_TRUE(buffer.has_control_flow());
  // while, lt, inc, copy, triple.
  EXPECT_EQ(buffer.commands().size(), 5u);
  for (int start : {0, 7, 10, 42, -5}) {
    reference.Set(0, 0, start);
    converted.Set(0, 0, start);
    ASSERT_TRUE(SimpleExecutor().Run(plain, reference.params()).ok());
    ASSERT_TRUE(s[0].Execute(converted.params()).ok());
    EXPECT_EQ(std::memcmp(reference.bytes, converted.bytes, sizeof(reference.bytes)), 0) << start;
    EXPECT_EQ(converted.At(0, 8), 3 * std::max(start, 10));
  }
}

TEST(CommandBufferConversion, ConvertsInsideControlFlowItCannotRecord) {
  ThunkSequence s = CountingLoop(/*with_rng_in_body=*/true);
  ASSERT_EQ(*ConvertToCommandBuffers(s), 1);
  // The while stays (rng in its body); its body's kernel + copy became one buffer;
  // the condition (one kernel) and the lone kernel after the loop stay.
  ASSERT_EQ(Kinds(s), "kWhile kKernel");
  EXPECT_EQ(Kinds(*s[0].nested()[0].second), "kKernel");
  EXPECT_EQ(Kinds(*s[0].nested()[1].second), "kCommandBuffer kRngGetAndUpdateState");
  Memory m;
  ASSERT_TRUE(SimpleExecutor().Run(s, m.params()).ok());
  EXPECT_EQ(m.At(0, 0), 10);
  EXPECT_EQ(m.At(0, 8), 30);
}

TEST(CommandBufferConversion, ConditionalsAndCallsAreRecorded) {
  for (bool pred : {true, false}) {
    for (int32_t index : {0, 1, 7, -1}) {
      ThunkSequence plain, s;
      // Build the same tree twice (thunks are not copyable).
      auto build = [&](ThunkSequence& out) {
        std::vector<ThunkSequence> b(pred ? 2 : 3);
        b[0].push_back(Kernel("b0", AddOne, S(0, 0), S(0, 4)));
        b[1].push_back(Kernel("b1", TimesThree, S(0, 0), S(0, 4)));
        if (!pred) b[2].push_back(std::make_unique<CopyThunk>(Info("b2"), S(0, 0), S(0, 4)));
        ThunkSequence c;
        c.push_back(Kernel("c", TimesThree, S(0, 4), S(0, 8)));
        out.push_back(std::make_unique<ConditionalThunk>(
            Info("cond"), pred ? S(1, 0, 1) : S(1, 0, 4), pred, std::move(b)));
        out.push_back(std::make_unique<CallThunk>(Info("call"), std::move(c)));
      };
      build(plain);
      build(s);
      ASSERT_EQ(*ConvertToCommandBuffers(s), 1);
      ASSERT_EQ(Kinds(s), "kCommandBuffer");
      Memory reference, converted;
      for (Memory* m : {&reference, &converted}) {
        m->Set(0, 0, 5);
        if (pred) {
          m->bytes[1][0] = index == 0 ? 1 : 0;
        } else {
          m->Set(1, 0, index);
        }
      }
      ASSERT_TRUE(SimpleExecutor().Run(plain, reference.params()).ok());
      ASSERT_TRUE(s[0].Execute(converted.params()).ok());
      EXPECT_EQ(std::memcmp(reference.bytes, converted.bytes, sizeof(reference.bytes)), 0)
          << pred << " " << index;
      EXPECT_NE(converted.At(0, 8), 0);
    }
  }
}

TEST(CommandBufferThunk, LargeKernelsKeepTheirPartitions) {
  // work worth 4 partitions, the kernel allows 8, the runner has 3 threads.
  ThunkSequence s;
  s.push_back(
      Kernel("big", AddOne, S(0, 0), S(0, 16, 16), 4 * KernelThunk::kMinWorkPerPartition, 8));
  s.push_back(Kernel("small", AddOne, S(0, 64), S(0, 68)));
  ASSERT_EQ(*ConvertToCommandBuffers(s), 1);
  Memory m;
  m.Set(0, 0, 100);
  CountingRunner runner(3);
  ASSERT_TRUE(s[0].Execute(m.params(&runner)).ok());
  EXPECT_EQ(runner.calls.load(), 1);  // the small kernel ran inline
  for (int p = 0; p < 3; ++p) EXPECT_EQ(m.At(0, 16 + 4 * p), 103) << p;
  EXPECT_EQ(m.At(0, 28), 0);  // no fourth partition on three threads
  EXPECT_EQ(m.At(0, 68), 1);
  // Without a runner it is one call.
  Memory one;
  one.Set(0, 0, 100);
  ASSERT_TRUE(s[0].Execute(one.params()).ok());
  EXPECT_EQ(one.At(0, 16), 101);
}

TEST(CommandBufferThunk, CreateRefusesWhatItCannotRecord) {
  ThunkSequence s;
  s.push_back(Kernel("k", AddOne, S(0, 0), S(0, 4)));
  s.push_back(std::make_unique<RngGetAndUpdateStateThunk>(Info("rng"), S(1, 64, 16), 1));
  absl::StatusOr<std::unique_ptr<CommandBufferThunk>> b = CommandBufferThunk::Create(std::move(s));
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(b.status().message(), "kRngGetAndUpdateState 'rng'")) << b.status();
}

TEST(CommandBufferThunk, ConcurrentRunsShareOneRecording) {
  ThunkSequence s = CountingLoop(false);
  ASSERT_EQ(*ConvertToCommandBuffers(s), 1);
  const Thunk& buffer = s[0];
  constexpr int kThreads = 8, kRuns = 500;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Memory m;  // each run its own allocations
      for (int r = 0; r < kRuns; ++r) {
        const int32_t start = (t * 7 + r) % 23 - 3;
        m.Set(0, 0, start);
        if (!buffer.Execute(m.params()).ok() || m.At(0, 8) != 3 * std::max(start, 10)) {
          wrong.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

// End to end: the compiler converts (or, with the flag off, does not), and
// both agree with the interpreter bit for bit.
TEST(CommandBufferConversion, CompiledLoopsReplayBitIdentically) {
  const std::string text = R"(
HloModule loop
cond {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(50)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  s = f32[8] sine(x)
  y = f32[8] multiply(s, x)
  ROOT t = (s32[], f32[8]) tuple(i2, y)
}
ENTRY e {
  a = f32[8] parameter(0)
  b = f32[8] exponential(a)
  zero = s32[] constant(0)
  t = (s32[], f32[8]) tuple(zero, b)
  w = (s32[], f32[8]) while(t), condition=cond, body=body
  r = f32[8] get-tuple-element(w), index=1
  ROOT z = f32[8] add(r, a)
}
)";
  std::vector<Literal> args;
  {
    std::unique_ptr<HloModule> m = testing::ParseOrDie(text);
    ASSERT_NE(m, nullptr);
    absl::StatusOr<std::vector<Literal>> a = MakeFakeArguments(*m, FakeDataKind::kRandom, 3);
    ASSERT_TRUE(a.ok());
    args = std::move(*a);
  }
  std::vector<Literal> results;
  for (bool enable : {true, false}) {
    CompileOptions options;
    options.debug.poison_dead_slices = true;
    options.debug.cpu_enable_command_buffer = enable;
    options.debug.cpu_enable_loop_kernels = false;  // the while replays as commands
    absl::StatusOr<std::unique_ptr<runtime::Executable>> e =
        Compile(testing::ParseOrDie(text), options);
    ASSERT_TRUE(e.ok()) << e.status();
    const std::string thunks = (*e)->thunks().ToString();
    EXPECT_EQ(absl::StrContains(thunks, "kCommandBuffer"), enable) << thunks;
    absl::StatusOr<Literal> got = (*e)->ExecuteLiterals(args);
    ASSERT_TRUE(got.ok()) << got.status();
    results.push_back(std::move(*got));
  }
  EXPECT_TRUE(results[0] == results[1]);
  testing::ExpectAgreesWithInterpreter(text);
}

// The concurrent executor runs a sequence in order when every thunk is
// small: a command buffer is small when all it recorded is (no loops).
TEST(CommandBufferConversion, TheConcurrentExecutorSeesRecordedSmallWorkAsSmall) {
  ThunkSequence s;
  s.push_back(Kernel("k1", AddOne, S(0, 0), S(0, 4)));
  s.push_back(Kernel("k2", AddOne, S(0, 4), S(0, 8)));
  s.push_back(std::make_unique<RngGetAndUpdateStateThunk>(Info("rng"), S(1, 64, 16), 1));
  s.push_back(Kernel("k3", AddOne, S(0, 16), S(0, 20)));
  s.push_back(Kernel("k4", AddOne, S(0, 20), S(0, 24)));
  ASSERT_EQ(*ConvertToCommandBuffers(s), 2);
  EXPECT_TRUE(runtime::ExecutionGraph::Build(s).all_small());

  ThunkSequence loop = CountingLoop(false);
  loop.push_back(std::make_unique<RngGetAndUpdateStateThunk>(Info("rng"), S(1, 64, 16), 1));
  ASSERT_EQ(*ConvertToCommandBuffers(loop), 1);
  ASSERT_EQ(Kinds(loop), "kCommandBuffer kRngGetAndUpdateState");
  EXPECT_FALSE(runtime::ExecutionGraph::Build(loop).all_small());
}

TEST(CommandBufferConversion, TheFlagTurnsItOff) {
  DebugOptions debug;
  EXPECT_TRUE(debug.cpu_enable_command_buffer);
  ASSERT_TRUE(*ApplyDebugFlag("--xlite_cpu_enable_command_buffer=false", debug));
  EXPECT_FALSE(debug.cpu_enable_command_buffer);
  ASSERT_TRUE(*ApplyDebugFlag("--xlite_cpu_enable_command_buffer", debug));
  EXPECT_TRUE(debug.cpu_enable_command_buffer);
  absl::StatusOr<bool> bad = ApplyDebugFlag("--xlite_cpu_enable_command_buffer=maybe", debug);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "xlite_cpu_enable_command_buffer"))
      << bad.status();
}

TEST(CommandBufferConversion, DumpsTheSequenceBeforeAndAfterTheThunkPasses) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "command_buffer_dump";
  std::filesystem::remove_all(dir);
  const std::string text = R"(
HloModule chain
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] add(p, p)
  b = f32[4] multiply(a, p)
  ROOT c = f32[4] subtract(b, a)
}
)";
  CompileOptions options;
  options.debug.dump_to = dir.string();
  options.debug.disable_all_hlo_passes = true;  // one kernel per op
  absl::StatusOr<std::unique_ptr<runtime::Executable>> e =
      Compile(testing::ParseOrDie(text), options);
  ASSERT_TRUE(e.ok()) << e.status();
  std::string before, after;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    std::ifstream in(entry.path());
    std::stringstream ss;
    ss << in.rdbuf();
    if (absl::EndsWith(name, ".chain.thunk_sequence.txt")) before = ss.str();
    if (absl::EndsWith(name, ".chain.thunk_sequence_after_thunk_passes.txt")) after = ss.str();
  }
  EXPECT_TRUE(absl::StrContains(before, "kKernel")) << before;
  EXPECT_FALSE(absl::StrContains(before, "kCommandBuffer")) << before;
  EXPECT_TRUE(absl::StartsWith(after, "001: kCommandBuffer")) << after;
  EXPECT_TRUE(absl::StrContains(after, "commands=3")) << after;
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::cpu
