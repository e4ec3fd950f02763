#include "xlite/vhlo/bytecode_writer.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "xlite/ir/literal.h"
#include "xlite/ir/primitive_type.h"
#include "xlite/ir/shape.h"
#include "xlite/stablehlo/element_types.h"
#include "xlite/stablehlo/mlir_parser.h"
#include "xlite/stablehlo/printer.h"
#include "xlite/support/status.h"
#include "xlite/vhlo/bytecode_attributes.h"
#include "xlite/vhlo/bytecode_codes.h"
#include "xlite/vhlo/bytecode_encoding.h"
#include "xlite/vhlo/downgrade.h"
#include "xlite/vhlo/vhlo_conversion_tables.h"
#include "xlite/vhlo/vhlo_op_properties.h"

namespace xlite::vhlo {
namespace {

using bytecode::EncodingWriter;
using mlir::Attribute;
using mlir::NamedAttribute;
using mlir::Operation;
using mlir::Type;
using AKind = mlir::Attribute::Kind;
using TKind = mlir::Type::Kind;

using bytecode::kMagic;

// Which bytecode version each StableHLO version writes (from the goldens:
// the first version of each row writes it until the next row).
struct BytecodeVersionRow {
  Version from;
  uint64_t bytecode_version;
};
constexpr BytecodeVersionRow kBytecodeVersions[] = {
    {{0, 9, 0}, 0}, {{0, 10, 0}, 1}, {{0, 13, 0}, 3}, {{0, 14, 0}, 4}, {{0, 15, 0}, 6},
};

// The codes are the reader's tables (bytecode_codes.h), looked up by shape.
using AttrShape = bytecode::VhloAttr;
using TypeShape = bytecode::VhloType;
using bytecode::FloatWidthOf;
using bytecode::kMlirDynamic;
using bytecode::VhloAttrCodeOf;
using bytecode::VhloTypeCodeOf;
using enum bytecode::BuiltinAttrCode;
using enum bytecode::BuiltinTypeCode;
using enum bytecode::Dialect;

int64_t DimToMlir(int64_t d) { return d == Type::kDynamic ? kMlirDynamic : d; }

// Ops whose regions are isolated from above (number their values afresh).
bool IsIsolated(const Operation& op) {
  return op.name == "builtin.module" || op.name == "vhlo.func_v1";
}

// The properties of an op: VHLO's table, or builtin.module's two optional ones.
std::vector<PropertyName> PropertiesOf(const std::string& op_name) {
  if (op_name == "builtin.module") return {{"sym_name", true}, {"sym_visibility", true}};
  for (size_t count = 1; count <= 32; ++count) {
    if (const std::vector<PropertyName>* names = FindPropertyNames(op_name, count)) {
      return *names;
    }
  }
  return {};
}

// Bits of a float value in `element`'s encoding; nullopt if unsupported.
std::optional<uint64_t> FloatBits(absl::string_view element, double value) {
  if (element == "tf32") {
    float f = static_cast<float>(value);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return bits >> 13;
  }
  std::optional<PrimitiveType> type = mlir::PrimitiveTypeOf(element);
  if (!type || !IsFloatingPoint(*type)) return std::nullopt;
  Literal one(Shape::Array(*type, {}));
  one.SetDouble(0, value);
  return one.GetBits(0);
}

// MLIR's APInt with a known width: a byte up to 8 bits, else a signed varint
// of the zero-extended value.
void WriteApInt(EncodingWriter& w, int width, uint64_t bits) {
  if (width < 64) bits &= (uint64_t{1} << width) - 1;
  if (width <= 8) {
    w.WriteByte(static_cast<uint8_t>(bits));
    return;
  }
  w.WriteSignedVarInt(static_cast<int64_t>(bits));
}

// A quantized element type in MLIR's quant spelling, taken apart.
struct QuantType {
  bool is_signed = true;
  int storage_width = 8;
  int64_t min = 0, max = 0;
  std::string expressed;
  std::optional<uint64_t> axis;
  std::vector<double> scales;
  std::vector<int64_t> zero_points;
};

// "!quant.uniform<i8<-8:7>:f32:0, {0.5:1, 2.0}>" / "!quant.uniform<u8:f32, 0.5>"
absl::StatusOr<QuantType> ParseQuant(absl::string_view text) {
  QuantType q;
  absl::string_view body = text;
  if (!absl::ConsumePrefix(&body, "!quant.uniform<") || !absl::ConsumeSuffix(&body, ">")) {
    return absl::InvalidArgumentError(absl::StrCat("unsupported quantized type ", text));
  }
  const size_t comma = body.find(", ");
  if (comma == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("malformed quantized type ", text));
  }
  absl::string_view head = body.substr(0, comma);
  absl::string_view params = body.substr(comma + 2);
  // Storage: i8, u8, i8<-8:7>.
  absl::string_view storage = head;
  bool has_range = false;
  size_t storage_end = head.find(':');
  if (const size_t lt = head.find('<'); lt != absl::string_view::npos && lt < storage_end) {
    has_range = true;
    const size_t gt = head.find('>');
    absl::string_view range = head.substr(lt + 1, gt - lt - 1);
    std::vector<absl::string_view> bounds = absl::StrSplit(range, ':');
    if (bounds.size() != 2 || !absl::SimpleAtoi(bounds[0], &q.min) ||
        !absl::SimpleAtoi(bounds[1], &q.max)) {
      return absl::InvalidArgumentError(absl::StrCat("malformed quantized range in ", text));
    }
    storage = head.substr(0, lt);
    storage_end = head.find(':', gt);
  } else {
    storage = head.substr(0, storage_end);
  }
  q.is_signed = absl::StartsWith(storage, "i");
  if (!absl::SimpleAtoi(storage.substr(q.is_signed ? 1 : (absl::StartsWith(storage, "ui") ? 2 : 1)),
                        &q.storage_width)) {
    return absl::InvalidArgumentError(absl::StrCat("malformed quantized storage in ", text));
  }
  if (!has_range) {
    const int w = q.storage_width;
    q.min = q.is_signed ? -(int64_t{1} << (w - 1)) : 0;
    q.max = q.is_signed ? (int64_t{1} << (w - 1)) - 1 : (int64_t{1} << w) - 1;
  }
  std::vector<absl::string_view> rest = absl::StrSplit(head.substr(storage_end + 1), ':');
  q.expressed = std::string(rest[0]);
  if (rest.size() > 1) {
    uint64_t axis = 0;
    if (!absl::SimpleAtoi(rest[1], &axis)) {
      return absl::InvalidArgumentError(absl::StrCat("malformed quantization axis in ", text));
    }
    q.axis = axis;
  }
  absl::ConsumePrefix(&params, "{");
  absl::ConsumeSuffix(&params, "}");
  for (absl::string_view p : absl::StrSplit(params, ',', absl::SkipWhitespace())) {
    p = absl::StripAsciiWhitespace(p);
    std::vector<absl::string_view> sz = absl::StrSplit(p, ':');
    double scale = 0;
    int64_t zero_point = 0;
    if (!absl::SimpleAtod(sz[0], &scale) ||
        (sz.size() > 1 && !absl::SimpleAtoi(sz[1], &zero_point))) {
      return absl::InvalidArgumentError(absl::StrCat("malformed quantization scale in ", text));
    }
    q.scales.push_back(scale);
    q.zero_points.push_back(zero_point);
  }
  if (q.scales.empty() || (!q.axis && q.scales.size() != 1)) {
    return absl::InvalidArgumentError(absl::StrCat("malformed quantized type ", text));
  }
  return q;
}

uint64_t DoubleBits(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  return bits;
}

// --------------------------------------------------------------- Writer
class Writer {
 public:
  explicit Writer(const Version& target) : target_(target), version_(BytecodeVersionFor(target)) {}

  absl::StatusOr<std::string> Write(const Operation& module) {
    String("builtin");
    String("vhlo");
    ASSIGN_OR_RETURN(unknown_loc_, BuiltinEntry(false, [](EncodingWriter& w) -> absl::Status {
                       w.WriteVarInt(kBuiltinUnknownLoc);
                       return absl::OkStatus();
                     }));
    // The IR first: it interns every name, attribute and type.
    NumberValues(module);
    EncodingWriter ir;
    ir.WriteVarIntWithFlag(1, false);  // the top-level block: one op, no arguments
    RETURN_IF_ERROR(WriteOp(ir, module));

    EncodingWriter out;
    out.WriteBytes(kMagic);
    out.WriteVarInt(version_);
    out.WriteNulTerminated(absl::StrCat("StableHLO_v", target_.ToString()));
    out.WriteSection(bytecode::kDialectSection, DialectSection());
    EncodingWriter offsets, entries;
    AttrTypeSections(offsets, entries);
    out.WriteSection(bytecode::kAttrTypeOffsetSection, offsets.bytes());
    out.WriteSection(bytecode::kAttrTypeSection, entries.bytes());
    out.WriteSection(bytecode::kIrSection, ir.bytes());
    EncodingWriter resource_offsets;
    resource_offsets.WriteVarInt(0);  // no external resource groups
    out.WriteSection(bytecode::kResourceOffsetSection, resource_offsets.bytes());
    out.WriteSection(bytecode::kResourceSection, "");
    out.WriteSection(bytecode::kStringSection, StringSection());
    if (version_ >= bytecode::kVersionNativeProperties) {
      EncodingWriter properties;
      properties.WriteVarInt(properties_.size());
      for (const std::string& p : properties_) {
        properties.WriteVarInt(p.size());
        properties.WriteBytes(p);
      }
      out.WriteSection(bytecode::kPropertiesSection, properties.bytes());
    }
    return out.bytes();
  }

 private:
  struct Entry {
    uint64_t dialect;
    std::string bytes;
    bool custom = true;
  };
  using Encoder = std::function<absl::Status(EncodingWriter&)>;

  // ------------------------------------------------------------- strings
  uint64_t String(absl::string_view s) {
    auto [it, inserted] = string_index_.try_emplace(std::string(s), strings_.size());
    if (inserted) strings_.emplace_back(s);
    return it->second;
  }

  std::string StringSection() const {
    EncodingWriter w;
    w.WriteVarInt(strings_.size());
    for (auto it = strings_.rbegin(); it != strings_.rend(); ++it) w.WriteVarInt(it->size() + 1);
    for (const std::string& s : strings_) w.WriteNulTerminated(s);
    return w.bytes();
  }

  // ------------------------------------------------------------ dialects
  uint64_t OpName(const std::string& name) {
    auto it = op_index_.find(name);
    if (it != op_index_.end()) return it->second;
    const uint64_t index = op_names_.size();
    op_index_[name] = index;
    op_names_.push_back(name);
    return index;
  }

  std::string DialectSection() {
    EncodingWriter w;
    w.WriteVarInt(2);
    for (const char* dialect : {"builtin", "vhlo"}) {
      if (version_ >= bytecode::kVersionDialectVersioning) {
        w.WriteVarIntWithFlag(String(dialect), false);
      } else {
        w.WriteVarInt(String(dialect));
      }
    }
    if (version_ >= bytecode::kVersionElideBlockArgLoc) w.WriteVarInt(op_names_.size());
    // Op names grouped by dialect, in the order of their indices.
    size_t i = 0;
    while (i < op_names_.size()) {
      const bool is_vhlo = absl::StartsWith(op_names_[i], "vhlo.");
      size_t j = i;
      while (j < op_names_.size() && absl::StartsWith(op_names_[j], "vhlo.") == is_vhlo) ++j;
      w.WriteVarInt(is_vhlo ? kVhloDialect : kBuiltinDialect);
      w.WriteVarInt(j - i);
      for (size_t k = i; k < j; ++k) {
        absl::string_view name = op_names_[k];
        name.remove_prefix(name.find('.') + 1);
        const uint64_t index = String(name);
        if (version_ >= bytecode::kVersionNativeProperties) {
          w.WriteVarIntWithFlag(index, true);  // registered
        } else {
          w.WriteVarInt(index);
        }
      }
      i = j;
    }
    return w.bytes();
  }

  // ------------------------------------------------------ attribute table
  // Entries are numbered as they are first used (children first), dedup'd by
  // their encoding; each index space is written as runs of one dialect.
  absl::StatusOr<uint64_t> Intern(std::vector<Entry>& table,
                                  absl::flat_hash_map<std::string, uint64_t>& index,
                                  uint64_t dialect, bool custom, const Encoder& encode) {
    EncodingWriter w;
    RETURN_IF_ERROR(encode(w));
    std::string key = absl::StrCat(dialect, custom ? "c" : "t", w.bytes());
    auto it = index.find(key);
    if (it != index.end()) return it->second;
    const uint64_t id = table.size();
    table.push_back(Entry{dialect, w.bytes(), custom});
    index.emplace(std::move(key), id);
    return id;
  }
  absl::StatusOr<uint64_t> BuiltinEntry(bool custom_text, const Encoder& encode) {
    return Intern(attrs_, attr_index_, kBuiltinDialect, !custom_text, encode);
  }

  void AttrTypeSections(EncodingWriter& offsets, EncodingWriter& entries) const {
    offsets.WriteVarInt(attrs_.size());
    offsets.WriteVarInt(types_.size());
    for (const std::vector<Entry>* table : {&attrs_, &types_}) {
      size_t i = 0;
      while (i < table->size()) {
        size_t j = i;
        while (j < table->size() && (*table)[j].dialect == (*table)[i].dialect) ++j;
        offsets.WriteVarInt((*table)[i].dialect);
        offsets.WriteVarInt(j - i);
        for (size_t k = i; k < j; ++k) {
          offsets.WriteVarIntWithFlag((*table)[k].bytes.size(), (*table)[k].custom);
          entries.WriteBytes((*table)[k].bytes);
        }
        i = j;
      }
    }
  }

  // ----------------------------------------------------------------- types
  absl::StatusOr<uint64_t> VhloType(const Encoder& encode) {
    return Intern(types_, type_index_, kVhloDialect, true, encode);
  }

  absl::StatusOr<uint64_t> ScalarType(const std::string& element) {
    if (const bytecode::VhloTypeCode* scalar = bytecode::FindVhloScalarTypeCode(element)) {
      const uint64_t c = scalar->code;
      return VhloType([c](EncodingWriter& w) -> absl::Status {
        w.WriteVarInt(c);
        return absl::OkStatus();
      });
    }
    absl::string_view inner = element;
    if (absl::ConsumePrefix(&inner, "complex<") && absl::ConsumeSuffix(&inner, ">")) {
      ASSIGN_OR_RETURN(uint64_t e, ScalarType(std::string(inner)));
      return VhloType([e](EncodingWriter& w) -> absl::Status {
        w.WriteVarInt(VhloTypeCodeOf(TypeShape::kComplex));
        w.WriteVarInt(e);
        return absl::OkStatus();
      });
    }
    if (absl::StartsWith(element, "!quant.uniform")) {
      ASSIGN_OR_RETURN(QuantType q, ParseQuant(element));
      ASSIGN_OR_RETURN(uint64_t storage, ScalarType(absl::StrCat("i", q.storage_width)));
      ASSIGN_OR_RETURN(uint64_t expressed, ScalarType(q.expressed));
      return VhloType([&q, storage, expressed](EncodingWriter& w) -> absl::Status {
        w.WriteVarInt(q.axis ? VhloTypeCodeOf(TypeShape::kQuantizedPerAxis)
                             : VhloTypeCodeOf(TypeShape::kQuantized));
        w.WriteVarInt(q.is_signed ? 1 : 0);
        w.WriteVarInt(storage);
        w.WriteVarInt(expressed);
        if (!q.axis) {
          WriteApInt(w, 64, DoubleBits(q.scales[0]));
          w.WriteSignedVarInt(q.zero_points[0]);
          w.WriteSignedVarInt(q.min);
          w.WriteSignedVarInt(q.max);
          return absl::OkStatus();
        }
        w.WriteVarInt(*q.axis);
        w.WriteSignedVarInt(q.min);
        w.WriteSignedVarInt(q.max);
        w.WriteVarInt(q.scales.size());
        for (double s : q.scales) WriteApInt(w, 64, DoubleBits(s));
        w.WriteVarInt(q.zero_points.size());
        for (int64_t z : q.zero_points) w.WriteSignedVarInt(z);
        return absl::OkStatus();
      });
    }
    return absl::InvalidArgumentError(absl::StrCat("type '", element, "' has no VHLO encoding"));
  }

  absl::StatusOr<std::vector<uint64_t>> TypeList(const std::vector<Type>& types) {
    std::vector<uint64_t> out;
    for (const Type& t : types) {
      ASSIGN_OR_RETURN(uint64_t i, TypeRef(t));
      out.push_back(i);
    }
    return out;
  }

  static void WriteList(EncodingWriter& w, const std::vector<uint64_t>& list) {
    w.WriteVarInt(list.size());
    for (uint64_t i : list) w.WriteVarInt(i);
  }
  static void WriteShape(EncodingWriter& w, const std::vector<int64_t>& dims) {
    w.WriteVarInt(dims.size());
    for (int64_t d : dims) w.WriteSignedVarInt(DimToMlir(d));
  }

  // !stablehlo.future<T, ...>: the types, from `elements` or from the text.
  absl::StatusOr<uint64_t> FutureType(const Type& t) {
    std::vector<Type> types = t.elements;
    absl::string_view inner = t.element;
    if (types.empty() && absl::ConsumePrefix(&inner, "!stablehlo.future<") &&
        absl::ConsumeSuffix(&inner, ">")) {
      int depth = 0;
      size_t start = 0;
      for (size_t i = 0; i <= inner.size(); ++i) {
        const char c = i < inner.size() ? inner[i] : ',';
        if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
        if (c == '>' || c == ')' || c == ']' || c == '}') --depth;
        if (c != ',' || depth != 0) continue;
        ASSIGN_OR_RETURN(
            Type part,
            mlir::ParseTypeText(absl::StripAsciiWhitespace(inner.substr(start, i - start))));
        types.push_back(std::move(part));
        start = i + 1;
      }
    }
    ASSIGN_OR_RETURN(std::vector<uint64_t> elements, TypeList(types));
    return VhloType([&elements](EncodingWriter& w) -> absl::Status {
      w.WriteVarInt(VhloTypeCodeOf(TypeShape::kFuture));
      WriteList(w, elements);
      return absl::OkStatus();
    });
  }

  absl::StatusOr<uint64_t> TypeRef(const Type& t) {
    if (absl::StartsWith(t.element, "!stablehlo.future<") && t.kind != TKind::kTensor) {
      return FutureType(t);
    }
    switch (t.kind) {
      case TKind::kScalar:
        return ScalarType(t.element);
      case TKind::kTensor: {
        ASSIGN_OR_RETURN(uint64_t element, ScalarType(t.element));
        if (!t.ranked) {
          return VhloType([element](EncodingWriter& w) -> absl::Status {
            w.WriteVarInt(VhloTypeCodeOf(TypeShape::kUnrankedTensor));
            w.WriteVarInt(element);
            return absl::OkStatus();
          });
        }
        std::optional<uint64_t> encoding;
        if (!t.encoding.empty()) {
          // Bounded dynamism in either StableHLO spelling: the generic
          // type_extensions (as read) or the pretty bounds.
          absl::string_view bounds = t.encoding;
          const bool generic =
              absl::ConsumePrefix(&bounds, "#stablehlo.type_extensions<bounds = [") &&
              absl::ConsumeSuffix(&bounds, "]>");
          if (!generic && !(absl::ConsumePrefix(&bounds, "#stablehlo.bounds<") &&
                            absl::ConsumeSuffix(&bounds, ">"))) {
            return absl::InvalidArgumentError(
                absl::StrCat("tensor encoding '", t.encoding, "' has no VHLO encoding"));
          }
          std::vector<int64_t> values;
          for (absl::string_view b : absl::StrSplit(bounds, ',', absl::SkipWhitespace())) {
            b = absl::StripAsciiWhitespace(b);
            int64_t v = Type::kDynamic;
            if (b != "?" && !absl::SimpleAtoi(b, &v)) {
              return absl::InvalidArgumentError(absl::StrCat("bad bound '", b, "'"));
            }
            values.push_back(v);
          }
          ASSIGN_OR_RETURN(encoding, VhloAttr([&values](EncodingWriter& w) -> absl::Status {
                             w.WriteVarInt(VhloAttrCodeOf(AttrShape::kTypeExtensions));
                             w.WriteVarInt(values.size());
                             for (int64_t v : values) w.WriteSignedVarInt(DimToMlir(v));
                             return absl::OkStatus();
                           }));
        }
        return VhloType([&t, element, encoding](EncodingWriter& w) -> absl::Status {
          if (encoding) {
            w.WriteVarInt(VhloTypeCodeOf(TypeShape::kRankedTensorWithEncoding));
            w.WriteVarInt(*encoding);
          } else {
            w.WriteVarInt(VhloTypeCodeOf(TypeShape::kRankedTensor));
          }
          WriteShape(w, t.dims);
          w.WriteVarInt(element);
          return absl::OkStatus();
        });
      }
      case TKind::kToken:
        return VhloType([](EncodingWriter& w) -> absl::Status {
          w.WriteVarInt(VhloTypeCodeOf(TypeShape::kToken));
          return absl::OkStatus();
        });
      case TKind::kTuple: {
        ASSIGN_OR_RETURN(std::vector<uint64_t> elements, TypeList(t.elements));
        return VhloType([&elements](EncodingWriter& w) -> absl::Status {
          w.WriteVarInt(VhloTypeCodeOf(TypeShape::kTuple));
          WriteList(w, elements);
          return absl::OkStatus();
        });
      }
      case TKind::kFunction: {
        ASSIGN_OR_RETURN(std::vector<uint64_t> inputs, TypeList(t.elements));
        ASSIGN_OR_RETURN(std::vector<uint64_t> results, TypeList(t.results));
        return VhloType([&inputs, &results](EncodingWriter& w) -> absl::Status {
          w.WriteVarInt(VhloTypeCodeOf(TypeShape::kFunction));
          WriteList(w, inputs);
          WriteList(w, results);
          return absl::OkStatus();
        });
      }
      case TKind::kOther: {
        absl::string_view memref = t.element;
        if (absl::ConsumePrefix(&memref, "memref<") && absl::ConsumeSuffix(&memref, ">")) {
          // memref<2x?xf32>: the element follows the last 'x' of the shape.
          std::vector<int64_t> dims;
          std::vector<absl::string_view> parts = absl::StrSplit(memref, 'x');
          std::string element(parts.back());
          for (size_t i = 0; i + 1 < parts.size(); ++i) {
            int64_t d = Type::kDynamic;
            if (parts[i] != "?" && !absl::SimpleAtoi(parts[i], &d)) {
              return absl::InvalidArgumentError(absl::StrCat("unsupported type ", t.element));
            }
            dims.push_back(d);
          }
          ASSIGN_OR_RETURN(uint64_t e, ScalarType(element));
          return VhloType([dims, e](EncodingWriter& w) -> absl::Status {
            w.WriteVarInt(VhloTypeCodeOf(TypeShape::kBuffer));
            WriteShape(w, dims);
            w.WriteVarInt(e);
            return absl::OkStatus();
          });
        }
        return absl::InvalidArgumentError(
            absl::StrCat("type '", t.element, "' has no VHLO encoding"));
      }
    }
    return absl::InternalError("unhandled type kind");
  }

  // Builtin types, for builtin attributes (dense arrays, integers).
  absl::StatusOr<uint64_t> BuiltinType(const std::string& element) {
    int width = 0;
    bool is_unsigned = false;
    uint64_t code = 0, payload = 0;
    bool has_payload = false;
    if (element == "index") {
      code = kBuiltinIndexType;
    } else if (bytecode::IntegerWidthOf(element, width, is_unsigned)) {
      code = kBuiltinIntegerType;
      const uint64_t signedness = is_unsigned ? 2 : absl::StartsWith(element, "si") ? 1 : 0;
      payload = (static_cast<uint64_t>(width) << 2) | signedness;
      has_payload = true;
    } else if (element == "bf16") {
      code = kBuiltinBF16;
    } else if (element == "f16") {
      code = kBuiltinF16;
    } else if (element == "f32") {
      code = kBuiltinF32;
    } else if (element == "f64") {
      code = kBuiltinF64;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("builtin type '", element, "' cannot be written"));
    }
    return Intern(types_, type_index_, kBuiltinDialect, true,
                  [=](EncodingWriter& w) -> absl::Status {
                    w.WriteVarInt(code);
                    if (has_payload) w.WriteVarInt(payload);
                    return absl::OkStatus();
                  });
  }

  // ------------------------------------------------------------ attributes
  absl::StatusOr<uint64_t> VhloAttr(const Encoder& encode) {
    return Intern(attrs_, attr_index_, kVhloDialect, true, encode);
  }

  absl::StatusOr<uint64_t> BuiltinString(const std::string& text) {
    const uint64_t s = String(text);
    return BuiltinEntry(false, [s](EncodingWriter& w) -> absl::Status {
      w.WriteVarInt(kBuiltinString);
      w.WriteVarInt(s);
      return absl::OkStatus();
    });
  }

  absl::StatusOr<std::vector<uint64_t>> AttrList(const std::vector<Attribute>& attrs) {
    std::vector<uint64_t> out;
    for (const Attribute& a : attrs) {
      ASSIGN_OR_RETURN(uint64_t i, AttrRef(a));
      out.push_back(i);
    }
    return out;
  }

  bool IsVhlo(const Attribute& a) const {
    if (a.kind == AKind::kEnum) return true;
    return absl::StartsWith(a.name, "vhlo.");
  }

  absl::StatusOr<uint64_t> AttrRef(const Attribute& a) {
    if (IsVhlo(a)) return VhloAttrRef(a);
    return BuiltinAttrRef(a);
  }

  absl::StatusOr<uint64_t> DictEntries(const std::vector<NamedAttribute>& fields, bool vhlo) {
    std::vector<std::pair<uint64_t, uint64_t>> entries;
    std::vector<const NamedAttribute*> sorted;
    for (const NamedAttribute& f : fields) sorted.push_back(&f);
    if (!vhlo) {  // builtin dictionaries are sorted by name
      std::stable_sort(
          sorted.begin(), sorted.end(),
          [](const NamedAttribute* x, const NamedAttribute* y) { return x->first < y->first; });
    }
    for (const NamedAttribute* f : sorted) {
      uint64_t key;
      if (vhlo) {
        const uint64_t s = String(f->first);
        ASSIGN_OR_RETURN(key, VhloAttr([s](EncodingWriter& w) -> absl::Status {
                           w.WriteVarInt(VhloAttrCodeOf(AttrShape::kString));
                           w.WriteVarInt(s);
                           return absl::OkStatus();
                         }));
      } else {
        ASSIGN_OR_RETURN(key, BuiltinString(f->first));
      }
      ASSIGN_OR_RETURN(uint64_t value, AttrRef(f->second));
      entries.emplace_back(key, value);
    }
    const uint64_t code =
        vhlo ? VhloAttrCodeOf(AttrShape::kDictionary) : uint64_t{kBuiltinDictionary};
    auto encode = [&entries, code](EncodingWriter& w) -> absl::Status {
      w.WriteVarInt(code);
      w.WriteVarInt(entries.size());
      for (auto [k, v] : entries) {
        w.WriteVarInt(k);
        w.WriteVarInt(v);
      }
      return absl::OkStatus();
    };
    return vhlo ? VhloAttr(encode) : BuiltinEntry(false, encode);
  }

  absl::StatusOr<uint64_t> VhloAttrRef(const Attribute& a) {
    switch (a.kind) {
      case AKind::kEnum:
        if (const bytecode::VhloAttrCode* e = bytecode::FindVhloEnumCode(a.name)) {
          for (size_t v = 0; v < e->enum_values.size(); ++v) {
            // Unnumbered values are null (rng_distribution has no value 0).
            if (e->enum_values[v] == nullptr || a.text != e->enum_values[v]) continue;
            const uint64_t code = e->code;
            return VhloAttr([code, v](EncodingWriter& w) -> absl::Status {
              w.WriteVarInt(code);
              w.WriteVarInt(v);
              return absl::OkStatus();
            });
          }
        }
        return absl::InvalidArgumentError(
            absl::StrCat("enum #vhlo<", a.name, " ", a.text, "> has no VHLO encoding"));
      case AKind::kArray: {
        ASSIGN_OR_RETURN(std::vector<uint64_t> elements, AttrList(a.elements));
        return VhloAttr([&elements](EncodingWriter& w) -> absl::Status {
          w.WriteVarInt(VhloAttrCodeOf(AttrShape::kArray));
          WriteList(w, elements);
          return absl::OkStatus();
        });
      }
      case AKind::kBool:
        return VhloAttr([&a](EncodingWriter& w) -> absl::Status {
          w.WriteVarInt(VhloAttrCodeOf(AttrShape::kBool));
          w.WriteVarInt(a.bool_value ? 1 : 0);
          return absl::OkStatus();
        });
      case AKind::kDict:
        return DictEntries(a.fields, /*vhlo=*/true);
      case AKind::kFloat: {
        const std::string element = a.type.element.empty() ? "f64" : a.type.element;
        ASSIGN_OR_RETURN(uint64_t type, ScalarType(element));
        std::optional<uint64_t> bits = FloatBits(element, a.float_value);
        if (!bits) return absl::InvalidArgumentError(absl::StrCat("float type ", element));
        const int width = FloatWidthOf(element);
        return VhloAttr([type, bits, width](EncodingWriter& w) -> absl::Status {
          w.WriteVarInt(VhloAttrCodeOf(AttrShape::kFloat));
          w.WriteVarInt(type);
          WriteApInt(w, width, *bits);
          return absl::OkStatus();
        });
      }
      case AKind::kInteger: {
        const std::string element = a.type.element.empty() ? "i64" : a.type.element;
        int width = 64;
        bool is_unsigned = false;
        if (!bytecode::IntegerWidthOf(element, width, is_unsigned)) {
          return absl::InvalidArgumentError(absl::StrCat("integer of type ", element));
        }
        ASSIGN_OR_RETURN(uint64_t type, ScalarType(element));
        return VhloAttr([&a, type, width](EncodingWriter& w) -> absl::Status {
          w.WriteVarInt(VhloAttrCodeOf(AttrShape::kInteger));
          w.WriteVarInt(type);
          WriteApInt(w, width, static_cast<uint64_t>(a.int_value));
          return absl::OkStatus();
        });
      }
      case AKind::kString: {
        const uint64_t s = String(a.text);
        return VhloAttr([s](EncodingWriter& w) -> absl::Status {
          w.WriteVarInt(VhloAttrCodeOf(AttrShape::kString));
          w.WriteVarInt(s);
          return absl::OkStatus();
        });
      }
      case AKind::kDense:
        return TensorAttr(a);
      case AKind::kType: {
        ASSIGN_OR_RETURN(uint64_t type, TypeRef(a.type));
        return VhloAttr([type](EncodingWriter& w) -> absl::Status {
          w.WriteVarInt(VhloAttrCodeOf(AttrShape::kType));
          w.WriteVarInt(type);
          return absl::OkStatus();
        });
      }
      case AKind::kStruct:
        return VhloStruct(a);
      default:
        break;
    }
    return absl::InvalidArgumentError(
        absl::StrCat("attribute ", mlir::PrintAttribute(a), " has no VHLO encoding"));
  }

  absl::StatusOr<uint64_t> TensorAttr(const Attribute& a) {
    if (a.literal == nullptr) return absl::InvalidArgumentError("dense attribute without data");
    ASSIGN_OR_RETURN(uint64_t type, TypeRef(a.type));
    const Literal& literal = *a.literal;
    const int64_t n = literal.element_count();
    const PrimitiveType element = literal.shape().element_type();
    const int width = PrimitiveByteWidth(element);
    const std::vector<uint8_t>& raw = literal.raw_data();
    std::string blob;
    bool splat = n > 1;
    for (int64_t i = 1; splat && i < n; ++i) {
      splat = std::memcmp(raw.data(), raw.data() + i * width, width) == 0;
    }
    if (element == PrimitiveType::PRED) {
      if (splat) {
        blob.push_back(raw[0] != 0 ? static_cast<char>(0xFF) : 0);
      } else {
        blob.assign((n + 7) / 8, 0);
        for (int64_t i = 0; i < n; ++i) {
          if (raw[i] != 0) blob[i / 8] = static_cast<char>(blob[i / 8] | (1 << (i % 8)));
        }
      }
    } else if (splat) {
      blob.assign(reinterpret_cast<const char*>(raw.data()), width);
    } else {
      blob.assign(reinterpret_cast<const char*>(raw.data()), n * width);
    }
    return VhloAttr([type, &blob](EncodingWriter& w) -> absl::Status {
      w.WriteVarInt(VhloAttrCodeOf(AttrShape::kTensor));
      w.WriteVarInt(type);
      w.WriteVarInt(blob.size());
      w.WriteBytes(blob);
      return absl::OkStatus();
    });
  }

  absl::StatusOr<uint64_t> VhloStruct(const Attribute& a) {
    auto field = [&](absl::string_view key) { return RequiredField(a, key, /*where=*/""); };
    if (a.name == "vhlo.output_operand_alias_v1") {
      ASSIGN_OR_RETURN(const Attribute* out_indices, field("outputTupleIndices"));
      ASSIGN_OR_RETURN(const Attribute* operand, field("operandIndex"));
      ASSIGN_OR_RETURN(const Attribute* in_indices, field("operandTupleIndices"));
      return VhloAttr([&](EncodingWriter& w) -> absl::Status {
        w.WriteVarInt(VhloAttrCodeOf(AttrShape::kOutputOperandAlias));
        std::vector<int64_t> outs = ListedInts(*out_indices), ins = ListedInts(*in_indices);
        w.WriteVarInt(outs.size());
        for (int64_t v : outs) w.WriteSignedVarInt(v);
        w.WriteSignedVarInt(operand->int_value);
        w.WriteVarInt(ins.size());
        for (int64_t v : ins) w.WriteSignedVarInt(v);
        return absl::OkStatus();
      });
    }
    if (a.name == "vhlo.result_accuracy_v1") {
      ASSIGN_OR_RETURN(const Attribute* atol, field("atol"));
      ASSIGN_OR_RETURN(const Attribute* rtol, field("rtol"));
      ASSIGN_OR_RETURN(const Attribute* ulps, field("ulps"));
      ASSIGN_OR_RETURN(const Attribute* mode, field("mode"));
      ASSIGN_OR_RETURN(uint64_t mode_index, AttrRef(*mode));
      return VhloAttr([&](EncodingWriter& w) -> absl::Status {
        w.WriteVarInt(VhloAttrCodeOf(AttrShape::kResultAccuracy));
        WriteApInt(w, 64, DoubleBits(atol->float_value));
        WriteApInt(w, 64, DoubleBits(rtol->float_value));
        w.WriteSignedVarInt(ulps->int_value);
        w.WriteVarInt(mode_index);
        return absl::OkStatus();
      });
    }
    if (a.name == "vhlo.sub_axis_info_v1") {
      ASSIGN_OR_RETURN(const Attribute* pre, field("pre_size"));
      ASSIGN_OR_RETURN(const Attribute* size, field("size"));
      return VhloAttr([&](EncodingWriter& w) -> absl::Status {
        w.WriteVarInt(VhloAttrCodeOf(AttrShape::kSubAxisInfo));
        w.WriteSignedVarInt(pre->int_value);
        w.WriteSignedVarInt(size->int_value);
        return absl::OkStatus();
      });
    }
    if (a.name == "vhlo.axis_ref_v1") {
      ASSIGN_OR_RETURN(const Attribute* name, field("name"));
      ASSIGN_OR_RETURN(uint64_t name_index, AttrRef(*name));
      std::optional<uint64_t> sub_index;
      if (const Attribute* sub = a.Field("sub_axis_info")) {
        ASSIGN_OR_RETURN(sub_index, AttrRef(*sub));
      }
      return VhloAttr([&](EncodingWriter& w) -> absl::Status {
        w.WriteVarInt(VhloAttrCodeOf(AttrShape::kAxisRef));
        w.WriteVarInt(name_index);
        w.WriteVarInt(sub_index ? 1 : 0);
        if (sub_index) w.WriteVarInt(*sub_index);
        return absl::OkStatus();
      });
    }
    if (a.name == "vhlo.replica_group_mesh_axes_v1") {
      ASSIGN_OR_RETURN(const Attribute* mesh, field("mesh"));
      ASSIGN_OR_RETURN(const Attribute* axes, field("axes"));
      ASSIGN_OR_RETURN(uint64_t mesh_index, AttrRef(*mesh));
      ASSIGN_OR_RETURN(uint64_t axes_index, AttrRef(*axes));
      return VhloAttr([&](EncodingWriter& w) -> absl::Status {
        w.WriteVarInt(VhloAttrCodeOf(AttrShape::kReplicaGroupMeshAxes));
        w.WriteVarInt(mesh_index);
        w.WriteVarInt(axes_index);
        return absl::OkStatus();
      });
    }
    return absl::InvalidArgumentError(absl::StrCat("#", a.name, " has no VHLO encoding"));
  }

  absl::StatusOr<uint64_t> BuiltinAttrRef(const Attribute& a) {
    switch (a.kind) {
      case AKind::kUnit:
        return BuiltinEntry(false, [](EncodingWriter& w) -> absl::Status {
          w.WriteVarInt(kBuiltinUnit);
          return absl::OkStatus();
        });
      case AKind::kString:
        return BuiltinString(a.text);
      case AKind::kSymbol: {
        ASSIGN_OR_RETURN(uint64_t root, BuiltinString(a.text));
        return BuiltinEntry(false, [root](EncodingWriter& w) -> absl::Status {
          w.WriteVarInt(kBuiltinFlatSymbolRef);
          w.WriteVarInt(root);
          return absl::OkStatus();
        });
      }
      case AKind::kArray: {
        ASSIGN_OR_RETURN(std::vector<uint64_t> elements, AttrList(a.elements));
        return BuiltinEntry(false, [&elements](EncodingWriter& w) -> absl::Status {
          w.WriteVarInt(kBuiltinArray);
          WriteList(w, elements);
          return absl::OkStatus();
        });
      }
      case AKind::kDict:
        return DictEntries(a.fields, /*vhlo=*/false);
      case AKind::kInteger:
      case AKind::kBool: {
        const std::string element =
            a.kind == AKind::kBool ? "i1" : (a.type.element.empty() ? "i64" : a.type.element);
        int width = 64;
        bool is_unsigned = false;
        bytecode::IntegerWidthOf(element, width, is_unsigned);
        ASSIGN_OR_RETURN(uint64_t type, BuiltinType(element));
        const uint64_t bits =
            a.kind == AKind::kBool ? (a.bool_value ? 1 : 0) : static_cast<uint64_t>(a.int_value);
        return BuiltinEntry(false, [type, width, bits](EncodingWriter& w) -> absl::Status {
          w.WriteVarInt(kBuiltinInteger);
          w.WriteVarInt(type);
          WriteApInt(w, width, bits);
          return absl::OkStatus();
        });
      }
      case AKind::kDenseArray: {
        ASSIGN_OR_RETURN(uint64_t type, BuiltinType(a.text));
        int width = 0;
        bool is_unsigned = false;
        std::string blob;
        uint64_t count = 0;
        if (bytecode::IntegerWidthOf(a.text, width, is_unsigned)) {
          const int bytes = width == 1 ? 1 : (width + 7) / 8;
          for (int64_t v : a.ints) {
            for (int i = 0; i < bytes; ++i) blob.push_back(static_cast<char>(v >> (8 * i)));
          }
          count = a.ints.size();
        } else {
          const int bytes = FloatWidthOf(a.text) / 8;
          for (double v : a.floats) {
            std::optional<uint64_t> bits = FloatBits(a.text, v);
            for (int i = 0; i < bytes; ++i) blob.push_back(static_cast<char>(*bits >> (8 * i)));
          }
          count = a.floats.size();
        }
        return BuiltinEntry(false, [type, count, &blob](EncodingWriter& w) -> absl::Status {
          w.WriteVarInt(kBuiltinDenseArray);
          w.WriteVarInt(type);
          w.WriteVarInt(count);
          w.WriteVarInt(blob.size());
          w.WriteBytes(blob);
          return absl::OkStatus();
        });
      }
      case AKind::kOpaque: {
        // Written as its text (MLIR's fallback for attributes without an encoding).
        const std::string text = a.text;
        return BuiltinEntry(true, [text](EncodingWriter& w) -> absl::Status {
          w.WriteNulTerminated(text);
          return absl::OkStatus();
        });
      }
      default:
        break;
    }
    return absl::InvalidArgumentError(
        absl::StrCat("attribute ", mlir::PrintAttribute(a), " cannot be written as bytecode"));
  }

  // ------------------------------------------------------------------ IR
  // Value numbers: a region's own values (block arguments, then results, in
  // order) follow its parent's; sibling regions reuse the same range;
  // isolated regions start afresh.
  void NumberRegion(const mlir::Region& region, uint64_t first) {
    uint64_t next = first;
    for (const auto& block : region.blocks) {
      for (const auto& arg : block->arguments) value_ids_[arg.get()] = next++;
      for (const auto& op : block->operations) {
        for (const auto& result : op->results) value_ids_[result.get()] = next++;
      }
    }
    region_values_[&region] = next - first;
    for (const auto& block : region.blocks) {
      for (const auto& op : block->operations) {
        for (const auto& inner : op->regions) NumberRegion(*inner, IsIsolated(*op) ? 0 : next);
      }
    }
  }
  void NumberValues(const Operation& module) {
    for (const auto& region : module.regions) NumberRegion(*region, 0);
  }

  uint64_t Properties(const std::string& blob) {
    auto [it, inserted] = property_index_.try_emplace(blob, properties_.size());
    if (inserted) properties_.push_back(blob);
    return it->second;
  }

  absl::Status WriteOp(EncodingWriter& w, const Operation& op) {
    const std::string where = absl::StrCat("'", op.name, "'");
    w.WriteVarInt(OpName(op.name));
    uint8_t mask = 0;
    // Attributes: properties (bytecode >= 5) and the dictionary of the rest.
    std::vector<NamedAttribute> dictionary;
    std::optional<std::string> properties;
    const std::vector<PropertyName> names = version_ >= bytecode::kVersionNativeProperties
                                                ? PropertiesOf(op.name)
                                                : std::vector<PropertyName>{};
    if (!names.empty()) {
      EncodingWriter p;
      for (const PropertyName& name : names) {
        const Attribute* value = op.attr(name.name);
        if (value == nullptr) {
          if (!name.optional) {
            return absl::InvalidArgumentError(
                absl::StrCat(where, " lacks property '", name.name, "'"));
          }
          p.WriteVarInt(0);
          continue;
        }
        ASSIGN_OR_RETURN(uint64_t index, AttrRef(*value));
        if (name.optional) {
          p.WriteVarIntWithFlag(index, true);
        } else {
          p.WriteVarInt(index);
        }
      }
      properties = p.bytes();
    }
    for (const NamedAttribute& a : op.attributes) {
      bool is_property = false;
      for (const PropertyName& name : names) is_property = is_property || name.name == a.first;
      if (!is_property) dictionary.push_back(a);
    }
    std::optional<uint64_t> dictionary_index;
    if (!dictionary.empty()) {
      ASSIGN_OR_RETURN(dictionary_index, DictEntries(dictionary, /*vhlo=*/false));
      mask |= bytecode::kOpHasAttrs;
    }
    if (properties) mask |= bytecode::kOpHasProperties;
    if (!op.results.empty()) mask |= bytecode::kOpHasResults;
    if (!op.operands.empty()) mask |= bytecode::kOpHasOperands;
    if (!op.successors.empty()) mask |= bytecode::kOpHasSuccessors;
    if (!op.regions.empty()) mask |= bytecode::kOpHasInlineRegions;
    w.WriteByte(mask);
    w.WriteVarInt(unknown_loc_);
    if (dictionary_index) w.WriteVarInt(*dictionary_index);
    if (properties) w.WriteVarInt(Properties(*properties));
    if (!op.results.empty()) {
      w.WriteVarInt(op.results.size());
      for (const auto& result : op.results) {
        ASSIGN_OR_RETURN(uint64_t type, TypeRef(result->type));
        w.WriteVarInt(type);
      }
    }
    if (!op.operands.empty()) {
      w.WriteVarInt(op.operands.size());
      for (const mlir::Value* operand : op.operands) {
        auto it = value_ids_.find(operand);
        if (operand == nullptr || it == value_ids_.end()) {
          return absl::InvalidArgumentError(absl::StrCat(where, " uses an undefined value"));
        }
        w.WriteVarInt(it->second);
      }
    }
    if (!op.successors.empty()) {
      w.WriteVarInt(op.successors.size());
      for (const mlir::Block* successor : op.successors) {
        auto it = block_ids_.find(successor);
        if (it == block_ids_.end()) {
          return absl::InvalidArgumentError(absl::StrCat(where, " has an unknown successor"));
        }
        w.WriteVarInt(it->second);
      }
    }
    if (op.regions.empty()) return absl::OkStatus();
    const bool isolated = IsIsolated(op);
    w.WriteVarIntWithFlag(op.regions.size(), isolated);
    if (isolated && version_ >= bytecode::kVersionLazyLoading) {
      EncodingWriter nested;
      for (const auto& region : op.regions) RETURN_IF_ERROR(WriteRegion(nested, *region));
      w.WriteSection(bytecode::kIrSection, nested.bytes());
      return absl::OkStatus();
    }
    for (const auto& region : op.regions) RETURN_IF_ERROR(WriteRegion(w, *region));
    return absl::OkStatus();
  }

  absl::Status WriteRegion(EncodingWriter& w, const mlir::Region& region) {
    w.WriteVarInt(region.blocks.size());
    if (region.blocks.empty()) return absl::OkStatus();
    w.WriteVarInt(region_values_[&region]);
    for (size_t i = 0; i < region.blocks.size(); ++i) block_ids_[region.blocks[i].get()] = i;
    for (const auto& block : region.blocks) {
      const bool has_args = !block->arguments.empty();
      w.WriteVarIntWithFlag(block->operations.size(), has_args);
      if (has_args) {
        w.WriteVarInt(block->arguments.size());
        for (const auto& arg : block->arguments) {
          ASSIGN_OR_RETURN(uint64_t type, TypeRef(arg->type));
          if (version_ >= bytecode::kVersionElideBlockArgLoc) {
            w.WriteVarIntWithFlag(type, false);  // unknown locations are elided
          } else {
            w.WriteVarInt(type);
            w.WriteVarInt(unknown_loc_);
          }
        }
        if (version_ >= bytecode::kVersionUseListOrdering) w.WriteByte(0);
      }
      for (const auto& op : block->operations) RETURN_IF_ERROR(WriteOp(w, *op));
    }
    return absl::OkStatus();
  }

  Version target_;
  uint64_t version_;
  uint64_t unknown_loc_ = 0;
  std::vector<std::string> strings_;
  absl::flat_hash_map<std::string, uint64_t> string_index_;
  std::vector<std::string> op_names_;
  absl::flat_hash_map<std::string, uint64_t> op_index_;
  std::vector<Entry> attrs_, types_;
  absl::flat_hash_map<std::string, uint64_t> attr_index_, type_index_;
  std::vector<std::string> properties_;
  absl::flat_hash_map<std::string, uint64_t> property_index_;
  absl::flat_hash_map<const mlir::Value*, uint64_t> value_ids_;
  absl::flat_hash_map<const mlir::Region*, uint64_t> region_values_;
  absl::flat_hash_map<const mlir::Block*, uint64_t> block_ids_;
};

}  // namespace

uint64_t BytecodeVersionFor(const Version& target) {
  uint64_t version = kBytecodeVersions[0].bytecode_version;
  for (const BytecodeVersionRow& row : kBytecodeVersions) {
    if (row.from <= target) version = row.bytecode_version;
  }
  return version;
}

absl::StatusOr<std::string> WriteBytecode(const Operation& vhlo_module, const Version& target) {
  if (vhlo_module.name != "builtin.module") {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a builtin.module, not '", vhlo_module.name, "'"));
  }
  return Writer(target).Write(vhlo_module);
}

absl::StatusOr<std::string> SerializePortableArtifact(const Operation& stablehlo_module,
                                                      const Version& target) {
  ASSIGN_OR_RETURN(mlir::OwningOp vhlo, StablehloToVhlo(stablehlo_module, target));
  return WriteBytecode(*vhlo, target);
}

}  // namespace xlite::vhlo
