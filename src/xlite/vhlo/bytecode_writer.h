// Writes VHLO programs as MLIR bytecode: StableHLO portable artifacts.
//
// The inverse of bytecode_reader.h. WriteBytecode takes a module of VHLO ops
// (as StablehloToVhlo or ReadBytecode produce them) and emits what StableHLO
// at `target` emits:
//   - the bytecode version that StableHLO version writes (0.9: 0, 0.10-0.12: 1,
//     0.13: 3, 0.14: 4, 0.15 and later: 6);
//   - the producer "StableHLO_v<target>";
//   - the sections in StableHLO's order: dialect, attribute/type offsets,
//     attributes/types, IR, resource offsets, resources, strings, and (bytecode
//     >= 5) properties;
//   - VHLO attributes and types in the VHLO dialect's encodings, builtin ones
//     (locations, attribute dictionaries, symbol references) in the builtin
//     dialect's; locations are all unknown (as with --strip-debuginfo).
// Bytecode >= 5 stores each op's attributes as properties (unnamed, in the
// order of vhlo_op_properties.h), older bytecode as an attribute dictionary.
#ifndef XLITE_VHLO_BYTECODE_WRITER_H_
#define XLITE_VHLO_BYTECODE_WRITER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "xlite/stablehlo/mlir.h"
#include "xlite/vhlo/vhlo_ops.h"

namespace xlite::vhlo {

// The bytecode format version StableHLO `target` writes.
uint64_t BytecodeVersionFor(const Version& target);

// Serializes a "builtin.module" of VHLO ops.
absl::StatusOr<std::string> WriteBytecode(const mlir::Operation& vhlo_module,
                                          const Version& target);

// StablehloToVhlo + WriteBytecode: a StableHLO module to a portable artifact
// at `target`. Errors name the op, attribute or type the target cannot express.
absl::StatusOr<std::string> SerializePortableArtifact(const mlir::Operation& stablehlo_module,
                                                      const Version& target);

}  // namespace xlite::vhlo

#endif  // XLITE_VHLO_BYTECODE_WRITER_H_
