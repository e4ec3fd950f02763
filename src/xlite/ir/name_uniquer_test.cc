#include "xlite/ir/name_uniquer.h"

#include <string>

#include "gtest/gtest.h"
#include "xlite/text/parser.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

// The base when free, else the smallest free "<base>.N"; a released name is
// handed out again.
TEST(NameUniquer, GivesTheSmallestFreeSuffix) {
  auto module = ParseHloModule(R"(
HloModule m
ENTRY e {
  fusion = f32[] parameter(0)
  ROOT fusion.2 = f32[] negate(fusion)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  NameUniquer names = NameUniquer::ForInstructions(**module);
  EXPECT_EQ(names.Get("fusion"), "fusion.1");
  EXPECT_EQ(names.Get("fusion"), "fusion.3");
  EXPECT_EQ(names.Get("add"), "add");
  EXPECT_EQ(names.Get("add"), "add.1");
  names.Release("fusion.1");
  EXPECT_EQ(names.Get("fusion"), "fusion.1");
  EXPECT_EQ(names.Get("fusion"), "fusion.4");
  EXPECT_TRUE(names.TryTake("fusion.5"));
  EXPECT_FALSE(names.TryTake("fusion.5"));
  EXPECT_EQ(names.Get("fusion"), "fusion.6");
  names.Release("fusion");
  EXPECT_EQ(names.Get("fusion"), "fusion");
  names.Release("fusion.x");  // not one it gave: nothing happens
  EXPECT_EQ(names.Get("fusion"), "fusion.7");
}

// Many names from one base (a module's fusions and their param_N) come out
// in order.
TEST(NameUniquer, ManyNamesFromOneBase) {
  NameUniquer names = NameUniquer::ForComputations(HloModule("m"));
  for (int i = 0; i < 10000; ++i) names.Get("param_0");
  EXPECT_EQ(names.Get("param_0"), "param_0.10000");
}

// Released suffixes come back smallest first, one taken again meanwhile
// (TryTake) is passed over, and then Get goes on above the largest.
TEST(NameUniquer, ReleasedSuffixesComeBackSmallestFirst) {
  NameUniquer names = NameUniquer::ForComputations(HloModule("m"));
  for (int i = 0; i < 100; ++i) names.Get("f");  // f, f.1 ... f.99
  names.Release("f.70");
  names.Release("f.3");
  names.Release("f.50");
  EXPECT_TRUE(names.TryTake("f.3"));
  names.Release("f.120");  // never given: nothing happens
  EXPECT_EQ(names.Get("f"), "f.50");
  names.Release("f.10");
  EXPECT_EQ(names.Get("f"), "f.10");
  EXPECT_EQ(names.Get("f"), "f.70");
  EXPECT_TRUE(names.TryTake("f.101"));
  EXPECT_EQ(names.Get("f"), "f.100");
  EXPECT_EQ(names.Get("f"), "f.102");
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
