#include "xlite/analysis/dependency_ordering.h"

#include <memory>

#include "gtest/gtest.h"
#include "xlite/analysis/analysis_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

using analysis_test::Find;
using analysis_test::FindComputation;
using analysis_test::Parse;
using P = ProgramPoint;

struct Ordered {
  std::unique_ptr<HloModule> module;
  std::unique_ptr<HloDataflowAnalysis> dataflow;
  std::unique_ptr<DependencyOrdering> ordering;
  const HloInstruction* operator[](const char* name) const { return Find(*module, name); }
};

Ordered Order(const char* text) {
  Ordered o;
  o.module = Parse(text);
  if (o.module == nullptr) return o;
  auto dataflow = HloDataflowAnalysis::Run(*o.module);
  EXPECT_TRUE(dataflow.ok()) << dataflow.status();
  if (!dataflow.ok()) return o;
  o.dataflow = std::move(*dataflow);
  o.ordering = std::make_unique<DependencyOrdering>(*o.dataflow);
  return o;
}

constexpr char kStraightLine[] = R"(
HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] negate(p)
  b = f32[4] exponential(p)
  c = f32[4] add(a, b)
  d = f32[4] sqrt(p), control-predecessors={c}
  ROOT t = (f32[4], f32[4]) tuple(c, d)
}
)";

TEST(DependencyOrdering, OperandsAndControlEdges) {
  Ordered o = Order(kStraightLine);
  ASSERT_NE(o.ordering, nullptr);
  const DependencyOrdering& ord = *o.ordering;
  EXPECT_TRUE(ord.Reaches(o["a"], o["c"]));
  EXPECT_TRUE(ord.Reaches(o["p"], o["c"]));
  EXPECT_FALSE(ord.Reaches(o["a"], o["b"]));  // independent: either order
  EXPECT_FALSE(ord.Reaches(o["b"], o["a"]));
  EXPECT_FALSE(ord.Reaches(o["c"], o["c"]));
  EXPECT_TRUE(ord.Reaches(o["a"], o["d"]));  // through the control edge from c
  EXPECT_FALSE(ord.Reaches(o["d"], o["a"]));
  EXPECT_TRUE(ord.ExecutesBefore(P::Write(o["a"]), P::Read(o["c"])));
  EXPECT_FALSE(ord.ExecutesBefore(P::Write(o["a"]), P::Read(o["b"])));
  // At one instruction the reads come before the write.
  EXPECT_TRUE(ord.ExecutesBefore(P::Read(o["c"]), P::Write(o["c"])));
  EXPECT_FALSE(ord.ExecutesBefore(P::Write(o["c"]), P::Read(o["c"])));
  const HloComputation* entry = o.module->entry_computation();
  EXPECT_TRUE(ord.ExecutesBefore(P::Start(entry), P::Read(o["a"])));
  EXPECT_TRUE(ord.ExecutesBefore(P::Write(o["d"]), P::End(entry)));
  EXPECT_FALSE(ord.ExecutesBefore(P::End(entry), P::Read(o["a"])));
}

constexpr char kLoop[] = R"(
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

ENTRY e {
  p = f32[4] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[4]) tuple(z, p)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  after = f32[4] get-tuple-element(w), index=1
  other = f32[4] exponential(p)
  ROOT out = f32[4] add(after, other)
}
)";

TEST(DependencyOrdering, WhileRunsBetweenItsReadsAndItsWriteConditionFirst) {
  Ordered o = Order(kLoop);
  ASSERT_NE(o.ordering, nullptr);
  const DependencyOrdering& ord = *o.ordering;
  const HloInstruction* w = o["w"];
  // Inside the loop: after the while reads its operands, before it writes.
  EXPECT_TRUE(ord.ExecutesBefore(P::Read(w), P::Write(o["x1"])));
  EXPECT_TRUE(ord.ExecutesBefore(P::Write(o["x1"]), P::Write(w)));
  EXPECT_FALSE(ord.ExecutesBefore(P::Write(w), P::Write(o["x1"])));
  EXPECT_TRUE(ord.ExecutesBefore(P::Write(o["init"]), P::Write(o["x1"])));
  EXPECT_TRUE(ord.ExecutesBefore(P::Write(o["x1"]), P::Read(o["out"])));
  // The condition runs before the body (in each iteration).
  EXPECT_TRUE(ord.ExecutesBefore(P::Read(o["lt"]), P::Write(o["x1"])));
  EXPECT_FALSE(ord.ExecutesBefore(P::Write(o["x1"]), P::Read(o["lt"])));
  // Not ordered with the loop.
  EXPECT_FALSE(ord.ExecutesBefore(P::Read(o["other"]), P::Write(o["x1"])));
  EXPECT_FALSE(ord.ExecutesBefore(P::Write(o["x1"]), P::Read(o["other"])));
  const HloComputation* body = FindComputation(*o.module, "body");
  EXPECT_TRUE(ord.ExecutesBefore(P::Start(body), P::Read(o["x1"])));
  EXPECT_TRUE(ord.ExecutesBefore(P::End(body), P::Write(w)));
  EXPECT_TRUE(ord.IsInside(P::Write(o["x1"]), w));
  EXPECT_TRUE(ord.IsInside(P::Read(o["lt"]), w));
  EXPECT_FALSE(ord.IsInside(P::Write(o["other"]), w));
}

constexpr char kConditional[] = R"(
HloModule m

yes {
  a = f32[4] parameter(0)
  ROOT ya = f32[4] negate(a)
}

no {
  b = f32[4] parameter(0)
  ROOT nb = f32[4] exponential(b)
}

ENTRY e {
  pred = pred[] parameter(0)
  x = f32[4] parameter(1)
  c = f32[4] conditional(pred, x, x), true_computation=yes, false_computation=no
  ROOT d = f32[4] add(c, x)
}
)";

TEST(DependencyOrdering, BranchesAreExclusive) {
  Ordered o = Order(kConditional);
  ASSERT_NE(o.ordering, nullptr);
  const DependencyOrdering& ord = *o.ordering;
  EXPECT_TRUE(ord.MutuallyExclusive(P::Write(o["ya"]), P::Write(o["nb"])));
  EXPECT_FALSE(ord.ExecutesBefore(P::Write(o["ya"]), P::Write(o["nb"])));
  EXPECT_FALSE(ord.ExecutesBefore(P::Write(o["nb"]), P::Write(o["ya"])));
  EXPECT_FALSE(ord.MutuallyExclusive(P::Write(o["ya"]), P::Write(o["d"])));
  EXPECT_TRUE(ord.ExecutesBefore(P::Write(o["ya"]), P::Read(o["d"])));
}

constexpr char kAsync[] = R"(
HloModule m

wrapped {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}

ENTRY e {
  p = f32[4] parameter(0)
  s = ((f32[4]), f32[4], s32[]) async-start(p), calls=wrapped
  mid = f32[4] exponential(p)
  d = f32[4] async-done(s)
  ROOT r = f32[4] add(d, mid)
}
)";

TEST(DependencyOrdering, AsyncComputationRunsUntilItsDone) {
  Ordered o = Order(kAsync);
  ASSERT_NE(o.ordering, nullptr);
  const DependencyOrdering& ord = *o.ordering;
  EXPECT_TRUE(ord.ExecutesBefore(P::Read(o["s"]), P::Write(o["n"])));
  EXPECT_TRUE(ord.ExecutesBefore(P::Write(o["n"]), P::Write(o["d"])));
  // Not finished when the start is: in flight until the done.
  EXPECT_FALSE(ord.ExecutesBefore(P::Write(o["n"]), P::Write(o["s"])));
  EXPECT_FALSE(ord.ExecutesBefore(P::Write(o["n"]), P::Read(o["d"])));
  EXPECT_TRUE(ord.ExecutesBefore(P::Write(o["n"]), P::Read(o["r"])));
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
