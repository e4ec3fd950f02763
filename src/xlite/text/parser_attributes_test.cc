// Attribute values XLA's current printer writes: compare's order=, and the
// errors for spellings XLA rejects.
#include <string>

#include "gtest/gtest.h"
#include "xlite/text/parser.h"
#include "xlite/text/printer.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

std::string Module(const std::string& body) {
  return "HloModule m, entry_computation_layout={(f32[4]{0}, f32[4]{0})->pred[4]{0}}\n\n"
         "ENTRY e {\n  a = f32[4]{0} parameter(0)\n  b = f32[4]{0} parameter(1)\n  " +
         body + "\n}\n\n";
}

// Parses and prints in the short form; "error: ..." when parsing fails.
std::string Reprint(const std::string& text) {
  auto m = ParseHloModule(text, "t.hlo");
  if (!m.ok()) return "error: " + std::string(m.status().message());
  return PrintModule(**m, PrintOptions::Short());
}

TEST(CompareOrder, RoundTripsTotalAndWeak) {
  for (const char* order : {"TOTAL", "WEAK"}) {
    const std::string text =
        Module(std::string("ROOT c = pred[4]{0} compare(a, b), direction=LT, order=") + order);
    EXPECT_EQ(Reprint(text), text);
  }
}

TEST(CompareOrder, DefaultOrderIsNotPrinted) {
  // PARTIAL is the default for floats, TOTAL for integers: XLA omits both.
  EXPECT_EQ(Reprint(Module("ROOT c = pred[4]{0} compare(a, b), direction=LT, order=PARTIAL")),
            Module("ROOT c = pred[4]{0} compare(a, b), direction=LT"));
  const std::string ints =
      "HloModule m, entry_computation_layout={(s32[2]{0})->pred[2]{0}}\n\nENTRY e {\n"
      "  a = s32[2]{0} parameter(0)\n  ROOT c = pred[2]{0} compare(a, a), direction=GE";
  EXPECT_EQ(Reprint(ints + ", order=TOTAL\n}\n\n"), ints + "\n}\n\n");
}

TEST(CompareOrder, OlderTypeSpellingStillRoundTrips) {
  const std::string text =
      Module("ROOT c = pred[4]{0} compare(a, b), direction=GT, type=TOTALORDER");
  EXPECT_EQ(Reprint(text), text);
}

TEST(CompareOrder, InvalidSpellingsAreRejectedWithPlaceAndRule) {
  EXPECT_EQ(Reprint(Module("ROOT c = pred[4]{0} compare(a, b), direction=LT, order=TOTALORDER")),
            "error: t.hlo:6:58: unknown comparison order 'TOTALORDER'; expected TOTAL, WEAK or "
            "PARTIAL");
  EXPECT_EQ(
      Reprint(Module("ROOT c = pred[4]{0} compare(a, b), direction=LT, type=FLOAT, order=TOTAL")),
      "error: t.hlo:6:23: compare takes either type= (the older spelling) or order=, not both");
  EXPECT_NE(
      Reprint(Module("ROOT c = pred[4]{0} add(a, b), order=TOTAL")).find("not allowed on add"),
      std::string::npos);
}

std::string Unary(const std::string& op, const std::string& attrs) {
  return "HloModule m, entry_computation_layout={(f32[]{:T(256)})->f32[]{:T(256)}}\n\n"
         "ENTRY e {\n  x = f32[]{:T(256)} parameter(0)\n  ROOT y = f32[]{:T(256)} " +
         op + "(x)" + attrs + "\n}\n\n";
}

TEST(ResultAccuracy, ParsesIntoTheIrAndPrintsAsXla) {
  // XLA prints the mode lowercase, tolerances as atol,rtol,ulps, and nothing
  // for the default mode.
  EXPECT_EQ(Reprint(Unary("exponential", ", result_accuracy={mode=HIGHEST}")),
            Unary("exponential", ", result_accuracy={mode=highest}"));
  EXPECT_EQ(Reprint(Unary("log", ", result_accuracy={tolerance={rtol=0.5, atol=1.0, ulps=2}}")),
            Unary("log", ", result_accuracy={tolerance={atol=1,rtol=0.5,ulps=2}}"));
  EXPECT_EQ(Reprint(Unary("sqrt", ", result_accuracy={mode=default}")), Unary("sqrt", ""));
  const std::string canonical =
      Unary("tanh", ", result_accuracy={tolerance={atol=0,rtol=0,ulps=10}}");
  EXPECT_EQ(Reprint(canonical), canonical);
  auto m = ParseHloModule(canonical, "t.hlo");
  ASSERT_TRUE(m.ok());
  const auto& r = (*m)->entry_computation()->root_instruction()->attrs().result_accuracy;
  ASSERT_TRUE(r && r->tolerance);
  EXPECT_EQ(r->tolerance->ulps, 10);
}

TEST(ResultAccuracy, InvalidSpellingsAreRejectedWithPlaceAndRule) {
  EXPECT_EQ(Reprint(Unary("exponential", ", result_accuracy={mode=fast}")),
            "error: t.hlo:5:65: unknown result_accuracy mode 'fast'; expected default or highest");
  EXPECT_EQ(Reprint(Unary("exponential", ", result_accuracy={tolerance={atol=1, eps=2}}")),
            "error: t.hlo:5:79: unknown result_accuracy tolerance 'eps'; expected atol, rtol or "
            "ulps");
  EXPECT_EQ(Reprint(Unary("exponential", ", result_accuracy={precision=1}")),
            "error: t.hlo:5:60: unknown result_accuracy field 'precision'; expected mode= or "
            "tolerance=");
  EXPECT_EQ(Reprint(Unary("exponential", ", result_accuracy={mode=highest, tolerance={ulps=1}}")),
            "error: t.hlo:5:72: result_accuracy takes one of mode= or tolerance=, not both");
  EXPECT_EQ(Reprint(Unary("exponential", ", result_accuracy={tolerance={ulps=1.5}}")),
            "error: t.hlo:5:76: result_accuracy ulps must be a whole number");
  // Only XLA's "unary ops with result accuracy" take it.
  EXPECT_EQ(Reprint(Unary("negate", ", result_accuracy={mode=highest}")),
            "error: t.hlo:5:38: attribute 'result_accuracy' is not allowed on negate; XLA allows "
            "it only on exponential, log, sqrt and the other transcendental unary ops");
}

TEST(CollectiveGroupMode, ReadAndDroppedAsXlaDoes) {
  const std::string head =
      "HloModule m, entry_computation_layout={(f32[4]{0})->f32[4]{0}}\n\nadd {\n"
      "  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\n"
      "ENTRY e {\n  p = f32[4]{0} parameter(0)\n  ROOT r = f32[4]{0} all-reduce(p), ";
  EXPECT_EQ(
      Reprint(head + "channel_id=1, replica_groups={}, to_apply=add, mode=cross_partition\n}\n\n"),
      head + "channel_id=1, replica_groups={}, to_apply=add\n}\n\n");
  EXPECT_NE(Reprint(head + "to_apply=add, mode=everyone\n}\n\n")
                .find("unknown collective op group mode 'everyone'"),
            std::string::npos);
}

std::string Constant(const std::string& attrs) {
  return "HloModule m, entry_computation_layout={()->s32[]}\n\nENTRY e {\n"
         "  ROOT c = s32[] constant(1)" +
         attrs + "\n}\n\n";
}

TEST(Statistics, ParsedAndPrintedAsXla) {
  const std::string text = Constant(", statistics={visualizing_index=1,stat-1=33,stat-2=0.5}");
  EXPECT_EQ(Reprint(text), text);
  // An index alone, or nothing, shows no statistics: XLA prints none.
  EXPECT_EQ(Reprint(Constant(", statistics={visualizing_index=2}")), Constant(""));
  EXPECT_EQ(Reprint(Constant(", statistics={}")), Constant(""));
  EXPECT_EQ(Reprint(Constant(", statistics={visualizing_index=1.5,s=1}")),
            "error: t.hlo:4:62: expected '}'");
  EXPECT_EQ(Reprint(Constant(", statistics={visualizing_index=x}")),
            "error: t.hlo:4:61: statistics index must be an integer");
  EXPECT_EQ(Reprint(Constant(", statistics={visualizing_index=0,s=inf}")),
            "error: t.hlo:4:65: statistic 's' must be a number");
}

TEST(Origin, CheckedWithXlasGrammarAndKeptAsWritten) {
  for (const char* origin :
       {"{{\"v\"}}", "{(({}, {\"v2\" {1}}), {\"v3\"})}", "{[synthetic_call]}"}) {
    const std::string text = Constant(std::string(", origin=") + origin);
    EXPECT_EQ(Reprint(text), text);
  }
  EXPECT_EQ(Reprint(Constant(", origin={({\"v\"}}")),
            "error: t.hlo:4:38: unbalanced '(' in origin");
  EXPECT_EQ(Reprint(Constant(", origin={v}")),
            "error: t.hlo:4:39: expected '[synthetic_call]' or a tuple tree of {\"name\" {index}} "
            "in origin");
  EXPECT_EQ(Reprint(Constant(", origin={[synthetic]}")),
            "error: t.hlo:4:40: expected 'synthetic_call'");
}

TEST(OriginRecoveryTable, EmbeddedModuleMustParse) {
  const std::string bad =
      "HloModule m, origin_recovery_table={\n  {\"a\"} : {\"b\"},\n  \"HloModule r\nENTRY e {\n"
      "  ROOT x = f32[] bogus()\n}\"\n}\n\nENTRY e {\n  ROOT c = s32[] constant(1)\n}\n";
  EXPECT_EQ(Reprint(bad),
            "error: t.hlo:3:3: the recovery module does not parse: <recovery module>:3:18: "
            "unknown opcode 'bogus'");
}

TEST(ConvKind, CurrentSpellingReadAndPrinted) {
  const std::string head =
      "HloModule m, entry_computation_layout={(f32[1,2,2,1]{3,2,1,0}, f32[1,1,1,1]{3,2,1,0})->"
      "f32[1,2,2,1]{3,2,1,0}}\n\nENTRY e {\n  a = f32[1,2,2,1]{3,2,1,0} parameter(0)\n"
      "  b = f32[1,1,1,1]{3,2,1,0} parameter(1)\n  ROOT c = f32[1,2,2,1]{3,2,1,0} "
      "convolution(a, b), window={size=1x1}, dim_labels=b01f_01io->b01f";
  EXPECT_EQ(Reprint(head + ", conv_kind=wgrad\n}\n\n"), head + ", conv_kind=wgrad\n}\n\n");
  EXPECT_EQ(Reprint(head + ", convolution_kind=dgrad\n}\n\n"), head + ", conv_kind=dgrad\n}\n\n");
  EXPECT_EQ(Reprint(head + ", conv_kind=unset\n}\n\n"), head + "\n}\n\n");
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
