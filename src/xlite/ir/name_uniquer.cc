#include "xlite/ir/name_uniquer.h"

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
  std::string name = base;
  for (int n = 1; names_.contains(name); ++n) name = absl::StrCat(base, ".", n);
  names_.insert(name);
  return name;
}

}  // namespace xlite
