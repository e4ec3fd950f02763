#include "xlite/cpu/fusion.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "xlite/cpu/cpu_test_util.h"
#include "xlite/passes/pass_test_util.h"

namespace xlite::cpu {
namespace {
namespace XLITE_UNITY_ID {

std::string Fuse(const std::string& text, bool* changed = nullptr) {
  return pass_test::RunPass<LoopFusion>(text, changed, /*then_dce=*/true, PrintOptions::Short());
}

using testing::Occurrences;

// sqrt(0.7x + 0.1) * x + 1: one fusion with the scalars inside.
constexpr char kChain[] = R"(
HloModule m
ENTRY e {
  x = f32[1024] parameter(0)
  a = f32[] constant(0.7)
  b = f32[] constant(0.1)
  one = f32[] constant(1)
  ba = f32[1024] broadcast(a), dimensions={}
  bb = f32[1024] broadcast(b), dimensions={}
  b1 = f32[1024] broadcast(one), dimensions={}
  m = f32[1024] multiply(ba, x)
  s = f32[1024] add(m, bb)
  t = f32[1024] sqrt(s)
  y = f32[1024] multiply(t, x)
  ROOT r = f32[1024] add(y, b1)
})";

TEST(LoopFusion, FusesAChainIntoOneKernel) {
  bool changed = false;
  const std::string out = Fuse(kChain, &changed);
  EXPECT_TRUE(changed);
  EXPECT_EQ(Occurrences(out, " fusion("), 1) << out;
  EXPECT_NE(out.find("ROOT fusion = f32[1024]{0} fusion(x), kind=kLoop"), std::string::npos) << out;
  EXPECT_NE(out.find("t = f32[1024]{0} sqrt(s)"), std::string::npos) << out;  // names kept
  const std::string thunks = testing::ExpectAgreesWithInterpreter(kChain);
  EXPECT_EQ(Occurrences(thunks, "kKernel"), 1) << thunks;
}

// ew_chain_16M's tanh(0.7x + 0.1) * x + 1 is one fusion (tanh of f32
// vectorizes), and so is the same with log, sine or tan (libmvec); with
// remainder (fmod), a scalar libm call that would keep the loop around it
// from vectorizing, remainder stays a kernel between two fusions.
TEST(LoopFusion, LeavesScalarLibraryCallsOnTheirOwn) {
  std::string text = kChain;
  text.replace(text.find("sqrt(s)"), 7, "tanh(s)");
  EXPECT_EQ(Occurrences(Fuse(text), " fusion("), 1) << Fuse(text);
  text.replace(text.find("tanh(s)"), 7, "log(s)");
  EXPECT_EQ(Occurrences(Fuse(text), " fusion("), 1) << Fuse(text);
  text.replace(text.find("log(s)"), 6, "sine(s)");
  EXPECT_EQ(Occurrences(Fuse(text), " fusion("), 1) << Fuse(text);
  text.replace(text.find("sine(s)"), 7, "tan(s)");
  EXPECT_EQ(Occurrences(Fuse(text), " fusion("), 1) << Fuse(text);
  text.replace(text.find("tan(s)"), 6, "remainder(s, x)");
  const std::string out = Fuse(text);
  EXPECT_EQ(Occurrences(out, " fusion("), 2) << out;
  EXPECT_NE(out.find("t = f32[1024]{0} remainder(fusion"), std::string::npos) << out;
  const std::string thunks = testing::ExpectAgreesWithInterpreter(text);
  EXPECT_EQ(Occurrences(thunks, "kKernel"), 3) << thunks;
}

// Two fusions read negate, a broadcast and a square root (or a power). The
// cost model recomputes a producer in each reader where that costs less than
// a kernel of its own plus writing and reading its value: negate and the
// broadcast always; sqrt where the readers are bound by memory, not by their
// arithmetic (64 elements: the kernel's fixed cost; 2^22: memory, measured
// 2.25 -> 1.01 ms with sqrt duplicated); a power (3.3 ns an element) of 2^16
// elements is computed once.
TEST(LoopFusion, DuplicatesProducersWhereRecomputingCostsLess) {
  const std::string text = R"(
HloModule m
ENTRY e {
  x = f32[N] parameter(0)
  c = f32[] constant(2)
  bc = f32[N] broadcast(c), dimensions={}
  n = f32[N] negate(x)
  ex = f32[N] sqrt(x)
  a = f32[N] add(n, bc)
  b = f32[N] multiply(n, bc)
  u = f32[N] add(ex, a)
  v = f32[N] subtract(ex, b)
  ROOT r = (f32[N], f32[N]) tuple(u, v)
})";
  auto with = [&](absl::string_view n, absl::string_view op) {
    return absl::StrReplaceAll(text, {{"[N]", absl::StrCat("[", n, "]")}, {"sqrt(x)", op}});
  };
  for (absl::string_view n : {"64", "4194304"}) {
    const std::string out = Fuse(with(n, "sqrt(x)"));
    EXPECT_EQ(Occurrences(out, " fusion("), 2) << out;
    EXPECT_EQ(Occurrences(out, "sqrt("), 2) << out;
    EXPECT_EQ(Occurrences(out, "negate("), 2) << out;
    EXPECT_EQ(Occurrences(out, "broadcast("), 2) << out;
  }
  const std::string power = with("65536", "power(x, x)");
  const std::string out = Fuse(power);
  EXPECT_EQ(Occurrences(out, " fusion("), 2) << out;
  EXPECT_EQ(Occurrences(out, "power("), 1) << out;
  EXPECT_EQ(Occurrences(out, "negate("), 2) << out;
  EXPECT_NE(out.find("ex = f32[65536]{0} power(x, x)"), std::string::npos) << out;
  testing::ExpectAgreesWithInterpreter(with("64", "sqrt(x)"));
  testing::ExpectAgreesWithInterpreter(power);
}

// An LSTM cell's shape: c = f*c0 + i*g is a result (stored anyway) and read
// by h = o*tanh(c). Recomputing c inside h's fusion would read four arrays
// instead of one and leave the gates (expensive: exp, divide, tanh) read by
// two fusions, so computed apart; c's fusion holds them instead, as XLA's.
TEST(LoopFusion, KeepsAStoredValueOfSeveralArraysOutOfItsReaders) {
  const std::string text = R"(
HloModule m
ENTRY e {
  zf = f32[64] parameter(0)
  zi = f32[64] parameter(1)
  zg = f32[64] parameter(2)
  zo = f32[64] parameter(3)
  c0 = f32[64] parameter(4)
  ef = f32[64] exponential(zf)
  ei = f32[64] exponential(zi)
  g = f32[64] tanh(zg)
  fc = f32[64] multiply(ef, c0)
  ig = f32[64] multiply(ei, g)
  c = f32[64] add(fc, ig)
  tc = f32[64] tanh(c)
  o = f32[64] exponential(zo)
  h = f32[64] multiply(o, tc)
  ROOT r = (f32[64], f32[64]) tuple(h, c)
})";
  const std::string out = Fuse(text);
  EXPECT_EQ(Occurrences(out, " fusion("), 2) << out;
  EXPECT_EQ(Occurrences(out, "exponential("), 3) << out;  // each computed once
  EXPECT_EQ(Occurrences(out, "add("), 1) << out;          // c is not recomputed in h's
  EXPECT_NE(out.find("fusion(fusion.1, zo)"), std::string::npos) << out;  // h reads c
  testing::ExpectAgreesWithInterpreter(text);
}

// Through a broadcast along its major dimension a producer is computed once
// per element read: the exponential of 256 values read 2048 times would make
// the multiply's kernel bound by arithmetic (2048 exps, ~430 ns, against
// ~230 ns of memory), so it stays a kernel of its own; a square root (~140
// ns) hides under the memory traffic and joins, and so does the exponential
// broadcast along the minor dimension (computed once per row, outside the
// inner loop: f32[64] sqrt under a [64,4096] broadcast measured 26.0 us
// apart, 25.3 fused).
TEST(LoopFusion, KeepsProducersOutOfBroadcastsThatWouldMakeThemTheCost) {
  const std::string text = R"(
HloModule m
ENTRY e {
  x = f32[256] parameter(0)
  l = f32[256] exponential(x)
  b = f32[8,256] broadcast(l), dimensions={1}
  y = f32[8,256] parameter(1)
  ROOT r = f32[8,256] multiply(b, y)
})";
  std::string out = Fuse(text);
  EXPECT_EQ(Occurrences(out, " fusion("), 1) << out;
  EXPECT_NE(out.find("l = f32[256]{0} exponential(x)"), std::string::npos) << out;  // not inside
  EXPECT_NE(out.find("fusion(l, y)"), std::string::npos) << out;
  testing::ExpectAgreesWithInterpreter(text);
  for (const std::string& fused :
       {absl::StrReplaceAll(text, {{"exponential(x)", "sqrt(x)"}}),
        absl::StrReplaceAll(text, {{"[256]", "[8]"}, {"dimensions={1}", "dimensions={0}"}})}) {
    out = Fuse(fused);
    EXPECT_EQ(Occurrences(out, " fusion("), 1) << out;
    EXPECT_NE(out.find("fusion(x, y)"), std::string::npos) << out;
    testing::ExpectAgreesWithInterpreter(fused);
  }
}

TEST(LoopFusion, FusesIntoReductionsAndLeavesTheirReducersAlone) {
  const std::string text = R"(
HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[16,32] parameter(0)
  y = f32[16,32] parameter(1)
  d = f32[16,32] subtract(x, y)
  sq = f32[16,32] multiply(d, d)
  z = f32[] constant(0)
  ROOT r = f32[16] reduce(sq, z), dimensions={1}, to_apply=sum
})";
  const std::string out = Fuse(text);
  EXPECT_EQ(Occurrences(out, " fusion("), 1) << out;
  EXPECT_NE(out.find("ROOT s = f32[] add(a, b)"), std::string::npos) << out;
  EXPECT_NE(out.find("fusion(x, y)"), std::string::npos) << out;
  testing::ExpectAgreesWithInterpreter(text);
}

// A mean: the divide (and the bf16 convert) run in the reduction's kernel.
// A column reduction, and a row reduction whose value (or its epilogue's) a
// broadcast reads (each element many times), keep kernels of their own.
TEST(LoopFusion, RowReductionsJoinTheirEpilogue) {
  const std::string text = R"(
HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = bf16[64,256] parameter(0)
  f = f32[64,256] convert(x)
  z = f32[] constant(0)
  rows = f32[64] reduce(f, z), dimensions={1}, to_apply=sum
  n = f32[] constant(256)
  bn = f32[64] broadcast(n), dimensions={}
  mean = f32[64] divide(rows, bn)
  out = bf16[64] convert(mean)
  cols = f32[256] reduce(f, z), dimensions={0}, to_apply=sum
  m = f32[] constant(64)
  bm = f32[256] broadcast(m), dimensions={}
  col_mean = f32[256] divide(cols, bm)
  sq = f32[64,256] multiply(f, f)
  sumsq = f32[64] reduce(sq, z), dimensions={1}, to_apply=sum
  norm = f32[64] multiply(sumsq, bn)
  centered = f32[64,256] broadcast(norm), dimensions={0}
  scaled = f32[64,256] multiply(centered, f)
  ROOT t = (bf16[64], f32[256], f32[64,256]) tuple(out, col_mean, scaled)
})";
  const std::string out = Fuse(text);
  // The mean with its reduce; the column reduce; its divide; sumsq; scaled,
  // with norm (once per row). sumsq is not folded inside scaled's kernel,
  // through the broadcast (each row again for each of its 256 elements).
  EXPECT_EQ(Occurrences(out, " fusion("), 5) << out;
  EXPECT_NE(out.find("ROOT out = bf16[64]{0} convert(mean)"), std::string::npos) << out;
  EXPECT_NE(out.find("ROOT cols = f32[256]{0} reduce("), std::string::npos) << out;
  EXPECT_NE(out.find("ROOT sumsq = f32[64]{0} reduce("), std::string::npos) << out;
  EXPECT_NE(out.find("norm = f32[64]{0} multiply(param_"), std::string::npos) << out;
  EXPECT_EQ(Occurrences(out, "reduce("), 3) << out;
  testing::ExpectAgreesWithInterpreter(text);
}

// A kernel holding a row reduction and its epilogue (norm, a result, so the
// reduce joins it first) stays out of a reader that reads it through a
// broadcast: that kernel would fold each row again for each of its 256
// elements (layer_norm's mean so: 0.56 -> 186 ms).
TEST(LoopFusion, KernelsHoldingARowReductionStayOutOfBroadcasts) {
  const std::string text = R"(
HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[64,256] parameter(0)
  z = f32[] constant(0)
  sq = f32[64,256] multiply(x, x)
  sumsq = f32[64] reduce(sq, z), dimensions={1}, to_apply=sum
  n = f32[] constant(256)
  bn = f32[64] broadcast(n), dimensions={}
  norm = f32[64] divide(sumsq, bn)
  b = f32[64,256] broadcast(norm), dimensions={0}
  scaled = f32[64,256] multiply(b, x)
  ROOT t = (f32[64], f32[64,256]) tuple(norm, scaled)
})";
  const std::string out = Fuse(text);
  EXPECT_EQ(Occurrences(out, " fusion("), 2) << out;
  EXPECT_EQ(Occurrences(out, "reduce("), 1) << out;
  EXPECT_NE(out.find("ROOT norm = f32[64]{0} divide(sumsq, bn)"), std::string::npos) << out;
  testing::ExpectAgreesWithInterpreter(text);
}

// A row reduction stays out of readers that would fold it again per element
// they read (a clamp reading it as a scalar bound, two overlapping slices) or
// fold it on one thread (a reduce of it: the kernel is partitioned by the
// root's elements).
TEST(LoopFusion, RowReductionsStayOutOfReadersThatReadThemTwiceOrSerially) {
  const std::string text = R"(
HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[64,256] parameter(0)
  z = f32[] constant(0)
  all = f32[] reduce(x, z), dimensions={0,1}, to_apply=sum
  y = f32[512] parameter(1)
  zb = f32[512] broadcast(z), dimensions={}
  ab = f32[512] broadcast(all), dimensions={}
  clamped = f32[512] clamp(zb, y, ab)
  rows = f32[64] reduce(x, z), dimensions={1}, to_apply=sum
  total = f32[] reduce(rows, z), dimensions={0}, to_apply=sum
  rows2 = f32[64] reduce(x, z), dimensions={1}, to_apply=sum
  hi = f32[63] slice(rows2), slice={[1:64]}
  lo = f32[63] slice(rows2), slice={[0:63]}
  diff = f32[63] subtract(hi, lo)
  ROOT t = (f32[512], f32[], f32[63]) tuple(clamped, total, diff)
})";
  const std::string out = Fuse(text);
  // Each reduce keeps its own fusion: all, rows, rows2 besides clamped,
  // total and diff.
  EXPECT_EQ(Occurrences(out, " fusion("), 6) << out;
  EXPECT_NE(out.find("ROOT all = f32[] reduce("), std::string::npos) << out;
  EXPECT_NE(out.find("ROOT rows = f32[64]{0} reduce("), std::string::npos) << out;
  EXPECT_NE(out.find("ROOT rows2 = f32[64]{0} reduce("), std::string::npos) << out;
  testing::ExpectAgreesWithInterpreter(text);
}

TEST(LoopFusion, FusesInsideLoopsNotAcrossLibraryCallsOrInPlaceUpdates) {
  const std::string text = R"(
HloModule m
body {
  p = (s32[], f32[4,4], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  n = s32[] add(i, one)
  w = f32[4,4] get-tuple-element(p), index=1
  t = f32[4,4] tanh(w)
  d = f32[4,4] dot(t, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  h = f32[4,4] negate(d)
  acc = f32[16] get-tuple-element(p), index=2
  r = f32[16] reshape(h)
  e = f32[16] exponential(r)
  zero = s32[] constant(0)
  upd = f32[1] slice(e), slice={[0:1]}
  dus = f32[16] dynamic-update-slice(acc, upd, zero)
  ROOT out = (s32[], f32[4,4], f32[16]) tuple(n, h, dus)
}
cond {
  p = (s32[], f32[4,4], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(3)
  ROOT lt = pred[] compare(i, k), direction=LT
}
ENTRY e {
  w = f32[4,4] parameter(0)
  acc = f32[16] parameter(1)
  z = s32[] constant(0)
  t = (s32[], f32[4,4], f32[16]) tuple(z, w, acc)
  l = (s32[], f32[4,4], f32[16]) while(t), condition=cond, body=body
  ROOT g = f32[16] get-tuple-element(l), index=2
})";
  const std::string out = Fuse(text);
  EXPECT_NE(out.find("d = f32[4,4]{1,0} dot(t, w)"), std::string::npos) << out;
  EXPECT_NE(out.find("dynamic-update-slice(acc, "), std::string::npos) << out;
  // reshape(negate(dot)) is one fusion (exp, a libm call, stays out);
  // negate, cheap, is recomputed there and kept for the loop state.
  EXPECT_NE(out.find("h = f32[4,4]{1,0} negate(d)"), std::string::npos) << out;
  EXPECT_GE(Occurrences(out, " fusion("), 1) << out;
  testing::ExpectAgreesWithInterpreter(text);
}

// Dead code is dce's: an instruction nothing reads is no kernel and no
// reader. Counted as a reader of the power (3.3 ns an element), it would
// keep the power a kernel of its own (computing it twice costs more than
// storing it) instead of inside the root's kernel.
TEST(LoopFusion, LeavesDeadCodeToDce) {
  const std::string text = R"(
HloModule m
ENTRY e {
  x = f32[65536] parameter(0)
  y = f32[65536] parameter(1)
  p = f32[65536] power(x, x)
  d = f32[65536] multiply(p, y)
  ROOT r = f32[65536] add(p, y)
})";
  const std::string out =
      pass_test::RunPass<LoopFusion>(text, nullptr, /*then_dce=*/false, PrintOptions::Short());
  EXPECT_EQ(Occurrences(out, " fusion("), 1) << out;
  EXPECT_NE(out.find("ROOT fusion = f32[65536]{0} fusion(x, y)"), std::string::npos) << out;
  EXPECT_NE(out.find("d = f32[65536]{0} multiply(p, y)"), std::string::npos) << out;
  testing::ExpectAgreesWithInterpreter(text);
}

TEST(LoopFusion, RespectsTheSizeLimits) {
  std::string text = "HloModule m\nENTRY e {\n  x = f32[8] parameter(0)\n  v0 = f32[8] negate(x)\n";
  constexpr int kLength = 300;
  for (int i = 1; i < kLength; ++i) {
    text += "  v" + std::to_string(i) + " = f32[8] negate(v" + std::to_string(i - 1) + ")\n";
  }
  text += "  ROOT r = f32[8] abs(v" + std::to_string(kLength - 1) + ")\n}\n";
  const std::string out = Fuse(text);
  EXPECT_EQ(Occurrences(out, " fusion("), 3) << out;  // 301 instructions, 128 per fusion
  testing::ExpectAgreesWithInterpreter(text);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::cpu
