// xlite on the peers' workloads (issue 18 item 5; shared/bench/peers/README.md
// defines them): each compiled once by xlite::Compile and run through
// Executable::Execute with a client of T threads, one line per measurement in
// the peers' format, so that summarize.py puts xlite in the peers' table:
//
//   workload<TAB>xlite-cpu@<T>t<TAB><median_ms><TAB><rate> <GFLOP/s|GB/s>
//
//   build/bin/e2e_bench [--threads=1,2] [--only=SUBSTR[,SUBSTR...]] [--reps=10]
//                       [--check_cap_s=30]       (also --threads 1, as the peers take it)
//
// Workloads: sgemm_512/1024/2048, ew_chain_16M, reduce_rows_4096 and
// reduce_cols_4096 as HLO written here from the peers' definitions;
// mlp_b32 and encoder_b8s128 from the JAX programs' HLO
// (corpus/jax/<name>/before_optimizations.txt; XLITE_CORPUS names another
// corpus root). Arguments: seeded random (MakeFakeArguments, seed 0). Rates
// use the peers' conventions (2N^3 FLOP; the matmul FLOPs of the models;
// bytes read + written for the memory-bound ones).
//
// Repetitions as the peers: 2 warm-up runs, then max(--reps, 10) timed runs,
// 30 for sgemm_512 and 100 for mlp_b32; the median is printed.
//
// Each result is checked before it is timed ('# check' lines on stderr; a
// failed check prints no timing and makes the exit status 1): the HLO
// workloads against double-precision sums at sampled elements, the JAX
// programs against the interpreter (a run of it over --check_cap_s is
// stopped and the program reported not checked).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/micro/bench_corpus.h"
#include "bench/micro/bench_run.h"
#include "xlite/compiler.h"
#include "xlite/eval/evaluator.h"
#include "xlite/eval/fake_data.h"
#include "xlite/runtime/compare_literals.h"

namespace {

namespace fs = std::filesystem;
using xlite::Literal;
using xlite::bench::Arguments;
using xlite::bench::Buffer;
using xlite::bench::Executable;
using xlite::bench::FirstLine;
using xlite::bench::TimedExecute;

struct Flags {
  std::vector<int> threads = {1, 2};
  std::vector<std::string> only;
  int reps = 10;
  double check_cap_s = 30;
};

// Checks `out` (the result) against double-precision math on the arguments:
// "" when it matches, else what differs.
using Check = std::function<std::string(const std::vector<Literal>& args, const Literal& out)>;

struct Workload {
  std::string name;
  std::string hlo;    // module text, or
  std::string jax;    // a JAX program's name under corpus/jax
  double work = 0;    // FLOP or bytes per run
  bool flops = true;  // GFLOP/s, else GB/s
  int min_reps = 10;
  Check check;  // null: the interpreter checks it
};

// Relative difference of got from want, scaled by `magnitude` (the sum of
// the absolute terms that made want: rounding grows with it).
bool Close(double got, double want, double magnitude, double tolerance) {
  return std::abs(got - want) <= tolerance * std::max(magnitude, 1e-30);
}

std::string SgemmModule(int n) {
  const std::string s = absl::StrCat("f32[", n, ",", n, "]{1,0}");
  return absl::StrCat("HloModule sgemm_", n, "\nENTRY e {\n  a = ", s, " parameter(0)\n  b = ", s,
                      " parameter(1)\n  ROOT d = ", s,
                      " dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n");
}

Check SgemmCheck(int n) {
  return [n](const std::vector<Literal>& args, const Literal& out) -> std::string {
    for (int s = 0; s < 64; ++s) {
      const int64_t i = (s * 7919) % n, j = (s * 104729 + 13) % n;
      double want = 0, magnitude = 0;
      for (int64_t k = 0; k < n; ++k) {
        const double term = args[0].GetDouble(i * n + k) * args[1].GetDouble(k * n + j);
        want += term;
        magnitude += std::abs(term);
      }
      const double got = out.GetDouble(i * n + j);
      if (!Close(got, want, magnitude, 1e-5))
        return absl::StrCat("C[", i, ",", j, "] = ", got, ", want ", want);
    }
    return "";
  };
}

constexpr int64_t kEwElements = int64_t{1} << 24;
constexpr int64_t kReduceSide = 4096;

std::string EwChainModule() {
  const std::string s = absl::StrCat("f32[", kEwElements, "]{0}");
  return absl::StrCat("HloModule ew_chain_16M\nENTRY e {\n  x = ", s,
                      " parameter(0)\n  a = f32[] constant(0.7)\n  b = f32[] constant(0.1)\n"
                      "  one = f32[] constant(1)\n  ab = ",
                      s, " broadcast(a), dimensions={}\n  bb = ", s,
                      " broadcast(b), dimensions={}\n  ob = ", s,
                      " broadcast(one), dimensions={}\n  ax = ", s, " multiply(ab, x)\n  axb = ", s,
                      " add(ax, bb)\n  t = ", s, " tanh(axb)\n  tx = ", s,
                      " multiply(t, x)\n  ROOT y = ", s, " add(tx, ob)\n}\n");
}

std::string EwChainCheck(const std::vector<Literal>& args, const Literal& out) {
  for (int64_t s = 0; s < 4096; ++s) {
    const int64_t i = (s * 40961) % kEwElements;
    const double x = args[0].GetDouble(i);
    const double ax = static_cast<double>(0.7f) * x + static_cast<double>(0.1f);
    const double want = std::tanh(ax) * x + 1;
    if (!Close(out.GetDouble(i), want, std::abs(x) + 1, 1e-6)) {
      return absl::StrCat("y[", i, "] = ", out.GetDouble(i), ", want ", want);
    }
  }
  return "";
}

std::string ReduceModule(bool rows) {
  const std::string a = absl::StrCat("f32[", kReduceSide, ",", kReduceSide, "]{1,0}");
  return absl::StrCat("HloModule reduce_", rows ? "rows" : "cols",
                      "_4096\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                      "  ROOT s = f32[] add(x, y)\n}\nENTRY e {\n  a = ",
                      a, " parameter(0)\n  zero = f32[] constant(0)\n  ROOT r = f32[", kReduceSide,
                      "]{0} reduce(a, zero), dimensions={", rows ? 1 : 0, "}, to_apply=add\n}\n");
}

Check ReduceCheck(bool rows) {
  return [rows](const std::vector<Literal>& args, const Literal& out) -> std::string {
    for (int64_t s = 0; s < 64; ++s) {
      const int64_t r = (s * 7919) % kReduceSide;
      double want = 0, magnitude = 0;
      for (int64_t k = 0; k < kReduceSide; ++k) {
        const double v = args[0].GetDouble(rows ? r * kReduceSide + k : k * kReduceSide + r);
        want += v;
        magnitude += std::abs(v);
      }
      if (!Close(out.GetDouble(r), want, magnitude, 1e-5)) {
        return absl::StrCat("out[", r, "] = ", out.GetDouble(r), ", want ", want);
      }
    }
    return "";
  };
}

Workload Make(std::string name, double work, bool flops, int min_reps, Check check) {
  Workload w;
  w.name = std::move(name);
  w.work = work;
  w.flops = flops;
  w.min_reps = min_reps;
  w.check = std::move(check);
  return w;
}

std::vector<Workload> Workloads() {
  std::vector<Workload> w;
  for (int n : {512, 1024, 2048}) {
    w.push_back(
        Make(absl::StrCat("sgemm_", n), 2.0 * n * n * n, true, n == 512 ? 30 : 10, SgemmCheck(n)));
    w.back().hlo = SgemmModule(n);
  }
  w.push_back(Make("ew_chain_16M", 2.0 * kEwElements * 4, false, 10, EwChainCheck));
  w.back().hlo = EwChainModule();
  for (bool rows : {true, false}) {
    w.push_back(Make(rows ? "reduce_rows_4096" : "reduce_cols_4096",
                     4.0 * kReduceSide * kReduceSide, false, 10, ReduceCheck(rows)));
    w.back().hlo = ReduceModule(rows);
  }
  w.push_back(
      Make("mlp_b32", 2.0 * 32 * (784 * 1024 + 1024 * 1024 + 1024 * 10), true, 100, nullptr));
  w.back().jax = "mlp_b32";
  // QKV, Q·Kᵀ, P·V, output projection, FFN (the peers' count: matmuls only).
  const double tokens = 8 * 128, d = 512, ffn = 2048, heads = 8, seq = 128, d_head = 64;
  w.push_back(Make("encoder_b8s128",
                   2 * tokens * d * 3 * d + 2 * 2 * 8 * heads * seq * seq * d_head +
                       2 * tokens * d * d + 2 * 2 * tokens * d * ffn,
                   true, 10, nullptr));
  w.back().jax = "encoder_b8s128";
  return w;
}

// The first array leaf of a result (every workload has one output).
absl::StatusOr<Literal> FirstOutput(std::vector<std::unique_ptr<Buffer>>& outputs) {
  if (outputs.empty()) return absl::InternalError("no outputs");
  return outputs[0]->ToLiteral();
}

// Compares the compiled result with the workload's check or the
// interpreter: "match", "not checked: ..." or "MISMATCH: ...".
std::string CheckResult(const Workload& w, const xlite::HloModule& module,
                        const std::vector<Literal>& args,
                        std::vector<std::unique_ptr<Buffer>>& outputs, const Flags& flags) {
  absl::StatusOr<Literal> got = FirstOutput(outputs);
  if (!got.ok()) return absl::StrCat("MISMATCH: ", got.status().message());
  if (w.check) {
    const std::string why = w.check(args, *got);
    return why.empty() ? "match (double-precision sums at sampled elements)"
                       : absl::StrCat("MISMATCH: ", why);
  }
  xlite::EvalOptions options;
  options.max_seconds = flags.check_cap_s;
  absl::StatusOr<Literal> want = xlite::Evaluate(module, args, options);
  if (!want.ok()) {
    return absl::StrCat("not checked: the interpreter: ", FirstLine(want.status().message()));
  }
  const Literal* leaf = &*want;
  while (leaf->shape().IsTuple() && !leaf->tuple_elements().empty()) {
    leaf = &leaf->tuple_elements()[0];
  }
  xlite::runtime::Comparison c =
      xlite::runtime::CompareLiterals(*got, *leaf, xlite::runtime::ExcessPrecisionTolerance());
  return c.matches ? "match (the interpreter)"
                   : absl::StrCat("MISMATCH: ", FirstLine(c.ToString()));
}

// Runs one workload at each thread count; false when it failed.
bool Run(const Workload& w, const Flags& flags) {
  std::string text = w.hlo;
  if (!w.jax.empty()) {
    const fs::path path = xlite::bench::CorpusRoot() / "jax" / w.jax / "before_optimizations.txt";
    if (!xlite::bench::ReadFile(path.string(), &text)) {
      std::printf("# skipped %s\tno %s\n", w.name.c_str(), path.string().c_str());
      return true;
    }
  }
  absl::StatusOr<std::unique_ptr<xlite::HloModule>> module =
      xlite::bench::ParseRunnable(text, w.name);
  absl::StatusOr<std::unique_ptr<xlite::HloModule>> to_compile =
      xlite::bench::ParseRunnable(text, w.name);
  if (!module.ok() || !to_compile.ok()) {
    std::fprintf(stderr, "# error %s\t%s\n", w.name.c_str(),
                 FirstLine((module.ok() ? to_compile : module).status().message()).c_str());
    return false;
  }
  absl::StatusOr<std::vector<Literal>> args =
      xlite::MakeFakeArguments(**module, xlite::FakeDataKind::kRandom, /*seed=*/0);
  absl::StatusOr<std::unique_ptr<Executable>> exe = xlite::Compile(std::move(*to_compile));
  absl::Status status = !args.ok() ? args.status() : exe.status();
  if (!status.ok()) {
    std::fprintf(stderr, "# error %s\t%s\n", w.name.c_str(), FirstLine(status.message()).c_str());
    return false;
  }
  absl::StatusOr<Arguments> buffers = Arguments::Create(**exe, *args);
  if (!buffers.ok()) {
    std::fprintf(stderr, "# error %s\targuments: %s\n", w.name.c_str(),
                 FirstLine(buffers.status().message()).c_str());
    return false;
  }
  bool checked = false;
  for (int threads : flags.threads) {
    absl::StatusOr<xlite::bench::RunContext> context = xlite::bench::MakeContext(threads);
    if (!context.ok()) {
      std::fprintf(stderr, "# error %s\tclient: %s\n", w.name.c_str(),
                   FirstLine(context.status().message()).c_str());
      return false;
    }
    xlite::runtime::ExecuteOptions options;
    options.runner = context->runner.get();
    std::vector<std::unique_ptr<Buffer>> outputs;
    for (int i = 0; i < 2; ++i) {  // warm-up; the first result is checked
      absl::StatusOr<double> ms = TimedExecute(**exe, *buffers, options, &outputs);
      if (!ms.ok()) {
        std::fprintf(stderr, "# error %s\trun: %s\n", w.name.c_str(),
                     FirstLine(ms.status().message()).c_str());
        return false;
      }
      if (!checked) {
        const std::string check = CheckResult(w, **module, *args, outputs, flags);
        std::fprintf(stderr, "# check %s\t%s\n", w.name.c_str(), check.c_str());
        if (absl::StartsWith(check, "MISMATCH")) return false;
        checked = true;
      }
    }
    std::vector<double> samples;
    const int reps = std::max({flags.reps, w.min_reps, 10});
    for (int i = 0; i < reps; ++i) {
      absl::StatusOr<double> ms = TimedExecute(**exe, *buffers, options);
      if (!ms.ok()) return false;
      samples.push_back(*ms);
    }
    const double median = xlite::bench::Median(samples);
    std::printf("%s\txlite-cpu@%dt\t%.4f\t%.1f %s\n", w.name.c_str(), threads, median,
                w.work / median / 1e6, w.flops ? "GFLOP/s" : "GB/s");
    std::fflush(stdout);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    // The peers' scripts take `--threads T`: "--flag value" reads as "--flag=value".
    if (absl::StartsWith(arg, "--") && arg.find('=') == std::string::npos && i + 1 < argc &&
        !absl::StartsWith(argv[i + 1], "--")) {
      arg = absl::StrCat(arg, "=", argv[++i]);
    }
    auto value = [&](absl::string_view flag) -> std::optional<std::string> {
      if (!absl::StartsWith(arg, flag)) return std::nullopt;
      return arg.substr(flag.size());
    };
    bool ok = true;
    if (auto v = value("--threads=")) {
      flags.threads.clear();
      for (absl::string_view t : absl::StrSplit(*v, ',', absl::SkipEmpty())) {
        int n = 0;
        ok &= absl::SimpleAtoi(t, &n) && n > 0;
        flags.threads.push_back(n);
      }
      ok &= !flags.threads.empty();
    } else if (auto v = value("--only=")) {
      flags.only = absl::StrSplit(*v, ',', absl::SkipEmpty());
    } else if (auto v = value("--reps=")) {
      ok = absl::SimpleAtoi(*v, &flags.reps) && flags.reps > 0;
    } else if (auto v = value("--check_cap_s=")) {
      ok = absl::SimpleAtod(*v, &flags.check_cap_s) && flags.check_cap_s >= 0;
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr,
                   "e2e_bench: bad flag %s\nusage: e2e_bench [--threads=1,2] "
                   "[--only=SUBSTR[,SUBSTR...]] [--reps=N] [--check_cap_s=S]\n",
                   arg.c_str());
      return 2;
    }
  }
  bool all_ok = true;
  for (const Workload& w : Workloads()) {
    bool selected = flags.only.empty();
    for (const std::string& s : flags.only) selected |= absl::StrContains(w.name, s);
    if (selected) all_ok &= Run(w, flags);
  }
  return all_ok ? 0 : 1;
}
