// Tests of the control-flow family: while, conditional, call, fusion, async
// ops, custom-call and the host-transfer ops.
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xlite/eval/eval_test_util.h"
#include "xlite/eval/evaluator.h"
#include "xlite/text/parser.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

using eval_test::Doubles;
using eval_test::Ints;

std::unique_ptr<HloModule> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "t.hlo");
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? std::move(*module) : nullptr;
}

Literal S32(std::vector<int64_t> values, std::vector<int64_t> dims) {
  Literal lit(Shape::Array(PrimitiveType::S32, std::move(dims)));
  for (size_t i = 0; i < values.size(); ++i) lit.SetInt(i, values[i]);
  return lit;
}
Literal S32Scalar(int64_t v) { return S32({v}, {}); }

Literal PredScalar(bool v) {
  Literal lit(Shape::Scalar(PrimitiveType::PRED));
  lit.SetInt(0, v);
  return lit;
}

Literal F32(std::vector<double> values) {
  Literal lit(Shape::Array(PrimitiveType::F32, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) lit.SetDouble(i, values[i]);
  return lit;
}

// Registers "xlite_test_double": twice each element of an f32 array.
void RegisterDoubleTarget() {
  RegisterCustomCallTarget(
      "xlite_test_double",
      [](const HloInstruction& call,
         absl::Span<const Literal* const> operands) -> absl::StatusOr<Literal> {
        Literal out = *operands[0];
        for (int64_t i = 0; i < out.element_count(); ++i) out.SetDouble(i, 2 * out.GetDouble(i));
        return out;
      });
}

TEST(EvalControl, CycleIsAnErrorNotACrash) {
  // a = add(p, b), b = add(p, a): no valid order exists (the verifier rejects
  // it; an unverified module must not crash the evaluator).
  HloModule module("cycle");
  auto comp = std::make_unique<HloComputation>("e");
  const Shape scalar = Shape::Scalar(PrimitiveType::F32);
  auto param = std::make_unique<HloInstruction>(HloOpcode::kParameter, "p", scalar);
  param->attrs().parameter_number = 0;
  HloInstruction* p = comp->AddInstruction(std::move(param));
  comp->SetParameter(0, p);
  HloInstruction* a =
      comp->AddInstruction(std::make_unique<HloInstruction>(HloOpcode::kAdd, "a", scalar));
  HloInstruction* b =
      comp->AddInstruction(std::make_unique<HloInstruction>(HloOpcode::kAdd, "b", scalar));
  a->AppendOperand(p);
  a->AppendOperand(b);
  b->AppendOperand(p);
  b->AppendOperand(a);
  comp->set_root_instruction(b);
  module.set_entry_computation(module.AddComputation(std::move(comp)));
  Literal arg(scalar);
  auto r = Evaluate(module, {arg});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cycle"), std::string::npos) << r.status();
}

TEST(EvalControl, WhileLoopCountsUpToTheBound) {
  auto module = Parse(R"(
HloModule m
cond {
  p = s32[] parameter(0)
  bound = s32[] constant(10)
  ROOT lt = pred[] compare(p, bound), direction=LT
}
body {
  p = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT next = s32[] add(p, one)
}
ENTRY e {
  init = s32[] parameter(0)
  ROOT w = s32[] while(init), condition=cond, body=body
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<Literal> from_three = Evaluate(*module, {S32Scalar(3)});
  ASSERT_TRUE(from_three.ok()) << from_three.status();
  EXPECT_EQ(from_three->GetInt(0), 10);
  // A condition false at the start runs the body zero times.
  absl::StatusOr<Literal> from_twelve = Evaluate(*module, {S32Scalar(12)});
  ASSERT_TRUE(from_twelve.ok()) << from_twelve.status();
  EXPECT_EQ(from_twelve->GetInt(0), 12);
}

TEST(EvalControl, WhileLoopCarriesATuple) {
  // Sums 1..5 with a (counter, sum) state.
  auto module = Parse(R"(
HloModule m
cond {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  five = s32[] constant(5)
  ROOT le = pred[] compare(i, five), direction=LE
}
body {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  s = s32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  s1 = s32[] add(s, i)
  ROOT t = (s32[], s32[]) tuple(i1, s1)
}
ENTRY e {
  one = s32[] constant(1)
  zero = s32[] constant(0)
  init = (s32[], s32[]) tuple(one, zero)
  w = (s32[], s32[]) while(init), condition=cond, body=body
  ROOT sum = s32[] get-tuple-element(w), index=1
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<Literal> result = Evaluate(*module, {});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->GetInt(0), 15);
}

constexpr char kThreeBranches[] = R"(
HloModule m
b0 {
  ROOT p = s32[] parameter(0)
}
b1 {
  ROOT p = s32[] parameter(0)
}
b2 {
  ROOT p = s32[] parameter(0)
}
ENTRY e {
  index = s32[] parameter(0)
  x0 = s32[] parameter(1)
  x1 = s32[] parameter(2)
  x2 = s32[] parameter(3)
  ROOT c = s32[] conditional(index, x0, x1, x2), branch_computations={b0, b1, b2}
})";

TEST(EvalControl, ConditionalIndexSelectsABranch) {
  auto module = Parse(kThreeBranches);
  ASSERT_NE(module, nullptr);
  for (int64_t index : {0, 1, 2}) {
    absl::StatusOr<Literal> result =
        Evaluate(*module, {S32Scalar(index), S32Scalar(100), S32Scalar(101), S32Scalar(102)});
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->GetInt(0), 100 + index);
  }
}

TEST(EvalControl, ConditionalIndexOutOfRangeSelectsTheLastBranch) {
  auto module = Parse(kThreeBranches);
  ASSERT_NE(module, nullptr);
  for (int64_t index : {-1, 3, 1000}) {
    absl::StatusOr<Literal> result =
        Evaluate(*module, {S32Scalar(index), S32Scalar(100), S32Scalar(101), S32Scalar(102)});
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->GetInt(0), 102) << "index " << index;
  }
}

TEST(EvalControl, ConditionalOnPredicate) {
  auto module = Parse(R"(
HloModule m
on_true {
  ROOT p = s32[] parameter(0)
}
on_false {
  ROOT p = s32[] parameter(0)
}
ENTRY e {
  pred = pred[] parameter(0)
  a = s32[] parameter(1)
  b = s32[] parameter(2)
  ROOT c = s32[] conditional(pred, a, b), true_computation=on_true, false_computation=on_false
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<Literal> taken = Evaluate(*module, {PredScalar(true), S32Scalar(1), S32Scalar(2)});
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_EQ(taken->GetInt(0), 1);
  absl::StatusOr<Literal> not_taken =
      Evaluate(*module, {PredScalar(false), S32Scalar(1), S32Scalar(2)});
  ASSERT_TRUE(not_taken.ok()) << not_taken.status();
  EXPECT_EQ(not_taken->GetInt(0), 2);
}

TEST(EvalControl, CallAndFusionEvaluateTheirComputations) {
  RegisterDoubleTarget();
  auto module = Parse(R"(
HloModule m
callee {
  p = f32[3] parameter(0)
  ROOT d = f32[3] custom-call(p), custom_call_target="xlite_test_double"
}
fused {
  p = f32[3] parameter(0)
  ROOT d = f32[3] custom-call(p), custom_call_target="xlite_test_double"
}
ENTRY e {
  x = f32[3] parameter(0)
  c = f32[3] call(x), to_apply=callee
  ROOT f = f32[3] fusion(c), kind=kLoop, calls=fused
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<Literal> result = Evaluate(*module, {F32({1, 2, 3})});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(Doubles(*result), (std::vector<double>{4, 8, 12}));
}

constexpr char kAsyncModule[] = R"(
HloModule m
wrapped {
  p = f32[3] parameter(0)
  ROOT d = f32[3] custom-call(p), custom_call_target="xlite_test_double"
}
ENTRY e {
  x = f32[3] parameter(0)
  start = ((f32[3]), f32[3], s32[]) async-start(x), calls=wrapped
  update = ((f32[3]), f32[3], s32[]) async-update(start)
  ROOT done = f32[3] async-done(update)
})";

TEST(EvalControl, AsyncStartUpdateDone) {
  RegisterDoubleTarget();
  auto module = Parse(kAsyncModule);
  ASSERT_NE(module, nullptr);
  absl::StatusOr<Literal> result = Evaluate(*module, {F32({1, -2, 5})});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(Doubles(*result), (std::vector<double>{2, -4, 10}));
}

TEST(EvalControl, AsyncStartReturnsOperandsResultAndContext) {
  RegisterDoubleTarget();
  auto module = Parse(R"(
HloModule m
wrapped {
  p = f32[3] parameter(0)
  ROOT d = f32[3] custom-call(p), custom_call_target="xlite_test_double"
}
ENTRY e {
  x = f32[3] parameter(0)
  ROOT start = ((f32[3]), f32[3], s32[]) async-start(x), calls=wrapped
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<Literal> result = Evaluate(*module, {F32({1, 2, 3})});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->tuple_elements().size(), 3u);
  ASSERT_EQ(result->tuple_elements()[0].tuple_elements().size(), 1u);
  EXPECT_EQ(Doubles(result->tuple_elements()[0].tuple_elements()[0]),
            (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(Doubles(result->tuple_elements()[1]), (std::vector<double>{2, 4, 6}));
  EXPECT_EQ(result->tuple_elements()[2].GetInt(0), 0);
}

TEST(EvalControl, UnknownCustomCallTargetIsUnimplemented) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  ROOT c = f32[3] custom-call(x), custom_call_target="no_such_target"
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<Literal> result = Evaluate(*module, {F32({1, 2, 3})});
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(absl::IsUnimplemented(result.status())) << result.status();
  EXPECT_NE(result.status().message().find("unsupported custom-call target \"no_such_target\""),
            absl::string_view::npos)
      << result.status();
}

TEST(EvalControl, ShardingCustomCallPassesThrough) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  ROOT c = f32[3] custom-call(x), custom_call_target="Sharding", sharding={replicated}
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<Literal> result = Evaluate(*module, {F32({1, 2, 3})});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(Doubles(*result), (std::vector<double>{1, 2, 3}));
}

TEST(EvalControl, TopKCustomCallSortsStablyByTheComparator) {
  auto module = Parse(R"(
HloModule m
greater {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT gt = pred[] compare(a, b), direction=GT
}
ENTRY e {
  x = f32[2,5] parameter(0)
  ROOT top = (f32[2,3], s32[2,3]) custom-call(x), custom_call_target="TopK", called_computations={greater}
})");
  ASSERT_NE(module, nullptr);
  Literal x(Shape::Array(PrimitiveType::F32, {2, 5}));
  const double values[] = {1, 5, 3, 5, 2, /**/ 0, -1, 7, 0, 0};
  for (int i = 0; i < 10; ++i) x.SetDouble(i, values[i]);
  absl::StatusOr<Literal> result = Evaluate(*module, {x});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(Doubles(result->tuple_elements()[0]), (std::vector<double>{5, 5, 3, 7, 0, 0}));
  EXPECT_EQ(Ints(result->tuple_elements()[1]), (std::vector<int64_t>{1, 3, 2, 2, 0, 3}));
}

TEST(EvalControl, InfeedWithoutHostTransfersSaysNoInfeedWasGiven) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  token = token[] after-all()
  ROOT in = (f32[3], token[]) infeed(token)
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<Literal> result = Evaluate(*module, {});
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(result.status())) << result.status();
  EXPECT_NE(result.status().message().find("infeed 'in': no infeed was given"),
            absl::string_view::npos)
      << result.status();
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
