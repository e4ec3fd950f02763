#include "xlite/vhlo/upgrade.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "xlite/stablehlo/mlir_parser.h"
#include "xlite/support/status.h"
#include "xlite/vhlo/bytecode_reader.h"
#include "xlite/vhlo/op_tree_rewriter.h"
#include "xlite/vhlo/vhlo_conversion_tables.h"

namespace xlite::vhlo {
namespace {

using mlir::Attribute;
using mlir::NamedAttribute;
using mlir::Operation;
using mlir::OwningOp;
using mlir::Type;
using Kind = Attribute::Kind;

Attribute IntList(const std::vector<int64_t>& values) {
  Attribute list;
  list.kind = Kind::kArray;
  for (int64_t v : values) list.elements.push_back(Attribute::Int(v));
  return list;
}

Attribute Struct(std::string name, std::vector<NamedAttribute> fields) {
  Attribute a;
  a.kind = Kind::kStruct;
  a.name = std::move(name);
  a.fields = std::move(fields);
  return a;
}

// --------------------------------------------------------------- Upgrader
class Upgrader : public OpTreeRewriter {
 public:
  explicit Upgrader(Version producer) : producer_(producer) {}

  absl::StatusOr<OwningOp> Run(const Operation& module) {
    RETURN_IF_ERROR(CheckRegistered(module));
    if (!InWindow(producer_)) {
      return absl::InvalidArgumentError(
          absl::StrCat("artifact produced by StableHLO ", producer_.ToString(),
                       " is outside the supported window ", Version::Minimum().ToString(), "..",
                       Version::Current().ToString()));
    }
    ASSIGN_OR_RETURN(OwningOp out, RewriteOp(module, nullptr));
    if (absl::Status resolved = ResolveForwardReferences(); !resolved.ok()) {
      return Error(resolved.message());
    }
    if (absl::Status folded = FoldConversionCasts(*out); !folded.ok()) {
      return Error(folded.message());
    }
    return out;
  }

 private:
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " (artifact produced by StableHLO_v", producer_.ToString(), ")"));
  }

  // Artifacts that mix dialects (JAX writes Shardy's ops next to VHLO) cast
  // between !vhlo.tensor_v1 and builtin tensors; once VHLO types are builtin
  // ones, those casts are identities and go.
  static absl::Status FoldConversionCasts(Operation& root) {
    absl::flat_hash_map<const mlir::Value*, mlir::Value*> replacement;
    std::function<absl::Status(Operation&)> collect = [&](Operation& op) -> absl::Status {
      for (auto& region : op.regions) {
        for (auto& block : region->blocks) {
          for (auto& inner : block->operations) {
            if (inner->name == "builtin.unrealized_conversion_cast") {
              if (inner->operands.size() != 1 || inner->results.size() != 1 ||
                  inner->operands[0] == nullptr ||
                  !(inner->operands[0]->type == inner->results[0]->type)) {
                return absl::UnimplementedError(
                    "builtin.unrealized_conversion_cast other than between a VHLO type and its "
                    "builtin twin is unsupported");
              }
              replacement[inner->results[0].get()] = inner->operands[0];
            }
            RETURN_IF_ERROR(collect(*inner));
          }
        }
      }
      return absl::OkStatus();
    };
    RETURN_IF_ERROR(collect(root));
    if (replacement.empty()) return absl::OkStatus();
    auto resolve = [&](mlir::Value* v) {
      for (size_t hops = 0; hops <= replacement.size(); ++hops) {
        auto it = replacement.find(v);
        if (it == replacement.end()) break;
        v = it->second;
      }
      return v;
    };
    std::function<void(Operation&)> rewrite = [&](Operation& op) {
      for (mlir::Value*& v : op.operands) v = resolve(v);
      for (auto& region : op.regions) {
        for (auto& block : region->blocks) {
          for (auto& inner : block->operations) rewrite(*inner);
          std::erase_if(block->operations, [](const std::unique_ptr<Operation>& o) {
            return o->name == "builtin.unrealized_conversion_cast";
          });
        }
      }
    };
    rewrite(root);
    return absl::OkStatus();
  }

  // Every VHLO op must be in the table; reported before anything else.
  absl::Status CheckRegistered(const Operation& op) const {
    if (absl::StartsWith(op.name, "vhlo.") && FindOpVersion(op.name) == nullptr) {
      return absl::NotFoundError(absl::StrCat("unregistered operation '", op.name,
                                              "' (artifact produced by StableHLO_v",
                                              producer_.ToString(), ")"));
    }
    for (const auto& region : op.regions) {
      for (const auto& block : region->blocks) {
        for (const auto& inner : block->operations) {
          RETURN_IF_ERROR(CheckRegistered(*inner));
        }
      }
    }
    return absl::OkStatus();
  }

  // ---------------------------------------------------------------- types
  absl::StatusOr<std::string> ConvertElement(const std::string& element,
                                             absl::string_view where) const {
    const VersionedElement* row = FindVersionedElementType(element);
    if (row != nullptr && producer_ < row->min) {
      return Error(absl::StrCat("type ", element, " (!vhlo.", row->vhlo_name, ") in ", where,
                                " exists from StableHLO ", row->min.ToString(), " on"));
    }
    return element;
  }

  absl::StatusOr<Type> ConvertType(const Type& type, absl::string_view where) const {
    Type out = type;
    if (!type.element.empty()) {
      ASSIGN_OR_RETURN(std::string element, ConvertElement(type.element, where));
      out.element = element;
    }
    RETURN_IF_ERROR(ConvertNestedTypes(out, [&](const Type& t) { return ConvertType(t, where); }));
    return out;
  }

  // ----------------------------------------------------------- attributes
  absl::Status CheckAttributeVersion(absl::string_view vhlo_name, absl::string_view where) const {
    const VersionedElement* row = FindVersionedAttribute(vhlo_name);
    if (row != nullptr && producer_ < row->min) {
      return Error(absl::StrCat("attribute #vhlo.", row->vhlo_name, " in ", where,
                                " exists from StableHLO ", row->min.ToString(), " on"));
    }
    return absl::OkStatus();
  }

  // VHLO attribute kinds map one to one onto StableHLO/builtin ones.
  absl::StatusOr<Attribute> ConvertGeneric(const Attribute& a, absl::string_view where) const {
    Attribute out = a;
    switch (a.kind) {
      case Kind::kArray:
      case Kind::kDict:
        for (Attribute& e : out.elements) {
          ASSIGN_OR_RETURN(Attribute c, ConvertGeneric(e, where));
          e = std::move(c);
        }
        for (NamedAttribute& f : out.fields) {
          ASSIGN_OR_RETURN(Attribute c, ConvertGeneric(f.second, where));
          f.second = std::move(c);
        }
        return out;
      case Kind::kType:
      case Kind::kDense:
      case Kind::kDenseResource: {
        ASSIGN_OR_RETURN(Type t, ConvertType(a.type, where));
        out.type = std::move(t);
        return out;
      }
      case Kind::kEnum:
        return ConvertEnum(a, where);
      case Kind::kStruct:
        return ConvertStruct(a, where);
      case Kind::kOpaque:
        if (absl::StartsWith(a.text, "#vhlo")) {
          return Error(absl::StrCat("unknown VHLO attribute ", a.text, " in ", where));
        }
        return out;
      default:
        return out;
    }
  }

  absl::StatusOr<Attribute> ConvertEnum(const Attribute& a, absl::string_view where) const {
    for (const EnumRow& row : kEnums) {
      if (a.name != row.vhlo) continue;
      RETURN_IF_ERROR(CheckAttributeVersion(row.vhlo, where));
      if (!row.as_struct) return Attribute::Enum(absl::StrCat("stablehlo.", row.stablehlo), a.text);
      Attribute s = Struct(absl::StrCat("stablehlo.", row.stablehlo), {});
      s.text = a.text;
      s.raw = a.text;
      return s;
    }
    if (absl::EndsWith(a.name, "_v1") || absl::StartsWith(a.name, "vhlo")) {
      return Error(
          absl::StrCat("unknown VHLO attribute #vhlo<", a.name, " ", a.text, "> in ", where));
    }
    return a;  // another dialect's enum
  }

  absl::StatusOr<Attribute> ConvertStruct(const Attribute& a, absl::string_view where) const {
    if (!absl::StartsWith(a.name, "vhlo.")) return a;  // another dialect's attribute
    RETURN_IF_ERROR(CheckAttributeVersion(a.name, where));
    auto field = [&](absl::string_view key) -> absl::StatusOr<const Attribute*> {
      absl::StatusOr<const Attribute*> f = RequiredField(a, key, where);
      if (!f.ok()) return Error(f.status().message());
      return f;
    };
    if (a.name == "vhlo.output_operand_alias_v1") {
      absl::StatusOr<const Attribute*> out_indices = field("outputTupleIndices");
      absl::StatusOr<const Attribute*> operand = field("operandIndex");
      absl::StatusOr<const Attribute*> in_indices = field("operandTupleIndices");
      if (!out_indices.ok()) return out_indices.status();
      if (!operand.ok()) return operand.status();
      if (!in_indices.ok()) return in_indices.status();
      return Struct("stablehlo.output_operand_alias",
                    {{"output_tuple_indices", IntList(ListedInts(**out_indices))},
                     {"operand_index", Attribute::Int((*operand)->int_value)},
                     {"operand_tuple_indices", IntList(ListedInts(**in_indices))}});
    }
    if (a.name == "vhlo.result_accuracy_v1") {
      std::vector<NamedAttribute> fields;
      for (const char* key : {"atol", "rtol", "ulps", "mode"}) {
        ASSIGN_OR_RETURN(const Attribute* f, field(key));
        ASSIGN_OR_RETURN(Attribute c, ConvertGeneric(*f, where));
        fields.emplace_back(key, std::move(c));
      }
      return Struct("stablehlo.result_accuracy", std::move(fields));
    }
    if (a.name == "vhlo.replica_group_mesh_axes_v1") {
      absl::StatusOr<const Attribute*> mesh = field("mesh");
      absl::StatusOr<const Attribute*> axes = field("axes");
      if (!mesh.ok()) return mesh.status();
      if (!axes.ok()) return axes.status();
      Attribute symbol;
      symbol.kind = Kind::kSymbol;
      symbol.text = (*mesh)->text;
      ASSIGN_OR_RETURN(Attribute axis_list, ConvertGeneric(**axes, where));
      return Struct("stablehlo.replica_group_mesh_axes",
                    {{"mesh", symbol}, {"axes", std::move(axis_list)}});
    }
    if (a.name == "vhlo.axis_ref_v1") {
      ASSIGN_OR_RETURN(const Attribute* name, field("name"));
      std::vector<NamedAttribute> fields = {{"name", *name}};
      if (const Attribute* sub = a.Field("sub_axis_info")) {
        const Attribute* pre = sub->Field("pre_size");
        const Attribute* size = sub->Field("size");
        if (pre == nullptr || size == nullptr) {
          return Error(absl::StrCat("#vhlo.sub_axis_info_v1 in ", where, " is incomplete"));
        }
        Attribute info;
        info.kind = Kind::kOpaque;  // the text reader keeps "(pre_size)size"
        info.text = absl::StrCat("(", pre->int_value, ")", size->int_value);
        fields.emplace_back("sub_axis_info", std::move(info));
      }
      return Struct("stablehlo.axis_ref", std::move(fields));
    }
    return Error(absl::StrCat("unknown VHLO attribute #", a.name, " in ", where));
  }

  absl::StatusOr<Attribute> ConvertByForm(const Attribute& a, Form form,
                                          absl::string_view where) const {
    auto dense_ints = [&](absl::string_view what) -> absl::StatusOr<std::vector<int64_t>> {
      if (a.kind == Kind::kDenseArray) return a.ints;
      if (a.kind != Kind::kDense || a.literal == nullptr) {
        return Error(absl::StrCat(where, ": expected a tensor for ", what));
      }
      std::vector<int64_t> v(a.literal->element_count());
      for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) v[i] = a.literal->GetInt(i);
      return v;
    };
    switch (form) {
      case Form::kGeneric:
        return ConvertGeneric(a, where);
      case Form::kI64Array: {
        ASSIGN_OR_RETURN(std::vector<int64_t> v, dense_ints("array<i64>"));
        return Attribute::I64Array(std::move(v));
      }
      case Form::kBoolArray: {
        ASSIGN_OR_RETURN(std::vector<int64_t> v, dense_ints("array<i1>"));
        return Attribute::BoolArray(std::vector<bool>(v.begin(), v.end()));
      }
      case Form::kSymbol: {
        if (a.kind != Kind::kString && a.kind != Kind::kSymbol) {
          return Error(absl::StrCat(where, ": expected a symbol name"));
        }
        Attribute s;
        s.kind = Kind::kSymbol;
        s.text = a.text;
        return s;
      }
      case Form::kSymbolList: {
        if (a.kind != Kind::kArray) return Error(absl::StrCat(where, ": expected a list"));
        Attribute list = a;
        for (Attribute& e : list.elements) {
          ASSIGN_OR_RETURN(Attribute s, ConvertByForm(e, Form::kSymbol, where));
          e = std::move(s);
        }
        return list;
      }
      case Form::kChannelId:
        if (a.kind != Kind::kInteger) return Error(absl::StrCat(where, ": expected an integer"));
        return Struct("stablehlo.channel_handle",
                      {{"handle", Attribute::Int(a.int_value)}, {"type", Attribute::Int(0)}});
      case Form::kUnitIfTrue: {
        Attribute unit;
        unit.kind = Kind::kUnit;
        return unit;
      }
      case Form::kApiVersion:
        for (const auto& [name, number] : kApiVersions) {
          if (a.kind == Kind::kEnum && a.text == name) return Attribute::Int(number, "i32");
        }
        return Error(absl::StrCat(where, ": unknown custom call API version '", a.text, "'"));
    }
    return a;
  }

  // Builds the grouped struct attribute(s) and removes their parts from `attrs`.
  absl::Status Group(Grouping grouping, std::vector<NamedAttribute>& attrs,
                     std::vector<NamedAttribute>& out, absl::string_view where) const {
    auto take = [&](absl::string_view key) -> absl::StatusOr<Attribute> {
      for (auto it = attrs.begin(); it != attrs.end(); ++it) {
        if (it->first == key) {
          Attribute a = std::move(it->second);
          attrs.erase(it);
          return a;
        }
      }
      return Error(absl::StrCat(where, " lacks attribute '", key, "'"));
    };
    auto take_ints = [&](absl::string_view key) -> absl::StatusOr<std::vector<int64_t>> {
      ASSIGN_OR_RETURN(Attribute a, take(key));
      ASSIGN_OR_RETURN(Attribute array, ConvertByForm(a, Form::kI64Array, where));
      return array.ints;
    };
    auto take_int = [&](absl::string_view key) -> absl::StatusOr<int64_t> {
      ASSIGN_OR_RETURN(Attribute a, take(key));
      if (a.kind != Kind::kInteger)
        return Error(absl::StrCat(where, ": '", key, "' not an integer"));
      return a.int_value;
    };
    switch (grouping) {
      case Grouping::kNone:
        return absl::OkStatus();
      case Grouping::kConvDimensions: {
        ASSIGN_OR_RETURN(auto in_batch, take_int("input_batch_dimension"));
        ASSIGN_OR_RETURN(auto in_feature, take_int("input_feature_dimension"));
        ASSIGN_OR_RETURN(auto in_spatial, take_ints("input_spatial_dimensions"));
        ASSIGN_OR_RETURN(auto k_in, take_int("kernel_input_feature_dimension"));
        ASSIGN_OR_RETURN(auto k_out, take_int("kernel_output_feature_dimension"));
        ASSIGN_OR_RETURN(auto k_spatial, take_ints("kernel_spatial_dimensions"));
        ASSIGN_OR_RETURN(auto out_batch, take_int("output_batch_dimension"));
        ASSIGN_OR_RETURN(auto out_feature, take_int("output_feature_dimension"));
        ASSIGN_OR_RETURN(auto out_spatial, take_ints("output_spatial_dimensions"));
        // [b, 0, 1, f]: each position names the dimension it holds.
        auto layout = [&](int64_t first, const char* first_name, int64_t second,
                          const char* second_name,
                          const std::vector<int64_t>& spatial) -> absl::StatusOr<std::string> {
          const int64_t rank = static_cast<int64_t>(spatial.size()) + 2;
          std::vector<std::string> slots(rank);
          auto put = [&](int64_t pos, std::string name) {
            if (pos < 0 || pos >= rank || !slots[pos].empty()) return false;
            slots[pos] = std::move(name);
            return true;
          };
          bool ok = put(first, first_name) && put(second, second_name);
          for (size_t i = 0; ok && i < spatial.size(); ++i) ok = put(spatial[i], absl::StrCat(i));
          if (!ok) return Error(absl::StrCat(where, ": inconsistent convolution dimensions"));
          return absl::StrCat("[", absl::StrJoin(slots, ", "), "]");
        };
        ASSIGN_OR_RETURN(auto input, layout(in_batch, "b", in_feature, "f", in_spatial));
        ASSIGN_OR_RETURN(auto kernel, layout(k_in, "i", k_out, "o", k_spatial));
        ASSIGN_OR_RETURN(auto output, layout(out_batch, "b", out_feature, "f", out_spatial));
        Attribute conv = Struct("stablehlo.conv", {});
        conv.raw = absl::StrCat(input, "x", kernel, "->", output);
        out.emplace_back("dimension_numbers", std::move(conv));
        return absl::OkStatus();
      }
      case Grouping::kDotDimensions: {
        // StableHLO prints #stablehlo.dot fields in this order.
        std::vector<NamedAttribute> fields;
        for (const char* key : kDotDimensionFields) {
          ASSIGN_OR_RETURN(auto dims, take_ints(key));
          fields.emplace_back(key, IntList(dims));
        }
        out.emplace_back("dot_dimension_numbers", Struct("stablehlo.dot", std::move(fields)));
        // #stablehlo.dot_algorithm: all seven present, or (all none) no algorithm.
        std::vector<NamedAttribute> algorithm;
        int none = 0;
        for (const char* key : kDotAlgorithmFields) {
          ASSIGN_OR_RETURN(auto part, take(key));
          if (IsNeutral(part, Neutral::kNoneType)) {
            ++none;
            continue;
          }
          ASSIGN_OR_RETURN(auto converted, ConvertGeneric(part, where));
          algorithm.emplace_back(key, std::move(converted));
        }
        if (none != 0 && none != 7) {
          return Error(absl::StrCat(where, ": dot algorithm is partly unset"));
        }
        if (none == 0) out.emplace_back("algorithm", Struct("stablehlo.dot_algorithm", algorithm));
        return absl::OkStatus();
      }
      case Grouping::kGatherDimensions:
      case Grouping::kScatterDimensions: {
        const bool gather = grouping == Grouping::kGatherDimensions;
        std::vector<NamedAttribute> fields;
        for (const char* key : gather ? kGatherDimensionFields : kScatterDimensionFields) {
          ASSIGN_OR_RETURN(auto dims, take_ints(key));
          fields.emplace_back(key, IntList(dims));
        }
        ASSIGN_OR_RETURN(auto index_vector_dim, take_int("index_vector_dim"));
        fields.emplace_back("index_vector_dim", Attribute::Int(index_vector_dim));
        out.emplace_back(gather ? "dimension_numbers" : "scatter_dimension_numbers",
                         Struct(gather ? "stablehlo.gather" : "stablehlo.scatter", fields));
        return absl::OkStatus();
      }
      case Grouping::kChannelHandle: {
        ASSIGN_OR_RETURN(auto handle, take_int("channel_id"));
        ASSIGN_OR_RETURN(auto type, take_int("channel_type"));
        out.emplace_back("channel_handle",
                         Struct("stablehlo.channel_handle", {{"handle", Attribute::Int(handle)},
                                                             {"type", Attribute::Int(type)}}));
        return absl::OkStatus();
      }
    }
    return absl::OkStatus();
  }

  // VHLO op (newest version) attributes -> StableHLO attributes.
  absl::StatusOr<std::vector<NamedAttribute>> ConvertAttributes(const std::string& vhlo_name,
                                                                std::vector<NamedAttribute> attrs,
                                                                absl::string_view where) const {
    std::vector<NamedAttribute> out;
    const OpRule* rule = FindOpRule(vhlo_name);
    if (rule != nullptr) RETURN_IF_ERROR(Group(rule->grouping, attrs, out, where));
    // custom_call keeps operand/result layouts unless both are empty.
    if (vhlo_name == "vhlo.custom_call_v2") {
      const Attribute* operands = nullptr;
      const Attribute* results = nullptr;
      for (const NamedAttribute& a : attrs) {
        if (a.first == "operand_layouts") operands = &a.second;
        if (a.first == "result_layouts") results = &a.second;
      }
      if (operands != nullptr && results != nullptr && IsNeutral(*operands, Neutral::kEmptyArray) &&
          IsNeutral(*results, Neutral::kEmptyArray)) {
        std::erase_if(attrs, [](const NamedAttribute& a) {
          return a.first == "operand_layouts" || a.first == "result_layouts";
        });
      }
    }
    for (NamedAttribute& a : attrs) {
      const AttributeRule* attr_rule = nullptr;
      if (rule != nullptr) {
        for (const AttributeRule& r : rule->attributes) {
          if (a.first == r.name) attr_rule = &r;
        }
      }
      const std::string context = absl::StrCat("'", a.first, "' of ", where);
      if (attr_rule == nullptr) {
        ASSIGN_OR_RETURN(Attribute c, ConvertGeneric(a.second, context));
        out.emplace_back(a.first, std::move(c));
        continue;
      }
      if (attr_rule->omit_when.has_value() && IsNeutral(a.second, *attr_rule->omit_when)) continue;
      ASSIGN_OR_RETURN(Attribute c, ConvertByForm(a.second, attr_rule->form, context));
      // StableHLO names the channel by its handle.
      out.emplace_back(attr_rule->form == Form::kChannelId ? "channel_handle" : a.first,
                       std::move(c));
    }
    return out;
  }

  // Applies upgrade rules until `op` is the newest version of its op.
  absl::StatusOr<const OpVersion*> Upgrade(const OpVersion* op,
                                           std::vector<NamedAttribute>& attrs) const {
    const OpVersion* latest = LatestVersionOf(*op);
    while (op != latest) {
      const OpVersion* next = nullptr;
      for (const OpVersion* candidate : OpVersionsOf(op->target_name)) {
        if (candidate->version == op->version + 1) next = candidate;
      }
      if (next == nullptr) {
        return Error(absl::StrCat("no upgrade from '", op->vhlo_name, "'"));
      }
      if (const UpgradeRule* rule = FindUpgradeRule(op->vhlo_name)) {
        for (const AttributeChange& removed : rule->removed) {
          auto it = std::find_if(attrs.begin(), attrs.end(),
                                 [&](const NamedAttribute& a) { return a.first == removed.name; });
          if (it == attrs.end()) continue;
          if (!IsNeutral(it->second, removed.value)) {
            return Error(absl::StrCat("cannot upgrade '", op->vhlo_name, "' to '", next->vhlo_name,
                                      "': attribute '", removed.name,
                                      "' has a value the newer version cannot express"));
          }
          attrs.erase(it);
        }
        for (const AttributeChange& added : rule->added) {
          bool present = std::any_of(attrs.begin(), attrs.end(), [&](const NamedAttribute& a) {
            return a.first == added.name;
          });
          if (!present) attrs.emplace_back(added.name, MakeNeutral(added.value));
        }
      }
      op = next;
    }
    return op;
  }

  // ------------------------------------------------------------ structure
  absl::Status ConvertNameAndAttributes(const Operation& op, const Operation* parent,
                                        Operation& out) override {
    std::vector<NamedAttribute> attrs = op.attributes;
    std::string vhlo_name = op.name;
    if (absl::StartsWith(op.name, "vhlo.")) {
      absl::StatusOr<const OpVersion*> row = LookupOpVersion(op.name);
      if (!row.ok()) return Error(row.status().message());
      if (absl::Status legal = CheckOpLegalAt(**row, producer_); !legal.ok()) {
        return Error(legal.message());
      }
      ASSIGN_OR_RETURN(const OpVersion* latest, Upgrade(*row, attrs));
      vhlo_name = latest->vhlo_name;
      out.name = latest->target_name;
      if (vhlo_name == "vhlo.return_v1" && parent != nullptr && parent->name == "vhlo.func_v1") {
        out.name = "func.return";
      }
    } else {
      out.name = op.name;
    }
    ASSIGN_OR_RETURN(out.attributes, ConvertAttributes(vhlo_name, std::move(attrs), Where(op)));
    return absl::OkStatus();
  }

  absl::StatusOr<Type> ConvertValueType(const Type& type, const Operation& op) const override {
    return ConvertType(type, Where(op));
  }

  // How errors name an op.
  static std::string Where(const Operation& op) { return absl::StrCat("'", op.name, "'"); }

  Version producer_;
};

}  // namespace

absl::StatusOr<OwningOp> VhloToStablehlo(const Operation& vhlo_module, const Version& producer) {
  return Upgrader(producer).Run(vhlo_module);
}

absl::StatusOr<OwningOp> DeserializePortableArtifact(absl::string_view bytes,
                                                     const std::string& filename) {
  BytecodeInfo info;
  ASSIGN_OR_RETURN(OwningOp module, ReadBytecode(bytes, filename, &info));
  absl::StatusOr<Version> producer = ParseProducer(info.producer);
  if (!producer.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(filename, ": ", producer.status().message()));
  }
  absl::StatusOr<OwningOp> upgraded = VhloToStablehlo(*module, *producer);
  if (!upgraded.ok()) {
    return absl::Status(upgraded.status().code(),
                        absl::StrCat(filename, ": ", upgraded.status().message()));
  }
  return upgraded;
}

}  // namespace xlite::vhlo
