#include "xlite/stablehlo/import.h"

#include "absl/strings/str_cat.h"
#include "xlite/stablehlo/check_ops.h"
#include "xlite/stablehlo/lower.h"
#include "xlite/stablehlo/mlir_parser.h"
#include "xlite/support/status.h"
#include "xlite/verify/verifier.h"

namespace xlite::stablehlo {
namespace {

absl::StatusOr<std::unique_ptr<HloModule>> ImportOne(absl::string_view text,
                                                     absl::string_view filename, int first_line) {
  ASSIGN_OR_RETURN(mlir::OwningOp program, mlir::ParseMlir(text, filename, first_line));
  return ImportStablehloProgram(*program, filename);
}

}  // namespace

absl::StatusOr<std::unique_ptr<HloModule>> ImportStablehloProgram(const mlir::Operation& program,
                                                                  absl::string_view filename) {
  RegisterCheckTargets();
  ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, LowerToHlo(program));
  if (absl::Status s = VerifyModule(*module); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(filename, ": lowered module: ", s.message()));
  }
  return module;
}

std::vector<ImportedProgram> ImportStablehlo(absl::string_view text, absl::string_view filename,
                                             bool split) {
  RegisterCheckTargets();
  std::vector<ImportedProgram> out;
  if (!split) {
    out.push_back({1, ImportOne(text, filename, 1)});
    return out;
  }
  for (const mlir::SourceChunk& chunk : mlir::SplitInputFile(text)) {
    out.push_back({chunk.first_line, ImportOne(chunk.text, filename, chunk.first_line)});
  }
  return out;
}

}  // namespace xlite::stablehlo
