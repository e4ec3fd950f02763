#include "xlite/passes/while_loop_invariant_code_motion.h"

#include <string>

#include "gtest/gtest.h"
#include "xlite/passes/equivalence_test_util.h"
#include "xlite/passes/pass_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

// jax.b380442861's shape: a 1000-element reduce of iotas, recomputed in
// every iteration, though it reads nothing the loop changes.
constexpr char kLoop[] = R"(
HloModule m
sum {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
body {
  p = (s32[], s32[], s32[1000]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = s32[] get-tuple-element(p), index=1
  v = s32[1000] get-tuple-element(p), index=2
  one = s32[] constant(1)
  n = s32[] add(i, one)
  sq = s32[1000] multiply(v, v)
  zero = s32[] constant(0)
  r = s32[] reduce(sq, zero), dimensions={0}, to_apply=sum
  ds = s32[1] dynamic-slice(v, i), dynamic_slice_sizes={1}
  e = s32[] reshape(ds)
  t = s32[] add(acc, r)
  u = s32[] add(t, e)
  ROOT out = (s32[], s32[], s32[1000]) tuple(n, u, v)
}
cond {
  p = (s32[], s32[], s32[1000]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(50)
  ROOT lt = pred[] compare(i, k), direction=LT
}
ENTRY e {
  z = s32[] constant(0)
  v = s32[1000] iota(), iota_dimension=0
  t = (s32[], s32[], s32[1000]) tuple(z, z, v)
  ROOT w = (s32[], s32[], s32[1000]) while(t), condition=cond, body=body
})";

TEST(WhileLoopInvariantCodeMotion, HoistsInvariantReductionsOutOfTheLoop) {
  bool changed = false;
  const std::string out = pass_test::RunPass<WhileLoopInvariantCodeMotion>(
      kLoop, &changed, /*then_dce=*/true, PrintOptions::Short());
  EXPECT_TRUE(changed);
  // The reduce runs once, in the entry; the loop reads it as element 3; the
  // while's users still see three elements.
  const size_t entry = out.find("ENTRY");
  ASSERT_NE(entry, std::string::npos) << out;
  EXPECT_NE(out.find("reduce(", entry), std::string::npos) << out;
  EXPECT_EQ(out.substr(0, entry).find("reduce("), std::string::npos) << out;
  EXPECT_NE(out.find("r.hoisted = s32[] get-tuple-element(p), index=3"), std::string::npos) << out;
  EXPECT_NE(out.find("ROOT tuple"), std::string::npos) << out;
  // Same results, by the interpreter.
  bool again = false;
  EXPECT_EQ(pass_test::CheckPassKeepsResults<WhileLoopInvariantCodeMotion>(kLoop, &again), "");
  EXPECT_TRUE(again);
}

TEST(WhileLoopInvariantCodeMotion, LeavesVaryingAndCheapWorkInside) {
  std::string text = kLoop;
  // The reduce now reads the counter: it varies.
  text.replace(text.find("sq = s32[1000] multiply(v, v)"), 29,
               "bi = s32[1000] broadcast(i), dimensions={}\n  sq = s32[1000] multiply(v, bi)");
  bool changed = true;
  pass_test::RunPass<WhileLoopInvariantCodeMotion>(text, &changed);
  EXPECT_FALSE(changed);
  // Only cheap invariant work (a negate of an element): nothing to hoist.
  bool cheap_changed = true;
  pass_test::RunPass<WhileLoopInvariantCodeMotion>(R"(
HloModule m
body {
  p = (s32[], s32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = s32[8] get-tuple-element(p), index=1
  neg = s32[8] negate(v)
  one = s32[] constant(1)
  n = s32[] add(i, one)
  ROOT out = (s32[], s32[8]) tuple(n, neg)
}
cond {
  p = (s32[], s32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(5)
  ROOT lt = pred[] compare(i, k), direction=LT
}
ENTRY e {
  z = s32[] constant(0)
  v = s32[8] iota(), iota_dimension=0
  t = (s32[], s32[8]) tuple(z, v)
  ROOT w = (s32[], s32[8]) while(t), condition=cond, body=body
})",
                                                   &cheap_changed);
  EXPECT_FALSE(cheap_changed);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
