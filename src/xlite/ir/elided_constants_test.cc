#include "xlite/ir/elided_constants.h"

#include "gtest/gtest.h"
#include "xlite/text/parser.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

TEST(ElidedConstants, FillsWithXlasRunningCounters) {
  auto m = ParseHloModule(R"(HloModule m
ENTRY e {
  a = s32[3] constant({...})
  b = pred[6] constant({...})
  c = f32[2] constant({1, 2})
  d = u8[5] constant({...})
  ROOT t = (s32[3], pred[6], f32[2], u8[5]) tuple(a, b, c, d)
})",
                          "t.hlo");
  ASSERT_TRUE(m.ok()) << m.status();
  std::vector<std::string> filled = FillElidedConstants(**m);
  EXPECT_EQ(filled, (std::vector<std::string>{"a", "b", "d"}));
  auto lit = [&](int i) -> const Literal& {
    return *(*m)->entry_computation()->instructions()[i]->attrs().literal;
  };
  // a: words 0, 1, 2.
  EXPECT_EQ(lit(0).ToStringWithoutShapeOneline(), "{0, 1, 2}");
  // b: 6 bytes: word 3 masked to 0x01010101 gives bytes {1,0,0,0};
  // then the byte counter (0, 1) masked to 0/1 lands at bytes 6/4+0 = 1 and 2.
  EXPECT_EQ(lit(1).ToStringWithoutShapeOneline(), "{1, 0, 1, 0, 0, 0}");
  // c was written out and stays as written.
  EXPECT_EQ(lit(2).ToStringWithoutShapeOneline(), "{1, 2}");
  // d: word 4 (bytes 4,0,0,0), then bytes 2 at index 5/4+0 = 1.
  EXPECT_EQ(lit(3).ToStringWithoutShapeOneline(), "{4, 2, 0, 0, 0}");
  EXPECT_FALSE(HasElidedValues(lit(0)));
}

TEST(ElidedConstants, NothingToFillIsANoOp) {
  auto m = ParseHloModule("HloModule m\nENTRY e {\n  ROOT c = f32[2] constant({1, 2})\n}\n", "t");
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(FillElidedConstants(**m).empty());
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
