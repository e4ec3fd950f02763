// Shared by the micro-benchmarks: where the XLA corpus is, its largest
// module, reading a file, the median of samples, a generated module of any
// size.
#ifndef XLITE_BENCH_MICRO_BENCH_CORPUS_H_
#define XLITE_BENCH_MICRO_BENCH_CORPUS_H_

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"

namespace xlite::bench {

namespace fs = std::filesystem;

// XLITE_CORPUS (a corpus folder, whose xla/ subfolder is used when present, or
// one .hlo file), else ../shared/corpus/xla; "" when there is none.
inline std::string CorpusLocation() {
  std::error_code ec;
  if (const char* env = std::getenv("XLITE_CORPUS"); env != nullptr && *env != '\0') {
    fs::path p(env);
    if (fs::is_directory(p / "xla", ec)) return (p / "xla").string();
    if (fs::exists(p, ec)) return p.string();
    std::fprintf(stderr, "XLITE_CORPUS=%s does not exist\n", env);
    return "";
  }
  fs::path p = fs::path("..") / "shared" / "corpus" / "xla";
  if (fs::is_directory(p, ec)) return p.string();
  return "";
}

// The largest *.hlo file under `location` (or `location` itself if a file).
inline std::string LargestHloFile(const std::string& location) {
  std::error_code ec;
  if (fs::is_regular_file(location, ec)) return location;
  std::string best;
  uintmax_t best_size = 0;
  for (auto it = fs::recursive_directory_iterator(
           location, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->path().extension() != ".hlo") continue;
    uintmax_t size = it->file_size(ec);
    if (ec) continue;
    // Ties broken by name so the choice is stable.
    if (size > best_size || (size == best_size && it->path().string() < best)) {
      best_size = size;
      best = it->path().string();
    }
  }
  return best;
}

inline bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return static_cast<bool>(in) || in.eof();
}

inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// `p` added to itself n times in a chain of scalar adds (one small kernel
// each: dispatch cost).
inline std::string ScalarAddChainModule(int n, const std::string& name) {
  std::string body = absl::StrCat("HloModule ", name, "\nENTRY e {\n  p = f32[] parameter(0)\n");
  std::string prev = "p";
  for (int i = 1; i <= n; ++i) {
    const std::string next = absl::StrCat("a", i);
    absl::StrAppend(&body, i == n ? "  ROOT " : "  ", next, " = f32[] add(", prev, ", p)\n");
    prev = next;
  }
  return body + "}\n";
}

// A while loop of n iterations whose body is two scalar adds.
inline std::string WhileLoopModule(int n, const std::string& name = "loop") {
  return absl::StrCat("HloModule ", name, R"(
cond {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant()",
                      n, R"()
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  h = f32[] constant(0.5)
  x1 = f32[] add(x, h)
  ROOT t = (s32[], f32[]) tuple(i1, x1)
}
ENTRY e {
  x = f32[] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[]) tuple(z, x)
  w = (s32[], f32[]) while(t), condition=cond, body=body
  ROOT r = f32[] get-tuple-element(w), index=1
}
)");
}

// A chain of about `instructions` instructions in blocks of 8 (dot,
// exponential, negate, add, reduce, broadcast, multiply, slice); each block's
// slice stays live to the end, so the schedulers have choices to make.
inline std::string ChainModule(int64_t instructions) {
  const int64_t blocks = std::max<int64_t>(1, instructions / 8);
  std::string text = absl::StrCat("HloModule chain_", instructions,
                                  "\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                                  "  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n"
                                  "  x0 = f32[64,64] parameter(0)\n  w = f32[64,64] parameter(1)\n"
                                  "  zero = f32[] constant(0)\n");
  std::string kept;
  for (int64_t k = 1; k <= blocks; ++k) {
    const std::string prev = absl::StrCat("x", k - 1);
    absl::StrAppend(&text, "  d", k, " = f32[64,64] dot(", prev,
                    ", w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n", "  e", k,
                    " = f32[64,64] exponential(d", k, ")\n", "  n", k, " = f32[64,64] negate(",
                    prev, ")\n", "  s", k, " = f32[64,64] add(e", k, ", n", k, ")\n", "  r", k,
                    " = f32[64] reduce(s", k, ", zero), dimensions={1}, to_apply=add\n", "  b", k,
                    " = f32[64,64] broadcast(r", k, "), dimensions={0}\n", "  x", k,
                    " = f32[64,64] multiply(s", k, ", b", k, ")\n", "  k", k, " = f32[8] slice(r",
                    k, "), slice={[0:8]}\n");
    absl::StrAppend(&kept, k > 1 ? ", " : "", "k", k);
  }
  std::string shapes;
  for (int64_t k = 0; k <= blocks; ++k)
    absl::StrAppend(&shapes, k ? ", " : "", k ? "f32[8]" : "f32[64,64]");
  absl::StrAppend(&text, "  ROOT out = (", shapes, ") tuple(x", blocks, ", ", kept, ")\n}\n");
  return text;
}

}  // namespace xlite::bench

#endif  // XLITE_BENCH_MICRO_BENCH_CORPUS_H_
