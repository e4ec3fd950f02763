#include "xlite/passes/tuple_simplifier.h"

#include <vector>

namespace xlite {
namespace {

bool SameSharding(const HloInstruction& a, const HloInstruction& b) {
  // Folding must not drop or change a sharding annotation.
  if (!a.attrs().sharding.has_value()) return true;
  return b.attrs().sharding.has_value() && *a.attrs().sharding == *b.attrs().sharding;
}

bool InUse(const HloInstruction& instr) {
  return !instr.users().empty() || instr.parent()->root_instruction() == &instr;
}

// gte(tuple(a0..an), i) -> ai, or nullptr.
HloInstruction* FoldGte(HloInstruction& gte) {
  HloInstruction* tuple = gte.operand(0);
  if (tuple->opcode() != HloOpcode::kTuple) return nullptr;
  const int64_t i = gte.attrs().tuple_index;
  if (i < 0 || i >= tuple->operand_count()) return nullptr;
  HloInstruction* element = tuple->operand(i);
  if (!(element->shape() == gte.shape()) || !SameSharding(gte, *element)) return nullptr;
  return element;
}

// tuple(gte(t,0), ..., gte(t,n-1)) -> t, or nullptr.
HloInstruction* FoldTuple(HloInstruction& tuple) {
  if (tuple.operand_count() == 0) return nullptr;
  HloInstruction* source = nullptr;
  for (int64_t i = 0; i < tuple.operand_count(); ++i) {
    const HloInstruction* op = tuple.operand(i);
    if (op->opcode() != HloOpcode::kGetTupleElement || op->attrs().tuple_index != i) return nullptr;
    if (source == nullptr) source = op->operand(0);
    if (op->operand(0) != source) return nullptr;
  }
  if (!source->shape().IsTuple() || source->shape().tuple_shapes_size() != tuple.operand_count() ||
      !(source->shape() == tuple.shape()) || !SameSharding(tuple, *source)) {
    return nullptr;
  }
  return source;
}

bool SimplifyComputation(HloComputation& computation) {
  bool changed = false;
  bool progress = true;
  while (progress) {
    progress = false;
    std::vector<HloInstruction*> instrs;
    for (const auto& i : computation.instructions()) instrs.push_back(i.get());
    for (HloInstruction* instr : instrs) {
      if (!InUse(*instr)) continue;
      HloInstruction* replacement = nullptr;
      if (instr->opcode() == HloOpcode::kGetTupleElement) {
        replacement = FoldGte(*instr);
      } else if (instr->opcode() == HloOpcode::kTuple) {
        replacement = FoldTuple(*instr);
      }
      if (replacement == nullptr || replacement == instr) continue;
      instr->ReplaceAllUsesWith(replacement);
      progress = changed = true;
    }
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> TupleSimplifier::Run(HloModule& module) {
  bool changed = false;
  for (const auto& c : module.computations()) changed |= SimplifyComputation(*c);
  return changed;
}

}  // namespace xlite
