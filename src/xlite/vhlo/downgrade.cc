#include "xlite/vhlo/downgrade.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "xlite/ir/literal.h"
#include "xlite/ir/shape.h"
#include "xlite/stablehlo/printer.h"
#include "xlite/support/status.h"
#include "xlite/vhlo/op_tree_rewriter.h"
#include "xlite/vhlo/vhlo_conversion_tables.h"
#include "xlite/vhlo/vhlo_op_properties.h"

namespace xlite::vhlo {
namespace {

using mlir::Attribute;
using mlir::NamedAttribute;
using mlir::Operation;
using mlir::OwningOp;
using mlir::Type;
using mlir::Value;
using Kind = Attribute::Kind;

// Attributes that hold their default without an OpRules entry saying so
// (StableHLO never drops them; VHLO still needs a value when they are absent).
constexpr std::pair<const char*, Neutral> kImplicitDefaults[] = {
    {"operand_layouts", Neutral::kEmptyArray},
    {"result_layouts", Neutral::kEmptyArray},
};

// Features of a newer op version that are not attributes: an older version
// that cannot hold them refuses the program.
struct StructuralLimit {
  const char* op;       // the older VHLO op version
  size_t max_operands;  // it takes at most this many operands
  size_t max_regions;   // and this many regions
  const char* feature;  // what a newer version added
};
constexpr size_t kAny = ~size_t{0};
constexpr StructuralLimit kStructuralLimits[] = {
    {"vhlo.all_gather_v1", 1, kAny, "more than one operand (variadic form)"},
    {"vhlo.all_reduce_v1", 1, kAny, "more than one operand (variadic form)"},
    {"vhlo.all_to_all_v1", 1, kAny, "more than one operand (variadic form)"},
    {"vhlo.composite_v1", kAny, 0, "a region"},
};

// Features StableHLO added to an op without a new op version: before `min`,
// a program using them cannot be expressed.
bool PromotesElementTypes(const Operation& op) {
  std::vector<std::string> operand_elements;
  for (const Value* v : op.operands) {
    if (v != nullptr) operand_elements.push_back(v->type.element);
  }
  for (const auto& region : op.regions) {
    if (region->blocks.empty()) continue;
    for (const auto& arg : region->blocks[0]->arguments) {
      if (std::find(operand_elements.begin(), operand_elements.end(), arg->type.element) ==
          operand_elements.end()) {
        return true;
      }
    }
  }
  return false;
}
bool UsesTypedFfi(const Operation& op) {
  const Attribute* api = op.attr("api_version");
  return api != nullptr && api->kind == Kind::kInteger && api->int_value == 4;
}
bool HasDictionaryBackendConfig(const Operation& op) {
  const Attribute* config = op.attr("backend_config");
  return config != nullptr && config->kind == Kind::kDict;
}
bool HasFutureValues(const Operation& op) {
  auto is_future = [](const Value* v) {
    return v != nullptr && absl::StartsWith(v->type.element, "!stablehlo.future");
  };
  return std::any_of(op.operands.begin(), op.operands.end(), is_future) ||
         std::any_of(op.results.begin(), op.results.end(),
                     [&](const std::unique_ptr<Value>& v) { return is_future(v.get()); });
}

struct FeatureRule {
  const char* op;
  Version min;
  const char* feature;
  bool (*present)(const Operation&);
};
const FeatureRule kFeatureRules[] = {
    {"stablehlo.all_reduce",
     {0, 17, 0},
     "element type promotion in the body",
     PromotesElementTypes},
    {"stablehlo.reduce", {0, 17, 0}, "element type promotion in the body", PromotesElementTypes},
    {"stablehlo.reduce_scatter",
     {0, 17, 0},
     "element type promotion in the body",
     PromotesElementTypes},
    {"stablehlo.reduce_window",
     {0, 17, 0},
     "element type promotion in the body",
     PromotesElementTypes},
    {"stablehlo.scatter", {0, 17, 0}, "element type promotion in the body", PromotesElementTypes},
    {"stablehlo.select_and_scatter",
     {0, 17, 0},
     "element type promotion in the body",
     PromotesElementTypes},
    {"stablehlo.custom_call", {1, 3, 0}, "api_version API_VERSION_TYPED_FFI", UsesTypedFfi},
    {"stablehlo.custom_call", {1, 3, 0}, "a dictionary backend_config", HasDictionaryBackendConfig},
    {"stablehlo.custom_call", {1, 17, 0}, "!stablehlo.future operands or results", HasFutureValues},
};

Attribute Named(Attribute a, absl::string_view vhlo_mnemonic) {
  a.name = absl::StrCat("vhlo.", vhlo_mnemonic);
  return a;
}

// A 1-D i64 or i1 tensor attribute (#vhlo.tensor_v1).
Attribute TensorOf(const std::vector<int64_t>& values, std::vector<int64_t> dims,
                   PrimitiveType element) {
  auto literal = std::make_shared<Literal>(Shape::Array(element, dims));
  const int64_t n = literal->element_count();
  for (int64_t i = 0; i < n; ++i) {
    literal->SetInt(i, values.size() == 1 ? values[0] : values[i]);
  }
  Attribute a;
  a.kind = Kind::kDense;
  a.type = Type::Tensor(std::move(dims), element == PrimitiveType::PRED ? "i1" : "i64");
  a.literal = std::move(literal);
  return Named(std::move(a), "tensor_v1");
}

Attribute I64Tensor(const std::vector<int64_t>& values) {
  return TensorOf(values, {static_cast<int64_t>(values.size())}, PrimitiveType::S64);
}

Attribute VhloInt(int64_t v) { return Named(Attribute::Int(v), "integer_v1"); }
Attribute VhloBool(bool v) { return Named(Attribute::Bool(v), "bool_v1"); }
Attribute VhloString(std::string s) { return Named(Attribute::String(std::move(s)), "string_v1"); }

Attribute VhloArray(std::vector<Attribute> elements) {
  Attribute a;
  a.kind = Kind::kArray;
  a.elements = std::move(elements);
  return Named(std::move(a), "array_v1");
}

Attribute NoneType() {
  Attribute a;
  a.kind = Kind::kType;
  a.type = Type::Scalar("none");
  return Named(std::move(a), "type_v1");
}

// Integers of an array attribute ([1, 2], array<i64: 1, 2>, dense<[1, 2]>).
std::vector<int64_t> IntsOf(const Attribute& a) {
  std::vector<int64_t> v = a.ints;
  for (const Attribute& e : a.elements) v.push_back(e.int_value);
  if (a.kind == Kind::kDense && a.literal != nullptr) {
    for (int64_t i = 0; i < a.literal->element_count(); ++i) v.push_back(a.literal->GetInt(i));
  }
  return v;
}

const Attribute* Find(const std::vector<NamedAttribute>& attrs, absl::string_view key) {
  for (const NamedAttribute& a : attrs) {
    if (a.first == key) return &a.second;
  }
  return nullptr;
}

// The attribute names of a VHLO op version, sorted (its properties).
std::vector<PropertyName> PropertyNamesOf(absl::string_view vhlo_name) {
  for (size_t count = 1; count <= 32; ++count) {
    if (const std::vector<PropertyName>* names = FindPropertyNames(vhlo_name, count)) {
      return *names;
    }
  }
  return {};
}

// --------------------------------------------------------------- Downgrader
class Downgrader : public OpTreeRewriter {
 public:
  explicit Downgrader(Version target) : target_(target) {}

  absl::StatusOr<OwningOp> Run(const Operation& module) {
    if (!InWindow(target_)) {
      return absl::InvalidArgumentError(
          absl::StrCat("target version ", target_.ToString(), " is outside the supported window ",
                       Version::Minimum().ToString(), "..", Version::Current().ToString()));
    }
    ASSIGN_OR_RETURN(OwningOp out, RewriteOp(module, nullptr));
    RETURN_IF_ERROR(ResolveForwardReferences());
    return out;
  }

 private:
  absl::Status TooNew(absl::string_view what, absl::string_view where, const Version& min) const {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", what,
                                                   " needs StableHLO >= ", min.ToString(),
                                                   "; target ", target_.ToString()));
  }

  // ---------------------------------------------------------------- types
  absl::Status CheckElement(const std::string& element, absl::string_view where) const {
    const VersionedElement* row = FindVersionedElementType(element);
    if (row != nullptr && target_ < row->min) {
      return TooNew(absl::StrCat("type ", element, " (!vhlo.", row->vhlo_name, ")"), where,
                    row->min);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Type> ConvertType(const Type& type, absl::string_view where) const {
    Type out = type;
    if (!type.element.empty()) RETURN_IF_ERROR(CheckElement(type.element, where));
    RETURN_IF_ERROR(ConvertNestedTypes(out, [&](const Type& t) { return ConvertType(t, where); }));
    return out;
  }

  // ----------------------------------------------------------- attributes
  absl::Status CheckAttributeVersion(absl::string_view vhlo_name, absl::string_view where) const {
    const VersionedElement* row = FindVersionedAttribute(vhlo_name);
    if (row != nullptr && target_ < row->min) {
      return TooNew(absl::StrCat("attribute #vhlo.", row->vhlo_name), where, row->min);
    }
    return absl::OkStatus();
  }

  // Versioned attributes (structs, enums) anywhere in `a`, checked once the op
  // has its final version (an older version may drop a default-valued one).
  absl::Status CheckAttributesAt(const Attribute& a, absl::string_view where) const {
    if (a.kind == Kind::kEnum) RETURN_IF_ERROR(CheckAttributeVersion(a.name, where));
    if (a.kind == Kind::kStruct) RETURN_IF_ERROR(CheckAttributeVersion(a.name, where));
    for (const Attribute& e : a.elements) RETURN_IF_ERROR(CheckAttributesAt(e, where));
    for (const NamedAttribute& f : a.fields) RETURN_IF_ERROR(CheckAttributesAt(f.second, where));
    return absl::OkStatus();
  }

  absl::StatusOr<Attribute> EnumToVhlo(absl::string_view stablehlo_name, const std::string& value,
                                       absl::string_view where) const {
    for (const EnumRow& row : kEnums) {
      if (stablehlo_name != absl::StrCat("stablehlo.", row.stablehlo)) continue;
      return Attribute::Enum(row.vhlo, value);
    }
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": attribute #", stablehlo_name, "<", value, "> has no VHLO form"));
  }

  // StableHLO/builtin attribute -> VHLO attribute of the same meaning.
  absl::StatusOr<Attribute> ToVhlo(const Attribute& a, absl::string_view where) const {
    Attribute out = a;
    switch (a.kind) {
      case Kind::kBool:
        return Named(out, "bool_v1");
      case Kind::kInteger:
        return Named(out, "integer_v1");
      case Kind::kFloat:
        return Named(out, "float_v1");
      case Kind::kString:
        return Named(out, "string_v1");
      case Kind::kType: {
        ASSIGN_OR_RETURN(out.type, ConvertType(a.type, where));
        return Named(out, "type_v1");
      }
      case Kind::kDense: {
        ASSIGN_OR_RETURN(out.type, ConvertType(a.type, where));
        return Named(out, "tensor_v1");
      }
      case Kind::kArray:
        for (Attribute& e : out.elements) {
          ASSIGN_OR_RETURN(e, ToVhlo(e, where));
        }
        return Named(out, "array_v1");
      case Kind::kDict:
        for (NamedAttribute& f : out.fields) {
          ASSIGN_OR_RETURN(f.second, ToVhlo(f.second, where));
        }
        return Named(out, "dict_v1");
      case Kind::kEnum:
        return EnumToVhlo(a.name, a.text, where);
      case Kind::kStruct:
        return StructToVhlo(a, where);
      case Kind::kDenseResource:
        return absl::UnimplementedError(
            absl::StrCat(where, ": dense_resource attributes cannot be serialized"));
      case Kind::kUnit:
      case Kind::kSymbol:
      case Kind::kDenseArray:
      case Kind::kOpaque:
        return out;  // builtin attributes, written as such
    }
    return out;
  }

  absl::StatusOr<Attribute> StructToVhlo(const Attribute& a, absl::string_view where) const {
    auto field_or = [&](absl::string_view key) -> absl::StatusOr<const Attribute*> {
      const Attribute* f = a.Field(key);
      if (f == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": #", a.name, " lacks '", key, "'"));
      }
      return f;
    };
    Attribute s;
    s.kind = Kind::kStruct;
    if (a.name == "stablehlo.result_accuracy_mode") {
      return EnumToVhlo(a.name, a.text.empty() ? a.raw : a.text, where);
    }
    if (a.name == "stablehlo.result_accuracy") {
      s.name = "vhlo.result_accuracy_v1";
      for (const char* key : {"atol", "rtol"}) {
        Attribute f;
        f.kind = Kind::kFloat;
        f.type = Type::Scalar("f64");
        if (const Attribute* given = a.Field(key)) f.float_value = given->float_value;
        s.fields.emplace_back(key, std::move(f));
      }
      const Attribute* ulps = a.Field("ulps");
      s.fields.emplace_back("ulps", Attribute::Int(ulps != nullptr ? ulps->int_value : 0));
      const Attribute* mode = a.Field("mode");
      Attribute vhlo_mode = Attribute::Enum("result_accuracy_mode_v1", "DEFAULT");
      if (mode != nullptr) {
        ASSIGN_OR_RETURN(vhlo_mode, ToVhlo(*mode, where));
      }
      s.fields.emplace_back("mode", std::move(vhlo_mode));
      return s;
    }
    if (a.name == "stablehlo.output_operand_alias") {
      ASSIGN_OR_RETURN(const Attribute* out_indices, field_or("output_tuple_indices"));
      ASSIGN_OR_RETURN(const Attribute* operand, field_or("operand_index"));
      ASSIGN_OR_RETURN(const Attribute* in_indices, field_or("operand_tuple_indices"));
      s.name = "vhlo.output_operand_alias_v1";
      s.fields = {{"outputTupleIndices", Attribute::I64Array(IntsOf(*out_indices))},
                  {"operandIndex", Attribute::Int(operand->int_value)},
                  {"operandTupleIndices", Attribute::I64Array(IntsOf(*in_indices))}};
      return s;
    }
    if (a.name == "stablehlo.replica_group_mesh_axes") {
      ASSIGN_OR_RETURN(const Attribute* mesh, field_or("mesh"));
      ASSIGN_OR_RETURN(const Attribute* axes, field_or("axes"));
      s.name = "vhlo.replica_group_mesh_axes_v1";
      Attribute mesh_symbol = *mesh;
      mesh_symbol.kind = Kind::kSymbol;  // written as a builtin symbol reference
      ASSIGN_OR_RETURN(Attribute axis_list, ToVhlo(*axes, where));
      s.fields = {{"mesh", std::move(mesh_symbol)}, {"axes", std::move(axis_list)}};
      return s;
    }
    if (a.name == "stablehlo.axis_ref") {
      ASSIGN_OR_RETURN(const Attribute* name, field_or("name"));
      s.name = "vhlo.axis_ref_v1";
      s.fields = {{"name", *name}};
      if (const Attribute* sub = a.Field("sub_axis_info")) {
        // "(pre_size)size", as the text reader keeps it.
        absl::string_view text = sub->text;
        int64_t pre = 0, size = 0;
        std::vector<absl::string_view> parts = absl::StrSplit(text, absl::ByAnyChar("()"));
        if (parts.size() != 3 || !absl::SimpleAtoi(parts[1], &pre) ||
            !absl::SimpleAtoi(parts[2], &size)) {
          return absl::InvalidArgumentError(
              absl::StrCat(where, ": malformed sub_axis_info '", text, "'"));
        }
        Attribute info;
        info.kind = Kind::kStruct;
        info.name = "vhlo.sub_axis_info_v1";
        info.fields = {{"pre_size", Attribute::Int(pre)}, {"size", Attribute::Int(size)}};
        s.fields.emplace_back("sub_axis_info", std::move(info));
      }
      return s;
    }
    if (!absl::StartsWith(a.name, "stablehlo.")) return a;  // another dialect's attribute
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": attribute #", a.name, " has no VHLO form here"));
  }

  // Inverse of upgrade's ConvertByForm: StableHLO spelling -> VHLO.
  absl::StatusOr<Attribute> FromForm(const Attribute& a, Form form, absl::string_view where) const {
    switch (form) {
      case Form::kGeneric:
        return ToVhlo(a, where);
      case Form::kI64Array:
        return I64Tensor(IntsOf(a));
      case Form::kBoolArray: {
        std::vector<int64_t> v = IntsOf(a);
        return TensorOf(v, {static_cast<int64_t>(v.size())}, PrimitiveType::PRED);
      }
      case Form::kSymbol:
        return VhloString(a.text);
      case Form::kSymbolList: {
        std::vector<Attribute> names;
        for (const Attribute& e : a.elements) names.push_back(VhloString(e.text));
        return VhloArray(std::move(names));
      }
      case Form::kChannelId: {
        const Attribute* handle = a.Field("handle");
        return VhloInt(handle != nullptr ? handle->int_value : a.int_value);
      }
      case Form::kUnitIfTrue:
        return VhloBool(a.kind != Kind::kBool || a.bool_value);
      case Form::kApiVersion:
        for (const auto& [name, number] : kApiVersions) {
          if (a.int_value == number) return Attribute::Enum("api_version_v1", name);
        }
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": unknown custom call API version ", a.int_value));
    }
    return a;
  }

  // The StableHLO name of a rule's attribute (collectives name the channel by its handle).
  static std::string SourceKey(const AttributeRule& rule) {
    return rule.form == Form::kChannelId ? "channel_handle" : rule.name;
  }

  // Splits a grouped StableHLO attribute into VHLO's parts.
  absl::Status Ungroup(Grouping grouping, std::vector<NamedAttribute>& attrs,
                       std::vector<NamedAttribute>& out, absl::string_view where) const {
    auto take = [&](absl::string_view key) -> std::optional<Attribute> {
      for (auto it = attrs.begin(); it != attrs.end(); ++it) {
        if (it->first == key) {
          Attribute a = std::move(it->second);
          attrs.erase(it);
          return a;
        }
      }
      return std::nullopt;
    };
    auto ints_field = [](const Attribute& s, absl::string_view key) {
      const Attribute* f = s.Field(key);
      return f == nullptr ? std::vector<int64_t>{} : IntsOf(*f);
    };
    switch (grouping) {
      case Grouping::kNone:
        return absl::OkStatus();
      case Grouping::kConvDimensions: {
        std::optional<Attribute> dn = take("dimension_numbers");
        if (!dn) return absl::InvalidArgumentError(absl::StrCat(where, " lacks dimension_numbers"));
        // "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]"
        std::string raw = dn->raw;
        raw.erase(std::remove_if(raw.begin(), raw.end(), absl::ascii_isspace), raw.end());
        std::vector<std::string> lists;
        for (absl::string_view piece : absl::StrSplit(raw, absl::ByAnyChar("[]"))) {
          if (piece.empty() || piece == "x" || piece == "->") continue;
          lists.emplace_back(piece);
        }
        if (lists.size() != 3) {
          return absl::InvalidArgumentError(
              absl::StrCat(where, ": cannot read convolution dimensions '", dn->raw, "'"));
        }
        struct Layout {
          int64_t first = -1, second = -1;
          std::vector<int64_t> spatial;
        };
        auto read = [&](const std::string& list, char first,
                        char second) -> absl::StatusOr<Layout> {
          Layout l;
          std::vector<std::string> names = absl::StrSplit(list, ',');
          l.spatial.assign(names.size() >= 2 ? names.size() - 2 : 0, -1);
          for (size_t pos = 0; pos < names.size(); ++pos) {
            int64_t k = 0;
            if (names[pos].size() == 1 && names[pos][0] == first) {
              l.first = pos;
            } else if (names[pos].size() == 1 && names[pos][0] == second) {
              l.second = pos;
            } else if (absl::SimpleAtoi(names[pos], &k) && k >= 0 &&
                       k < static_cast<int64_t>(l.spatial.size())) {
              l.spatial[k] = pos;
            } else {
              return absl::InvalidArgumentError(
                  absl::StrCat(where, ": bad convolution dimension '", names[pos], "'"));
            }
          }
          return l;
        };
        ASSIGN_OR_RETURN(Layout in, read(lists[0], 'b', 'f'));
        ASSIGN_OR_RETURN(Layout kernel, read(lists[1], 'i', 'o'));
        ASSIGN_OR_RETURN(Layout output, read(lists[2], 'b', 'f'));
        out.emplace_back("input_batch_dimension", VhloInt(in.first));
        out.emplace_back("input_feature_dimension", VhloInt(in.second));
        out.emplace_back("input_spatial_dimensions", I64Tensor(in.spatial));
        out.emplace_back("kernel_input_feature_dimension", VhloInt(kernel.first));
        out.emplace_back("kernel_output_feature_dimension", VhloInt(kernel.second));
        out.emplace_back("kernel_spatial_dimensions", I64Tensor(kernel.spatial));
        out.emplace_back("output_batch_dimension", VhloInt(output.first));
        out.emplace_back("output_feature_dimension", VhloInt(output.second));
        out.emplace_back("output_spatial_dimensions", I64Tensor(output.spatial));
        return absl::OkStatus();
      }
      case Grouping::kDotDimensions: {
        std::optional<Attribute> dn = take("dot_dimension_numbers");
        Attribute empty;
        const Attribute& dims = dn ? *dn : empty;
        for (const char* key : kDotDimensionFields) {
          out.emplace_back(key, I64Tensor(ints_field(dims, key)));
        }
        std::optional<Attribute> algorithm = take("algorithm");
        for (const char* key : kDotAlgorithmFields) {
          const Attribute* part = algorithm ? algorithm->Field(key) : nullptr;
          if (part == nullptr) {
            out.emplace_back(key, NoneType());
            continue;
          }
          ASSIGN_OR_RETURN(Attribute converted, ToVhlo(*part, where));
          out.emplace_back(key, std::move(converted));
        }
        return absl::OkStatus();
      }
      case Grouping::kGatherDimensions:
      case Grouping::kScatterDimensions: {
        const bool gather = grouping == Grouping::kGatherDimensions;
        std::optional<Attribute> dn =
            take(gather ? "dimension_numbers" : "scatter_dimension_numbers");
        Attribute empty;
        const Attribute& dims = dn ? *dn : empty;
        for (const char* key : gather ? kGatherDimensionFields : kScatterDimensionFields) {
          out.emplace_back(key, I64Tensor(ints_field(dims, key)));
        }
        const Attribute* index_vector_dim = dims.Field("index_vector_dim");
        out.emplace_back("index_vector_dim",
                         VhloInt(index_vector_dim ? index_vector_dim->int_value : 0));
        return absl::OkStatus();
      }
      case Grouping::kChannelHandle: {
        std::optional<Attribute> handle = take("channel_handle");
        const Attribute* id = handle ? handle->Field("handle") : nullptr;
        const Attribute* type = handle ? handle->Field("type") : nullptr;
        out.emplace_back("channel_id", VhloInt(id ? id->int_value : 0));
        out.emplace_back("channel_type", VhloInt(type ? type->int_value : 0));
        return absl::OkStatus();
      }
    }
    return absl::OkStatus();
  }

  // The default of a VHLO attribute StableHLO left out. Splats and precision
  // lists take their shape from the op's other attributes.
  absl::StatusOr<Attribute> DefaultValue(absl::string_view key, Neutral neutral,
                                         const std::vector<NamedAttribute>& vhlo_attrs,
                                         const Operation& op, absl::string_view where) const {
    auto rank = [&]() -> int64_t {
      for (const char* shape_source : {"input_spatial_dimensions", "window_dimensions"}) {
        if (const Attribute* a = Find(vhlo_attrs, shape_source)) {
          return static_cast<int64_t>(IntsOf(*a).size());
        }
      }
      return 0;
    };
    switch (neutral) {
      case Neutral::kSplatOne:
        return TensorOf({1}, {rank()}, PrimitiveType::S64);
      case Neutral::kSplatZero:
        return TensorOf({0}, {rank(), 2}, PrimitiveType::S64);
      case Neutral::kSplatFalse:
        return TensorOf({0}, {rank()}, PrimitiveType::PRED);
      case Neutral::kDefaultPrecisions:
        return VhloArray({Attribute::Enum("precision_v1", "DEFAULT"),
                          Attribute::Enum("precision_v1", "DEFAULT")});
      case Neutral::kNoComparisonType:
        return Attribute::Enum("comparison_type_v1", "NOTYPE");
      case Neutral::kOriginalApiVersion:
        return Attribute::Enum("api_version_v1", "API_VERSION_ORIGINAL");
      case Neutral::kEmptyConfig: {
        const Attribute* api = Find(vhlo_attrs, "api_version");
        if (api != nullptr && api->text == "API_VERSION_TYPED_FFI") {
          return MakeVhlo(Neutral::kEmptyDict);
        }
        return MakeVhlo(Neutral::kEmptyString);
      }
      default:
        (void)op;
        (void)where;
        (void)key;
        return MakeVhlo(neutral);
    }
  }

  // MakeNeutral with VHLO mnemonics on the generic kinds.
  static Attribute MakeVhlo(Neutral neutral) {
    Attribute a = MakeNeutral(neutral);
    switch (a.kind) {
      case Kind::kBool:
        return Named(a, "bool_v1");
      case Kind::kInteger:
        return Named(a, "integer_v1");
      case Kind::kString:
        return Named(a, "string_v1");
      case Kind::kArray:
        return Named(a, "array_v1");
      case Kind::kDict:
        return Named(a, "dict_v1");
      case Kind::kDense:
        return Named(a, "tensor_v1");
      case Kind::kType:
        return Named(a, "type_v1");
      default:
        return a;
    }
  }

  // StableHLO attributes of `op` -> every attribute of `latest` (a newest VHLO
  // op version), properties in their sorted order, then discardable ones.
  absl::StatusOr<std::vector<NamedAttribute>> FromStablehlo(const OpVersion& latest,
                                                            const Operation& op,
                                                            absl::string_view where) const {
    std::vector<NamedAttribute> attrs = op.attributes;
    std::vector<NamedAttribute> converted;
    const OpRule* rule = FindOpRule(latest.vhlo_name);
    if (rule != nullptr) RETURN_IF_ERROR(Ungroup(rule->grouping, attrs, converted, where));
    for (NamedAttribute& a : attrs) {
      const AttributeRule* attr_rule = nullptr;
      if (rule != nullptr) {
        for (const AttributeRule& r : rule->attributes) {
          if (a.first == SourceKey(r)) attr_rule = &r;
        }
      }
      const std::string context = absl::StrCat(where, " attribute '", a.first, "'");
      if (attr_rule == nullptr) {
        ASSIGN_OR_RETURN(Attribute c, ToVhlo(a.second, context));
        converted.emplace_back(a.first, std::move(c));
        continue;
      }
      ASSIGN_OR_RETURN(Attribute c, FromForm(a.second, attr_rule->form, context));
      converted.emplace_back(attr_rule->name, std::move(c));
    }
    // Every property, in the op's order; defaults for what StableHLO left out.
    std::vector<NamedAttribute> out;
    std::vector<PropertyName> names = PropertyNamesOf(latest.vhlo_name);
    for (const PropertyName& property : names) {
      auto it = std::find_if(converted.begin(), converted.end(),
                             [&](const NamedAttribute& a) { return a.first == property.name; });
      if (it != converted.end()) {
        out.push_back(std::move(*it));
        converted.erase(it);
        continue;
      }
      std::optional<Neutral> neutral;
      if (rule != nullptr) {
        for (const AttributeRule& r : rule->attributes) {
          if (property.name == r.name) neutral = r.omit_when;
        }
      }
      for (const auto& [name, value] : kImplicitDefaults) {
        if (property.name == name) neutral = value;
      }
      if (!neutral.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, " lacks attribute '", property.name, "'"));
      }
      ASSIGN_OR_RETURN(Attribute value, DefaultValue(property.name, *neutral, out, op, where));
      out.emplace_back(property.name, std::move(value));
    }
    // Defaults may depend on properties that sort later (padding on
    // window_dimensions): recompute those now that all are present.
    for (NamedAttribute& a : out) {
      if (a.second.kind == Kind::kDense && a.second.literal != nullptr &&
          a.second.literal->element_count() == 0 && !a.second.type.dims.empty() &&
          a.second.type.dims[0] == 0 && Find(op.attributes, a.first) == nullptr) {
        std::optional<Neutral> neutral;
        if (rule != nullptr) {
          for (const AttributeRule& r : rule->attributes) {
            if (a.first == r.name) neutral = r.omit_when;
          }
        }
        if (neutral == Neutral::kSplatOne || neutral == Neutral::kSplatZero ||
            neutral == Neutral::kSplatFalse) {
          ASSIGN_OR_RETURN(a.second, DefaultValue(a.first, *neutral, out, op, where));
        }
      }
    }
    for (NamedAttribute& a : converted) out.push_back(std::move(a));  // discardable
    return out;
  }

  // Newest version -> the newest one legal at the target, by the rules.
  absl::StatusOr<const OpVersion*> Downgrade(const std::string& op_name, const OpVersion* latest,
                                             const Operation& op,
                                             std::vector<NamedAttribute>& attrs) const {
    std::vector<const OpVersion*> versions = OpVersionsOf(latest->target_name);
    absl::StatusOr<const OpVersion*> wanted = OpVersionAt(latest->target_name, target_);
    if (!wanted.ok()) {
      const OpVersion* first = versions.empty() ? latest : versions.front();
      return absl::InvalidArgumentError(absl::StrCat(
          op_name, ": needs ", first->vhlo_name, " (StableHLO >= ", first->min.ToString(),
          "); target ", target_.ToString(), " has no version of the op"));
    }
    const OpVersion* op_version = latest;
    while (op_version != *wanted) {
      const OpVersion* older = nullptr;
      for (const OpVersion* candidate : versions) {
        if (candidate->version == op_version->version - 1) older = candidate;
      }
      if (older == nullptr) {
        return absl::InternalError(absl::StrCat("no version before ", op_version->vhlo_name));
      }
      auto refuse = [&](absl::string_view feature) {
        return absl::InvalidArgumentError(
            absl::StrCat(op_name, ": ", feature, " needs ", op_version->vhlo_name,
                         " (StableHLO >= ", op_version->min.ToString(), "); target ",
                         target_.ToString(), " only has ", (*wanted)->vhlo_name));
      };
      if (const UpgradeRule* rule = FindUpgradeRule(older->vhlo_name)) {
        for (const AttributeChange& added : rule->added) {
          auto it = std::find_if(attrs.begin(), attrs.end(),
                                 [&](const NamedAttribute& a) { return a.first == added.name; });
          if (it == attrs.end()) continue;
          if (!IsNeutral(it->second, added.value)) {
            return refuse(absl::StrCat("attribute '", added.name, "' with a non-default value"));
          }
          attrs.erase(it);
        }
        for (const AttributeChange& removed : rule->removed) {
          ASSIGN_OR_RETURN(Attribute value,
                           DefaultValue(removed.name, removed.value, attrs, op, op_name));
          attrs.emplace_back(removed.name, std::move(value));
        }
      }
      for (const StructuralLimit& limit : kStructuralLimits) {
        if (older->vhlo_name == limit.op &&
            (op.operands.size() > limit.max_operands || op.regions.size() > limit.max_regions)) {
          return refuse(limit.feature);
        }
      }
      op_version = older;
    }
    // Properties back in the older version's order.
    std::vector<PropertyName> names = PropertyNamesOf(op_version->vhlo_name);
    std::stable_sort(attrs.begin(), attrs.end(),
                     [&](const NamedAttribute& a, const NamedAttribute& b) {
                       auto rank = [&](const std::string& key) {
                         for (size_t i = 0; i < names.size(); ++i) {
                           if (names[i].name == key) return i;
                         }
                         return names.size();
                       };
                       return rank(a.first) < rank(b.first);
                     });
    return op_version;
  }

  const OpVersion* LatestFor(const std::string& name) const {
    if (name == "func.return" || name == "stablehlo.return") return FindOpVersion("vhlo.return_v1");
    std::vector<const OpVersion*> versions = OpVersionsOf(name);
    return versions.empty() ? nullptr : versions.back();
  }

  // ------------------------------------------------------------ structure
  absl::Status ConvertNameAndAttributes(const Operation& op, const Operation* /*parent*/,
                                        Operation& out) override {
    const std::string where = op.name;
    if (op.name == "builtin.module") {
      out.name = op.name;
      for (const NamedAttribute& a : op.attributes) {
        const std::string context = absl::StrCat(where, " attribute '", a.first, "'");
        ASSIGN_OR_RETURN(Attribute c, ToVhlo(a.second, context));
        RETURN_IF_ERROR(CheckAttributesAt(c, context));
        out.attributes.emplace_back(a.first, std::move(c));
      }
    } else {
      for (const FeatureRule& rule : kFeatureRules) {
        if (op.name == rule.op && target_ < rule.min && rule.present(op)) {
          return TooNew(rule.feature, op.name, rule.min);
        }
      }
      const OpVersion* latest = LatestFor(op.name);
      if (latest == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(op.name, ": operation has no VHLO version"));
      }
      ASSIGN_OR_RETURN(std::vector<NamedAttribute> attrs, FromStablehlo(*latest, op, where));
      const OpVersion* chosen = latest;
      if (latest->vhlo_name != "vhlo.return_v1") {
        ASSIGN_OR_RETURN(chosen, Downgrade(op.name, latest, op, attrs));
      }
      for (const NamedAttribute& a : attrs) {
        RETURN_IF_ERROR(
            CheckAttributesAt(a.second, absl::StrCat(where, " attribute '", a.first, "'")));
      }
      out.name = chosen->vhlo_name;
      out.attributes = std::move(attrs);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Type> ConvertValueType(const Type& type, const Operation& op) const override {
    return ConvertType(type, op.name);
  }

  Version target_;
};

}  // namespace

absl::StatusOr<OwningOp> StablehloToVhlo(const Operation& module, const Version& target) {
  return Downgrader(target).Run(module);
}

}  // namespace xlite::vhlo
