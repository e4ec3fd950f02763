#include "xlite/ir/heap_optional.h"

#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "xlite/ir/instruction.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

TEST(HeapOptional, BehavesAsAnOptionalWithItsValueOnTheHeap) {
  HeapOptional<std::string> empty;
  EXPECT_FALSE(empty.has_value());
  EXPECT_FALSE(empty);
  EXPECT_TRUE(empty == std::nullopt);
  EXPECT_EQ(empty.value_or("none"), "none");
  EXPECT_THROW(empty.value(), std::bad_optional_access);

  HeapOptional<std::string> a = std::string("sharding");
  HeapOptional<std::string> b = a;  // a deep copy
  b->append("!");
  EXPECT_EQ(*a, "sharding");
  EXPECT_EQ(*b, "sharding!");
  EXPECT_FALSE(a == b);
  b = a;
  EXPECT_TRUE(a == b);
  EXPECT_TRUE(a == std::string("sharding"));
  EXPECT_FALSE(a == empty);

  const auto copy = static_cast<std::optional<std::string>>(a);  // asked for by name
  EXPECT_EQ(copy, "sharding");
  HeapOptional<std::string> from_optional = std::optional<std::string>();
  EXPECT_FALSE(from_optional.has_value());
  a = std::nullopt;
  EXPECT_FALSE(a.has_value());
  a.emplace(3, 'x');
  EXPECT_EQ(*a, "xxx");
  HeapOptional<std::string> moved = std::move(a);
  EXPECT_EQ(*moved, "xxx");
  EXPECT_EQ(sizeof(HeapOptional<std::string>), sizeof(void*));
}

// The large attributes few instructions carry take a pointer each; an
// instruction with all of them inline was 4.7 KB.
TEST(HeapOptional, KeepsInstructionsSmall) {
  EXPECT_EQ(sizeof(InstructionSemantics::domain), sizeof(void*));
  EXPECT_EQ(sizeof(InstructionSemantics::sharding), sizeof(void*));
  EXPECT_LT(sizeof(HloInstruction), 2500u);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
