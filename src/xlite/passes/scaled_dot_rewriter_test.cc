#include "xlite/passes/scaled_dot_rewriter.h"

#include <cmath>
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

// Exact products in both; the interpreter's dots accumulate in f64 either
// way: the equivalence tests' relative 1e-6.
std::string Compare(const Literal& a, const Literal& b) { return pass_test::CompareResults(a, b); }

std::string Check(const std::string& text, bool* changed = nullptr) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "t.hlo");
  if (!module.ok()) return absl::StrCat("parse: ", module.status().ToString());
  return pass_test::CheckExpansion<ScaledDotRewriter>(**module, Compare, changed);
}

// A scaled-dot on parameter operands and positive power-of-two scales made
// from parameters (|p| + 0.25 rounded to e8m0, or `scale_type`).
std::string ScaledModule(const std::string& lhs, const std::string& rhs,
                         const std::string& lhs_scale_dims, const std::string& rhs_scale_dims,
                         const std::string& result, const std::string& attrs,
                         const std::string& scale_type = "f8e8m0fnu") {
  auto scale = [&](const std::string& name, const std::string& dims, int param) {
    return absl::StrCat(
        "  ", name, "_p = f32", dims, " parameter(", param, ")\n  ", name, "_abs = f32", dims,
        " abs(", name, "_p)\n  ", name, "_q = f32[] constant(0.25)\n  ", name, "_qs = f32", dims,
        " broadcast(", name, "_q), dimensions={}\n  ", name, "_pos = f32", dims, " add(", name,
        "_abs, ", name, "_qs)\n  ", name, " = ", scale_type, dims, " convert(", name, "_pos)\n");
  };
  return absl::StrCat("HloModule m\n\nENTRY e {\n  lhs = ", lhs, " parameter(0)\n  rhs = ", rhs,
                      " parameter(1)\n", scale("ls", lhs_scale_dims, 2),
                      scale("rs", rhs_scale_dims, 3), "  ROOT d = ", result,
                      " scaled-dot(lhs, rhs, ls, rs), ", attrs, "\n}\n");
}

TEST(ScaledDotRewriter, MatchesTheInterpreter) {
  const std::string dims = "lhs_contracting_dims={1}, rhs_contracting_dims={1}";
  for (const std::string type : {"f8e4m3fn", "f8e5m2", "bf16", "f16", "f32"}) {
    for (const auto& [ls, rs] : std::vector<std::pair<std::string, std::string>>{
             {"[2,4]", "[6,4]"}, {"[2,32]", "[6,2]"}, {"[]", "[]"}, {"[2,1]", "[]"}}) {
      const std::string text = ScaledModule(absl::StrCat(type, "[2,32]"),
                                            absl::StrCat(type, "[6,32]"), ls, rs, "f32[2,6]", dims);
      SCOPED_TRACE(text);
      bool changed = false;
      EXPECT_EQ(Check(text, &changed), "");
      EXPECT_TRUE(changed);
    }
  }
  // Batched, f64 result, f32 scales.
  const std::string batched = ScaledModule(
      "f64[3,4,8]", "f64[3,8,5]", "[3,4,2]", "[3,4,5]", "f64[3,4,5]",
      "lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}",
      "f32");
  SCOPED_TRACE(batched);
  EXPECT_EQ(Check(batched), "");
}

TEST(ScaledDotRewriter, ScheduledModuleStaysScheduled) {
  const std::string text = R"(
HloModule m, is_scheduled=true

ENTRY e {
  a = f8e4m3fn[2,8]{1,0} parameter(0)
  b = f8e4m3fn[3,8]{1,0} parameter(1)
  sa = f8e8m0fnu[2,2]{1,0} constant({{1, 2}, {4, 0.5}})
  sb = f8e8m0fnu[3,1]{1,0} constant({{2}, {1}, {8}})
  d = f32[2,3]{1,0} scaled-dot(a, b, sa, sb), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT n = f32[2,3]{1,0} negate(d)
}
)";
  EXPECT_EQ(pass_test::CheckScheduleKept<ScaledDotRewriter>(text), "");
  bool changed = false;
  EXPECT_EQ(Check(text, &changed), "");
  EXPECT_TRUE(changed);
  const std::string out = pass_test::RunPass<ScaledDotRewriter>(text);
  EXPECT_NE(out.find("is_scheduled=true"), std::string::npos) << out;
  EXPECT_EQ(out.find("scaled-dot("), std::string::npos) << out;
  EXPECT_NE(out.find("f32[2,2,4]{2,1,0} broadcast("), std::string::npos) << out;
}

TEST(ScaledDotRewriter, CorpusScaledDotsMatchTheInterpreter) {
  const auto files = pass_test::CorpusFilesWith("scaled-dot(");
  if (files.empty()) GTEST_SKIP() << "no XLA corpus (set XLITE_CORPUS); SKIPPED";
  int changed_modules = 0, alone_checked = 0;
  for (const auto& file : files) {
    absl::StatusOr<std::unique_ptr<HloModule>> module =
        ParseHloModule(pass_test::ReadFile(file), file.string());
    ASSERT_TRUE(module.ok()) << module.status();
    ASSERT_TRUE(VerifyModule(**module).ok()) << file;
    // Random e8m0 scales are mostly NaN (negative values); each scaled-dot
    // alone also runs on powers of two from 2^-3 to 2^3, finite results.
    for (const auto& c : (*module)->computations()) {
      for (const auto& i : c->instructions()) {
        if (i->opcode() != HloOpcode::kScaledDot) continue;
        std::unique_ptr<HloModule> alone = pass_test::StandaloneModule(*i);
        absl::StatusOr<std::vector<Literal>> args =
            MakeFakeArguments(*alone, FakeDataKind::kRandom, 1);
        ASSERT_TRUE(args.ok()) << args.status();
        for (size_t a = 2; a < args->size(); ++a) {
          Literal& scale = (*args)[a];
          for (int64_t e = 0; e < scale.element_count(); ++e) {
            scale.SetDouble(e, std::ldexp(1.0, static_cast<int>(e % 7) - 3));
          }
        }
        EXPECT_EQ(pass_test::CheckExpansionOn<ScaledDotRewriter>(*alone, *args, Compare), "")
            << file << ": " << i->name();
        absl::StatusOr<Literal> result = Evaluate(*alone, *args);
        ASSERT_TRUE(result.ok());
        int finite = 0;
        for (int64_t e = 0; e < result->element_count(); ++e) {
          finite += std::isfinite(result->GetDouble(e));
        }
        EXPECT_EQ(finite, result->element_count()) << file;
        ++alone_checked;
      }
    }
    bool changed = false;
    EXPECT_EQ(pass_test::CheckExpansion<ScaledDotRewriter>(**module, Compare, &changed), "")
        << file;
    changed_modules += changed;
  }
  std::cout << "scaled-dot-rewriter on the XLA corpus: " << files.size() << " modules, "
            << changed_modules << " rewritten, " << alone_checked
            << " scaled-dots alone on finite scales, all matching\n";
  EXPECT_GT(alone_checked, 0);
  EXPECT_EQ(changed_modules, static_cast<int>(files.size()));
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
