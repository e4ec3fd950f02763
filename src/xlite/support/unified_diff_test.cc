#include "xlite/support/unified_diff.h"

#include "gtest/gtest.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

TEST(UnifiedDiff, EqualTextsGiveNothing) {
  EXPECT_EQ(UnifiedDiff("a\nb\n", "a\nb\n", "x", "y"), "");
}

TEST(UnifiedDiff, OneChangedLineWithContext) {
  const std::string from = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
  const std::string to = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
  EXPECT_EQ(UnifiedDiff(from, to, "before", "after"),
            "--- before\n+++ after\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
}

TEST(UnifiedDiff, InsertAndDeleteAtEnds) {
  EXPECT_EQ(UnifiedDiff("a\nb\n", "z\na\nb\n", "x", "y"),
            "--- x\n+++ y\n@@ -1,2 +1,3 @@\n+z\n a\n b\n");
  EXPECT_EQ(UnifiedDiff("a\nb\nc\n", "a\nb\n", "x", "y"),
            "--- x\n+++ y\n@@ -1,3 +1,2 @@\n a\n b\n-c\n");
}

TEST(UnifiedDiff, DistantChangesMakeTwoHunks) {
  std::string from, to;
  for (int i = 0; i < 20; ++i) {
    from += std::to_string(i) + "\n";
    to += (i == 2 || i == 17 ? "x" : std::to_string(i)) + "\n";
  }
  const std::string diff = UnifiedDiff(from, to, "a", "b");
  EXPECT_NE(diff.find("@@ -1,6 +1,6 @@\n 0\n 1\n-2\n+x\n 3\n 4\n 5\n"), std::string::npos) << diff;
  EXPECT_NE(diff.find("@@ -15,6 +15,6 @@\n 14\n 15\n 16\n-17\n+x\n 18\n 19\n"), std::string::npos)
      << diff;
}

TEST(UnifiedDiff, MovedUniqueLinesAnchorTheMatch) {
  // Unique lines in a new order: the longest increasing run is kept.
  const std::string diff = UnifiedDiff("a\nb\nc\nd\n", "b\nc\nd\na\n", "x", "y");
  EXPECT_EQ(diff, "--- x\n+++ y\n@@ -1,4 +1,4 @@\n-a\n b\n c\n d\n+a\n");
}

TEST(UnifiedDiff, RepeatedLinesUseLcs) {
  const std::string diff = UnifiedDiff("}\n}\n}\n", "}\nx\n}\n}\n", "x", "y");
  EXPECT_EQ(diff, "--- x\n+++ y\n@@ -1,3 +1,4 @@\n }\n+x\n }\n }\n");
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
