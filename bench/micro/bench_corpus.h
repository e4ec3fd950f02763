// Shared by the micro-benchmarks: where the XLA corpus is, its largest
// module, reading a file, the median of samples.
#ifndef XLITE_BENCH_MICRO_BENCH_CORPUS_H_
#define XLITE_BENCH_MICRO_BENCH_CORPUS_H_

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

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

}  // namespace xlite::bench

#endif  // XLITE_BENCH_MICRO_BENCH_CORPUS_H_
