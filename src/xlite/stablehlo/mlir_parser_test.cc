#include "xlite/stablehlo/mlir_parser.h"

#include <string>

#include "gtest/gtest.h"
#include "xlite/stablehlo/element_types.h"

namespace xlite::mlir {
namespace {
namespace XLITE_UNITY_ID {

// The first operation of the first function's body.
const Operation& FirstOp(const Operation& module, int index = 0) {
  const Operation& fn = *module.regions[0]->blocks[0]->operations[0];
  return *fn.regions[0]->blocks[0]->operations[index];
}

std::string ParseError(const std::string& text) {
  absl::StatusOr<OwningOp> m = ParseMlir(text, "t.mlir");
  EXPECT_FALSE(m.ok());
  return m.ok() ? "" : std::string(m.status().message());
}

TEST(MlirParser, PrettyAndGenericFormsGiveTheSameAttributes) {
  auto pretty = ParseMlir(R"(
    func.func @f(%x: tensor<3xf32>) -> tensor<2x3xf32> {
      %0 = stablehlo.broadcast_in_dim %x, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
      return %0 : tensor<2x3xf32>
    })",
                          "p.mlir");
  auto generic = ParseMlir(R"(
    func.func @f(%x: tensor<3xf32>) -> tensor<2x3xf32> {
      %0 = "stablehlo.broadcast_in_dim"(%x) <{broadcast_dimensions = array<i64: 1>}> : (tensor<3xf32>) -> tensor<2x3xf32>
      "func.return"(%0) : (tensor<2x3xf32>) -> ()
    })",
                           "g.mlir");
  ASSERT_TRUE(pretty.ok()) << pretty.status();
  ASSERT_TRUE(generic.ok()) << generic.status();
  const Operation& a = FirstOp(**pretty);
  const Operation& b = FirstOp(**generic);
  ASSERT_NE(a.attr("broadcast_dimensions"), nullptr);
  ASSERT_NE(b.attr("broadcast_dimensions"), nullptr);
  EXPECT_EQ(a.attr("broadcast_dimensions")->ints, std::vector<int64_t>{1});
  EXPECT_EQ(b.attr("broadcast_dimensions")->ints, std::vector<int64_t>{1});
  EXPECT_EQ(a.result_type(), b.result_type());
  EXPECT_EQ(a.result_type().dims, (std::vector<int64_t>{2, 3}));
}

TEST(MlirParser, CustomFormsNormalize) {
  auto m = ParseMlir(R"(
    func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
      %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = [DEFAULT, HIGH] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
      %1 = stablehlo.compare  LT, %0, %0,  FLOAT : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xi1>
      %2 = stablehlo.slice %a [0:2, 1:3:2] : (tensor<2x3xf32>) -> tensor<2x1xf32>
      %3 = stablehlo.reduce_precision %a, format = e5m10 : tensor<2x3xf32>
      return %0 : tensor<2x4xf32>
    })",
                     "c.mlir");
  ASSERT_TRUE(m.ok()) << m.status();
  const Operation& dot = FirstOp(**m, 0);
  const Attribute* dn = dot.attr("dot_dimension_numbers");
  ASSERT_NE(dn, nullptr);
  EXPECT_EQ(dn->kind, Attribute::Kind::kStruct);
  ASSERT_NE(dn->Field("rhs_contracting_dimensions"), nullptr);
  EXPECT_EQ(dn->Field("lhs_contracting_dimensions")->elements[0].int_value, 1);
  ASSERT_NE(dot.attr("precision_config"), nullptr);
  EXPECT_EQ(dot.attr("precision_config")->elements[1].text, "HIGH");
  const Operation& cmp = FirstOp(**m, 1);
  EXPECT_EQ(cmp.attr("comparison_direction")->text, "LT");
  EXPECT_EQ(cmp.attr("compare_type")->text, "FLOAT");
  const Operation& slice = FirstOp(**m, 2);
  EXPECT_EQ(slice.attr("strides")->ints, (std::vector<int64_t>{1, 2}));
  const Operation& rp = FirstOp(**m, 3);
  EXPECT_EQ(rp.attr("exponent_bits")->int_value, 5);
  EXPECT_EQ(rp.attr("mantissa_bits")->int_value, 10);
}

TEST(MlirParser, DenseForms) {
  auto m = ParseMlir(R"(
    func.func @f() -> tensor<2xf32> {
      %0 = stablehlo.constant dense<"0x0000803F00000040"> : tensor<2xf32>
      %1 = stablehlo.constant dense<7> : tensor<2x2xi4>
      %2 = stablehlo.constant dense<[(1.0, -2.0)]> : tensor<1xcomplex<f64>>
      %3 = stablehlo.constant dense<[[true, false]]> : tensor<1x2xi1>
      %4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      return %0 : tensor<2xf32>
    })",
                     "d.mlir");
  ASSERT_TRUE(m.ok()) << m.status();
  const Literal& hex = *FirstOp(**m, 0).attr("value")->literal;
  EXPECT_EQ(hex.GetDouble(0), 1.0);
  EXPECT_EQ(hex.GetDouble(1), 2.0);
  const Literal& splat = *FirstOp(**m, 1).attr("value")->literal;
  EXPECT_EQ(splat.element_count(), 4);
  EXPECT_EQ(splat.GetInt(3), 7);
  EXPECT_EQ(FirstOp(**m, 2).attr("value")->literal->GetComplex(0), std::complex<double>(1, -2));
  EXPECT_EQ(FirstOp(**m, 3).attr("value")->literal->GetInt(1), 0);
  EXPECT_TRUE(std::isnan(FirstOp(**m, 4).attr("value")->literal->GetDouble(0)));
}

TEST(MlirParser, ErrorsNameTheLocationAndRule) {
  EXPECT_EQ(ParseError("func.func @f() {\n  %0 = stablehlo.add %a, %a : tensor<f32>\n}"),
            "t.mlir:2:22: use of undefined value %a");
  EXPECT_NE(
      ParseError("func.func @f() {\n  %0 = stablehlo.constant dense<[1, 2]> : tensor<3xi32>\n}")
          .find("t.mlir:2:"),
      std::string::npos);
  EXPECT_NE(ParseError("func.func @f() {\n %0 = stablehlo.constant dense<300> : tensor<i8>\n}")
                .find("out of range for s8"),
            std::string::npos);
  EXPECT_NE(ParseError("func.func @f() {\n %0 = stablehlo.constant dense<[[1], [2, 3]]> : "
                       "tensor<2x1xi32>\n}")
                .find("not rectangular"),
            std::string::npos);
  EXPECT_NE(ParseError("func.func @f() { %0 = stablehlo.add").find("t.mlir:1:"), std::string::npos);
  // Deep nesting is refused, not a stack overflow.
  EXPECT_NE(ParseError("func.func @f() { %0 = stablehlo.constant dense<" + std::string(5000, '[') +
                       "1" + std::string(5000, ']') + "> : tensor<i32>\n}")
                .find("too deep"),
            std::string::npos);
  EXPECT_NE(ParseError("#a = " + std::string(5000, '[')).find("too deep"), std::string::npos);
}

TEST(MlirParser, SplitInputFileKeepsLineNumbers) {
  const std::string text =
      "func.func @a() {\n  func.return\n}\n// -----\nfunc.func @b() {\n  %0 = stablehlo.add %x, %x "
      ": tensor<f32>\n}\n";
  std::vector<SourceChunk> chunks = SplitInputFile(text);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[1].first_line, 5);
  EXPECT_TRUE(ParseMlir(chunks[0].text, "s.mlir", chunks[0].first_line).ok());
  auto second = ParseMlir(chunks[1].text, "s.mlir", chunks[1].first_line);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().message(), "s.mlir:6:22: use of undefined value %x");
}

TEST(MlirParser, StringEscapesAndHexFloats) {
  auto a = ParseAttributeText(R"("a\22b\0A\n")");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->text, "a\"b\n\n");
  auto half = ParseAttributeText("{x = 0x3C00 : f16}");
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_EQ(half->fields[0].second.float_value, 1.0);
  auto array = ParseAttributeText("array<f32: 0x7FC00000, 2.5>");
  ASSERT_TRUE(array.ok()) << array.status();
  EXPECT_TRUE(std::isnan(array->floats[0]));
  EXPECT_EQ(array->floats[1], 2.5);
}

TEST(MlirParser, TypesAndElementTypes) {
  auto t = ParseTypeText("tensor<2x?x!quant.uniform<i8:f32, 0.5:-1>>");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dims, (std::vector<int64_t>{2, Type::kDynamic}));
  EXPECT_FALSE(t->IsStatic());
  EXPECT_EQ(PrimitiveTypeOf(t->element), PrimitiveType::S8);
  EXPECT_EQ(PrimitiveTypeOf("complex<f32>"), PrimitiveType::C64);
  EXPECT_EQ(PrimitiveTypeOf("ui4"), PrimitiveType::U4);
  EXPECT_EQ(PrimitiveTypeOf("f8E4M3FN"), PrimitiveType::F8E4M3FN);
  EXPECT_EQ(PrimitiveTypeOf("f6E2M3FN"), std::nullopt);
  auto tuple = ParseTypeText("tuple<tensor<f32>, !stablehlo.token>");
  ASSERT_TRUE(tuple.ok());
  EXPECT_EQ(tuple->elements[1].kind, Type::Kind::kToken);
}

TEST(MlirParser, MemrefTypes) {
  // VHLO goldens (stablehlo_legalize_to_vhlo.1_13_0.mlir:2991) pass buffers.
  auto m = ParseMlir(R"(func.func @f(%arg0: memref<2xf32>) -> memref<2xf32> {
    func.return %arg0 : memref<2xf32>
  })",
                     "m.mlir");
  ASSERT_TRUE(m.ok()) << m.status();
  const Operation& fn = *(*m)->regions[0]->blocks[0]->operations[0];
  EXPECT_EQ(fn.regions[0]->blocks[0]->arguments[0]->type.element, "memref<2xf32>");
  auto t = ParseTypeText("memref<2x?xf32, affine_map<(d0, d1) -> (d0, d1)>>");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->kind, Type::Kind::kOther);
}

TEST(MlirParser, AxisRefSubAxisInfo) {
  // stablehlo_legalize_to_vhlo.mlir:507: `sub_axis_info = (pre_size)size`.
  auto a = ParseAttributeText(
      R"(#stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = [#stablehlo.axis_ref<name = "x", sub_axis_info = (1)2>, #stablehlo.axis_ref<name = "y">]>)");
  ASSERT_TRUE(a.ok()) << a.status();
  const Attribute* axes = a->Field("axes");
  ASSERT_NE(axes, nullptr);
  ASSERT_EQ(axes->elements.size(), 2u);
  const Attribute* sub = axes->elements[0].Field("sub_axis_info");
  ASSERT_NE(sub, nullptr);
  EXPECT_EQ(sub->text, "(1)2");
  EXPECT_FALSE(ParseAttributeText("#stablehlo.axis_ref<name = \"x\", sub_axis_info = (1>").ok());
}

TEST(MlirParser, ArithScfAndTensorOps) {
  // stablehlo_legalize_to_vhlo_mixed.mlir:200: other dialects' custom syntax.
  auto m = ParseMlir(R"(func.func @f(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c1 = arith.constant 1 : index
    %cst = arith.constant 0.0 : f32
    %for = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %arg0) -> tensor<2xf32> {
      %new = tensor.insert %cst into %acc[%i] : tensor<2xf32>
      %e = tensor.extract %new[%i] : tensor<2xf32>
      scf.yield %new : tensor<2xf32>
    }
    return %for : tensor<2xf32>
  })",
                     "a.mlir");
  ASSERT_TRUE(m.ok()) << m.status();
  const Operation& c0 = FirstOp(**m, 0);
  EXPECT_EQ(c0.result_type().element, "index");
  ASSERT_NE(c0.attr("value"), nullptr);
  EXPECT_EQ(c0.attr("value")->kind, Attribute::Kind::kInteger);
  EXPECT_EQ(FirstOp(**m, 3).attr("value")->kind, Attribute::Kind::kFloat);
  const Operation& loop = FirstOp(**m, 4);
  EXPECT_EQ(loop.operands.size(), 4u);
  ASSERT_EQ(loop.results.size(), 1u);
  const Block& body = *loop.regions[0]->blocks[0];
  ASSERT_EQ(body.arguments.size(), 2u);
  EXPECT_EQ(body.arguments[0]->type.element, "index");
  EXPECT_EQ(body.arguments[1]->type.dims, std::vector<int64_t>{2});
  const Operation& insert = *body.operations[0];
  EXPECT_EQ(insert.operands.size(), 3u);
  EXPECT_EQ(insert.result_type().dims, std::vector<int64_t>{2});
  EXPECT_EQ(body.operations[1]->result_type().kind, Type::Kind::kScalar);
  EXPECT_EQ(body.operations[1]->result_type().element, "f32");
}

TEST(MlirParser, UnsupportedCustomSyntaxNamesTheOp) {
  // invalid_vhlo_future.mlir is VHLO text: refused clearly, naming the op.
  EXPECT_EQ(ParseError("vhlo.func_v1 @main() -> () {\n}\n"),
            "t.mlir:1:14: unexpected '@' (the custom syntax of 'vhlo.func_v1' is unsupported; "
            "write it in generic form)");
  std::string e = ParseError("func.func @f() {\n  %0 = foo.bar 1 : f32\n  return\n}\n");
  EXPECT_NE(e.find("the custom syntax of 'foo.bar' is unsupported"), std::string::npos) << e;
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::mlir
