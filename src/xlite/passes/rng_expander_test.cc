#include "xlite/passes/rng_expander.h"

#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "xlite/passes/equivalence_test_util.h"
#include "xlite/passes/expander_test_util.h"
#include "xlite/passes/pass_test_util.h"
#include "xlite/verify/verifier.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

using pass_test::CheckExpansion;
using pass_test::CompareBitwise;

std::string Compare(const Literal& a, const Literal& b) { return CompareBitwise(a, b); }

std::string Check(const std::string& text, bool* changed = nullptr) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "t.hlo");
  if (!module.ok()) return absl::StrCat("parse: ", module.status().ToString());
  return CheckExpansion<RngExpander>(**module, Compare, changed);
}

std::string ShapeText(const std::string& type, const std::vector<int64_t>& dims) {
  return absl::StrCat(type, "[", absl::StrJoin(dims, ","), "]");
}

// Two rngs of one type and distribution in a row (the second sees the state
// the first advanced), on parameters a and b.
std::string TwoRngs(const std::string& type, const std::string& distribution,
                    const std::vector<int64_t>& first, const std::vector<int64_t>& second) {
  const std::string s1 = ShapeText(type, first), s2 = ShapeText(type, second);
  return absl::StrCat("HloModule m\n\nENTRY e {\n  a = ", type, "[] parameter(0)\n  b = ", type,
                      "[] parameter(1)\n  r1 = ", s1, " rng(a, b), distribution=", distribution,
                      "\n  r2 = ", s2, " rng(a, b), distribution=", distribution, "\n  ROOT t = (",
                      s1, ", ", s2, ") tuple(r1, r2)\n}\n");
}

const std::vector<std::vector<int64_t>> kShapes = {{},     {1},       {7},       {8},      {3, 5},
                                                   {4, 3}, {3, 1, 5}, {5, 3, 3}, {2, 0, 3}};

TEST(RngExpander, UniformFloatsAreBitwiseTheInterpreters) {
  for (const std::string type : {"f16", "bf16", "f32", "f64", "f8e4m3fn", "f8e5m2"}) {
    for (size_t i = 0; i < kShapes.size(); ++i) {
      const std::string text =
          TwoRngs(type, "rng_uniform", kShapes[i], kShapes[(i + 3) % kShapes.size()]);
      SCOPED_TRACE(text);
      bool changed = false;
      EXPECT_EQ(Check(text, &changed), "");
      EXPECT_TRUE(changed);
    }
  }
}

TEST(RngExpander, NormalsAreBitwiseTheInterpreters) {
  for (const std::string type : {"f16", "bf16", "f32", "f64"}) {
    for (size_t i = 0; i < kShapes.size(); ++i) {
      const std::string text =
          TwoRngs(type, "rng_normal", kShapes[i], kShapes[(i + 5) % kShapes.size()]);
      SCOPED_TRACE(text);
      EXPECT_EQ(Check(text), "");
    }
  }
}

TEST(RngExpander, UniformIntegersAreBitwiseTheInterpreters) {
  for (const std::string type :
       {"s4", "u4", "s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64"}) {
    for (size_t i = 0; i < kShapes.size(); ++i) {
      const std::string text =
          TwoRngs(type, "rng_uniform", kShapes[i], kShapes[(i + 2) % kShapes.size()]);
      SCOPED_TRACE(text);
      EXPECT_EQ(Check(text), "");
    }
  }
}

// Ranges that wrap, are empty (a == b keeps every bit) or span the type.
TEST(RngExpander, IntegerRangeEdges) {
  const std::vector<std::pair<std::string, std::string>> ranges = {
      {"0", "0"}, {"5", "5"}, {"-3", "4"}, {"4", "-3"}, {"-128", "127"}, {"7", "8"}};
  for (const auto& [low, high] : ranges) {
    for (const std::string type : {"s8", "s32", "s64"}) {
      const std::string text =
          absl::StrCat("HloModule m\n\nENTRY e {\n  a = ", type, "[] constant(", low,
                       ")\n  b = ", type, "[] constant(", high, ")\n  ROOT r = ", type,
                       "[6,5] rng(a, b), distribution=rng_uniform\n}\n");
      SCOPED_TRACE(text);
      EXPECT_EQ(Check(text), "");
    }
  }
}

TEST(RngExpander, RngInALoopBodyAdvancesTheSameState) {
  const std::string text = R"(
HloModule m

body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  lo = f32[] constant(-1)
  hi = f32[] constant(1)
  r = f32[4] rng(lo, hi), distribution=rng_normal
  acc = f32[4] get-tuple-element(p), index=1
  sum = f32[4] add(acc, r)
  ROOT t = (s32[], f32[4]) tuple(next, sum)
}

cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY e {
  zero = s32[] constant(0)
  init = f32[4] constant({0, 0, 0, 0})
  t = (s32[], f32[4]) tuple(zero, init)
  ROOT w = (s32[], f32[4]) while(t), condition=cond, body=body
}
)";
  bool changed = false;
  EXPECT_EQ(Check(text, &changed), "");
  EXPECT_TRUE(changed);
}

TEST(RngExpander, ScheduledModuleStaysScheduled) {
  const std::string text = R"(
HloModule m, is_scheduled=true

ENTRY e {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  r = f32[3,2]{1,0} rng(a, b), distribution=rng_normal
  ROOT n = f32[3,2]{1,0} negate(r)
}
)";
  EXPECT_EQ(pass_test::CheckScheduleKept<RngExpander>(text), "");
  bool changed = false;
  EXPECT_EQ(Check(text, &changed), "");
  EXPECT_TRUE(changed);
  const std::string out = pass_test::RunPass<RngExpander>(text);
  EXPECT_NE(out.find("is_scheduled=true"), std::string::npos) << out;
  EXPECT_EQ(out.find(" rng("), std::string::npos) << out;
  EXPECT_NE(out.find("rng-get-and-update-state(), delta=6"), std::string::npos) << out;
  EXPECT_NE(out.find("rng-bit-generator("), std::string::npos) << out;
}

TEST(RngExpander, StateUpdateKeepsTheControlPredecessors) {
  const std::string text = R"(
HloModule m

ENTRY e {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  first = f32[2] rng(a, b), distribution=rng_uniform
  second = f32[2] rng(a, b), distribution=rng_uniform, control-predecessors={first}
  ROOT t = (f32[2], f32[2]) tuple(first, second)
}
)";
  EXPECT_EQ(Check(text), "");
  const std::string out = pass_test::RunPass<RngExpander>(text);
  EXPECT_NE(out.find("%second.rng_state = u64[2]{0} rng-get-and-update-state(), delta=2, "
                     "control-predecessors={%first.add}"),
            std::string::npos)
      << out;
}

TEST(RngExpander, LeavesPredRngAlone) {
  const std::string text = R"(
HloModule m

ENTRY e {
  a = pred[] constant(false)
  b = pred[] constant(true)
  ROOT r = pred[5] rng(a, b), distribution=rng_uniform
}
)";
  bool changed = true;
  pass_test::RunPass<RngExpander>(text, &changed);
  EXPECT_FALSE(changed);
}

TEST(RngExpander, CorpusModulesWithRngAreBitwiseTheInterpreters) {
  const auto files = pass_test::CorpusFilesWith(" rng(");
  if (files.empty()) GTEST_SKIP() << "no XLA corpus (set XLITE_CORPUS); SKIPPED";
  int rngs = 0, modules = 0, invalid = 0;
  for (const auto& file : files) {
    const std::string text = pass_test::ReadFile(file);
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, file.string());
    ASSERT_TRUE(module.ok()) << module.status();
    for (const auto& c : (*module)->computations()) {
      for (const auto& i : c->instructions()) {
        if (i->opcode() != HloOpcode::kRng) continue;
        ++rngs;
        std::unique_ptr<HloModule> alone = pass_test::StandaloneModule(*i);
        bool changed = false;
        EXPECT_EQ(CheckExpansion<RngExpander>(*alone, Compare, &changed), "")
            << file << ": " << i->name();
        EXPECT_TRUE(changed) << file << ": " << i->name();
      }
    }
    // A module the verifier rejects as written (XLA's importer tests hold
    // some) is covered by its standalone rngs above.
    if (!VerifyModule(**module).ok()) {
      ++invalid;
      continue;
    }
    bool changed = false;
    EXPECT_EQ(CheckExpansion<RngExpander>(**module, Compare, &changed), "") << file;
    modules += changed;
  }
  std::cout << "rng-expander on the XLA corpus: " << files.size() << " modules with rng, " << rngs
            << " rngs each alone, " << modules << " whole modules (" << invalid
            << " invalid as written), all bitwise equal\n";
  EXPECT_EQ(modules + invalid, static_cast<int>(files.size()));
  EXPECT_GT(modules, 0);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
