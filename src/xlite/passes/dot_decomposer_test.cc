#include "xlite/passes/dot_decomposer.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xlite/passes/equivalence_test_util.h"
#include "xlite/passes/pass_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

namespace fs = std::filesystem;

std::string Decompose(const std::string& text, bool* changed = nullptr) {
  return pass_test::RunPass<DotDecomposer>(text, changed, /*then_dce=*/false);
}

// Every dot of the printed module is canonical.
void ExpectAllCanonical(const std::string& text) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "out.hlo");
  ASSERT_TRUE(m.ok()) << m.status();
  for (const auto& c : (*m)->computations()) {
    for (const auto& i : c->instructions()) {
      if (i->opcode() == HloOpcode::kDot) {
        EXPECT_TRUE(IsCanonicalDot(*i)) << i->name();
      }
    }
  }
}

TEST(DotDecomposer, BatchAndContractingGroupsBecomeOneDimensionEach) {
  bool changed = false;
  const std::string out = Decompose(R"(
HloModule m
ENTRY e {
  a = f32[2,3,4,5] parameter(0)
  b = f32[4,2,5,6,7] parameter(1)
  ROOT d = f32[2,3,6,7] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={1}, lhs_contracting_dims={2,3}, rhs_contracting_dims={0,2}, operand_precision={high,default}
})",
                                    &changed);
  EXPECT_TRUE(changed);
  EXPECT_NE(out.find("%d.lhs_reshape = f32[2,3,20]{2,1,0} reshape(f32[2,3,4,5]{3,2,1,0} %a)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("transpose(f32[4,2,5,6,7]{4,3,2,1,0} %b), dimensions={1,0,2,3,4}"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("%d.canonical = f32[2,3,42]{2,1,0} dot(f32[2,3,20]{2,1,0} %d.lhs_reshape, "
                     "f32[2,20,42]{2,1,0} %d.rhs_reshape), lhs_batch_dims={0}, "
                     "lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, "
                     "operand_precision={high,default}"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("ROOT %d.reshape = f32[2,3,6,7]{3,2,1,0} reshape(f32[2,3,42]{2,1,0} "
                     "%d.canonical)"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find(" %d = "), std::string::npos) << out;  // the old dot is gone
  ExpectAllCanonical(out);
}

TEST(DotDecomposer, CanonicalDotsStay) {
  bool changed = true;
  const std::string in = R"(
HloModule m
ENTRY e {
  a = f32[3,4] parameter(0)
  b = f32[4,5] parameter(1)
  c = bf16[2,3,4] parameter(2)
  d = bf16[2,4,5] parameter(3)
  x = f32[3,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  y = f32[2,3,5] dot(c, d), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  ROOT t = (f32[3,5], f32[2,3,5]) tuple(x, y)
})";
  const std::string out = Decompose(in, &changed);
  EXPECT_FALSE(changed);
  EXPECT_NE(out.find("%x = f32[3,5]{1,0} dot(f32[3,4]{1,0} %a, f32[4,5]{1,0} %b)"),
            std::string::npos)
      << out;
}

TEST(DotDecomposer, VectorsAndOuterProductsGetUnitDimensions) {
  const std::string out = Decompose(R"(
HloModule m
ENTRY e {
  v = f32[5] parameter(0)
  w = f32[5] parameter(1)
  u = f32[3] parameter(2)
  inner = f32[] dot(v, w), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  outer = f32[5,3] dot(v, u)
  ROOT t = (f32[], f32[5,3]) tuple(inner, outer)
})");
  EXPECT_NE(out.find("%inner.canonical = f32[1,1]{1,0} dot(f32[1,5]{1,0} %inner.lhs_reshape, "
                     "f32[5,1]{1,0} %inner.rhs_reshape)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("%outer.canonical = f32[5,3]{1,0} dot(f32[5,1]{1,0} %outer.lhs_reshape, "
                     "f32[1,3]{1,0} %outer.rhs_reshape), lhs_contracting_dims={1}, "
                     "rhs_contracting_dims={0}"),
            std::string::npos)
      << out;
  ExpectAllCanonical(out);
}

// An operand whose dimensions already run (batch, contracting, free) for the
// lhs or (batch, free, contracting) for the rhs is read transposed by the
// matmul instead of being transposed: attention's q·kᵀ, a backward pass's
// xᵀ·dy and dy·wᵀ.
TEST(DotDecomposer, OperandsInTheOtherOrderStayUntransposed) {
  const std::string out = Decompose(R"(
HloModule m
ENTRY e {
  q = f32[2,4,8,16] parameter(0)
  k = f32[2,4,8,16] parameter(1)
  x = f32[32,64] parameter(2)
  dy = f32[32,10] parameter(3)
  w = f32[64,10] parameter(4)
  s = f32[2,4,8,8] dot(q, k), lhs_batch_dims={0,1}, rhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_contracting_dims={3}
  dw = f32[64,10] dot(x, dy), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  dx = f32[32,64] dot(dy, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT t = (f32[2,4,8,8], f32[64,10], f32[32,64]) tuple(s, dw, dx)
})");
  EXPECT_EQ(out.find("transpose("), std::string::npos) << out;
  EXPECT_NE(out.find("%s.canonical = f32[8,8,8]{2,1,0} dot(f32[8,8,16]{2,1,0} %s.lhs_reshape, "
                     "f32[8,8,16]{2,1,0} %s.rhs_reshape), lhs_batch_dims={0}, "
                     "lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}"),
            std::string::npos)
      << out;
  // dw and dx are canonical as written.
  EXPECT_NE(out.find("%dw = f32[64,10]{1,0} dot(f32[32,64]{1,0} %x, f32[32,10]{1,0} %dy), "
                     "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("%dx = f32[32,64]{1,0} dot(f32[32,10]{1,0} %dy, f32[64,10]{1,0} %w), "
                     "lhs_contracting_dims={1}, rhs_contracting_dims={1}"),
            std::string::npos)
      << out;
  ExpectAllCanonical(out);
}

TEST(DotDecomposer, ScheduledModuleStaysScheduledAndControlEdgesMove) {
  const std::string out = Decompose(R"(
HloModule m, is_scheduled=true
ENTRY e {
  a = f32[3,2,4] parameter(0)
  b = f32[2,4,5] parameter(1)
  n = f32[3,2,4] negate(a)
  d = f32[2,3,5] dot(n, b), lhs_batch_dims={1}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, control-predecessors={n}
  ROOT r = f32[2,3,5] negate(d)
})");
  // The new instructions sit where the dot was, in a valid order.
  const size_t n = out.find("%n = ");
  const size_t t = out.find("%d.lhs_transpose = ");
  const size_t c = out.find("%d.canonical = ");
  const size_t r = out.find("ROOT %r = ");
  ASSERT_NE(t, std::string::npos) << out;
  EXPECT_LT(n, t);
  EXPECT_LT(t, c);
  EXPECT_LT(c, r);
  EXPECT_NE(out.find("control-predecessors={%n}"), std::string::npos) << out;
}

// Dot forms: batch and contracting dimensions in every position and order,
// several of each, vectors, outer products, mixed and integer types.
const char* const kForms[] = {
    "lhs = f32[3,4] parameter(0)\n rhs = f32[4,5] parameter(1)\n"
    " ROOT d = f32[3,5] dot(lhs, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
    "lhs = f32[4,3] parameter(0)\n rhs = f32[5,4] parameter(1)\n"
    " ROOT d = f32[3,5] dot(lhs, rhs), lhs_contracting_dims={0}, rhs_contracting_dims={1}",
    "lhs = f32[2,3,4,5] parameter(0)\n rhs = f32[4,2,5,6,7] parameter(1)\n"
    " ROOT d = f32[2,3,6,7] dot(lhs, rhs), lhs_batch_dims={0}, rhs_batch_dims={1},"
    " lhs_contracting_dims={2,3}, rhs_contracting_dims={0,2}",
    "lhs = f32[5,2,4,3,6] parameter(0)\n rhs = f32[3,6,7,5,2] parameter(1)\n"
    " ROOT d = f32[5,2,4,7] dot(lhs, rhs), lhs_batch_dims={0,1}, rhs_batch_dims={3,4},"
    " lhs_contracting_dims={4,3}, rhs_contracting_dims={1,0}",
    "lhs = f32[6,3,2] parameter(0)\n rhs = f32[2,6,3] parameter(1)\n"
    " ROOT d = f32[2,6,6] dot(lhs, rhs), lhs_batch_dims={2}, rhs_batch_dims={0},"
    " lhs_contracting_dims={1}, rhs_contracting_dims={2}",
    "lhs = f32[5] parameter(0)\n rhs = f32[5] parameter(1)\n"
    " ROOT d = f32[] dot(lhs, rhs), lhs_contracting_dims={0}, rhs_contracting_dims={0}",
    "lhs = f32[5] parameter(0)\n rhs = f32[5,3] parameter(1)\n"
    " ROOT d = f32[3] dot(lhs, rhs), lhs_contracting_dims={0}, rhs_contracting_dims={0}",
    "lhs = f32[3,5] parameter(0)\n rhs = f32[5] parameter(1)\n"
    " ROOT d = f32[3] dot(lhs, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
    "lhs = f32[4] parameter(0)\n rhs = f32[3] parameter(1)\n ROOT d = f32[4,3] dot(lhs, rhs)",
    "lhs = f32[2,3] parameter(0)\n rhs = f32[2,4] parameter(1)\n"
    " ROOT d = f32[2,3,4] dot(lhs, rhs), lhs_batch_dims={0}, rhs_batch_dims={0}",
    "lhs = f32[2,7] parameter(0)\n rhs = f32[7,2] parameter(1)\n"
    " ROOT d = f32[2] dot(lhs, rhs), lhs_batch_dims={0}, rhs_batch_dims={1},"
    " lhs_contracting_dims={1}, rhs_contracting_dims={0}",
    "lhs = s32[3,4,2] parameter(0)\n rhs = s32[2,4,5] parameter(1)\n"
    " ROOT d = s32[2,3,5] dot(lhs, rhs), lhs_batch_dims={2}, rhs_batch_dims={0},"
    " lhs_contracting_dims={1}, rhs_contracting_dims={1}",
    "lhs = bf16[3,8] parameter(0)\n rhs = bf16[5,8] parameter(1)\n"
    " ROOT d = f32[3,5] dot(lhs, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={1}",
    "lhs = s8[4,6] parameter(0)\n rhs = s8[6,4] parameter(1)\n"
    " ROOT d = s32[4,4] dot(lhs, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
    "lhs = c64[2,3,4] parameter(0)\n rhs = c64[4,2] parameter(1)\n"
    " ROOT d = c64[4,3] dot(lhs, rhs), lhs_batch_dims={2}, rhs_batch_dims={0},"
    " lhs_contracting_dims={0}, rhs_contracting_dims={1}",
    "lhs = f64[2,0,3] parameter(0)\n rhs = f64[3,2,4] parameter(1)\n"
    " ROOT d = f64[2,0,4] dot(lhs, rhs), lhs_batch_dims={0}, rhs_batch_dims={1},"
    " lhs_contracting_dims={2}, rhs_contracting_dims={0}",
    "lhs = f32[3,0] parameter(0)\n rhs = f32[0,2] parameter(1)\n"
    " ROOT d = f32[3,2] dot(lhs, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
    "lhs = f32[1,1,3] parameter(0)\n rhs = f32[3,1] parameter(1)\n"
    " ROOT d = f32[1,1,1] dot(lhs, rhs), lhs_contracting_dims={2}, rhs_contracting_dims={0}",
};

TEST(DotDecomposer, KeepsResultsOfEveryDotForm) {
  for (const char* form : kForms) {
    const std::string text = std::string("HloModule m\nENTRY e {\n ") + form + "\n}\n";
    SCOPED_TRACE(text);
    EXPECT_EQ(pass_test::CheckPassKeepsResults<DotDecomposer>(text), "");
    ExpectAllCanonical(Decompose(text));
  }
}

TEST(DotDecomposer, KeepsResultsOfTheJaxCorpusDots) {
  const fs::path dir = pass_test::JaxCorpusDir();
  if (!fs::exists(dir)) GTEST_SKIP() << "no corpus at " << dir << " (set XLITE_CORPUS); SKIPPED";
  int dots = 0, rewritten = 0;
  for (const auto& [file, module] : pass_test::JaxCorpusModules(dir)) {
    for (const auto& c : module->computations()) {
      for (const auto& i : c->instructions()) {
        if (i->opcode() != HloOpcode::kDot) continue;
        ++dots;
        std::unique_ptr<HloModule> alone = pass_test::StandaloneModule(*i);
        bool changed = false;
        EXPECT_EQ(pass_test::CheckPassKeepsResults<DotDecomposer>(*alone, &changed), "")
            << file << ": " << i->name();
        rewritten += changed;
      }
    }
  }
  std::cout << "dot-decomposer on the JAX corpus: " << dots << " dots, " << rewritten
            << " rewritten, all with unchanged results\n";
  EXPECT_GT(dots, 0);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
