// The VHLO writer: StableHLO -> VHLO downgrade -> bytecode, checked by reading
// back ($XLITE_CORPUS/vhlo, StableHLO's compatibility goldens).
//
//   - every golden program serialized at its own version reads back (ReadBytecode +
//     VhloToStablehlo) and prints exactly like the source, function by function;
//   - each function also at "current" and "minimum" where the target can express it;
//   - vhlo_to_version_downgrade_invalid.V.mlir chunks fail at V naming the op and V;
//   - vhlo_to_version_downgrade.V.mlir serialize at V;
//   - how many goldens are reproduced byte for byte is printed (not asserted).
#include "xlite/vhlo/bytecode_writer.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "xlite/stablehlo/mlir.h"
#include "xlite/stablehlo/mlir_parser.h"
#include "xlite/stablehlo/printer.h"
#include "xlite/vhlo/bytecode_encoding.h"
#include "xlite/vhlo/bytecode_reader.h"
#include "xlite/vhlo/downgrade.h"
#include "xlite/vhlo/upgrade.h"
#include "xlite/vhlo/vhlo_ops.h"

namespace xlite::vhlo {
namespace {
namespace XLITE_UNITY_ID {

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::filesystem::path CorpusDir() {
  const char* corpus = std::getenv("XLITE_CORPUS");
  if (corpus == nullptr) return {};
  return std::filesystem::path(corpus) / "vhlo";
}

// "name.1_20_0.mlir" -> 1.20.0
Version FileVersion(const std::string& filename) {
  std::vector<std::string> parts = absl::StrSplit(filename, '.');
  std::vector<std::string> numbers = absl::StrSplit(parts.size() > 1 ? parts[1] : "", '_');
  Version v;
  if (numbers.size() == 3) {
    v.major = std::atoi(numbers[0].c_str());
    v.minor = std::atoi(numbers[1].c_str());
    v.patch = std::atoi(numbers[2].c_str());
  }
  return v;
}

// Files "<prefix>X_Y_Z.mlir" of the corpus, by version.
std::vector<std::pair<Version, std::filesystem::path>> CorpusFiles(const std::string& prefix) {
  std::vector<std::pair<Version, std::filesystem::path>> out;
  for (const auto& entry : std::filesystem::directory_iterator(CorpusDir())) {
    std::string name = entry.path().filename().string();
    if (absl::StartsWith(name, prefix) && absl::EndsWith(name, ".mlir") &&
        FileVersion(name) != Version{}) {
      out.emplace_back(FileVersion(name), entry.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool HaveCorpus() {
  std::filesystem::path dir = CorpusDir();
  return !dir.empty() && std::filesystem::exists(dir);
}

// Each top-level op of `module` on its own, in a module of its own.
std::vector<std::pair<std::string, mlir::OwningOp>> SplitFunctions(mlir::Operation& module) {
  std::vector<std::pair<std::string, mlir::OwningOp>> out;
  if (module.regions.empty() || module.regions[0]->blocks.empty()) return out;
  auto& ops = module.regions[0]->blocks[0]->operations;
  for (size_t i = 0; i < ops.size(); ++i) {
    auto wrapper = std::make_unique<mlir::Operation>();
    wrapper->name = "builtin.module";
    wrapper->regions.push_back(std::make_unique<mlir::Region>());
    wrapper->regions[0]->blocks.push_back(std::make_unique<mlir::Block>());
    wrapper->regions[0]->blocks[0]->parent = wrapper.get();
    std::string name = mlir::SymbolName(*ops[i]);
    if (name.empty()) name = absl::StrCat("#", i);
    wrapper->regions[0]->blocks[0]->operations.push_back(std::move(ops[i]));
    out.emplace_back(name, std::move(wrapper));
  }
  ops.clear();
  return out;
}

std::map<std::string, std::string> PrintFunctions(mlir::Operation& module) {
  std::map<std::string, std::string> out;
  for (auto& [name, wrapper] : SplitFunctions(module)) out[name] = mlir::PrintMlir(*wrapper);
  return out;
}

std::string FirstDifference(const std::string& want, const std::string& got) {
  std::vector<std::string> a = absl::StrSplit(want, '\n');
  std::vector<std::string> b = absl::StrSplit(got, '\n');
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    std::string x = i < a.size() ? a[i] : "<end>";
    std::string y = i < b.size() ? b[i] : "<end>";
    if (x != y) return absl::StrCat("    source:    ", x, "\n    roundtrip: ", y);
  }
  return "";
}

// Serialize at `target`, read back, upgrade: the printed program.
absl::StatusOr<mlir::OwningOp> RoundTrip(const mlir::Operation& module, const Version& target,
                                         std::string* bytes = nullptr) {
  absl::StatusOr<std::string> written = SerializePortableArtifact(module, target);
  if (!written.ok()) return written.status();
  if (bytes != nullptr) *bytes = *written;
  return DeserializePortableArtifact(*written, absl::StrCat("roundtrip@", target.ToString()));
}

// ------------------------------------------------------------- unit tests

TEST(BytecodeWriterTest, VarIntsReadBack) {
  for (uint64_t v :
       {uint64_t{0}, uint64_t{1}, uint64_t{127}, uint64_t{128}, uint64_t{16383}, uint64_t{16384},
        uint64_t{1} << 40, (uint64_t{1} << 56) - 1, uint64_t{1} << 56, ~uint64_t{0}}) {
    bytecode::EncodingWriter w;
    w.WriteVarInt(v);
    w.WriteSignedVarInt(-static_cast<int64_t>(v / 2));
    std::string name = "varint";
    bytecode::EncodingReader r(reinterpret_cast<const uint8_t*>(w.bytes().data()), w.size(), 0,
                               "test", &name);
    uint64_t got = 0;
    int64_t signed_got = 0;
    ASSERT_TRUE(r.ReadVarInt(got).ok());
    ASSERT_TRUE(r.ReadSignedVarInt(signed_got).ok());
    EXPECT_EQ(got, v);
    EXPECT_EQ(signed_got, -static_cast<int64_t>(v / 2));
    EXPECT_TRUE(r.empty());
  }
}

TEST(BytecodeWriterTest, BytecodeVersionsFollowStablehlo) {
  EXPECT_EQ(BytecodeVersionFor({0, 9, 0}), 0u);
  EXPECT_EQ(BytecodeVersionFor({0, 11, 0}), 1u);
  EXPECT_EQ(BytecodeVersionFor({0, 13, 0}), 3u);
  EXPECT_EQ(BytecodeVersionFor({0, 14, 0}), 4u);
  EXPECT_EQ(BytecodeVersionFor({0, 15, 0}), 6u);
  EXPECT_EQ(BytecodeVersionFor(Version::Current()), 6u);
}

constexpr const char* kSmallProgram = R"(
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.exponential %arg0 : tensor<4xf32>
  %1 = stablehlo.add %0, %arg0 : tensor<4xf32>
  func.return %1 : tensor<4xf32>
}
)";

TEST(BytecodeWriterTest, WritesProducerAndReadsBack) {
  absl::StatusOr<mlir::OwningOp> module = mlir::ParseMlir(kSmallProgram, "small.mlir");
  ASSERT_TRUE(module.ok()) << module.status();
  for (const char* target : {"current", "minimum", "1.8.0", "0.14.0"}) {
    Version v = *Version::Parse(target);
    absl::StatusOr<std::string> bytes = SerializePortableArtifact(**module, v);
    ASSERT_TRUE(bytes.ok()) << target << ": " << bytes.status();
    BytecodeInfo info;
    absl::StatusOr<mlir::OwningOp> read = ReadBytecode(*bytes, "small.mlir.bc", &info);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(info.producer, absl::StrCat("StableHLO_v", v.ToString()));
    EXPECT_EQ(info.version, BytecodeVersionFor(v));
    absl::StatusOr<mlir::OwningOp> back = DeserializePortableArtifact(*bytes, "small.mlir.bc");
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(mlir::PrintMlir(**back), mlir::PrintMlir(**module)) << target;
  }
  // exponential_v1 before 1.9.0: the op name in the file says so.
  absl::StatusOr<mlir::OwningOp> vhlo = StablehloToVhlo(**module, {1, 8, 0});
  ASSERT_TRUE(vhlo.ok());
  EXPECT_EQ(vhlo.value()
                ->regions[0]
                ->blocks[0]
                ->operations[0]
                ->regions[0]
                ->blocks[0]
                ->operations[0]
                ->name,
            "vhlo.exponential_v1");
}

TEST(BytecodeWriterTest, RefusesNonDefaultAttributesTheTargetLacks) {
  absl::StatusOr<mlir::OwningOp> module = mlir::ParseMlir(R"(
func.func @main(%arg0: tensor<f32>) -> tensor<f32> {
  %0 = "stablehlo.exponential"(%arg0) {
    result_accuracy = #stablehlo.result_accuracy<atol = 1.0e-5, rtol = 0.0, ulps = 1, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>
  } : (tensor<f32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}
)",
                                                          "accuracy.mlir");
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_TRUE(SerializePortableArtifact(**module, {1, 9, 0}).ok());
  absl::StatusOr<std::string> old = SerializePortableArtifact(**module, {1, 8, 0});
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(std::string(old.status().message()),
            "stablehlo.exponential: attribute 'result_accuracy' with a non-default value needs "
            "vhlo.exponential_v2 (StableHLO >= 1.9.0); target 1.8.0 only has vhlo.exponential_v1");
}

TEST(BytecodeWriterTest, RefusesOpsAndTypesNewerThanTheTarget) {
  absl::StatusOr<mlir::OwningOp> tan = mlir::ParseMlir(R"(
func.func @main(%arg0: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.tan %arg0 : tensor<f32>
  func.return %0 : tensor<f32>
}
)",
                                                       "tan.mlir");
  ASSERT_TRUE(tan.ok()) << tan.status();
  absl::StatusOr<std::string> bytes = SerializePortableArtifact(**tan, {1, 3, 0});
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().message(),
            "stablehlo.tan: needs vhlo.tan_v1 (StableHLO >= 1.4.0); target 1.3.0 has no version "
            "of the op");

  absl::StatusOr<mlir::OwningOp> i2 = mlir::ParseMlir(R"(
func.func @main(%arg0: tensor<i2>) -> tensor<i2> {
  func.return %arg0 : tensor<i2>
}
)",
                                                      "i2.mlir");
  ASSERT_TRUE(i2.ok()) << i2.status();
  bytes = SerializePortableArtifact(**i2, {1, 1, 0});
  ASSERT_FALSE(bytes.ok());
  EXPECT_TRUE(absl::StrContains(bytes.status().message(), "type i2 (!vhlo.i2_v1)"))
      << bytes.status();
  EXPECT_TRUE(absl::StrContains(bytes.status().message(), "needs StableHLO >= 1.2.0; target 1.1.0"))
      << bytes.status();
}

// ------------------------------------------------------------ conformance

TEST(BytecodeWriterTest, GoldensRoundTripAtTheirVersion) {
  if (!HaveCorpus()) {
    std::cout << "SKIP: no corpus\n";
    GTEST_SKIP() << "no corpus (set XLITE_CORPUS)";
  }
  auto goldens = CorpusFiles("stablehlo_legalize_to_vhlo.");
  ASSERT_FALSE(goldens.empty());
  int total = 0, matching = 0, byte_exact = 0, current_ok = 0, minimum_ok = 0,
      minimum_expressible = 0;
  std::string table =
      "version   functions  roundtrip  @current  @minimum(expressible)  byte-exact\n";
  std::string failures;
  for (const auto& [version, mlir_path] : goldens) {
    const std::string label = version.ToString();
    const std::string text = ReadFile(mlir_path);
    absl::StatusOr<mlir::OwningOp> source = mlir::ParseMlir(text, mlir_path.filename().string());
    ASSERT_TRUE(source.ok()) << source.status();
    std::map<std::string, std::string> want = PrintFunctions(**source);
    source = mlir::ParseMlir(text, mlir_path.filename().string());

    // The whole program at its own version.
    std::string bytes;
    absl::StatusOr<mlir::OwningOp> back = RoundTrip(**source, version, &bytes);
    std::map<std::string, std::string> got;
    if (back.ok()) {
      got = PrintFunctions(**back);
    } else {
      absl::StrAppend(&failures, label, ": ", back.status().message(), "\n");
    }
    int same = 0, shown = 0;
    for (const auto& [name, printed] : want) {
      auto it = got.find(name);
      if (it != got.end() && it->second == printed) {
        ++same;
        continue;
      }
      if (back.ok() && shown++ < (std::getenv("XLITE_VHLO_VERBOSE") ? 1000 : 3)) {
        absl::StrAppend(&failures, label, " @", name, ":\n",
                        it == got.end() ? "    missing" : FirstDifference(printed, it->second),
                        "\n");
      }
    }
    std::filesystem::path golden_bc = mlir_path;
    golden_bc += ".bc";
    const bool exact = back.ok() && bytes == ReadFile(golden_bc);
    byte_exact += exact ? 1 : 0;

    // Each function on its own at current and at minimum.
    int at_current = 0, at_minimum = 0, expressible_at_minimum = 0;
    for (auto& [name, function] : SplitFunctions(**source)) {
      for (Version target : {Version::Current(), Version::Minimum()}) {
        absl::StatusOr<mlir::OwningOp> one = RoundTrip(*function, target);
        const bool is_current = target == Version::Current();
        if (!one.ok()) {
          if (is_current) {
            absl::StrAppend(&failures, label, " @", name, " at current: ", one.status().message(),
                            "\n");
          }
          continue;
        }
        if (!is_current) ++expressible_at_minimum;
        std::map<std::string, std::string> printed = PrintFunctions(**one);
        const bool ok = printed.size() == 1 && printed.begin()->second == want[name];
        if (ok) {
          ++(is_current ? at_current : at_minimum);
        } else if (shown++ < 3) {
          absl::StrAppend(&failures, label, " @", name, " at ", target.ToString(), ":\n",
                          FirstDifference(want[name], printed.begin()->second), "\n");
        }
      }
    }
    total += static_cast<int>(want.size());
    matching += same;
    current_ok += at_current;
    minimum_ok += at_minimum;
    minimum_expressible += expressible_at_minimum;
    absl::StrAppend(&table, absl::StrFormat("%-9s %9d %10d %9d %9d(%d) %16s%s\n", label,
                                            want.size(), same, at_current, at_minimum,
                                            expressible_at_minimum, exact ? "yes" : "no",
                                            same == static_cast<int>(want.size()) ? "" : "  <--"));
    EXPECT_EQ(at_current, static_cast<int>(want.size())) << label << " at current";
    EXPECT_EQ(at_minimum, expressible_at_minimum) << label << " at minimum";
  }
  absl::StrAppend(&table, absl::StrFormat("%-9s %9d %10d %9d %9d(%d) %13d/%d\n", "total", total,
                                          matching, current_ok, minimum_ok, minimum_expressible,
                                          byte_exact, goldens.size()));
  std::cout << table;
  std::cout << "byte-exact re-serializations at their own version: " << byte_exact << " of "
            << goldens.size() << " goldens\n";
  if (!failures.empty()) std::cout << "mismatches (first 3 per version):\n" << failures;
  EXPECT_EQ(matching, total) << "functions that do not round-trip at their golden's version";
}

// Every MAJOR.MINOR.0 of the window, not only the ones with a golden: each
// function of the newest golden either round-trips at that target or is
// refused with an error that names the target.
TEST(BytecodeWriterTest, EveryVersionInTheWindowRoundTripsOrRefusesByName) {
  if (!HaveCorpus()) {
    std::cout << "SKIP: no corpus\n";
    GTEST_SKIP() << "no corpus (set XLITE_CORPUS)";
  }
  auto goldens = CorpusFiles("stablehlo_legalize_to_vhlo.");
  ASSERT_FALSE(goldens.empty());
  const auto& [newest, path] = goldens.back();
  absl::StatusOr<mlir::OwningOp> source = mlir::ParseMlir(ReadFile(path), path.filename().string());
  ASSERT_TRUE(source.ok()) << source.status();
  std::map<std::string, std::string> want = PrintFunctions(**source);  // takes the functions
  source = mlir::ParseMlir(ReadFile(path), path.filename().string());
  ASSERT_TRUE(source.ok()) << source.status();
  auto functions = SplitFunctions(**source);
  std::string table = absl::StrCat("targets for the ", newest.ToString(),
                                   " golden's functions: version  round-trip/expressible\n");
  int versions = 0;
  for (Version v = Version::Minimum(); v <= Version::Current();
       v = v.minor >= 20 ? Version{v.major + 1, 0, 0} : Version{v.major, v.minor + 1, 0}) {
    ++versions;
    int expressible = 0, same = 0;
    for (auto& [name, function] : functions) {
      absl::StatusOr<mlir::OwningOp> back = RoundTrip(*function, v);
      if (!back.ok()) {
        EXPECT_TRUE(absl::StrContains(back.status().message(), v.ToString()))
            << name << " at " << v.ToString() << ": " << back.status().message();
        continue;
      }
      ++expressible;
      std::map<std::string, std::string> printed = PrintFunctions(**back);
      if (printed.size() == 1 && printed.begin()->second == want[name]) ++same;
    }
    absl::StrAppend(&table, absl::StrFormat("  %-8s %d/%d\n", v.ToString(), same, expressible));
    EXPECT_EQ(same, expressible) << "at " << v.ToString();
  }
  std::cout << table;
  EXPECT_EQ(versions, 33);  // 0.9 .. 0.20 and 1.0 .. 1.20
}

// The StableHLO name of the op an expected-error names ('vhlo.all_reduce_v2'
// -> stablehlo.all_reduce, 'vhlo.func_v1' -> func.func).
std::string NamedOp(const std::string& chunk) {
  static const std::regex kLegalize("operation '(vhlo\\.[a-z_0-9]+)'");
  std::smatch m;
  if (!std::regex_search(chunk, m, kLegalize)) return "";
  const OpVersion* row = FindOpVersion(m[1].str());
  return row == nullptr ? "" : row->target_name;
}

TEST(BytecodeWriterTest, InvalidDowngradesFailNamingOpAndVersion) {
  if (!HaveCorpus()) {
    std::cout << "SKIP: no corpus\n";
    GTEST_SKIP() << "no corpus (set XLITE_CORPUS)";
  }
  int must_fail = 0, failed_named = 0, must_pass = 0, passed = 0;
  std::string report;
  for (const auto& [version, path] : CorpusFiles("vhlo_to_version_downgrade_invalid.")) {
    const std::string text = ReadFile(path);
    std::vector<mlir::SourceChunk> chunks = mlir::SplitInputFile(text);
    if (!absl::StrContains(text, "--split-input-file")) chunks = {{text, 1}};
    for (const mlir::SourceChunk& chunk : chunks) {
      const bool expect_failure = absl::StrContains(chunk.text, "expected-error") ||
                                  absl::StrContains(chunk.text, "CHECK: failed to legalize");
      absl::StatusOr<mlir::OwningOp> module =
          mlir::ParseMlir(chunk.text, path.filename().string(), chunk.first_line);
      ASSERT_TRUE(module.ok()) << path << ":" << chunk.first_line << ": " << module.status();
      absl::StatusOr<std::string> bytes = SerializePortableArtifact(**module, version);
      const std::string where = absl::StrCat(path.filename().string(), ":", chunk.first_line);
      if (!expect_failure) {
        ++must_pass;
        if (bytes.ok()) {
          ++passed;
        } else {
          absl::StrAppend(&report, where, ": unexpected failure: ", bytes.status().message(), "\n");
        }
        continue;
      }
      ++must_fail;
      const std::string op = NamedOp(chunk.text);
      const std::string message = bytes.ok() ? "" : std::string(bytes.status().message());
      const bool named = !bytes.ok() && absl::StrContains(message, version.ToString()) &&
                         (op.empty() || absl::StrContains(message, op));
      if (named) {
        ++failed_named;
      } else {
        absl::StrAppend(&report, where, ": expected a failure naming '", op, "' and ",
                        version.ToString(), ", got: ", bytes.ok() ? "success" : message, "\n");
      }
      if (std::getenv("XLITE_VHLO_VERBOSE")) std::cout << where << ": " << message << "\n";
    }
  }
  std::cout << "invalid downgrades rejected naming op and version: " << failed_named << " of "
            << must_fail << "; valid chunks of those files serialized: " << passed << " of "
            << must_pass << "\n"
            << report;
  EXPECT_GT(must_fail, 0);
  EXPECT_EQ(failed_named, must_fail);
  EXPECT_EQ(passed, must_pass);
}

TEST(BytecodeWriterTest, ValidDowngradesSerialize) {
  if (!HaveCorpus()) {
    std::cout << "SKIP: no corpus\n";
    GTEST_SKIP() << "no corpus (set XLITE_CORPUS)";
  }
  int files = 0, functions = 0, same = 0;
  for (const auto& [version, path] : CorpusFiles("vhlo_to_version_downgrade.")) {
    ++files;
    const std::string text = ReadFile(path);
    absl::StatusOr<mlir::OwningOp> module = mlir::ParseMlir(text, path.filename().string());
    ASSERT_TRUE(module.ok()) << module.status();
    std::map<std::string, std::string> want = PrintFunctions(**module);
    module = mlir::ParseMlir(text, path.filename().string());
    absl::StatusOr<mlir::OwningOp> back = RoundTrip(**module, version);
    ASSERT_TRUE(back.ok()) << path.filename() << ": " << back.status();
    // Reported only: these sources spell some defaults out (source_target_pairs =
    // dense<> on send/recv), which the upgrade leaves implicit.
    std::map<std::string, std::string> got = PrintFunctions(**back);
    for (const auto& [name, printed] : want) {
      ++functions;
      if (got[name] == printed) ++same;
    }
  }
  std::cout << "valid downgrade files serialized and read back: " << files << " (functions "
            << "printing like the source: " << same << " of " << functions << ")\n";
  EXPECT_GT(files, 0);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::vhlo
