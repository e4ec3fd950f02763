#include "xlite/ir/name_uniquer.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "xlite/ir/computation.h"

namespace xlite {

NameUniquer NameUniquer::ForInstructions(const HloModule& module) {
  NameUniquer uniquer;
  for (const auto& c : module.computations()) {
    for (const auto& i : c->instructions()) uniquer.names_.insert(i->name());
  }
  return uniquer;
}

NameUniquer NameUniquer::ForComputations(const HloModule& module) {
  NameUniquer uniquer;
  for (const auto& c : module.computations()) uniquer.names_.insert(c->name());
  return uniquer;
}

std::string NameUniquer::Get(const std::string& base) {
  if (names_.insert(base).second) return base;
  Suffixes& suffixes = suffixes_[base];
  while (!suffixes.released.empty()) {
    const int64_t n = *suffixes.released.begin();
    suffixes.released.erase(suffixes.released.begin());
    std::string name = absl::StrCat(base, ".", n);
    if (names_.insert(name).second) return name;
  }
  std::string name = absl::StrCat(base, ".", suffixes.frontier);
  while (!names_.insert(name).second) name = absl::StrCat(base, ".", ++suffixes.frontier);
  ++suffixes.frontier;
  return name;
}

void NameUniquer::Release(const std::string& name) {
  if (names_.erase(name) == 0) return;
  // "<base>.N" is free: Get(base) takes it before any larger N.
  const size_t dot = name.rfind('.');
  int64_t n = 0;
  if (dot == std::string::npos || !absl::SimpleAtoi(name.substr(dot + 1), &n) || n < 1) return;
  auto it = suffixes_.find(name.substr(0, dot));
  if (it != suffixes_.end() && n < it->second.frontier) it->second.released.insert(n);
}

}  // namespace xlite
