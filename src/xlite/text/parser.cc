#include "xlite/text/parser.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "xlite/support/status.h"
#include "xlite/text/attribute_order.h"
#include "xlite/text/parser_internal.h"
#include "xlite/text/shape_inference_lite.h"

namespace xlite {
namespace text_internal {

// ---------------------------------------------------------------------------
// Module.

absl::StatusOr<std::unique_ptr<HloModule>> HloParser::ParseModule() {
  c_.SkipSpace();
  if (c_.TryConsumeWord("HloModule")) {
    ASSIGN_OR_RETURN(std::string name, c_.ParseName("module name"));
    // Old dumps end the name with ':' ("HloModule m:"); XLA still accepts it.
    if (name.size() > 1 && name.back() == ':') name.pop_back();
    c_.TryConsume(":");
    module_ = std::make_unique<HloModule>(name);
    RETURN_IF_ERROR(ParseHeader());
  } else {
    module_ = std::make_unique<HloModule>("default");
  }
  RETURN_IF_ERROR(ParseStackFrameSections());
  bool saw_entry = false;
  while (!c_.AtEnd()) {
    RETURN_IF_ERROR(ParseComputation(&saw_entry));
  }
  if (module_->computations().empty()) return c_.Error("module has no computations");
  if (!saw_entry) {
    // As in XLA: without an ENTRY marker the last computation is the entry.
    module_->set_entry_computation(module_->computations().back().get());
  }
  RETURN_IF_ERROR(ResolvePending());
  // Generic async-update/done without calls= follow their operand to the start.
  for (const auto& comp : module_->computations()) {
    for (const auto& instr : comp->instructions()) {
      if ((instr->opcode() == HloOpcode::kAsyncUpdate ||
           instr->opcode() == HloOpcode::kAsyncDone) &&
          instr->called_computations().empty() && instr->operand_count() > 0) {
        if (HloComputation* w = instr->operand(0)->async_wrapped_computation()) {
          instr->set_called_computations({w});
        }
      }
    }
  }
  ModuleConfig& cfg = module_->config();
  if (!cfg.entry_computation_layout) {
    cfg.entry_computation_layout = module_->ComputeEntryComputationLayout();
  }
  return std::move(module_);
}

absl::Status HloParser::ParseHeader() {
  while (c_.TryConsume(",")) {
    size_t pos = (c_.SkipSpace(), c_.pos());
    ASSIGN_OR_RETURN(std::string key, c_.ParseIdentifier("module attribute"));
    RETURN_IF_ERROR(c_.Expect("="));
    RETURN_IF_ERROR(ParseHeaderAttribute(key, pos));
  }
  return absl::OkStatus();
}

absl::Status HloParser::ParseHeaderAttribute(const std::string& key, size_t key_pos) {
  ModuleConfig& cfg = module_->config();
  if (key == "is_scheduled") {
    ASSIGN_OR_RETURN(cfg.is_scheduled, c_.ParseBool());
  } else if (key == "entry_computation_layout") {
    RETURN_IF_ERROR(c_.Expect("{"));
    RETURN_IF_ERROR(c_.Expect("("));
    ProgramShape ps;
    if (!c_.TryConsume(")")) {
      while (true) {
        ASSIGN_OR_RETURN(Shape s, ParseShape());
        ps.parameters.push_back(std::move(s));
        if (c_.TryConsume(",")) continue;
        RETURN_IF_ERROR(c_.Expect(")"));
        break;
      }
    }
    RETURN_IF_ERROR(c_.Expect("->"));
    ASSIGN_OR_RETURN(ps.result, ParseShape());
    RETURN_IF_ERROR(c_.Expect("}"));
    cfg.entry_computation_layout = std::move(ps);
  } else if (key == "input_output_alias") {
    cfg.input_output_alias_present = true;
    RETURN_IF_ERROR(c_.Expect("{"));
    if (!c_.TryConsume("}")) {
      while (true) {
        InputOutputAlias a;
        ASSIGN_OR_RETURN(a.output_index, ParseShapeIndex());
        RETURN_IF_ERROR(c_.Expect(":"));
        RETURN_IF_ERROR(c_.Expect("("));
        ASSIGN_OR_RETURN(a.parameter_number, c_.ParseInt64());
        RETURN_IF_ERROR(c_.Expect(","));
        ASSIGN_OR_RETURN(a.parameter_index, ParseShapeIndex());
        if (c_.TryConsume(",")) {
          if (c_.TryConsumeWord("may-alias")) {
            a.kind = AliasKind::kMayAlias;
          } else if (c_.TryConsumeWord("must-alias")) {
            a.kind = AliasKind::kMustAlias;
          } else {
            return c_.Error("expected may-alias or must-alias");
          }
        } else {
          a.kind_printed = false;
        }
        RETURN_IF_ERROR(c_.Expect(")"));
        cfg.input_output_alias.push_back(std::move(a));
        if (c_.TryConsume(",")) continue;
        RETURN_IF_ERROR(c_.Expect("}"));
        break;
      }
    }
  } else if (key == "buffer_donor") {
    RETURN_IF_ERROR(c_.Expect("{"));
    if (!c_.TryConsume("}")) {
      while (true) {
        BufferDonor d;
        RETURN_IF_ERROR(c_.Expect("("));
        ASSIGN_OR_RETURN(d.parameter_number, c_.ParseInt64());
        RETURN_IF_ERROR(c_.Expect(","));
        ASSIGN_OR_RETURN(d.parameter_index, ParseShapeIndex());
        RETURN_IF_ERROR(c_.Expect(")"));
        cfg.buffer_donor.push_back(std::move(d));
        if (c_.TryConsume(",")) continue;
        RETURN_IF_ERROR(c_.Expect("}"));
        break;
      }
    }
  } else if (key == "alias_passthrough_params") {
    ASSIGN_OR_RETURN(cfg.alias_passthrough_params, c_.ParseBool());
  } else if (key == "allow_spmd_sharding_propagation_to_parameters" ||
             key == "allow_spmd_sharding_propagation_to_output") {
    std::vector<bool> v;
    if (c_.Peek() == '{') {
      ASSIGN_OR_RETURN(v, ParseBoolList());
    } else {
      ASSIGN_OR_RETURN(bool b, c_.ParseBool());
      v.push_back(b);
    }
    (key == "allow_spmd_sharding_propagation_to_output"
         ? cfg.allow_spmd_sharding_propagation_to_output
         : cfg.allow_spmd_sharding_propagation_to_parameters) = std::move(v);
  } else if (key == "replica_count") {
    ASSIGN_OR_RETURN(cfg.replica_count, c_.ParseInt64());
    if (cfg.replica_count < 1) return c_.ErrorAt(key_pos, "replica_count must be positive");
  } else if (key == "num_partitions") {
    ASSIGN_OR_RETURN(cfg.num_partitions, c_.ParseInt64());
    if (cfg.num_partitions < 1) return c_.ErrorAt(key_pos, "num_partitions must be positive");
  } else if (key == "frontend_attributes") {
    ASSIGN_OR_RETURN(cfg.frontend_attributes, ParseFrontendAttributes());
  } else if (key == "origin_recovery_table") {
    ASSIGN_OR_RETURN(cfg.origin_recovery_table, ParseOriginRecoveryTable());
  } else if (key == "debug_attributes") {
    size_t pos = (c_.SkipSpace(), c_.pos());
    ASSIGN_OR_RETURN(cfg.debug_attributes, c_.ParseBalancedBraces());
    for (size_t at = cfg.debug_attributes.find("log_mode="); at != std::string::npos;
         at = cfg.debug_attributes.find("log_mode=", at + 1)) {
      size_t b = at + 9, e = b;
      while (e < cfg.debug_attributes.size() && IsNameChar(cfg.debug_attributes[e])) ++e;
      std::string mode = cfg.debug_attributes.substr(b, e - b);
      if (mode != "default" && mode != "fusion_debugger") {
        return c_.ErrorAt(pos, absl::StrCat("unknown debug log_mode '", mode, "'"));
      }
    }
  } else {
    return c_.ErrorAt(key_pos, absl::StrCat("unknown module attribute '", key, "'"));
  }
  return absl::OkStatus();
}

absl::Status HloParser::ParseStackFrameSections() {
  StackFrameIndex& idx = module_->stack_frame_index();
  auto parse_id = [&](size_t expected) -> absl::Status {
    size_t pos = (c_.SkipSpace(), c_.pos());
    ASSIGN_OR_RETURN(int64_t id, c_.ParseInt64());
    if (id != static_cast<int64_t>(expected)) {
      return c_.ErrorAt(pos, absl::StrCat("expected id ", expected, ", got ", id));
    }
    return absl::OkStatus();
  };
  auto at_number = [&] {
    char ch = c_.Peek();
    return ch >= '0' && ch <= '9';
  };
  while (true) {
    if (c_.TryConsumeWord("FileNames")) {
      while (at_number()) {
        RETURN_IF_ERROR(parse_id(idx.file_names.size() + 1));
        ASSIGN_OR_RETURN(std::string s, c_.ParseString());
        idx.file_names.push_back(std::move(s));
      }
    } else if (c_.TryConsumeWord("FunctionNames")) {
      while (at_number()) {
        RETURN_IF_ERROR(parse_id(idx.function_names.size() + 1));
        ASSIGN_OR_RETURN(std::string s, c_.ParseString());
        idx.function_names.push_back(std::move(s));
      }
    } else if (c_.TryConsumeWord("FileLocations")) {
      while (at_number()) {
        RETURN_IF_ERROR(parse_id(idx.file_locations.size() + 1));
        StackFrameIndex::FileLocation loc;
        RETURN_IF_ERROR(c_.Expect("{"));
        while (!c_.TryConsume("}")) {
          size_t pos = (c_.SkipSpace(), c_.pos());
          ASSIGN_OR_RETURN(std::string key, c_.ParseIdentifier("file location field"));
          RETURN_IF_ERROR(c_.Expect("="));
          ASSIGN_OR_RETURN(int64_t v, c_.ParseInt64());
          if (key == "file_name_id")
            loc.file_name_id = v;
          else if (key == "function_name_id")
            loc.function_name_id = v;
          else if (key == "line")
            loc.line = v;
          else if (key == "end_line")
            loc.end_line = v;
          else if (key == "column")
            loc.column = v;
          else if (key == "end_column")
            loc.end_column = v;
          else
            return c_.ErrorAt(pos, absl::StrCat("unknown file location field '", key, "'"));
          c_.TryConsume(",");
        }
        idx.file_locations.push_back(loc);
      }
    } else if (c_.TryConsumeWord("StackFrames")) {
      while (at_number()) {
        RETURN_IF_ERROR(parse_id(idx.stack_frames.size() + 1));
        StackFrameIndex::StackFrame f;
        RETURN_IF_ERROR(c_.Expect("{"));
        while (!c_.TryConsume("}")) {
          size_t pos = (c_.SkipSpace(), c_.pos());
          ASSIGN_OR_RETURN(std::string key, c_.ParseIdentifier("stack frame field"));
          RETURN_IF_ERROR(c_.Expect("="));
          ASSIGN_OR_RETURN(int64_t v, c_.ParseInt64());
          if (key == "file_location_id")
            f.file_location_id = v;
          else if (key == "parent_frame_id")
            f.parent_frame_id = v;
          else
            return c_.ErrorAt(pos, absl::StrCat("unknown stack frame field '", key, "'"));
          c_.TryConsume(",");
        }
        idx.stack_frames.push_back(f);
      }
    } else {
      return absl::OkStatus();
    }
  }
}

absl::StatusOr<Shape> HloParser::ParseSignature() {
  // "(a: f32[2], b: s32[]) -> f32[2]": informational; the parameters decide.
  RETURN_IF_ERROR(c_.Expect("("));
  if (!c_.TryConsume(")")) {
    while (true) {
      RETURN_IF_ERROR(c_.ParseName("parameter name").status());
      RETURN_IF_ERROR(c_.Expect(":"));
      RETURN_IF_ERROR(ParseShape().status());
      if (c_.TryConsume(",")) continue;
      RETURN_IF_ERROR(c_.Expect(")"));
      break;
    }
  }
  RETURN_IF_ERROR(c_.Expect("->"));
  return ParseShape();
}

absl::Status HloParser::ParseComputation(bool* saw_entry) {
  size_t start = (c_.SkipSpace(), c_.pos());
  bool is_entry = c_.TryConsumeWord("ENTRY");
  if (is_entry && *saw_entry)
    return c_.ErrorAt(start, "module has more than one ENTRY computation");
  size_t name_pos = (c_.SkipSpace(), c_.pos());
  ASSIGN_OR_RETURN(std::string name, c_.ParseName("computation name"));
  if (!computation_names_.insert(name).second) {
    return c_.ErrorAt(name_pos, absl::StrCat("computation '", name, "' is already defined"));
  }
  std::optional<Shape> signature_result;
  size_t signature_pos = (c_.SkipSpace(), c_.pos());
  if (c_.Peek() == '(') {
    ASSIGN_OR_RETURN(signature_result, ParseSignature());
  }
  RETURN_IF_ERROR(c_.Expect("{"));
  ASSIGN_OR_RETURN(std::unique_ptr<HloComputation> comp, ParseComputationBody(name, name_pos, 0));
  if (signature_result &&
      !signature_result->EqualIgnoringLayout(comp->root_instruction()->shape())) {
    return c_.ErrorAt(signature_pos,
                      absl::StrCat("computation '", name, "' declares result ",
                                   signature_result->ToString(false), " but its root has shape ",
                                   comp->root_instruction()->shape().ToString(false)));
  }
  if (c_.TryConsume(",")) {
    RETURN_IF_ERROR(c_.Expect("execution_thread"));
    RETURN_IF_ERROR(c_.Expect("="));
    ASSIGN_OR_RETURN(std::string thread, c_.ParseString());
    comp->set_execution_thread(std::move(thread));
  }
  // Generated computations (async wrappers, inline to_apply={...}) go before
  // their caller, as XLA orders callees.
  for (auto& g : generated_) module_->AddComputation(std::move(g));
  generated_.clear();
  HloComputation* added = module_->AddComputation(std::move(comp));
  if (is_entry) {
    *saw_entry = true;
    module_->set_entry_computation(added);
  }
  return absl::OkStatus();
}

std::string HloParser::UniqueComputationName(const std::string& base) {
  std::string name = base;
  for (int n = 1; computation_names_.contains(name); ++n) name = absl::StrCat(base, ".", n);
  computation_names_.insert(name);
  return name;
}

absl::StatusOr<std::unique_ptr<HloComputation>> HloParser::ParseComputationBody(
    const std::string& name, size_t name_pos, int depth) {
  if (depth > 16) return c_.ErrorAt(name_pos, "inline computations nested too deeply");
  auto comp = std::make_unique<HloComputation>(name);
  Scope scope;
  scope.computation = comp.get();
  Scope* saved_scope = current_scope_;
  current_scope_ = &scope;
  HloInstruction* root = nullptr;
  HloInstruction* last = nullptr;
  while (!c_.TryConsume("}")) {
    if (c_.AtEnd()) {
      current_scope_ = saved_scope;
      return c_.ErrorAt(name_pos, absl::StrCat("computation '", name, "' is not closed with '}'"));
    }
    bool is_root = false;
    HloInstruction* instr = nullptr;
    size_t instr_pos = (c_.SkipSpace(), c_.pos());
    absl::Status st = ParseInstruction(scope, &is_root, &instr);
    if (!st.ok()) {
      current_scope_ = saved_scope;
      return st;
    }
    if (is_root) {
      if (root) {
        current_scope_ = saved_scope;
        return c_.ErrorAt(instr_pos, "computation has more than one ROOT instruction");
      }
      root = instr;
    }
    last = instr;
  }
  current_scope_ = saved_scope;
  if (!last)
    return c_.ErrorAt(name_pos, absl::StrCat("computation '", name, "' has no instructions"));
  comp->set_root_instruction(root ? root : last);
  for (size_t i = 0; i < comp->parameter_instructions().size(); ++i) {
    if (!comp->parameter_instruction(i)) {
      return c_.ErrorAt(name_pos,
                        absl::StrCat("computation '", name, "' is missing parameter ", i));
    }
  }
  return comp;
}

// ---------------------------------------------------------------------------
// Instructions.

absl::Status HloParser::ParseInstruction(Scope& scope, bool* is_root, HloInstruction** out) {
  *is_root = c_.TryConsumeWord("ROOT");
  size_t name_pos = (c_.SkipSpace(), c_.pos());
  ASSIGN_OR_RETURN(std::string name, c_.ParseName("instruction name"));
  RETURN_IF_ERROR(c_.Expect("="));
  ASSIGN_OR_RETURN(*out, ParseInstructionBody(scope, std::move(name), name_pos, true, 0));
  return absl::OkStatus();
}

absl::StatusOr<HloInstruction*> HloParser::ParseInstructionBody(Scope& scope, std::string name,
                                                                size_t name_pos, bool name_given,
                                                                int depth) {
  if (depth > kMaxDepth) return c_.Error("instructions nested too deeply");
  std::optional<Shape> shape;
  if (StartsShape(c_)) {
    ASSIGN_OR_RETURN(shape, ParseShape());
  }
  size_t opcode_pos = (c_.SkipSpace(), c_.pos());
  ASSIGN_OR_RETURN(std::string opcode_name, c_.ParseIdentifier("opcode"));
  std::optional<HloOpcode> opcode = StringToHloOpcode(opcode_name);
  // op-start / op-update / op-done sugar for generic async ops.
  std::optional<HloOpcode> wrapped;
  absl::string_view async_suffix;
  if (!opcode) {
    for (absl::string_view suffix : {"-start", "-update", "-done"}) {
      if (opcode_name.size() > suffix.size() && absl::EndsWith(opcode_name, suffix)) {
        std::optional<HloOpcode> base =
            StringToHloOpcode(opcode_name.substr(0, opcode_name.size() - suffix.size()));
        if (base) {
          wrapped = base;
          async_suffix = suffix;
          opcode = suffix == "-start"    ? HloOpcode::kAsyncStart
                   : suffix == "-update" ? HloOpcode::kAsyncUpdate
                                         : HloOpcode::kAsyncDone;
        }
        break;
      }
    }
  }
  if (!opcode) return c_.ErrorAt(opcode_pos, absl::StrCat("unknown opcode '", opcode_name, "'"));
  if (!name_given) {
    // Anonymous nested instruction: XLA names these "<opcode>.anon".
    name = absl::StrCat(opcode_name, ".anon");
  }
  if (c_.Peek() != '(') return c_.Error(absl::StrCat("expected '(' after opcode ", opcode_name));

  auto instr = std::make_unique<HloInstruction>(*opcode, name, shape.value_or(Shape()));
  HloInstruction* raw = instr.get();
  std::vector<HloInstruction*> operands;
  if (*opcode == HloOpcode::kConstant) {
    RETURN_IF_ERROR(c_.Expect("("));
    if (!shape) return c_.ErrorAt(opcode_pos, "constant needs an explicit shape");
    ASSIGN_OR_RETURN(Literal lit, ParseLiteral(*shape));
    raw->attrs().literal = std::move(lit);
    RETURN_IF_ERROR(c_.Expect(")"));
  } else if (*opcode == HloOpcode::kParameter) {
    RETURN_IF_ERROR(c_.Expect("("));
    size_t pos = (c_.SkipSpace(), c_.pos());
    ASSIGN_OR_RETURN(int64_t number, c_.ParseInt64());
    if (number < 0 || number > (1 << 24)) return c_.ErrorAt(pos, "parameter number out of range");
    raw->attrs().parameter_number = number;
    RETURN_IF_ERROR(c_.Expect(")"));
    if (!shape) return c_.ErrorAt(opcode_pos, "parameter needs an explicit shape");
    if (scope.computation->num_parameters() > number &&
        scope.computation->parameter_instruction(number)) {
      return c_.ErrorAt(pos, absl::StrCat("duplicate parameter number ", number));
    }
  } else {
    ASSIGN_OR_RETURN(operands, ParseOperands(scope, depth));
  }
  int arity = HloOpcodeArity(*opcode);
  if (!wrapped && arity != kVariadic && static_cast<int>(operands.size()) != arity &&
      *opcode != HloOpcode::kConstant && *opcode != HloOpcode::kParameter) {
    return c_.ErrorAt(opcode_pos, absl::StrCat(opcode_name, " expects ", arity, " operand",
                                               arity == 1 ? "" : "s", ", got ", operands.size()));
  }
  for (HloInstruction* op : operands) raw->AppendOperand(op);

  InstructionAttributes wrapped_attrs;
  // Nested anonymous operands carry no attributes: a ',' after them separates operands.
  RETURN_IF_ERROR(ParseAttributes(raw, wrapped, &wrapped_attrs, opcode_pos, name_given));

  RETURN_IF_ERROR(CheckParsedInstruction(*raw, wrapped, opcode_pos));
  if (!shape) {
    ASSIGN_OR_RETURN(Shape inferred, InferShapeForParser(*raw));
    raw->mutable_shape() = std::move(inferred);
  }
  raw->mutable_shape().SetDefaultLayoutIfMissing();

  if (*opcode == HloOpcode::kParameter) {
    scope.computation->SetParameter(raw->attrs().parameter_number, raw);
  }
  if (wrapped)
    RETURN_IF_ERROR(FinishAsyncSugar(raw, *wrapped, async_suffix, wrapped_attrs, opcode_pos));

  // Names are unique within a computation; anonymous ones get a suffix.
  if (scope.by_name.contains(raw->name())) {
    if (name_given) {
      return c_.ErrorAt(name_pos,
                        absl::StrCat("instruction '", raw->name(), "' is already defined"));
    }
    int& n = name_uses_[raw->name()];
    std::string candidate;
    do {
      candidate = absl::StrCat(name, ".", ++n);
    } while (scope.by_name.contains(candidate));
    raw->set_name(candidate);
  }
  scope.by_name[raw->name()] = raw;
  return scope.computation->AddInstruction(std::move(instr));
}

absl::StatusOr<std::vector<HloInstruction*>> HloParser::ParseOperands(Scope& scope, int depth) {
  std::vector<HloInstruction*> ops;
  RETURN_IF_ERROR(c_.Expect("("));
  if (c_.TryConsume(")")) return ops;
  while (true) {
    ASSIGN_OR_RETURN(HloInstruction * op, ParseOperand(scope, depth));
    ops.push_back(op);
    if (c_.TryConsume(",")) continue;
    RETURN_IF_ERROR(c_.Expect(")"));
    return ops;
  }
}

absl::StatusOr<HloInstruction*> HloParser::ParseOperand(Scope& scope, int depth) {
  std::optional<Shape> declared;
  size_t start = (c_.SkipSpace(), c_.pos());
  if (StartsShape(c_)) {
    ASSIGN_OR_RETURN(declared, ParseShape());
  }
  size_t name_pos = (c_.SkipSpace(), c_.pos());
  // A nested anonymous instruction: "[shape] opcode(...)".
  {
    size_t save = c_.pos();
    auto id = c_.ParseIdentifier();
    if (id.ok() && c_.PeekRaw() == '(' && c_.text()[save] != '%') {
      c_.set_pos(start);
      return ParseInstructionBody(scope, "", start, false, depth + 1);
    }
    c_.set_pos(save);
  }
  ASSIGN_OR_RETURN(std::string name, c_.ParseName("operand name"));
  auto it = scope.by_name.find(name);
  if (it == scope.by_name.end()) {
    return c_.ErrorAt(name_pos, absl::StrCat("instruction '", name, "' is not defined"));
  }
  HloInstruction* op = it->second;
  // Compact get-tuple-element: %p0#1#0.
  if (c_.PeekRaw() == '#') {
    std::vector<int64_t> path;
    while (c_.PeekRaw() == '#') {
      c_.set_pos(c_.pos() + 1);
      ASSIGN_OR_RETURN(uint64_t i, c_.ParseUint64());
      path.push_back(static_cast<int64_t>(i));
    }
    ASSIGN_OR_RETURN(op, ResolveCompactGte(scope, op, std::move(path), name_pos));
  }
  if (declared && !declared->EqualIgnoringLayout(op->shape())) {
    return c_.ErrorAt(
        start, absl::StrCat("operand '", name, "' is declared as ", declared->ToString(false),
                            " but has shape ", op->shape().ToString(false)));
  }
  return op;
}

absl::StatusOr<HloInstruction*> HloParser::ResolveCompactGte(Scope& scope, HloInstruction* base,
                                                             std::vector<int64_t> path,
                                                             size_t pos) {
  HloInstruction* cur = base;
  std::string name = base->name();
  for (int64_t index : path) {
    if (!cur->shape().IsTuple() || index >= cur->shape().tuple_shapes_size()) {
      return c_.ErrorAt(pos, absl::StrCat("compact get-tuple-element index ", index,
                                          " is out of range for ", cur->shape().ToString(false)));
    }
    name = absl::StrCat(name, "_", index);
    // Reuse an existing gte of the same element.
    HloInstruction* found = nullptr;
    for (HloInstruction* u : cur->users()) {
      if (u->opcode() == HloOpcode::kGetTupleElement && u->attrs().tuple_index == index &&
          u->parent() == scope.computation) {
        found = u;
        break;
      }
    }
    if (!found) {
      std::string unique = name;
      int n = 0;
      while (scope.by_name.contains(unique)) unique = absl::StrCat(name, ".", ++n);
      Shape s = cur->shape().tuple_shapes(index);
      auto gte = std::make_unique<HloInstruction>(HloOpcode::kGetTupleElement, unique, s);
      gte->attrs().tuple_index = index;
      gte->AppendOperand(cur);
      found = scope.computation->AddInstruction(std::move(gte));
      scope.by_name[unique] = found;
    }
    cur = found;
  }
  return cur;
}

absl::Status HloParser::FinishAsyncSugar(HloInstruction* instr, HloOpcode wrapped,
                                         absl::string_view suffix,
                                         InstructionAttributes& wrapped_attrs, size_t pos) {
  if (suffix == "-start") {
    const Shape& s = instr->shape();
    if (!s.IsTuple() || s.tuple_shapes_size() < 2) {
      return c_.ErrorAt(pos,
                        absl::StrCat("async start shape must be a tuple ((operands...), output, "
                                     "context...), got ",
                                     s.ToString(false)));
    }
    auto comp = std::make_unique<HloComputation>(
        UniqueComputationName(absl::StrCat(instr->name(), ".wrapped")));
    int64_t pnum = 0;
    auto root = std::make_unique<HloInstruction>(wrapped, std::string(HloOpcodeString(wrapped)),
                                                 s.tuple_shapes(1));
    for (HloInstruction* op : instr->operands()) {
      auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter, absl::StrCat("param.", pnum),
                                                op->shape());
      p->attrs().parameter_number = pnum;
      HloInstruction* praw = comp->AddInstruction(std::move(p));
      comp->SetParameter(pnum++, praw);
      root->AppendOperand(praw);
    }
    root->attrs() = std::move(wrapped_attrs);
    root->set_called_computations(instr->called_computations());
    instr->set_called_computations({});
    HloInstruction* root_raw = comp->AddInstruction(std::move(root));
    comp->set_root_instruction(root_raw);
    comp->set_is_async_computation(true);
    comp->set_execution_thread(instr->attrs().async_execution_thread.empty()
                                   ? "main"
                                   : instr->attrs().async_execution_thread);
    instr->AppendCalledComputation(comp.get());
    // Calls in the wrapped op's attributes (to_apply=...) were queued against
    // the async-start; move them to the wrapped instruction.
    for (PendingCall& pc : pending_calls_) {
      if (pc.instr == instr) pc.instr = root_raw;
    }
    generated_.push_back(std::move(comp));
    return absl::OkStatus();
  }
  // -update / -done: follow the operand to the start.
  if (instr->operand_count() < 1) return c_.ErrorAt(pos, "async update/done needs an operand");
  HloComputation* wrapped_comp = instr->operand(0)->async_wrapped_computation();
  if (!wrapped_comp) {
    // The operand comes through a tuple, a loop or a parameter: rebuild the
    // wrapped computation from the async context shape ((operands...), output, ...).
    const Shape& s = instr->operand(0)->shape();
    if (IsAsyncOpcode(instr->operand(0)->opcode()) || !s.IsTuple() || s.tuple_shapes_size() < 2 ||
        !s.tuple_shapes(0).IsTuple()) {
      return c_.ErrorAt(pos, absl::StrCat("operand of ", HloOpcodeString(wrapped), suffix,
                                          " must be an async context ((operands...), output, "
                                          "context...), got ",
                                          s.ToString(false)));
    }
    auto comp = std::make_unique<HloComputation>(
        UniqueComputationName(absl::StrCat(instr->name(), ".wrapped")));
    auto root = std::make_unique<HloInstruction>(wrapped, std::string(HloOpcodeString(wrapped)),
                                                 s.tuple_shapes(1));
    for (int64_t i = 0; i < s.tuple_shapes(0).tuple_shapes_size(); ++i) {
      auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter, absl::StrCat("param.", i),
                                                s.tuple_shapes(0).tuple_shapes(i));
      p->attrs().parameter_number = i;
      HloInstruction* praw = comp->AddInstruction(std::move(p));
      comp->SetParameter(i, praw);
      root->AppendOperand(praw);
    }
    comp->set_root_instruction(comp->AddInstruction(std::move(root)));
    comp->set_is_async_computation(true);
    instr->set_called_computations({comp.get()});
    generated_.push_back(std::move(comp));
    return absl::OkStatus();
  }
  HloInstruction* wrapped_root = wrapped_comp->root_instruction();
  if (wrapped_root->opcode() != wrapped) {
    return c_.ErrorAt(pos,
                      absl::StrCat("expected ", HloOpcodeString(wrapped_root->opcode()), suffix,
                                   " to match its start, got ", HloOpcodeString(wrapped), suffix));
  }
  instr->set_called_computations({wrapped_comp});
  return absl::OkStatus();
}

absl::Status HloParser::CheckParsedInstruction(HloInstruction& instr,
                                               std::optional<HloOpcode> wrapped, size_t pos) {
  InstructionAttributes& a = instr.attrs();
  const HloOpcode op = wrapped ? *wrapped : instr.opcode();
  if (wrapped) {
    switch (*wrapped) {
      case HloOpcode::kCopy:
      case HloOpcode::kAllReduce:
      case HloOpcode::kAllGather:
      case HloOpcode::kCollectivePermute:
      case HloOpcode::kSend:
      case HloOpcode::kRecv:
        return c_.ErrorAt(pos, absl::StrCat(HloOpcodeString(*wrapped),
                                            " has first-class start/done opcodes and cannot be "
                                            "wrapped in a generic async op"));
      default:
        break;
    }
  }
  if ((instr.opcode() == HloOpcode::kAsyncStart || instr.opcode() == HloOpcode::kAsyncUpdate) &&
      instr.shape().element_type() != PrimitiveType::PRIMITIVE_TYPE_INVALID &&
      (!instr.shape().IsTuple() || instr.shape().tuple_shapes_size() < 2)) {
    return c_.ErrorAt(
        pos, absl::StrCat(HloOpcodeString(instr.opcode()),
                          " shape must be a tuple ((operands...), output, context...), got ",
                          instr.shape().ToString(false)));
  }
  if ((instr.opcode() == HloOpcode::kAsyncUpdate || instr.opcode() == HloOpcode::kAsyncDone) &&
      instr.operand_count() == 0) {
    return c_.ErrorAt(pos, absl::StrCat(HloOpcodeString(instr.opcode()), " needs an operand"));
  }
  if (wrapped) return absl::OkStatus();
  switch (op) {
    case HloOpcode::kCompare:
      if (a.comparison_type && a.comparison_order) {
        return c_.ErrorAt(pos,
                          "compare takes either type= (the older spelling) or order=, not both");
      }
      break;
    case HloOpcode::kBroadcast:
      if (!a.dimensions) {
        if (instr.operand_count() == 1 && instr.operand(0)->shape().IsArray() &&
            instr.operand(0)->shape().rank() == 0) {
          a.dimensions = std::vector<int64_t>{};
        } else {
          return c_.ErrorAt(pos, "broadcast of a non-scalar needs dimensions={...}");
        }
      }
      break;
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kReduceScatter:
      if (!a.dimensions || a.dimensions->size() != 1) {
        return c_.ErrorAt(pos, absl::StrCat(HloOpcodeString(op),
                                            " needs exactly one dimension in dimensions={...}"));
      }
      break;
    case HloOpcode::kAllToAll:
      if (a.dimensions && a.dimensions->size() > 1) {
        return c_.ErrorAt(pos, "all-to-all takes at most one split dimension");
      }
      break;
    case HloOpcode::kInfeed:
      if (!instr.shape().IsTuple() || instr.shape().tuple_shapes_size() != 2 ||
          !instr.shape().tuple_shapes(1).IsToken()) {
        return c_.ErrorAt(pos, "infeed shape must be a tuple (data, token[])");
      }
      break;
    case HloOpcode::kRecv:
      if (!instr.shape().IsTuple() || instr.shape().tuple_shapes_size() != 3) {
        return c_.ErrorAt(pos, "recv shape must be a tuple (data, u32[], token[])");
      }
      break;
    case HloOpcode::kCustomCall:
      if (a.operand_layout_constraints) {
        const auto& shapes = *a.operand_layout_constraints;
        if (static_cast<int64_t>(shapes.size()) != instr.operand_count()) {
          return c_.ErrorAt(
              pos, absl::StrCat("custom-call has ", instr.operand_count(), " operands but ",
                                shapes.size(), " operand_layout_constraints"));
        }
        for (size_t i = 0; i < shapes.size(); ++i) {
          if (!shapes[i].EqualIgnoringLayout(instr.operand(i)->shape())) {
            return c_.ErrorAt(
                pos, absl::StrCat("operand_layout_constraints[", i, "] ", shapes[i].ToString(false),
                                  " is incompatible with operand shape ",
                                  instr.operand(i)->shape().ToString(false)));
          }
        }
      }
      break;
    default:
      break;
  }
  return absl::OkStatus();
}

absl::Status HloParser::ResolvePending() {
  absl::flat_hash_map<absl::string_view, HloComputation*> by_name;
  for (const auto& c : module_->computations()) by_name.emplace(c->name(), c.get());
  // Called computations are stored by role, whatever order the text gives:
  // while {condition, body}, conditional {true, false}, select-and-scatter
  // {select, scatter}.
  auto role_rank = [](const std::string& attr) {
    if (attr == "condition" || attr == "true_computation" || attr == "select") return 0;
    if (attr == "body" || attr == "false_computation" || attr == "scatter") return 1;
    return 2;
  };
  // One instruction's attributes are parsed together, so its calls are adjacent.
  for (auto first = pending_calls_.begin(); first != pending_calls_.end();) {
    auto last = std::find_if(first, pending_calls_.end(),
                             [&](const PendingCall& p) { return p.instr != first->instr; });
    std::stable_sort(first, last, [&](const PendingCall& a, const PendingCall& b) {
      return role_rank(a.attr) < role_rank(b.attr);
    });
    first = last;
  }
  for (PendingCall& pc : pending_calls_) {
    std::vector<HloComputation*> comps;
    for (const NameRef& ref : pc.names) {
      auto found = by_name.find(ref.name);
      HloComputation* comp = found == by_name.end() ? nullptr : found->second;
      if (!comp) {
        return c_.ErrorAt(ref.pos, absl::StrCat("computation '", ref.name, "' is not defined"));
      }
      comps.push_back(comp);
    }
    std::vector<HloComputation*> all = pc.instr->called_computations();
    all.insert(all.end(), comps.begin(), comps.end());
    pc.instr->set_called_computations(std::move(all));
    if (IsAsyncOpcode(pc.instr->opcode()) && !comps.empty()) {
      comps[0]->set_is_async_computation(true);
    }
    if (pc.instr->opcode() == HloOpcode::kFusion && !comps.empty()) {
      comps[0]->set_fusion_instruction(pc.instr);
    }
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Attributes.

namespace {

bool IsCommonAttribute(absl::string_view key) {
  for (absl::string_view k : CommonAttributeOrder()) {
    if (k == key) return true;
  }
  return false;
}

bool IsOpcodeAttribute(HloOpcode op, absl::string_view key) {
  for (absl::string_view k : OpcodeAttributeOrder(op)) {
    if (k == key) return true;
  }
  return false;
}

}  // namespace

absl::Status HloParser::ParseAttributes(HloInstruction* instr, std::optional<HloOpcode> wrapped,
                                        InstructionAttributes* wrapped_attrs, size_t opcode_pos,
                                        bool allow_attributes) {
  absl::flat_hash_set<std::string> seen;
  while (allow_attributes && c_.TryConsume(",")) {
    size_t key_pos = (c_.SkipSpace(), c_.pos());
    ASSIGN_OR_RETURN(std::string key, c_.ParseIdentifier("attribute name"));
    RETURN_IF_ERROR(c_.Expect("="));
    if (!seen.insert(key).second) {
      return c_.ErrorAt(key_pos, absl::StrCat("attribute '", key, "' is given more than once"));
    }
    HloOpcode effective = instr->opcode();
    InstructionAttributes* target = &instr->attrs();
    if (wrapped) {
      // Sugared async ops: the wrapped op's own attributes go to it.
      if (key == "async_execution_thread" || IsCommonAttribute(key)) {
        effective = instr->opcode();
      } else if (IsOpcodeAttribute(*wrapped, key)) {
        effective = *wrapped;
        target = wrapped_attrs;
      }
    }
    if (key == "result_accuracy" && !AllowsResultAccuracy(wrapped ? *wrapped : effective)) {
      return c_.ErrorAt(key_pos,
                        absl::StrCat("attribute 'result_accuracy' is not allowed on ",
                                     HloOpcodeString(wrapped ? *wrapped : effective),
                                     "; XLA allows it only on exponential, log, sqrt and the "
                                     "other transcendental unary ops"));
    }
    if (!IsCommonAttribute(key) && !IsOpcodeAttribute(effective, key)) {
      return c_.ErrorAt(key_pos, absl::StrCat("attribute '", key, "' is not allowed on ",
                                              wrapped ? HloOpcodeString(*wrapped)
                                                      : HloOpcodeString(instr->opcode())));
    }
    if (key == "control-predecessors") {
      ASSIGN_OR_RETURN(std::vector<NameRef> names, ParseNameList());
      for (const NameRef& ref : names) {
        auto it = current_scope_->by_name.find(ref.name);
        if (it == current_scope_->by_name.end()) {
          return c_.ErrorAt(ref.pos,
                            absl::StrCat("control predecessor '", ref.name, "' is not defined"));
        }
        it->second->AddControlDependencyTo(instr);
      }
      continue;
    }
    RETURN_IF_ERROR(ParseAttributeValue(key, key_pos, instr, *target));
  }
  // Attributes XLA requires.
  auto require = [&](absl::string_view key) -> absl::Status {
    if (!seen.contains(key)) {
      return c_.ErrorAt(opcode_pos, absl::StrCat(HloOpcodeString(instr->opcode()),
                                                 " requires attribute '", key, "'"));
    }
    return absl::OkStatus();
  };
  switch (wrapped ? *wrapped : instr->opcode()) {
    case HloOpcode::kGetTupleElement:
      RETURN_IF_ERROR(require("index"));
      break;
    case HloOpcode::kIota:
      RETURN_IF_ERROR(require("iota_dimension"));
      break;
    case HloOpcode::kCompare:
      RETURN_IF_ERROR(require("direction"));
      break;
    case HloOpcode::kWhile:
      RETURN_IF_ERROR(require("condition"));
      RETURN_IF_ERROR(require("body"));
      break;
    case HloOpcode::kSlice:
      RETURN_IF_ERROR(require("slice"));
      break;
    case HloOpcode::kPad:
      RETURN_IF_ERROR(require("padding"));
      break;
    case HloOpcode::kDynamicSlice:
      RETURN_IF_ERROR(require("dynamic_slice_sizes"));
      break;
    case HloOpcode::kReducePrecision:
      RETURN_IF_ERROR(require("exponent_bits"));
      RETURN_IF_ERROR(require("mantissa_bits"));
      break;
    case HloOpcode::kCustomCall:
      if (!wrapped) RETURN_IF_ERROR(require("custom_call_target"));
      break;
    case HloOpcode::kFusion:
      RETURN_IF_ERROR(require("kind"));
      RETURN_IF_ERROR(require("calls"));
      break;
    case HloOpcode::kGather:
      for (auto k : {"offset_dims", "collapsed_slice_dims", "start_index_map", "index_vector_dim",
                     "slice_sizes"}) {
        RETURN_IF_ERROR(require(k));
      }
      break;
    case HloOpcode::kScatter:
      for (auto k : {"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims",
                     "index_vector_dim", "to_apply"}) {
        RETURN_IF_ERROR(require(k));
      }
      break;
    case HloOpcode::kConvolution:
      RETURN_IF_ERROR(require("dim_labels"));
      break;
    case HloOpcode::kBatchNormTraining:
    case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormGrad:
      RETURN_IF_ERROR(require("epsilon"));
      RETURN_IF_ERROR(require("feature_index"));
      break;
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kMap:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kSort:
      if (!wrapped) RETURN_IF_ERROR(require("to_apply"));
      break;
    case HloOpcode::kCall:
      if (!wrapped) RETURN_IF_ERROR(require("to_apply"));
      break;
    case HloOpcode::kConditional:
      if (instr->operand_count() > 0 &&
          instr->operand(0)->shape().element_type() == PrimitiveType::PRED &&
          seen.contains("branch_computations")) {
        return c_.ErrorAt(opcode_pos,
                          "a conditional on a pred takes true_computation and "
                          "false_computation, not branch_computations");
      }
      if (!seen.contains("branch_computations") &&
          !(seen.contains("true_computation") && seen.contains("false_computation"))) {
        return c_.ErrorAt(opcode_pos,
                          "conditional requires branch_computations or "
                          "true_computation and false_computation");
      }
      break;
    case HloOpcode::kSelectAndScatter:
      RETURN_IF_ERROR(require("select"));
      RETURN_IF_ERROR(require("scatter"));
      break;
    case HloOpcode::kRng:
      RETURN_IF_ERROR(require("distribution"));
      break;
    case HloOpcode::kFft:
      RETURN_IF_ERROR(require("fft_type"));
      RETURN_IF_ERROR(require("fft_length"));
      break;
    case HloOpcode::kAsyncStart:
      if (!wrapped) RETURN_IF_ERROR(require("calls"));
      break;
    default:
      break;
  }
  return absl::OkStatus();
}

}  // namespace text_internal

using text_internal::HloParser;

absl::StatusOr<std::unique_ptr<HloModule>> ParseHloModule(absl::string_view text,
                                                          std::string filename) {
  HloParser parser(text, std::move(filename));
  return parser.ParseModule();
}

absl::StatusOr<Shape> ParseShape(absl::string_view text) {
  HloParser parser(text, "<shape>");
  return parser.ParseShapeOnly();
}

}  // namespace xlite
