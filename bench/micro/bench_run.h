// Shared by the benchmarks that run compiled programs (cpu_bench, e2e_bench):
// the corpus root, a program parsed and verified, arguments as
// runtime::Buffers (fresh copies of donated ones per run), a client of T
// threads, one timed Execute.
#ifndef XLITE_BENCH_MICRO_BENCH_RUN_H_
#define XLITE_BENCH_MICRO_BENCH_RUN_H_

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "xlite/ir/elided_constants.h"
#include "xlite/ir/literal.h"
#include "xlite/ir/module.h"
#include "xlite/runtime/buffer.h"
#include "xlite/runtime/client.h"
#include "xlite/runtime/executable.h"
#include "xlite/runtime/task_runner.h"
#include "xlite/text/parser.h"
#include "xlite/verify/verifier.h"

namespace xlite::bench {

using runtime::Buffer;
using runtime::Executable;

// XLITE_CORPUS, else ../shared/corpus (the benchmarks run from the repository).
inline std::filesystem::path CorpusRoot() {
  if (const char* env = std::getenv("XLITE_CORPUS"); env != nullptr && *env != '\0') return env;
  return std::filesystem::path("..") / "shared" / "corpus";
}

// HLO text parsed, verified, and its elided constants filled (as `xlite run`
// fills them): a module ready to compile or interpret.
inline absl::StatusOr<std::unique_ptr<HloModule>> ParseRunnable(const std::string& text,
                                                                const std::string& name) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, name);
  if (!module.ok()) return module.status();
  if (absl::Status v = VerifyModule(**module); !v.ok()) return v;
  FillElidedConstants(**module);
  return module;
}

inline double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

inline std::string FirstLine(absl::string_view s) { return std::string(s.substr(0, s.find('\n'))); }

// --- Arguments as runtime::Buffers -----------------------------------------

inline const Literal* LeafOf(const std::vector<Literal>& args, int64_t parameter,
                             const ShapeIndex& index) {
  if (parameter < 0 || parameter >= static_cast<int64_t>(args.size())) return nullptr;
  const Literal* l = &args[parameter];
  for (int64_t i : index) {
    if (i < 0 || i >= static_cast<int64_t>(l->tuple_elements().size())) return nullptr;
    l = &l->tuple_elements()[i];
  }
  return l;
}

// One run's argument buffers: the master copies, and for each run fresh
// copies of the ones the executable donates (those are consumed).
class Arguments {
 public:
  static absl::StatusOr<Arguments> Create(const Executable& exe, const std::vector<Literal>& args) {
    absl::StatusOr<const runtime::DonationRules*> rules = exe.donation_rules();
    if (!rules.ok()) return rules.status();
    Arguments a;
    for (const runtime::ArgumentLeaf& leaf : (*rules)->arguments()) {
      const Literal* lit = LeafOf(args, leaf.parameter_number, leaf.parameter_index);
      if (lit == nullptr) return absl::InvalidArgumentError("argument structure mismatch");
      absl::StatusOr<std::unique_ptr<Buffer>> b = Buffer::FromLiteral(*lit, leaf.shape);
      if (!b.ok()) return b.status();
      a.masters_.push_back(std::move(*b));
      a.donated_.push_back(leaf.output_leaf.has_value());
    }
    return a;
  }

  // The buffers for the next run (copies made here, before the clock starts).
  absl::StatusOr<std::vector<Buffer*>> Next() {
    fresh_.clear();
    std::vector<Buffer*> out;
    for (size_t i = 0; i < masters_.size(); ++i) {
      if (!donated_[i]) {
        out.push_back(masters_[i].get());
        continue;
      }
      absl::StatusOr<std::unique_ptr<Buffer>> copy = masters_[i]->Copy();
      if (!copy.ok()) return copy.status();
      out.push_back(copy->get());
      fresh_.push_back(std::move(*copy));
    }
    return out;
  }

  int64_t bytes() const {
    int64_t n = 0;
    for (const auto& b : masters_) n += b->size_bytes();
    return n;
  }

 private:
  std::vector<std::unique_ptr<Buffer>> masters_;
  std::vector<bool> donated_;
  std::vector<std::unique_ptr<Buffer>> fresh_;
};

struct RunContext {
  std::unique_ptr<runtime::Client> client;
  std::unique_ptr<runtime::PoolTaskRunner> runner;
};

// A client of `threads` threads; creating it also sets oneDNN's team size
// (process-wide), so each benchmark makes its own before it runs.
inline absl::StatusOr<RunContext> MakeContext(int threads) {
  absl::StatusOr<std::unique_ptr<runtime::Client>> client =
      runtime::Client::Create({.cpu_threads = threads});
  if (!client.ok()) return client.status();
  RunContext c;
  c.client = std::move(*client);
  c.runner = std::make_unique<runtime::PoolTaskRunner>(c.client->thread_pool());
  return c;
}

// One timed Execute (argument copies outside the clock); the outputs are
// freed after the clock stops.
inline absl::StatusOr<double> TimedExecute(const Executable& exe, Arguments& args,
                                           const runtime::ExecuteOptions& options,
                                           std::vector<std::unique_ptr<Buffer>>* keep = nullptr) {
  absl::StatusOr<std::vector<Buffer*>> buffers = args.Next();
  if (!buffers.ok()) return buffers.status();
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<std::unique_ptr<Buffer>>> out = exe.Execute(*buffers, options);
  const double ms = MillisecondsSince(start);
  if (!out.ok()) return out.status();
  if (keep != nullptr) *keep = std::move(*out);
  return ms;
}

}  // namespace xlite::bench

#endif  // XLITE_BENCH_MICRO_BENCH_RUN_H_
