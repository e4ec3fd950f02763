#include "xlite/passes/flatten_call_graph.h"

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace xlite {
namespace {

bool IsSequentialCaller(HloOpcode op) {
  return op == HloOpcode::kCall || op == HloOpcode::kWhile || op == HloOpcode::kConditional;
}

class Flattener {
 public:
  explicit Flattener(HloModule& module) : module_(module) {
    for (const auto& c : module.computations()) {
      computation_names_.insert(c->name());
      for (const auto& i : c->instructions()) instruction_names_.insert(i->name());
    }
  }

  absl::StatusOr<bool> Run() {
    HloComputation* entry = module_.entry_computation();
    if (entry == nullptr) return false;
    // A computation with a parallel call site (to_apply of reduce, map, ...)
    // is taken: each sequential site of it gets a clone.
    std::vector<HloComputation*> reachable;
    absl::flat_hash_set<HloComputation*> seen = {entry};
    for (std::deque<HloComputation*> queue = {entry}; !queue.empty(); queue.pop_front()) {
      reachable.push_back(queue.front());
      for (const auto& i : queue.front()->instructions()) {
        for (HloComputation* callee : i->called_computations()) {
          if (!IsSequentialCaller(i->opcode())) taken_.insert(callee);
          if (seen.insert(callee).second) queue.push_back(callee);
        }
      }
    }
    // The first sequential site of a computation keeps it; later ones take a
    // clone, whose own callees are handled when the clone is visited.
    bool changed = false;
    int64_t budget = 100000;  // clones; a call graph this size is not flattened
    std::deque<HloComputation*> work(reachable.begin(), reachable.end());
    for (; !work.empty(); work.pop_front()) {
      for (const auto& instr : work.front()->instructions()) {
        if (!IsSequentialCaller(instr->opcode())) continue;
        std::vector<HloComputation*> callees = instr->called_computations();
        for (HloComputation*& callee : callees) {
          if (taken_.insert(callee).second) continue;
          if (--budget < 0) {
            return absl::ResourceExhaustedError("flatten-call-graph: more than 100000 clones");
          }
          callee = Clone(*callee);
          taken_.insert(callee);
          work.push_back(callee);
          changed = true;
        }
        instr->set_called_computations(callees);
      }
    }
    return changed;
  }

 private:
  std::string Unique(absl::flat_hash_set<std::string>& names, const std::string& base) {
    std::string name = absl::StrCat(base, ".clone");
    for (int n = 1; names.contains(name); ++n) name = absl::StrCat(base, ".clone.", n);
    names.insert(name);
    return name;
  }

  // A copy of `original` placed right after it (fused computations inside
  // get their own copy: a fusion body belongs to one fusion instruction).
  HloComputation* Clone(const HloComputation& original) {
    auto copy = std::make_unique<HloComputation>(Unique(computation_names_, original.name()));
    copy->set_execution_thread(original.execution_thread());
    copy->set_is_async_computation(original.IsAsyncComputation());
    HloComputation* clone = module_.AddComputationAfter(std::move(copy), &original);
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
    for (const auto& instr : original.instructions()) {
      auto c = std::make_unique<HloInstruction>(
          instr->opcode(), Unique(instruction_names_, instr->name()), instr->shape());
      c->attrs() = instr->attrs();
      map[instr.get()] = clone->AddInstruction(std::move(c));
    }
    // Operands after all instructions exist: the list need not be in
    // definition order.
    for (const auto& instr : original.instructions()) {
      HloInstruction* c = map.at(instr.get());
      for (HloInstruction* op : instr->operands()) c->AppendOperand(map.at(op));
      for (HloInstruction* succ : instr->control_successors()) {
        if (map.contains(succ)) c->AddControlDependencyTo(map.at(succ));
      }
      std::vector<HloComputation*> callees = instr->called_computations();
      for (HloComputation*& callee : callees) {
        if (callee->fusion_instruction() == instr.get()) {
          callee = Clone(*callee);
          callee->set_fusion_instruction(c);
          taken_.insert(callee);
        }
      }
      c->set_called_computations(callees);
      if (instr->opcode() == HloOpcode::kParameter) {
        clone->SetParameter(instr->attrs().parameter_number, c);
      }
    }
    clone->set_root_instruction(map.at(original.root_instruction()));
    return clone;
  }

  HloModule& module_;
  absl::flat_hash_set<HloComputation*> taken_;
  absl::flat_hash_set<std::string> computation_names_;
  absl::flat_hash_set<std::string> instruction_names_;
};

}  // namespace

absl::StatusOr<bool> FlattenCallGraph::Run(HloModule& module) { return Flattener(module).Run(); }

}  // namespace xlite
