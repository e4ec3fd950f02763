// MLIR's spelling of names and strings, shared by the StableHLO printer and
// reader and by Shardy's attribute text (sdy_attributes.h).
#ifndef XLITE_TEXT_MLIR_STRINGS_H_
#define XLITE_TEXT_MLIR_STRINGS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "xlite/text/cursor.h"

namespace xlite {

// MLIR's bare identifier characters: [A-Za-z_] to start, then [A-Za-z0-9_$.].
bool IsMlirIdentifierStart(char c);
bool IsMlirIdentifierChar(char c);
// True if `s` prints without quotes (as a dictionary key or after '@').
bool IsMlirBareIdentifier(absl::string_view s);

// "..." with MLIR's escapes: \\ \" \n \t, other control bytes as \XX; UTF-8
// bytes are kept.
std::string QuoteMlirString(absl::string_view s);

// Reads a "..." string at the cursor (after spaces), undoing QuoteMlirString's
// escapes (\XX with any two hex digits); `what` names it in the error when
// no string is there.
absl::StatusOr<std::string> ParseMlirString(Cursor& cursor, absl::string_view what = "a string");

}  // namespace xlite

#endif  // XLITE_TEXT_MLIR_STRINGS_H_
