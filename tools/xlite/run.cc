// `xlite run`: compiles a module for the CPU and runs it (--backend=cpu, the
// default), or evaluates it with the reference interpreter
// (--backend=interpreter); --reference_platform=interpreter checks the
// compiled result against the interpreter's.
#include "tools/xlite/run.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/xlite/host_feeds.h"
#include "xlite/compiler.h"
#include "xlite/cpu/physical_layout.h"
#include "xlite/eval/evaluator.h"
#include "xlite/eval/fake_data.h"
#include "xlite/ir/elided_constants.h"
#include "xlite/runtime/argument_buffers.h"
#include "xlite/runtime/buffer.h"
#include "xlite/runtime/client.h"
#include "xlite/runtime/compare_literals.h"
#include "xlite/runtime/execute_on_devices.h"
#include "xlite/runtime/task_runner.h"
#include "xlite/stablehlo/import.h"
#include "xlite/support/npy.h"
#include "xlite/text/parser.h"
#include "xlite/verify/verifier.h"
#include "xlite/vhlo/bytecode_reader.h"
#include "xlite/vhlo/upgrade.h"

namespace xlite::cli {
namespace {

struct RunFlags {
  std::string backend = "cpu";
  std::string reference_platform;  // "interpreter" or empty
  DebugOptions debug;              // --xla_* / --xlite_* (XLA_FLAGS too)
  std::string inputs = "random";
  uint64_t seed = 0;
  int64_t replicas = 1;
  int64_t partitions = 1;
  bool print_literals = false;
  std::string output;
  int64_t iterations = 1;
  int64_t max_elements = 0;
  int64_t max_seconds = 0;
  bool split_input_file = false;
  std::string file;
  std::string infeed;   // --infeed=FILE.npz: infeed blocks (host_feeds.h)
  std::string outfeed;  // --outfeed=FILE.npz: save the outfeed values
};

// The most devices --replicas x --partitions may simulate (the interpreter's
// limit for a device mesh).
constexpr int64_t kMaxDevices = 4096;

int ExitCode(const absl::Status& s) {
  return absl::IsUnimplemented(s) ? 3 : absl::IsResourceExhausted(s) ? 4 : 1;
}

int Fail(const std::string& message) {
  std::cerr << "xlite run: " << message << "\n";
  return 1;
}

void Flatten(const Literal& lit, std::vector<const Literal*>& out) {
  if (lit.shape().IsTuple()) {
    for (const Literal& e : lit.tuple_elements()) Flatten(e, out);
  } else {
    out.push_back(&lit);
  }
}

std::string Preview(const Literal& lit) {
  if (!lit.shape().IsArray()) return lit.shape().ToString(false);
  std::string s = absl::StrCat(lit.shape().ToString(false), " {");
  const int64_t n = std::min<int64_t>(lit.element_count(), 8);
  for (int64_t i = 0; i < n; ++i) absl::StrAppend(&s, i ? ", " : "", lit.ElementToString(i));
  if (lit.element_count() > n) absl::StrAppend(&s, ", ... (", lit.element_count(), " elements)");
  return s + "}";
}

absl::StatusOr<std::vector<Literal>> LoadInputs(const RunFlags& f, const HloModule& module) {
  if (f.inputs == "random") return MakeFakeArguments(module, FakeDataKind::kRandom, f.seed);
  if (f.inputs == "zeros") return MakeFakeArguments(module, FakeDataKind::kZeros, f.seed);
  std::vector<Literal> args;
  if (absl::EndsWith(f.inputs, ".npz")) {
    absl::StatusOr<std::vector<std::pair<std::string, Literal>>> arrays = ReadNpz(f.inputs);
    if (!arrays.ok()) return arrays.status();
    for (auto& [name, lit] : *arrays) args.push_back(std::move(lit));
  } else if (absl::EndsWith(f.inputs, ".npy")) {
    std::ifstream in(f.inputs, std::ios::binary);
    if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot open '", f.inputs, "'"));
    std::stringstream ss;
    ss << in.rdbuf();
    absl::StatusOr<Literal> lit = ParseNpy(ss.str(), f.inputs);
    if (!lit.ok()) return lit.status();
    args.push_back(std::move(*lit));
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--inputs must be random, zeros, FILE.npz or FILE.npy, got '", f.inputs, "'"));
  }
  const HloComputation* entry = module.entry_computation();
  if (static_cast<int64_t>(args.size()) != entry->num_parameters()) {
    return absl::InvalidArgumentError(absl::StrCat(f.inputs, " holds ", args.size(),
                                                   " arrays but '", entry->name(), "' takes ",
                                                   entry->num_parameters(), " parameters"));
  }
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    const Shape& want = entry->parameter_instruction(i)->shape();
    if (!want.IsArray() || want.element_type() != args[i].shape().element_type() ||
        want.dimensions() != args[i].shape().dimensions()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", i, " has shape ", args[i].shape().ToString(false), " but parameter ", i, " ('",
          entry->parameter_instruction(i)->name(), "') is ", want.ToString(false)));
    }
  }
  return args;
}

}  // namespace

static int RunModule(std::unique_ptr<HloModule> module, const RunFlags& f, const std::string& label,
                     int64_t module_id);

int Run(const std::vector<std::string>& raw_argv) {
  RunFlags f;
  std::vector<std::string> argv = raw_argv;
  absl::StatusOr<DebugOptions> debug = ReadDebugOptions(argv);
  if (!debug.ok()) return Fail(std::string(debug.status().message()));
  f.debug = *debug;
  for (const std::string& arg : argv) {
    auto value_of = [&](absl::string_view flag) -> std::optional<std::string> {
      if (absl::StartsWith(arg, absl::StrCat(flag, "="))) return arg.substr(flag.size() + 1);
      return std::nullopt;
    };
    auto int_flag = [&](absl::string_view flag, int64_t* out, int64_t min) -> std::optional<int> {
      auto v = value_of(flag);
      if (!v) return std::nullopt;
      if (!absl::SimpleAtoi(*v, out) || *out < min) {
        return Fail(absl::StrCat(flag, " must be an integer >= ", min, ", got '", *v, "'"));
      }
      return 0;
    };
    std::optional<int> r;
    if (auto v = value_of("--backend")) {
      f.backend = *v;
    } else if (auto v = value_of("--reference_platform")) {
      f.reference_platform = *v;
    } else if (auto v = value_of("--inputs")) {
      f.inputs = *v;
    } else if (auto v = value_of("--seed")) {
      if (!absl::SimpleAtoi(*v, &f.seed))
        return Fail(absl::StrCat("--seed must be an integer, got '", *v, "'"));
    } else if ((r = int_flag("--replicas", &f.replicas, 1))) {
      if (*r) return *r;
    } else if ((r = int_flag("--partitions", &f.partitions, 1))) {
      if (*r) return *r;
    } else if ((r = int_flag("--iterations", &f.iterations, 1))) {
      if (*r) return *r;
    } else if ((r = int_flag("--max_elements", &f.max_elements, 0))) {
      if (*r) return *r;
    } else if ((r = int_flag("--max_seconds", &f.max_seconds, 0))) {
      if (*r) return *r;
    } else if (arg == "--split-input-file" || arg == "--split_input_file") {
      f.split_input_file = true;
    } else if (arg == "--print_literals") {
      f.print_literals = true;
    } else if (auto v = value_of("--infeed")) {
      f.infeed = *v;
    } else if (auto v = value_of("--outfeed")) {
      f.outfeed = *v;
    } else if (auto v = value_of("--output")) {
      f.output = *v;
    } else if (!absl::StartsWith(arg, "-") || arg == "-") {
      if (!f.file.empty()) return Fail("run takes one input file");
      f.file = arg;
    } else {
      return Fail(absl::StrCat("unknown flag '", arg, "' (see xlite help)"));
    }
  }
  if (f.backend != "cpu" && f.backend != "interpreter") {
    return Fail(absl::StrCat("--backend must be cpu or interpreter, got '", f.backend, "'"));
  }
  // A compiled run cannot stop midway: the limits bound the interpreter only.
  if (f.backend == "cpu" && f.reference_platform.empty() &&
      (f.max_elements > 0 || f.max_seconds > 0)) {
    return Fail(
        "--max_elements and --max_seconds bound the interpreter: use them with "
        "--backend=interpreter or --reference_platform=interpreter");
  }
  if (f.replicas > kMaxDevices / f.partitions) {
    return Fail(absl::StrCat("--replicas x --partitions must be at most ", kMaxDevices,
                             " devices, got ", f.replicas, " x ", f.partitions));
  }
  if (!f.reference_platform.empty() && f.reference_platform != "interpreter") {
    return Fail(
        absl::StrCat("--reference_platform must be interpreter, got '", f.reference_platform, "'"));
  }
  if (f.file.empty()) return Fail("run needs an input file");
  std::string text;
  {
    std::stringstream ss;
    if (f.file == "-") {
      ss << std::cin.rdbuf();
    } else {
      std::ifstream in(f.file, std::ios::binary);
      if (!in) return Fail(absl::StrCat("cannot open '", f.file, "'"));
      ss << in.rdbuf();
    }
    text = ss.str();
  }
  const std::string label = f.file == "-" ? "<stdin>" : f.file;
  if (absl::EndsWith(f.file, ".mlir.bc") || vhlo::IsBytecode(text)) {
    // A portable artifact: VHLO bytecode, upgraded to StableHLO, then lowered.
    if (f.split_input_file) return Fail("--split-input-file applies to .mlir text input");
    absl::StatusOr<std::unique_ptr<HloModule>> module = vhlo::ImportPortableArtifact(text, label);
    if (!module.ok()) {
      std::cerr << module.status().message() << "\n";
      return ExitCode(module.status());
    }
    return RunModule(std::move(*module), f, label, 1);
  }
  if (absl::EndsWith(f.file, ".mlir")) {
    // StableHLO: each program (or --split-input-file chunk) runs on its own;
    // the exit code is the first failure's.
    std::vector<stablehlo::ImportedProgram> programs =
        stablehlo::ImportStablehlo(text, label, f.split_input_file);
    int exit_code = 0;
    int64_t module_id = 1;
    for (stablehlo::ImportedProgram& p : programs) {
      if (programs.size() > 1) std::cout << "// chunk at line " << p.first_line << "\n";
      int code;
      if (!p.module.ok()) {
        std::cerr << p.module.status().message() << "\n";
        code = ExitCode(p.module.status());
      } else {
        code = RunModule(std::move(*p.module), f, label, module_id++);
      }
      if (exit_code == 0) exit_code = code;
    }
    return exit_code;
  }
  if (f.split_input_file) return Fail("--split-input-file applies to .mlir input");
  auto module = ParseHloModule(text, label);
  if (!module.ok()) {
    std::cerr << module.status().message() << "\n";
    return 1;
  }
  if (absl::Status v = VerifyModule(**module); !v.ok()) {
    std::cerr << f.file << ": verifier: " << v.message() << "\n";
    return 1;
  }
  // constant({...}) has no values: fill them as XLA's tools do, and say so.
  if (std::vector<std::string> filled = FillElidedConstants(**module); !filled.empty()) {
    std::cerr << "xlite run: warning: " << filled.size()
              << " constant(s) were elided ({...}); filled with XLA's deterministic fake values: "
              << absl::StrJoin(filled, ", ") << "\n";
  }
  return RunModule(std::move(*module), f, label, 1);
}

// Prints the outputs as `out0 = ...` lines (d<k>_ prefixed per device) and
// saves them with --output.
static int PrintOutputs(const std::vector<Literal>& results, const RunFlags& f) {
  const int64_t devices = static_cast<int64_t>(results.size());
  std::vector<std::pair<std::string, Literal>> to_save;
  for (int64_t d = 0; d < devices; ++d) {
    std::vector<const Literal*> outs;
    Flatten(results[d], outs);
    const std::string prefix = devices > 1 ? absl::StrCat("d", d, "_") : "";
    if (devices > 1)
      std::cout << "device " << d << " (replica " << d / f.partitions << ", partition "
                << d % f.partitions << "):\n";
    for (size_t i = 0; i < outs.size(); ++i) {
      const std::string name = absl::StrCat(prefix, "out", i);
      if (f.print_literals) {
        std::cout << name << " = " << outs[i]->ToStringOneline() << "\n";
      } else {
        std::cout << name << " = " << Preview(*outs[i]) << "\n";
      }
      if (!f.output.empty()) to_save.emplace_back(name, *outs[i]);
    }
  }
  if (!f.output.empty()) {
    if (absl::Status s = WriteNpz(f.output, to_save); !s.ok())
      return Fail(std::string(s.message()));
  }
  return 0;
}

// Prints the outfeed values of the last run like outputs (`outfeed0 = ...`,
// d<k>_ per device) and saves them with --outfeed.
static int PrintOutfeeds(const HostFeeds& feeds, const RunFlags& f, int64_t devices) {
  std::vector<std::pair<std::string, Literal>> values = feeds.TakeOutfeeds(devices, f.iterations);
  for (const auto& [name, value] : values) {
    std::cout << name << " = " << (f.print_literals ? value.ToStringOneline() : Preview(value))
              << "\n";
  }
  if (!f.outfeed.empty()) {
    if (absl::Status s = WriteNpz(f.outfeed, values); !s.ok())
      return Fail(std::string(s.message()));
  }
  return 0;
}

static double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

static double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// Runs of one device's executable on argument buffers made once (fresh
// copies of donated ones per run, made before the clock starts), as a caller
// holding its arrays on the device (JAX's jitted calls) runs it: each time is
// Execute's alone, without ExecuteLiterals' copies in and the fresh
// zero-filled result of every call, which took most of a run of the larger
// programs here (adam_mlp_train_step: ~28 ms a call against ~2.5 ms of
// Execute). The last run's result comes back as a literal. nullopt where the
// entry does not take buffers (tokens among its parameters) or the arguments
// do not fit them: the caller runs ExecuteLiterals, which says why.
// Whether run `it` of `iterations` is profiled: the first of several is not,
// since it pays once-only costs (oneDNN makes its primitives, the arenas'
// pages are first touched).
static bool Profiled(int64_t it, int64_t iterations) { return it > 0 || iterations == 1; }

static std::optional<absl::StatusOr<Literal>> TimeExecute(const runtime::Executable& exe,
                                                          const std::vector<Literal>& args,
                                                          const runtime::ExecuteOptions& options,
                                                          int64_t iterations,
                                                          std::vector<double>& times_ms) {
  absl::StatusOr<const runtime::DonationRules*> rules = exe.donation_rules();
  if (!rules.ok()) return std::nullopt;
  // The result as ExecuteLiterals returns it: logical order, no layouts; an
  // entry layout that says otherwise (bounded dynamic results) is its case.
  const HloModule& module = exe.module();
  const Shape result_shape =
      cpu::WithoutLayouts(module.entry_computation()->root_instruction()->shape());
  if (const auto& layout = module.config().entry_computation_layout;
      layout && !(cpu::WithoutLayouts(layout->result) == result_shape)) {
    return std::nullopt;
  }
  absl::StatusOr<runtime::ArgumentBuffers> arguments = runtime::ArgumentBuffers::Create(exe, args);
  if (!arguments.ok()) return std::nullopt;
  std::vector<std::unique_ptr<runtime::Buffer>> outputs;
  for (int64_t it = 0; it < iterations; ++it) {
    absl::StatusOr<std::vector<runtime::Buffer*>> buffers = arguments->Next();
    if (!buffers.ok()) return buffers.status();
    outputs.clear();  // the last run's outputs are freed before the clock
    runtime::ExecuteOptions run_options = options;
    if (!Profiled(it, iterations)) run_options.profile = nullptr;
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::vector<std::unique_ptr<runtime::Buffer>>> out =
        exe.Execute(*buffers, run_options);
    times_ms.push_back(MillisecondsSince(start));
    if (!out.ok()) return out.status();
    outputs = std::move(*out);
  }
  const std::vector<runtime::OutputLeaf>& leaves = (*rules)->outputs();
  if (leaves.size() != outputs.size()) {
    return absl::InternalError(absl::StrCat("Execute returned ", outputs.size(), " buffers for ",
                                            leaves.size(), " result arrays"));
  }
  Literal result(result_shape);
  for (size_t k = 0; k < leaves.size(); ++k) {
    absl::StatusOr<Literal> leaf = outputs[k]->ToLiteral();
    if (!leaf.ok()) {  // packed sub-byte arrays: ExecuteLiterals reads them
      times_ms.clear();
      return std::nullopt;
    }
    Literal* slot = result.MutableSubliteral(leaves[k].index);
    // Same values and dimensions; the slot's shape has no layout.
    if (slot->raw_data().size() != leaf->raw_data().size()) {
      return absl::InternalError("an output buffer's size differs from its result array's");
    }
    std::copy(leaf->raw_data().begin(), leaf->raw_data().end(), slot->mutable_raw_data());
  }
  return result;
}

// --backend=cpu: compile, run --iterations times (on --replicas x
// --partitions devices), print; with --reference_platform=interpreter also
// evaluate and compare every device's result.
static int RunCompiled(std::unique_ptr<HloModule> module, const RunFlags& f,
                       const std::string& label, int64_t module_id, std::vector<Literal> args) {
  const int64_t devices = f.replicas * f.partitions;
  std::vector<std::vector<Literal>> per_device(devices, args);
  std::optional<std::vector<Literal>> reference;
  if (f.reference_platform == "interpreter") {
    EvalOptions options;
    options.replica_count = f.replicas;
    options.num_partitions = f.partitions;
    options.max_total_elements = f.max_elements;
    options.max_seconds = static_cast<double>(f.max_seconds);
    absl::StatusOr<HostFeeds> feeds = HostFeeds::Load(f.infeed, f.outfeed, *module, devices, 1);
    if (!feeds.ok()) return Fail(std::string(feeds.status().message()));
    options.host_transfers = feeds->transfers.get();
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::vector<Literal>> r = EvaluateReplicated(*module, per_device, options);
    if (!r.ok()) {
      std::cerr << label << ": reference interpreter: " << r.status().message() << "\n";
      return ExitCode(r.status());
    }
    std::cerr << "xlite run: interpreter (reference) took " << MillisecondsSince(start) << " ms\n";
    reference = std::move(*r);
  }
  // As many devices as the run needs (at least
  // --xla_force_host_platform_device_count).
  runtime::ClientOptions client_options = runtime::ClientOptionsFrom(f.debug);
  client_options.device_count =
      std::max<int>(client_options.device_count, static_cast<int>(devices));
  absl::StatusOr<std::unique_ptr<runtime::Client>> client = runtime::Client::Create(client_options);
  if (!client.ok()) return Fail(std::string(client.status().message()));
  absl::StatusOr<HostFeeds> feeds =
      HostFeeds::Load(f.infeed, f.outfeed, *module, devices, f.iterations);
  if (!feeds.ok()) return Fail(std::string(feeds.status().message()));
  absl::StatusOr<collectives::DeviceAssignment> assignment =
      collectives::DeviceAssignment::Default(f.replicas, f.partitions);
  if (!assignment.ok()) return Fail(std::string(assignment.status().message()));
  CompileOptions compile_options;
  compile_options.debug = f.debug;
  compile_options.module_id = module_id;
  auto compile_start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      Compile(std::move(module), compile_options);
  const double compile_ms = MillisecondsSince(compile_start);
  if (!executable.ok()) {
    std::cerr << label << ": " << executable.status().message() << "\n";
    return ExitCode(executable.status());
  }
  runtime::PoolTaskRunner runner((*client)->thread_pool());
  runtime::ThunkProfile profile;
  runtime::ExecuteOptions options;
  options.runner = &runner;
  if (f.debug.profile) options.profile = &profile;
  options.host_transfers = feeds->transfers.get();
  runtime::DevicesExecuteOptions devices_options;
  devices_options.profile = options.profile;
  devices_options.host_transfers = feeds->transfers.get();
  std::vector<double> times_ms;
  absl::StatusOr<std::vector<Literal>> results = absl::UnknownError("not run");
  // One device: Execute timed alone on buffers made once.
  bool in_place = false;
  if (devices == 1) {
    std::optional<absl::StatusOr<Literal>> timed =
        TimeExecute(**executable, args, options, f.iterations, times_ms);
    if (timed.has_value()) {
      in_place = true;
      if (!timed->ok()) {
        std::cerr << label << ": " << timed->status().message() << "\n";
        return ExitCode(timed->status());
      }
      results = std::vector<Literal>();
      results->push_back(std::move(**timed));
    }
  }
  for (int64_t it = 0; !in_place && it < f.iterations; ++it) {
    runtime::ExecuteOptions run_options = options;
    runtime::DevicesExecuteOptions run_devices_options = devices_options;
    if (!Profiled(it, f.iterations)) run_options.profile = run_devices_options.profile = nullptr;
    auto start = std::chrono::steady_clock::now();
    if (devices == 1) {
      absl::StatusOr<Literal> result = (*executable)->ExecuteLiterals(args, run_options);
      if (result.ok()) {
        results = std::vector<Literal>();
        results->push_back(std::move(*result));
      } else {
        results = result.status();
      }
    } else {
      results = runtime::ExecuteOnDevices(**client, **executable, per_device, *assignment,
                                          run_devices_options);
    }
    times_ms.push_back(MillisecondsSince(start));
    if (!results.ok()) {
      std::cerr << label << ": " << results.status().message() << "\n";
      return ExitCode(results.status());
    }
  }
  if (int code = PrintOutputs(*results, f); code != 0) return code;
  if (int code = PrintOutfeeds(*feeds, f, devices); code != 0) return code;
  std::cerr << "xlite run: compiled in " << compile_ms << " ms; " << f.iterations
            << " iteration(s), median " << Median(times_ms) << " ms (cpu, "
            << (devices > 1 ? absl::StrCat(devices, " devices, ") : "") << (*client)->cpu_threads()
            << " threads" << (in_place ? "; Execute on argument buffers made once" : "") << ")\n";
  if (f.debug.profile) {
    std::cerr << "xlite run: time per thunk over "
              << (f.iterations > 1 ? absl::StrCat(f.iterations - 1,
                                                  " iteration(s) (the first, a warm-up, left out)")
                                   : std::string("1 iteration"))
              << ":\n"
              << profile.ToString();
  }
  if (reference) {
    bool all_match = true;
    for (int64_t d = 0; d < devices; ++d) {
      runtime::Comparison c = runtime::CompareLiterals((*results)[d], (*reference)[d]);
      std::cerr << "xlite run: "
                << (devices > 1 ? absl::StrCat("device ", d, " (replica ", d / f.partitions,
                                               ", partition ", d % f.partitions, ") ")
                                : "")
                << "against the interpreter: " << (c.matches ? "match" : "MISMATCH") << "\n"
                << c.ToString(/*all=*/true);
      all_match = all_match && c.matches;
    }
    if (!all_match) return 1;
  }
  return 0;
}

static int RunModule(std::unique_ptr<HloModule> module_ptr, const RunFlags& f,
                     const std::string& label, int64_t module_id) {
  const HloModule& module = *module_ptr;
  absl::StatusOr<std::vector<Literal>> args = LoadInputs(f, module);

  if (!args.ok()) {
    Fail(std::string(args.status().message()));
    return ExitCode(args.status());
  }
  if (f.backend == "cpu") {
    return RunCompiled(std::move(module_ptr), f, label, module_id, std::move(*args));
  }

  EvalOptions options;
  options.replica_count = f.replicas;
  options.num_partitions = f.partitions;
  options.max_total_elements = f.max_elements;
  options.max_seconds = static_cast<double>(f.max_seconds);
  const int64_t devices = f.replicas * f.partitions;
  absl::StatusOr<HostFeeds> feeds =
      HostFeeds::Load(f.infeed, f.outfeed, module, devices, f.iterations);
  if (!feeds.ok()) return Fail(std::string(feeds.status().message()));
  options.host_transfers = feeds->transfers.get();
  std::vector<std::vector<Literal>> per_device(devices, *args);
  std::vector<double> times_ms;
  absl::StatusOr<std::vector<Literal>> results = absl::UnknownError("not run");
  for (int64_t it = 0; it < f.iterations; ++it) {
    auto start = std::chrono::steady_clock::now();
    results = EvaluateReplicated(module, per_device, options);
    times_ms.push_back(MillisecondsSince(start));
    if (!results.ok()) {
      std::cerr << label << ": " << results.status().message() << "\n";
      return ExitCode(results.status());
    }
  }
  if (int code = PrintOutputs(*results, f); code != 0) return code;
  if (int code = PrintOutfeeds(*feeds, f, devices); code != 0) return code;
  std::cerr << "xlite run: " << f.iterations << " iteration(s), median " << Median(times_ms)
            << " ms (interpreter)\n";
  return 0;
}

}  // namespace xlite::cli
