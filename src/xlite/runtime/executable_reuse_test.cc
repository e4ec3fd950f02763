// What Execute keeps between calls: pooled arenas (reused, never shared by
// calls at once, poisoned in --xlite_poison_dead_slices mode), argument
// checks against the precomputed parameter shapes, and the executor it
// picks for programs that run in order.
#include <atomic>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "xlite/compiler.h"
#include "xlite/runtime/executable.h"
#include "xlite/text/parser.h"

namespace xlite::runtime {
namespace {
namespace XLITE_UNITY_ID {

std::unique_ptr<Executable> CompileWith(const std::string& text, const DebugOptions& debug) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "test");
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return nullptr;
  CompileOptions options;
  options.debug = debug;
  absl::StatusOr<std::unique_ptr<Executable>> e = Compile(std::move(*m), options);
  EXPECT_TRUE(e.ok()) << e.status();
  return e.ok() ? std::move(*e) : nullptr;
}

// With every pass off each instruction is a kernel and a, b, c, d are
// temps in the run's arena; s32 keeps the arithmetic exact.
constexpr char kTemps[] = R"(
HloModule temps
ENTRY e {
  x = s32[16384] parameter(0)
  a = s32[16384] multiply(x, x)
  b = s32[16384] add(a, x)
  c = s32[16384] multiply(b, b)
  d = s32[16384] subtract(c, a)
  ROOT r = s32[16384] add(d, b)
})";

// s32 arithmetic wraps (as XLA's); unsigned here to wrap without UB.
int32_t Expected(int32_t value) {
  const uint32_t x = static_cast<uint32_t>(value);
  const uint32_t a = x * x, b = a + x;
  return static_cast<int32_t>(b * b - a + b);
}

DebugOptions PassesOff(bool poison) {
  DebugOptions debug;
  debug.disable_all_hlo_passes = true;
  debug.poison_dead_slices = poison;
  return debug;
}

std::unique_ptr<Buffer> S32Buffer(int32_t base) {
  Literal l(Shape::Array(PrimitiveType::S32, {16384}));
  for (int i = 0; i < 16384; ++i) l.SetInt(i, base + i);
  return *Buffer::FromLiteral(l);
}

// Runs kTemps on base + i; true when every element is right.
bool RunsRight(const Executable& e, int32_t base, bool literals) {
  if (literals) {
    Literal x(Shape::Array(PrimitiveType::S32, {16384}));
    for (int i = 0; i < 16384; ++i) x.SetInt(i, base + i);
    absl::StatusOr<Literal> out = e.ExecuteLiterals({x});
    if (!out.ok()) return false;
    for (int i = 0; i < 16384; ++i) {
      if (out->GetInt(i) != Expected(base + i)) return false;
    }
    return true;
  }
  std::unique_ptr<Buffer> x = S32Buffer(base);
  Buffer* args[] = {x.get()};
  absl::StatusOr<std::vector<std::unique_ptr<Buffer>>> out = e.Execute(args);
  if (!out.ok() || out->size() != 1) return false;
  absl::StatusOr<Literal> l = (*out)[0]->ToLiteral();
  if (!l.ok()) return false;
  for (int i = 0; i < 16384; ++i) {
    if (l->GetInt(i) != Expected(base + i)) return false;
  }
  return true;
}

TEST(ExecutableReuse, TheProgramWritesTemps) {
  auto e = CompileWith(kTemps, PassesOff(false));
  ASSERT_NE(e, nullptr);
  ASSERT_GE(e->assignment().temp_allocation(), 0);
  EXPECT_GT(e->bytes_per_run(), 16384 * 4 * 2);
}

TEST(ExecutableReuse, OneCallAtATimeReusesOneArena) {
  auto e = CompileWith(kTemps, PassesOff(false));
  ASSERT_NE(e, nullptr);
  for (int run = 0; run < 6; ++run) {
    // Different inputs each run: nothing of the last run's temps may show.
    EXPECT_TRUE(RunsRight(*e, 100 * run - 300, /*literals=*/run % 2 == 1)) << run;
  }
  EXPECT_EQ(e->arenas().allocations(), 1);
  EXPECT_EQ(e->arenas().cached(), 1);
  EXPECT_FALSE(e->arenas().poison());
}

void RunFromFourThreads(const Executable& e) {
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int it = 0; it < 200; ++it) {
        if (!RunsRight(e, 1000 * t + it, /*literals=*/it % 3 == 0)) ++failures;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  // Calls at once each had their own arena; later calls reused them.
  EXPECT_LE(e.arenas().cached(), ArenaPool::kSlots);
  EXPECT_LT(e.arenas().allocations(), 800);
}

TEST(ExecutableReuse, FourThreadsAtOnceGetTheirOwnArenas) {
  auto e = CompileWith(kTemps, PassesOff(false));
  ASSERT_NE(e, nullptr);
  RunFromFourThreads(*e);
}

bool ContainsPoisonThunk(const cpu::ThunkSequence& sequence) {
  for (const auto& t : sequence) {
    if (t->kind() == cpu::Thunk::Kind::kPoison) return true;
    for (const auto& [label, nested] : t->nested()) {
      if (ContainsPoisonThunk(*nested)) return true;  // command buffers, loops
    }
  }
  return false;
}

TEST(ExecutableReuse, PoisonModePoisonsReusedArenas) {
  auto e = CompileWith(kTemps, PassesOff(true));
  ASSERT_NE(e, nullptr);
  ASSERT_TRUE(ContainsPoisonThunk(e->thunks()));
  EXPECT_TRUE(e->arenas().poison());
  for (int run = 0; run < 4; ++run) EXPECT_TRUE(RunsRight(*e, 7 * run, run % 2 == 0)) << run;
  EXPECT_EQ(e->arenas().allocations(), 1);
  RunFromFourThreads(*e);
}

TEST(ExecutableReuse, ArgumentChecksStillRejectAfterASuccess) {
  auto e = CompileWith(R"(
HloModule m
ENTRY e {
  x = f32[2,3] parameter(0)
  ROOT y = f32[2,3] negate(x)
})",
                       DebugOptions{});
  ASSERT_NE(e, nullptr);
  auto good = *Buffer::Allocate(Shape::Array(PrimitiveType::F32, {2, 3}));
  Buffer* ok_args[] = {good.get()};
  ASSERT_TRUE(e->Execute(ok_args).ok());
  auto expect_error = [&](Buffer* b, absl::string_view what) {
    Buffer* args[] = {b};
    absl::Status s = e->Execute(args).status();
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), what)) << s;
  };
  auto s32 = *Buffer::Allocate(Shape::Array(PrimitiveType::S32, {2, 3}));
  expect_error(s32.get(), "element type");
  auto f32_3x2 = *Buffer::Allocate(Shape::Array(PrimitiveType::F32, {3, 2}));
  expect_error(f32_3x2.get(), "shape f32[3,2]");
  Shape column_major = Shape::Array(PrimitiveType::F32, {2, 3});
  column_major.set_layout(Layout{.minor_to_major = {0, 1}});
  auto transposed = *Buffer::Allocate(column_major);
  expect_error(transposed.get(), "layout");
  expect_error(nullptr, "null");
  // And the right one still runs, again.
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(e->Execute(ok_args).ok());
}

TEST(ExecutableReuse, ABufferPassedTwiceIsReadTwiceWithoutAliases) {
  auto e = CompileWith(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  ROOT z = f32[4] add(x, y)
})",
                       DebugOptions{});
  ASSERT_NE(e, nullptr);
  Literal l(Shape::Array(PrimitiveType::F32, {4}));
  for (int i = 0; i < 4; ++i) l.SetDouble(i, i);
  auto x = *Buffer::FromLiteral(l);
  Buffer* args[] = {x.get(), x.get()};
  auto out = e->Execute(args);
  ASSERT_TRUE(out.ok()) << out.status();
  absl::StatusOr<Literal> r = (*out)[0]->ToLiteral();
  ASSERT_TRUE(r.ok());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(r->GetDouble(i), 2 * i);
}

TEST(ExecutableReuse, ProgramsThatRunInOrderSkipTheConcurrentExecutor) {
  // A chain runs in order; independent 128 KiB kernels may overlap (unless
  // a command buffer records them: then they replay in order).
  auto chain = CompileWith(kTemps, PassesOff(false));
  ASSERT_NE(chain, nullptr);
  EXPECT_TRUE(chain->runs_in_order());
  DebugOptions without_command_buffers = PassesOff(false);
  without_command_buffers.cpu_enable_command_buffer = false;
  auto wide = CompileWith(R"(
HloModule m
ENTRY e {
  x = f32[32768] parameter(0)
  a = f32[32768] add(x, x)
  b = f32[32768] multiply(x, x)
  ROOT t = (f32[32768], f32[32768]) tuple(a, b)
})",
                          without_command_buffers);
  ASSERT_NE(wide, nullptr);
  EXPECT_FALSE(wide->runs_in_order());
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::runtime
