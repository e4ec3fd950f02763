// Memory analyses and schedulers over every module of the XLA corpus
// (../shared/corpus/xla, kinds hlo_file and hlo_file_headerless) that parses
// and verifies. For each module:
//   - dataflow analysis passes its self-check, alias analysis runs;
//   - every scheduler gives every sequentially run computation (and no other)
//     a sequence that is a topological order of operands and control edges,
//     checked here independently of the library's checker;
//   - the chosen schedule's simulated peak is the lowest of the schedulers'
//     and no higher than the post-order (program order) peak;
//   - on a flattened call graph, the strict liveness (memory planning mode)
//     accepts the chosen schedule and gives the same peak;
//   - a module that arrives is_scheduled=true keeps its order and prints
//     unchanged.
// It prints the distribution of chosen / post-order peaks and which
// scheduler won how often. A module the analyses refuse fails the test unless
// listed in KnownRefusals with its reason.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "xlite/analysis/hlo_live_range.h"
#include "xlite/schedule/schedule_module.h"
#include "xlite/text/parser.h"
#include "xlite/text/printer.h"
#include "xlite/verify/verifier.h"

namespace xlite {
namespace {

namespace fs = std::filesystem;

// Corpus modules the memory analyses refuse, with the reason.
const std::map<std::string, std::string>& KnownRefusals() {
  static const auto* refusals = new std::map<std::string, std::string>{
      {"hlo_file/xla__hlo__translate__hlo_to_mhlo__tests__custom_call.hlo",
       "f32[?,3,224,224] parameter: an unbounded dimension has no size to plan"},
      {"hlo_file/xla__hlo__translate__hlo_to_mhlo__tests__import_emit_stablehlo.part127.hlo",
       "f32[?,784] parameter: an unbounded dimension has no size to plan"},
  };
  return *refusals;
}

fs::path CorpusDir() {
  const char* env = std::getenv("XLITE_CORPUS");
  fs::path base = env ? fs::path(env) : fs::path("../shared/corpus");
  return base / "xla";
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Independent of HloSchedule::VerifySequence: every instruction once, each
// after its operands and control predecessors of the same computation.
std::string CheckTopological(const HloComputation& c, const std::vector<HloInstruction*>& seq) {
  if (static_cast<int64_t>(seq.size()) != c.instruction_count()) return "wrong length";
  absl::flat_hash_map<const HloInstruction*, size_t> at;
  for (size_t k = 0; k < seq.size(); ++k) {
    if (seq[k]->parent() != &c || !at.emplace(seq[k], k).second) return "not a permutation";
  }
  for (size_t k = 0; k < seq.size(); ++k) {
    for (const HloInstruction* op : seq[k]->operands()) {
      if (op->parent() == &c && at.at(op) > k) return seq[k]->name() + " before an operand";
    }
    for (const HloInstruction* pred : seq[k]->control_predecessors()) {
      if (pred->parent() == &c && at.at(pred) > k) {
        return seq[k]->name() + " before a control predecessor";
      }
    }
  }
  return "";
}

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t k = static_cast<size_t>(q * (v.size() - 1) + 0.5);
  return v[std::min(k, v.size() - 1)];
}

TEST(ScheduleCorpus, AnalysesAndSchedulersOnEveryValidModule) {
  const fs::path dir = CorpusDir();
  if (!fs::exists(dir / "manifest.tsv")) {
    std::cerr << "\n*** SKIPPING schedule corpus test: " << dir
              << "/manifest.tsv not found (set XLITE_CORPUS) ***\n\n";
    GTEST_SKIP() << "corpus not found at " << dir;
  }
  const auto start = std::chrono::steady_clock::now();
  std::ifstream manifest(dir / "manifest.tsv");
  std::string line;
  std::getline(manifest, line);  // header
  int modules = 0, not_parsed = 0, not_verified = 0, scheduled_kept = 0, strict_checked = 0;
  int64_t instructions = 0;
  std::map<std::string, int> wins;
  std::vector<double> ratios;
  std::vector<std::string> failures, refused;
  while (std::getline(manifest, line)) {
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    if (f.size() < 3 || (f[2] != "hlo_file" && f[2] != "hlo_file_headerless")) continue;
    const std::string& file = f[0];
    const std::string text = ReadFile(dir / file);
    auto parsed = ParseHloModule(text, file);
    if (!parsed.ok()) {
      ++not_parsed;
      continue;
    }
    HloModule& m = **parsed;
    if (!VerifyModule(m).ok()) {
      ++not_verified;
      continue;
    }
    ++modules;
    for (const auto& c : m.computations()) instructions += c->instruction_count();
    auto fail = [&](const std::string& why) { failures.push_back(file + ": " + why); };

    auto alias = HloAliasAnalysis::Run(m);
    if (!alias.ok()) {
      (KnownRefusals().count(file) ? refused : failures)
          .push_back(file + ": " + std::string(alias.status().message()));
      continue;
    }
    if (absl::Status s = (*alias)->dataflow_analysis().Verify(); !s.ok()) {
      fail(std::string(s.message()));
      continue;
    }
    const CallGraph& graph = (*alias)->dataflow_analysis().call_graph();
    for (MemoryScheduler which :
         {MemoryScheduler::kList, MemoryScheduler::kDfs, MemoryScheduler::kPostOrder}) {
      auto schedule = RunMemoryScheduler(**alias, which);
      if (!schedule.ok()) {
        fail(std::string(schedule.status().message()));
        continue;
      }
      for (const auto& c : m.computations()) {
        const bool want = graph.IsSequential(c.get());
        if (want != schedule->is_computation_scheduled(c.get())) {
          fail(std::string(MemorySchedulerName(which)) + ": computation " + c->name() +
               (want ? " has no sequence" : " is embedded but has a sequence"));
        } else if (want) {
          std::string bad = CheckTopological(*c, schedule->sequence(c.get()));
          if (!bad.empty()) {
            fail(std::string(MemorySchedulerName(which)) + ": " + c->name() + ": " + bad);
          }
        }
      }
    }

    ScheduleOptions fresh;
    fresh.keep_existing_schedule = false;
    auto result = ProposeSchedule(m, fresh);
    if (!result.ok()) {
      (KnownRefusals().count(file) ? refused : failures)
          .push_back(file + ": " + std::string(result.status().message()));
      continue;
    }
    if (KnownRefusals().count(file)) {
      fail("listed in KnownRefusals but now scheduled: remove it");
    }
    int64_t post_order = -1, lowest = -1;
    for (const SchedulerPeak& p : result->peaks) {
      if (p.scheduler == MemoryScheduler::kPostOrder) post_order = p.peak_bytes;
      if (lowest < 0 || p.peak_bytes < lowest) lowest = p.peak_bytes;
    }
    if (result->peak_bytes != lowest) fail("chosen peak is not the lowest");
    if (result->peak_bytes > post_order) fail("chosen peak above the post-order peak");
    if (post_order > 0) ratios.push_back(static_cast<double>(result->peak_bytes) / post_order);
    wins[result->chosen]++;

    if (graph.IsFlattened()) {
      auto strict = HloLiveRange::Run(result->schedule, **alias);
      if (!strict.ok()) {
        fail("strict liveness: " + std::string(strict.status().message()));
      } else if ((*strict)->peak_bytes() != result->peak_bytes) {
        fail("strict liveness gives another peak");
      } else {
        ++strict_checked;
      }
    }

    if (m.config().is_scheduled) {
      const std::string before = PrintModule(m);
      auto kept = ScheduleModule(m);
      if (!kept.ok()) {
        fail("scheduled module: " + std::string(kept.status().message()));
      } else if (kept->chosen != "existing" || PrintModule(m) != before) {
        fail("scheduled module did not keep its order");
      } else {
        ++scheduled_kept;
      }
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::printf("\nMemory scheduling over the XLA corpus (%s)\n", dir.c_str());
  std::printf(
      "  modules analysed and scheduled: %d (%lld instructions); not parsed: %d, "
      "not verified: %d\n",
      modules, static_cast<long long>(instructions), not_parsed, not_verified);
  std::printf("  strict liveness checked (flat call graph): %d; is_scheduled kept: %d\n",
              strict_checked, scheduled_kept);
  std::printf("  chosen:");
  for (const auto& [name, n] : wins) std::printf(" %s %d", name.c_str(), n);
  std::printf(
      "\n  chosen / post-order peak over %zu modules: min %.3f  median %.3f  "
      "p95 %.3f  max %.3f\n",
      ratios.size(), Percentile(ratios, 0), Percentile(ratios, 0.5), Percentile(ratios, 0.95),
      Percentile(ratios, 1));
  std::printf("  modules below 1.0: %lld; time %.1f s\n",
              static_cast<long long>(
                  std::count_if(ratios.begin(), ratios.end(), [](double r) { return r < 1.0; })),
              seconds);
  for (const std::string& r : refused) std::printf("  refused (known): %s\n", r.c_str());
  for (const std::string& f : failures) ADD_FAILURE() << f;
  EXPECT_GT(modules, 0);
}

}  // namespace
}  // namespace xlite
