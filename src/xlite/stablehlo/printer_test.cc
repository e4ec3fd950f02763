#include "xlite/stablehlo/printer.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "xlite/stablehlo/lower.h"
#include "xlite/stablehlo/mlir_parser.h"
#include "xlite/text/printer.h"

namespace xlite::mlir {
namespace {
namespace XLITE_UNITY_ID {

namespace fs = std::filesystem;

std::string Canonical(absl::string_view text) {
  absl::StatusOr<OwningOp> m = ParseMlir(text, "test.mlir");
  if (!m.ok()) return absl::StrCat("parse error: ", m.status().message());
  return PrintMlir(**m);
}

// Prints `text`, checks the printed text is a fixpoint, and returns it.
std::string Print(absl::string_view text) {
  std::string once = Canonical(text);
  EXPECT_EQ(Canonical(once), once) << "not a fixpoint:\n" << once;
  return once;
}

TEST(PrintMlirTest, GenericFormGolden) {
  EXPECT_EQ(Print(R"(
func.func @main(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {
  %s = stablehlo.add %x, %y : tensor<2xf32>
  %c = stablehlo.constant dense<[1.0, 2.5]> : tensor<2xf32>
  %m = stablehlo.multiply %s, %c : tensor<2xf32>
  return %m : tensor<2xf32>
})"),
            R"("builtin.module"() ({
  "func.func"() ({
  ^bb0(%arg0: tensor<2xf32>, %arg1: tensor<2xf32>):
    %0 = "stablehlo.add"(%arg0, %arg1) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %1 = "stablehlo.constant"() {value = dense<[1.000000e+00, 2.500000e+00]> : tensor<2xf32>} : () -> tensor<2xf32>
    %2 = "stablehlo.multiply"(%0, %1) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    "func.return"(%2) : (tensor<2xf32>) -> ()
  }) {function_type = (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>, sym_name = "main"} : () -> ()
}) : () -> ()
)");
}

// The reader keeps a tensor encoding in its canonical spelling (aliases
// resolved, whitespace normalized), so the printer prints it as it is.
TEST(PrintMlirTest, TensorEncodingsPrintCanonically) {
  const std::string out = Print(R"(
#b = #stablehlo.type_extensions<bounds = [ ?,   4 ]>
func.func @main(%x: tensor<?x4xf32, #b>) -> tensor<?x4xf32, #stablehlo.type_extensions<bounds=[?, 4]>> {
  return %x : tensor<?x4xf32, #stablehlo.type_extensions<bounds = [?, 4]>>
})");
  EXPECT_TRUE(absl::StrContains(
      out,
      "(tensor<?x4xf32, #stablehlo.type_extensions<bounds = [?, 4]>>) -> tensor<?x4xf32, "
      "#stablehlo.type_extensions<bounds = [?, 4]>>"))
      << out;
}

TEST(PrintMlirTest, PrettyAndGenericPrintAlike) {
  const std::string pretty = Print(R"(
module @m attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32> {jax.arg_info = "x"}) -> (tensor<3x2xf32>, tensor<i1>) {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<3x2xf32>) -> tensor<3x2xf32>
    %cst = stablehlo.constant dense<0.0> : tensor<f32>
    %2 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<f32>
    %3 = stablehlo.compare GT, %2, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %4 = stablehlo.slice %1 [0:3:1, 1:2] : (tensor<3x2xf32>) -> tensor<3x1xf32>
    %5 = stablehlo.dot_general %0, %arg0, batching_dims = [] x [], contracting_dims = [1] x [0], precision = [DEFAULT, HIGHEST] : (tensor<3x2xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
    %6 = stablehlo.iota dim = 0 : tensor<4xi32>
    return %1, %3 : tensor<3x2xf32>, tensor<i1>
  }
})");
  const std::string generic = Print(R"(
"builtin.module"() <{sym_name = "m"}> ({
  "func.func"() <{arg_attrs = [{jax.arg_info = "x"}], function_type = (tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<i1>), sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%a: tensor<2x3xf32>):
    %t = "stablehlo.transpose"(%a) <{permutation = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %b = "stablehlo.broadcast_in_dim"(%t) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<3x2xf32>) -> tensor<3x2xf32>
    %z = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %r = "stablehlo.reduce"(%a, %z) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      %s = "stablehlo.add"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<f32>
    %c = "stablehlo.compare"(%r, %z) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %sl = "stablehlo.slice"(%b) <{limit_indices = array<i64: 3, 2>, start_indices = array<i64: 0, 1>, strides = array<i64: 1, 1>}> : (tensor<3x2xf32>) -> tensor<3x1xf32>
    %d = "stablehlo.dot_general"(%t, %a) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]}> : (tensor<3x2xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
    %i = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<4xi32>
    "func.return"(%b, %c) : (tensor<3x2xf32>, tensor<i1>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32} : () -> ()
)");
  EXPECT_EQ(pretty, generic);
  EXPECT_TRUE(absl::StrContains(pretty,
                                "^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):\n"
                                "      %8 = \"stablehlo.add\"(%arg1, %arg2)"))
      << pretty;
}

TEST(PrintMlirTest, PrettyAndGenericPrintAlikeMore) {
  const std::string pretty = Print(R"(
func.func @main(%a: tensor<1x4x1xf32>, %b: tensor<2x1x1xf32>, %i: tensor<2x1xi32>) -> () {
  %0 = stablehlo.convolution(%a, %b) dim_numbers = [b,0,f]x[0,i,o]->[b,0,f], window = {stride = [1], pad = [[0, 0]], lhs_dilate = [1], rhs_dilate = [1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x1xf32>, tensor<2x1x1xf32>) -> tensor<1x3x1xf32>
  %1 = "stablehlo.gather"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 4, 1>} : (tensor<1x4x1xf32>, tensor<2x1xi32>) -> tensor<2x4x1xf32>
  %2 = stablehlo.custom_call @foo(%a) {api_version = 2 : i32, backend_config = ""} : (tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %3 = stablehlo.reduce(%a init: %a) across dimensions = [] : (tensor<1x4x1xf32>, tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
   reducer(%x: tensor<1x4x1xf32>, %y: tensor<1x4x1xf32>) {
    %m = stablehlo.maximum %x, %y : tensor<1x4x1xf32>
    stablehlo.return %m : tensor<1x4x1xf32>
  }
  return
})");
  const std::string generic = Print(R"(
"func.func"() <{function_type = (tensor<1x4x1xf32>, tensor<2x1x1xf32>, tensor<2x1xi32>) -> (), sym_name = "main"}> ({
^bb0(%arg0: tensor<1x4x1xf32>, %arg1: tensor<2x1x1xf32>, %arg2: tensor<2x1xi32>):
  %0 = "stablehlo.convolution"(%arg0, %arg1) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1>, padding = dense<0> : tensor<1x2xi64>, rhs_dilation = array<i64: 1>, window_strides = array<i64: 1>}> : (tensor<1x4x1xf32>, tensor<2x1x1xf32>) -> tensor<1x3x1xf32>
  %1 = "stablehlo.gather"(%arg0, %arg2) <{dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 4, 1>}> : (tensor<1x4x1xf32>, tensor<2x1xi32>) -> tensor<2x4x1xf32>
  %2 = "stablehlo.custom_call"(%arg0) <{api_version = 2 : i32, backend_config = "", call_target_name = "foo"}> : (tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %3 = "stablehlo.reduce"(%arg0, %arg0) <{dimensions = array<i64>}> ({
  ^bb0(%arg3: tensor<1x4x1xf32>, %arg4: tensor<1x4x1xf32>):
    %4 = "stablehlo.maximum"(%arg3, %arg4) : (tensor<1x4x1xf32>, tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
    "stablehlo.return"(%4) : (tensor<1x4x1xf32>) -> ()
  }) : (tensor<1x4x1xf32>, tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  "func.return"() : () -> ()
}) : () -> ()
)");
  EXPECT_EQ(pretty, generic);
}

TEST(PrintMlirTest, MultipleResultsAndNestedRegions) {
  const std::string out = Print(R"(
func.func @main(%n: tensor<i64>) -> tensor<i64> {
  %c0 = stablehlo.constant dense<0> : tensor<i64>
  %r:2 = stablehlo.while(%i = %c0, %acc = %c0) : tensor<i64>, tensor<i64>
    cond {
      %lt = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i64>
      %next = stablehlo.add %i, %one : tensor<i64>
      %sum = stablehlo.add %acc, %i : tensor<i64>
      stablehlo.return %next, %sum : tensor<i64>, tensor<i64>
    }
  return %r#1 : tensor<i64>
})");
  EXPECT_TRUE(absl::StrContains(out,
                                "    %1:2 = \"stablehlo.while\"(%0, %0) ({\n"
                                "    ^bb0(%arg1: tensor<i64>, %arg2: tensor<i64>):\n"
                                "      %2 = \"stablehlo.compare\"(%arg1, %arg0)"))
      << out;
  EXPECT_TRUE(absl::StrContains(out, "%4 = \"stablehlo.add\"(%arg2, %arg1)")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\"func.return\"(%1#1)")) << out;
}

TEST(PrintMlirTest, Attributes) {
  const std::string out = Print(R"(
func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32> attributes {
    a_f32 = 0.1 : f32, b_f64 = 3.141592653589793 : f64, c_nan = 0x7FC00000 : f32,
    d_neg0 = -0.0 : f32, e_str = "q\"uo\\te\n\ttab", f_sym = @"odd name", g_unit,
    h_ints = array<i64: 1, -2>, i_bools = array<i1: true, false>, j_empty = array<i64>,
    k_dict = {z = 1 : i32, a = "x"}, l_enum = #stablehlo<comparison_direction LT>,
    m_struct = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], index_vector_dim = 1>,
    n_conv = #stablehlo.conv<[b,0, f] x[0,i,o]->[b, 0,f]>, o_u8 = 255 : ui8, p_bool = 1 : i1,
    q_type = tensor<?x2xcomplex<f32>>, r_big = 18446744073709551615 : ui64, s_i8 = 255 : i8,
    t_i8s = array<i8: 1, 255>}
)");
  for (const char* want :
       {"a_f32 = 1.000000e-01 : f32",
        "b_f64 = 3.141592653589793e+00 : f64",
        "c_nan = 0x7FC00000 : f32",
        "d_neg0 = -0.000000e+00 : f32",
        R"(e_str = "q\"uo\\te\n\ttab")",
        R"(f_sym = @"odd name")",
        "g_unit, h_ints",
        "h_ints = array<i64: 1, -2>",
        "i_bools = array<i1: true, false>",
        "j_empty = array<i64>",
        R"(k_dict = {a = "x", z = 1 : i32})",
        "l_enum = #stablehlo<comparison_direction LT>",
        "m_struct = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
        "index_vector_dim = 1>",
        "n_conv = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>",
        "o_u8 = 255 : ui8",
        "p_bool = true",
        "q_type = tensor<?x2xcomplex<f32>>",
        "r_big = 18446744073709551615 : ui64",
        "s_i8 = -1 : i8",
        "t_i8s = array<i8: 1, -1>",
        "sym_visibility = \"private\"",
        "\"func.func\"() ({\n  }) {"}) {
    EXPECT_TRUE(absl::StrContains(out, want)) << want << "\nin\n" << out;
  }
}

TEST(PrintMlirTest, DenseAttributes) {
  const std::string out = Print(R"(
func.func @main() -> () {
  %0 = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %1 = stablehlo.constant dense<[7, 7, 7]> : tensor<3xui8>
  %2 = stablehlo.constant dense<[true, false]> : tensor<2xi1>
  %3 = stablehlo.constant dense<[(1.0, -2.0), (0.5, 0x7F800000)]> : tensor<2xcomplex<f32>>
  %4 = stablehlo.constant dense<[0x7E00, 1.0]> : tensor<2xf16>
  %5 = stablehlo.constant dense<> : tensor<0x3xf32>
  %6 = stablehlo.constant dense<"0x0100000002000000"> : tensor<2xi32>
  %7 = stablehlo.constant dense<0.1> : tensor<bf16>
  return
})");
  for (const char* want :
       {"dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>", "dense<7> : tensor<3xui8>",
        "dense<[true, false]> : tensor<2xi1>",
        "dense<[(1.000000e+00, -2.000000e+00), (5.000000e-01, 0x7F800000)]> : "
        "tensor<2xcomplex<f32>>",
        "dense<[0x7E00, 1.000000e+00]> : tensor<2xf16>", "dense<> : tensor<0x3xf32>",
        "dense<[1, 2]> : tensor<2xi32>", "dense<1.000977e-01> : tensor<bf16>"}) {
    EXPECT_TRUE(absl::StrContains(out, want)) << want << "\nin\n" << out;
  }
  // Over 100 elements: MLIR's little-endian hex.
  std::string iota = "[0";
  for (int i = 1; i < 101; ++i) absl::StrAppend(&iota, ", ", i);
  const std::string big =
      Print(absl::StrCat("func.func @main() -> () {\n  %0 = stablehlo.constant dense<", iota,
                         "]> : tensor<101xi16>\n  return\n}"));
  EXPECT_TRUE(absl::StrContains(big, "dense<\"0x000001000200")) << big;
  EXPECT_TRUE(absl::StrContains(big, "63006400\"> : tensor<101xi16>")) << big;
}

// ---------------------------------------------------------------- Corpus

// ../shared/corpus/stablehlo, or $XLITE_CORPUS/stablehlo.
fs::path CorpusDir() {
  const char* env = std::getenv("XLITE_CORPUS");
  if (env != nullptr) return fs::path(env) / "stablehlo";
  for (fs::path p : {fs::path("../shared/corpus"), fs::path("../../shared/corpus"),
                     fs::path("/work/shared/corpus")}) {
    if (fs::exists(p / "stablehlo")) return p / "stablehlo";
  }
  return "../shared/corpus/stablehlo";
}

std::string FirstDifference(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ea = !std::getline(sa, la), eb = !std::getline(sb, lb);
    if (ea && eb) return "";
    if (ea || eb || la != lb) {
      return absl::StrCat("line ", line, ":\n  first:  ", ea ? "<end>" : la,
                          "\n  second: ", eb ? "<end>" : lb);
    }
  }
}

// Print -> parse -> print is a fixpoint for every chunk of the corpus that
// parses, and the printed program lowers to the same HLO as the original.
// Chunks the reader refuses are skipped (three: dense constants of the f6E2M3FN
// and f6E3M2FN types in interpret/constant.mlir and interpret/printing.mlir).
// No chunk is excluded for a reader bug; the reader's known misreadings (MLIR's
// "\0A"-style string escapes, hex floats of types other than f32/f64, hex
// floats in array<f32: ...>) do not occur in the corpus.
TEST(PrintMlirTest, CorpusFixpoint) {
  const fs::path dir = CorpusDir();
  if (!fs::exists(dir)) {
    GTEST_SKIP() << "SKIPPED: StableHLO corpus not found at " << dir
                 << " (set XLITE_CORPUS to the folder holding stablehlo/)";
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".mlir") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  int chunks = 0, unparsed = 0, fixpoints = 0, lowered = 0, same_hlo = 0;
  std::vector<std::string> failures;
  for (const fs::path& path : files) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    const std::string rel = fs::relative(path, dir).string();
    std::vector<SourceChunk> parts;
    if (absl::StrContains(text, "// -----")) {
      parts = SplitInputFile(text);
    } else {
      parts.push_back({text, 1});
    }
    for (const SourceChunk& chunk : parts) {
      ++chunks;
      const std::string label = absl::StrCat(rel, ":", chunk.first_line);
      absl::StatusOr<OwningOp> original = ParseMlir(chunk.text, rel, chunk.first_line);
      if (!original.ok()) {
        ++unparsed;
        continue;
      }
      const std::string first = PrintMlir(**original);
      absl::StatusOr<OwningOp> reread = ParseMlir(first, "printed.mlir");
      if (!reread.ok()) {
        failures.push_back(
            absl::StrCat(label, ": printed text does not parse: ", reread.status().message()));
        continue;
      }
      const std::string second = PrintMlir(**reread);
      if (first != second) {
        failures.push_back(
            absl::StrCat(label, ": not a fixpoint at ", FirstDifference(first, second)));
        continue;
      }
      ++fixpoints;
      // The printed program means the same: both lower to the same HLO (short
      // form, which leaves out the source locations), or both fail alike.
      auto a = stablehlo::LowerToHlo(**original);
      auto b = stablehlo::LowerToHlo(**reread);
      if (a.ok() != b.ok() || (!a.ok() && a.status().code() != b.status().code())) {
        failures.push_back(
            absl::StrCat(label, ": lowering differs: ", a.ok() ? "ok" : a.status().message(),
                         " vs ", b.ok() ? "ok" : b.status().message()));
        continue;
      }
      if (!a.ok()) continue;
      ++lowered;
      const std::string ha = PrintModule(**a, PrintOptions::Short());
      const std::string hb = PrintModule(**b, PrintOptions::Short());
      if (ha != hb) {
        failures.push_back(
            absl::StrCat(label, ": lowered HLO differs at ", FirstDifference(ha, hb)));
        continue;
      }
      ++same_hlo;
    }
  }
  std::cout << "printer corpus: " << files.size() << " files, " << chunks << " programs, "
            << unparsed << " not parsed by the reader (skipped), " << fixpoints
            << " print fixpoints, " << same_hlo << "/" << lowered << " lowered alike\n";
  for (const std::string& f : failures) std::cout << "  FAIL " << f << "\n";
  EXPECT_TRUE(failures.empty()) << failures.size() << " programs failed (listed above)";
}

// StableHLO's VHLO compatibility goldens (../shared/corpus/vhlo): every
// program the reader accepts (all but VHLO-dialect text) prints as a fixpoint;
// in the stablehlo_legalize_to_vhlo* goldens every function, lowered as the
// entry, lowers from the printed text exactly as from the original (or both
// fail with the same status code).
TEST(PrintMlirTest, VhloGoldensFixpoint) {
  const fs::path dir = CorpusDir().parent_path() / "vhlo";
  if (!fs::exists(dir)) GTEST_SKIP() << "SKIPPED: VHLO goldens not found at " << dir;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".mlir") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  int programs = 0, functions = 0, lowered = 0;
  std::vector<std::string> failures;
  for (const fs::path& path : files) {
    const std::string name = path.filename().string();
    if (name == "invalid_vhlo_future.mlir") continue;  // VHLO text, not StableHLO
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    for (const SourceChunk& chunk : SplitInputFile(ss.str())) {
      const std::string label = absl::StrCat(name, ":", chunk.first_line);
      absl::StatusOr<OwningOp> original = ParseMlir(chunk.text, name, chunk.first_line);
      if (!original.ok()) {
        failures.push_back(absl::StrCat(label, ": ", original.status().message()));
        continue;
      }
      const std::string first = PrintMlir(**original);
      absl::StatusOr<OwningOp> reread = ParseMlir(first, "printed.mlir");
      if (!reread.ok()) {
        failures.push_back(
            absl::StrCat(label, ": printed text does not parse: ", reread.status().message()));
        continue;
      }
      const std::string second = PrintMlir(**reread);
      if (first != second) {
        failures.push_back(
            absl::StrCat(label, ": not a fixpoint at ", FirstDifference(first, second)));
        continue;
      }
      ++programs;
      if (!absl::StartsWith(name, "stablehlo_legalize_to_vhlo")) continue;
      for (const auto& op : (*original)->regions[0]->blocks[0]->operations) {
        if (op->name != "func.func" || op->regions.empty()) continue;
        ++functions;
        stablehlo::LowerOptions options;
        options.entry = SymbolName(*op);
        auto a = stablehlo::LowerToHlo(**original, options);
        auto b = stablehlo::LowerToHlo(**reread, options);
        const std::string fn = absl::StrCat(label, " @", options.entry);
        if (a.ok() != b.ok() || (!a.ok() && a.status().code() != b.status().code())) {
          failures.push_back(
              absl::StrCat(fn, ": lowering differs: ", a.ok() ? "ok" : a.status().message(), " vs ",
                           b.ok() ? "ok" : b.status().message()));
          continue;
        }
        if (!a.ok()) continue;
        ++lowered;
        const std::string ha = PrintModule(**a, PrintOptions::Short());
        const std::string hb = PrintModule(**b, PrintOptions::Short());
        if (ha != hb) {
          failures.push_back(
              absl::StrCat(fn, ": lowered HLO differs at ", FirstDifference(ha, hb)));
        }
      }
    }
  }
  std::cout << "vhlo goldens: " << programs << " programs print as fixpoints; " << lowered << "/"
            << functions << " functions of stablehlo_legalize_to_vhlo* lower\n";
  for (const std::string& f : failures) std::cout << "  FAIL " << f << "\n";
  EXPECT_TRUE(failures.empty()) << failures.size() << " programs failed (listed above)";
}

TEST(PrintMlirTest, OtherDialectsAndVhloGoldenConstructs) {
  const std::string printed = Print(R"(
func.func @f(%arg0: tensor<2xf32>, %b: memref<2xf32>) -> tensor<2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  %for = scf.for %i = %c0 to %c1 step %c1 iter_args(%acc = %arg0) -> tensor<2xf32> {
    %new = tensor.insert %cst into %acc[%i] : tensor<2xf32>
    scf.yield %new : tensor<2xf32>
  }
  %r = "stablehlo.all_reduce"(%for) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %s = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh,
        axes = [#stablehlo.axis_ref<name = "x", sub_axis_info = ( 1 ) 2>]>} : (tensor<2xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
})");
  EXPECT_NE(printed.find(R"(%0 = "arith.constant"() {value = 0 : index} : () -> index)"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find(R"(%2 = "arith.constant"() {value = 0.000000e+00 : f32} : () -> f32)"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find(R"(%3 = "scf.for"(%0, %1, %1, %arg0) ({
    ^bb0(%arg2: index, %arg3: tensor<2xf32>):
      %5 = "tensor.insert"(%2, %arg3, %arg2) : (f32, tensor<2xf32>, index) -> tensor<2xf32>
      "scf.yield"(%5) : (tensor<2xf32>) -> ()
    }) : (index, index, index, tensor<2xf32>) -> tensor<2xf32>)"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find(R"(#stablehlo.axis_ref<name = "x", sub_axis_info = (1)2>)"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("^bb0(%arg0: tensor<2xf32>, %arg1: memref<2xf32>):"), std::string::npos)
      << printed;
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::mlir
