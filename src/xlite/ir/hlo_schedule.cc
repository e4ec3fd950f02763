#include "xlite/ir/hlo_schedule.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace xlite {

const std::vector<HloInstruction*>& HloSchedule::sequence(const HloComputation* computation) const {
  static const std::vector<HloInstruction*>* const kEmpty = new std::vector<HloInstruction*>();
  auto it = sequences_.find(computation);
  return it == sequences_.end() ? *kEmpty : it->second;
}

HloSchedule HloSchedule::FromInstructionOrder(
    absl::Span<const HloComputation* const> computations) {
  HloSchedule schedule;
  for (const HloComputation* computation : computations) {
    std::vector<HloInstruction*> order;
    order.reserve(computation->instructions().size());
    for (const auto& instr : computation->instructions()) order.push_back(instr.get());
    schedule.set_sequence(computation, std::move(order));
  }
  return schedule;
}

absl::Status HloSchedule::VerifySequence(const HloComputation& computation,
                                         absl::Span<HloInstruction* const> sequence) {
  auto error = [&](const std::string& what) {
    return absl::InvalidArgumentError(
        absl::StrCat("schedule of computation '", computation.name(), "': ", what));
  };
  if (static_cast<int64_t>(sequence.size()) != computation.instruction_count()) {
    return error(absl::StrCat("has ", sequence.size(), " instructions, the computation has ",
                              computation.instruction_count()));
  }
  absl::flat_hash_map<const HloInstruction*, int64_t> position;
  position.reserve(sequence.size());
  for (int64_t i = 0; i < static_cast<int64_t>(sequence.size()); ++i) {
    const HloInstruction* instr = sequence[i];
    if (instr == nullptr || instr->parent() != &computation) {
      return error(absl::StrCat(
          "position ", i, " holds ",
          instr ? "'" + instr->name() + "' of another computation" : "no instruction"));
    }
    if (!position.emplace(instr, i).second) {
      return error(absl::StrCat("'", instr->name(), "' appears twice"));
    }
  }
  for (int64_t i = 0; i < static_cast<int64_t>(sequence.size()); ++i) {
    const HloInstruction* instr = sequence[i];
    auto check = [&](const HloInstruction* before, const char* kind) -> absl::Status {
      if (before->parent() != &computation) return absl::OkStatus();
      auto it = position.find(before);
      if (it == position.end() || it->second > i) {
        return error(absl::StrCat("'", instr->name(), "' comes before its ", kind, " '",
                                  before->name(), "'"));
      }
      return absl::OkStatus();
    };
    for (const HloInstruction* operand : instr->operands()) {
      if (absl::Status s = check(operand, "operand"); !s.ok()) return s;
    }
    for (const HloInstruction* pred : instr->control_predecessors()) {
      if (absl::Status s = check(pred, "control predecessor"); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::Status HloSchedule::ApplyTo(HloModule& module) const {
  absl::flat_hash_map<const HloComputation*, HloComputation*> owned;
  for (const auto& c : module.computations()) owned[c.get()] = c.get();
  for (const auto& [computation, sequence] : sequences_) {
    if (!owned.contains(computation)) {
      return absl::InvalidArgumentError(absl::StrCat("schedule names computation '",
                                                     computation->name(),
                                                     "', which is not in module ", module.name()));
    }
    if (absl::Status s = VerifySequence(*computation, sequence); !s.ok()) return s;
  }
  for (const auto& [computation, sequence] : sequences_) {
    owned[computation]->SetInstructionOrder(sequence);  // verified above: cannot fail
  }
  module.config().is_scheduled = true;
  return absl::OkStatus();
}

}  // namespace xlite
