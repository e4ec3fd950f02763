// Printer fidelity: XLA's computation order, its dump form (no operand
// shapes, compact get-tuple-element), async fusions in the generic form.
#include "xlite/text/printer.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "xlite/text/parser.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

std::string Print(const std::string& text, const PrintOptions& o) {
  auto m = ParseHloModule(text, "t.hlo");
  if (!m.ok()) return "error: " + std::string(m.status().message());
  return PrintModule(**m, o);
}

TEST(PrinterOrder, WhileBodyBeforeConditionWhenOrderIsChosen) {
  // The callees follow their caller in the text, so the printer picks the
  // order: XLA visits a while's body before its condition.
  const std::string text = R"(HloModule m

ENTRY e {
  p = s32[] parameter(0)
  ROOT w = s32[] while(p), condition=cond, body=body
}

cond {
  c = s32[] parameter(0)
  z = s32[] constant(10)
  ROOT lt = pred[] compare(c, z), direction=LT
}

body {
  b = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT add = s32[] add(b, one)
}
)";
  const std::string out = Print(text, PrintOptions::Short());
  const size_t body = out.find("\nbody {"), cond = out.find("\ncond {"), entry = out.find("ENTRY");
  ASSERT_NE(body, std::string::npos) << out;
  EXPECT_LT(body, cond) << out;
  EXPECT_LT(cond, entry) << out;
}

TEST(PrinterOrder, CalleeFirstTextKeepsItsOrder) {
  // XLA's dumps list computations callee-first in the order XLA created them;
  // that order prints back unchanged (here: condition first).
  const std::string text =
      "HloModule m, entry_computation_layout={(s32[])->s32[]}\n\n"
      "cond {\n  c = s32[] parameter(0)\n  z = s32[] constant(10)\n"
      "  ROOT lt = pred[] compare(c, z), direction=LT\n}\n\n"
      "body {\n  b = s32[] parameter(0)\n  one = s32[] constant(1)\n"
      "  ROOT add = s32[] add(b, one)\n}\n\n"
      "ENTRY e {\n  p = s32[] parameter(0)\n"
      "  ROOT w = s32[] while(p), condition=cond, body=body\n}\n\n";
  EXPECT_EQ(Print(text, PrintOptions::Short()), text);
}

TEST(PrinterOrder, ScheduledModulesPrintFusedComputationsInPostOrder) {
  // A schedule orders the sequential computations only: a fused computation
  // whose stored order reads an instruction before the one defining it (a
  // pass appended it) still prints definitions first, as XLA prints it.
  auto m = ParseHloModule(R"(HloModule m, is_scheduled=true

f {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}

ENTRY e {
  x = f32[4] parameter(0)
  ROOT r = f32[4] fusion(x), kind=kLoop, calls=f
}
)",
                          "t.hlo");
  ASSERT_TRUE(m.ok()) << m.status();
  HloComputation* fused = (*m)->GetComputationWithName("f");
  ASSERT_NE(fused, nullptr);
  HloInstruction* x = fused->parameter_instruction(0);
  auto add = std::make_unique<HloInstruction>(HloOpcode::kAdd, "a", x->shape());
  add->AppendOperand(x);
  add->AppendOperand(x);
  HloInstruction* a = fused->AddInstruction(std::move(add));  // stored last
  fused->root_instruction()->ReplaceOperandWith(0, a);
  const std::string out = PrintModule(**m, PrintOptions::Short());
  const size_t defined = out.find("  a = f32[4]{0} add(x, x)"), read = out.find("negate(a)");
  ASSERT_NE(defined, std::string::npos) << out;
  ASSERT_NE(read, std::string::npos) << out;
  EXPECT_LT(defined, read) << out;
}

TEST(DumpForm, NoOperandShapesAndCompactGetTupleElement) {
  const std::string text =
      "HloModule m, entry_computation_layout={((f32[2]{0}, s32[]))->f32[2]{0}}\n\n"
      "ENTRY %e (p: (f32[2], s32[])) -> f32[2] {\n"
      "  %p = (f32[2]{0}, s32[]) parameter(0)\n"
      "  ROOT %n = f32[2]{0} negate(%p#0)\n}\n\n";
  EXPECT_EQ(Print(text, PrintOptions::Dump()), text);
  // The long form writes the get-tuple-element out, with operand shapes.
  const std::string long_form = Print(text, PrintOptions::Long());
  EXPECT_NE(long_form.find("%p_0 = f32[2]{0} get-tuple-element((f32[2]{0}, s32[]) %p), index=0"),
            std::string::npos)
      << long_form;
}

TEST(DumpForm, GetTupleElementThatIsRootOrCarriesMetadataKeepsItsLine) {
  const std::string text =
      "HloModule m, entry_computation_layout={((f32[2]{0}, s32[]))->s32[]}\n\n"
      "ENTRY %e (p: (f32[2], s32[])) -> s32[] {\n"
      "  %p = (f32[2]{0}, s32[]) parameter(0)\n"
      "  %g = f32[2]{0} get-tuple-element(%p), index=0, metadata={op_name=\"x\"}\n"
      "  %n = f32[2]{0} negate(%g)\n"
      "  ROOT %r = s32[] get-tuple-element(%p), index=1\n}\n\n";
  const std::string out = Print(text, PrintOptions::Dump());
  EXPECT_NE(out.find("%g = f32[2]{0} get-tuple-element(%p), index=0"), std::string::npos) << out;
  EXPECT_NE(out.find("ROOT %r = s32[] get-tuple-element(%p), index=1"), std::string::npos) << out;
}

TEST(AsyncSugar, WrappedFusionStaysGeneric) {
  // fusion-start(...), calls= would say two things at once: XLA prints an
  // async fusion as async-start(...), calls=<wrapped computation>.
  const std::string text =
      "HloModule m, entry_computation_layout={(f32[4]{0})->f32[4]{0}}\n\n"
      "fused {\n  x = f32[4]{0} parameter(0)\n  ROOT n = f32[4]{0} negate(x)\n}\n\n"
      "wrapped {\n  a = f32[4]{0} parameter(0)\n"
      "  ROOT f = f32[4]{0} fusion(a), kind=kLoop, calls=fused\n}\n\n"
      "ENTRY e {\n  p = f32[4]{0} parameter(0)\n"
      "  s = ((f32[4]{0}), f32[4]{0}, u32[]) async-start(p), calls=wrapped\n"
      "  ROOT d = f32[4]{0} async-done(s)\n}\n\n";
  EXPECT_EQ(Print(text, PrintOptions::Short()), text);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
