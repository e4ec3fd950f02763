// StableHLO text in, HloModules out: parse, lower, verify. With
// --split-input-file semantics each `// -----` chunk is its own program.
#ifndef XLITE_STABLEHLO_IMPORT_H_
#define XLITE_STABLEHLO_IMPORT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "xlite/ir/module.h"
#include "xlite/stablehlo/mlir.h"

namespace xlite::stablehlo {

struct ImportedProgram {
  int first_line = 1;  // of the chunk in the file
  absl::StatusOr<std::unique_ptr<HloModule>> module = absl::UnknownError("not imported");
};

// One program per chunk when `split`, else one for the whole text.
std::vector<ImportedProgram> ImportStablehlo(absl::string_view text, absl::string_view filename,
                                             bool split);

// A program already read (e.g. deserialized from VHLO bytecode): lowered and
// verified; errors start with `filename`.
absl::StatusOr<std::unique_ptr<HloModule>> ImportStablehloProgram(const mlir::Operation& program,
                                                                  absl::string_view filename);

}  // namespace xlite::stablehlo

#endif  // XLITE_STABLEHLO_IMPORT_H_
