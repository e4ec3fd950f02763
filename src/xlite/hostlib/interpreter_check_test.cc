// hostlib's kernels against the reference interpreter through HLO: each case
// is a module of one instruction in the form the CPU runtime hands to
// hostlib (dots after dot-decomposer, convolutions after
// conv-canonicalization), evaluated by the interpreter and computed by the
// kernel on the same random arguments. Includes the dots and convolutions of
// the JAX corpus (cnn_b8's convolutions among them).
#include <complex>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "xlite/eval/evaluator.h"
#include "xlite/eval/fake_data.h"
#include "xlite/hostlib/convolution.h"
#include "xlite/hostlib/element_type.h"
#include "xlite/hostlib/fft.h"
#include "xlite/hostlib/linalg_ops.h"
#include "xlite/hostlib/matmul.h"
#include "xlite/hostlib/sort.h"
#include "xlite/hostlib/top_k.h"
#include "xlite/ir/computation.h"
#include "xlite/passes/conv_canonicalization.h"
#include "xlite/passes/dot_decomposer.h"
#include "xlite/passes/equivalence_test_util.h"
#include "xlite/passes/pipeline.h"
#include "xlite/support/status.h"
#include "xlite/text/parser.h"

namespace xlite::hostlib {
namespace {
namespace XLITE_UNITY_ID {

namespace fs = std::filesystem;

ElementType HostType(PrimitiveType t) { return *ElementTypeFromName(PrimitiveTypeName(t)); }

// Literals hold row-major elements of the widths hostlib uses.
void* Data(Literal& lit) { return lit.mutable_raw_data(); }

// "" when `got` matches the interpreter's `want`: integers exactly, floats
// within `tolerance` of the largest magnitude in `want` (NaN matches NaN).
std::string Compare(const Literal& want, const Literal& got, double tolerance) {
  if (want.shape().IsTuple()) {
    for (size_t i = 0; i < want.tuple_elements().size(); ++i) {
      std::string d = Compare(want.tuple_elements()[i], got.tuple_elements()[i], tolerance);
      if (!d.empty()) return absl::StrCat("{", i, "} ", d);
    }
    return "";
  }
  const PrimitiveType t = want.shape().element_type();
  double scale = 0;
  for (int64_t i = 0; i < want.element_count(); ++i) {
    const double m = std::abs(want.GetComplex(i));
    if (std::isfinite(m)) scale = std::max(scale, m);
  }
  for (int64_t i = 0; i < want.element_count(); ++i) {
    if (!IsFloatingPoint(t) && !IsComplex(t)) {
      if (want.GetBits(i) != got.GetBits(i)) {
        return absl::StrCat("element ", i, ": ", got.ElementToString(i), " vs interpreter ",
                            want.ElementToString(i));
      }
      continue;
    }
    const std::complex<double> w = want.GetComplex(i), g = got.GetComplex(i);
    const bool nan_w = std::isnan(w.real()) || std::isnan(w.imag());
    const bool nan_g = std::isnan(g.real()) || std::isnan(g.imag());
    if (nan_w || nan_g) {
      if (nan_w != nan_g) return absl::StrCat("element ", i, ": NaN mismatch");
      continue;
    }
    if (w == g) continue;
    if (!(std::abs(w - g) <= tolerance * scale)) {
      return absl::StrCat("element ", i, ": ", got.ElementToString(i), " vs interpreter ",
                          want.ElementToString(i));
    }
  }
  return "";
}

// The interpreter's result for `module` and its random arguments.
struct Reference {
  std::vector<Literal> args;
  Literal result;
};
absl::StatusOr<Reference> Interpret(const HloModule& module, uint64_t seed = 7) {
  Reference r;
  ASSIGN_OR_RETURN(r.args, MakeFakeArguments(module, FakeDataKind::kRandom, seed));
  ASSIGN_OR_RETURN(r.result, Evaluate(module, r.args));
  return r;
}

// The single instruction of a standalone module.
const HloInstruction& Root(const HloModule& m) {
  return *m.entry_computation()->root_instruction();
}

double ToleranceFor(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::F64:
    case PrimitiveType::C128:
      return 1e-12;
    case PrimitiveType::F32:
    case PrimitiveType::C64:
      return 2e-5;
    case PrimitiveType::F16:
      return 2e-3;
    case PrimitiveType::BF16:
      return 2e-2;
    default:
      return 0.1;  // f8 results
  }
}

// A canonical dot ([B,M,K]x[B,K,N] or [M,K]x[K,N]) through hostlib::Matmul.
std::string CheckCanonicalDot(const HloModule& module) {
  const HloInstruction& dot = Root(module);
  absl::StatusOr<Reference> ref = Interpret(module);
  if (!ref.ok()) return ref.status().ToString();
  const Shape& l = dot.operand(0)->shape();
  const Shape& r = dot.operand(1)->shape();
  const CanonicalDotDims dims = DimsOfCanonicalDot(dot);
  MatmulShape s;
  s.batch = dims.batch;
  s.m = dims.m;
  s.k = dims.k;
  s.n = dims.n;
  s.transpose_lhs = dims.lhs_transposed;
  s.transpose_rhs = dims.rhs_transposed;
  Literal out(Shape::Array(dot.shape().element_type(), dot.shape().dimensions()));
  absl::Status status =
      Matmul(s, HostType(l.element_type()), Data(ref->args[0]), HostType(r.element_type()),
             Data(ref->args[1]), HostType(dot.shape().element_type()), Data(out));
  if (!status.ok()) return status.ToString();
  return Compare(ref->result, out, ToleranceFor(dot.shape().element_type()));
}

// Every dot of `module` after dot-decomposer, one standalone module each.
void CheckDots(const HloModule& source, const std::string& where, int* checked) {
  for (const auto& c : source.computations()) {
    for (const auto& i : c->instructions()) {
      if (i->opcode() != HloOpcode::kDot) continue;
      std::unique_ptr<HloModule> alone = pass_test::StandaloneModule(*i);
      HloPassPipeline pipeline("canonical");
      pipeline.AddPass<DotDecomposer>();
      ASSERT_TRUE(pipeline.Run(*alone).ok());
      for (const auto& j : alone->entry_computation()->instructions()) {
        if (j->opcode() != HloOpcode::kDot) continue;
        ASSERT_TRUE(IsCanonicalDot(*j));
        std::unique_ptr<HloModule> canonical = pass_test::StandaloneModule(*j);
        EXPECT_EQ(CheckCanonicalDot(*canonical), "") << where << ": " << i->name();
        ++*checked;
      }
    }
  }
}

// A canonical (b01f_01io->b01f) convolution through hostlib::Convolution.
std::string CheckCanonicalConvolution(const HloModule& module) {
  const HloInstruction& conv = Root(module);
  absl::StatusOr<Reference> ref = Interpret(module);
  if (!ref.ok()) return ref.status().ToString();
  const Shape& in = conv.operand(0)->shape();
  const Shape& kernel = conv.operand(1)->shape();
  const int64_t spatial = in.rank() - 2;
  ConvolutionShape s;
  s.batch = in.dimensions(0);
  s.input_features = in.dimensions(spatial + 1);
  s.output_features = kernel.dimensions(spatial + 1);
  s.feature_group_count = conv.attrs().feature_group_count;
  s.batch_group_count = conv.attrs().batch_group_count;
  for (int64_t d = 0; d < spatial; ++d) {
    s.input_spatial.push_back(in.dimensions(d + 1));
    s.kernel_spatial.push_back(kernel.dimensions(d));
    s.output_spatial.push_back(conv.shape().dimensions(d + 1));
    WindowDimension w;
    if (conv.attrs().window && d < static_cast<int64_t>(conv.attrs().window->dimensions.size())) {
      w = conv.attrs().window->dimensions[d];
    }
    s.strides.push_back(w.stride);
    s.padding_low.push_back(w.padding_low);
    s.padding_high.push_back(w.padding_high);
    s.lhs_dilation.push_back(w.base_dilation);
    s.rhs_dilation.push_back(w.window_dilation);
    s.window_reversal.push_back(w.window_reversal);
  }
  Literal out(Shape::Array(conv.shape().element_type(), conv.shape().dimensions()));
  absl::Status status = Convolution(s, HostType(in.element_type()), Data(ref->args[0]),
                                    HostType(kernel.element_type()), Data(ref->args[1]),
                                    HostType(conv.shape().element_type()), Data(out));
  if (!status.ok()) return status.ToString();
  return Compare(ref->result, out, ToleranceFor(conv.shape().element_type()));
}

void CheckConvolutions(const HloModule& source, const std::string& where, int* checked) {
  for (const auto& c : source.computations()) {
    for (const auto& i : c->instructions()) {
      if (i->opcode() != HloOpcode::kConvolution) continue;
      std::unique_ptr<HloModule> alone = pass_test::StandaloneModule(*i);
      HloPassPipeline pipeline("canonical");
      pipeline.AddPass<ConvCanonicalization>();
      ASSERT_TRUE(pipeline.Run(*alone).ok());
      for (const auto& j : alone->entry_computation()->instructions()) {
        if (j->opcode() != HloOpcode::kConvolution) continue;
        ASSERT_TRUE(IsCanonicalConvolution(*j));
        std::unique_ptr<HloModule> canonical = pass_test::StandaloneModule(*j);
        EXPECT_EQ(CheckCanonicalConvolution(*canonical), "") << where << ": " << i->name();
        ++*checked;
      }
    }
  }
}

std::unique_ptr<HloModule> Parse(const std::string& body) {
  absl::StatusOr<std::unique_ptr<HloModule>> m =
      ParseHloModule(absl::StrCat("HloModule m\n", body), "case.hlo");
  EXPECT_TRUE(m.ok()) << m.status() << "\n" << body;
  return m.ok() ? std::move(*m) : nullptr;
}

TEST(InterpreterCheck, Dots) {
  const char* const kCases[] = {
      "a = f32[2,3,4,5] parameter(0)\n b = f32[4,2,5,6,7] parameter(1)\n"
      " ROOT d = f32[2,3,6,7] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={1},"
      " lhs_contracting_dims={2,3}, rhs_contracting_dims={0,2}",
      "a = f32[64,96] parameter(0)\n b = f32[96,32] parameter(1)\n"
      " ROOT d = f32[64,32] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
      "a = bf16[16,48] parameter(0)\n b = bf16[8,48] parameter(1)\n"
      " ROOT d = f32[16,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={1}",
      "a = bf16[16,48] parameter(0)\n b = bf16[48,8] parameter(1)\n"
      " ROOT d = bf16[16,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
      "a = f16[3,16,24] parameter(0)\n b = f16[3,24,8] parameter(1)\n"
      " ROOT d = f16[3,16,8] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0},"
      " lhs_contracting_dims={2}, rhs_contracting_dims={1}",
      "a = s8[16,64] parameter(0)\n b = s8[64,8] parameter(1)\n"
      " ROOT d = s32[16,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
      "a = s32[5,6] parameter(0)\n b = s32[6,7] parameter(1)\n"
      " ROOT d = s32[5,7] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
      "a = f64[7,9] parameter(0)\n b = f64[9] parameter(1)\n"
      " ROOT d = f64[7] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
      "a = c64[2,4,5] parameter(0)\n b = c64[2,5,3] parameter(1)\n"
      " ROOT d = c64[2,4,3] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0},"
      " lhs_contracting_dims={2}, rhs_contracting_dims={1}",
      "a = c128[4,5] parameter(0)\n b = c128[5,3] parameter(1)\n"
      " ROOT d = c128[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
      "a = f8e4m3fn[8,16] parameter(0)\n b = f8e4m3fn[16,4] parameter(1)\n"
      " ROOT d = f32[8,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
      "a = f8e5m2[8,16] parameter(0)\n b = f8e5m2[16,4] parameter(1)\n"
      " ROOT d = bf16[8,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
      "a = u8[6,8] parameter(0)\n b = u8[8,5] parameter(1)\n"
      " ROOT d = u8[6,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
  };
  int checked = 0;
  for (const char* body : kCases) {
    std::unique_ptr<HloModule> m = Parse(absl::StrCat("ENTRY e {\n ", body, "\n}\n"));
    ASSERT_NE(m, nullptr);
    CheckDots(*m, body, &checked);
  }
  EXPECT_EQ(checked, static_cast<int>(std::size(kCases)));
}

TEST(InterpreterCheck, Convolutions) {
  const char* const kCases[] = {
      "a = f32[2,3,7,6] parameter(0)\n k = f32[4,3,3,2] parameter(1)\n"
      " ROOT c = f32[2,4,7,3] convolution(a, k), window={size=3x2 stride=1x2 pad=1_1x0_0},"
      " dim_labels=bf01_oi01->bf01",
      "a = f32[2,6,5,5] parameter(0)\n k = f32[2,9,3,3] parameter(1)\n"
      " ROOT c = f32[2,9,5,5] convolution(a, k), window={size=3x3 pad=1_1x1_1 rhs_reversal=0x1},"
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
      "a = f32[2,9,4] parameter(0)\n k = f32[3,4,5] parameter(1)\n"
      " ROOT c = f32[2,3,5] convolution(a, k), window={size=3 stride=2 pad=0_1 rhs_dilate=2},"
      " dim_labels=b0f_0io->b0f",
      "a = f32[1,2,4,5,3] parameter(0)\n k = f32[3,2,2,2,2] parameter(1)\n"
      " ROOT c = f32[1,3,3,4,2] convolution(a, k), window={size=2x2x2},"
      " dim_labels=bf012_oi012->bf012",
      "a = bf16[2,8,8,4] parameter(0)\n k = bf16[3,3,4,8] parameter(1)\n"
      " ROOT c = f32[2,8,8,8] convolution(a, k), window={size=3x3 pad=1_1x1_1},"
      " dim_labels=b01f_01io->b01f",
      "a = s32[2,3,5] parameter(0)\n k = s32[4,3,2] parameter(1)\n"
      " ROOT c = s32[2,4,4] convolution(a, k), window={size=2}, dim_labels=bf0_oi0->bf0",
      "a = f64[2,3,5] parameter(0)\n k = f64[4,3,2] parameter(1)\n"
      " ROOT c = f64[2,4,4] convolution(a, k), window={size=2}, dim_labels=bf0_oi0->bf0",
  };
  int checked = 0;
  for (const char* body : kCases) {
    std::unique_ptr<HloModule> m = Parse(absl::StrCat("ENTRY e {\n ", body, "\n}\n"));
    ASSERT_NE(m, nullptr);
    CheckConvolutions(*m, body, &checked);
  }
  EXPECT_EQ(checked, static_cast<int>(std::size(kCases)));
}

TEST(InterpreterCheck, JaxCorpusDotsAndConvolutions) {
  const fs::path dir = pass_test::JaxCorpusDir();
  if (!fs::exists(dir)) GTEST_SKIP() << "no corpus at " << dir << " (set XLITE_CORPUS); SKIPPED";
  int dots = 0, convs = 0;
  for (const auto& [file, module] : pass_test::JaxCorpusModules(dir)) {
    CheckDots(*module, file, &dots);
    CheckConvolutions(*module, file, &convs);
  }
  std::cout << "hostlib vs interpreter on the JAX corpus: " << dots << " dots, " << convs
            << " convolutions\n";
  EXPECT_GT(dots, 0);
  EXPECT_GT(convs, 0);
}

TEST(InterpreterCheck, Fft) {
  const char* const kCases[] = {
      "ROOT f = c64[3,8] fft(c64[3,8] parameter(0)), fft_type=FFT, fft_length={8}",
      "ROOT f = c64[2,4,6] fft(c64[2,4,6] parameter(0)), fft_type=IFFT, fft_length={4,6}",
      "ROOT f = c128[2,3,5,7] fft(c128[2,3,5,7] parameter(0)), fft_type=FFT, fft_length={3,5,7}",
      "ROOT f = c64[4,9] fft(f32[4,16] parameter(0)), fft_type=RFFT, fft_length={16}",
      "ROOT f = c128[2,5,4] fft(f64[2,5,7] parameter(0)), fft_type=RFFT, fft_length={5,7}",
      "ROOT f = f32[4,16] fft(c64[4,9] parameter(0)), fft_type=IRFFT, fft_length={16}",
      "ROOT f = f64[2,3,7] fft(c128[2,3,4] parameter(0)), fft_type=IRFFT, fft_length={3,7}",
  };
  for (const char* body : kCases) {
    SCOPED_TRACE(body);
    std::unique_ptr<HloModule> m = Parse(absl::StrCat("ENTRY e {\n ", body, "\n}\n"));
    ASSERT_NE(m, nullptr);
    const HloInstruction& fft = Root(*m);
    absl::StatusOr<Reference> ref = Interpret(*m);
    ASSERT_TRUE(ref.ok()) << ref.status();
    const std::string& t = fft.attrs().fft_type;
    const FftType type = t == "FFT"    ? FftType::kFft
                         : t == "IFFT" ? FftType::kIfft
                         : t == "RFFT" ? FftType::kRfft
                                       : FftType::kIrfft;
    const std::vector<int64_t>& length = fft.attrs().fft_length;
    const Shape& in = fft.operand(0)->shape();
    int64_t batch = 1;
    for (int64_t d = 0; d + static_cast<int64_t>(length.size()) < in.rank(); ++d) {
      batch *= in.dimensions(d);
    }
    const PrimitiveType et = in.element_type();
    const bool wide = et == PrimitiveType::F64 || et == PrimitiveType::C128;
    Literal out(Shape::Array(fft.shape().element_type(), fft.shape().dimensions()));
    ASSERT_TRUE(Fft(type, wide ? ElementType::kF64 : ElementType::kF32, batch, length,
                    Data(ref->args[0]), Data(out))
                    .ok());
    EXPECT_EQ(Compare(ref->result, out, wide ? 1e-12 : 1e-5), "");
  }
}

TEST(InterpreterCheck, TopK) {
  for (const char* body : {
           "ROOT t = (f32[3,4], s32[3,4]) topk(f32[3,50] parameter(0)), k=4, largest=true",
           "ROOT t = (bf16[2,3], s32[2,3]) topk(bf16[2,40] parameter(0)), k=3, largest=false",
           "ROOT t = (s32[5,5], s32[5,5]) topk(s32[5,9] parameter(0)), k=5, largest=true",
           "ROOT t = (u8[10], s32[10]) topk(u8[100] parameter(0)), k=10, largest=true",
       }) {
    SCOPED_TRACE(body);
    std::unique_ptr<HloModule> m = Parse(absl::StrCat("ENTRY e {\n ", body, "\n}\n"));
    ASSERT_NE(m, nullptr);
    const HloInstruction& topk = Root(*m);
    absl::StatusOr<Reference> ref = Interpret(*m);
    ASSERT_TRUE(ref.ok()) << ref.status();
    const Shape& in = topk.operand(0)->shape();
    const int64_t n = in.dimensions().back();
    Literal out(topk.shape());
    ASSERT_TRUE(TopK(HostType(in.element_type()), in.ElementCount() / n, n, topk.attrs().k,
                     topk.attrs().largest, Data(ref->args[0]), Data(out.tuple_elements()[0]),
                     static_cast<int32_t*>(Data(out.tuple_elements()[1])))
                    .ok());
    EXPECT_EQ(Compare(ref->result, out, 0), "");
  }
}

TEST(InterpreterCheck, CholeskyAndTriangularSolve) {
  // Random inputs: most are not positive definite, so the NaN pattern is
  // checked too.
  for (const char* body : {
           "ROOT c = f64[2,5,5] cholesky(f64[2,5,5] parameter(0)), lower=true",
           "ROOT c = f64[3,4,4] cholesky(f64[3,4,4] parameter(0)), lower=false",
           "ROOT c = c128[2,3,3] cholesky(c128[2,3,3] parameter(0)), lower=true",
       }) {
    SCOPED_TRACE(body);
    std::unique_ptr<HloModule> m = Parse(absl::StrCat("ENTRY e {\n ", body, "\n}\n"));
    ASSERT_NE(m, nullptr);
    const HloInstruction& c = Root(*m);
    absl::StatusOr<Reference> ref = Interpret(*m);
    ASSERT_TRUE(ref.ok()) << ref.status();
    const Shape& s = c.shape();
    const int64_t n = s.dimensions().back();
    Literal out(Shape::Array(s.element_type(), s.dimensions()));
    ASSERT_TRUE(Cholesky(HostType(s.element_type()), c.attrs().lower, s.ElementCount() / (n * n), n,
                         Data(ref->args[0]), Data(out))
                    .ok());
    EXPECT_EQ(Compare(ref->result, out, 1e-9), "");
  }
  for (const char* body : {
           "a = f64[2,4,4] parameter(0)\n b = f64[2,4,3] parameter(1)\n"
           " ROOT x = f64[2,4,3] triangular-solve(a, b), left_side=true, lower=true,"
           " transpose_a=NO_TRANSPOSE",
           "a = f64[3,3] parameter(0)\n b = f64[5,3] parameter(1)\n"
           " ROOT x = f64[5,3] triangular-solve(a, b), lower=false, unit_diagonal=true,"
           " transpose_a=TRANSPOSE",
           "a = c128[4,4] parameter(0)\n b = c128[4,2] parameter(1)\n"
           " ROOT x = c128[4,2] triangular-solve(a, b), left_side=true, lower=false,"
           " transpose_a=ADJOINT",
           "a = f32[2,3,3] parameter(0)\n b = f32[2,2,3] parameter(1)\n"
           " ROOT x = f32[2,2,3] triangular-solve(a, b), lower=true, transpose_a=ADJOINT",
       }) {
    SCOPED_TRACE(body);
    std::unique_ptr<HloModule> m = Parse(absl::StrCat("ENTRY e {\n ", body, "\n}\n"));
    ASSERT_NE(m, nullptr);
    const HloInstruction& t = Root(*m);
    absl::StatusOr<Reference> ref = Interpret(*m);
    ASSERT_TRUE(ref.ok()) << ref.status();
    const Shape& b = t.shape();
    const int64_t rows = b.dimensions(b.rank() - 2), cols = b.dimensions(b.rank() - 1);
    const std::string& ta = t.attrs().transpose_a;
    const TriangularTranspose op = ta == "TRANSPOSE" ? TriangularTranspose::kTranspose
                                   : ta == "ADJOINT" ? TriangularTranspose::kAdjoint
                                                     : TriangularTranspose::kNoTranspose;
    Literal out(Shape::Array(b.element_type(), b.dimensions()));
    ASSERT_TRUE(TriangularSolve(HostType(b.element_type()), t.attrs().left_side, t.attrs().lower,
                                t.attrs().unit_diagonal, op, b.ElementCount() / (rows * cols), rows,
                                cols, Data(ref->args[0]), Data(ref->args[1]), Data(out))
                    .ok());
    // Random triangles are badly conditioned: compare relative to the result.
    EXPECT_EQ(Compare(ref->result, out, b.element_type() == PrimitiveType::F32 ? 1e-3 : 1e-8), "");
  }
}

// A comparator that runs the sort's comparator computation in the
// interpreter (the CPU runtime passes a JIT-compiled one instead).
struct InterpretedComparator {
  const HloComputation* computation;
  std::vector<PrimitiveType> types;
  static bool Call(const void* const* elements, void* context) {
    auto* self = static_cast<InterpretedComparator*>(context);
    std::vector<Literal> args;
    for (size_t i = 0; i < 2 * self->types.size(); ++i) {
      Literal scalar(Shape::Scalar(self->types[i / 2]));
      std::memcpy(scalar.mutable_raw_data(), elements[i], scalar.element_stride());
      args.push_back(std::move(scalar));
    }
    auto root = std::make_unique<HloInstruction>(HloOpcode::kCall, "call",
                                                 self->computation->root_instruction()->shape());
    std::vector<const Literal*> pointers;
    for (const Literal& a : args) pointers.push_back(&a);
    std::vector<std::unique_ptr<HloInstruction>> params;
    for (size_t i = 0; i < args.size(); ++i) {
      params.push_back(
          std::make_unique<HloInstruction>(HloOpcode::kParameter, "p", args[i].shape()));
      root->AppendOperand(params.back().get());
    }
    root->AppendCalledComputation(const_cast<HloComputation*>(self->computation));
    absl::StatusOr<Literal> result = EvaluateStandalone(*root, pointers);
    root->DetachFromOperands();
    return result.ok() && result->GetInt(0) != 0;
  }
};

TEST(InterpreterCheck, SortWithTheComparatorComputation) {
  std::unique_ptr<HloModule> m = Parse(R"(
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  lt = pred[] compare(a, b), direction=LT
  eq = pred[] compare(a, b), direction=EQ
  gt = pred[] compare(c, d), direction=GT
  tie = pred[] and(eq, gt)
  ROOT r = pred[] or(lt, tie)
}
ENTRY e {
  x = f32[4,6] parameter(0)
  r = f32[4,6] round-nearest-even(x)
  i = s32[4,6] parameter(1)
  ROOT s = (f32[4,6], s32[4,6]) sort(r, i), dimensions={1}, to_apply=cmp, is_stable=true
}
)");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Reference> ref = Interpret(*m);
  ASSERT_TRUE(ref.ok()) << ref.status();
  // The sort's operands as the interpreter saw them.
  Literal keys = ref->args[0];
  for (int64_t i = 0; i < keys.element_count(); ++i) {
    keys.SetDouble(i, std::nearbyint(keys.GetDouble(i)));
  }
  Literal payload = ref->args[1];
  InterpretedComparator cmp{m->GetComputationWithName("cmp"),
                            {PrimitiveType::F32, PrimitiveType::S32}};
  void* operands[] = {Data(keys), Data(payload)};
  const int bytes[] = {4, 4};
  const int64_t dims[] = {4, 6};
  ASSERT_TRUE(Sort(dims, 1, operands, bytes, &InterpretedComparator::Call, &cmp).ok());
  std::vector<Literal> parts;
  parts.push_back(std::move(keys));
  parts.push_back(std::move(payload));
  EXPECT_EQ(Compare(ref->result, Literal::Tuple(std::move(parts)), 0), "");
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::hostlib
