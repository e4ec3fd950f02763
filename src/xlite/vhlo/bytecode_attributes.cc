#include "xlite/vhlo/bytecode_attributes.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "xlite/ir/literal.h"
#include "xlite/ir/primitive_type.h"
#include "xlite/ir/shape.h"
#include "xlite/stablehlo/element_types.h"
#include "xlite/stablehlo/mlir_parser.h"
#include "xlite/stablehlo/printer.h"
#include "xlite/support/status.h"
#include "xlite/vhlo/bytecode_codes.h"

namespace xlite::vhlo::bytecode {
namespace {

using mlir::Attribute;
using mlir::NamedAttribute;
using mlir::Type;
using AKind = mlir::Attribute::Kind;
using TKind = mlir::Type::Kind;

// One decoded attribute or type may not exceed this many nodes.
constexpr int64_t kMaxNodesPerEntry = int64_t{1} << 22;
// One dense literal may not exceed this many bytes once splats are expanded.
constexpr int64_t kMaxLiteralBytes = int64_t{1} << 28;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

int64_t DimFromMlir(int64_t d) { return d == kMlirDynamic ? Type::kDynamic : d; }

std::string DimText(int64_t d) { return d == Type::kDynamic ? "?" : absl::StrCat(d); }

// A tensor encoding written as text, in the spelling the text reader keeps.
std::string CanonicalEncoding(const std::string& text) {
  absl::StatusOr<Attribute> parsed = mlir::ParseAttributeText(text);
  return parsed.ok() ? mlir::PrintAttribute(*parsed) : text;
}

// Builtin-syntax text of a type, for kOther spellings and tensor encodings.
std::string TypeText(const Type& t) {
  switch (t.kind) {
    case TKind::kTensor: {
      if (!t.ranked) return absl::StrCat("tensor<*x", t.element, ">");
      std::string s = "tensor<";
      for (int64_t d : t.dims) absl::StrAppend(&s, DimText(d), "x");
      absl::StrAppend(&s, t.element);
      if (!t.encoding.empty()) absl::StrAppend(&s, ", ", t.encoding);
      return absl::StrCat(s, ">");
    }
    case TKind::kToken:
      return "!stablehlo.token";
    case TKind::kTuple: {
      std::vector<std::string> parts;
      for (const Type& e : t.elements) parts.push_back(TypeText(e));
      return absl::StrCat("tuple<", absl::StrJoin(parts, ", "), ">");
    }
    case TKind::kFunction: {
      std::vector<std::string> in, out;
      for (const Type& e : t.elements) in.push_back(TypeText(e));
      for (const Type& e : t.results) out.push_back(TypeText(e));
      std::string results = absl::StrJoin(out, ", ");
      if (out.size() != 1) results = absl::StrCat("(", results, ")");
      return absl::StrCat("(", absl::StrJoin(in, ", "), ") -> ", results);
    }
    default:
      return t.element;
  }
}

int64_t TypeNodeCount(const Type& t) {
  int64_t cost = 1;
  for (const Type& e : t.elements) cost += TypeNodeCount(e);
  for (const Type& e : t.results) cost += TypeNodeCount(e);
  return cost;
}

// Shortest decimal that reads back as the same double.
std::string DoubleText(double v) {
  for (int precision = 6; precision <= 17; ++precision) {
    std::string s = absl::StrFormat("%.*g", precision, v);
    if (std::strtod(s.c_str(), nullptr) == v) {
      if (s.find_first_of(".einn") == std::string::npos) absl::StrAppend(&s, ".0");
      return s;
    }
  }
  return absl::StrFormat("%.17g", v);
}

// A finite-only minifloat (f6E2M3FN, f6E3M2FN): no infinities or NaNs.
double MinifloatToDouble(uint64_t bits, int exponent_bits, int mantissa_bits, int bias) {
  const bool negative = (bits >> (exponent_bits + mantissa_bits)) & 1;
  const int exponent = static_cast<int>((bits >> mantissa_bits) & ((1u << exponent_bits) - 1));
  const double mantissa = static_cast<double>(bits & ((1u << mantissa_bits) - 1));
  double v = exponent == 0 ? std::ldexp(mantissa, 1 - bias - mantissa_bits)
                           : std::ldexp(1.0 + mantissa / (1 << mantissa_bits), exponent - bias);
  return negative ? -v : v;
}

std::optional<double> FloatBitsToDouble(absl::string_view element, uint64_t bits) {
  if (element == "tf32") {
    // f32 with the low 13 mantissa bits dropped.
    uint32_t f32_bits = static_cast<uint32_t>(bits << 13);
    float f;
    std::memcpy(&f, &f32_bits, 4);
    return f;
  }
  if (element == "f6E2M3FN") return MinifloatToDouble(bits, 2, 3, 1);
  if (element == "f6E3M2FN") return MinifloatToDouble(bits, 3, 2, 3);
  std::optional<PrimitiveType> type = mlir::PrimitiveTypeOf(element);
  if (!type || !IsFloatingPoint(*type)) return std::nullopt;
  Literal one(Shape::Array(*type, {}));
  one.SetBits(0, bits);
  return one.GetDouble(0);
}

// APInt encoding: <= 8 bits one byte, <= 64 bits a signed varint, wider a
// list of signed-varint words (low word first).
absl::Status ReadApInt(EncodingReader& r, int width, uint64_t& low_bits) {
  if (width <= 8) {
    uint8_t byte = 0;
    RETURN_IF_ERROR(r.ReadByte(byte));
    low_bits = byte;
    return absl::OkStatus();
  }
  if (width <= 64) {
    int64_t v;
    RETURN_IF_ERROR(r.ReadSignedVarInt(v));
    low_bits = static_cast<uint64_t>(v);
    return absl::OkStatus();
  }
  uint64_t words;
  RETURN_IF_ERROR(r.ReadCount(words, "APInt word"));
  if (words == 0) return r.Error("wide integer without words");
  low_bits = 0;
  for (uint64_t i = 0; i < words; ++i) {
    int64_t w;
    RETURN_IF_ERROR(r.ReadSignedVarInt(w));
    if (i == 0) low_bits = static_cast<uint64_t>(w);
  }
  return absl::OkStatus();
}

int64_t ExtendToInt64(uint64_t bits, int width, bool is_unsigned) {
  if (width >= 64) return static_cast<int64_t>(bits);
  const uint64_t mask = (uint64_t{1} << width) - 1;
  bits &= mask;
  if (width == 1 || is_unsigned) return static_cast<int64_t>(bits);
  if (bits >> (width - 1)) bits |= ~mask;  // sign-extend
  return static_cast<int64_t>(bits);
}

// Bytes per element in MLIR's raw dense storage (and in Literal).
int DenseByteWidth(absl::string_view element, PrimitiveType type) {
  (void)element;
  return PrimitiveByteWidth(type);
}

// MLIR's quant dialect spelling of a uniform quantized type.
std::string QuantStorageText(const Type& storage, bool is_signed, int64_t min, int64_t max) {
  int width = 0;
  bool is_unsigned = false;
  std::string s = storage.element;
  if (IntegerWidthOf(storage.element, width, is_unsigned)) {
    s = absl::StrCat(is_signed ? "i" : "u", width);
    // The <min:max> range is spelled only when narrower than the type's.
    bool full_range = true;
    if (width < 63) {
      const int64_t default_min = is_signed ? -(int64_t{1} << (width - 1)) : 0;
      const int64_t default_max =
          is_signed ? (int64_t{1} << (width - 1)) - 1 : (int64_t{1} << width) - 1;
      full_range = min == default_min && max == default_max;
    }
    if (!full_range) absl::StrAppend(&s, "<", min, ":", max, ">");
  }
  return s;
}

}  // namespace

bool IntegerWidthOf(absl::string_view e, int& width, bool& is_unsigned) {
  if (e == "index") {
    width = 64;
    is_unsigned = false;
    return true;
  }
  is_unsigned = absl::ConsumePrefix(&e, "ui");
  if (!is_unsigned && !absl::ConsumePrefix(&e, "si") && !absl::ConsumePrefix(&e, "i")) {
    return false;
  }
  if (e.empty() || e.size() > 8) return false;
  int w = 0;
  for (char c : e) {
    if (c < '0' || c > '9') return false;
    w = w * 10 + (c - '0');
  }
  if (w <= 0) return false;
  width = w;
  return true;
}

// ---------------------------------------------------------------------------
// String table
// ---------------------------------------------------------------------------

absl::Status StringTable::Read(EncodingReader r) {
  // strings { count, reverse lengths (each including its NUL), data }
  uint64_t count;
  RETURN_IF_ERROR(r.ReadCount(count, "string"));
  strings.assign(count, absl::string_view());
  const uint8_t* data_begin = r.current();
  const size_t data_offset = r.offset();
  const size_t start = r.pos();
  const size_t total = r.remaining();
  size_t end = total;  // strings fill the section's tail, last string last
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t length;
    RETURN_IF_ERROR(r.ReadVarInt(length));
    if (length == 0) return r.Error("string of length 0 (lengths include the NUL)");
    if (length > end) return r.Error(absl::StrCat("string length ", length, " exceeds the data"));
    end -= length;
    if (data_begin[end + length - 1] != 0) {
      return r.ErrorAt(data_offset + end + length - 1, "string without a NUL terminator");
    }
    strings[count - 1 - i] =
        absl::string_view(reinterpret_cast<const char*>(data_begin + end), length - 1);
  }
  if (r.pos() - start != end) {
    return r.Error(
        absl::StrCat("string lengths end at byte ", r.pos() - start, " but data starts at ", end));
  }
  return absl::OkStatus();
}

absl::Status StringTable::At(const EncodingReader& r, uint64_t index,
                             absl::string_view& out) const {
  if (index >= strings.size()) {
    return r.Error(
        absl::StrCat("string index ", index, " out of range (", strings.size(), " strings)"));
  }
  out = strings[index];
  return absl::OkStatus();
}

absl::Status StringTable::Get(EncodingReader& r, absl::string_view& out) const {
  uint64_t index;
  RETURN_IF_ERROR(r.ReadVarInt(index));
  return At(r, index, out);
}

// ---------------------------------------------------------------------------
// Attribute/type table
// ---------------------------------------------------------------------------

absl::Status AttrTypeTable::Initialize(const EncodingReader& data, EncodingReader offsets) {
  section_data_ = data.current();
  section_base_ = data.offset();
  filename_ = &data.filename();
  uint64_t num_attrs, num_types;
  RETURN_IF_ERROR(offsets.ReadVarInt(num_attrs));
  RETURN_IF_ERROR(offsets.ReadVarInt(num_types));
  // Each entry takes at least one offset byte.
  if (num_attrs > offsets.remaining() || num_types > offsets.remaining() - num_attrs) {
    return offsets.Error(absl::StrCat(num_attrs, " attributes and ", num_types,
                                      " types do not fit in the offset section"));
  }
  attr_entries_.resize(num_attrs);
  type_entries_.resize(num_types);
  attributes_.resize(num_attrs);
  types_.resize(num_types);
  size_t position = 0;
  for (std::vector<Entry>* entries : {&attr_entries_, &type_entries_}) {
    size_t next = 0;
    while (next < entries->size()) {
      // group { dialect, count, (size << 1 | hasCustomEncoding)[count] }
      uint64_t dialect, count;
      RETURN_IF_ERROR(offsets.ReadVarInt(dialect));
      if (dialect >= dialects_.size()) {
        return offsets.Error(absl::StrCat("dialect index ", dialect, " out of range (",
                                          dialects_.size(), " dialects)"));
      }
      RETURN_IF_ERROR(offsets.ReadVarInt(count));
      if (count > entries->size() - next) {
        return offsets.Error(absl::StrCat("group of ", count, " entries overruns the ",
                                          entries->size(), " declared"));
      }
      for (uint64_t i = 0; i < count; ++i, ++next) {
        uint64_t size;
        bool custom;
        RETURN_IF_ERROR(offsets.ReadVarIntWithFlag(size, custom));
        if (size > data.remaining() - position) {
          return offsets.Error(absl::StrCat("entry of ", size, " bytes runs past the end of the ",
                                            "attribute/type section"));
        }
        Entry& e = (*entries)[next];
        e.dialect = static_cast<uint32_t>(dialect);
        e.custom = custom;
        e.begin = position;
        e.size = size;
        position += size;
      }
    }
  }
  if (!offsets.empty()) return offsets.Error("trailing bytes in the attribute/type offsets");
  return absl::OkStatus();
}

EncodingReader AttrTypeTable::EntryReader(const Entry& entry, bool is_type, uint64_t index) const {
  return EncodingReader(
      section_data_ + entry.begin, entry.size, section_base_ + entry.begin,
      absl::StrCat(is_type ? "type #" : "attribute #", index, " (", dialects_[entry.dialect], ")"),
      filename_);
}

absl::Status AttrTypeTable::Charge(const EncodingReader& r, int64_t nodes) {
  budget_.nodes_left -= nodes;
  if (budget_.nodes_left < 0) {
    return r.Error("the file describes too many attribute and type nodes");
  }
  return absl::OkStatus();
}

absl::StatusOr<const Attribute*> AttrTypeTable::Attribute(const EncodingReader& r, uint64_t index,
                                                          int depth) {
  if (index >= attr_entries_.size()) {
    return r.Error(absl::StrCat("attribute index ", index, " out of range (", attr_entries_.size(),
                                " attributes)"));
  }
  if (attr_entries_[index].state != Entry::State::kDone) {
    RETURN_IF_ERROR(DecodeAttribute(index, depth));
  }
  return &attributes_[index];
}

absl::StatusOr<const Type*> AttrTypeTable::Type(const EncodingReader& r, uint64_t index,
                                                int depth) {
  if (index >= type_entries_.size()) {
    return r.Error(
        absl::StrCat("type index ", index, " out of range (", type_entries_.size(), " types)"));
  }
  if (type_entries_[index].state != Entry::State::kDone) {
    RETURN_IF_ERROR(DecodeType(index, depth));
  }
  return &types_[index];
}

absl::StatusOr<const Attribute*> AttrTypeTable::ReadAttribute(EncodingReader& r, int depth) {
  uint64_t index;
  RETURN_IF_ERROR(r.ReadVarInt(index));
  return Attribute(r, index, depth);
}

absl::StatusOr<const Type*> AttrTypeTable::ReadType(EncodingReader& r, int depth) {
  uint64_t index;
  RETURN_IF_ERROR(r.ReadVarInt(index));
  return Type(r, index, depth);
}

template <typename T, typename Decode>
absl::Status AttrTypeTable::DecodeEntry(std::vector<Entry>& entries, std::vector<T>& values,
                                        uint64_t index, int depth, bool is_type,
                                        const Decode& decode) {
  const absl::string_view what = is_type ? "type" : "attribute";
  Entry& entry = entries[index];
  EncodingReader r = EntryReader(entry, is_type, index);
  if (entry.state == Entry::State::kBusy) {
    return r.Error(absl::StrCat(what, " refers to itself (a cycle)"));
  }
  if (depth > kMaxNestingDepth) {
    return r.Error(absl::StrCat(what, "s nest deeper than ", kMaxNestingDepth));
  }
  entry.state = Entry::State::kBusy;
  int64_t cost = 1;
  bool skip_rest = false;
  ASSIGN_OR_RETURN(T result, decode(r, dialects_[entry.dialect], entry.custom, cost, skip_rest));
  if (!skip_rest && !r.empty()) return r.Error(absl::StrCat("trailing bytes after the ", what));
  if (cost > kMaxNodesPerEntry) {
    return r.Error(absl::StrCat(what, " has too many nested parts"));
  }
  RETURN_IF_ERROR(Charge(r, cost));
  entry.cost = cost;
  values[index] = std::move(result);
  entry.state = Entry::State::kDone;
  return absl::OkStatus();
}

absl::Status AttrTypeTable::DecodeAttribute(uint64_t index, int depth) {
  return DecodeEntry(attr_entries_, attributes_, index, depth, /*is_type=*/false,
                     [&](EncodingReader& r, const std::string& dialect, bool custom, int64_t& cost,
                         bool& skip_rest) -> absl::StatusOr<mlir::Attribute> {
                       mlir::Attribute result;
                       if (!custom) {
                         // Assembly-format fallback: the attribute's text, NUL-terminated.
                         absl::string_view text;
                         RETURN_IF_ERROR(r.ReadNulTerminated(text));
                         absl::StatusOr<mlir::Attribute> parsed = mlir::ParseAttributeText(text);
                         if (dialect == "builtin" && parsed.ok()) {
                           result = *std::move(parsed);
                         } else {
                           result.kind = AKind::kOpaque;
                           result.text = std::string(text);
                         }
                       } else if (dialect == "vhlo") {
                         ASSIGN_OR_RETURN(result, VhloAttribute(r, depth, cost));
                       } else if (dialect == "builtin") {
                         ASSIGN_OR_RETURN(result, BuiltinAttribute(r, depth, cost, skip_rest));
                       } else if (dialect == "sdy") {
                         ASSIGN_OR_RETURN(result, SdyAttribute(r, depth, cost));
                       } else {
                         // Another dialect's private encoding: kept opaque, decoded by nobody.
                         result.kind = AKind::kOpaque;
                         result.name = dialect;
                         result.text = absl::StrCat("#", dialect, "<bytecode>");
                         skip_rest = true;
                       }
                       return result;
                     });
}

absl::Status AttrTypeTable::DecodeType(uint64_t index, int depth) {
  return DecodeEntry(
      type_entries_, types_, index, depth, /*is_type=*/true,
      [&](EncodingReader& r, const std::string& dialect, bool custom, int64_t& cost,
          bool& /*skip_rest*/) -> absl::StatusOr<mlir::Type> {
        mlir::Type result;
        if (!custom) {
          absl::string_view text;
          RETURN_IF_ERROR(r.ReadNulTerminated(text));
          absl::StatusOr<mlir::Type> parsed = mlir::ParseTypeText(text);
          if (dialect == "builtin" && parsed.ok()) {
            result = *std::move(parsed);
          } else {
            result.kind = TKind::kOther;
            result.element = std::string(text);
          }
        } else if (dialect == "vhlo") {
          ASSIGN_OR_RETURN(result, VhloType(r, depth, cost));
        } else if (dialect == "builtin") {
          ASSIGN_OR_RETURN(result, BuiltinType(r, depth, cost));
        } else {
          return r.Error(absl::StrCat("types of dialect '", dialect, "' are not readable"));
        }
        return result;
      });
}

// ---------------------------------------------------------------------------
// Shared field readers
// ---------------------------------------------------------------------------

namespace {

// Attribute and type lists are both a count and that many table indices; each
// element costs its entry's nodes. `resolve(index)` gives the element,
// `cost_of(index)` its cost; `what` names the element kind in errors.
template <typename T, typename Resolve, typename CostOf>
absl::Status ReadIndexList(EncodingReader& r, absl::string_view what, int64_t& cost,
                           std::vector<T>& out, const Resolve& resolve, const CostOf& cost_of) {
  uint64_t count;
  RETURN_IF_ERROR(r.ReadCount(count, absl::StrCat(what, " list")));
  out.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t index;
    RETURN_IF_ERROR(r.ReadVarInt(index));
    ASSIGN_OR_RETURN(const T* element, resolve(index));
    cost += cost_of(index);
    if (cost > kMaxNodesPerEntry) {
      return r.Error(absl::StrCat(what, " has too many nested parts"));
    }
    out.push_back(*element);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status AttrTypeTable::ReadAttributeList(EncodingReader& r, int depth, int64_t& cost,
                                              std::vector<mlir::Attribute>& out) {
  return ReadIndexList(
      r, "attribute", cost, out, [&](uint64_t index) { return Attribute(r, index, depth + 1); },
      [&](uint64_t index) { return AttributeCost(index); });
}

absl::Status AttrTypeTable::ReadTypeList(EncodingReader& r, int depth, int64_t& cost,
                                         std::vector<mlir::Type>& out) {
  return ReadIndexList(
      r, "type", cost, out, [&](uint64_t index) { return Type(r, index, depth + 1); },
      [&](uint64_t index) { return TypeCost(index); });
}

absl::StatusOr<std::string> AttrTypeTable::ReadStringAttribute(EncodingReader& r, int depth,
                                                               int64_t& cost) {
  const size_t at = r.offset();
  ASSIGN_OR_RETURN(const mlir::Attribute* a, ReadAttribute(r, depth + 1));
  if (a->kind != AKind::kString) return r.ErrorAt(at, "expected a string attribute");
  cost += 1;
  return a->text;
}

absl::Status AttrTypeTable::ReadShape(EncodingReader& r, std::vector<int64_t>& dims) {
  uint64_t rank;
  RETURN_IF_ERROR(r.ReadCount(rank, "dimension"));
  dims.resize(rank);
  for (uint64_t i = 0; i < rank; ++i) {
    int64_t d;
    RETURN_IF_ERROR(r.ReadSignedVarInt(d));
    if (d < 0 && d != kMlirDynamic) {
      return r.Error(absl::StrCat("negative dimension size ", d));
    }
    dims[i] = DimFromMlir(d);
  }
  return absl::OkStatus();
}

absl::StatusOr<mlir::Attribute> AttrTypeTable::IntegerAttribute(EncodingReader& r,
                                                                const mlir::Type& type) {
  int width = 0;
  bool is_unsigned = false;
  if (type.kind != TKind::kScalar || !IntegerWidthOf(type.element, width, is_unsigned)) {
    return r.Error(absl::StrCat("integer attribute of non-integer type '", TypeText(type), "'"));
  }
  uint64_t bits;
  RETURN_IF_ERROR(ReadApInt(r, width, bits));
  mlir::Attribute a = mlir::Attribute::Int(ExtendToInt64(bits, width, is_unsigned), type.element);
  return a;
}

absl::StatusOr<mlir::Attribute> AttrTypeTable::FloatAttribute(EncodingReader& r,
                                                              const mlir::Type& type) {
  const int width = type.kind == TKind::kScalar ? FloatWidthOf(type.element) : 0;
  if (width == 0) {
    return r.Error(absl::StrCat("float attribute of non-float type '", TypeText(type), "'"));
  }
  uint64_t bits;
  RETURN_IF_ERROR(ReadApInt(r, width, bits));
  std::optional<double> v = FloatBitsToDouble(type.element, bits);
  if (!v) return r.Error(absl::StrCat("float attribute of unsupported type ", type.element));
  mlir::Attribute a;
  a.kind = AKind::kFloat;
  a.float_value = *v;
  a.type = type;
  return a;
}

absl::StatusOr<mlir::Attribute> AttrTypeTable::DenseAttribute(EncodingReader& r,
                                                              const mlir::Type& type,
                                                              bool packed_bools) {
  uint64_t size;
  const uint8_t* blob;
  RETURN_IF_ERROR(r.ReadVarInt(size));
  RETURN_IF_ERROR(r.ReadBytes(size, blob));
  if (type.kind != TKind::kTensor || !type.ranked || !type.IsStatic()) {
    return r.Error(
        absl::StrCat("dense data needs a static tensor type, not '", TypeText(type), "'"));
  }
  std::optional<PrimitiveType> element = mlir::PrimitiveTypeOf(type.element);
  if (!element || !IsArrayType(*element)) {
    return absl::UnimplementedError(
        r.Error(absl::StrCat("dense data of element type '", type.element, "' is unsupported"))
            .message());
  }
  const int64_t width = DenseByteWidth(type.element, *element);
  int64_t n = 1;
  for (int64_t d : type.dims) {
    if (d > 0 && n > kMaxLiteralBytes / width / d) {
      return r.Error(absl::StrCat("dense data of ", TypeText(type), " is too large"));
    }
    n *= d;
  }
  if (n * width > budget_.literal_bytes_left) {
    return r.Error("the file's dense data exceeds the reader's limit");
  }
  budget_.literal_bytes_left -= n * width;
  auto literal = std::make_shared<Literal>(Shape::Array(*element, type.dims));
  uint8_t* out = literal->mutable_raw_data();
  const bool is_bool = *element == PrimitiveType::PRED;
  if (is_bool && packed_bools && static_cast<int64_t>(size) == (n + 7) / 8 &&
      static_cast<int64_t>(size) != n) {
    // VHLO packs i1 data 8 per byte, little-endian bit order.
    for (int64_t i = 0; i < n; ++i) out[i] = (blob[i / 8] >> (i % 8)) & 1;
  } else if (static_cast<int64_t>(size) == width && n != 1) {
    // A splat: one element for the whole tensor.
    for (int64_t i = 0; i < n; ++i) std::memcpy(out + i * width, blob, width);
    if (is_bool && n > 0) {
      for (int64_t i = 0; i < n; ++i) out[i] = out[i] != 0;
    }
  } else if (static_cast<int64_t>(size) == n * width) {
    if (n > 0) std::memcpy(out, blob, size);
    if (is_bool) {
      for (int64_t i = 0; i < n; ++i) out[i] = out[i] != 0;
    }
  } else {
    return r.Error(absl::StrCat("dense data of ", size, " bytes does not fit ", TypeText(type),
                                " (", n * width, " bytes, or ", width, " for a splat)"));
  }
  mlir::Attribute a;
  a.kind = AKind::kDense;
  a.type = type;
  a.literal = std::move(literal);
  return a;
}

absl::StatusOr<mlir::Attribute> AttrTypeTable::DenseArrayAttribute(EncodingReader& r,
                                                                   const mlir::Type& type) {
  // array<T: ...>: element type, element count, raw little-endian data.
  uint64_t count, size;
  const uint8_t* blob;
  RETURN_IF_ERROR(r.ReadVarInt(count));
  RETURN_IF_ERROR(r.ReadVarInt(size));
  RETURN_IF_ERROR(r.ReadBytes(size, blob));
  mlir::Attribute a;
  a.kind = AKind::kDenseArray;
  a.text = type.element;
  int width = 0;
  bool is_unsigned = false;
  const int float_width = FloatWidthOf(type.element);
  if (type.kind == TKind::kScalar && IntegerWidthOf(type.element, width, is_unsigned)) {
    const int bytes = width == 1 ? 1 : (width + 7) / 8;
    if (width > 64 || count * bytes != size) {
      return r.Error(
          absl::StrCat("dense array of ", count, " ", type.element, " has ", size, " bytes"));
    }
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t bits = 0;
      std::memcpy(&bits, blob + i * bytes, bytes);
      a.ints.push_back(ExtendToInt64(bits, width, is_unsigned));
    }
  } else if (type.kind == TKind::kScalar &&
             (float_width == 16 || float_width == 32 || float_width == 64)) {
    const int bytes = float_width / 8;
    if (count * bytes != size) return r.Error("dense array size does not match its count");
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t bits = 0;
      std::memcpy(&bits, blob + i * bytes, bytes);
      std::optional<double> v = FloatBitsToDouble(type.element, bits);
      if (!v) return r.Error("unsupported dense array element type");
      a.floats.push_back(*v);
    }
  } else {
    return r.Error(absl::StrCat("dense array of element type '", TypeText(type), "'"));
  }
  return a;
}

// ---------------------------------------------------------------------------
// VHLO attributes and types
// ---------------------------------------------------------------------------

absl::StatusOr<mlir::Attribute> AttrTypeTable::VhloAttribute(EncodingReader& r, int depth,
                                                             int64_t& cost) {
  const size_t code_at = r.offset();
  uint64_t code;
  RETURN_IF_ERROR(r.ReadVarInt(code));
  const VhloAttrCode* kind = FindCode(VhloAttrCodes(), code);
  if (kind == nullptr) {
    return r.ErrorAt(code_at, absl::StrCat("unknown VHLO attribute code ", code));
  }
  const std::string vhlo_name = absl::StrCat("vhlo.", kind->mnemonic);
  mlir::Attribute a;
  switch (kind->shape) {
    case VhloAttr::kEnum: {
      uint64_t value;
      RETURN_IF_ERROR(r.ReadVarInt(value));
      if (value >= kind->enum_values.size() || kind->enum_values[value] == nullptr) {
        return r.ErrorAt(code_at,
                         absl::StrCat("value ", value, " out of range for ", kind->mnemonic));
      }
      return mlir::Attribute::Enum(kind->mnemonic, kind->enum_values[value]);
    }
    case VhloAttr::kArray:
      a.kind = AKind::kArray;
      a.name = vhlo_name;
      RETURN_IF_ERROR(ReadAttributeList(r, depth, cost, a.elements));
      return a;
    case VhloAttr::kBool: {
      uint64_t value;
      RETURN_IF_ERROR(r.ReadVarInt(value));
      if (value > 1) return r.Error(absl::StrCat("boolean value ", value, " is not 0 or 1"));
      a = mlir::Attribute::Bool(value == 1);
      a.name = vhlo_name;
      return a;
    }
    case VhloAttr::kDictionary: {
      a.kind = AKind::kDict;
      a.name = vhlo_name;
      uint64_t count;
      RETURN_IF_ERROR(r.ReadCount(count, "dictionary entry", 2));
      for (uint64_t i = 0; i < count; ++i) {
        ASSIGN_OR_RETURN(std::string key, ReadStringAttribute(r, depth, cost));
        uint64_t index;
        RETURN_IF_ERROR(r.ReadVarInt(index));
        ASSIGN_OR_RETURN(const mlir::Attribute* value, Attribute(r, index, depth + 1));
        cost += AttributeCost(index);
        if (cost > kMaxNodesPerEntry) return r.Error("attribute has too many nested parts");
        a.fields.emplace_back(std::move(key), *value);
      }
      return a;
    }
    case VhloAttr::kFloat: {
      ASSIGN_OR_RETURN(const mlir::Type* type, ReadType(r, depth + 1));
      ASSIGN_OR_RETURN(a, FloatAttribute(r, *type));
      a.name = vhlo_name;
      return a;
    }
    case VhloAttr::kInteger: {
      ASSIGN_OR_RETURN(const mlir::Type* type, ReadType(r, depth + 1));
      ASSIGN_OR_RETURN(a, IntegerAttribute(r, *type));
      a.name = vhlo_name;
      return a;
    }
    case VhloAttr::kOutputOperandAlias: {
      std::vector<int64_t> output_tuple_indices, operand_tuple_indices;
      int64_t operand_index;
      for (std::vector<int64_t>* list : {&output_tuple_indices, &operand_tuple_indices}) {
        uint64_t count;
        RETURN_IF_ERROR(r.ReadCount(count, "index"));
        list->resize(count);
        for (int64_t& v : *list) RETURN_IF_ERROR(r.ReadSignedVarInt(v));
        if (list == &output_tuple_indices) RETURN_IF_ERROR(r.ReadSignedVarInt(operand_index));
      }
      a.kind = AKind::kStruct;
      a.name = vhlo_name;
      a.fields.emplace_back("outputTupleIndices",
                            mlir::Attribute::I64Array(std::move(output_tuple_indices)));
      a.fields.emplace_back("operandIndex", mlir::Attribute::Int(operand_index));
      a.fields.emplace_back("operandTupleIndices",
                            mlir::Attribute::I64Array(std::move(operand_tuple_indices)));
      cost += 3;
      return a;
    }
    case VhloAttr::kString: {
      absl::string_view text;
      RETURN_IF_ERROR(strings_.Get(r, text));
      a = mlir::Attribute::String(std::string(text));
      a.name = vhlo_name;
      return a;
    }
    case VhloAttr::kTensor: {
      ASSIGN_OR_RETURN(const mlir::Type* type, ReadType(r, depth + 1));
      ASSIGN_OR_RETURN(a, DenseAttribute(r, *type, /*packed_bools=*/true));
      a.name = vhlo_name;
      return a;
    }
    case VhloAttr::kType: {
      ASSIGN_OR_RETURN(const mlir::Type* type, ReadType(r, depth + 1));
      a.kind = AKind::kType;
      a.name = vhlo_name;
      a.type = *type;
      cost += TypeNodeCount(*type);
      return a;
    }
    case VhloAttr::kTypeExtensions: {
      uint64_t count;
      RETURN_IF_ERROR(r.ReadCount(count, "bound"));
      std::vector<int64_t> bounds(count);
      for (int64_t& b : bounds) {
        RETURN_IF_ERROR(r.ReadSignedVarInt(b));
        b = DimFromMlir(b);
      }
      a.kind = AKind::kStruct;
      a.name = vhlo_name;
      a.fields.emplace_back("bounds", mlir::Attribute::I64Array(std::move(bounds)));
      cost += 1;
      return a;
    }
    case VhloAttr::kResultAccuracy: {
      uint64_t atol_bits, rtol_bits;
      int64_t ulps;
      RETURN_IF_ERROR(ReadApInt(r, 64, atol_bits));
      RETURN_IF_ERROR(ReadApInt(r, 64, rtol_bits));
      RETURN_IF_ERROR(r.ReadSignedVarInt(ulps));
      const size_t mode_at = r.offset();
      ASSIGN_OR_RETURN(const mlir::Attribute* mode, ReadAttribute(r, depth + 1));
      if (mode->kind != AKind::kEnum || mode->name != "result_accuracy_mode_v1") {
        return r.ErrorAt(mode_at, "result accuracy mode must be a result_accuracy_mode_v1");
      }
      a.kind = AKind::kStruct;
      a.name = vhlo_name;
      for (auto [key, bits] : {std::pair<const char*, uint64_t>{"atol", atol_bits},
                               std::pair<const char*, uint64_t>{"rtol", rtol_bits}}) {
        mlir::Attribute f;
        f.kind = AKind::kFloat;
        f.float_value = *FloatBitsToDouble("f64", bits);
        f.type = mlir::Type::Scalar("f64");
        a.fields.emplace_back(key, std::move(f));
      }
      a.fields.emplace_back("ulps", mlir::Attribute::Int(ulps));
      a.fields.emplace_back("mode", *mode);
      cost += 4;
      return a;
    }
    case VhloAttr::kSubAxisInfo: {
      int64_t pre_size, size;
      RETURN_IF_ERROR(r.ReadSignedVarInt(pre_size));
      RETURN_IF_ERROR(r.ReadSignedVarInt(size));
      a.kind = AKind::kStruct;
      a.name = vhlo_name;
      a.fields.emplace_back("pre_size", mlir::Attribute::Int(pre_size));
      a.fields.emplace_back("size", mlir::Attribute::Int(size));
      cost += 2;
      return a;
    }
    case VhloAttr::kAxisRef: {
      a.kind = AKind::kStruct;
      a.name = vhlo_name;
      uint64_t index;
      RETURN_IF_ERROR(r.ReadVarInt(index));
      ASSIGN_OR_RETURN(const mlir::Attribute* name, Attribute(r, index, depth + 1));
      cost += AttributeCost(index);
      a.fields.emplace_back("name", *name);
      uint64_t has_sub_axis_info;
      RETURN_IF_ERROR(r.ReadVarInt(has_sub_axis_info));
      if (has_sub_axis_info > 1) return r.Error("sub_axis_info flag is not 0 or 1");
      if (has_sub_axis_info == 1) {
        RETURN_IF_ERROR(r.ReadVarInt(index));
        ASSIGN_OR_RETURN(const mlir::Attribute* info, Attribute(r, index, depth + 1));
        cost += AttributeCost(index);
        a.fields.emplace_back("sub_axis_info", *info);
      }
      return a;
    }
    case VhloAttr::kReplicaGroupMeshAxes: {
      a.kind = AKind::kStruct;
      a.name = vhlo_name;
      for (const char* key : {"mesh", "axes"}) {
        uint64_t index;
        RETURN_IF_ERROR(r.ReadVarInt(index));
        ASSIGN_OR_RETURN(const mlir::Attribute* field, Attribute(r, index, depth + 1));
        cost += AttributeCost(index);
        a.fields.emplace_back(key, *field);
      }
      return a;
    }
  }
  return r.ErrorAt(code_at, "unhandled VHLO attribute kind");
}

absl::StatusOr<mlir::Type> AttrTypeTable::VhloType(EncodingReader& r, int depth, int64_t& cost) {
  const size_t code_at = r.offset();
  uint64_t code;
  RETURN_IF_ERROR(r.ReadVarInt(code));
  const VhloTypeCode* kind = FindCode(VhloTypeCodes(), code);
  if (kind == nullptr) return r.ErrorAt(code_at, absl::StrCat("unknown VHLO type code ", code));
  mlir::Type t;
  // The element of a tensor, complex, quantized type must be a scalar.
  auto element_of = [&](const mlir::Type& e) -> absl::StatusOr<std::string> {
    if (e.kind != TKind::kScalar) {
      return r.Error(absl::StrCat("element type '", TypeText(e), "' is not a scalar type"));
    }
    return e.element;
  };
  switch (kind->shape) {
    case VhloType::kScalar:
      return mlir::Type::Scalar(kind->spelling);
    case VhloType::kComplex: {
      ASSIGN_OR_RETURN(const mlir::Type* e, ReadType(r, depth + 1));
      ASSIGN_OR_RETURN(std::string element, element_of(*e));
      return mlir::Type::Scalar(absl::StrCat("complex<", element, ">"));
    }
    case VhloType::kFunction:
      t.kind = TKind::kFunction;
      RETURN_IF_ERROR(ReadTypeList(r, depth, cost, t.elements));
      RETURN_IF_ERROR(ReadTypeList(r, depth, cost, t.results));
      return t;
    case VhloType::kRankedTensor:
    case VhloType::kRankedTensorWithEncoding:
    case VhloType::kBuffer: {
      std::string encoding;
      if (kind->shape == VhloType::kRankedTensorWithEncoding) {
        const size_t at = r.offset();
        ASSIGN_OR_RETURN(const mlir::Attribute* e, ReadAttribute(r, depth + 1));
        const mlir::Attribute* bounds = e->Field("bounds");
        if (e->kind == AKind::kStruct && e->name == "vhlo.type_extensions_v1" && bounds) {
          // Bounded dynamism, spelled as the text reader keeps StableHLO's
          // generic form, so the upgrade need not respell it.
          std::vector<std::string> parts;
          for (int64_t b : bounds->ints) parts.push_back(DimText(b));
          encoding = absl::StrCat("#stablehlo.type_extensions<bounds = [",
                                  absl::StrJoin(parts, ", "), "]>");
        } else if (e->kind == AKind::kOpaque) {
          encoding = CanonicalEncoding(e->text);
        } else {
          return r.ErrorAt(at, "unsupported tensor encoding attribute");
        }
      }
      std::vector<int64_t> dims;
      RETURN_IF_ERROR(ReadShape(r, dims));
      ASSIGN_OR_RETURN(const mlir::Type* e, ReadType(r, depth + 1));
      ASSIGN_OR_RETURN(std::string element, element_of(*e));
      t = mlir::Type::Tensor(std::move(dims), std::move(element));
      t.encoding = std::move(encoding);
      if (kind->shape == VhloType::kBuffer) {
        // !vhlo.buffer_v1<2xf32> is StableHLO's memref<2xf32>: kept as written.
        std::string text = "memref<";
        for (int64_t d : t.dims) absl::StrAppend(&text, DimText(d), "x");
        mlir::Type buffer;
        buffer.kind = TKind::kOther;
        buffer.element = absl::StrCat(text, t.element, ">");
        buffer.dims = t.dims;
        return buffer;
      }
      return t;
    }
    case VhloType::kToken:
      t.kind = TKind::kToken;
      return t;
    case VhloType::kTuple:
      t.kind = TKind::kTuple;
      RETURN_IF_ERROR(ReadTypeList(r, depth, cost, t.elements));
      return t;
    case VhloType::kQuantized:
    case VhloType::kQuantizedPerAxis: {
      const bool per_axis = kind->shape == VhloType::kQuantizedPerAxis;
      uint64_t flags, axis = 0;
      RETURN_IF_ERROR(r.ReadVarInt(flags));
      ASSIGN_OR_RETURN(const mlir::Type* storage, ReadType(r, depth + 1));
      ASSIGN_OR_RETURN(const mlir::Type* expressed, ReadType(r, depth + 1));
      ASSIGN_OR_RETURN(std::string expressed_text, element_of(*expressed));
      int64_t min, max;
      std::vector<std::string> params;
      if (!per_axis) {
        uint64_t scale_bits;
        int64_t zero_point;
        RETURN_IF_ERROR(ReadApInt(r, 64, scale_bits));
        RETURN_IF_ERROR(r.ReadSignedVarInt(zero_point));
        RETURN_IF_ERROR(r.ReadSignedVarInt(min));
        RETURN_IF_ERROR(r.ReadSignedVarInt(max));
        std::string p = DoubleText(*FloatBitsToDouble("f64", scale_bits));
        if (zero_point != 0) absl::StrAppend(&p, ":", zero_point);
        params.push_back(std::move(p));
      } else {
        RETURN_IF_ERROR(r.ReadVarInt(axis));
        RETURN_IF_ERROR(r.ReadSignedVarInt(min));
        RETURN_IF_ERROR(r.ReadSignedVarInt(max));
        uint64_t num_scales, num_zero_points;
        RETURN_IF_ERROR(r.ReadCount(num_scales, "scale"));
        std::vector<double> scales(num_scales);
        for (double& s : scales) {
          uint64_t bits;
          RETURN_IF_ERROR(ReadApInt(r, 64, bits));
          s = *FloatBitsToDouble("f64", bits);
        }
        RETURN_IF_ERROR(r.ReadCount(num_zero_points, "zero point"));
        if (num_zero_points != num_scales) {
          return r.Error(absl::StrCat(num_scales, " scales but ", num_zero_points, " zero points"));
        }
        for (uint64_t i = 0; i < num_zero_points; ++i) {
          int64_t zp;
          RETURN_IF_ERROR(r.ReadSignedVarInt(zp));
          params.push_back(absl::StrCat(DoubleText(scales[i]), ":", zp));
        }
      }
      if (storage->kind != TKind::kScalar) return r.Error("quantized storage type not a scalar");
      std::string text = absl::StrCat(
          "!quant.uniform<", QuantStorageText(*storage, flags & 1, min, max), ":", expressed_text);
      if (per_axis) {
        absl::StrAppend(&text, ":", axis, ", {", absl::StrJoin(params, ", "), "}>");
      } else {
        absl::StrAppend(&text, ", ", params[0], ">");
      }
      cost += static_cast<int64_t>(params.size());
      return mlir::Type::Scalar(std::move(text));
    }
    case VhloType::kUnrankedTensor: {
      ASSIGN_OR_RETURN(const mlir::Type* e, ReadType(r, depth + 1));
      ASSIGN_OR_RETURN(std::string element, element_of(*e));
      t = mlir::Type::Tensor({}, std::move(element));
      t.ranked = false;
      return t;
    }
    case VhloType::kFuture: {
      // !stablehlo.future<T, ...>: kept as written, the types in `elements`.
      t.kind = TKind::kOther;
      RETURN_IF_ERROR(ReadTypeList(r, depth, cost, t.elements));
      std::vector<std::string> parts;
      for (const mlir::Type& e : t.elements) parts.push_back(TypeText(e));
      t.element = absl::StrCat("!stablehlo.future<", absl::StrJoin(parts, ", "), ">");
      return t;
    }
  }
  return r.ErrorAt(code_at, "unhandled VHLO type kind");
}

// ---------------------------------------------------------------------------
// Builtin attributes and types
// ---------------------------------------------------------------------------

absl::StatusOr<mlir::Attribute> AttrTypeTable::BuiltinAttribute(EncodingReader& r, int depth,
                                                                int64_t& cost, bool& skip_rest) {
  const size_t code_at = r.offset();
  uint64_t code;
  RETURN_IF_ERROR(r.ReadVarInt(code));
  mlir::Attribute a;
  switch (code) {
    case kBuiltinArray:
      a.kind = AKind::kArray;
      RETURN_IF_ERROR(ReadAttributeList(r, depth, cost, a.elements));
      return a;
    case kBuiltinDictionary: {
      a.kind = AKind::kDict;
      uint64_t count;
      RETURN_IF_ERROR(r.ReadCount(count, "dictionary entry", 2));
      for (uint64_t i = 0; i < count; ++i) {
        ASSIGN_OR_RETURN(std::string key, ReadStringAttribute(r, depth, cost));
        uint64_t index;
        RETURN_IF_ERROR(r.ReadVarInt(index));
        ASSIGN_OR_RETURN(const mlir::Attribute* value, Attribute(r, index, depth + 1));
        cost += AttributeCost(index);
        if (cost > kMaxNodesPerEntry) return r.Error("attribute has too many nested parts");
        a.fields.emplace_back(std::move(key), *value);
      }
      return a;
    }
    case kBuiltinString:
    case kBuiltinStringWithType: {
      absl::string_view text;
      RETURN_IF_ERROR(strings_.Get(r, text));
      if (code == kBuiltinStringWithType) RETURN_IF_ERROR(ReadType(r, depth + 1).status());
      return mlir::Attribute::String(std::string(text));
    }
    case kBuiltinFlatSymbolRef:
    case kBuiltinSymbolRef: {
      a.kind = AKind::kSymbol;
      ASSIGN_OR_RETURN(a.text, ReadStringAttribute(r, depth, cost));
      if (code == kBuiltinSymbolRef) {
        uint64_t count;
        RETURN_IF_ERROR(r.ReadCount(count, "nested reference"));
        for (uint64_t i = 0; i < count; ++i) {
          const size_t at = r.offset();
          ASSIGN_OR_RETURN(const mlir::Attribute* nested, ReadAttribute(r, depth + 1));
          if (nested->kind != AKind::kSymbol) return r.ErrorAt(at, "expected a symbol");
          absl::StrAppend(&a.text, "::@", nested->text);
        }
      }
      return a;
    }
    case kBuiltinTypeAttr: {
      ASSIGN_OR_RETURN(const mlir::Type* type, ReadType(r, depth + 1));
      a.kind = AKind::kType;
      a.type = *type;
      cost += TypeNodeCount(*type);
      return a;
    }
    case kBuiltinUnit:
      a.kind = AKind::kUnit;
      return a;
    case kBuiltinInteger:
    case kBuiltinFloat: {
      ASSIGN_OR_RETURN(const mlir::Type* type, ReadType(r, depth + 1));
      if (code == kBuiltinInteger && type->kind == TKind::kScalar && type->element == "i1") {
        uint64_t bits;
        RETURN_IF_ERROR(ReadApInt(r, 1, bits));
        return mlir::Attribute::Bool(bits & 1);
      }
      return code == kBuiltinInteger ? IntegerAttribute(r, *type) : FloatAttribute(r, *type);
    }
    case kBuiltinCallSiteLoc:
    case kBuiltinFileLineColLoc:
    case kBuiltinFusedLoc:
    case kBuiltinFusedLocWithMetadata:
    case kBuiltinNameLoc:
    case kBuiltinUnknownLoc:
      // Locations are only read for Operation::loc (DecodeLocation).
      a.kind = AKind::kOpaque;
      a.text = "loc(unknown)";
      skip_rest = true;
      return a;
    case kBuiltinDenseResourceElements: {
      ASSIGN_OR_RETURN(const mlir::Type* type, ReadType(r, depth + 1));
      uint64_t handle;
      RETURN_IF_ERROR(r.ReadVarInt(handle));
      if (handle >= resource_keys_.size()) {
        return r.Error(absl::StrCat("resource handle ", handle, " out of range (",
                                    resource_keys_.size(), " resources)"));
      }
      a.kind = AKind::kDenseResource;
      a.type = *type;
      a.name = resource_keys_[handle];
      return a;
    }
    case kBuiltinDenseArray: {
      ASSIGN_OR_RETURN(const mlir::Type* type, ReadType(r, depth + 1));
      return DenseArrayAttribute(r, *type);
    }
    case kBuiltinDenseIntOrFPElements: {
      ASSIGN_OR_RETURN(const mlir::Type* type, ReadType(r, depth + 1));
      // Builtin i1 data is bit-packed too when its size says so.
      return DenseAttribute(r, *type, /*packed_bools=*/true);
    }
    case kBuiltinDistinct: {
      ASSIGN_OR_RETURN(const mlir::Attribute* referenced, ReadAttribute(r, depth + 1));
      return *referenced;
    }
    case kBuiltinDenseStringElements:
    case kBuiltinSparseElements:
      a.kind = AKind::kOpaque;
      a.text = code == kBuiltinSparseElements ? "sparse<...>" : "dense<\"...\">";
      skip_rest = true;
      return a;
    default:
      return r.ErrorAt(code_at, absl::StrCat("unknown builtin attribute code ", code));
  }
}

absl::StatusOr<mlir::Type> AttrTypeTable::BuiltinType(EncodingReader& r, int depth, int64_t& cost) {
  const size_t code_at = r.offset();
  uint64_t code;
  RETURN_IF_ERROR(r.ReadVarInt(code));
  mlir::Type t;
  switch (code) {
    case kBuiltinIntegerType: {
      uint64_t width_and_signedness;
      RETURN_IF_ERROR(r.ReadVarInt(width_and_signedness));
      const uint64_t width = width_and_signedness >> 2;
      const uint64_t signedness = width_and_signedness & 3;  // signless, signed, unsigned
      if (width == 0 || width > (1 << 24) || signedness == 3) {
        return r.ErrorAt(code_at, "invalid integer type");
      }
      const char* prefix = signedness == 0 ? "i" : signedness == 1 ? "si" : "ui";
      return mlir::Type::Scalar(absl::StrCat(prefix, width));
    }
    case kBuiltinIndexType:
      return mlir::Type::Scalar("index");
    case kBuiltinFunctionType:
      t.kind = TKind::kFunction;
      RETURN_IF_ERROR(ReadTypeList(r, depth, cost, t.elements));
      RETURN_IF_ERROR(ReadTypeList(r, depth, cost, t.results));
      return t;
    case kBuiltinBF16:
      return mlir::Type::Scalar("bf16");
    case kBuiltinF16:
      return mlir::Type::Scalar("f16");
    case kBuiltinF32:
      return mlir::Type::Scalar("f32");
    case kBuiltinF64:
      return mlir::Type::Scalar("f64");
    case kBuiltinF80:
      return mlir::Type::Scalar("f80");
    case kBuiltinF128:
      return mlir::Type::Scalar("f128");
    case kBuiltinComplex: {
      ASSIGN_OR_RETURN(const mlir::Type* e, ReadType(r, depth + 1));
      return mlir::Type::Scalar(absl::StrCat("complex<", TypeText(*e), ">"));
    }
    case kBuiltinNone:
      return mlir::Type::Scalar("none");
    case kBuiltinRankedTensor:
    case kBuiltinRankedTensorWithEncoding: {
      std::string encoding;
      if (code == kBuiltinRankedTensorWithEncoding) {
        ASSIGN_OR_RETURN(const mlir::Attribute* e, ReadAttribute(r, depth + 1));
        encoding = e->kind == AKind::kOpaque ? CanonicalEncoding(e->text) : "#encoding";
      }
      std::vector<int64_t> dims;
      RETURN_IF_ERROR(ReadShape(r, dims));
      ASSIGN_OR_RETURN(const mlir::Type* e, ReadType(r, depth + 1));
      t = mlir::Type::Tensor(std::move(dims), TypeText(*e));
      t.encoding = std::move(encoding);
      return t;
    }
    case kBuiltinTuple:
      t.kind = TKind::kTuple;
      RETURN_IF_ERROR(ReadTypeList(r, depth, cost, t.elements));
      return t;
    case kBuiltinUnrankedTensor: {
      ASSIGN_OR_RETURN(const mlir::Type* e, ReadType(r, depth + 1));
      t = mlir::Type::Tensor({}, TypeText(*e));
      t.ranked = false;
      return t;
    }
    case kBuiltinMemRef:
    case kBuiltinMemRefWithMemSpace:
    case kBuiltinVector:
    case kBuiltinVectorScalable: {
      if (code == kBuiltinMemRefWithMemSpace) RETURN_IF_ERROR(ReadAttribute(r, depth + 1).status());
      std::vector<int64_t> dims;
      RETURN_IF_ERROR(ReadShape(r, dims));
      ASSIGN_OR_RETURN(const mlir::Type* e, ReadType(r, depth + 1));
      if (code == kBuiltinMemRef || code == kBuiltinMemRefWithMemSpace) {
        RETURN_IF_ERROR(ReadAttribute(r, depth + 1).status());  // layout
      } else if (code == kBuiltinVectorScalable) {
        uint64_t flags;
        RETURN_IF_ERROR(r.ReadCount(flags, "scalable flag"));
        RETURN_IF_ERROR(r.Skip(flags));
      }
      std::string text = code <= kBuiltinMemRefWithMemSpace ? "memref<" : "vector<";
      for (int64_t d : dims) absl::StrAppend(&text, DimText(d), "x");
      t.kind = TKind::kOther;
      t.dims = std::move(dims);
      t.element = absl::StrCat(text, TypeText(*e), ">");
      return t;
    }
    case kBuiltinUnrankedMemRef:
    case kBuiltinUnrankedMemRefWithMemSpace: {
      if (code == kBuiltinUnrankedMemRefWithMemSpace) {
        RETURN_IF_ERROR(ReadAttribute(r, depth + 1).status());
      }
      ASSIGN_OR_RETURN(const mlir::Type* e, ReadType(r, depth + 1));
      t.kind = TKind::kOther;
      t.element = absl::StrCat("memref<*x", TypeText(*e), ">");
      return t;
    }
    default:
      return r.ErrorAt(code_at, absl::StrCat("unknown builtin type code ", code));
  }
}

// ---------------------------------------------------------------------------
// Locations (best effort, never an error)
// ---------------------------------------------------------------------------

mlir::Location AttrTypeTable::DecodeLocation(uint64_t index, const std::string& filename,
                                             int depth) {
  mlir::Location loc{filename, 0, 0};
  if (index >= attr_entries_.size() || depth > kMaxNestingDepth) return loc;
  const Entry& entry = attr_entries_[index];
  if (!entry.custom || dialects_[entry.dialect] != "builtin") return loc;
  EncodingReader r = EntryReader(entry, /*is_type=*/false, index);
  uint64_t code;
  if (!r.ReadVarInt(code).ok()) return loc;
  uint64_t a, b, c;
  switch (code) {
    case kBuiltinFileLineColLoc: {
      // filename: StringAttr, line: varint, column: varint.
      if (!r.ReadVarInt(a).ok() || !r.ReadVarInt(b).ok() || !r.ReadVarInt(c).ok()) return loc;
      absl::StatusOr<const mlir::Attribute*> file = Attribute(r, a, depth + 1);
      if (file.ok() && (*file)->kind == AKind::kString) loc.file = (*file)->text;
      loc.line = static_cast<int>(std::min<uint64_t>(b, 1 << 30));
      loc.column = static_cast<int>(std::min<uint64_t>(c, 1 << 30));
      return loc;
    }
    case kBuiltinNameLoc:  // name, child
      if (!r.ReadVarInt(a).ok() || !r.ReadVarInt(b).ok()) return loc;
      return DecodeLocation(b, filename, depth + 1);
    case kBuiltinCallSiteLoc:  // callee, caller
      if (!r.ReadVarInt(a).ok()) return loc;
      return DecodeLocation(a, filename, depth + 1);
    case kBuiltinFusedLoc:
    case kBuiltinFusedLocWithMetadata:  // locations[], ...: the first known one
      if (!r.ReadVarInt(a).ok() || a == 0 || !r.ReadVarInt(b).ok()) return loc;
      return DecodeLocation(b, filename, depth + 1);
    default:
      return loc;
  }
}

}  // namespace xlite::vhlo::bytecode
