// VHLO -> StableHLO: the consumer side of StableHLO portable artifacts.
//
// A program read by ReadBytecode (bytecode_reader.h) holds VHLO ops at the
// versions its producer wrote ("vhlo.all_gather_v1", "vhlo.func_v1").
// VhloToStablehlo
//   1. refuses ops that are not in the op table (vhlo_ops.h) and ops, types
//      and attributes newer than the producer version, naming them;
//   2. upgrades every op to its newest version by the version-specific rules
//      (the attributes a newer version added get the value that keeps the old
//      meaning, e.g. gather_v1 -> v2 adds empty batching dims);
//   3. converts the newest versions to StableHLO / func ops with the
//      attributes the MLIR text reader produces for the same program: VHLO
//      defaults are dropped, dimension lists become array<i64: ..>, grouped
//      attributes become #stablehlo.gather/scatter/dot/conv/channel_handle
//      structs, enums become #stablehlo<name VALUE>.
// So PrintMlir(VhloToStablehlo(ReadBytecode(X.mlir.bc))) prints like
// PrintMlir(ParseMlir(X.mlir)). Other dialects' ops pass through with their
// attributes converted the same way.
#ifndef XLITE_VHLO_UPGRADE_H_
#define XLITE_VHLO_UPGRADE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "xlite/ir/module.h"
#include "xlite/stablehlo/mlir.h"
#include "xlite/vhlo/vhlo_ops.h"

namespace xlite::vhlo {

// `vhlo_module` is the "builtin.module" ReadBytecode returns; `producer` the
// version the artifact records (BytecodeInfo::producer, see ParseProducer).
// Errors name the op (and attribute) and the producer version.
absl::StatusOr<mlir::OwningOp> VhloToStablehlo(const mlir::Operation& vhlo_module,
                                               const Version& producer);

// ReadBytecode + ParseProducer + VhloToStablehlo: a portable artifact's bytes
// to a StableHLO module. `filename` names the file in errors.
absl::StatusOr<mlir::OwningOp> DeserializePortableArtifact(absl::string_view bytes,
                                                           const std::string& filename);

// DeserializePortableArtifact, then lowered to HLO and verified
// (stablehlo::ImportStablehloProgram): what `xlite opt` and `run` load.
// Defined in import_artifact.cc: the import registers the check dialect with
// the interpreter, which the readers alone (the fuzz build) do not link.
absl::StatusOr<std::unique_ptr<HloModule>> ImportPortableArtifact(absl::string_view bytes,
                                                                  const std::string& filename);

}  // namespace xlite::vhlo

#endif  // XLITE_VHLO_UPGRADE_H_
