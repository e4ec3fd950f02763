// while-loop-constant-sinking and while-loop-simplifier (while_loop_state.h).
#include <string>

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"
#include "xlite/passes/equivalence_test_util.h"
#include "xlite/passes/pass_test_util.h"
#include "xlite/passes/while_loop_constant_sinking.h"
#include "xlite/passes/while_loop_simplifier.h"
#include "xlite/text/parser.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

// A counter, an accumulator, a constant bound the condition reads, a
// constant step the body reads, and an iota the body reads one element of:
// the last three are passed through unchanged; nothing reads them after the
// loop.
constexpr char kLoop[] = R"(
HloModule m
body {
  p = (s32[], s32[], s32[], s32[], s32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = s32[] get-tuple-element(p), index=1
  bound = s32[] get-tuple-element(p), index=2
  step = s32[] get-tuple-element(p), index=3
  v = s32[8] get-tuple-element(p), index=4
  n = s32[] add(i, step)
  ds = s32[1] dynamic-slice(v, i), dynamic_slice_sizes={1}
  e = s32[] reshape(ds)
  a = s32[] add(acc, e)
  ROOT out = (s32[], s32[], s32[], s32[], s32[8]) tuple(n, a, bound, step, v)
}
cond {
  p = (s32[], s32[], s32[], s32[], s32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  bound = s32[] get-tuple-element(p), index=2
  ROOT lt = pred[] compare(i, bound), direction=LT
}
ENTRY e {
  x = s32[] parameter(0)
  z = s32[] constant(0)
  eight = s32[] constant(8)
  one = s32[] constant(1)
  v = s32[8] iota(), iota_dimension=0
  t = (s32[], s32[], s32[], s32[], s32[8]) tuple(z, x, eight, one, v)
  w = (s32[], s32[], s32[], s32[], s32[8]) while(t), condition=cond, body=body
  ROOT r = s32[] get-tuple-element(w), index=1
})";

// Sinks iotas and broadcasts too (rematerialization's choice).
struct SinkEverything : WhileLoopConstantSinking {
  SinkEverything()
      : WhileLoopConstantSinking({.sink_broadcast_of_constants = true, .sink_iotas = true}) {}
};

// Every instruction after its operands in its computation's list: the order
// is still a schedule.
bool ListsAreSchedules(const std::string& text) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "t.hlo");
  if (!m.ok()) return false;
  for (const auto& c : (*m)->computations()) {
    absl::flat_hash_set<const HloInstruction*> seen;
    for (const auto& i : c->instructions()) {
      for (const HloInstruction* op : i->operands()) {
        if (!seen.contains(op)) return false;
      }
      seen.insert(i.get());
    }
  }
  return true;
}

TEST(WhileLoopConstantSinking, ConstantsAreReadInsideTheLoop) {
  bool changed = false;
  const std::string out = pass_test::RunPass<WhileLoopConstantSinking>(
      kLoop, &changed, /*then_dce=*/false, PrintOptions::Short());
  EXPECT_TRUE(changed);
  // The body adds the step as a constant, the condition compares with the
  // bound as one; the iota stays loop state (XLA's default sinks constants
  // only); the elements themselves stay until while-loop-simplifier.
  EXPECT_NE(out.find("one.sunk = s32[] constant(1)"), std::string::npos) << out;
  EXPECT_NE(out.find("n = s32[] add(i, one.sunk)"), std::string::npos) << out;
  EXPECT_NE(out.find("eight.sunk = s32[] constant(8)"), std::string::npos) << out;
  EXPECT_NE(out.find("compare(i, eight.sunk)"), std::string::npos) << out;
  EXPECT_EQ(out.find("iota.sunk"), std::string::npos) << out;
  EXPECT_EQ(out.find("v.sunk"), std::string::npos) << out;
  EXPECT_NE(out.find("tuple(n, a, bound, step, v)"), std::string::npos) << out;
  EXPECT_TRUE(ListsAreSchedules(out)) << out;
  bool again = false;
  EXPECT_EQ(pass_test::CheckPassKeepsResults<WhileLoopConstantSinking>(kLoop, &again), "");
  EXPECT_TRUE(again);
}

TEST(WhileLoopConstantSinking, IotasSinkWhenAsked) {
  const std::string out =
      pass_test::RunPass<SinkEverything>(kLoop, nullptr, /*then_dce=*/false, PrintOptions::Short());
  EXPECT_NE(out.find("v.sunk = s32[8]{0} iota(), iota_dimension=0"), std::string::npos) << out;
  EXPECT_NE(out.find("dynamic-slice(v.sunk, i)"), std::string::npos) << out;
  EXPECT_TRUE(ListsAreSchedules(out)) << out;
  EXPECT_EQ(pass_test::CheckPassKeepsResults<SinkEverything>(kLoop), "");
}

TEST(WhileLoopConstantSinking, LeavesVaryingElementsAndOtherInitsAlone) {
  // The step is a parameter now, and the bound changes in the loop.
  std::string text = kLoop;
  text.replace(text.find("one = s32[] constant(1)"), 23, "one = s32[] parameter(1)");
  text.replace(text.find("tuple(n, a, bound, step, v)"), 27, "tuple(n, a, n, step, v)");
  bool changed = true;
  const std::string out =
      pass_test::RunPass<WhileLoopConstantSinking>(text, &changed, false, PrintOptions::Short());
  EXPECT_FALSE(changed) << out;
}

TEST(WhileLoopSimplifier, DropsStateNothingReads) {
  // After sinking everything, the bound, the step and the iota are handed on
  // and never read: the loop carries the counter and the accumulator only,
  // and the entry no longer makes the iota.
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(kLoop, "t.hlo");
  ASSERT_TRUE(m.ok()) << m.status();
  HloPassPipeline pipeline("test");
  pipeline.AddPass<SinkEverything>();
  pipeline.AddPass<WhileLoopSimplifier>();
  PipelineOptions options;
  options.verify_each_pass = true;
  pipeline.set_options(options);
  absl::StatusOr<bool> ran = pipeline.Run(**m);
  ASSERT_TRUE(ran.ok()) << ran.status();
  EXPECT_TRUE(pipeline.records().back().changed);
  const std::string out = PrintModule(**m, PrintOptions::Short());
  EXPECT_NE(out.find("w = (s32[], s32[]) while(t)"), std::string::npos) << out;
  EXPECT_NE(out.find("t = (s32[], s32[]) tuple(z, x)"), std::string::npos) << out;
  EXPECT_NE(out.find("ROOT out = (s32[], s32[]) tuple(n, a)"), std::string::npos) << out;
  EXPECT_EQ(out.find("iota()", out.find("ENTRY")), std::string::npos) << out;
  EXPECT_TRUE(ListsAreSchedules(out)) << out;
  // Same results, by the interpreter.
  absl::StatusOr<std::unique_ptr<HloModule>> m2 = ParseHloModule(kLoop, "t.hlo");
  ASSERT_TRUE(m2.ok());
  EXPECT_EQ(pass_test::CheckPassKeepsResults<SinkEverything>(**m2), "");
  bool changed = false;
  EXPECT_EQ(pass_test::CheckPassKeepsResults<WhileLoopSimplifier>(**m2, &changed), "");
  EXPECT_TRUE(changed);
}

TEST(WhileLoopSimplifier, DropsStateComputedOnlyForItself) {
  // Element 2 counts iterations separately; only its own next value reads
  // it: it goes with its add.
  bool changed = false;
  const std::string out =
      pass_test::RunPass<WhileLoopSimplifier>(R"(
HloModule m
body {
  p = (s32[], s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = s32[] get-tuple-element(p), index=1
  c = s32[] get-tuple-element(p), index=2
  one = s32[] constant(1)
  n = s32[] add(i, one)
  a = s32[] add(acc, i)
  c2 = s32[] add(c, one)
  ROOT out = (s32[], s32[], s32[]) tuple(n, a, c2)
}
cond {
  p = (s32[], s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(5)
  ROOT lt = pred[] compare(i, k), direction=LT
}
ENTRY e {
  z = s32[] constant(0)
  t = (s32[], s32[], s32[]) tuple(z, z, z)
  w = (s32[], s32[], s32[]) while(t), condition=cond, body=body
  ROOT r = s32[] get-tuple-element(w), index=1
})",
                                              &changed, false, PrintOptions::Short());
  EXPECT_TRUE(changed);
  EXPECT_EQ(out.find("c2"), std::string::npos) << out;
  EXPECT_NE(out.find("ROOT out = (s32[], s32[]) tuple(n, a)"), std::string::npos) << out;
  EXPECT_TRUE(ListsAreSchedules(out)) << out;
}

TEST(WhileLoopSimplifier, DeadCodeReadingADroppedElementGoesWithIt) {
  // Element 2 is handed on; only dead code (what an earlier rewrite left,
  // before dce) reads it. It goes, and the dead multiply with it: the
  // verifier after the pass sees no read of a missing element.
  bool changed = false;
  const std::string out =
      pass_test::RunPass<WhileLoopSimplifier>(R"(
HloModule m
body {
  p = (s32[], s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = s32[] get-tuple-element(p), index=1
  y = s32[] get-tuple-element(p), index=2
  zero = s32[] constant(0)
  dead = s32[] multiply(y, zero)
  one = s32[] constant(1)
  n = s32[] add(i, one)
  x2 = s32[] add(x, i)
  ROOT out = (s32[], s32[], s32[]) tuple(n, x2, y)
}
cond {
  p = (s32[], s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(5)
  ROOT lt = pred[] compare(i, k), direction=LT
}
ENTRY e {
  z = s32[] constant(0)
  t = (s32[], s32[], s32[]) tuple(z, z, z)
  w = (s32[], s32[], s32[]) while(t), condition=cond, body=body
  ROOT r = s32[] get-tuple-element(w), index=1
})",
                                              &changed, false, PrintOptions::Short());
  EXPECT_TRUE(changed);
  EXPECT_EQ(out.find("dead"), std::string::npos) << out;
  EXPECT_NE(out.find("ROOT out = (s32[], s32[]) tuple(n, x2)"), std::string::npos) << out;
}

TEST(WhileLoopSimplifier, AnInitTupleThatIsTheResultKeepsItsShape) {
  // The entry returns the init tuple itself: the loop's init becomes a tuple
  // of get-tuple-elements of it, and the result keeps both elements.
  bool changed = false;
  const std::string out =
      pass_test::RunPass<WhileLoopSimplifier>(R"(
HloModule m
body {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  y = s32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  n = s32[] add(i, one)
  ROOT out = (s32[], s32[]) tuple(n, y)
}
cond {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(5)
  ROOT lt = pred[] compare(i, k), direction=LT
}
ENTRY e {
  z = s32[] constant(0)
  ROOT t = (s32[], s32[]) tuple(z, z)
  w = (s32[], s32[]) while(t), condition=cond, body=body
})",
                                              &changed, false, PrintOptions::Short());
  EXPECT_TRUE(changed);
  EXPECT_NE(out.find("ROOT t = (s32[], s32[]) tuple(z, z)"), std::string::npos) << out;
  EXPECT_NE(out.find("w = (s32[]) while("), std::string::npos) << out;
}

TEST(WhileLoopSimplifier, KeepsStateSomethingReads) {
  // The condition reads the bound, the body reads the step and the iota,
  // the accumulator is the result, and the counter feeds the next counter:
  // every element is needed.
  bool changed = true;
  pass_test::RunPass<WhileLoopSimplifier>(kLoop, &changed);
  EXPECT_FALSE(changed);
  // An element read after the loop stays, though the loop only hands it on.
  std::string text = kLoop;
  text.replace(text.find("ROOT r = s32[] get-tuple-element(w), index=1"), 44,
               "r1 = s32[] get-tuple-element(w), index=1\n"
               "  r3 = s32[] get-tuple-element(w), index=3\n"
               "  ROOT r = s32[] add(r1, r3)");
  bool sunk_changed = false;
  const std::string out = pass_test::RunPass<SinkEverything>(text, &sunk_changed);
  EXPECT_TRUE(sunk_changed);
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(out, "t.hlo");
  ASSERT_TRUE(m.ok()) << m.status() << out;
  HloPassPipeline pipeline("test");
  pipeline.AddPass<WhileLoopSimplifier>();
  ASSERT_TRUE(pipeline.Run(**m).ok());
  const std::string simplified = PrintModule(**m, PrintOptions::Short());
  // The bound and the iota go; the step (element 3), read after the loop, stays.
  EXPECT_NE(simplified.find("while(t)"), std::string::npos) << simplified;
  EXPECT_NE(simplified.find("(s32[], s32[], s32[]) while"), std::string::npos) << simplified;
  EXPECT_NE(simplified.find("get-tuple-element(w), index=2"), std::string::npos) << simplified;
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
