// Passes by name, for `xlite opt --passes=a,b`.
#ifndef XLITE_PASSES_REGISTRY_H_
#define XLITE_PASSES_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "xlite/passes/pass.h"

namespace xlite {

// The pass called `name`; NotFound lists the known names.
absl::StatusOr<std::unique_ptr<HloPass>> CreatePass(absl::string_view name);
std::vector<std::string> KnownPassNames();

}  // namespace xlite

#endif  // XLITE_PASSES_REGISTRY_H_
