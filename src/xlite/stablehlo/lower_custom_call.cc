#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "xlite/stablehlo/lower_internal.h"
#include "xlite/stablehlo/printer.h"
#include "xlite/support/status.h"

namespace xlite::stablehlo::lowering {
namespace {

// `minor_to_major` (a custom call's operand_layouts/result_layouts entry) as
// the layout of `shape`.
absl::Status SetLayout(const Operation& op, const Attribute& layout, Shape& shape) {
  std::optional<std::vector<int64_t>> m2m = IntsOf(layout);
  if (!m2m || !shape.IsArray() || static_cast<int64_t>(m2m->size()) != shape.rank()) {
    return OpError(op, absl::StrCat("layout ", mlir::PrintAttribute(layout), " does not fit ",
                                    shape.ToString(false)));
  }
  std::vector<bool> seen(m2m->size(), false);
  for (int64_t d : *m2m) {
    if (d < 0 || d >= shape.rank() || seen[d]) {
      return OpError(op, absl::StrCat("layout ", mlir::PrintAttribute(layout),
                                      " is not a permutation of the dimensions"));
    }
    seen[d] = true;
  }
  shape.mutable_layout().minor_to_major = *m2m;
  return absl::OkStatus();
}

// `{key = value : type, ...}` as MLIR (and XLA's HLO printer, for typed-FFI
// backend configs) prints a dictionary attribute.
std::string DictionaryText(const Attribute& dict) { return mlir::PrintAttribute(dict); }

// What XLA's importer makes of a custom call's attributes: the typed-FFI
// backend config (a dictionary, or JAX's `mhlo.backend_config` next to an
// empty string), API version, operand and result layouts, output-to-operand
// aliasing and called computations.
absl::Status CustomCallAttributes(const Operation& op, InstructionAttributes& a, Shape& shape,
                                  const std::vector<HloInstruction*>& operands) {
  static const char* kVersions[] = {
      "API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
      "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"};
  int64_t version = 1;  // StableHLO's default: API_VERSION_ORIGINAL
  if (const Attribute* v = op.attr("api_version")) {
    if (v->kind != AK::kInteger || v->int_value < 0 || v->int_value > 4) {
      return OpError(op, absl::StrCat("bad api_version ", mlir::PrintAttribute(*v)));
    }
    version = v->int_value;
  }
  const Attribute* config = op.attr("backend_config");
  if (config != nullptr && config->kind == AK::kString) {
    a.backend_config = config->text;
  } else if (config != nullptr && config->kind == AK::kDict) {
    a.backend_config = DictionaryText(*config);
  } else if (config != nullptr) {
    return OpError(op, "backend_config must be a string or a dictionary");
  }
  if (const Attribute* mhlo_config = op.attr("mhlo.backend_config")) {
    // JAX's typed-FFI calls before StableHLO had dictionary configs.
    if (mhlo_config->kind != AK::kDict) {
      return OpError(op, "mhlo.backend_config must be a dictionary");
    }
    if (!a.backend_config.empty() || version != 1) {
      return OpError(op,
                     "mhlo.backend_config needs an empty backend_config and the original API "
                     "version");
    }
    a.backend_config = DictionaryText(*mhlo_config);
    version = 4;
  }
  if (version != 1) a.api_version = kVersions[version];
  if (const Attribute* layouts = op.attr("operand_layouts")) {
    if (layouts->kind != AK::kArray || layouts->elements.size() != operands.size()) {
      return OpError(op, "operand_layouts needs one layout per operand");
    }
    std::vector<Shape> constraints;
    for (size_t i = 0; i < operands.size(); ++i) {
      Shape s = operands[i]->shape();
      RETURN_IF_ERROR(SetLayout(op, layouts->elements[i], s));
      constraints.push_back(std::move(s));
    }
    a.operand_layout_constraints = std::move(constraints);
  }
  if (const Attribute* layouts = op.attr("result_layouts")) {
    const size_t results = shape.IsTuple() ? shape.tuple_shapes_size() : 1;
    if (layouts->kind != AK::kArray || layouts->elements.size() != results) {
      return OpError(op, "result_layouts needs one layout per result");
    }
    for (size_t i = 0; i < results; ++i) {
      Shape& s = shape.IsTuple() ? shape.mutable_tuple_shapes()[i] : shape;
      RETURN_IF_ERROR(SetLayout(op, layouts->elements[i], s));
    }
  }
  if (const Attribute* aliases = op.attr("output_operand_aliases")) {
    if (aliases->kind != AK::kArray) return OpError(op, "output_operand_aliases must be a list");
    for (const Attribute& alias : aliases->elements) {
      const Attribute* operand = alias.Field("operand_index");
      if (alias.kind != AK::kStruct || operand == nullptr || operand->kind != AK::kInteger ||
          operand->int_value < 0 || operand->int_value >= static_cast<int64_t>(operands.size())) {
        return OpError(op, absl::StrCat("bad output_operand_alias ", mlir::PrintAttribute(alias)));
      }
      OutputOperandAlias out;
      out.operand = operand->int_value;
      ASSIGN_OR_RETURN(out.output_index, FieldInts(op, alias, "output_tuple_indices"));
      ASSIGN_OR_RETURN(out.operand_index, FieldInts(op, alias, "operand_tuple_indices"));
      a.output_to_operand_aliasing.push_back(std::move(out));
    }
  }
  return absl::OkStatus();
}

// The instruction an op became: its only result, or the tuple its results
// are elements of; null when the op made no new instruction of its own.
HloInstruction* MainInstruction(const HloComputation& comp, int64_t first_new,
                                const std::vector<HloInstruction*>& results) {
  auto is_new = [&](const HloInstruction* h) {
    const auto& all = comp.instructions();
    for (int64_t i = first_new; i < static_cast<int64_t>(all.size()); ++i) {
      if (all[i].get() == h) return true;
    }
    return false;
  };
  HloInstruction* main = nullptr;
  if (results.size() == 1) {
    main = results[0];
  } else if (!results.empty()) {
    for (HloInstruction* r : results) {
      HloInstruction* tuple = r->opcode() == HloOpcode::kGetTupleElement ? r->operand(0) : nullptr;
      if (tuple == nullptr || (main != nullptr && tuple != main)) return nullptr;
      main = tuple;
    }
  }
  return main != nullptr && is_new(main) ? main : nullptr;
}

// An sdy attribute's text, as the readers keep it (#sdy..., or inside a string).
std::optional<std::string> SdyText(const Attribute& a) {
  if (a.kind == AK::kOpaque || a.kind == AK::kString) return a.text;
  return std::nullopt;
}

}  // namespace

absl::StatusOr<Lowering::Results> Lowering::LowerCustomCall(const Operation& op, Scope& s) {
  ASSIGN_OR_RETURN(Results operands, Operands(op, s));
  ASSIGN_OR_RETURN(Shape shape, ResultShape(op));
  auto instr = New(s, HloOpcode::kCustomCall, operands);
  InstructionAttributes& a = instr->attrs();
  a.custom_call_target = EnumValue(op, "call_target_name");
  a.custom_call_has_side_effect = Flag(op, "has_side_effect");
  if (absl::Status st = CustomCallAttributes(op, a, shape, operands); !st.ok()) {
    instr->DetachFromOperands();
    return st;
  }
  if (const Attribute* called = op.attr("called_computations")) {
    if (called->kind != AK::kArray) {
      instr->DetachFromOperands();
      return OpError(op, "called_computations must be a list of symbols");
    }
    for (const Attribute& f : called->elements) {
      absl::StatusOr<HloComputation*> fn =
          f.kind == AK::kSymbol ? LowerFunction(f.text)
                                : absl::InvalidArgumentError("called_computations must be symbols");
      if (!fn.ok()) {
        instr->DetachFromOperands();
        return AtOp(op, fn.status());
      }
      instr->AppendCalledComputation(*fn);
    }
  }
  instr->mutable_shape() = shape;
  SetSource(*instr, op.loc);
  ASSIGN_OR_RETURN(HloInstruction * h, s.e.Add(std::move(instr), /*infer=*/false));
  if (op.results.size() != 1) return Unpack(s, h, static_cast<int64_t>(op.results.size()));
  return Results{h};
}

absl::Status Lowering::ApplyOpAttributes(const Operation& op, Scope& s, int64_t first_new,
                                         const Results& results) {
  const Attribute* frontend = op.attr("mhlo.frontend_attributes");
  const Attribute* rule = op.attr("sdy.sharding_rule");
  const Attribute* sharding = op.attr("sdy.sharding");
  if (frontend == nullptr && rule == nullptr && sharding == nullptr) return absl::OkStatus();
  HloInstruction* main = MainInstruction(*s.e.computation(), first_new, results);
  if (main == nullptr) return absl::OkStatus();  // e.g. an op that forwards its operand
  InstructionAttributes& a = main->attrs();
  if (frontend != nullptr) {
    if (frontend->kind != AK::kDict)
      return OpError(op, "mhlo.frontend_attributes must be a dictionary");
    for (const mlir::NamedAttribute& f : frontend->fields) {
      a.frontend_attributes[f.first] =
          f.second.kind == AK::kString ? f.second.text : mlir::PrintAttribute(f.second);
    }
  }
  if (rule != nullptr) {
    std::optional<std::string> text = SdyText(*rule);
    absl::StatusOr<sdy::OpShardingRule> parsed =
        text ? sdy::ParseAttrTextAs<sdy::OpShardingRule>(*text, "#sdy.op_sharding_rule")
             : absl::InvalidArgumentError("must be a #sdy.op_sharding_rule");
    if (!parsed.ok())
      return OpError(op, absl::StrCat("sdy.sharding_rule: ", parsed.status().message()));
    a.frontend_attributes["xla.sdy.sharding_rule"] = sdy::Print(*parsed);
  }
  // The value shardings: sdy.sharding, or xla.sdy.sharding where an earlier
  // round trip through HLO left them in the frontend attributes.
  std::optional<std::string> per_value_text;
  if (sharding != nullptr) {
    per_value_text = SdyText(*sharding);
    if (!per_value_text) return OpError(op, "sdy.sharding must be a #sdy.sharding_per_value");
  } else if (auto it = a.frontend_attributes.find("xla.sdy.sharding");
             it != a.frontend_attributes.end()) {
    per_value_text = it->second;
  }
  if (per_value_text) {
    absl::StatusOr<sdy::ShardingPerValue> per_value =
        sdy::ParseAttrTextAs<sdy::ShardingPerValue>(*per_value_text, "#sdy.sharding_per_value");
    if (!per_value.ok())
      return OpError(op, absl::StrCat("sharding: ", per_value.status().message()));
    ASSIGN_OR_RETURN(a.sharding, ShardingOf(op, *per_value, main->shape()));
    a.frontend_attributes["xla.sdy.sharding"] = sdy::Print(*per_value);
  }
  // A manual computation already in XLA's round-trip form: the boundary
  // custom calls and the body call get the shardings lower_sdy.cc gives them.
  auto text_of = [&](const char* key) -> const std::string* {
    auto it = a.frontend_attributes.find(key);
    return it == a.frontend_attributes.end() ? nullptr : &it->second;
  };
  const std::string* manual_text = text_of("xla.sdy.manual_axes");
  const bool custom_call = main->opcode() == HloOpcode::kCustomCall;
  const bool global_to_local = custom_call && a.custom_call_target == "xla.sdy.GlobalToLocalShape";
  const bool local_to_global = custom_call && a.custom_call_target == "xla.sdy.LocalToGlobalShape";
  const bool body_call = main->opcode() == HloOpcode::kCall;
  if (manual_text == nullptr || a.sharding || !(global_to_local || local_to_global || body_call)) {
    return absl::OkStatus();
  }
  const std::string* values =
      text_of(global_to_local ? "xla.sdy.in_shardings" : "xla.sdy.out_shardings");
  if (values == nullptr) return absl::OkStatus();
  absl::StatusOr<sdy::ManualAxes> manual =
      sdy::ParseAttrTextAs<sdy::ManualAxes>(*manual_text, "#sdy<manual_axes{...}>");
  if (!manual.ok()) {
    return OpError(op, absl::StrCat("xla.sdy.manual_axes: ", manual.status().message()));
  }
  absl::StatusOr<sdy::ShardingPerValue> per_value =
      sdy::ParseAttrTextAs<sdy::ShardingPerValue>(*values, "#sdy.sharding_per_value");
  if (!per_value.ok()) return OpError(op, per_value.status().message());
  ASSIGN_OR_RETURN(a.sharding,
                   ShardingOf(op, *per_value, main->shape(),
                              local_to_global ? std::vector<std::string>() : manual->axes));
  return absl::OkStatus();
}

}  // namespace xlite::stablehlo::lowering
