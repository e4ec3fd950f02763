#ifndef XLITE_TOOLS_XLITE_RUN_H_
#define XLITE_TOOLS_XLITE_RUN_H_

#include <string>
#include <vector>

namespace xlite::cli {
// xlite run [flags] FILE: exit 0 on success, 1 on errors, 3 for unsupported
// features, 4 when the run exceeds --max_elements.
int Run(const std::vector<std::string>& args);
}  // namespace xlite::cli

#endif  // XLITE_TOOLS_XLITE_RUN_H_
