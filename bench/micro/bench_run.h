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
#include "xlite/runtime/argument_buffers.h"
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

// The master copies, and for each run fresh copies of the donated ones.
using Arguments = runtime::ArgumentBuffers;

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
