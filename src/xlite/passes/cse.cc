#include "xlite/passes/cse.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "xlite/text/printer.h"

namespace xlite {
namespace {

bool IsCommutative(const HloInstruction& i) {
  switch (i.opcode()) {
    case HloOpcode::kAdd:
    case HloOpcode::kMultiply:
    case HloOpcode::kAnd:
    case HloOpcode::kOr:
    case HloOpcode::kXor:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
      return true;
    case HloOpcode::kCompare:
      return i.attrs().comparison_direction == ComparisonDirection::kEq ||
             i.attrs().comparison_direction == ComparisonDirection::kNe;
    default:
      return false;
  }
}

// Everything that decides equality, as text: the short form without the name
// ("f32[2]{0} add(a, b), ..."), with commutative operands sorted. Operand
// names identify operands because earlier duplicates are already replaced.
// Metadata is not part of the short form, as XLA's CSE ignores it too.
// Constants are keyed by shape and raw bytes: printing a large literal costs
// far more than copying it. (Equal bytes are equal values, bit for bit, so
// NaNs with the same payload merge and 0.0 and -0.0 stay apart, as in XLA.)
std::string Key(const HloInstruction& instr) {
  if (instr.opcode() == HloOpcode::kConstant && instr.attrs().literal &&
      !instr.attrs().literal->elided() && instr.shape().IsArray() &&
      instr.attrs().sharding == std::nullopt) {
    const std::vector<uint8_t>& bytes = instr.attrs().literal->raw_data();
    return absl::StrCat(
        "constant ", instr.shape().ToString(), " ",
        absl::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }
  std::string text = PrintInstruction(instr, PrintOptions::Short());
  const size_t eq = text.find(" = ");
  if (eq != std::string::npos) text = text.substr(eq + 3);
  if (IsCommutative(instr) && instr.operand_count() == 2 &&
      instr.operand(1)->name() < instr.operand(0)->name()) {
    const std::string& a = instr.operand(0)->name();
    const std::string& b = instr.operand(1)->name();
    const std::string written = absl::StrCat("(", a, ", ", b, ")");
    const size_t at = text.find(written);
    if (at != std::string::npos)
      text.replace(at, written.size(), absl::StrCat("(", b, ", ", a, ")"));
  }
  return text;
}

bool Eligible(const HloInstruction& instr) {
  return instr.opcode() != HloOpcode::kParameter && !instr.HasSideEffect() &&
         instr.control_predecessors().empty() && instr.control_successors().empty();
}

}  // namespace

absl::StatusOr<bool> HloCse::Run(HloModule& module) {
  bool changed = false;
  for (const auto& computation : module.computations()) {
    absl::flat_hash_map<std::string, HloInstruction*> seen;
    std::vector<HloInstruction*> duplicates;
    for (HloInstruction* instr : computation->MakeInstructionPostOrder()) {
      if (!Eligible(*instr)) continue;
      auto [it, inserted] = seen.emplace(Key(*instr), instr);
      if (inserted) continue;
      instr->ReplaceAllUsesWith(it->second);
      duplicates.push_back(instr);
    }
    computation->RemoveInstructions(duplicates);
    changed |= !duplicates.empty();
  }
  return changed;
}

}  // namespace xlite
