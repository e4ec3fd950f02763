// Line diffs in the unified format (`diff -u`), for dumps that show what a
// pass changed. Lines are matched by patience diff: lines that occur once in
// each side anchor the match (in HLO text nearly every line names a unique
// instruction), the longest increasing run of anchors is kept, and the gaps
// between anchors are diffed the same way; a gap without unique lines is
// matched by LCS when small, or shown as replaced.
#ifndef XLITE_SUPPORT_UNIFIED_DIFF_H_
#define XLITE_SUPPORT_UNIFIED_DIFF_H_

#include <string>

#include "absl/strings/string_view.h"

namespace xlite {

// "" when the texts are equal; otherwise "--- <from_name>\n+++ <to_name>\n"
// followed by hunks "@@ -l,n +l,n @@" with `context` lines around changes.
std::string UnifiedDiff(absl::string_view from, absl::string_view to, absl::string_view from_name,
                        absl::string_view to_name, int context = 3);

}  // namespace xlite

#endif  // XLITE_SUPPORT_UNIFIED_DIFF_H_
