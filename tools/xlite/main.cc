// The xlite command line: `xlite opt` parses, verifies and prints modules;
// `xlite translate` prints StableHLO programs canonically; `xlite run`
// interprets; `xlite memory` plans memory.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "tools/xlite/memory.h"
#include "tools/xlite/run.h"
#include "xlite/compiler.h"
#include "xlite/passes/dump.h"
#include "xlite/passes/pipeline.h"
#include "xlite/passes/registry.h"
#include "xlite/passes/simplify.h"
#include "xlite/stablehlo/import.h"
#include "xlite/stablehlo/mlir_parser.h"
#include "xlite/stablehlo/printer.h"
#include "xlite/support/flags.h"
#include "xlite/text/parser.h"
#include "xlite/text/printer.h"
#include "xlite/verify/verifier.h"
#include "xlite/vhlo/bytecode_reader.h"
#include "xlite/vhlo/bytecode_writer.h"
#include "xlite/vhlo/upgrade.h"

namespace {

constexpr char kUsage[] =
    R"(usage: xlite <command> [flags] FILE|-

commands:
  opt        parse a module and print it (StableHLO .mlir: lowered to HLO and verified)
             --print=long|short            output form (default long)
             --syntax_sugar_async_ops=BOOL print async ops as op-start/op-done (default true)
             --verify=BOOL                 run the verifier after parsing (default true)
             --split-input-file            .mlir: each `// -----` chunk is its own program
             --passes=a,b                  run these passes in order (see docs/passes.md)
             --pipeline=simplify           the simplification passes to a fixed point
             --pipeline=cpu                the CPU compiler's HLO passes (simplify, lowering,
                                           fusion, scheduling, copies): XLA's
                                           cpu_after_optimizations
             --xlite_verify_each_pass      verify after every pass
             --xlite_pass_timing           print each pass's time on stderr (with
                                           --pipeline=cpu and run: the CPU compiler's
                                           passes and backend steps, JIT included)
             --xla_dump_to=DIR             dump before/after_optimizations (XLA's file names)
             --xla_dump_hlo_pass_re=RE     ... and a snapshot after each matching pass
             --xla_dump_hlo_module_re=RE   only dump modules whose name matches
             --xla_disable_hlo_passes=a,b  --xla_enable_hlo_passes_only=a,b
             (XLA_FLAGS is read too; the command line wins)
             exit codes: 0 ok, 1 error, 3 unsupported op/feature
  translate  print a StableHLO program in canonical generic MLIR form
             --to=stablehlo                output format (the default, and the only one so far)
             --split-input-file            each `// -----` chunk is its own program
             --deserialize                 read a StableHLO portable artifact (VHLO bytecode,
                                           .mlir.bc: implied) and print it as StableHLO text
             --print-stablehlo-version     ... first printing the artifact's producer version
             --serialize [--target=V] [-o OUT.mlir.bc]   write a portable artifact (VHLO
                                           bytecode) at V = X.Y.Z, current (default) or minimum,
                                           downgrading ops; fails naming what V cannot express
  run        compile a module for the CPU and run it, or evaluate it with the interpreter
             --backend=cpu|interpreter     (default cpu: one device)
             --reference_platform=interpreter   also evaluate with the interpreter and print the
                                           largest differences per output
             --xlite_cpu_threads=N         threads for the CPU backend (default: usable cores)
             --xlite_profile               print time per thunk, largest first
             --xlite_cpu_concurrent_executor=BOOL   run independent thunks at once
                                           (default true) or in program order
             --xlite_cpu_enable_command_buffer=BOOL   record runs of kernels, copies and
                                           loops over them as command buffers (default true;
                                           off under --xlite_profile)
             --xlite_cpu_enable_loop_kernels=BOOL   compile a while or conditional of small
                                           kernels into one function that runs the loop
                                           (default true; off under --xlite_profile)
             --xla_allow_excess_precision=BOOL   fusions compute bf16/f16 in f32 and round
                                           once (default true, as XLA); false rounds every op
             --inputs=random|zeros|FILE.npz|FILE.npy   arguments (default random, XLA's
                                           fake-data rules: in-range gather/scatter/slice indices)
             --seed=N                      seed for random inputs (default 0)
             --replicas=N --partitions=N   devices (default 1; at most 4096 in all): the
                                           CPU backend runs on that many devices of one
                                           process, each with its own memory, replica and
                                           partition id; the interpreter simulates them.
                                           Outputs and comparisons are per device
             --xla_force_host_platform_device_count=N   CPU devices of the client
                                           (default: as many as the run needs)
             --xla_cpu_collective_call_terminate_timeout_seconds=N   how long a device waits
                                           for its peers at a collective (default 60)
             --print_literals              print whole outputs (default: a preview)
             --output=FILE.npz             save outputs out0, out1, ... (d<i>_ per device)
             --infeed=FILE.npz             infeed blocks, in order, one array each; for
                                           infeeds of a tuple, that many consecutive arrays
                                           (leaf order) make one block; every device gets all
             --outfeed=FILE.npz            save the outfeed values outfeed0, ... (tuple values
                                           flattened; printed like outputs either way)
             --iterations=N                run N times, report the median time (one device:
                                           Execute on argument buffers made once, as
                                           cpu_bench times it; several devices: runs from
                                           literals, arguments copied in, results out)
             --max_elements=N              give up (exit 4) after producing N elements
             --max_seconds=N               give up (exit 4) after N seconds (both: the
                                           interpreter, as backend or reference, only)
             exit codes: 0 ok, 1 error, 3 unsupported op/feature, 4 too slow
  memory     plan memory: flatten-call-graph, buffer_donor pairing, copy-insertion, schedule,
             buffer assignment, the independent checker; print xlite's memory report
             --print=report|module|buffer-assignment|memory-usage|timeline-tsv|timeline-svg
                                           what to print (comma list; default report);
                                           buffer-assignment and memory-usage are XLA's formats
             --simplify                    run --pipeline=simplify first
             --top=N                       buffers listed at the peak (default 10)
             --alignment=N                 temp heap alignment in bytes (default 64)
             --xla_dump_to=DIR             also write module_NNNN.<name>.cpu_after_optimizations
                                           .txt, -buffer-assignment.txt, -memory-usage-report.txt
                                           and xlite-memory-report.txt, xlite-memory-timeline.tsv/.svg
             --xlite_strict_donation       a donated parameter no output can use is an error
             --xlite_memory_limit=BYTES    rematerialize until the schedule's peak is at most
                                           BYTES (also for run and compile); the report lists
                                           what was recomputed
             --split-input-file            .mlir: each `// -----` chunk is its own program
             exit codes: 0 ok, 1 error, 3 unsupported op/feature, 4 memory limit not met
  help       show this text

Input format is chosen by extension: .mlir (StableHLO text, pretty or generic op syntax),
.mlir.bc or any file starting with the bytecode magic (StableHLO portable artifact: VHLO
bytecode, StableHLO 0.9.0 to 1.20.0),
anything else HLO text (.hlo/.txt); '-' reads HLO text from stdin (translate: StableHLO).
)";

bool ParseBoolFlag(const std::string& value, bool* out) {
  if (value == "true" || value == "1") {
    *out = true;
    return true;
  }
  if (value == "false" || value == "0") {
    *out = false;
    return true;
  }
  return false;
}

int Fail(const std::string& message) {
  std::cerr << "xlite: " << message << "\n";
  return 1;
}

bool ReadInput(const std::string& path, std::string* out, std::string* error) {
  if (path == "-") {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    *out = ss.str();
    return true;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = absl::StrCat("cannot open '", path, "'");
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

int RunOpt(std::vector<std::string> args) {
  absl::StatusOr<xlite::DebugOptions> debug = xlite::ReadDebugOptions(args);
  if (!debug.ok()) return Fail(std::string(debug.status().message()));
  xlite::HloPassPipeline pipeline("opt");
  xlite::PipelineOptions pipeline_options;
  pipeline_options.verify_each_pass = debug->verify_each_pass;
  pipeline_options.disabled_passes = debug->disable_hlo_passes;
  pipeline_options.enabled_passes_only = debug->enable_hlo_passes_only;
  int64_t module_id = 1;  // XLA numbers dumped modules from 0001
  xlite::PrintOptions options;
  bool verify = true, split = false, cpu_pipeline = false, other_passes = false;
  std::string file;
  for (const std::string& arg : args) {
    auto value_of = [&](absl::string_view flag) -> std::optional<std::string> {
      if (absl::StartsWith(arg, absl::StrCat(flag, "="))) return arg.substr(flag.size() + 1);
      return std::nullopt;
    };
    if (auto v = value_of("--print")) {
      if (*v == "long") {
        options.long_form = true;
      } else if (*v == "short") {
        options.long_form = false;
      } else {
        return Fail(absl::StrCat("--print must be long or short, got '", *v, "'"));
      }
    } else if (auto v = value_of("--syntax_sugar_async_ops")) {
      if (!ParseBoolFlag(*v, &options.syntax_sugar_async_ops)) {
        return Fail(absl::StrCat("--syntax_sugar_async_ops must be true or false, got '", *v, "'"));
      }
    } else if (auto v = value_of("--verify")) {
      if (!ParseBoolFlag(*v, &verify)) {
        return Fail(absl::StrCat("--verify must be true or false, got '", *v, "'"));
      }
    } else if (arg == "--split-input-file" || arg == "--split_input_file") {
      split = true;
    } else if (auto v = value_of("--passes")) {
      for (absl::string_view name : absl::StrSplit(*v, ',', absl::SkipEmpty())) {
        absl::StatusOr<std::unique_ptr<xlite::HloPass>> pass = xlite::CreatePass(name);
        if (!pass.ok()) return Fail(std::string(pass.status().message()));
        pipeline.AddPass(std::move(*pass));
        other_passes = true;
      }
    } else if (auto v = value_of("--pipeline")) {
      if (*v == "cpu") {
        cpu_pipeline = true;
        continue;
      }
      if (*v != "simplify")
        return Fail(absl::StrCat("--pipeline must be simplify or cpu, got '", *v, "'"));
      absl::StatusOr<std::unique_ptr<xlite::HloPassPipeline>> simplify = xlite::SimplifyPipeline();
      if (!simplify.ok()) return Fail(std::string(simplify.status().message()));
      pipeline.AddPass(std::move(*simplify));
      other_passes = true;
    } else if (arg == "-" || !absl::StartsWith(arg, "-")) {
      if (!file.empty()) return Fail("opt takes one input file");
      file = arg;
    } else {
      return Fail(absl::StrCat("unknown flag '", arg, "' for opt (see xlite help)"));
    }
  }
  if (file.empty()) return Fail("opt needs an input file (or - for stdin)");
  if (cpu_pipeline && other_passes) {
    return Fail("--pipeline=cpu runs the CPU compiler's passes: it takes no other passes");
  }
  std::string text, error;
  if (!ReadInput(file, &text, &error)) return Fail(error);
  // Runs the requested passes, dumping with XLA's flags and file names.
  auto optimize = [&](xlite::HloModule& module) -> int {
    if (cpu_pipeline) {
      // What the CPU compiler makes of it: XLA's cpu_after_optimizations.
      xlite::CompileOptions compile;
      compile.debug = *debug;
      compile.module_id = module_id++;
      if (absl::Status s = xlite::OptimizeHloModuleForCpu(module, compile); !s.ok()) {
        std::cerr << s.message() << "\n";
        return absl::IsUnimplemented(s) ? 3 : 1;
      }
      return 0;
    }
    xlite::ModuleDumper dumper(*debug, module, module_id++);
    xlite::PipelineOptions options_with_dumps = pipeline_options;
    options_with_dumps.after_pass = [&](const xlite::HloModule& m, const xlite::PassRecord& r) {
      dumper.AfterPass(m, r);
    };
    pipeline.set_options(options_with_dumps);
    absl::Status dumped = dumper.DumpStage(module, "before_optimizations");
    absl::StatusOr<bool> changed = pipeline.Run(module);
    if (debug->pass_timing) std::cerr << xlite::FormatPassTiming(pipeline.records());
    if (!changed.ok()) {
      (void)dumper.Finish();  // keep the snapshots that lead to the failure
      std::cerr << changed.status().message() << "\n";
      return 1;
    }
    if (dumped.ok()) dumped = dumper.DumpStage(module, "after_optimizations");
    if (absl::Status s = dumper.Finish(); dumped.ok()) dumped = s;
    if (!dumped.ok()) return Fail(std::string(dumped.message()));
    return 0;
  };
  if (absl::EndsWith(file, ".mlir.bc") || xlite::vhlo::IsBytecode(text)) {
    // A portable artifact: VHLO bytecode, upgraded to StableHLO, lowered, verified.
    if (split) return Fail("--split-input-file applies to .mlir text input");
    absl::StatusOr<std::unique_ptr<xlite::HloModule>> module =
        xlite::vhlo::ImportPortableArtifact(text, file);
    if (!module.ok()) {
      std::cerr << module.status().message() << "\n";
      return absl::IsUnimplemented(module.status()) ? 3 : 1;
    }
    if (int r = optimize(**module); r != 0) return r;
    std::cout << xlite::PrintModule(**module, options);
    return 0;
  }
  if (absl::EndsWith(file, ".mlir")) {
    // StableHLO: lowered and verified per program; the exit code is the first failure's.
    int exit_code = 0;
    bool first = true;
    for (auto& p : xlite::stablehlo::ImportStablehlo(text, file, split)) {
      if (!std::exchange(first, false)) std::cout << "// -----\n";
      int code = 0;
      if (p.module.ok()) {
        if (int r = optimize(**p.module); r != 0) return r;
        std::cout << xlite::PrintModule(**p.module, options);
      } else {
        std::cerr << p.module.status().message() << "\n";
        code = absl::IsUnimplemented(p.module.status()) ? 3 : 1;
      }
      if (exit_code == 0) exit_code = code;
    }
    return exit_code;
  }
  if (split) return Fail("--split-input-file applies to .mlir input");
  auto module = xlite::ParseHloModule(text, file == "-" ? "<stdin>" : file);
  if (!module.ok()) {
    std::cerr << module.status().message() << "\n";
    return 1;
  }
  if (verify) {
    absl::Status status = xlite::VerifyModule(**module);
    if (!status.ok()) {
      std::cerr << (file == "-" ? "<stdin>" : file) << ": verifier: " << status.message() << "\n";
      return 1;
    }
  }
  if (int r = optimize(**module); r != 0) return r;
  std::cout << xlite::PrintModule(**module, options);
  return 0;
}

// StableHLO text (or an artifact, re-targeted) to a portable artifact at
// `target`; written to a temporary name and renamed, so a failed run leaves
// no half-written file.
int Serialize(const std::string& text, const std::string& label, const std::string& target,
              const std::string& output) {
  absl::StatusOr<xlite::vhlo::Version> version = xlite::vhlo::Version::Parse(target);
  if (!version.ok()) return Fail(absl::StrCat("--target: ", version.status().message()));
  if (!xlite::vhlo::InWindow(*version)) {
    return Fail(absl::StrCat("--target=", target, " is outside the supported window ",
                             xlite::vhlo::Version::Minimum().ToString(), " to ",
                             xlite::vhlo::Version::Current().ToString()));
  }
  absl::StatusOr<xlite::mlir::OwningOp> program =
      xlite::vhlo::IsBytecode(text) ? xlite::vhlo::DeserializePortableArtifact(text, label)
                                    : xlite::mlir::ParseMlir(text, label);
  absl::StatusOr<std::string> bytes =
      program.ok() ? xlite::vhlo::SerializePortableArtifact(**program, *version) : program.status();
  if (!bytes.ok()) return Fail(std::string(bytes.status().message()));
  if (output.empty() || output == "-") {
    std::cout.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
    return 0;
  }
  const std::string tmp = output + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
    if (!out) return Fail(absl::StrCat("cannot write '", output, "'"));
  }
  if (std::rename(tmp.c_str(), output.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Fail(absl::StrCat("cannot write '", output, "'"));
  }
  return 0;
}

int RunTranslate(const std::vector<std::string>& args) {
  bool split = false, deserialize = false, print_version = false, serialize = false;
  std::string file, output, target = "current";
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--deserialize") {
      deserialize = true;
    } else if (arg == "--serialize") {
      serialize = true;
    } else if (absl::StartsWith(arg, "--target=")) {
      target = arg.substr(9);
    } else if (arg == "-o") {
      if (i + 1 == args.size()) return Fail("-o needs a file name");
      output = args[++i];
    } else if (arg == "--print-stablehlo-version") {
      print_version = true;
    } else if (absl::StartsWith(arg, "--to=")) {
      if (arg != "--to=stablehlo") {
        return Fail(absl::StrCat("--to must be stablehlo, got '", arg.substr(5), "'"));
      }
    } else if (arg == "--split-input-file" || arg == "--split_input_file") {
      split = true;
    } else if (arg == "-" || !absl::StartsWith(arg, "-")) {
      if (!file.empty()) return Fail("translate takes one input file");
      file = arg;
    } else {
      return Fail(absl::StrCat("unknown flag '", arg, "' for translate (see xlite help)"));
    }
  }
  if (file.empty()) return Fail("translate needs an input file (or - for stdin)");
  std::string text, error;
  if (!ReadInput(file, &text, &error)) return Fail(error);
  const std::string label = file == "-" ? "<stdin>" : file;
  if (serialize) return Serialize(text, label, target, output);
  if (deserialize || xlite::vhlo::IsBytecode(text)) {
    // A portable artifact, printed as the canonical StableHLO text.
    if (split) return Fail("--split-input-file applies to .mlir text input");
    if (print_version) {
      // As stablehlo-translate prints it, from the producer string.
      xlite::vhlo::BytecodeInfo info;
      absl::StatusOr<xlite::vhlo::Version> version = absl::InvalidArgumentError("not bytecode");
      if (xlite::vhlo::IsBytecode(text) && xlite::vhlo::ReadBytecode(text, label, &info).ok()) {
        version = xlite::vhlo::ParseProducer(info.producer);
      }
      if (!version.ok()) {
        std::cout << "// Failed parsing StableHLO version from portable artifact\n";
        return 1;
      }
      std::cout << "// Reading portable artifact with StableHLO version: " << version->ToString()
                << "\n";
    }
    absl::StatusOr<xlite::mlir::OwningOp> program =
        xlite::vhlo::DeserializePortableArtifact(text, label);
    if (!program.ok()) {
      std::cerr << program.status().message() << "\n";
      return 1;
    }
    std::cout << xlite::mlir::PrintMlir(**program);
    return 0;
  }
  std::vector<xlite::mlir::SourceChunk> chunks;
  if (split) {
    chunks = xlite::mlir::SplitInputFile(text);
  } else {
    chunks.push_back({text, 1});
  }
  int exit_code = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (i > 0) std::cout << "// -----\n";
    auto program = xlite::mlir::ParseMlir(chunks[i].text, label, chunks[i].first_line);
    if (!program.ok()) {
      std::cerr << program.status().message() << "\n";
      exit_code = 1;
      continue;
    }
    std::cout << xlite::mlir::PrintMlir(**program);
  }
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 1;
  }
  std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "help" || command == "--help" || command == "-h") {
    std::cout << kUsage;
    return 0;
  }
  if (command == "opt") return RunOpt(args);
  if (command == "translate") return RunTranslate(args);
  if (command == "run") return xlite::cli::Run(args);
  if (command == "memory") return xlite::cli::Memory(args);
  std::cerr << "xlite: unknown command '" << command << "'\n" << kUsage;
  return 1;
}
