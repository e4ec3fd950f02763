#include "xlite/ir/identical.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "xlite/ir/module.h"
#include "xlite/text/parser.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

std::unique_ptr<HloModule> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "t.hlo");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

const HloComputation* Find(const HloModule& m, const std::string& name) {
  for (const auto& c : m.computations()) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

const HloInstruction* FindInstr(const HloComputation& c, const std::string& name) {
  for (const auto& i : c.instructions()) {
    if (i->name() == name) return i.get();
  }
  return nullptr;
}

bool ByIdentity(const HloInstruction* a, const HloInstruction* b) { return a == b; }
bool NoComputations(const HloComputation* a, const HloComputation* b) { return a == b; }
size_t HashOperand(const HloInstruction* i) { return absl::HashOf(i); }

TEST(Identical, ComparesWhatAnInstructionComputes) {
  std::unique_ptr<HloModule> m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  q = f32[2,3] parameter(1)
  a = f32[2,3] add(p, q), metadata={op_name="a"}
  b = f32[2,3] add(p, q), metadata={op_name="b"}
  c = f32[2,3] add(q, p)
  d = f32[2,3]{0,1} add(p, q)
  s = f32[2,3] subtract(p, q)
  t = f32[2,3] subtract(q, p)
  k1 = f32[2] constant({1, 2})
  k2 = f32[2] constant({1, 2})
  k3 = f32[2] constant({1, 3})
  z1 = f32[] constant(0)
  z2 = f32[] constant(-0)
  ROOT r = (f32[2,3]) tuple(a)
})");
  ASSERT_NE(m, nullptr);
  const HloComputation& e = *m->entry_computation();
  auto same = [&](const char* x, const char* y) {
    return Identical(*FindInstr(e, x), *FindInstr(e, y), ByIdentity, NoComputations);
  };
  auto commuted = [&](const char* x, const char* y) {
    return IdenticalIgnoringCommutativeOperandOrder(*FindInstr(e, x), *FindInstr(e, y), ByIdentity,
                                                    NoComputations);
  };
  EXPECT_TRUE(same("a", "b"));      // metadata is no part of it
  EXPECT_FALSE(same("a", "c"));     // operand order counts ...
  EXPECT_TRUE(commuted("a", "c"));  // ... unless the op commutes
  EXPECT_FALSE(commuted("s", "t"));
  EXPECT_FALSE(same("a", "d"));  // layout counts
  EXPECT_FALSE(same("a", "s"));
  EXPECT_TRUE(same("k1", "k2"));  // constants by value
  EXPECT_FALSE(same("k1", "k3"));
  EXPECT_FALSE(same("z1", "z2"));  // bit for bit: 0 and -0 differ
  auto hash = [&](const char* x) { return HashInstruction(*FindInstr(e, x), HashOperand); };
  EXPECT_EQ(hash("a"), hash("b"));
  EXPECT_EQ(hash("a"), hash("c"));  // either order of a commutative op
  EXPECT_EQ(hash("k1"), hash("k2"));
  EXPECT_NE(hash("k1"), hash("k3"));
}

constexpr char kComputations[] = R"(
HloModule m
f {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  n = f32[4] negate(x)
  ROOT r = f32[4] multiply(n, y)
}
f_renamed {
  y2 = f32[4] parameter(1)
  x2 = f32[4] parameter(0)
  n2 = f32[4] negate(x2)
  ROOT r2 = f32[4] multiply(n2, y2)
}
f_swapped {
  x3 = f32[4] parameter(0)
  y3 = f32[4] parameter(1)
  n3 = f32[4] negate(y3)
  ROOT r3 = f32[4] multiply(n3, x3)
}
f_dead {
  x4 = f32[4] parameter(0)
  y4 = f32[4] parameter(1)
  n4 = f32[4] negate(x4)
  ROOT r4 = f32[4] multiply(x4, y4)
}
ENTRY e {
  p = f32[4] parameter(0)
  ROOT c = f32[4] call(p, p), to_apply=f
}
)";

TEST(Identical, ComputationsCompareStructurally) {
  std::unique_ptr<HloModule> m = Parse(kComputations);
  ASSERT_NE(m, nullptr);
  StructuralComputationEquality equal;
  const HloComputation* f = Find(*m, "f");
  EXPECT_TRUE(equal(f, Find(*m, "f_renamed")));   // names and order are no part of it
  EXPECT_FALSE(equal(f, Find(*m, "f_swapped")));  // parameters pair by number
  EXPECT_FALSE(equal(f, Find(*m, "f_dead")));     // n4 is not reachable from the root
  EXPECT_FALSE(equal(f, m->entry_computation()));
  EXPECT_TRUE(equal(Find(*m, "f_renamed"), f));  // symmetric, and remembered
}

// A long chain is walked with a worklist, not recursion.
TEST(Identical, DeepChainsDoNotExhaustTheStack) {
  constexpr int kLength = 200000;
  std::string text = "HloModule m\n";
  for (const char* name : {"a", "b"}) {
    absl::StrAppend(&text, name, " {\n  v0 = f32[] parameter(0)\n");
    for (int i = 1; i < kLength; ++i)
      absl::StrAppend(&text, "  v", i, " = f32[] negate(v", i - 1, ")\n");
    absl::StrAppend(&text, "  ROOT r = f32[] abs(v", kLength - 1, ")\n}\n");
  }
  absl::StrAppend(&text,
                  "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=a\n}\n");
  std::unique_ptr<HloModule> m = Parse(text);
  ASSERT_NE(m, nullptr);
  StructuralComputationEquality equal;
  EXPECT_TRUE(equal(Find(*m, "a"), Find(*m, "b")));
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
