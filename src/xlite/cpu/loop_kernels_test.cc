#include "xlite/cpu/loop_kernels.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "xlite/cpu/control_flow_thunks.h"
#include "xlite/cpu/copy_thunk.h"
#include "xlite/cpu/cpu_test_util.h"
#include "xlite/support/flags.h"

namespace xlite::cpu {
namespace {
namespace XLITE_UNITY_ID {

struct Compiled {
  std::string thunks;
  Literal result;
};

// Compiles `text` with whole-loop kernels on or off and runs it on seeded
// random arguments.
Compiled CompileAndRun(const std::string& text, bool loop_kernels, uint64_t seed = 5) {
  Compiled out;
  std::unique_ptr<HloModule> m = testing::ParseOrDie(text);
  if (m == nullptr) return out;
  absl::StatusOr<std::vector<Literal>> args = MakeFakeArguments(*m, FakeDataKind::kRandom, seed);
  EXPECT_TRUE(args.ok()) << args.status();
  if (!args.ok()) return out;
  CompileOptions options;
  options.debug.poison_dead_slices = true;
  options.debug.cpu_enable_loop_kernels = loop_kernels;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> e = Compile(std::move(m), options);
  EXPECT_TRUE(e.ok()) << e.status();
  if (!e.ok()) return out;
  out.thunks = (*e)->thunks().ToString();
  absl::StatusOr<Literal> got = (*e)->ExecuteLiterals(*args);
  EXPECT_TRUE(got.ok()) << got.status();
  if (got.ok()) out.result = std::move(*got);
  return out;
}

// Converted when expected, bit-identical to the thunks it replaces, and in
// agreement with the interpreter.
void ExpectLoopKernel(const std::string& text, bool converted) {
  Compiled on = CompileAndRun(text, true);
  Compiled off = CompileAndRun(text, false);
  ASSERT_FALSE(on.thunks.empty());
  ASSERT_FALSE(off.thunks.empty());
  EXPECT_EQ(absl::StrContains(on.thunks, "_loop "), converted) << on.thunks;
  EXPECT_FALSE(absl::StrContains(off.thunks, "_loop ")) << off.thunks;
  EXPECT_TRUE(on.result == off.result) << on.thunks << "\n" << off.thunks;
  testing::ExpectAgreesWithInterpreter(text);
}

// The shape of jax.lax.scan: a counter, a dynamic-slice of the xs, a little
// math on the carry, a dynamic-update-slice into the ys.
constexpr char kScan[] = R"(
HloModule scan
cond {
  s = (s32[], f32[4], f32[100,4], f32[100,4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(100)), direction=LT
}
body {
  s = (s32[], f32[4], f32[100,4], f32[100,4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  c = f32[4] get-tuple-element(s), index=1
  xs = f32[100,4] get-tuple-element(s), index=2
  ys = f32[100,4] get-tuple-element(s), index=3
  zero = s32[] constant(0)
  x = f32[1,4] dynamic-slice(xs, i, zero), dynamic_slice_sizes={1,4}
  xr = f32[4] reshape(x)
  half = f32[4] broadcast(f32[] constant(0.5)), dimensions={}
  m = f32[4] multiply(c, half)
  c1 = f32[4] add(m, xr)
  t = f32[4] tanh(c1)
  y = f32[1,4] reshape(t)
  ys1 = f32[100,4] dynamic-update-slice(ys, y, i, zero)
  i1 = s32[] add(i, s32[] constant(1))
  ROOT r = (s32[], f32[4], f32[100,4], f32[100,4]) tuple(i1, c1, xs, ys1)
}
ENTRY e {
  c0 = f32[4] parameter(0)
  xs = f32[100,4] parameter(1)
  ys = f32[100,4] broadcast(f32[] constant(0)), dimensions={}
  init = (s32[], f32[4], f32[100,4], f32[100,4]) tuple(s32[] constant(0), c0, xs, ys)
  w = (s32[], f32[4], f32[100,4], f32[100,4]) while(init), condition=cond, body=body
  c = f32[4] get-tuple-element(w), index=1
  y = f32[100,4] get-tuple-element(w), index=3
  ROOT out = (f32[4], f32[100,4]) tuple(c, y)
}
)";

TEST(LoopKernels, AScanRunsAsOneKernel) {
  ExpectLoopKernel(kScan, true);
  Compiled on = CompileAndRun(kScan, true);
  EXPECT_FALSE(absl::StrContains(on.thunks, "kWhile")) << on.thunks;
}

// in_place_dynamic_update_slice_fusion's loop: each step scatters one element
// of a large carried buffer into itself. In place, the scatter's work is its
// one update, so it never splits over threads and the loop is one kernel.
TEST(LoopKernels, ALoopOfInPlaceScattersIsOneKernel) {
  ExpectLoopKernel(R"(
HloModule scatters
keep_update { a = f32[] parameter(0)  ROOT b = f32[] parameter(1) }
cond {
  s = (s32[], f32[100000]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(50)), direction=LT
}
body {
  s = (s32[], f32[100000]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  xs = f32[100000] get-tuple-element(s), index=1
  j = s32[] multiply(i, s32[] constant(7))
  x = f32[1] dynamic-slice(xs, j), dynamic_slice_sizes={1}
  v = f32[] reshape(x)
  at = s32[1] reshape(i)
  ys = f32[100000] scatter(xs, at, v), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=0, indices_are_sorted=true, unique_indices=true, to_apply=keep_update
  ROOT t = (s32[], f32[100000]) tuple(s32[] add(i, s32[] constant(1)), ys)
}
ENTRY e {
  x = f32[100000] parameter(0)
  w = (s32[], f32[100000]) while((s32[], f32[100000]) tuple(s32[] constant(0), x)), condition=cond, body=body
  ROOT y = f32[100000] get-tuple-element(w), index=1
})",
                   true);
}

TEST(LoopKernels, ANestedLoopIsOneKernelToo) {
  ExpectLoopKernel(R"(
HloModule nested
inner_cond {
  s = (s32[], f32[8]) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(j, s32[] constant(3)), direction=LT
}
inner_body {
  s = (s32[], f32[8]) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  v = f32[8] get-tuple-element(s), index=1
  v1 = f32[8] sine(v)
  ROOT t = (s32[], f32[8]) tuple(s32[] add(j, s32[] constant(1)), v1)
}
cond {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(7)), direction=LT
}
body {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[8] get-tuple-element(s), index=1
  inner = (s32[], f32[8]) while((s32[], f32[8]) tuple(s32[] constant(0), v)), condition=inner_cond, body=inner_body
  v1 = f32[8] get-tuple-element(inner), index=1
  v2 = f32[8] add(v1, v)
  ROOT t = (s32[], f32[8]) tuple(s32[] add(i, s32[] constant(1)), v2)
}
ENTRY e {
  x = f32[8] parameter(0)
  ROOT w = (s32[], f32[8]) while((s32[], f32[8]) tuple(s32[] constant(0), x)), condition=cond, body=body
})",
                   true);
}

TEST(LoopKernels, ConditionalsByPredAndByIndexIncludingOutOfRange) {
  const std::string branches = testing::kThreeBranches;
  for (const char* selector :
       {"s32[] constant(1)", "s32[] constant(7)", "s32[] constant(-1)", "s32[] constant(0)"}) {
    SCOPED_TRACE(selector);
    ExpectLoopKernel(absl::StrCat("HloModule c\n", branches, R"(
ENTRY e {
  x = f32[4] parameter(0)
  k = )",
                                  selector, R"(
  ROOT c = f32[4] conditional(k, x, x, x), branch_computations={b0, b1, b2}
})"),
                     true);
  }
  for (const char* selector : {"true", "false"}) {
    SCOPED_TRACE(selector);
    ExpectLoopKernel(absl::StrCat("HloModule c\n", branches, R"(
ENTRY e {
  x = f32[4] parameter(0)
  k = pred[] constant()",
                                  selector, R"()
  ROOT c = f32[4] conditional(k, x, x), true_computation=b0, false_computation=b2
})"),
                     true);
  }
}

TEST(LoopKernels, LibraryCallsAndLargeWorkKeepTheThunks) {
  // A dot is a library call: the loop stays a while of thunks.
  ExpectLoopKernel(R"(
HloModule dot_loop
cond {
  s = (s32[], f32[8,8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(3)), direction=LT
}
body {
  s = (s32[], f32[8,8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  m = f32[8,8] get-tuple-element(s), index=1
  d = f32[8,8] dot(m, m), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (s32[], f32[8,8]) tuple(s32[] add(i, s32[] constant(1)), d)
}
ENTRY e {
  x = f32[8,8] parameter(0)
  ROOT w = (s32[], f32[8,8]) while((s32[], f32[8,8]) tuple(s32[] constant(0), x)), condition=cond, body=body
})",
                   false);
  // Work that splits over threads is worth its dispatch.
  ExpectLoopKernel(R"(
HloModule big_loop
cond {
  s = (s32[], f32[1048576]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(2)), direction=LT
}
body {
  s = (s32[], f32[1048576]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[1048576] get-tuple-element(s), index=1
  ROOT t = (s32[], f32[1048576]) tuple(s32[] add(i, s32[] constant(1)), f32[1048576] sine(v))
}
ENTRY e {
  x = f32[1048576] parameter(0)
  ROOT w = (s32[], f32[1048576]) while((s32[], f32[1048576]) tuple(s32[] constant(0), x)), condition=cond, body=body
})",
                   false);
}

// The table: read-only slices first (operands), each slice once, written
// ones after; a while reads its predicate.
TEST(LoopKernels, TheTableListsEachSliceOnceReadOnlyFirst) {
  auto slice = [](int64_t offset) { return BufferSlice{0, offset, 4}; };
  ThunkSequence condition;
  condition.push_back(
      std::make_unique<KernelThunk>(ThunkInfo{"lt"}, std::vector{slice(0), slice(8)}, 1, 1));
  ThunkSequence body;
  body.push_back(std::make_unique<KernelThunk>(ThunkInfo{"add"},
                                               std::vector{slice(0), slice(16), slice(0)}, 2, 1));
  body.push_back(std::make_unique<CopyThunk>(ThunkInfo{"copy"}, slice(16), slice(24)));
  WhileThunk loop(ThunkInfo{"w"}, std::move(condition), slice(8), std::move(body));
  int64_t next_spec = 0;
  std::optional<LoopKernel> kernel =
      BuildLoopKernel(loop, [&](const KernelThunk&) { return next_spec++; });
  ASSERT_TRUE(kernel.has_value());
  // slice 16 only read; 0, 8 and 24 written.
  ASSERT_EQ(kernel->buffers.size(), 4u);
  EXPECT_EQ(kernel->num_operands, 1);
  EXPECT_EQ(kernel->buffers[0], slice(16));
  EXPECT_EQ(kernel->callees.size(), 2u);
  const codegen::KernelProgram& program = *kernel->program;
  ASSERT_EQ(program.steps.size(), 1u);
  EXPECT_EQ(program.steps[0].op, codegen::KernelProgramStep::Op::kWhile);
  ASSERT_EQ(program.steps[0].nested.size(), 2u);
  EXPECT_EQ(program.steps[0].nested[1].size(), 2u);

  // No two slices meet: each is a group of its own.
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(program.group_base[i], i);
    EXPECT_EQ(program.group_offset[i], 0);
  }

  // An unknown kernel (no spec) disqualifies the loop.
  EXPECT_FALSE(BuildLoopKernel(loop, [](const KernelThunk&) { return int64_t{-1}; }).has_value());
}

// Slices of one allocation whose bytes meet, directly or through another,
// are one group addressed from its lowest slice; other allocations never meet.
TEST(LoopKernels, OverlappingSlicesFormOneGroup) {
  ThunkSequence condition;
  condition.push_back(std::make_unique<KernelThunk>(
      ThunkInfo{"lt"}, std::vector{BufferSlice{1, 0, 4}, BufferSlice{1, 8, 1}}, 1, 1));
  ThunkSequence body;
  body.push_back(std::make_unique<KernelThunk>(
      ThunkInfo{"k"}, std::vector{BufferSlice{0, 16, 8}, BufferSlice{0, 20, 8}}, 1, 1));
  body.push_back(
      std::make_unique<CopyThunk>(ThunkInfo{"c"}, BufferSlice{0, 24, 8}, BufferSlice{2, 16, 8}));
  WhileThunk loop(ThunkInfo{"w"}, std::move(condition), BufferSlice{1, 8, 1}, std::move(body));
  int64_t next_spec = 0;
  std::optional<LoopKernel> kernel =
      BuildLoopKernel(loop, [&](const KernelThunk&) { return next_spec++; });
  ASSERT_TRUE(kernel.has_value());
  const codegen::KernelProgram& program = *kernel->program;
  auto index = [&](BufferSlice s) {
    for (size_t i = 0; i < kernel->buffers.size(); ++i) {
      if (kernel->buffers[i] == s) return static_cast<int64_t>(i);
    }
    return int64_t{-1};
  };
  const int64_t a = index({0, 16, 8}), b = index({0, 20, 8}), c = index({0, 24, 8});
  const int64_t other = index({2, 16, 8}), counter = index({1, 0, 4});
  ASSERT_GE(std::min({a, b, c, other, counter}), 0);
  EXPECT_EQ(program.group_base[a], a);
  EXPECT_EQ(program.group_base[b], a);
  EXPECT_EQ(program.group_offset[b], 4);
  EXPECT_EQ(program.group_base[c], a);  // meets b, not a
  EXPECT_EQ(program.group_offset[c], 8);
  EXPECT_EQ(program.group_base[other], other);
  EXPECT_EQ(program.group_base[counter], counter);
}

TEST(LoopKernels, TheFlagTurnsThemOff) {
  DebugOptions debug;
  EXPECT_TRUE(debug.cpu_enable_loop_kernels);
  ASSERT_TRUE(*ApplyDebugFlag("--xlite_cpu_enable_loop_kernels=false", debug));
  EXPECT_FALSE(debug.cpu_enable_loop_kernels);
  EXPECT_FALSE(ApplyDebugFlag("--xlite_cpu_enable_loop_kernels=perhaps", debug).ok());
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::cpu
