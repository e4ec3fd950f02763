// Attribute values: what follows "key=" after an instruction's operands.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "xlite/ir/comparison.h"
#include "xlite/support/status.h"
#include "xlite/text/parser_internal.h"

namespace xlite::text_internal {

absl::StatusOr<std::vector<bool>> HloParser::ParseBoolList() {
  std::vector<bool> out;
  RETURN_IF_ERROR(c_.Expect("{"));
  if (c_.TryConsume("}")) return out;
  while (true) {
    ASSIGN_OR_RETURN(bool b, c_.ParseBool());
    out.push_back(b);
    if (c_.TryConsume(",")) continue;
    RETURN_IF_ERROR(c_.Expect("}"));
    return out;
  }
}

absl::StatusOr<std::string> HloParser::ParseEnum(absl::string_view what,
                                                 std::initializer_list<absl::string_view> allowed) {
  size_t pos = (c_.SkipSpace(), c_.pos());
  ASSIGN_OR_RETURN(std::string v, c_.ParseIdentifier(what));
  for (absl::string_view a : allowed) {
    if (a == v) return v;
  }
  return c_.ErrorAt(pos, absl::StrCat("unknown ", what, " '", v, "'"));
}

absl::StatusOr<std::vector<NameRef>> HloParser::ParseNameList() {
  std::vector<NameRef> out;
  RETURN_IF_ERROR(c_.Expect("{"));
  if (c_.TryConsume("}")) return out;
  while (true) {
    size_t pos = (c_.SkipSpace(), c_.pos());
    ASSIGN_OR_RETURN(std::string n, c_.ParseName());
    out.push_back({std::move(n), pos});
    if (c_.TryConsume(",")) continue;
    RETURN_IF_ERROR(c_.Expect("}"));
    return out;
  }
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> HloParser::ParsePairs() {
  std::vector<std::pair<int64_t, int64_t>> out;
  RETURN_IF_ERROR(c_.Expect("{"));
  if (c_.TryConsume("}")) return out;
  while (true) {
    size_t pos = (c_.SkipSpace(), c_.pos());
    ASSIGN_OR_RETURN(std::vector<int64_t> p, c_.ParseIntList());
    if (p.size() != 2) return c_.ErrorAt(pos, "expected a pair {a,b}");
    out.emplace_back(p[0], p[1]);
    if (c_.TryConsume(",")) continue;
    RETURN_IF_ERROR(c_.Expect("}"));
    return out;
  }
}

absl::StatusOr<std::vector<int64_t>> HloParser::ParseDxD(absl::string_view what) {
  // 2x3x1 (a single number is a 1-d window).
  std::vector<int64_t> out;
  while (true) {
    size_t pos = (c_.SkipSpace(), c_.pos());
    ASSIGN_OR_RETURN(int64_t v, c_.ParseInt64());
    (void)pos;
    out.push_back(v);
    if (c_.PeekRaw() == 'x') {
      c_.set_pos(c_.pos() + 1);
      continue;
    }
    return out;
  }
}

absl::StatusOr<Window> HloParser::ParseWindow() {
  Window w;
  RETURN_IF_ERROR(c_.Expect("{"));
  std::vector<int64_t> size, stride, lhs_dilate, rhs_dilate, reversal;
  std::vector<std::pair<int64_t, int64_t>> pad;
  bool has_size = false;
  while (!c_.TryConsume("}")) {
    size_t pos = (c_.SkipSpace(), c_.pos());
    ASSIGN_OR_RETURN(std::string key, c_.ParseIdentifier("window field"));
    RETURN_IF_ERROR(c_.Expect("="));
    if (key == "size") {
      ASSIGN_OR_RETURN(size, ParseDxD(key));
      has_size = true;
    } else if (key == "stride") {
      ASSIGN_OR_RETURN(stride, ParseDxD(key));
    } else if (key == "lhs_dilate") {
      ASSIGN_OR_RETURN(lhs_dilate, ParseDxD(key));
    } else if (key == "rhs_dilate") {
      ASSIGN_OR_RETURN(rhs_dilate, ParseDxD(key));
    } else if (key == "rhs_reversal") {
      ASSIGN_OR_RETURN(reversal, ParseDxD(key));
    } else if (key == "pad") {
      while (true) {
        ASSIGN_OR_RETURN(int64_t lo, c_.ParseInt64());
        if (c_.PeekRaw() != '_') return c_.Error("expected '_' in window padding");
        c_.set_pos(c_.pos() + 1);
        ASSIGN_OR_RETURN(int64_t hi, c_.ParseInt64());
        pad.emplace_back(lo, hi);
        if (c_.PeekRaw() == 'x') {
          c_.set_pos(c_.pos() + 1);
          continue;
        }
        break;
      }
    } else {
      return c_.ErrorAt(pos, absl::StrCat("unknown window field '", key, "'"));
    }
    c_.TryConsume(",");
  }
  if (!has_size && (!stride.empty() || !pad.empty() || !lhs_dilate.empty() || !rhs_dilate.empty() ||
                    !reversal.empty())) {
    return c_.Error("window has no size");
  }
  const size_t rank = size.size();
  auto check = [&](size_t n, absl::string_view field) -> absl::Status {
    if (n != 0 && n != rank) {
      return c_.Error(absl::StrCat("window ", field, " has ", n, " dimensions, size has ", rank));
    }
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(check(stride.size(), "stride"));
  RETURN_IF_ERROR(check(pad.size(), "pad"));
  RETURN_IF_ERROR(check(lhs_dilate.size(), "lhs_dilate"));
  RETURN_IF_ERROR(check(rhs_dilate.size(), "rhs_dilate"));
  RETURN_IF_ERROR(check(reversal.size(), "rhs_reversal"));
  for (size_t i = 0; i < rank; ++i) {
    WindowDimension d;
    d.size = size[i];
    if (!stride.empty()) d.stride = stride[i];
    if (!pad.empty()) {
      d.padding_low = pad[i].first;
      d.padding_high = pad[i].second;
    }
    if (!lhs_dilate.empty()) d.base_dilation = lhs_dilate[i];
    if (!rhs_dilate.empty()) d.window_dilation = rhs_dilate[i];
    if (!reversal.empty()) d.window_reversal = reversal[i] != 0;
    w.dimensions.push_back(d);
  }
  return w;
}

absl::StatusOr<ConvolutionDimensionNumbers> HloParser::ParseDimLabels() {
  size_t pos = (c_.SkipSpace(), c_.pos());
  absl::string_view raw = c_.ParseRawToken();
  std::string s(raw);
  size_t underscore = s.find('_');
  size_t arrow = s.find("->");
  if (underscore == std::string::npos || arrow == std::string::npos || arrow < underscore) {
    return c_.ErrorAt(
        pos, absl::StrCat("malformed dim_labels '", s, "'; expected like b01f_01io->b01f"));
  }
  std::string lhs = s.substr(0, underscore);
  std::string rhs = s.substr(underscore + 1, arrow - underscore - 1);
  std::string out = s.substr(arrow + 2);
  ConvolutionDimensionNumbers d;
  if (lhs.size() != rhs.size() || lhs.size() != out.size() || lhs.size() < 2) {
    return c_.ErrorAt(pos, absl::StrCat("dim_labels '", s,
                                        "' must give the same rank to input, kernel and output"));
  }
  size_t spatial = 0;
  for (char ch : lhs) spatial += (ch >= '0' && ch <= '9');
  d.input_spatial_dimensions.assign(spatial, -1);
  d.kernel_spatial_dimensions.assign(spatial, -1);
  d.output_spatial_dimensions.assign(spatial, -1);
  auto parse_side = [&](const std::string& labels, char a, char b, int64_t* da, int64_t* db,
                        std::vector<int64_t>& sp, absl::string_view side) -> absl::Status {
    bool seen_a = false, seen_b = false;
    for (size_t i = 0; i < labels.size(); ++i) {
      char ch = labels[i];
      if (ch == a) {
        if (seen_a)
          return c_.ErrorAt(
              pos, absl::StrCat("dim_labels ", side, " repeats '", std::string(1, a), "'"));
        seen_a = true;
        *da = i;
      } else if (ch == b) {
        if (seen_b)
          return c_.ErrorAt(
              pos, absl::StrCat("dim_labels ", side, " repeats '", std::string(1, b), "'"));
        seen_b = true;
        *db = i;
      } else if (ch >= '0' && ch <= '9') {
        size_t k = ch - '0';
        if (k >= spatial || sp[k] != -1) {
          return c_.ErrorAt(pos, absl::StrCat("dim_labels ", side, " has a bad spatial label '",
                                              std::string(1, ch), "'"));
        }
        sp[k] = i;
      } else if (ch == '?') {
        // Unknown dimension (allowed on custom calls); left unassigned.
      } else {
        return c_.ErrorAt(pos, absl::StrCat("dim_labels ", side, " has an unexpected label '",
                                            std::string(1, ch), "'"));
      }
    }
    const bool has_unknown = labels.find('?') != std::string::npos;
    if (!seen_a) *da = -1;
    if (!seen_b) *db = -1;
    if ((!seen_a || !seen_b) && !has_unknown) {
      return c_.ErrorAt(pos, absl::StrCat("dim_labels ", side, " is missing a dimension"));
    }
    for (int64_t v : sp) {
      if (v < 0)
        return c_.ErrorAt(pos,
                          absl::StrCat("dim_labels ", side, " is missing a spatial dimension"));
    }
    return absl::OkStatus();
  };
  d.input_rank = lhs.size();
  d.kernel_rank = rhs.size();
  d.output_rank = out.size();
  RETURN_IF_ERROR(parse_side(lhs, 'b', 'f', &d.input_batch_dimension, &d.input_feature_dimension,
                             d.input_spatial_dimensions, "input"));
  RETURN_IF_ERROR(parse_side(rhs, 'i', 'o', &d.kernel_input_feature_dimension,
                             &d.kernel_output_feature_dimension, d.kernel_spatial_dimensions,
                             "kernel"));
  RETURN_IF_ERROR(parse_side(out, 'b', 'f', &d.output_batch_dimension, &d.output_feature_dimension,
                             d.output_spatial_dimensions, "output"));
  return d;
}

absl::StatusOr<std::vector<SliceDimension>> HloParser::ParseSlice() {
  std::vector<SliceDimension> out;
  RETURN_IF_ERROR(c_.Expect("{"));
  if (c_.TryConsume("}")) return out;
  while (true) {
    RETURN_IF_ERROR(c_.Expect("["));
    SliceDimension d;
    ASSIGN_OR_RETURN(d.start, c_.ParseInt64());
    RETURN_IF_ERROR(c_.Expect(":"));
    ASSIGN_OR_RETURN(d.limit, c_.ParseInt64());
    if (c_.TryConsume(":")) {
      ASSIGN_OR_RETURN(d.stride, c_.ParseInt64());
    }
    RETURN_IF_ERROR(c_.Expect("]"));
    out.push_back(d);
    if (c_.TryConsume(",")) continue;
    RETURN_IF_ERROR(c_.Expect("}"));
    return out;
  }
}

absl::StatusOr<std::vector<PaddingDimension>> HloParser::ParsePadding() {
  // 0_0_0x1_1_0: low_high[_interior] per dimension.
  std::vector<PaddingDimension> out;
  size_t pos = (c_.SkipSpace(), c_.pos());
  absl::string_view raw = c_.ParseRawToken();
  if (raw.empty()) return c_.ErrorAt(pos, "expected padding like 0_0x1_1");
  for (absl::string_view dim : absl::StrSplit(raw, 'x')) {
    std::vector<absl::string_view> parts = absl::StrSplit(dim, '_');
    if (parts.size() != 2 && parts.size() != 3) {
      return c_.ErrorAt(pos, absl::StrCat("malformed padding '", raw, "'"));
    }
    PaddingDimension d;
    int64_t* fields[] = {&d.low, &d.high, &d.interior};
    for (size_t i = 0; i < parts.size(); ++i) {
      if (!absl::SimpleAtoi(parts[i], fields[i])) {
        return c_.ErrorAt(pos, absl::StrCat("malformed padding '", raw, "'"));
      }
    }
    out.push_back(d);
  }
  return out;
}

absl::StatusOr<ReplicaGroups> HloParser::ParseReplicaGroups() {
  ReplicaGroups g;
  if (c_.TryConsumeWord("mesh")) {
    // mesh['axis_0'=4,'axis_1'=2(, device_ids=(...))] {'axis_0', ...}: validated,
    // then kept as written.
    size_t begin = c_.pos();
    auto quoted = [&]() -> absl::StatusOr<std::string> {
      if (c_.Peek() != '\'') return c_.Error("expected a quoted mesh axis name");
      size_t start = c_.pos() + 1;
      size_t end = c_.text().find('\'', start);
      if (end == absl::string_view::npos) return c_.Error("unterminated mesh axis name");
      c_.set_pos(end + 1);
      return std::string(c_.text().substr(start, end - start));
    };
    RETURN_IF_ERROR(c_.Expect("["));
    std::vector<std::pair<std::string, int64_t>> axes;
    int64_t devices = 1;
    std::optional<int64_t> device_id_count;
    while (!c_.TryConsume("]")) {
      if (c_.TryConsumeWord("device_ids")) {
        RETURN_IF_ERROR(c_.Expect("="));
        ASSIGN_OR_RETURN(std::vector<int64_t> ids, c_.ParseIntList('(', ')'));
        device_id_count = ids.size();
      } else {
        ASSIGN_OR_RETURN(std::string name, quoted());
        RETURN_IF_ERROR(c_.Expect("="));
        size_t spos = (c_.SkipSpace(), c_.pos());
        ASSIGN_OR_RETURN(int64_t size, c_.ParseInt64());
        if (size <= 0 || size > (int64_t{1} << 20))
          return c_.ErrorAt(spos, "mesh axis size must be positive");
        axes.emplace_back(std::move(name), size);
        devices *= size;
      }
      if (!c_.TryConsume(",")) {
        RETURN_IF_ERROR(c_.Expect("]"));
        break;
      }
    }
    if (device_id_count && *device_id_count != devices) {
      return c_.ErrorAt(begin, absl::StrCat("mesh has ", devices, " devices but device_ids lists ",
                                            *device_id_count));
    }
    size_t close = c_.pos();
    RETURN_IF_ERROR(c_.Expect("{"));
    while (!c_.TryConsume("}")) {
      size_t npos = (c_.SkipSpace(), c_.pos());
      ASSIGN_OR_RETURN(std::string name, quoted());
      bool known = std::any_of(axes.begin(), axes.end(), [&](auto& a) { return a.first == name; });
      if (!known) return c_.ErrorAt(npos, absl::StrCat("mesh has no axis '", name, "'"));
      c_.TryConsume(",");
    }
    g.mesh = absl::StrCat(
        "mesh", c_.text().substr(begin, close - begin), " ",
        c_.text().substr((c_.text().find('{', close)), c_.pos() - c_.text().find('{', close)));
    return g;
  }
  if (c_.Peek() == '[') {
    g.iota = true;
    ASSIGN_OR_RETURN(g.iota_group_shape, c_.ParseIntList('[', ']'));
    RETURN_IF_ERROR(c_.Expect("<="));
    ASSIGN_OR_RETURN(g.iota_reshape, c_.ParseIntList('[', ']'));
    if (c_.TryConsume("T")) {
      ASSIGN_OR_RETURN(g.iota_transpose, c_.ParseIntList('(', ')'));
    }
    if (g.iota_group_shape.size() != 2)
      return c_.Error("iota replica groups need [num_groups,group_size]");
    return g;
  }
  RETURN_IF_ERROR(c_.Expect("{"));
  if (c_.TryConsume("}")) return g;
  while (true) {
    ASSIGN_OR_RETURN(std::vector<int64_t> grp, c_.ParseIntList());
    g.groups.push_back(std::move(grp));
    if (c_.TryConsume(",")) continue;
    RETURN_IF_ERROR(c_.Expect("}"));
    return g;
  }
}

absl::StatusOr<OpMetadata> HloParser::ParseMetadata() {
  OpMetadata m;
  RETURN_IF_ERROR(c_.Expect("{"));
  while (!c_.TryConsume("}")) {
    size_t pos = (c_.SkipSpace(), c_.pos());
    ASSIGN_OR_RETURN(std::string key, c_.ParseIdentifier("metadata field"));
    RETURN_IF_ERROR(c_.Expect("="));
    if (key == "op_type") {
      ASSIGN_OR_RETURN(m.op_type, c_.ParseString());
    } else if (key == "op_name") {
      ASSIGN_OR_RETURN(m.op_name, c_.ParseString());
    } else if (key == "source_file") {
      ASSIGN_OR_RETURN(m.source_file, c_.ParseString());
    } else if (key == "source_line") {
      ASSIGN_OR_RETURN(m.source_line, c_.ParseInt64());
    } else if (key == "source_end_line") {
      ASSIGN_OR_RETURN(m.source_end_line, c_.ParseInt64());
    } else if (key == "source_column") {
      ASSIGN_OR_RETURN(m.source_column, c_.ParseInt64());
    } else if (key == "source_end_column") {
      ASSIGN_OR_RETURN(m.source_end_column, c_.ParseInt64());
    } else if (key == "profile_type") {
      ASSIGN_OR_RETURN(m.profile_type, c_.ParseIntList());
    } else if (key == "deduplicated_name") {
      ASSIGN_OR_RETURN(m.deduplicated_name, c_.ParseString());
    } else if (key == "preserve_layout") {
      ASSIGN_OR_RETURN(m.preserve_layout, c_.ParseBool());
    } else if (key == "scheduling_name") {
      ASSIGN_OR_RETURN(m.scheduling_name, c_.ParseString());
    } else if (key == "stack_frame_id") {
      ASSIGN_OR_RETURN(m.stack_frame_id, c_.ParseInt64());
    } else {
      return c_.ErrorAt(pos, absl::StrCat("unknown metadata field '", key, "'"));
    }
    c_.TryConsume(",");
  }
  return m;
}

absl::StatusOr<FrontendAttributes> HloParser::ParseFrontendAttributes() {
  FrontendAttributes out;
  RETURN_IF_ERROR(c_.Expect("{"));
  if (c_.TryConsume("}")) return out;
  while (true) {
    size_t pos = (c_.SkipSpace(), c_.pos());
    std::string key;
    if (c_.PeekRaw() == '"') {
      ASSIGN_OR_RETURN(key, c_.ParseString());
    } else {
      ASSIGN_OR_RETURN(key, c_.ParseName("frontend attribute name"));
    }
    RETURN_IF_ERROR(c_.Expect("="));
    std::string value;
    if (c_.Peek() == '{') {
      ASSIGN_OR_RETURN(value, c_.ParseBalancedBraces());
    } else {
      ASSIGN_OR_RETURN(value, c_.ParseString());
    }
    if (out.contains(key))
      return c_.ErrorAt(pos, absl::StrCat("duplicate frontend attribute '", key, "'"));
    out.emplace(std::move(key), std::move(value));
    if (c_.TryConsume(",")) continue;
    RETURN_IF_ERROR(c_.Expect("}"));
    return out;
  }
}

absl::StatusOr<std::vector<int64_t>> HloParser::ParseShapeIndex() { return c_.ParseIntList(); }

absl::Status HloParser::ParseAttributeValue(const std::string& key, size_t key_pos,
                                            HloInstruction* instr, InstructionAttributes& a) {
  auto call_attr = [&](bool list) -> absl::Status {
    std::vector<NameRef> names;
    if (!list && c_.Peek() == '{') {
      // An inline computation: to_apply={ x = f32[] parameter(0) ... }.
      size_t save = c_.pos();
      c_.TryConsume("{");
      bool is_inline = c_.ParseName().ok() && c_.Peek() == '=';
      c_.set_pos(save);
      if (is_inline) {
        size_t pos = (c_.SkipSpace(), c_.pos());
        c_.TryConsume("{");
        std::string name = UniqueComputationName(absl::StrCat(instr->name(), ".", key));
        ++inline_depth_;
        auto body = ParseComputationBody(name, pos, inline_depth_);
        --inline_depth_;
        if (!body.ok()) return body.status();
        generated_.push_back(std::move(*body));
        pending_calls_.push_back({instr, key, {{name, pos}}});
        return absl::OkStatus();
      }
    }
    if (list || c_.Peek() == '{') {
      const size_t pos = (c_.SkipSpace(), c_.pos());
      ASSIGN_OR_RETURN(names, ParseNameList());
      if (!list && names.empty()) {
        return c_.ErrorAt(pos, absl::StrCat("'", key, "' names no computation"));
      }
    } else {
      size_t pos = (c_.SkipSpace(), c_.pos());
      ASSIGN_OR_RETURN(std::string n, c_.ParseName("computation name"));
      names.push_back({std::move(n), pos});
    }
    pending_calls_.push_back({instr, key, std::move(names)});
    return absl::OkStatus();
  };
  auto int_list = [&](std::vector<int64_t>& out) -> absl::Status {
    ASSIGN_OR_RETURN(out, c_.ParseIntList());
    return absl::OkStatus();
  };
  auto opt_int_list = [&](std::optional<std::vector<int64_t>>& out) -> absl::Status {
    ASSIGN_OR_RETURN(out, c_.ParseIntList());
    return absl::OkStatus();
  };
  auto integer = [&](int64_t& out) -> absl::Status {
    ASSIGN_OR_RETURN(out, c_.ParseInt64());
    return absl::OkStatus();
  };
  auto boolean = [&](bool& out) -> absl::Status {
    ASSIGN_OR_RETURN(out, c_.ParseBool());
    return absl::OkStatus();
  };
  auto string = [&](std::string& out) -> absl::Status {
    ASSIGN_OR_RETURN(out, c_.ParseString());
    return absl::OkStatus();
  };
  auto gather = [&]() -> GatherDimensionNumbers& {
    if (!a.gather_dimension_numbers) a.gather_dimension_numbers.emplace();
    return *a.gather_dimension_numbers;
  };
  auto scatter = [&]() -> ScatterDimensionNumbers& {
    if (!a.scatter_dimension_numbers) a.scatter_dimension_numbers.emplace();
    return *a.scatter_dimension_numbers;
  };
  auto dot = [&]() -> DotDimensionNumbers& {
    if (!a.dot_dimension_numbers) a.dot_dimension_numbers.emplace();
    return *a.dot_dimension_numbers;
  };
  auto ragged = [&]() -> RaggedDotDimensionNumbers& {
    if (!a.ragged_dot_dimension_numbers) a.ragged_dot_dimension_numbers.emplace();
    return *a.ragged_dot_dimension_numbers;
  };

  // Called computations.
  if (key == "to_apply" || key == "condition" || key == "body" || key == "true_computation" ||
      key == "false_computation" || key == "select" || key == "scatter") {
    return call_attr(false);
  }
  if (key == "calls") return call_attr(false);
  if (key == "branch_computations" || key == "called_computations") return call_attr(true);

  // Common attributes.
  if (key == "metadata") {
    ASSIGN_OR_RETURN(a.metadata, ParseMetadata());
    return absl::OkStatus();
  }
  if (key == "sharding") {
    ASSIGN_OR_RETURN(a.sharding, ParseSharding());
    return absl::OkStatus();
  }
  if (key == "frontend_attributes") {
    ASSIGN_OR_RETURN(a.frontend_attributes, ParseFrontendAttributes());
    return absl::OkStatus();
  }
  if (key == "backend_config") {
    if (c_.Peek() == '{') {
      ASSIGN_OR_RETURN(a.backend_config, c_.ParseBalancedBraces());
    } else {
      ASSIGN_OR_RETURN(a.backend_config, c_.ParseString());
    }
    return absl::OkStatus();
  }
  if (key == "statistics") {
    ASSIGN_OR_RETURN(a.statistics, ParseStatistics());
    return absl::OkStatus();
  }
  if (key == "origin") {
    ASSIGN_OR_RETURN(a.original_value, ParseOriginalValue());
    return absl::OkStatus();
  }
  if (key == "result_accuracy") {
    ASSIGN_OR_RETURN(a.result_accuracy, ParseResultAccuracy());
    return absl::OkStatus();
  }

  // Opcode-specific attributes.
  if (key == "dimensions") return opt_int_list(a.dimensions);
  if (key == "index") return integer(a.tuple_index);
  if (key == "iota_dimension") return integer(a.iota_dimension);
  if (key == "slice") {
    ASSIGN_OR_RETURN(a.slice, ParseSlice());
    return absl::OkStatus();
  }
  if (key == "dynamic_slice_sizes") return int_list(a.dynamic_slice_sizes);
  if (key == "padding") {
    ASSIGN_OR_RETURN(a.padding, ParsePadding());
    return absl::OkStatus();
  }
  if (key == "inferred_dimension") {
    int64_t v;
    RETURN_IF_ERROR(integer(v));
    a.inferred_dimension = v;
    return absl::OkStatus();
  }
  if (key == "window") {
    ASSIGN_OR_RETURN(a.window, ParseWindow());
    return absl::OkStatus();
  }
  if (key == "dim_labels") {
    ASSIGN_OR_RETURN(a.convolution_dimension_numbers, ParseDimLabels());
    return absl::OkStatus();
  }
  if (key == "feature_group_count") return integer(a.feature_group_count);
  if (key == "batch_group_count") return integer(a.batch_group_count);
  if (key == "lhs_batch_dims") return int_list(dot().lhs_batch_dimensions);
  if (key == "rhs_batch_dims") return int_list(dot().rhs_batch_dimensions);
  if (key == "lhs_contracting_dims") return int_list(dot().lhs_contracting_dimensions);
  if (key == "rhs_contracting_dims") return int_list(dot().rhs_contracting_dimensions);
  if (key == "lhs_ragged_dims") return int_list(ragged().lhs_ragged_dimensions);
  if (key == "rhs_group_dims") return int_list(ragged().rhs_group_dimensions);
  if (key == "operand_precision") {
    RETURN_IF_ERROR(c_.Expect("{"));
    while (!c_.TryConsume("}")) {
      ASSIGN_OR_RETURN(std::string p,
                       ParseEnum("precision", {"default", "high", "highest", "packed_nibble"}));
      a.operand_precision.push_back(std::move(p));
      c_.TryConsume(",");
    }
    return absl::OkStatus();
  }
  if (key == "algorithm") {
    size_t pos = (c_.SkipSpace(), c_.pos());
    ASSIGN_OR_RETURN(a.algorithm, c_.ParseIdentifier("algorithm"));
    if (instr->opcode() == HloOpcode::kRngBitGenerator) {
      if (a.algorithm != "rng_default" && a.algorithm != "rng_three_fry" &&
          a.algorithm != "rng_philox") {
        return c_.ErrorAt(pos, absl::StrCat("unknown rng algorithm '", a.algorithm, "'"));
      }
    } else if (a.algorithm.rfind("dot_", 0) != 0 && a.algorithm != "unset") {
      return c_.ErrorAt(pos, absl::StrCat("unknown dot algorithm '", a.algorithm, "'"));
    }
    return absl::OkStatus();
  }
  if (key == "sparsity_config") {
    ASSIGN_OR_RETURN(a.sparsity_config, c_.ParseBalancedBraces());
    return absl::OkStatus();
  }
  if (key == "sparsity") {
    a.sparsity = std::string(c_.ParseRawToken());
    if (a.sparsity.empty()) return c_.Error("expected sparsity descriptor");
    return absl::OkStatus();
  }
  if (key == "offset_dims") return int_list(gather().offset_dims);
  if (key == "collapsed_slice_dims") return int_list(gather().collapsed_slice_dims);
  if (key == "start_index_map") return int_list(gather().start_index_map);
  if (key == "operand_batching_dims") return int_list(gather().operand_batching_dims);
  if (key == "start_indices_batching_dims") return int_list(gather().start_indices_batching_dims);
  if (key == "slice_sizes") {
    if (instr->opcode() == HloOpcode::kGather) return int_list(a.gather_slice_sizes);
    std::vector<std::vector<int64_t>> lists;
    RETURN_IF_ERROR(c_.Expect("{"));
    if (!c_.TryConsume("}")) {
      while (true) {
        ASSIGN_OR_RETURN(std::vector<int64_t> l, c_.ParseIntList());
        lists.push_back(std::move(l));
        if (c_.TryConsume(",")) continue;
        RETURN_IF_ERROR(c_.Expect("}"));
        break;
      }
    }
    a.slice_sizes_list = std::move(lists);
    return absl::OkStatus();
  }
  if (key == "has_dynamic_root") return boolean(a.has_dynamic_root);
  if (key == "is_associative") {
    bool b;
    RETURN_IF_ERROR(boolean(b));
    a.is_associative = b;
    return absl::OkStatus();
  }
  if (key == "delta") return integer(a.delta);
  if (key == "padding_type") {
    ASSIGN_OR_RETURN(a.padding_type, c_.ParseIdentifier("padding type"));
    return absl::OkStatus();
  }
  if (key == "conv_kind" || key == "convolution_kind") {
    // conv_kind= is XLA's current spelling; unset is its default.
    ASSIGN_OR_RETURN(a.convolution_kind,
                     ParseEnum("convolution kind", {"fprop", "wgrad", "dgrad", "unset"}));
    if (a.convolution_kind == "unset") a.convolution_kind.clear();
    return absl::OkStatus();
  }
  if (key == "index_vector_dim") {
    int64_t v;
    RETURN_IF_ERROR(integer(v));
    if (instr->opcode() == HloOpcode::kScatter) {
      scatter().index_vector_dim = v;
    } else {
      gather().index_vector_dim = v;
    }
    return absl::OkStatus();
  }
  if (key == "update_window_dims") return int_list(scatter().update_window_dims);
  if (key == "inserted_window_dims") return int_list(scatter().inserted_window_dims);
  if (key == "scatter_dims_to_operand_dims")
    return int_list(scatter().scatter_dims_to_operand_dims);
  if (key == "input_batching_dims") return int_list(scatter().input_batching_dims);
  if (key == "scatter_indices_batching_dims")
    return int_list(scatter().scatter_indices_batching_dims);
  if (key == "indices_are_sorted") return boolean(a.indices_are_sorted);
  if (key == "unique_indices") return boolean(a.unique_indices);
  if (key == "direction") {
    ASSIGN_OR_RETURN(std::string d,
                     ParseEnum("comparison direction", {"EQ", "NE", "GE", "GT", "LE", "LT"}));
    static const std::pair<absl::string_view, ComparisonDirection> kDirs[] = {
        {"EQ", ComparisonDirection::kEq}, {"NE", ComparisonDirection::kNe},
        {"GE", ComparisonDirection::kGe}, {"GT", ComparisonDirection::kGt},
        {"LE", ComparisonDirection::kLe}, {"LT", ComparisonDirection::kLt}};
    for (auto& [n, v] : kDirs) {
      if (n == d) a.comparison_direction = v;
    }
    return absl::OkStatus();
  }
  if (key == "order") {
    size_t pos = (c_.SkipSpace(), c_.pos());
    ASSIGN_OR_RETURN(std::string o, c_.ParseIdentifier("comparison order"));
    a.comparison_order = ComparisonOrderFromShortString(o);
    if (!a.comparison_order) {
      return c_.ErrorAt(
          pos, absl::StrCat("unknown comparison order '", o, "'; expected TOTAL, WEAK or PARTIAL"));
    }
    return absl::OkStatus();
  }
  if (key == "type") {
    ASSIGN_OR_RETURN(std::string t, ParseEnum("comparison type", {"DEFAULT", "FLOAT", "TOTALORDER",
                                                                  "SIGNED", "UNSIGNED"}));
    a.comparison_type = t == "DEFAULT"      ? ComparisonType::kDefault
                        : t == "FLOAT"      ? ComparisonType::kFloat
                        : t == "TOTALORDER" ? ComparisonType::kTotalOrder
                        : t == "SIGNED"     ? ComparisonType::kSigned
                                            : ComparisonType::kUnsigned;
    return absl::OkStatus();
  }
  if (key == "channel_id") {
    int64_t v;
    RETURN_IF_ERROR(integer(v));
    a.channel_id = v;
    return absl::OkStatus();
  }
  if (key == "replica_groups") {
    ASSIGN_OR_RETURN(a.replica_groups, ParseReplicaGroups());
    return absl::OkStatus();
  }
  if (key == "use_global_device_ids") return boolean(a.use_global_device_ids);
  if (key == "mode") {
    // XLA reads the collective group mode and ignores it (it was added and
    // rolled back; text from between keeps it).
    return ParseEnum("collective op group mode", {"cross_replica", "cross_partition",
                                                  "cross_replica_and_partition", "flattened_id"})
        .status();
  }
  if (key == "constrain_layout") return boolean(a.constrain_layout);
  if (key == "source_target_pairs") {
    ASSIGN_OR_RETURN(a.source_target_pairs, ParsePairs());
    return absl::OkStatus();
  }
  if (key == "is_host_transfer") return boolean(a.is_host_transfer);
  if (key == "is_composite") return boolean(a.is_composite);
  if (key == "kind") {
    ASSIGN_OR_RETURN(a.fusion_kind,
                     ParseEnum("fusion kind", {"kLoop", "kInput", "kOutput", "kCustom"}));
    return absl::OkStatus();
  }
  if (key == "output_to_operand_aliasing") {
    RETURN_IF_ERROR(c_.Expect("{"));
    if (c_.TryConsume("}")) return absl::OkStatus();
    while (true) {
      OutputOperandAlias al;
      ASSIGN_OR_RETURN(al.output_index, ParseShapeIndex());
      RETURN_IF_ERROR(c_.Expect(":"));
      RETURN_IF_ERROR(c_.Expect("("));
      ASSIGN_OR_RETURN(al.operand, c_.ParseInt64());
      RETURN_IF_ERROR(c_.Expect(","));
      ASSIGN_OR_RETURN(al.operand_index, ParseShapeIndex());
      RETURN_IF_ERROR(c_.Expect(")"));
      a.output_to_operand_aliasing.push_back(std::move(al));
      if (c_.TryConsume(",")) continue;
      RETURN_IF_ERROR(c_.Expect("}"));
      return absl::OkStatus();
    }
  }
  if (key == "async_execution_thread") return string(a.async_execution_thread);
  if (key == "cross_program_prefetch_index") {
    int64_t v;
    RETURN_IF_ERROR(integer(v));
    a.cross_program_prefetch_index = v;
    return absl::OkStatus();
  }
  if (key == "custom_call_target") return string(a.custom_call_target);
  if (key == "custom_call_has_side_effect") return boolean(a.custom_call_has_side_effect);
  if (key == "api_version") {
    ASSIGN_OR_RETURN(a.api_version,
                     ParseEnum("api version",
                               {"API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
                                "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"}));
    return absl::OkStatus();
  }
  if (key == "schedule") {
    ASSIGN_OR_RETURN(a.custom_call_schedule,
                     ParseEnum("custom call schedule",
                               {"SCHEDULE_NONE", "SCHEDULE_LATEST", "SCHEDULE_EARLIEST"}));
    return absl::OkStatus();
  }
  if (key == "operand_layout_constraints") {
    std::vector<Shape> shapes;
    RETURN_IF_ERROR(c_.Expect("{"));
    if (!c_.TryConsume("}")) {
      while (true) {
        ASSIGN_OR_RETURN(Shape s, ParseShape());
        shapes.push_back(std::move(s));
        if (c_.TryConsume(",")) continue;
        RETURN_IF_ERROR(c_.Expect("}"));
        break;
      }
    }
    a.operand_layout_constraints = std::move(shapes);
    return absl::OkStatus();
  }
  if (key == "literal") {
    ASSIGN_OR_RETURN(a.literal, ParseLiteralWithShape(0));
    return absl::OkStatus();
  }
  if (key == "epsilon") {
    ASSIGN_OR_RETURN(double e, c_.ParseDouble());
    a.epsilon = static_cast<float>(e);
    return absl::OkStatus();
  }
  if (key == "feature_index") return integer(a.feature_index);
  if (key == "exponent_bits") return integer(a.exponent_bits);
  if (key == "mantissa_bits") return integer(a.mantissa_bits);
  if (key == "distribution") {
    ASSIGN_OR_RETURN(a.distribution, ParseEnum("distribution", {"rng_uniform", "rng_normal"}));
    return absl::OkStatus();
  }
  if (key == "fft_type") {
    ASSIGN_OR_RETURN(a.fft_type, ParseEnum("fft type", {"FFT", "IFFT", "RFFT", "IRFFT"}));
    return absl::OkStatus();
  }
  if (key == "fft_length") return int_list(a.fft_length);
  if (key == "left_side") return boolean(a.left_side);
  if (key == "lower") return boolean(a.lower);
  if (key == "unit_diagonal") return boolean(a.unit_diagonal);
  if (key == "transpose_a") {
    ASSIGN_OR_RETURN(a.transpose_a,
                     ParseEnum("transpose", {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}));
    return absl::OkStatus();
  }
  if (key == "k") return integer(a.k);
  if (key == "largest") return boolean(a.largest);
  if (key == "infeed_config") return string(a.infeed_config);
  if (key == "outfeed_config") return string(a.outfeed_config);
  if (key == "outfeed_shape") {
    ASSIGN_OR_RETURN(a.outfeed_shape, ParseShape());
    return absl::OkStatus();
  }
  if (key == "is_stable") {
    if (instr->opcode() == HloOpcode::kTopK) {
      bool b;
      RETURN_IF_ERROR(boolean(b));
      a.topk_is_stable = b;
      return absl::OkStatus();
    }
    return boolean(a.is_stable);
  }
  if (key == "parameter_replication") {
    ASSIGN_OR_RETURN(a.parameter_replication, ParseBoolList());
    return absl::OkStatus();
  }
  if (key == "domain") {
    DomainMetadata d;
    RETURN_IF_ERROR(c_.Expect("{"));
    bool have_kind = false;
    while (!c_.TryConsume("}")) {
      size_t pos = (c_.SkipSpace(), c_.pos());
      ASSIGN_OR_RETURN(std::string k, c_.ParseIdentifier("domain field"));
      RETURN_IF_ERROR(c_.Expect("="));
      if (k == "kind") {
        ASSIGN_OR_RETURN(d.kind, c_.ParseString());
        have_kind = true;
      } else if (k == "entry") {
        ASSIGN_OR_RETURN(d.entry, ParseSharding());
      } else if (k == "exit") {
        ASSIGN_OR_RETURN(d.exit, ParseSharding());
      } else {
        return c_.ErrorAt(pos, absl::StrCat("unknown domain field '", k, "'"));
      }
      c_.TryConsume(",");
    }
    if (!have_kind) return c_.ErrorAt(key_pos, "domain needs kind=");
    if (d.kind != "sharding")
      return c_.ErrorAt(key_pos, absl::StrCat("unsupported domain kind \"", d.kind, "\""));
    a.domain = std::move(d);
    return absl::OkStatus();
  }
  if (key == "num_carries") {
    int64_t v;
    RETURN_IF_ERROR(integer(v));
    a.num_carries = v;
    return absl::OkStatus();
  }
  if (key == "is_reverse") return boolean(a.is_reverse);
  return c_.ErrorAt(key_pos, absl::StrCat("unsupported attribute '", key, "'"));
}

// {mode=highest} | {tolerance={atol=0.5, rtol=0, ulps=2}}: one of the two, as
// XLA's ParseResultAccuracy; modes are case-insensitive.
absl::StatusOr<ResultAccuracy> HloParser::ParseResultAccuracy() {
  ResultAccuracy r;
  RETURN_IF_ERROR(c_.Expect("{"));
  size_t pos = (c_.SkipSpace(), c_.pos());
  ASSIGN_OR_RETURN(std::string key, c_.ParseIdentifier("result_accuracy field"));
  RETURN_IF_ERROR(c_.Expect("="));
  if (key == "mode") {
    size_t mpos = (c_.SkipSpace(), c_.pos());
    ASSIGN_OR_RETURN(std::string mode, c_.ParseIdentifier("result_accuracy mode"));
    const std::string upper = absl::AsciiStrToUpper(mode);
    if (upper == "DEFAULT") {
      r.mode = ResultAccuracy::Mode::kDefault;
    } else if (upper == "HIGHEST") {
      r.mode = ResultAccuracy::Mode::kHighest;
    } else {
      return c_.ErrorAt(mpos, absl::StrCat("unknown result_accuracy mode '", mode,
                                           "'; expected default or highest"));
    }
  } else if (key == "tolerance") {
    ResultAccuracy::Tolerance t;
    RETURN_IF_ERROR(c_.Expect("{"));
    if (!c_.TryConsume("}")) {
      while (true) {
        size_t fpos = (c_.SkipSpace(), c_.pos());
        ASSIGN_OR_RETURN(std::string field, c_.ParseIdentifier("tolerance field"));
        RETURN_IF_ERROR(c_.Expect("="));
        size_t vpos = (c_.SkipSpace(), c_.pos());
        ASSIGN_OR_RETURN(double v, c_.ParseDouble());
        if (field == "atol") {
          t.atol = v;
        } else if (field == "rtol") {
          t.rtol = v;
        } else if (field == "ulps") {
          if (!(v == std::floor(v)) || std::fabs(v) > 9e15) {
            return c_.ErrorAt(vpos, "result_accuracy ulps must be a whole number");
          }
          t.ulps = static_cast<int64_t>(v);
        } else {
          return c_.ErrorAt(fpos, absl::StrCat("unknown result_accuracy tolerance '", field,
                                               "'; expected atol, rtol or ulps"));
        }
        if (c_.TryConsume(",")) continue;
        RETURN_IF_ERROR(c_.Expect("}"));
        break;
      }
    }
    r.tolerance = t;
  } else {
    return c_.ErrorAt(pos, absl::StrCat("unknown result_accuracy field '", key,
                                        "'; expected mode= or tolerance="));
  }
  if (c_.Peek() == ',') {
    return c_.Error("result_accuracy takes one of mode= or tolerance=, not both");
  }
  RETURN_IF_ERROR(c_.Expect("}"));
  return r;
}

// {} or {visualizing_index=1, stat-1=33, stat-2=0.5}: XLA's ParseStatisticsViz
// (the first entry names the statistic to show and must be an integer; the
// rest are plain numbers).
absl::StatusOr<Statistics> HloParser::ParseStatistics() {
  Statistics st;
  RETURN_IF_ERROR(c_.Expect("{"));
  if (c_.TryConsume("}")) return st;
  RETURN_IF_ERROR(c_.ParseIdentifier("statistics index name").status());
  RETURN_IF_ERROR(c_.Expect("="));
  size_t pos = (c_.SkipSpace(), c_.pos());
  auto is_number = [&] {
    const absl::string_view rest = c_.text().substr(c_.pos());
    if (rest.empty()) return false;
    return std::isdigit(static_cast<unsigned char>(rest[0])) ||
           (rest[0] == '-' && rest.size() > 1 && std::isdigit(static_cast<unsigned char>(rest[1])));
  };
  if (!is_number()) return c_.ErrorAt(pos, "statistics index must be an integer");
  ASSIGN_OR_RETURN(st.visualizing_index, c_.ParseInt64());
  while (c_.TryConsume(",")) {
    ASSIGN_OR_RETURN(std::string name, c_.ParseIdentifier("statistic name"));
    RETURN_IF_ERROR(c_.Expect("="));
    size_t vpos = (c_.SkipSpace(), c_.pos());
    if (!is_number()) {
      return c_.ErrorAt(vpos, absl::StrCat("statistic '", name, "' must be a number"));
    }
    ASSIGN_OR_RETURN(double v, c_.ParseDouble());
    st.values.emplace_back(std::move(name), v);
  }
  RETURN_IF_ERROR(c_.Expect("}"));
  return st;
}

// origin={...}: {[synthetic_call]}, or a tuple tree of original arrays
// {"name" {shape_index}} (or {} for a leaf without one) in parentheses, as
// XLA's ParseOriginalValue reads it. Kept as written.
absl::StatusOr<std::string> HloParser::ParseOriginalValue() {
  const size_t start = (c_.SkipSpace(), c_.pos());
  RETURN_IF_ERROR(c_.Expect("{"));
  if (c_.TryConsume("[")) {
    RETURN_IF_ERROR(c_.Expect("synthetic_call"));
    RETURN_IF_ERROR(c_.Expect("]"));
    RETURN_IF_ERROR(c_.Expect("}"));
    return std::string(c_.text().substr(start, c_.pos() - start));
  }
  int depth = 0;
  while (!c_.TryConsume("}")) {
    if (c_.AtEnd()) return c_.ErrorAt(start, "origin={...} is not closed");
    const size_t pos = c_.pos();
    if (c_.TryConsume("(")) {
      if (++depth > kMaxDepth) return c_.ErrorAt(pos, "origin nested too deeply");
    } else if (c_.TryConsume(")")) {
      if (--depth < 0) return c_.ErrorAt(pos, "unbalanced ')' in origin");
    } else if (c_.TryConsume(",")) {
    } else if (c_.Peek() == '{') {
      RETURN_IF_ERROR(ParseOriginalArray());
    } else {
      return c_.Error(
          "expected '[synthetic_call]' or a tuple tree of {\"name\" {index}} in origin");
    }
  }
  if (depth != 0) return c_.ErrorAt(start, "unbalanced '(' in origin");
  return std::string(c_.text().substr(start, c_.pos() - start));
}

// {"instruction name" {shape index}} or {}.
absl::Status HloParser::ParseOriginalArray() {
  RETURN_IF_ERROR(c_.Expect("{"));
  if (c_.Peek() == '"') {
    RETURN_IF_ERROR(c_.ParseString().status());
    if (c_.Peek() == '{') RETURN_IF_ERROR(c_.ParseIntList().status());
  }
  return c_.Expect("}");
}

// origin_recovery_table={ {"a"} : {"b"}, "<HLO module>" ... }: each entry maps
// an original array to its replacement, optionally with the module that
// recovers it, which must itself parse (XLA parses it). Kept as written.
absl::StatusOr<std::string> HloParser::ParseOriginRecoveryTable() {
  const size_t start = (c_.SkipSpace(), c_.pos());
  RETURN_IF_ERROR(c_.Expect("{"));
  while (!c_.TryConsume("}")) {
    if (c_.AtEnd()) return c_.ErrorAt(start, "origin_recovery_table={...} is not closed");
    RETURN_IF_ERROR(ParseOriginalArray());
    RETURN_IF_ERROR(c_.Expect(":"));
    RETURN_IF_ERROR(ParseOriginalArray());
    if (c_.TryConsume(",")) {
      size_t mpos = (c_.SkipSpace(), c_.pos());
      ASSIGN_OR_RETURN(std::string module_text, c_.ParseString(/*allow_newlines=*/true));
      if (recovery_depth_ >= 4) return c_.ErrorAt(mpos, "recovery modules nested too deeply");
      HloParser nested(module_text, "<recovery module>");
      nested.recovery_depth_ = recovery_depth_ + 1;
      if (absl::StatusOr<std::unique_ptr<HloModule>> m = nested.ParseModule(); !m.ok()) {
        return c_.ErrorAt(
            mpos, absl::StrCat("the recovery module does not parse: ", m.status().message()));
      }
    }
  }
  return std::string(c_.text().substr(start, c_.pos() - start));
}

}  // namespace xlite::text_internal
