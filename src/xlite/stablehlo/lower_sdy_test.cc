// Shardy programs as JAX writes them: lowered to XLA's round-trip forms with
// named shardings, and run as one logical device (manual computations once
// per device of their mesh). Expected values are worked out by hand.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "xlite/eval/evaluator.h"
#include "xlite/stablehlo/import.h"
#include "xlite/stablehlo/mlir_parser.h"
#include "xlite/stablehlo/printer.h"

namespace xlite::stablehlo {
namespace {
namespace XLITE_UNITY_ID {

// Every program here also prints canonically and reads back to the same text.
void ExpectPrintsAndReadsBack(const std::string& text) {
  absl::StatusOr<mlir::OwningOp> parsed = mlir::ParseMlir(text, "t.mlir");
  if (!parsed.ok()) return;  // the import reports it
  const std::string once = mlir::PrintMlir(**parsed);
  absl::StatusOr<mlir::OwningOp> again = mlir::ParseMlir(once, "once.mlir");
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << once;
  EXPECT_EQ(mlir::PrintMlir(**again), once);
}

absl::StatusOr<std::unique_ptr<HloModule>> Import(const std::string& text) {
  ExpectPrintsAndReadsBack(text);
  std::vector<ImportedProgram> programs = ImportStablehlo(text, "t.mlir", /*split=*/false);
  return std::move(programs[0].module);
}

// f32 literal of `dims` holding 0, 1, 2, ...
Literal Iota(std::vector<int64_t> dims) {
  Literal l(Shape::Array(PrimitiveType::F32, std::move(dims)));
  for (int64_t i = 0; i < l.element_count(); ++i) l.SetDouble(i, static_cast<double>(i));
  return l;
}

std::vector<double> Values(const Literal& l) {
  std::vector<double> out;
  for (int64_t i = 0; i < l.element_count(); ++i) out.push_back(l.GetDouble(i));
  return out;
}

absl::StatusOr<Literal> RunModule(const HloModule& module, std::vector<Literal> args) {
  return Evaluate(module, args);
}

const HloInstruction* FindCustomCall(const HloComputation& comp, absl::string_view target) {
  for (const auto& instr : comp.instructions()) {
    if (instr->opcode() == HloOpcode::kCustomCall && instr->attrs().custom_call_target == target) {
      return instr.get();
    }
  }
  return nullptr;
}

const HloInstruction* FindOpcode(const HloComputation& comp, HloOpcode opcode) {
  for (const auto& instr : comp.instructions()) {
    if (instr->opcode() == opcode) return instr.get();
  }
  return nullptr;
}

constexpr char kPsum[] = R"(
module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
      -> (tensor<2x4xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{}, {}]>] manual_axes={"x"} (%arg1: tensor<2x4xf32>) {
      %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %2 = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %2 : tensor<f32>
      }) : (tensor<2x4xf32>) -> tensor<2x4xf32>
      sdy.return %1 : tensor<2x4xf32>
    } : (tensor<8x4xf32>) -> tensor<2x4xf32>
    return %0 : tensor<2x4xf32>
  }
})";

TEST(LowerSdy, ShardMapPsumRunsPerDevice) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = Import(kPsum);
  ASSERT_TRUE(m.ok()) << m.status();
  // x = iota(8x4); shard d holds rows 2d, 2d+1; psum adds the four shards.
  absl::StatusOr<Literal> out = RunModule(**m, {Iota({8, 4})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values(*out), (std::vector<double>{48, 52, 56, 60, 64, 68, 72, 76}));
}

TEST(LowerSdy, ManualComputationLowersToTheRoundTripForm) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = Import(kPsum);
  ASSERT_TRUE(m.ok()) << m.status();
  const HloModule& module = **m;
  EXPECT_EQ(module.config().frontend_attributes.at("xla.sdy.meshes"),
            "{mesh = #sdy.mesh<[\"x\"=4]>}");
  const HloComputation& entry = *module.entry_computation();
  // The argument's sharding: {mesh['x'=4], [{'x'}, {}]}.
  const HloInstruction* param = entry.parameter_instruction(0);
  ASSERT_TRUE(param->attrs().sharding.has_value());
  const HloSharding& ps = *param->attrs().sharding;
  ASSERT_EQ(ps.kind, HloSharding::Kind::kNamed);
  EXPECT_EQ(ps.named->mesh.axis_names, std::vector<std::string>{"x"});
  ASSERT_EQ(ps.named->dims.size(), 2u);
  EXPECT_EQ(ps.named->dims[0].axes, (std::vector<MeshAxisRef>{{0, 1, 0}}));
  EXPECT_EQ(param->attrs().frontend_attributes.at("xla.sdy.sharding"),
            "#sdy.sharding<@mesh, [{\"x\"}, {}]>");

  const HloInstruction* g2l = FindCustomCall(entry, "xla.sdy.GlobalToLocalShape");
  ASSERT_NE(g2l, nullptr);
  EXPECT_EQ(g2l->shape().dimensions(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(g2l->attrs().frontend_attributes.at("xla.sdy.in_shardings"),
            "#sdy.sharding_per_value<[<@mesh, [{\"x\"}, {}]>]>");
  EXPECT_EQ(g2l->attrs().frontend_attributes.at("xla.sdy.manual_axes"), "#sdy<manual_axes{\"x\"}>");
  // Local to the manual axis: no dimension axes, manual={'x'}.
  ASSERT_TRUE(g2l->attrs().sharding.has_value());
  EXPECT_TRUE(g2l->attrs().sharding->named->dims.empty());
  EXPECT_EQ(g2l->attrs().sharding->named->manual_axes, (std::vector<MeshAxisRef>{{0, 1, 0}}));

  const HloInstruction* call = FindOpcode(entry, HloOpcode::kCall);
  ASSERT_NE(call, nullptr);
  EXPECT_TRUE(
      absl::StartsWith(call->called_computations()[0]->name(), "xla.sdy.manual_computation_body"));
  EXPECT_EQ(call->operand(0), g2l);
  EXPECT_EQ(call->attrs().frontend_attributes.at("xla.sdy.out_shardings"),
            "#sdy.sharding_per_value<[<@mesh, [{}, {}]>]>");
  const HloInstruction* l2g = FindCustomCall(entry, "xla.sdy.LocalToGlobalShape");
  ASSERT_NE(l2g, nullptr);
  EXPECT_EQ(l2g->operand(0), call);
  const HloInstruction* result = FindCustomCall(entry, "xla.sdy.FuncResultSharding");
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(entry.root_instruction(), result);
  EXPECT_EQ(result->attrs().frontend_attributes.at("xla.sdy.sharding"),
            "#sdy.sharding_per_value<[<@mesh, [{}, {}]>]>");
  EXPECT_TRUE(result->attrs().custom_call_has_side_effect);
}

TEST(LowerSdy, AllGatherAndPsumOnATwoByTwoMesh) {
  // Mesh data x model; devices 2*data + model. all_gather over 'model' then
  // psum over 'data': rows 0-1 plus rows 2-3 of the whole matrix.
  absl::StatusOr<std::unique_ptr<HloModule>> m = Import(R"(
module @jit_g attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=2]>
  func.func public @main(%arg0: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) -> tensor<2x4xf32> {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"data", ?}, {?}]> : tensor<4x4xf32>
    %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{"data"}, {"model"}]>] out_shardings=[<@mesh, [{}, {}]>] manual_axes={"data", "model"} (%arg1: tensor<2x2xf32>) {
      %2 = "stablehlo.all_gather"(%arg1) <{all_gather_dim = 1 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>, use_global_device_ids}> : (tensor<2x2xf32>) -> tensor<2x4xf32>
      %3 = "stablehlo.all_reduce"(%2) <{channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>, use_global_device_ids}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
      }) : (tensor<2x4xf32>) -> tensor<2x4xf32>
      sdy.return %3 : tensor<2x4xf32>
    } : (tensor<4x4xf32>) -> tensor<2x4xf32>
    return %1 : tensor<2x4xf32>
  }
})");
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Literal> out = RunModule(**m, {Iota({4, 4})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values(*out), (std::vector<double>{8, 10, 12, 14, 16, 18, 20, 22}));
  // The constraint is a "Sharding" custom call with the sharding (open dims kept).
  const HloInstruction* constraint = FindCustomCall(*(*m)->entry_computation(), "Sharding");
  ASSERT_NE(constraint, nullptr);
  ASSERT_TRUE(constraint->attrs().sharding.has_value());
  const NamedSharding& n = *constraint->attrs().sharding->named;
  ASSERT_EQ(n.dims.size(), 2u);
  EXPECT_FALSE(n.dims[0].is_closed);
  EXPECT_FALSE(n.dims[1].is_closed);
}

TEST(LowerSdy, PartiallyManualBodiesSeeFreeAxesWhole) {
  // Manual over 'x' only: each body instance gets 2 of the 4 rows and every
  // column ('y' is free), sums over 'x', and the result is sharded over the
  // free axis only: rows 0-1 + rows 2-3.
  absl::StatusOr<std::unique_ptr<HloModule>> m = Import(R"(
module @jit_p attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%arg0: tensor<4x4xf32>) -> tensor<2x4xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{}, {"y"}]>] manual_axes={"x"} (%arg1: tensor<2x4xf32>) {
      %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>, use_global_device_ids}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
      }) : (tensor<2x4xf32>) -> tensor<2x4xf32>
      sdy.return %1 : tensor<2x4xf32>
    } : (tensor<4x4xf32>) -> tensor<2x4xf32>
    return %0 : tensor<2x4xf32>
  }
})");
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Literal> out = RunModule(**m, {Iota({4, 4})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values(*out), (std::vector<double>{8, 10, 12, 14, 16, 18, 20, 22}));
}

TEST(LowerSdy, BodiesSeeTheMeshDeviceIdsAsPartitionIds) {
  // device_ids=[3, 2, 1, 0]: the device at mesh position p is partition 3-p,
  // and the result, sharded over 'a', lists each position's partition id.
  absl::StatusOr<std::unique_ptr<HloModule>> m = Import(R"(
module @jit_ids attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["a"=4], device_ids=[3, 2, 1, 0]>
  func.func public @main() -> tensor<4xui32> {
    %0 = sdy.manual_computation() in_shardings=[] out_shardings=[<@mesh, [{"a"}]>] manual_axes={"a"} () {
      %1 = stablehlo.partition_id : tensor<ui32>
      %2 = stablehlo.reshape %1 : (tensor<ui32>) -> tensor<1xui32>
      sdy.return %2 : tensor<1xui32>
    } : () -> tensor<4xui32>
    return %0 : tensor<4xui32>
  }
})");
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Literal> out = RunModule(**m, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values(*out), (std::vector<double>{3, 2, 1, 0}));
}

TEST(LowerSdy, ReshardingOpsKeepTheGlobalValues) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = Import(R"(
module attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func @main(%arg0: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}) {
    %0 = sdy.all_gather [{}, {"y"}] %arg0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<4x4xf32>
    %1 = sdy.all_slice [{}, {"y"}] %0 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<4x4xf32>
    %2 = sdy.all_to_all [{"y"}: 1->0] %1 out_sharding=<@mesh, [{"x", "y"}, {}]> : tensor<4x4xf32>
    %3 = sdy.collective_permute %2 out_sharding=<@mesh, [{"y", "x"}, {}]> : tensor<4x4xf32>
    %4 = sdy.all_reduce {} %3 out_sharding=<@mesh, [{"y", "x"}, {}]> : tensor<4x4xf32>
    %5 = sdy.reduce_scatter [{}, {}] %4 out_sharding=<@mesh, [{"y", "x"}, {}]> : tensor<4x4xf32>
    %6 = sdy.reshard %5 <@mesh, [{"x", "y"}, {}]> : tensor<4x4xf32>
    %7 = sdy.propagation_barrier %6 allowed_direction=FORWARD : tensor<4x4xf32>
    sdy.sharding_group %7 group_id=3 : tensor<4x4xf32>
    %8 = stablehlo.add %7, %7 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<4x4xf32>
    %9 = sdy.data_flow_edge %8 : tensor<4x4xf32>
    %10 = sdy.constant dense<1.0> : tensor<4x4xf32>
    %11 = stablehlo.add %9, %10 : tensor<4x4xf32>
    return %11 : tensor<4x4xf32>
  }
})");
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Literal> out = RunModule(**m, {Iota({4, 4})});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<double> expected;
  for (int i = 0; i < 16; ++i) expected.push_back(2.0 * i + 1);
  EXPECT_EQ(Values(*out), expected);
  const HloComputation& entry = *(*m)->entry_computation();
  int copies = 0;
  for (const auto& instr : entry.instructions()) {
    if (instr->opcode() == HloOpcode::kCopy) {
      ++copies;
      EXPECT_TRUE(instr->attrs().sharding.has_value()) << instr->name();
    }
    if (instr->opcode() == HloOpcode::kAdd && instr->attrs().sharding) {
      EXPECT_EQ(instr->attrs().frontend_attributes.at("xla.sdy.sharding"),
                "#sdy.sharding_per_value<[<@mesh, [{\"x\"}, {}]>]>");
    }
  }
  EXPECT_EQ(copies, 5);  // all_gather, all_slice, all_to_all, collective_permute, reduce_scatter
  const HloInstruction* group = FindCustomCall(entry, "xla.sdy.ShardingGroup");
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->attrs().frontend_attributes.at("xla.sdy.sharding_group_id"), "3");
  const HloInstruction* barrier = FindCustomCall(entry, "xla.sdy.PropagationBarrier");
  ASSERT_NE(barrier, nullptr);
  EXPECT_EQ(barrier->attrs().frontend_attributes.at("xla.sdy.allowed_direction"), "FORWARD");
}

TEST(LowerSdy, NamedComputationIsACallOfItsBody) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = Import(R"(
module attributes {mhlo.num_partitions = 2 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = sdy.named_computation<"double">(%arg0) out_shardings=[<@mesh, [{"x"}]>] (%arg1: tensor<2xf32>) {
      %1 = stablehlo.add %arg1, %arg1 : tensor<2xf32>
      sdy.return %1 : tensor<2xf32>
    } : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
})");
  ASSERT_TRUE(m.ok()) << m.status();
  const HloInstruction* call = FindOpcode(*(*m)->entry_computation(), HloOpcode::kCall);
  ASSERT_NE(call, nullptr);
  EXPECT_TRUE(absl::StartsWith(call->called_computations()[0]->name(), "double"));
  absl::StatusOr<Literal> out = RunModule(**m, {Iota({2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values(*out), (std::vector<double>{0, 2}));

  // Bad shardings are errors at the op, found before the call is made.
  for (const char* shardings :
       {R"(out_shardings=[<@mesh, [{"y"}]>])", R"({in_shardings = "not an sdy attribute"})"}) {
    const bool generic = shardings[0] == '{';
    absl::StatusOr<std::unique_ptr<HloModule>> bad =
        Import(absl::StrCat(R"(
module attributes {mhlo.num_partitions = 2 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = sdy.named_computation<"double">(%arg0) )",
                            generic ? "" : shardings,
                            R"( (%arg1: tensor<2xf32>) {
      sdy.return %arg1 : tensor<2xf32>
    } )",
                            generic ? shardings : "",
                            R"( : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
})"));
    ASSERT_FALSE(bad.ok()) << shardings;
    EXPECT_TRUE(absl::StrContains(bad.status().message(), "t.mlir:5:5: 'sdy.named_computation'"))
        << bad.status();
  }
}

TEST(LowerSdy, RoundTripFormRunsLikeTheSdyForm) {
  // What an HLO round trip (and older jax.export artifacts) carry: the
  // boundary custom calls, a body function and the meshes in a string.
  absl::StatusOr<std::unique_ptr<HloModule>> m = Import(R"(
module @jit_func attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = #sdy.mesh<[\22a\22=2]>}"}, mhlo.num_partitions = 2 : i32} {
  func.func public @main(%arg0: tensor<2x4xf32>) -> tensor<2x4xf32> {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\22a\22}, {}]>]>"}} : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %1 = stablehlo.custom_call @xla.sdy.GlobalToLocalShape(%0) {has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.in_shardings = "#sdy.sharding_per_value<[<@mesh, [{\22a\22}, {}]>]>", xla.sdy.manual_axes = "#sdy<manual_axes{\22a\22}>"}} : (tensor<2x4xf32>) -> tensor<1x4xf32>
    %2 = call @xla.sdy.manual_computation_body(%1) {mhlo.frontend_attributes = {xla.sdy.in_shardings = "#sdy.sharding_per_value<[<@mesh, [{\22a\22}, {}]>]>", xla.sdy.manual_axes = "#sdy<manual_axes{\22a\22}>", xla.sdy.out_shardings = "#sdy.sharding_per_value<[<@mesh, [{\22a\22}, {}]>]>"}} : (tensor<1x4xf32>) -> tensor<1x4xf32>
    %3 = stablehlo.custom_call @xla.sdy.LocalToGlobalShape(%2) {has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.manual_axes = "#sdy<manual_axes{\22a\22}>", xla.sdy.out_shardings = "#sdy.sharding_per_value<[<@mesh, [{\22a\22}, {}]>]>"}} : (tensor<1x4xf32>) -> tensor<2x4xf32>
    return %3 : tensor<2x4xf32>
  }
  func.func @xla.sdy.manual_computation_body(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
    %0 = "stablehlo.collective_permute"(%arg0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}> : (tensor<1x4xf32>) -> tensor<1x4xf32>
    return %0 : tensor<1x4xf32>
  }
})");
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Literal> out = RunModule(**m, {Iota({2, 4})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values(*out), (std::vector<double>{4, 5, 6, 7, 0, 1, 2, 3}));
  // The Sharding custom call's frontend attribute became its sharding.
  const HloInstruction* sharding = FindCustomCall(*(*m)->entry_computation(), "Sharding");
  ASSERT_NE(sharding, nullptr);
  ASSERT_TRUE(sharding->attrs().sharding.has_value());
  EXPECT_EQ(sharding->attrs().sharding->kind, HloSharding::Kind::kNamed);
}

// The number of devices of a mesh written as <["x"=2, "y"=3]>.
int64_t DevicesOf(absl::string_view mesh) {
  int64_t devices = 1;
  for (absl::string_view part : absl::StrSplit(mesh, '=')) {
    int64_t size = 0;
    if (absl::SimpleAtoi(part.substr(0, part.find_first_not_of("0123456789")), &size))
      devices *= size;
  }
  return devices;
}

TEST(LowerSdy, BadManualComputationsAreErrors) {
  auto error = [](const std::string& mesh, const std::string& in, const std::string& manual,
                  const std::string& local) {
    absl::StatusOr<std::unique_ptr<HloModule>> m =
        Import(absl::StrCat(R"(
module attributes {mhlo.num_partitions = )",
                            DevicesOf(mesh), R"( : i32} {
  sdy.mesh @mesh = )",
                            mesh, R"(
  func.func @main(%arg0: tensor<8x4xf32>) -> tensor<8x4xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[)",
                            in, R"(] out_shardings=[<@mesh, [{}, {}]>] manual_axes=)", manual,
                            R"( (%arg1: )", local, R"() {
      sdy.return %arg1 : )",
                            local, R"(
    } : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }
})"));
    return m.ok() ? std::string("ok") : std::string(m.status().message());
  };
  EXPECT_EQ(error("<[\"x\"=2]>", "<@mesh, [{}, {}]>", "{\"x\"}", "tensor<8x4xf32>"), "ok");
  EXPECT_TRUE(absl::StrContains(
      error("<[\"x\"=2]>", "<@mesh, [{\"x\"}, {}]>", "{\"x\"}", "tensor<8x4xf32>"),
      "operand 0 has type f32[8,4] in the body; its sharding makes it f32[4,4]"));
  EXPECT_TRUE(absl::StrContains(
      error("<[\"x\"=3]>", "<@mesh, [{\"x\"}, {}]>", "{\"x\"}", "tensor<8x4xf32>"),
      "does not split into 3 shards"));
  EXPECT_TRUE(absl::StrContains(
      error("<[\"x\"=2]>", "<@other, [{}, {}]>", "{\"x\"}", "tensor<8x4xf32>"), "no mesh @other"));
  EXPECT_TRUE(
      absl::StrContains(error("<[\"x\"=2]>", "<@mesh, [{}, {}]>", "{\"z\"}", "tensor<8x4xf32>"),
                        "manual axis \"z\" is not in the mesh"));
  EXPECT_TRUE(absl::StrContains(
      error("<[\"x\"=2, \"y\"=2]>", "<@mesh, [{\"y\", \"x\"}, {}]>", "{\"x\"}", "tensor<4x4xf32>"),
      "must be a whole axis before the free axes"));
  // An axis repeated is refused before the shard count is taken (2^80 here,
  // which once wrapped to 0 and divided by it).
  EXPECT_TRUE(
      absl::StrContains(error("<[\"x\"=1048576]>", "<@mesh, [{\"x\", \"x\", \"x\", \"x\"}, {}]>",
                              "{\"x\"}", "tensor<8x4xf32>"),
                        "axis 'x' overlaps 'x'; each part of a mesh axis may be used once "
                        "in #sdy.sharding<@mesh, [{\"x\", \"x\", \"x\", \"x\"}, {}]>"));
}

TEST(LowerSdy, NestedManualComputationsMeetAcrossTheOuterDevices) {
  // Outer: manual over 'a' (rows); inner: manual over 'b' (columns), whose
  // body sums over 'a' -- across the devices of the outer computation.
  // Result: rows 0-1 plus rows 2-3 of iota(4x8), i.e. 16i + 2j + 16.
  absl::StatusOr<std::unique_ptr<HloModule>> m = Import(R"(
module attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @main(%arg0: tensor<4x8xf32>) -> tensor<2x8xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a"}, {}]>] out_shardings=[<@mesh, [{}, {}]>] manual_axes={"a"} (%arg1: tensor<2x8xf32>) {
      %1 = sdy.manual_computation(%arg1) in_shardings=[<@mesh, [{}, {"b"}]>] out_shardings=[<@mesh, [{}, {"b"}]>] manual_axes={"b"} (%arg2: tensor<2x4xf32>) {
        %2 = "stablehlo.all_reduce"(%arg2) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>, use_global_device_ids}> ({
        ^bb0(%x: tensor<f32>, %y: tensor<f32>):
          %s = stablehlo.add %x, %y : tensor<f32>
          stablehlo.return %s : tensor<f32>
        }) : (tensor<2x4xf32>) -> tensor<2x4xf32>
        sdy.return %2 : tensor<2x4xf32>
      } : (tensor<2x8xf32>) -> tensor<2x8xf32>
      sdy.return %1 : tensor<2x8xf32>
    } : (tensor<4x8xf32>) -> tensor<2x8xf32>
    return %0 : tensor<2x8xf32>
  }
})");
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Literal> out = RunModule(**m, {Iota({4, 8})});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<double> expected;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 8; ++j) expected.push_back(16 * i + 2 * j + 16);
  }
  EXPECT_EQ(Values(*out), expected);
}

TEST(LowerSdy, SdySyntaxPrintsCanonicallyAndReadsBack) {
  absl::StatusOr<mlir::OwningOp> parsed = mlir::ParseMlir(kPsum, "t.mlir");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const std::string once = mlir::PrintMlir(**parsed);
  EXPECT_TRUE(absl::StrContains(
      once, "\"sdy.mesh\"() {mesh = #sdy.mesh<[\"x\"=4]>, sym_name = \"mesh\"} : () -> ()"));
  EXPECT_TRUE(absl::StrContains(once, "manual_axes = #sdy<manual_axes{\"x\"}>"));
  EXPECT_TRUE(absl::StrContains(once, "\"sdy.return\"(%1)"));
  absl::StatusOr<mlir::OwningOp> again = mlir::ParseMlir(once, "once.mlir");
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << once;
  EXPECT_EQ(mlir::PrintMlir(**again), once);
}

TEST(LowerSdy, SdySyntaxErrorsNameThePlace) {
  auto error = [](const std::string& text) {
    absl::StatusOr<mlir::OwningOp> parsed = mlir::ParseMlir(text, "t.mlir");
    return parsed.ok() ? std::string("ok") : std::string(parsed.status().message());
  };
  EXPECT_TRUE(absl::StrContains(error(R"(func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = sdy.sharding_constraint %a <@mesh, [{"x"]> : tensor<2xf32>
  return %0 : tensor<2xf32>
})"),
                                "t.mlir:2:"));
  EXPECT_TRUE(absl::StrContains(error(R"(func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = sdy.frobnicate %a : tensor<2xf32>
  return %0 : tensor<2xf32>
})"),
                                "unknown operation 'sdy.frobnicate'"));
  EXPECT_TRUE(absl::StrContains(error(R"(func.func @main(%a: tensor<2xf32>) {
  %0 = sdy.manual_computation(%a) in_shardings=[<@m, [{}]>] manual_axes={} (%b: tensor<2xf32>) {
    sdy.return %b : tensor<2xf32>
  } : (tensor<2xf32>) -> tensor<2xf32>
  return
})"),
                                "expected 'out_shardings'"));
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::stablehlo
