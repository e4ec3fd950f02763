#include "xlite/stablehlo/lower.h"

#include <string>

#include "gtest/gtest.h"
#include "xlite/eval/evaluator.h"
#include "xlite/stablehlo/check_ops.h"
#include "xlite/stablehlo/import.h"

namespace xlite::stablehlo {
namespace {

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

}  // namespace
}  // namespace xlite::stablehlo
