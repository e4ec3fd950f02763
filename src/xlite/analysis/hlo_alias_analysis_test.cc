#include "xlite/analysis/hlo_alias_analysis.h"

#include <memory>

#include "gtest/gtest.h"
#include "xlite/analysis/analysis_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

using analysis_test::Find;
using analysis_test::FindComputation;
using analysis_test::Parse;

struct Aliased {
  std::unique_ptr<HloModule> module;
  std::unique_ptr<HloAliasAnalysis> alias;

  const HloBuffer* At(const char* name, const ShapeIndex& index = {}) const {
    return alias->GetBufferAt(Find(*module, name), index);
  }
};

Aliased Analyze(const char* text) {
  Aliased a;
  a.module = Parse(text);
  if (a.module == nullptr) return a;
  auto alias = HloAliasAnalysis::Run(*a.module);
  EXPECT_TRUE(alias.ok()) << alias.status();
  if (alias.ok()) a.alias = std::move(*alias);
  return a;
}

TEST(AliasAnalysis, WhileStateIsOneBufferPerElement) {
  Aliased a = Analyze(R"(
HloModule m

cond {
  t = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(i, ten), direction=LT
}

body {
  t = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  v = f32[4] get-tuple-element(t), index=1
  v2 = f32[4] negate(v)
  ROOT r = (s32[], f32[4]) tuple(i2, v2)
}

ENTRY e {
  p = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, p)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT out = f32[4] get-tuple-element(w), index=1
}
)");
  ASSERT_NE(a.alias, nullptr);
  const HloComputation* body = FindComputation(*a.module, "body");
  const HloComputation* cond = FindComputation(*a.module, "cond");
  // Element 1: init's p, the loop state, the body's v2 and the result.
  const HloBuffer* b = a.At("w", {1});
  EXPECT_EQ(a.At("p"), b);
  EXPECT_EQ(a.At("v2"), b);
  EXPECT_EQ(a.At("out"), b);
  EXPECT_EQ(a.alias->GetBufferAt(body->parameter_instruction(0), {1}), b);
  EXPECT_EQ(a.alias->GetBufferAt(cond->parameter_instruction(0), {1}), b);
  // Element 0 is another buffer, and so is each tuple table.
  EXPECT_EQ(a.At("zero"), a.At("i2"));
  EXPECT_NE(a.At("zero"), b);
  EXPECT_EQ(a.At("init"), a.At("w"));
  EXPECT_EQ(a.At("r"), a.At("w"));
  EXPECT_NE(a.At("w"), b);
  EXPECT_TRUE(a.alias->BufferLivesOut(*b));
  EXPECT_FALSE(a.alias->BufferLivesOut(*a.At("zero")));
}

TEST(AliasAnalysis, ConditionalBranchResultsShareTheResultBuffer) {
  Aliased a = Analyze(R"(
HloModule m

on_true {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}

on_false {
  y = f32[4] parameter(0)
  ROOT y2 = f32[4] exponential(y)
}

ENTRY e {
  pred = pred[] parameter(0)
  a = f32[4] parameter(1)
  ROOT c = f32[4] conditional(pred, a, a), true_computation=on_true, false_computation=on_false
}
)");
  ASSERT_NE(a.alias, nullptr);
  EXPECT_EQ(a.At("n"), a.At("c"));
  EXPECT_EQ(a.At("y2"), a.At("c"));
  EXPECT_NE(a.At("a"), a.At("c"));
  EXPECT_EQ(a.At("c")->values().size(), 3u);
}

TEST(AliasAnalysis, InPlaceOperationsShareTheirOperandBuffer) {
  Aliased a = Analyze(R"(
HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  n = f32[8] negate(p)
  u = f32[2] parameter(1)
  i = s32[] parameter(2)
  dus = f32[8] dynamic-update-slice(n, u, i)
  cc = (f32[8], f32[2]) custom-call(dus, u), custom_call_target="k", output_to_operand_aliasing={{0}: (0, {})}
  ROOT g = f32[8] get-tuple-element(cc), index=0
}
)");
  ASSERT_NE(a.alias, nullptr);
  EXPECT_EQ(a.At("n"), a.At("dus"));
  EXPECT_EQ(a.At("dus"), a.At("cc", {0}));
  EXPECT_EQ(a.At("g"), a.At("n"));
  EXPECT_NE(a.At("p"), a.At("n"));
  EXPECT_NE(a.At("cc", {1}), a.At("u"));
  EXPECT_EQ(a.At("n")->values().size(), 3u);  // n, dus, cc{0}
}

TEST(AliasAnalysis, InputOutputAliasJoinsParameterAndOutput) {
  Aliased a = Analyze(R"(
HloModule m, input_output_alias={ {0}: (1, {}, must-alias) }, buffer_donor={ (0, {}) }
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  s = f32[4] add(p0, p1)
  n = f32[4] negate(p0)
  ROOT t = (f32[4], f32[4]) tuple(s, n)
}
)");
  ASSERT_NE(a.alias, nullptr);
  EXPECT_EQ(a.At("p1"), a.At("s"));
  EXPECT_EQ(a.At("t", {0}), a.At("p1"));
  // A donor joins nothing.
  EXPECT_NE(a.At("p0"), a.At("n"));
  EXPECT_NE(a.At("p0"), a.At("s"));
}

TEST(AliasAnalysis, AsyncOperandAndResultAreTheSameValues) {
  Aliased a = Analyze(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  s = ((f32[4]), f32[8], s32[]) custom-call-start(p), custom_call_target="foo"
  ROOT d = f32[8] custom-call-done(s)
}
)");
  ASSERT_NE(a.alias, nullptr);
  EXPECT_EQ(a.At("s", {0, 0}), a.At("p"));
  EXPECT_EQ(a.At("s", {1}), a.At("d"));
  EXPECT_NE(a.At("s", {2}), a.At("d"));
}

TEST(AliasAnalysis, InputOutputAliasOutsideTheEntryIsAnError) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
)");
  ASSERT_NE(m, nullptr);
  m->config().input_output_alias_present = true;
  m->config().input_output_alias.push_back(InputOutputAlias{{}, 3, {}});
  auto alias = HloAliasAnalysis::Run(*m);
  ASSERT_FALSE(alias.ok());
  EXPECT_EQ(alias.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(alias.status().message().find("parameter 3"), std::string::npos) << alias.status();
  m->config().input_output_alias[0] = InputOutputAlias{{2}, 0, {}};
  alias = HloAliasAnalysis::Run(*m);
  ASSERT_FALSE(alias.ok());
  EXPECT_NE(alias.status().message().find("{2}"), std::string::npos) << alias.status();
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
