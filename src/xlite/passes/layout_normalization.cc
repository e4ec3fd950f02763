#include "xlite/passes/layout_normalization.h"

#include <numeric>
#include <optional>
#include <vector>

#include "xlite/ir/computation.h"
#include "xlite/ir/opcode.h"

namespace xlite {
namespace {

// Opcodes whose result layout is free and that read operands of any layout.
bool TakesAnyLayout(const HloInstruction& instr) {
  const HloOpcode op = instr.opcode();
  if (HloOpcodeTraits(op) & kElementwise) return true;
  switch (op) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kReshape:
    case HloOpcode::kSlice:
    case HloOpcode::kConcatenate:
    case HloOpcode::kPad:
    case HloOpcode::kReverse:
    case HloOpcode::kIota:
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kGather:
    case HloOpcode::kDot:
    case HloOpcode::kCopy:
      return true;
    default:
      return false;
  }
}

std::vector<int64_t> DefaultMinorToMajor(int64_t rank) {
  std::vector<int64_t> minor_to_major(rank);
  std::iota(minor_to_major.rbegin(), minor_to_major.rend(), 0);
  return minor_to_major;
}

bool Normalizable(const HloInstruction& instr, const HloComputation& computation) {
  const Shape& shape = instr.shape();
  if (!shape.IsArray() || !shape.has_layout() || !shape.layout().HasOnlyMinorToMajor()) {
    return false;
  }
  if (shape.HasDefaultLayout()) return false;
  if (&instr == computation.root_instruction() || !TakesAnyLayout(instr)) return false;
  for (const HloInstruction* user : instr.users()) {
    if (!TakesAnyLayout(*user)) return false;
  }
  return true;
}

// The entry result's layouts (entry_computation_layout) for the root's
// arrays: the root, or the operands of a root tuple, take them where nothing
// else binds theirs. Returns whether anything changed.
bool TakeEntryResultLayouts(HloModule& module) {
  HloComputation* entry = module.entry_computation();
  const std::optional<ProgramShape>& program = module.config().entry_computation_layout;
  if (entry == nullptr || !program) return false;
  HloInstruction* root = entry->root_instruction();
  // Sets `instr`'s layout to `want`'s where `instr` may change (its users
  // other than `except` take any layout).
  auto take = [&](HloInstruction* instr, const Shape& want, const HloInstruction* except) {
    if (!instr->shape().IsArray() || !want.IsArray() || !want.has_layout() ||
        !want.layout().HasOnlyMinorToMajor() || !instr->shape().has_layout() ||
        !instr->shape().layout().HasOnlyMinorToMajor() ||
        instr->shape().layout().minor_to_major == want.layout().minor_to_major ||
        want.rank() != instr->shape().rank() || !TakesAnyLayout(*instr)) {
      return false;
    }
    for (const HloInstruction* user : instr->users()) {
      if (user != except && !TakesAnyLayout(*user)) return false;
    }
    instr->mutable_shape().mutable_layout().minor_to_major = want.layout().minor_to_major;
    return true;
  };
  if (root->opcode() != HloOpcode::kTuple) return take(root, program->result, nullptr);
  // A tuple others read (get-tuple-element) keeps its element layouts.
  if (!root->users().empty() || !program->result.IsTuple() ||
      program->result.tuple_shapes_size() != root->operand_count() ||
      root->shape().tuple_shapes_size() != root->operand_count()) {
    return false;
  }
  bool changed = false;
  for (int64_t i = 0; i < root->operand_count(); ++i) {
    HloInstruction* operand = root->operand(i);
    // An operand at several places of the tuple keeps its layout.
    int64_t uses = 0;
    for (const HloInstruction* o : root->operands()) uses += o == operand ? 1 : 0;
    if (uses != 1 || !take(operand, program->result.tuple_shapes(i), root)) continue;
    root->mutable_shape().mutable_tuple_shapes()[i] = operand->shape();
    changed = true;
  }
  return changed;
}

// An entry parameter's layout binds only as far as entry_computation_layout
// says: where that gives the parameter no tiling (or no layout at all), a
// tiled layout the instruction carries (TPU's {0:T(1024)} in a dump) gives
// way to the entry layout's order, or its own order without the tiles, as
// XLA's layout assignment would. Returns whether anything changed.
bool TakeEntryParameterLayouts(HloModule& module) {
  HloComputation* entry = module.entry_computation();
  const std::optional<ProgramShape>& program = module.config().entry_computation_layout;
  if (entry == nullptr || !program ||
      static_cast<int64_t>(program->parameters.size()) != entry->num_parameters()) {
    return false;
  }
  bool changed = false;
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    HloInstruction* param = entry->parameter_instruction(i);
    const Shape& want = program->parameters[i];
    if (param == nullptr || !param->shape().IsArray() || !param->shape().has_layout() ||
        param->shape().layout().tiles.empty() || !want.IsArray() ||
        want.rank() != param->shape().rank() ||
        (want.has_layout() && !want.layout().HasOnlyMinorToMajor())) {
      continue;
    }
    Layout& layout = param->mutable_shape().mutable_layout();
    if (want.has_layout()) layout.minor_to_major = want.layout().minor_to_major;
    layout.tiles.clear();
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> LayoutNormalization::Run(HloModule& module) {
  if (module.config().is_scheduled) return false;
  bool changed = TakeEntryParameterLayouts(module);
  changed |= TakeEntryResultLayouts(module);
  for (const auto& computation : module.computations()) {
    if (computation->fusion_instruction() != nullptr) continue;
    for (const auto& instr : computation->instructions()) {
      if (!Normalizable(*instr, *computation)) continue;
      instr->mutable_shape().mutable_layout().minor_to_major =
          DefaultMinorToMajor(instr->shape().rank());
      changed = true;
    }
  }
  return changed;
}

}  // namespace xlite
