// The versioned op registry and the VHLO -> StableHLO upgrade.
//
// The conformance part runs StableHLO's compatibility goldens
// ($XLITE_CORPUS/vhlo/stablehlo_legalize_to_vhlo.X_Y_Z.mlir.bc, each the
// artifact StableHLO X.Y.Z wrote for its .mlir sibling): every function of the
// upgraded artifact must print exactly like the same function of the source.
#include "xlite/vhlo/upgrade.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
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
#include "xlite/vhlo/bytecode_reader.h"
#include "xlite/vhlo/vhlo_ops.h"

namespace xlite::vhlo {
namespace {
namespace XLITE_UNITY_ID {

// ------------------------------------------------------------------ registry

TEST(VhloOpsTest, ParsesVersions) {
  auto v = Version::Parse("1.2.3");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, (Version{1, 2, 3}));
  EXPECT_EQ(v->ToString(), "1.2.3");
  EXPECT_EQ(*Version::Parse("current"), Version::Current());
  EXPECT_EQ(*Version::Parse("minimum"), Version::Minimum());
  EXPECT_EQ(*Version::Parse(" 0.10.0 "), (Version{0, 10, 0}));
  for (const char* bad :
       {"", "1.2", "1.2.3.4", "a.b.c", "1..3", "-1.0.0", "1.2.x", "latest", "99999999999.0.0"}) {
    EXPECT_FALSE(Version::Parse(bad).ok()) << bad;
  }
  EXPECT_EQ(Version::Parse("1.2").status().message(),
            "invalid version '1.2': expected MAJOR.MINOR.PATCH, 'current' or 'minimum'");
}

TEST(VhloOpsTest, ComparesVersionsNumerically) {
  EXPECT_LT((Version{0, 9, 0}), (Version{0, 10, 0}));
  EXPECT_LT((Version{0, 20, 0}), (Version{1, 0, 0}));
  EXPECT_LT((Version{1, 2, 9}), (Version{1, 10, 0}));
  EXPECT_EQ((Version{1, 4, 0}), (Version{1, 4, 0}));
  EXPECT_GT(Version::Current(), Version::Minimum());
}

TEST(VhloOpsTest, WindowIsMinimumToCurrent) {
  EXPECT_EQ(Version::Minimum().ToString(), "0.9.0");
  EXPECT_EQ(Version::Current().ToString(), "1.20.0");
  EXPECT_TRUE(InWindow(Version{0, 9, 0}));
  EXPECT_TRUE(InWindow(Version{1, 20, 0}));
  EXPECT_FALSE(InWindow(Version{0, 8, 9}));
  EXPECT_FALSE(InWindow(Version{2, 0, 0}));
}

TEST(VhloOpsTest, ParsesProducer) {
  EXPECT_EQ(*ParseProducer("StableHLO_v1.20.0"), (Version{1, 20, 0}));
  EXPECT_FALSE(ParseProducer("MLIR20.0.0git").ok());
  EXPECT_FALSE(ParseProducer("StableHLO_vcurrent").ok());
}

TEST(VhloOpsTest, TableIsConsistent) {
  const std::vector<OpVersion>& ops = AllOpVersions();
  EXPECT_GE(ops.size(), 145u);
  for (size_t i = 0; i < ops.size(); ++i) {
    const OpVersion& op = ops[i];
    SCOPED_TRACE(op.vhlo_name);
    EXPECT_TRUE(absl::StartsWith(op.vhlo_name, "vhlo."));
    EXPECT_TRUE(absl::EndsWith(op.vhlo_name, absl::StrCat("_v", op.version)));
    EXPECT_LE(op.min, op.max);
    EXPECT_GE(op.min, Version::Minimum());
    EXPECT_LE(op.max, Version::Current());
    if (i > 0) {
      EXPECT_LT(ops[i - 1].vhlo_name, op.vhlo_name);  // sorted, unique
    }
  }
  // Versions of one op follow each other without gaps or overlaps, and the
  // newest one is live.
  std::map<std::string, std::vector<const OpVersion*>> by_target;
  for (const OpVersion& op : ops) by_target[op.target_name].push_back(&op);
  for (const auto& [target, versions] : by_target) {
    if (target == "stablehlo.return") continue;
    std::vector<const OpVersion*> sorted = OpVersionsOf(target);
    ASSERT_EQ(sorted.size(), versions.size()) << target;
    EXPECT_EQ(sorted.back()->max, Version::Current()) << target;
    for (size_t i = 0; i < sorted.size(); ++i) {
      EXPECT_EQ(sorted[i]->version, static_cast<int>(i) + 1) << target;
      if (i == 0) continue;
      Version next = sorted[i - 1]->max;
      ++next.minor;
      next.patch = 0;
      EXPECT_EQ(sorted[i]->min, next) << sorted[i]->vhlo_name;
    }
  }
}

TEST(VhloOpsTest, LooksUpByVhloName) {
  const OpVersion* add = FindOpVersion("vhlo.add_v1");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->target_name, "stablehlo.add");
  EXPECT_EQ(add->min, (Version{0, 9, 0}));
  EXPECT_EQ(add->max, Version::Current());
  EXPECT_EQ(FindOpVersion("add_v1"), add);
  EXPECT_EQ(FindOpVersion("vhlo.func_v1")->target_name, "func.func");
  EXPECT_EQ(FindOpVersion("vhlo.call_v1")->target_name, "func.call");

  absl::StatusOr<const OpVersion*> unknown = LookupOpVersion("vhlo.constant_v99");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(), "unregistered operation 'vhlo.constant_v99'");
}

TEST(VhloOpsTest, LooksUpByStablehloNameAndVersion) {
  auto at = [](const char* op, Version v) {
    absl::StatusOr<const OpVersion*> row = OpVersionAt(op, v);
    return row.ok() ? (*row)->vhlo_name : std::string(row.status().message());
  };
  EXPECT_EQ(at("stablehlo.all_gather", {1, 4, 0}), "vhlo.all_gather_v1");
  EXPECT_EQ(at("stablehlo.all_gather", {1, 5, 0}), "vhlo.all_gather_v2");
  EXPECT_EQ(at("stablehlo.all_gather", Version::Current()), "vhlo.all_gather_v2");
  EXPECT_EQ(at("stablehlo.gather", {1, 0, 0}), "vhlo.gather_v1");
  EXPECT_EQ(at("stablehlo.gather", {1, 1, 0}), "vhlo.gather_v2");
  EXPECT_EQ(at("stablehlo.exponential", {1, 8, 0}), "vhlo.exponential_v1");
  EXPECT_EQ(at("stablehlo.exponential", {1, 9, 0}), "vhlo.exponential_v2");
  EXPECT_EQ(at("stablehlo.cbrt", {1, 9, 0}), "vhlo.cbrt_v1");
  EXPECT_EQ(at("stablehlo.dynamic_conv", {0, 19, 0}), "vhlo.dynamic_conv_v1");
  EXPECT_EQ(at("stablehlo.dynamic_conv", {0, 20, 0}), "vhlo.dynamic_conv_v2");
  EXPECT_EQ(at("stablehlo.send", {1, 12, 0}), "vhlo.send_v2");
  EXPECT_EQ(at("stablehlo.custom_call", {1, 17, 0}), "vhlo.custom_call_v1");
  EXPECT_EQ(at("stablehlo.custom_call", {1, 18, 0}), "vhlo.custom_call_v2");
  EXPECT_EQ(at("func.func", {0, 9, 0}), "vhlo.func_v1");
  // Outside an op's range.
  EXPECT_EQ(at("stablehlo.tan", {1, 3, 0}),
            "'stablehlo.tan' has no VHLO version legal at 1.3.0 (first: vhlo.tan_v1 from 1.4.0)");
  EXPECT_EQ(at("stablehlo.collective_broadcast", {0, 15, 0}),
            "'stablehlo.collective_broadcast' has no VHLO version legal at 0.15.0 (first: "
            "vhlo.collective_broadcast_v1 from 0.16.0)");
  EXPECT_EQ(at("stablehlo.no_such_op", {1, 0, 0}), "'stablehlo.no_such_op' has no VHLO version");
}

TEST(VhloOpsTest, ChecksOpsAgainstTheProducerVersion) {
  const OpVersion* tan = FindOpVersion("vhlo.tan_v1");
  EXPECT_TRUE(CheckOpLegalAt(*tan, {1, 4, 0}).ok());
  EXPECT_TRUE(CheckOpLegalAt(*tan, {1, 20, 0}).ok());  // old versions read fine
  EXPECT_EQ(CheckOpLegalAt(*tan, {1, 3, 0}).message(),
            "operation 'vhlo.tan_v1' exists from StableHLO 1.4.0 on, but the artifact was "
            "produced by StableHLO 1.3.0");
  EXPECT_EQ(LatestVersionOf(*FindOpVersion("vhlo.gather_v1"))->vhlo_name, "vhlo.gather_v2");
}

TEST(VhloOpsTest, KnowsVersionedTypesAndAttributes) {
  EXPECT_EQ(FindVersionedType("f8E4M3FNUZ")->min, (Version{0, 10, 0}));
  EXPECT_EQ(FindVersionedType("i2")->min, (Version{1, 2, 0}));
  EXPECT_EQ(FindVersionedType("f32"), nullptr);  // in VHLO from the start
  EXPECT_EQ(FindVersionedAttribute("#vhlo.result_accuracy_v1"), nullptr);
  EXPECT_EQ(FindVersionedAttribute("vhlo.result_accuracy_v1")->min, (Version{1, 9, 0}));
  EXPECT_EQ(FindVersionedAttribute("replica_group_mesh_axes_v1")->min, (Version{1, 16, 0}));
}

// ------------------------------------------------------------------ upgrade

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Each top-level operation of `module` printed on its own, by symbol name.
std::map<std::string, std::string> PrintFunctions(mlir::Operation& module) {
  std::map<std::string, std::string> out;
  if (module.regions.empty() || module.regions[0]->blocks.empty()) return out;
  auto& ops = module.regions[0]->blocks[0]->operations;
  for (size_t i = 0; i < ops.size(); ++i) {
    mlir::Operation wrapper;
    wrapper.name = "builtin.module";
    wrapper.regions.push_back(std::make_unique<mlir::Region>());
    wrapper.regions[0]->blocks.push_back(std::make_unique<mlir::Block>());
    wrapper.regions[0]->blocks[0]->operations.push_back(std::move(ops[i]));
    std::string name = mlir::SymbolName(*wrapper.regions[0]->blocks[0]->operations[0]);
    if (name.empty()) name = absl::StrCat("#", i);
    out[name] = mlir::PrintMlir(wrapper);
    ops[i] = std::move(wrapper.regions[0]->blocks[0]->operations[0]);
  }
  return out;
}

// "stablehlo_legalize_to_vhlo.1_20_0.mlir.bc" -> 1.20.0
Version GoldenVersion(const std::string& filename) {
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

std::filesystem::path CorpusDir() {
  const char* corpus = std::getenv("XLITE_CORPUS");
  if (corpus == nullptr) return {};
  return std::filesystem::path(corpus) / "vhlo";
}

// The first line where two printed functions differ, both sides.
std::string FirstDifference(const std::string& want, const std::string& got) {
  std::vector<std::string> a = absl::StrSplit(want, '\n');
  std::vector<std::string> b = absl::StrSplit(got, '\n');
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    std::string x = i < a.size() ? a[i] : "<end>";
    std::string y = i < b.size() ? b[i] : "<end>";
    if (x != y) return absl::StrCat("    source:   ", x, "\n    artifact: ", y);
  }
  return "";
}

TEST(UpgradeTest, GoldensMatchTheirSourcePrograms) {
  std::filesystem::path dir = CorpusDir();
  if (dir.empty() || !std::filesystem::exists(dir)) {
    std::cout << "SKIP: no corpus\n";
    GTEST_SKIP() << "no corpus (set XLITE_CORPUS)";
  }
  std::vector<std::pair<Version, std::filesystem::path>> goldens;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (absl::StartsWith(name, "stablehlo_legalize_to_vhlo.") && absl::EndsWith(name, ".mlir.bc")) {
      goldens.emplace_back(GoldenVersion(name), entry.path());
    }
  }
  std::sort(goldens.begin(), goldens.end());
  ASSERT_FALSE(goldens.empty());

  int total = 0, matching = 0;
  std::string table = "version   functions  matching\n";
  std::string failures;
  for (const auto& [version, bc_path] : goldens) {
    std::filesystem::path mlir_path = bc_path;
    mlir_path.replace_extension();  // drop ".bc"
    const std::string label = version.ToString();
    absl::StatusOr<mlir::OwningOp> source =
        mlir::ParseMlir(ReadFile(mlir_path), mlir_path.filename().string());
    ASSERT_TRUE(source.ok()) << source.status();
    std::map<std::string, std::string> want = PrintFunctions(**source);

    BytecodeInfo info;
    absl::StatusOr<mlir::OwningOp> artifact =
        DeserializePortableArtifact(ReadFile(bc_path), bc_path.filename().string());
    std::map<std::string, std::string> got;
    if (artifact.ok()) {
      got = PrintFunctions(**artifact);
    } else {
      absl::StrAppend(&failures, label, ": ", artifact.status().message(), "\n");
    }
    int same = 0;
    int shown = 0;
    for (const auto& [name, text] : want) {
      auto it = got.find(name);
      if (it != got.end() && it->second == text) {
        ++same;
        continue;
      }
      if (artifact.ok() && shown++ < (std::getenv("XLITE_VHLO_VERBOSE") ? 1000 : 3)) {
        absl::StrAppend(
            &failures, label, " @", name, ":\n",
            it == got.end() ? "    missing from the artifact" : FirstDifference(text, it->second),
            "\n");
      }
    }
    if (artifact.ok() && got.size() != want.size()) {
      absl::StrAppend(&failures, label, ": ", got.size(), " functions in the artifact, ",
                      want.size(), " in the source\n");
    }
    total += static_cast<int>(want.size());
    matching += same;
    absl::StrAppend(&table, absl::StrFormat("%-9s %9d %9d%s\n", label, want.size(), same,
                                            same == static_cast<int>(want.size()) ? "" : "  <--"));
  }
  absl::StrAppend(&table, absl::StrFormat("%-9s %9d %9d\n", "total", total, matching));
  std::cout << table;
  if (!failures.empty()) std::cout << "mismatches (first 3 per version):\n" << failures;
  EXPECT_EQ(matching, total) << "functions that do not print like their source program";
}

TEST(UpgradeTest, RefusesUnknownOpsNamingThem) {
  std::filesystem::path dir = CorpusDir();
  if (dir.empty() || !std::filesystem::exists(dir / "invalid_vhlo_future.mlir.bc")) {
    std::cout << "SKIP: no corpus\n";
    GTEST_SKIP() << "no corpus (set XLITE_CORPUS)";
  }
  absl::StatusOr<mlir::OwningOp> module = DeserializePortableArtifact(
      ReadFile(dir / "invalid_vhlo_future.mlir.bc"), "invalid_vhlo_future.mlir.bc");
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(module.status().message(),
            "invalid_vhlo_future.mlir.bc: unregistered operation 'vhlo.constant_v99' (artifact "
            "produced by StableHLO_v2.0.0)");
}

// A small VHLO program built by hand: upgrades and their errors.
mlir::OwningOp VhloFunction(std::unique_ptr<mlir::Operation> body_op) {
  auto module = std::make_unique<mlir::Operation>();
  module->name = "builtin.module";
  module->regions.push_back(std::make_unique<mlir::Region>());
  module->regions[0]->blocks.push_back(std::make_unique<mlir::Block>());
  auto func = std::make_unique<mlir::Operation>();
  func->name = "vhlo.func_v1";
  func->attributes = {{"sym_name", mlir::Attribute::String("f")},
                      {"sym_visibility", mlir::Attribute::String("")}};
  mlir::Attribute function_type;
  function_type.kind = mlir::Attribute::Kind::kType;
  function_type.type = *mlir::ParseTypeText("(tensor<f32>) -> tensor<f32>");
  func->attributes.emplace_back("function_type", function_type);
  func->regions.push_back(std::make_unique<mlir::Region>());
  auto block = std::make_unique<mlir::Block>();
  auto arg = std::make_unique<mlir::Value>();
  arg->type = mlir::Type::Tensor({}, "f32");
  arg->name = "arg0";
  arg->owner = block.get();
  body_op->operands.push_back(arg.get());
  auto result = std::make_unique<mlir::Value>();
  result->type = mlir::Type::Tensor({}, "f32");
  result->defining_op = body_op.get();
  auto ret = std::make_unique<mlir::Operation>();
  ret->name = "vhlo.return_v1";
  ret->operands.push_back(result.get());
  body_op->results.push_back(std::move(result));
  block->arguments.push_back(std::move(arg));
  block->operations.push_back(std::move(body_op));
  block->operations.push_back(std::move(ret));
  func->regions[0]->blocks.push_back(std::move(block));
  module->regions[0]->blocks[0]->operations.push_back(std::move(func));
  return module;
}

std::unique_ptr<mlir::Operation> Op(const char* name, std::vector<mlir::NamedAttribute> attrs) {
  auto op = std::make_unique<mlir::Operation>();
  op->name = name;
  op->attributes = std::move(attrs);
  return op;
}

TEST(UpgradeTest, UpgradesOldOpVersionsToCurrentOps) {
  mlir::OwningOp module = VhloFunction(Op("vhlo.exponential_v1", {}));
  absl::StatusOr<mlir::OwningOp> upgraded = VhloToStablehlo(*module, Version{1, 8, 0});
  ASSERT_TRUE(upgraded.ok()) << upgraded.status();
  EXPECT_EQ(mlir::PrintMlir(**upgraded),
            "\"builtin.module\"() ({\n"
            "  \"func.func\"() ({\n"
            "  ^bb0(%arg0: tensor<f32>):\n"
            "    %0 = \"stablehlo.exponential\"(%arg0) : (tensor<f32>) -> tensor<f32>\n"
            "    \"func.return\"(%0) : (tensor<f32>) -> ()\n"
            "  }) {function_type = (tensor<f32>) -> tensor<f32>, sym_name = \"f\"} : () -> ()\n"
            "}) : () -> ()\n");
}

TEST(UpgradeTest, RefusesOpsNewerThanTheProducer) {
  mlir::OwningOp module = VhloFunction(Op("vhlo.tan_v2", {}));
  absl::StatusOr<mlir::OwningOp> upgraded = VhloToStablehlo(*module, Version{1, 9, 0});
  ASSERT_FALSE(upgraded.ok());
  EXPECT_EQ(upgraded.status().message(),
            "operation 'vhlo.tan_v2' exists from StableHLO 1.10.0 on, but the artifact was "
            "produced by StableHLO 1.9.0 (artifact produced by StableHLO_v1.9.0)");
}

TEST(UpgradeTest, RefusesProducersOutsideTheWindow) {
  mlir::OwningOp module = VhloFunction(Op("vhlo.abs_v1", {}));
  absl::StatusOr<mlir::OwningOp> upgraded = VhloToStablehlo(*module, Version{2, 0, 0});
  ASSERT_FALSE(upgraded.ok());
  EXPECT_EQ(upgraded.status().message(),
            "artifact produced by StableHLO 2.0.0 is outside the supported window 0.9.0..1.20.0");
  EXPECT_FALSE(VhloToStablehlo(*module, Version{0, 8, 0}).ok());
}

TEST(UpgradeTest, RefusesUnknownAttributesNamingThem) {
  mlir::Attribute strange = mlir::Attribute::Enum("frobnicate_v1", "X");
  mlir::OwningOp module = VhloFunction(Op("vhlo.abs_v1", {{"mode", strange}}));
  absl::StatusOr<mlir::OwningOp> upgraded = VhloToStablehlo(*module, Version{1, 0, 0});
  ASSERT_FALSE(upgraded.ok());
  EXPECT_EQ(upgraded.status().message(),
            "unknown VHLO attribute #vhlo<frobnicate_v1 X> in 'mode' of 'vhlo.abs_v1' (artifact "
            "produced by StableHLO_v1.0.0)");
}

TEST(UpgradeTest, RefusesUpgradesThatWouldChangeMeaning) {
  mlir::OwningOp module =
      VhloFunction(Op("vhlo.dynamic_conv_v1",
                      {{"padding", *mlir::ParseAttributeText("dense<1> : tensor<2x2xi64>")}}));
  absl::StatusOr<mlir::OwningOp> upgraded = VhloToStablehlo(*module, Version{0, 19, 0});
  ASSERT_FALSE(upgraded.ok());
  EXPECT_TRUE(absl::StrContains(upgraded.status().message(),
                                "cannot upgrade 'vhlo.dynamic_conv_v1' to 'vhlo.dynamic_conv_v2': "
                                "attribute 'padding'"))
      << upgraded.status();
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::vhlo
