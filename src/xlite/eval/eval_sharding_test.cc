// Sharding annotations and manual computations in HLO, as XLA's importer
// writes them (the sdy round trip's custom calls and frontend attributes, or
// SPMDFullToShardShape/SPMDShardToFullShape with named shardings).
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "xlite/eval/eval_test_util.h"
#include "xlite/eval/evaluator.h"
#include "xlite/text/parser.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

using eval_test::Doubles;
using eval_test::F32;

std::unique_ptr<HloModule> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "t.hlo");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

Literal Iota(std::vector<int64_t> dims) {
  Literal l(Shape::Array(PrimitiveType::F32, std::move(dims)));
  for (int64_t i = 0; i < l.element_count(); ++i) l.SetDouble(i, static_cast<double>(i));
  return l;
}

TEST(EvalSharding, AnnotationsPassTheirOperandThrough) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  s = f32[2] custom-call(p), custom_call_target="Sharding", sharding={devices=[2]<=[2]}
  b = f32[2] custom-call(s), custom_call_target="xla.sdy.PropagationBarrier", frontend_attributes={xla.sdy.allowed_direction="FORWARD"}
  g = () custom-call(b), custom_call_target="xla.sdy.ShardingGroup", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.sharding_group_id="0"}
  ROOT r = f32[2] custom-call(b), custom_call_target="xla.sdy.FuncResultSharding", custom_call_has_side_effect=true
})");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> out = Evaluate(*m, {F32({2}, {1.5, -2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Doubles(*out), (std::vector<double>{1.5, -2}));
}

TEST(EvalSharding, AnnotationThatChangesTheShapeIsRefused) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT s = f32[1] custom-call(p), custom_call_target="Sharding"
})");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> out = Evaluate(*m, {F32({2}, {1, 2})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented);
}

// The sdy round trip of shard_map(lambda x: psum(x, 'x')) over 4 devices,
// with two operands (the second replicated) and two results.
constexpr char kRoundTrip[] =
    R"(HloModule jit_f, num_partitions=4, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=4]>}}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%xla.sdy.manual_computation_body (x: f32[2,4], y: f32[4]) -> (f32[2,4], f32[2,4]) {
  %x = f32[2,4] parameter(0)
  %y = f32[4] parameter(1)
  %sum = f32[2,4] all-reduce(%x), channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, to_apply=%add
  %yb = f32[2,4] broadcast(%y), dimensions={1}
  %plus = f32[2,4] add(%x, %yb)
  ROOT %t = (f32[2,4], f32[2,4]) tuple(%sum, %plus)
}

ENTRY %main (p0: f32[8,4], p1: f32[4]) -> (f32[2,4], f32[8,4]) {
  %p0 = f32[8,4] parameter(0), frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\"x\"}, {}]>"}
  %p1 = f32[4] parameter(1)
  %g2l = (f32[2,4], f32[4]) custom-call(%p0, %p1), custom_call_target="xla.sdy.GlobalToLocalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.in_shardings="#sdy.sharding_per_value<[<@mesh, [{\"x\"}, {}]>, <@mesh, [{}]>]>",xla.sdy.manual_axes="#sdy<manual_axes{\"x\"}>"}
  %l0 = f32[2,4] get-tuple-element(%g2l), index=0
  %l1 = f32[4] get-tuple-element(%g2l), index=1
  %call = (f32[2,4], f32[2,4]) call(%l0, %l1), to_apply=%xla.sdy.manual_computation_body, frontend_attributes={xla.sdy.in_shardings="#sdy.sharding_per_value<[<@mesh, [{\"x\"}, {}]>, <@mesh, [{}]>]>",xla.sdy.manual_axes="#sdy<manual_axes{\"x\"}>",xla.sdy.out_shardings="#sdy.sharding_per_value<[<@mesh, [{}, {}]>, <@mesh, [{\"x\"}, {}]>]>"}
  %r0 = f32[2,4] get-tuple-element(%call), index=0
  %r1 = f32[2,4] get-tuple-element(%call), index=1
  %l2g = (f32[2,4], f32[8,4]) custom-call(%r0, %r1), custom_call_target="xla.sdy.LocalToGlobalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.manual_axes="#sdy<manual_axes{\"x\"}>",xla.sdy.out_shardings="#sdy.sharding_per_value<[<@mesh, [{}, {}]>, <@mesh, [{\"x\"}, {}]>]>"}
  %o0 = f32[2,4] get-tuple-element(%l2g), index=0
  %o1 = f32[8,4] get-tuple-element(%l2g), index=1
  ROOT %out = (f32[2,4], f32[8,4]) tuple(%o0, %o1)
})";

TEST(EvalSharding, RoundTripManualComputationRunsPerDevice) {
  auto m = Parse(kRoundTrip);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> out = Evaluate(*m, {Iota({8, 4}), F32({4}, {100, 200, 300, 400})});
  ASSERT_TRUE(out.ok()) << out.status();
  // psum of the four 2-row shards of iota(8x4).
  EXPECT_EQ(Doubles(out->tuple_elements()[0]),
            (std::vector<double>{48, 52, 56, 60, 64, 68, 72, 76}));
  // Each shard plus the replicated row, reassembled: iota + y per column.
  std::vector<double> expected;
  for (int i = 0; i < 32; ++i) expected.push_back(i + 100.0 * (i % 4 + 1));
  EXPECT_EQ(Doubles(out->tuple_elements()[1]), expected);
}

TEST(EvalSharding, TheBoundaryOutsideAManualComputationIsRefused) {
  auto m = Parse(R"(HloModule m, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=2]>}}
ENTRY e {
  p = f32[4] parameter(0)
  l = f32[2] custom-call(p), custom_call_target="xla.sdy.GlobalToLocalShape", frontend_attributes={xla.sdy.in_shardings="#sdy.sharding_per_value<[<@mesh, [{\"x\"}]>]>",xla.sdy.manual_axes="#sdy<manual_axes{\"x\"}>"}
  ROOT n = f32[2] negate(l)
})");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> out = Evaluate(*m, {F32({4}, {1, 2, 3, 4})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(out.status().message(), "no manual computation call"))
      << out.status();

  auto exit = Parse(R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT g = f32[4] custom-call(p), custom_call_target="SPMDShardToFullShape"
})");
  ASSERT_NE(exit, nullptr);
  out = Evaluate(*exit, {F32({2}, {1, 2})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented);
}

TEST(EvalSharding, MissingManualAxesIsAnError) {
  auto m = Parse(R"(HloModule m, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=2]>}}
%xla.sdy.manual_computation_body (x: f32[2]) -> f32[2] {
  ROOT %x = f32[2] parameter(0)
}
ENTRY e {
  p = f32[4] parameter(0)
  l = f32[2] custom-call(p), custom_call_target="xla.sdy.GlobalToLocalShape"
  c = f32[2] call(l), to_apply=%xla.sdy.manual_computation_body
  ROOT g = f32[4] custom-call(c), custom_call_target="xla.sdy.LocalToGlobalShape"
})");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> out = Evaluate(*m, {F32({4}, {1, 2, 3, 4})});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::StrContains(out.status().message(), "without xla.sdy.manual_axes"))
      << out.status();
}

// A round-trip manual computation over "x" of `global` -> `local` -> `global`
// with these in- and out-shardings (escaped sdy text).
std::string RoundTripModule(const std::string& in, const std::string& out,
                            const std::string& global = "f32[8]",
                            const std::string& local = "f32[2]") {
  const std::string manual = R"(xla.sdy.manual_axes="#sdy<manual_axes{\"x\"}>")";
  const std::string ins =
      absl::StrCat("xla.sdy.in_shardings=\"#sdy.sharding_per_value<[", in, "]>\"");
  const std::string outs =
      absl::StrCat("xla.sdy.out_shardings=\"#sdy.sharding_per_value<[", out, "]>\"");
  return absl::StrCat(
      R"(HloModule m, num_partitions=4, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=4]>, other = #sdy.mesh<["y"=4]>}}
%xla.sdy.manual_computation_body (x: )",
      local, ") -> ", local, " {\n  ROOT %x = ", local,
      " parameter(0)\n}\nENTRY e {\n  p = ", global, " parameter(0)\n  l = ", local,
      " custom-call(p), custom_call_target=\"xla.sdy.GlobalToLocalShape\", frontend_attributes={",
      ins, ",", manual, "}\n  c = ", local,
      " call(l), to_apply=%xla.sdy.manual_computation_body, frontend_attributes={", ins, ",",
      manual, ",", outs, "}\n  ROOT g = ", global,
      " custom-call(c), custom_call_target=\"xla.sdy.LocalToGlobalShape\", frontend_attributes={",
      outs, ",", manual, "}\n}\n");
}

TEST(EvalSharding, RoundTripShardingsAreChecked) {
  const std::string rows = R"(<@mesh, [{\"x\"}]>)";
  auto run = [](const std::string& text) {
    auto m = Parse(text);
    if (m == nullptr) return std::string("no module");
    absl::StatusOr<Literal> out = Evaluate(*m, {Iota({8})});
    return out.ok() ? absl::StrCat(Doubles(*out)[7]) : std::string(out.status().message());
  };
  EXPECT_EQ(run(RoundTripModule(rows, rows)), "7");
  // All on one mesh.
  EXPECT_TRUE(absl::StrContains(run(RoundTripModule(rows, R"(<@other, [{\"y\"}]>)")),
                                "must share one mesh"));
  // The out-sharding's manual axes are whole axes, as the operands' are: a
  // sub-axis named like a manual axis is not the axis.
  EXPECT_TRUE(absl::StrContains(run(RoundTripModule(rows, R"(<@mesh, [{\"x\":(1)2}]>)")),
                                "out-sharding 0: manual axis \"x\" must be a whole axis"));
  // XLA's sharding rules on both sides, naming the sharding.
  EXPECT_TRUE(absl::StrContains(run(RoundTripModule(R"(<@mesh, [{\"x\", \"x\"}]>)", rows)),
                                "axis 'x' overlaps 'x'"));
  EXPECT_TRUE(absl::StrContains(run(RoundTripModule(rows, R"(<@mesh, [{\"x\", \"x\"}]>)")),
                                "out-sharding 0: axis 'x' overlaps 'x'"));
}

// XLA's named-sharding form: copy (global sharding) -> SPMDFullToShardShape
// (manual axes) -> call -> copy -> SPMDShardToFullShape (global sharding).
TEST(EvalSharding, FullToShardFormWithNamedShardings) {
  auto m = Parse(R"(HloModule m, num_partitions=2
%body (x: f32[1,4]) -> f32[1,4] {
  %x = f32[1,4] parameter(0)
  ROOT %p = f32[1,4] collective-permute(%x), channel_id=1, source_target_pairs={{0,1},{1,0}}
}
ENTRY e {
  p = f32[2,4] parameter(0)
  in = f32[2,4] copy(p), sharding={mesh['a'=2], [{'a'}, {}]}
  f2s = f32[1,4] custom-call(in), custom_call_target="SPMDFullToShardShape", sharding={mesh['a'=2], manual}
  c = f32[1,4] call(f2s), to_apply=%body, sharding={mesh['a'=2], manual}
  out = f32[1,4] copy(c)
  ROOT s2f = f32[2,4] custom-call(out), custom_call_target="SPMDShardToFullShape", sharding={mesh['a'=2], [{'a'}, {}]}
})");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> out = Evaluate(*m, {Iota({2, 4})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Doubles(*out), (std::vector<double>{4, 5, 6, 7, 0, 1, 2, 3}));
}

TEST(EvalSharding, FullToShardFormWithReplicatedValues) {
  // A replicated operand and result: XLA's named sharding keeps no dimensions.
  auto m = Parse(R"(HloModule m, num_partitions=2
%body (x: f32[1,4], q: f32[4]) -> (f32[1,4], f32[4]) {
  %x = f32[1,4] parameter(0)
  %q = f32[4] parameter(1)
  %p = f32[1,4] collective-permute(%x), channel_id=1, source_target_pairs={{0,1},{1,0}}
  %qq = f32[4] add(%q, %q)
  ROOT %t = (f32[1,4], f32[4]) tuple(%p, %qq)
}
ENTRY e {
  p = f32[2,4] parameter(0)
  q = f32[4] parameter(1)
  in = f32[2,4] copy(p), sharding={mesh['a'=2], [{'a'}, {}]}
  inq = f32[4] copy(q), sharding={mesh['a'=2], replicated}
  f2s = f32[1,4] custom-call(in), custom_call_target="SPMDFullToShardShape", sharding={mesh['a'=2], manual}
  f2sq = f32[4] custom-call(inq), custom_call_target="SPMDFullToShardShape", sharding={mesh['a'=2], manual}
  c = (f32[1,4], f32[4]) call(f2s, f2sq), to_apply=%body
  c0 = f32[1,4] get-tuple-element(c), index=0
  c1 = f32[4] get-tuple-element(c), index=1
  o0 = f32[1,4] copy(c0)
  o1 = f32[4] copy(c1)
  s0 = f32[2,4] custom-call(o0), custom_call_target="SPMDShardToFullShape", sharding={mesh['a'=2], [{'a'}, {}]}
  s1 = f32[4] custom-call(o1), custom_call_target="SPMDShardToFullShape", sharding={mesh['a'=2], replicated}
  ROOT r = (f32[2,4], f32[4]) tuple(s0, s1)
})");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> out = Evaluate(*m, {Iota({2, 4}), F32({4}, {1, 2, 3, 4})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Doubles(out->tuple_elements()[0]), (std::vector<double>{4, 5, 6, 7, 0, 1, 2, 3}));
  EXPECT_EQ(Doubles(out->tuple_elements()[1]), (std::vector<double>{2, 4, 6, 8}));
}

TEST(EvalSharding, FullToShardFormReadsIotaDeviceIds) {
  // device_ids=([2,2]T(1,0)) lists devices 0, 2, 1, 3: mesh position (a, b)
  // is device 2b + a. Each device adds its partition id to its element.
  const std::string mesh = "mesh['a'=2,'b'=2], device_ids=([2,2]T(1,0))";
  auto m = Parse(absl::StrCat(R"(HloModule m, num_partitions=4
%body (x: f32[1,1]) -> f32[1,1] {
  %x = f32[1,1] parameter(0)
  %id = u32[] partition-id()
  %f = f32[] convert(%id)
  %r = f32[1,1] reshape(%f)
  ROOT %s = f32[1,1] add(%x, %r)
}
ENTRY e {
  p = f32[2,2] parameter(0), sharding={)",
                              mesh, R"(, [{'a'}, {'b'}]}
  f2s = f32[1,1] custom-call(p), custom_call_target="SPMDFullToShardShape", sharding={)",
                              mesh,
                              R"(, manual}
  c = f32[1,1] call(f2s), to_apply=%body
  ROOT s2f = f32[2,2] custom-call(c), custom_call_target="SPMDShardToFullShape", sharding={)",
                              mesh, R"(, [{'a'}, {'b'}]}
})"));
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> out = Evaluate(*m, {F32({2, 2}, {0, 10, 20, 30})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Doubles(*out), (std::vector<double>{0, 12, 21, 33}));
}

TEST(EvalSharding, FullToShardFormReadsResultsThroughOneOperandOnly) {
  // A ShardToFull of two operands cannot say which one is the result.
  auto m = Parse(R"(HloModule m, num_partitions=2
%body (x: f32[1,4]) -> f32[1,4] {
  ROOT %x = f32[1,4] parameter(0)
}
ENTRY e {
  p = f32[2,4] parameter(0), sharding={mesh['a'=2], [{'a'}, {}]}
  f2s = f32[1,4] custom-call(p), custom_call_target="SPMDFullToShardShape", sharding={mesh['a'=2], manual}
  c = f32[1,4] call(f2s), to_apply=%body
  ROOT s2f = f32[2,4] custom-call(p, c), custom_call_target="SPMDShardToFullShape", sharding={mesh['a'=2], [{'a'}, {}]}
})");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> out = Evaluate(*m, {Iota({2, 4})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(out.status().message(), "SPMDShardToFullShape of one operand"))
      << out.status();
}

TEST(EvalSharding, FullToShardFormShardingsShareOneMesh) {
  auto m = Parse(R"(HloModule m, num_partitions=2
%body (x: f32[1,4]) -> f32[1,4] {
  ROOT %x = f32[1,4] parameter(0)
}
ENTRY e {
  p = f32[2,4] parameter(0), sharding={mesh['a'=2], [{'a'}, {}]}
  f2s = f32[1,4] custom-call(p), custom_call_target="SPMDFullToShardShape", sharding={mesh['a'=2], manual}
  c = f32[1,4] call(f2s), to_apply=%body
  ROOT s2f = f32[2,4] custom-call(c), custom_call_target="SPMDShardToFullShape", sharding={mesh['b'=2], [{'b'}, {}]}
})");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> out = Evaluate(*m, {Iota({2, 4})});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::StrContains(out.status().message(), "must share one mesh")) << out.status();
}

TEST(EvalSharding, FullToShardFormWithoutNamedShardingsIsUnsupported) {
  auto m = Parse(R"(HloModule m, num_partitions=2
%body (x: f32[1,4]) -> f32[1,4] {
  ROOT %x = f32[1,4] parameter(0)
}
ENTRY e {
  p = f32[2,4] parameter(0), sharding={devices=[2,1]<=[2]}
  f2s = f32[1,4] custom-call(p), custom_call_target="SPMDFullToShardShape", sharding={manual}
  c = f32[1,4] call(f2s), to_apply=%body
  ROOT s2f = f32[2,4] custom-call(c), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,1]<=[2]}
})");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> out = Evaluate(*m, {Iota({2, 4})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(out.status().message(), "named")) << out.status();
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
