#include "xlite/analysis/call_graph.h"

#include "gtest/gtest.h"
#include "xlite/analysis/analysis_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

using analysis_test::FindComputation;
using analysis_test::Parse;

constexpr char kControlFlowModule[] = R"(
HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

fused {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}

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
  f = f32[4] fusion(v), kind=kLoop, calls=fused
  ROOT r = (s32[], f32[4]) tuple(i2, f)
}

callee {
  y = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT red = f32[] reduce(y, z), dimensions={0}, to_apply=add
}

orphan {
  q = f32[] parameter(0)
  ROOT nq = f32[] negate(q)
}

ENTRY e {
  p = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, p)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  v = f32[4] get-tuple-element(w), index=1
  ROOT c = f32[] call(v), to_apply=callee
}
)";

TEST(CallGraph, ContextsOfControlFlowAndEmbeddedComputations) {
  auto m = Parse(kControlFlowModule);
  ASSERT_NE(m, nullptr);
  auto graph = CallGraph::Build(*m);
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto context = [&](const char* name) {
    return (*graph)->GetNode(FindComputation(*m, name)).context();
  };
  EXPECT_EQ(context("e"), CallContext::kSequential);
  EXPECT_EQ(context("cond"), CallContext::kSequential);
  EXPECT_EQ(context("body"), CallContext::kSequential);
  EXPECT_EQ(context("callee"), CallContext::kSequential);
  EXPECT_EQ(context("fused"), CallContext::kEmbedded);
  EXPECT_EQ(context("add"), CallContext::kEmbedded);
  // Nothing calls it: a root, sequential as in XLA.
  EXPECT_EQ(context("orphan"), CallContext::kSequential);
  EXPECT_FALSE((*graph)->GetNode(FindComputation(*m, "orphan")).reachable_from_entry());
  EXPECT_TRUE((*graph)->GetNode(FindComputation(*m, "add")).reachable_from_entry());
  EXPECT_TRUE((*graph)->IsFlattened());
}

TEST(CallGraph, CallersCallSitesAndPostOrder) {
  auto m = Parse(kControlFlowModule);
  ASSERT_NE(m, nullptr);
  auto graph = CallGraph::Build(*m);
  ASSERT_TRUE(graph.ok()) << graph.status();
  const CallGraphNode& body = (*graph)->GetNode(FindComputation(*m, "body"));
  ASSERT_EQ(body.caller_callsites().size(), 1u);
  EXPECT_EQ(body.caller_callsites()[0].instruction->name(), "w");
  EXPECT_EQ(body.caller_callsites()[0].context, CallContext::kSequential);
  ASSERT_EQ(body.callsites().size(), 1u);
  EXPECT_EQ(body.callsites()[0].instruction->name(), "f");
  EXPECT_EQ(body.callsites()[0].context, CallContext::kEmbedded);
  ASSERT_EQ(body.callers().size(), 1u);
  EXPECT_EQ(body.callers()[0]->name(), "e");

  const CallGraphNode& entry = (*graph)->GetNode(m->entry_computation());
  ASSERT_EQ(entry.callees().size(), 3u);  // cond, body, callee
  // Callees come before their callers.
  const auto& order = (*graph)->ComputationsInPostOrder();
  auto position = [&](const char* name) {
    return std::find(order.begin(), order.end(), FindComputation(*m, name)) - order.begin();
  };
  EXPECT_LT(position("fused"), position("body"));
  EXPECT_LT(position("body"), position("e"));
  EXPECT_LT(position("add"), position("callee"));
  EXPECT_LT(position("callee"), position("e"));
  EXPECT_EQ(order.size(), m->computations().size());
}

TEST(CallGraph, ConditionalBranchesAndAsyncComputationsAreSequential) {
  auto m = Parse(R"(
HloModule m

on_true {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}

on_false {
  b = f32[4] parameter(0)
  ROOT x = f32[4] exponential(b)
}

ENTRY e {
  p = pred[] parameter(0)
  v = f32[4] parameter(1)
  c = f32[4] conditional(p, v, v), true_computation=on_true, false_computation=on_false
  s = ((f32[4]), f32[4], s32[]) custom-call-start(c), custom_call_target="foo"
  ROOT d = f32[4] custom-call-done(s)
}
)");
  ASSERT_NE(m, nullptr);
  auto graph = CallGraph::Build(*m);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ((*graph)->GetNode(FindComputation(*m, "on_true")).context(), CallContext::kSequential);
  EXPECT_EQ((*graph)->GetNode(FindComputation(*m, "on_false")).context(), CallContext::kSequential);
  const HloComputation* wrapped = analysis_test::Find(*m, "s")->async_wrapped_computation();
  ASSERT_NE(wrapped, nullptr);
  EXPECT_EQ((*graph)->GetNode(wrapped).context(), CallContext::kSequential);
  // The async chain counts once, at its start.
  ASSERT_EQ((*graph)->SequentialCallers(wrapped).size(), 1u);
  EXPECT_EQ((*graph)->SequentialCallers(wrapped)[0]->instruction->name(), "s");
  EXPECT_TRUE((*graph)->IsFlattened());
}

TEST(CallGraph, SharedCalleeIsNotFlatAndBothContextsMerge) {
  auto m = Parse(R"(
HloModule m

f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  x = f32[] parameter(0)
  c1 = f32[] call(x, x), to_apply=f
  c2 = f32[] call(c1, x), to_apply=f
  v = f32[4] parameter(1)
  zero = f32[] constant(0)
  r = f32[] reduce(v, zero), dimensions={0}, to_apply=f
  ROOT t = (f32[], f32[]) tuple(c2, r)
}
)");
  ASSERT_NE(m, nullptr);
  auto graph = CallGraph::Build(*m);
  ASSERT_TRUE(graph.ok()) << graph.status();
  const HloComputation* f = FindComputation(*m, "f");
  EXPECT_EQ((*graph)->GetNode(f).context(), CallContext::kBoth);
  EXPECT_TRUE((*graph)->IsSequential(f));
  EXPECT_EQ((*graph)->GetNode(f).caller_callsites().size(), 3u);
  EXPECT_EQ((*graph)->SequentialCallers(f).size(), 2u);
  EXPECT_FALSE((*graph)->IsFlattened());
}

TEST(CallGraph, SequentialCallInsideFusionIsEmbedded) {
  auto m = Parse(R"(
HloModule m

inner {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}

fused {
  x = f32[4] parameter(0)
  ROOT c = f32[4] call(x), to_apply=inner
}

ENTRY e {
  p = f32[4] parameter(0)
  ROOT f = f32[4] fusion(p), kind=kLoop, calls=fused
}
)");
  ASSERT_NE(m, nullptr);
  auto graph = CallGraph::Build(*m);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ((*graph)->GetNode(FindComputation(*m, "inner")).context(), CallContext::kEmbedded);
  EXPECT_FALSE((*graph)->IsSequential(FindComputation(*m, "inner")));
}

TEST(CallGraph, RecursionIsAnError) {
  // Built by hand: the parser cannot express it.
  HloModule m("recursive");
  auto f = std::make_unique<HloComputation>("f");
  HloComputation* fp = f.get();
  auto x = std::make_unique<HloInstruction>(HloOpcode::kParameter, "x",
                                            Shape::Scalar(PrimitiveType::F32));
  HloInstruction* param = f->AddInstruction(std::move(x));
  f->SetParameter(0, param);
  auto call = std::make_unique<HloInstruction>(HloOpcode::kCall, "again",
                                               Shape::Scalar(PrimitiveType::F32));
  call->AppendOperand(param);
  call->AppendCalledComputation(fp);
  f->set_root_instruction(f->AddInstruction(std::move(call)));
  m.AddComputation(std::move(f));
  auto e = std::make_unique<HloComputation>("e");
  auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter, "p",
                                            Shape::Scalar(PrimitiveType::F32));
  HloInstruction* ep = e->AddInstruction(std::move(p));
  e->SetParameter(0, ep);
  auto c =
      std::make_unique<HloInstruction>(HloOpcode::kCall, "c", Shape::Scalar(PrimitiveType::F32));
  c->AppendOperand(ep);
  c->AppendCalledComputation(fp);
  e->set_root_instruction(e->AddInstruction(std::move(c)));
  e->set_is_entry(true);
  m.set_entry_computation(m.AddComputation(std::move(e)));
  auto graph = CallGraph::Build(m);
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(graph.status().message().find("'f' calls itself"), std::string::npos) << graph.status();
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
