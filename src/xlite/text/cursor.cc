#include "xlite/text/cursor.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace xlite {

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

Cursor::Cursor(absl::string_view text, std::string filename)
    : text_(text), filename_(std::move(filename)) {}

void Cursor::SkipSpace() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') {
      size_t end = text_.find("*/", pos_ + 2);
      pos_ = end == absl::string_view::npos ? text_.size() : end + 2;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
      size_t end = text_.find('\n', pos_);
      pos_ = end == absl::string_view::npos ? text_.size() : end + 1;
    } else {
      break;
    }
  }
}

char Cursor::Peek() {
  SkipSpace();
  return PeekRaw();
}

bool Cursor::LookingAt(absl::string_view s) {
  SkipSpace();
  return text_.substr(pos_, s.size()) == s;
}

bool Cursor::TryConsume(absl::string_view s) {
  if (!LookingAt(s)) return false;
  pos_ += s.size();
  return true;
}

bool Cursor::TryConsumeWord(absl::string_view w) {
  if (!LookingAt(w)) return false;
  size_t end = pos_ + w.size();
  if (end < text_.size() && IsNameChar(text_[end])) return false;
  pos_ = end;
  return true;
}

absl::Status Cursor::Expect(absl::string_view s) {
  if (TryConsume(s)) return absl::OkStatus();
  return Error(absl::StrCat("expected '", s, "'"));
}

absl::StatusOr<std::string> Cursor::ParseName(absl::string_view what) {
  SkipSpace();
  size_t start = pos_;
  if (PeekRaw() == '%') ++pos_;
  size_t begin = pos_;
  while (pos_ < text_.size() && IsNameChar(text_[pos_])) ++pos_;
  if (pos_ == begin || text_[begin] == '-') {
    pos_ = start;
    return Error(absl::StrCat("expected ", what));
  }
  return std::string(text_.substr(begin, pos_ - begin));
}

absl::StatusOr<std::string> Cursor::ParseIdentifier(absl::string_view what) {
  SkipSpace();
  size_t begin = pos_;
  if (pos_ < text_.size() &&
      (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
    ++pos_;
    while (pos_ < text_.size() && IsNameChar(text_[pos_])) ++pos_;
  }
  if (pos_ == begin) return Error(absl::StrCat("expected ", what));
  return std::string(text_.substr(begin, pos_ - begin));
}

absl::StatusOr<int64_t> Cursor::ParseInt64() {
  SkipSpace();
  size_t begin = pos_;
  bool neg = false;
  if (PeekRaw() == '-' || PeekRaw() == '+') {
    neg = PeekRaw() == '-';
    ++pos_;
  }
  size_t digits = pos_;
  while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  if (pos_ == digits) {
    pos_ = begin;
    return Error("expected integer");
  }
  uint64_t v = 0;
  for (size_t i = digits; i < pos_; ++i) {
    uint64_t d = text_[i] - '0';
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) {
      return ErrorAt(begin, "integer is out of range");
    }
    v = v * 10 + d;
  }
  const uint64_t limit = neg ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (v > limit) return ErrorAt(begin, "integer is out of range for s64");
  return neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
}

absl::StatusOr<uint64_t> Cursor::ParseUint64() {
  SkipSpace();
  size_t begin = pos_;
  while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  if (pos_ == begin) return Error("expected unsigned integer");
  uint64_t v = 0;
  for (size_t i = begin; i < pos_; ++i) {
    uint64_t d = text_[i] - '0';
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) {
      return ErrorAt(begin, "integer is out of range for u64");
    }
    v = v * 10 + d;
  }
  return v;
}

absl::StatusOr<double> Cursor::ParseDouble() {
  SkipSpace();
  size_t begin = pos_;
  bool neg = false;
  if (PeekRaw() == '-' || PeekRaw() == '+') {
    neg = PeekRaw() == '-';
    ++pos_;
  }
  if (TryConsumeWord("inf")) return neg ? -INFINITY : INFINITY;
  if (TryConsumeWord("nan")) {
    double nan = std::numeric_limits<double>::quiet_NaN();
    return neg ? -nan : nan;
  }
  size_t start = pos_;
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      ++pos_;
    } else if ((c == 'e' || c == 'E') && pos_ > start) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
    } else {
      break;
    }
  }
  if (pos_ == start) {
    pos_ = begin;
    return Error("expected number");
  }
  std::string s(text_.substr(begin, pos_ - begin));
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size())
    return ErrorAt(begin, absl::StrCat("malformed number '", s, "'"));
  if (std::isinf(v))
    return ErrorAt(begin, absl::StrCat("number '", s, "' is out of range for f64"));
  return v;
}

absl::StatusOr<bool> Cursor::ParseBool() {
  if (TryConsumeWord("true")) return true;
  if (TryConsumeWord("false")) return false;
  return Error("expected true or false");
}

absl::StatusOr<std::string> Cursor::ParseString(bool allow_newlines) {
  SkipSpace();
  size_t begin = pos_;
  if (PeekRaw() != '"') return Error("expected string");
  ++pos_;
  while (pos_ < text_.size() && text_[pos_] != '"') {
    if (text_[pos_] == '\\') ++pos_;
    if (!allow_newlines && pos_ < text_.size() && text_[pos_] == '\n') {
      return Error("unterminated string");
    }
    ++pos_;
  }
  if (pos_ >= text_.size()) return ErrorAt(begin, "unterminated string");
  absl::string_view raw = text_.substr(begin + 1, pos_ - begin - 1);
  ++pos_;
  std::string out;
  std::string error;
  if (!absl::CUnescape(raw, &out, &error)) {
    return ErrorAt(begin, absl::StrCat("bad escape in string: ", error));
  }
  return out;
}

absl::StatusOr<std::vector<int64_t>> Cursor::ParseIntList(char open, char close) {
  std::vector<int64_t> out;
  if (!TryConsume(absl::string_view(&open, 1))) {
    return Error(absl::StrCat("expected '", std::string(1, open), "'"));
  }
  if (TryConsume(absl::string_view(&close, 1))) return out;
  while (true) {
    auto v = ParseInt64();
    if (!v.ok()) return v.status();
    out.push_back(*v);
    if (TryConsume(",")) continue;
    if (TryConsume(absl::string_view(&close, 1))) return out;
    return Error(absl::StrCat("expected ',' or '", std::string(1, close), "'"));
  }
}

absl::StatusOr<std::string> Cursor::ParseBalancedBraces() {
  SkipSpace();
  size_t begin = pos_;
  if (PeekRaw() != '{') return Error("expected '{'");
  int depth = 0;
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == '"') {
      ++pos_;
      while (pos_ < text_.size() && text_[pos_] != '"') {
        if (text_[pos_] == '\\') ++pos_;
        ++pos_;
      }
      if (pos_ >= text_.size()) break;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (--depth == 0) {
        ++pos_;
        return std::string(text_.substr(begin, pos_ - begin));
      }
    }
    ++pos_;
  }
  return ErrorAt(begin, "unbalanced '{'");
}

absl::string_view Cursor::ParseRawToken() {
  SkipSpace();
  size_t begin = pos_;
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ',' || c == '}' || c == ' ' || c == '\n' || c == '\t' || c == '\r') break;
    ++pos_;
  }
  return text_.substr(begin, pos_ - begin);
}

std::pair<int, int> Cursor::LineColumn(size_t pos) const {
  if (line_starts_.empty()) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < text_.size(); ++i) {
      if (text_[i] == '\n') line_starts_.push_back(i + 1);
    }
  }
  pos = std::min(pos, text_.size());
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), pos);
  const size_t line = it - line_starts_.begin();
  return {static_cast<int>(line), static_cast<int>(pos - line_starts_[line - 1] + 1)};
}

std::string Cursor::Location(size_t pos) const {
  auto [line, col] = LineColumn(pos);
  return absl::StrCat(filename_, ":", line, ":", col);
}

absl::Status Cursor::ErrorAt(size_t pos, absl::string_view message) const {
  return absl::InvalidArgumentError(absl::StrCat(Location(pos), ": ", message));
}

bool LexesAsJsonDict(absl::string_view s) {
  if (s.size() < 2 || s.front() != '{' || s.back() != '}') return false;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') {
      ++i;
      while (i < s.size() && s[i] != '"') {
        if (s[i] == '\\') ++i;
        ++i;
      }
      if (i >= s.size()) return false;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (--depth == 0) return i == s.size() - 1;
    }
  }
  return false;
}

std::string CEscape(absl::string_view s) { return absl::CEscape(s); }

}  // namespace xlite
