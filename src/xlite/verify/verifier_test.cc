// One failing module per verifier rule, asserting the message.
#include "xlite/verify/verifier.h"

#include "gtest/gtest.h"
#include "xlite/text/parser.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto m = ParseHloModule(text, "t.hlo");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

std::string VerifyError(const std::string& text) {
  auto m = Parse(text);
  if (!m) return "<parse failed>";
  absl::Status s = VerifyModule(*m);
  EXPECT_FALSE(s.ok()) << text;
  return std::string(s.message());
}

#define EXPECT_ERROR(text, substring) \
  EXPECT_NE(VerifyError(text).find(substring), std::string::npos) << VerifyError(text)

constexpr char kAdd[] = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

TEST(Verifier, AcceptsAValidModule) {
  auto m = Parse(std::string("HloModule m\n") + kAdd + R"(
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add
})");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(VerifyModule(*m).ok()) << VerifyModule(*m);
}

TEST(Verifier, ShapeMustMatchInference) {
  EXPECT_ERROR(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT n = f32[5] negate(p)
})",
               "instruction 'n' (negate) in computation 'e': declared shape f32[5] does not match "
               "the inferred shape f32[4]");
}

TEST(Verifier, CalledComputationSignature) {
  EXPECT_ERROR(std::string("HloModule m\n") + kAdd + R"(
ENTRY e {
  p = s32[4] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[] reduce(p, z), dimensions={0}, to_apply=add
})",
               "instruction 'r' (reduce)");
}

TEST(Verifier, ParameterNumbering) {
  auto m = Parse("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n");
  ASSERT_NE(m, nullptr);
  HloComputation* entry = m->entry_computation();
  auto extra = std::make_unique<HloInstruction>(HloOpcode::kParameter, "q",
                                                Shape::Scalar(PrimitiveType::F32));
  extra->attrs().parameter_number = 2;
  entry->SetParameter(2, entry->AddInstruction(std::move(extra)));
  m->config().entry_computation_layout.reset();
  EXPECT_NE(std::string(VerifyModule(*m).message()).find("parameter 1 is missing"),
            std::string::npos)
      << VerifyModule(*m);
}

TEST(Verifier, UniqueNames) {
  auto m =
      Parse("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}\n");
  ASSERT_NE(m, nullptr);
  m->entry_computation()->root_instruction()->set_name("p");
  EXPECT_NE(std::string(VerifyModule(*m).message()).find("name is not unique"), std::string::npos);
}

TEST(Verifier, RootMustBelongToTheComputation) {
  auto a = Parse("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n");
  auto b = Parse("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n");
  ASSERT_TRUE(a && b);
  a->entry_computation()->set_root_instruction(b->entry_computation()->root_instruction());
  EXPECT_NE(std::string(VerifyModule(*a).message()).find("ROOT is not one of its instructions"),
            std::string::npos);
}

TEST(Verifier, ControlDependenciesAreAcyclic) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  p = f32[] parameter(0)
  a = f32[] negate(p)
  ROOT b = f32[] negate(a)
})");
  ASSERT_NE(m, nullptr);
  HloComputation* e = m->entry_computation();
  e->root_instruction()->AddControlDependencyTo(e->root_instruction()->operand(0));
  EXPECT_NE(
      std::string(VerifyModule(*m).message()).find("cycle of operands and control dependencies"),
      std::string::npos)
      << VerifyModule(*m);
}

TEST(Verifier, LayoutMustBeAPermutation) {
  auto m = Parse("HloModule m\nENTRY e {\n  ROOT p = f32[2,3] parameter(0)\n}\n");
  ASSERT_NE(m, nullptr);
  m->entry_computation()->root_instruction()->mutable_shape().mutable_layout().minor_to_major = {0,
                                                                                                 0};
  EXPECT_NE(std::string(VerifyModule(*m).message()).find("is not a permutation"),
            std::string::npos);
}

TEST(Verifier, IntegerComparisonsAreTotalOrders) {
  EXPECT_ERROR(R"(HloModule m
ENTRY e {
  a = s32[2] parameter(0)
  ROOT c = pred[2] compare(a, a), direction=LT, order=WEAK
})",
               "instruction 'c' (compare) in computation 'e': comparisons of s32 are total "
               "orders; order=WEAK is only for floating-point operands");
  EXPECT_ERROR(R"(HloModule m
ENTRY e {
  a = u8[2] parameter(0)
  ROOT c = pred[2] compare(a, a), direction=LT, type=FLOAT
})",
               "comparisons of u8 are total orders; type=FLOAT is only for floating-point");
  auto ok = Parse(R"(HloModule m
ENTRY e {
  a = bf16[2] parameter(0)
  ROOT c = pred[2] compare(a, a), direction=LT, order=WEAK
})");
  ASSERT_NE(ok, nullptr);
  EXPECT_TRUE(VerifyModule(*ok).ok());
}

TEST(Verifier, ResultAccuracyTolerancesAreNonNegative) {
  EXPECT_ERROR(R"(HloModule m
ENTRY e {
  x = f32[] parameter(0)
  ROOT y = f32[] exponential(x), result_accuracy={tolerance={atol=-1,rtol=0,ulps=0}}
})",
               "instruction 'y' (exponential) in computation 'e': result_accuracy tolerances must "
               "be non-negative, got atol=-1 rtol=0 ulps=0");
}

TEST(Verifier, NamedShardingsFitTheModuleAndTheShape) {
  EXPECT_ERROR(R"(HloModule m, num_partitions=2
ENTRY e {
  ROOT p = f32[8,8] parameter(0), sharding={mesh['a'=2,'b'=2], [{'a'}, {'b'}]}
})",
               "instruction 'p' (parameter) in computation 'e': sharding mesh "
               "mesh['a'=2,'b'=2] has 4 devices but the module has num_partitions=2");
  EXPECT_ERROR(R"(HloModule m, num_partitions=4
ENTRY e {
  ROOT p = f32[8,8] parameter(0), sharding={mesh['a'=2,'b'=2], [{'a'}]}
})",
               "named sharding shards 1 dimensions but f32[8,8] has rank 2");
  EXPECT_ERROR(R"(HloModule m, num_partitions=4
ENTRY e {
  ROOT p = f32[8] parameter(0), sharding={maximal_mesh[device_id=4]}
})",
               "sharding maximal_mesh[device_id=4] names a device outside the module's "
               "num_partitions=4");
  auto ok = Parse(R"(HloModule m, num_partitions=4
ENTRY e {
  p = f32[8,8] parameter(0), sharding={mesh['a'=2,'b'=2], [{'a'}, {}], replicated={'b'}}
  ROOT t = (f32[8,8], f32[8,8]) tuple(p, p), sharding={{mesh['a'=2,'b'=2], [{'a'}, {'b'}]}, {replicated}}
})");
  ASSERT_NE(ok, nullptr);
  EXPECT_TRUE(VerifyModule(*ok).ok()) << VerifyModule(*ok);
}

TEST(Verifier, ReplicaGroupsAndChannels) {
  EXPECT_ERROR(std::string("HloModule m\n") + kAdd + R"(
ENTRY e {
  p = f32[4] parameter(0)
  ROOT r = f32[4] all-reduce(p), replica_groups={{0,1},{1,2}}, to_apply=add
})",
               "replica_groups lists id 1 more than once");
  EXPECT_ERROR(std::string("HloModule m\n") + kAdd + R"(
ENTRY e {
  p = f32[4] parameter(0)
  ROOT r = f32[4] all-reduce(p), replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
})",
               "use_global_device_ids=true requires a channel_id");
}

constexpr char kWrapped[] = R"(
wrapped {
  x = f32[4] parameter(0)
  ROOT c = f32[8] custom-call(x), custom_call_target="foo"
}
)";

TEST(Verifier, AsyncStartShapeAndWrappedRoot) {
  EXPECT_ERROR(std::string("HloModule m\n") + kWrapped + R"(
ENTRY e {
  p = f32[4] parameter(0)
  s = ((f32[4]), f32[9], u32[]) async-start(p), calls=wrapped
  ROOT d = f32[8] async-done(s)
})",
               "does not match the wrapped root f32[8]");
}

TEST(Verifier, AsyncStartHasOneUpdateOrDoneUser) {
  EXPECT_ERROR(std::string("HloModule m\n") + kWrapped + R"(
ENTRY e {
  p = f32[4] parameter(0)
  s = ((f32[4]), f32[8], u32[]) async-start(p), calls=wrapped
  d = f32[8] async-done(s)
  ROOT t = (((f32[4]), f32[8], u32[]), f32[8]) tuple(s, d)
})",
               "must have exactly one user, has 2");
  EXPECT_ERROR(std::string("HloModule m\n") + kWrapped + R"(
ENTRY e {
  p = f32[4] parameter(0)
  s = ((f32[4]), f32[8], u32[]) async-start(p), calls=wrapped
  ROOT t = (((f32[4]), f32[8], u32[])) tuple(s)
})",
               "its user 't' must be an async-update or async-done");
}

TEST(Verifier, AsyncDoneShapeAndChain) {
  EXPECT_ERROR(std::string("HloModule m\n") + kWrapped + R"(
ENTRY e {
  p = f32[4] parameter(0)
  s = ((f32[4]), f32[8], u32[]) async-start(p), calls=wrapped
  ROOT d = f32[7] async-done(s)
})",
               "async-done shape f32[7] must equal the wrapped root f32[8]");
  EXPECT_ERROR(std::string("HloModule m\n") + kWrapped + R"(
other {
  y = f32[4] parameter(0)
  ROOT c = f32[8] custom-call(y), custom_call_target="bar"
}
ENTRY e {
  p = f32[4] parameter(0)
  s = ((f32[4]), f32[8], u32[]) async-start(p), calls=wrapped
  ROOT d = f32[8] async-done(s), calls=other
})",
               "calls 'other' but its start calls 'wrapped'");
}

TEST(Verifier, AsyncMayNotWrapFirstClassOps) {
  EXPECT_ERROR(R"(HloModule m
wrapped {
  x = f32[4] parameter(0)
  ROOT c = f32[4] copy(x)
}
ENTRY e {
  p = f32[4] parameter(0)
  s = ((f32[4]), f32[4], u32[]) async-start(p), calls=wrapped
  ROOT d = f32[4] async-done(s)
})",
               "wraps copy, which has its own first-class start/done opcodes");
}

TEST(Verifier, FirstClassDoneNeedsItsStart) {
  EXPECT_ERROR(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  s = (f32[4], f32[4], u32[]) copy-start(p)
  ROOT d = f32[4] all-reduce-done(s)
})",
               "its user 'd' must be copy-done");
}

TEST(Verifier, InputOutputAliasRules) {
  const std::string body = R"(
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[2] parameter(1)
  n = f32[4] negate(p0)
  ROOT t = (f32[4], f32[4], f32[2]) tuple(n, n, p1)
})";
  EXPECT_ERROR("HloModule m, input_output_alias={ {3}: (0, {}, may-alias) }" + body,
               "input_output_alias output index {3} does not exist");
  EXPECT_ERROR("HloModule m, input_output_alias={ {0}: (2, {}, may-alias) }" + body,
               "input_output_alias names parameter 2, but the entry has 2");
  EXPECT_ERROR("HloModule m, input_output_alias={ {0}: (1, {}, may-alias) }" + body,
               "differs from parameter 1 {} shape f32[2]");
  EXPECT_ERROR(
      "HloModule m, input_output_alias={ {0}: (0, {}, may-alias), {0}: (0, {}, must-alias) }" +
          body,
      "aliases output {0} twice");
  EXPECT_ERROR(
      "HloModule m, input_output_alias={ {0}: (0, {}, may-alias), {1}: (0, {}, must-alias) }" +
          body,
      "uses parameter 0 {} for two outputs");
  EXPECT_ERROR("HloModule m, input_output_alias={ {0}: (0, {0}, may-alias) }" + body,
               "names index {0} which parameter 0 does not have");
}

TEST(Verifier, BufferDonorRules) {
  const std::string body = R"(
ENTRY e {
  p0 = f32[4] parameter(0)
  ROOT n = f32[4] negate(p0)
})";
  EXPECT_ERROR(
      "HloModule m, input_output_alias={ {}: (0, {}, may-alias) }, buffer_donor={ (0, {}) }" + body,
      "buffer_donor (0, {}) is also in input_output_alias");
  EXPECT_ERROR("HloModule m, buffer_donor={ (1, {}) }" + body, "buffer_donor names parameter 1");
  auto ok = Parse("HloModule m, buffer_donor={ (0, {}) }" + body);
  ASSERT_NE(ok, nullptr);
  EXPECT_TRUE(VerifyModule(*ok).ok()) << VerifyModule(*ok);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
