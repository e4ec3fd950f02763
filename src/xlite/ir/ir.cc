// Small out-of-line pieces of the IR classes.
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "xlite/ir/computation.h"
#include "xlite/ir/instruction.h"
#include "xlite/ir/module.h"

namespace xlite {

bool OpMetadata::empty() const { return *this == OpMetadata(); }

void HloInstruction::AppendOperand(HloInstruction* op) {
  operands_.push_back(op);
  // Users stay unique. Operands are appended while `this` is the newest user,
  // so an earlier use of `op` by `this` is always its last user.
  if (op->users_.empty() || op->users_.back() != this) op->users_.push_back(this);
}

void HloInstruction::DetachFromOperands() {
  for (HloInstruction* op : operands_) {
    auto& u = op->users_;
    u.erase(std::remove(u.begin(), u.end(), this), u.end());
  }
  operands_.clear();
}

void HloInstruction::ReplaceAllUsesWith(HloInstruction* replacement) {
  if (replacement == this) return;
  for (HloInstruction* user : users_) {
    for (HloInstruction*& op : user->operands_) {
      if (op == this) op = replacement;
    }
    auto& u = replacement->users_;
    if (std::find(u.begin(), u.end(), user) == u.end()) u.push_back(user);
  }
  users_.clear();
  if (parent_ != nullptr && parent_->root_instruction() == this) {
    parent_->set_root_instruction(replacement);
  }
}

void HloInstruction::ReplaceOperandWith(int64_t i, HloInstruction* replacement) {
  HloInstruction* old = operands_[i];
  if (old == replacement) return;
  operands_[i] = replacement;
  if (std::find(operands_.begin(), operands_.end(), old) == operands_.end()) {
    auto& u = old->users_;
    u.erase(std::remove(u.begin(), u.end(), this), u.end());
  }
  auto& u = replacement->users_;
  if (std::find(u.begin(), u.end(), this) == u.end()) u.push_back(this);
}

void HloInstruction::ReplaceUseWith(HloInstruction* user, HloInstruction* replacement) {
  if (replacement == this) return;
  for (int64_t i = 0; i < user->operand_count(); ++i) {
    if (user->operands_[i] == this) user->ReplaceOperandWith(i, replacement);
  }
}

void HloInstruction::DropControlDependencies() {
  for (HloInstruction* pred : control_preds_) {
    auto& s = pred->control_succs_;
    s.erase(std::remove(s.begin(), s.end(), this), s.end());
  }
  for (HloInstruction* succ : control_succs_) {
    auto& p = succ->control_preds_;
    p.erase(std::remove(p.begin(), p.end(), this), p.end());
  }
  control_preds_.clear();
  control_succs_.clear();
}

bool HloInstruction::HasSideEffect() const {
  switch (opcode_) {
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
    case HloOpcode::kInfeed:
    case HloOpcode::kOutfeed:
    case HloOpcode::kRng:
    case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kCollectivePermuteDone:
      return true;
    case HloOpcode::kCustomCall:
      return attrs_.custom_call_has_side_effect;
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllGather:
    case HloOpcode::kAllToAll:
    case HloOpcode::kReduceScatter:
      return attrs_.constrain_layout;
    default:
      break;
  }
  // Calls, loops, conditionals and async wrappers inherit from what they run.
  for (const HloComputation* c : called_) {
    for (const auto& i : c->instructions()) {
      if (i->HasSideEffect()) return true;
    }
  }
  return false;
}

void HloInstruction::AddControlDependencyTo(HloInstruction* successor) {
  if (std::find(control_succs_.begin(), control_succs_.end(), successor) != control_succs_.end()) {
    return;
  }
  control_succs_.push_back(successor);
  successor->control_preds_.push_back(this);
}

HloComputation* HloInstruction::async_wrapped_computation() const {
  if (!IsAsyncOpcode(opcode_)) return nullptr;
  const HloInstruction* start = this;
  while (start->opcode_ != HloOpcode::kAsyncStart) {
    if (start->operands_.empty()) return nullptr;
    start = start->operands_[0];
    if (!IsAsyncOpcode(start->opcode_)) return nullptr;
  }
  return start->called_.empty() ? nullptr : start->called_[0];
}

HloInstruction* HloInstruction::async_wrapped_instruction() const {
  HloComputation* c = async_wrapped_computation();
  return c ? c->root_instruction() : nullptr;
}

std::optional<HloOpcode> HloInstruction::async_wrapped_opcode() const {
  HloInstruction* w = async_wrapped_instruction();
  if (!w) return std::nullopt;
  return w->opcode();
}

HloInstruction* HloComputation::AddInstruction(std::unique_ptr<HloInstruction> instr) {
  instr->set_parent(this);
  instructions_.push_back(std::move(instr));
  return instructions_.back().get();
}

bool HloComputation::SetInstructionOrder(const std::vector<HloInstruction*>& order) {
  if (order.size() != instructions_.size()) return false;
  absl::flat_hash_map<const HloInstruction*, size_t> slot;
  slot.reserve(instructions_.size());
  for (size_t i = 0; i < instructions_.size(); ++i) slot[instructions_[i].get()] = i;
  std::vector<bool> taken(instructions_.size(), false);
  for (const HloInstruction* instr : order) {
    auto it = slot.find(instr);
    if (it == slot.end() || taken[it->second]) return false;
    taken[it->second] = true;
  }
  std::vector<std::unique_ptr<HloInstruction>> reordered;
  reordered.reserve(instructions_.size());
  for (const HloInstruction* instr : order) {
    reordered.push_back(std::move(instructions_[slot[instr]]));
  }
  instructions_ = std::move(reordered);
  return true;
}

bool HloComputation::MoveInstructionsBefore(const std::vector<HloInstruction*>& moved,
                                            const HloInstruction* anchor) {
  const size_t n = instructions_.size();
  const size_t k = moved.size();
  if (k == 0)
    return std::any_of(instructions_.begin(), instructions_.end(),
                       [&](const auto& i) { return i.get() == anchor; });
  bool last = k < n;
  for (size_t i = 0; last && i < k; ++i) last = instructions_[n - k + i].get() == moved[i];
  if (last) {
    const auto end = instructions_.end() - static_cast<std::ptrdiff_t>(k);
    const auto at =
        std::find_if(instructions_.begin(), end, [&](const auto& i) { return i.get() == anchor; });
    if (at == end) return false;
    std::rotate(at, end, instructions_.end());
    return true;
  }
  // Anywhere else: a whole new order (SetInstructionOrder refuses one that
  // lost or gained an instruction: a stranger among `moved`).
  const absl::flat_hash_set<const HloInstruction*> set(moved.begin(), moved.end());
  if (set.size() != k || set.contains(anchor)) return false;
  std::vector<HloInstruction*> order;
  order.reserve(n);
  bool anchored = false;
  for (const auto& instr : instructions_) {
    if (instr.get() == anchor) {
      order.insert(order.end(), moved.begin(), moved.end());
      anchored = true;
    }
    if (!set.contains(instr.get())) order.push_back(instr.get());
  }
  return anchored && SetInstructionOrder(order);
}

void HloComputation::RemoveInstruction(HloInstruction* instr) {
  instr->DetachFromOperands();
  instr->DropControlDependencies();
  auto it =
      std::find_if(instructions_.begin(), instructions_.end(),
                   [&](const std::unique_ptr<HloInstruction>& i) { return i.get() == instr; });
  if (it != instructions_.end()) instructions_.erase(it);
}

void HloComputation::RemoveInstructions(const std::vector<HloInstruction*>& instrs) {
  if (instrs.empty()) return;
  for (HloInstruction* instr : instrs) {
    instr->DetachFromOperands();
    instr->DropControlDependencies();
  }
  std::vector<HloInstruction*> sorted = instrs;
  std::sort(sorted.begin(), sorted.end());
  instructions_.erase(std::remove_if(instructions_.begin(), instructions_.end(),
                                     [&](const std::unique_ptr<HloInstruction>& i) {
                                       return std::binary_search(sorted.begin(), sorted.end(),
                                                                 i.get());
                                     }),
                      instructions_.end());
}

std::vector<HloInstruction*> HloComputation::MakeInstructionPostOrder() const {
  std::vector<HloInstruction*> order;
  order.reserve(instructions_.size());
  absl::flat_hash_set<const HloInstruction*> seen;
  for (const auto& start : instructions_) {
    if (!seen.insert(start.get()).second) continue;
    std::vector<std::pair<HloInstruction*, size_t>> stack = {{start.get(), 0}};
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const size_t operands = node->operand_count();
      if (next == operands + node->control_predecessors().size()) {
        order.push_back(node);
        stack.pop_back();
        continue;
      }
      HloInstruction* pred =
          next < operands ? node->operand(next) : node->control_predecessors()[next - operands];
      ++next;
      // Operands from another computation (malformed input) are not ours to order.
      if (pred->parent() == this && seen.insert(pred).second) stack.push_back({pred, 0});
    }
  }
  return order;
}

void HloComputation::SetParameter(int64_t number, HloInstruction* p) {
  if (static_cast<int64_t>(parameters_.size()) <= number) parameters_.resize(number + 1, nullptr);
  parameters_[number] = p;
}

HloComputation* HloModule::AddComputation(std::unique_ptr<HloComputation> c) {
  c->set_parent(this);
  computations_.push_back(std::move(c));
  return computations_.back().get();
}

HloComputation* HloModule::AddComputationAfter(std::unique_ptr<HloComputation> c,
                                               const HloComputation* after) {
  c->set_parent(this);
  auto it =
      std::find_if(computations_.begin(), computations_.end(),
                   [&](const std::unique_ptr<HloComputation>& x) { return x.get() == after; });
  if (it != computations_.end()) ++it;
  return computations_.insert(it, std::move(c))->get();
}

void HloModule::RemoveComputation(HloComputation* computation) {
  auto it = std::find_if(
      computations_.begin(), computations_.end(),
      [&](const std::unique_ptr<HloComputation>& c) { return c.get() == computation; });
  if (it != computations_.end() && it->get() != entry_) computations_.erase(it);
}

void HloModule::set_entry_computation(HloComputation* e) {
  if (entry_) entry_->set_is_entry(false);
  entry_ = e;
  if (e) e->set_is_entry(true);
}

HloComputation* HloModule::GetComputationWithName(absl::string_view name) const {
  for (const auto& c : computations_) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

ProgramShape HloModule::ComputeEntryComputationLayout() const {
  if (config_.entry_computation_layout) return *config_.entry_computation_layout;
  ProgramShape ps;
  if (!entry_) return ps;
  for (HloInstruction* p : entry_->parameter_instructions()) {
    ps.parameters.push_back(p ? p->shape() : Shape());
  }
  if (entry_->root_instruction()) ps.result = entry_->root_instruction()->shape();
  return ps;
}

}  // namespace xlite
