// Small out-of-line pieces of the IR classes.
#include <algorithm>

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

void HloComputation::SetParameter(int64_t number, HloInstruction* p) {
  if (static_cast<int64_t>(parameters_.size()) <= number) parameters_.resize(number + 1, nullptr);
  parameters_[number] = p;
}

HloComputation* HloModule::AddComputation(std::unique_ptr<HloComputation> c) {
  c->set_parent(this);
  computations_.push_back(std::move(c));
  return computations_.back().get();
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
