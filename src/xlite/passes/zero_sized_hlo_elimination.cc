#include "xlite/passes/zero_sized_hlo_elimination.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace xlite {
namespace {

// Computations reachable through fusion or async ops' called computations
// (and everything those call in turn).
absl::flat_hash_set<const HloComputation*> FusionAndAsyncComputations(const HloModule& module) {
  absl::flat_hash_set<const HloComputation*> out;
  std::vector<const HloComputation*> stack;
  for (const auto& c : module.computations()) {
    if (c->fusion_instruction() != nullptr || c->IsAsyncComputation()) stack.push_back(c.get());
    for (const auto& i : c->instructions()) {
      if (i->opcode() == HloOpcode::kFusion || IsAsyncOpcode(i->opcode())) {
        for (const HloComputation* callee : i->called_computations()) stack.push_back(callee);
      }
    }
  }
  while (!stack.empty()) {
    const HloComputation* c = stack.back();
    stack.pop_back();
    if (!out.insert(c).second) continue;
    for (const auto& i : c->instructions()) {
      for (const HloComputation* callee : i->called_computations()) stack.push_back(callee);
    }
  }
  return out;
}

bool Replaceable(const HloInstruction& instr) {
  const Shape& shape = instr.shape();
  return shape.IsArray() && shape.is_static() && shape.ElementCount() == 0 &&
         instr.opcode() != HloOpcode::kParameter && instr.opcode() != HloOpcode::kConstant &&
         !instr.HasSideEffect() && instr.control_predecessors().empty() &&
         instr.control_successors().empty();
}

}  // namespace

absl::StatusOr<bool> ZeroSizedHloElimination::Run(HloModule& module) {
  const absl::flat_hash_set<const HloComputation*> skip = FusionAndAsyncComputations(module);
  absl::flat_hash_set<std::string> names;
  for (const auto& c : module.computations()) {
    for (const auto& i : c->instructions()) names.insert(i->name());
  }
  bool changed = false;
  for (const auto& c : module.computations()) {
    if (skip.contains(c.get())) continue;
    std::vector<HloInstruction*> targets;
    for (const auto& i : c->instructions()) {
      // Dead ones are dce's; replacing them would only add constants.
      if (Replaceable(*i) && (!i->users().empty() || c->root_instruction() == i.get())) {
        targets.push_back(i.get());
      }
    }
    for (HloInstruction* instr : targets) {
      Shape shape = instr->shape();
      shape.SetDefaultLayoutIfMissing();
      std::string name = absl::StrCat(instr->name(), ".empty");
      for (int n = 1; names.contains(name); ++n) name = absl::StrCat(instr->name(), ".empty", n);
      names.insert(name);
      auto constant = std::make_unique<HloInstruction>(HloOpcode::kConstant, name, shape);
      constant->attrs().literal = Literal(shape);
      constant->attrs().metadata = instr->attrs().metadata;
      constant->attrs().sharding = instr->attrs().sharding;
      HloInstruction* added = c->AddInstruction(std::move(constant));
      instr->ReplaceAllUsesWith(added);
      changed = true;
    }
  }
  return changed;
}

}  // namespace xlite
