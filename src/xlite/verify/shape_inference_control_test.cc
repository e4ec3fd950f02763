// Shape inference for control flow, calls, async ops and I/O: one valid and at
// least one failing module per rule.
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "xlite/ir/computation.h"
#include "xlite/text/parser.h"
#include "xlite/verify/shape_inference.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto module = ParseHloModule(text, "t.hlo");
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? std::move(*module) : nullptr;
}

HloInstruction* Find(const HloModule& module, const std::string& name) {
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      if (instr->name() == name) return instr.get();
    }
  }
  ADD_FAILURE() << "no instruction named " << name;
  return nullptr;
}

// The inferred shape of instruction `name` without layout, or the error text.
std::string Infer(const std::string& text, const std::string& name) {
  std::unique_ptr<HloModule> module = Parse(text);
  if (!module) return "<parse failed>";
  HloInstruction* instr = Find(*module, name);
  if (!instr) return "<not found>";
  absl::StatusOr<Shape> shape = InferShape(*instr);
  if (!shape.ok()) return std::string(shape.status().message());
  return shape->ToString(/*print_layout=*/false);
}

#define EXPECT_INFER_ERROR(text, name, substring) \
  EXPECT_NE(Infer(text, name).find(substring), std::string::npos) << Infer(text, name)

constexpr char kLoop[] = R"(HloModule m
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  x = f32[4] get-tuple-element(p), index=1
  ROOT t = (s32[], f32[4]) tuple(next, x)
}
ENTRY e {
  init = (s32[], f32[4]{0}) parameter(0)
  ROOT w = (s32[], f32[4]) while(init), condition=cond, body=body
})";

TEST(ControlShapeInference, WhileReturnsTheLoopState) {
  EXPECT_EQ(Infer(kLoop, "w"), "(s32[], f32[4])");
}

TEST(ControlShapeInference, WhileBodyMustReturnTheState) {
  EXPECT_INFER_ERROR(R"(HloModule m
cond {
  p = f32[4] parameter(0)
  ROOT c = pred[] constant(true)
}
body {
  p = f32[4] parameter(0)
  ROOT r = f32[5] constant({1,2,3,4,5})
}
ENTRY e {
  init = f32[4] parameter(0)
  ROOT w = f32[4] while(init), condition=cond, body=body
})",
                     "w", "result of the body, and init must all have the same shape");
}

TEST(ControlShapeInference, WhileConditionMustReturnPred) {
  EXPECT_INFER_ERROR(R"(HloModule m
cond {
  p = f32[4] parameter(0)
  ROOT c = s32[] constant(1)
}
body {
  ROOT p = f32[4] parameter(0)
}
ENTRY e {
  init = f32[4] parameter(0)
  ROOT w = f32[4] while(init), condition=cond, body=body
})",
                     "w", "condition must return pred[]; got s32[]");
}

TEST(ControlShapeInference, WhileConditionTakesOneParameter) {
  EXPECT_INFER_ERROR(R"(HloModule m
cond {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  ROOT c = pred[] constant(true)
}
body {
  ROOT p = f32[4] parameter(0)
}
ENTRY e {
  init = f32[4] parameter(0)
  ROOT w = f32[4] while(init), condition=cond, body=body
})",
                     "w", "the condition computation 'cond' must take 1 parameter; got 2");
}

constexpr char kBranches[] = R"(
neg {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
make {
  p = s32[] parameter(0)
  ROOT k = f32[4] constant({1,2,3,4})
}
id {
  ROOT p = f32[4] parameter(0)
}
)";

TEST(ControlShapeInference, ConditionalWithPredicate) {
  EXPECT_EQ(Infer(std::string("HloModule m\n") + kBranches + R"(
ENTRY e {
  b = pred[] parameter(0)
  x = f32[4] parameter(1)
  i = s32[] parameter(2)
  ROOT c = f32[4] conditional(b, x, i), true_computation=neg, false_computation=make
})",
                  "c"),
            "f32[4]");
}

TEST(ControlShapeInference, ConditionalWithBranchIndex) {
  EXPECT_EQ(Infer(std::string("HloModule m\n") + kBranches + R"(
ENTRY e {
  b = s32[] parameter(0)
  x = f32[4] parameter(1)
  i = s32[] parameter(2)
  ROOT c = f32[4] conditional(b, x, i, x), branch_computations={neg, make, id}
})",
                  "c"),
            "f32[4]");
}

TEST(ControlShapeInference, ConditionalPredicateNeedsTwoBranches) {
  // Text cannot say it (the parser requires true/false_computation for a pred),
  // so build it: a pred conditional with three branches.
  auto m = ParseHloModule(std::string("HloModule m\n") + kBranches + R"(
ENTRY e {
  b = s32[] parameter(0)
  x = f32[4] parameter(1)
  i = s32[] parameter(2)
  ROOT c = f32[4] conditional(b, x, i, x), branch_computations={neg, make, id}
})",
                          "t.hlo");
  ASSERT_TRUE(m.ok()) << m.status();
  HloInstruction* c = (*m)->entry_computation()->root_instruction();
  const_cast<HloInstruction*>(c->operand(0))->mutable_shape() = Shape::Scalar(PrimitiveType::PRED);
  auto s = InferShape(*c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("a pred branch index needs exactly 2 branches, got 3"),
            std::string::npos)
      << s.status();
}

TEST(ControlShapeInference, ConditionalIndexMustBePredOrS32) {
  EXPECT_INFER_ERROR(std::string("HloModule m\n") + kBranches + R"(
ENTRY e {
  b = s64[] parameter(0)
  x = f32[4] parameter(1)
  ROOT c = f32[4] conditional(b, x, x), branch_computations={neg, id}
})",
                     "c", "branch index must be pred[] or s32[], got s64[]");
}

TEST(ControlShapeInference, ConditionalOperandMustMatchBranchParameter) {
  EXPECT_INFER_ERROR(std::string("HloModule m\n") + kBranches + R"(
ENTRY e {
  b = s32[] parameter(0)
  x = f32[4] parameter(1)
  ROOT c = f32[4] conditional(b, x, x), branch_computations={neg, make}
})",
                     "c",
                     "branch operand 2 has shape f32[4] but the parameter of branch 1 has "
                     "shape s32[]");
}

TEST(ControlShapeInference, ConditionalBranchesMustAgree) {
  EXPECT_INFER_ERROR(R"(HloModule m
a {
  ROOT p = f32[4] parameter(0)
}
b {
  p = f32[4] parameter(0)
  ROOT r = f32[2] slice(p), slice={[0:2]}
}
ENTRY e {
  i = s32[] parameter(0)
  x = f32[4] parameter(1)
  ROOT c = f32[4] conditional(i, x, x), branch_computations={a, b}
})",
                     "c", "branch 0 returns f32[4] but branch 1 returns f32[2]");
}

TEST(ControlShapeInference, CallReturnsTheCalleeRoot) {
  EXPECT_EQ(Infer(std::string("HloModule m\n") + kBranches + R"(
ENTRY e {
  x = f32[4]{0} parameter(0)
  ROOT c = f32[4]{0} call(x), to_apply=neg
})",
                  "c"),
            "f32[4]");
}

TEST(ControlShapeInference, CallArgumentsMustMatchParameters) {
  EXPECT_INFER_ERROR(std::string("HloModule m\n") + kBranches + R"(
ENTRY e {
  x = f32[5] parameter(0)
  ROOT c = f32[4] call(x), to_apply=neg
})",
                     "c", "operand 0 has shape f32[5] but parameter 0 of 'neg' has shape f32[4]");
  EXPECT_INFER_ERROR(std::string("HloModule m\n") + kBranches + R"(
ENTRY e {
  x = f32[4] parameter(0)
  ROOT c = f32[4] call(x, x), to_apply=neg
})",
                     "c", "computation 'neg' takes 1 parameters but 2 operands are passed");
}

TEST(ControlShapeInference, FusionReturnsTheFusedRoot) {
  EXPECT_EQ(Infer(R"(HloModule m
fused {
  a = f32[2,3]{0,1} parameter(0)
  ROOT t = f32[3,2] transpose(a), dimensions={1,0}
}
ENTRY e {
  x = f32[2,3]{1,0} parameter(0)
  ROOT f = f32[3,2]{1,0} fusion(x), kind=kLoop, calls=fused
})",
                  "f"),
            "f32[3,2]");
}

TEST(ControlShapeInference, FusionParametersMustMatchOperands) {
  EXPECT_INFER_ERROR(R"(HloModule m
fused {
  a = f32[2,3] parameter(0)
  ROOT n = f32[2,3] negate(a)
}
ENTRY e {
  x = bf16[2,3] parameter(0)
  ROOT f = f32[2,3] fusion(x), kind=kLoop, calls=fused
})",
                     "f", "operand 0 has shape bf16[2,3] but parameter 0 of 'fused'");
}

TEST(ControlShapeInference, FusionAliasingMustPairCompatibleShapes) {
  EXPECT_INFER_ERROR(R"(HloModule m
fused {
  a = f32[2,3] parameter(0)
  ROOT n = f32[3] constant({1,2,3})
}
ENTRY e {
  x = f32[2,3] parameter(0)
  ROOT f = f32[3] fusion(x), kind=kLoop, calls=fused, output_to_operand_aliasing={{}: (0, {})}
})",
                     "f", "output_to_operand_aliasing pairs output subshape f32[3] with operand 0");
}

TEST(ControlShapeInference, CustomCallReturnsItsDeclaredShape) {
  EXPECT_EQ(Infer(R"(HloModule m
ENTRY e {
  x = f32[2]{0} parameter(0)
  ROOT c = (f32[7]{0}, s8[3]) custom-call(x), custom_call_target="foo"
})",
                  "c"),
            "(f32[7], s8[3])");
}

TEST(ControlShapeInference, CustomCallLayoutConstraintsCoverEveryOperand) {
  std::unique_ptr<HloModule> module = Parse(R"(HloModule m
ENTRY e {
  x = f32[2]{0} parameter(0)
  ROOT c = f32[7] custom-call(x), custom_call_target="foo", operand_layout_constraints={f32[2]{0}}
})");
  ASSERT_NE(module, nullptr);
  HloInstruction* call = Find(*module, "c");
  ASSERT_NE(call, nullptr);
  EXPECT_TRUE(InferShape(*call).ok());
  call->attrs().operand_layout_constraints->push_back(*ParseShape("f32[2]{0}"));
  absl::StatusOr<Shape> shape = InferShape(*call);
  ASSERT_FALSE(shape.ok());
  EXPECT_NE(shape.status().message().find("has 1 operands but 2 operand_layout_constraints"),
            std::string::npos)
      << shape.status();
}

constexpr char kAsync[] = R"(HloModule m
wrapped {
  p0 = f32[2,3] parameter(0)
  p1 = f32[2,3] parameter(1)
  ROOT a = f32[2,3] add(p0, p1)
}
ENTRY e {
  x = f32[2,3] parameter(0)
  y = f32[2,3] parameter(1)
  start = ((f32[2,3], f32[2,3]), f32[2,3], s32[]) async-start(x, y), calls=wrapped
  update = ((f32[2,3], f32[2,3]), f32[2,3], s32[]) async-update(start)
  ROOT done = f32[2,3] async-done(update)
})";

TEST(ControlShapeInference, AsyncOpsCarryOperandsResultAndState) {
  EXPECT_EQ(Infer(kAsync, "start"), "((f32[2,3], f32[2,3]), f32[2,3], s32[])");
  EXPECT_EQ(Infer(kAsync, "update"), "((f32[2,3], f32[2,3]), f32[2,3], s32[])");
  EXPECT_EQ(Infer(kAsync, "done"), "f32[2,3]");
}

TEST(ControlShapeInference, AsyncSyntaxSugar) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[2,3] parameter(0)
  start = ((f32[2,3]), f32[3,2], u32[]) custom-call-start(x), custom_call_target="foo"
  ROOT done = f32[3,2] custom-call-done(start)
})";
  EXPECT_EQ(Infer(text, "start"), "((f32[2,3]), f32[3,2], u32[])");
  EXPECT_EQ(Infer(text, "done"), "f32[3,2]");
}

TEST(ControlShapeInference, AsyncOutputMayBeBoundByTheDone) {
  const std::string text = R"(HloModule m
wrapped {
  p0 = f32[2,3] parameter(0)
  ROOT c = f32[3,2] custom-call(p0), custom_call_target="foo"
}
ENTRY e {
  x = f32[2,3] parameter(0)
  start = ((f32[2,3]), (), s32[]) async-start(x), calls=wrapped
  ROOT done = f32[3,2] async-done(start)
})";
  EXPECT_EQ(Infer(text, "start"), "((f32[2,3]), (), s32[])");
  EXPECT_EQ(Infer(text, "done"), "f32[3,2]");
}

TEST(ControlShapeInference, AsyncUpdateMayBindRemainingOperands) {
  const std::string text = R"(HloModule m
wrapped {
  p0 = f32[2,3] parameter(0)
  p1 = f32[2,3] parameter(1)
  ROOT a = f32[2,3] add(p0, p1)
}
ENTRY e {
  x = f32[2,3] parameter(0)
  y = f32[2,3] parameter(1)
  start = ((f32[2,3]), f32[2,3], s32[]) async-start(x), calls=wrapped
  update = ((f32[2,3], f32[2,3]), f32[2,3], s32[]) async-update(start, y)
  ROOT done = f32[2,3] async-done(update)
})";
  EXPECT_EQ(Infer(text, "update"), "((f32[2,3], f32[2,3]), f32[2,3], s32[])");
  EXPECT_EQ(Infer(text, "done"), "f32[2,3]");
}

TEST(ControlShapeInference, AsyncDoneNeedsEveryOperandBound) {
  EXPECT_INFER_ERROR(R"(HloModule m
wrapped {
  p0 = f32[2,3] parameter(0)
  p1 = f32[2,3] parameter(1)
  ROOT a = f32[2,3] add(p0, p1)
}
ENTRY e {
  x = f32[2,3] parameter(0)
  start = ((f32[2,3]), f32[2,3], s32[]) async-start(x), calls=wrapped
  ROOT done = f32[2,3] async-done(start)
})",
                     "done", "only 1 of the 2 parameters of 'wrapped' are bound");
}

TEST(ControlShapeInference, AsyncStartOperandsMustMatchParameters) {
  EXPECT_INFER_ERROR(R"(HloModule m
wrapped {
  p0 = f32[2,3] parameter(0)
  ROOT n = f32[2,3] negate(p0)
}
ENTRY e {
  x = f32[9] parameter(0)
  ROOT start = ((f32[9]), f32[2,3], s32[]) async-start(x), calls=wrapped
})",
                     "start", "async operand 0 has shape f32[9] but parameter 0 of 'wrapped'");
}

TEST(ControlShapeInference, AsyncDoneContextMustMatchTheWrappedRoot) {
  EXPECT_INFER_ERROR(R"(HloModule m
wrapped {
  p0 = f32[2,3] parameter(0)
  ROOT n = f32[2,3] negate(p0)
}
ENTRY e {
  x = f32[2,3] parameter(0)
  start = ((f32[2,3]), f32[3,2], s32[]) async-start(x), calls=wrapped
  ROOT done = f32[3,2] async-done(start)
})",
                     "done", "async context output f32[3,2] does not match the root of 'wrapped'");
}

TEST(ControlShapeInference, InfeedAndOutfeed) {
  const std::string text = R"(HloModule m
ENTRY e {
  t = token[] after-all()
  in = (f32[3]{0}, token[]) infeed(t)
  d = f32[3] get-tuple-element(in), index=0
  t2 = token[] get-tuple-element(in), index=1
  ROOT out = token[] outfeed(d, t2), outfeed_shape=f32[3]{0}
})";
  EXPECT_EQ(Infer(text, "in"), "(f32[3], token[])");
  EXPECT_EQ(Infer(text, "out"), "token[]");
}

TEST(ControlShapeInference, InfeedOperandMustBeAToken) {
  EXPECT_INFER_ERROR(R"(HloModule m
ENTRY e {
  x = f32[] parameter(0)
  ROOT in = (f32[3], token[]) infeed(x)
})",
                     "in", "infeed operand (operand 0) must be a token, got f32[]");
}

TEST(ControlShapeInference, OutfeedShapeMustMatchItsData) {
  EXPECT_INFER_ERROR(R"(HloModule m
ENTRY e {
  t = token[] after-all()
  d = f32[3] parameter(0)
  ROOT out = token[] outfeed(d, t), outfeed_shape=f32[4]{0}
})",
                     "out", "outfeed_shape f32[4] does not match the data operand f32[3]");
}

constexpr char kSendRecv[] = R"(HloModule m
ENTRY e {
  t = token[] after-all()
  d = f32[4]{0} parameter(0)
  s = (f32[4], u32[], token[]) send(d, t), channel_id=1
  sd = token[] send-done(s), channel_id=1
  r = (s8[2,2], u32[], token[]) recv(t), channel_id=2
  ROOT rd = (s8[2,2], token[]) recv-done(r), channel_id=2
})";

TEST(ControlShapeInference, SendAndRecv) {
  EXPECT_EQ(Infer(kSendRecv, "s"), "(f32[4], u32[], token[])");
  EXPECT_EQ(Infer(kSendRecv, "sd"), "token[]");
  EXPECT_EQ(Infer(kSendRecv, "r"), "(s8[2,2], u32[], token[])");
  EXPECT_EQ(Infer(kSendRecv, "rd"), "(s8[2,2], token[])");
}

TEST(ControlShapeInference, SendNeedsAToken) {
  EXPECT_INFER_ERROR(R"(HloModule m
ENTRY e {
  d = f32[4] parameter(0)
  ROOT s = (f32[4], u32[], token[]) send(d, d), channel_id=1
})",
                     "s", "send token (operand 1) must be a token, got f32[4]");
}

TEST(ControlShapeInference, SendRecvDoneNeedATransferContext) {
  const std::string text = R"(HloModule m
ENTRY e {
  p = (f32[4], s32[], token[]) parameter(0)
  sd = token[] send-done(p), channel_id=1
  ROOT rd = (f32[4], token[]) recv-done(p), channel_id=1
})";
  EXPECT_INFER_ERROR(text, "sd",
                     "operand must be (data, u32[], token[]), got (f32[4], s32[], "
                     "token[])");
  EXPECT_INFER_ERROR(text, "rd", "operand must be (data, u32[], token[])");
}

TEST(ControlShapeInference, DynamicShapesPassThrough) {
  EXPECT_EQ(Infer(R"(HloModule m
cond {
  p = f32[<=4,?] parameter(0)
  ROOT c = pred[] constant(true)
}
body {
  ROOT p = f32[<=4,?] parameter(0)
}
ENTRY e {
  init = f32[<=4,?] parameter(0)
  ROOT w = f32[<=4,?] while(init), condition=cond, body=body
})",
                  "w"),
            "f32[<=4,?]");
}

TEST(ControlShapeInference, OtherOpcodesAreNotHandled) {
  std::unique_ptr<HloModule> module = Parse(R"(HloModule m
ENTRY e {
  ROOT x = f32[4] parameter(0)
})");
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(absl::IsNotFound(shape_inference::InferControlShape(*Find(*module, "x")).status()));
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
