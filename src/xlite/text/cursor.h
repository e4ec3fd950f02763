// A character cursor over HLO text with line:col positions, whitespace and
// comment skipping, and the small lexical pieces the parser is built from.
#ifndef XLITE_TEXT_CURSOR_H_
#define XLITE_TEXT_CURSOR_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace xlite {

class Cursor {
 public:
  Cursor(absl::string_view text, std::string filename);

  size_t pos() const { return pos_; }
  void set_pos(size_t p) { pos_ = p; }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= text_.size();
  }
  absl::string_view text() const { return text_; }

  // Skips whitespace, /* */ and // comments.
  void SkipSpace();
  // Next non-space character, or '\0' at the end.
  char Peek();
  char PeekRaw() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  // Consumes `s` (after spaces) if it is next; does not check word boundaries.
  bool TryConsume(absl::string_view s);
  // Consumes the word `w` only when not followed by a name character.
  bool TryConsumeWord(absl::string_view w);
  absl::Status Expect(absl::string_view s);
  // True if the text after spaces starts with `s`.
  bool LookingAt(absl::string_view s);

  // [A-Za-z0-9_.\-]+ with an optional leading '%' (dropped). Names may not
  // start with '-'.
  absl::StatusOr<std::string> ParseName(absl::string_view what = "name");
  // Bare identifier: [A-Za-z_][A-Za-z0-9_.\-]*.
  absl::StatusOr<std::string> ParseIdentifier(absl::string_view what = "identifier");
  absl::StatusOr<int64_t> ParseInt64();
  absl::StatusOr<uint64_t> ParseUint64();
  // A double; accepts inf, -inf, nan, -nan.
  absl::StatusOr<double> ParseDouble();
  absl::StatusOr<bool> ParseBool();
  // A "..." string with C escapes, returned unescaped; line breaks inside
  // only where allowed (an HLO module embedded in a string).
  absl::StatusOr<std::string> ParseString(bool allow_newlines = false);
  // {1,2,3} (possibly empty).
  absl::StatusOr<std::vector<int64_t>> ParseIntList(char open = '{', char close = '}');
  // A balanced {...} block, returned verbatim including the braces; strings
  // inside may contain braces.
  absl::StatusOr<std::string> ParseBalancedBraces();
  // Characters up to (not including) the next ',' '}' or whitespace at depth 0.
  absl::string_view ParseRawToken();

  // "file:line:col: message" at the current (or a given) position.
  absl::Status Error(absl::string_view message) const { return ErrorAt(pos_, message); }
  absl::Status ErrorAt(size_t pos, absl::string_view message) const;
  std::string Location(size_t pos) const;
  // 1-based line and column of `pos`.
  std::pair<int, int> LineColumn(size_t pos) const;
  const std::string& filename() const { return filename_; }

 private:
  absl::string_view text_;
  std::string filename_;
  size_t pos_ = 0;
  mutable std::vector<size_t> line_starts_;
};

bool IsNameChar(char c);
// True if `s` starts with '{', ends with the matching '}', and lexes as a
// dictionary (balanced braces, well-formed strings): such backend configs and
// frontend attribute values print without quotes.
bool LexesAsJsonDict(absl::string_view s);
// C-style escaping as XLA's printer uses for quoted strings.
std::string CEscape(absl::string_view s);

}  // namespace xlite

#endif  // XLITE_TEXT_CURSOR_H_
