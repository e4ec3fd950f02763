// Attribute values XLA's current printer writes: compare's order=, and the
// errors for spellings XLA rejects.
#include <string>

#include "gtest/gtest.h"
#include "xlite/text/parser.h"
#include "xlite/text/printer.h"

namespace xlite {
namespace {

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

}  // namespace
}  // namespace xlite
