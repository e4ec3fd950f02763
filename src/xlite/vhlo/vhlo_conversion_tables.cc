#include "xlite/vhlo/vhlo_conversion_tables.h"

#include <algorithm>
#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "xlite/ir/literal.h"
#include "xlite/stablehlo/mlir_parser.h"

namespace xlite::vhlo {

using mlir::Attribute;
using mlir::Type;
using Kind = Attribute::Kind;

// ------------------------------------------------------------ Neutral values

namespace {

bool DenseAll(const Attribute& a, int64_t value) {
  if (a.kind != Kind::kDense || a.literal == nullptr) return false;
  const int64_t n = a.literal->element_count();
  if (n == 0) return false;  // an empty tensor is not a splat
  for (int64_t i = 0; i < n; ++i) {
    if (a.literal->GetInt(i) != value) return false;
  }
  return true;
}

bool IsInteger(const Attribute& a, int64_t value) {
  return a.kind == Kind::kInteger && a.int_value == value;
}

bool IsFloat(const Attribute* a, double value) {
  return a != nullptr && a->kind == Kind::kFloat && a->float_value == value;
}

}  // namespace

std::vector<int64_t> ListedInts(const Attribute& a) {
  std::vector<int64_t> v = a.ints;
  for (const Attribute& e : a.elements) v.push_back(e.int_value);
  return v;
}

absl::StatusOr<const Attribute*> RequiredField(const Attribute& a, absl::string_view key,
                                               absl::string_view where) {
  const Attribute* f = a.Field(key);
  if (f != nullptr) return f;
  const std::string in_where = where.empty() ? "" : absl::StrCat(" in ", where);
  return absl::InvalidArgumentError(absl::StrCat("#", a.name, in_where, " lacks '", key, "'"));
}

bool IsNeutral(const Attribute& a, Neutral neutral) {
  switch (neutral) {
    case Neutral::kFalse:
      return (a.kind == Kind::kBool && !a.bool_value) ||
             (a.kind == Kind::kInteger && a.type.element == "i1" && a.int_value == 0);
    case Neutral::kZero:
      return IsInteger(a, 0);
    case Neutral::kMinusOne:
      return IsInteger(a, -1);
    case Neutral::kEmptyString:
      return a.kind == Kind::kString && a.text.empty();
    case Neutral::kEmptyConfig:
      return IsNeutral(a, Neutral::kEmptyString) || IsNeutral(a, Neutral::kEmptyDict);
    case Neutral::kEmptyArray:
      return a.kind == Kind::kArray && a.elements.empty();
    case Neutral::kEmptyDict:
      return a.kind == Kind::kDict && a.fields.empty();
    case Neutral::kEmptyTensor:
      return a.kind == Kind::kDense && a.literal != nullptr && a.literal->element_count() == 0;
    case Neutral::kSplatOne:
      return DenseAll(a, 1);
    case Neutral::kSplatZero:
    case Neutral::kSplatFalse:
      return DenseAll(a, 0);
    case Neutral::kDefaultPrecisions:
      return a.kind == Kind::kArray &&
             std::all_of(a.elements.begin(), a.elements.end(), [](const Attribute& e) {
               return e.kind == Kind::kEnum && e.text == "DEFAULT";
             });
    case Neutral::kNoComparisonType:
      return a.kind == Kind::kEnum && a.text == "NOTYPE";
    case Neutral::kOriginalApiVersion:
      return a.kind == Kind::kEnum && a.text == "API_VERSION_ORIGINAL";
    case Neutral::kDefaultResultAccuracy: {
      if (a.kind != Kind::kStruct) return false;
      const Attribute* ulps = a.Field("ulps");
      const Attribute* mode = a.Field("mode");
      return IsFloat(a.Field("atol"), 0) && IsFloat(a.Field("rtol"), 0) && ulps != nullptr &&
             IsInteger(*ulps, 0) && mode != nullptr && mode->text == "DEFAULT";
    }
    case Neutral::kNoneType:
      return a.kind == Kind::kType && a.type.element == "none";
  }
  return false;
}

Attribute MakeNeutral(Neutral neutral) {
  Attribute a;
  switch (neutral) {
    case Neutral::kFalse:
      return Attribute::Bool(false);
    case Neutral::kZero:
      return Attribute::Int(0);
    case Neutral::kMinusOne:
      return Attribute::Int(-1);
    case Neutral::kEmptyString:
      return Attribute::String("");
    case Neutral::kEmptyArray:
      a.kind = Kind::kArray;
      return a;
    case Neutral::kEmptyDict:
      a.kind = Kind::kDict;
      return a;
    case Neutral::kEmptyTensor:
      return *mlir::ParseAttributeText("dense<> : tensor<0xi64>");
    case Neutral::kNoneType:
      a.kind = Kind::kType;
      a.type = Type::Scalar("none");
      return a;
    case Neutral::kDefaultResultAccuracy: {
      a.kind = Kind::kStruct;
      a.name = "vhlo.result_accuracy_v1";
      Attribute zero;
      zero.kind = Kind::kFloat;
      zero.type = Type::Scalar("f64");
      a.fields = {{"atol", zero},
                  {"rtol", zero},
                  {"ulps", Attribute::Int(0)},
                  {"mode", Attribute::Enum("result_accuracy_mode_v1", "DEFAULT")}};
      return a;
    }
    case Neutral::kEmptyConfig:
    case Neutral::kSplatOne:
    case Neutral::kSplatZero:
    case Neutral::kSplatFalse:
    case Neutral::kDefaultPrecisions:
    case Neutral::kNoComparisonType:
    case Neutral::kOriginalApiVersion:
      break;  // never added by an upgrade
  }
  return a;
}

// --------------------------------------------------------------- Upgrades
const std::vector<UpgradeRule>& UpgradeRules() {
  static const auto* rules = [] {
    const AttributeChange kAccuracy = {"result_accuracy", Neutral::kDefaultResultAccuracy};
    return new std::vector<UpgradeRule>{
        {"vhlo.collective_broadcast_v1", {{"has_dynamic_root", Neutral::kFalse}}, {}},
        {"vhlo.custom_call_v1", {{"result_tilings", Neutral::kEmptyArray}}, {}},
        {"vhlo.dot_general_v1",
         {{"lhs_precision_type", Neutral::kNoneType},
          {"rhs_precision_type", Neutral::kNoneType},
          {"accumulation_type", Neutral::kNoneType},
          {"lhs_component_count", Neutral::kNoneType},
          {"rhs_component_count", Neutral::kNoneType},
          {"num_primitive_operations", Neutral::kNoneType},
          {"allow_imprecise_accumulation", Neutral::kNoneType}},
         {}},
        // v2 takes padding from its third operand only.
        {"vhlo.dynamic_conv_v1", {}, {{"padding", Neutral::kSplatZero}}},
        {"vhlo.dynamic_gather_v1",
         {{"operand_batching_dims", Neutral::kEmptyTensor},
          {"start_indices_batching_dims", Neutral::kEmptyTensor}},
         {}},
        {"vhlo.gather_v1",
         {{"operand_batching_dims", Neutral::kEmptyTensor},
          {"start_indices_batching_dims", Neutral::kEmptyTensor}},
         {}},
        {"vhlo.scatter_v1",
         {{"input_batching_dims", Neutral::kEmptyTensor},
          {"scatter_indices_batching_dims", Neutral::kEmptyTensor}},
         {}},
        {"vhlo.recv_v1", {{"source_target_pairs", Neutral::kEmptyTensor}}, {}},
        {"vhlo.send_v1", {{"source_target_pairs", Neutral::kEmptyTensor}}, {}},
        // result_accuracy (1.9.0 for exponential, 1.10.0 for the others).
        {"vhlo.cbrt_v1", {kAccuracy}, {}},
        {"vhlo.cosine_v1", {kAccuracy}, {}},
        {"vhlo.exponential_minus_one_v1", {kAccuracy}, {}},
        {"vhlo.exponential_v1", {kAccuracy}, {}},
        {"vhlo.log_plus_one_v1", {kAccuracy}, {}},
        {"vhlo.log_v1", {kAccuracy}, {}},
        {"vhlo.logistic_v1", {kAccuracy}, {}},
        {"vhlo.rsqrt_v1", {kAccuracy}, {}},
        {"vhlo.sine_v1", {kAccuracy}, {}},
        {"vhlo.sqrt_v1", {kAccuracy}, {}},
        {"vhlo.tan_v1", {kAccuracy}, {}},
        {"vhlo.tanh_v1", {kAccuracy}, {}},
    };
  }();
  return *rules;
}

const UpgradeRule* FindUpgradeRule(absl::string_view from) {
  for (const UpgradeRule& rule : UpgradeRules()) {
    if (rule.from == from) return &rule;
  }
  return nullptr;
}

// ------------------------------------------------------------ Conversions
const std::vector<OpRule>& OpRules() {
  static const auto* rules = [] {
    const AttributeRule kChannel = {"channel_id", Form::kChannelId, Neutral::kZero};
    const AttributeRule kGlobalIds = {"use_global_device_ids", Form::kUnitIfTrue, Neutral::kFalse};
    const AttributeRule kDynamicRoot = {"has_dynamic_root", Form::kUnitIfTrue, Neutral::kFalse};
    const AttributeRule kPrecision = {"precision_config", Form::kGeneric,
                                      Neutral::kDefaultPrecisions};
    const std::vector<AttributeRule> kConvolution = {
        {"window_strides", Form::kI64Array, Neutral::kSplatOne},
        {"padding", Form::kGeneric, Neutral::kSplatZero},
        {"lhs_dilation", Form::kI64Array, Neutral::kSplatOne},
        {"rhs_dilation", Form::kI64Array, Neutral::kSplatOne},
        {"window_reversal", Form::kBoolArray, Neutral::kSplatFalse},
        kPrecision};
    return new std::vector<OpRule>{
        {{"vhlo.func_v1"},
         Grouping::kNone,
         {{"sym_visibility", Form::kGeneric, Neutral::kEmptyString},
          {"arg_attrs", Form::kGeneric, Neutral::kEmptyArray},
          {"res_attrs", Form::kGeneric, Neutral::kEmptyArray}}},
        {{"vhlo.call_v1"}, Grouping::kNone, {{"callee", Form::kSymbol}}},
        {{"vhlo.all_gather_v2", "vhlo.all_reduce_v2", "vhlo.reduce_scatter_v1"},
         Grouping::kNone,
         {kChannel, kGlobalIds}},
        {{"vhlo.all_to_all_v2", "vhlo.collective_permute_v1"}, Grouping::kNone, {kChannel}},
        {{"vhlo.collective_broadcast_v2"}, Grouping::kNone, {kChannel, kDynamicRoot}},
        {{"vhlo.collective_reduce_v1"}, Grouping::kNone, {kChannel, kDynamicRoot, kGlobalIds}},
        {{"vhlo.cholesky_v1"}, Grouping::kNone, {{"lower", Form::kGeneric, Neutral::kFalse}}},
        {{"vhlo.compare_v1"},
         Grouping::kNone,
         {{"compare_type", Form::kGeneric, Neutral::kNoComparisonType}}},
        {{"vhlo.composite_v2"},
         Grouping::kNone,
         {{"decomposition", Form::kSymbol},
          {"composite_attributes", Form::kGeneric, Neutral::kEmptyDict},
          {"version", Form::kGeneric, Neutral::kZero}}},
        {{"vhlo.convolution_v1", "vhlo.dynamic_conv_v2"}, Grouping::kConvDimensions, kConvolution},
        {{"vhlo.custom_call_v2"},
         Grouping::kNone,
         {{"has_side_effect", Form::kGeneric, Neutral::kFalse},
          {"backend_config", Form::kGeneric, Neutral::kEmptyConfig},
          {"api_version", Form::kApiVersion, Neutral::kOriginalApiVersion},
          {"called_computations", Form::kSymbolList, Neutral::kEmptyArray},
          {"output_operand_aliases", Form::kGeneric, Neutral::kEmptyArray},
          {"result_tilings", Form::kGeneric, Neutral::kEmptyArray}}},
        {{"vhlo.dot_general_v2"}, Grouping::kDotDimensions, {kPrecision}},
        {{"vhlo.dot_v1"}, Grouping::kNone, {kPrecision}},
        {{"vhlo.dynamic_broadcast_in_dim_v1"},
         Grouping::kNone,
         {{"broadcast_dimensions", Form::kI64Array},
          {"known_expanding_dimensions", Form::kI64Array, Neutral::kEmptyTensor},
          {"known_nonexpanding_dimensions", Form::kI64Array, Neutral::kEmptyTensor}}},
        {{"vhlo.gather_v2", "vhlo.dynamic_gather_v2"},
         Grouping::kGatherDimensions,
         {{"indices_are_sorted", Form::kGeneric, Neutral::kFalse},
          {"slice_sizes", Form::kI64Array}}},
        {{"vhlo.infeed_v1"},
         Grouping::kNone,
         {{"infeed_config", Form::kGeneric, Neutral::kEmptyString},
          {"layout", Form::kGeneric, Neutral::kEmptyArray}}},
        {{"vhlo.outfeed_v1"},
         Grouping::kNone,
         {{"outfeed_config", Form::kGeneric, Neutral::kEmptyString}}},
        {{"vhlo.send_v2", "vhlo.recv_v2"},
         Grouping::kChannelHandle,
         {{"is_host_transfer", Form::kGeneric, Neutral::kFalse},
          {"source_target_pairs", Form::kGeneric, Neutral::kEmptyTensor}}},
        {{"vhlo.reduce_window_v1"},
         Grouping::kNone,
         {{"window_dimensions", Form::kI64Array},
          {"window_strides", Form::kI64Array, Neutral::kSplatOne},
          {"base_dilations", Form::kI64Array, Neutral::kSplatOne},
          {"window_dilations", Form::kI64Array, Neutral::kSplatOne},
          {"padding", Form::kGeneric, Neutral::kSplatZero}}},
        {{"vhlo.scatter_v2"},
         Grouping::kScatterDimensions,
         {{"indices_are_sorted", Form::kGeneric, Neutral::kFalse},
          {"unique_indices", Form::kGeneric, Neutral::kFalse}}},
        {{"vhlo.select_and_scatter_v1"},
         Grouping::kNone,
         {{"window_dimensions", Form::kI64Array},
          {"window_strides", Form::kI64Array, Neutral::kSplatOne},
          {"padding", Form::kGeneric, Neutral::kSplatZero}}},
        {{"vhlo.sort_v1"},
         Grouping::kNone,
         {{"dimension", Form::kGeneric, Neutral::kMinusOne},
          {"is_stable", Form::kGeneric, Neutral::kFalse}}},
        {{"vhlo.cbrt_v2", "vhlo.cosine_v2", "vhlo.exponential_v2", "vhlo.exponential_minus_one_v2",
          "vhlo.log_v2", "vhlo.log_plus_one_v2", "vhlo.logistic_v2", "vhlo.rsqrt_v2",
          "vhlo.sine_v2", "vhlo.sqrt_v2", "vhlo.tan_v2", "vhlo.tanh_v2"},
         Grouping::kNone,
         {{"result_accuracy", Form::kGeneric, Neutral::kDefaultResultAccuracy}}},
        {{"vhlo.broadcast_in_dim_v1"},
         Grouping::kNone,
         {{"broadcast_dimensions", Form::kI64Array}}},
        {{"vhlo.broadcast_v1"}, Grouping::kNone, {{"broadcast_sizes", Form::kI64Array}}},
        {{"vhlo.dynamic_slice_v1"}, Grouping::kNone, {{"slice_sizes", Form::kI64Array}}},
        {{"vhlo.fft_v1"}, Grouping::kNone, {{"fft_length", Form::kI64Array}}},
        {{"vhlo.pad_v1"},
         Grouping::kNone,
         {{"edge_padding_low", Form::kI64Array},
          {"edge_padding_high", Form::kI64Array},
          {"interior_padding", Form::kI64Array}}},
        {{"vhlo.reverse_v1", "vhlo.reduce_v1", "vhlo.map_v1"},
         Grouping::kNone,
         {{"dimensions", Form::kI64Array}}},
        {{"vhlo.slice_v1"},
         Grouping::kNone,
         {{"start_indices", Form::kI64Array},
          {"limit_indices", Form::kI64Array},
          {"strides", Form::kI64Array}}},
        {{"vhlo.transpose_v1"}, Grouping::kNone, {{"permutation", Form::kI64Array}}},
    };
  }();
  return *rules;
}

const OpRule* FindOpRule(absl::string_view vhlo_name) {
  static const auto* index = [] {
    auto* map = new absl::flat_hash_map<std::string, const OpRule*>();
    for (const OpRule& rule : OpRules()) {
      for (const std::string& op : rule.ops) (*map)[op] = &rule;
    }
    return map;
  }();
  auto it = index->find(vhlo_name);
  return it == index->end() ? nullptr : it->second;
}

}  // namespace xlite::vhlo
