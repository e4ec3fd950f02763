// NameUniquer: module-unique names for the instructions (or computations) a
// pass adds, as XLA's NameUniquer: the base name when it is free, else
// "<base>.1", "<base>.2", ...
#ifndef XLITE_IR_NAME_UNIQUER_H_
#define XLITE_IR_NAME_UNIQUER_H_

#include <string>

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
  absl::flat_hash_set<std::string> names_;
  // Per base, a suffix below which every "<base>.N" is taken: Get starts
  // there, so naming the k-th fusion costs no k lookups (a module with
  // thousands of fusions and their param_N spent seconds here).
  absl::flat_hash_map<std::string, int64_t> first_free_;
};

}  // namespace xlite

#endif  // XLITE_IR_NAME_UNIQUER_H_
