// A compiler pass over an HloModule, as XLA's HloPassInterface: a kebab-case
// name (used by --xla_disable_hlo_passes, dumps and timing) and a Run that
// says whether it changed the module.
#ifndef XLITE_PASSES_PASS_H_
#define XLITE_PASSES_PASS_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "xlite/ir/module.h"

namespace xlite {

class HloPass {
 public:
  virtual ~HloPass() = default;
  virtual absl::string_view name() const = 0;
  // True if the module changed. An error leaves the module valid but
  // possibly partly transformed.
  virtual absl::StatusOr<bool> Run(HloModule& module) = 0;
};

}  // namespace xlite

#endif  // XLITE_PASSES_PASS_H_
