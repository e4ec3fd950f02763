// SortKeyOf on the comparators JAX emits and on ones it must leave alone, and
// sorts through the radix path and its fallback against the interpreter,
// bit for bit, on keys holding NaNs of both signs, zeros of both signs and
// ties.
#include "xlite/cpu/sort_key.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "xlite/cpu/cpu_test_util.h"
#include "xlite/runtime/task_runner.h"
#include "xlite/runtime/thread_pool.h"

namespace xlite::cpu {
namespace {
namespace XLITE_UNITY_ID {

using testing::ParseOrDie;

// JAX's comparator for a float sort (jnp.sort / argsort; the canonicalized
// total order), over a TYPE key and an s32 payload.
constexpr char kJaxArgsort[] = R"(
HloModule m
cmp {
  a = TYPE[] parameter(0)
  b = TYPE[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  nan = TYPE[] constant(nan)
  zero = TYPE[] constant(0)
  a_nan = pred[] compare(a, a), direction=NE
  a_zero = pred[] compare(a, zero), direction=EQ
  a0 = TYPE[] select(a_zero, zero, a)
  a1 = TYPE[] select(a_nan, nan, a0)
  b_nan = pred[] compare(b, b), direction=NE
  b_zero = pred[] compare(b, zero), direction=EQ
  b0 = TYPE[] select(b_zero, zero, b)
  b1 = TYPE[] select(b_nan, nan, b0)
  ROOT lt = pred[] compare(a1, b1), direction=LT, type=TOTALORDER
}
ENTRY e {
  x = TYPE[3,40] parameter(0)
  iota = s32[3,40] iota(), iota_dimension=1
  ROOT s = (TYPE[3,40], s32[3,40]) sort(x, iota), dimensions={1}, is_stable=true, to_apply=cmp
})";

std::string WithType(std::string text, const std::string& type) {
  for (size_t at = text.find("TYPE"); at != std::string::npos; at = text.find("TYPE", at)) {
    text.replace(at, 4, type);
  }
  return text;
}

// A one-operand sort of x: TYPE[50] by `root`, a compare of p0 and p1.
std::string OneOperandSort(const std::string& type, const std::string& root) {
  return WithType(R"(
HloModule m
cmp {
  p0 = TYPE[] parameter(0)
  p1 = TYPE[] parameter(1)
  ROOT c = pred[] )" + root +
                      R"(
}
ENTRY e {
  x = TYPE[50] parameter(0)
  ROOT s = TYPE[50] sort(x), dimensions={0}, to_apply=cmp
})",
                  type);
}

std::optional<hostlib::SortKey> KeyOf(const std::string& text) {
  std::unique_ptr<HloModule> m = ParseOrDie(text);
  if (m == nullptr) return std::nullopt;
  const HloInstruction* sort = m->entry_computation()->root_instruction();
  return SortKeyOf(*sort);
}

TEST(SortKeyOf, JaxFloatComparators) {
  std::optional<hostlib::SortKey> key = KeyOf(WithType(kJaxArgsort, "bf16"));
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(key->operand, 0);
  EXPECT_EQ(key->type, hostlib::ElementType::kBF16);
  EXPECT_FALSE(key->descending);
  EXPECT_FALSE(key->ieee);
  EXPECT_EQ(key->nan_bits, 0x7FC0u);
  EXPECT_EQ(key->zero_bits, 0u);
  // Descending (jnp.sort(-x) style GT, or the parameters swapped).
  std::string gt = WithType(kJaxArgsort, "f32");
  gt.replace(gt.find("direction=LT"), 12, "direction=GT");
  ASSERT_TRUE(KeyOf(gt).has_value());
  EXPECT_TRUE(KeyOf(gt)->descending);
  EXPECT_EQ(KeyOf(gt)->nan_bits, 0x7FC00000u);
  std::string swapped = WithType(kJaxArgsort, "f32");
  swapped.replace(swapped.find("compare(a1, b1)"), 15, "compare(b1, a1)");
  ASSERT_TRUE(KeyOf(swapped).has_value());
  EXPECT_TRUE(KeyOf(swapped)->descending);
}

TEST(SortKeyOf, PlainComparesAndOrders) {
  std::optional<hostlib::SortKey> key =
      KeyOf(OneOperandSort("f32", "compare(p0, p1), direction=LT"));
  ASSERT_TRUE(key.has_value());
  EXPECT_TRUE(key->ieee);
  key = KeyOf(OneOperandSort("f32", "compare(p0, p1), direction=GT, type=TOTALORDER"));
  ASSERT_TRUE(key.has_value());
  EXPECT_TRUE(key->descending);
  EXPECT_FALSE(key->ieee);
  EXPECT_FALSE(key->nan_bits.has_value());
  key = KeyOf(OneOperandSort("f16", "compare(p0, p1), direction=LT, order=WEAK"));
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(key->nan_bits, 0x7FFFu);
  EXPECT_EQ(key->zero_bits, 0u);
  key = KeyOf(OneOperandSort("s8", "compare(p0, p1), direction=GT"));
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(key->type, hostlib::ElementType::kS8);
  EXPECT_TRUE(key->descending);
  ASSERT_TRUE(KeyOf(OneOperandSort("u32", "compare(p1, p0), direction=LT")).has_value());
  EXPECT_TRUE(KeyOf(OneOperandSort("u32", "compare(p1, p0), direction=LT"))->descending);
}

TEST(SortKeyOf, LeavesOtherComparatorsToTheComparator) {
  for (const std::string& root :
       {std::string("compare(p0, p1), direction=LE"), std::string("compare(p0, p0), direction=LT"),
        std::string("compare(p0, p1), direction=EQ")}) {
    EXPECT_FALSE(KeyOf(OneOperandSort("f32", root)).has_value()) << root;
  }
  EXPECT_FALSE(KeyOf(OneOperandSort("c64", "compare(p0, p1), direction=LT")).has_value());
  EXPECT_FALSE(
      KeyOf(OneOperandSort("s32", "compare(p0, p1), direction=LT, type=UNSIGNED")).has_value());
  // Arithmetic on the key: not an order by the key's value.
  EXPECT_FALSE(KeyOf(R"(
HloModule m
cmp {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  n0 = f32[] negate(p0)
  ROOT c = pred[] compare(n0, p1), direction=LT
}
ENTRY e {
  x = f32[50] parameter(0)
  ROOT s = f32[50] sort(x), dimensions={0}, to_apply=cmp
})")
                   .has_value());
  // A canonicalization that substitutes something other than NaN.
  std::string not_nan = WithType(kJaxArgsort, "f32");
  not_nan.replace(not_nan.find("constant(nan)"), 13, "constant(1)");
  EXPECT_FALSE(KeyOf(not_nan).has_value());
}

// Every element's bits in hex, tuples flattened.
std::string Bits(const Literal& l) {
  std::string out;
  if (l.shape().IsTuple()) {
    for (const Literal& e : l.tuple_elements()) out += Bits(e) + "| ";
    return out;
  }
  for (int64_t i = 0; i < l.element_count(); ++i) out += absl::StrFormat("%x ", l.GetBits(i));
  return out;
}

// Runs `text` on `x` compiled (on three threads) and in the interpreter;
// expects the same bits and, in the thunk listing, `thunk_detail`.
void ExpectSortMatchesInterpreter(const std::string& text, const Literal& x,
                                  const std::string& thunk_detail) {
  std::unique_ptr<HloModule> reference = ParseOrDie(text);
  ASSERT_NE(reference, nullptr);
  absl::StatusOr<Literal> expected = Evaluate(*reference, {x});
  ASSERT_TRUE(expected.ok()) << expected.status();
  absl::StatusOr<std::unique_ptr<runtime::Executable>> e = testing::CompileText(text);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_NE((*e)->thunks().ToString().find(thunk_detail), std::string::npos)
      << (*e)->thunks().ToString();
  runtime::ThreadPool pool(3);
  runtime::PoolTaskRunner runner(pool);
  for (cpu::TaskRunner* r :
       {static_cast<cpu::TaskRunner*>(nullptr), static_cast<cpu::TaskRunner*>(&runner)}) {
    runtime::ExecuteOptions options;
    options.runner = r;
    absl::StatusOr<Literal> got = (*e)->ExecuteLiterals({x}, options);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(Bits(*got), Bits(*expected));
  }
}

TEST(SortKeyOf, RadixSortsAgreeWithTheInterpreter) {
  const uint16_t bf16[] = {0x7FC0, 0xFFC0, 0x7F81, 0x0000, 0x8000, 0x7F80, 0xFF80,
                           0x3F80, 0xBF80, 0x4000, 0x3F80, 0x0001, 0x8001, 0xC000};
  Literal x(Shape::Array(PrimitiveType::BF16, {3, 40}));
  for (int64_t i = 0; i < 120; ++i) x.SetBits(i, bf16[(i * 5 + i / 7) % 14]);
  ExpectSortMatchesInterpreter(WithType(kJaxArgsort, "bf16"), x, "radix_key=0");
  std::string descending = WithType(kJaxArgsort, "bf16");
  descending.replace(descending.find("direction=LT"), 12, "direction=GT");
  ExpectSortMatchesInterpreter(descending, x, "radix_key=0 descending");
}

// IEEE `<` with a NaN among the keys is no strict weak order: the radix sort
// declines and the comparator gives the interpreter's answer; without a NaN
// the radix sort runs.
TEST(SortKeyOf, IeeeKeysWithNaNFallBackToTheComparator) {
  const std::string text = OneOperandSort("f32", "compare(p0, p1), direction=LT");
  Literal x(Shape::Array(PrimitiveType::F32, {50}));
  for (int64_t i = 0; i < 50; ++i) x.SetDouble(i, (i * 37 % 11) - 5.0);
  x.SetDouble(3, 0.0);
  x.SetDouble(4, -0.0);
  ExpectSortMatchesInterpreter(text, x, "radix_key=0");
  x.SetBits(7, 0x7FC00000);
  x.SetBits(20, 0xFFC00000);
  ExpectSortMatchesInterpreter(text, x, "radix_key=0");
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::cpu
