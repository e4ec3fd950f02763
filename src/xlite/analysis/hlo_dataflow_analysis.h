// HloDataflowAnalysis: every value of the module (XLA's HloDataflowAnalysis,
// in SSA form). A value is defined at one position (instruction + shape
// index) and flows to others: ops that only pass data on (tuple,
// get-tuple-element, bitcast, call, async and copy start/done pairs, ...)
// forward their operands' values instead of defining new ones. Where values
// from several places meet — a while's loop-carried state, a conditional's
// result, the parameter of a computation called from several sites — a phi
// value is defined whose inputs are the values that meet there. So every
// position holds exactly one value. The forwarding rules, one row per op, are
// in docs/analysis.md.
//
// Read-only over the module; the module must outlive the analysis and must
// not change while it is used (positions point at its instructions).
#ifndef XLITE_ANALYSIS_HLO_DATAFLOW_ANALYSIS_H_
#define XLITE_ANALYSIS_HLO_DATAFLOW_ANALYSIS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "xlite/analysis/call_graph.h"
#include "xlite/analysis/hlo_value.h"
#include "xlite/ir/module.h"

namespace xlite {

// An operand element that `instruction` updates in place into its output
// element `output` (see in_place_pairs.h).
struct InPlacePair {
  HloInstruction* instruction = nullptr;
  HloOperandIndex input;
  ShapeIndex output;
};

class HloDataflowAnalysis {
 public:
  // Errors: a malformed module (a get-tuple-element index outside its
  // operand, shapes that disagree across a call, recursion) is
  // InvalidArgument naming the instruction; async operands bound late by
  // async-update are Unimplemented.
  static absl::StatusOr<std::unique_ptr<HloDataflowAnalysis>> Run(const HloModule& module);

  const HloModule& module() const { return *module_; }
  const CallGraph& call_graph() const { return *call_graph_; }

  // The value at a position; nullptr if the instruction is not in the module
  // or `index` is not in its shape.
  const HloValue* GetValueAt(const HloInstruction* instruction, const ShapeIndex& index = {}) const;
  // True if `instruction` defines the value at `index` (rather than
  // forwarding one).
  bool ValueIsDefinedAt(const HloInstruction* instruction, const ShapeIndex& index = {}) const;
  // Calls `fn` for every position of `instruction`'s output, in
  // ForEachSubshape order.
  void ForEachValueAt(const HloInstruction* instruction,
                      absl::FunctionRef<void(const ShapeIndex&, const HloValue&)> fn) const;
  // The distinct values defined by `instruction`.
  std::vector<const HloValue*> GetValuesDefinedBy(const HloInstruction* instruction) const;

  // All values, indexed by id (ids are 0..value_count()-1).
  const std::vector<std::unique_ptr<HloValue>>& values() const { return values_; }
  const HloValue& GetValue(HloValue::Id id) const { return *values_[id]; }
  int64_t value_count() const { return static_cast<int64_t>(values_.size()); }

  // Every in-place (operand, output) pair of the module's instructions, for
  // alias analysis, copy insertion and buffer assignment.
  const std::vector<InPlacePair>& in_place_pairs() const { return in_place_pairs_; }

  // Dense numbering for passes over the whole module without hashing:
  // instructions get ids 0..instruction_count()-1 (computations and their
  // instruction lists in module order).
  int32_t instruction_count() const { return static_cast<int32_t>(instructions_.size()); }
  // -1 if `instruction` is not in the module.
  int32_t instruction_id(const HloInstruction* instruction) const;
  HloInstruction* instruction(int32_t id) const { return instructions_[id]; }
  // Cached per instruction, so whole-module passes need not touch the
  // (large) instruction objects.
  HloOpcode opcode(int32_t id) const { return opcodes_[id]; }
  bool is_root(int32_t id) const { return is_root_[id]; }
  // The ids of the instruction's control predecessors.
  absl::Span<const int32_t> control_predecessor_ids(int32_t id) const {
    return absl::MakeConstSpan(control_ids_)
        .subspan(control_begin_[id], control_begin_[id + 1] - control_begin_[id]);
  }
  // The ids of the instruction's operands, in operand order.
  absl::Span<const int32_t> operand_ids(int32_t id) const {
    return absl::MakeConstSpan(operand_ids_)
        .subspan(operand_begin_[id], operand_begin_[id + 1] - operand_begin_[id]);
  }
  // The values at the instruction's positions, in ForEachSubshape order (the
  // first is at {}).
  absl::Span<const HloValue::Id> value_ids_at(int32_t id) const {
    return absl::MakeConstSpan(slot_value_)
        .subspan(slot_begin_[id], slot_begin_[id + 1] - slot_begin_[id]);
  }
  int32_t defining_instruction_id(HloValue::Id value) const { return value_definer_[value]; }
  // The instruction ids of value.positions() and value.uses(), in order.
  absl::Span<const int32_t> position_instruction_ids(HloValue::Id value) const {
    return absl::MakeConstSpan(position_ids_)
        .subspan(position_begin_[value], position_begin_[value + 1] - position_begin_[value]);
  }
  absl::Span<const int32_t> use_instruction_ids(HloValue::Id value) const {
    return absl::MakeConstSpan(use_ids_).subspan(use_begin_[value],
                                                 use_begin_[value + 1] - use_begin_[value]);
  }

  // Checks that positions and value sets agree (tests call it).
  absl::Status Verify() const;
  std::string ToString() const;

 private:
  class Builder;
  HloDataflowAnalysis() = default;

  // Slot numbers: each instruction's subshapes, in ForEachSubshape order, are
  // consecutive slots; a slot's subtree is the `subtree_size` slots from it.
  int32_t SlotOf(const HloInstruction* instruction, const ShapeIndex& index) const;

  const HloModule* module_ = nullptr;
  std::unique_ptr<CallGraph> call_graph_;
  std::vector<HloInstruction*> instructions_;
  absl::flat_hash_map<const HloInstruction*, int32_t> instruction_index_;
  std::vector<HloOpcode> opcodes_;
  std::vector<bool> is_root_;
  std::vector<int32_t> operand_begin_;  // per instruction, plus one past the end
  std::vector<int32_t> operand_ids_;
  std::vector<int32_t> control_begin_;  // per instruction, plus one past the end
  std::vector<int32_t> control_ids_;
  std::vector<int32_t> slot_begin_;  // per instruction, plus one past the end
  std::vector<ShapeIndex> slot_index_;
  std::vector<const Shape*> slot_shape_;
  std::vector<int32_t> slot_subtree_size_;
  std::vector<int32_t> slot_children_;  // first child slot list entry (tuple slots)
  std::vector<int32_t> child_slots_;
  std::vector<HloValue::Id> slot_value_;
  std::vector<int32_t> value_defining_slot_;
  std::vector<int32_t> value_definer_;
  std::vector<int32_t> position_begin_, position_ids_;
  std::vector<int32_t> use_begin_, use_ids_;
  std::vector<std::unique_ptr<HloValue>> values_;
  std::vector<InPlacePair> in_place_pairs_;
};

// Whether an all-gather-start / collective-permute-start's shape is an
// (operand(s), result(s), ...) tuple rather than the result alone (the older
// form); the analysis forwards the operands into {0} only then, and the CPU
// emitter reads the results from {1} only then.
bool IsStartTuple(const HloInstruction& start);

}  // namespace xlite

#endif  // XLITE_ANALYSIS_HLO_DATAFLOW_ANALYSIS_H_
