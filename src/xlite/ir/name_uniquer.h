// NameUniquer: module-unique names for the instructions (or computations) a
// pass adds, as XLA's NameUniquer: the base name when it is free, else
// "<base>.1", "<base>.2", ...
#ifndef XLITE_IR_NAME_UNIQUER_H_
#define XLITE_IR_NAME_UNIQUER_H_

#include <string>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "xlite/ir/module.h"

namespace xlite {

class NameUniquer {
 public:
  // Knowing every instruction name of `module`.
  static NameUniquer ForInstructions(const HloModule& module);
  // Knowing every computation name of `module`.
  static NameUniquer ForComputations(const HloModule& module);

  // A name no one has, taken.
  std::string Get(const std::string& base);
  // Takes `name` if it is free; false if someone has it.
  bool TryTake(const std::string& name) { return names_.insert(name).second; }
  // `name` is free again (its owner was deleted or renamed).
  void Release(const std::string& name);

 private:
  // Per base, the "<base>.N" suffixes Get looks at: every N below
  // `frontier` was taken once, so the free ones among them are in
  // `released` (which may hold some TryTake took again). Get returns the
  // smallest free N without looking at the taken ones: naming the k-th
  // fusion costs no k lookups (a module with thousands of fusions and their
  // param_N spent seconds here), nor does naming one after a release.
  struct Suffixes {
    int64_t frontier = 1;
    absl::btree_set<int64_t> released;
  };
  absl::flat_hash_set<std::string> names_;
  absl::flat_hash_map<std::string, Suffixes> suffixes_;
};

}  // namespace xlite

#endif  // XLITE_IR_NAME_UNIQUER_H_
