#include "xlite/passes/simplify.h"

#include "xlite/passes/registry.h"
#include "xlite/support/status.h"

namespace xlite {

absl::StatusOr<std::unique_ptr<HloPassPipeline>> SimplifyPipeline() {
  auto pipeline = std::make_unique<HloPassPipeline>("simplify");
  for (const char* name : {"call-inliner", "flatten-call-graph", "dce"}) {
    ASSIGN_OR_RETURN(std::unique_ptr<HloPass> pass, CreatePass(name));
    pipeline->AddPass(std::move(pass));
  }
  HloPassPipeline& fixed_point = pipeline->AddPass<HloPassPipeline>("simplify-fixed-point", 16);
  for (const char* name :
       {"algsimp", "constant-folding", "tuple-simplifier", "zero-sized-hlo-elimination",
        "while-loop-invariant-code-motion", "while-loop-constant-sinking", "while-loop-simplifier",
        "cse", "dce"}) {
    ASSIGN_OR_RETURN(std::unique_ptr<HloPass> pass, CreatePass(name));
    fixed_point.AddPass(std::move(pass));
  }
  return pipeline;
}

}  // namespace xlite
