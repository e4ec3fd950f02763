// `xlite memory`: plans a module's memory and prints the plan.
#include "tools/xlite/memory.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "xlite/buffers/buffer_assignment_text.h"
#include "xlite/buffers/memory_report.h"
#include "xlite/buffers/plan_memory.h"
#include "xlite/passes/dump.h"
#include "xlite/passes/simplify.h"
#include "xlite/schedule/rematerialization.h"
#include "xlite/stablehlo/import.h"
#include "xlite/support/flags.h"
#include "xlite/text/parser.h"
#include "xlite/text/printer.h"
#include "xlite/verify/verifier.h"
#include "xlite/vhlo/bytecode_reader.h"
#include "xlite/vhlo/upgrade.h"

namespace xlite::cli {
namespace {

struct MemoryFlags {
  bool simplify = false;
  bool split = false;
  int64_t top = 10;
  int64_t alignment = 64;
  std::vector<std::string> print = {"report"};
  std::string file;
};

int Fail(const std::string& message) {
  std::cerr << "xlite memory: " << message << "\n";
  return 1;
}

int ExitCode(const absl::Status& s) {
  return absl::IsUnimplemented(s) ? 3 : absl::IsResourceExhausted(s) ? 4 : 1;
}

constexpr const char* kPrintChoices =
    "report, module, buffer-assignment, memory-usage, timeline-tsv, timeline-svg";

bool KnownPrint(const std::string& p) {
  return p == "report" || p == "module" || p == "buffer-assignment" || p == "memory-usage" ||
         p == "timeline-tsv" || p == "timeline-svg";
}

// Plans one module, dumps what --xla_dump_to asks for, prints what --print
// asks for.
int PlanOne(HloModule& module, const MemoryFlags& f, const DebugOptions& debug, int64_t module_id) {
  ModuleDumper dumper(debug, module, module_id);
  absl::Status dumped = dumper.DumpStage(module, "before_optimizations");
  if (f.simplify) {
    absl::StatusOr<std::unique_ptr<HloPassPipeline>> simplify = SimplifyPipeline();
    if (!simplify.ok()) return Fail(std::string(simplify.status().message()));
    PipelineOptions options;
    options.verify_each_pass = debug.verify_each_pass;
    options.after_pass = [&](const HloModule& m, const PassRecord& r) { dumper.AfterPass(m, r); };
    (*simplify)->set_options(options);
    absl::StatusOr<bool> changed = (*simplify)->Run(module);
    if (!changed.ok()) {
      std::cerr << changed.status().message() << "\n";
      return ExitCode(changed.status());
    }
  }
  PlanOptions options = PlanOptionsFrom(debug);
  options.verify = true;  // the report needs the checker's bounds
  options.assignment.alignment = f.alignment;
  // A limit not met still gets its report (what is live at the peak
  // reached), then the error.
  options.rematerialization.error_if_not_met = false;
  absl::StatusOr<MemoryPlan> plan = PlanMemory(module, options);
  if (!plan.ok()) {
    (void)dumper.Finish();
    std::cerr << module.name() << ": " << plan.status().message() << "\n";
    return ExitCode(plan.status());
  }
  const BufferAssignment& assignment = *plan->assignment;
  ReportOptions report_options;
  report_options.top_buffers = f.top;
  const std::string report = MemoryReport(*plan, report_options);
  if (dumper.enabled()) {
    for (const auto& [suffix, text] : std::vector<std::pair<std::string, std::string>>{
             {".cpu_after_optimizations.txt", PrintModule(module)},
             {".cpu_after_optimizations-buffer-assignment.txt",
              BufferAssignmentToXlaString(assignment)},
             {".cpu_after_optimizations-memory-usage-report.txt", XlaMemoryUsageReport(assignment)},
             {".xlite-memory-report.txt", report},
             {".xlite-memory-timeline.tsv", MemoryTimelineTsv(assignment)},
             {".xlite-memory-timeline.svg", MemoryTimelineSvg(assignment)}}) {
      if (absl::Status s = dumper.DumpFile(suffix, text); dumped.ok()) dumped = s;
    }
  }
  if (absl::Status s = dumper.Finish(); dumped.ok()) dumped = s;
  if (!dumped.ok()) return Fail(std::string(dumped.message()));
  for (const std::string& p : f.print) {
    if (p == "report") {
      std::cout << report;
    } else if (p == "module") {
      std::cout << PrintModule(module);
    } else if (p == "buffer-assignment") {
      std::cout << BufferAssignmentToXlaString(assignment);
    } else if (p == "memory-usage") {
      std::cout << XlaMemoryUsageReport(assignment);
    } else if (p == "timeline-tsv") {
      std::cout << MemoryTimelineTsv(assignment);
    } else if (p == "timeline-svg") {
      std::cout << MemoryTimelineSvg(assignment);
    }
  }
  if (plan->rematerialization && !plan->rematerialization->met) {
    const absl::Status not_met = NotMetError(module, *plan->rematerialization);
    std::cerr << not_met.message() << "\n";  // "module NAME: the memory limit ..."
    return ExitCode(not_met);
  }
  return 0;
}

}  // namespace

int Memory(const std::vector<std::string>& raw_args) {
  std::vector<std::string> args = raw_args;
  absl::StatusOr<DebugOptions> debug = ReadDebugOptions(args);
  if (!debug.ok()) return Fail(std::string(debug.status().message()));
  MemoryFlags f;
  for (const std::string& arg : args) {
    auto value_of = [&](absl::string_view flag) -> std::optional<std::string> {
      if (absl::StartsWith(arg, absl::StrCat(flag, "="))) return arg.substr(flag.size() + 1);
      return std::nullopt;
    };
    if (arg == "--simplify" || arg == "--simplify=true") {
      f.simplify = true;
    } else if (arg == "--simplify=false") {
      f.simplify = false;
    } else if (arg == "--split-input-file" || arg == "--split_input_file") {
      f.split = true;
    } else if (auto v = value_of("--top")) {
      if (!absl::SimpleAtoi(*v, &f.top) || f.top < 0) {
        return Fail(absl::StrCat("--top must be a count, got '", *v, "'"));
      }
    } else if (auto v = value_of("--alignment")) {
      if (!absl::SimpleAtoi(*v, &f.alignment) || f.alignment < 1) {
        return Fail(absl::StrCat("--alignment must be a positive byte count, got '", *v, "'"));
      }
    } else if (auto v = value_of("--print")) {
      f.print = absl::StrSplit(*v, ',', absl::SkipEmpty());
      for (const std::string& p : f.print) {
        if (!KnownPrint(p)) {
          return Fail(absl::StrCat("--print takes ", kPrintChoices, "; got '", p, "'"));
        }
      }
    } else if (arg == "-" || !absl::StartsWith(arg, "-")) {
      if (!f.file.empty()) return Fail("memory takes one input file");
      f.file = arg;
    } else {
      return Fail(absl::StrCat("unknown flag '", arg, "' for memory (see xlite help)"));
    }
  }
  if (f.file.empty()) return Fail("memory needs an input file (or - for stdin)");
  std::string text;
  if (f.file == "-") {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
  } else {
    std::ifstream in(f.file, std::ios::binary);
    if (!in) return Fail(absl::StrCat("cannot open '", f.file, "'"));
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  const std::string label = f.file == "-" ? "<stdin>" : f.file;
  int64_t module_id = 1;
  if (absl::EndsWith(f.file, ".mlir.bc") || vhlo::IsBytecode(text)) {
    absl::StatusOr<std::unique_ptr<HloModule>> module = vhlo::ImportPortableArtifact(text, label);
    if (!module.ok()) {
      std::cerr << module.status().message() << "\n";
      return ExitCode(module.status());
    }
    return PlanOne(**module, f, *debug, module_id);
  }
  if (absl::EndsWith(f.file, ".mlir")) {
    int exit_code = 0;
    for (auto& p : stablehlo::ImportStablehlo(text, label, f.split)) {
      int code = 0;
      if (p.module.ok()) {
        code = PlanOne(**p.module, f, *debug, module_id++);
      } else {
        std::cerr << p.module.status().message() << "\n";
        code = ExitCode(p.module.status());
      }
      if (exit_code == 0) exit_code = code;
    }
    return exit_code;
  }
  if (f.split) return Fail("--split-input-file applies to .mlir input");
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, label);
  if (!module.ok()) {
    std::cerr << module.status().message() << "\n";
    return 1;
  }
  if (absl::Status s = VerifyModule(**module); !s.ok()) {
    std::cerr << label << ": verifier: " << s.message() << "\n";
    return 1;
  }
  return PlanOne(**module, f, *debug, module_id);
}

}  // namespace xlite::cli
