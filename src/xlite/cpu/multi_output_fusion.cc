#include "xlite/cpu/multi_output_fusion.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "xlite/cpu/fusion.h"
#include "xlite/ir/computation.h"
#include "xlite/ir/name_uniquer.h"
#include "xlite/support/status.h"

namespace xlite::cpu {
namespace {

// A kLoop fusion with one array result that the kernel emitter computes
// element by element (its root is elementwise or moves data): merging it
// into a tuple-rooted fusion keeps the kernel it would get alone.
bool IsSibling(const HloInstruction& instr) {
  if (instr.opcode() != HloOpcode::kFusion || instr.attrs().fusion_kind != "kLoop" ||
      !instr.shape().IsArray() || !instr.control_predecessors().empty() ||
      !instr.control_successors().empty() || instr.called_computations().size() != 1 ||
      instr.called_computations()[0] == nullptr) {
    return false;
  }
  const HloInstruction* root = instr.called_computations()[0]->root_instruction();
  if (root == nullptr) return false;
  return (HloOpcodeTraits(root->opcode()) & kElementwise) ||
         IsElementalDataMovement(root->opcode());
}

int64_t Size(const HloInstruction& fusion) {
  return static_cast<int64_t>(fusion.called_computations()[0]->instructions().size());
}

class SiblingFusion {
 public:
  SiblingFusion(HloModule& module, HloComputation& computation, NameUniquer& names,
                NameUniquer& computation_names)
      : module_(module),
        computation_(computation),
        names_(names),
        computation_names_(computation_names) {}

  bool Run() {
    std::vector<HloInstruction*> order = computation_.MakeInstructionPostOrder();
    for (size_t i = 0; i < order.size(); ++i) position_[order[i]] = i;
    bool changed = false;
    for (HloInstruction* shared : order) {
      if (merged_.contains(shared)) continue;  // removed by an earlier merge
      std::vector<HloInstruction*> candidates;
      for (HloInstruction* user : shared->users()) {
        if (!merged_.contains(user) && IsSibling(*user) &&
            std::find(candidates.begin(), candidates.end(), user) == candidates.end()) {
          candidates.push_back(user);
        }
      }
      if (candidates.size() < 2) continue;
      std::sort(candidates.begin(), candidates.end(),
                [&](const HloInstruction* a, const HloInstruction* b) {
                  return position_.at(a) < position_.at(b);
                });
      // Greedy groups, in program order: a fusion joins the first group it
      // fits (same dimensions, no dependence either way, within the limits).
      std::vector<std::vector<HloInstruction*>> groups;
      for (HloInstruction* c : candidates) {
        bool placed = false;
        for (auto& group : groups) {
          if (Fits(group, c)) {
            group.push_back(c);
            placed = true;
            break;
          }
        }
        if (!placed) groups.push_back({c});
      }
      for (auto& group : groups) {
        if (group.size() < 2) continue;
        Merge(group);
        changed = true;
      }
    }
    if (!changed) return false;
    computation_.SetInstructionOrder(computation_.MakeInstructionPostOrder());
    return true;
  }

 private:
  // True if `to` depends on `from` through operands or control edges (both
  // in this computation). A path from `from` runs through instructions after
  // it in post order; instructions made by earlier merges (no position) are
  // walked through.
  bool Reaches(const HloInstruction* from, const HloInstruction* to) const {
    const size_t floor = position_.at(from);
    std::vector<const HloInstruction*> stack = {to};
    absl::flat_hash_set<const HloInstruction*> seen;
    while (!stack.empty()) {
      const HloInstruction* i = stack.back();
      stack.pop_back();
      if (i == from) return true;
      if (!seen.insert(i).second) continue;
      for (const HloInstruction* op : i->operands()) {
        auto it = position_.find(op);
        if (it == position_.end() || it->second >= floor) stack.push_back(op);
      }
      for (const HloInstruction* op : i->control_predecessors()) {
        auto it = position_.find(op);
        if (it == position_.end() || it->second >= floor) stack.push_back(op);
      }
    }
    return false;
  }

  bool Fits(const std::vector<HloInstruction*>& group, HloInstruction* c) const {
    if (c->shape().dimensions() != group[0]->shape().dimensions()) return false;
    int64_t size = Size(*c);
    absl::flat_hash_set<const HloInstruction*> operands(c->operands().begin(), c->operands().end());
    for (const HloInstruction* m : group) {
      if (Reaches(m, c) || Reaches(c, m)) return false;
      size += Size(*m);
      operands.insert(m->operands().begin(), m->operands().end());
    }
    return size <= LoopFusion::kMaxFusionSize &&
           static_cast<int64_t>(operands.size()) <= LoopFusion::kMaxFusionOperands;
  }

  // One fusion for the group: the union of their operands as parameters,
  // each member's body cloned onto them, a tuple of their roots.
  void Merge(const std::vector<HloInstruction*>& group) {
    FusedComputationBuilder builder(module_, computation_, names_, computation_names_);
    std::vector<HloInstruction*> roots;
    std::vector<Shape> shapes;
    for (HloInstruction* member : group) {
      const HloComputation& fused = *member->called_computations()[0];
      absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
      for (HloInstruction* instr : fused.MakeInstructionPostOrder()) {
        if (instr->opcode() == HloOpcode::kParameter) {
          map[instr] = builder.Parameter(member->operand(instr->attrs().parameter_number));
          continue;
        }
        std::vector<HloInstruction*> operands;
        for (const HloInstruction* op : instr->operands()) operands.push_back(map.at(op));
        map[instr] = builder.Clone(*instr, operands);
      }
      roots.push_back(map.at(fused.root_instruction()));
      shapes.push_back(member->shape());
    }
    auto tuple = std::make_unique<HloInstruction>(HloOpcode::kTuple, names_.Get("tuple"),
                                                  Shape::Tuple(shapes));
    for (HloInstruction* r : roots) tuple->AppendOperand(r);
    HloInstruction* merged =
        builder.Finish(builder.Add(std::move(tuple)), group[0]->attrs().metadata);
    for (size_t k = 0; k < group.size(); ++k) {
      HloInstruction* member = group[k];
      auto gte = std::make_unique<HloInstruction>(HloOpcode::kGetTupleElement,
                                                  names_.Get(member->name()), member->shape());
      gte->attrs().tuple_index = static_cast<int64_t>(k);
      gte->AppendOperand(merged);
      HloInstruction* element = computation_.AddInstruction(std::move(gte));
      const bool was_root = member == computation_.root_instruction();
      member->ReplaceAllUsesWith(element);
      if (was_root) computation_.set_root_instruction(element);
      HloComputation* old = member->called_computations()[0];
      const std::string name = member->name();
      merged_.insert(member);
      member->DetachFromOperands();
      computation_.RemoveInstruction(member);
      module_.RemoveComputation(old);
      // The element takes the fusion's name: its users read the same value.
      names_.Release(name);
      if (names_.TryTake(name)) {
        names_.Release(element->name());
        element->set_name(name);
      }
    }
  }

  HloModule& module_;
  HloComputation& computation_;
  NameUniquer& names_;
  NameUniquer& computation_names_;
  absl::flat_hash_map<const HloInstruction*, size_t> position_;
  absl::flat_hash_set<const HloInstruction*> merged_;  // removed: compared by address only
};

}  // namespace

absl::StatusOr<bool> MultiOutputFusion::Run(HloModule& module) {
  NameUniquer names = NameUniquer::ForInstructions(module);
  NameUniquer computation_names = NameUniquer::ForComputations(module);
  ASSIGN_OR_RETURN(std::vector<HloComputation*> computations, FusibleComputations(module));
  bool changed = false;
  for (HloComputation* computation : computations) {
    changed |= SiblingFusion(module, *computation, names, computation_names).Run();
  }
  return changed;
}

}  // namespace xlite::cpu
