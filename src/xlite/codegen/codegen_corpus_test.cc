// Corpus-driven: every instruction of the kernel opcodes in the JAX programs'
// before_optimizations.txt, and every kLoop fusion of XLA:CPU's
// cpu_after_optimizations.txt, compiled as a standalone kernel (its operands
// become parameters) and compared with the interpreter on random inputs.
// Prints a table per opcode: compiled / agreeing / unimplemented / failed.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "xlite/codegen/codegen_test_util.h"
#include "xlite/codegen/jit.h"
#include "xlite/text/printer.h"

namespace xlite::codegen {
namespace {
namespace XLITE_UNITY_ID {

namespace fs = std::filesystem;

std::string CorpusDir() {
  if (const char* env = std::getenv("XLITE_CORPUS")) return env;
  return "../shared/corpus";
}

bool IsKernelOpcode(HloOpcode op) {
  if (IsElementwiseOpcode(op)) return true;
  switch (op) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kIota:
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kBitcastConvert:
    case HloOpcode::kTranspose:
    case HloOpcode::kSlice:
    case HloOpcode::kPad:
    case HloOpcode::kConcatenate:
    case HloOpcode::kReverse:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kGather:
    case HloOpcode::kScatter:
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kSelectAndScatter:
    case HloOpcode::kMap:
    case HloOpcode::kRngBitGenerator:
      return true;
    default:
      return false;
  }
}

// `instr` alone in a module: the original's other computations, and an entry
// whose parameters stand for its operands (named as they are, so the printed
// instruction refers to them).
std::string StandaloneModule(const HloModule& module, const HloInstruction& instr) {
  std::string text = PrintModule(module);
  const size_t entry = text.find("\nENTRY ");
  std::string prefix = entry == std::string::npos ? "" : text.substr(0, entry + 1);
  const size_t first_line = prefix.find('\n');
  prefix = "HloModule standalone\n" +
           (first_line == std::string::npos ? "" : prefix.substr(first_line + 1));
  std::string body;
  std::set<const HloInstruction*> declared;
  int64_t number = 0;
  for (const HloInstruction* op : instr.operands()) {
    if (!declared.insert(op).second) continue;
    body += absl::StrCat("  %", op->name(), " = ", op->shape().ToString(true), " parameter(",
                         number++, ")\n");
  }
  std::string printed = PrintInstruction(instr);
  if (printed.rfind("ROOT ", 0) == 0) printed = printed.substr(5);
  return absl::StrCat(prefix, "\nENTRY %standalone_entry {\n", body, "  ROOT ", printed, "\n}\n");
}

struct Row {
  int64_t total = 0, compiled = 0, agreeing = 0, unimplemented = 0, skipped = 0, failed = 0;
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs every selected instruction of `file` standalone; adds to `table`.
void RunFile(const fs::path& file, bool fusions_only, std::map<std::string, Row>& table,
             std::vector<std::string>& failures) {
  auto module = ParseHloModule(ReadFile(file), file.string());
  ASSERT_TRUE(module.ok()) << module.status();
  for (const auto& computation : (*module)->computations()) {
    for (const auto& instr : computation->instructions()) {
      const HloOpcode op = instr->opcode();
      const bool wanted = fusions_only
                              ? op == HloOpcode::kFusion && instr->attrs().fusion_kind == "kLoop"
                              : IsKernelOpcode(op);
      if (!wanted) continue;
      const std::string key = fusions_only ? "fusion(kLoop)" : std::string(HloOpcodeString(op));
      Row& row = table[key];
      ++row.total;
      const std::string where = absl::StrCat(file.parent_path().filename().string(), "/",
                                             file.filename().string(), " ", instr->name());
      auto standalone = ParseHloModule(StandaloneModule(**module, *instr), where);
      if (!standalone.ok()) {
        ++row.failed;
        failures.push_back(
            absl::StrCat(where, ": standalone module: ", standalone.status().ToString()));
        continue;
      }
      auto args = MakeFakeArguments(**standalone, FakeDataKind::kRandom, 42);
      if (!args.ok()) {
        ++row.skipped;
        continue;
      }
      auto expected = Evaluate(**standalone, *args);
      if (!expected.ok()) {  // the oracle cannot run it (elided constants, ...)
        ++row.skipped;
        continue;
      }
      auto jit = Jit::Create();
      ASSERT_TRUE(jit.ok()) << jit.status();
      const testing::KernelRun run =
          testing::RunKernel(**jit, *(*standalone)->entry_computation()->root_instruction(), *args,
                             *expected, /*exact=*/false, {1, 2});
      if (run.unimplemented) {
        ++row.unimplemented;
        failures.push_back(absl::StrCat(where, ": ", run.status.ToString()));
        continue;
      }
      if (!run.status.ok()) {
        ++row.failed;
        failures.push_back(absl::StrCat(where, ": ", run.status.ToString()));
        continue;
      }
      ++row.compiled;
      if (run.mismatch.empty()) {
        ++row.agreeing;
      } else {
        ++row.failed;
        failures.push_back(absl::StrCat(where, ": ", run.mismatch));
      }
    }
  }
}

void PrintTable(const std::string& title, const std::map<std::string, Row>& table) {
  Row sum;
  std::printf("\n%s\n%-24s %7s %9s %9s %14s %8s %7s\n", title.c_str(), "opcode", "total",
              "compiled", "agreeing", "unimplemented", "skipped", "failed");
  for (const auto& [op, row] : table) {
    std::printf("%-24s %7lld %9lld %9lld %14lld %8lld %7lld\n", op.c_str(),
                static_cast<long long>(row.total), static_cast<long long>(row.compiled),
                static_cast<long long>(row.agreeing), static_cast<long long>(row.unimplemented),
                static_cast<long long>(row.skipped), static_cast<long long>(row.failed));
    sum.total += row.total;
    sum.compiled += row.compiled;
    sum.agreeing += row.agreeing;
    sum.unimplemented += row.unimplemented;
    sum.skipped += row.skipped;
    sum.failed += row.failed;
  }
  std::printf("%-24s %7lld %9lld %9lld %14lld %8lld %7lld\n", "all",
              static_cast<long long>(sum.total), static_cast<long long>(sum.compiled),
              static_cast<long long>(sum.agreeing), static_cast<long long>(sum.unimplemented),
              static_cast<long long>(sum.skipped), static_cast<long long>(sum.failed));
}

void RunCorpus(const std::string& file_name, bool fusions_only, const std::string& title) {
  const fs::path jax = fs::path(CorpusDir()) / "jax";
  if (!fs::exists(jax)) {
    GTEST_SKIP() << "corpus not found at " << jax << " (set XLITE_CORPUS); SKIPPED, not passed";
  }
  std::map<std::string, Row> table;
  std::vector<std::string> failures;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(jax)) {
    if (fs::exists(entry.path() / file_name)) files.push_back(entry.path() / file_name);
  }
  std::sort(files.begin(), files.end());
  ASSERT_EQ(files.size(), 7u) << "expected the 7 JAX programs";
  for (const fs::path& f : files) RunFile(f, fusions_only, table, failures);
  PrintTable(title, table);
  for (const std::string& f : failures) std::printf("  %s\n", f.c_str());
  int64_t failed = 0, unimplemented = 0;
  for (const auto& [op, row] : table) {
    failed += row.failed;
    unimplemented += row.unimplemented;
  }
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(unimplemented, 0);
}

TEST(CodegenCorpus, JaxBeforeOptimizations) {
  RunCorpus("before_optimizations.txt", false,
            "JAX programs, before_optimizations.txt: each instruction as a kernel");
}

TEST(CodegenCorpus, JaxCpuLoopFusions) {
  RunCorpus("cpu_after_optimizations.txt", true,
            "JAX programs, XLA:CPU's kLoop fusions (cpu_after_optimizations.txt)");
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::codegen
