// StableHLO -> VHLO: the producer side of StableHLO portable artifacts.
//
// StablehloToVhlo is the inverse of VhloToStablehlo (upgrade.h). For a module
// of stablehlo.* / func.* ops (as ParseMlir produces them) and a target
// version it
//   1. converts every op to its newest VHLO version with every attribute
//      written out (VHLO has no implicit defaults): grouped StableHLO
//      attributes (#stablehlo.conv/dot/gather/scatter/channel_handle) are split
//      into their parts, array<i64: ..> becomes a tensor, symbols become
//      strings, enums become #vhlo<name_v1 VALUE>, absent attributes get the
//      value StableHLO leaves implicit (the tables of vhlo_conversion_tables.h);
//   2. downgrades each op to the newest version legal at the target by the
//      version-specific rules: an attribute the older version lacks is dropped
//      only when it holds its default value;
//   3. checks types and attributes against the target.
// When the target cannot express the program, the error names the op, the
// attribute or feature, and both versions:
//   "stablehlo.exponential: attribute 'result_accuracy' (non-default value) needs
//    vhlo.exponential_v2 (StableHLO >= 1.9.0); target 1.8.0 only has vhlo.exponential_v1"
#ifndef XLITE_VHLO_DOWNGRADE_H_
#define XLITE_VHLO_DOWNGRADE_H_

#include "absl/status/statusor.h"
#include "xlite/stablehlo/mlir.h"
#include "xlite/vhlo/vhlo_ops.h"

namespace xlite::vhlo {

// `module` is a "builtin.module" of StableHLO ops; the result holds VHLO ops
// ("vhlo.add_v1") in the representation ReadBytecode produces, ready for
// WriteBytecode (bytecode_writer.h). `target` must lie in the window.
absl::StatusOr<mlir::OwningOp> StablehloToVhlo(const mlir::Operation& module,
                                               const Version& target);

}  // namespace xlite::vhlo

#endif  // XLITE_VHLO_DOWNGRADE_H_
