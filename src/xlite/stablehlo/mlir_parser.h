// Reads MLIR text as StableHLO programs use it (pretty and generic op syntax,
// func/check/chlo/interpreter ops, builtin and #stablehlo attributes) into the
// generic-operation layer of mlir.h. Errors name file:line:col.
#ifndef XLITE_STABLEHLO_MLIR_PARSER_H_
#define XLITE_STABLEHLO_MLIR_PARSER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "xlite/stablehlo/mlir.h"

namespace xlite::mlir {

// Parses a whole file; returns a "builtin.module" operation. Top-level
// func.func ops without a module are wrapped in one, as MLIR tools do.
absl::StatusOr<OwningOp> ParseMlir(absl::string_view text, absl::string_view filename,
                                   int first_line = 1);

// One `// -----` chunk of a file (MLIR's --split-input-file).
struct SourceChunk {
  std::string text;
  int first_line = 1;  // line of the chunk's first line in the whole file
};
std::vector<SourceChunk> SplitInputFile(absl::string_view text);

// One canonical form per meaning, as the reader leaves every operation (and
// as other producers, e.g. the VHLO upgrade, should): dot dimension numbers
// in StableHLO's field order, and attributes equal to their default dropped
// (MLIR's printers elide them too, so a written default and an absent one
// are the same program).
void CanonicalizeAttributes(Operation& op);

// Parses one attribute or type in MLIR's generic syntax.
absl::StatusOr<Attribute> ParseAttributeText(absl::string_view text);
absl::StatusOr<Type> ParseTypeText(absl::string_view text);

}  // namespace xlite::mlir

#endif  // XLITE_STABLEHLO_MLIR_PARSER_H_
