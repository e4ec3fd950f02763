// Asynchronous execution: side streams, the per-run async state, the start
// and done thunks, and async ops compiled end to end (against the
// interpreter, and the overlap they promise, without timing).
#include "xlite/cpu/async_thunks.h"

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "xlite/cpu/cpu_test_util.h"
#include "xlite/cpu/library_thunk.h"
#include "xlite/cpu/overlap_test_util.h"
#include "xlite/ir/elided_constants.h"
#include "xlite/runtime/task_runner.h"
#include "xlite/runtime/thread_pool.h"
#include "xlite/runtime/thunk_executor.h"
#include "xlite/support/npy.h"
#include "xlite/verify/verifier.h"

namespace xlite::cpu {
namespace {
namespace XLITE_UNITY_ID {

using testing::CompileText;
using testing::ExpectAgreesWithInterpreter;
using testing::ParseOrDie;

ThunkInfo Info(const char* name, const char* opcode = "test") {
  return ThunkInfo{name, opcode, ""};
}

// A thunk that calls `fn` and declares no uses.
std::unique_ptr<Thunk> FnThunk(const char* name, std::function<absl::Status()> fn) {
  return std::make_unique<LibraryThunk>(
      Thunk::Kind::kLibrary, Info(name), std::vector<BufferUse>{},
      [fn = std::move(fn)](absl::Span<void* const>) { return fn(); }, "fn");
}

struct Fixture {
  alignas(64) uint8_t memory[64] = {};
  uint8_t* bases[1] = {memory};
  BufferAllocations buffers{bases};
  runtime::ThunkExecutor executor;
  ExecuteParams params(AsyncExecuteState* async) {
    ExecuteParams p;
    p.buffers = &buffers;
    p.executor = &executor;
    p.async = async;
    return p;
  }
};

TEST(SideStreams, TasksInFlightNeverWaitForEachOther) {
  SideStreams streams;
  testing::TwoPartyBarrier barrier;
  std::mutex mu;
  std::condition_variable cv;
  int ok = 0, done = 0;
  for (int i = 0; i < 2; ++i) {
    streams.Launch([&] {
      const bool met = barrier.ArriveAndWait(std::chrono::seconds(60)).ok();
      std::lock_guard<std::mutex> lock(mu);
      ok += met;
      ++done;
      cv.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return done == 2; });
  EXPECT_EQ(ok, 2);
  EXPECT_EQ(streams.num_threads(), 2);
}

TEST(AsyncExecuteState, StartLaunchesOnASideStreamAndDoneWaits) {
  Fixture f;
  SideStreams streams;
  AsyncExecuteState state(streams, 1);
  std::thread::id ran_on;
  ThunkSequence work;
  work.push_back(FnThunk("w", [&] {
    ran_on = std::this_thread::get_id();
    return absl::OkStatus();
  }));
  AsyncStartThunk start(Info("start", "async-start"), 0, "s", std::move(work));
  std::unique_ptr<AsyncDoneThunk> done = MakeAsyncDone(Info("done", "async-done"), start);
  ASSERT_TRUE(start.Execute(f.params(&state)).ok());
  ASSERT_TRUE(done->Execute(f.params(&state)).ok());
  EXPECT_NE(ran_on, std::this_thread::get_id());
  EXPECT_EQ(CountAsyncSlots([&] {
              ThunkSequence s;
              s.push_back(std::make_unique<AsyncStartThunk>(Info("a"), 4, "s", ThunkSequence()));
              return s;
            }()),
            5);
  // Without async state the start runs the work itself.
  ran_on = {};
  ASSERT_TRUE(start.Execute(f.params(nullptr)).ok());
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_TRUE(done->Execute(f.params(nullptr)).ok());
}

TEST(AsyncExecuteState, AnErrorSurfacesAtTheDoneNamingIt) {
  Fixture f;
  SideStreams streams;
  AsyncExecuteState state(streams, 1);
  ThunkSequence work;
  work.push_back(FnThunk("w", [] { return absl::DataLossError("bad bytes"); }));
  AsyncStartThunk start(Info("start.1", "async-start"), 0, "s", std::move(work));
  std::unique_ptr<AsyncDoneThunk> done = MakeAsyncDone(Info("done.1", "async-done"), start);
  ASSERT_TRUE(start.Execute(f.params(&state)).ok());
  absl::Status s = done->Execute(f.params(&state));
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "async-done 'done.1'")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "'start.1' failed")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "bad bytes")) << s;
  // The slot is free again: the start may run once more (a loop body).
  ASSERT_TRUE(start.Execute(f.params(&state)).ok());
  EXPECT_FALSE(state.WaitAll().ok());  // collected by no done
  EXPECT_TRUE(state.WaitAll().ok());
}

TEST(AsyncExecuteState, MisuseIsAnInternalError) {
  Fixture f;
  SideStreams streams;
  AsyncExecuteState state(streams, 1);
  ThunkSequence work;
  work.push_back(FnThunk("w", [] { return absl::OkStatus(); }));
  AsyncStartThunk start(Info("start"), 0, "s", std::move(work));
  AsyncStartThunk out_of_range(Info("far"), 3, "s", ThunkSequence());
  std::unique_ptr<AsyncDoneThunk> done = MakeAsyncDone(Info("done"), start);
  EXPECT_TRUE(absl::IsInternal(done->Execute(f.params(&state))));  // nothing launched
  EXPECT_TRUE(absl::IsInternal(out_of_range.Execute(f.params(&state))));
  ASSERT_TRUE(start.Execute(f.params(&state)).ok());
  absl::Status twice = start.Execute(f.params(&state));
  EXPECT_TRUE(absl::IsInternal(twice)) << twice;
  EXPECT_TRUE(done->Execute(f.params(&state)).ok());
}

TEST(AsyncExecuteState, WaitAllWaitsForWorkInFlight) {
  Fixture f;
  SideStreams streams;
  std::mutex mu;
  std::condition_variable cv;
  bool release = false, finished = false;
  {
    AsyncExecuteState state(streams, 1);
    ThunkSequence work;
    work.push_back(FnThunk("w", [&] {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return release; });
      finished = true;
      return absl::OkStatus();
    }));
    AsyncStartThunk start(Info("start"), 0, "s", std::move(work));
    ASSERT_TRUE(start.Execute(f.params(&state)).ok());
    {
      std::lock_guard<std::mutex> lock(mu);
      EXPECT_FALSE(finished);
      release = true;
    }
    cv.notify_all();
    EXPECT_TRUE(state.WaitAll().ok());
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_TRUE(finished);
  }
}

// ---------------------------------------------------------------------------
// Compiled.

TEST(AsyncEmitter, AsyncStartRunsTheWrappedComputation) {
  const std::string thunks = ExpectAgreesWithInterpreter(R"(
HloModule m
wrapped {
  a = f32[64,16] parameter(0)
  b = f32[64,16] parameter(1)
  m = f32[64,16] multiply(a, b)
  ROOT e = f32[64,16] exponential(m)
}
ENTRY e {
  x = f32[64,16] parameter(0)
  y = f32[64,16] parameter(1)
  s = ((f32[64,16], f32[64,16]), f32[64,16], s32[]) async-start(x, y), calls=wrapped
  n = f32[64,16] negate(x)
  u = ((f32[64,16], f32[64,16]), f32[64,16], s32[]) async-update(s), calls=wrapped
  d = f32[64,16] async-done(u), calls=wrapped
  ROOT r = f32[64,16] add(d, n)
})");
  EXPECT_TRUE(absl::StrContains(thunks, "kAsyncStart")) << thunks;
  EXPECT_TRUE(absl::StrContains(thunks, "kAsyncDone")) << thunks;
  EXPECT_TRUE(absl::StrContains(thunks, "slot=0")) << thunks;
}

TEST(AsyncEmitter, OpStartSugarAndExecutionThreads) {
  ExpectAgreesWithInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[32,8] parameter(0)
  y = f32[8,16] parameter(1)
  s = ((f32[32,8], f32[8,16]), f32[32,16], u32[]) dot-start(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}, async_execution_thread="parallel_thread"
  d = f32[32,16] dot-done(s)
  ROOT t = f32[32,16] tanh(d)
})");
}

TEST(AsyncEmitter, AStartInsideALoopReusesItsSlot) {
  const std::string thunks = ExpectAgreesWithInterpreter(R"(
HloModule m
wrapped {
  a = f32[16] parameter(0)
  ROOT s = f32[16] sine(a)
}
cond {
  p = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[16] get-tuple-element(p), index=1
  st = ((f32[16]), f32[16], s32[]) async-start(v), calls=wrapped
  one = s32[] constant(1)
  j = s32[] add(i, one)
  d = f32[16] async-done(st), calls=wrapped
  ROOT t = (s32[], f32[16]) tuple(j, d)
}
ENTRY e {
  x = f32[16] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[16]) tuple(z, x)
  w = (s32[], f32[16]) while(t), condition=cond, body=body
  ROOT r = f32[16] get-tuple-element(w), index=1
})");
  EXPECT_TRUE(absl::StrContains(thunks, "kAsyncStart")) << thunks;
}

TEST(AsyncEmitter, CopyStartCopiesOnASideStream) {
  const std::string thunks = ExpectAgreesWithInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[32,8] parameter(0)
  n = f32[32,8] negate(x)
  cs = (f32[32,8], f32[32,8], u32[]) copy-start(n)
  a = f32[32,8] add(n, x)
  cd = f32[32,8] copy-done(cs)
  ROOT r = f32[32,8] multiply(cd, a)
})");
  EXPECT_TRUE(absl::StrContains(thunks, "kAsyncStart")) << thunks;
  EXPECT_TRUE(absl::StrContains(thunks, "kCopy")) << thunks;
}

// The scheduled overlap module: one rendezvous in the async computation, its
// partner on the main stream between the start and the done.
constexpr char kAsyncOverlap[] = R"(
HloModule overlap, is_scheduled=true
wrapped {
  p = f32[4] parameter(0)
  ROOT r = f32[4] custom-call(p), custom_call_target="xlite_test.rendezvous", api_version=API_VERSION_TYPED_FFI
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  start = ((f32[4]), f32[4], s32[]) async-start(x), calls=wrapped
  main = f32[4] custom-call(y), custom_call_target="xlite_test.rendezvous", api_version=API_VERSION_TYPED_FFI
  done = f32[4] async-done(start), calls=wrapped
  ROOT t = (f32[4], f32[4]) tuple(done, main)
})";

Literal F32s(std::vector<float> values) {
  Literal l(Shape::Array(PrimitiveType::F32, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) l.SetDouble(static_cast<int64_t>(i), values[i]);
  return l;
}

std::vector<Literal> OverlapArguments() {
  std::vector<Literal> args;
  args.push_back(F32s({1, 2, 3, 4}));
  args.push_back(F32s({5, 6, 7, 8}));
  return args;
}

std::vector<Literal> OneArgument() {
  std::vector<Literal> args;
  args.push_back(F32s({1, 2, 3, 4}));
  return args;
}

TEST(AsyncOverlap, SideStreamRunsWhileTheMainStreamWaits) {
  testing::RegisterOverlapTestTargets();
  testing::RendezvousTimeoutMs() = 60'000;  // never reached when they overlap
  absl::StatusOr<std::unique_ptr<runtime::Executable>> e = CompileText(kAsyncOverlap);
  ASSERT_TRUE(e.ok()) << e.status();
  for (runtime::ExecutorKind kind :
       {runtime::ExecutorKind::kSequential, runtime::ExecutorKind::kConcurrent}) {
    runtime::ExecuteOptions options;
    options.executor = kind;
    absl::StatusOr<Literal> got = (*e)->ExecuteLiterals(OverlapArguments(), options);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->tuple_elements()[0], OverlapArguments()[0]);
    EXPECT_EQ(got->tuple_elements()[1], OverlapArguments()[1]);
  }
}

TEST(AsyncOverlap, FailsByTimeoutWhenRunSerially) {
  testing::RegisterOverlapTestTargets();
  testing::RendezvousTimeoutMs() = 200;  // the partner can never come
  absl::StatusOr<std::unique_ptr<runtime::Executable>> e = CompileText(kAsyncOverlap);
  ASSERT_TRUE(e.ok()) << e.status();
  runtime::ExecuteOptions options;
  options.executor = runtime::ExecutorKind::kSequential;
  options.async = false;
  absl::StatusOr<Literal> got = (*e)->ExecuteLiterals(OverlapArguments(), options);
  testing::RendezvousTimeoutMs() = 60'000;
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(got.status())) << got.status();
  EXPECT_TRUE(absl::StrContains(got.status().message(), "no partner arrived")) << got.status();
}

TEST(AsyncOverlap, TwoAsyncOpsInFlightNeverWaitForEachOther) {
  // Both rendezvous calls are on side streams (one named stream, even):
  // each blocks until the other runs.
  testing::RegisterOverlapTestTargets();
  testing::RendezvousTimeoutMs() = 60'000;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> e = CompileText(R"(
HloModule two_async, is_scheduled=true
wrapped {
  p = f32[4] parameter(0)
  ROOT r = f32[4] custom-call(p), custom_call_target="xlite_test.rendezvous", api_version=API_VERSION_TYPED_FFI
}
wrapped.2 {
  p = f32[4] parameter(0)
  ROOT r = f32[4] custom-call(p), custom_call_target="xlite_test.rendezvous", api_version=API_VERSION_TYPED_FFI
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  s1 = ((f32[4]), f32[4], s32[]) async-start(x), calls=wrapped, async_execution_thread="side"
  s2 = ((f32[4]), f32[4], s32[]) async-start(y), calls=wrapped.2, async_execution_thread="side"
  d1 = f32[4] async-done(s1), calls=wrapped
  d2 = f32[4] async-done(s2), calls=wrapped.2
  ROOT t = (f32[4], f32[4]) tuple(d1, d2)
})");
  ASSERT_TRUE(e.ok()) << e.status();
  for (runtime::ExecutorKind kind :
       {runtime::ExecutorKind::kSequential, runtime::ExecutorKind::kConcurrent}) {
    runtime::ExecuteOptions options;
    options.executor = kind;
    absl::StatusOr<Literal> got = (*e)->ExecuteLiterals(OverlapArguments(), options);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->tuple_elements()[1], OverlapArguments()[1]);
  }
}

TEST(AsyncErrors, AnErrorInTheAsyncComputationSurfacesAtTheDone) {
  testing::RegisterOverlapTestTargets();
  absl::StatusOr<std::unique_ptr<runtime::Executable>> e = CompileText(R"(
HloModule m, is_scheduled=true
wrapped {
  p = f32[4] parameter(0)
  ROOT r = f32[4] custom-call(p), custom_call_target="xlite_test.fail", api_version=API_VERSION_TYPED_FFI
}
ENTRY e {
  x = f32[4] parameter(0)
  start.7 = ((f32[4]), f32[4], s32[]) async-start(x), calls=wrapped
  n = f32[4] negate(x)
  done.7 = f32[4] async-done(start.7), calls=wrapped
  ROOT t = (f32[4], f32[4]) tuple(done.7, n)
})");
  ASSERT_TRUE(e.ok()) << e.status();
  for (runtime::ExecutorKind kind :
       {runtime::ExecutorKind::kSequential, runtime::ExecutorKind::kConcurrent}) {
    runtime::ExecuteOptions options;
    options.executor = kind;
    absl::StatusOr<Literal> got = (*e)->ExecuteLiterals(OneArgument(), options);
    ASSERT_FALSE(got.ok());
    EXPECT_TRUE(absl::IsInvalidArgument(got.status())) << got.status();
    EXPECT_TRUE(absl::StrContains(got.status().message(), "async-done 'done.7'")) << got.status();
    EXPECT_TRUE(absl::StrContains(got.status().message(), "'start.7' failed")) << got.status();
    EXPECT_TRUE(absl::StrContains(got.status().message(), "failed on purpose")) << got.status();
  }
}

TEST(AsyncErrors, ExecuteWaitsForWorkInFlightWhenTheMainStreamFails) {
  testing::RegisterOverlapTestTargets();
  testing::RendezvousTimeoutMs() = 60'000;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> e = CompileText(R"(
HloModule m, is_scheduled=true
wrapped {
  p = f32[4] parameter(0)
  ROOT r = f32[4] custom-call(p), custom_call_target="xlite_test.after_fail", api_version=API_VERSION_TYPED_FFI
}
ENTRY e {
  x = f32[4] parameter(0)
  start = ((f32[4]), f32[4], s32[]) async-start(x), calls=wrapped
  f = f32[4] custom-call(x), custom_call_target="xlite_test.fail", api_version=API_VERSION_TYPED_FFI
  done = f32[4] async-done(start), calls=wrapped
  ROOT t = (f32[4], f32[4]) tuple(done, f)
})");
  ASSERT_TRUE(e.ok()) << e.status();
  for (runtime::ExecutorKind kind :
       {runtime::ExecutorKind::kSequential, runtime::ExecutorKind::kConcurrent}) {
    testing::Signal().Reset();
    runtime::ExecuteOptions options;
    options.executor = kind;
    absl::StatusOr<Literal> got = (*e)->ExecuteLiterals(OneArgument(), options);
    ASSERT_FALSE(got.ok());
    EXPECT_TRUE(absl::StrContains(got.status().message(), "failed on purpose")) << got.status();
    // The side stream's work had to wait for the failure; Execute returned
    // only after it finished.
    std::lock_guard<std::mutex> lock(testing::Signal().mu);
    EXPECT_TRUE(testing::Signal().after_fail_finished);
  }
}

// ---------------------------------------------------------------------------
// The corpus: every module with async ops that the interpreter runs agrees
// with it, with async work on side streams or serial, under both executors.

namespace fs = std::filesystem;

fs::path Corpus() {
  const char* env = std::getenv("XLITE_CORPUS");
  return env ? fs::path(env) : fs::path("../shared/corpus");
}

TEST(AsyncCorpus, ModulesWithAsyncOpsAgreeWithTheInterpreter) {
  if (!fs::exists(Corpus() / "xla")) {
    std::cerr << "\n*** SKIPPING the async corpus run: " << Corpus() << "/xla not found ***\n\n";
    GTEST_SKIP();
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(Corpus() / "xla")) {
    const std::string dir = entry.path().parent_path().filename().string();
    if (!entry.is_regular_file() || absl::StrContains(dir, "error")) continue;
    files.push_back(entry.path());
  }
  const fs::path lstm = Corpus() / "jax/lstm_scan/gpu/gpu_after_optimizations.txt";
  if (fs::exists(Corpus() / "jax")) {
    EXPECT_TRUE(fs::exists(lstm)) << lstm << " is named by this test and missing";
    files.push_back(lstm);
  }
  std::sort(files.begin(), files.end());
  int with_async = 0, eligible = 0, agree = 0;
  std::vector<std::string> notes;
  for (const fs::path& path : files) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    if (!absl::StrContains(text, "-start(") && !absl::StrContains(text, "-start.")) continue;
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, path.filename().string());
    if (!m.ok() || !VerifyModule(**m).ok()) {
      notes.push_back(path.filename().string() + ": invalid (xla_corpus_test lists why)");
      continue;
    }
    bool async = false, several_devices = false;
    for (const auto& c : (*m)->computations()) {
      for (const auto& i : c->instructions()) {
        async |= IsAsyncOpcode(i->opcode()) || i->opcode() == HloOpcode::kCopyStart;
        several_devices |= (HloOpcodeTraits(i->opcode()) & kCollective) != 0 ||
                           i->opcode() == HloOpcode::kSend || i->opcode() == HloOpcode::kRecv;
      }
    }
    if (!async) continue;
    ++with_async;
    const std::string name = path.filename().string();
    if (several_devices) {
      notes.push_back(name + ": several devices (collectives)");
      continue;
    }
    FillElidedConstants(**m);
    // A JAX program runs on its recorded inputs (random ones drive the LSTM
    // where float differences grow past the tolerance, async or not).
    absl::StatusOr<std::vector<Literal>> args = MakeFakeArguments(**m, FakeDataKind::kRandom, 0);
    const fs::path recorded = path.parent_path().parent_path() / "inputs.npz";
    if (absl::StrContains(path.string(), "/jax/") && fs::exists(recorded)) {
      absl::StatusOr<std::vector<std::pair<std::string, Literal>>> npz = ReadNpz(recorded.string());
      ASSERT_TRUE(npz.ok()) << npz.status();
      args = std::vector<Literal>();
      for (auto& [n, literal] : *npz) args->push_back(std::move(literal));
    }
    if (!args.ok()) continue;
    absl::StatusOr<Literal> expected = Evaluate(**m, *args);
    if (!expected.ok()) {
      notes.push_back(name + ": the interpreter does not run it: " +
                      std::string(expected.status().message().substr(0, 120)));
      continue;
    }
    ++eligible;
    CompileOptions compile;
    compile.debug.poison_dead_slices = true;
    absl::StatusOr<std::unique_ptr<runtime::Executable>> e = Compile(std::move(*m), compile);
    if (!e.ok()) {
      ADD_FAILURE() << name << ": " << e.status();
      continue;
    }
    bool all = true;
    for (int mode = 0; mode < 3; ++mode) {
      runtime::ExecuteOptions options;
      options.executor =
          mode == 1 ? runtime::ExecutorKind::kConcurrent : runtime::ExecutorKind::kSequential;
      options.async = mode != 2;
      absl::StatusOr<Literal> got = (*e)->ExecuteLiterals(*args, options);
      if (!got.ok()) {
        ADD_FAILURE() << name << " (mode " << mode << "): " << got.status();
        all = false;
        continue;
      }
      runtime::Comparison c = runtime::CompareLiterals(*got, *expected);
      EXPECT_TRUE(c.matches) << name << " (mode " << mode << "): " << c.ToString();
      all &= c.matches;
    }
    agree += all;
  }
  std::cout << "modules with async ops: " << with_async << "; run by the interpreter: " << eligible
            << "; agree (async on side streams and serial, both executors): " << agree << "\n";
  for (const std::string& n : notes) std::cout << "  not run: " << n << "\n";
  EXPECT_GT(eligible, 0);
  EXPECT_EQ(agree, eligible);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::cpu
