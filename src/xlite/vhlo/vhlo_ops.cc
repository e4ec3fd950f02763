#include "xlite/vhlo/vhlo_ops.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace xlite::vhlo {
namespace {

constexpr Version V(int major, int minor, int patch) { return Version{major, minor, patch}; }
constexpr Version kLive = kCurrentVersion;  // max of op versions still in use

struct OpRow {
  const char* vhlo;    // mnemonic without "vhlo."
  const char* target;  // full StableHLO/func name
  Version min;
  Version max;
};

// Every VHLO op version: [min, max] StableHLO versions, inclusive. Ranges come
// from StableHLO's VhloOps.td as its compatibility tests exercise them
// (stablehlo_legalize_to_vhlo.X.mlir and vhlo_to_version_downgrade*.mlir):
// an op version first appears in the golden of its min and is refused by the
// downgrade to the version before it. Keep sorted by `vhlo`.
constexpr OpRow kOps[] = {
    {"abs_v1", "stablehlo.abs", V(0, 9, 0), kLive},
    {"add_v1", "stablehlo.add", V(0, 9, 0), kLive},
    {"after_all_v1", "stablehlo.after_all", V(0, 9, 0), kLive},
    {"all_gather_v1", "stablehlo.all_gather", V(0, 9, 0), V(1, 4, 0)},
    {"all_gather_v2", "stablehlo.all_gather", V(1, 5, 0), kLive},  // variadic
    {"all_reduce_v1", "stablehlo.all_reduce", V(0, 9, 0), V(1, 4, 0)},
    {"all_reduce_v2", "stablehlo.all_reduce", V(1, 5, 0), kLive},  // variadic
    {"all_to_all_v1", "stablehlo.all_to_all", V(0, 9, 0), V(1, 4, 0)},
    {"all_to_all_v2", "stablehlo.all_to_all", V(1, 5, 0), kLive},  // variadic
    {"and_v1", "stablehlo.and", V(0, 9, 0), kLive},
    {"async_done_v1", "stablehlo.async_done", V(1, 15, 0), kLive},
    {"async_start_v1", "stablehlo.async_start", V(1, 15, 0), kLive},
    {"atan2_v1", "stablehlo.atan2", V(0, 9, 0), kLive},
    {"batch_norm_grad_v1", "stablehlo.batch_norm_grad", V(0, 9, 0), kLive},
    {"batch_norm_inference_v1", "stablehlo.batch_norm_inference", V(0, 9, 0), kLive},
    {"batch_norm_training_v1", "stablehlo.batch_norm_training", V(0, 9, 0), kLive},
    {"bitcast_convert_v1", "stablehlo.bitcast_convert", V(0, 9, 0), kLive},
    {"broadcast_in_dim_v1", "stablehlo.broadcast_in_dim", V(0, 9, 0), kLive},
    {"broadcast_v1", "stablehlo.broadcast", V(0, 9, 0), kLive},
    {"call_v1", "func.call", V(0, 9, 0), kLive},
    {"case_v1", "stablehlo.case", V(0, 9, 0), kLive},
    {"cbrt_v1", "stablehlo.cbrt", V(0, 9, 0), V(1, 9, 0)},
    {"cbrt_v2", "stablehlo.cbrt", V(1, 10, 0), kLive},  // result_accuracy
    {"ceil_v1", "stablehlo.ceil", V(0, 9, 0), kLive},
    {"cholesky_v1", "stablehlo.cholesky", V(0, 9, 0), kLive},
    {"clamp_v1", "stablehlo.clamp", V(0, 9, 0), kLive},
    {"collective_broadcast_v1", "stablehlo.collective_broadcast", V(0, 16, 0), V(1, 18, 0)},
    {"collective_broadcast_v2", "stablehlo.collective_broadcast", V(1, 19, 0),
     kLive},  // has_dynamic_root
    {"collective_permute_v1", "stablehlo.collective_permute", V(0, 9, 0), kLive},
    {"collective_reduce_v1", "stablehlo.collective_reduce", V(1, 19, 0), kLive},
    {"compare_v1", "stablehlo.compare", V(0, 9, 0), kLive},
    {"complex_v1", "stablehlo.complex", V(0, 9, 0), kLive},
    {"composite_v1", "stablehlo.composite", V(0, 19, 0), V(1, 13, 0)},
    {"composite_v2", "stablehlo.composite", V(1, 14, 0), kLive},  // regions
    {"concatenate_v1", "stablehlo.concatenate", V(0, 9, 0), kLive},
    {"constant_v1", "stablehlo.constant", V(0, 9, 0), kLive},
    {"convert_v1", "stablehlo.convert", V(0, 9, 0), kLive},
    {"convolution_v1", "stablehlo.convolution", V(0, 9, 0), kLive},
    {"cosine_v1", "stablehlo.cosine", V(0, 9, 0), V(1, 9, 0)},
    {"cosine_v2", "stablehlo.cosine", V(1, 10, 0), kLive},
    {"count_leading_zeros_v1", "stablehlo.count_leading_zeros", V(0, 9, 0), kLive},
    {"create_token_v1", "stablehlo.create_token", V(0, 9, 0), kLive},
    {"cross-replica-sum_v1", "stablehlo.cross-replica-sum", V(0, 9, 0), kLive},
    {"custom_call_v1", "stablehlo.custom_call", V(0, 9, 0), V(1, 17, 0)},
    {"custom_call_v2", "stablehlo.custom_call", V(1, 18, 0), kLive},  // result_tilings
    {"divide_v1", "stablehlo.divide", V(0, 9, 0), kLive},
    {"dot_general_v1", "stablehlo.dot_general", V(0, 9, 0), V(1, 5, 0)},
    {"dot_general_v2", "stablehlo.dot_general", V(1, 6, 0), kLive},  // algorithm
    {"dot_v1", "stablehlo.dot", V(0, 9, 0), kLive},
    {"dynamic_broadcast_in_dim_v1", "stablehlo.dynamic_broadcast_in_dim", V(0, 9, 0), kLive},
    {"dynamic_conv_v1", "stablehlo.dynamic_conv", V(0, 9, 0), V(0, 19, 0)},
    {"dynamic_conv_v2", "stablehlo.dynamic_conv", V(0, 20, 0), kLive},  // no padding attr
    {"dynamic_gather_v1", "stablehlo.dynamic_gather", V(0, 9, 0), V(1, 0, 0)},
    {"dynamic_gather_v2", "stablehlo.dynamic_gather", V(1, 1, 0), kLive},  // batching dims
    {"dynamic_iota_v1", "stablehlo.dynamic_iota", V(0, 9, 0), kLive},
    {"dynamic_pad_v1", "stablehlo.dynamic_pad", V(0, 9, 0), kLive},
    {"dynamic_reshape_v1", "stablehlo.dynamic_reshape", V(0, 9, 0), kLive},
    {"dynamic_slice_v1", "stablehlo.dynamic_slice", V(0, 9, 0), kLive},
    {"dynamic_update_slice_v1", "stablehlo.dynamic_update_slice", V(0, 9, 0), kLive},
    {"einsum_v1", "stablehlo.einsum", V(0, 9, 0), kLive},
    {"exponential_minus_one_v1", "stablehlo.exponential_minus_one", V(0, 9, 0), V(1, 9, 0)},
    {"exponential_minus_one_v2", "stablehlo.exponential_minus_one", V(1, 10, 0), kLive},
    {"exponential_v1", "stablehlo.exponential", V(0, 9, 0), V(1, 8, 0)},
    {"exponential_v2", "stablehlo.exponential", V(1, 9, 0), kLive},  // result_accuracy
    {"fft_v1", "stablehlo.fft", V(0, 9, 0), kLive},
    {"floor_v1", "stablehlo.floor", V(0, 9, 0), kLive},
    {"func_v1", "func.func", V(0, 9, 0), kLive},
    {"gather_v1", "stablehlo.gather", V(0, 9, 0), V(1, 0, 0)},
    {"gather_v2", "stablehlo.gather", V(1, 1, 0), kLive},  // batching dims
    {"get_dimension_size_v1", "stablehlo.get_dimension_size", V(0, 9, 0), kLive},
    {"get_tuple_element_v1", "stablehlo.get_tuple_element", V(0, 9, 0), kLive},
    {"if_v1", "stablehlo.if", V(0, 9, 0), kLive},
    {"imag_v1", "stablehlo.imag", V(0, 9, 0), kLive},
    {"infeed_v1", "stablehlo.infeed", V(0, 9, 0), kLive},
    {"iota_v1", "stablehlo.iota", V(0, 9, 0), kLive},
    {"is_finite_v1", "stablehlo.is_finite", V(0, 9, 0), kLive},
    {"log_plus_one_v1", "stablehlo.log_plus_one", V(0, 9, 0), V(1, 9, 0)},
    {"log_plus_one_v2", "stablehlo.log_plus_one", V(1, 10, 0), kLive},
    {"log_v1", "stablehlo.log", V(0, 9, 0), V(1, 9, 0)},
    {"log_v2", "stablehlo.log", V(1, 10, 0), kLive},
    {"logistic_v1", "stablehlo.logistic", V(0, 9, 0), V(1, 9, 0)},
    {"logistic_v2", "stablehlo.logistic", V(1, 10, 0), kLive},
    {"map_v1", "stablehlo.map", V(0, 9, 0), kLive},
    {"maximum_v1", "stablehlo.maximum", V(0, 9, 0), kLive},
    {"minimum_v1", "stablehlo.minimum", V(0, 9, 0), kLive},
    {"multiply_v1", "stablehlo.multiply", V(0, 9, 0), kLive},
    {"negate_v1", "stablehlo.negate", V(0, 9, 0), kLive},
    {"not_v1", "stablehlo.not", V(0, 9, 0), kLive},
    {"optimization_barrier_v1", "stablehlo.optimization_barrier", V(0, 9, 0), kLive},
    {"or_v1", "stablehlo.or", V(0, 9, 0), kLive},
    {"outfeed_v1", "stablehlo.outfeed", V(0, 9, 0), kLive},
    {"pad_v1", "stablehlo.pad", V(0, 9, 0), kLive},
    {"partition_id_v1", "stablehlo.partition_id", V(0, 9, 0), kLive},
    {"popcnt_v1", "stablehlo.popcnt", V(0, 9, 0), kLive},
    {"power_v1", "stablehlo.power", V(0, 9, 0), kLive},
    {"real_dynamic_slice_v1", "stablehlo.real_dynamic_slice", V(0, 9, 0), kLive},
    {"real_v1", "stablehlo.real", V(0, 9, 0), kLive},
    {"recv_v1", "stablehlo.recv", V(0, 9, 0), V(1, 11, 0)},
    {"recv_v2", "stablehlo.recv", V(1, 12, 0), kLive},  // source_target_pairs
    {"reduce_precision_v1", "stablehlo.reduce_precision", V(0, 9, 0), kLive},
    {"reduce_scatter_v1", "stablehlo.reduce_scatter", V(0, 9, 0), kLive},
    {"reduce_v1", "stablehlo.reduce", V(0, 9, 0), kLive},
    {"reduce_window_v1", "stablehlo.reduce_window", V(0, 9, 0), kLive},
    {"remainder_v1", "stablehlo.remainder", V(0, 9, 0), kLive},
    {"replica_id_v1", "stablehlo.replica_id", V(0, 9, 0), kLive},
    {"reshape_v1", "stablehlo.reshape", V(0, 9, 0), kLive},
    {"return_v1", "stablehlo.return", V(0, 9, 0), kLive},  // func.return in a func body
    {"reverse_v1", "stablehlo.reverse", V(0, 9, 0), kLive},
    {"rng_bit_generator_v1", "stablehlo.rng_bit_generator", V(0, 9, 0), kLive},
    {"rng_v1", "stablehlo.rng", V(0, 9, 0), kLive},
    {"round_nearest_afz_v1", "stablehlo.round_nearest_afz", V(0, 9, 0), kLive},
    {"round_nearest_even_v1", "stablehlo.round_nearest_even", V(0, 9, 0), kLive},
    {"rsqrt_v1", "stablehlo.rsqrt", V(0, 9, 0), V(1, 9, 0)},
    {"rsqrt_v2", "stablehlo.rsqrt", V(1, 10, 0), kLive},
    {"scatter_v1", "stablehlo.scatter", V(0, 9, 0), V(1, 0, 0)},
    {"scatter_v2", "stablehlo.scatter", V(1, 1, 0), kLive},  // batching dims
    {"select_and_scatter_v1", "stablehlo.select_and_scatter", V(0, 9, 0), kLive},
    {"select_v1", "stablehlo.select", V(0, 9, 0), kLive},
    {"send_v1", "stablehlo.send", V(0, 9, 0), V(1, 11, 0)},
    {"send_v2", "stablehlo.send", V(1, 12, 0), kLive},  // source_target_pairs
    {"set_dimension_size_v1", "stablehlo.set_dimension_size", V(0, 9, 0), kLive},
    {"shift_left_v1", "stablehlo.shift_left", V(0, 9, 0), kLive},
    {"shift_right_arithmetic_v1", "stablehlo.shift_right_arithmetic", V(0, 9, 0), kLive},
    {"shift_right_logical_v1", "stablehlo.shift_right_logical", V(0, 9, 0), kLive},
    {"sign_v1", "stablehlo.sign", V(0, 9, 0), kLive},
    {"sine_v1", "stablehlo.sine", V(0, 9, 0), V(1, 9, 0)},
    {"sine_v2", "stablehlo.sine", V(1, 10, 0), kLive},
    {"slice_v1", "stablehlo.slice", V(0, 9, 0), kLive},
    {"sort_v1", "stablehlo.sort", V(0, 9, 0), kLive},
    {"sqrt_v1", "stablehlo.sqrt", V(0, 9, 0), V(1, 9, 0)},
    {"sqrt_v2", "stablehlo.sqrt", V(1, 10, 0), kLive},
    {"subtract_v1", "stablehlo.subtract", V(0, 9, 0), kLive},
    {"tan_v1", "stablehlo.tan", V(1, 4, 0), V(1, 9, 0)},
    {"tan_v2", "stablehlo.tan", V(1, 10, 0), kLive},
    {"tanh_v1", "stablehlo.tanh", V(0, 9, 0), V(1, 9, 0)},
    {"tanh_v2", "stablehlo.tanh", V(1, 10, 0), kLive},
    {"torch_index_select_v1", "stablehlo.torch_index_select", V(0, 9, 0), kLive},
    {"transpose_v1", "stablehlo.transpose", V(0, 9, 0), kLive},
    {"triangular_solve_v1", "stablehlo.triangular_solve", V(0, 9, 0), kLive},
    {"tuple_v1", "stablehlo.tuple", V(0, 9, 0), kLive},
    {"unary_einsum_v1", "stablehlo.unary_einsum", V(0, 9, 0), kLive},
    {"uniform_dequantize_v1", "stablehlo.uniform_dequantize", V(0, 9, 0), kLive},
    {"uniform_quantize_v1", "stablehlo.uniform_quantize", V(0, 9, 0), kLive},
    {"while_v1", "stablehlo.while", V(0, 9, 0), kLive},
    {"xor_v1", "stablehlo.xor", V(0, 9, 0), kLive},
};

struct ElementRow {
  const char* vhlo;
  const char* stablehlo;
  Version min;
  Version max;
};

// Types VHLO added after the window's start (every other VHLO type, e.g.
// tensor_v1, f32_v1, token_v1, is legal from 0.9.0 on).
constexpr ElementRow kTypes[] = {
    {"f8E4M3FNUZ_v1", "f8E4M3FNUZ", V(0, 10, 0), kLive},
    {"f8E5M2FNUZ_v1", "f8E5M2FNUZ", V(0, 10, 0), kLive},
    {"f8E4M3B11FNUZ_v1", "f8E4M3B11FNUZ", V(0, 11, 0), kLive},
    {"quant_per_axis_v1", "!quant.uniform (per axis)", V(0, 18, 0), kLive},
    {"i2_v1", "i2", V(1, 2, 0), kLive},
    {"ui2_v1", "ui2", V(1, 2, 0), kLive},
    {"tf31_v1", "tf32", V(1, 6, 0), kLive},
    {"f8E4M3_v1", "f8E4M3", V(1, 7, 0), kLive},
    {"f8E3M4_v1", "f8E3M4", V(1, 7, 0), kLive},
    {"f4E2M1FN_v1", "f4E2M1FN", V(1, 8, 0), kLive},
    {"f6E2M3FN_v1", "f6E2M3FN", V(1, 8, 0), kLive},
    {"f6E3M2FN_v1", "f6E3M2FN", V(1, 8, 0), kLive},
    {"f8E8M0FNU_v1", "f8E8M0FNU", V(1, 8, 0), kLive},
    {"buffer_v1", "memref", V(1, 13, 0), kLive},
    {"future_v1", "!stablehlo.future", V(1, 15, 0), kLive},
};

// Attributes VHLO added after the window's start.
constexpr ElementRow kAttributes[] = {
    {"result_accuracy_v1", "#stablehlo.result_accuracy", V(1, 9, 0), kLive},
    {"result_accuracy_mode_v1", "#stablehlo.result_accuracy_mode", V(1, 9, 0), kLive},
    {"replica_group_mesh_axes_v1", "#stablehlo.replica_group_mesh_axes", V(1, 16, 0), kLive},
    {"axis_ref_v1", "#stablehlo.axis_ref", V(1, 16, 0), kLive},
    {"sub_axis_info_v1", "#stablehlo.axis_ref sub_axis_info", V(1, 16, 0), kLive},
};

int VersionSuffix(absl::string_view name) {
  size_t pos = name.rfind("_v");
  int n = 0;
  if (pos == absl::string_view::npos || !absl::SimpleAtoi(name.substr(pos + 2), &n)) return 0;
  return n;
}

absl::string_view WithoutDialect(absl::string_view name) {
  absl::ConsumePrefix(&name, "vhlo.");
  return name;
}

std::vector<VersionedElement> Elements(const ElementRow* rows, size_t n) {
  std::vector<VersionedElement> out;
  for (size_t i = 0; i < n; ++i) {
    out.push_back({rows[i].vhlo, rows[i].stablehlo, rows[i].min, rows[i].max});
  }
  return out;
}

}  // namespace

absl::StatusOr<Version> Version::Parse(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  if (text == "current") return Current();
  if (text == "minimum") return Minimum();
  std::vector<absl::string_view> parts = absl::StrSplit(text, '.');
  Version v;
  int* fields[] = {&v.major, &v.minor, &v.patch};
  bool ok = parts.size() == 3;
  for (size_t i = 0; ok && i < 3; ++i) {
    ok = !parts[i].empty() && parts[i].size() <= 6 &&
         parts[i].find_first_not_of("0123456789") == absl::string_view::npos &&
         absl::SimpleAtoi(parts[i], fields[i]);
  }
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid version '", text, "': expected MAJOR.MINOR.PATCH, 'current' or 'minimum'"));
  }
  return v;
}

std::string Version::ToString() const { return absl::StrCat(major, ".", minor, ".", patch); }

bool InWindow(const Version& v) { return Version::Minimum() <= v && v <= Version::Current(); }

absl::StatusOr<Version> ParseProducer(absl::string_view producer) {
  absl::string_view text = producer;
  if (!absl::ConsumePrefix(&text, "StableHLO_v")) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown producer '", producer, "' (expected StableHLO_vX.Y.Z)"));
  }
  absl::StatusOr<Version> v = Version::Parse(text);
  if (!v.ok() || text == "current" || text == "minimum") {
    return absl::InvalidArgumentError(absl::StrCat("bad producer version '", producer, "'"));
  }
  return v;
}

const std::vector<OpVersion>& AllOpVersions() {
  static const auto* ops = [] {
    auto* out = new std::vector<OpVersion>();
    for (const OpRow& row : kOps) {
      out->push_back(
          {absl::StrCat("vhlo.", row.vhlo), row.target, VersionSuffix(row.vhlo), row.min, row.max});
    }
    return out;
  }();
  return *ops;
}

const std::vector<VersionedElement>& VersionedTypes() {
  static const auto* types = new std::vector<VersionedElement>(Elements(kTypes, std::size(kTypes)));
  return *types;
}

const std::vector<VersionedElement>& VersionedAttributes() {
  static const auto* attrs =
      new std::vector<VersionedElement>(Elements(kAttributes, std::size(kAttributes)));
  return *attrs;
}

const OpVersion* FindOpVersion(absl::string_view vhlo_name) {
  static const auto* index = [] {
    auto* map = new absl::flat_hash_map<std::string, const OpVersion*>();
    for (const OpVersion& op : AllOpVersions()) (*map)[WithoutDialect(op.vhlo_name)] = &op;
    return map;
  }();
  auto it = index->find(WithoutDialect(vhlo_name));
  return it == index->end() ? nullptr : it->second;
}

absl::StatusOr<const OpVersion*> LookupOpVersion(absl::string_view vhlo_name) {
  if (const OpVersion* op = FindOpVersion(vhlo_name)) return op;
  return absl::NotFoundError(
      absl::StrCat("unregistered operation 'vhlo.", WithoutDialect(vhlo_name), "'"));
}

std::vector<const OpVersion*> OpVersionsOf(absl::string_view target_name) {
  std::vector<const OpVersion*> out;
  for (const OpVersion& op : AllOpVersions()) {
    if (op.target_name == target_name) out.push_back(&op);
  }
  std::sort(out.begin(), out.end(),
            [](const OpVersion* a, const OpVersion* b) { return a->version < b->version; });
  return out;
}

absl::StatusOr<const OpVersion*> OpVersionAt(absl::string_view target_name,
                                             const Version& version) {
  std::vector<const OpVersion*> versions = OpVersionsOf(target_name);
  if (versions.empty()) {
    return absl::NotFoundError(absl::StrCat("'", target_name, "' has no VHLO version"));
  }
  for (auto it = versions.rbegin(); it != versions.rend(); ++it) {
    if ((*it)->LegalAt(version)) return *it;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "'", target_name, "' has no VHLO version legal at ", version.ToString(),
      " (first: ", versions.front()->vhlo_name, " from ", versions.front()->min.ToString(), ")"));
}

const OpVersion* LatestVersionOf(const OpVersion& op) {
  std::vector<const OpVersion*> versions = OpVersionsOf(op.target_name);
  // return_v1 stands for both stablehlo.return and func.return; it has one version.
  return versions.empty() ? &op : versions.back();
}

absl::Status CheckOpLegalAt(const OpVersion& op, const Version& producer) {
  // An artifact holds op versions legal at its producer's version. Older ones
  // (max < producer) are harmless to read: the upgrade takes them to current.
  if (op.min <= producer) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("operation '", op.vhlo_name, "' exists from StableHLO ", op.min.ToString(),
                   " on, but the artifact was produced by StableHLO ", producer.ToString()));
}

const VersionedElement* FindVersionedType(absl::string_view stablehlo_element) {
  for (const VersionedElement& t : VersionedTypes()) {
    if (t.stablehlo_name == stablehlo_element) return &t;
  }
  return nullptr;
}

const VersionedElement* FindVersionedElementType(absl::string_view element) {
  const VersionedElement* row = FindVersionedType(element);
  if (row == nullptr && absl::StartsWith(element, "memref")) row = FindVersionedType("memref");
  if (row == nullptr && absl::StartsWith(element, "!stablehlo.future")) {
    row = FindVersionedType("!stablehlo.future");
  }
  if (row == nullptr && absl::StartsWith(element, "!quant.uniform") &&
      absl::StrContains(element, "{")) {
    row = FindVersionedType("!quant.uniform (per axis)");
  }
  return row;
}

const VersionedElement* FindVersionedAttribute(absl::string_view vhlo_name) {
  absl::string_view name = WithoutDialect(vhlo_name);
  for (const VersionedElement& a : VersionedAttributes()) {
    if (a.vhlo_name == name) return &a;
  }
  return nullptr;
}

}  // namespace xlite::vhlo
