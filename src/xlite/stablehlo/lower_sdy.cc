// Shardy (sdy dialect) in the StableHLO lowering, as XLA's importer keeps it
// (its sdy round-trip export, shardings as named HLO shardings):
//
//   sdy.mesh ops                  the module's xla.sdy.meshes frontend attribute
//   sdy.sharding on arguments     the parameter's sharding (+ xla.sdy.sharding)
//   sdy.sharding on results       an xla.sdy.FuncResultSharding custom call
//   sdy.sharding on an op         the instruction's sharding (+ xla.sdy.sharding)
//   sharding_constraint, reshard  custom-call "Sharding" with the sharding
//   all_gather, all_slice, all_to_all, collective_permute, reduce_scatter
//                                 copy with the out sharding (they reshard, the
//                                 values stay those of the global tensor)
//   all_reduce, data_flow_edge    their operand
//   propagation_barrier           custom-call "xla.sdy.PropagationBarrier"
//   sharding_group                custom-call "xla.sdy.ShardingGroup"
//   constant                      constant
//   named_computation             call of its body
//   manual_computation            custom-call "xla.sdy.GlobalToLocalShape" ->
//                                 call of the body ("xla.sdy.manual_computation_body")
//                                 -> custom-call "xla.sdy.LocalToGlobalShape",
//                                 with xla.sdy.in_shardings / out_shardings /
//                                 manual_axes frontend attributes
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "xlite/stablehlo/lower_internal.h"
#include "xlite/stablehlo/printer.h"
#include "xlite/support/status.h"

namespace xlite::stablehlo::lowering {
namespace {

// An sdy attribute of the op, of kind T.
template <typename T>
absl::StatusOr<T> SdyAttr(const Operation& op, absl::string_view key, absl::string_view what) {
  const Attribute* a = op.attr(key);
  if (a == nullptr) return OpError(op, absl::StrCat("missing attribute '", key, "'"));
  if (a->kind != AK::kOpaque && a->kind != AK::kString) {
    return OpError(op, absl::StrCat("'", key, "' must be a ", what));
  }
  absl::StatusOr<T> v = sdy::ParseAttrTextAs<T>(a->text, what);
  if (!v.ok()) return OpError(op, absl::StrCat(key, ": ", v.status().message()));
  return v;
}

template <typename T>
absl::StatusOr<std::optional<T>> OptionalSdyAttr(const Operation& op, absl::string_view key,
                                                 absl::string_view what) {
  if (op.attr(key) == nullptr) return std::optional<T>();
  ASSIGN_OR_RETURN(T v, SdyAttr<T>(op, key, what));
  return std::optional<T>(std::move(v));
}

sdy::ShardingPerValue PerValue(const sdy::TensorSharding& s) { return {{s}}; }

std::vector<int64_t> DimsOf(const Shape& s) {
  return s.IsArray() ? s.dimensions() : std::vector<int64_t>();
}

}  // namespace

absl::StatusOr<HloSharding> Lowering::ShardingOf(const Operation& op,
                                                 const sdy::ShardingPerValue& per_value,
                                                 const Shape& shape,
                                                 const std::vector<std::string>& manual_axes) {
  auto one = [&](const sdy::TensorSharding& t,
                 const Shape& element) -> absl::StatusOr<HloSharding> {
    const std::vector<int64_t> dims = DimsOf(element);
    RETURN_IF_ERROR(AtOp(op, sdy::Verify(t, meshes_, &dims)));
    absl::StatusOr<HloSharding> h = sdy::ToHloSharding(t, meshes_, manual_axes);
    if (!h.ok()) return AtOp(op, h.status());
    return h;
  };
  const std::vector<sdy::TensorSharding>& all = per_value.shardings;
  if (shape.IsTuple()) {
    if (all.size() != static_cast<size_t>(shape.tuple_shapes_size())) {
      return OpError(
          op, absl::StrCat(all.size(), " shardings for ", shape.tuple_shapes_size(), " values"));
    }
    HloSharding tuple;
    tuple.kind = HloSharding::Kind::kTuple;
    for (size_t i = 0; i < all.size(); ++i) {
      ASSIGN_OR_RETURN(HloSharding e, one(all[i], shape.tuple_shapes(i)));
      tuple.tuple_elements.push_back(std::move(e));
    }
    return tuple;
  }
  if (all.size() != 1) return OpError(op, absl::StrCat(all.size(), " shardings for one value"));
  return one(all[0], shape);
}

absl::Status Lowering::CollectMeshes(const Operation& top) {
  FrontendAttributes& module_attrs = module_->config().frontend_attributes;
  if (const Attribute* fa = top.attr("mhlo.frontend_attributes")) {
    if (fa->kind != AK::kDict) return OpError(top, "mhlo.frontend_attributes must be a dictionary");
    for (const mlir::NamedAttribute& f : fa->fields) {
      module_attrs[f.first] =
          f.second.kind == AK::kString ? f.second.text : mlir::PrintAttribute(f.second);
    }
    if (auto it = module_attrs.find("xla.sdy.meshes"); it != module_attrs.end()) {
      absl::StatusOr<sdy::MeshTable> meshes = sdy::ParseMeshTable(it->second);
      if (!meshes.ok()) {
        return OpError(top, absl::StrCat("xla.sdy.meshes: ", meshes.status().message()));
      }
      meshes_ = *std::move(meshes);
    }
  }
  bool mesh_ops = false;
  for (const auto& op : top.regions[0]->blocks[0]->operations) {
    if (op->name != "sdy.mesh") continue;
    const Attribute* name = op->attr("sym_name");
    if (name == nullptr || (name->kind != AK::kString && name->kind != AK::kSymbol)) {
      return OpError(*op, "missing sym_name");
    }
    ASSIGN_OR_RETURN(sdy::Mesh mesh, SdyAttr<sdy::Mesh>(*op, "mesh", "#sdy.mesh"));
    if (meshes_.contains(name->text)) {
      return OpError(*op, absl::StrCat("mesh @", name->text, " is defined twice"));
    }
    meshes_[name->text] = std::move(mesh);
    mesh_ops = true;
  }
  if (mesh_ops) module_attrs["xla.sdy.meshes"] = sdy::PrintMeshTable(meshes_);
  return absl::OkStatus();
}

absl::Status Lowering::ApplyArgumentAttributes(const Operation& function,
                                               HloComputation& computation) {
  const Attribute* arg_attrs = function.attr("arg_attrs");
  if (arg_attrs == nullptr) return absl::OkStatus();
  if (arg_attrs->kind != AK::kArray ||
      arg_attrs->elements.size() != static_cast<size_t>(computation.num_parameters())) {
    return OpError(function, "arg_attrs needs one dictionary per argument");
  }
  for (size_t i = 0; i < arg_attrs->elements.size(); ++i) {
    const Attribute& dict = arg_attrs->elements[i];
    InstructionAttributes& a = computation.parameter_instruction(static_cast<int64_t>(i))->attrs();
    if (const Attribute* fa = dict.Field("mhlo.frontend_attributes"); fa && fa->kind == AK::kDict) {
      for (const mlir::NamedAttribute& f : fa->fields) {
        a.frontend_attributes[f.first] =
            f.second.kind == AK::kString ? f.second.text : mlir::PrintAttribute(f.second);
      }
    }
    std::optional<std::string> text;
    if (const Attribute* s = dict.Field("sdy.sharding")) {
      if (s->kind != AK::kOpaque) {
        return OpError(function,
                       absl::StrCat("argument ", i, ": sdy.sharding must be a #sdy.sharding"));
      }
      text = s->text;
    } else if (auto it = a.frontend_attributes.find("xla.sdy.sharding");
               it != a.frontend_attributes.end()) {
      text = it->second;
    }
    if (!text) continue;
    absl::StatusOr<sdy::TensorSharding> sharding =
        sdy::ParseAttrTextAs<sdy::TensorSharding>(*text, "#sdy.sharding");
    if (!sharding.ok()) {
      return OpError(function, absl::StrCat("argument ", i, ": ", sharding.status().message()));
    }
    const Shape& shape = computation.parameter_instruction(static_cast<int64_t>(i))->shape();
    absl::StatusOr<HloSharding> h = ShardingOf(function, PerValue(*sharding), shape);
    if (!h.ok()) {
      return absl::Status(h.status().code(),
                          absl::StrCat("argument ", i, ": ", h.status().message()));
    }
    a.sharding = *std::move(h);
    a.frontend_attributes["xla.sdy.sharding"] = sdy::Print(*sharding);
  }
  return absl::OkStatus();
}

absl::Status Lowering::ApplyResultShardings(const Operation& function, Scope& s,
                                            Results& returned) {
  const Attribute* res_attrs = function.attr("res_attrs");
  if (res_attrs == nullptr) return absl::OkStatus();
  if (res_attrs->kind != AK::kArray || res_attrs->elements.size() != returned.size()) {
    return OpError(function, "res_attrs needs one dictionary per result");
  }
  for (size_t i = 0; i < returned.size(); ++i) {
    const Attribute* attr = res_attrs->elements[i].Field("sdy.sharding");
    if (attr == nullptr) continue;
    if (attr->kind != AK::kOpaque) {
      return OpError(function,
                     absl::StrCat("result ", i, ": sdy.sharding must be a #sdy.sharding"));
    }
    absl::StatusOr<sdy::TensorSharding> sharding =
        sdy::ParseAttrTextAs<sdy::TensorSharding>(attr->text, "#sdy.sharding");
    if (!sharding.ok()) {
      return OpError(function, absl::StrCat("result ", i, ": ", sharding.status().message()));
    }
    const sdy::ShardingPerValue per_value = PerValue(*sharding);
    absl::StatusOr<HloSharding> h = ShardingOf(function, per_value, returned[i]->shape());
    if (!h.ok()) {
      return absl::Status(h.status().code(),
                          absl::StrCat("result ", i, ": ", h.status().message()));
    }
    auto call = New(s, HloOpcode::kCustomCall, {returned[i]}, returned[i]->shape());
    InstructionAttributes& a = call->attrs();
    a.custom_call_target = "xla.sdy.FuncResultSharding";
    a.custom_call_has_side_effect = true;
    a.sharding = *std::move(h);
    a.frontend_attributes["xla.sdy.sharding"] = sdy::Print(per_value);
    SetSource(*call, function.loc);
    ASSIGN_OR_RETURN(returned[i], s.e.Add(std::move(call), /*infer=*/false));
  }
  return absl::OkStatus();
}

absl::StatusOr<Lowering::Results> Lowering::LowerSdy(const Operation& op, Scope& s) {
  const std::string kind = op.name.substr(4);
  if (kind == "manual_computation") return LowerManualComputation(op, s);
  ASSIGN_OR_RETURN(Results operands, Operands(op, s));
  // Custom call or copy of the one operand with the op's sharding.
  auto annotate = [&](HloOpcode opcode, const std::string& target,
                      const char* key) -> absl::StatusOr<Results> {
    if (operands.size() != 1 || op.results.size() != 1) return OpError(op, "takes one tensor");
    ASSIGN_OR_RETURN(sdy::TensorSharding sharding,
                     SdyAttr<sdy::TensorSharding>(op, key, "#sdy.sharding"));
    ASSIGN_OR_RETURN(Shape shape, ResultShape(op));
    if (!shape.EqualIgnoringLayout(operands[0]->shape())) {
      return OpError(op, "the result type must be the operand's type");
    }
    ASSIGN_OR_RETURN(HloSharding h, ShardingOf(op, PerValue(sharding), shape));
    auto instr = New(s, opcode, operands, shape);
    if (opcode == HloOpcode::kCustomCall) instr->attrs().custom_call_target = target;
    instr->attrs().sharding = std::move(h);
    instr->attrs().frontend_attributes["xla.sdy.sharding"] = sdy::Print(PerValue(sharding));
    SetSource(*instr, op.loc);
    ASSIGN_OR_RETURN(HloInstruction * out, s.e.Add(std::move(instr), /*infer=*/false));
    return Results{out};
  };
  if (kind == "sharding_constraint" || kind == "reshard") {
    return annotate(HloOpcode::kCustomCall, "Sharding", "sharding");
  }
  if (kind == "all_gather" || kind == "all_slice" || kind == "all_to_all" ||
      kind == "collective_permute" || kind == "reduce_scatter") {
    return annotate(HloOpcode::kCopy, "", "out_sharding");
  }
  if (kind == "all_reduce" || kind == "data_flow_edge") {
    // The value of the global tensor does not change (all_reduce only marks
    // the sum of unreduced partial values as done).
    if (operands.size() != 1 || op.results.size() != 1) return OpError(op, "takes one tensor");
    return operands;
  }
  if (kind == "propagation_barrier") {
    if (operands.size() != 1 || op.results.size() != 1) return OpError(op, "takes one tensor");
    auto instr = New(s, HloOpcode::kCustomCall, operands, operands[0]->shape());
    instr->attrs().custom_call_target = "xla.sdy.PropagationBarrier";
    instr->attrs().frontend_attributes["xla.sdy.allowed_direction"] =
        EnumValue(op, "allowed_direction");
    SetSource(*instr, op.loc);
    ASSIGN_OR_RETURN(HloInstruction * out, s.e.Add(std::move(instr), /*infer=*/false));
    return Results{out};
  }
  if (kind == "sharding_group") {
    if (operands.size() != 1 || !op.results.empty()) return OpError(op, "takes one tensor");
    ASSIGN_OR_RETURN(int64_t group, Int(op, "group_id"));
    auto instr = New(s, HloOpcode::kCustomCall, operands, Shape::Tuple({}));
    instr->attrs().custom_call_target = "xla.sdy.ShardingGroup";
    instr->attrs().custom_call_has_side_effect = true;
    instr->attrs().frontend_attributes["xla.sdy.sharding_group_id"] = absl::StrCat(group);
    SetSource(*instr, op.loc);
    RETURN_IF_ERROR(s.e.Add(std::move(instr), /*infer=*/false).status());
    return Results{};
  }
  if (kind == "constant") {
    const Attribute* value = op.attr("value");
    if (value == nullptr || value->kind != AK::kDense) return OpError(op, "missing dense value");
    ASSIGN_OR_RETURN(HloInstruction * h, s.e.Constant(*value->literal));
    return Results{h};
  }
  if (kind == "named_computation") {
    const Attribute* name = op.attr("name");
    if (name == nullptr || name->kind != AK::kString || op.regions.size() != 1) {
      return OpError(op, "expects a name and a body");
    }
    if (!FreeValues(*op.regions[0]).empty()) {
      return OpError(op, "the body uses values defined outside it");
    }
    absl::StatusOr<HloComputation*> body = LowerRegion(*op.regions[0], name->text, Params::kFlat,
                                                       {}, /*tuple_root=*/op.results.size() != 1);
    if (!body.ok()) return AtOp(op, body.status());
    ASSIGN_OR_RETURN(Shape shape, ResultShape(op));
    ASSIGN_OR_RETURN(
        std::optional<sdy::ShardingPerValue> in,
        OptionalSdyAttr<sdy::ShardingPerValue>(op, "in_shardings", "#sdy.sharding_per_value"));
    ASSIGN_OR_RETURN(
        std::optional<sdy::ShardingPerValue> out,
        OptionalSdyAttr<sdy::ShardingPerValue>(op, "out_shardings", "#sdy.sharding_per_value"));
    std::optional<HloSharding> sharding;
    if (out) {
      ASSIGN_OR_RETURN(sharding, ShardingOf(op, *out, shape));
    }
    auto call = New(s, HloOpcode::kCall, operands);
    call->AppendCalledComputation(*body);
    if (in) call->attrs().frontend_attributes["xla.sdy.in_shardings"] = sdy::Print(*in);
    if (out) call->attrs().frontend_attributes["xla.sdy.out_shardings"] = sdy::Print(*out);
    call->attrs().sharding = std::move(sharding);
    return FinishResults(op, s, std::move(call), shape);
  }
  return OpUnsupported(op, absl::StrCat("operation '", op.name, "'"));
}

absl::StatusOr<Lowering::Results> Lowering::LowerManualComputation(const Operation& op, Scope& s) {
  ASSIGN_OR_RETURN(sdy::ShardingPerValue in,
                   SdyAttr<sdy::ShardingPerValue>(op, "in_shardings", "#sdy.sharding_per_value"));
  ASSIGN_OR_RETURN(sdy::ShardingPerValue out,
                   SdyAttr<sdy::ShardingPerValue>(op, "out_shardings", "#sdy.sharding_per_value"));
  ASSIGN_OR_RETURN(sdy::ManualAxes manual,
                   SdyAttr<sdy::ManualAxes>(op, "manual_axes", "#sdy<manual_axes{...}>"));
  if (in.shardings.size() != op.operands.size() || out.shardings.size() != op.results.size()) {
    return OpError(op, "needs one in sharding per operand and one out sharding per result");
  }
  if (op.regions.size() != 1 || op.regions[0]->blocks.size() != 1) {
    return OpError(op, "expects a body of one block");
  }
  const Block& body = *op.regions[0]->blocks[0];
  if (body.arguments.size() != op.operands.size()) {
    return OpError(op, "the body takes one argument per operand");
  }
  if (!FreeValues(*op.regions[0]).empty()) {
    return OpError(op, "the body uses values defined outside it");
  }
  const std::string manual_text = sdy::Print(manual);
  // Every operand's and result's local type: the global one split over the
  // manual axes of its sharding.
  auto check_local = [&](const sdy::TensorSharding& sharding, const mlir::Type& global,
                         const mlir::Type& local, const std::string& what) -> absl::Status {
    ASSIGN_OR_RETURN(Shape g, ShapeOf(global));
    ASSIGN_OR_RETURN(Shape l, ShapeOf(local));
    absl::StatusOr<sdy::Mesh> mesh = sdy::MeshOf(sharding, meshes_);
    if (!mesh.ok()) return AtOp(op, mesh.status());
    for (const std::string& axis : manual.axes) {
      if (!mesh->AxisIndex(axis)) {
        return OpError(op, absl::StrCat("manual axis \"", axis, "\" is not in the mesh"));
      }
    }
    absl::StatusOr<std::vector<int64_t>> dims =
        sdy::LocalDimensions(sharding, *mesh, manual.axes, DimsOf(g));
    if (!dims.ok()) return AtOp(op, dims.status());
    if (!l.IsArray() || *dims != l.dimensions() || l.element_type() != g.element_type()) {
      return OpError(op, absl::StrCat(what, " has type ", l.ToString(false),
                                      " in the body; its sharding makes it ",
                                      Shape::Array(g.element_type(), *dims).ToString(false)));
    }
    return absl::OkStatus();
  };
  for (size_t i = 0; i < op.operands.size(); ++i) {
    RETURN_IF_ERROR(check_local(in.shardings[i], op.operands[i]->type, body.arguments[i]->type,
                                absl::StrCat("operand ", i)));
  }
  const Operation* terminator = body.operations.empty() ? nullptr : body.operations.back().get();
  if (terminator == nullptr || terminator->name != "sdy.return" ||
      terminator->operands.size() != op.results.size()) {
    return OpError(op, "the body must end in sdy.return of one value per result");
  }
  for (size_t i = 0; i < op.results.size(); ++i) {
    RETURN_IF_ERROR(check_local(out.shardings[i], op.results[i]->type,
                                terminator->operands[i]->type, absl::StrCat("result ", i)));
  }

  ASSIGN_OR_RETURN(Results operands, Operands(op, s));
  // Global -> local.
  Results locals;
  if (!operands.empty()) {
    std::vector<Shape> shapes;
    for (const auto& arg : body.arguments) {
      ASSIGN_OR_RETURN(Shape shape, ShapeOf(arg->type));
      shapes.push_back(std::move(shape));
    }
    const Shape shape = shapes.size() == 1 ? shapes[0] : Shape::Tuple(shapes);
    ASSIGN_OR_RETURN(HloSharding h, ShardingOf(op, in, shape, manual.axes));
    auto g2l = New(s, HloOpcode::kCustomCall, operands, shape);
    InstructionAttributes& a = g2l->attrs();
    a.custom_call_target = "xla.sdy.GlobalToLocalShape";
    a.custom_call_has_side_effect = true;
    a.frontend_attributes["xla.sdy.in_shardings"] = sdy::Print(in);
    a.frontend_attributes["xla.sdy.manual_axes"] = manual_text;
    a.sharding = std::move(h);
    SetSource(*g2l, op.loc);
    ASSIGN_OR_RETURN(HloInstruction * h2l, s.e.Add(std::move(g2l), /*infer=*/false));
    if (shapes.size() == 1) {
      locals = {h2l};
    } else {
      ASSIGN_OR_RETURN(locals, Unpack(s, h2l, static_cast<int64_t>(shapes.size())));
    }
  }
  // The body, once per device of the manual axes.
  absl::StatusOr<HloComputation*> fn =
      LowerRegion(*op.regions[0], "xla.sdy.manual_computation_body", Params::kFlat, {},
                  /*tuple_root=*/op.results.size() != 1);
  if (!fn.ok()) return AtOp(op, fn.status());
  const Shape local_shape = (*fn)->root_instruction()->shape();
  std::optional<HloSharding> local_sharding;
  if (!op.results.empty()) {
    ASSIGN_OR_RETURN(local_sharding, ShardingOf(op, out, local_shape, manual.axes));
  }
  auto call = New(s, HloOpcode::kCall, locals, local_shape);
  call->AppendCalledComputation(*fn);
  InstructionAttributes& ca = call->attrs();
  ca.frontend_attributes["xla.sdy.in_shardings"] = sdy::Print(in);
  ca.frontend_attributes["xla.sdy.manual_axes"] = manual_text;
  ca.frontend_attributes["xla.sdy.out_shardings"] = sdy::Print(out);
  ca.sharding = std::move(local_sharding);
  SetSource(*call, op.loc);
  ASSIGN_OR_RETURN(HloInstruction * called, s.e.Add(std::move(call), /*infer=*/false));
  if (op.results.empty()) return Results{};
  Results local_results = {called};
  if (op.results.size() > 1) {
    ASSIGN_OR_RETURN(local_results, Unpack(s, called, static_cast<int64_t>(op.results.size())));
  }
  // Local -> global.
  ASSIGN_OR_RETURN(Shape global, ResultShape(op));
  ASSIGN_OR_RETURN(HloSharding global_sharding, ShardingOf(op, out, global));
  auto l2g = New(s, HloOpcode::kCustomCall, local_results, global);
  InstructionAttributes& la = l2g->attrs();
  la.custom_call_target = "xla.sdy.LocalToGlobalShape";
  la.custom_call_has_side_effect = true;
  la.frontend_attributes["xla.sdy.out_shardings"] = sdy::Print(out);
  la.frontend_attributes["xla.sdy.manual_axes"] = manual_text;
  la.sharding = std::move(global_sharding);
  SetSource(*l2g, op.loc);
  ASSIGN_OR_RETURN(HloInstruction * globals, s.e.Add(std::move(l2g), /*infer=*/false));
  if (op.results.size() == 1) return Results{globals};
  return Unpack(s, globals, static_cast<int64_t>(op.results.size()));
}

}  // namespace xlite::stablehlo::lowering
