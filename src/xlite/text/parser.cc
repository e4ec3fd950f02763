#include "xlite/text/parser.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "xlite/ir/float_format.h"
#include "xlite/support/status.h"
#include "xlite/text/attribute_order.h"
#include "xlite/text/cursor.h"
#include "xlite/text/shape_inference_lite.h"

namespace xlite {
namespace {

// Nesting deeper than this (tuples, literals, anonymous operands) is rejected
// rather than risking the stack on hostile input.
constexpr int kMaxDepth = 256;

struct NameRef {
  std::string name;
  size_t pos;
};

class HloParser {
 public:
  HloParser(absl::string_view text, std::string filename) : c_(text, std::move(filename)) {}

  absl::StatusOr<std::unique_ptr<HloModule>> ParseModule();
  absl::StatusOr<Shape> ParseShapeOnly() {
    ASSIGN_OR_RETURN(Shape s, ParseShape());
    if (!c_.AtEnd()) return c_.Error("extra text after shape");
    return s;
  }

 private:
  // Per-computation parsing scope.
  struct Scope {
    HloComputation* computation = nullptr;
    absl::flat_hash_map<std::string, HloInstruction*> by_name;
  };
  struct PendingCall {
    HloInstruction* instr;
    std::string attr;
    std::vector<NameRef> names;
  };
  struct PendingControl {
    HloInstruction* instr;
    std::vector<NameRef> names;
  };

  // Module structure.
  absl::Status ParseHeader();
  absl::Status ParseHeaderAttribute(const std::string& key, size_t key_pos);
  absl::Status ParseStackFrameSections();
  absl::Status ParseComputation(bool* saw_entry);
  absl::StatusOr<std::unique_ptr<HloComputation>> ParseComputationBody(const std::string& name,
                                                                       size_t name_pos, int depth);
  std::string UniqueComputationName(const std::string& base);
  absl::StatusOr<Shape> ParseSignature();
  absl::Status ParseInstruction(Scope& scope, bool* is_root_out, HloInstruction** out);
  absl::StatusOr<HloInstruction*> ParseInstructionBody(Scope& scope, std::string name,
                                                       size_t name_pos, bool name_given, int depth);
  absl::StatusOr<std::vector<HloInstruction*>> ParseOperands(Scope& scope, int depth);
  absl::StatusOr<HloInstruction*> ParseOperand(Scope& scope, int depth);
  absl::StatusOr<HloInstruction*> ResolveCompactGte(Scope& scope, HloInstruction* base,
                                                    std::vector<int64_t> path, size_t pos);
  absl::Status ResolvePending();
  // Structural rules XLA's parser itself enforces (the rest is the verifier's).
  absl::Status CheckParsedInstruction(HloInstruction& instr, std::optional<HloOpcode> wrapped,
                                      size_t pos);
  absl::Status FinishAsyncSugar(HloInstruction* instr, HloOpcode wrapped, absl::string_view suffix,
                                InstructionAttributes& wrapped_attrs, size_t pos);

  // Attributes.
  absl::Status ParseAttributes(HloInstruction* instr, std::optional<HloOpcode> wrapped,
                               InstructionAttributes* wrapped_attrs, size_t opcode_pos,
                               bool allow_attributes);
  absl::Status ParseAttributeValue(const std::string& key, size_t key_pos, HloInstruction* instr,
                                   InstructionAttributes& a);

  // Values.
  absl::StatusOr<Shape> ParseShape(int depth = 0);
  absl::StatusOr<Layout> ParseLayout(const Shape& shape);
  absl::StatusOr<Literal> ParseLiteral(const Shape& shape, int depth = 0);
  // "s32[2]{0} {1, 2}" or "( f32[] 1, s32[] 2 )": each leaf carries its shape.
  absl::StatusOr<Literal> ParseLiteralWithShape(int depth);
  absl::Status ParseArrayLiteral(Literal& lit);
  absl::Status ParseLiteralElement(Literal& lit, int64_t index);
  absl::StatusOr<std::vector<int64_t>> ParseShapeIndex();
  absl::StatusOr<OpMetadata> ParseMetadata();
  absl::StatusOr<HloSharding> ParseSharding(int depth = 0);
  absl::Status ParseShardingBody(HloSharding& s);
  absl::StatusOr<ReplicaGroups> ParseReplicaGroups();
  absl::StatusOr<Window> ParseWindow();
  absl::StatusOr<ConvolutionDimensionNumbers> ParseDimLabels();
  absl::StatusOr<std::vector<SliceDimension>> ParseSlice();
  absl::StatusOr<std::vector<PaddingDimension>> ParsePadding();
  absl::StatusOr<FrontendAttributes> ParseFrontendAttributes();
  absl::StatusOr<std::vector<NameRef>> ParseNameList();
  absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> ParsePairs();
  absl::StatusOr<std::vector<int64_t>> ParseDxD(absl::string_view what);
  absl::StatusOr<std::string> ParseEnum(absl::string_view what,
                                        std::initializer_list<absl::string_view> allowed);
  absl::StatusOr<std::vector<bool>> ParseBoolList();

  Cursor c_;
  std::unique_ptr<HloModule> module_;
  std::vector<PendingCall> pending_calls_;
  absl::flat_hash_set<std::string> computation_names_;
  int inline_depth_ = 0;
  absl::flat_hash_map<std::string, int> name_uses_;
  Scope* current_scope_ = nullptr;
  std::vector<std::unique_ptr<HloComputation>> generated_;  // async wrapped computations
};

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
    ASSIGN_OR_RETURN(cfg.origin_recovery_table, c_.ParseBalancedBraces());
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

bool StartsShape(Cursor& c) {
  char ch = c.Peek();
  if (ch == '(' || c.LookingAt("b(")) return true;
  size_t save = c.pos();
  auto id = c.ParseIdentifier();
  bool result = false;
  if (id.ok() && c.PeekRaw() == '[' && PrimitiveTypeFromName(*id).has_value()) result = true;
  c.set_pos(save);
  return result;
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

absl::StatusOr<HloSharding> HloParser::ParseSharding(int depth) {
  if (depth > kMaxDepth) return c_.Error("sharding nested too deeply");
  HloSharding s;
  RETURN_IF_ERROR(c_.Expect("{"));
  if (c_.Peek() == '{' || c_.Peek() == '}') {
    // Tuple sharding: {{...}, {...}}; "{}" is an empty tuple.
    s.kind = HloSharding::Kind::kTuple;
    if (c_.TryConsume("}")) return s;
    while (true) {
      ASSIGN_OR_RETURN(HloSharding e, ParseSharding(depth + 1));
      s.tuple_elements.push_back(std::move(e));
      if (c_.TryConsume(",")) continue;
      RETURN_IF_ERROR(c_.Expect("}"));
      return s;
    }
  }
  RETURN_IF_ERROR(ParseShardingBody(s));
  return s;
}

absl::Status HloParser::ParseShardingBody(HloSharding& s) {
  bool have_kind = false;
  while (!c_.TryConsume("}")) {
    size_t pos = (c_.SkipSpace(), c_.pos());
    if (c_.AtEnd()) return c_.Error("unterminated sharding");
    ASSIGN_OR_RETURN(std::string word, c_.ParseIdentifier("sharding attribute"));
    if (word == "replicated") {
      s.kind = HloSharding::Kind::kReplicated;
      have_kind = true;
    } else if (word == "manual") {
      s.kind = HloSharding::Kind::kManual;
      have_kind = true;
    } else if (word == "unknown") {
      s.kind = HloSharding::Kind::kUnknown;
      have_kind = true;
    } else if (word == "unreduced") {
      s.kind = HloSharding::Kind::kUnreduced;
      have_kind = true;
    } else if (word == "maximal") {
      s.kind = HloSharding::Kind::kMaximal;
      have_kind = true;
      RETURN_IF_ERROR(c_.Expect("device"));
      RETURN_IF_ERROR(c_.Expect("="));
      ASSIGN_OR_RETURN(s.device, c_.ParseInt64());
    } else if (word == "devices") {
      s.kind = HloSharding::Kind::kTiled;
      have_kind = true;
      RETURN_IF_ERROR(c_.Expect("="));
      ASSIGN_OR_RETURN(s.tile_dimensions, c_.ParseIntList('[', ']'));
      if (c_.TryConsume("<=")) {
        s.iota = true;
        ASSIGN_OR_RETURN(s.iota_reshape, c_.ParseIntList('[', ']'));
        if (c_.TryConsume("T")) {
          ASSIGN_OR_RETURN(s.iota_transpose, c_.ParseIntList('(', ')'));
        }
      } else {
        while (true) {
          ASSIGN_OR_RETURN(int64_t d, c_.ParseInt64());
          s.devices.push_back(d);
          if (!c_.TryConsume(",")) break;
        }
      }
    } else if (word == "last_tile_dim_replicate") {
      s.last_tile_dim_replicate = true;
    } else if (word == "last_tile_dims") {
      RETURN_IF_ERROR(c_.Expect("="));
      RETURN_IF_ERROR(c_.Expect("{"));
      while (!c_.TryConsume("}")) {
        ASSIGN_OR_RETURN(std::string t, ParseEnum("subgroup type", {"manual", "replicated",
                                                                    "unreduced", "maximal"}));
        s.last_tile_dims.push_back(std::move(t));
        c_.TryConsume(",");
      }
    } else if (word == "metadata") {
      RETURN_IF_ERROR(c_.Expect("="));
      if (c_.LookingAt("{{") || c_.LookingAt("{}")) {
        RETURN_IF_ERROR(c_.Expect("{"));
        while (!c_.TryConsume("}")) {
          ASSIGN_OR_RETURN(OpMetadata m, ParseMetadata());
          s.metadata.push_back(std::move(m));
          c_.TryConsume(",");
        }
      } else {
        ASSIGN_OR_RETURN(OpMetadata m, ParseMetadata());
        s.metadata.push_back(std::move(m));
      }
    } else if (word == "shard_as" || word == "shard_like") {
      ASSIGN_OR_RETURN(int64_t id, c_.ParseInt64());
      s.shard_group = absl::StrCat(word, " ", id);
    } else {
      return c_.ErrorAt(pos, absl::StrCat("unknown sharding attribute '", word, "'"));
    }
  }
  if (!have_kind) return c_.Error("sharding has no kind (replicated, maximal, devices=...)");
  if (s.kind == HloSharding::Kind::kTiled && s.iota) {
    int64_t tiles = 1, devices = 1;
    for (int64_t d : s.tile_dimensions) tiles *= d;
    for (int64_t d : s.iota_reshape) devices *= d;
    if (tiles != devices) {
      return c_.Error(absl::StrCat("sharding iota has ", devices,
                                   " devices but its tile assignment needs ", tiles));
    }
    if (!s.iota_transpose.empty() && s.iota_transpose.size() != s.iota_reshape.size()) {
      return c_.Error("sharding iota transpose does not match its reshape dimensions");
    }
  }
  if (s.kind == HloSharding::Kind::kTiled && !s.iota) {
    int64_t n = 1;
    for (int64_t d : s.tile_dimensions) n *= d;
    if (n != static_cast<int64_t>(s.devices.size())) {
      return c_.Error(absl::StrCat("sharding has ", s.devices.size(),
                                   " devices but its tile assignment needs ", n));
    }
  }
  return absl::OkStatus();
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
      ASSIGN_OR_RETURN(names, ParseNameList());
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
    ASSIGN_OR_RETURN(a.statistics, c_.ParseBalancedBraces());
    return absl::OkStatus();
  }
  if (key == "origin") {
    ASSIGN_OR_RETURN(a.original_value, c_.ParseBalancedBraces());
    return absl::OkStatus();
  }
  if (key == "result_accuracy") {
    ASSIGN_OR_RETURN(a.result_accuracy, c_.ParseBalancedBraces());
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
  if (key == "convolution_kind") {
    ASSIGN_OR_RETURN(a.convolution_kind,
                     ParseEnum("convolution kind", {"fprop", "wgrad", "dgrad"}));
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

// ---------------------------------------------------------------------------
// Shapes and literals.

absl::StatusOr<Shape> HloParser::ParseShape(int depth) {
  if (depth > kMaxDepth) return c_.Error("shape nested too deeply");
  if (c_.TryConsume("(")) {
    std::vector<Shape> elems;
    if (!c_.TryConsume(")")) {
      while (true) {
        ASSIGN_OR_RETURN(Shape s, ParseShape(depth + 1));
        elems.push_back(std::move(s));
        if (c_.TryConsume(",")) continue;
        RETURN_IF_ERROR(c_.Expect(")"));
        break;
      }
    }
    return Shape::Tuple(std::move(elems));
  }
  size_t pos = (c_.SkipSpace(), c_.pos());
  if (c_.LookingAt("b(")) {
    c_.TryConsume("b(");
    ASSIGN_OR_RETURN(Shape inner, ParseShape(depth + 1));
    if (!inner.IsArray()) return c_.ErrorAt(pos, "a buffer shape b(...) must hold an array shape");
    RETURN_IF_ERROR(c_.Expect(")"));
    return Shape::Buffer(std::move(inner));
  }
  ASSIGN_OR_RETURN(std::string type_name, c_.ParseIdentifier("shape"));
  std::optional<PrimitiveType> type = PrimitiveTypeFromName(type_name);
  if (!type || *type == PrimitiveType::TUPLE || *type == PrimitiveType::BUFFER) {
    return c_.ErrorAt(pos, absl::StrCat("unknown element type '", type_name, "'"));
  }
  RETURN_IF_ERROR(c_.Expect("["));
  Shape shape = Shape::Array(*type, {});
  if (*type == PrimitiveType::TOKEN) shape = Shape::Token();
  if (*type == PrimitiveType::OPAQUE_TYPE) {
    shape = Shape();
    shape.set_element_type(PrimitiveType::OPAQUE_TYPE);
  }
  if (!c_.TryConsume("]")) {
    if (!shape.IsArray()) return c_.Error(absl::StrCat(type_name, " shapes have no dimensions"));
    while (true) {
      if (c_.TryConsume("?")) {
        shape.add_dimension(Shape::kUnboundedSize, true);
      } else {
        bool dynamic = c_.TryConsume("<=");
        size_t dpos = (c_.SkipSpace(), c_.pos());
        ASSIGN_OR_RETURN(int64_t d, c_.ParseInt64());
        if (d < 0) return c_.ErrorAt(dpos, "dimension size must be non-negative");
        shape.add_dimension(d, dynamic);
      }
      if (c_.TryConsume(",")) continue;
      RETURN_IF_ERROR(c_.Expect("]"));
      break;
    }
    if (shape.rank() > 64) return c_.ErrorAt(pos, "shape has more than 64 dimensions");
  }
  // A layout follows directly: "f32[2]{0}".
  if (c_.PeekRaw() == '{' && shape.IsArray()) {
    ASSIGN_OR_RETURN(Layout l, ParseLayout(shape));
    shape.set_layout(std::move(l));
  }
  return shape;
}

absl::StatusOr<Layout> HloParser::ParseLayout(const Shape& shape) {
  size_t pos = c_.pos();
  Layout l;
  RETURN_IF_ERROR(c_.Expect("{"));
  while (c_.Peek() != ':' && c_.Peek() != '}') {
    ASSIGN_OR_RETURN(int64_t d, c_.ParseInt64());
    l.minor_to_major.push_back(d);
    if (!c_.TryConsume(",")) break;
  }
  if (c_.TryConsume(":")) {
    while (c_.Peek() != '}') {
      size_t fpos = (c_.SkipSpace(), c_.pos());
      if (c_.TryConsume("D(")) {
        while (!c_.TryConsume(")")) {
          absl::string_view t = c_.ParseRawToken();
          size_t end = t.find(')');
          if (end != absl::string_view::npos) {
            c_.set_pos(c_.pos() - (t.size() - end));
            t = t.substr(0, end);
          }
          if (t.empty()) return c_.ErrorAt(fpos, "malformed D(...) in layout");
          l.dim_level_types.emplace_back(t);
          c_.TryConsume(",");
        }
      } else if (c_.TryConsume("T")) {
        while (c_.PeekRaw() == '(') {
          c_.set_pos(c_.pos() + 1);
          Tile t;
          while (!c_.TryConsume(")")) {
            if (c_.TryConsume("*")) {
              t.dimensions.push_back(Tile::kCombineDimension);
            } else {
              ASSIGN_OR_RETURN(int64_t d, c_.ParseInt64());
              t.dimensions.push_back(d);
            }
            if (!c_.TryConsume(",")) {
              RETURN_IF_ERROR(c_.Expect(")"));
              break;
            }
          }
          l.tiles.push_back(std::move(t));
        }
      } else if (c_.TryConsume("L(")) {
        ASSIGN_OR_RETURN(l.tail_padding_alignment_in_elements, c_.ParseInt64());
        RETURN_IF_ERROR(c_.Expect(")"));
      } else if (c_.TryConsume("#(") || c_.TryConsume("*(")) {
        bool index = c_.text()[c_.pos() - 2] == '#';
        size_t tpos = (c_.SkipSpace(), c_.pos());
        ASSIGN_OR_RETURN(std::string t, c_.ParseIdentifier("element type"));
        auto pt = PrimitiveTypeFromName(t);
        if (!pt) return c_.ErrorAt(tpos, absl::StrCat("unknown element type '", t, "'"));
        (index ? l.index_primitive_type : l.pointer_primitive_type) = *pt;
        RETURN_IF_ERROR(c_.Expect(")"));
      } else if (c_.TryConsume("E(")) {
        ASSIGN_OR_RETURN(l.element_size_in_bits, c_.ParseInt64());
        RETURN_IF_ERROR(c_.Expect(")"));
      } else if (c_.TryConsume("SC")) {
        while (c_.PeekRaw() == '(') {
          c_.set_pos(c_.pos() + 1);
          SplitConfig sc;
          ASSIGN_OR_RETURN(sc.dimension, c_.ParseInt64());
          RETURN_IF_ERROR(c_.Expect(":"));
          while (true) {
            ASSIGN_OR_RETURN(int64_t v, c_.ParseInt64());
            sc.split_indices.push_back(v);
            if (!c_.TryConsume(",")) break;
          }
          RETURN_IF_ERROR(c_.Expect(")"));
          l.split_configs.push_back(std::move(sc));
        }
      } else if (c_.TryConsume("S(")) {
        ASSIGN_OR_RETURN(l.memory_space, c_.ParseInt64());
        RETURN_IF_ERROR(c_.Expect(")"));
      } else if (c_.TryConsume("P(")) {
        ASSIGN_OR_RETURN(Shape p, ParseShape(1));
        l.physical_shape = std::make_shared<Shape>(std::move(p));
        RETURN_IF_ERROR(c_.Expect(")"));
      } else if (c_.TryConsume("M(")) {
        ASSIGN_OR_RETURN(l.dynamic_shape_metadata_prefix_bytes, c_.ParseInt64());
        RETURN_IF_ERROR(c_.Expect(")"));
      } else {
        return c_.ErrorAt(fpos, "unknown layout field");
      }
    }
  }
  RETURN_IF_ERROR(c_.Expect("}"));
  if (l.physical_shape && l.dim_level_types.empty()) {
    return c_.ErrorAt(pos, "a physical shape P(...) is only allowed on sparse layouts");
  }
  // minor_to_major must be a permutation of the dimensions.
  if (!l.minor_to_major.empty() || shape.rank() > 0) {
    if (static_cast<int64_t>(l.minor_to_major.size()) != shape.rank()) {
      return c_.ErrorAt(pos, absl::StrCat("layout has ", l.minor_to_major.size(),
                                          " dimensions but the shape has rank ", shape.rank()));
    }
    std::vector<bool> seen(shape.rank(), false);
    for (int64_t d : l.minor_to_major) {
      if (d < 0 || d >= shape.rank() || seen[d]) {
        return c_.ErrorAt(pos, "layout minor_to_major is not a permutation of the dimensions");
      }
      seen[d] = true;
    }
  }
  return l;
}

absl::StatusOr<Literal> HloParser::ParseLiteral(const Shape& shape, int depth) {
  if (depth > kMaxDepth) return c_.Error("literal nested too deeply");
  Literal lit(shape);
  if (shape.IsTuple()) {
    RETURN_IF_ERROR(c_.Expect("("));
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      if (i > 0) RETURN_IF_ERROR(c_.Expect(","));
      // Tuple elements may repeat their shape (custom-call literal= form).
      const Shape& es = shape.tuple_shapes(i);
      if (StartsShape(c_)) {
        ASSIGN_OR_RETURN(Shape given, ParseShape());
        if (!given.EqualIgnoringLayout(es)) return c_.Error("literal element shape does not match");
      }
      ASSIGN_OR_RETURN(lit.tuple_elements()[i], ParseLiteral(es, depth + 1));
    }
    RETURN_IF_ERROR(c_.Expect(")"));
    return lit;
  }
  if (shape.IsToken()) return c_.Error("token constants are not supported");
  if (!shape.IsArray())
    return c_.Error(absl::StrCat("cannot write a literal of shape ", shape.ToString()));
  if (!shape.is_static()) return c_.Error("constant shapes must be static");
  if (shape.rank() == 0) {
    RETURN_IF_ERROR(ParseLiteralElement(lit, 0));
    return lit;
  }
  if (c_.Peek() != '{') {
    // constant(1) for an array: every element takes the value.
    Literal scalar(Shape::Scalar(shape.element_type()));
    RETURN_IF_ERROR(ParseLiteralElement(scalar, 0));
    for (int64_t i = 0; i < lit.element_count(); ++i) {
      if (IsComplex(shape.element_type())) {
        lit.SetComplex(i, scalar.GetComplex(0));
      } else {
        lit.SetBits(i, scalar.GetBits(0));
      }
    }
    return lit;
  }
  RETURN_IF_ERROR(ParseArrayLiteral(lit));
  return lit;
}

absl::StatusOr<Literal> HloParser::ParseLiteralWithShape(int depth) {
  if (depth > kMaxDepth) return c_.Error("literal nested too deeply");
  if (c_.TryConsume("(")) {
    std::vector<Literal> elems;
    std::vector<Shape> shapes;
    if (!c_.TryConsume(")")) {
      while (true) {
        ASSIGN_OR_RETURN(Literal e, ParseLiteralWithShape(depth + 1));
        shapes.push_back(e.shape());
        elems.push_back(std::move(e));
        if (c_.TryConsume(",")) continue;
        RETURN_IF_ERROR(c_.Expect(")"));
        break;
      }
    }
    Literal lit(Shape::Tuple(std::move(shapes)));
    lit.tuple_elements() = std::move(elems);
    return lit;
  }
  ASSIGN_OR_RETURN(Shape s, ParseShape());
  return ParseLiteral(s, depth + 1);
}

absl::Status HloParser::ParseArrayLiteral(Literal& lit) {
  const Shape& shape = lit.shape();
  const int64_t rank = shape.rank();
  if (c_.LookingAt("{...}")) {
    c_.TryConsume("{...}");
    lit.set_elided(true);
    return absl::OkStatus();
  }
  // Nested braces, one level per dimension, each with exactly that many
  // entries (XLA rejects a flat list for a rank-2 literal).
  int64_t next = 0;
  std::function<absl::Status(int64_t)> parse_level = [&](int64_t dim) -> absl::Status {
    size_t open = (c_.SkipSpace(), c_.pos());
    RETURN_IF_ERROR(c_.Expect("{"));
    int64_t count = 0;
    if (!c_.TryConsume("}")) {
      while (true) {
        if (count >= shape.dimensions(dim)) {
          return c_.ErrorAt(open, absl::StrCat("too many entries in dimension ", dim,
                                               " of literal of shape ", shape.ToString(false)));
        }
        if (dim + 1 < rank) {
          if (c_.Peek() != '{') {
            return c_.Error(absl::StrCat("expected '{' for dimension ", dim + 1,
                                         " of literal of shape ", shape.ToString(false)));
          }
          RETURN_IF_ERROR(parse_level(dim + 1));
        } else {
          RETURN_IF_ERROR(ParseLiteralElement(lit, next++));
        }
        ++count;
        if (c_.TryConsume(",")) continue;
        RETURN_IF_ERROR(c_.Expect("}"));
        break;
      }
    }
    if (count != shape.dimensions(dim)) {
      return c_.ErrorAt(
          open, absl::StrCat("expected ", shape.dimensions(dim), " elements in dimension ", dim,
                             " of literal of shape ", shape.ToString(false), ", got ", count));
    }
    return absl::OkStatus();
  };
  return parse_level(0);
}

absl::Status HloParser::ParseLiteralElement(Literal& lit, int64_t index) {
  const PrimitiveType t = lit.shape().element_type();
  size_t pos = (c_.SkipSpace(), c_.pos());
  if (t == PrimitiveType::PRED) {
    if (c_.TryConsumeWord("true")) {
      lit.SetInt(index, 1);
    } else if (c_.TryConsumeWord("false")) {
      lit.SetInt(index, 0);
    } else {
      ASSIGN_OR_RETURN(int64_t v, c_.ParseInt64());
      if (v != 0 && v != 1) return c_.ErrorAt(pos, "pred literal must be true, false, 0 or 1");
      lit.SetInt(index, v);
    }
    return absl::OkStatus();
  }
  if (IsComplex(t)) {
    RETURN_IF_ERROR(c_.Expect("("));
    ASSIGN_OR_RETURN(double re, c_.ParseDouble());
    RETURN_IF_ERROR(c_.Expect(","));
    ASSIGN_OR_RETURN(double im, c_.ParseDouble());
    RETURN_IF_ERROR(c_.Expect(")"));
    PrimitiveType part = t == PrimitiveType::C64 ? PrimitiveType::F32 : PrimitiveType::F64;
    FloatFormat f = *GetFloatFormat(part);
    for (double v : {re, im}) {
      if (std::isfinite(v) && std::isinf(DecodeFloat(f, EncodeFloat(f, v)))) {
        return c_.ErrorAt(pos, absl::StrCat("complex literal component ", v,
                                            " is out of range for ", PrimitiveTypeName(t)));
      }
    }
    lit.SetComplex(index, {re, im});
    return absl::OkStatus();
  }
  if (IsInteger(t)) {
    const int bits = PrimitiveBitWidth(t);
    if (IsUnsignedInt(t)) {
      if (c_.PeekRaw() == '-') {
        // XLA wraps negative u64 constants (u64[] constant(-1) is 2^64-1).
        if (t != PrimitiveType::U64) {
          return c_.ErrorAt(
              pos, absl::StrCat("negative value for unsigned type ", PrimitiveTypeName(t)));
        }
        ASSIGN_OR_RETURN(int64_t v, c_.ParseInt64());
        lit.SetBits(index, static_cast<uint64_t>(v));
        return absl::OkStatus();
      }
      ASSIGN_OR_RETURN(uint64_t v, c_.ParseUint64());
      if (bits < 64 && v >= (uint64_t{1} << bits)) {
        return c_.ErrorAt(pos,
                          absl::StrCat("value ", v, " is out of range for ", PrimitiveTypeName(t)));
      }
      lit.SetBits(index, v);
    } else {
      ASSIGN_OR_RETURN(int64_t v, c_.ParseInt64());
      if (bits < 64) {
        int64_t lo = -(int64_t{1} << (bits - 1)), hi = (int64_t{1} << (bits - 1)) - 1;
        if (v < lo || v > hi) {
          return c_.ErrorAt(
              pos, absl::StrCat("value ", v, " is out of range for ", PrimitiveTypeName(t)));
        }
      }
      lit.SetInt(index, v);
    }
    return absl::OkStatus();
  }
  if (IsFloatingPoint(t)) {
    FloatFormat f = *GetFloatFormat(t);
    bool neg = c_.PeekRaw() == '-';
    size_t save = c_.pos();
    if (neg) c_.set_pos(save + 1);
    if (c_.TryConsumeWord("nan")) {
      uint64_t bits = QuietNanBits(f);
      if (f.nan == FloatFormat::Nan::kNone) {
        return c_.ErrorAt(pos, absl::StrCat(PrimitiveTypeName(t), " has no NaN"));
      }
      if (c_.PeekRaw() == '(') {
        c_.set_pos(c_.pos() + 1);
        RETURN_IF_ERROR(c_.Expect("0x"));
        size_t hpos = c_.pos();
        uint64_t payload = 0;
        while (std::isxdigit(static_cast<unsigned char>(c_.PeekRaw()))) {
          if (payload >> 60) return c_.ErrorAt(hpos, "NaN payload is too large");
          char ch = c_.PeekRaw();
          payload = payload * 16 + (std::isdigit(static_cast<unsigned char>(ch))
                                        ? ch - '0'
                                        : (std::tolower(ch) - 'a' + 10));
          c_.set_pos(c_.pos() + 1);
        }
        if (c_.pos() == hpos) return c_.Error("expected hex NaN payload");
        RETURN_IF_ERROR(c_.Expect(")"));
        if (f.nan != FloatFormat::Nan::kIeee) {
          return c_.ErrorAt(
              pos, absl::StrCat(PrimitiveTypeName(t), " has a single NaN and no NaN payloads"));
        }
        if (payload == 0 || payload >= (uint64_t{1} << f.mantissa_bits)) {
          return c_.ErrorAt(pos, absl::StrCat("NaN payload 0x", absl::Hex(payload),
                                              " does not fit in ", PrimitiveTypeName(t)));
        }
        bits = (bits & ~((uint64_t{1} << f.mantissa_bits) - 1)) | payload;
      }
      if (neg && f.has_sign) {
        bits |= uint64_t{1} << (f.exponent_bits + f.mantissa_bits);
      }
      lit.SetBits(index, bits);
      return absl::OkStatus();
    }
    c_.set_pos(save);
    ASSIGN_OR_RETURN(double v, c_.ParseDouble());
    if (std::isinf(v) && !f.has_inf) {
      return c_.ErrorAt(pos, absl::StrCat(PrimitiveTypeName(t), " has no infinity"));
    }
    uint64_t bits = EncodeFloat(f, v);
    double back = DecodeFloat(f, bits);
    if (std::isfinite(v) && !std::isfinite(back)) {
      return c_.ErrorAt(pos, absl::StrCat("value ", c_.text().substr(pos, c_.pos() - pos),
                                          " is out of range for literal's primitive type ",
                                          PrimitiveTypeName(t)));
    }
    lit.SetBits(index, bits);
    return absl::OkStatus();
  }
  return c_.ErrorAt(pos, absl::StrCat("cannot parse a literal of type ", PrimitiveTypeName(t)));
}

}  // namespace

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
