#include "xlite/cpu/multi_output_fusion.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "xlite/cpu/cpu_test_util.h"
#include "xlite/cpu/fusion.h"
#include "xlite/passes/pass_test_util.h"

namespace xlite::cpu {
namespace {
namespace XLITE_UNITY_ID {

using testing::Occurrences;

// LoopFusion, then the pass (both verified after running).
std::string Fuse(const std::string& text, bool* changed = nullptr) {
  const std::string fused =
      pass_test::RunPass<LoopFusion>(text, nullptr, /*then_dce=*/true, PrintOptions::Short());
  return pass_test::RunPass<MultiOutputFusion>(fused, changed, /*then_dce=*/true,
                                               PrintOptions::Short());
}

// Adam's update: two elementwise chains reading the same gradient.
constexpr char kSiblings[] = R"(
HloModule m
ENTRY e {
  g = f32[1024] parameter(0)
  m = f32[1024] parameter(1)
  v = f32[1024] parameter(2)
  b1 = f32[1024] broadcast(f32[] constant(0.9)), dimensions={}
  b2 = f32[1024] broadcast(f32[] constant(0.999)), dimensions={}
  m1 = f32[1024] add(f32[1024] multiply(m, b1), g)
  g2 = f32[1024] multiply(g, g)
  v1 = f32[1024] add(f32[1024] multiply(v, b2), g2)
  ROOT r = (f32[1024], f32[1024]) tuple(m1, v1)
})";

TEST(MultiOutputFusion, SiblingsReadingOneOperandBecomeOneKernel) {
  bool changed = false;
  const std::string out = Fuse(kSiblings, &changed);
  EXPECT_TRUE(changed);
  EXPECT_EQ(Occurrences(out, " fusion("), 1) << out;
  EXPECT_EQ(Occurrences(out, " get-tuple-element("), 2) << out;
  // The elements take the fusions' names; the root tuple still reads them.
  EXPECT_NE(out.find("ROOT r = (f32[1024]{0}, f32[1024]{0}) tuple("), std::string::npos) << out;
  const std::string thunks = testing::ExpectAgreesWithInterpreter(kSiblings);
  EXPECT_EQ(Occurrences(thunks, "kKernel"), 1) << thunks;
}

// b's fusion reads a's result: merging them would make a cycle.
TEST(MultiOutputFusion, NeverMergesAFusionWithOneThatDependsOnIt) {
  const std::string text = R"(
HloModule m
ENTRY e {
  x = f32[256] parameter(0)
  a = f32[256] exponential(f32[256] add(x, x))
  s = f32[] reduce(a, f32[] constant(0)), dimensions={0}, to_apply={ p = f32[] parameter(0)  q = f32[] parameter(1)  ROOT t = f32[] add(p, q) }
  bs = f32[256] broadcast(s), dimensions={}
  b = f32[256] multiply(f32[256] subtract(x, bs), x)
  ROOT r = (f32[256], f32[256]) tuple(a, b)
})";
  const std::string out = Fuse(text);
  EXPECT_EQ(Occurrences(out, " get-tuple-element("), 0) << out;
  testing::ExpectAgreesWithInterpreter(text);
}

// A reduce keeps its own kernel (its loop differs); different dimensions
// cannot share one loop.
TEST(MultiOutputFusion, LeavesReductionsAndOtherDimensionsAlone) {
  const std::string text = R"(
HloModule m
add { p = f32[] parameter(0)  q = f32[] parameter(1)  ROOT t = f32[] add(p, q) }
ENTRY e {
  x = f32[64,32] parameter(0)
  rows = f32[64] reduce(f32[64,32] multiply(x, x), f32[] constant(0)), dimensions={1}, to_apply=add
  e = f32[64,32] exponential(f32[64,32] negate(x))
  t = f32[32,64] transpose(f32[64,32] sqrt(x)), dimensions={1,0}
  ROOT r = (f32[64], f32[64,32], f32[32,64]) tuple(rows, e, t)
})";
  bool changed = true;
  const std::string out = Fuse(text, &changed);
  EXPECT_FALSE(changed) << out;
  testing::ExpectAgreesWithInterpreter(text);
}

// An LSTM cell: c is stored (a result) and read by h's fusion element for
// element, so it is computed in h's loop as a second output.
constexpr char kCell[] = R"(
HloModule m
ENTRY e {
  f = f32[16,128] parameter(0)
  c0 = f32[16,128] parameter(1)
  i = f32[16,128] parameter(2)
  g = f32[16,128] parameter(3)
  o = f32[16,128] parameter(4)
  c = f32[16,128] add(f32[16,128] multiply(f, c0), f32[16,128] multiply(i, g))
  h = f32[16,128] multiply(o, f32[16,128] tanh(c))
  ROOT r = (f32[16,128], f32[16,128]) tuple(h, c)
})";

TEST(MultiOutputFusion, AStoredProducerJoinsAConsumerReadingItElementForElement) {
  const std::string loop_fused =
      pass_test::RunPass<LoopFusion>(kCell, nullptr, /*then_dce=*/true, PrintOptions::Short());
  ASSERT_EQ(Occurrences(loop_fused, " fusion("), 2) << loop_fused;
  bool changed = false;
  const std::string out = Fuse(kCell, &changed);
  EXPECT_TRUE(changed);
  EXPECT_EQ(Occurrences(out, " fusion("), 1) << out;
  // The consumer's result first, then the producer's; the elements take the
  // fusions' names (h's was fusion, c's fusion.1), so the root reads the same.
  EXPECT_NE(out.find("tuple(h, c)"), std::string::npos) << out;
  EXPECT_NE(out.find("fusion = f32[16,128]{1,0} get-tuple-element(fusion.2), index=0"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("fusion.1 = f32[16,128]{1,0} get-tuple-element(fusion.2), index=1"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("ROOT r = (f32[16,128]{1,0}, f32[16,128]{1,0}) tuple(fusion, fusion.1)"),
            std::string::npos)
      << out;
  const std::string thunks = testing::ExpectAgreesWithInterpreter(kCell);
  EXPECT_EQ(Occurrences(thunks, "kKernel"), 1) << thunks;
}

// Two stored producers read by one consumer (no common operand, so not
// siblings): both join it, the second one a multi-output consumer.
TEST(MultiOutputFusion, ProducersJoinAMultiOutputConsumer) {
  const std::string text = R"(
HloModule m
ENTRY e {
  a = f32[256] parameter(0)
  b = f32[256] parameter(1)
  x = f32[256] parameter(2)
  y = f32[256] parameter(3)
  p = f32[256] parameter(4)
  q = f32[256] parameter(5)
  v = f32[256] parameter(6)
  w = f32[256] parameter(7)
  c1 = f32[256] add(f32[256] multiply(a, b), f32[256] multiply(x, y))
  c2 = f32[256] add(f32[256] multiply(p, q), f32[256] multiply(v, w))
  h = f32[256] multiply(f32[256] exponential(c1), c2)
  ROOT r = (f32[256], f32[256], f32[256]) tuple(h, c1, c2)
})";
  const std::string out = Fuse(text);
  EXPECT_EQ(Occurrences(out, " fusion("), 1) << out;
  EXPECT_EQ(Occurrences(out, " get-tuple-element("), 3) << out;
  EXPECT_NE(out.find("tuple(h, c1, c2)"), std::string::npos) << out;
  const std::string thunks = testing::ExpectAgreesWithInterpreter(text);
  EXPECT_EQ(Occurrences(thunks, "kKernel"), 1) << thunks;
}

// Adam's whole step: the two moments, siblings of the gradient, merge first;
// the parameter's update reads both (through get-tuple-elements) element for
// element, and the multi-output producer joins it: one kernel, three results.
TEST(MultiOutputFusion, AMultiOutputProducerJoinsItsConsumer) {
  const std::string text = absl::StrReplaceAll(
      kSiblings, {{"  v = f32[1024] parameter(2)\n",
                   "  v = f32[1024] parameter(2)\n  p = f32[1024] parameter(3)\n"},
                  {"  ROOT r = (f32[1024], f32[1024]) tuple(m1, v1)", R"(
  eps = f32[1024] broadcast(f32[] constant(1e-8)), dimensions={}
  step = f32[1024] divide(m1, f32[1024] add(f32[1024] sqrt(v1), eps))
  lr = f32[1024] broadcast(f32[] constant(-0.001)), dimensions={}
  p1 = f32[1024] add(p, f32[1024] multiply(step, lr))
  ROOT r = (f32[1024], f32[1024], f32[1024]) tuple(p1, m1, v1))"}});
  const std::string loop_fused =
      pass_test::RunPass<LoopFusion>(text, nullptr, /*then_dce=*/true, PrintOptions::Short());
  ASSERT_EQ(Occurrences(loop_fused, " fusion("), 3) << loop_fused;
  const std::string out = Fuse(text);
  EXPECT_EQ(Occurrences(out, " fusion("), 1) << out;
  EXPECT_EQ(Occurrences(out, " get-tuple-element("), 3) << out;
  const std::string thunks = testing::ExpectAgreesWithInterpreter(text);
  EXPECT_EQ(Occurrences(thunks, "kKernel"), 1) << thunks;
}

// Not where the consumer reads one of a multi-output producer's results at
// other elements (a transpose of the second moment).
TEST(MultiOutputFusion, AMultiOutputProducerStaysOutOfAConsumerReadingItElsewhere) {
  const std::string text = R"(
HloModule m
ENTRY e {
  g = f32[32,32] parameter(0)
  m = f32[32,32] parameter(1)
  v = f32[32,32] parameter(2)
  p = f32[32,32] parameter(3)
  b1 = f32[32,32] broadcast(f32[] constant(0.9)), dimensions={}
  m1 = f32[32,32] add(f32[32,32] multiply(m, b1), g)
  v1 = f32[32,32] add(v, f32[32,32] multiply(g, g))
  t = f32[32,32] transpose(v1), dimensions={1,0}
  p1 = f32[32,32] add(p, f32[32,32] divide(m1, f32[32,32] sqrt(t)))
  ROOT r = (f32[32,32], f32[32,32], f32[32,32]) tuple(p1, m1, v1)
})";
  const std::string out = Fuse(text);
  EXPECT_EQ(Occurrences(out, " fusion("), 2) << out;  // the moments; the update alone
  testing::ExpectAgreesWithInterpreter(text);
}

// Not where another of the producer's results reaches the consumer through
// another fusion (X reverses gv; C reads gm and X: merged, C's kernel would
// wait for X, which waits for it), nor where a get-tuple-element the consumer
// reads is ordered by a control edge (a merged kernel would not read it).
TEST(MultiOutputFusion, AMultiOutputProducerStaysOutThroughOthersOrControlEdges) {
  for (const char* consumer : {
           R"(X = f32[64] fusion(gv), kind=kLoop, calls=fx
              C = f32[64] fusion(gm, X), kind=kLoop, calls=fc)",
           R"(X = f32[64] fusion(g), kind=kLoop, calls=fx
              gm2 = f32[64] get-tuple-element(P), index=1, control-predecessors={X}
              C = f32[64] fusion(gm2, g), kind=kLoop, calls=fc)",
       }) {
    const std::string text = absl::StrCat(R"(
HloModule m
fp {
  g = f32[64] parameter(0)
  v = f32[64] parameter(1)
  m = f32[64] parameter(2)
  ROOT t = (f32[64], f32[64]) tuple(f32[64] add(v, g), f32[64] multiply(m, g))
}
fx { a = f32[64] parameter(0)  ROOT r = f32[64] reverse(a), dimensions={0} }
fc { a = f32[64] parameter(0)  b = f32[64] parameter(1)  ROOT r = f32[64] subtract(a, b) }
ENTRY e {
  g = f32[64] parameter(0)
  v = f32[64] parameter(1)
  m = f32[64] parameter(2)
  P = (f32[64], f32[64]) fusion(g, v, m), kind=kLoop, calls=fp
  gv = f32[64] get-tuple-element(P), index=0
  gm = f32[64] get-tuple-element(P), index=1
  )",
                                          consumer, R"(
  ROOT r = (f32[64], f32[64], f32[64], f32[64]) tuple(C, X, gv, gm)
})");
    const std::string out = pass_test::RunPass<MultiOutputFusion>(text, nullptr, /*then_dce=*/true,
                                                                  PrintOptions::Short());
    EXPECT_NE(out.find("  P = (f32[64]{0}, f32[64]{0}) fusion("), std::string::npos) << out;
    testing::ExpectAgreesWithInterpreter(text);
  }
}

// Not where the consumer reads the producer at other elements (a transpose:
// element i would be computed again where read), and not where another path
// runs from the producer to the consumer (a reduce of it: the merged kernel
// would wait for itself).
TEST(MultiOutputFusion, AProducerStaysOutOfConsumersReadingItElsewhereOrThroughOthers) {
  for (const char* consumer : {
           R"(e = f32[32,32] exponential(c)
              t = f32[32,32] transpose(e), dimensions={1,0}
              u = f32[32,32] multiply(t, x))",
           R"(s = f32[32] reduce(c, f32[] constant(0)), dimensions={0}, to_apply=add
              e = f32[32,32] exponential(c)
              bs = f32[32,32] broadcast(s), dimensions={1}
              u = f32[32,32] multiply(e, bs))",
       }) {
    const std::string text = absl::StrCat(R"(
HloModule m
add { p = f32[] parameter(0)  q = f32[] parameter(1)  ROOT t = f32[] add(p, q) }
ENTRY e {
  a = f32[32,32] parameter(0)
  b = f32[32,32] parameter(1)
  x = f32[32,32] parameter(2)
  c = f32[32,32] add(f32[32,32] multiply(a, b), f32[32,32] multiply(x, b))
  )",
                                          consumer, R"(
  ROOT r = (f32[32,32], f32[32,32]) tuple(c, u)
})");
    bool changed = true;
    const std::string out = Fuse(text, &changed);
    EXPECT_FALSE(changed) << out;
    testing::ExpectAgreesWithInterpreter(text);
  }
}

// A fused computation that computes the sum of its `n` f32[8] parameters.
std::string SumComputation(const std::string& name, int n) {
  std::string text = absl::StrCat(name, " {\n");
  for (int i = 0; i < n; ++i) absl::StrAppend(&text, "  p", i, " = f32[8] parameter(", i, ")\n");
  std::string last = "p0";
  for (int i = 1; i < n; ++i) {
    absl::StrAppend(&text, "  ", i + 1 == n ? "ROOT " : "", "s", i, " = f32[8] add(", last, ", p",
                    i, ")\n");
    last = absl::StrCat("s", i);
  }
  return text + "}\n";
}

// Siblings of one operand that the operand limit splits into two groups,
// each group reading the other's member once one is merged (y reads x, z
// reads a): merging both groups would make a cycle, so the second group is
// formed again after the first merge and x and z stay apart.
TEST(MultiOutputFusion, SiblingGroupsAreFormedAgainAfterEachMerge) {
  std::string text = "HloModule m\n" + SumComputation("wide_a", 21) + SumComputation("wide_x", 21) +
                     SumComputation("pair_y", 2) + SumComputation("pair_z", 2);
  absl::StrAppend(&text, "ENTRY e {\n  p = f32[8] parameter(0)\n");
  std::string a_args = "p", b_args = "p";
  for (int i = 1; i <= 20; ++i) {
    absl::StrAppend(&text, "  a", i, " = f32[8] parameter(", i, ")\n");
    absl::StrAppend(&text, "  b", i, " = f32[8] parameter(", 20 + i, ")\n");
    absl::StrAppend(&a_args, ", a", i);
    absl::StrAppend(&b_args, ", b", i);
  }
  absl::StrAppend(&text, "  a = f32[8] fusion(", a_args, "), kind=kLoop, calls=wide_a\n",
                  "  x = f32[8] fusion(", b_args, "), kind=kLoop, calls=wide_x\n",
                  "  y = f32[8] fusion(p, x), kind=kLoop, calls=pair_y\n",
                  "  z = f32[8] fusion(p, a), kind=kLoop, calls=pair_z\n",
                  "  ROOT r = (f32[8], f32[8], f32[8], f32[8]) tuple(a, x, y, z)\n}\n");
  bool changed = false;
  const std::string out = pass_test::RunPass<MultiOutputFusion>(text, &changed, /*then_dce=*/true,
                                                                PrintOptions::Short());
  EXPECT_TRUE(changed);
  // {a, y} merged, then joined z (which reads a element for element) as a
  // producer; x alone.
  EXPECT_EQ(Occurrences(out, " fusion("), 2) << out;
  EXPECT_NE(out.find("  x = f32[8]{0} fusion("), std::string::npos) << out;
  testing::ExpectAgreesWithInterpreter(text);
}

// The same with a longer way round: z reads a through w, and both come
// before x in program order. After {a, y} merges, w and z must rank above
// x, or the walk for dependences from x stops at them and merges x and z
// into a cycle.
TEST(MultiOutputFusion, DependencesThroughAMergedFusionAreSeenFromLaterFusions) {
  std::string text = "HloModule m\n" + SumComputation("wide_a", 21) + SumComputation("wide_x", 21);
  for (const char* name : {"y", "w", "z"}) {
    text += SumComputation(absl::StrCat("pair_", name), 2);
  }
  absl::StrAppend(&text, "ENTRY e {\n  p = f32[8] parameter(0)\n  q = f32[8] parameter(41)\n");
  std::string a_args = "p", x_args = "p";
  for (int i = 1; i <= 20; ++i) {
    absl::StrAppend(&text, "  a", i, " = f32[8] parameter(", i, ")\n");
    absl::StrAppend(&text, "  b", i, " = f32[8] parameter(", 20 + i, ")\n");
    absl::StrAppend(&a_args, ", a", i);
    absl::StrAppend(&x_args, ", b", i);
  }
  absl::StrAppend(&text, "  a = f32[8] fusion(", a_args, "), kind=kLoop, calls=wide_a\n",
                  "  w = f32[8] fusion(a, q), kind=kLoop, calls=pair_w\n",
                  "  z = f32[8] fusion(p, w), kind=kLoop, calls=pair_z\n", "  x = f32[8] fusion(",
                  x_args, "), kind=kLoop, calls=wide_x\n",
                  "  y = f32[8] fusion(p, x), kind=kLoop, calls=pair_y\n",
                  "  ROOT r = (f32[8], f32[8], f32[8], f32[8]) tuple(a, x, y, z)\n}\n");
  bool changed = false;
  const std::string out = pass_test::RunPass<MultiOutputFusion>(text, &changed, /*then_dce=*/true,
                                                                PrintOptions::Short());
  EXPECT_TRUE(changed);
  // {a, y} merged, which w and then z (reading them element for element)
  // take as producers; x alone.
  EXPECT_EQ(Occurrences(out, " fusion("), 2) << out;
  EXPECT_NE(out.find("  x = f32[8]{0} fusion("), std::string::npos) << out;
  testing::ExpectAgreesWithInterpreter(text);
}

// A fused computation two fusions call is left alone: a merge removes the
// computations it merged.
TEST(MultiOutputFusion, LeavesFusionsSharingAComputationAlone) {
  const std::string text = R"(
HloModule m
f { q = f32[64] parameter(0)  ROOT e = f32[64] exponential(q) }
ENTRY e {
  x = f32[64] parameter(0)
  p = f32[64] fusion(x), kind=kLoop, calls=f
  c = f32[64] fusion(p), kind=kLoop, calls=f
  ROOT r = (f32[64], f32[64]) tuple(p, c)
})";
  bool changed = true;
  const std::string out = pass_test::RunPass<MultiOutputFusion>(text, &changed, /*then_dce=*/true,
                                                                PrintOptions::Short());
  EXPECT_FALSE(changed) << out;
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::cpu
