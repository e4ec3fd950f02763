#include "xlite/stablehlo/lower.h"

#include <string>

#include "gtest/gtest.h"
#include "xlite/eval/evaluator.h"
#include "xlite/stablehlo/check_ops.h"
#include "xlite/stablehlo/import.h"

namespace xlite::stablehlo {
namespace {
namespace XLITE_UNITY_ID {

// Imports one program and runs it; returns the run's status.
absl::Status RunProgram(const std::string& text, Literal* result = nullptr) {
  std::vector<ImportedProgram> programs = ImportStablehlo(text, "t.mlir", /*split=*/false);
  if (!programs[0].module.ok()) return programs[0].module.status();
  absl::StatusOr<Literal> out = Evaluate(**programs[0].module, {});
  if (!out.ok()) return out.status();
  if (result) *result = *std::move(out);
  return absl::OkStatus();
}

TEST(Lower, ChecksPassAndFailWithTheirLocation) {
  EXPECT_TRUE(RunProgram(R"(func.func @main() {
    %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
    %1 = stablehlo.add %0, %0 : tensor<2xi32>
    check.expect_eq_const %1, dense<[2, 4]> : tensor<2xi32>
    func.return
  })")
                  .ok());
  absl::Status failed = RunProgram(R"(func.func @main() {
    %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
    check.expect_eq_const %0, dense<[1, 3]> : tensor<2xi32>
    func.return
  })");
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("t.mlir:3:5: check.expect_eq failed: 1 of 2 elements differ"),
            std::string::npos)
      << failed;
  EXPECT_NE(failed.message().find("at [1]: actual 2, expected 3"), std::string::npos) << failed;
}

TEST(Lower, ExpectCloseCountsUlps) {
  // 1.0 and the next float up are 1 ULP apart: within the default 3.
  EXPECT_TRUE(RunProgram(R"(func.func @main() {
    %0 = stablehlo.constant dense<1.0> : tensor<f32>
    %1 = stablehlo.constant dense<0x3F800001> : tensor<f32>
    stablehlo.custom_call @check.expect_close(%0, %1) {has_side_effect = true} : (tensor<f32>, tensor<f32>) -> ()
    func.return
  })")
                  .ok());
  EXPECT_FALSE(RunProgram(R"(func.func @main() {
    %0 = stablehlo.constant dense<1.0> : tensor<f32>
    %1 = stablehlo.constant dense<0x3F800004> : tensor<f32>
    check.expect_close %0, %1, max_ulp_difference = 3 : tensor<f32>, tensor<f32>
    func.return
  })")
                   .ok());
  EXPECT_EQ(UlpDistance(PrimitiveType::F32, 0x80000001, 0x00000001), 2u);  // across zero
  EXPECT_EQ(UlpDistance(PrimitiveType::F16, 0x7E00, 0x7E01), 0u);          // NaN vs NaN
}

TEST(Lower, BroadcastInDimExpandsSizeOneDimensions) {
  Literal out;
  ASSERT_TRUE(RunProgram(R"(func.func @main() -> tensor<2x3xi32> {
    %0 = stablehlo.constant dense<[[5], [6]]> : tensor<2x1xi32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<2x1xi32>) -> tensor<2x3xi32>
    return %1 : tensor<2x3xi32>
  })",
                         &out)
                  .ok());
  EXPECT_EQ(out.GetInt(2), 5);
  EXPECT_EQ(out.GetInt(3), 6);
}

TEST(Lower, RegionsCaptureOuterValues) {
  // The while body and the if branches read %step and %big from outside.
  EXPECT_TRUE(RunProgram(R"(func.func @main() {
    %step = stablehlo.constant dense<3> : tensor<i32>
    %big = stablehlo.constant dense<10> : tensor<i32>
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.while(%i = %zero) : tensor<i32>
     cond {
      %c = stablehlo.compare LT, %i, %big, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %n = stablehlo.add %i, %step : tensor<i32>
      stablehlo.return %n : tensor<i32>
    }
    check.expect_eq_const %0, dense<12> : tensor<i32>
    %p = stablehlo.compare GT, %0, %big, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %r = "stablehlo.if"(%p) ({
      stablehlo.return %step : tensor<i32>
    }, {
      stablehlo.return %big : tensor<i32>
    }) : (tensor<i1>) -> tensor<i32>
    check.expect_eq_const %r, dense<3> : tensor<i32>
    func.return
  })")
                  .ok());
}

TEST(Lower, QuantizeDequantize) {
  // scale 0.5, zero point -1: 1.0 -> 1, 1.26 -> 2 (round(2.52) = 3, + zp = 2), 100
  // saturates at 127; dequantized: (q - zp) * scale = 1.0, 1.5, 64.0.
  EXPECT_TRUE(RunProgram(R"(func.func @main() {
    %0 = stablehlo.constant dense<[1.0, 1.26, 100.0]> : tensor<3xf32>
    %1 = stablehlo.uniform_quantize %0 : (tensor<3xf32>) -> tensor<3x!quant.uniform<i8:f32, 0.5:-1>>
    %3 = stablehlo.uniform_dequantize %1 : (tensor<3x!quant.uniform<i8:f32, 0.5:-1>>) -> tensor<3xf32>
    check.expect_almost_eq_const %3, dense<[1.0, 1.5, 64.0]> : tensor<3xf32>
    func.return
  })")
                  .ok());
  absl::Status s = RunProgram(R"(func.func @main() {
    %0 = stablehlo.constant dense<[1.0]> : tensor<1xf32>
    %1 = stablehlo.uniform_quantize %0 : (tensor<1xf32>) -> tensor<1x!quant.uniform<i8:f32, 0.5:-1>>
    %2 = stablehlo.uniform_dequantize %1 : (tensor<1x!quant.uniform<i8:f32, 0.5:-1>>) -> tensor<1xf32>
    check.expect_almost_eq_const %2, dense<[1.5]> : tensor<1xf32>
    func.return
  })");
  EXPECT_NE(s.message().find("check.expect_almost_eq failed"), std::string::npos) << s;
}

TEST(Lower, UnsupportedFeaturesSaySo) {
  absl::Status s = RunProgram(R"(func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
    %0 = stablehlo.abs %x : tensor<?xf32>
    return %0 : tensor<?xf32>
  })");
  EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
  EXPECT_NE(s.message().find("dynamic shapes are unsupported"), std::string::npos) << s;
  s = RunProgram(R"(func.func @main() {
    %0 = "foo.bar"() : () -> tensor<f32>
    func.return
  })");
  EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
  EXPECT_NE(s.message().find("t.mlir:2:5: 'foo.bar': operation 'foo.bar' is unsupported"),
            std::string::npos)
      << s;
}

TEST(Lower, TypeMismatchIsAnError) {
  absl::Status s = RunProgram(R"(func.func @main() -> tensor<3xf32> {
    %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %1 = stablehlo.abs %0 : (tensor<2xf32>) -> tensor<3xf32>
    return %1 : tensor<3xf32>
  })");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("t.mlir:3:5: 'stablehlo.abs'"), std::string::npos) << s;
}

// Lowers `text` (no run: collectives need replicas) and returns the status.
absl::Status LowerOnly(const std::string& text) {
  return ImportStablehlo(text, "t.mlir", /*split=*/false)[0].module.status();
}

TEST(Lower, PromotableReducerTypesConvertTheInputs) {
  // stablehlo_legalize_to_vhlo.mlir:1108 and :2490: reducers wider than their inputs.
  EXPECT_TRUE(LowerOnly(R"(func.func @main(%x: tensor<4xf32>) -> tensor<4xf64> {
    %0 = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<f64>, %b: tensor<f64>):
        %s = stablehlo.add %a, %b : tensor<f64>
        stablehlo.return %s : tensor<f64>
    }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<4xf32>) -> tensor<4xf64>
    return %0 : tensor<4xf64>
  })")
                  .ok());
  Literal out;
  ASSERT_TRUE(RunProgram(R"(func.func @main() -> tensor<3xf64> {
    %in = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
    %idx = stablehlo.constant dense<[[1]]> : tensor<1x1xi32>
    %upd = stablehlo.constant dense<[0.5]> : tensor<1xf32>
    %0 = "stablehlo.scatter"(%in, %idx, %upd) ({
      ^bb0(%a: tensor<f64>, %b: tensor<f64>):
        %s = stablehlo.add %a, %b : tensor<f64>
        stablehlo.return %s : tensor<f64>
    }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0],
        scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}
       : (tensor<3xf32>, tensor<1x1xi32>, tensor<1xf32>) -> tensor<3xf64>
    return %0 : tensor<3xf64>
  })",
                         &out)
                  .ok());
  EXPECT_EQ(out.GetDouble(1), 2.5);
  // select_and_scatter's result type comes from its operand in HLO: refused.
  absl::Status s = LowerOnly(
      R"(func.func @main(%x: tensor<4xf32>, %src: tensor<2xf32>, %init: tensor<f32>) -> tensor<4xf64> {
    %0 = "stablehlo.select_and_scatter"(%x, %src, %init) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %c = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
    }, {
      ^bb0(%a: tensor<f64>, %b: tensor<f64>):
        %s = stablehlo.add %a, %b : tensor<f64>
        stablehlo.return %s : tensor<f64>
    }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2>}
       : (tensor<4xf32>, tensor<2xf32>, tensor<f32>) -> tensor<4xf64>
    return %0 : tensor<4xf64>
  })");
  EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
}

TEST(Lower, UnsignedQuantStorageSpelledU8) {
  // The quant dialect (and VHLO artifacts) spell unsigned storage u8.
  Literal out;
  ASSERT_TRUE(RunProgram(R"(func.func @main() -> tensor<2xf32> {
    %0 = stablehlo.constant dense<[1.0, -2.0]> : tensor<2xf32>
    %1 = stablehlo.uniform_quantize %0 : (tensor<2xf32>) -> tensor<2x!quant.uniform<u8:f32, 0.5:128>>
    %2 = stablehlo.uniform_dequantize %1 : (tensor<2x!quant.uniform<u8:f32, 0.5:128>>) -> tensor<2xf32>
    return %2 : tensor<2xf32>
  })",
                         &out)
                  .ok());
  EXPECT_EQ(out.GetDouble(0), 1.0);
  EXPECT_EQ(out.GetDouble(1), -2.0);
}

TEST(Lower, DeprecatedOpsAndArith) {
  // create_token and cross-replica-sum (stablehlo_legalize_to_vhlo.mlir:1505, :1515).
  EXPECT_TRUE(LowerOnly(R"(func.func @main(%x: tensor<2xf32>) -> (!stablehlo.token, tensor<2xf32>) {
    %t = "stablehlo.create_token"() : () -> !stablehlo.token
    %s = "stablehlo.cross-replica-sum"(%x) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    return %t, %s : !stablehlo.token, tensor<2xf32>
  })")
                  .ok());
  Literal out;
  ASSERT_TRUE(RunProgram(R"(func.func @main() -> tensor<2xf32> {
    %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %1 = arith.addf %0, %0 : tensor<2xf32>
    %2 = arith.mulf %1, %0 : tensor<2xf32>
    return %2 : tensor<2xf32>
  })",
                         &out)
                  .ok());
  EXPECT_EQ(out.GetDouble(1), 8.0);
}

TEST(Lower, VhloGoldenFeaturesSayUnsupported) {
  absl::Status s = LowerOnly(R"(func.func @main(%x: tensor<f32>) -> tensor<f32> {
    %0 = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = [#stablehlo.axis_ref<name = "x">]>} : (tensor<f32>) -> tensor<f32>
    return %0 : tensor<f32>
  })");
  EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
  EXPECT_NE(s.message().find("t.mlir:2:5: 'stablehlo.all_reduce': replica_groups given as mesh "
                             "axes is unsupported"),
            std::string::npos)
      << s;
  s = LowerOnly(R"(func.func @main(%x: tensor<2xf32>, %r: tensor<1xi32>) -> tensor<2xf32> {
    %0 = "stablehlo.collective_broadcast"(%x, %r) {replica_groups = dense<[[0]]> : tensor<1x1xi64>, has_dynamic_root} : (tensor<2xf32>, tensor<1xi32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  })");
  EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
  s = LowerOnly(R"(func.func @main(%b: memref<2xf32>) -> memref<2xf32> {
    return %b : memref<2xf32>
  })");
  EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
  EXPECT_NE(s.message().find("t.mlir:1:1: 'func.func': argument 0: type 'memref<2xf32>' is "
                             "unsupported"),
            std::string::npos)
      << s;
  s = LowerOnly(R"(func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %0 = arith.remf %x, %x : tensor<2xf32>
    return %0 : tensor<2xf32>
  })");
  EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::stablehlo

namespace xlite::stablehlo {
namespace {
namespace XLITE_UNITY_ID {

// JAX's donations: tf.aliasing_output (donate_argnums) becomes
// input_output_alias, jax.buffer_donor a buffer donor, as XLA imports them.
TEST(Lower, DonatedArgumentsBecomeAliasesAndDonors) {
  std::vector<ImportedProgram> programs = ImportStablehlo(
      R"(func.func public @main(%arg0: tensor<4xf32> {tf.aliasing_output = 1 : i32},
                               %arg1: tensor<4xf32> {jax.buffer_donor = true},
                               %arg2: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>
    %1 = stablehlo.multiply %arg0, %arg2 : tensor<4xf32>
    func.return %0, %1 : tensor<4xf32>, tensor<4xf32>
  })",
      "t.mlir", /*split=*/false);
  ASSERT_TRUE(programs[0].module.ok()) << programs[0].module.status();
  const ModuleConfig& config = (*programs[0].module)->config();
  ASSERT_EQ(config.input_output_alias.size(), 1u);
  EXPECT_EQ(config.input_output_alias[0].output_index, std::vector<int64_t>{1});
  EXPECT_EQ(config.input_output_alias[0].parameter_number, 0);
  EXPECT_EQ(config.input_output_alias[0].kind, AliasKind::kMayAlias);
  ASSERT_EQ(config.buffer_donor.size(), 1u);
  EXPECT_EQ(config.buffer_donor[0].parameter_number, 1);

  // One result: the whole output.
  programs = ImportStablehlo(
      R"(func.func public @main(%arg0: tensor<4xf32> {tf.aliasing_output = 0 : i32}) -> tensor<4xf32> {
    %0 = stablehlo.negate %arg0 : tensor<4xf32>
    func.return %0 : tensor<4xf32>
  })",
      "t.mlir", /*split=*/false);
  ASSERT_TRUE(programs[0].module.ok()) << programs[0].module.status();
  ASSERT_EQ((*programs[0].module)->config().input_output_alias.size(), 1u);
  EXPECT_TRUE((*programs[0].module)->config().input_output_alias[0].output_index.empty());

  programs = ImportStablehlo(
      R"(func.func public @main(%arg0: tensor<4xf32> {tf.aliasing_output = 3 : i32}) -> tensor<4xf32> {
    func.return %arg0 : tensor<4xf32>
  })",
      "t.mlir", /*split=*/false);
  ASSERT_FALSE(programs[0].module.ok());
  EXPECT_NE(programs[0].module.status().message().find(
                "tf.aliasing_output must name one of the 1 results"),
            std::string::npos)
      << programs[0].module.status();
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::stablehlo
