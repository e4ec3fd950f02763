#include "xlite/passes/batchnorm_expander.h"

#include <iostream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "xlite/passes/expander_test_util.h"
#include "xlite/passes/pass_test_util.h"
#include "xlite/verify/verifier.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

using pass_test::CheckExpansion;

// The interpreter computes in f64; the expansion in the type (f32 for
// narrower floats), its sums rounding as they go.
double Tolerance(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::F64:
      return 1e-10;
    case PrimitiveType::F32:
      return 1e-4;
    case PrimitiveType::F16:
      return 2e-3;
    default:
      return 2e-2;  // bf16
  }
}

std::string Compare(const Literal& a, const Literal& b) {
  return pass_test::CompareWithin(a, b, Tolerance);
}

std::string Check(const std::string& text, bool* changed = nullptr) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "t.hlo");
  if (!module.ok()) return absl::StrCat("parse: ", module.status().ToString());
  return CheckExpansion<BatchNormExpander>(**module, Compare, changed);
}

std::string ShapeText(const std::string& type, const std::vector<int64_t>& dims) {
  return absl::StrCat(type, "[", absl::StrJoin(dims, ","), "]");
}

// One batch-norm op of `opcode` on parameters; variances are made positive
// with abs, as real ones are.
std::string BatchNormModule(const std::string& opcode, const std::string& type,
                            const std::vector<int64_t>& dims, int64_t feature,
                            const std::string& epsilon = "0.001") {
  const std::string x = ShapeText(type, dims), f = ShapeText(type, {dims[feature]});
  const std::string attrs = absl::StrCat("epsilon=", epsilon, ", feature_index=", feature);
  std::string body;
  if (opcode == "batch-norm-training") {
    body = absl::StrCat("  x = ", x, " parameter(0)\n  scale = ", f,
                        " parameter(1)\n  offset = ", f, " parameter(2)\n  ROOT bn = (", x, ", ", f,
                        ", ", f, ") batch-norm-training(x, scale, offset), ", attrs, "\n");
  } else if (opcode == "batch-norm-inference") {
    body =
        absl::StrCat("  x = ", x, " parameter(0)\n  scale = ", f, " parameter(1)\n  offset = ", f,
                     " parameter(2)\n  mean = ", f, " parameter(3)\n  v = ", f,
                     " parameter(4)\n  var = ", f, " abs(v)\n  ROOT bn = ", x,
                     " batch-norm-inference(x, scale, offset, mean, var), ", attrs, "\n");
  } else {
    body = absl::StrCat("  x = ", x, " parameter(0)\n  scale = ", f, " parameter(1)\n  mean = ", f,
                        " parameter(2)\n  v = ", f, " parameter(3)\n  var = ", f,
                        " abs(v)\n  dy = ", x, " parameter(4)\n  ROOT bn = (", x, ", ", f, ", ", f,
                        ") batch-norm-grad(x, scale, mean, var, dy), ", attrs, "\n");
  }
  return absl::StrCat("HloModule m\n\nENTRY e {\n", body, "}\n");
}

const std::vector<std::pair<std::vector<int64_t>, int64_t>> kCases = {
    {{7}, 0},          {{5, 3}, 1},    {{5, 3}, 0},    {{2, 3, 4, 5}, 0}, {{2, 3, 4, 5}, 1},
    {{2, 3, 4, 5}, 3}, {{4, 1, 6}, 2}, {{3, 0, 2}, 0}, {{3, 0, 2}, 1}};

TEST(BatchNormExpander, MatchesTheInterpreter) {
  for (const std::string opcode :
       {"batch-norm-training", "batch-norm-inference", "batch-norm-grad"}) {
    for (const std::string type : {"f32", "f64", "f16", "bf16"}) {
      for (const auto& [dims, feature] : kCases) {
        // No elements per feature: the interpreter's grad sums are NaN (it
        // forms them as mean * 0); XLA's and this expansion's are 0.
        if (opcode == "batch-norm-grad" && dims == std::vector<int64_t>{3, 0, 2}) continue;
        const std::string text = BatchNormModule(opcode, type, dims, feature);
        SCOPED_TRACE(text);
        bool changed = false;
        EXPECT_EQ(Check(text, &changed), "");
        EXPECT_TRUE(changed);
      }
    }
  }
}

TEST(BatchNormExpander, LargeMeanKeepsTheVariance) {
  // Values around 1000 with spread 1: E[x^2] - E[x]^2 would lose the
  // variance in f32 (x^2 ~ 1e6 has ulps of 0.06, the variance is 1/3); the
  // two-pass form keeps it to f32 summation error (1e-3 here).
  const std::string text = R"(
HloModule m

ENTRY e {
  p = f32[64,3] parameter(0)
  big = f32[] constant(1000)
  bigs = f32[64,3] broadcast(big), dimensions={}
  x = f32[64,3] add(p, bigs)
  scale = f32[3] parameter(1)
  offset = f32[3] parameter(2)
  ROOT bn = (f32[64,3], f32[3], f32[3]) batch-norm-training(x, scale, offset), epsilon=1e-5, feature_index=1
}
)";
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "t.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(CheckExpansion<BatchNormExpander>(**module,
                                              [](const Literal& a, const Literal& b) {
                                                return pass_test::CompareWithin(
                                                    a, b, [](PrimitiveType) { return 1e-3; });
                                              }),
            "");
}

TEST(BatchNormExpander, ScheduledModuleStaysScheduledAndAddsOneAddPerType) {
  const std::string text = R"(
HloModule m, is_scheduled=true

ENTRY e {
  x = f32[4,2]{1,0} parameter(0)
  scale = f32[2]{0} parameter(1)
  offset = f32[2]{0} parameter(2)
  t = (f32[4,2]{1,0}, f32[2]{0}, f32[2]{0}) batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=1
  y = f32[4,2]{1,0} get-tuple-element(t), index=0
  mean = f32[2]{0} get-tuple-element(t), index=1
  var = f32[2]{0} get-tuple-element(t), index=2
  ROOT g = (f32[4,2]{1,0}, f32[2]{0}, f32[2]{0}) batch-norm-grad(x, scale, mean, var, y), epsilon=0.001, feature_index=1
}
)";
  EXPECT_EQ(pass_test::CheckScheduleKept<BatchNormExpander>(text), "");
  bool changed = false;
  EXPECT_EQ(Check(text, &changed), "");
  EXPECT_TRUE(changed);
  const std::string out = pass_test::RunPass<BatchNormExpander>(text);
  EXPECT_NE(out.find("is_scheduled=true"), std::string::npos) << out;
  EXPECT_EQ(out.find("batch-norm"), std::string::npos) << out;
  EXPECT_NE(out.find("expander_add_f32 "), std::string::npos) << out;
  EXPECT_EQ(out.find("expander_add_f32.1"), std::string::npos) << out;
}

TEST(BatchNormExpander, LeavesOtherOpsAlone) {
  bool changed = true;
  pass_test::RunPass<BatchNormExpander>(
      "HloModule m\n\nENTRY e {\n  x = f32[3] parameter(0)\n  ROOT n = f32[3] negate(x)\n}\n",
      &changed);
  EXPECT_FALSE(changed);
}

// Every batch-norm op of the XLA corpus, alone, with its type, rank, feature
// dimension (and size) and epsilon; the other dimensions are cut to at most 4
// so that the interpreter's f64 reference stays quick (mobilenet's are
// 96x...x112x112). Whole modules that verify are checked as they are when
// small.
TEST(BatchNormExpander, CorpusBatchNormsMatchTheInterpreter) {
  const auto files = pass_test::CorpusFilesWith("batch-norm-");
  if (files.empty()) GTEST_SKIP() << "no XLA corpus (set XLITE_CORPUS); SKIPPED";
  int ops = 0, configurations = 0, whole = 0;
  std::set<std::string> seen;
  for (const auto& file : files) {
    absl::StatusOr<std::unique_ptr<HloModule>> module =
        ParseHloModule(pass_test::ReadFile(file), file.string());
    ASSERT_TRUE(module.ok()) << module.status();
    int64_t elements = 0;
    for (const auto& c : (*module)->computations()) {
      for (const auto& i : c->instructions()) {
        if (i->shape().IsArray()) elements += i->shape().ElementCount();
        const HloOpcode op = i->opcode();
        if (op != HloOpcode::kBatchNormTraining && op != HloOpcode::kBatchNormInference &&
            op != HloOpcode::kBatchNormGrad) {
          continue;
        }
        ++ops;
        const Shape& x = i->operand(0)->shape();
        const int64_t feature = i->attrs().feature_index;
        std::vector<int64_t> dims = x.dimensions();
        for (int64_t d = 0; d < x.rank(); ++d) {
          if (d != feature) dims[d] = std::min<int64_t>(dims[d], 4);
        }
        const std::string text = BatchNormModule(std::string(HloOpcodeString(op)),
                                                 std::string(PrimitiveTypeName(x.element_type())),
                                                 dims, feature, absl::StrCat(i->attrs().epsilon));
        if (!seen.insert(text).second) continue;
        ++configurations;
        EXPECT_EQ(Check(text), "") << file << ": " << i->name();
      }
    }
    if (elements > 1'000'000 || !VerifyModule(**module).ok()) continue;
    bool changed = false;
    EXPECT_EQ(CheckExpansion<BatchNormExpander>(**module, Compare, &changed), "") << file;
    EXPECT_TRUE(changed) << file;
    ++whole;
  }
  std::cout << "batchnorm-expander on the XLA corpus: " << files.size() << " modules, " << ops
            << " batch-norm ops in " << configurations << " configurations, " << whole
            << " whole modules, all matching\n";
  EXPECT_GT(configurations, 0);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
