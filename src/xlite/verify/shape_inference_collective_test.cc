// Shape inference for collectives: one valid and at least one failing module
// per rule, including the -start/-done forms XLA writes.
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

// The inferred shape of instruction `name` without layout, or the error text.
std::string Infer(const std::string& text, const std::string& name) {
  std::unique_ptr<HloModule> module = Parse(text);
  if (!module) return "<parse failed>";
  for (const auto& computation : module->computations()) {
    for (const auto& instr : computation->instructions()) {
      if (instr->name() != name) continue;
      absl::StatusOr<Shape> shape = InferShape(*instr);
      if (!shape.ok()) return std::string(shape.status().message());
      return shape->ToString(/*print_layout=*/false);
    }
  }
  return "<not found>";
}

#define EXPECT_INFER_ERROR(text, name, substring) \
  EXPECT_NE(Infer(text, name).find(substring), std::string::npos) << Infer(text, name)

// A module whose entry has parameters x: f32[8,4], y: s32[2] and `body`.
std::string Module(const std::string& body, const std::string& header = "") {
  return "HloModule m" + header + R"(
add {
  lhs = f32[] parameter(0)
  rhs = f32[] parameter(1)
  ROOT sum = f32[] add(lhs, rhs)
}
ENTRY e {
  x = f32[8,4]{1,0} parameter(0)
  y = s32[2] parameter(1)
)" + body +
         "\n}";
}

TEST(CollectiveShapeInference, AllReduceKeepsOperandShapes) {
  EXPECT_EQ(Infer(Module("ROOT r = f32[8,4] all-reduce(x), to_apply=add"), "r"), "f32[8,4]");
  EXPECT_EQ(Infer(Module("ROOT r = (f32[8,4], s32[2]) all-reduce(x, y), to_apply=add"), "r"),
            "(f32[8,4], s32[2])");
}

TEST(CollectiveShapeInference, AllReduceOperandsMustBeArrays) {
  EXPECT_INFER_ERROR(Module(R"(t = (f32[8,4], s32[2]) tuple(x, y)
  ROOT r = (f32[8,4], s32[2]) all-reduce(t), to_apply=add)"),
                     "r", "operand 0 must be an array, got (f32[8,4], s32[2])");
}

TEST(CollectiveShapeInference, AllReduceStartAndDone) {
  const std::string text = Module(R"(s = f32[8,4] all-reduce-start(x), to_apply=add
  ROOT d = f32[8,4] all-reduce-done(s))");
  EXPECT_EQ(Infer(text, "s"), "f32[8,4]");
  EXPECT_EQ(Infer(text, "d"), "f32[8,4]");
}

TEST(CollectiveShapeInference, AllReduceStartLegacyPair) {
  const std::string text = Module(R"(s = (f32[8,4], f32[8,4]) all-reduce-start(x), to_apply=add
  ROOT d = f32[8,4] all-reduce-done(s))");
  EXPECT_EQ(Infer(text, "s"), "(f32[8,4], f32[8,4])");
  EXPECT_EQ(Infer(text, "d"), "f32[8,4]");
}

TEST(CollectiveShapeInference, AllGatherGrowsByTheGroupSize) {
  EXPECT_EQ(Infer(Module("ROOT g = f32[8,16] all-gather(x), replica_groups={{0,1,2,3}}, "
                         "dimensions={1}"),
                  "g"),
            "f32[8,16]");
  EXPECT_EQ(Infer(Module("ROOT g = f32[16,4] all-gather(x), replica_groups=[4,2]<=[8], "
                         "dimensions={0}"),
                  "g"),
            "f32[16,4]");
  EXPECT_EQ(Infer(Module("ROOT g = f32[8,16] all-gather(x), channel_id=1, "
                         "replica_groups=mesh['a'=4,'b'=2] {'a'}, dimensions={1}, "
                         "use_global_device_ids=true"),
                  "g"),
            "f32[8,16]");
}

TEST(CollectiveShapeInference, GroupSizeWinsOverTheDeclaredShape) {
  EXPECT_EQ(Infer(Module("ROOT g = f32[8,8] all-gather(x), replica_groups=[2,4]<=[8], "
                         "dimensions={1}"),
                  "g"),
            "f32[8,16]");
  EXPECT_EQ(Infer(Module("ROOT g = f32[8,8] all-gather(x), channel_id=1, "
                         "replica_groups=mesh['a'=4,'b'=2] {'a','b'}, dimensions={1}, "
                         "use_global_device_ids=true"),
                  "g"),
            "f32[8,32]");
  EXPECT_EQ(Infer(Module("ROOT r = f32[8,4] reduce-scatter(x), replica_groups={{0,1}}, "
                         "dimensions={0}, to_apply=add"),
                  "r"),
            "f32[4,4]");
}

TEST(CollectiveShapeInference, EmptyGroupsDoNotDivideByZero) {
  EXPECT_EQ(Infer(Module("ROOT r = f32[8,4] reduce-scatter(x), replica_groups={{}}, "
                         "dimensions={0}, to_apply=add"),
                  "r"),
            "f32[8,4]");
  EXPECT_EQ(Infer(Module("ROOT r = f32[0,4] reduce-scatter(x), dimensions={0}, to_apply=add"), "r"),
            "f32[8,4]");
}

TEST(CollectiveShapeInference, AllGatherWithoutGroupsUsesTheReplicaCount) {
  EXPECT_EQ(
      Infer(Module("ROOT g = f32[8,12] all-gather(x), dimensions={1}", ", replica_count=3"), "g"),
      "f32[8,12]");
  // Without a replica count the declared size is trusted if it is a multiple.
  EXPECT_EQ(
      Infer(Module("ROOT g = f32[8,20] all-gather(x), replica_groups={}, dimensions={1}"), "g"),
      "f32[8,20]");
  EXPECT_EQ(
      Infer(Module("ROOT g = f32[8,6] all-gather(x), replica_groups={}, dimensions={1}"), "g"),
      "f32[8,8]");
}

TEST(CollectiveShapeInference, AllGatherVariadicAndDynamic) {
  EXPECT_EQ(Infer(Module(R"(z = f32[<=3,?] parameter(2)
  ROOT g = (f32[16,4], f32[<=6,?]) all-gather(x, z), replica_groups={{0,1}}, dimensions={0})"),
                  "g"),
            "(f32[16,4], f32[<=6,?])");
}

TEST(CollectiveShapeInference, AllGatherDimensionMustBeInRange) {
  EXPECT_INFER_ERROR(Module("ROOT g = f32[8,4] all-gather(x), replica_groups={{0,1}}, "
                            "dimensions={2}"),
                     "g", "dimension 2 is out of range for operand 0 of shape f32[8,4]");
}

TEST(CollectiveShapeInference, AllGatherGroupsMustBeUniform) {
  EXPECT_INFER_ERROR(Module("ROOT g = f32[8,8] all-gather(x), replica_groups={{0,1},{2}}, "
                            "dimensions={1}"),
                     "g", "replica groups must all have the same size; got 2 and 1");
}

TEST(CollectiveShapeInference, AllGatherStartAndDone) {
  const std::string text =
      Module(R"(s = (f32[8,4], f32[8,8]) all-gather-start(x), replica_groups={{0,1}}, dimensions={1}
  ROOT d = f32[8,8] all-gather-done(s))");
  EXPECT_EQ(Infer(text, "s"), "(f32[8,4], f32[8,8])");
  EXPECT_EQ(Infer(text, "d"), "f32[8,8]");
  const std::string variadic = Module(
      R"(s = ((f32[8,4], s32[2]), (f32[16,4], s32[4])) all-gather-start(x, y), replica_groups={{0,1}}, dimensions={0}
  ROOT d = (f32[16,4], s32[4]) all-gather-done(s))");
  EXPECT_EQ(Infer(variadic, "s"), "((f32[8,4], s32[2]), (f32[16,4], s32[4]))");
  EXPECT_EQ(Infer(variadic, "d"), "(f32[16,4], s32[4])");
}

TEST(CollectiveShapeInference, ReduceScatterShrinksByTheGroupSize) {
  EXPECT_EQ(Infer(Module("ROOT r = f32[2,4] reduce-scatter(x), replica_groups={{0,1,2,3}}, "
                         "dimensions={0}, to_apply=add"),
                  "r"),
            "f32[2,4]");
}

TEST(CollectiveShapeInference, ReduceScatterNeedsADivisibleDimension) {
  EXPECT_INFER_ERROR(Module("ROOT r = f32[8,1] reduce-scatter(x), replica_groups={{0,1,2}}, "
                            "dimensions={1}, to_apply=add"),
                     "r",
                     "scatter dimension 1 has size 4, which is not divisible by the shard "
                     "count 3");
}

TEST(CollectiveShapeInference, AllToAllKeepsShapes) {
  EXPECT_EQ(Infer(Module("ROOT a = f32[8,4] all-to-all(x), replica_groups={{0,1,2,3}}, "
                         "dimensions={0}"),
                  "a"),
            "f32[8,4]");
  EXPECT_EQ(
      Infer(Module("ROOT a = (f32[8,4], s32[2]) all-to-all(x, y), replica_groups={{0,1}}"), "a"),
      "(f32[8,4], s32[2])");
}

TEST(CollectiveShapeInference, AllToAllSplitDimensionMustDivide) {
  EXPECT_INFER_ERROR(Module("ROOT a = f32[8,4] all-to-all(x), channel_id=1, "
                            "replica_groups=[1,8]<=[8], dimensions={1}"),
                     "a",
                     "split dimension 1 of operand 0 has size 4, which is not divisible by "
                     "the split count 8");
}

constexpr char kRagged[] = R"(HloModule m
ENTRY e {
  input = bf16[32,8] parameter(0)
  output = bf16[64,8] parameter(1)
  io = s32[4] parameter(2)
  ss = s32[4] parameter(3)
  oo = s32[4] parameter(4)
  rs = OFFSET_TYPE parameter(5)
  ROOT r = bf16[64,8] ragged-all-to-all(input, output, io, ss, oo, rs), replica_groups={{0,1,2,3}}
})";

std::string Ragged(const std::string& recv_sizes_type) {
  std::string text = kRagged;
  text.replace(text.find("OFFSET_TYPE"), 11, recv_sizes_type);
  return text;
}

TEST(CollectiveShapeInference, RaggedAllToAllReturnsTheOutputBuffer) {
  EXPECT_EQ(Infer(Ragged("s32[4]"), "r"), "bf16[64,8]");
}

TEST(CollectiveShapeInference, RaggedAllToAllOffsetsAreIntegers) {
  EXPECT_INFER_ERROR(Ragged("f32[4]"), "r", "offsets and sizes must be s32 or s64; operand 5");
  EXPECT_INFER_ERROR(Ragged("s32[5]"), "r", "offsets and sizes must have one shape; operand 5");
}

TEST(CollectiveShapeInference, CollectivePermute) {
  EXPECT_EQ(Infer(Module("ROOT p = f32[8,4] collective-permute(x), "
                         "source_target_pairs={{0,1},{1,0}}"),
                  "p"),
            "f32[8,4]");
  EXPECT_EQ(Infer(Module("ROOT p = (f32[8,4], s32[2]) collective-permute(x, y), "
                         "source_target_pairs={{0,1}}"),
                  "p"),
            "(f32[8,4], s32[2])");
}

TEST(CollectiveShapeInference, CollectivePermuteInPlace) {
  const std::string text = Module(R"(out = f32[16,4] parameter(2)
  c = s32[] constant(0)
  i = (s32[], s32[]) tuple(c, c)
  ROOT p = f32[16,4] collective-permute(x, out, i, i), source_target_pairs={{0,1}}, slice_sizes={{8,4}})");
  EXPECT_EQ(Infer(text, "p"), "f32[16,4]");
}

TEST(CollectiveShapeInference, CollectivePermuteInPlaceNeedsFourOperands) {
  EXPECT_INFER_ERROR(Module("ROOT p = f32[8,4] collective-permute(x, x), "
                            "source_target_pairs={{0,1}}, slice_sizes={{8,4}}"),
                     "p", "the in-place form (with slice_sizes) expects 4 operands");
}

TEST(CollectiveShapeInference, CollectivePermuteStartAndDone) {
  const std::string text = Module(
      R"(s = (f32[8,4], f32[8,4], u32[], u32[]) collective-permute-start(x), source_target_pairs={{0,1}}
  ROOT d = f32[8,4] collective-permute-done(s))");
  EXPECT_EQ(Infer(text, "s"), "(f32[8,4], f32[8,4], u32[], u32[])");
  EXPECT_EQ(Infer(text, "d"), "f32[8,4]");
  const std::string combined = Module(
      R"(s = ((f32[8,4], s32[2]), (f32[8,4], s32[2])) collective-permute-start(x, y), source_target_pairs={{0,1}}
  ROOT d = (f32[8,4], s32[2]) collective-permute-done(s))");
  EXPECT_EQ(Infer(combined, "s"), "((f32[8,4], s32[2]), (f32[8,4], s32[2]))");
  EXPECT_EQ(Infer(combined, "d"), "(f32[8,4], s32[2])");
}

TEST(CollectiveShapeInference, CollectivePermuteDoneNeedsAContext) {
  EXPECT_INFER_ERROR(Module(R"(t = token[] after-all()
  ROOT d = f32[8,4] collective-permute-done(t))"),
                     "d", "operand must be a (operand, result, ...) context, got token[]");
}

TEST(CollectiveShapeInference, CollectiveBroadcast) {
  EXPECT_EQ(Infer(Module("ROOT b = f32[8,4] collective-broadcast(x), replica_groups={{0,1}}"), "b"),
            "f32[8,4]");
  // With a dynamic root the last operand names the root; it is not data.
  EXPECT_EQ(Infer(Module("ROOT b = f32[8,4] collective-broadcast(x, y), "
                         "replica_groups={{0,1}}, has_dynamic_root=true"),
                  "b"),
            "f32[8,4]");
  EXPECT_INFER_ERROR(Module(R"(t = token[] after-all()
  ROOT b = token[] collective-broadcast(t), replica_groups={{0,1}})"),
                     "b", "operand 0 must be an array, got token[]");
}

TEST(CollectiveShapeInference, ReplicaAndPartitionIds) {
  EXPECT_EQ(Infer(Module("ROOT r = u32[] replica-id()"), "r"), "u32[]");
  EXPECT_EQ(Infer(Module("ROOT p = u32[] partition-id()"), "p"), "u32[]");
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
