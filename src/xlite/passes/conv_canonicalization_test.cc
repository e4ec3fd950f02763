#include "xlite/passes/conv_canonicalization.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "xlite/passes/equivalence_test_util.h"
#include "xlite/passes/pass_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

namespace fs = std::filesystem;

std::string Canonicalize(const std::string& text, bool* changed = nullptr) {
  return pass_test::RunPass<ConvCanonicalization>(text, changed, /*then_dce=*/false);
}

TEST(ConvCanonicalization, TransposesIntoB01fAnd01io) {
  bool changed = false;
  const std::string out = Canonicalize(R"(
HloModule m
ENTRY e {
  a = f32[8,3,32,32] parameter(0)
  k = f32[16,3,3,3] parameter(1)
  ROOT c = f32[8,16,32,32] convolution(a, k), window={size=3x3 pad=1_1x1_1 rhs_reversal=1x0}, dim_labels=bf01_oi01->bf01, operand_precision={highest,highest}
})",
                                       &changed);
  EXPECT_TRUE(changed);
  EXPECT_NE(
      out.find("%c.input_transpose = f32[8,32,32,3]{3,2,1,0} transpose(f32[8,3,32,32]{3,2,1,0} "
               "%a), dimensions={0,2,3,1}"),
      std::string::npos)
      << out;
  EXPECT_NE(
      out.find("%c.kernel_transpose = f32[3,3,3,16]{3,2,1,0} transpose(f32[16,3,3,3]{3,2,1,0} "
               "%k), dimensions={2,3,1,0}"),
      std::string::npos)
      << out;
  EXPECT_NE(out.find("%c.canonical = f32[8,32,32,16]{3,2,1,0} convolution(f32[8,32,32,3]{3,2,1,0} "
                     "%c.input_transpose, f32[3,3,3,16]{3,2,1,0} %c.kernel_transpose), "
                     "window={size=3x3 pad=1_1x1_1 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f, "
                     "operand_precision={highest,highest}"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("ROOT %c.output_transpose = f32[8,16,32,32]{3,2,1,0} "
                     "transpose(f32[8,32,32,16]{3,2,1,0} %c.canonical), dimensions={0,3,1,2}"),
            std::string::npos)
      << out;
}

TEST(ConvCanonicalization, CanonicalConvolutionsStay) {
  bool changed = true;
  const std::string out = Canonicalize(R"(
HloModule m
ENTRY e {
  a = f32[8,32,32,3] parameter(0)
  k = f32[3,3,3,32] parameter(1)
  ROOT c = f32[8,32,32,32] convolution(a, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})",
                                       &changed);
  EXPECT_FALSE(changed);
  EXPECT_NE(out.find("ROOT %c = f32[8,32,32,32]{3,2,1,0} convolution("), std::string::npos) << out;
}

TEST(ConvCanonicalization, GroupsAndOnlyTheOperandsThatNeedIt) {
  const std::string out = Canonicalize(R"(
HloModule m
ENTRY e {
  a = f32[2,5,5,6] parameter(0)
  k = f32[9,3,3,2] parameter(1)
  ROOT c = f32[2,5,5,9] convolution(a, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_o01i->b01f, feature_group_count=3
})");
  EXPECT_EQ(out.find("input_transpose"), std::string::npos) << out;
  EXPECT_EQ(out.find("output_transpose"), std::string::npos) << out;
  EXPECT_NE(out.find("dimensions={1,2,3,0}"), std::string::npos) << out;
  EXPECT_NE(out.find("dim_labels=b01f_01io->b01f, feature_group_count=3"), std::string::npos)
      << out;
}

// Convolution forms: every dimension order, 1 to 3 spatial dimensions,
// strides, padding (negative too), dilations, reversal, groups.
const char* const kForms[] = {
    "a = f32[2,3,7,6] parameter(0)\n k = f32[4,3,3,2] parameter(1)\n"
    " ROOT c = f32[2,4,7,3] convolution(a, k), window={size=3x2 stride=1x2 pad=1_1x0_0},"
    " dim_labels=bf01_oi01->bf01",
    "a = f32[5,2,6,3] parameter(0)\n k = f32[3,2,4,2] parameter(1)\n"
    " ROOT c = f32[4,4,6,3] convolution(a, k), window={size=2x3 pad=0_0x1_1 rhs_dilate=1x1},"
    " dim_labels=0fb1_1io0->f0b1",
    "a = f32[2,9,4] parameter(0)\n k = f32[3,4,5] parameter(1)\n"
    " ROOT c = f32[2,3,5] convolution(a, k), window={size=3 stride=2 pad=0_1 rhs_dilate=2},"
    " dim_labels=b0f_0io->b0f",
    "a = f32[2,4,9] parameter(0)\n k = f32[5,4,3] parameter(1)\n"
    " ROOT c = f32[2,5,9] convolution(a, k), window={size=3 pad=1_1 rhs_reversal=1},"
    " dim_labels=bf0_oi0->bf0",
    "a = f32[1,2,4,5,3] parameter(0)\n k = f32[3,2,2,2,2] parameter(1)\n"
    " ROOT c = f32[1,3,3,4,2] convolution(a, k), window={size=2x2x2},"
    " dim_labels=bf012_oi012->bf012",
    "a = f32[2,6,5,5] parameter(0)\n k = f32[2,9,3,3] parameter(1)\n"
    " ROOT c = f32[2,9,5,5] convolution(a, k), window={size=3x3 pad=1_1x1_1},"
    " dim_labels=bf01_io01->bf01, feature_group_count=3",
    "a = f32[4,3,5,5] parameter(0)\n k = f32[3,6,2,2] parameter(1)\n"
    " ROOT c = f32[2,6,4,4] convolution(a, k), window={size=2x2}, dim_labels=bf01_io01->bf01,"
    " batch_group_count=2",
    "a = f32[2,3,4,4] parameter(0)\n k = f32[5,3,3,3] parameter(1)\n"
    " ROOT c = f32[2,5,9,9] convolution(a, k), window={size=3x3 pad=2_2x2_2 lhs_dilate=2x2},"
    " dim_labels=bf01_oi01->bf01",
    "a = f32[2,3,8,8] parameter(0)\n k = f32[4,3,3,3] parameter(1)\n"
    " ROOT c = f32[2,4,5,4] convolution(a, k), window={size=3x3 pad=-1_0x0_-2},"
    " dim_labels=bf01_oi01->bf01",
    "a = s32[2,3,5] parameter(0)\n k = s32[4,3,2] parameter(1)\n"
    " ROOT c = s32[2,4,4] convolution(a, k), window={size=2}, dim_labels=bf0_oi0->bf0",
    "a = bf16[2,3,5] parameter(0)\n k = bf16[4,3,2] parameter(1)\n"
    " ROOT c = f32[2,4,4] convolution(a, k), window={size=2}, dim_labels=bf0_oi0->bf0",
    "a = f32[3,7] parameter(0)\n k = f32[7,2] parameter(1)\n"
    " ROOT c = f32[3,2] convolution(a, k), dim_labels=bf_io->bf",
};

TEST(ConvCanonicalization, KeepsResultsOfEveryForm) {
  for (const char* form : kForms) {
    const std::string text = std::string("HloModule m\nENTRY e {\n ") + form + "\n}\n";
    SCOPED_TRACE(text);
    bool changed = false;
    EXPECT_EQ(pass_test::CheckPassKeepsResults<ConvCanonicalization>(text, &changed), "");
    const std::string out = Canonicalize(text);
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(out, "out.hlo");
    ASSERT_TRUE(m.ok()) << m.status();
    for (const auto& i : (*m)->entry_computation()->instructions()) {
      if (i->opcode() == HloOpcode::kConvolution) {
        EXPECT_TRUE(IsCanonicalConvolution(*i)) << out;
      }
    }
  }
}

TEST(ConvCanonicalization, KeepsResultsOfTheJaxCorpusConvolutions) {
  const fs::path dir = pass_test::JaxCorpusDir();
  if (!fs::exists(dir)) GTEST_SKIP() << "no corpus at " << dir << " (set XLITE_CORPUS); SKIPPED";
  int convs = 0;
  for (const auto& [file, module] : pass_test::JaxCorpusModules(dir)) {
    for (const auto& c : module->computations()) {
      for (const auto& i : c->instructions()) {
        if (i->opcode() != HloOpcode::kConvolution) continue;
        ++convs;
        std::unique_ptr<HloModule> alone = pass_test::StandaloneModule(*i);
        EXPECT_EQ(pass_test::CheckPassKeepsResults<ConvCanonicalization>(*alone), "")
            << file << ": " << i->name();
      }
    }
  }
  std::cout << "conv-canonicalization on the JAX corpus: " << convs
            << " convolutions, results unchanged\n";
  EXPECT_GT(convs, 0);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
