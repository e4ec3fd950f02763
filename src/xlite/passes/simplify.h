// The standard simplification pipeline (`xlite opt --pipeline=simplify`):
// call inlining, call-graph flattening and DCE, then algebraic
// simplification, constant folding, tuple simplification, zero-sized-HLO
// elimination, CSE and DCE repeated to a fixed point.
#ifndef XLITE_PASSES_SIMPLIFY_H_
#define XLITE_PASSES_SIMPLIFY_H_

#include <memory>

#include "absl/status/statusor.h"
#include "xlite/passes/pipeline.h"

namespace xlite {

absl::StatusOr<std::unique_ptr<HloPassPipeline>> SimplifyPipeline();

}  // namespace xlite

#endif  // XLITE_PASSES_SIMPLIFY_H_
