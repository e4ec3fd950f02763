#include "xlite/verify/verifier.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "xlite/support/status.h"
#include "xlite/verify/attribute_rules.h"
#include "xlite/verify/shape_inference.h"
#include "xlite/verify/sharding_rules.h"

namespace xlite {
namespace {

std::string IndexString(const std::vector<int64_t>& index) {
  return absl::StrCat("{", absl::StrJoin(index, ","), "}");
}

class Verifier {
 public:
  Verifier(const HloModule& m, const VerifyOptions& o) : module_(m), options_(o) {}

  absl::Status Run() {
    if (!module_.entry_computation())
      return absl::InvalidArgumentError("module has no entry computation");
    absl::flat_hash_set<const HloComputation*> in_module;
    absl::flat_hash_set<std::string> names;
    for (const auto& c : module_.computations()) {
      in_module.insert(c.get());
      if (!names.insert(c->name()).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("computation name '", c->name(), "' is used twice"));
      }
    }
    for (const auto& c : module_.computations()) {
      RETURN_IF_ERROR(VerifyComputation(*c, in_module));
    }
    RETURN_IF_ERROR(VerifyEntryLayout());
    RETURN_IF_ERROR(VerifyAliasing());
    return absl::OkStatus();
  }

 private:
  absl::Status Fail(const HloInstruction& instr, absl::string_view rule) const {
    return absl::InvalidArgumentError(absl::StrCat(
        "instruction '", instr.name(), "' (", HloOpcodeString(instr.opcode()), ") in computation '",
        instr.parent() ? instr.parent()->name() : "?", "': ", rule));
  }
  static absl::Status FailComp(const HloComputation& c, absl::string_view rule) {
    return absl::InvalidArgumentError(absl::StrCat("computation '", c.name(), "': ", rule));
  }

  absl::Status VerifyComputation(const HloComputation& comp,
                                 const absl::flat_hash_set<const HloComputation*>& in_module) {
    if (!comp.root_instruction()) return FailComp(comp, "has no ROOT instruction");
    if (comp.root_instruction()->parent() != &comp)
      return FailComp(comp, "ROOT is not one of its instructions");
    for (int64_t i = 0; i < comp.num_parameters(); ++i) {
      const HloInstruction* p = comp.parameter_instruction(i);
      if (!p)
        return FailComp(comp,
                        absl::StrCat("parameter ", i, " is missing (numbers must be 0..n-1)"));
      if (p->attrs().parameter_number != i)
        return Fail(*p, absl::StrCat("is registered as parameter ", i));
    }
    absl::flat_hash_set<std::string> names;
    int64_t params_seen = 0;
    for (const auto& instr : comp.instructions()) {
      if (!names.insert(instr->name()).second) {
        return Fail(*instr, "name is not unique in its computation");
      }
      if (instr->opcode() == HloOpcode::kParameter) ++params_seen;
      for (const HloInstruction* op : instr->operands()) {
        if (op->parent() != &comp)
          return Fail(*instr, absl::StrCat("operand '", op->name(), "' is in another computation"));
      }
      for (const HloInstruction* p : instr->control_predecessors()) {
        if (p->parent() != &comp) {
          return Fail(*instr, absl::StrCat("control predecessor '", p->name(),
                                           "' is in another computation"));
        }
      }
      for (const HloComputation* callee : instr->called_computations()) {
        if (!in_module.contains(callee))
          return Fail(*instr, "calls a computation that is not in the module");
        if (callee == &comp) return Fail(*instr, "calls its own computation");
      }
      RETURN_IF_ERROR(VerifyLayouts(*instr, instr->shape()));
      RETURN_IF_ERROR(VerifyInstruction(*instr));
    }
    if (params_seen != comp.num_parameters()) {
      return FailComp(comp, "parameter instructions and parameter numbers disagree");
    }
    return VerifyAcyclic(comp);
  }

  absl::Status VerifyLayouts(const HloInstruction& instr, const Shape& s) {
    if (s.IsTuple() || s.IsBuffer()) {
      for (const Shape& e : s.tuple_shapes()) RETURN_IF_ERROR(VerifyLayouts(instr, e));
      return absl::OkStatus();
    }
    if (!s.IsArray() || !s.has_layout()) return absl::OkStatus();
    const Layout& l = s.layout();
    if (static_cast<int64_t>(l.minor_to_major.size()) != s.rank()) {
      return Fail(instr, absl::StrCat("layout ", l.ToString(), " does not match rank ", s.rank(),
                                      " of ", s.ToString(false)));
    }
    std::vector<bool> seen(s.rank(), false);
    for (int64_t d : l.minor_to_major) {
      if (d < 0 || d >= s.rank() || seen[d]) {
        return Fail(instr, absl::StrCat("layout ", l.ToString(),
                                        " is not a permutation of the dimensions"));
      }
      seen[d] = true;
    }
    for (const Tile& t : l.tiles) {
      for (int64_t d : t.dimensions) {
        if (d != Tile::kCombineDimension && d <= 0)
          return Fail(instr, "layout tile sizes must be positive");
      }
    }
    if (l.element_size_in_bits < 0 || l.memory_space < 0)
      return Fail(instr, "layout has a negative field");
    return absl::OkStatus();
  }

  absl::Status VerifyInstruction(const HloInstruction& instr) {
    // Structural rules first: their messages are more specific than a shape
    // mismatch found by inference.
    RETURN_IF_ERROR(VerifyCollectiveAttributes(instr));
    if (absl::Status s = CheckCompareOrder(instr); !s.ok()) return Fail(instr, s.message());
    if (absl::Status s = CheckResultAccuracy(instr); !s.ok()) return Fail(instr, s.message());
    if (absl::Status s = CheckSharding(instr, module_.config()); !s.ok()) {
      return Fail(instr, s.message());
    }
    RETURN_IF_ERROR(VerifyAsyncStructure(instr));
    if (!options_.check_shapes) return absl::OkStatus();
    absl::StatusOr<Shape> inferred = InferShape(instr);
    if (!inferred.ok()) return Fail(instr, inferred.status().message());
    if (!shape_inference::Compatible(*inferred, instr.shape())) {
      return Fail(instr,
                  absl::StrCat("declared shape ", instr.shape().ToString(false),
                               " does not match the inferred shape ", inferred->ToString(false)));
    }
    return absl::OkStatus();
  }

  absl::Status VerifyAsyncStructure(const HloInstruction& instr) {
    switch (instr.opcode()) {
      case HloOpcode::kAsyncStart:
      case HloOpcode::kAsyncUpdate:
      case HloOpcode::kAsyncDone:
        return VerifyAsync(instr);
      case HloOpcode::kCopyStart:
      case HloOpcode::kAllReduceStart:
      case HloOpcode::kAllGatherStart:
      case HloOpcode::kCollectivePermuteStart:
      case HloOpcode::kSend:
      case HloOpcode::kRecv:
        return VerifyFirstClassStart(instr);
      case HloOpcode::kCopyDone:
      case HloOpcode::kAllReduceDone:
      case HloOpcode::kAllGatherDone:
      case HloOpcode::kCollectivePermuteDone:
      case HloOpcode::kSendDone:
      case HloOpcode::kRecvDone:
        return VerifyFirstClassDone(instr);
      default:
        return absl::OkStatus();
    }
  }

  absl::Status VerifyCollectiveAttributes(const HloInstruction& instr) {
    const InstructionAttributes& a = instr.attrs();
    if (a.replica_groups && !a.replica_groups->iota && a.replica_groups->mesh.empty()) {
      absl::flat_hash_set<int64_t> ids;
      for (const auto& g : a.replica_groups->groups) {
        for (int64_t id : g) {
          if (id < 0) return Fail(instr, absl::StrCat("replica_groups has a negative id ", id));
          if (!ids.insert(id).second) {
            return Fail(instr, absl::StrCat("replica_groups lists id ", id, " more than once"));
          }
        }
      }
    }
    if (a.replica_groups && a.replica_groups->iota) {
      const auto& g = a.replica_groups->iota_group_shape;
      int64_t devices = 1;
      for (int64_t d : a.replica_groups->iota_reshape) devices *= d;
      if (g.size() != 2 || g[0] * g[1] != devices) {
        return Fail(instr,
                    "iota replica_groups [groups,size] must cover exactly the listed devices");
      }
    }
    if (a.use_global_device_ids && !a.channel_id) {
      return Fail(instr, "use_global_device_ids=true requires a channel_id");
    }
    if (a.channel_id && *a.channel_id <= 0 && instr.opcode() != HloOpcode::kSend &&
        instr.opcode() != HloOpcode::kRecv) {
      return Fail(instr, absl::StrCat("channel_id must be positive, got ", *a.channel_id));
    }
    return absl::OkStatus();
  }

  // The async design: start -> update* -> done, each start/update with one
  // user, all naming the same wrapped computation, shapes chained unchanged.
  absl::Status VerifyAsync(const HloInstruction& instr) {
    if (instr.called_computations().size() != 1) {
      return Fail(instr, "async ops call exactly one (wrapped) computation");
    }
    const HloComputation* wrapped = instr.called_computations()[0];
    const HloInstruction* root = wrapped->root_instruction();
    switch (root->opcode()) {
      case HloOpcode::kCopy:
      case HloOpcode::kAllReduce:
      case HloOpcode::kAllGather:
      case HloOpcode::kCollectivePermute:
      case HloOpcode::kSend:
      case HloOpcode::kRecv:
        return Fail(instr, absl::StrCat("wraps ", HloOpcodeString(root->opcode()),
                                        ", which has its own first-class start/done opcodes"));
      default:
        break;
    }
    if (instr.opcode() == HloOpcode::kAsyncStart) {
      if (wrapped->num_parameters() != instr.operand_count()) {
        return Fail(instr, absl::StrCat("wrapped computation '", wrapped->name(), "' takes ",
                                        wrapped->num_parameters(), " parameters but the start has ",
                                        instr.operand_count(), " operands"));
      }
      for (const auto& i : wrapped->instructions()) {
        if (i.get() != root && i->opcode() != HloOpcode::kParameter && i->users().empty()) {
          return Fail(instr, absl::StrCat("wrapped computation '", wrapped->name(),
                                          "' has a dead instruction '", i->name(), "'"));
        }
      }
    } else {
      const HloInstruction* prev = instr.operand(0);
      if (IsAsyncOpcode(prev->opcode())) {
        if (prev->opcode() == HloOpcode::kAsyncDone) {
          return Fail(instr,
                      "its operand is an async-done; it must be an async-start or async-update");
        }
        if (prev->called_computations().size() == 1 && prev->called_computations()[0] != wrapped) {
          return Fail(instr, absl::StrCat("calls '", wrapped->name(), "' but its start calls '",
                                          prev->called_computations()[0]->name(), "'"));
        }
      }
      if (instr.opcode() == HloOpcode::kAsyncUpdate &&
          !shape_inference::Compatible(instr.shape(), prev->shape())) {
        return Fail(instr, "async-update must have the shape of its operand");
      }
    }
    if (instr.opcode() != HloOpcode::kAsyncDone) {
      const Shape& s = instr.shape();
      if (!s.IsTuple() || s.tuple_shapes_size() < 2) {
        return Fail(instr, "shape must be ((operands...), output, context...)");
      }
      if (!shape_inference::Compatible(s.tuple_shapes(1), root->shape())) {
        return Fail(instr, absl::StrCat("output element ", s.tuple_shapes(1).ToString(false),
                                        " does not match the wrapped root ",
                                        root->shape().ToString(false)));
      }
      // The async design: exactly one user, an async-update or async-done.
      if (instr.users().size() != 1) {
        return Fail(instr, absl::StrCat("must have exactly one user, has ", instr.users().size()));
      }
      const HloInstruction* user = instr.users()[0];
      if (user->opcode() != HloOpcode::kAsyncUpdate && user->opcode() != HloOpcode::kAsyncDone) {
        return Fail(instr, absl::StrCat("its user '", user->name(),
                                        "' must be an async-update or async-done"));
      }
    } else if (!shape_inference::Compatible(instr.shape(), root->shape())) {
      return Fail(instr,
                  absl::StrCat("async-done shape ", instr.shape().ToString(false),
                               " must equal the wrapped root ", root->shape().ToString(false)));
    }
    return absl::OkStatus();
  }

  static HloOpcode DoneFor(HloOpcode start) {
    switch (start) {
      case HloOpcode::kCopyStart:
        return HloOpcode::kCopyDone;
      case HloOpcode::kAllReduceStart:
        return HloOpcode::kAllReduceDone;
      case HloOpcode::kAllGatherStart:
        return HloOpcode::kAllGatherDone;
      case HloOpcode::kCollectivePermuteStart:
        return HloOpcode::kCollectivePermuteDone;
      case HloOpcode::kSend:
        return HloOpcode::kSendDone;
      default:
        return HloOpcode::kRecvDone;
    }
  }

  absl::Status VerifyFirstClassStart(const HloInstruction& instr) {
    const HloOpcode done = DoneFor(instr.opcode());
    int dones = 0;
    for (const HloInstruction* u : instr.users()) {
      if (u->opcode() == done) {
        ++dones;
      } else if (u->opcode() != HloOpcode::kTuple && u->opcode() != HloOpcode::kGetTupleElement) {
        return Fail(instr,
                    absl::StrCat("its user '", u->name(), "' must be ", HloOpcodeString(done)));
      }
    }
    if (dones > 1)
      return Fail(
          instr, absl::StrCat("has ", dones, " ", HloOpcodeString(done), " users; one is allowed"));
    return absl::OkStatus();
  }

  absl::Status VerifyFirstClassDone(const HloInstruction& instr) {
    if (instr.operand_count() != 1) return Fail(instr, "takes exactly one operand");
    const HloInstruction* start = instr.operand(0);
    const bool through_tuple =
        start->opcode() == HloOpcode::kGetTupleElement || start->opcode() == HloOpcode::kParameter;
    if (!through_tuple && DoneFor(start->opcode()) != instr.opcode()) {
      return Fail(instr,
                  absl::StrCat("its operand '", start->name(), "' is ",
                               HloOpcodeString(start->opcode()), ", not the matching start"));
    }
    return absl::OkStatus();
  }

  absl::Status VerifyAcyclic(const HloComputation& comp) {
    enum State { kVisiting, kDone };
    absl::flat_hash_map<const HloInstruction*, State> state;
    for (const auto& start : comp.instructions()) {
      if (state.contains(start.get())) continue;
      std::vector<std::pair<const HloInstruction*, size_t>> stack = {{start.get(), 0}};
      state[start.get()] = kVisiting;
      while (!stack.empty()) {
        auto& [node, next] = stack.back();
        const size_t n_ops = node->operands().size();
        const size_t n_total = n_ops + node->control_predecessors().size();
        if (next == n_total) {
          state[node] = kDone;
          stack.pop_back();
          continue;
        }
        const HloInstruction* pred =
            next < n_ops ? node->operands()[next] : node->control_predecessors()[next - n_ops];
        ++next;
        auto it = state.find(pred);
        if (it == state.end()) {
          state[pred] = kVisiting;
          stack.push_back({pred, 0});
        } else if (it->second == kVisiting) {
          return Fail(*pred, "is part of a cycle of operands and control dependencies");
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status VerifyEntryLayout() {
    const ModuleConfig& cfg = module_.config();
    if (!cfg.entry_computation_layout) return absl::OkStatus();
    const HloComputation* entry = module_.entry_computation();
    const ProgramShape& ps = *cfg.entry_computation_layout;
    if (static_cast<int64_t>(ps.parameters.size()) != entry->num_parameters()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "entry_computation_layout has ", ps.parameters.size(),
          " parameters but entry computation '", entry->name(), "' has ", entry->num_parameters()));
    }
    for (int64_t i = 0; i < entry->num_parameters(); ++i) {
      if (!shape_inference::Compatible(ps.parameters[i],
                                       entry->parameter_instruction(i)->shape())) {
        return absl::InvalidArgumentError(
            absl::StrCat("entry_computation_layout parameter ", i, " ",
                         ps.parameters[i].ToString(false), " does not match parameter shape ",
                         entry->parameter_instruction(i)->shape().ToString(false)));
      }
    }
    if (!shape_inference::Compatible(ps.result, entry->root_instruction()->shape())) {
      return absl::InvalidArgumentError(
          absl::StrCat("entry_computation_layout result ", ps.result.ToString(false),
                       " does not match the entry root shape ",
                       entry->root_instruction()->shape().ToString(false)));
    }
    return absl::OkStatus();
  }

  // input_output_alias and buffer_donor (XLA's aliasing design).
  absl::Status VerifyAliasing() {
    const ModuleConfig& cfg = module_.config();
    const HloComputation* entry = module_.entry_computation();
    const Shape& out = entry->root_instruction()->shape();
    absl::flat_hash_set<std::string> outputs, params;
    auto param_subshape = [&](int64_t number, const std::vector<int64_t>& index,
                              absl::string_view what) -> absl::StatusOr<const Shape*> {
      if (number < 0 || number >= entry->num_parameters()) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, " names parameter ", number, ", but the entry has ", entry->num_parameters()));
      }
      const Shape* s = SubshapeAt(entry->parameter_instruction(number)->shape(), index);
      if (!s) {
        return absl::InvalidArgumentError(absl::StrCat(what, " names index ", IndexString(index),
                                                       " which parameter ", number,
                                                       " does not have"));
      }
      return s;
    };
    for (const InputOutputAlias& a : cfg.input_output_alias) {
      const Shape* o = SubshapeAt(out, a.output_index);
      if (!o) {
        return absl::InvalidArgumentError(absl::StrCat("input_output_alias output index ",
                                                       IndexString(a.output_index),
                                                       " does not exist in ", out.ToString(false)));
      }
      ASSIGN_OR_RETURN(const Shape* p,
                       param_subshape(a.parameter_number, a.parameter_index, "input_output_alias"));
      if (!shape_inference::Compatible(*o, *p)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input_output_alias {", absl::StrJoin(a.output_index, ","), "}: output shape ",
            o->ToString(false), " differs from parameter ", a.parameter_number, " ",
            IndexString(a.parameter_index), " shape ", p->ToString(false)));
      }
      if (!o->IsArray()) {
        return absl::InvalidArgumentError(
            absl::StrCat("input_output_alias output ", IndexString(a.output_index),
                         " must be an array, not ", o->ToString(false)));
      }
      if (!outputs.insert(IndexString(a.output_index)).second) {
        return absl::InvalidArgumentError(absl::StrCat("input_output_alias aliases output ",
                                                       IndexString(a.output_index), " twice"));
      }
      std::string key = absl::StrCat(a.parameter_number, IndexString(a.parameter_index));
      if (!params.insert(key).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("input_output_alias uses parameter ", a.parameter_number, " ",
                         IndexString(a.parameter_index), " for two outputs"));
      }
    }
    absl::flat_hash_set<std::string> donors;
    for (const BufferDonor& d : cfg.buffer_donor) {
      ASSIGN_OR_RETURN(const Shape* p,
                       param_subshape(d.parameter_number, d.parameter_index, "buffer_donor"));
      if (!p->IsArray()) {
        return absl::InvalidArgumentError(absl::StrCat("buffer_donor (", d.parameter_number, ", ",
                                                       IndexString(d.parameter_index),
                                                       ") must be an array"));
      }
      std::string key = absl::StrCat(d.parameter_number, IndexString(d.parameter_index));
      if (params.contains(key)) {
        return absl::InvalidArgumentError(absl::StrCat("buffer_donor (", d.parameter_number, ", ",
                                                       IndexString(d.parameter_index),
                                                       ") is also in input_output_alias"));
      }
      if (!donors.insert(key).second) {
        return absl::InvalidArgumentError(absl::StrCat("buffer_donor lists (", d.parameter_number,
                                                       ", ", IndexString(d.parameter_index),
                                                       ") twice"));
      }
    }
    return absl::OkStatus();
  }

  const HloModule& module_;
  VerifyOptions options_;
};

}  // namespace

absl::Status VerifyModule(const HloModule& module, const VerifyOptions& options) {
  return Verifier(module, options).Run();
}

}  // namespace xlite
