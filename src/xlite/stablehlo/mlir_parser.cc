#include "xlite/stablehlo/mlir_parser.h"

#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "xlite/ir/float_format.h"
#include "xlite/stablehlo/element_types.h"
#include "xlite/stablehlo/mlir_parser_impl.h"
#include "xlite/stablehlo/printer.h"
#include "xlite/support/status.h"
#include "xlite/text/cursor.h"
#include "xlite/text/sdy_attributes.h"

namespace xlite::mlir {
namespace parser_internal {

// Dialects whose custom (pretty) op syntax the reader implements; others are
// read by the generic keyword rules, which cover only simple forms.
bool KnownCustomSyntax(absl::string_view name) {
  for (absl::string_view d :
       {"stablehlo.", "chlo.", "check.", "func.", "builtin.", "interpreter.", "sdy."}) {
    if (absl::StartsWith(name, d)) return true;
  }
  return name == "module" || name == "scf.for" || name == "tensor.insert" ||
         name == "tensor.extract" || name == "arith.constant";
}

// A float written as its bits (0x7FC00000 : f32, 0x7E00 : f16).
double FloatFromBits(absl::string_view element, uint64_t bits) {
  std::optional<PrimitiveType> type = PrimitiveTypeOf(element);
  std::optional<FloatFormat> format = type ? GetFloatFormat(*type) : std::nullopt;
  return format ? DecodeFloat(*format, bits) : std::bit_cast<double>(bits);
}

absl::Status Parser::SkipBalanced() {
  c_.SkipSpace();
  std::string stack;
  absl::string_view t = c_.text();
  size_t p = c_.pos();
  do {
    if (p >= t.size()) return ErrorAt(c_.pos(), "unbalanced brackets");
    char ch = t[p];
    if (ch == '"') {
      ++p;
      while (p < t.size() && t[p] != '"') p += t[p] == '\\' ? 2 : 1;
      ++p;
      continue;
    }
    if (ch == '(' || ch == '[' || ch == '{' || ch == '<') stack.push_back(ch);
    if (ch == ')' || ch == ']' || ch == '}' || ch == '>') {
      if (ch == '>' && p > 0 && t[p - 1] == '-') {  // '->' inside a type
        ++p;
        continue;
      }
      if (stack.empty()) return ErrorAt(p, "unbalanced brackets");
      char open = stack.back();
      if ((open == '(' && ch != ')') || (open == '[' && ch != ']') || (open == '{' && ch != '}') ||
          (open == '<' && ch != '>')) {
        return ErrorAt(p, "mismatched brackets");
      }
      stack.pop_back();
    }
    ++p;
  } while (!stack.empty());
  c_.set_pos(p);
  return absl::OkStatus();
}

// ---------------------------------------------------------------- Types

absl::StatusOr<std::string> Parser::ParseElementTypeText() {
  c_.SkipSpace();
  size_t b = c_.pos();
  if (c_.PeekRaw() == '!') {
    RETURN_IF_ERROR(SuffixName('!').status());
    if (c_.PeekRaw() == '<') RETURN_IF_ERROR(SkipBalanced());
    std::string text(c_.text().substr(b, c_.pos() - b));
    auto alias = type_aliases_.find(text.substr(1));
    if (alias != type_aliases_.end() && alias->second.kind == Type::Kind::kScalar) {
      return alias->second.element;
    }
    return text;
  }
  std::string id = Ident();
  if (id.empty()) return Error("expected a type");
  // Parameterized builtin types keep their <...> body as written.
  if (id == "complex" || id == "vector" || id == "memref") {
    if (c_.PeekRaw() != '<') return Error("expected '<'");
    RETURN_IF_ERROR(SkipBalanced());
  }
  return std::string(c_.text().substr(b, c_.pos() - b));
}

absl::StatusOr<Type> Parser::ParseTensorBody() {
  // After "tensor<": dims 'x' separated, then the element type, then an
  // optional encoding.
  Type t;
  t.kind = Type::Kind::kTensor;
  absl::string_view text = c_.text();
  c_.SkipSpace();
  if (c_.PeekRaw() == '*') {
    c_.set_pos(c_.pos() + 1);
    if (c_.PeekRaw() != 'x') return Error("expected 'x' after '*'");
    c_.set_pos(c_.pos() + 1);
    t.ranked = false;
  } else {
    while (true) {
      size_t p = c_.pos();
      if (p < text.size() && text[p] == '?') {
        t.dims.push_back(Type::kDynamic);
        ++p;
      } else if (p < text.size() && std::isdigit(static_cast<unsigned char>(text[p]))) {
        size_t e = p;
        while (e < text.size() && std::isdigit(static_cast<unsigned char>(text[e]))) ++e;
        int64_t d;
        if (!absl::SimpleAtoi(text.substr(p, e - p), &d)) return Error("dimension too large");
        t.dims.push_back(d);
        p = e;
      } else {
        break;
      }
      if (p >= text.size() || text[p] != 'x') return ErrorAt(p, "expected 'x' after dimension");
      c_.set_pos(p + 1);
      if (t.dims.size() > 64) return Error("too many dimensions");
    }
  }
  ASSIGN_OR_RETURN(t.element, ParseElementTypeText());
  if (c_.TryConsume(",")) {
    // Kept in its canonical spelling, so the printer can print it as is.
    ASSIGN_OR_RETURN(Attribute encoding, ParseAttribute());
    t.encoding = PrintAttribute(encoding);
  }
  RETURN_IF_ERROR(c_.Expect(">"));
  return t;
}

absl::StatusOr<Type> Parser::ParseType() {
  Nesting nesting(&depth_);
  if (nesting.too_deep()) return Error("nesting too deep");
  char ch = c_.Peek();
  if (ch == '(') {
    Type t;
    t.kind = Type::Kind::kFunction;
    ASSIGN_OR_RETURN(t.elements, ParseTypeListParens());
    RETURN_IF_ERROR(c_.Expect("->"));
    ASSIGN_OR_RETURN(t.results, ParseResultTypes());
    return t;
  }
  if (ch == '!') {
    size_t b = c_.pos();
    ASSIGN_OR_RETURN(std::string name, SuffixName('!'));
    if (name == "stablehlo.token") {
      Type t;
      t.kind = Type::Kind::kToken;
      return t;
    }
    if (c_.PeekRaw() == '<') RETURN_IF_ERROR(SkipBalanced());
    auto alias = type_aliases_.find(name);
    if (alias != type_aliases_.end() && c_.pos() == b + 1 + name.size()) return alias->second;
    return Type::Scalar(std::string(c_.text().substr(b, c_.pos() - b)));
  }
  size_t b = c_.pos();
  std::string id = Ident();
  if (id.empty()) return Error("expected a type");
  if (id == "tensor") {
    if (c_.PeekRaw() != '<') return Error("expected '<' after tensor");
    c_.set_pos(c_.pos() + 1);
    return ParseTensorBody();
  }
  if (id == "tuple") {
    Type t;
    t.kind = Type::Kind::kTuple;
    RETURN_IF_ERROR(c_.Expect("<"));
    if (!c_.TryConsume(">")) {
      do {
        ASSIGN_OR_RETURN(Type e, ParseType());
        t.elements.push_back(std::move(e));
      } while (c_.TryConsume(","));
      RETURN_IF_ERROR(c_.Expect(">"));
    }
    return t;
  }
  if (id == "complex" || id == "vector" || id == "memref") {
    c_.set_pos(b);
    ASSIGN_OR_RETURN(std::string text, ParseElementTypeText());
    if (id == "complex") return Type::Scalar(text);
    Type t;
    t.element = text;
    return t;
  }
  return Type::Scalar(id);
}

absl::StatusOr<std::vector<Type>> Parser::ParseTypeListParens() {
  std::vector<Type> types;
  RETURN_IF_ERROR(c_.Expect("("));
  if (c_.TryConsume(")")) return types;
  do {
    ASSIGN_OR_RETURN(Type t, ParseType());
    types.push_back(std::move(t));
  } while (c_.TryConsume(","));
  RETURN_IF_ERROR(c_.Expect(")"));
  return types;
}

absl::StatusOr<std::vector<Type>> Parser::ParseResultTypes() {
  if (c_.Peek() == '(') {
    // "(T, T)" is a result list; "(T) -> T" would be a function type result,
    // which StableHLO never uses.
    return ParseTypeListParens();
  }
  ASSIGN_OR_RETURN(Type t, ParseType());
  return std::vector<Type>{std::move(t)};
}

// ---------------------------------------------------------------- Attributes

absl::StatusOr<std::vector<NamedAttribute>> Parser::ParseAttrDict() {
  std::vector<NamedAttribute> out;
  RETURN_IF_ERROR(c_.Expect("{"));
  if (c_.TryConsume("}")) return out;
  do {
    c_.SkipSpace();
    std::string key;
    if (c_.PeekRaw() == '"') {
      ASSIGN_OR_RETURN(key, ParseString());
    } else {
      key = Ident();
      if (key.empty()) return Error("expected an attribute name");
    }
    if (c_.TryConsume("=")) {
      ASSIGN_OR_RETURN(Attribute a, ParseAttribute());
      out.emplace_back(std::move(key), std::move(a));
    } else {
      out.emplace_back(std::move(key), Attribute());
    }
  } while (c_.TryConsume(","));
  RETURN_IF_ERROR(c_.Expect("}"));
  return out;
}

absl::StatusOr<Attribute> Parser::ParseAttribute(bool typed_numbers) {
  Nesting nesting(&depth_);
  if (nesting.too_deep()) return Error("nesting too deep");
  Attribute a;
  char ch = c_.Peek();
  size_t start = c_.pos();
  if (ch == '"') {
    ASSIGN_OR_RETURN(a.text, ParseString());
    a.kind = Kind::kString;
    if (c_.TryConsume(":")) RETURN_IF_ERROR(ParseType().status());
    return a;
  }
  if (ch == '@') {
    ASSIGN_OR_RETURN(a.text, SuffixName('@'));
    a.kind = Kind::kSymbol;
    while (c_.TryConsume("::")) {  // nested symbol references
      ASSIGN_OR_RETURN(std::string more, SuffixName('@'));
      absl::StrAppend(&a.text, "::@", more);
    }
    return a;
  }
  if (ch == '[') {
    c_.set_pos(c_.pos() + 1);
    a.kind = Kind::kArray;
    if (c_.TryConsume("]")) return a;
    do {
      ASSIGN_OR_RETURN(Attribute e, ParseAttribute());
      a.elements.push_back(std::move(e));
    } while (c_.TryConsume(","));
    RETURN_IF_ERROR(c_.Expect("]"));
    return a;
  }
  if (ch == '{') {
    a.kind = Kind::kDict;
    ASSIGN_OR_RETURN(a.fields, ParseAttrDict());
    return a;
  }
  if (ch == '#') return ParseHashAttribute();
  if (ch == '-' || ch == '+' || std::isdigit(static_cast<unsigned char>(ch))) {
    // Integer or float, optionally typed.
    absl::string_view t = c_.text();
    size_t p = c_.pos();
    size_t e = p;
    if (t[e] == '-' || t[e] == '+') ++e;
    bool is_float = false;
    if (t.substr(e, 2) == "0x") {
      e += 2;
      while (e < t.size() && std::isxdigit(static_cast<unsigned char>(t[e]))) ++e;
    } else {
      while (e < t.size() &&
             (std::isdigit(static_cast<unsigned char>(t[e])) || t[e] == '.' || t[e] == 'e' ||
              t[e] == 'E' ||
              ((t[e] == '-' || t[e] == '+') && (t[e - 1] == 'e' || t[e - 1] == 'E')))) {
        if (t[e] == '.' || t[e] == 'e' || t[e] == 'E') is_float = true;
        ++e;
      }
    }
    std::string num(t.substr(p, e - p));
    c_.set_pos(e);
    Type type = Type::Scalar(is_float ? "f64" : "i64");
    if (typed_numbers && c_.TryConsume(":")) {
      ASSIGN_OR_RETURN(type, ParseType());
    }
    const bool float_type = type.kind == Type::Kind::kScalar &&
                            (absl::StartsWith(type.element, "f") || type.element == "bf16");
    a.type = type;
    if (is_float || float_type) {
      a.kind = Kind::kFloat;
      if (absl::StartsWith(num, "0x")) {
        uint64_t bits;
        if (!absl::SimpleHexAtoi(num, &bits)) return ErrorAt(p, "bad hexadecimal float");
        a.float_value = FloatFromBits(type.element, bits);
      } else if (!absl::SimpleAtod(num, &a.float_value)) {
        return ErrorAt(p, absl::StrCat("bad number '", num, "'"));
      }
      return a;
    }
    a.kind = Kind::kInteger;
    bool ok = absl::StartsWith(num, "0x") || absl::StartsWith(num, "-0x")
                  ? absl::SimpleHexAtoi(num, &a.int_value)
                  : absl::SimpleAtoi(num, &a.int_value);
    if (!ok) {
      uint64_t u;
      if (!absl::SimpleAtoi(num, &u)) return ErrorAt(p, absl::StrCat("bad integer '", num, "'"));
      a.int_value = static_cast<int64_t>(u);
    }
    return a;
  }
  std::string id = Ident();
  if (id == "true" || id == "false") {
    a.kind = Kind::kBool;
    a.bool_value = id == "true";
    return a;
  }
  if (id == "unit") return a;
  if (id == "dense") return ParseDense();
  if (id == "dense_resource") {
    a.kind = Kind::kDenseResource;
    RETURN_IF_ERROR(c_.Expect("<"));
    ASSIGN_OR_RETURN(a.name, c_.ParseName("resource name"));
    RETURN_IF_ERROR(c_.Expect(">"));
    RETURN_IF_ERROR(c_.Expect(":"));
    ASSIGN_OR_RETURN(a.type, ParseType());
    return a;
  }
  if (id == "array") {
    a.kind = Kind::kDenseArray;
    RETURN_IF_ERROR(c_.Expect("<"));
    ASSIGN_OR_RETURN(a.text, ParseElementTypeText());
    const bool is_float = absl::StartsWith(a.text, "f") || a.text == "bf16";
    if (c_.TryConsume(":")) {
      do {
        c_.SkipSpace();
        if (is_float && c_.LookingAt("0x")) {
          absl::string_view t = c_.text();
          size_t e = c_.pos() + 2;
          while (e < t.size() && std::isxdigit(static_cast<unsigned char>(t[e]))) ++e;
          uint64_t bits;
          if (!absl::SimpleHexAtoi(t.substr(c_.pos(), e - c_.pos()), &bits)) {
            return Error("bad hexadecimal float");
          }
          c_.set_pos(e);
          a.floats.push_back(FloatFromBits(a.text, bits));
        } else if (is_float) {
          ASSIGN_OR_RETURN(double d, c_.ParseDouble());
          a.floats.push_back(d);
        } else if (PeekIdent("true") || PeekIdent("false")) {
          a.ints.push_back(Ident() == "true");
        } else {
          ASSIGN_OR_RETURN(int64_t v, c_.ParseInt64());
          a.ints.push_back(v);
        }
      } while (c_.TryConsume(","));
    }
    RETURN_IF_ERROR(c_.Expect(">"));
    return a;
  }
  if (id == "affine_map" || id == "strided" || id == "distinct" || id == "sparse") {
    RETURN_IF_ERROR(SkipBalanced());
    a.kind = Kind::kOpaque;
    a.text = std::string(c_.text().substr(start, c_.pos() - start));
    return a;
  }
  // A type used as an attribute.
  c_.set_pos(start);
  a.kind = Kind::kType;
  ASSIGN_OR_RETURN(a.type, ParseType());
  return a;
}

absl::StatusOr<Attribute> Parser::ParseHashAttribute() {
  size_t start = c_.pos();
  ASSIGN_OR_RETURN(std::string name, SuffixName('#'));
  Attribute a;
  // Shardy's enums (#sdy<propagation_direction FORWARD>) are plain enums.
  const bool sdy_enum =
      name == "sdy" && (absl::StartsWith(c_.text().substr(c_.pos()), "<propagation_direction ") ||
                        absl::StartsWith(c_.text().substr(c_.pos()), "<edge_node_type "));
  if (!sdy_enum && (name == "sdy" || absl::StartsWith(name, "sdy."))) {
    // Shardy's attributes are read (and checked) by sdy.h and kept in their
    // canonical spelling.
    c_.set_pos(start);
    ASSIGN_OR_RETURN(sdy::Attr parsed, sdy::ParseAttr(c_));
    a.kind = Kind::kOpaque;
    a.name = absl::StrCat("sdy.", sdy::Mnemonic(parsed));
    a.text = sdy::Print(parsed);
    return a;
  }
  if (c_.PeekRaw() != '<') {
    auto alias = attribute_aliases_.find(name);
    if (alias == attribute_aliases_.end()) {
      return ErrorAt(start, absl::StrCat("undefined attribute alias #", name));
    }
    return alias->second;
  }
  size_t body_begin = c_.pos() + 1;
  RETURN_IF_ERROR(SkipBalanced());
  size_t body_end = c_.pos() - 1;
  std::string body(absl::StripAsciiWhitespace(c_.text().substr(body_begin, body_end - body_begin)));
  if (name.find('.') == std::string::npos) {
    // #dialect<mnemonic value>: an enum, e.g. #stablehlo<comparison_direction LT>.
    std::vector<std::string> parts = absl::StrSplit(body, absl::MaxSplits(' ', 1));
    if (parts.size() == 2) {
      a.kind = Kind::kEnum;
      a.name = absl::StrCat(name, ".", parts[0]);
      a.text = std::string(absl::StripAsciiWhitespace(parts[1]));
      return a;
    }
    a.kind = Kind::kOpaque;
    a.text = std::string(c_.text().substr(start, c_.pos() - start));
    return a;
  }
  a.kind = Kind::kStruct;
  a.name = name;
  // key = value lists parse into fields; other bodies stay raw.
  size_t after = c_.pos();
  c_.set_pos(body_begin);
  size_t probe = c_.pos();
  std::string key = Ident();
  bool keyed = !key.empty() && c_.Peek() == '=';
  c_.set_pos(probe);
  if (keyed) {
    absl::StatusOr<std::vector<NamedAttribute>> fields = ParseKeywordList('>');
    if (!fields.ok()) return fields.status();
    a.fields = *std::move(fields);
    if (c_.pos() != after) return ErrorAt(c_.pos(), "expected '>'");
  } else if (!body.empty() && body.find_first_of(" ,[<") == std::string::npos) {
    a.text = body;  // #stablehlo.precision<DEFAULT> style single value
  }
  a.raw = body;
  c_.set_pos(after);
  return a;
}

absl::StatusOr<std::vector<NamedAttribute>> Parser::ParseKeywordList(char close) {
  std::vector<NamedAttribute> out;
  if (c_.Peek() == close) {
    c_.set_pos(c_.pos() + 1);
    return out;
  }
  do {
    std::string key = Ident();
    if (key.empty()) return Error("expected a name");
    RETURN_IF_ERROR(c_.Expect("="));
    ASSIGN_OR_RETURN(Attribute v, ParseKeywordValue());
    out.emplace_back(std::move(key), std::move(v));
  } while (c_.TryConsume(","));
  RETURN_IF_ERROR(c_.Expect(std::string(1, close)));
  return out;
}

absl::StatusOr<Attribute> Parser::ParseKeywordValue() {
  Nesting nesting(&depth_);
  if (nesting.too_deep()) return Error("nesting too deep");
  char ch = c_.Peek();
  Attribute a;
  if (ch == '[') {
    c_.set_pos(c_.pos() + 1);
    a.kind = Kind::kArray;
    if (!c_.TryConsume("]")) {
      do {
        ASSIGN_OR_RETURN(Attribute e, ParseKeywordValue());
        a.elements.push_back(std::move(e));
      } while (c_.TryConsume(","));
      RETURN_IF_ERROR(c_.Expect("]"));
    }
    size_t save = c_.pos();
    if (TryWord("x") && c_.Peek() == '[') {  // [0] x [1]
      ASSIGN_OR_RETURN(Attribute rhs, ParseKeywordValue());
      Attribute pair;
      pair.kind = Kind::kArray;
      pair.raw = "x";
      pair.elements.push_back(std::move(a));
      pair.elements.push_back(std::move(rhs));
      return pair;
    }
    c_.set_pos(save);
    return a;
  }
  if (ch == '{') {
    c_.set_pos(c_.pos() + 1);
    a.kind = Kind::kDict;
    ASSIGN_OR_RETURN(a.fields, ParseKeywordList('}'));
    return a;
  }
  if (ch == '?') {
    c_.set_pos(c_.pos() + 1);
    a.kind = Kind::kOpaque;
    a.text = "?";
    return a;
  }
  if (ch == '(') {
    // #stablehlo.axis_ref<..., sub_axis_info = (pre_size)size>: kept as "(1)2".
    c_.set_pos(c_.pos() + 1);
    ASSIGN_OR_RETURN(int64_t pre_size, c_.ParseInt64());
    RETURN_IF_ERROR(c_.Expect(")"));
    ASSIGN_OR_RETURN(int64_t size, c_.ParseInt64());
    a.kind = Kind::kOpaque;
    a.text = absl::StrCat("(", pre_size, ")", size);
    return a;
  }
  if (IsMlirIdentifierStart(ch)) {
    size_t save = c_.pos();
    std::string id = Ident();
    if (id != "true" && id != "false" && id != "dense" && id != "array" && id != "tensor" &&
        id != "dense_resource") {
      a.kind = Kind::kOpaque;
      a.text = id;
      return a;
    }
    c_.set_pos(save);
  }
  return ParseAttribute(/*typed_numbers=*/false);
}

absl::Status Parser::ParseDenseItems(std::vector<DenseItem>& items, std::vector<int64_t>& shape,
                                     int depth, int& leaf_depth) {
  if (depth > 64) return Error("dense literal nested too deep");
  if (c_.Peek() == '[') {
    if (leaf_depth != -1 && depth >= leaf_depth) return Error("dense literal is not rectangular");
    c_.set_pos(c_.pos() + 1);
    int64_t count = 0;
    if (c_.Peek() != ']') {
      do {
        RETURN_IF_ERROR(ParseDenseItems(items, shape, depth + 1, leaf_depth));
        ++count;
        if (static_cast<int64_t>(items.size()) > kMaxDenseElements) {
          return Error("dense literal too large");
        }
      } while (c_.TryConsume(","));
    }
    RETURN_IF_ERROR(c_.Expect("]"));
    if (static_cast<int>(shape.size()) <= depth) shape.resize(depth + 1, -1);
    if (shape[depth] == -1) {
      shape[depth] = count;
    } else if (shape[depth] != count) {
      return Error("dense literal is not rectangular");
    }
    return absl::OkStatus();
  }
  if (leaf_depth == -1) {
    leaf_depth = depth;
  } else if (leaf_depth != depth) {
    return Error("dense literal is not rectangular");
  }
  DenseItem item;
  c_.SkipSpace();
  if (c_.PeekRaw() == '(') {
    c_.set_pos(c_.pos() + 1);
    item.kind = DenseItem::kComplex;
    absl::string_view t = c_.text();
    auto number = [&](std::string& out) -> absl::Status {
      c_.SkipSpace();
      size_t b = c_.pos(), e = b;
      while (e < t.size() && (std::isalnum(static_cast<unsigned char>(t[e])) || t[e] == '.' ||
                              t[e] == '-' || t[e] == '+')) {
        ++e;
      }
      if (e == b) return Error("expected a number");
      out = std::string(t.substr(b, e - b));
      c_.set_pos(e);
      return absl::OkStatus();
    };
    RETURN_IF_ERROR(number(item.text));
    RETURN_IF_ERROR(c_.Expect(","));
    RETURN_IF_ERROR(number(item.imag));
    RETURN_IF_ERROR(c_.Expect(")"));
  } else if (PeekIdent("true") || PeekIdent("false")) {
    item.kind = DenseItem::kBool;
    item.bool_value = Ident() == "true";
  } else {
    absl::string_view t = c_.text();
    size_t b = c_.pos(), e = b;
    while (e < t.size() && (std::isalnum(static_cast<unsigned char>(t[e])) || t[e] == '.' ||
                            t[e] == '-' || t[e] == '+')) {
      ++e;
    }
    if (e == b) return Error("expected a dense element");
    item.text = std::string(t.substr(b, e - b));
    c_.set_pos(e);
  }
  items.push_back(std::move(item));
  return absl::OkStatus();
}

// Parses a decimal/hex number text for an element of `type` into `lit[i]`.
absl::Status SetDenseElement(Literal& lit, int64_t i, const DenseItem& item, PrimitiveType type) {
  auto parse_real = [&](const std::string& text, double& out, bool& hex, uint64_t& bits) {
    hex = absl::StartsWith(text, "0x") || absl::StartsWith(text, "0X");
    if (hex) return absl::SimpleHexAtoi(text, &bits);
    if (text == "inf" || text == "+inf") {
      out = INFINITY;
      return true;
    }
    if (text == "-inf") {
      out = -INFINITY;
      return true;
    }
    if (text == "nan") {
      out = NAN;
      return true;
    }
    return absl::SimpleAtod(text, &out);
  };
  if (item.kind == DenseItem::kBool) {
    lit.SetInt(i, item.bool_value ? 1 : 0);
    return absl::OkStatus();
  }
  if (item.kind == DenseItem::kComplex) {
    if (!IsComplex(type)) return absl::InvalidArgumentError("complex value for a real type");
    double parts[2] = {0, 0};
    const std::string* texts[2] = {&item.text, &item.imag};
    for (int k = 0; k < 2; ++k) {
      bool hex = false;
      uint64_t bits = 0;
      if (!parse_real(*texts[k], parts[k], hex, bits)) {
        return absl::InvalidArgumentError(
            absl::StrCat("bad complex value (", item.text, ", ", item.imag, ")"));
      }
      if (hex) {
        parts[k] = type == PrimitiveType::C64
                       ? static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(bits)))
                       : std::bit_cast<double>(bits);
      }
    }
    const double re = parts[0], im = parts[1];
    lit.SetComplex(i, {re, im});
    return absl::OkStatus();
  }
  if (IsFloatingPoint(type) || IsComplex(type)) {
    double v = 0;
    bool hex;
    uint64_t bits = 0;
    if (!parse_real(item.text, v, hex, bits)) {
      return absl::InvalidArgumentError(absl::StrCat("bad floating-point value '", item.text, "'"));
    }
    if (hex) {
      if (IsComplex(type)) return absl::InvalidArgumentError("hex value for a complex type");
      lit.SetBits(i, bits);
    } else {
      lit.SetDouble(i, v);
    }
    return absl::OkStatus();
  }
  // Integers (and pred as 0/1).
  int64_t v = 0;
  const std::string& text = item.text;
  bool neg = absl::StartsWith(text, "-");
  absl::string_view digits = neg ? absl::string_view(text).substr(1) : absl::string_view(text);
  uint64_t u = 0;
  bool ok = absl::StartsWith(digits, "0x") ? absl::SimpleHexAtoi(digits, &u)
                                           : absl::SimpleAtoi(digits, &u);
  if (!ok) return absl::InvalidArgumentError(absl::StrCat("bad integer value '", text, "'"));
  if (neg && u > (uint64_t{1} << 63)) {
    return absl::InvalidArgumentError(absl::StrCat("value ", text, " out of range"));
  }
  v = static_cast<int64_t>(neg ? uint64_t{0} - u : u);
  const int width = PrimitiveBitWidth(type);
  if (type == PrimitiveType::PRED) {
    if (u > 1 || neg) return absl::InvalidArgumentError(absl::StrCat("bad i1 value '", text, "'"));
  } else if (width < 64) {
    const bool is_signed = IsSignedInt(type);
    const int64_t lo = is_signed ? -(int64_t{1} << (width - 1)) : 0;
    const int64_t hi = is_signed ? (int64_t{1} << (width - 1)) - 1 : (int64_t{1} << width) - 1;
    // MLIR accepts the unsigned spelling of a signed value (255 for i8 = -1).
    const int64_t hi_unsigned = (int64_t{1} << width) - 1;
    if (v < lo || v > (is_signed ? hi_unsigned : hi)) {
      return absl::InvalidArgumentError(
          absl::StrCat("value ", text, " out of range for ", PrimitiveTypeName(type)));
    }
  } else if (neg && IsUnsignedInt(type)) {
    return absl::InvalidArgumentError(absl::StrCat("negative value ", text, " for unsigned type"));
  }
  lit.SetInt(i, v);
  return absl::OkStatus();
}

absl::StatusOr<Literal> Parser::BuildDenseLiteral(size_t pos, const std::vector<DenseItem>& items,
                                                  const std::vector<int64_t>& shape, bool splat,
                                                  const std::string& hex, const Type& type) {
  if (type.kind != Type::Kind::kTensor) {
    return ErrorAt(pos, "dense attribute needs a tensor type");
  }
  if (!type.IsStatic()) return ErrorAt(pos, "dense attribute with a dynamic shape");
  std::optional<PrimitiveType> et = PrimitiveTypeOf(type.element);
  if (!et) {
    absl::Status s = ErrorAt(
        pos, absl::StrCat("element type '", type.element, "' of a dense attribute is unsupported"));
    return absl::UnimplementedError(s.message());
  }
  int64_t n = 1;
  for (int64_t d : type.dims) {
    if (d < 0 || (d > 0 && n > kMaxDenseElements / d)) {
      return ErrorAt(pos, "dense attribute too large");
    }
    n *= d;
  }
  if (n > kMaxDenseElements) return ErrorAt(pos, "dense attribute too large");
  Literal lit(Shape::Array(*et, type.dims));
  if (!hex.empty()) {
    std::string bytes;
    if (hex.size() % 2 != 0) return ErrorAt(pos, "odd number of hex digits");
    bytes.resize(hex.size() / 2);
    for (size_t i = 0; i < bytes.size(); ++i) {
      int hi = std::isdigit(static_cast<unsigned char>(hex[2 * i])) ? hex[2 * i] - '0'
                                                                    : (hex[2 * i] | 32) - 'a' + 10;
      int lo = std::isdigit(static_cast<unsigned char>(hex[2 * i + 1]))
                   ? hex[2 * i + 1] - '0'
                   : (hex[2 * i + 1] | 32) - 'a' + 10;
      if (hi < 0 || hi > 15 || lo < 0 || lo > 15) return ErrorAt(pos, "bad hex digit");
      bytes[i] = static_cast<char>(hi * 16 + lo);
    }
    const int64_t width = lit.element_stride();
    if (*et == PrimitiveType::PRED && static_cast<int64_t>(bytes.size()) == (n + 7) / 8 &&
        static_cast<int64_t>(bytes.size()) != n) {
      for (int64_t i = 0; i < n; ++i) lit.SetBits(i, (bytes[i / 8] >> (i % 8)) & 1);
      return lit;
    }
    if (static_cast<int64_t>(bytes.size()) == width && n != 1) {
      for (int64_t i = 0; i < n; ++i)
        std::memcpy(lit.mutable_raw_data() + i * width, bytes.data(), width);
      return lit;
    }
    if (static_cast<int64_t>(bytes.size()) != width * n) {
      return ErrorAt(pos,
                     absl::StrCat("hex data has ", bytes.size(), " bytes, type needs ", width * n));
    }
    if (n > 0) std::memcpy(lit.mutable_raw_data(), bytes.data(), bytes.size());
    return lit;
  }
  if (splat) {
    if (items.size() != 1) return ErrorAt(pos, "bad splat");
    for (int64_t i = 0; i < n; ++i) {
      absl::Status s = SetDenseElement(lit, i, items[0], *et);
      if (!s.ok()) return ErrorAt(pos, s.message());
      if (i == 0 && n > 1) {
        // Copy the first element's bytes.
        const int64_t width = lit.element_stride();
        for (int64_t j = 1; j < n; ++j) {
          std::memcpy(lit.mutable_raw_data() + j * width, lit.mutable_raw_data(), width);
        }
        break;
      }
    }
    return lit;
  }
  if (shape != type.dims) {
    // [] for a scalar-free empty tensor is fine when the type has 0 elements.
    if (!(items.empty() && n == 0)) {
      return ErrorAt(pos, "dense literal shape does not match its type");
    }
  }
  if (static_cast<int64_t>(items.size()) != n) {
    return ErrorAt(pos, "dense literal shape does not match its type");
  }
  for (int64_t i = 0; i < n; ++i) {
    absl::Status s = SetDenseElement(lit, i, items[i], *et);
    if (!s.ok()) return ErrorAt(pos, s.message());
  }
  return lit;
}

absl::StatusOr<Attribute> Parser::ParseDense() {
  // After "dense".
  size_t pos = c_.pos();
  RETURN_IF_ERROR(c_.Expect("<"));
  std::vector<DenseItem> items;
  std::vector<int64_t> shape;
  bool splat = false;
  std::string hex;
  c_.SkipSpace();
  if (c_.PeekRaw() == '"') {
    ASSIGN_OR_RETURN(std::string s, ParseString());
    if (!absl::StartsWith(s, "0x")) return ErrorAt(pos, "string dense attributes are unsupported");
    hex = s.substr(2);
    if (hex.empty()) return ErrorAt(pos, "empty hex data");
  } else if (c_.PeekRaw() == '>') {
    // dense<> : an empty tensor.
  } else if (c_.PeekRaw() != '[') {
    splat = true;
    int leaf_depth = -1;
    RETURN_IF_ERROR(ParseDenseItems(items, shape, 0, leaf_depth));
  } else {
    int leaf_depth = -1;
    RETURN_IF_ERROR(ParseDenseItems(items, shape, 0, leaf_depth));
    if (leaf_depth == -1 && shape.size() > 1) shape.clear();  // [[]]: no elements
  }
  RETURN_IF_ERROR(c_.Expect(">"));
  RETURN_IF_ERROR(c_.Expect(":"));
  Attribute a;
  a.kind = Kind::kDense;
  ASSIGN_OR_RETURN(a.type, ParseType());
  ASSIGN_OR_RETURN(Literal lit, BuildDenseLiteral(pos, items, shape, splat, hex, a.type));
  a.literal = std::make_shared<const Literal>(std::move(lit));
  return a;
}

// ---------------------------------------------------------------- Operations

absl::StatusOr<Value*> Parser::ParseValueRef() {
  c_.SkipSpace();
  size_t pos = c_.pos();
  ASSIGN_OR_RETURN(std::string name, SuffixName('%'));
  int64_t index = 0;
  std::string base = name;
  if (c_.PeekRaw() == '#') {
    c_.set_pos(c_.pos() + 1);
    ASSIGN_OR_RETURN(index, c_.ParseInt64());
  }
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto found = it->find(base);
    if (found == it->end()) continue;
    if (index < 0 || index >= static_cast<int64_t>(found->second.size())) {
      return ErrorAt(pos, absl::StrCat("%", base, " has no result #", index));
    }
    return found->second[index];
  }
  return ErrorAt(pos, absl::StrCat("use of undefined value %", name));
}

absl::StatusOr<std::vector<Value*>> Parser::ParseValueList() {
  std::vector<Value*> values;
  if (c_.Peek() != '%') return values;
  while (true) {
    ASSIGN_OR_RETURN(Value * v, ParseValueRef());
    values.push_back(v);
    size_t save = c_.pos();
    if (!c_.TryConsume(",")) break;
    if (c_.Peek() != '%') {
      c_.set_pos(save);
      break;
    }
  }
  return values;
}

absl::Status Parser::SetResults(Operation& op, const std::vector<Type>& types,
                                int declared_results) {
  if (static_cast<int>(types.size()) != declared_results) {
    return absl::InvalidArgumentError(absl::StrCat("'", op.name, "' defines ", declared_results,
                                                   " results but its type has ", types.size()));
  }
  for (int i = 0; i < declared_results; ++i) {
    auto v = std::make_unique<Value>();
    v->type = types[i];
    v->defining_op = &op;
    v->result_index = i;
    op.results.push_back(std::move(v));
  }
  return absl::OkStatus();
}

// `: T`, `: T, U`, `: (A, B) -> R`, `: T -> R` (chlo). Results are the
// function type's results, else the last `declared_results` types listed.
absl::Status Parser::ParseTrailingTypes(Operation& op, int declared_results) {
  size_t pos = c_.pos();
  if (!c_.TryConsume(":")) {
    if (declared_results == 0) return absl::OkStatus();
    return Error("expected ':' and the result types");
  }
  std::vector<Type> types;
  do {
    ASSIGN_OR_RETURN(Type t, ParseType());
    types.push_back(std::move(t));
  } while (c_.TryConsume(","));
  std::vector<Type> results;
  if (c_.TryConsume("->")) {
    ASSIGN_OR_RETURN(results, ParseResultTypes());
  } else if (types.size() == 1 && types[0].kind == Type::Kind::kFunction) {
    results = types[0].results;
  } else {
    if (static_cast<int>(types.size()) < declared_results) {
      return ErrorAt(pos, absl::StrCat("'", op.name, "' defines ", declared_results,
                                       " results but lists ", types.size(), " types"));
    }
    results.assign(types.end() - declared_results, types.end());
    if (declared_results == 0) results.clear();
  }
  absl::Status s = SetResults(op, results, declared_results);
  if (!s.ok()) return ErrorAt(pos, s.message());
  return absl::OkStatus();
}

std::unique_ptr<Block> Parser::NewBlockWithArgs(const std::vector<Type>& types,
                                                const std::vector<std::string>& names) {
  auto block = std::make_unique<Block>();
  for (size_t i = 0; i < types.size(); ++i) {
    auto v = std::make_unique<Value>();
    v->type = types[i];
    v->name = i < names.size() ? names[i] : "";
    v->owner = block.get();
    v->arg_index = static_cast<int>(i);
    block->arguments.push_back(std::move(v));
  }
  return block;
}

absl::Status Parser::ParseBlockBody(Block* block) {
  // Operations until the closing '}' or the next block label.
  while (true) {
    char ch = c_.Peek();
    if (ch == '}' || ch == '^' || ch == '\0') return absl::OkStatus();
    RETURN_IF_ERROR(ParseOperation(block));
  }
}

absl::Status Parser::ParseRegion(Operation& op, std::vector<std::unique_ptr<Value>>* entry_args) {
  Nesting nesting(&depth_);
  if (nesting.too_deep()) return Error("nesting too deep");
  RETURN_IF_ERROR(c_.Expect("{"));
  auto region = std::make_unique<Region>();
  PushScope();
  bool first = true;
  while (!c_.TryConsume("}")) {
    if (c_.AtEnd()) {
      PopScope();
      return Error("expected '}' to close the region");
    }
    auto block = std::make_unique<Block>();
    block->parent = &op;
    if (c_.Peek() == '^') {
      ASSIGN_OR_RETURN(block->label, SuffixName('^'));
      if (c_.TryConsume("(")) {
        if (!c_.TryConsume(")")) {
          do {
            c_.SkipSpace();
            size_t pos = c_.pos();
            ASSIGN_OR_RETURN(std::string name, SuffixName('%'));
            RETURN_IF_ERROR(c_.Expect(":"));
            auto v = std::make_unique<Value>();
            ASSIGN_OR_RETURN(v->type, ParseType());
            RETURN_IF_ERROR(SkipLocation());
            v->name = name;
            v->owner = block.get();
            v->arg_index = static_cast<int>(block->arguments.size());
            if (scopes_.back().contains(name)) {
              return ErrorAt(pos, absl::StrCat("redefinition of %", name));
            }
            DefineValue(name, v.get());
            block->arguments.push_back(std::move(v));
          } while (c_.TryConsume(","));
          RETURN_IF_ERROR(c_.Expect(")"));
        }
      }
      RETURN_IF_ERROR(c_.Expect(":"));
    } else if (!first) {
      return Error("expected a block label");
    } else if (entry_args != nullptr) {
      for (auto& v : *entry_args) {
        v->owner = block.get();
        DefineValue(v->name, v.get());
        block->arguments.push_back(std::move(v));
      }
    }
    first = false;
    Block* raw = block.get();
    region->blocks.push_back(std::move(block));
    RETURN_IF_ERROR(ParseBlockBody(raw));
  }
  PopScope();
  op.regions.push_back(std::move(region));
  return absl::OkStatus();
}

absl::Status Parser::ParseOperation(Block* block) {
  Nesting nesting(&depth_);
  if (nesting.too_deep()) return Error("nesting too deep");
  c_.SkipSpace();
  auto op = std::make_unique<Operation>();
  const size_t start = c_.pos();
  op->loc.file = c_.filename();
  std::tie(op->loc.line, op->loc.column) = c_.LineColumn(start);
  // Result names: %a, %b:2 =
  std::vector<std::pair<std::string, int>> result_names;
  int declared = 0;
  if (c_.Peek() == '%') {
    do {
      ASSIGN_OR_RETURN(std::string name, SuffixName('%'));
      int count = 1;
      if (c_.PeekRaw() == ':' && c_.text().substr(c_.pos(), 2) != "::") {
        c_.set_pos(c_.pos() + 1);
        ASSIGN_OR_RETURN(int64_t n, c_.ParseInt64());
        if (n < 1 || n > 100000) return Error("bad result count");
        count = static_cast<int>(n);
      }
      result_names.emplace_back(name, count);
      declared += count;
    } while (c_.TryConsume(","));
    RETURN_IF_ERROR(c_.Expect("="));
  }
  c_.SkipSpace();
  if (c_.PeekRaw() == '"') {
    ASSIGN_OR_RETURN(op->name, ParseString());
    RETURN_IF_ERROR(ParseGenericOp(*op));
    RETURN_IF_ERROR(ParseTrailingTypes(*op, declared));
  } else {
    op->name = Ident();
    if (op->name.empty()) return Error("expected an operation");
    // Ops the func dialect lets be written unqualified.
    if (op->name == "return" || op->name == "call") op->name = "func." + op->name;
    absl::Status s = ParseCustomOp(*op, declared);
    if (s.ok()) s = SkipLocation();
    // Another dialect's custom syntax is read by the generic keyword rules;
    // stopping short of its end must name the op, not a confusing token.
    const char next = c_.Peek();
    if (s.ok() && next != '\0' && next != '%' && next != '"' && next != '}' && next != '^' &&
        next != '#' && next != '!' && next != '{' && !IsMlirIdentifierStart(next)) {
      s = Error(absl::StrCat("unexpected '", std::string(1, next), "'"));
    }
    if (!s.ok() && !KnownCustomSyntax(op->name)) {
      return absl::Status(s.code(), absl::StrCat(s.message(), " (the custom syntax of '", op->name,
                                                 "' is unsupported; write it in generic form)"));
    }
    RETURN_IF_ERROR(s);
  }
  RETURN_IF_ERROR(SkipLocation());
  CanonicalizeAttributes(*op);
  if (static_cast<int>(op->results.size()) != declared) {
    return ErrorAt(start, absl::StrCat("'", op->name, "' defines ", declared, " results, has ",
                                       op->results.size()));
  }
  int next = 0;
  for (auto& [name, count] : result_names) {
    if (scopes_.back().contains(name)) {
      return ErrorAt(start, absl::StrCat("redefinition of %", name));
    }
    for (int i = 0; i < count; ++i) {
      Value* v = op->results[next++].get();
      v->name = count == 1 ? name : absl::StrCat(name, "#", i);
      DefineValue(name, v);
    }
  }
  block->operations.push_back(std::move(op));
  return absl::OkStatus();
}

}  // namespace parser_internal

void CanonicalizeAttributes(Operation& op) {
  // Attributes at their default value, printed canonically; "" = any op.
  struct Default {
    const char* op;
    const char* attribute;
    const char* value;
  };
  static constexpr Default kDefaults[] = {
      {"stablehlo.custom_call", "api_version", "1 : i32"},
      {"stablehlo.send", "source_target_pairs", "dense<> : tensor<0xi64>"},
      {"stablehlo.recv", "source_target_pairs", "dense<> : tensor<0xi64>"},
      {"", "result_accuracy",
       "#stablehlo.result_accuracy<atol = 0.000000e+00, rtol = 0.000000e+00, ulps = 0, "
       "mode = #stablehlo.result_accuracy_mode<DEFAULT>>"},
  };
  for (const Default& d : kDefaults) {
    if (*d.op != '\0' && op.name != d.op) continue;
    std::erase_if(op.attributes, [&](const NamedAttribute& a) {
      return a.first == d.attribute && PrintAttribute(a.second) == d.value;
    });
  }
  // Dot dimension numbers print in a fixed field order.
  for (auto& a : op.attributes) {
    if (a.first != "dot_dimension_numbers" || a.second.fields.empty()) continue;
    static const char* kOrder[] = {"lhs_batching_dimensions", "rhs_batching_dimensions",
                                   "lhs_contracting_dimensions", "rhs_contracting_dimensions"};
    std::vector<NamedAttribute> sorted;
    for (const char* k : kOrder) {
      if (const Attribute* f = a.second.Field(k)) sorted.emplace_back(k, *f);
    }
    a.second.fields = std::move(sorted);
  }
}

namespace parser_internal {

absl::Status Parser::ParseGenericOp(Operation& op) {
  // "name"(operands) [successors] <{properties}> (regions) {attrs} : type
  RETURN_IF_ERROR(c_.Expect("("));
  ASSIGN_OR_RETURN(op.operands, ParseValueList());
  RETURN_IF_ERROR(c_.Expect(")"));
  if (c_.TryConsume("[")) {
    return Error("operations with successors are unsupported");
  }
  if (c_.TryConsume("<")) {
    ASSIGN_OR_RETURN(std::vector<NamedAttribute> props, ParseAttrDict());
    RETURN_IF_ERROR(c_.Expect(">"));
    for (auto& p : props) op.attributes.push_back(std::move(p));
  }
  if (c_.Peek() == '(') {
    c_.set_pos(c_.pos() + 1);
    do {
      RETURN_IF_ERROR(ParseRegion(op, nullptr));
    } while (c_.TryConsume(","));
    RETURN_IF_ERROR(c_.Expect(")"));
  }
  if (c_.Peek() == '{') {
    ASSIGN_OR_RETURN(std::vector<NamedAttribute> attrs, ParseAttrDict());
    for (auto& p : attrs) op.attributes.push_back(std::move(p));
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseFunc(Operation& op) {
  // func.func [visibility] @name(%a: T {attrs}, ...) [-> results] [attributes {..}] [{ body }]
  c_.SkipSpace();
  if (c_.PeekRaw() != '@') {
    std::string vis = Ident();
    if (vis != "public" && vis != "private" && vis != "nested") {
      return Error("expected a function name");
    }
    op.SetAttr("sym_visibility", Attribute::String(vis));
  }
  ASSIGN_OR_RETURN(std::string name, SuffixName('@'));
  op.attributes.insert(op.attributes.begin(), {"sym_name", Attribute::String(name)});
  RETURN_IF_ERROR(c_.Expect("("));
  std::vector<std::unique_ptr<Value>> args;
  Type fn;
  fn.kind = Type::Kind::kFunction;
  Attribute arg_attrs, res_attrs;
  arg_attrs.kind = res_attrs.kind = Kind::kArray;
  bool any_arg_attr = false, any_res_attr = false;
  if (!c_.TryConsume(")")) {
    do {
      auto v = std::make_unique<Value>();
      c_.SkipSpace();
      if (c_.PeekRaw() == '%') {
        ASSIGN_OR_RETURN(v->name, SuffixName('%'));
        RETURN_IF_ERROR(c_.Expect(":"));
      }
      ASSIGN_OR_RETURN(v->type, ParseType());
      Attribute dict;
      dict.kind = Kind::kDict;
      if (c_.Peek() == '{') {
        ASSIGN_OR_RETURN(dict.fields, ParseAttrDict());
        any_arg_attr = any_arg_attr || !dict.fields.empty();
      }
      RETURN_IF_ERROR(SkipLocation());
      arg_attrs.elements.push_back(std::move(dict));
      fn.elements.push_back(v->type);
      v->arg_index = static_cast<int>(args.size());
      args.push_back(std::move(v));
    } while (c_.TryConsume(","));
    RETURN_IF_ERROR(c_.Expect(")"));
  }
  if (c_.TryConsume("->")) {
    auto one_result = [&](bool in_parens) -> absl::Status {
      ASSIGN_OR_RETURN(Type t, ParseType());
      fn.results.push_back(std::move(t));
      Attribute dict;
      dict.kind = Kind::kDict;
      if (in_parens && c_.Peek() == '{') {
        ASSIGN_OR_RETURN(dict.fields, ParseAttrDict());
        any_res_attr = any_res_attr || !dict.fields.empty();
      }
      res_attrs.elements.push_back(std::move(dict));
      return absl::OkStatus();
    };
    if (c_.TryConsume("(")) {
      if (!c_.TryConsume(")")) {
        do {
          RETURN_IF_ERROR(one_result(true));
        } while (c_.TryConsume(","));
        RETURN_IF_ERROR(c_.Expect(")"));
      }
    } else {
      RETURN_IF_ERROR(one_result(false));
    }
  }
  Attribute fn_attr;
  fn_attr.kind = Kind::kType;
  fn_attr.type = fn;
  op.SetAttr("function_type", fn_attr);
  if (any_arg_attr) op.SetAttr("arg_attrs", arg_attrs);
  if (any_res_attr) op.SetAttr("res_attrs", res_attrs);
  if (TryWord("attributes")) {
    ASSIGN_OR_RETURN(std::vector<NamedAttribute> attrs, ParseAttrDict());
    for (auto& a : attrs) op.SetAttr(a.first, std::move(a.second));
  }
  if (c_.Peek() == '{') {
    // Function bodies cannot see enclosing values.
    auto saved = std::move(scopes_);
    scopes_.clear();
    PushScope();
    absl::Status s = ParseRegion(op, &args);
    scopes_ = std::move(saved);
    RETURN_IF_ERROR(s);
  }
  return absl::OkStatus();
}

// Canonical property names for the keyword spellings of the pretty forms.
absl::Status Parser::NormalizeKeywords(Operation& op, std::vector<NamedAttribute> keywords,
                                       size_t pos) {
  auto ints_of = [&](const Attribute& a, std::vector<int64_t>& out) -> absl::Status {
    if (a.kind != Kind::kArray) return ErrorAt(pos, "expected a list of integers");
    for (const Attribute& e : a.elements) {
      if (e.kind != Kind::kInteger) return ErrorAt(pos, "expected a list of integers");
      out.push_back(e.int_value);
    }
    return absl::OkStatus();
  };
  auto i64_array = [&](const Attribute& a) -> absl::StatusOr<Attribute> {
    std::vector<int64_t> v;
    RETURN_IF_ERROR(ints_of(a, v));
    return Attribute::I64Array(std::move(v));
  };
  auto int_attr = [&](const Attribute& a, const char* type) -> absl::StatusOr<Attribute> {
    if (a.kind != Kind::kInteger) return ErrorAt(pos, "expected an integer");
    return Attribute::Int(a.int_value, type);
  };
  const std::string short_name = op.name.substr(op.name.find('.') + 1);
  for (auto& [key, value] : keywords) {
    std::string name = key;
    Attribute out;
    if (key == "dims" || key == "sizes" || key == "low" || key == "high" || key == "interior" ||
        key == "length" || key == "broadcast_sizes") {
      static const std::map<std::pair<std::string, std::string>, std::string> kRenames = {
          {{"broadcast_in_dim", "dims"}, "broadcast_dimensions"},
          {{"dynamic_broadcast_in_dim", "dims"}, "broadcast_dimensions"},
          {{"transpose", "dims"}, "permutation"},
          {{"reverse", "dims"}, "dimensions"},
          {{"dynamic_slice", "sizes"}, "slice_sizes"},
          {{"broadcast", "sizes"}, "broadcast_sizes"},
          {{"pad", "low"}, "edge_padding_low"},
          {{"pad", "high"}, "edge_padding_high"},
          {{"pad", "interior"}, "interior_padding"},
          {{"fft", "length"}, "fft_length"},
      };
      auto it = kRenames.find({short_name, key});
      if (it != kRenames.end()) name = it->second;
      ASSIGN_OR_RETURN(out, i64_array(value));
    } else if (key == "dim") {
      name = short_name == "iota" || short_name == "dynamic_iota" ? "iota_dimension" : "dimension";
      ASSIGN_OR_RETURN(out, int_attr(value, "i64"));
    } else if (key == "format" && value.kind == Kind::kOpaque) {
      // e5m10 -> exponent_bits = 5, mantissa_bits = 10
      int64_t e = 0, m = 0;
      std::vector<std::string> parts = absl::StrSplit(value.text, 'm');
      if (parts.size() != 2 || parts[0].size() < 2 || parts[0][0] != 'e' ||
          !absl::SimpleAtoi(parts[0].substr(1), &e) || !absl::SimpleAtoi(parts[1], &m)) {
        return ErrorAt(pos, absl::StrCat("bad format '", value.text, "'"));
      }
      op.SetAttr("exponent_bits", Attribute::Int(e, "i32"));
      op.SetAttr("mantissa_bits", Attribute::Int(m, "i32"));
      continue;
    } else if (key == "type" && short_name == "fft" && value.kind == Kind::kOpaque) {
      name = "fft_type";
      out = Attribute::Enum("stablehlo.fft_type", value.text);
    } else if (key == "algorithm" && short_name == "rng_bit_generator" &&
               value.kind == Kind::kOpaque) {
      name = "rng_algorithm";
      out = Attribute::Enum("stablehlo.rng_algorithm", value.text);
    } else if (key == "batching_dims" || key == "contracting_dims") {
      if (value.kind != Kind::kArray || value.raw != "x") {
        return ErrorAt(pos, absl::StrCat("expected '", key, " = [..] x [..]'"));
      }
      Attribute* dot = nullptr;
      for (auto& a : op.attributes) {
        if (a.first == "dot_dimension_numbers") dot = &a.second;
      }
      if (dot == nullptr) {
        Attribute d;
        d.kind = Kind::kStruct;
        d.name = "stablehlo.dot";
        op.attributes.emplace_back("dot_dimension_numbers", d);
        dot = &op.attributes.back().second;
      }
      const std::string what = key == "batching_dims" ? "batching" : "contracting";
      for (int side = 0; side < 2; ++side) {
        std::vector<int64_t> v;
        RETURN_IF_ERROR(ints_of(value.elements[side], v));
        Attribute list;
        list.kind = Kind::kArray;
        for (int64_t x : v) list.elements.push_back(Attribute::Int(x));
        dot->fields.emplace_back(absl::StrCat(side == 0 ? "lhs_" : "rhs_", what, "_dimensions"),
                                 std::move(list));
      }
      continue;
    } else if (key == "precision") {
      name = "precision_config";
      out.kind = Kind::kArray;
      if (value.kind != Kind::kArray) return ErrorAt(pos, "expected a precision list");
      for (const Attribute& e : value.elements) {
        if (e.kind != Kind::kOpaque) return ErrorAt(pos, "expected a precision name");
        out.elements.push_back(Attribute::Enum("stablehlo.precision", e.text));
      }
    } else if (key == "algorithm" && value.kind == Kind::kStruct) {
      out = value;
    } else if (key == "tolerance" && value.kind == Kind::kFloat) {
      out = value;
      out.type = Type::Scalar("f64");
    } else if (key == "k") {
      ASSIGN_OR_RETURN(out, int_attr(value, "i64"));
    } else {
      out = value;
    }
    op.SetAttr(name, std::move(out));
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseDefault(Operation& op, int declared_results) {
  // op %a, %b, key = value, ... {attrs} : types
  size_t pos = c_.pos();
  std::vector<NamedAttribute> keywords;
  // arith.constant reads like stablehlo.constant: `[{attrs}] value : type`.
  const bool constant_like = op.name == "stablehlo.constant" || op.name == "arith.constant";
  const bool has_parens = c_.Peek() == '(' && !constant_like;
  if (has_parens) c_.set_pos(c_.pos() + 1);
  if (constant_like) c_.TryConsume("()");
  while (true) {
    char ch = c_.Peek();
    if (ch == '%') {
      ASSIGN_OR_RETURN(Value * v, ParseValueRef());
      op.operands.push_back(v);
    } else if (IsMlirIdentifierStart(ch) && !constant_like) {
      size_t save = c_.pos();
      std::string key = Ident();
      if (key == "dense" || key == "array") {
        c_.set_pos(save);
        ASSIGN_OR_RETURN(Attribute a, ParseAttribute());
        op.SetAttr("value", std::move(a));
      } else if (c_.TryConsume("=")) {
        ASSIGN_OR_RETURN(Attribute v, ParseKeywordValue());
        keywords.emplace_back(std::move(key), std::move(v));
      } else {
        c_.set_pos(save);
        break;
      }
    } else if (ch == '@' && op.name == "stablehlo.custom_call") {
      ASSIGN_OR_RETURN(std::string target, SuffixName('@'));
      op.SetAttr("call_target_name", Attribute::String(target));
      RETURN_IF_ERROR(c_.Expect("("));
      ASSIGN_OR_RETURN(op.operands, ParseValueList());
      RETURN_IF_ERROR(c_.Expect(")"));
      break;
    } else if (ch == '"' && op.name == "stablehlo.composite") {
      ASSIGN_OR_RETURN(std::string name, ParseString());
      op.SetAttr("name", Attribute::String(name));
      continue;
    } else if (constant_like && ch != ':' && ch != '{') {
      ASSIGN_OR_RETURN(Attribute a, ParseAttribute());
      op.SetAttr("value", std::move(a));
      break;
    } else {
      break;
    }
    if (!c_.TryConsume(",")) break;
  }
  if (has_parens) RETURN_IF_ERROR(c_.Expect(")"));
  if (c_.Peek() == '{') {
    ASSIGN_OR_RETURN(std::vector<NamedAttribute> attrs, ParseAttrDict());
    for (auto& a : attrs) op.SetAttr(a.first, std::move(a.second));
    if (constant_like && !op.attr("value") && c_.Peek() != ':') {
      ASSIGN_OR_RETURN(Attribute a, ParseAttribute());
      op.SetAttr("value", std::move(a));
    }
  }
  RETURN_IF_ERROR(NormalizeKeywords(op, std::move(keywords), pos));
  if (constant_like) {
    const Attribute* value = op.attr("value");
    if (value == nullptr) return ErrorAt(pos, "expected the constant's value");
    if (declared_results != 1) return ErrorAt(pos, "a constant has one result");
    if (c_.Peek() == ':') return ParseTrailingTypes(op, declared_results);
    return SetResults(op, {value->type}, declared_results);
  }
  RETURN_IF_ERROR(ParseTrailingTypes(op, declared_results));
  // Trailing attribute dictionary (check.expect_almost_eq_const ... : T {tolerance = ..}).
  if (c_.Peek() == '{' && op.regions.empty()) {
    size_t save = c_.pos();
    absl::StatusOr<std::vector<NamedAttribute>> attrs = ParseAttrDict();
    if (attrs.ok()) {
      for (auto& a : *attrs) op.SetAttr(a.first, std::move(a.second));
    } else {
      c_.set_pos(save);
    }
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseCompare(Operation& op, int declared_results) {
  // compare DIR, %a, %b [, TYPE] : types
  std::string dir = Ident();
  if (dir.empty()) return Error("expected a comparison direction");
  op.SetAttr("comparison_direction", Attribute::Enum("stablehlo.comparison_direction", dir));
  RETURN_IF_ERROR(c_.Expect(","));
  ASSIGN_OR_RETURN(op.operands, ParseValueList());
  if (op.operands.size() != 2) return Error("compare takes two operands");
  if (c_.TryConsume(",")) {
    std::string type = Ident();
    if (type.empty()) return Error("expected a comparison type");
    op.SetAttr("compare_type", Attribute::Enum("stablehlo.comparison_type", type));
  }
  if (c_.Peek() == '{') {
    ASSIGN_OR_RETURN(std::vector<NamedAttribute> attrs, ParseAttrDict());
    for (auto& a : attrs) op.SetAttr(a.first, std::move(a.second));
  }
  return ParseTrailingTypes(op, declared_results);
}

absl::Status Parser::ParseSlice(Operation& op, int declared_results) {
  if (op.name == "stablehlo.get_tuple_element") {
    ASSIGN_OR_RETURN(Value * v, ParseValueRef());
    op.operands.push_back(v);
    RETURN_IF_ERROR(c_.Expect("["));
    ASSIGN_OR_RETURN(int64_t index, c_.ParseInt64());
    RETURN_IF_ERROR(c_.Expect("]"));
    op.SetAttr("index", Attribute::Int(index, "i32"));
  } else {
    // slice %x [a:b:c, ...]
    ASSIGN_OR_RETURN(Value * v, ParseValueRef());
    op.operands.push_back(v);
    RETURN_IF_ERROR(c_.Expect("["));
    std::vector<int64_t> start, limit, stride;
    if (!c_.TryConsume("]")) {
      do {
        ASSIGN_OR_RETURN(int64_t s, c_.ParseInt64());
        RETURN_IF_ERROR(c_.Expect(":"));
        ASSIGN_OR_RETURN(int64_t l, c_.ParseInt64());
        int64_t st = 1;
        if (c_.TryConsume(":")) {
          ASSIGN_OR_RETURN(st, c_.ParseInt64());
        }
        start.push_back(s);
        limit.push_back(l);
        stride.push_back(st);
      } while (c_.TryConsume(","));
      RETURN_IF_ERROR(c_.Expect("]"));
    }
    op.SetAttr("start_indices", Attribute::I64Array(start));
    op.SetAttr("limit_indices", Attribute::I64Array(limit));
    op.SetAttr("strides", Attribute::I64Array(stride));
  }
  if (c_.Peek() == '{') {
    ASSIGN_OR_RETURN(std::vector<NamedAttribute> attrs, ParseAttrDict());
    for (auto& a : attrs) op.SetAttr(a.first, std::move(a.second));
  }
  return ParseTrailingTypes(op, declared_results);
}

absl::Status Parser::ParseReduce(Operation& op, int declared_results) {
  // reduce(%a init: %b), ... [applies OP] across dimensions = [..] [{attrs}] : type
  //   [reducer(%x: T, %y: T) (%x2: T, %y2: T) { body }]
  std::vector<Value*> inputs, inits;
  do {
    RETURN_IF_ERROR(c_.Expect("("));
    ASSIGN_OR_RETURN(Value * in, ParseValueRef());
    if (!TryWord("init")) return Error("expected 'init:'");
    RETURN_IF_ERROR(c_.Expect(":"));
    ASSIGN_OR_RETURN(Value * init, ParseValueRef());
    RETURN_IF_ERROR(c_.Expect(")"));
    inputs.push_back(in);
    inits.push_back(init);
  } while (c_.TryConsume(","));
  op.operands = inputs;
  op.operands.insert(op.operands.end(), inits.begin(), inits.end());
  std::string applies;
  if (TryWord("applies")) {
    applies = Ident();
    if (applies.empty()) return Error("expected the reducer op");
  }
  if (!TryWord("across") || !TryWord("dimensions")) return Error("expected 'across dimensions'");
  RETURN_IF_ERROR(c_.Expect("="));
  size_t pos = c_.pos();
  ASSIGN_OR_RETURN(Attribute dims, ParseKeywordValue());
  if (dims.kind != Kind::kArray) return ErrorAt(pos, "expected a list of dimensions");
  std::vector<int64_t> d;
  for (const Attribute& e : dims.elements) {
    if (e.kind != Kind::kInteger) return ErrorAt(pos, "expected integers");
    d.push_back(e.int_value);
  }
  op.SetAttr("dimensions", Attribute::I64Array(d));
  if (c_.Peek() == '{') {
    ASSIGN_OR_RETURN(std::vector<NamedAttribute> attrs, ParseAttrDict());
    for (auto& a : attrs) op.SetAttr(a.first, std::move(a.second));
  }
  RETURN_IF_ERROR(ParseTrailingTypes(op, declared_results));
  const size_t n = inputs.size();
  if (!applies.empty()) {
    // Body: %r = applies(%lhs_i, %rhs_i) on rank-0 tensors of the init types.
    std::vector<Type> arg_types;
    for (int side = 0; side < 2; ++side) {
      for (Value* init : inits) arg_types.push_back(init->type);
    }
    auto region = std::make_unique<Region>();
    auto block = NewBlockWithArgs(arg_types, {});
    block->parent = &op;
    for (size_t i = 0; i < arg_types.size(); ++i)
      block->arguments[i]->name = absl::StrCat("arg", i);
    if (n != 1) return Error("'applies' needs a single input");
    auto body = std::make_unique<Operation>();
    body->name = applies;
    body->loc = op.loc;
    body->operands = {block->arguments[0].get(), block->arguments[1].get()};
    RETURN_IF_ERROR(SetResults(*body, {arg_types[0]}, 1));
    auto ret = std::make_unique<Operation>();
    ret->name = "stablehlo.return";
    ret->loc = op.loc;
    ret->operands = {body->results[0].get()};
    block->operations.push_back(std::move(body));
    block->operations.push_back(std::move(ret));
    region->blocks.push_back(std::move(block));
    op.regions.push_back(std::move(region));
    return absl::OkStatus();
  }
  if (!TryWord("reducer")) return Error("expected 'reducer' or 'applies'");
  std::vector<std::unique_ptr<Value>> lhs, rhs;
  for (size_t i = 0; i < n; ++i) {
    RETURN_IF_ERROR(c_.Expect("("));
    for (int side = 0; side < 2; ++side) {
      if (side == 1) RETURN_IF_ERROR(c_.Expect(","));
      auto v = std::make_unique<Value>();
      ASSIGN_OR_RETURN(v->name, SuffixName('%'));
      RETURN_IF_ERROR(c_.Expect(":"));
      ASSIGN_OR_RETURN(v->type, ParseType());
      (side == 0 ? lhs : rhs).push_back(std::move(v));
    }
    RETURN_IF_ERROR(c_.Expect(")"));
  }
  std::vector<std::unique_ptr<Value>> args;
  for (auto& v : lhs) args.push_back(std::move(v));
  for (auto& v : rhs) args.push_back(std::move(v));
  for (size_t i = 0; i < args.size(); ++i) args[i]->arg_index = static_cast<int>(i);
  return ParseRegion(op, &args);
}

absl::Status Parser::ParseInitList(Operation& op, std::vector<std::string>& names) {
  do {
    ASSIGN_OR_RETURN(std::string name, SuffixName('%'));
    RETURN_IF_ERROR(c_.Expect("="));
    ASSIGN_OR_RETURN(Value * init, ParseValueRef());
    names.push_back(name);
    op.operands.push_back(init);
  } while (c_.TryConsume(","));
  return c_.Expect(")");
}

absl::Status Parser::ParseWhile(Operation& op, int declared_results) {
  // while(%iter = %init, ...) : types [attributes {..}] cond { } do { }
  RETURN_IF_ERROR(c_.Expect("("));
  std::vector<std::string> names;
  if (!c_.TryConsume(")")) {
    RETURN_IF_ERROR(ParseInitList(op, names));
  }
  std::vector<Type> types;
  if (c_.TryConsume(":")) {
    do {
      ASSIGN_OR_RETURN(Type t, ParseType());
      types.push_back(std::move(t));
    } while (c_.TryConsume(","));
  }
  if (types.size() != op.operands.size()) return Error("while lists a type per operand");
  RETURN_IF_ERROR(SetResults(op, types, declared_results));
  if (TryWord("attributes")) {
    ASSIGN_OR_RETURN(std::vector<NamedAttribute> attrs, ParseAttrDict());
    for (auto& a : attrs) op.SetAttr(a.first, std::move(a.second));
  }
  for (const char* word : {"cond", "do"}) {
    if (!TryWord(word)) return Error(absl::StrCat("expected '", word, "'"));
    std::vector<std::unique_ptr<Value>> args;
    for (size_t i = 0; i < types.size(); ++i) {
      auto v = std::make_unique<Value>();
      v->type = types[i];
      v->name = names[i];
      v->arg_index = static_cast<int>(i);
      args.push_back(std::move(v));
    }
    RETURN_IF_ERROR(ParseRegion(op, &args));
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseConvolution(Operation& op, int declared_results) {
  // convolution(%a, %b) dim_numbers = [..]x[..]->[..], window = {..} {attrs} : type
  RETURN_IF_ERROR(c_.Expect("("));
  ASSIGN_OR_RETURN(op.operands, ParseValueList());
  RETURN_IF_ERROR(c_.Expect(")"));
  if (!TryWord("dim_numbers")) return Error("expected 'dim_numbers'");
  RETURN_IF_ERROR(c_.Expect("="));
  c_.SkipSpace();
  size_t b = c_.pos();
  for (int i = 0; i < 3; ++i) {
    if (c_.Peek() != '[') return Error("expected '['");
    RETURN_IF_ERROR(SkipBalanced());
    if (i == 0) RETURN_IF_ERROR(c_.Expect("x"));
    if (i == 1) RETURN_IF_ERROR(c_.Expect("->"));
  }
  Attribute dn;
  dn.kind = Kind::kStruct;
  dn.name = "stablehlo.conv";
  dn.raw = std::string(c_.text().substr(b, c_.pos() - b));
  op.SetAttr("dimension_numbers", std::move(dn));
  if (c_.TryConsume(",")) {
    if (!TryWord("window")) return Error("expected 'window'");
    RETURN_IF_ERROR(c_.Expect("="));
    size_t pos = c_.pos();
    ASSIGN_OR_RETURN(Attribute window, ParseKeywordValue());
    if (window.kind != Kind::kDict) return ErrorAt(pos, "expected '{' after window =");
    for (auto& [key, value] : window.fields) {
      std::vector<int64_t> v;
      bool is_bool = key == "reverse";
      for (const Attribute& e : value.elements) {
        if (e.kind == Kind::kArray) {  // pad = [[l, h], ...]
          for (const Attribute& x : e.elements) {
            if (x.kind != Kind::kInteger) return ErrorAt(pos, "bad padding");
            v.push_back(x.int_value);
          }
        } else if (e.kind == Kind::kInteger) {
          v.push_back(e.int_value);
        } else if (e.kind == Kind::kBool || (e.kind == Kind::kOpaque && is_bool)) {
          v.push_back(e.kind == Kind::kBool ? e.bool_value : e.text == "true");
        } else {
          return ErrorAt(pos, absl::StrCat("bad window field ", key));
        }
      }
      if (key == "stride") {
        op.SetAttr("window_strides", Attribute::I64Array(v));
      } else if (key == "pad") {
        if (v.size() % 2 != 0) return ErrorAt(pos, "padding needs pairs");
        Literal lit(Shape::Array(PrimitiveType::S64, {static_cast<int64_t>(v.size() / 2), 2}));
        for (size_t i = 0; i < v.size(); ++i) lit.SetInt(i, v[i]);
        Attribute pad;
        pad.kind = Kind::kDense;
        pad.type = Type::Tensor({static_cast<int64_t>(v.size() / 2), 2}, "i64");
        pad.literal = std::make_shared<const Literal>(std::move(lit));
        op.SetAttr("padding", std::move(pad));
      } else if (key == "lhs_dilate") {
        op.SetAttr("lhs_dilation", Attribute::I64Array(v));
      } else if (key == "rhs_dilate") {
        op.SetAttr("rhs_dilation", Attribute::I64Array(v));
      } else if (key == "reverse") {
        op.SetAttr("window_reversal", Attribute::BoolArray(std::vector<bool>(v.begin(), v.end())));
      } else {
        return ErrorAt(pos, absl::StrCat("unknown window field '", key, "'"));
      }
    }
  }
  if (c_.Peek() == '{') {
    ASSIGN_OR_RETURN(std::vector<NamedAttribute> attrs, ParseAttrDict());
    for (auto& a : attrs) op.SetAttr(a.first, std::move(a.second));
  }
  return ParseTrailingTypes(op, declared_results);
}

absl::Status Parser::ParseScan(Operation& op, int declared_results) {
  // chlo.scan(%inputs) inits(%inits) dimension=N [attributes {..}] { region } : type
  RETURN_IF_ERROR(c_.Expect("("));
  ASSIGN_OR_RETURN(std::vector<Value*> inputs, ParseValueList());
  RETURN_IF_ERROR(c_.Expect(")"));
  if (!TryWord("inits")) return Error("expected 'inits'");
  RETURN_IF_ERROR(c_.Expect("("));
  ASSIGN_OR_RETURN(std::vector<Value*> inits, ParseValueList());
  RETURN_IF_ERROR(c_.Expect(")"));
  op.operands = inputs;
  op.operands.insert(op.operands.end(), inits.begin(), inits.end());
  op.SetAttr("num_inputs", Attribute::Int(static_cast<int64_t>(inputs.size())));
  if (!TryWord("dimension")) return Error("expected 'dimension'");
  RETURN_IF_ERROR(c_.Expect("="));
  ASSIGN_OR_RETURN(int64_t dim, c_.ParseInt64());
  op.SetAttr("dimension", Attribute::Int(dim));
  if (TryWord("attributes")) {
    ASSIGN_OR_RETURN(std::vector<NamedAttribute> attrs, ParseAttrDict());
    for (auto& a : attrs) op.SetAttr(a.first, std::move(a.second));
  }
  RETURN_IF_ERROR(ParseRegion(op, nullptr));
  return ParseTrailingTypes(op, declared_results);
}

absl::Status Parser::ParseScfFor(Operation& op, int declared_results) {
  // scf.for %iv = %lb to %ub step %step [iter_args(%a = %init, ...) -> (types)] [: T] { body }
  // Generic form: operands (lb, ub, step, inits...), entry block (iv, iter args...).
  ASSIGN_OR_RETURN(std::string iv, SuffixName('%'));
  RETURN_IF_ERROR(c_.Expect("="));
  ASSIGN_OR_RETURN(Value * lb, ParseValueRef());
  if (!TryWord("to")) return Error("expected 'to'");
  ASSIGN_OR_RETURN(Value * ub, ParseValueRef());
  if (!TryWord("step")) return Error("expected 'step'");
  ASSIGN_OR_RETURN(Value * step, ParseValueRef());
  op.operands = {lb, ub, step};
  std::vector<std::string> names = {iv};
  std::vector<Type> results;
  if (TryWord("iter_args")) {
    RETURN_IF_ERROR(c_.Expect("("));
    RETURN_IF_ERROR(ParseInitList(op, names));
    RETURN_IF_ERROR(c_.Expect("->"));
    ASSIGN_OR_RETURN(results, ParseResultTypes());
  }
  if (results.size() + 3 != op.operands.size()) {
    return Error("scf.for lists a result type per iter_arg");
  }
  Type iv_type = lb->type;  // index unless `: T` says otherwise
  if (c_.TryConsume(":")) {
    ASSIGN_OR_RETURN(iv_type, ParseType());
  }
  RETURN_IF_ERROR(SetResults(op, results, declared_results));
  std::vector<std::unique_ptr<Value>> args;
  for (size_t i = 0; i < names.size(); ++i) {
    auto v = std::make_unique<Value>();
    v->type = i == 0 ? iv_type : results[i - 1];
    v->name = names[i];
    v->arg_index = static_cast<int>(i);
    args.push_back(std::move(v));
  }
  RETURN_IF_ERROR(ParseRegion(op, &args));
  if (TryWord("attributes")) {
    ASSIGN_OR_RETURN(std::vector<NamedAttribute> attrs, ParseAttrDict());
    for (auto& a : attrs) op.SetAttr(a.first, std::move(a.second));
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseTensorElementOp(Operation& op, int declared_results) {
  // tensor.insert %scalar into %dest[%i, ...] : T      (result: T)
  // tensor.extract %tensor[%i, ...] : T                (result: T's element type)
  const bool insert = op.name == "tensor.insert";
  ASSIGN_OR_RETURN(Value * first, ParseValueRef());
  op.operands.push_back(first);
  if (insert) {
    if (!TryWord("into")) return Error("expected 'into'");
    ASSIGN_OR_RETURN(Value * dest, ParseValueRef());
    op.operands.push_back(dest);
  }
  RETURN_IF_ERROR(c_.Expect("["));
  ASSIGN_OR_RETURN(std::vector<Value*> indices, ParseValueList());
  RETURN_IF_ERROR(c_.Expect("]"));
  op.operands.insert(op.operands.end(), indices.begin(), indices.end());
  if (c_.Peek() == '{') {
    ASSIGN_OR_RETURN(std::vector<NamedAttribute> attrs, ParseAttrDict());
    for (auto& a : attrs) op.SetAttr(a.first, std::move(a.second));
  }
  RETURN_IF_ERROR(c_.Expect(":"));
  size_t pos = c_.pos();
  ASSIGN_OR_RETURN(Type t, ParseType());
  if (t.kind != Type::Kind::kTensor) return ErrorAt(pos, "expected a tensor type");
  absl::Status s = SetResults(op, {insert ? t : Type::Scalar(t.element)}, declared_results);
  if (!s.ok()) return ErrorAt(pos, s.message());
  return absl::OkStatus();
}

absl::Status Parser::ParseCustomOp(Operation& op, int declared_results) {
  const std::string& n = op.name;
  if (n == "func.func") {
    if (declared_results != 0) return Error("func.func has no results");
    return ParseFunc(op);
  }
  if (n == "module" || n == "builtin.module") {
    op.name = "builtin.module";
    c_.SkipSpace();
    if (c_.PeekRaw() == '@') {
      ASSIGN_OR_RETURN(std::string name, SuffixName('@'));
      op.SetAttr("sym_name", Attribute::String(name));
    }
    if (TryWord("attributes")) {
      ASSIGN_OR_RETURN(std::vector<NamedAttribute> attrs, ParseAttrDict());
      for (auto& a : attrs) op.SetAttr(a.first, std::move(a.second));
    }
    auto saved = std::move(scopes_);
    scopes_.clear();
    PushScope();
    absl::Status s = ParseRegion(op, nullptr);
    scopes_ = std::move(saved);
    return s;
  }
  if (n == "func.call") {
    ASSIGN_OR_RETURN(std::string callee, SuffixName('@'));
    op.SetAttr("callee", [&] {
      Attribute a;
      a.kind = Kind::kSymbol;
      a.text = callee;
      return a;
    }());
    RETURN_IF_ERROR(c_.Expect("("));
    ASSIGN_OR_RETURN(op.operands, ParseValueList());
    RETURN_IF_ERROR(c_.Expect(")"));
    if (c_.Peek() == '{') {
      ASSIGN_OR_RETURN(std::vector<NamedAttribute> attrs, ParseAttrDict());
      for (auto& a : attrs) op.SetAttr(a.first, std::move(a.second));
    }
    return ParseTrailingTypes(op, declared_results);
  }
  if (n == "stablehlo.reduce") return ParseReduce(op, declared_results);
  if (n == "stablehlo.while") return ParseWhile(op, declared_results);
  if (n == "stablehlo.convolution") return ParseConvolution(op, declared_results);
  if (n == "stablehlo.compare") return ParseCompare(op, declared_results);
  if (n == "stablehlo.slice" || n == "stablehlo.get_tuple_element") {
    return ParseSlice(op, declared_results);
  }
  if (n == "chlo.scan") return ParseScan(op, declared_results);
  if (absl::StartsWith(n, "sdy.")) return ParseSdyOp(op, declared_results);
  if (n == "scf.for") return ParseScfFor(op, declared_results);
  if (n == "tensor.insert" || n == "tensor.extract") {
    return ParseTensorElementOp(op, declared_results);
  }
  return ParseDefault(op, declared_results);
}

absl::StatusOr<OwningOp> Parser::ParseFile() {
  auto module = std::make_unique<Operation>();
  module->name = "builtin.module";
  auto region = std::make_unique<Region>();
  auto block = std::make_unique<Block>();
  block->parent = module.get();
  PushScope();
  while (!c_.AtEnd()) {
    char ch = c_.Peek();
    if (ch == '#' || ch == '!') {
      // Alias definitions: #name = attr, !name = type.
      ASSIGN_OR_RETURN(std::string name, SuffixName(ch));
      RETURN_IF_ERROR(c_.Expect("="));
      if (ch == '#') {
        if (PeekIdent("loc")) {
          Ident();
          RETURN_IF_ERROR(SkipBalanced());
          attribute_aliases_[name] = Attribute();
          continue;
        }
        ASSIGN_OR_RETURN(Attribute a, ParseAttribute());
        attribute_aliases_[name] = std::move(a);
      } else {
        ASSIGN_OR_RETURN(Type t, ParseType());
        type_aliases_[name] = std::move(t);
      }
      continue;
    }
    if (ch == '{' && c_.text().substr(c_.pos(), 3) == "{-#") {
      // File metadata: {-# dialect_resources: {...} #-}
      size_t end = c_.text().find("#-}", c_.pos());
      if (end == absl::string_view::npos) return Error("unterminated {-# ... #-}");
      c_.set_pos(end + 3);
      continue;
    }
    RETURN_IF_ERROR(ParseOperation(block.get()));
  }
  // A single top-level module is the program; otherwise wrap the ops.
  if (block->operations.size() == 1 && block->operations[0]->name == "builtin.module") {
    OwningOp only = std::move(block->operations[0]);
    return only;
  }
  for (const auto& op : block->operations) {
    if (op->name == "builtin.module") {
      return absl::InvalidArgumentError(
          absl::StrCat(op->loc.ToString(), ": a module must be the only top-level operation"));
    }
  }
  region->blocks.push_back(std::move(block));
  module->regions.push_back(std::move(region));
  return module;
}

absl::StatusOr<Attribute> Parser::ParseAttributeOnly() {
  ASSIGN_OR_RETURN(Attribute a, ParseAttribute());
  if (!c_.AtEnd()) return Error("unexpected text after the attribute");
  return a;
}

absl::StatusOr<Type> Parser::ParseTypeOnly() {
  ASSIGN_OR_RETURN(Type t, ParseType());
  if (!c_.AtEnd()) return Error("unexpected text after the type");
  return t;
}

}  // namespace parser_internal

using parser_internal::Parser;

absl::StatusOr<OwningOp> ParseMlir(absl::string_view text, absl::string_view filename,
                                   int first_line) {
  if (first_line > 1) {
    // Keep line numbers of split chunks relative to the whole file.
    std::string padded(static_cast<size_t>(first_line - 1), '\n');
    padded.append(text.data(), text.size());
    Parser parser(padded, std::string(filename));
    return parser.ParseFile();
  }
  Parser parser(text, std::string(filename));
  return parser.ParseFile();
}

std::vector<SourceChunk> SplitInputFile(absl::string_view text) {
  std::vector<SourceChunk> chunks;
  SourceChunk current;
  int line = 1;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == absl::string_view::npos) end = text.size();
    absl::string_view l = text.substr(pos, end - pos);
    if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(l), "// -----")) {
      chunks.push_back(std::move(current));
      current = SourceChunk();
      current.first_line = line + 1;
    } else {
      current.text.append(l.data(), l.size());
      current.text.push_back('\n');
    }
    ++line;
    if (end == text.size()) break;
    pos = end + 1;
  }
  chunks.push_back(std::move(current));
  return chunks;
}

absl::StatusOr<Attribute> ParseAttributeText(absl::string_view text) {
  Parser parser(text, "<attribute>");
  return parser.ParseAttributeOnly();
}

absl::StatusOr<Type> ParseTypeText(absl::string_view text) {
  Parser parser(text, "<type>");
  return parser.ParseTypeOnly();
}

}  // namespace xlite::mlir
