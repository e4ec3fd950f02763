#include "xlite/vhlo/bytecode_reader.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"

namespace xlite::vhlo {
namespace {
namespace XLITE_UNITY_ID {

namespace fs = std::filesystem;
using mlir::Attribute;
using mlir::Operation;

std::string VhloCorpusDir() {
  const char* corpus = std::getenv("XLITE_CORPUS");
  if (corpus == nullptr) return "";
  fs::path dir = fs::path(corpus) / "vhlo";
  return fs::is_directory(dir) ? dir.string() : "";
}

#define REQUIRE_CORPUS(dir)                                                          \
  const std::string dir = VhloCorpusDir();                                           \
  if (dir.empty()) {                                                                 \
    std::cerr << "SKIP: no corpus (set XLITE_CORPUS to the shared corpus folder)\n"; \
    GTEST_SKIP() << "SKIP: no corpus";                                               \
  }

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<fs::path> Goldens(const std::string& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (absl::EndsWith(entry.path().string(), ".mlir.bc")) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

void Walk(const Operation& op, const std::function<void(const Operation&)>& fn) {
  fn(op);
  for (const auto& region : op.regions) {
    for (const auto& block : region->blocks) {
      for (const auto& inner : block->operations) Walk(*inner, fn);
    }
  }
}

const Operation* FindFunction(const Operation& module, absl::string_view name) {
  const Operation* found = nullptr;
  Walk(module, [&](const Operation& op) {
    const Attribute* sym = op.attr("sym_name");
    if (op.name == "vhlo.func_v1" && sym && sym->kind == Attribute::Kind::kString &&
        sym->text == name) {
      found = &op;
    }
  });
  return found;
}

// "stablehlo_legalize_to_vhlo.1_20_0.mlir.bc" -> "1.20.0"; "" for others.
std::string GoldenVersion(const fs::path& path) {
  std::string name = path.filename().string();
  const std::string prefix = "stablehlo_legalize_to_vhlo.";
  if (!absl::StartsWith(name, prefix)) return "";
  std::string v = name.substr(prefix.size(), name.size() - prefix.size() - 8);
  return absl::StrReplaceAll(v, {{"_", "."}});
}

TEST(BytecodeReaderTest, EveryGoldenReads) {
  REQUIRE_CORPUS(dir);
  int files = 0;
  int64_t ops = 0;
  for (const fs::path& path : Goldens(dir)) {
    const std::string bytes = ReadFile(path);
    ASSERT_TRUE(IsBytecode(bytes)) << path;
    BytecodeInfo info;
    absl::StatusOr<mlir::OwningOp> module = ReadBytecode(bytes, path.filename().string(), &info);
    ASSERT_TRUE(module.ok()) << module.status();
    EXPECT_EQ((*module)->name, "builtin.module");
    EXPECT_TRUE(absl::StartsWith(info.producer, "StableHLO_v")) << info.producer;
    EXPECT_LE(info.version, 6u);
    const std::string version = GoldenVersion(path);
    if (!version.empty()) {
      EXPECT_EQ(info.producer, "StableHLO_v" + version);
    }
    ++files;
    ops += info.num_operations;
  }
  std::cout << "read " << files << " bytecode files, " << ops << " operations\n";
  EXPECT_GE(files, 29);
}

TEST(BytecodeReaderTest, BytecodeVersionsOfProducers) {
  REQUIRE_CORPUS(dir);
  const std::map<std::string, uint64_t> expected = {{"0.9.0", 0},  {"0.10.0", 1}, {"0.11.0", 1},
                                                    {"0.13.0", 3}, {"0.14.0", 4}, {"0.15.0", 6},
                                                    {"1.0.0", 6},  {"1.20.0", 6}};
  for (const auto& [version, bytecode_version] : expected) {
    fs::path path =
        fs::path(dir) / absl::StrCat("stablehlo_legalize_to_vhlo.",
                                     absl::StrReplaceAll(version, {{".", "_"}}), ".mlir.bc");
    BytecodeInfo info;
    ASSERT_TRUE(ReadBytecode(ReadFile(path), path.string(), &info).ok()) << path;
    EXPECT_EQ(info.version, bytecode_version) << version;
    ASSERT_EQ(info.dialects.size(), 2u);
    EXPECT_EQ(info.dialects[0].name, "builtin");
    EXPECT_EQ(info.dialects[1].name, "vhlo");
  }
}

TEST(BytecodeReaderTest, ComparisonDirectionInEveryVersion) {
  REQUIRE_CORPUS(dir);
  for (const fs::path& path : Goldens(dir)) {
    if (GoldenVersion(path).empty()) continue;
    absl::StatusOr<mlir::OwningOp> module = ReadBytecode(ReadFile(path), path.string());
    ASSERT_TRUE(module.ok()) << module.status();
    const Operation* func = FindFunction(**module, "attr_comparison_direction_eq");
    ASSERT_NE(func, nullptr) << path;
    const Operation* compare = nullptr;
    Walk(*func, [&](const Operation& op) {
      if (op.name == "vhlo.compare_v1") compare = &op;
    });
    ASSERT_NE(compare, nullptr) << path;
    const Attribute* direction = compare->attr("comparison_direction");
    ASSERT_NE(direction, nullptr) << path;
    EXPECT_EQ(direction->kind, Attribute::Kind::kEnum);
    EXPECT_EQ(direction->name, "comparison_direction_v1");
    EXPECT_EQ(direction->text, "EQ");
    ASSERT_EQ(compare->operands.size(), 2u);
    EXPECT_EQ(compare->operands[0]->owner, func->regions[0]->blocks[0].get());
    EXPECT_EQ(compare->result_type().kind, mlir::Type::Kind::kTensor);
    EXPECT_EQ(compare->result_type().element, "i1");
  }
}

TEST(BytecodeReaderTest, SpotChecksOfTheNewestGolden) {
  REQUIRE_CORPUS(dir);
  fs::path path = fs::path(dir) / "stablehlo_legalize_to_vhlo.1_20_0.mlir.bc";
  absl::StatusOr<mlir::OwningOp> module = ReadBytecode(ReadFile(path), path.string());
  ASSERT_TRUE(module.ok()) << module.status();

  const Operation* func = FindFunction(**module, "attr_comparison_direction_eq");
  ASSERT_NE(func, nullptr);
  const Attribute* function_type = func->attr("function_type");
  ASSERT_NE(function_type, nullptr);
  EXPECT_EQ(function_type->kind, Attribute::Kind::kType);
  EXPECT_EQ(function_type->type.kind, mlir::Type::Kind::kFunction);
  ASSERT_NE(func->attr("sym_visibility"), nullptr);
  EXPECT_EQ(func->attr("sym_visibility")->kind, Attribute::Kind::kString);

  // A dense constant: #vhlo.tensor_v1<dense<...>>.
  int dense = 0, quantized = 0, bounded = 0, tokens = 0;
  Walk(**module, [&](const Operation& op) {
    for (const mlir::NamedAttribute& a : op.attributes) {
      if (a.second.kind == Attribute::Kind::kDense) {
        ++dense;
        ASSERT_NE(a.second.literal, nullptr);
        EXPECT_EQ(a.second.literal->shape().dimensions().size(), a.second.type.dims.size());
      }
    }
    auto count = [&](const mlir::Value& v) {
      if (absl::StartsWith(v.type.element, "!quant.uniform<")) ++quantized;
      if (v.type.encoding == "#stablehlo.type_extensions<bounds = [16, ?]>") ++bounded;
      if (v.type.kind == mlir::Type::Kind::kToken) ++tokens;
    };
    for (const auto& r : op.results) count(*r);
    for (const auto& region : op.regions) {
      for (const auto& block : region->blocks) {
        for (const auto& arg : block->arguments) count(*arg);
      }
    }
  });
  EXPECT_GT(dense, 50);
  EXPECT_GT(quantized, 0);
  EXPECT_GT(bounded, 0);
  EXPECT_GT(tokens, 0);

  const Operation* custom_call = nullptr;
  const Operation* op_custom_call = FindFunction(**module, "op_custom_call");
  ASSERT_NE(op_custom_call, nullptr);
  Walk(*op_custom_call, [&](const Operation& op) {
    if (op.name == "vhlo.custom_call_v2" && !custom_call) custom_call = &op;
  });
  ASSERT_NE(custom_call, nullptr);
  EXPECT_EQ(custom_call->attr("call_target_name")->text, "foo");
  EXPECT_EQ(custom_call->attr("api_version")->text, "API_VERSION_STATUS_RETURNING");
  EXPECT_EQ(custom_call->attr("has_side_effect")->kind, Attribute::Kind::kBool);
  const Attribute* aliases = custom_call->attr("output_operand_aliases");
  ASSERT_NE(aliases, nullptr);
  ASSERT_EQ(aliases->elements.size(), 1u);
  EXPECT_EQ(aliases->elements[0].name, "vhlo.output_operand_alias_v1");

  const Operation* constant = FindFunction(**module, "op_constant");
  ASSERT_NE(constant, nullptr);
}

// Counts ops in each `func.func @name` of a golden's MLIR source: tokens
// "stablehlo.x", "func.return", "func.call", "chlo.x" outside comments,
// attributes (#..) and types (!..).
std::map<std::string, int> SourceOpCounts(const std::string& text) {
  std::map<std::string, int> counts;
  std::string current;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    size_t comment = line.find("//");
    if (comment != std::string::npos) line = line.substr(0, comment);
    size_t func = line.find("func.func ");
    if (func != std::string::npos) {
      size_t at = line.find('@', func);
      size_t end = line.find_first_of("( ", at);
      current = at == std::string::npos ? "" : line.substr(at + 1, end - at - 1);
      counts[current];
      continue;
    }
    if (current.empty()) continue;
    // Pretty `return %x : T` has no dialect prefix.
    if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "return")) ++counts[current];
    for (const char* dialect : {"stablehlo.", "func.", "chlo."}) {
      for (size_t p = line.find(dialect); p != std::string::npos; p = line.find(dialect, p + 1)) {
        const char before = p == 0 ? ' ' : line[p - 1];
        if (before == '#' || before == '!' || before == '.' || std::isalnum(before) ||
            before == '_') {
          continue;
        }
        if (before == '"') {  // a generic op name, not a string attribute
          size_t close = line.find('"', p);
          size_t next = close == std::string::npos ? close : line.find_first_not_of(' ', close + 1);
          if (next == std::string::npos || line[next] != '(') {
            continue;
          }
        }
        ++counts[current];
      }
    }
  }
  return counts;
}

TEST(BytecodeReaderTest, OpCountsMatchTheSourceFunctions) {
  REQUIRE_CORPUS(dir);
  int compared = 0, mismatched = 0;
  for (const fs::path& path : Goldens(dir)) {
    if (GoldenVersion(path).empty()) continue;
    std::string source_path = path.string();
    source_path.resize(source_path.size() - 3);  // drop ".bc"
    std::map<std::string, int> expected = SourceOpCounts(ReadFile(source_path));
    absl::StatusOr<mlir::OwningOp> module = ReadBytecode(ReadFile(path), path.string());
    ASSERT_TRUE(module.ok()) << module.status();
    for (const auto& func : (*module)->regions[0]->blocks[0]->operations) {
      if (func->name != "vhlo.func_v1") continue;
      const std::string name = mlir::SymbolName(*func);
      auto it = expected.find(name);
      if (it == expected.end()) continue;
      int ops = -1;  // the function itself
      Walk(*func, [&](const Operation&) { ++ops; });
      ++compared;
      if (ops != it->second) {
        ++mismatched;
        ADD_FAILURE() << path.filename() << " @" << name << ": " << ops
                      << " operations read, source has " << it->second;
      }
    }
  }
  std::cout << "compared op counts of " << compared << " functions\n";
  EXPECT_GT(compared, 1000);
  EXPECT_EQ(mismatched, 0);
}

TEST(BytecodeReaderTest, UnknownVhloOpIsReadForALaterLayerToReject) {
  REQUIRE_CORPUS(dir);
  fs::path path = fs::path(dir) / "invalid_vhlo_future.mlir.bc";
  BytecodeInfo info;
  absl::StatusOr<mlir::OwningOp> module = ReadBytecode(ReadFile(path), path.string(), &info);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(info.producer, "StableHLO_v2.0.0");
  const Operation* future = nullptr;
  Walk(**module, [&](const Operation& op) {
    if (op.name == "vhlo.constant_v99") future = &op;
  });
  ASSERT_NE(future, nullptr);
  ASSERT_EQ(future->attributes.size(), 1u);
  EXPECT_EQ(future->attributes[0].second.kind, Attribute::Kind::kDense);
  EXPECT_EQ(future->attributes[0].second.literal->GetDouble(0), 1.0);
}

void ExpectCleanError(const std::string& bytes, const std::string& name) {
  absl::StatusOr<mlir::OwningOp> module = ReadBytecode(bytes, name);
  if (!module.ok()) {
    EXPECT_TRUE(absl::StartsWith(module.status().message(), name)) << module.status();
  }
}

TEST(BytecodeReaderTest, TruncatedFilesGiveErrors) {
  REQUIRE_CORPUS(dir);
  for (const char* file :
       {"vhlo_emit_version_api.1_1_0.mlir.bc", "stablehlo_legalize_to_vhlo.0_9_0.mlir.bc",
        "stablehlo_legalize_to_vhlo.1_20_0.mlir.bc"}) {
    const std::string bytes = ReadFile(fs::path(dir) / file);
    const size_t step = bytes.size() < 1000 ? 1 : 7;
    int errors = 0, tries = 0;
    for (size_t n = 0; n < bytes.size(); n += step) {
      absl::StatusOr<mlir::OwningOp> module = ReadBytecode(bytes.substr(0, n), "cut.mlir.bc");
      ++tries;
      if (!module.ok()) {
        ++errors;
        EXPECT_TRUE(absl::StartsWith(module.status().message(), "cut.mlir.bc: "))
            << module.status();
      }
    }
    EXPECT_EQ(errors, tries) << file;
  }
}

TEST(BytecodeReaderTest, BitFlipsGiveErrorsNotCrashes) {
  REQUIRE_CORPUS(dir);
  for (const char* file :
       {"vhlo_emit_version_api.1_1_0.mlir.bc", "stablehlo_legalize_to_vhlo.0_13_0.mlir.bc",
        "stablehlo_legalize_to_vhlo.1_20_0.mlir.bc"}) {
    const std::string bytes = ReadFile(fs::path(dir) / file);
    // Every bit of a small file; one bit of every 41st byte of the big ones.
    const bool every_bit = bytes.size() < 1000;
    for (size_t i = 0; i < bytes.size(); i += every_bit ? 1 : 41) {
      for (int bit = 0; bit < 8; ++bit) {
        if (!every_bit && bit != static_cast<int>(i % 8)) continue;
        std::string flipped = bytes;
        flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
        ExpectCleanError(flipped, "flip.mlir.bc");
      }
    }
  }
}

TEST(BytecodeReaderTest, ErrorsNameFileOffsetAndSection) {
  absl::StatusOr<mlir::OwningOp> module = ReadBytecode("not bytecode", "x.mlir.bc");
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().message(),
            "x.mlir.bc: offset 0 (header): not MLIR bytecode (the file does not start with "
            "\"ML\\xEFR\")");
  // Version 7 is newer than the format this reader knows.
  module = ReadBytecode(std::string("ML\xEFR\x0F", 5), "x.mlir.bc");
  ASSERT_FALSE(module.ok());
  EXPECT_TRUE(absl::StrContains(module.status().message(), "bytecode version 7"))
      << module.status();
  // A string section whose count promises more than it holds.
  std::string bytes("ML\xEFR\x0Dp\0\x00\x03\x7F\x00", 11);
  module = ReadBytecode(bytes, "x.mlir.bc");
  ASSERT_FALSE(module.ok());
  EXPECT_TRUE(absl::StartsWith(module.status().message(), "x.mlir.bc: offset ")) << module.status();
}

// Written by `mlir-opt-19 --emit-bytecode` (bytecode version 6) from:
//   module @m attributes {test.unit, test.arr = [1, 2.5 : f32, "s"],
//                         test.da = array<i32: 1, 2>} {
//     func.func @f(%a: tensor<2xi32>, %b: i1) -> tensor<2xi32> {
//       %c = arith.constant dense<[1, -2]> : tensor<2xi32>
//       %s = arith.constant dense<true> : tensor<3xi1>
//       %0 = arith.addi %a, %c : tensor<2xi32>
//       cf.cond_br %b, ^bb1(%0 : tensor<2xi32>), ^bb2
//     ^bb1(%x: tensor<2xi32>):
//       return %x : tensor<2xi32>
//     ^bb2:
//       %1 = arith.muli %0, %0 : tensor<2xi32>
//       return %1 : tensor<2xi32>
//     }
//     func.func private @g() -> f32
//   }
// It exercises the builtin dialect's encodings, blocks, successors and
// properties of non-VHLO ops.
TEST(BytecodeReaderTest, BuiltinFuncArithFromMlirOpt) {
  const std::string bytes(
      "\x4d\x4c\xef\x52\x0d\x4d\x4c\x49\x52\x31\x39\x2e\x31\x2e\x37\x00\x01\x2b\x09\x01\x05\x09"
      "\x0d\x0f\x01\x03\x13\x03\x05\x07\x17\x05\x07\x1b\x1f\x23\x07\x03\x27\x03\x63\x43\x11\x01"
      "\x41\x0b\x23\x0b\x17\x0f\x1f\x0b\x0b\x33\x0b\x07\x0b\x13\x0b\x0b\x13\x0b\x0b\x0b\x13\x13"
      "\x13\x2f\x13\x13\x13\x13\x13\x13\x13\x13\x13\x05\x03\x59\x01\x11\x13\x0b\x07\x0f\x13\x0f"
      "\x1b\x13\x02\xba\x02\x05\x15\x03\x07\x05\x07\x0f\x11\x13\x15\x05\x17\x01\x07\x09\x0b\x0d"
      "\x11\x0b\x05\x13\x05\x10\x00\x00\x08\x10\x05\x19\x05\x1b\x23\x07\x05\x11\x01\x00\x00\x00"
      "\x02\x00\x00\x00\x05\x1d\x0f\x05\x1f\x17\x01\x03\x03\x0d\x0d\x05\x21\x17\x01\x05\x07\x0d"
      "\x0f\x05\x23\x05\x25\x17\x01\x1b\x07\x17\x01\x05\x21\x17\x01\x05\x47\x25\x01\x11\x01\x00"
      "\x00\x00\xfe\xff\xff\xff\x17\x01\x07\x15\x25\x09\x03\xff\x17\x01\x09\x15\x17\x01\x0b\x15"
      "\x17\x01\x0d\x0b\x17\x01\x0f\x11\x17\x01\x11\x0b\x17\x01\x15\x15\x17\x01\x17\x0b\x23\x61"
      "\x72\x69\x74\x68\x2e\x6f\x76\x65\x72\x66\x6c\x6f\x77\x3c\x6e\x6f\x6e\x65\x3e\x00\x1b\x03"
      "\x09\x07\x01\x09\x0b\x01\x02\x02\x1b\x03\x0d\x03\x01\x02\x04\x05\x05\x01\x03\x03\x01\x05"
      "\x01\x03\x05\x04\xb9\x05\x01\x51\x19\x03\x01\x07\x04\xa7\x03\x01\x09\x03\x50\x1f\x03\x07"
      "\x04\x83\x07\x0f\x13\x05\x03\x29\x07\x2b\x00\x07\x42\x2f\x05\x03\x01\x07\x42\x33\x07\x03"
      "\x09\x09\x46\x35\x09\x03\x01\x05\x01\x05\x0d\x4c\x37\x0b\x05\x03\x09\x05\x03\x05\x07\x03"
      "\x03\x39\x00\x05\x04\x3b\x03\x0b\x09\x0b\x46\x3d\x09\x03\x01\x05\x09\x09\x05\x04\x3f\x03"
      "\x0d\x03\x50\x27\x0d\x07\x04\x03\x01\x06\x03\x01\x05\x01\x00\x16\x02\x27\x11\x05\x05\x05"
      "\x15\x11\x05\x13\x0f\x11\x0b\x0b\x13\x0f\x0f\x07\x0d\x0b\x11\x62\x75\x69\x6c\x74\x69\x6e"
      "\x00\x66\x75\x6e\x63\x00\x61\x72\x69\x74\x68\x00\x63\x66\x00\x6d\x6f\x64\x75\x6c\x65\x00"
      "\x72\x65\x74\x75\x72\x6e\x00\x63\x6f\x6e\x73\x74\x61\x6e\x74\x00\x61\x64\x64\x69\x00\x6d"
      "\x75\x6c\x69\x00\x63\x6f\x6e\x64\x5f\x62\x72\x00\x74\x2e\x6d\x6c\x69\x72\x00\x74\x65\x73"
      "\x74\x2e\x61\x72\x72\x00\x73\x00\x74\x65\x73\x74\x2e\x64\x61\x00\x74\x65\x73\x74\x2e\x75"
      "\x6e\x69\x74\x00\x6d\x00\x66\x00\x67\x00\x70\x72\x69\x76\x61\x74\x65\x00\x08\x37\x0f\x05"
      "\x2f\x01\x0b\x01\x1b\x01\x1d\x01\x03\x2d\x03\x31\x03\x83\x09\x0d\x03\x03\x01\x0b\x01\x21"
      "\x01\x23\x4b",
      531);
  BytecodeInfo info;
  absl::StatusOr<mlir::OwningOp> module = ReadBytecode(bytes, "t.mlir.bc", &info);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(info.version, 6u);
  EXPECT_EQ(info.producer, "MLIR19.1.7");
  const Operation& m = **module;
  EXPECT_EQ(m.attr("sym_name")->text, "m");
  EXPECT_EQ(m.attr("test.unit")->kind, Attribute::Kind::kUnit);
  const Attribute* arr = m.attr("test.arr");
  ASSERT_NE(arr, nullptr);
  ASSERT_EQ(arr->elements.size(), 3u);
  EXPECT_EQ(arr->elements[0].int_value, 1);
  EXPECT_EQ(arr->elements[1].float_value, 2.5);
  EXPECT_EQ(arr->elements[2].text, "s");
  EXPECT_EQ(m.attr("test.da")->ints, (std::vector<int64_t>{1, 2}));

  const auto& funcs = m.regions[0]->blocks[0]->operations;
  ASSERT_EQ(funcs.size(), 2u);
  const Operation& f = *funcs[0];
  EXPECT_EQ(f.name, "func.func");
  EXPECT_EQ(mlir::SymbolName(f), "f");
  ASSERT_EQ(f.regions[0]->blocks.size(), 3u);
  const auto& entry = f.regions[0]->blocks[0];
  ASSERT_EQ(entry->operations.size(), 4u);
  const Attribute* c = entry->operations[0]->attr("value");
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->kind, Attribute::Kind::kDense);
  EXPECT_EQ(c->literal->GetInt(1), -2);
  const Attribute* s = entry->operations[1]->attr("value");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->literal->GetInt(2), 1);
  const Operation& branch = *entry->operations[3];
  EXPECT_EQ(branch.name, "cf.cond_br");
  ASSERT_EQ(branch.successors.size(), 2u);
  EXPECT_EQ(branch.successors[0], f.regions[0]->blocks[1].get());
  // `%1 = arith.muli %0, %0` uses the addi result across blocks.
  const Operation& mul = *f.regions[0]->blocks[2]->operations[0];
  ASSERT_EQ(mul.operands.size(), 2u);
  EXPECT_EQ(mul.operands[0]->defining_op, entry->operations[2].get());
  EXPECT_EQ(funcs[1]->attr("sym_visibility")->text, "private");
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::vhlo
