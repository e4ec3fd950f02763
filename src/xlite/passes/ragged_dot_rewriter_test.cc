#include "xlite/passes/ragged_dot_rewriter.h"

#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "xlite/passes/equivalence_test_util.h"
#include "xlite/passes/expander_test_util.h"
#include "xlite/passes/pass_test_util.h"
#include "xlite/verify/verifier.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

// The interpreter accumulates every dot in f64 and rounds once; the masked
// dense dot adds exact zeros besides: the equivalence tests' 1e-6.
std::string Compare(const Literal& a, const Literal& b) { return pass_test::CompareResults(a, b); }

std::string Check(const std::string& text, bool* changed = nullptr) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "t.hlo");
  if (!module.ok()) return absl::StrCat("parse: ", module.status().ToString());
  return pass_test::CheckExpansion<RaggedDotRewriter>(**module, Compare, changed);
}

// One ragged-dot on parameters lhs and rhs and constant group sizes.
std::string RaggedModule(const std::string& lhs, const std::string& rhs, const std::string& sizes,
                         const std::string& result, const std::string& attrs) {
  return absl::StrCat("HloModule m\n\nENTRY e {\n  lhs = ", lhs, " parameter(0)\n  rhs = ", rhs,
                      " parameter(1)\n  sizes = ", sizes, "\n  ROOT r = ", result,
                      " ragged-dot(lhs, rhs, sizes), ", attrs, "\n}\n");
}

TEST(RaggedDotRewriter, NonContractingMatchesTheInterpreter) {
  // Groups that cover the rows, leave a gap at the end, overflow (clamped),
  // are empty.
  for (const std::string sizes :
       {"{3, 4, 4}", "{1, 2, 3}", "{6, 9, 2}", "{0, 11, 0}", "{0, 0, 0}"}) {
    const std::string text = RaggedModule(
        "f32[11,5]", "f32[3,5,7]", absl::StrCat("s64[3] constant(", sizes, ")"), "f32[11,7]",
        "lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, "
        "rhs_group_dims={0}");
    SCOPED_TRACE(text);
    EXPECT_EQ(Check(text), "");
  }
  // Batched, group sizes per batch, the rhs group dimension not leading,
  // mixed types.
  const std::string batched = RaggedModule(
      "bf16[2,6,4]", "bf16[2,4,3,5]", "s32[2,3] constant({{1, 2, 3}, {4, 0, 5}})", "f32[2,6,5]",
      "lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, "
      "rhs_contracting_dims={1}, lhs_ragged_dims={1}, rhs_group_dims={2}");
  SCOPED_TRACE(batched);
  bool changed = false;
  EXPECT_EQ(Check(batched, &changed), "");
  EXPECT_TRUE(changed);
  // Integers (s8 x s8 -> s32), compared bitwise.
  const std::string integers =
      RaggedModule("s8[7,3]", "s8[2,3,4]", "u32[2] constant({3, 2})", "s32[7,4]",
                   "lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, "
                   "rhs_group_dims={0}");
  SCOPED_TRACE(integers);
  EXPECT_EQ(Check(integers), "");
}

TEST(RaggedDotRewriter, ContractingMatchesTheInterpreter) {
  for (const std::string sizes : {"{2, 3, 1}", "{1, 1, 1}", "{5, 4, 0}"}) {
    const std::string text = RaggedModule(
        "f32[4,6]", "f32[6,5]", absl::StrCat("s64[3] constant(", sizes, ")"), "f32[3,4,5]",
        "lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_ragged_dims={1}");
    SCOPED_TRACE(text);
    EXPECT_EQ(Check(text), "");
  }
  // Two contracting dimensions, the ragged one second: sizes per index of
  // the first; a batch dimension.
  const std::string text =
      RaggedModule("f32[2,3,4,5]", "f32[2,4,5,6]",
                   "s64[2,4,3] constant({{{1,2,2},{0,5,0},{3,3,3},{2,1,0}},"
                   "{{5,0,0},{1,1,1},{0,0,0},{2,2,1}}})",
                   "f32[3,2,3,6]",
                   "lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2,3}, "
                   "rhs_contracting_dims={1,2}, lhs_ragged_dims={3}");
  SCOPED_TRACE(text);
  EXPECT_EQ(Check(text), "");
}

TEST(RaggedDotRewriter, BatchMatchesTheInterpreter) {
  for (const std::string sizes : {"{2, 3}", "{1, 1}", "{0, 0}", "{4, 4}"}) {
    const std::string text = RaggedModule(
        "f32[5,3,4]", "f32[5,4,2]", absl::StrCat("s32[2] constant(", sizes, ")"), "f32[5,3,2]",
        "lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, "
        "rhs_contracting_dims={1}, lhs_ragged_dims={0}");
    SCOPED_TRACE(text);
    EXPECT_EQ(Check(text), "");
  }
  const std::string text = RaggedModule(
      "f32[3,4,2,5]", "f32[3,4,5,2]", "s64[3,2] constant({{1,1},{4,0},{0,2}})", "f32[3,4,2,2]",
      "lhs_batch_dims={0,1}, rhs_batch_dims={0,1}, lhs_contracting_dims={3}, "
      "rhs_contracting_dims={2}, lhs_ragged_dims={1}");
  SCOPED_TRACE(text);
  EXPECT_EQ(Check(text), "");
}

TEST(RaggedDotRewriter, ScheduledModuleStaysScheduled) {
  const std::string text = R"(
HloModule m, is_scheduled=true

ENTRY e {
  lhs = f32[4,3]{1,0} parameter(0)
  rhs = f32[2,3,2]{2,1,0} parameter(1)
  sizes = s32[2]{0} constant({1, 3})
  r = f32[4,2]{1,0} ragged-dot(lhs, rhs, sizes), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
  ROOT n = f32[4,2]{1,0} negate(r)
}
)";
  EXPECT_EQ(pass_test::CheckScheduleKept<RaggedDotRewriter>(text), "");
  bool changed = false;
  EXPECT_EQ(Check(text, &changed), "");
  EXPECT_TRUE(changed);
  const std::string out = pass_test::RunPass<RaggedDotRewriter>(text);
  EXPECT_NE(out.find("is_scheduled=true"), std::string::npos) << out;
  EXPECT_EQ(out.find("ragged-dot("), std::string::npos) << out;
}

TEST(RaggedDotRewriter, CorpusRaggedDotsMatchTheInterpreter) {
  const auto files = pass_test::CorpusFilesWith("ragged-dot(");
  if (files.empty()) GTEST_SKIP() << "no XLA corpus (set XLITE_CORPUS); SKIPPED";
  int changed_modules = 0;
  for (const auto& file : files) {
    absl::StatusOr<std::unique_ptr<HloModule>> module =
        ParseHloModule(pass_test::ReadFile(file), file.string());
    ASSERT_TRUE(module.ok()) << module.status();
    ASSERT_TRUE(VerifyModule(**module).ok()) << file;
    for (uint64_t seed : {1, 2, 3}) {
      absl::StatusOr<std::unique_ptr<HloModule>> copy =
          ParseHloModule(pass_test::ReadFile(file), file.string());
      ASSERT_TRUE(copy.ok());
      bool changed = false;
      EXPECT_EQ(pass_test::CheckExpansion<RaggedDotRewriter>(**copy, Compare, &changed, seed), "")
          << file;
      if (seed == 1) changed_modules += changed;
    }
  }
  std::cout << "ragged-dot-rewriter on the XLA corpus: " << files.size() << " modules, "
            << changed_modules << " rewritten, all matching on 3 seeds\n";
  EXPECT_EQ(changed_modules, static_cast<int>(files.size()));
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
