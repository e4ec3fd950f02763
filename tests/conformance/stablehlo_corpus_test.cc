// Runs the StableHLO corpus (../shared/corpus/stablehlo, JAX's test suite and
// the StableHLO interpreter's tests) through parse -> lower -> interpreter and
// the embedded check ops. Prints pass / fail / unsupported per file and per op.
// Files with expected outputs must pass at >= 97% (dynamic-shape files and
// files using features xlite reports as unsupported are listed, not counted as
// passes). Files without expected outputs must import, or fail with a clear
// "dynamic shapes ... unsupported" error.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "xlite/eval/evaluator.h"
#include "xlite/stablehlo/import.h"

namespace xlite {
namespace {

namespace fs = std::filesystem;

constexpr double kSecondsPerProgram = 20;

fs::path CorpusDir() {
  const char* env = std::getenv("XLITE_CORPUS");
  return (env ? fs::path(env) : fs::path("../shared/corpus")) / "stablehlo";
}

struct Entry {
  std::string file;
  std::vector<std::string> ops;
  bool expected = false;
  bool dynamic = false;
  bool quantized = false;
};

enum class Outcome { kPass, kFail, kUnsupported };

struct Result {
  Outcome outcome = Outcome::kPass;
  std::string reason;  // first line of the first non-pass message
};

std::string FirstLine(absl::string_view s) { return std::string(s.substr(0, s.find('\n'))); }

// Imports and runs every program of `text`; the first non-pass decides.
Result RunFile(const std::string& text, const std::string& label, bool run) {
  const bool split = text.find("split-input-file") != std::string::npos;
  std::vector<stablehlo::ImportedProgram> programs = stablehlo::ImportStablehlo(text, label, split);
  for (stablehlo::ImportedProgram& p : programs) {
    absl::Status status;
    if (!p.module.ok()) {
      status = p.module.status();
    } else if (run) {
      const HloModule& m = **p.module;
      EvalOptions options;
      options.replica_count = m.config().replica_count;
      options.num_partitions = m.config().num_partitions;
      options.max_seconds = kSecondsPerProgram;
      const int64_t devices = options.replica_count * options.num_partitions;
      std::vector<std::vector<Literal>> args(devices);
      if (m.entry_computation()->num_parameters() != 0) {
        status = absl::UnimplementedError("entry function with arguments");
      } else {
        status = EvaluateReplicated(m, args, options).status();
      }
    }
    if (!status.ok()) {
      return {absl::IsUnimplemented(status) ? Outcome::kUnsupported : Outcome::kFail,
              FirstLine(status.message())};
    }
  }
  return {};
}

TEST(StablehloCorpus, RunsAndPassesChecks) {
  const fs::path dir = CorpusDir();
  if (!fs::exists(dir / "manifest.tsv")) {
    std::cout << "SKIPPED LOUDLY: no StableHLO corpus at " << dir << "\n";
    GTEST_SKIP() << "no corpus at " << dir;
  }
  std::ifstream manifest(dir / "manifest.tsv");
  std::string line;
  std::getline(manifest, line);  // header
  std::vector<Entry> entries;
  while (std::getline(manifest, line)) {
    std::vector<std::string> cols = absl::StrSplit(line, '\t');
    if (cols.size() < 5) continue;
    Entry e;
    e.file = cols[0];
    e.ops = absl::StrSplit(cols[2], ',', absl::SkipEmpty());
    e.expected = cols[3] == "yes";
    e.dynamic = absl::StartsWith(e.file, "testdata/dynamic/");
    e.quantized = absl::StartsWith(e.file, "testdata/quantized/");
    entries.push_back(std::move(e));
  }
  ASSERT_FALSE(entries.empty());

  const auto start = std::chrono::steady_clock::now();
  std::map<std::string, std::array<int, 3>> per_op;  // pass, fail, unsupported
  std::map<std::string, int> reasons;
  int counted = 0, passed = 0, failed = 0, unsupported = 0, quantized_unsupported = 0;
  int no_expected = 0, no_expected_ok = 0;
  std::vector<std::string> failures;
  for (const Entry& e : entries) {
    std::ifstream in(dir / e.file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!e.expected) {
      // Import only: parse and lower, or say dynamic shapes are unsupported.
      ++no_expected;
      Result r = RunFile(ss.str(), e.file, /*run=*/false);
      // Dynamic-shape programs may say so; others may name what is unsupported.
      const bool clear = r.outcome == Outcome::kUnsupported &&
                         (!e.dynamic || absl::StrContains(r.reason, "dynamic shapes"));
      if (r.outcome != Outcome::kPass) {
        std::cout << (clear ? "REFUSED " : "FAIL ") << e.file << "  -- " << r.reason << "\n";
      }
      if (r.outcome == Outcome::kPass || clear) {
        ++no_expected_ok;
      } else {
        failures.push_back(absl::StrCat("[import] ", r.reason));
      }
      continue;
    }
    Result r = RunFile(ss.str(), e.file, /*run=*/true);
    const int column = static_cast<int>(r.outcome);
    for (const std::string& op : e.ops) per_op[op][column]++;
    std::cout << (r.outcome == Outcome::kPass   ? "PASS "
                  : r.outcome == Outcome::kFail ? "FAIL "
                                                : "UNSUPPORTED ")
              << e.file << (r.reason.empty() ? "" : "  -- ") << r.reason << "\n";
    if (e.quantized && r.outcome == Outcome::kUnsupported) {
      ++quantized_unsupported;  // counted once quantization is supported
      continue;
    }
    ++counted;
    if (r.outcome == Outcome::kPass) {
      ++passed;
    } else if (r.outcome == Outcome::kFail) {
      ++failed;
      failures.push_back(r.reason);
    } else {
      ++unsupported;
      // Group by the rule, without the file location.
      std::string reason = r.reason;
      size_t quote = reason.find(": '");
      reasons[quote == std::string::npos ? reason : reason.substr(quote + 2)]++;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::cout << "\nStableHLO corpus, per op (files using it): pass / fail / unsupported\n";
  for (const auto& [op, counts] : per_op) {
    std::cout << "  " << op << ": " << counts[0] << " / " << counts[1] << " / " << counts[2]
              << "\n";
  }
  std::cout << "\nUnsupported, by reason:\n";
  for (const auto& [reason, n] : reasons) std::cout << "  " << n << "  " << reason << "\n";
  const double rate = counted ? 100.0 * passed / counted : 0;
  std::cout << "\nStableHLO corpus: files with expected outputs " << counted << ": pass " << passed
            << " (" << rate << "%), fail " << failed << ", unsupported " << unsupported
            << "; quantized files not yet supported (not counted): " << quantized_unsupported
            << "\nfiles without expected outputs " << no_expected << ": imported or cleanly "
            << "refused as unsupported " << no_expected_ok << "\n"
            << "time " << seconds << " s\n";
  for (const std::string& f : failures) std::cout << "  failure: " << f << "\n";
  EXPECT_GE(rate, 97.0);
  EXPECT_EQ(no_expected_ok, no_expected);
}

}  // namespace
}  // namespace xlite
