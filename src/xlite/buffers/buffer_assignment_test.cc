#include "xlite/buffers/buffer_assignment.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "xlite/buffers/buffers_test_util.h"
#include "xlite/schedule/schedule_module.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

using buffers_test::Parse;
using buffers_test::Plan;
using buffers_test::Planned;

TEST(BufferAssignment, IncrementUpdatesItsParameterInPlace) {
  // The aliasing document's example: one buffer for p and out.
  Planned p = Plan(R"(
HloModule increment, input_output_alias={ {}: (0, {}) }

ENTRY entry {
  p = f32[] parameter(0)
  c = f32[] constant(1)
  ROOT out = f32[] add(p, c)
}
)");
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();
  EXPECT_EQ(p.Slice("p"), p.Slice("out"));
  const BufferAllocation& a = p.AllocationOf("out");
  EXPECT_EQ(a.kind(), AllocationKind::kParameter);
  EXPECT_EQ(a.parameter_number(), 0);
  EXPECT_TRUE(a.maybe_live_out());
  EXPECT_EQ(a.size(), 4);
  EXPECT_EQ(p.AllocationOf("c").kind(), AllocationKind::kConstant);
  EXPECT_EQ(p.plan->assignment->allocations().size(), 2u);  // the parameter, the constant
}

TEST(BufferAssignment, WithoutAliasTheOutputHasItsOwnAllocation) {
  Planned p = Plan(R"(
HloModule increment

ENTRY entry {
  p = f32[] parameter(0)
  c = f32[] constant(1)
  ROOT out = f32[] add(p, c)
}
)");
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();
  EXPECT_NE(p.Slice("p").allocation, p.Slice("out").allocation);
  EXPECT_EQ(p.AllocationOf("out").kind(), AllocationKind::kOutput);
  EXPECT_TRUE(p.AllocationOf("out").maybe_live_out());
  EXPECT_FALSE(p.AllocationOf("p").maybe_live_out());
}

// A chain of 1 KiB temporaries a..d, then the result r = `root`.
std::string Chain(absl::string_view root) {
  return absl::StrCat(R"(
HloModule chain, is_scheduled=true

ENTRY e {
  x = f32[256] parameter(0)
  a = f32[256] negate(x)
  b = f32[256] exponential(a)
  c = f32[256] negate(b)
  d = f32[256] exponential(c)
  ROOT r = )",
                      root, "\n}\n");
}

// The same chain of reverses: no op reads element i for element i, so no
// temporary takes its operand's bytes where it is made.
std::string ReverseChain() {
  return R"(
HloModule chain, is_scheduled=true

ENTRY e {
  x = f32[256] parameter(0)
  a = f32[256] reverse(x), dimensions={0}
  b = f32[256] reverse(a), dimensions={0}
  c = f32[256] reverse(b), dimensions={0}
  d = f32[256] reverse(c), dimensions={0}
  ROOT r = f32[4] slice(d), slice={[0:4]}
}
)";
}

TEST(BufferAssignment, TemporariesShareBytesWhenTheirLifetimesDoNot) {
  Planned p = Plan(ReverseChain());
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();
  const BufferAssignment& a = *p.plan->assignment;
  ASSERT_GE(a.temp_allocation(), 0);
  // a..d: two live at a time (an operand and its user) of 1 KiB each (the
  // 16-byte output holds none of them).
  EXPECT_EQ(a.allocations()[a.temp_allocation()].size(), 2048);
  EXPECT_EQ(p.Slice("a").offset, p.Slice("c").offset);
  EXPECT_NE(p.Slice("a").offset, p.Slice("b").offset);
  EXPECT_EQ(p.plan->check->temp_lower_bound_bytes, 2048);
}

// A multi-output fusion read only through get-tuple-elements has no tuple
// table at run time (its kernel writes the elements): its top-level value
// takes no bytes. A tuple that is the result, or read whole, keeps its table.
TEST(BufferAssignment, AMultiOutputFusionReadByElementsHasNoTable) {
  constexpr char kText[] = R"(
HloModule m
f {
  a = f32[64] parameter(0)
  ROOT t = (f32[64], f32[64]) tuple(f32[64] negate(a), f32[64] exponential(a))
}
ENTRY e {
  p = f32[64] parameter(0)
  m = (f32[64], f32[64]) fusion(p), kind=kLoop, calls=f
  n = f32[64] get-tuple-element(m), index=0
  x = f32[64] get-tuple-element(m), index=1
  ROOT r = f32[64] add(n, x)
})";
  Planned p = Plan(kText);
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();
  EXPECT_EQ(p.Slice("m").size, 0);
  EXPECT_EQ(p.Slice("m", {0}).size, 256);
  // Two 256-byte elements, no table (the result has its own allocation).
  const BufferAssignment& a = *p.plan->assignment;
  ASSERT_GE(a.temp_allocation(), 0);
  EXPECT_EQ(a.allocations()[a.temp_allocation()].size(), 512);

  const absl::string_view head =
      absl::string_view(kText).substr(0, absl::string_view(kText).find("  m = "));
  Planned whole = Plan(absl::StrCat(head, R"(  m = (f32[64], f32[64]) fusion(p), kind=kLoop, calls=f
  ROOT r = ((f32[64], f32[64])) tuple(m)
})"));
  ASSERT_TRUE(whole.plan.ok()) << whole.plan.status();
  EXPECT_EQ(whole.Slice("m").size, 16);
  Planned root =
      Plan(absl::StrCat(head, R"(  ROOT m = (f32[64], f32[64]) fusion(p), kind=kLoop, calls=f
  n = f32[64] get-tuple-element(m), index=0
})"));
  ASSERT_TRUE(root.plan.ok()) << root.plan.status();
  EXPECT_EQ(root.Slice("m").size, 16);
}

// As XLA's heap simulator: a temporary made by an elementwise op (or a loop
// fusion) reading element i for element i takes the bytes of an operand that
// dies there, so the kernel runs in place; the checker accepts the overlap at
// that one time and counts those bytes once.
TEST(BufferAssignment, TemporariesTakeTheBytesOfAnOperandThatDiesWhereTheyAreMade) {
  Planned p = Plan(Chain("f32[4] slice(d), slice={[0:4]}"));
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();
  const BufferAssignment& a = *p.plan->assignment;
  ASSERT_GE(a.temp_allocation(), 0);
  EXPECT_EQ(a.allocations()[a.temp_allocation()].size(), 1024);
  for (const char* name : {"b", "c", "d"}) EXPECT_EQ(p.Slice(name).offset, p.Slice("a").offset);
  EXPECT_EQ(p.plan->check->temp_lower_bound_bytes, 1024);
  // A reverse in the middle reads element n-1-i: c takes b's bytes, b not a's.
  Planned mixed = Plan(R"(
HloModule chain, is_scheduled=true

ENTRY e {
  x = f32[256] parameter(0)
  a = f32[256] negate(x)
  b = f32[256] reverse(a), dimensions={0}
  c = f32[256] exponential(b)
  ROOT r = f32[4] slice(c), slice={[0:4]}
}
)");
  ASSERT_TRUE(mixed.plan.ok()) << mixed.plan.status();
  EXPECT_NE(mixed.Slice("a").offset, mixed.Slice("b").offset);
  EXPECT_EQ(mixed.Slice("b").offset, mixed.Slice("c").offset);
  EXPECT_EQ(mixed.plan->check->temp_lower_bound_bytes, 2048);
  // A fusion reading a's elements directly and, reversed, through a tuple
  // operand: every read must allow it, so f keeps bytes of its own.
  Planned tupled = Plan(R"(
HloModule m, is_scheduled=true

fused {
  p0 = f32[256] parameter(0)
  p1 = (f32[256]) parameter(1)
  g = f32[256] get-tuple-element(p1), index=0
  r = f32[256] reverse(g), dimensions={0}
  ROOT s = f32[256] add(p0, r)
}

ENTRY e {
  x = f32[256] parameter(0)
  a = f32[256] negate(x)
  t = (f32[256]) tuple(a)
  f = f32[256] fusion(a, t), kind=kLoop, calls=fused
  ROOT o = f32[4] slice(f), slice={[0:4]}
}
)");
  ASSERT_TRUE(tupled.plan.ok()) << tupled.plan.status();
  EXPECT_NE(tupled.Slice("a").offset, tupled.Slice("f").offset);
}

TEST(BufferAssignment, TemporariesUseAnOutputsAllocationBeforeTheOutputIsMade) {
  Planned p = Plan(Chain("f32[256] sqrt(d)"));
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();  // the checker agrees
  const BufferAssignment& a = *p.plan->assignment;
  // a and c live in r's allocation before r is written; b and d share the
  // heap. Total 2 KiB where a heap apart from the output would need 3.
  EXPECT_EQ(p.AllocationOf("r").kind(), AllocationKind::kOutput);
  EXPECT_EQ(p.Slice("a").allocation, p.Slice("r").allocation);
  EXPECT_EQ(p.Slice("c").allocation, p.Slice("r").allocation);
  ASSERT_GE(a.temp_allocation(), 0);
  EXPECT_EQ(p.Slice("b").allocation, a.temp_allocation());
  EXPECT_EQ(a.allocations()[a.temp_allocation()].size(), 1024);
  EXPECT_EQ(p.Slice("b").offset, p.Slice("d").offset);
}

TEST(BufferAssignment, NoTemporaryLivesInAnOutputWhileTheOutputIsLive) {
  Planned p = Plan(R"(
HloModule m, is_scheduled=true

ENTRY e {
  x = f32[256] parameter(0)
  r = f32[256] negate(x)
  a = f32[256] exponential(r)
  b = f32[256] add(a, r)
  ROOT t = (f32[256], f32[256]) tuple(r, b)
}
)");
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();
  // r is an output from its start, so a (live after it) cannot use its
  // bytes; b is an output too and a is read by b.
  const BufferAssignment& a = *p.plan->assignment;
  ASSERT_GE(a.temp_allocation(), 0);
  EXPECT_EQ(p.Slice("a").allocation, a.temp_allocation());
}

TEST(BufferAssignment, WhileStateConditionalResultsAndAsyncPairsAreColocated) {
  Planned p = Plan(R"(
HloModule m

cond {
  cp = (s32[], f32[4]) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(ci, n), direction=LT
}

body {
  bp = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x = f32[4] get-tuple-element(bp), index=1
  x1 = f32[4] negate(x)
  ROOT r = (s32[], f32[4]) tuple(i1, x1)
}

yes {
  ya = f32[4] parameter(0)
  ROOT yn = f32[4] negate(ya)
}

no {
  na = f32[4] parameter(0)
  ROOT ne = f32[4] exponential(na)
}

wrapped {
  wa = f32[4] parameter(0)
  ROOT ws = f32[4] sqrt(wa)
}

ENTRY e {
  pred = pred[] parameter(0)
  v = f32[4] parameter(1)
  z = s32[] constant(0)
  v1 = f32[4] negate(v)
  init = (s32[], f32[4]) tuple(z, v1)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  wx = f32[4] get-tuple-element(w), index=1
  c = f32[4] conditional(pred, wx, wx), true_computation=yes, false_computation=no
  s = ((f32[4]), f32[4], s32[]) async-start(c), calls=wrapped
  d = f32[4] async-done(s)
  ROOT out = f32[4] add(d, c)
}
)");
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();
  // The loop state element: init, body parameter, body result, result.
  EXPECT_EQ(p.Slice("w", {1}), p.Slice("x1"));
  EXPECT_EQ(p.Slice("w", {1}), p.Slice("bp", {1}));
  EXPECT_EQ(p.Slice("w", {1}), p.Slice("cp", {1}));
  EXPECT_EQ(p.Slice("w", {1}), p.Slice("v1"));
  // The conditional's result and both branch results.
  EXPECT_EQ(p.Slice("c"), p.Slice("yn"));
  EXPECT_EQ(p.Slice("c"), p.Slice("ne"));
  // The async pair: the start's operand and result elements, the done.
  EXPECT_EQ(p.Slice("s", {0, 0}), p.Slice("c"));
  EXPECT_EQ(p.Slice("s", {1}), p.Slice("d"));
  EXPECT_EQ(p.Slice("d"), p.Slice("ws"));
  // The async operand lives until the done: not shared with the result.
  EXPECT_NE(p.Slice("c").offset, p.Slice("d").offset);
}

TEST(BufferAssignment, NeedsAScheduledModule) {
  std::unique_ptr<HloModule> m = Parse(R"(
HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
)");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<std::unique_ptr<BufferAssignment>> a = AssignBuffers(*m);
  EXPECT_TRUE(absl::IsFailedPrecondition(a.status())) << a.status();
}

TEST(BufferAssignment, RefusesAModuleCopyInsertionDidNotSee) {
  std::unique_ptr<HloModule> m = Parse(R"(
HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  ROOT t = (f32[4]) tuple(p)
}
)");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(ScheduleModule(*m).ok());
  absl::StatusOr<std::unique_ptr<BufferAssignment>> a = AssignBuffers(*m);
  EXPECT_TRUE(absl::IsFailedPrecondition(a.status())) << a.status();
  EXPECT_TRUE(absl::StrContains(a.status().message(), "not donated")) << a.status();
}

TEST(BufferAssignment, AllocationsAreNumberedLargestFirstTempLast) {
  Planned p = Plan(R"(
HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}

ENTRY e {
  small = f32[2] parameter(0)
  big = f32[64] parameter(1)
  a = f32[64] negate(big)
  b = f32[64] exponential(a)
  c = f32[] constant(0)
  s = f32[] reduce(b, c), dimensions={0}, to_apply=add
  ROOT r = (f32[2], f32[]) tuple(small, s)
}
)");
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();
  const auto& allocations = p.plan->assignment->allocations();
  for (size_t i = 0; i + 2 < allocations.size(); ++i) {
    EXPECT_GE(allocations[i].size(), allocations[i + 1].size());
  }
  EXPECT_EQ(allocations.back().kind(), AllocationKind::kTemp);
  // Values of the reduce's to_apply computation get no slice.
  EXPECT_FALSE(p.plan->assignment->GetSlice(p["z"]).has_value());
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
