// Shapes, layouts and literals: layout dim level types (checked with XLA's
// rules) and elided constants.
#include <string>

#include "gtest/gtest.h"
#include "xlite/text/parser.h"
#include "xlite/text/printer.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

std::string ShapeError(const std::string& text) {
  auto s = ParseShape(text);
  return s.ok() ? "ok: " + s->ToString() : std::string(s.status().message());
}

TEST(DimLevelTypes, ParseIntoTheIrAndPrintBack) {
  auto s = ParseShape("f32[4,5]{1,0:D(D,C+~)#(u32)*(u64)}");
  ASSERT_TRUE(s.ok()) << s.status();
  const Layout& l = s->layout();
  ASSERT_EQ(l.dim_levels.size(), 2u);
  EXPECT_EQ(l.dim_levels[0].type, DimLevel::Type::kDense);
  EXPECT_EQ(l.dim_levels[1].type, DimLevel::Type::kCompressed);
  EXPECT_FALSE(l.dim_levels[1].unique);
  EXPECT_FALSE(l.dim_levels[1].ordered);
  EXPECT_EQ(s->ToString(), "f32[4,5]{1,0:D(D,C+~)#(u32)*(u64)}");
  for (const char* text :
       {"f32[3,4,5]{2,1,0:D(C+,S~,H)}", "f32[2,2]{1,0:D(D,S)P(f32[4]{0})}", "f32[2]{0:D(D)}"}) {
    EXPECT_EQ(ShapeError(text), std::string("ok: ") + text);
  }
}

TEST(DimLevelTypes, InvalidSpellingsAreRejectedWithPlaceAndRule) {
  EXPECT_EQ(ShapeError("f32[4,5]{1,0:D(D,X)}"),
            "<shape>:1:18: expected a dim level type D, C, S or H in D(...)");
  EXPECT_EQ(ShapeError("f32[4,5]{1,0:D(D,C~+)}"),
            "<shape>:1:20: in D(...), '+' (not unique) must come before '~' (not ordered)");
  EXPECT_EQ(ShapeError("f32[4,5]{1,0:D(C)}"),
            "<shape>:1:9: layout has 1 dim level types in D(...) but the shape has rank 2");
  EXPECT_EQ(ShapeError("f32[4,5]{1,0:D(D+,C)}"),
            "<shape>:1:9: layout dimension 0 is dense (D), which is always unique and ordered; "
            "'+' and '~' apply to C, S and H only");
  EXPECT_EQ(ShapeError("f32[4,5]{1,0:D(D,C)T(2,2)}"),
            "<shape>:1:9: a sparse layout (C, S or H in D(...)) cannot have tiles T(...)");
  EXPECT_EQ(ShapeError("f32[4,5]{1,0:D(D,D)#(u32)}"),
            "<shape>:1:9: an index type #(...) is only allowed on sparse layouts");
  EXPECT_EQ(ShapeError("f32[4,5]{1,0:*(u32)}"),
            "<shape>:1:9: a pointer type *(...) is only allowed on sparse layouts");
  EXPECT_EQ(ShapeError("f32[4,5]{1,0:D(D,C)#(s32)}"),
            "<shape>:1:22: the layout's index type must be an unsigned integer type, got s32");
  EXPECT_EQ(ShapeError("f32[4,5]{1,0:T(2,2)D(D,C)}"),
            "<shape>:1:20: layout field D is repeated or out of order; XLA reads them in the "
            "order D T L # * E S SC P M");
  EXPECT_EQ(ShapeError("f32[4,5]{1,0:T()}"),
            "<shape>:1:15: a layout tile T(...) must list at least one dimension");
}

TEST(Shapes, ByteSizesThatOverflowInt64AreRejected) {
  EXPECT_EQ(ShapeError("f32[3037000500,3037000500]"),
            "<shape>:1:1: the shape's size in bytes overflows int64");
  EXPECT_EQ(ShapeError("c128[576460752303423488]"),
            "<shape>:1:1: the shape's size in bytes overflows int64");
  // The largest that fit, zero-sized and unbounded dimensions are fine.
  EXPECT_EQ(ShapeError("u8[4611686018427387904,1]"), "ok: u8[4611686018427387904,1]");
  EXPECT_EQ(ShapeError("f32[0,4611686018427387904,4611686018427387904]"),
            "ok: f32[0,4611686018427387904,4611686018427387904]");
  EXPECT_EQ(ShapeError("f32[?,1024]"), "ok: f32[?,1024]");
}

// One value for a whole array fills it, up to kMaxSplatElements; a line must
// not make hundreds of millions of elements (a fuzzer's timeout).
TEST(Literals, OneValueFillsAnArrayUpToALimit) {
  auto small = ParseHloModule("HloModule m\nENTRY e {\n  ROOT c = f32[2,3] constant(7)\n}\n");
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_NE(
      PrintModule(**small, PrintOptions::Short()).find("constant({ { 7, 7, 7 }, { 7, 7, 7 } })"),
      std::string::npos);
  EXPECT_TRUE(
      ParseHloModule("HloModule m\nENTRY e {\n  ROOT c = u8[1024,1024] constant(1)\n}\n").ok());
  auto big =
      ParseHloModule("HloModule m\nENTRY e {\n  ROOT c = bf16[32768,8192] constant(1)\n}\n", "t");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().message(),
            "t:3:38: a constant of 268435456 elements written as one value is unsupported (at "
            "most 1048576); write broadcast(constant(v))");
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
