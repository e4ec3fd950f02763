#include "xlite/stablehlo/printer.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "xlite/stablehlo/element_types.h"
#include "xlite/text/mlir_strings.h"

namespace xlite::mlir {
namespace {

using Kind = Attribute::Kind;

// Dense attributes with more elements than this print as "0x..." hex (MLIR's default).
constexpr int64_t kHexElements = 100;

std::string Key(absl::string_view key) {
  return IsMlirBareIdentifier(key) ? std::string(key) : QuoteMlirString(key);
}

std::string SymbolRef(absl::string_view text) {
  std::vector<std::string> parts;
  for (absl::string_view p : absl::StrSplit(text, "::@")) parts.push_back("@" + Key(p));
  return absl::StrJoin(parts, "::");
}

// ---------------------------------------------------------------- Numbers

uint64_t EncodeFloat(PrimitiveType t, double v) {
  Literal one(Shape::Array(t, {}));
  one.SetDouble(0, v);
  return one.GetBits(0);
}

// MLIR's float spelling: "%.6e" when that reads back to the same bits (as the
// reader reads it: to double, then rounded to `t`), else the fewest more
// digits that do (17 significant digits always do); NaN and Inf as hex bits.
std::string FloatBitsText(PrimitiveType t, uint64_t bits) {
  Literal one(Shape::Array(t, {}));
  one.SetBits(0, bits);
  const double v = one.GetDouble(0);
  if (!std::isfinite(v)) return absl::StrFormat("0x%X", bits);
  for (int digits = 6; digits < 16; ++digits) {
    std::string s = absl::StrFormat("%.*e", digits, v);
    double back;
    if (absl::SimpleAtod(s, &back) && EncodeFloat(t, back) == bits) return s;
  }
  return absl::StrFormat("%.16e", v);
}

std::string FloatText(absl::string_view element, double v) {
  std::optional<PrimitiveType> t = PrimitiveTypeOf(element);
  if (!t || !IsFloatingPoint(*t)) t = PrimitiveType::F64;
  return FloatBitsText(*t, EncodeFloat(*t, v));
}

// An integer of type `element` as MLIR prints it: unsigned types as unsigned,
// signless and signed ones as the signed value of their low bits (255 : i8 is -1 : i8).
std::string IntText(absl::string_view element, int64_t v) {
  const bool is_unsigned = absl::ConsumePrefix(&element, "ui");
  if (!is_unsigned && !absl::ConsumePrefix(&element, "si")) absl::ConsumePrefix(&element, "i");
  int width = 64;
  if (!absl::SimpleAtoi(element, &width) || width <= 0 || width >= 64) {
    return is_unsigned ? absl::StrCat(static_cast<uint64_t>(v)) : absl::StrCat(v);
  }
  const uint64_t bits = static_cast<uint64_t>(v) & ((uint64_t{1} << width) - 1);
  if (is_unsigned) return absl::StrCat(bits);
  const uint64_t sign = uint64_t{1} << (width - 1);
  return absl::StrCat(static_cast<int64_t>((bits ^ sign) - sign));
}

// ---------------------------------------------------------------- Types

std::string TypeList(const std::vector<Type>& types) {
  std::vector<std::string> parts;
  for (const Type& t : types) parts.push_back(PrintType(t));
  return absl::StrJoin(parts, ", ");
}

std::string FunctionType(const std::vector<Type>& inputs, const std::vector<Type>& results) {
  std::string out = absl::StrCat("(", TypeList(inputs), ") -> ");
  if (results.size() == 1 && results[0].kind != Type::Kind::kFunction) {
    return out + PrintType(results[0]);
  }
  return absl::StrCat(out, "(", TypeList(results), ")");
}

// ---------------------------------------------------------------- Attributes

std::string Print(const Attribute& a, bool keyword);

// The body of a #dialect.name<...> kept as written, with whitespace made
// canonical: none around brackets, ", " after commas, " = " around '=', one
// space between words. Quoted strings are copied as they are.
std::string NormalizeRaw(absl::string_view s) {
  auto word = [](char c) { return IsMlirIdentifierChar(c) || c == '?'; };
  std::string out;
  bool space = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = true;
      continue;
    }
    if (c == ',' || c == '=') {
      while (!out.empty() && out.back() == ' ') out.pop_back();
      out += c == ',' ? ", " : " = ";
      space = false;
      continue;
    }
    if (space && !out.empty() && out.back() != ' ' && word(out.back()) &&
        (word(c) || c == '"' || c == '-' || c == '#' || c == '@' || c == '%')) {
      out += ' ';
    }
    space = false;
    if (c == '"') {
      size_t j = i + 1;
      while (j < s.size() && s[j] != '"') j += s[j] == '\\' ? 2 : 1;
      absl::StrAppend(&out, s.substr(i, std::min(j + 1, s.size()) - i));
      i = j;
      continue;
    }
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string DenseElement(const Literal& lit, int64_t i) {
  const PrimitiveType t = lit.shape().element_type();
  if (t == PrimitiveType::PRED) return lit.GetBits(i) != 0 ? "true" : "false";
  if (IsUnsignedInt(t)) return absl::StrCat(lit.GetBits(i));
  if (IsFloatingPoint(t)) return FloatBitsText(t, lit.GetBits(i));
  if (IsComplex(t)) {
    const PrimitiveType part = t == PrimitiveType::C64 ? PrimitiveType::F32 : PrimitiveType::F64;
    const std::complex<double> c = lit.GetComplex(i);
    return absl::StrCat("(", FloatBitsText(part, EncodeFloat(part, c.real())), ", ",
                        FloatBitsText(part, EncodeFloat(part, c.imag())), ")");
  }
  return absl::StrCat(lit.GetInt(i));
}

// The elements from row-major index `begin` spanning dimensions `dim`.., as nested lists.
void DenseList(const Literal& lit, size_t dim, int64_t begin, std::string& out) {
  const std::vector<int64_t>& dims = lit.shape().dimensions();
  if (dim == dims.size()) {
    out += DenseElement(lit, begin);
    return;
  }
  int64_t stride = 1;
  for (size_t d = dim + 1; d < dims.size(); ++d) stride *= dims[d];
  out += '[';
  for (int64_t k = 0; k < dims[dim]; ++k) {
    if (k > 0) out += ", ";
    DenseList(lit, dim + 1, begin + k * stride, out);
  }
  out += ']';
}

std::string Dense(const Attribute& a) {
  std::string body;
  if (a.literal != nullptr && a.literal->element_count() > 0) {
    const Literal& lit = *a.literal;
    const int64_t n = lit.element_count();
    const size_t width = lit.element_stride();
    const uint8_t* data = lit.raw_data().data();
    bool splat = true;
    for (int64_t i = 1; i < n && splat; ++i) {
      splat = std::memcmp(data, data + i * width, width) == 0;
    }
    if (splat) {
      body = DenseElement(lit, 0);
    } else if (n > kHexElements && lit.shape().element_type() != PrimitiveType::PRED) {
      body = "\"0x";
      for (uint8_t byte : lit.raw_data()) absl::StrAppend(&body, absl::StrFormat("%02X", byte));
      body += '"';
    } else {
      DenseList(lit, 0, 0, body);
    }
  }
  return absl::StrCat("dense<", body, "> : ", PrintType(a.type));
}

// Struct fields that StableHLO leaves out when empty (lists of dimensions).
bool OmitEmptyField(const Attribute& s, const Attribute& field) {
  static const char* kStructs[] = {"stablehlo.dot", "stablehlo.gather", "stablehlo.scatter",
                                   "stablehlo.conv"};
  return field.kind == Kind::kArray && field.elements.empty() && field.raw.empty() &&
         std::find(std::begin(kStructs), std::end(kStructs), s.name) != std::end(kStructs);
}

// `keyword`: inside a #dialect.name<k = v> struct, where numbers carry no type.
std::string Print(const Attribute& a, bool keyword) {
  switch (a.kind) {
    case Kind::kUnit:
      return "unit";
    case Kind::kBool:
      return a.bool_value ? "true" : "false";
    case Kind::kInteger:
      if (a.type.kind == Type::Kind::kScalar && a.type.element == "i1") {
        return a.int_value != 0 ? "true" : "false";
      }
      if (keyword) return IntText(a.type.element, a.int_value);
      return absl::StrCat(IntText(a.type.element, a.int_value), " : ", PrintType(a.type));
    case Kind::kFloat: {
      std::string v = FloatText(a.type.element, a.float_value);
      return keyword ? v : absl::StrCat(v, " : ", PrintType(a.type));
    }
    case Kind::kString:
      return QuoteMlirString(a.text);
    case Kind::kSymbol:
      return SymbolRef(a.text);
    case Kind::kType:
      return PrintType(a.type);
    case Kind::kArray: {
      std::vector<std::string> parts;
      for (const Attribute& e : a.elements) parts.push_back(Print(e, keyword));
      if (a.raw == "x" && parts.size() == 2) return absl::StrCat(parts[0], " x ", parts[1]);
      return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
    }
    case Kind::kDenseArray: {
      std::vector<std::string> parts;
      if (a.text == "i1") {
        for (int64_t v : a.ints) parts.push_back(v != 0 ? "true" : "false");
      } else {
        for (int64_t v : a.ints) parts.push_back(IntText(a.text, v));
      }
      for (double v : a.floats) parts.push_back(FloatText(a.text, v));
      if (parts.empty()) return absl::StrCat("array<", a.text, ">");
      return absl::StrCat("array<", a.text, ": ", absl::StrJoin(parts, ", "), ">");
    }
    case Kind::kDense:
      return Dense(a);
    case Kind::kDenseResource:
      return absl::StrCat("dense_resource<", a.name, "> : ", PrintType(a.type));
    case Kind::kDict: {
      std::vector<const NamedAttribute*> fields;
      for (const NamedAttribute& f : a.fields) fields.push_back(&f);
      if (!keyword) {
        std::stable_sort(fields.begin(), fields.end(),
                         [](auto* x, auto* y) { return x->first < y->first; });
      }
      std::vector<std::string> parts;
      for (const NamedAttribute* f : fields) {
        parts.push_back(f->second.kind == Kind::kUnit && !keyword
                            ? Key(f->first)
                            : absl::StrCat(Key(f->first), " = ", Print(f->second, keyword)));
      }
      return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
    }
    case Kind::kEnum: {
      std::vector<std::string> name = absl::StrSplit(a.name, absl::MaxSplits('.', 1));
      if (name.size() != 2) return absl::StrCat("#", a.name, "<", a.text, ">");
      return absl::StrCat("#", name[0], "<", name[1], " ", a.text, ">");
    }
    case Kind::kStruct: {
      if (a.fields.empty()) return absl::StrCat("#", a.name, "<", NormalizeRaw(a.raw), ">");
      std::vector<std::string> parts;
      for (const auto& [key, value] : a.fields) {
        if (!OmitEmptyField(a, value)) {
          parts.push_back(absl::StrCat(key, " = ", Print(value, /*keyword=*/true)));
        }
      }
      return absl::StrCat("#", a.name, "<", absl::StrJoin(parts, ", "), ">");
    }
    case Kind::kOpaque:
      return a.text;
  }
  return "";
}

// ---------------------------------------------------------------- Operations

// Operations whose regions cannot see enclosing values; numbering restarts in them.
bool IsIsolated(const Operation& op) {
  return op.name == "func.func" || op.name == "builtin.module";
}

class Printer {
 public:
  std::string Run(const Operation& module) {
    for (const auto& r : module.regions) Number(*r, 0, 0);
    PrintOp(module, 0);
    return std::move(out_);
  }

 private:
  // MLIR's SSA numbering: a region's block arguments and results first, then
  // its nested regions, each continuing from the region's final counts.
  void Number(const Region& region, int next_value, int next_arg) {
    for (const auto& block : region.blocks) {
      for (const auto& arg : block->arguments) names_[arg.get()] = absl::StrCat("%arg", next_arg++);
      for (const auto& op : block->operations) {
        if (op->results.empty()) continue;
        const int id = next_value++;
        for (const auto& r : op->results) {
          names_[r.get()] = op->results.size() == 1 ? absl::StrCat("%", id)
                                                    : absl::StrCat("%", id, "#", r->result_index);
        }
      }
    }
    for (const auto& block : region.blocks) {
      for (const auto& op : block->operations) {
        const bool isolated = IsIsolated(*op);
        for (const auto& r : op->regions) {
          Number(*r, isolated ? 0 : next_value, isolated ? 0 : next_arg);
        }
      }
    }
  }

  std::string Name(const Value* v) const {
    auto it = names_.find(v);
    return it == names_.end() ? std::string("%<undefined>") : it->second;
  }

  void PrintOp(const Operation& op, int indent) {
    out_.append(indent, ' ');
    if (!op.results.empty()) {
      std::string first = Name(op.results[0].get());
      first = first.substr(0, first.find('#'));
      absl::StrAppend(&out_, first,
                      op.results.size() > 1 ? absl::StrCat(":", op.results.size()) : "", " = ");
    }
    std::vector<std::string> operands;
    std::vector<Type> operand_types, result_types;
    for (const Value* v : op.operands) {
      operands.push_back(Name(v));
      operand_types.push_back(v->type);
    }
    for (const auto& r : op.results) result_types.push_back(r->type);
    absl::StrAppend(&out_, QuoteMlirString(op.name), "(", absl::StrJoin(operands, ", "), ")");
    if (!op.regions.empty()) {
      out_ += " (";
      for (size_t i = 0; i < op.regions.size(); ++i) {
        if (i > 0) out_ += ", ";
        PrintRegion(*op.regions[i], indent);
      }
      out_ += ")";
    } else if (IsIsolated(op)) {
      out_ += " ({\n";  // A function declaration: MLIR's one empty region.
      out_.append(indent, ' ');
      out_ += "})";
    }
    if (!op.attributes.empty()) {
      Attribute dict;
      dict.kind = Kind::kDict;
      dict.fields = op.attributes;
      absl::StrAppend(&out_, " ", Print(dict, /*keyword=*/false));
    }
    absl::StrAppend(&out_, " : ", FunctionType(operand_types, result_types), "\n");
  }

  void PrintRegion(const Region& region, int indent) {
    out_ += "{\n";
    for (size_t b = 0; b < region.blocks.size(); ++b) {
      const Block& block = *region.blocks[b];
      if (b > 0 || !block.arguments.empty()) {
        out_.append(indent, ' ');
        absl::StrAppend(&out_, "^bb", b);
        if (!block.arguments.empty()) {
          std::vector<std::string> args;
          for (const auto& a : block.arguments) {
            args.push_back(absl::StrCat(Name(a.get()), ": ", PrintType(a->type)));
          }
          absl::StrAppend(&out_, "(", absl::StrJoin(args, ", "), ")");
        }
        out_ += ":\n";
      }
      for (const auto& op : block.operations) PrintOp(*op, indent + 2);
    }
    out_.append(indent, ' ');
    out_ += "}";
  }

  absl::flat_hash_map<const Value*, std::string> names_;
  std::string out_;
};

}  // namespace

std::string PrintType(const Type& t) {
  switch (t.kind) {
    case Type::Kind::kTensor: {
      std::string out = "tensor<";
      if (!t.ranked) out += "*x";
      for (int64_t d : t.dims) {
        absl::StrAppend(&out, d == Type::kDynamic ? "?" : absl::StrCat(d), "x");
      }
      out += t.element;
      if (!t.encoding.empty()) absl::StrAppend(&out, ", ", t.encoding);
      return out + ">";
    }
    case Type::Kind::kToken:
      return "!stablehlo.token";
    case Type::Kind::kTuple:
      return absl::StrCat("tuple<", TypeList(t.elements), ">");
    case Type::Kind::kFunction:
      return FunctionType(t.elements, t.results);
    case Type::Kind::kScalar:
    case Type::Kind::kOther:
      return t.element;
  }
  return t.element;
}

std::string PrintAttribute(const Attribute& attribute) { return Print(attribute, false); }

std::string PrintMlir(const Operation& module) { return Printer().Run(module); }

}  // namespace xlite::mlir
