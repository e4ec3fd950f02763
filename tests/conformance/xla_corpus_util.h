// Reading ../shared/corpus/xla's manifest for the corpus runs: the entries
// whose kind holds a whole module, with their text. Test-only, header-only.
#ifndef XLITE_TESTS_CONFORMANCE_XLA_CORPUS_UTIL_H_
#define XLITE_TESTS_CONFORMANCE_XLA_CORPUS_UTIL_H_

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"

namespace xlite::xla_corpus {

struct ModuleFile {
  std::string path;  // relative to the corpus folder, as the manifest names it
  std::string kind;
  std::string text;
};

// Reads manifest entries (after its header line) until one of a module kind
// (hlo_file, hlo_file_headerless, parser_roundtrip_long/short; parser_test
// too when asked) and fills `out` with it; false at the end.
inline bool NextModuleFile(std::ifstream& manifest, const std::filesystem::path& dir,
                           ModuleFile& out, bool with_parser_tests = false) {
  std::string line;
  while (std::getline(manifest, line)) {
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    if (f.size() < 3) continue;
    const std::string& kind = f[2];
    if (kind != "hlo_file" && kind != "hlo_file_headerless" && kind != "parser_roundtrip_long" &&
        kind != "parser_roundtrip_short" && !(with_parser_tests && kind == "parser_test")) {
      continue;
    }
    std::ifstream in(dir / f[0]);
    std::stringstream ss;
    ss << in.rdbuf();
    out = ModuleFile{f[0], kind, ss.str()};
    return true;
  }
  return false;
}

// The manifest of `dir`, positioned after its header line.
inline std::ifstream OpenManifest(const std::filesystem::path& dir) {
  std::ifstream manifest(dir / "manifest.tsv");
  std::string header;
  std::getline(manifest, header);
  return manifest;
}

}  // namespace xlite::xla_corpus

#endif  // XLITE_TESTS_CONFORMANCE_XLA_CORPUS_UTIL_H_
