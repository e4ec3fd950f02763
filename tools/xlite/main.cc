// The xlite command line: `xlite opt` parses, verifies and prints modules.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "tools/xlite/run.h"
#include "xlite/text/parser.h"
#include "xlite/text/printer.h"
#include "xlite/verify/verifier.h"

namespace {

constexpr char kUsage[] =
    R"(usage: xlite <command> [flags] FILE|-

commands:
  opt        parse a module and print it
             --print=long|short            output form (default long)
             --syntax_sugar_async_ops=BOOL print async ops as op-start/op-done (default true)
             --verify=BOOL                 run the verifier after parsing (default true)
  run        evaluate a module with the reference interpreter
             --backend=interpreter         (the only backend so far)
             --inputs=random|zeros|FILE.npz|FILE.npy   arguments (default random, XLA's
                                           fake-data rules: in-range gather/scatter/slice indices)
             --seed=N                      seed for random inputs (default 0)
             --replicas=N --partitions=N   simulated devices for collectives (default 1)
             --print_literals              print whole outputs (default: a preview)
             --output=FILE.npz             save outputs out0, out1, ... (d<i>_ per device)
             --iterations=N                run N times, report the median time
             --max_elements=N              give up (exit 4) after producing N elements
             --max_seconds=N               give up (exit 4) after N seconds
             exit codes: 0 ok, 1 error, 3 unsupported op/feature, 4 too slow
  help       show this text

Input format is chosen by extension: .hlo/.txt (HLO text); '-' reads HLO text from stdin.
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

int RunOpt(const std::vector<std::string>& args) {
  xlite::PrintOptions options;
  bool verify = true;
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
    } else if (arg == "-" || !absl::StartsWith(arg, "-")) {
      if (!file.empty()) return Fail("opt takes one input file");
      file = arg;
    } else {
      return Fail(absl::StrCat("unknown flag '", arg, "' for opt (see xlite help)"));
    }
  }
  if (file.empty()) return Fail("opt needs an input file (or - for stdin)");
  if (absl::EndsWith(file, ".mlir") || absl::EndsWith(file, ".mlir.bc")) {
    return Fail(
        absl::StrCat("'", file, "': StableHLO input is not supported yet; only HLO text (.hlo)"));
  }
  std::string text, error;
  if (!ReadInput(file, &text, &error)) return Fail(error);
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
  std::cout << xlite::PrintModule(**module, options);
  return 0;
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
  if (command == "run") return xlite::cli::Run(args);
  std::cerr << "xlite: unknown command '" << command << "'\n" << kUsage;
  return 1;
}
