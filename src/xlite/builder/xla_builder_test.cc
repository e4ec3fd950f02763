#include "xlite/builder/xla_builder.h"

#include "gtest/gtest.h"
#include "xlite/text/parser.h"
#include "xlite/text/printer.h"
#include "xlite/verify/verifier.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

constexpr PrimitiveType F32 = PrimitiveType::F32;
constexpr PrimitiveType S32 = PrimitiveType::S32;

XlaComputation BinaryComputation(XlaBuilder& parent, const std::string& name, HloOpcode op) {
  auto sub = parent.CreateSubBuilder(name);
  XlaOp a = sub->Parameter(0, Shape::Scalar(F32), "a");
  XlaOp b = sub->Parameter(1, Shape::Scalar(F32), "b");
  auto c = sub->BuildSubComputation(sub->Binary(op, a, b));
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : XlaComputation();
}

// The printed text of a built module parses and verifies again.
void ExpectTextRoundTrips(const HloModule& m) {
  std::string text = PrintModule(m);
  auto reparsed = ParseHloModule(text, "built.hlo");
  ASSERT_TRUE(reparsed.ok()) << reparsed.status() << "\n" << text;
  EXPECT_TRUE(VerifyModule(**reparsed).ok()) << text;
  EXPECT_EQ(PrintModule(**reparsed), text);
}

TEST(XlaBuilder, MlpWithSoftmax) {
  XlaBuilder b("mlp");
  XlaOp x = b.Parameter(0, Shape::Array(F32, {8, 784}), "x");
  XlaOp w = b.Parameter(1, Shape::Array(F32, {784, 128}), "w");
  XlaOp bias = b.Parameter(2, Shape::Array(F32, {128}), "bias");
  XlaOp h = b.Add(b.Dot(x, w), b.BroadcastInDim(bias, {8, 128}, {1}));
  XlaOp relu = b.Max(h, b.Broadcast(b.ConstantR0(F32, 0), {8, 128}));
  // softmax over dimension 1
  XlaComputation max = BinaryComputation(b, "max", HloOpcode::kMaximum);
  XlaComputation add = BinaryComputation(b, "add", HloOpcode::kAdd);
  XlaOp row_max = b.Reduce(relu, b.ConstantR0(F32, -INFINITY), max, {1});
  XlaOp shifted = b.Sub(relu, b.BroadcastInDim(row_max, {8, 128}, {0}));
  XlaOp e = b.Exp(shifted);
  XlaOp sum = b.Reduce(e, b.ConstantR0(F32, 0), add, {1});
  XlaOp softmax = b.Div(e, b.BroadcastInDim(sum, {8, 128}, {0}));
  auto m = b.Build(softmax);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)->entry_computation()->root_instruction()->shape().ToString(), "f32[8,128]{1,0}");
  EXPECT_EQ((*m)->computations().size(), 3u);
  ExpectTextRoundTrips(**m);
}

TEST(XlaBuilder, WhileLoopCountsToTen) {
  XlaBuilder b("loop");
  Shape state = Shape::Tuple({Shape::Scalar(S32), Shape::Array(F32, {4})});
  auto cond_b = b.CreateSubBuilder("cond");
  XlaOp cp = cond_b->Parameter(0, state, "state");
  auto cond = cond_b->BuildSubComputation(cond_b->Compare(
      cond_b->GetTupleElement(cp, 0), cond_b->ConstantR0(S32, 10), ComparisonDirection::kLt));
  ASSERT_TRUE(cond.ok()) << cond.status();
  auto body_b = b.CreateSubBuilder("body");
  XlaComputation body;
  {
    XlaOp p = body_b->Parameter(0, state, "state");
    XlaOp i = body_b->GetTupleElement(p, 0);
    XlaOp v = body_b->GetTupleElement(p, 1);
    XlaOp next = body_b->Tuple({body_b->Add(i, body_b->ConstantR0(S32, 1)), body_b->Add(v, v)});
    auto c = body_b->BuildSubComputation(next);
    ASSERT_TRUE(c.ok()) << c.status();
    body = *c;
  }
  XlaOp init = b.Tuple({b.ConstantR0(S32, 0), b.Parameter(0, Shape::Array(F32, {4}), "v")});
  XlaOp loop = b.While(*cond, body, init);
  b.SetUpAlias({}, 0, {});
  auto m = b.Build(b.GetTupleElement(loop, 1));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)->config().input_output_alias.size(), 1u);
  ExpectTextRoundTrips(**m);
}

TEST(XlaBuilder, ShapeErrorsSurfaceAtBuild) {
  XlaBuilder b("bad");
  XlaOp x = b.Parameter(0, Shape::Array(F32, {2, 3}), "x");
  XlaOp y = b.Parameter(1, Shape::Array(F32, {3, 2}), "y");
  b.Add(x, y);
  auto m = b.Build();
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("add"), std::string::npos) << m.status();
}

TEST(XlaBuilder, BadAliasIsRejected) {
  XlaBuilder b("alias");
  XlaOp x = b.Parameter(0, Shape::Array(F32, {4}), "x");
  b.Neg(x);
  b.SetUpAlias({}, 1, {});
  auto m = b.Build();
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("input_output_alias names parameter 1"), std::string::npos)
      << m.status();
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
