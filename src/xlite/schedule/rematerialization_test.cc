#include "xlite/schedule/rematerialization.h"

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "xlite/analysis/analysis_test_util.h"
#include "xlite/analysis/hlo_alias_analysis.h"
#include "xlite/analysis/hlo_live_range.h"
#include "xlite/eval/evaluator.h"
#include "xlite/eval/fake_data.h"
#include "xlite/schedule/schedule_module.h"
#include "xlite/support/flags.h"
#include "xlite/support/status.h"
#include "xlite/text/printer.h"
#include "xlite/verify/verifier.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

using analysis_test::Find;
using analysis_test::Parse;

// x (4000 bytes) is read early (y) and late (w); between them a 40000-byte
// temporary is reduced. The peak, at the reduce, holds p 4 + x 4000 +
// y 4000 + big 40000 + zero 4 + s 4 = 48012 bytes. Recomputing x (a
// broadcast of the parameter, live anyway) before w frees 4000 of them:
// 44012. y cannot go: its operand x would then be kept over the peak. The
// reduce's working set (big, zero, s) is 40008 bytes.
constexpr char kEarlyAndLate[] = R"(
HloModule m, is_scheduled=true

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[] parameter(0)
  x = f32[1000] broadcast(p), dimensions={}
  y = f32[1000] exponential(x)
  big = f32[10000] broadcast(p), dimensions={}
  zero = f32[] constant(0)
  s = f32[] reduce(big, zero), dimensions={0}, to_apply=add
  sb = f32[1000] broadcast(s), dimensions={}
  w = f32[1000] add(x, sb)
  ROOT v = f32[1000] add(w, y)
}
)";

absl::StatusOr<int64_t> Peak(const HloModule& m) {
  ASSIGN_OR_RETURN(std::unique_ptr<HloAliasAnalysis> alias, HloAliasAnalysis::Run(m));
  ASSIGN_OR_RETURN(std::unique_ptr<CallGraph> graph, CallGraph::Build(m));
  HloSchedule schedule = HloSchedule::FromInstructionOrder(ScheduledComputations(*graph));
  ASSIGN_OR_RETURN(std::unique_ptr<HloLiveRange> live, HloLiveRange::Run(schedule, *alias));
  return live->peak_bytes();
}

// The entry's instruction names in order.
std::string Order(const HloModule& m) {
  std::vector<std::string> names;
  for (const auto& i : m.entry_computation()->instructions()) names.push_back(i->name());
  return absl::StrJoin(names, " ");
}

// Seeded random arguments for a module and the interpreter's results on them.
struct Reference {
  std::vector<Literal> args;
  Literal result;
};

absl::StatusOr<Reference> RunReference(const HloModule& m) {
  Reference ref;
  ASSIGN_OR_RETURN(ref.args, MakeFakeArguments(m, FakeDataKind::kRandom, 0));
  ASSIGN_OR_RETURN(ref.result, Evaluate(m, ref.args));
  return ref;
}

// The module (rewritten) gives the reference's results on its arguments.
void ExpectSameResults(const HloModule& m, const Reference& ref) {
  absl::StatusOr<Literal> after = Evaluate(m, ref.args);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_TRUE(*after == ref.result);
}

Literal Scalar(float v) {
  Literal l(Shape::Scalar(PrimitiveType::F32));
  l.SetDouble(0, v);
  return l;
}

// x (a sort: never recomputed) is read after the peak only by a sum of its
// squares; the peak, at u, holds p 4000 + q 20000 + zero 4 + x 4000 +
// t 20000 + u 4 = 48008 bytes. Making m and l (the later uses) earlier,
// before t, frees x there and keeps only l (4 bytes): 44012 at u, no FLOPs.
constexpr char kLateSum[] = R"(
HloModule m, is_scheduled=true

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}

ENTRY e {
  p = f32[1000] parameter(0)
  q = f32[5000] parameter(1)
  zero = f32[] constant(0)
  x = f32[1000] sort(p), dimensions={0}, to_apply=lt
  t = f32[5000] exponential(q)
  u = f32[] reduce(t, zero), dimensions={0}, to_apply=add
  m = f32[1000] multiply(x, x)
  l = f32[] reduce(m, zero), dimensions={0}, to_apply=add
  ROOT r = (f32[], f32[]) tuple(u, l)
}
)";

TEST(Rematerialization, MakesLaterUsesEarlierWhenTheValueCannotBeRecomputed) {
  auto m = Parse(kLateSum);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Reference> ref = RunReference(*m);
  ASSERT_TRUE(ref.ok()) << ref.status();
  ASSERT_EQ(*Peak(*m), 48008);

  absl::StatusOr<RematerializationResult> r = Rematerialize(*m, {.memory_limit_bytes = 44012});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->met);
  EXPECT_EQ(r->peak_after, 44012);
  ASSERT_EQ(r->recomputed.size(), 1u);
  const Recomputation& x = r->recomputed[0];
  EXPECT_EQ(x.instruction, "x");
  EXPECT_EQ(x.made_earlier, 2);
  EXPECT_EQ(x.clone, "t");         // they now come right before t
  EXPECT_EQ(x.bytes_freed, 3996);  // x less l, read after the peak
  EXPECT_EQ(x.peak_lowered, 48008 - 44012);
  EXPECT_TRUE(
      absl::StrContains(r->Summary(),
                        "%x in %e: its later uses made earlier, 2 instructions moved before "
                        "%t; 3996 bytes no longer live at the peak (time 5), the peak "
                        "3996 bytes lower; 0 FLOPs"))
      << r->Summary();
  EXPECT_TRUE(absl::StrContains(r->Summary(), "0 recomputed, 0 moved, 1 with later uses made"))
      << r->Summary();
  EXPECT_EQ(*Peak(*m), 44012);
  ASSERT_TRUE(VerifyModule(*m).ok());
  EXPECT_EQ(Order(*m), "p q zero x m l t u r");
  ExpectSameResults(*m, *ref);
}

// The same later sum, but it also reads u, made at the peak: nothing moves,
// and no recomputation helps (x is a sort).
TEST(Rematerialization, LaterUsesReadingThePeakStayLate) {
  std::string text = kLateSum;
  absl::StrReplaceAll(
      {{"ROOT r = (f32[], f32[]) tuple(u, l)",
        "ul = f32[] add(u, l)\n  ROOT r = (f32[], f32[]) tuple(u, ul)"},
       {"m = f32[1000] multiply(x, x)",
        "ub = f32[1000] broadcast(u), dimensions={}\n  m = f32[1000] multiply(x, ub)"}},
      &text);
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  const std::string before = Order(*m);
  absl::StatusOr<RematerializationResult> r =
      Rematerialize(*m, {.memory_limit_bytes = 44012, .error_if_not_met = false});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->met);
  EXPECT_TRUE(r->recomputed.empty()) << r->Summary();
  EXPECT_EQ(r->peak_after, r->peak_before);
  EXPECT_EQ(Order(*m), before);
}

// The peak is inside a loop; x (a sort) is read only after the loop, by a
// sum of its squares. The multiply, the reduce and its constant move before
// the loop: x is no longer live across it (4000 bytes; the sum's 4 stay).
TEST(Rematerialization, MakesLaterUsesEarlierThanALoopHoldingThePeak) {
  constexpr char kLoop[] = R"(
HloModule m, is_scheduled=true

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}

body {
  st = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(st), index=0
  acc = f32[] get-tuple-element(st), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  big = f32[10000] broadcast(acc), dimensions={}
  e = f32[10000] exponential(big)
  bz = f32[] constant(0)
  s = f32[] reduce(e, bz), dimensions={0}, to_apply=add
  ROOT t = (s32[], f32[]) tuple(i1, s)
}

cond {
  cs = (s32[], f32[]) parameter(0)
  ci = s32[] get-tuple-element(cs), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(ci, n), direction=LT
}

ENTRY e {
  p = f32[1000] parameter(0)
  q = f32[] parameter(1)
  x = f32[1000] sort(p), dimensions={0}, to_apply=lt
  z = s32[] constant(0)
  init = (s32[], f32[]) tuple(z, q)
  loop = (s32[], f32[]) while(init), condition=cond, body=body
  out = f32[] get-tuple-element(loop), index=1
  m = f32[1000] multiply(x, x)
  zero = f32[] constant(0)
  l = f32[] reduce(m, zero), dimensions={0}, to_apply=add
  ROOT r = (f32[], f32[]) tuple(out, l)
}
)";
  auto m = Parse(kLoop);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Reference> ref = RunReference(*m);
  ASSERT_TRUE(ref.ok()) << ref.status();
  absl::StatusOr<int64_t> peak = Peak(*m);
  ASSERT_TRUE(peak.ok()) << peak.status();
  absl::StatusOr<RematerializationResult> r =
      Rematerialize(*m, {.memory_limit_bytes = *peak - 3996});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->recomputed.size(), 1u) << r->Summary();
  EXPECT_EQ(r->recomputed[0].instruction, "x");
  EXPECT_EQ(r->recomputed[0].made_earlier, 3);  // m, zero and l
  EXPECT_EQ(r->recomputed[0].clone, "z");       // right after x, their last operand
  EXPECT_EQ(r->peak_after, *peak - 3996);
  ASSERT_TRUE(VerifyModule(*m).ok());
  EXPECT_EQ(Order(*m), "p q x m zero l z init loop out r") << r->Summary();
  ExpectSameResults(*m, *ref);
}

TEST(Rematerialization, RecomputesAValueLiveAcrossTheBigTemporary) {
  auto m = Parse(kEarlyAndLate);
  ASSERT_NE(m, nullptr);
  std::vector<Literal> args;
  args.push_back(Scalar(0.25f));
  absl::StatusOr<Literal> before = Evaluate(*m, args);
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_EQ(*Peak(*m), 48012);

  absl::StatusOr<RematerializationResult> r = Rematerialize(*m, {.memory_limit_bytes = 44012});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->met);
  EXPECT_EQ(r->peak_before, 48012);
  EXPECT_EQ(r->peak_after, 44012);
  EXPECT_EQ(r->floor.bytes, 40008);
  EXPECT_EQ(r->floor.instruction, "%s in %e");
  EXPECT_EQ(r->floor.resident_bytes, 4004);  // p and v
  EXPECT_EQ(r->floor.bound_bytes, 40012);    // the reduce's working set and p
  ASSERT_EQ(r->recomputed.size(), 1u);
  const Recomputation& x = r->recomputed[0];
  EXPECT_EQ(x.instruction, "x");
  EXPECT_EQ(x.clone, "x.remat");
  EXPECT_FALSE(x.moved);
  EXPECT_EQ(x.bytes_freed, 4000);
  EXPECT_EQ(x.flops, 0);              // a broadcast moves data only
  EXPECT_EQ(x.bytes_accessed, 4004);  // p read, x written
  EXPECT_EQ(*Peak(*m), 44012);
  EXPECT_TRUE(m->config().is_scheduled);
  ASSERT_TRUE(VerifyModule(*m).ok());
  // The clone sits right before its one later user, which reads it.
  HloInstruction* w = Find(*m, "w");
  HloInstruction* clone = Find(*m, "x.remat");
  ASSERT_NE(clone, nullptr);
  EXPECT_EQ(w->operand(0), clone);
  EXPECT_EQ(Find(*m, "y")->operand(0), Find(*m, "x"));
  const auto& order = m->entry_computation()->instructions();
  for (size_t i = 0; i + 1 < order.size(); ++i) {
    if (order[i].get() == clone) {
      EXPECT_EQ(order[i + 1].get(), w);
    }
  }
  absl::StatusOr<Literal> after = Evaluate(*m, args);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_TRUE(*before == *after);
  EXPECT_TRUE(absl::StrContains(r->Summary(), "%x in %e: recomputed as %x.remat")) << r->Summary();
  EXPECT_TRUE(absl::StrContains(r->Summary(), "peak 48012 bytes -> 44012 bytes (met)"))
      << r->Summary();
}

TEST(Rematerialization, NoLimitOrALimitAlreadyMetChangesNothing) {
  for (int64_t limit : {int64_t{0}, int64_t{48012}, int64_t{1} << 40}) {
    auto m = Parse(kEarlyAndLate);
    ASSERT_NE(m, nullptr);
    const std::string text = PrintModule(*m);
    absl::StatusOr<RematerializationResult> r = Rematerialize(*m, {.memory_limit_bytes = limit});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->met);
    EXPECT_TRUE(r->recomputed.empty());
    EXPECT_EQ(PrintModule(*m), text);
  }
}

TEST(Rematerialization, ALimitBelowTheFloorIsResourceExhausted) {
  auto m = Parse(kEarlyAndLate);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<RematerializationResult> r = Rematerialize(*m, {.memory_limit_bytes = 40000});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(r.status())) << r.status();
  const std::string message(r.status().message());
  EXPECT_TRUE(absl::StrContains(message, "the memory limit of 40000 bytes cannot be met"))
      << message;
  // y moves after the peak with its dead operand: the peak reaches the bound.
  EXPECT_TRUE(absl::StrContains(message, "the schedule's peak is 40012 bytes")) << message;
  EXPECT_TRUE(absl::StrContains(message, "48012 bytes before")) << message;
  EXPECT_TRUE(
      absl::StrContains(message, "working set (operands + outputs) is 40008 bytes (%s in %e)"))
      << message;
  EXPECT_TRUE(
      absl::StrContains(message, "parameters and outputs, live when it ends, take 4004 bytes"))
      << message;
  EXPECT_TRUE(absl::StrContains(message, "no schedule goes below 40012 bytes")) << message;
  // Without the error, the result says how far it got.
  auto m2 = Parse(kEarlyAndLate);
  ASSERT_NE(m2, nullptr);
  r = Rematerialize(*m2, {.memory_limit_bytes = 40010, .error_if_not_met = false});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->met);
  EXPECT_EQ(r->peak_after, 40012);
  EXPECT_TRUE(absl::StrContains(r->Summary(), "%y in %e: moved to %y.remat with 1 of its operands"))
      << r->Summary();
  EXPECT_TRUE(absl::StrContains(r->Summary(), "(NOT met)")) << r->Summary();
}

// A while's state is read when the loop ends, so every buffer of it is live
// throughout the body, whatever the order or recomputation: the bound counts
// it beside each body instruction's working set. Here the body's reduce
// (x 4000 + zero 4 + r 4 bytes) runs beside the carried 40000-byte array.
TEST(Rematerialization, TheBoundCountsTheLoopStateInTheBody) {
  constexpr char kLoop[] = R"(
HloModule m, is_scheduled=true

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

body {
  st = (s32[], f32[10000], f32[]) parameter(0)
  i = s32[] get-tuple-element(st), index=0
  big = f32[10000] get-tuple-element(st), index=1
  acc = f32[] get-tuple-element(st), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x = f32[1000] broadcast(acc), dimensions={}
  zero = f32[] constant(0)
  r = f32[] reduce(x, zero), dimensions={0}, to_apply=add
  ROOT t = (s32[], f32[10000], f32[]) tuple(i1, big, r)
}

cond {
  cs = (s32[], f32[10000], f32[]) parameter(0)
  ci = s32[] get-tuple-element(cs), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(ci, n), direction=LT
}

ENTRY e {
  p = f32[] parameter(0)
  c = f32[10000] broadcast(p), dimensions={}
  z = s32[] constant(0)
  a0 = f32[] negate(p)
  init = (s32[], f32[10000], f32[]) tuple(z, c, a0)
  loop = (s32[], f32[10000], f32[]) while(init), condition=cond, body=body
  ROOT out = f32[] get-tuple-element(loop), index=2
}
)";
  auto m = Parse(kLoop);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<WorkingSet> floor = LargestWorkingSet(*m);
  ASSERT_TRUE(floor.ok()) << floor.status();
  // The largest working set alone is the body parameter's: the state's
  // buffers (the 24-byte index table, i 4, big 40000, acc 4).
  EXPECT_EQ(floor->bytes, 40032);
  EXPECT_EQ(floor->instruction, "%st in %body");
  // At the body's reduce: x 4000, zero 4 and r (in acc's buffer) 4, with the
  // rest of the state (40028) and p 4. Counting working sets alone, the
  // bound would be 40032 + p 4.
  EXPECT_EQ(floor->bound_bytes, 4000 + 4 + 4 + 40028 + 4);
  absl::StatusOr<int64_t> peak = Peak(*m);
  ASSERT_TRUE(peak.ok()) << peak.status();
  EXPECT_EQ(*peak, floor->bound_bytes);  // this order reaches it

  // Carrying a broadcast of a constant instead, the pass may take it out of
  // the loop (it is made again where the body reads it): the bound leaves it
  // and the state's index table out (x, zero, r, i and p: 4016 bytes), and
  // the pass gets within the smaller table it leaves (two elements, 16 bytes).
  std::string from_nothing = kLoop;
  const std::string carried = "c = f32[10000] broadcast(p), dimensions={}";
  from_nothing.replace(from_nothing.find(carried), carried.size(),
                       "k = f32[] constant(2)\n  c = f32[10000] broadcast(k), dimensions={}");
  m = Parse(from_nothing);
  ASSERT_NE(m, nullptr);
  floor = LargestWorkingSet(*m);
  ASSERT_TRUE(floor.ok()) << floor.status();
  EXPECT_EQ(floor->bound_bytes, 4000 + 4 + 4 + 4 + 4);
  absl::StatusOr<RematerializationResult> r =
      Rematerialize(*m, {.memory_limit_bytes = floor->bound_bytes + 16});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->met) << r->Summary();
  EXPECT_EQ(r->peak_after, floor->bound_bytes + 16);
}

// out reads m and e (1024 bytes each). Whichever is made last is made while
// the other is live: m with e (d, rb, m and e: 4096 bytes), or e with m, and
// then e's operand s with m too (x, qb, s and m), or s before m, live while m
// is made (d, rb, m and s). With the parameters (1028 bytes) no schedule goes
// below 5124 bytes, which this order reaches; the largest working set alone
// (3072 bytes) gives 4100.
TEST(Rematerialization, TheBoundOrdersTwoArraysOneInstructionReads) {
  constexpr char kTwoArrays[] = R"(
HloModule m, is_scheduled=true

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[256] parameter(0)
  q = f32[] parameter(1)
  x = f32[256] exponential(p)
  qb = f32[256] broadcast(q), dimensions={}
  s = f32[256] subtract(x, qb)
  e = f32[256] exponential(s)
  zero = f32[] constant(0)
  r = f32[] reduce(e, zero), dimensions={0}, to_apply=add
  rb = f32[256] broadcast(r), dimensions={}
  d = f32[256] negate(p)
  m = f32[256] multiply(d, rb)
  ROOT out = f32[256] multiply(m, e)
}
)";
  auto m = Parse(kTwoArrays);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<WorkingSet> floor = LargestWorkingSet(*m);
  ASSERT_TRUE(floor.ok()) << floor.status();
  EXPECT_EQ(floor->bytes, 3072);
  EXPECT_EQ(floor->resident_bytes, 1024 + 4 + 1024);
  EXPECT_EQ(floor->bound_bytes, 4096 + 1028);
  EXPECT_TRUE(absl::StrContains(floor->bound_reason, "%out in %e reads %")) << floor->bound_reason;
  EXPECT_EQ(*Peak(*m), floor->bound_bytes);  // this order reaches it
  absl::StatusOr<RematerializationResult> r =
      Rematerialize(*m, {.memory_limit_bytes = floor->bound_bytes - 1});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(r.status())) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(),
                                "no schedule goes below 5124 bytes (%out in %e reads %"))
      << r.status();
  EXPECT_TRUE(absl::StrContains(
      r.status().message(), "one is made while others made before it and not yet read are live"))
      << r.status();
}

// Two Horner steps of erf_inv as JAX writes it (frag_0428 of jax issue
// 33666): each step multiplies the running value by w and adds a select of
// two broadcast constants. w is read at both steps, so it is live from its
// making to the second, and in every order some select (3328 bytes with its
// broadcasts and c) is made while two other arrays are live: w and the
// running value, or w's own operands s and t. Pairs of operands alone (m1
// reads w and e1: whichever is made last is made while the other is live)
// give 5376 bytes with the parameter; the search over the orders of making
// the tree under m2 finds 6400, which this schedule reaches.
TEST(Rematerialization, TheBoundSearchesTheOrdersOfATree) {
  constexpr char kHorner[] = R"(
HloModule m, is_scheduled=true

ENTRY e {
  u = f32[256] parameter(0)
  n = f32[256] negate(u)
  k5 = f32[] constant(5)
  b5 = f32[256] broadcast(k5), dimensions={}
  c = pred[256] compare(n, b5), direction=LT
  k2 = f32[] constant(2.5)
  b2 = f32[256] broadcast(k2), dimensions={}
  s = f32[256] subtract(n, b2)
  q = f32[256] sqrt(n)
  k3 = f32[] constant(3)
  b3 = f32[256] broadcast(k3), dimensions={}
  t = f32[256] subtract(q, b3)
  w = f32[256] select(c, s, t)
  x1 = f32[] constant(0.1)
  y1 = f32[] constant(0.2)
  bx1 = f32[256] broadcast(x1), dimensions={}
  by1 = f32[256] broadcast(y1), dimensions={}
  e1 = f32[256] select(c, bx1, by1)
  m1 = f32[256] multiply(e1, w)
  x2 = f32[] constant(0.3)
  y2 = f32[] constant(0.4)
  bx2 = f32[256] broadcast(x2), dimensions={}
  by2 = f32[256] broadcast(y2), dimensions={}
  e2 = f32[256] select(c, bx2, by2)
  r1 = f32[256] add(e2, m1)
  m2 = f32[256] multiply(r1, w)
  x3 = f32[] constant(0.5)
  y3 = f32[] constant(0.6)
  bx3 = f32[256] broadcast(x3), dimensions={}
  by3 = f32[256] broadcast(y3), dimensions={}
  e3 = f32[256] select(c, bx3, by3)
  ROOT r2 = f32[256] add(e3, m2)
}
)";
  auto m = Parse(kHorner);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<WorkingSet> floor = LargestWorkingSet(*m);
  ASSERT_TRUE(floor.ok()) << floor.status();
  EXPECT_EQ(floor->bytes, 3328);  // a select of two broadcasts
  EXPECT_EQ(floor->bound_bytes, 6400);
  EXPECT_TRUE(
      absl::StrContains(floor->bound_reason, "%m2 in %e reads %r1, %w, made from 7 more arrays: "))
      << floor->bound_reason;
  absl::StatusOr<int64_t> peak = Peak(*m);
  ASSERT_TRUE(peak.ok()) << peak.status();
  EXPECT_EQ(*peak, floor->bound_bytes);  // this order reaches it
  absl::StatusOr<RematerializationResult> r =
      Rematerialize(*m, {.memory_limit_bytes = floor->bound_bytes - 1});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(r.status())) << r.status();
}

// A loop's result (u) is read by a second loop, and the work between them
// is made from it and feeds that loop: no copy of a loop is ever made, so u
// is live while any of that work is made, in every schedule the pass can
// make (it does not remake loops). At the add, its working set (3072 bytes)
// with u (1024) and the parameter (1024): 5120; without u the bound would be
// 4096. This schedule reaches 5124 (the loop counter's 4 bytes besides).
TEST(Rematerialization, TheBoundHoldsWhatALoopMakesForALaterLoop) {
  constexpr char kLoops[] = R"(
HloModule m, is_scheduled=true

cond {
  cs = (s32[], f32[256]) parameter(0)
  ci = s32[] get-tuple-element(cs), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(ci, n), direction=LT
}

body {
  bs = (s32[], f32[256]) parameter(0)
  bi = s32[] get-tuple-element(bs), index=0
  bv = f32[256] get-tuple-element(bs), index=1
  one = s32[] constant(1)
  bi1 = s32[] add(bi, one)
  bv2 = f32[256] add(bv, bv)
  ROOT bt = (s32[], f32[256]) tuple(bi1, bv2)
}

cond2 {
  cs2 = (s32[], f32[256], f32[256]) parameter(0)
  ci2 = s32[] get-tuple-element(cs2), index=0
  n2 = s32[] constant(2)
  ROOT lt2 = pred[] compare(ci2, n2), direction=LT
}

body2 {
  bs2 = (s32[], f32[256], f32[256]) parameter(0)
  bi2 = s32[] get-tuple-element(bs2), index=0
  bu = f32[256] get-tuple-element(bs2), index=1
  bw = f32[256] get-tuple-element(bs2), index=2
  one2 = s32[] constant(1)
  bi3 = s32[] add(bi2, one2)
  bw2 = f32[256] multiply(bu, bw)
  ROOT bt2 = (s32[], f32[256], f32[256]) tuple(bi3, bu, bw2)
}

ENTRY e {
  p = f32[256] parameter(0)
  z = s32[] constant(0)
  x = f32[256] negate(p)
  init = (s32[], f32[256]) tuple(z, x)
  l1 = (s32[], f32[256]) while(init), condition=cond, body=body
  u = f32[256] get-tuple-element(l1), index=1
  a = f32[256] exponential(u)
  b = f32[256] sqrt(u)
  c = f32[256] add(a, b)
  init2 = (s32[], f32[256], f32[256]) tuple(z, u, c)
  l2 = (s32[], f32[256], f32[256]) while(init2), condition=cond2, body=body2
  ROOT out = f32[256] get-tuple-element(l2), index=2
}
)";
  auto m = Parse(kLoops);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<WorkingSet> floor = LargestWorkingSet(*m);
  ASSERT_TRUE(floor.ok()) << floor.status();
  EXPECT_EQ(floor->bound_bytes, 5120);
  EXPECT_TRUE(absl::StrContains(floor->bound_reason,
                                "the working set of %c in %e with what is live throughout it, 1024 "
                                "bytes of it made by instructions this pass never copies"))
      << floor->bound_reason;
  EXPECT_TRUE(absl::StrContains(floor->bound_reason, "read by %l2")) << floor->bound_reason;
  absl::StatusOr<int64_t> peak = Peak(*m);
  ASSERT_TRUE(peak.ok()) << peak.status();
  EXPECT_EQ(*peak, 5124);
  absl::StatusOr<RematerializationResult> r =
      Rematerialize(*m, {.memory_limit_bytes = floor->bound_bytes - 1});
  EXPECT_TRUE(absl::IsResourceExhausted(r.status())) << r.status();
}

// The loop hands on a dead element (out) and a 400000-byte broadcast the
// pass makes again inside it. It removes the broadcast's element and nothing
// else: out, which the bound counts (5120 bytes, the ordering at out), stays
// with the work that makes it, and the peak reached is not below the bound.
TEST(Rematerialization, SinkingLoopStateRemovesOnlyTheSunkElements) {
  constexpr char kDeadElement[] = R"(
HloModule m, is_scheduled=true

cond {
  cs = (s32[], f32[100000], f32[256]) parameter(0)
  ci = s32[] get-tuple-element(cs), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(ci, n), direction=LT
}

body {
  st = (s32[], f32[100000], f32[256]) parameter(0)
  i = s32[] get-tuple-element(st), index=0
  zz = f32[100000] get-tuple-element(st), index=1
  a = f32[256] get-tuple-element(st), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[100000], f32[256]) tuple(i1, zz, a)
}

ENTRY e {
  p = f32[256] parameter(0)
  d1 = f32[256] exponential(p)
  d2 = f32[256] negate(p)
  f1 = f32[256] abs(p)
  f2 = f32[256] cosine(p)
  m = f32[256] multiply(d1, d2)
  e = f32[256] multiply(f1, f2)
  out = f32[256] multiply(m, e)
  c = f32[] constant(1)
  zz = f32[100000] broadcast(c), dimensions={}
  i0 = s32[] constant(0)
  init = (s32[], f32[100000], f32[256]) tuple(i0, zz, out)
  w = (s32[], f32[100000], f32[256]) while(init), condition=cond, body=body
  ROOT r = s32[] get-tuple-element(w), index=0
}
)";
  auto m = Parse(kDeadElement);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<RematerializationResult> r =
      Rematerialize(*m, {.memory_limit_bytes = 100, .error_if_not_met = false});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->met);
  EXPECT_EQ(r->floor.bound_bytes, 5120);
  EXPECT_GE(r->peak_after, r->floor.bound_bytes);
  EXPECT_EQ(Find(*m, "w")->shape().tuple_shapes_size(), 2);  // the broadcast's element went
  EXPECT_NE(Find(*m, "out"), nullptr);
  ASSERT_TRUE(VerifyModule(*m).ok());
}

// b, a broadcast of a constant (4000 bytes), is read before the reduce of a
// 40000-byte temporary and by two instructions after it. Made again right
// before each of those two (with its scalar), it is not live at the reduce:
// 52012 -> 48012 bytes, no FLOPs, results unchanged.
constexpr char kBroadcastUsedLate[] = R"(
HloModule m, is_scheduled=true

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[1000] parameter(0)
  q = f32[] parameter(1)
  c = f32[] constant(2)
  b = f32[1000] broadcast(c), dimensions={}
  y = f32[1000] multiply(p, b)
  big = f32[10000] broadcast(q), dimensions={}
  zero = f32[] constant(0)
  s = f32[] reduce(big, zero), dimensions={0}, to_apply=add
  sb = f32[1000] broadcast(s), dimensions={}
  w = f32[1000] add(sb, b)
  v = f32[1000] multiply(w, b)
  ROOT r = f32[1000] add(v, y)
}
)";

TEST(Rematerialization, MakesABroadcastOfAScalarAgainBeforeEachLaterUser) {
  auto m = Parse(kBroadcastUsedLate);
  ASSERT_NE(m, nullptr);
  std::vector<Literal> args;
  Literal p(Shape::Array(PrimitiveType::F32, {1000}));
  for (int64_t i = 0; i < 1000; ++i) p.SetDouble(i, 0.001 * static_cast<double>(i));
  args.push_back(std::move(p));
  args.push_back(Scalar(0.5f));
  absl::StatusOr<Literal> before = Evaluate(*m, args);
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_EQ(*Peak(*m), 52012);
  absl::StatusOr<RematerializationResult> r = Rematerialize(*m, {.memory_limit_bytes = 48012});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->met);
  EXPECT_EQ(r->peak_after, 48012);
  ASSERT_EQ(r->recomputed.size(), 1u);
  EXPECT_EQ(r->recomputed[0].instruction, "b");
  EXPECT_EQ(r->recomputed[0].copies, 2);
  EXPECT_FALSE(r->recomputed[0].moved);  // y still reads it
  EXPECT_EQ(r->recomputed[0].flops, 0);
  EXPECT_EQ(r->recomputed[0].bytes_accessed, 2 * (4004 + 4));  // b and its constant, twice
  EXPECT_TRUE(absl::StrContains(r->Summary(), "%b in %e: made again before each of 2 later users"))
      << r->Summary();
  // Each later user reads its own copy, made right before it.
  HloInstruction* w = Find(*m, "w");
  HloInstruction* v = Find(*m, "v");
  EXPECT_NE(w->operand(1), Find(*m, "b"));
  EXPECT_NE(v->operand(1), Find(*m, "b"));
  EXPECT_NE(w->operand(1), v->operand(1));
  const auto& order = m->entry_computation()->instructions();
  for (size_t i = 0; i + 1 < order.size(); ++i) {
    if (order[i].get() == w->operand(1)) EXPECT_EQ(order[i + 1].get(), w);
    if (order[i].get() == v->operand(1)) EXPECT_EQ(order[i + 1].get(), v);
  }
  EXPECT_EQ(*Peak(*m), 48012);
  ASSERT_TRUE(VerifyModule(*m).ok());
  absl::StatusOr<Literal> after = Evaluate(*m, args);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_TRUE(*before == *after);
}

// The copies before each user and the rounds after them each get max_rounds:
// with one, b's copies take a round and x (a negate of p, read before and
// after the peak) still gets recomputed in another.
TEST(Rematerialization, CopiesAndRoundsEachGetMaxRounds) {
  std::string text = kBroadcastUsedLate;
  absl::StrReplaceAll({{"  y = f32[1000] multiply(p, b)",
                        "  x = f32[1000] negate(p)\n  y = f32[1000] multiply(x, b)"},
                       {"  v = f32[1000] multiply(w, b)", "  v = f32[1000] multiply(w, x)"}},
                      &text);
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Reference> ref = RunReference(*m);
  ASSERT_TRUE(ref.ok()) << ref.status();
  absl::StatusOr<int64_t> peak = Peak(*m);
  ASSERT_TRUE(peak.ok()) << peak.status();
  absl::StatusOr<RematerializationResult> r =
      Rematerialize(*m, {.memory_limit_bytes = *peak - 8000, .max_rounds = 1});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->met);
  EXPECT_EQ(r->rounds, 2);
  ASSERT_EQ(r->recomputed.size(), 2u) << r->Summary();
  EXPECT_EQ(r->recomputed[0].instruction, "b");
  EXPECT_EQ(r->recomputed[1].instruction, "x");
  ExpectSameResults(*m, *ref);
}

// Two broadcasts of constants are live at the reduce (the peak, 448012
// bytes). Copying b's chain (a 240000-byte broadcast converted to bf16)
// before its later user would make a higher peak there, so copying both
// together is undone; a alone is copied: 444012 bytes.
TEST(Rematerialization, CopiesOneValueAloneWhenAllTogetherRaiseThePeak) {
  constexpr char kTwoBroadcasts[] = R"(
HloModule m, is_scheduled=true

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

add_bf16 {
  x = bf16[] parameter(0)
  y = bf16[] parameter(1)
  ROOT s = bf16[] add(x, y)
}

ENTRY e {
  p = f32[] parameter(0)
  c1 = f32[] constant(1)
  a = f32[1000] broadcast(c1), dimensions={}
  ya = f32[1000] negate(a)
  c2 = f32[] constant(2)
  bb = f32[60000] broadcast(c2), dimensions={}
  b = bf16[60000] convert(bb)
  yb = bf16[60000] negate(b)
  big = f32[50000] broadcast(p), dimensions={}
  zero = f32[] constant(0)
  s = f32[] reduce(big, zero), dimensions={0}, to_apply=add
  sa = f32[1000] broadcast(s), dimensions={}
  w = f32[1000] add(a, sa)
  u = bf16[60000] negate(b)
  zb = bf16[] constant(0)
  rw = f32[] reduce(w, zero), dimensions={0}, to_apply=add
  rya = f32[] reduce(ya, zero), dimensions={0}, to_apply=add
  ru = bf16[] reduce(u, zb), dimensions={0}, to_apply=add_bf16
  ryb = bf16[] reduce(yb, zb), dimensions={0}, to_apply=add_bf16
  ROOT t = (f32[], f32[], bf16[], bf16[]) tuple(rw, rya, ru, ryb)
}
)";
  auto m = Parse(kTwoBroadcasts);
  ASSERT_NE(m, nullptr);
  std::vector<Literal> args;
  args.push_back(Scalar(0.5f));
  absl::StatusOr<Literal> before = Evaluate(*m, args);
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_EQ(*Peak(*m), 448012);
  absl::StatusOr<RematerializationResult> r = Rematerialize(*m, {.memory_limit_bytes = 444012});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->met);
  EXPECT_EQ(r->peak_after, 444012);
  ASSERT_EQ(r->recomputed.size(), 1u) << r->Summary();
  EXPECT_EQ(r->recomputed[0].instruction, "a");
  EXPECT_EQ(r->recomputed[0].flops, 0);
  EXPECT_EQ(Find(*m, "u")->operand(0), Find(*m, "b"));  // b was not copied
  EXPECT_NE(Find(*m, "w")->operand(0), Find(*m, "a"));
  ASSERT_TRUE(VerifyModule(*m).ok());
  absl::StatusOr<Literal> after = Evaluate(*m, args);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_TRUE(*before == *after);
}

// A dot live across the peak whose operand is dead there: both are
// recomputed after it (the operand's block), the FLOPs counted.
TEST(Rematerialization, RecomputesADotWithItsDeadOperand) {
  constexpr char kDot[] = R"(
HloModule m, is_scheduled=true

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[10,100] parameter(0)
  q = f32[100,100] parameter(1)
  x = f32[10,100] negate(p)
  d = f32[10,100] dot(x, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  early = f32[] reduce(d, zero), dimensions={0,1}, to_apply=add
  eb = f32[20000] broadcast(early), dimensions={}
  s = f32[] reduce(eb, zero), dimensions={0}, to_apply=add
  sb = f32[10,100] broadcast(s), dimensions={}
  ROOT v = f32[10,100] add(d, sb)
}
)";
  auto m = Parse(kDot);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<int64_t> before = Peak(*m);
  ASSERT_TRUE(before.ok()) << before.status();
  absl::StatusOr<RematerializationResult> r =
      Rematerialize(*m, {.memory_limit_bytes = *before - 4000});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->met) << r->Summary();
  EXPECT_TRUE(
      absl::StrContains(r->Summary(), "%d in %e: recomputed as %d.remat with 1 of its operands"))
      << r->Summary();
  // (The constant read after the peak is recomputed too: it is cheapest.)
  int64_t dot_flops = -1;
  for (const Recomputation& c : r->recomputed) {
    if (c.instruction == "d") dot_flops = c.flops;
  }
  EXPECT_EQ(dot_flops, 2 * 10 * 100 * 100 + 10 * 100) << r->Summary();  // the dot and the negate
  absl::StatusOr<int64_t> after = Peak(*m);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_LE(*after, *before - 4000);
  EXPECT_TRUE(VerifyModule(*m).ok());
}

// The normalized output of batch-norm-training, read before and after a big
// temporary through a get-tuple-element: recomputed by a clone of the whole
// op and a get-tuple-element of it, which the later user reads.
TEST(Rematerialization, RecomputesATupleElementThroughAGetTupleElement) {
  constexpr char kBatchNorm[] = R"(
HloModule m, is_scheduled=true

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  x = f32[10,100] parameter(0)
  scale = f32[100] parameter(1)
  offset = f32[100] parameter(2)
  bn = (f32[10,100], f32[100], f32[100]) batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=1
  y = f32[10,100] get-tuple-element(bn), index=0
  zero = f32[] constant(0)
  early = f32[] reduce(y, zero), dimensions={0,1}, to_apply=add
  eb = f32[20000] broadcast(early), dimensions={}
  s = f32[] reduce(eb, zero), dimensions={0}, to_apply=add
  sb = f32[10,100] broadcast(s), dimensions={}
  ROOT v = f32[10,100] add(y, sb)
}
)";
  auto m = Parse(kBatchNorm);
  ASSERT_NE(m, nullptr);
  std::vector<Literal> args;
  for (const Shape& shape :
       {Shape::Array(PrimitiveType::F32, {10, 100}), Shape::Array(PrimitiveType::F32, {100}),
        Shape::Array(PrimitiveType::F32, {100})}) {
    Literal l(shape);
    for (int64_t i = 0; i < l.element_count(); ++i)
      l.SetDouble(i, 0.01 * static_cast<double>(i % 37));
    args.push_back(std::move(l));
  }
  absl::StatusOr<Literal> before = Evaluate(*m, args);
  ASSERT_TRUE(before.ok()) << before.status();
  absl::StatusOr<int64_t> peak = Peak(*m);
  ASSERT_TRUE(peak.ok()) << peak.status();
  absl::StatusOr<RematerializationResult> r =
      Rematerialize(*m, {.memory_limit_bytes = *peak - 4000});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->met) << r->Summary();
  EXPECT_TRUE(absl::StrContains(r->Summary(), "%bn in %e: recomputed as %y.remat")) << r->Summary();
  HloInstruction* gte = Find(*m, "y.remat");
  ASSERT_NE(gte, nullptr) << r->Summary();
  EXPECT_EQ(gte->opcode(), HloOpcode::kGetTupleElement);
  EXPECT_EQ(gte->operand(0)->opcode(), HloOpcode::kBatchNormTraining);
  EXPECT_NE(gte->operand(0), Find(*m, "bn"));
  EXPECT_EQ(Find(*m, "v")->operand(0), gte);
  EXPECT_EQ(Find(*m, "early")->operand(0), Find(*m, "y"));
  ASSERT_TRUE(VerifyModule(*m).ok());
  absl::StatusOr<Literal> after = Evaluate(*m, args);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_TRUE(*before == *after);
}

TEST(Rematerialization, NegativeLimitIsInvalid) {
  auto m = Parse(kEarlyAndLate);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(absl::IsInvalidArgument(Rematerialize(*m, {.memory_limit_bytes = -1}).status()));
}

// The same shape, x made by rng or a side-effecting custom call: x is never
// cloned; y (exp of x, which stays live over the peak) is recomputed instead.
TEST(Rematerialization, NeverClonesRngOrSideEffects) {
  for (const char* x : {
           "x = f32[1000] rng(p, p), distribution=rng_uniform",
           "x = f32[1000] custom-call(p), custom_call_target=\"f\", "
           "custom_call_has_side_effect=true",
       }) {
    std::string text = kEarlyAndLate;
    const std::string old = "x = f32[1000] broadcast(p), dimensions={}";
    text.replace(text.find(old), old.size(), x);
    auto m = Parse(text);
    ASSERT_NE(m, nullptr) << x;
    absl::StatusOr<RematerializationResult> r =
        Rematerialize(*m, {.memory_limit_bytes = 44012, .error_if_not_met = false});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->met) << x;
    ASSERT_EQ(r->recomputed.size(), 1u) << r->Summary();
    EXPECT_EQ(r->recomputed[0].instruction, "y") << x;
    EXPECT_TRUE(r->recomputed[0].moved) << x;
    EXPECT_EQ(r->recomputed[0].flops, 0) << x;  // moved: still computed once
    EXPECT_EQ(Find(*m, "w")->operand(0), Find(*m, "x")) << x;
  }
}

// A value read only after the peak moves there; the original is removed.
// A kLoop fusion of cheap ops is cloned with a fused computation of its own.
constexpr char kLateOnlyFusion[] = R"(
HloModule m, is_scheduled=true

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

fused {
  fp = f32[] parameter(0)
  fb = f32[1000] broadcast(fp), dimensions={}
  ROOT fn = f32[1000] negate(fb)
}

fused.1 {
  gp = f32[] parameter(0)
  gb = f32[1000] broadcast(gp), dimensions={}
  ROOT gn = f32[1000] negate(gb)
}

ENTRY e {
  p = f32[] parameter(0)
  x = f32[1000] fusion(p), kind=kLoop, calls=fused
  x2 = f32[1000] fusion(p), kind=kLoop, calls=fused.1
  y = f32[1000] exponential(x2)
  big = f32[10000] broadcast(p), dimensions={}
  zero = f32[] constant(0)
  s = f32[] reduce(big, zero), dimensions={0}, to_apply=add
  sb = f32[1000] broadcast(s), dimensions={}
  w = f32[1000] add(x, sb)
  w2 = f32[1000] add(x2, w)
  ROOT v = f32[1000] add(w2, y)
}
)";

TEST(Rematerialization, MovesLateOnlyValuesAndClonesSmallFusions) {
  auto m = Parse(kLateOnlyFusion);
  ASSERT_NE(m, nullptr);
  std::vector<Literal> args;
  args.push_back(Scalar(1.5f));
  absl::StatusOr<Literal> before = Evaluate(*m, args);
  ASSERT_TRUE(before.ok()) << before.status();
  // p 4, x 4000, x2 4000, y 4000, big 40000, zero 4, s 4.
  ASSERT_EQ(*Peak(*m), 52012);
  absl::StatusOr<RematerializationResult> r = Rematerialize(*m, {.memory_limit_bytes = 44012});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->peak_after, 44012);
  ASSERT_EQ(r->recomputed.size(), 2u) << r->Summary();
  for (const Recomputation& c : r->recomputed) {
    EXPECT_EQ(c.bytes_freed, 4000);
    EXPECT_EQ(c.flops, c.moved ? 0 : 1000);  // the negate, once more unless moved
    EXPECT_EQ(c.moved, c.instruction == "x") << c.instruction;
  }
  for (const auto& c : m->entry_computation()->instructions()) EXPECT_NE(c->name(), "x");
  HloInstruction* xc = Find(*m, "x.remat");
  HloInstruction* x2c = Find(*m, "x2.remat");
  ASSERT_TRUE(xc != nullptr && x2c != nullptr);
  EXPECT_EQ(xc->called_computations()[0]->fusion_instruction(), xc);
  EXPECT_NE(x2c->called_computations()[0], Find(*m, "x2")->called_computations()[0]);
  EXPECT_EQ(m->GetComputationWithName("fused"), nullptr);  // went with x
  ASSERT_TRUE(VerifyModule(*m).ok()) << VerifyModule(*m);
  absl::StatusOr<Literal> after = Evaluate(*m, args);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_TRUE(*before == *after);
  EXPECT_TRUE(absl::StrContains(r->Summary(), "%x in %e: moved to %x.remat")) << r->Summary();
}

// A value inside a while body, live across the body's peak, is recomputed
// there. x is not a candidate: its operand is loop state, a buffer of
// several values (conservatively, one that may be written in place); y,
// exp(x), is recomputed instead.
TEST(Rematerialization, WorksInsideLoopBodies) {
  constexpr char kLoop[] = R"(
HloModule m, is_scheduled=true

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

body {
  st = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(st), index=0
  acc = f32[] get-tuple-element(st), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x = f32[1000] broadcast(acc), dimensions={}
  y = f32[1000] exponential(x)
  big = f32[10000] broadcast(acc), dimensions={}
  zero = f32[] constant(0)
  s = f32[] reduce(big, zero), dimensions={0}, to_apply=add
  sb = f32[1000] broadcast(s), dimensions={}
  w = f32[1000] add(x, sb)
  v = f32[1000] add(w, y)
  r = f32[] reduce(v, zero), dimensions={0}, to_apply=add
  ROOT t = (s32[], f32[]) tuple(i1, r)
}

cond {
  cs = (s32[], f32[]) parameter(0)
  ci = s32[] get-tuple-element(cs), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(ci, n), direction=LT
}

ENTRY e {
  p = f32[] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[]) tuple(z, p)
  loop = (s32[], f32[]) while(init), condition=cond, body=body
  ROOT out = f32[] get-tuple-element(loop), index=1
}
)";
  auto m = Parse(kLoop);
  ASSERT_NE(m, nullptr);
  std::vector<Literal> args;
  args.push_back(Scalar(1e-4f));
  absl::StatusOr<Literal> before = Evaluate(*m, args);
  ASSERT_TRUE(before.ok()) << before.status();
  absl::StatusOr<int64_t> peak = Peak(*m);
  ASSERT_TRUE(peak.ok()) << peak.status();
  absl::StatusOr<RematerializationResult> r =
      Rematerialize(*m, {.memory_limit_bytes = *peak - 4000});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->recomputed.size(), 1u) << r->Summary();
  EXPECT_EQ(r->recomputed[0].instruction, "y");
  EXPECT_EQ(r->recomputed[0].computation, "body");
  EXPECT_EQ(r->peak_after, *peak - 4000);
  ASSERT_TRUE(VerifyModule(*m).ok());
  absl::StatusOr<Literal> after = Evaluate(*m, args);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_TRUE(*before == *after);
}

// jax.b380442861's shape, smaller: the loop carries a 4000-byte iota it only
// reads one element of, while the body makes a 4000-byte square of another
// iota (in a call) and reduces it. Carried, the iota is live across that
// peak; made again right before the dynamic-slice, it is not, and the loop
// state loses it.
TEST(Rematerialization, LoopStateMadeFromNothingLeavesTheLoop) {
  constexpr char kLoop[] = R"(
HloModule m, is_scheduled=true

sum {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}

body {
  st = (s32[], s32[], s32[1000]) parameter(0)
  i = s32[] get-tuple-element(st), index=0
  acc = s32[] get-tuple-element(st), index=1
  v = s32[1000] get-tuple-element(st), index=2
  ds = s32[1] dynamic-slice(v, i), dynamic_slice_sizes={1}
  e = s32[] reshape(ds)
  w = s32[1000] iota(), iota_dimension=0
  sq = s32[1000] multiply(w, w)
  zero = s32[] constant(0)
  r = s32[] reduce(sq, zero), dimensions={0}, to_apply=sum
  a1 = s32[] add(acc, r)
  a2 = s32[] add(a1, e)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], s32[], s32[1000]) tuple(i1, a2, v)
}

cond {
  cs = (s32[], s32[], s32[1000]) parameter(0)
  ci = s32[] get-tuple-element(cs), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(ci, n), direction=LT
}

ENTRY e {
  z = s32[] constant(0)
  z1 = s32[] copy(z)
  z2 = s32[] copy(z)
  v = s32[1000] iota(), iota_dimension=0
  init = (s32[], s32[], s32[1000]) tuple(z1, z2, v)
  loop = (s32[], s32[], s32[1000]) while(init), condition=cond, body=body
  ROOT out = s32[] get-tuple-element(loop), index=1
}
)";
  auto m = Parse(kLoop);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> before = Evaluate(*m, {});
  ASSERT_TRUE(before.ok()) << before.status();
  absl::StatusOr<int64_t> peak = Peak(*m);
  ASSERT_TRUE(peak.ok()) << peak.status();
  // The carried iota, w and sq at once: at least 12000 bytes.
  ASSERT_GE(*peak, 12000);
  absl::StatusOr<RematerializationResult> r =
      Rematerialize(*m, {.memory_limit_bytes = *peak - 4000});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->met) << r->Summary();
  ASSERT_FALSE(r->recomputed.empty()) << r->Summary();
  EXPECT_TRUE(r->recomputed[0].loop_state);
  EXPECT_EQ(r->recomputed[0].instruction, "v");
  EXPECT_EQ(r->recomputed[0].computation, "body");
  EXPECT_EQ(r->recomputed[0].bytes_freed, 4000);
  EXPECT_TRUE(absl::StrContains(r->Summary(), "no longer loop state of %body")) << r->Summary();
  EXPECT_LE(r->peak_after, *peak - 4000);
  ASSERT_TRUE(VerifyModule(*m).ok()) << PrintModule(*m);
  const std::string text = PrintModule(*m);
  EXPECT_TRUE(absl::StrContains(text, "(s32[], s32[]) while(")) << text;
  absl::StatusOr<Literal> after = Evaluate(*m, {});
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_TRUE(*before == *after);
  // Without a limit to meet, the loop keeps its state.
  auto m2 = Parse(kLoop);
  absl::StatusOr<RematerializationResult> r2 = Rematerialize(*m2, {.memory_limit_bytes = *peak});
  ASSERT_TRUE(r2.ok());
  EXPECT_TRUE(r2->recomputed.empty());
  EXPECT_TRUE(absl::StrContains(PrintModule(*m2), "s32[1000]{0}) while(")) << PrintModule(*m2);
}

TEST(Rematerialization, TheFlagTakesBytes) {
  DebugOptions o;
  ASSERT_TRUE(ApplyDebugFlag("--xlite_memory_limit=123456", o).ok());
  EXPECT_EQ(o.memory_limit, 123456);
  ASSERT_TRUE(ApplyDebugFlag("--xlite_memory_limit=0", o).ok());
  EXPECT_EQ(o.memory_limit, 0);
  for (const char* bad :
       {"--xlite_memory_limit=-1", "--xlite_memory_limit=1G", "--xlite_memory_limit="}) {
    absl::StatusOr<bool> s = ApplyDebugFlag(bad, o);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_TRUE(
        absl::StrContains(s.status().message(), "--xlite_memory_limit must be a number of bytes"))
        << s.status();
  }
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
