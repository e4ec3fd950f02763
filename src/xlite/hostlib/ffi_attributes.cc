#include "xlite/hostlib/ffi_attributes.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "xlite/support/status.h"

namespace xlite::hostlib {

std::string FfiAttribute::ToString() const {
  switch (kind) {
    case Kind::kBool:
      return boolean ? "bool true" : "bool false";
    case Kind::kInteger:
      return absl::StrCat(type, " ", integer);
    case Kind::kFloat:
      return absl::StrCat(type, " ", floating);
    case Kind::kString:
      return absl::StrCat("string \"", string, "\"");
    case Kind::kArray:
      return type[0] == 'f'
                 ? absl::StrCat("array<", type, ": ", absl::StrJoin(floats, ", "), ">")
                 : absl::StrCat("array<", type, ": ", absl::StrJoin(integers, ", "), ">");
    case Kind::kDictionary:
      return "dictionary";
  }
  return "?";
}

const FfiAttribute* FfiAttributes::Find(absl::string_view name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

namespace {

absl::StatusOr<const FfiAttribute*> Required(const FfiAttributes& attrs, absl::string_view name) {
  const FfiAttribute* attr = attrs.Find(name);
  if (attr == nullptr) return InvalidArgument("missing attribute '", name, "'");
  return attr;
}

absl::StatusOr<int64_t> GetTypedInteger(const FfiAttributes& attrs, absl::string_view name,
                                        absl::string_view type) {
  ASSIGN_OR_RETURN(const FfiAttribute* attr, Required(attrs, name));
  if (attr->kind != FfiAttribute::Kind::kInteger || attr->type != type) {
    return InvalidArgument("attribute '", name, "' must be ", type, ", got ", attr->ToString());
  }
  return attr->integer;
}

}  // namespace

absl::StatusOr<uint8_t> FfiAttributes::GetU8(absl::string_view name) const {
  ASSIGN_OR_RETURN(int64_t value, GetTypedInteger(*this, name, "ui8"));
  return static_cast<uint8_t>(value);
}

absl::StatusOr<int32_t> FfiAttributes::GetI32(absl::string_view name) const {
  ASSIGN_OR_RETURN(int64_t value, GetTypedInteger(*this, name, "i32"));
  return static_cast<int32_t>(value);
}

absl::StatusOr<int64_t> FfiAttributes::GetI64(absl::string_view name) const {
  return GetTypedInteger(*this, name, "i64");
}

absl::StatusOr<bool> FfiAttributes::GetBool(absl::string_view name) const {
  ASSIGN_OR_RETURN(const FfiAttribute* attr, Required(*this, name));
  if (attr->kind != FfiAttribute::Kind::kBool) {
    return InvalidArgument("attribute '", name, "' must be a bool, got ", attr->ToString());
  }
  return attr->boolean;
}

absl::StatusOr<char> FfiAttributes::GetChar(absl::string_view name,
                                            absl::string_view allowed) const {
  ASSIGN_OR_RETURN(uint8_t value, GetU8(name));
  const char c = static_cast<char>(value);
  if (value == 0 || allowed.find(c) == absl::string_view::npos) {
    std::vector<std::string> options;
    for (char option : allowed) {
      options.push_back(
          absl::StrCat(static_cast<int>(option), " ('", std::string(1, option), "')"));
    }
    return InvalidArgument("attribute '", name, "' must be one of ", absl::StrJoin(options, ", "),
                           ", got ", static_cast<int>(value));
  }
  return c;
}

absl::Status FfiAttributes::CheckNoOthers(std::initializer_list<absl::string_view> bound) const {
  for (const auto& [name, value] : entries_) {
    bool known = false;
    for (absl::string_view b : bound) known = known || b == name;
    if (!known) {
      return InvalidArgument("unexpected attribute '", name, "' (the target takes ",
                             bound.size() == 0 ? "none" : absl::StrJoin(bound, ", "), ")");
    }
  }
  return absl::OkStatus();
}

// Recursive descent over the MLIR attribute-dictionary syntax.
class FfiAttributeParser {
 public:
  explicit FfiAttributeParser(absl::string_view text) : text_(text) {}

  absl::StatusOr<FfiAttributes> ParseTop() {
    SkipSpace();
    if (pos_ == text_.size()) return FfiAttributes();
    ASSIGN_OR_RETURN(FfiAttributes attrs, ParseDictionary(0));
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the dictionary");
    return attrs;
  }

 private:
  static constexpr int kMaxDepth = 32;

  absl::Status Error(absl::string_view message) const {
    return InvalidArgument("backend_config attribute dictionary, column ", pos_ + 1, ": ", message);
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  absl::Status Expect(char c, absl::string_view context) {
    if (Consume(c)) return absl::OkStatus();
    return Error(absl::StrCat("expected '", std::string(1, c), "' ", context));
  }
  // [A-Za-z_][A-Za-z0-9_$.]*
  absl::string_view Identifier() {
    SkipSpace();
    const size_t start = pos_;
    if (pos_ < text_.size() &&
        (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
              text_[pos_] == '$' || text_[pos_] == '.')) {
        ++pos_;
      }
    }
    return text_.substr(start, pos_ - start);
  }

  absl::StatusOr<std::string> QuotedString() {
    SkipSpace();
    if (pos_ >= text_.size() || text_[pos_] != '"') return Error("expected a string");
    ++pos_;
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) break;
      const char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
          out.push_back(e);
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 't':
          out.push_back('\t');
          break;
        default: {
          // \XX: two hex digits, as MLIR prints non-printable bytes.
          if (pos_ < text_.size() && std::isxdigit(static_cast<unsigned char>(e)) &&
              std::isxdigit(static_cast<unsigned char>(text_[pos_]))) {
            const char hex[3] = {e, text_[pos_++], 0};
            out.push_back(static_cast<char>(std::strtol(hex, nullptr, 16)));
          } else {
            return Error(absl::StrCat("unknown escape '\\", std::string(1, e), "' in a string"));
          }
        }
      }
    }
    if (pos_ >= text_.size()) return Error("unterminated string");
    ++pos_;
    return out;
  }

  absl::StatusOr<FfiAttributes> ParseDictionary(int depth) {
    if (depth > kMaxDepth) return Error("dictionaries nested too deeply");
    RETURN_IF_ERROR(Expect('{', "to open the attribute dictionary"));
    FfiAttributes attrs;
    if (Consume('}')) return attrs;
    while (true) {
      SkipSpace();
      std::string name;
      if (pos_ < text_.size() && text_[pos_] == '"') {
        ASSIGN_OR_RETURN(name, QuotedString());
      } else {
        name = std::string(Identifier());
        if (name.empty()) return Error("expected an attribute name");
      }
      if (attrs.entries_.count(name) != 0) {
        return Error(absl::StrCat("duplicate attribute '", name, "'"));
      }
      if (!Consume('=')) {
        return Error(absl::StrCat("attribute '", name,
                                  "' has no value (unit attributes are not FFI attributes)"));
      }
      ASSIGN_OR_RETURN(FfiAttribute value, ParseValue(name, depth));
      attrs.entries_.emplace(std::move(name), std::move(value));
      if (Consume('}')) return attrs;
      RETURN_IF_ERROR(Expect(',', "or '}' after an attribute"));
    }
  }

  absl::StatusOr<FfiAttribute> ParseValue(absl::string_view name, int depth) {
    SkipSpace();
    if (pos_ >= text_.size()) return Error(absl::StrCat("missing value of '", name, "'"));
    FfiAttribute attr;
    const char c = text_[pos_];
    if (c == '{') {
      ASSIGN_OR_RETURN(FfiAttributes nested, ParseDictionary(depth + 1));
      attr.kind = FfiAttribute::Kind::kDictionary;
      attr.dictionary = std::make_shared<const FfiAttributes>(std::move(nested));
      return attr;
    }
    if (c == '"') {
      attr.kind = FfiAttribute::Kind::kString;
      ASSIGN_OR_RETURN(attr.string, QuotedString());
      return attr;
    }
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) return ParseNumber(name);
    const size_t start = pos_;
    absl::string_view word = Identifier();
    if (word == "true" || word == "false") {
      attr.kind = FfiAttribute::Kind::kBool;
      attr.boolean = word == "true";
      return attr;
    }
    if (word == "array") return ParseArray(name);
    pos_ = start;
    if (word == "dense" || word == "dense_resource" || word == "unit") {
      return Error(absl::StrCat("attribute '", name, "': ", word,
                                " attributes are not supported (use array<...> for FFI arrays)"));
    }
    return Error(absl::StrCat("attribute '", name, "': unsupported value"));
  }

  // A numeric literal: (-)digits, (-)0x hex, or a float with '.'/exponent
  // (or inf/nan spelled as MLIR prints them is not accepted: FFI scalars are
  // finite in jaxlib's use).
  struct Number {
    bool is_float = false;
    bool is_hex = false;
    bool negative = false;
    uint64_t magnitude = 0;
    double value = 0;
  };

  absl::StatusOr<Number> ParseNumberLiteral(absl::string_view name) {
    SkipSpace();
    Number number;
    const size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') {
      number.negative = true;
      ++pos_;
    }
    const size_t digits = pos_;
    int base = 10;
    if (pos_ + 1 < text_.size() && text_[pos_] == '0' && (text_[pos_ + 1] == 'x')) {
      base = 16;
      number.is_hex = true;
      pos_ += 2;
      while (pos_ < text_.size() && std::isxdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    } else {
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E')) {
        number.is_float = true;
        if (text_[pos_] == '.') {
          ++pos_;
          while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])))
            ++pos_;
        }
        if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
          ++pos_;
          if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
          const size_t exponent = pos_;
          while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])))
            ++pos_;
          if (pos_ == exponent) return Error(absl::StrCat("attribute '", name, "': bad exponent"));
        }
      }
    }
    const std::string literal(text_.substr(start, pos_ - start));
    if (pos_ == digits || (base == 16 && pos_ == digits + 2)) {
      return Error(absl::StrCat("attribute '", name, "': expected a number"));
    }
    errno = 0;
    if (number.is_float) {
      number.value = std::strtod(literal.c_str(), nullptr);
      if (errno == ERANGE || !std::isfinite(number.value)) {
        return Error(absl::StrCat("attribute '", name, "': float ", literal, " is out of range"));
      }
    } else {
      const std::string magnitude(text_.substr(base == 16 ? digits + 2 : digits,
                                               pos_ - (base == 16 ? digits + 2 : digits)));
      number.magnitude = std::strtoull(magnitude.c_str(), nullptr, base);
      if (errno == ERANGE) {
        return Error(
            absl::StrCat("attribute '", name, "': integer ", literal, " does not fit 64 bits"));
      }
    }
    return number;
  }

  // An MLIR integer or float type: i1..i64, si8.., ui8.., f32, f64 (and the
  // types FFI cannot carry, named in the error).
  struct ScalarType {
    std::string spelling;
    bool is_float = false;
    bool is_unsigned = false;
    bool is_signed = false;  // si: explicitly signed
    int bits = 0;
  };

  absl::StatusOr<ScalarType> ParseType(absl::string_view name) {
    SkipSpace();
    absl::string_view word = Identifier();
    ScalarType type;
    type.spelling = std::string(word);
    absl::string_view width = word;
    if (word.substr(0, 2) == "ui") {
      type.is_unsigned = true;
      width = word.substr(2);
    } else if (word.substr(0, 2) == "si") {
      type.is_signed = true;
      width = word.substr(2);
    } else if (!word.empty() && (word[0] == 'i' || word[0] == 'f')) {
      type.is_float = word[0] == 'f';
      width = word.substr(1);
    } else {
      return Error(absl::StrCat("attribute '", name, "': expected an integer or float type, got '",
                                word, "'"));
    }
    int bits = 0;
    for (char d : width) {
      if (!std::isdigit(static_cast<unsigned char>(d)) || bits > 1000) {
        return Error(absl::StrCat("attribute '", name, "': unknown type '", word, "'"));
      }
      bits = bits * 10 + (d - '0');
    }
    type.bits = bits;
    const bool ok = type.is_float
                        ? (bits == 32 || bits == 64)
                        : (bits == 1 || bits == 8 || bits == 16 || bits == 32 || bits == 64);
    if (width.empty() || !ok) {
      return Error(absl::StrCat("attribute '", name, "': type '", word,
                                "' is not an FFI attribute type (integers of 8, 16, 32 or 64 "
                                "bits, f32, f64)"));
    }
    return type;
  }

  // Checks `number` fits `type` and returns the value as the FFI sees it.
  absl::StatusOr<int64_t> IntegerValue(absl::string_view name, const Number& number,
                                       const ScalarType& type) {
    const int bits = type.bits;
    const std::string shown =
        absl::StrCat(number.negative ? "-" : "", number.magnitude, " : ", type.spelling);
    const uint64_t unsigned_max = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    const uint64_t signed_max = unsigned_max >> 1;
    bool fits;
    if (type.is_unsigned) {
      fits = !number.negative && number.magnitude <= unsigned_max;
    } else if (type.is_signed) {
      fits = number.negative ? number.magnitude <= signed_max + 1 : number.magnitude <= signed_max;
    } else {  // signless: either reading fits, as MLIR accepts
      fits =
          number.negative ? number.magnitude <= signed_max + 1 : number.magnitude <= unsigned_max;
    }
    if (!fits) {
      return Error(absl::StrCat("attribute '", name, "': ", shown, " is out of range"));
    }
    if (type.is_unsigned && bits == 64 &&
        number.magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Error(absl::StrCat("attribute '", name, "': ", shown,
                                " is beyond the values xlite keeps (int64)"));
    }
    uint64_t bits_value = number.negative ? ~number.magnitude + 1 : number.magnitude;
    if (bits < 64) bits_value &= unsigned_max;
    if (type.is_unsigned) return static_cast<int64_t>(bits_value);
    // Signless and signed types read as signed (sign extension), as XLA's FFI
    // decodes them.
    if (bits < 64 && (bits_value >> (bits - 1)) != 0) bits_value |= ~unsigned_max;
    return static_cast<int64_t>(bits_value);
  }

  absl::StatusOr<FfiAttribute> ParseNumber(absl::string_view name) {
    ASSIGN_OR_RETURN(Number number, ParseNumberLiteral(name));
    FfiAttribute attr;
    ScalarType type;
    if (Consume(':')) {
      ASSIGN_OR_RETURN(type, ParseType(name));
    } else {
      type.spelling = number.is_float ? "f64" : "i64";
      type.is_float = number.is_float;
      type.bits = 64;
    }
    attr.type = type.spelling;
    if (type.is_float) {
      if (!number.is_float) {
        return Error(absl::StrCat("attribute '", name, "': an integer literal cannot have type ",
                                  type.spelling));
      }
      attr.kind = FfiAttribute::Kind::kFloat;
      attr.floating = number.value;
      if (type.bits == 32 && std::fabs(number.value) > std::numeric_limits<float>::max()) {
        return Error(absl::StrCat("attribute '", name, "': out of f32 range"));
      }
      return attr;
    }
    if (number.is_float) {
      return Error(
          absl::StrCat("attribute '", name, "': a float literal cannot have type ", type.spelling));
    }
    if (type.bits == 1) {
      return Error(absl::StrCat("attribute '", name, "': i1 is spelled true/false"));
    }
    attr.kind = FfiAttribute::Kind::kInteger;
    ASSIGN_OR_RETURN(attr.integer, IntegerValue(name, number, type));
    return attr;
  }

  // array<T> or array<T: v, v, ...>
  absl::StatusOr<FfiAttribute> ParseArray(absl::string_view name) {
    RETURN_IF_ERROR(Expect('<', "after 'array'"));
    ASSIGN_OR_RETURN(ScalarType type, ParseType(name));
    if (type.bits == 1) {
      return Error(absl::StrCat("attribute '", name, "': array<i1> is not an FFI array"));
    }
    FfiAttribute attr;
    attr.kind = FfiAttribute::Kind::kArray;
    attr.type = type.spelling;
    if (Consume(':')) {
      do {
        ASSIGN_OR_RETURN(Number number, ParseNumberLiteral(name));
        if (type.is_float) {
          // MLIR reads a hex literal as the float's bit pattern; not taken
          // here rather than misread as a number.
          if (number.is_hex) {
            return Error(absl::StrCat("attribute '", name, "': hex (bit pattern) elements of an ",
                                      type.spelling, " array are not supported"));
          }
          const double value = number.is_float ? number.value
                                               : (number.negative ? -1.0 : 1.0) *
                                                     static_cast<double>(number.magnitude);
          if (type.bits == 32 && std::fabs(value) > std::numeric_limits<float>::max()) {
            return Error(absl::StrCat("attribute '", name, "': ", value, " is out of f32 range"));
          }
          attr.floats.push_back(value);
        } else {
          if (number.is_float) {
            return Error(
                absl::StrCat("attribute '", name, "': float in an ", type.spelling, " array"));
          }
          ASSIGN_OR_RETURN(int64_t value, IntegerValue(name, number, type));
          attr.integers.push_back(value);
        }
      } while (Consume(','));
    }
    RETURN_IF_ERROR(Expect('>', "to close the array"));
    return attr;
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

absl::StatusOr<FfiAttributes> ParseFfiAttributes(absl::string_view text) {
  return FfiAttributeParser(text).ParseTop();
}

}  // namespace xlite::hostlib
