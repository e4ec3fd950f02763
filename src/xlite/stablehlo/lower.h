// Lowers a StableHLO program (mlir.h operations) to an HloModule with the
// StableHLO spec's semantics: one HloComputation per function and per region,
// chlo ops by decomposition, composites as calls of their decomposition, and
// check.* ops as side-effecting "check.*" custom calls (check_ops.h runs them).
#ifndef XLITE_STABLEHLO_LOWER_H_
#define XLITE_STABLEHLO_LOWER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "xlite/ir/module.h"
#include "xlite/stablehlo/mlir.h"

namespace xlite::stablehlo {

struct LowerOptions {
  // The function to make the entry; empty: @main, else the module's only
  // function, else its last public function.
  std::string entry;
};

// Errors name the operation's file:line:col and the rule broken; features
// xlite does not lower say "unsupported" (absl::StatusCode::kUnimplemented).
absl::StatusOr<std::unique_ptr<HloModule>> LowerToHlo(const mlir::Operation& module,
                                                      const LowerOptions& options = {});

}  // namespace xlite::stablehlo

#endif  // XLITE_STABLEHLO_LOWER_H_
