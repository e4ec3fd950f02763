// Property: --pipeline=simplify does not change what a module computes. Runs
// the pipeline (verifier after every pass) on every valid corpus module; each
// module it changes that the interpreter runs within a small budget (one
// device, no custom calls) is evaluated before and after on the same seeded
// random arguments: integers and predicates must match bitwise, floats up to a
// relative 1e-6 (NaN matches NaN). Prints each exception with its reason.
//
// Second property, on the StableHLO corpus: every program whose embedded
// checks (expected outputs computed by XLA) pass as imported must still pass
// them after the pipeline (verifier after every pass).
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "xlite/eval/evaluator.h"
#include "xlite/eval/fake_data.h"
#include "xlite/passes/simplify.h"
#include "xlite/stablehlo/import.h"
#include "xlite/text/parser.h"
#include "xlite/verify/verifier.h"

namespace xlite {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kElementBudget = 5'000'000;
constexpr double kSecondsBudget = 1;

fs::path CorpusDir() {
  const char* env = std::getenv("XLITE_CORPUS");
  return (env ? fs::path(env) : fs::path("../shared/corpus")) / "xla";
}

bool Runnable(const HloModule& m) {
  if (m.config().replica_count != 1 || m.config().num_partitions != 1) return false;
  int64_t parameter_elements = 0;
  std::function<void(const Shape&)> add = [&](const Shape& s) {
    if (s.IsTuple()) {
      for (const Shape& e : s.tuple_shapes()) add(e);
    } else if (s.IsArray() && s.is_static()) {
      parameter_elements += s.ElementCount();
    }
  };
  for (const HloInstruction* p : m.entry_computation()->parameter_instructions()) add(p->shape());
  if (parameter_elements > kElementBudget) return false;  // too large to make arguments for
  for (const auto& c : m.computations()) {
    for (const auto& i : c->instructions()) {
      if (i->opcode() == HloOpcode::kCustomCall) return false;
    }
  }
  return true;
}

// "" when equal, else where they differ.
std::string Compare(const Literal& a, const Literal& b, const std::string& at = "") {
  if (!(a.shape() == b.shape()) && !(a.shape().IsArray() && b.shape().IsArray() &&
                                     a.shape().dimensions() == b.shape().dimensions() &&
                                     a.shape().element_type() == b.shape().element_type())) {
    return absl::StrCat(at, " shapes differ: ", a.shape().ToString(), " vs ", b.shape().ToString());
  }
  if (a.shape().IsTuple()) {
    for (size_t i = 0; i < a.tuple_elements().size(); ++i) {
      std::string d =
          Compare(a.tuple_elements()[i], b.tuple_elements()[i], absl::StrCat(at, "{", i, "}"));
      if (!d.empty()) return d;
    }
    return "";
  }
  if (!a.shape().IsArray()) return "";
  const PrimitiveType t = a.shape().element_type();
  for (int64_t i = 0; i < a.element_count(); ++i) {
    if (IsFloatingPoint(t) || IsComplex(t)) {
      const std::complex<double> x = a.GetComplex(i), y = b.GetComplex(i);
      auto close = [](double u, double v) {
        if (std::isnan(u) || std::isnan(v)) return std::isnan(u) && std::isnan(v);
        if (u == v) return true;
        return std::abs(u - v) <= 1e-6 * std::max(std::abs(u), std::abs(v));
      };
      if (!close(x.real(), y.real()) || !close(x.imag(), y.imag())) {
        return absl::StrCat(at, " element ", i, ": ", a.ElementToString(i), " vs ",
                            b.ElementToString(i));
      }
    } else if (a.GetBits(i) != b.GetBits(i)) {
      return absl::StrCat(at, " element ", i, ": ", a.ElementToString(i), " vs ",
                          b.ElementToString(i));
    }
  }
  return "";
}

TEST(SimplifyEquivalence, PipelineKeepsResults) {
  const fs::path dir = CorpusDir();
  if (!fs::exists(dir / "manifest.tsv")) {
    std::cout << "SKIPPED LOUDLY: no XLA corpus at " << dir << "\n";
    GTEST_SKIP();
  }
  std::ifstream manifest(dir / "manifest.tsv");
  std::string line;
  std::getline(manifest, line);
  int modules = 0, runnable = 0, equal = 0, changed_modules = 0;
  std::vector<std::string> exceptions;
  double slowest_ms = 0;
  std::string slowest;
  while (std::getline(manifest, line)) {
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    if (f.size() < 3 || (f[2] != "hlo_file" && f[2] != "hlo_file_headerless")) continue;
    std::ifstream in(dir / f[0]);
    std::stringstream ss;
    ss << in.rdbuf();
    auto m = ParseHloModule(ss.str(), f[0]);
    if (!m.ok() || !VerifyModule(**m).ok()) continue;
    ++modules;
    absl::StatusOr<std::unique_ptr<HloPassPipeline>> pipeline = SimplifyPipeline();
    ASSERT_TRUE(pipeline.ok()) << pipeline.status();
    PipelineOptions pipeline_options;
    pipeline_options.verify_each_pass = true;
    (*pipeline)->set_options(pipeline_options);
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<bool> changed = (*pipeline)->Run(**m);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (ms > slowest_ms) {
      slowest_ms = ms;
      slowest = f[0];
    }
    if (!changed.ok()) {
      exceptions.push_back(absl::StrCat(f[0], ": pipeline failed: ", changed.status().message()));
      continue;
    }
    if (!*changed) continue;  // the same module computes the same values
    ++changed_modules;
    // Evaluate the original (parsed again) and the simplified module.
    auto original = ParseHloModule(ss.str(), f[0]);
    if (!original.ok() || !Runnable(**original)) continue;
    auto args = MakeFakeArguments(**original, FakeDataKind::kRandom, 0);
    if (!args.ok()) continue;
    EvalOptions options;
    options.max_total_elements = kElementBudget;
    options.max_seconds = kSecondsBudget;
    absl::StatusOr<Literal> before = Evaluate(**original, *args, options);
    if (!before.ok()) continue;  // not runnable within the budget
    ++runnable;
    absl::StatusOr<Literal> after = Evaluate(**m, *args, options);
    if (!after.ok()) {
      exceptions.push_back(
          absl::StrCat(f[0], ": simplified module fails: ", after.status().message()));
      continue;
    }
    const std::string diff = Compare(*before, *after);
    if (diff.empty()) {
      ++equal;
    } else {
      exceptions.push_back(absl::StrCat(f[0], ": results differ at", diff));
    }
  }
  const double rate = runnable ? 100.0 * equal / runnable : 0;
  std::cout << "simplify equivalence: " << modules << " valid modules; the pipeline changed "
            << changed_modules << "; of those, " << runnable
            << " run on one device within the budget and " << equal << " (" << rate
            << "%) give the same results; the slowest pipeline run took " << slowest_ms << " ms ("
            << slowest << ")\n";
  for (const std::string& e : exceptions) std::cout << "  exception: " << e << "\n";
  EXPECT_GT(runnable, 0);
  EXPECT_GE(rate, 98.0);
}

// Runs every program of a StableHLO corpus file (no arguments; its checks
// are side-effecting custom calls that fail the run).
absl::Status RunChecks(const HloModule& m) {
  if (m.entry_computation()->num_parameters() != 0) {
    return absl::UnimplementedError("entry function with arguments");
  }
  EvalOptions options;
  options.replica_count = m.config().replica_count;
  options.num_partitions = m.config().num_partitions;
  options.max_seconds = 5;
  std::vector<std::vector<Literal>> args(options.replica_count * options.num_partitions);
  return EvaluateReplicated(m, args, options).status();
}

TEST(SimplifyEquivalence, StablehloCorpusChecksStillPass) {
  const char* env = std::getenv("XLITE_CORPUS");
  const fs::path dir = (env ? fs::path(env) : fs::path("../shared/corpus")) / "stablehlo";
  if (!fs::exists(dir / "manifest.tsv")) {
    std::cout << "SKIPPED LOUDLY: no StableHLO corpus at " << dir << "\n";
    GTEST_SKIP() << "no corpus at " << dir;
  }
  std::ifstream manifest(dir / "manifest.tsv");
  std::string line;
  std::getline(manifest, line);  // header
  int programs = 0, passing_before = 0, passing_after = 0;
  std::vector<std::string> exceptions;
  while (std::getline(manifest, line)) {
    std::vector<std::string> cols = absl::StrSplit(line, '\t');
    if (cols.size() < 5 || cols[3] != "yes") continue;  // files with expected outputs
    std::ifstream in(dir / cols[0], std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const bool split = ss.str().find("split-input-file") != std::string::npos;
    for (stablehlo::ImportedProgram& p : stablehlo::ImportStablehlo(ss.str(), cols[0], split)) {
      if (!p.module.ok()) continue;
      ++programs;
      if (!RunChecks(**p.module).ok()) continue;  // the corpus test reports these
      ++passing_before;
      absl::StatusOr<std::unique_ptr<HloPassPipeline>> pipeline = SimplifyPipeline();
      ASSERT_TRUE(pipeline.ok()) << pipeline.status();
      PipelineOptions pipeline_options;
      pipeline_options.verify_each_pass = true;
      (*pipeline)->set_options(pipeline_options);
      if (absl::StatusOr<bool> changed = (*pipeline)->Run(**p.module); !changed.ok()) {
        exceptions.push_back(
            absl::StrCat(cols[0], ": pipeline failed: ", changed.status().message()));
        continue;
      }
      if (absl::Status s = RunChecks(**p.module); !s.ok()) {
        exceptions.push_back(absl::StrCat(cols[0], ": after simplify: ", s.message()));
        continue;
      }
      ++passing_after;
    }
  }
  const double rate = passing_before ? 100.0 * passing_after / passing_before : 0;
  std::cout << "simplify on the StableHLO corpus: " << programs << " programs with expected "
            << "outputs; " << passing_before << " pass their checks as imported, " << passing_after
            << " (" << rate << "%) still pass after --pipeline=simplify\n";
  for (const std::string& e : exceptions) std::cout << "  exception: " << e << "\n";
  EXPECT_GT(passing_before, 0);
  EXPECT_GE(rate, 98.0);
}

}  // namespace
}  // namespace xlite
