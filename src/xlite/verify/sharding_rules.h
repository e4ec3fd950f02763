// Rules for sharding= attributes: named-mesh shardings follow XLA's
// NamedSharding rules, fit the instruction's rank and use the module's
// partitions.
#ifndef XLITE_VERIFY_SHARDING_RULES_H_
#define XLITE_VERIFY_SHARDING_RULES_H_

#include "absl/status/status.h"
#include "xlite/ir/module.h"

namespace xlite {

// The broken rule, without the instruction's name (the verifier adds it).
absl::Status CheckSharding(const HloInstruction& instr, const ModuleConfig& config);

}  // namespace xlite

#endif  // XLITE_VERIFY_SHARDING_RULES_H_
