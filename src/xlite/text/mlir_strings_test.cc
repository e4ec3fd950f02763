#include "xlite/text/mlir_strings.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

std::string Read(absl::string_view text, absl::string_view what = "a string") {
  Cursor c(text, "t");
  absl::StatusOr<std::string> s = ParseMlirString(c, what);
  if (!s.ok()) return std::string("error: ") + std::string(s.status().message());
  return *s + (c.AtEnd() ? "" : "|rest");
}

TEST(MlirStrings, BareIdentifiers) {
  EXPECT_TRUE(IsMlirBareIdentifier("main"));
  EXPECT_TRUE(IsMlirBareIdentifier("_x.y$1"));
  EXPECT_FALSE(IsMlirBareIdentifier(""));
  EXPECT_FALSE(IsMlirBareIdentifier("1x"));
  EXPECT_FALSE(IsMlirBareIdentifier("my mesh"));
  EXPECT_FALSE(IsMlirBareIdentifier("a-b"));
}

TEST(MlirStrings, QuoteAndReadBack) {
  const std::string raw = std::string("a\"b\\c\nd\te\x01\x7f\xc3\xa9", 13);
  const std::string quoted = QuoteMlirString(raw);
  EXPECT_EQ(quoted, "\"a\\\"b\\\\c\\nd\\te\\01\\7F\xc3\xa9\"");
  EXPECT_EQ(Read(quoted), raw);
  EXPECT_EQ(Read("  \"x\" tail"), "x|rest");
  EXPECT_EQ(Read("\"\\41\\42\""), "AB");
}

TEST(MlirStrings, ErrorsNameThePlace) {
  EXPECT_EQ(Read("x", "a quoted axis name"), "error: t:1:1: expected a quoted axis name");
  EXPECT_EQ(Read("\"abc"), "error: t:1:1: unterminated string");
  EXPECT_EQ(Read("\"a\\q\""), "error: t:1:3: bad escape in string");
  EXPECT_EQ(Read("\"a\\"), "error: t:1:1: unterminated string");
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
