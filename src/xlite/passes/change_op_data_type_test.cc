#include "xlite/passes/change_op_data_type.h"

#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "xlite/passes/expander_test_util.h"
#include "xlite/passes/pass_test_util.h"
#include "xlite/verify/verifier.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

// The registered form, as the registry builds it.
class HostLinalgDataType : public HloPass {
 public:
  absl::string_view name() const override { return "change-op-data-type"; }
  absl::StatusOr<bool> Run(HloModule& module) override {
    return ChangeOpDataType::ForHostLinalg()->Run(module);
  }
};

// The interpreter rounds its f64 factor once; the f32 one rounds at the end
// too: within two ulps of the narrow type.
double Tolerance(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::F16:
      return 2e-3;
    case PrimitiveType::BF16:
      return 1.6e-2;
    case PrimitiveType::F32:
      return 1e-5;
    default:
      return 1e-12;
  }
}

std::string Compare(const Literal& a, const Literal& b) {
  return pass_test::CompareWithin(a, b, Tolerance);
}

std::string Check(const std::string& text, bool* changed = nullptr) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "t.hlo");
  if (!module.ok()) return absl::StrCat("parse: ", module.status().ToString());
  return pass_test::CheckExpansion<HostLinalgDataType>(**module, Compare, changed);
}

// A batch of symmetric positive definite n x n matrices x x^T + n I in
// `type`, factored with lower=`lower`.
std::string CholeskyModule(const std::string& type, int n, bool lower) {
  const std::string m = absl::StrCat("[3,", n, ",", n, "]");
  return absl::StrCat(
      R"(
HloModule m

ENTRY e {
  x = f32)",
      m, R"( parameter(0)
  xxt = f32)",
      m,
      R"( dot(x, x), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
  i0 = s32)",
      m, R"( iota(), iota_dimension=1
  i1 = s32)",
      m, R"( iota(), iota_dimension=2
  diagonal = pred)",
      m, R"( compare(i0, i1), direction=EQ
  n = f32[] constant()",
      n, R"()
  ns = f32)",
      m, R"( broadcast(n), dimensions={}
  zero = f32[] constant(0)
  zeros = f32)",
      m, R"( broadcast(zero), dimensions={}
  shift = f32)",
      m, R"( select(diagonal, ns, zeros)
  spd = f32)",
      m, R"( add(xxt, shift)
  a = )",
      type, m, R"( convert(spd)
  ROOT l = )",
      type, m, R"( cholesky(a), lower=)", lower ? "true" : "false", "\n}\n");
}

TEST(ChangeOpDataType, NarrowFloatCholeskyMatchesTheInterpreter) {
  for (const std::string type : {"f16", "bf16"}) {
    for (int n : {1, 4, 7}) {
      for (bool lower : {true, false}) {
        const std::string text = CholeskyModule(type, n, lower);
        SCOPED_TRACE(text);
        bool changed = false;
        EXPECT_EQ(Check(text, &changed), "");
        EXPECT_TRUE(changed);
      }
    }
  }
}

TEST(ChangeOpDataType, NarrowFloatTriangularSolveMatchesTheInterpreter) {
  for (const std::string type : {"f16", "bf16"}) {
    for (const std::string options :
         {"left_side=true, lower=true, unit_diagonal=false, transpose_a=NO_TRANSPOSE",
          "left_side=false, lower=false, unit_diagonal=true, transpose_a=TRANSPOSE"}) {
      const std::string text =
          absl::StrCat(R"(
HloModule m

ENTRY e {
  p = f32[2,4,4] parameter(0)
  four = f32[] constant(4)
  fours = f32[2,4,4] broadcast(four), dimensions={}
  i0 = s32[2,4,4] iota(), iota_dimension=1
  i1 = s32[2,4,4] iota(), iota_dimension=2
  diagonal = pred[2,4,4] compare(i0, i1), direction=EQ
  shifted = f32[2,4,4] add(p, fours)
  wide = f32[2,4,4] select(diagonal, shifted, p)
  a = )",
                       type, R"([2,4,4] convert(wide)
  b = )",
                       type, R"([2,4,4] parameter(1)
  ROOT x = )",
                       type, R"([2,4,4] triangular-solve(a, b), )", options, "\n}\n");
      SCOPED_TRACE(text);
      bool changed = false;
      EXPECT_EQ(Check(text, &changed), "");
      EXPECT_TRUE(changed);
    }
  }
}

TEST(ChangeOpDataType, LeavesTypesTheKernelsTakeAlone) {
  for (const std::string type : {"f32", "f64"}) {
    bool changed = true;
    pass_test::RunPass<HostLinalgDataType>(CholeskyModule(type, 3, true), &changed);
    EXPECT_FALSE(changed) << type;
  }
}

TEST(ChangeOpDataType, ScheduledModuleStaysScheduled) {
  const std::string text = R"(
HloModule m, is_scheduled=true

ENTRY e {
  a = f16[2,2]{1,0} constant({{4, 2}, {2, 3}})
  l = f16[2,2]{1,0} cholesky(a), lower=true
  ROOT n = f16[2,2]{1,0} negate(l)
}
)";
  EXPECT_EQ(pass_test::CheckScheduleKept<HostLinalgDataType>(text), "");
  bool changed = false;
  EXPECT_EQ(Check(text, &changed), "");
  EXPECT_TRUE(changed);
  const std::string out = pass_test::RunPass<HostLinalgDataType>(text);
  EXPECT_NE(out.find("is_scheduled=true"), std::string::npos) << out;
  EXPECT_NE(out.find("f32[2,2]{1,0} cholesky("), std::string::npos) << out;
  EXPECT_NE(out.find("lower=true"), std::string::npos) << out;
}

// Every corpus module with a cholesky: those of narrow floats change, all
// keep their results.
TEST(ChangeOpDataType, CorpusCholeskyModulesMatchTheInterpreter) {
  const auto files = pass_test::CorpusFilesWith("cholesky(");
  if (files.empty()) GTEST_SKIP() << "no XLA corpus (set XLITE_CORPUS); SKIPPED";
  int changed_modules = 0, checked = 0;
  for (const auto& file : files) {
    absl::StatusOr<std::unique_ptr<HloModule>> module =
        ParseHloModule(pass_test::ReadFile(file), file.string());
    ASSERT_TRUE(module.ok()) << module.status();
    if (!VerifyModule(**module).ok()) continue;
    bool changed = false;
    EXPECT_EQ(pass_test::CheckExpansion<HostLinalgDataType>(**module, Compare, &changed), "")
        << file;
    ++checked;
    changed_modules += changed;
  }
  std::cout << "change-op-data-type on the XLA corpus: " << files.size()
            << " modules with cholesky, " << checked << " valid, " << changed_modules
            << " changed, all matching\n";
  EXPECT_GT(changed_modules, 0);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
