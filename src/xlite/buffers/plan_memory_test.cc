#include "xlite/buffers/plan_memory.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "xlite/buffers/buffers_test_util.h"
#include "xlite/buffers/memory_report.h"
#include "xlite/builder/xla_builder.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

using buffers_test::Plan;
using buffers_test::Planned;
using Kind = DonationVerdict::Kind;
constexpr PrimitiveType F32 = PrimitiveType::F32;
constexpr PrimitiveType S32 = PrimitiveType::S32;

constexpr char kDonors[] = R"(
HloModule m, input_output_alias={ {0}: (0, {}, must-alias) }, buffer_donor={ (1, {}), (2, {}) }

ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  c = s32[3] parameter(2)
  d = f32[4] parameter(3)
  x = f32[4] negate(a)
  y = f32[4] add(b, d)
  late = f32[4] multiply(b, d)
  ROOT t = (f32[4], f32[4], f32[4]) tuple(x, y, late)
}
)";

TEST(PlanMemory, DonationVerdicts) {
  Planned p = Plan(kDonors);
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();
  const std::vector<DonationVerdict>& v = p.plan->donations;
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].kind, Kind::kInPlace);
  EXPECT_TRUE(v[0].must_alias);
  EXPECT_EQ(v[0].output_index, ShapeIndex({0}));
  EXPECT_TRUE(absl::StrContains(v[0].text, "aliased to output {0} (must-alias); updated in place"))
      << v[0].text;
  // b backs output {1} (y), but `late` still reads b and need not run
  // before y: copied first.
  EXPECT_EQ(v[1].kind, Kind::kCopied) << v[1].text;
  EXPECT_TRUE(v[1].from_buffer_donor);
  EXPECT_TRUE(absl::StrContains(v[1].text, "still read by late")) << v[1].text;
  EXPECT_EQ(v[2].kind, Kind::kDonatedUnused);
  EXPECT_TRUE(absl::StrContains(v[2].text, "no output has its shape and layout, s32[3]"))
      << v[2].text;
  EXPECT_EQ(v[3].kind, Kind::kNotDonated);
  ASSERT_EQ(p.plan->donor_pairs.size(), 2u);
  EXPECT_EQ(p.plan->donor_pairs[0].output_index, ShapeIndex({1}));
}

TEST(PlanMemory, StrictDonationRefusesAnUnusableDonation) {
  PlanOptions options;
  options.strict_donation = true;
  Planned p = Plan(kDonors, options);
  ASSERT_FALSE(p.plan.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(p.plan.status()));
  EXPECT_TRUE(absl::StrContains(p.plan.status().message(), "parameter 2 {}")) << p.plan.status();
}

TEST(PlanMemory, OptionsFromTheDebugFlags) {
  std::vector<std::string> args = {"--xlite_verify_buffer_assignment", "--xlite_strict_donation",
                                   "file.hlo"};
  absl::StatusOr<DebugOptions> debug = ReadDebugOptions(args);
  ASSERT_TRUE(debug.ok()) << debug.status();
  EXPECT_EQ(args, std::vector<std::string>{"file.hlo"});
  PlanOptions options = PlanOptionsFrom(*debug);
  EXPECT_TRUE(options.verify);
  EXPECT_TRUE(options.strict_donation);
  EXPECT_FALSE(PlanOptionsFrom(DebugOptions()).verify);
}

// x is read before and after a 40000-byte temporary (the kept schedule's
// peak: 48012 bytes); --xlite_memory_limit recomputes it after the peak.
constexpr char kEarlyAndLate[] = R"(
HloModule m, is_scheduled=true

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[] parameter(0)
  x = f32[1000] broadcast(p), dimensions={}
  y = f32[1000] exponential(x)
  big = f32[10000] broadcast(p), dimensions={}
  zero = f32[] constant(0)
  s = f32[] reduce(big, zero), dimensions={0}, to_apply=add
  sb = f32[1000] broadcast(s), dimensions={}
  w = f32[1000] add(x, sb)
  ROOT v = f32[1000] add(w, y)
}
)";

TEST(PlanMemory, RematerializesUnderTheMemoryLimit) {
  std::vector<std::string> args = {"--xlite_memory_limit=45000"};
  absl::StatusOr<DebugOptions> debug = ReadDebugOptions(args);
  ASSERT_TRUE(debug.ok()) << debug.status();
  PlanOptions options = PlanOptionsFrom(*debug);
  EXPECT_EQ(options.rematerialization.memory_limit_bytes, 45000);
  Planned p = Plan(kEarlyAndLate, options);
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();
  ASSERT_TRUE(p.plan->rematerialization.has_value());
  EXPECT_EQ(p.plan->rematerialization->peak_before, 48012);
  EXPECT_EQ(p.plan->rematerialization->peak_after, 44012);
  ASSERT_EQ(p.plan->rematerialization->recomputed.size(), 1u);
  EXPECT_EQ(p["w"]->operand(0), p["x.remat"]);
  // The checker (on in Plan) recomputes the live bytes from the new order.
  EXPECT_EQ(p.plan->check->peak_live_bytes, 44012);
  const std::string report = MemoryReport(*p.plan);
  EXPECT_TRUE(absl::StrContains(report,
                                "rematerialization: limit 45000 bytes; peak 48012 bytes "
                                "-> 44012 bytes (met)"))
      << report;
  EXPECT_TRUE(absl::StrContains(report, "%x in %e: recomputed as %x.remat")) << report;

  Planned none = Plan(kEarlyAndLate);
  ASSERT_TRUE(none.plan.ok()) << none.plan.status();
  EXPECT_FALSE(none.plan->rematerialization.has_value());
  EXPECT_EQ(none.plan->check->peak_live_bytes, 48012);

  options.rematerialization.memory_limit_bytes = 40000;
  Planned low = Plan(kEarlyAndLate, options);
  ASSERT_FALSE(low.plan.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(low.plan.status())) << low.plan.status();
}

TEST(PlanMemory, FlattensACallGraphFirst) {
  Planned p = Plan(R"(
HloModule m

f {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}

ENTRY e {
  x = f32[4] parameter(0)
  c1 = f32[4] call(x), to_apply=f
  ROOT c2 = f32[4] call(c1), to_apply=f
}
)");
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();
  EXPECT_TRUE(p.plan->flattened);
  EXPECT_EQ(p.plan->schedule.chosen.empty(), false);
}

TEST(PlanMemory, ReturnedParameterIsCopiedAndSaysSo) {
  Planned p = Plan(R"(
HloModule m

ENTRY e {
  a = f32[4] parameter(0)
  n = f32[4] negate(a)
  ROOT t = (f32[4], f32[4]) tuple(a, n)
}
)");
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();
  ASSERT_EQ(p.plan->donations.size(), 1u);
  EXPECT_TRUE(absl::StrContains(p.plan->donations[0].text, "returned as output {0} through copy"))
      << p.plan->donations[0].text;
}

TEST(PlanMemory, RefusesUnboundedDimensions) {
  Planned p = Plan(R"(
HloModule m

ENTRY e {
  a = f32[?] parameter(0)
  ROOT n = f32[?] negate(a)
}
)");
  EXPECT_TRUE(absl::IsUnimplemented(p.plan.status())) << p.plan.status();
}

// SetUpAlias through the builder behaves as input_output_alias in text.
TEST(PlanMemory, BuilderAliasingExamples) {
  {
    XlaBuilder b("increment");
    XlaOp p = b.Parameter(0, Shape::Scalar(F32), "p");
    XlaOp out = b.Add(p, b.ConstantR0(F32, 1));
    b.SetUpAlias({}, 0, {});
    absl::StatusOr<std::unique_ptr<HloModule>> m = b.Build(out);
    ASSERT_TRUE(m.ok()) << m.status();
    PlanOptions options;
    options.verify = true;
    absl::StatusOr<MemoryPlan> plan = PlanMemory(**m, options);
    ASSERT_TRUE(plan.ok()) << plan.status();
    const HloComputation* entry = (*m)->entry_computation();
    EXPECT_EQ(plan->assignment->GetSlice(entry->parameter_instruction(0)),
              plan->assignment->GetSlice(entry->root_instruction()));
    EXPECT_TRUE(plan->copies.empty());
    ASSERT_EQ(plan->donations.size(), 1u);
    EXPECT_EQ(plan->donations[0].kind, Kind::kInPlace);
  }
  {
    // The builder's while loop doubling a donated vector ten times.
    XlaBuilder b("loop");
    Shape state = Shape::Tuple({Shape::Scalar(S32), Shape::Array(F32, {4})});
    auto cond_b = b.CreateSubBuilder("cond");
    XlaOp cp = cond_b->Parameter(0, state, "state");
    auto cond = cond_b->BuildSubComputation(cond_b->Compare(
        cond_b->GetTupleElement(cp, 0), cond_b->ConstantR0(S32, 10), ComparisonDirection::kLt));
    ASSERT_TRUE(cond.ok()) << cond.status();
    auto body_b = b.CreateSubBuilder("body");
    XlaOp bp = body_b->Parameter(0, state, "state");
    XlaOp i = body_b->GetTupleElement(bp, 0);
    XlaOp v = body_b->GetTupleElement(bp, 1);
    auto body = body_b->BuildSubComputation(
        body_b->Tuple({body_b->Add(i, body_b->ConstantR0(S32, 1)), body_b->Add(v, v)}));
    ASSERT_TRUE(body.ok()) << body.status();
    XlaOp init = b.Tuple({b.ConstantR0(S32, 0), b.Parameter(0, Shape::Array(F32, {4}), "v")});
    XlaOp loop = b.While(*cond, *body, init);
    b.SetUpAlias({}, 0, {});
    absl::StatusOr<std::unique_ptr<HloModule>> m = b.Build(b.GetTupleElement(loop, 1));
    ASSERT_TRUE(m.ok()) << m.status();
    PlanOptions options;
    options.verify = true;
    absl::StatusOr<MemoryPlan> plan = PlanMemory(**m, options);
    ASSERT_TRUE(plan.ok()) << plan.status();
    // The donated vector is the loop state and the output: one buffer in
    // parameter 0's allocation; only the constant initial counter is copied.
    const HloComputation* entry = (*m)->entry_computation();
    std::optional<BufferSlice> out = plan->assignment->GetSlice(entry->root_instruction());
    ASSERT_TRUE(out.has_value());
    const BufferAllocation& a = plan->assignment->allocations()[out->allocation];
    EXPECT_EQ(a.kind(), AllocationKind::kParameter);
    EXPECT_EQ(plan->donations[0].kind, Kind::kInPlace) << plan->donations[0].text;
    ASSERT_EQ(plan->copies.size(), 1u);
    EXPECT_EQ(plan->copies[0].reason, CopyReason::kWhileInit);
  }
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
