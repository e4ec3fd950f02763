#include "xlite/cpu/excess_precision.h"

#include <memory>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"
#include "xlite/compiler.h"
#include "xlite/cpu/cpu_test_util.h"
#include "xlite/passes/pass_test_util.h"
#include "xlite/support/status.h"
#include "xlite/text/parser.h"

namespace xlite::cpu {
namespace {
namespace XLITE_UNITY_ID {

using testing::Occurrences;

// (x + 1) - 1 in bf16: rounded after every op, 1 + 2^-10 is 1 and the result
// 0; computed in f32 inside the fusion, x comes back.
constexpr char kAddSubtract[] = R"(
HloModule m
f {
  x = bf16[4] parameter(0)
  one = bf16[] constant(1)
  b = bf16[4] broadcast(one), dimensions={}
  s = bf16[4] add(x, b)
  ROOT d = bf16[4] subtract(s, b)
}
ENTRY e {
  x = bf16[4] parameter(0)
  ROOT r = bf16[4] fusion(x), kind=kLoop, calls=f
})";

TEST(ExcessPrecision, ComputesNarrowFusionsInF32AndRoundsOnce) {
  bool changed = false;
  const std::string out =
      pass_test::RunPass<ExcessPrecision>(kAddSubtract, &changed,
                                          /*then_dce=*/true, PrintOptions::Short());
  EXPECT_TRUE(changed);
  EXPECT_NE(out.find("s = f32[4]{0} add("), std::string::npos) << out;
  EXPECT_NE(out.find("d = f32[4]{0} subtract(s, "), std::string::npos) << out;
  // The parameter and the broadcast constant are read as f32 (exactly); one
  // rounding, at the root.
  EXPECT_NE(out.find("ROOT convert"), std::string::npos) << out;
  EXPECT_EQ(Occurrences(out, "f32[4]{0} convert("), 2) << out;
  EXPECT_EQ(Occurrences(out, "bf16[4]{0} convert("), 1) << out;
}

absl::StatusOr<Literal> CompileAndRun(const std::string& text, bool excess_precision,
                                      const Literal& x) {
  std::unique_ptr<HloModule> m = testing::ParseOrDie(text);
  if (m == nullptr) return absl::InvalidArgumentError("does not parse");
  CompileOptions options;
  options.debug.allow_excess_precision = excess_precision;
  ASSIGN_OR_RETURN(std::unique_ptr<runtime::Executable> e, Compile(std::move(m), options));
  return e->ExecuteLiterals({x});
}

// The widened ops come after what reads them in the instruction list unless
// the list is put back in post order (a layer norm's f32 reduce of a bf16
// square): passes and dumps that walk a computation in its stored order
// would meet a use before its definition.
TEST(ExcessPrecision, LeavesTheFusedComputationInPostOrder) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(
HloModule m, is_scheduled=true
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
f {
  x = bf16[8,16] parameter(0)
  sq = bf16[8,16] multiply(x, x)
  wide = f32[8,16] convert(sq)
  z = f32[] constant(0)
  ROOT r = f32[8] reduce(wide, z), dimensions={1}, to_apply=sum
}
ENTRY e {
  x = bf16[8,16] parameter(0)
  ROOT r = f32[8] fusion(x), kind=kLoop, calls=f
})",
                                                                     "t.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<bool> changed = ExcessPrecision().Run(**module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  const HloComputation* fused = (*module)->GetComputationWithName("f");
  ASSERT_NE(fused, nullptr);
  absl::flat_hash_set<const HloInstruction*> defined;
  for (const auto& instr : fused->instructions()) {
    for (const HloInstruction* op : instr->operands()) {
      EXPECT_TRUE(defined.contains(op))
          << op->name() << " is read by " << instr->name() << " before the line defining it";
    }
    defined.insert(instr.get());
  }
}

TEST(ExcessPrecision, TheFlagDecidesBetweenOneRoundingAndTheInterpretersRounding) {
  // The same program unfused: the fusion pass makes the fusion.
  const std::string text = R"(
HloModule m
ENTRY e {
  x = bf16[4] parameter(0)
  one = bf16[] constant(1)
  b = bf16[4] broadcast(one), dimensions={}
  s = bf16[4] add(x, b)
  ROOT d = bf16[4] subtract(s, b)
})";
  Literal x(Shape::Array(PrimitiveType::BF16, {4}));
  for (int64_t i = 0; i < 4; ++i) x.SetDouble(i, 0.0009765625 * (i + 1));  // 2^-10 (i+1)
  absl::StatusOr<Literal> kept = CompileAndRun(text, /*excess_precision=*/true, x);
  ASSERT_TRUE(kept.ok()) << kept.status();
  absl::StatusOr<Literal> rounded = CompileAndRun(text, /*excess_precision=*/false, x);
  ASSERT_TRUE(rounded.ok()) << rounded.status();
  std::unique_ptr<HloModule> reference = testing::ParseOrDie(text);
  absl::StatusOr<Literal> interpreted = Evaluate(*reference, {x});
  ASSERT_TRUE(interpreted.ok()) << interpreted.status();
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(kept->GetDouble(i), x.GetDouble(i)) << i;
    EXPECT_EQ(rounded->GetDouble(i), interpreted->GetDouble(i)) << i;
  }
  EXPECT_EQ(rounded->GetDouble(0), 0.0);  // 1 + 2^-10 rounds to 1 in bf16
}

TEST(ExcessPrecision, LeavesExplicitRoundingAndOtherTypesAlone) {
  bool changed = true;
  const std::string out =
      pass_test::RunPass<ExcessPrecision>(R"(
HloModule m
f {
  x = f32[4] parameter(0)
  c = bf16[4] convert(x)
  y = f32[4] parameter(1)
  ROOT a = f32[4] add(x, y)
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  ROOT r = f32[4] fusion(x, y), kind=kLoop, calls=f
})",
                                          &changed, /*then_dce=*/false, PrintOptions::Short());
  EXPECT_FALSE(changed) << out;
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::cpu
