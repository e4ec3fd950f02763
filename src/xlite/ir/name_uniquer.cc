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
  int64_t& n = first_free_.try_emplace(base, 1).first->second;
  std::string name = absl::StrCat(base, ".", n);
  while (names_.contains(name)) name = absl::StrCat(base, ".", ++n);
  names_.insert(name);
  ++n;
  return name;
}

void NameUniquer::Release(const std::string& name) {
  if (names_.erase(name) == 0) return;
  // "<base>.N" is free: Get(base) starts there again.
  const size_t dot = name.rfind('.');
  int64_t n = 0;
  if (dot == std::string::npos || !absl::SimpleAtoi(name.substr(dot + 1), &n) || n < 1) return;
  auto it = first_free_.find(name.substr(0, dot));
  if (it != first_free_.end() && n < it->second) it->second = n;
}

}  // namespace xlite
