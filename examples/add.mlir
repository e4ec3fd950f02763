// A tiny StableHLO program: xlite run checks it, xlite opt lowers it to HLO,
// xlite translate prints it in canonical generic MLIR form.
func.func @main() -> tensor<2xf32> {
  %x = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y = stablehlo.constant dense<[0.5, -4.0]> : tensor<2xf32>
  %sum = stablehlo.add %x, %y : tensor<2xf32>
  check.expect_eq_const %sum, dense<[1.5, -2.0]> : tensor<2xf32>
  return %sum : tensor<2xf32>
}
