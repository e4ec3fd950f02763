// vhlo::ImportPortableArtifact (upgrade.h), apart from the reader: it brings
// in stablehlo::ImportStablehloProgram and, through it, the interpreter.
#include "xlite/stablehlo/import.h"
#include "xlite/support/status.h"
#include "xlite/vhlo/upgrade.h"

namespace xlite::vhlo {

absl::StatusOr<std::unique_ptr<HloModule>> ImportPortableArtifact(absl::string_view bytes,
                                                                  const std::string& filename) {
  ASSIGN_OR_RETURN(mlir::OwningOp program, DeserializePortableArtifact(bytes, filename));
  return stablehlo::ImportStablehloProgram(*program, filename);
}

}  // namespace xlite::vhlo
