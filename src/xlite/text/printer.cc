#include "xlite/text/printer.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "xlite/ir/comparison.h"
#include "xlite/ir/named_sharding.h"
#include "xlite/text/attribute_order.h"
#include "xlite/text/cursor.h"

namespace xlite {
namespace {

std::string IntList(const std::vector<int64_t>& v) {
  return absl::StrCat("{", absl::StrJoin(v, ","), "}");
}

std::string Quoted(absl::string_view s) { return absl::StrCat("\"", xlite::CEscape(s), "\""); }

// Iota device lists print canonicalized: size-1 dimensions dropped and
// dimensions that stay adjacent under the transpose merged.
std::string IotaToString(const std::vector<int64_t>& reshape,
                         const std::vector<int64_t>& transpose) {
  std::vector<int64_t> perm = transpose;
  if (perm.empty()) {
    for (size_t i = 0; i < reshape.size(); ++i) perm.push_back(i);
  }
  bool valid = perm.size() == reshape.size();
  std::vector<bool> seen(reshape.size(), false);
  for (int64_t p : perm) {
    if (!valid || p < 0 || p >= static_cast<int64_t>(reshape.size()) || seen[p]) {
      valid = false;
      break;
    }
    seen[p] = true;
  }
  if (!valid) {
    // Not canonicalizable; print as given.
    std::string s = absl::StrCat("<=[", absl::StrJoin(reshape, ","), "]");
    if (!transpose.empty()) absl::StrAppend(&s, "T(", absl::StrJoin(transpose, ","), ")");
    return s;
  }
  // Drop size-1 dims.
  std::vector<int64_t> index(reshape.size(), -1);
  std::vector<int64_t> dims;
  for (size_t i = 0; i < reshape.size(); ++i) {
    if (reshape[i] != 1) {
      index[i] = dims.size();
      dims.push_back(reshape[i]);
    }
  }
  std::vector<int64_t> p2;
  for (int64_t p : perm) {
    if (index[p] >= 0) p2.push_back(index[p]);
  }
  // Merge runs p, p+1, ... that stay consecutive.
  std::vector<std::pair<int64_t, int64_t>> runs;  // [first dim, last dim] in perm order
  for (int64_t p : p2) {
    if (!runs.empty() && runs.back().second + 1 == p) {
      runs.back().second = p;
    } else {
      runs.push_back({p, p});
    }
  }
  std::vector<std::pair<int64_t, int64_t>> by_start = runs;
  std::sort(by_start.begin(), by_start.end());
  std::vector<int64_t> new_dims;
  for (auto& [a, b] : by_start) {
    int64_t prod = 1;
    for (int64_t i = a; i <= b; ++i) prod *= dims[i];
    new_dims.push_back(prod);
  }
  std::vector<int64_t> new_perm;
  for (auto& r : runs) {
    new_perm.push_back(std::find(by_start.begin(), by_start.end(), r) - by_start.begin());
  }
  if (new_dims.empty()) new_dims.push_back(1);
  std::string s = absl::StrCat("<=[", absl::StrJoin(new_dims, ","), "]");
  if (new_dims.size() > 1) absl::StrAppend(&s, "T(", absl::StrJoin(new_perm, ","), ")");
  return s;
}

std::string MetadataBody(const OpMetadata& m) {
  std::vector<std::string> parts;
  if (!m.op_type.empty()) parts.push_back(absl::StrCat("op_type=", Quoted(m.op_type)));
  if (!m.op_name.empty()) parts.push_back(absl::StrCat("op_name=", Quoted(m.op_name)));
  if (!m.source_file.empty()) parts.push_back(absl::StrCat("source_file=", Quoted(m.source_file)));
  if (m.source_line != 0) parts.push_back(absl::StrCat("source_line=", m.source_line));
  if (m.source_end_line != 0) parts.push_back(absl::StrCat("source_end_line=", m.source_end_line));
  if (m.source_column != 0) parts.push_back(absl::StrCat("source_column=", m.source_column));
  if (m.source_end_column != 0) {
    parts.push_back(absl::StrCat("source_end_column=", m.source_end_column));
  }
  if (!m.profile_type.empty())
    parts.push_back(absl::StrCat("profile_type=", IntList(m.profile_type)));
  if (!m.deduplicated_name.empty()) {
    parts.push_back(absl::StrCat("deduplicated_name=", Quoted(m.deduplicated_name)));
  }
  if (m.preserve_layout) parts.push_back("preserve_layout=true");
  if (!m.scheduling_name.empty()) {
    parts.push_back(absl::StrCat("scheduling_name=\"", m.scheduling_name, "\""));
  }
  if (m.stack_frame_id != 0) parts.push_back(absl::StrCat("stack_frame_id=", m.stack_frame_id));
  return absl::StrCat("{", absl::StrJoin(parts, " "), "}");
}

bool MetadataPrinted(const OpMetadata& m) {
  return !m.op_type.empty() || !m.op_name.empty() || !m.source_file.empty() ||
         !m.scheduling_name.empty() || m.stack_frame_id != 0;
}

void AppendSharding(std::string& out, const HloSharding& s, bool print_metadata) {
  using K = HloSharding::Kind;
  if (s.kind == K::kTuple) {
    out += "{";
    for (size_t i = 0; i < s.tuple_elements.size(); ++i) {
      if (i > 0) {
        out += ", ";
        if (i % 5 == 0) absl::StrAppend(&out, "/*index=", i, "*/");
      }
      AppendSharding(out, s.tuple_elements[i], print_metadata);
    }
    out += "}";
    return;
  }
  if (s.kind == K::kNamed && s.named) {
    std::vector<std::string> metadata;
    if (print_metadata) {
      for (const OpMetadata& m : s.metadata) metadata.push_back(MetadataBody(m));
    }
    out += NamedShardingToString(*s.named, metadata);
    return;
  }
  out += "{";
  switch (s.kind) {
    case K::kReplicated:
      out += "replicated";
      break;
    case K::kManual:
      out += "manual";
      break;
    case K::kUnknown:
      out += "unknown";
      break;
    case K::kUnreduced:
      out += "unreduced";
      break;
    case K::kMaximal:
      absl::StrAppend(&out, "maximal device=", s.device);
      break;
    case K::kTiled:
      absl::StrAppend(&out, "devices=[", absl::StrJoin(s.tile_dimensions, ","), "]");
      if (s.iota) {
        out += IotaToString(s.iota_reshape, s.iota_transpose);
      } else {
        out += absl::StrJoin(s.devices, ",");
      }
      if (s.last_tile_dim_replicate) out += " last_tile_dim_replicate";
      if (!s.last_tile_dims.empty()) {
        absl::StrAppend(&out, " last_tile_dims={", absl::StrJoin(s.last_tile_dims, ", "), "}");
      }
      break;
    case K::kTuple:
    case K::kNamed:
      break;
  }
  if (!s.shard_group.empty()) absl::StrAppend(&out, " ", s.shard_group);
  if (print_metadata && !s.metadata.empty()) {
    if (s.metadata.size() == 1) {
      absl::StrAppend(&out, " metadata=", MetadataBody(s.metadata[0]));
    } else {
      std::vector<std::string> ms;
      for (const OpMetadata& m : s.metadata) ms.push_back(MetadataBody(m));
      absl::StrAppend(&out, " metadata={", absl::StrJoin(ms, ", "), "}");
    }
  }
  out += "}";
}

std::string ReplicaGroupsToString(const ReplicaGroups& g) {
  if (!g.mesh.empty()) return g.mesh;
  if (g.iota) {
    return absl::StrCat("[", absl::StrJoin(g.iota_group_shape, ","), "]",
                        IotaToString(g.iota_reshape, g.iota_transpose));
  }
  std::vector<std::string> parts;
  for (const auto& grp : g.groups) parts.push_back(IntList(grp));
  return absl::StrCat("{", absl::StrJoin(parts, ","), "}");
}

std::string WindowToString(const Window& w) {
  auto join = [&](auto field) {
    std::vector<std::string> v;
    for (const WindowDimension& d : w.dimensions) v.push_back(field(d));
    return absl::StrJoin(v, "x");
  };
  auto any = [&](auto pred) { return std::any_of(w.dimensions.begin(), w.dimensions.end(), pred); };
  std::string s =
      absl::StrCat("size=", join([](const WindowDimension& d) { return absl::StrCat(d.size); }));
  if (any([](const WindowDimension& d) { return d.stride != 1; })) {
    absl::StrAppend(
        &s, " stride=", join([](const WindowDimension& d) { return absl::StrCat(d.stride); }));
  }
  if (any([](const WindowDimension& d) { return d.padding_low != 0 || d.padding_high != 0; })) {
    absl::StrAppend(&s, " pad=", join([](const WindowDimension& d) {
      return absl::StrCat(d.padding_low, "_", d.padding_high);
    }));
  }
  if (any([](const WindowDimension& d) { return d.base_dilation != 1; })) {
    absl::StrAppend(&s, " lhs_dilate=", join([](const WindowDimension& d) {
      return absl::StrCat(d.base_dilation);
    }));
  }
  if (any([](const WindowDimension& d) { return d.window_dilation != 1; })) {
    absl::StrAppend(&s, " rhs_dilate=", join([](const WindowDimension& d) {
      return absl::StrCat(d.window_dilation);
    }));
  }
  if (any([](const WindowDimension& d) { return d.window_reversal; })) {
    absl::StrAppend(&s, " rhs_reversal=", join([](const WindowDimension& d) {
      return absl::StrCat(d.window_reversal ? 1 : 0);
    }));
  }
  return absl::StrCat("{", s, "}");
}

std::string DimLabelsToString(const ConvolutionDimensionNumbers& d) {
  auto side = [](int64_t a, char ca, int64_t b, char cb, const std::vector<int64_t>& sp,
                 int64_t written_rank) {
    int64_t rank = std::max({a + 1, b + 1, written_rank});
    for (int64_t x : sp) rank = std::max(rank, x + 1);
    std::string s(rank, '?');
    if (a >= 0) s[a] = ca;
    if (b >= 0) s[b] = cb;
    for (size_t i = 0; i < sp.size(); ++i) {
      if (sp[i] >= 0) s[sp[i]] = static_cast<char>('0' + i);
    }
    return s;
  };
  return absl::StrCat(side(d.input_batch_dimension, 'b', d.input_feature_dimension, 'f',
                           d.input_spatial_dimensions, d.input_rank),
                      "_",
                      side(d.kernel_input_feature_dimension, 'i', d.kernel_output_feature_dimension,
                           'o', d.kernel_spatial_dimensions, d.kernel_rank),
                      "->",
                      side(d.output_batch_dimension, 'b', d.output_feature_dimension, 'f',
                           d.output_spatial_dimensions, d.output_rank));
}

std::string ComparisonDirectionString(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kEq:
      return "EQ";
    case ComparisonDirection::kNe:
      return "NE";
    case ComparisonDirection::kGe:
      return "GE";
    case ComparisonDirection::kGt:
      return "GT";
    case ComparisonDirection::kLe:
      return "LE";
    case ComparisonDirection::kLt:
      return "LT";
  }
  return "EQ";
}

ComparisonType DefaultComparisonType(PrimitiveType t) {
  if (IsFloatingPoint(t) || IsComplex(t)) return ComparisonType::kFloat;
  if (IsSignedInt(t)) return ComparisonType::kSigned;
  return ComparisonType::kUnsigned;
}

// As XLA: {mode=highest} or {tolerance={atol=1,rtol=0.5,ulps=2}}.
std::string ResultAccuracyString(const ResultAccuracy& r) {
  if (r.tolerance) {
    return absl::StrCat("{tolerance={atol=", r.tolerance->atol, ",rtol=", r.tolerance->rtol,
                        ",ulps=", r.tolerance->ulps, "}}");
  }
  return r.mode == ResultAccuracy::Mode::kHighest ? "{mode=highest}" : "{mode=default}";
}

std::string ComparisonTypeString(ComparisonType t) {
  switch (t) {
    case ComparisonType::kDefault:
      return "DEFAULT";
    case ComparisonType::kFloat:
      return "FLOAT";
    case ComparisonType::kTotalOrder:
      return "TOTALORDER";
    case ComparisonType::kSigned:
      return "SIGNED";
    case ComparisonType::kUnsigned:
      return "UNSIGNED";
  }
  return "DEFAULT";
}

std::string AliasingToString(const std::vector<OutputOperandAlias>& v) {
  std::vector<std::string> parts;
  for (const OutputOperandAlias& a : v) {
    parts.push_back(absl::StrCat(IntList(a.output_index), ": (", a.operand, ", ",
                                 IntList(a.operand_index), ")"));
  }
  return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
}

std::string FrontendAttributesToString(const FrontendAttributes& fa) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : fa) {
    parts.push_back(absl::StrCat(k, "=", LexesAsJsonDict(v) ? v : Quoted(v)));
  }
  return absl::StrCat("{", absl::StrJoin(parts, ","), "}");
}

// True if `comp` holds parameters plus one root that uses them in order:
// such async computations print as op-start/op-done sugar.
bool CanExpandIntoSingleInstruction(const HloComputation* comp) {
  if (!comp) return false;
  const HloInstruction* root = comp->root_instruction();
  if (!root || root->opcode() == HloOpcode::kParameter) return false;
  // A wrapped fusion keeps the generic form: its calls= would collide with
  // the async op's own calls= (XLA prints async fusions that way).
  if (root->opcode() == HloOpcode::kFusion) return false;
  if (comp->instruction_count() != comp->num_parameters() + 1) return false;
  if (root->operand_count() != comp->num_parameters()) return false;
  for (int64_t i = 0; i < root->operand_count(); ++i) {
    if (root->operand(i) != comp->parameter_instruction(i)) return false;
  }
  return true;
}

class Printer {
 public:
  explicit Printer(const PrintOptions& o) : o_(o) {}

  std::string Name(absl::string_view n) const {
    return o_.long_form ? absl::StrCat("%", n) : std::string(n);
  }

  bool IsSugared(const HloInstruction& instr) const {
    if (!o_.syntax_sugar_async_ops || !IsAsyncOpcode(instr.opcode())) return false;
    HloComputation* c = instr.async_wrapped_computation();
    if (instr.opcode() != HloOpcode::kAsyncStart && !instr.called_computations().empty()) {
      c = instr.called_computations()[0];
    }
    return CanExpandIntoSingleInstruction(c);
  }

  // The attributes every instruction may carry (CommonAttributeOrder()).
  void AppendCommonAttr(std::vector<std::string>& attrs, absl::string_view key,
                        const HloInstruction& instr) {
    const InstructionAttributes& a = instr.attrs();
    auto add = [&](std::string value) { attrs.push_back(absl::StrCat(key, "=", value)); };
    if (key == "sharding") {
      if (a.sharding) {
        std::string s;
        AppendSharding(s, *a.sharding, o_.long_form);
        add(s);
      }
    } else if (key == "frontend_attributes") {
      if (!a.frontend_attributes.empty()) add(FrontendAttributesToString(a.frontend_attributes));
    } else if (key == "control-predecessors") {
      if (o_.long_form && !instr.control_predecessors().empty()) {
        std::vector<std::string> v;
        for (const HloInstruction* p : instr.control_predecessors()) v.push_back(Name(p->name()));
        add(absl::StrCat("{", absl::StrJoin(v, ", "), "}"));
      }
    } else if (key == "statistics") {
      // As XLA: only when there are statistics to show.
      if (a.statistics && !a.statistics->values.empty()) {
        std::string body = absl::StrCat("{visualizing_index=", a.statistics->visualizing_index);
        for (const auto& [name, value] : a.statistics->values) {
          absl::StrAppend(&body, ",", name, "=", value);
        }
        add(body + "}");
      }
    } else if (key == "result_accuracy") {
      if (a.result_accuracy && !a.result_accuracy->IsDefault()) {
        add(ResultAccuracyString(*a.result_accuracy));
      }
    } else if (key == "origin") {
      if (!a.original_value.empty()) add(a.original_value);
    } else if (key == "metadata") {
      if (o_.long_form && MetadataPrinted(a.metadata)) add(MetadataBody(a.metadata));
    } else if (key == "backend_config") {
      if (o_.long_form && !a.backend_config.empty()) {
        add(LexesAsJsonDict(a.backend_config) ? a.backend_config : Quoted(a.backend_config));
      }
    }
  }

  void AppendAttr(std::vector<std::string>& attrs, absl::string_view key,
                  const HloInstruction& instr, const HloInstruction& owner) {
    const InstructionAttributes& a = instr.attrs();
    auto add = [&](std::string value) { attrs.push_back(absl::StrCat(key, "=", value)); };
    auto calls = [&]() -> std::vector<std::string> {
      std::vector<std::string> names;
      for (const HloComputation* c : instr.called_computations()) names.push_back(Name(c->name()));
      return names;
    };
    const HloOpcode op = instr.opcode();
    if (key == "dimensions") {
      if (a.dimensions) add(IntList(*a.dimensions));
    } else if (key == "to_apply") {
      if (!instr.called_computations().empty()) add(Name(instr.called_computations()[0]->name()));
    } else if (key == "calls") {
      if (op == HloOpcode::kAsyncStart) {
        if (!IsSugared(instr) && !instr.called_computations().empty()) {
          add(Name(instr.called_computations()[0]->name()));
        }
      } else if (op == HloOpcode::kAsyncUpdate || op == HloOpcode::kAsyncDone) {
        // The start names the computation; update/done follow their operand.
      } else if (!instr.called_computations().empty()) {
        add(absl::StrJoin(calls(), ", "));
      }
    } else if (key == "condition") {
      if (instr.called_computations().size() >= 2)
        add(Name(instr.called_computations()[0]->name()));
    } else if (key == "body") {
      if (instr.called_computations().size() >= 2)
        add(Name(instr.called_computations()[1]->name()));
    } else if (key == "select") {
      if (instr.called_computations().size() >= 2)
        add(Name(instr.called_computations()[0]->name()));
    } else if (key == "scatter" && op == HloOpcode::kSelectAndScatter) {
      if (instr.called_computations().size() >= 2)
        add(Name(instr.called_computations()[1]->name()));
    } else if (key == "true_computation" || key == "false_computation" ||
               key == "branch_computations") {
      bool pred = instr.operand_count() > 0 &&
                  instr.operand(0)->shape().element_type() == PrimitiveType::PRED &&
                  instr.called_computations().size() == 2;
      if (key == "branch_computations") {
        if (!pred) add(absl::StrCat("{", absl::StrJoin(calls(), ", "), "}"));
      } else if (pred) {
        add(Name(instr.called_computations()[key == "true_computation" ? 0 : 1]->name()));
      }
    } else if (key == "called_computations") {
      if (!instr.called_computations().empty())
        add(absl::StrCat("{", absl::StrJoin(calls(), ", "), "}"));
    } else if (key == "parameter_replication") {
      if (a.parameter_replication) {
        std::vector<std::string> v;
        for (bool b : *a.parameter_replication) v.push_back(b ? "true" : "false");
        add(absl::StrCat("{", absl::StrJoin(v, ","), "}"));
      }
    } else if (key == "index") {
      add(absl::StrCat(a.tuple_index));
    } else if (key == "inferred_dimension") {
      if (a.inferred_dimension) add(absl::StrCat(*a.inferred_dimension));
    } else if (key == "is_stable") {
      if (op == HloOpcode::kTopK) {
        if (a.topk_is_stable) add(*a.topk_is_stable ? "true" : "false");
      } else if (a.is_stable) {
        add("true");
      }
    } else if (key == "num_carries") {
      if (a.num_carries) add(absl::StrCat(*a.num_carries));
    } else if (key == "is_reverse") {
      if (a.is_reverse) add("true");
    } else if (key == "is_associative") {
      if (a.is_associative) add(*a.is_associative ? "true" : "false");
    } else if (key == "iota_dimension") {
      add(absl::StrCat(a.iota_dimension));
    } else if (key == "direction") {
      add(ComparisonDirectionString(a.comparison_direction));
    } else if (key == "type") {
      if (a.comparison_type && instr.operand_count() > 0 &&
          *a.comparison_type != DefaultComparisonType(instr.operand(0)->shape().element_type())) {
        add(ComparisonTypeString(*a.comparison_type));
      }
    } else if (key == "mode") {
      // Dropped when read, as XLA does; never printed.
    } else if (key == "order") {
      // As XLA: only an order other than the operand type's default.
      if (a.comparison_order && instr.operand_count() > 0 &&
          *a.comparison_order != DefaultComparisonOrder(instr.operand(0)->shape().element_type())) {
        add(std::string(ComparisonOrderShortString(*a.comparison_order)));
      }
    } else if (key == "slice") {
      bool strides =
          std::any_of(a.slice.begin(), a.slice.end(), [](auto& d) { return d.stride != 1; });
      std::vector<std::string> v;
      for (const SliceDimension& d : a.slice) {
        v.push_back(strides ? absl::StrCat("[", d.start, ":", d.limit, ":", d.stride, "]")
                            : absl::StrCat("[", d.start, ":", d.limit, "]"));
      }
      add(absl::StrCat("{", absl::StrJoin(v, ", "), "}"));
    } else if (key == "dynamic_slice_sizes") {
      add(IntList(a.dynamic_slice_sizes));
    } else if (key == "padding") {
      bool interior =
          std::any_of(a.padding.begin(), a.padding.end(), [](auto& d) { return d.interior != 0; });
      std::vector<std::string> v;
      for (const PaddingDimension& d : a.padding) {
        v.push_back(interior ? absl::StrCat(d.low, "_", d.high, "_", d.interior)
                             : absl::StrCat(d.low, "_", d.high));
      }
      add(absl::StrJoin(v, "x"));
    } else if (key == "window") {
      if (a.window && !a.window->dimensions.empty()) add(WindowToString(*a.window));
    } else if (key == "dim_labels") {
      if (a.convolution_dimension_numbers) add(DimLabelsToString(*a.convolution_dimension_numbers));
    } else if (key == "feature_group_count") {
      if (a.feature_group_count != 1) add(absl::StrCat(a.feature_group_count));
    } else if (key == "batch_group_count") {
      if (a.batch_group_count != 1) add(absl::StrCat(a.batch_group_count));
    } else if (key == "conv_kind") {
      if (!a.convolution_kind.empty()) add(a.convolution_kind);
    } else if (key == "convolution_kind") {
      // The older spelling: read, printed as conv_kind.
    } else if (key == "operand_precision") {
      bool non_default = std::any_of(a.operand_precision.begin(), a.operand_precision.end(),
                                     [](const std::string& p) { return p != "default"; });
      if (non_default) add(absl::StrCat("{", absl::StrJoin(a.operand_precision, ","), "}"));
    } else if (key == "algorithm") {
      if (!a.algorithm.empty()) add(a.algorithm);
    } else if (key == "sparsity_config") {
      if (!a.sparsity_config.empty()) add(a.sparsity_config);
    } else if (key == "sparsity") {
      if (!a.sparsity.empty()) add(a.sparsity);
    } else if (key == "lhs_batch_dims" || key == "rhs_batch_dims" ||
               key == "lhs_contracting_dims" || key == "rhs_contracting_dims") {
      if (a.dot_dimension_numbers) {
        const DotDimensionNumbers& d = *a.dot_dimension_numbers;
        const auto& v = key == "lhs_batch_dims"         ? d.lhs_batch_dimensions
                        : key == "rhs_batch_dims"       ? d.rhs_batch_dimensions
                        : key == "lhs_contracting_dims" ? d.lhs_contracting_dimensions
                                                        : d.rhs_contracting_dimensions;
        bool batch = key == "lhs_batch_dims" || key == "rhs_batch_dims";
        if (!batch || !v.empty()) add(IntList(v));
      }
    } else if (key == "lhs_ragged_dims" || key == "rhs_group_dims") {
      if (a.ragged_dot_dimension_numbers) {
        const auto& v = key == "lhs_ragged_dims"
                            ? a.ragged_dot_dimension_numbers->lhs_ragged_dimensions
                            : a.ragged_dot_dimension_numbers->rhs_group_dimensions;
        if (!v.empty()) add(IntList(v));
      }
    } else if (key == "offset_dims" || key == "collapsed_slice_dims" || key == "start_index_map" ||
               key == "operand_batching_dims" || key == "start_indices_batching_dims" ||
               (key == "index_vector_dim" && op == HloOpcode::kGather)) {
      if (a.gather_dimension_numbers) {
        const GatherDimensionNumbers& g = *a.gather_dimension_numbers;
        if (key == "offset_dims") add(IntList(g.offset_dims));
        if (key == "collapsed_slice_dims") add(IntList(g.collapsed_slice_dims));
        if (key == "start_index_map") add(IntList(g.start_index_map));
        if (key == "operand_batching_dims" && !g.operand_batching_dims.empty())
          add(IntList(g.operand_batching_dims));
        if (key == "start_indices_batching_dims" && !g.start_indices_batching_dims.empty()) {
          add(IntList(g.start_indices_batching_dims));
        }
        if (key == "index_vector_dim") add(absl::StrCat(g.index_vector_dim));
      }
    } else if (key == "update_window_dims" || key == "inserted_window_dims" ||
               key == "scatter_dims_to_operand_dims" || key == "input_batching_dims" ||
               key == "scatter_indices_batching_dims" || key == "index_vector_dim") {
      if (a.scatter_dimension_numbers) {
        const ScatterDimensionNumbers& s = *a.scatter_dimension_numbers;
        if (key == "update_window_dims") add(IntList(s.update_window_dims));
        if (key == "inserted_window_dims") add(IntList(s.inserted_window_dims));
        if (key == "scatter_dims_to_operand_dims") add(IntList(s.scatter_dims_to_operand_dims));
        if (key == "input_batching_dims" && !s.input_batching_dims.empty())
          add(IntList(s.input_batching_dims));
        if (key == "scatter_indices_batching_dims" && !s.scatter_indices_batching_dims.empty()) {
          add(IntList(s.scatter_indices_batching_dims));
        }
        if (key == "index_vector_dim") add(absl::StrCat(s.index_vector_dim));
      }
    } else if (key == "slice_sizes") {
      if (op == HloOpcode::kGather) {
        add(IntList(a.gather_slice_sizes));
      } else if (a.slice_sizes_list) {
        std::vector<std::string> v;
        for (const auto& l : *a.slice_sizes_list) v.push_back(IntList(l));
        add(absl::StrCat("{", absl::StrJoin(v, ","), "}"));
      }
    } else if (key == "indices_are_sorted") {
      if (a.indices_are_sorted) add("true");
    } else if (key == "unique_indices") {
      if (a.unique_indices) add("true");
    } else if (key == "kind") {
      add(a.fusion_kind);
    } else if (key == "output_to_operand_aliasing") {
      if (!a.output_to_operand_aliasing.empty())
        add(AliasingToString(a.output_to_operand_aliasing));
    } else if (key == "custom_call_target") {
      add(Quoted(a.custom_call_target));
    } else if (key == "padding_type") {
      if (!a.padding_type.empty()) add(a.padding_type);
    } else if (key == "operand_layout_constraints") {
      if (a.operand_layout_constraints) {
        std::vector<std::string> v;
        for (const Shape& s : *a.operand_layout_constraints) v.push_back(s.ToString(true));
        add(absl::StrCat("{", absl::StrJoin(v, ", "), "}"));
      }
    } else if (key == "custom_call_has_side_effect") {
      if (a.custom_call_has_side_effect) add("true");
    } else if (key == "literal") {
      if (a.literal) add(a.literal->ToStringOneline());
    } else if (key == "schedule") {
      if (!a.custom_call_schedule.empty() && a.custom_call_schedule != "SCHEDULE_NONE")
        add(a.custom_call_schedule);
    } else if (key == "api_version") {
      if (!a.api_version.empty() && a.api_version != "API_VERSION_ORIGINAL") add(a.api_version);
    } else if (key == "epsilon") {
      add(absl::StrCat(a.epsilon));
    } else if (key == "feature_index") {
      add(absl::StrCat(a.feature_index));
    } else if (key == "fft_type") {
      add(a.fft_type);
    } else if (key == "fft_length") {
      add(IntList(a.fft_length));
    } else if (key == "left_side") {
      if (a.left_side) add("true");
    } else if (key == "lower") {
      if (a.lower) add("true");
    } else if (key == "unit_diagonal") {
      if (a.unit_diagonal) add("true");
    } else if (key == "transpose_a") {
      if (!a.transpose_a.empty()) add(a.transpose_a);
    } else if (key == "distribution") {
      add(a.distribution);
    } else if (key == "delta") {
      add(absl::StrCat(a.delta));
    } else if (key == "exponent_bits") {
      add(absl::StrCat(a.exponent_bits));
    } else if (key == "mantissa_bits") {
      add(absl::StrCat(a.mantissa_bits));
    } else if (key == "k") {
      add(absl::StrCat(a.k));
    } else if (key == "largest") {
      add(a.largest ? "true" : "false");
    } else if (key == "infeed_config") {
      if (!a.infeed_config.empty()) add(Quoted(a.infeed_config));
    } else if (key == "outfeed_shape") {
      if (a.outfeed_shape) add(a.outfeed_shape->ToString(true));
    } else if (key == "outfeed_config") {
      if (!a.outfeed_config.empty()) add(Quoted(a.outfeed_config));
    } else if (key == "domain") {
      if (a.domain) {
        std::string entry, exit;
        AppendSharding(entry, a.domain->entry, o_.long_form);
        AppendSharding(exit, a.domain->exit, o_.long_form);
        add(absl::StrCat("{kind=", Quoted(a.domain->kind), ", entry=", entry, ", exit=", exit,
                         "}"));
      }
    } else if (key == "cross_program_prefetch_index") {
      if (a.cross_program_prefetch_index) add(absl::StrCat(*a.cross_program_prefetch_index));
    } else if (key == "channel_id") {
      if (a.channel_id) add(absl::StrCat(*a.channel_id));
    } else if (key == "is_host_transfer") {
      if (a.is_host_transfer) add("true");
    } else if (key == "replica_groups") {
      add(a.replica_groups ? ReplicaGroupsToString(*a.replica_groups) : "{}");
    } else if (key == "constrain_layout") {
      if (a.constrain_layout) add("true");
    } else if (key == "use_global_device_ids") {
      if (a.use_global_device_ids) add("true");
    } else if (key == "has_dynamic_root") {
      if (a.has_dynamic_root) add("true");
    } else if (key == "source_target_pairs") {
      std::vector<std::string> v;
      if (a.source_target_pairs) {
        for (auto& [s, t] : *a.source_target_pairs) v.push_back(absl::StrCat("{", s, ",", t, "}"));
      }
      add(absl::StrCat("{", absl::StrJoin(v, ","), "}"));
    } else if (key == "async_execution_thread") {
      if (!a.async_execution_thread.empty() && a.async_execution_thread != "main") {
        add(Quoted(a.async_execution_thread));
      }
    } else if (key == "is_composite") {
      if (a.is_composite) add("true");
    }
    (void)owner;
  }

  std::string Instruction(const HloInstruction& instr, bool is_root) {
    std::string out;
    if (is_root) out += "ROOT ";
    absl::StrAppend(&out, Name(instr.name()), " = ");
    instr.shape().AppendTo(out, true);
    out += " ";
    const bool sugared = IsSugared(instr);
    const HloInstruction* wrapped = sugared ? instr.async_wrapped_instruction() : nullptr;
    if (sugared && instr.opcode() != HloOpcode::kAsyncStart &&
        !instr.called_computations().empty()) {
      wrapped = instr.called_computations()[0]->root_instruction();
    }
    if (sugared && wrapped) {
      absl::string_view suffix = instr.opcode() == HloOpcode::kAsyncStart    ? "-start"
                                 : instr.opcode() == HloOpcode::kAsyncUpdate ? "-update"
                                                                             : "-done";
      absl::StrAppend(&out, HloOpcodeString(wrapped->opcode()), suffix);
    } else {
      absl::StrAppend(&out, HloOpcodeString(instr.opcode()));
    }
    out += "(";
    if (instr.opcode() == HloOpcode::kConstant) {
      const Literal* lit = instr.attrs().literal ? &*instr.attrs().literal : nullptr;
      if (!lit) {
        out += "{...}";
      } else if (!o_.print_large_constants && lit->shape().IsArray() && lit->element_count() > 10) {
        out += "{...}";
      } else {
        out += lit->ToStringWithoutShapeOneline();
      }
    } else if (instr.opcode() == HloOpcode::kParameter) {
      absl::StrAppend(&out, instr.attrs().parameter_number);
    } else {
      for (int64_t i = 0; i < instr.operand_count(); ++i) {
        if (i > 0) {
          out += ", ";
          if (o_.long_form && i % 5 == 0) absl::StrAppend(&out, "/*index=", i, "*/");
        }
        const HloInstruction* op = instr.operand(i);
        if (o_.long_form && o_.print_operand_shape) {
          op->shape().AppendTo(out, true);
          out += " ";
        }
        out += OperandRef(*op);
      }
    }
    out += ")";
    std::vector<std::string> attrs;
    if (sugared && wrapped) {
      if (instr.opcode() == HloOpcode::kAsyncStart) {
        AppendAttr(attrs, "async_execution_thread", instr, instr);
        for (absl::string_view key : OpcodeAttributeOrder(wrapped->opcode())) {
          AppendAttr(attrs, key, *wrapped, instr);
        }
        AppendCommonAttr(attrs, "sharding", *wrapped);
        if (instr.attrs().frontend_attributes.empty()) {
          AppendCommonAttr(attrs, "frontend_attributes", *wrapped);
        }
        AppendAttr(attrs, "output_to_operand_aliasing", instr, instr);
      }
    } else {
      for (absl::string_view key : OpcodeAttributeOrder(instr.opcode())) {
        AppendAttr(attrs, key, instr, instr);
      }
    }
    for (absl::string_view key : CommonAttributeOrder()) AppendCommonAttr(attrs, key, instr);
    for (const std::string& a : attrs) absl::StrAppend(&out, ", ", a);
    return out;
  }

  // A get-tuple-element with nothing but its index, printed as %tuple#index
  // where it is used (XLA's compact form) when the options ask for it.
  bool PrintedCompactly(const HloInstruction& i) const {
    if (!o_.print_compact_gte || i.opcode() != HloOpcode::kGetTupleElement) return false;
    const InstructionAttributes& a = i.attrs();
    return i.parent() && i.parent()->root_instruction() != &i && i.operand_count() == 1 &&
           i.operand(0)->parent() == i.parent() && !a.sharding && a.metadata.empty() &&
           a.frontend_attributes.empty() && a.backend_config.empty() && !a.statistics &&
           a.original_value.empty() && i.control_predecessors().empty() &&
           i.control_successors().empty();
  }

  std::string OperandRef(const HloInstruction& op) const {
    if (PrintedCompactly(op)) {
      return absl::StrCat(OperandRef(*op.operand(0)), "#", op.attrs().tuple_index);
    }
    return Name(op.name());
  }

  // XLA's post order: from each user-less instruction in creation order, a DFS
  // that visits control predecessors (last first), then operands in order. A
  // scheduled module's sequential computations print in their stored order
  // (the schedule); its fused computations, which no schedule orders, in post
  // order, as XLA prints them.
  std::vector<const HloInstruction*> PostOrder(const HloComputation& comp) {
    std::vector<const HloInstruction*> order;
    if (comp.parent() && comp.parent()->config().is_scheduled &&
        comp.fusion_instruction() == nullptr) {
      for (const auto& i : comp.instructions()) order.push_back(i.get());
      return order;
    }
    enum State { kVisiting, kVisited };
    absl::flat_hash_map<const HloInstruction*, State> state;
    std::vector<const HloInstruction*> stack;
    for (const auto& start : comp.instructions()) {
      if (!start->users().empty()) continue;
      stack.push_back(start.get());
      while (!stack.empty()) {
        const HloInstruction* cur = stack.back();
        auto it = state.find(cur);
        if (it != state.end()) {
          if (it->second == kVisiting) {
            order.push_back(cur);
            it->second = kVisited;
          }
          stack.pop_back();
          continue;
        }
        state[cur] = kVisiting;
        for (auto op = cur->operands().rbegin(); op != cur->operands().rend(); ++op) {
          if ((*op)->parent() == &comp) stack.push_back(*op);
        }
        for (const HloInstruction* p : cur->control_predecessors()) stack.push_back(p);
      }
    }
    // Anything unreachable from a user-less instruction (cycles) keeps its place.
    for (const auto& i : comp.instructions()) {
      if (!state.contains(i.get())) order.push_back(i.get());
    }
    return order;
  }

  void Computation(std::string& out, const HloComputation& comp) {
    if (comp.is_entry()) out += "ENTRY ";
    out += Name(comp.name());
    if (o_.long_form) {
      out += " (";
      for (int64_t i = 0; i < comp.num_parameters(); ++i) {
        if (i > 0) out += ", ";
        const HloInstruction* p = comp.parameter_instruction(i);
        absl::StrAppend(&out, p->name(), ": ");
        p->shape().AppendTo(out, false);
      }
      out += ") -> ";
      if (comp.root_instruction()) comp.root_instruction()->shape().AppendTo(out, false);
    }
    out += " {\n";
    for (const HloInstruction* instr : PostOrder(comp)) {
      if (PrintedCompactly(*instr)) continue;
      absl::StrAppend(&out, "  ", Instruction(*instr, instr == comp.root_instruction()), "\n");
    }
    out += "}";
    if (comp.execution_thread() != "main") {
      absl::StrAppend(&out, ", execution_thread=", Quoted(comp.execution_thread()));
    }
    out += "\n\n";
  }

  // The computations a call visits, in XLA's called_computations() order:
  // a while's body comes before its condition there (xlite stores them by
  // role, condition first).
  static std::vector<const HloComputation*> CalledInXlaOrder(const HloInstruction& i) {
    std::vector<const HloComputation*> v(i.called_computations().begin(),
                                         i.called_computations().end());
    if (i.opcode() == HloOpcode::kWhile && v.size() == 2) std::swap(v[0], v[1]);
    return v;
  }

  // Callees before callers, otherwise in module order: a DFS from each
  // computation in module order over its instructions in creation order and
  // their callees in XLA's order. On text XLA printed (callees first, in the
  // order XLA created them) this is the text's order, as XLA prints it; where
  // an order must be chosen it follows XLA's MakeComputationPostOrder (a
  // while's body before its condition).
  std::vector<const HloComputation*> ComputationOrder(const HloModule& m) {
    std::vector<const HloComputation*> order;
    absl::flat_hash_set<const HloComputation*> seen;
    for (const auto& root : m.computations()) {
      if (!seen.insert(root.get()).second) continue;
      // (computation, its callees in visiting order, next callee)
      struct Frame {
        const HloComputation* comp;
        std::vector<const HloComputation*> callees;
        size_t next = 0;
      };
      auto make_frame = [](const HloComputation* c) {
        Frame f{c, {}};
        for (const auto& i : c->instructions()) {
          for (const HloComputation* callee : CalledInXlaOrder(*i)) f.callees.push_back(callee);
        }
        return f;
      };
      std::vector<Frame> stack;
      stack.push_back(make_frame(root.get()));
      while (!stack.empty()) {
        Frame& f = stack.back();
        if (f.next < f.callees.size()) {
          const HloComputation* callee = f.callees[f.next++];
          if (seen.insert(callee).second) stack.push_back(make_frame(callee));
          continue;
        }
        order.push_back(f.comp);
        stack.pop_back();
      }
    }
    return order;
  }

  std::string Module(const HloModule& m) {
    std::string out = absl::StrCat("HloModule ", m.name());
    const ModuleConfig& cfg = m.config();
    if (cfg.is_scheduled) out += ", is_scheduled=true";
    if (cfg.input_output_alias_present && !cfg.input_output_alias.empty()) {
      std::vector<std::string> v;
      for (const InputOutputAlias& a : cfg.input_output_alias) {
        std::string e = absl::StrCat(IntList(a.output_index), ": (", a.parameter_number, ", ",
                                     IntList(a.parameter_index));
        if (a.kind_printed)
          absl::StrAppend(&e, ", ", a.kind == AliasKind::kMustAlias ? "must-alias" : "may-alias");
        e += ")";
        v.push_back(std::move(e));
      }
      absl::StrAppend(&out, ", input_output_alias={ ", absl::StrJoin(v, ", "), " }");
    }
    if (!cfg.buffer_donor.empty()) {
      std::vector<std::string> v;
      for (const BufferDonor& d : cfg.buffer_donor) {
        v.push_back(absl::StrCat("(", d.parameter_number, ", ", IntList(d.parameter_index), ")"));
      }
      absl::StrAppend(&out, ", buffer_donor={ ", absl::StrJoin(v, ", "), " }");
    }
    if (cfg.alias_passthrough_params) out += ", alias_passthrough_params=true";
    ProgramShape ps = m.ComputeEntryComputationLayout();
    {
      out += ", entry_computation_layout={(";
      for (size_t i = 0; i < ps.parameters.size(); ++i) {
        if (i > 0) {
          out += ", ";
          if (i % 5 == 0) absl::StrAppend(&out, "/*index=", i, "*/");
        }
        ps.parameters[i].AppendTo(out, true);
      }
      out += ")->";
      ps.result.AppendTo(out, true);
      out += "}";
    }
    auto bools = [](const std::vector<bool>& v) {
      std::vector<std::string> s;
      for (bool b : v) s.push_back(b ? "true" : "false");
      return absl::StrCat("{", absl::StrJoin(s, ","), "}");
    };
    auto printed = [](const std::vector<bool>& v) {
      return !(v.empty() || (v.size() == 1 && !v[0]));
    };
    if (printed(cfg.allow_spmd_sharding_propagation_to_parameters)) {
      absl::StrAppend(&out, ", allow_spmd_sharding_propagation_to_parameters=",
                      bools(cfg.allow_spmd_sharding_propagation_to_parameters));
    }
    if (printed(cfg.allow_spmd_sharding_propagation_to_output)) {
      absl::StrAppend(&out, ", allow_spmd_sharding_propagation_to_output=",
                      bools(cfg.allow_spmd_sharding_propagation_to_output));
    }
    if (cfg.replica_count != 1) absl::StrAppend(&out, ", replica_count=", cfg.replica_count);
    if (cfg.num_partitions != 1) absl::StrAppend(&out, ", num_partitions=", cfg.num_partitions);
    if (!cfg.frontend_attributes.empty()) {
      absl::StrAppend(
          &out, ", frontend_attributes=", FrontendAttributesToString(cfg.frontend_attributes));
    }
    if (!cfg.origin_recovery_table.empty()) {
      absl::StrAppend(&out, ", origin_recovery_table=", cfg.origin_recovery_table, "\n");
    }
    if (!cfg.debug_attributes.empty())
      absl::StrAppend(&out, ",\ndebug_attributes=", cfg.debug_attributes);
    const StackFrameIndex& sfi = m.stack_frame_index();
    if (o_.long_form && !sfi.file_names.empty()) {
      out += "\n\nFileNames\n";
      for (size_t i = 0; i < sfi.file_names.size(); ++i) {
        absl::StrAppend(&out, i + 1, " ", Quoted(sfi.file_names[i]), "\n");
      }
      out += "\nFunctionNames\n";
      for (size_t i = 0; i < sfi.function_names.size(); ++i) {
        absl::StrAppend(&out, i + 1, " ", Quoted(sfi.function_names[i]), "\n");
      }
      out += "\nFileLocations\n";
      for (size_t i = 0; i < sfi.file_locations.size(); ++i) {
        const auto& l = sfi.file_locations[i];
        absl::StrAppend(&out, i + 1, " {file_name_id=", l.file_name_id,
                        " function_name_id=", l.function_name_id, " line=", l.line,
                        " end_line=", l.end_line, " column=", l.column,
                        " end_column=", l.end_column, "}\n");
      }
      out += "\nStackFrames\n";
      for (size_t i = 0; i < sfi.stack_frames.size(); ++i) {
        const auto& f = sfi.stack_frames[i];
        absl::StrAppend(&out, i + 1, " {file_location_id=", f.file_location_id,
                        " parent_frame_id=", f.parent_frame_id, "}\n");
      }
    }
    out += "\n\n";
    for (const HloComputation* c : ComputationOrder(m)) {
      if (o_.syntax_sugar_async_ops && c->IsAsyncComputation() &&
          CanExpandIntoSingleInstruction(c)) {
        continue;
      }
      Computation(out, *c);
    }
    return out;
  }

 private:
  PrintOptions o_;
};

}  // namespace

std::string PrintModule(const HloModule& module, const PrintOptions& options) {
  return Printer(options).Module(module);
}

std::string PrintInstruction(const HloInstruction& instr, const PrintOptions& options) {
  const HloComputation* c = instr.parent();
  return Printer(options).Instruction(instr, c && c->root_instruction() == &instr);
}

std::string PrintSharding(const HloSharding& sharding, bool print_metadata) {
  std::string out;
  AppendSharding(out, sharding, print_metadata);
  return out;
}

}  // namespace xlite
