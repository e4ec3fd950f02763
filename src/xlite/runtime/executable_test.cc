// Executable through the C++ API: Execute on runtime::Buffer arguments with
// donation and copy protection, argument errors, concurrent calls, and
// denormal flushing.
#include "xlite/runtime/executable.h"

#include <cmath>
#include <cstring>
#include <thread>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "xlite/compiler.h"
#include "xlite/runtime/task_runner.h"
#include "xlite/runtime/thread_pool.h"
#include "xlite/text/parser.h"

namespace xlite::runtime {
namespace {
namespace XLITE_UNITY_ID {

std::unique_ptr<Executable> CompileOrDie(const std::string& text,
                                         const CompileOptions& options = {}) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "test");
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return nullptr;
  absl::StatusOr<std::unique_ptr<Executable>> e = Compile(std::move(*m), options);
  EXPECT_TRUE(e.ok()) << e.status();
  return e.ok() ? std::move(*e) : nullptr;
}

std::unique_ptr<Buffer> F32Buffer(std::vector<float> values) {
  Literal l(Shape::Array(PrimitiveType::F32, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) l.SetDouble(i, values[i]);
  absl::StatusOr<std::unique_ptr<Buffer>> b = Buffer::FromLiteral(l);
  EXPECT_TRUE(b.ok()) << b.status();
  return std::move(*b);
}

std::vector<float> Values(const Buffer& b) {
  absl::StatusOr<Literal> l = b.ToLiteral();
  EXPECT_TRUE(l.ok()) << l.status();
  std::vector<float> out;
  for (int64_t i = 0; l.ok() && i < l->element_count(); ++i) out.push_back(l->GetDouble(i));
  return out;
}

constexpr char kAddOne[] = R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  one = f32[] constant(1)
  b = f32[4] broadcast(one), dimensions={}
  ROOT y = f32[4] add(x, b)
})";

constexpr char kAliasedAddOne[] = R"(
HloModule m, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY e {
  x = f32[4] parameter(0)
  one = f32[] constant(1)
  b = f32[4] broadcast(one), dimensions={}
  ROOT y = f32[4] add(x, b)
})";

TEST(Executable, ReadOnlyArgumentsAreNotWritten) {
  auto e = CompileOrDie(kAddOne);
  ASSERT_NE(e, nullptr);
  auto x = F32Buffer({1, 2, 3, 4});
  Buffer* args[] = {x.get()};
  auto out = e->Execute(args);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ(Values(*(*out)[0]), (std::vector<float>{2, 3, 4, 5}));
  EXPECT_FALSE(x->is_deleted());
  EXPECT_EQ(Values(*x), (std::vector<float>{1, 2, 3, 4}));
}

TEST(Executable, DonatedArgumentBacksTheOutputAndIsDeleted) {
  auto e = CompileOrDie(kAliasedAddOne);
  ASSERT_NE(e, nullptr);
  auto x = F32Buffer({1, 2, 3, 4});
  void* memory = x->data();
  Buffer* args[] = {x.get()};
  auto out = e->Execute(args);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values(*(*out)[0]), (std::vector<float>{2, 3, 4, 5}));
  EXPECT_EQ((*out)[0]->data(), memory);
  EXPECT_TRUE(x->is_deleted());
  // Reading or donating it again is an error naming the argument.
  auto again = e->Execute(args);
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(absl::StrContains(again.status().message(), "argument 0")) << again.status();
}

TEST(Executable, MayAliasNotDonatedGetsCopyProtection) {
  auto e = CompileOrDie(kAliasedAddOne);
  ASSERT_NE(e, nullptr);
  auto x = F32Buffer({1, 2, 3, 4});
  Buffer* args[] = {x.get()};
  ExecuteOptions options;
  options.non_donatable_input_indices = {0};
  auto out = e->Execute(args, options);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values(*(*out)[0]), (std::vector<float>{2, 3, 4, 5}));
  EXPECT_NE((*out)[0]->data(), x->data());
  EXPECT_FALSE(x->is_deleted());
  EXPECT_EQ(Values(*x), (std::vector<float>{1, 2, 3, 4}));
}

TEST(Executable, MustAliasNotDonatedIsAnError) {
  auto e = CompileOrDie(R"(
HloModule m, input_output_alias={ {}: (0, {}, must-alias) }
ENTRY e {
  x = f32[4] parameter(0)
  ROOT y = f32[4] negate(x)
})");
  ASSERT_NE(e, nullptr);
  auto x = F32Buffer({1, 2, 3, 4});
  Buffer* args[] = {x.get()};
  ExecuteOptions options;
  options.non_donatable_input_indices = {0};
  auto out = e->Execute(args, options);
  ASSERT_FALSE(out.ok());
  EXPECT_FALSE(x->is_deleted());
}

TEST(Executable, OneBufferTwiceWithADonationIsAnError) {
  auto e = CompileOrDie(R"(
HloModule m, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  ROOT s = f32[4] add(x, y)
})");
  ASSERT_NE(e, nullptr);
  auto x = F32Buffer({1, 2, 3, 4});
  Buffer* args[] = {x.get(), x.get()};
  auto out = e->Execute(args);
  ASSERT_FALSE(out.ok());
  EXPECT_FALSE(x->is_deleted());
}

TEST(Executable, BadArgumentsAreErrorsNamingThem) {
  auto e = CompileOrDie(kAddOne);
  ASSERT_NE(e, nullptr);
  auto wrong = F32Buffer({1, 2, 3});
  Buffer* args[] = {wrong.get()};
  auto out = e->Execute(args);
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::StrContains(out.status().message(), "argument 0")) << out.status();
  auto none = e->Execute({});
  EXPECT_FALSE(none.ok());
  auto deleted = F32Buffer({1, 2, 3, 4});
  deleted->Delete();
  Buffer* args2[] = {deleted.get()};
  EXPECT_FALSE(e->Execute(args2).ok());
  EXPECT_FALSE(e->ExecuteLiterals({}).ok());
}

// After dynamic-padder a dynamic parameter takes its full bound-shaped
// literal (dynamic or not); the result comes back padded, in the
// entry_computation_layout's dynamic shape.
TEST(Executable, BoundedDynamicShapesRunAtTheirBounds) {
  auto e = CompileOrDie(R"(
HloModule m
ENTRY e {
  x = f32[<=4] parameter(0)
  n = s32[] parameter(1)
  y = f32[<=4] negate(x)
  ROOT s = f32[<=4] set-dimension-size(y, n), dimensions={0}
})");
  ASSERT_NE(e, nullptr);
  Shape bounded = Shape::Array(PrimitiveType::F32, {4});
  bounded.set_dynamic_dimension(0, true);
  for (const Shape& shape : {bounded, Shape::Array(PrimitiveType::F32, {4})}) {
    std::vector<Literal> args;
    args.emplace_back(shape);
    for (int i = 0; i < 4; ++i) args[0].SetDouble(i, i + 1);
    args.emplace_back(Shape::Scalar(PrimitiveType::S32));
    args[1].SetInt(0, 2);
    absl::StatusOr<Literal> out = e->ExecuteLiterals(args);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->shape().ToString(false), "f32[<=4]");
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out->GetDouble(i), -(i + 1)) << i;  // padding kept
  }
  std::vector<Literal> wrong;
  wrong.emplace_back(Shape::Array(PrimitiveType::F32, {3}));
  wrong.emplace_back(Shape::Scalar(PrimitiveType::S32));
  absl::StatusOr<Literal> out = e->ExecuteLiterals(wrong);
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::StrContains(out.status().message(), "argument 0 has shape f32[3]"))
      << out.status();
}

TEST(Executable, ArgumentsOfTheWrongKindAreErrorsNamingThem) {
  auto e = CompileOrDie(R"(
HloModule m
ENTRY e {
  x = f32[2,3] parameter(0)
  ROOT y = f32[2,3] negate(x)
})");
  ASSERT_NE(e, nullptr);
  auto expect_error = [](const absl::Status& s, absl::string_view what) {
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), what)) << s;
  };
  // Buffers: element type, layout, null.
  auto s32 = Buffer::Allocate(Shape::Array(PrimitiveType::S32, {2, 3}));
  ASSERT_TRUE(s32.ok());
  Buffer* by_type[] = {s32->get()};
  expect_error(e->Execute(by_type).status(), "element type");
  Shape column_major = Shape::Array(PrimitiveType::F32, {2, 3});
  column_major.set_layout(Layout{.minor_to_major = {0, 1}});
  auto transposed = Buffer::Allocate(column_major);
  ASSERT_TRUE(transposed.ok()) << transposed.status();
  Buffer* by_layout[] = {transposed->get()};
  expect_error(e->Execute(by_layout).status(), "layout");
  Buffer* null[] = {nullptr};
  expect_error(e->Execute(null).status(), "null");
  // Literals: count, element type, rank, a tuple for an array.
  Literal good(Shape::Array(PrimitiveType::F32, {2, 3}));
  expect_error(e->ExecuteLiterals({good, good}).status(), "takes 1 arguments");
  expect_error(e->ExecuteLiterals({Literal(Shape::Array(PrimitiveType::S32, {2, 3}))}).status(),
               "argument 0");
  expect_error(e->ExecuteLiterals({Literal(Shape::Array(PrimitiveType::F32, {6}))}).status(),
               "argument 0");
  expect_error(e->ExecuteLiterals({Literal(Shape::Tuple({good.shape()}))}).status(), "argument 0");
  EXPECT_TRUE(e->ExecuteLiterals({good}).ok());
}

TEST(Executable, MemoryARunCannotHaveIsResourceExhausted) {
  // 4 TB of temp memory (a sort, a library call, reads its operand from
  // memory: fusion cannot make the broadcast go away), then a 4 TB output:
  // Compile plans them, each run fails to allocate them.
  for (const char* text : {R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
lt {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT l = pred[] compare(x, y), direction=LT
}
ENTRY e {
  c = f32[] constant(1)
  b = f32[100000,100000,100] broadcast(c), dimensions={}
  s = f32[100000,100000,100] sort(b), dimensions={2}, to_apply=lt
  ROOT r = f32[] reduce(s, c), dimensions={0,1,2}, to_apply=add
})",
                           R"(
HloModule m
ENTRY e {
  c = f32[] constant(1)
  ROOT b = f32[100000,100000,100] broadcast(c), dimensions={}
})"}) {
    auto e = CompileOrDie(text);
    ASSERT_NE(e, nullptr);
    absl::Status literals = e->ExecuteLiterals({}).status();
    EXPECT_TRUE(absl::IsResourceExhausted(literals)) << literals;
    absl::Status buffers = e->Execute({}).status();
    EXPECT_TRUE(absl::IsResourceExhausted(buffers)) << buffers;
  }
}

TEST(Executable, ConcurrentExecuteOfOneExecutable) {
  auto e = CompileOrDie(R"(
HloModule m
ENTRY e {
  x = f32[1024] parameter(0)
  y = f32[1024] multiply(x, x)
  z = f32[1024] exponential(y)
  ROOT r = f32[1024] add(z, x)
})");
  ASSERT_NE(e, nullptr);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int it = 0; it < 20; ++it) {
        std::vector<float> v(1024);
        for (int i = 0; i < 1024; ++i) v[i] = 0.001f * (i + t + it);
        auto x = F32Buffer(v);
        Buffer* args[] = {x.get()};
        auto out = e->Execute(args);
        if (!out.ok()) {
          ++failures;
          continue;
        }
        std::vector<float> got = Values(*(*out)[0]);
        for (int i = 0; i < 1024; ++i) {
          const float want = std::exp(v[i] * v[i]) + v[i];
          if (std::abs(got[i] - want) > 1e-5f * std::abs(want)) {
            ++failures;
            break;
          }
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(Executable, ConcurrentExecuteSharingOneThreadPool) {
  // Large enough that every kernel splits into partitions on the pool.
  auto e = CompileOrDie(R"(
HloModule m
ENTRY e {
  x = f32[262144] parameter(0)
  y = f32[262144] multiply(x, x)
  ROOT r = f32[262144] add(y, x)
})");
  ASSERT_NE(e, nullptr);
  ThreadPool pool(3);
  PoolTaskRunner runner(pool);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Literal x(Shape::Array(PrimitiveType::F32, {262144}));
      for (int64_t i = 0; i < x.element_count(); ++i) x.SetDouble(i, 1e-3 * ((i + t) % 1000));
      ExecuteOptions options;
      options.runner = &runner;
      for (int it = 0; it < 5; ++it) {
        absl::StatusOr<Literal> r = e->ExecuteLiterals({x}, options);
        if (!r.ok()) {
          ++failures;
          continue;
        }
        for (int64_t i = 0; i < x.element_count(); i += 97) {
          const double v = x.GetDouble(i);
          if (std::abs(r->GetDouble(i) - (v * v + v)) > 1e-5) {
            ++failures;
            break;
          }
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(Executable, DenormalsAreFlushedByDefault) {
  auto e = CompileOrDie(R"(
HloModule m
ENTRY e {
  x = f32[1] parameter(0)
  ROOT y = f32[1] add(x, x)
})");
  ASSERT_NE(e, nullptr);
  Literal x(Shape::Array(PrimitiveType::F32, {1}));
  x.SetDouble(0, 1e-39);  // a denormal
  auto flushed = e->ExecuteLiterals({x});
  ASSERT_TRUE(flushed.ok()) << flushed.status();
  EXPECT_EQ(flushed->GetDouble(0), 0.0);
  ExecuteOptions options;
  options.flush_denormals = false;
  auto kept = e->ExecuteLiterals({x}, options);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_NEAR(kept->GetDouble(0), 2e-39, 1e-44);
}

TEST(Executable, DenormalsAreFlushedOnPoolThreadsToo) {
  auto e = CompileOrDie(R"(
HloModule m
ENTRY e {
  x = f32[262144] parameter(0)
  ROOT y = f32[262144] add(x, x)
})");
  ASSERT_NE(e, nullptr);
  Literal x(Shape::Array(PrimitiveType::F32, {262144}));
  for (int64_t i = 0; i < x.element_count(); ++i) x.SetDouble(i, 1e-39);
  ThreadPool pool(4);
  PoolTaskRunner runner(pool);
  for (bool flush : {true, false}) {
    ExecuteOptions options;
    options.runner = &runner;
    options.flush_denormals = flush;
    auto r = e->ExecuteLiterals({x}, options);
    ASSERT_TRUE(r.ok()) << r.status();
    int64_t zeros = 0;
    for (int64_t i = 0; i < r->element_count(); ++i) zeros += r->GetDouble(i) == 0.0;
    EXPECT_EQ(zeros, flush ? r->element_count() : 0) << "flush=" << flush;
  }
}

TEST(Executable, ProfileTimesEveryThunk) {
  CompileOptions compile;
  compile.debug.profile = true;  // --xlite_profile: no command buffers, each kernel timed
  auto e = CompileOrDie(kAddOne, compile);
  ASSERT_NE(e, nullptr);
  Literal x(Shape::Array(PrimitiveType::F32, {4}));
  ThunkProfile profile;
  ExecuteOptions options;
  options.profile = &profile;
  ASSERT_TRUE(e->ExecuteLiterals({x}, options).ok());
  ASSERT_FALSE(profile.Sorted().empty());
  EXPECT_TRUE(absl::StrContains(profile.ToString(), "kKernel")) << profile.ToString();
}

TEST(Executable, ConcurrentExecuteMayShareOneProfile) {
  auto e = CompileOrDie(kAddOne);
  ASSERT_NE(e, nullptr);
  ThunkProfile profile;
  constexpr int kThreads = 4, kRuns = 200;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      Literal x(Shape::Array(PrimitiveType::F32, {4}));
      ExecuteOptions options;
      options.profile = &profile;
      for (int it = 0; it < kRuns; ++it) failures += !e->ExecuteLiterals({x}, options).ok();
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  std::vector<ThunkProfile::Entry> entries = profile.Sorted();
  ASSERT_FALSE(entries.empty());
  for (const ThunkProfile::Entry& entry : entries) EXPECT_EQ(entry.calls, kThreads * kRuns);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::runtime
