// Tables shared by the VHLO upgrade (upgrade.cc, VHLO -> StableHLO) and the
// downgrade (downgrade.cc, StableHLO -> VHLO): the neutral (default) values
// VHLO writes explicitly, the per-op-version attribute changes, how each
// attribute of a newest-version VHLO op maps onto StableHLO's, and the enum
// and custom-call API version names. Each table reads in both directions.
#ifndef XLITE_VHLO_VHLO_CONVERSION_TABLES_H_
#define XLITE_VHLO_VHLO_CONVERSION_TABLES_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "xlite/stablehlo/mlir.h"

namespace xlite::vhlo {

// VHLO has no default-valued attributes: a producer writes every attribute,
// with the value StableHLO leaves implicit. These are those values; the same
// kinds give the value an upgrade adds for an attribute a newer op version
// introduced (and the value a downgrade requires before dropping it).
enum class Neutral {
  kFalse,                  // #vhlo.bool_v1<false>
  kZero,                   // #vhlo.integer_v1<0>
  kMinusOne,               // #vhlo.integer_v1<-1>
  kEmptyString,            // #vhlo.string_v1<"">
  kEmptyConfig,            // "" or {} (custom_call backend_config; {} for typed FFI)
  kEmptyArray,             // #vhlo.array_v1<[]>
  kEmptyDict,              // #vhlo.dict_v1<{}>
  kEmptyTensor,            // #vhlo.tensor_v1<dense<> : tensor<0xi64>>
  kSplatOne,               // a tensor of ones
  kSplatZero,              // a tensor of zeros
  kSplatFalse,             // a tensor of false
  kDefaultPrecisions,      // [#vhlo<precision_v1 DEFAULT>, ...]
  kNoComparisonType,       // #vhlo<comparison_type_v1 NOTYPE>
  kOriginalApiVersion,     // #vhlo<api_version_v1 API_VERSION_ORIGINAL>
  kDefaultResultAccuracy,  // #vhlo.result_accuracy_v1<0, 0, 0, DEFAULT>
  kNoneType,               // #vhlo.type_v1<!vhlo.none_v1>
};

bool IsNeutral(const mlir::Attribute& a, Neutral neutral);
// The value itself; shaped values (splats, precision lists) come out empty,
// since their shape depends on the op (see downgrade.cc).
mlir::Attribute MakeNeutral(Neutral neutral);

// Helpers for reading VHLO structs, shared by upgrade.cc and the writer.
// The integers a list attribute holds: its `ints`, then its elements' values.
std::vector<int64_t> ListedInts(const mlir::Attribute& a);
// Field `key` of struct `a`, or InvalidArgument "#<struct> lacks '<key>'"
// ("#<struct> in <where> lacks .." when `where` is not empty).
absl::StatusOr<const mlir::Attribute*> RequiredField(const mlir::Attribute& a,
                                                     absl::string_view key,
                                                     absl::string_view where);

// What changed from one op version to the next. An upgrade adds the
// attributes the newer version introduced, with the value that keeps the old
// meaning, and drops the ones it removed (which must hold their neutral value).
// A downgrade does the reverse. Versions whose difference is only in operands
// (all_gather_v1 -> v2 made the op variadic) need no row.
struct AttributeChange {
  const char* name;
  Neutral value;
};
struct UpgradeRule {
  const char* from;  // the older VHLO op version
  std::vector<AttributeChange> added;
  std::vector<AttributeChange> removed;
};
const std::vector<UpgradeRule>& UpgradeRules();
const UpgradeRule* FindUpgradeRule(absl::string_view from);

// How one attribute of a newest-version VHLO op becomes a StableHLO one.
enum class Form {
  kGeneric,     // kinds map one to one (enums, structs, arrays, dicts: recursively)
  kI64Array,    // tensor of i64 -> array<i64: ...>
  kBoolArray,   // tensor of i1 -> array<i1: ...>
  kSymbol,      // "name" -> @name
  kSymbolList,  // ["a", "b"] -> [@a, @b]
  kChannelId,   // 3 -> #stablehlo.channel_handle<handle = 3, type = 0>
  kUnitIfTrue,  // true -> a unit attribute (false is dropped as the default)
  kApiVersion,  // #vhlo<api_version_v1 API_VERSION_X> -> its number : i32
};

struct AttributeRule {
  const char* name;
  Form form = Form::kGeneric;
  std::optional<Neutral> omit_when = std::nullopt;  // dropped when it holds this value
};

// Attributes StableHLO groups into one struct attribute.
enum class Grouping {
  kNone,
  kConvDimensions,     // -> dimension_numbers = #stablehlo.conv<..>
  kDotDimensions,      // -> dot_dimension_numbers = #stablehlo.dot<..>, algorithm
  kGatherDimensions,   // -> dimension_numbers = #stablehlo.gather<..>
  kScatterDimensions,  // -> scatter_dimension_numbers = #stablehlo.scatter<..>
  kChannelHandle,      // channel_id, channel_type -> channel_handle
};

// The parts of the grouped attributes, as VHLO names them, in the order
// StableHLO prints them; both directions split and join them by these lists.
inline constexpr const char* kDotDimensionFields[] = {
    "lhs_batching_dimensions", "rhs_batching_dimensions", "lhs_contracting_dimensions",
    "rhs_contracting_dimensions"};
inline constexpr const char* kDotAlgorithmFields[] = {
    "lhs_precision_type",          "rhs_precision_type",  "accumulation_type",
    "lhs_component_count",         "rhs_component_count", "num_primitive_operations",
    "allow_imprecise_accumulation"};
inline constexpr const char* kGatherDimensionFields[] = {
    "offset_dims", "collapsed_slice_dims", "operand_batching_dims", "start_indices_batching_dims",
    "start_index_map"};
inline constexpr const char* kScatterDimensionFields[] = {
    "update_window_dims", "inserted_window_dims", "input_batching_dims",
    "scatter_dims_to_operand_dims", "scatter_indices_batching_dims"};

struct OpRule {
  std::vector<std::string> ops;  // newest VHLO op versions sharing the rule
  Grouping grouping = Grouping::kNone;
  std::vector<AttributeRule> attributes;
};
const std::vector<OpRule>& OpRules();
const OpRule* FindOpRule(absl::string_view vhlo_name);

struct EnumRow {
  const char* vhlo;
  const char* stablehlo;   // "#stablehlo<NAME VALUE>" unless `as_struct`
  bool as_struct = false;  // "#stablehlo.NAME<VALUE>"
};
inline constexpr EnumRow kEnums[] = {
    {"comparison_direction_v1", "comparison_direction"},
    {"comparison_type_v1", "comparison_type"},
    {"fft_type_v1", "fft_type"},
    {"precision_v1", "precision"},
    {"rng_algorithm_v1", "rng_algorithm"},
    {"rng_distribution_v1", "rng_distribution"},
    {"transpose_v1", "transpose"},
    {"result_accuracy_mode_v1", "result_accuracy_mode", true},
};

// custom_call's api_version: VHLO keeps the enum, StableHLO its number (i32).
inline constexpr std::pair<const char*, int> kApiVersions[] = {
    {"API_VERSION_UNSPECIFIED", 0},      {"API_VERSION_ORIGINAL", 1},
    {"API_VERSION_STATUS_RETURNING", 2}, {"API_VERSION_STATUS_RETURNING_UNIFIED", 3},
    {"API_VERSION_TYPED_FFI", 4},
};

}  // namespace xlite::vhlo

#endif  // XLITE_VHLO_VHLO_CONVERSION_TABLES_H_
