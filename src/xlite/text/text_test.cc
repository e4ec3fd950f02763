#include "gtest/gtest.h"
#include "xlite/text/parser.h"
#include "xlite/text/printer.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

std::string Reprint(const std::string& text, PrintOptions o = PrintOptions::Short()) {
  auto m = ParseHloModule(text, "t.hlo");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? PrintModule(**m, o) : "";
}

std::string ErrorOf(const std::string& text) {
  auto m = ParseHloModule(text, "t.hlo");
  EXPECT_FALSE(m.ok());
  return m.ok() ? "" : std::string(m.status().message());
}

TEST(Parser, FillsDefaultLayoutsAndEntryLayout) {
  EXPECT_EQ(
      Reprint("HloModule m\nENTRY e {\n  p = f32[2,3] parameter(0)\n  ROOT n = f32[2,3] "
              "negate(p)\n}\n"),
      "HloModule m, entry_computation_layout={(f32[2,3]{1,0})->f32[2,3]{1,0}}\n\n"
      "ENTRY e {\n  p = f32[2,3]{1,0} parameter(0)\n  ROOT n = f32[2,3]{1,0} negate(p)\n}\n\n");
}

TEST(Parser, LongFormPrintsOperandShapesAndSignature) {
  std::string out = Reprint(
      "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT a = f32[] "
      "add(p, p), metadata={op_name=\"x\"}\n}\n",
      PrintOptions::Long());
  EXPECT_NE(out.find("ENTRY %e (p: f32[]) -> f32[] {"), std::string::npos) << out;
  EXPECT_NE(out.find("%a = f32[] add(f32[] %p, f32[] %p), metadata={op_name=\"x\"}"),
            std::string::npos)
      << out;
}

TEST(Parser, AsyncSugarParsesToGenericOps) {
  const std::string text =
      "HloModule m\nENTRY e {\n  p = f32[10] parameter(0)\n"
      "  s = ((f32[10]), f32[20], s32[]) custom-call-start(p), custom_call_target=\"foo\"\n"
      "  ROOT d = f32[20] custom-call-done(s)\n}\n";
  auto m = ParseHloModule(text, "t.hlo");
  ASSERT_TRUE(m.ok()) << m.status();
  const HloComputation* entry = (*m)->entry_computation();
  const HloInstruction* start = entry->root_instruction()->operand(0);
  EXPECT_EQ(start->opcode(), HloOpcode::kAsyncStart);
  ASSERT_EQ(start->called_computations().size(), 1u);
  const HloInstruction* wrapped = start->called_computations()[0]->root_instruction();
  EXPECT_EQ(wrapped->opcode(), HloOpcode::kCustomCall);
  EXPECT_EQ(wrapped->attrs().custom_call_target, "foo");
  EXPECT_EQ(entry->root_instruction()->opcode(), HloOpcode::kAsyncDone);

  std::string sugar = PrintModule(**m, PrintOptions::Short());
  EXPECT_NE(sugar.find("custom-call-start(p), custom_call_target=\"foo\""), std::string::npos)
      << sugar;
  PrintOptions generic = PrintOptions::Short();
  generic.syntax_sugar_async_ops = false;
  std::string plain = PrintModule(**m, generic);
  EXPECT_NE(plain.find("async-start(p), calls=s.wrapped"), std::string::npos) << plain;
  EXPECT_NE(plain.find("ROOT custom-call = f32[20]{0} custom-call(param.0)"), std::string::npos)
      << plain;
  // The generic form parses back to the same module and prints the sugar again.
  EXPECT_EQ(Reprint(plain), sugar);
}

TEST(Parser, FirstClassAsyncPairsStayFirstClass) {
  auto m = ParseHloModule(
      "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
      "  s = (f32[4], f32[4], u32[]) copy-start(p)\n  ROOT d = f32[4] copy-done(s)\n}\n",
      "t.hlo");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)->entry_computation()->root_instruction()->opcode(), HloOpcode::kCopyDone);
  EXPECT_NE(
      ErrorOf("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
              "  s = ((f32[4]), f32[4], u32[]) copy-update(p)\n  ROOT d = f32[4] copy-done(s)\n}\n")
          .find("first-class"),
      std::string::npos);
}

TEST(Parser, ErrorsNameFileLineAndColumn) {
  EXPECT_EQ(ErrorOf("HloModule m\nENTRY e {\n  ROOT p = f32[] bogus(0)\n}\n"),
            "t.hlo:3:18: unknown opcode 'bogus'");
  EXPECT_EQ(ErrorOf("HloModule m\nENTRY e {\n  ROOT a = f32[] add(x, x)\n}\n"),
            "t.hlo:3:22: instruction 'x' is not defined");
  EXPECT_EQ(ErrorOf("HloModule m\nENTRY e {\n  ROOT c = u8[] constant(256)\n}\n"),
            "t.hlo:3:26: value 256 is out of range for u8");
  EXPECT_NE(ErrorOf("HloModule m\nENTRY e {\n  ROOT c = f32[2,2] constant({1, 2, 3, 4})\n}\n")
                .find("expected '{' for dimension 1"),
            std::string::npos);
  EXPECT_NE(ErrorOf("HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1), bogus_attr=3\n}\n")
                .find("attribute 'bogus_attr' is not allowed on constant"),
            std::string::npos);
}

// Regressions found by the fuzzer.
TEST(Parser, TooManyLiteralRowsIsAnError) {
  EXPECT_NE(ErrorOf("HloModule m\nENTRY e {\n  ROOT c = f64[2,3] constant({ {1, 2, 3}, {4, 5, 6}, "
                    "{7, 8, 9} })\n}\n")
                .find("too many entries in dimension 0"),
            std::string::npos);
}

// A fusion-start whose calls={} named nothing printed as a fusion without
// a computation, which did not parse back.
TEST(Parser, AnEmptyCallsListIsAnError) {
  EXPECT_EQ(ErrorOf("HloModule m\nENTRY e {\n  ROOT f = ((), (), s32[]) fusion-start(), "
                    "kind=kLoop, calls={ }\n}\n"),
            "t.hlo:3:62: 'calls' names no computation");
  EXPECT_NE(ErrorOf("HloModule m\nENTRY e {\n  ROOT c = f32[] call(), to_apply={}\n}\n")
                .find("'to_apply' names no computation"),
            std::string::npos);
}

TEST(Parser, ScalarValueForAnEmptyArray) {
  EXPECT_NE(
      Reprint("HloModule m\nENTRY e {\n  ROOT c = u4[0] constant(6)\n}\n").find("constant({})"),
      std::string::npos);
}

TEST(Printer, DimLabelsKeepTrailingUnknownDimensions) {
  const std::string text =
      "HloModule m\nENTRY e {\n  ROOT r = f32[100]{0} custom-call(), window={size=2x2}, "
      "dim_labels=?b01f_0?1io->b01f?, custom_call_target=\"t\"\n}\n";
  EXPECT_NE(Reprint(text).find("dim_labels=?b01f_0?1io->b01f?,"), std::string::npos);
}

TEST(Parser, DeepNestingIsAnErrorNotACrash) {
  std::string deep = "HloModule m\nENTRY e {\n  ROOT p = " + std::string(100000, '(') + "\n}\n";
  EXPECT_NE(ErrorOf(deep).find("nested too deeply"), std::string::npos);
}

TEST(Parser, CompactGetTupleElement) {
  EXPECT_EQ(Reprint("HloModule m\nENTRY e {\n  p0 = (f32[10], f16[10]) parameter(0)\n"
                    "  ROOT r = f32[10] add(f32[10] %p0#0, f32[10] %p0#0)\n}\n"),
            "HloModule m, entry_computation_layout={((f32[10]{0}, f16[10]{0}))->f32[10]{0}}\n\n"
            "ENTRY e {\n  p0 = (f32[10]{0}, f16[10]{0}) parameter(0)\n"
            "  p0_0 = f32[10]{0} get-tuple-element(p0), index=0\n"
            "  ROOT r = f32[10]{0} add(p0_0, p0_0)\n}\n\n");
}

TEST(Printer, IotaReplicaGroupsAreCanonical) {
  std::string out = Reprint(
      "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] "
      "add(a, b)\n}\n"
      "ENTRY e {\n  p = f32[8] parameter(0)\n"
      "  ROOT r = f32[8] all-reduce(p), replica_groups=[2,4]<=[2,2,2]T(0,1,2), to_apply=add\n}\n");
  EXPECT_NE(out.find("replica_groups=[2,4]<=[8], to_apply=add"), std::string::npos) << out;
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
