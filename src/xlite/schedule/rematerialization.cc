#include "xlite/schedule/rematerialization.h"

#include <algorithm>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "xlite/analysis/hlo_alias_analysis.h"
#include "xlite/analysis/hlo_live_range.h"
#include "xlite/analysis/shape_util.h"
#include "xlite/ir/computation.h"
#include "xlite/schedule/schedule_module.h"
#include "xlite/support/status.h"

namespace xlite {
namespace {

constexpr int kMaxFusedInstructions = 16;

std::string Where(const HloInstruction& i) {
  return absl::StrCat("%", i.name(), " in %", i.parent()->name());
}

// Data movement and deterministic elementwise math without callees.
bool IsCheapOpcode(HloOpcode op) {
  switch (op) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kIota:
    case HloOpcode::kConstant:
    case HloOpcode::kReshape:
    case HloOpcode::kTranspose:
    case HloOpcode::kSlice:
    case HloOpcode::kPad:
    case HloOpcode::kConcatenate:
    case HloOpcode::kReverse:
    case HloOpcode::kConvert:
    case HloOpcode::kBitcastConvert:
      return true;
    default:
      return IsElementwiseOpcode(op);
  }
}

bool IsCheapLeaf(const HloInstruction& i) {
  const uint32_t traits = HloOpcodeTraits(i.opcode());
  return IsCheapOpcode(i.opcode()) && !(traits & (kSideEffect | kCollective)) &&
         !i.HasSideEffect() && i.called_computations().empty() && i.shape().IsArray();
}

// The fused computation of a kLoop fusion of at most kMaxFusedInstructions
// cheap ops; nullptr otherwise.
const HloComputation* CheapFusionBody(const HloInstruction& i) {
  if (i.opcode() != HloOpcode::kFusion || i.attrs().fusion_kind != "kLoop" ||
      i.called_computations().size() != 1 || !i.shape().IsArray()) {
    return nullptr;
  }
  const HloComputation* body = i.called_computations()[0];
  int count = 0;
  for (const auto& f : body->instructions()) {
    if (f->opcode() == HloOpcode::kParameter) continue;
    if (!IsCheapLeaf(*f) || ++count > kMaxFusedInstructions) return nullptr;
  }
  return body;
}

bool IsRematerializable(const HloInstruction& i) {
  if (i.opcode() == HloOpcode::kFusion) return CheapFusionBody(i) != nullptr;
  return IsCheapLeaf(i);
}

int64_t ElementwiseFlops(const HloInstruction& i) {
  const bool math = IsElementwiseOpcode(i.opcode()) && i.opcode() != HloOpcode::kConvert &&
                    i.opcode() != HloOpcode::kBitcastConvert && i.opcode() != HloOpcode::kCopy;
  return math && i.shape().IsArray() ? i.shape().ElementCount() : 0;
}

int64_t Flops(const HloInstruction& i) {
  if (const HloComputation* body = CheapFusionBody(i)) {
    int64_t flops = 0;
    for (const auto& f : body->instructions()) flops += ElementwiseFlops(*f);
    return flops;
  }
  return ElementwiseFlops(i);
}

int64_t BytesAccessed(const HloInstruction& i) {
  int64_t bytes = ShapeSizeBytes(i.shape());
  for (const HloInstruction* op : i.operands()) bytes += ShapeSizeBytes(op->shape());
  return bytes;
}

struct Candidate {
  HloInstruction* instruction = nullptr;
  std::vector<HloInstruction*> late_users;
  bool moved = false;  // no earlier user
  int64_t net_bytes = 0;
  int64_t flops = 0;
};

// One round's analyses of the module as it is now.
struct Analyses {
  std::unique_ptr<HloAliasAnalysis> alias;
  HloSchedule schedule;
  std::unique_ptr<HloLiveRange> live;

  static absl::StatusOr<Analyses> Run(const HloModule& module) {
    Analyses a;
    ASSIGN_OR_RETURN(a.alias, HloAliasAnalysis::Run(module));
    a.schedule = HloSchedule::FromInstructionOrder(
        ScheduledComputations(a.alias->dataflow_analysis().call_graph()));
    ASSIGN_OR_RETURN(a.live, HloLiveRange::Run(a.schedule, *a.alias));
    return a;
  }

  const HloBuffer& BufferOf(const HloValue& v) const { return alias->GetBufferContainingValue(v); }
  const LiveRange* RangeOf(const HloBuffer& b) const { return live->buffer_live_range(b); }
  bool LiveAt(const HloBuffer& b, int64_t t) const {
    const LiveRange* r = RangeOf(b);
    return r != nullptr && r->start <= t && t <= r->end;
  }
};

WorkingSet ComputeLargestWorkingSet(const Analyses& a) {
  const HloDataflowAnalysis& df = a.alias->dataflow_analysis();
  std::vector<std::pair<int32_t, HloBuffer::Id>> touched;  // (instruction id, buffer)
  for (const auto& value : df.values()) {
    const HloBuffer& buffer = a.BufferOf(*value);
    if (a.RangeOf(buffer) == nullptr) continue;
    for (const HloUse& use : value->uses()) {
      touched.push_back({df.instruction_id(use.instruction), buffer.id()});
    }
    for (const HloPosition& p : value->positions()) {
      touched.push_back({df.instruction_id(p.instruction), buffer.id()});
    }
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  WorkingSet best;
  // Entry parameters live from the start to the end (not donated ones) in
  // every schedule; outputs from their definition to the end.
  std::vector<bool> parameter(a.alias->buffer_count(), false);
  int64_t parameter_bytes = 0;
  const HloComputation* entry = a.alias->module().entry_computation();
  for (const HloBuffer& buffer : a.alias->buffers()) {
    const LiveRange* r = a.RangeOf(buffer);
    if (r == nullptr || r->end < a.live->schedule_end_time()) continue;
    best.resident_bytes += a.live->buffer_size(buffer);
    for (const HloValue* v : buffer.values()) {
      const HloInstruction* d = v->defining_instruction();
      if (d->opcode() == HloOpcode::kParameter && d->parent() == entry && r->start == 0) {
        parameter[buffer.id()] = true;
      }
    }
    if (parameter[buffer.id()]) parameter_bytes += a.live->buffer_size(buffer);
  }
  for (size_t k = 0; k < touched.size();) {
    const int32_t id = touched[k].first;
    int64_t bytes = 0, others = 0;
    for (; k < touched.size() && touched[k].first == id; ++k) {
      const int64_t size = a.live->buffer_size(a.alias->GetBuffer(touched[k].second));
      bytes += size;
      if (!parameter[touched[k].second]) others += size;
    }
    const HloInstruction* instr = id < 0 ? nullptr : df.instruction(id);
    if (instr == nullptr || a.live->instruction_time(instr) < 0) continue;
    if (bytes > best.bytes) {
      best.bytes = bytes;
      best.instruction = Where(*instr);
    }
    best.bound_bytes = std::max(best.bound_bytes, others + parameter_bytes);
  }
  best.bound_bytes = std::max(best.bound_bytes, best.resident_bytes);
  return best;
}

class Rematerializer {
 public:
  Rematerializer(HloModule& module, const RematerializationOptions& options)
      : module_(module), options_(options) {
    for (const auto& c : module.computations()) {
      computation_names_.insert(c->name());
      for (const auto& i : c->instructions()) instruction_names_.insert(i->name());
    }
  }

  absl::StatusOr<RematerializationResult> Run() {
    RematerializationResult result;
    result.limit_bytes = options_.memory_limit_bytes;
    ASSIGN_OR_RETURN(Analyses a, Analyses::Run(module_));
    result.peak_before = a.live->peak_bytes();
    result.floor = ComputeLargestWorkingSet(a);
    while (options_.memory_limit_bytes > 0 && a.live->peak_bytes() > options_.memory_limit_bytes &&
           result.rounds < options_.max_rounds) {
      const int64_t t = a.live->peak_time();
      std::vector<Candidate> chosen =
          Choose(a, t, a.live->peak_bytes() - options_.memory_limit_bytes);
      if (chosen.empty()) break;
      ++result.rounds;
      for (Candidate& c : chosen) result.recomputed.push_back(Apply(c, t));
      ASSIGN_OR_RETURN(a, Analyses::Run(module_));
    }
    result.peak_after = a.live->peak_bytes();
    const auto& sequence = a.live->flattened_instruction_sequence();
    const int64_t t = a.live->peak_time();
    if (t >= 0 && t < static_cast<int64_t>(sequence.size())) {
      result.peak_instruction = Where(*sequence[t]);
    } else {
      result.peak_instruction = "the end of the program";
    }
    result.met =
        options_.memory_limit_bytes <= 0 || result.peak_after <= options_.memory_limit_bytes;
    return result;
  }

 private:
  // The candidates live across time t, best first, taken until they save
  // `need` bytes; none reads another's result.
  std::vector<Candidate> Choose(const Analyses& a, int64_t t, int64_t need) {
    std::vector<Candidate> candidates;
    for (const HloBuffer& buffer : a.alias->buffers()) {
      if (buffer.values().size() != 1 || !a.LiveAt(buffer, t)) continue;
      std::optional<Candidate> c = Evaluate(a, *buffer.values()[0], t);
      if (c.has_value()) candidates.push_back(*std::move(c));
    }
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& x, const Candidate& y) {
      if (x.net_bytes != y.net_bytes) return x.net_bytes > y.net_bytes;
      if (x.flops != y.flops) return x.flops < y.flops;
      return x.instruction->name() < y.instruction->name();
    });
    std::vector<Candidate> chosen;
    absl::flat_hash_set<const HloInstruction*> taken;
    int64_t saved = 0;
    for (Candidate& c : candidates) {
      if (saved >= need) break;
      bool related = false;
      for (const HloInstruction* op : c.instruction->operands()) related |= taken.contains(op);
      for (const Candidate& other : chosen) {
        for (const HloInstruction* op : other.instruction->operands()) {
          related |= op == c.instruction;
        }
      }
      if (related) continue;
      taken.insert(c.instruction);
      saved += c.net_bytes;
      chosen.push_back(std::move(c));
    }
    return chosen;
  }

  // A candidate if `value` may be recomputed after time t and that saves
  // bytes at t.
  std::optional<Candidate> Evaluate(const Analyses& a, const HloValue& value, int64_t t) {
    HloInstruction* d = value.defining_instruction();
    const HloComputation* c = d->parent();
    const int64_t defined = a.live->instruction_time(d);
    if (defined < 0 || defined >= t || !value.defining_index().empty() || c->IsAsyncComputation() ||
        c->root_instruction() == d || !d->control_predecessors().empty() ||
        !d->control_successors().empty() || !IsRematerializable(*d)) {
      return std::nullopt;
    }
    auto origin = origin_.find(d->name());
    if (clones_[origin == origin_.end() ? d->name() : origin->second] >=
        options_.max_clones_per_value) {
      return std::nullopt;
    }
    // Read only directly; held only by tuples that read it directly.
    for (const HloUse& use : value.uses()) {
      if (!use.operand_index.empty() || use.instruction->operand(use.operand_number) != d) {
        return std::nullopt;
      }
    }
    for (const HloPosition& p : value.positions()) {
      if (p.instruction == d) continue;
      if (p.instruction->opcode() != HloOpcode::kTuple || p.index.size() != 1 ||
          p.instruction->operand(p.index[0]) != d) {
        return std::nullopt;
      }
    }
    // Where computation c is at time t: the first of its instructions at t
    // or later (an instruction that runs a callee comes after the callee).
    const std::vector<HloInstruction*>& sequence = a.schedule.sequence(c);
    auto site = std::lower_bound(
        sequence.begin(), sequence.end(), t,
        [&](const HloInstruction* i, int64_t time) { return a.live->instruction_time(i) < time; });
    if (site == sequence.end()) return std::nullopt;
    const int64_t site_time = a.live->instruction_time(*site);
    Candidate candidate;
    candidate.instruction = d;
    bool early = false;
    for (HloInstruction* user : d->users()) {
      const int64_t time = a.live->instruction_time(user);
      if (time < 0) return std::nullopt;
      if (time < t) {
        early = true;
      } else if (time > site_time) {
        candidate.late_users.push_back(user);
      } else {
        return std::nullopt;  // read at the peak itself
      }
    }
    if (candidate.late_users.empty()) return std::nullopt;
    candidate.moved = !early;
    // Operands must not be written in place later, and those not live at t
    // anyway would be kept alive over it.
    const HloDataflowAnalysis& df = a.alias->dataflow_analysis();
    int64_t kept = 0;
    absl::flat_hash_set<HloBuffer::Id> counted;
    for (const HloInstruction* op : d->operands()) {
      if (!op->shape().IsArray()) return std::nullopt;
      const HloValue* v = df.GetValueAt(op);
      if (v == nullptr) return std::nullopt;
      const HloBuffer& buffer = a.BufferOf(*v);
      const LiveRange* range = a.RangeOf(buffer);
      if (buffer.values().size() != 1 || range == nullptr) return std::nullopt;
      if (range->end < t && counted.insert(buffer.id()).second) kept += a.live->buffer_size(buffer);
    }
    candidate.net_bytes = a.live->buffer_size(a.BufferOf(value)) - kept;
    if (candidate.net_bytes <= 0) return std::nullopt;
    candidate.flops = Flops(*d);
    return candidate;
  }

  std::string UniqueName(absl::flat_hash_set<std::string>& names, const std::string& base) {
    std::string name = base;
    for (int n = 1; names.contains(name); ++n) name = absl::StrCat(base, ".", n);
    names.insert(name);
    return name;
  }

  // A copy of a cheap fusion's body (parameters and cheap leaves only) for
  // the clone `fusion`.
  HloComputation* CloneFusionBody(const HloComputation& body, HloInstruction* fusion) {
    auto copy = std::make_unique<HloComputation>(UniqueName(computation_names_, body.name()));
    copy->set_execution_thread(body.execution_thread());
    HloComputation* clone = module_.AddComputationAfter(std::move(copy), &body);
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
    for (const auto& instr : body.instructions()) {
      auto c = std::make_unique<HloInstruction>(
          instr->opcode(), UniqueName(instruction_names_, instr->name()), instr->shape());
      c->attrs() = instr->attrs();
      map[instr.get()] = clone->AddInstruction(std::move(c));
    }
    for (const auto& instr : body.instructions()) {
      HloInstruction* c = map.at(instr.get());
      for (HloInstruction* op : instr->operands()) c->AppendOperand(map.at(op));
      if (instr->opcode() == HloOpcode::kParameter) {
        clone->SetParameter(instr->attrs().parameter_number, c);
      }
    }
    clone->set_root_instruction(map.at(body.root_instruction()));
    clone->set_fusion_instruction(fusion);
    return clone;
  }

  Recomputation Apply(const Candidate& c, int64_t t) {
    HloInstruction* d = c.instruction;
    HloComputation* computation = d->parent();
    auto origin_it = origin_.find(d->name());
    const std::string origin = origin_it == origin_.end() ? d->name() : origin_it->second;
    Recomputation r;
    r.instruction = d->name();
    r.computation = computation->name();
    r.moved = c.moved;
    r.peak_time = t;
    r.bytes_freed = c.net_bytes;
    r.flops = c.flops;
    r.bytes_accessed = BytesAccessed(*d);

    auto instr = std::make_unique<HloInstruction>(
        d->opcode(), UniqueName(instruction_names_, absl::StrCat(origin, ".remat")), d->shape());
    instr->attrs() = d->attrs();
    for (HloInstruction* op : d->operands()) instr->AppendOperand(op);
    HloInstruction* clone = computation->AddInstruction(std::move(instr));
    if (const HloComputation* body = CheapFusionBody(*d)) {
      clone->set_called_computations({CloneFusionBody(*body, clone)});
    }
    r.clone = clone->name();
    origin_[clone->name()] = origin;
    ++clones_[origin];

    absl::flat_hash_set<const HloInstruction*> late(c.late_users.begin(), c.late_users.end());
    for (HloInstruction* user : c.late_users) d->ReplaceUseWith(user, clone);
    // The order stays a schedule: the clone goes right before the first
    // later user (after its operands, which came before d).
    std::vector<HloInstruction*> order;
    order.reserve(computation->instructions().size());
    bool placed = false;
    const bool remove = d->users().empty();
    for (const auto& i : computation->instructions()) {
      if (i.get() == clone) continue;
      if (!placed && late.contains(i.get())) {
        order.push_back(clone);
        placed = true;
      }
      order.push_back(i.get());
    }
    computation->SetInstructionOrder(order);  // holds every instruction once
    if (remove) {
      const HloComputation* body = CheapFusionBody(*d);
      computation->RemoveInstruction(d);
      if (body != nullptr) module_.RemoveComputation(const_cast<HloComputation*>(body));
    }
    return r;
  }

  HloModule& module_;
  const RematerializationOptions& options_;
  absl::flat_hash_set<std::string> computation_names_, instruction_names_;
  absl::flat_hash_map<std::string, std::string> origin_;  // clone -> original
  absl::flat_hash_map<std::string, int> clones_;          // original -> clones made
};

std::string Bytes(int64_t b) { return absl::StrCat(b, " bytes"); }

}  // namespace

int64_t RematerializationResult::total_flops() const {
  int64_t total = 0;
  for (const Recomputation& r : recomputed) total += r.moved ? 0 : r.flops;
  return total;
}

int64_t RematerializationResult::total_bytes_accessed() const {
  int64_t total = 0;
  for (const Recomputation& r : recomputed) total += r.moved ? 0 : r.bytes_accessed;
  return total;
}

std::string RematerializationResult::Summary() const {
  int moved = 0;
  for (const Recomputation& r : recomputed) moved += r.moved ? 1 : 0;
  std::string out =
      absl::StrCat("rematerialization: limit ", Bytes(limit_bytes), "; peak ", Bytes(peak_before),
                   " -> ", Bytes(peak_after), met ? " (met)" : " (NOT met)", " in ", rounds,
                   " round", rounds == 1 ? "" : "s", "; ", recomputed.size() - moved,
                   " recomputed, ", moved, " moved; extra cost ", total_flops(), " FLOPs, ",
                   Bytes(total_bytes_accessed()), " accessed; largest instruction working set ",
                   Bytes(floor.bytes), " (", floor.instruction, "); parameters and outputs ",
                   Bytes(floor.resident_bytes), "; lower bound ", Bytes(floor.bound_bytes), "\n");
  for (const Recomputation& r : recomputed) {
    absl::StrAppend(&out, "  %", r.instruction, " in %", r.computation,
                    r.moved ? ": moved to %" : ": recomputed as %", r.clone,
                    " before its later uses; ", Bytes(r.bytes_freed), " freed at the peak (time ",
                    r.peak_time, "); ", r.moved ? 0 : r.flops, " FLOPs, ",
                    Bytes(r.moved ? 0 : r.bytes_accessed), " accessed\n");
  }
  return out;
}

absl::StatusOr<WorkingSet> LargestWorkingSet(const HloModule& module) {
  ASSIGN_OR_RETURN(Analyses a, Analyses::Run(module));
  return ComputeLargestWorkingSet(a);
}

absl::StatusOr<RematerializationResult> Rematerialize(HloModule& module,
                                                      const RematerializationOptions& options) {
  if (options.memory_limit_bytes < 0) {
    return InvalidArgument("memory limit ", options.memory_limit_bytes, " bytes is negative");
  }
  ASSIGN_OR_RETURN(RematerializationResult result, Rematerializer(module, options).Run());
  if (!result.met && options.error_if_not_met) {
    return absl::ResourceExhaustedError(
        absl::StrCat("module ", module.name(), ": the memory limit of ", Bytes(result.limit_bytes),
                     " cannot be met: the schedule's peak is ", Bytes(result.peak_after), " at ",
                     result.peak_instruction, " after rematerialization (",
                     Bytes(result.peak_before), " before; ", result.recomputed.size(),
                     " values recomputed or moved); the largest "
                     "single instruction's working set (operands + outputs) is ",
                     Bytes(result.floor.bytes), " (", result.floor.instruction,
                     ") and the entry's parameters and outputs, live when it ends, take ",
                     Bytes(result.floor.resident_bytes),
                     "; with the parameters, live throughout, "
                     "no schedule goes below ",
                     Bytes(result.floor.bound_bytes)));
  }
  return result;
}

}  // namespace xlite
