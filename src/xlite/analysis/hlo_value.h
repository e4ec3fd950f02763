// The vocabulary of dataflow (XLA's hlo_value.h): a position is one array (or
// tuple table, token) in an instruction's output; a use is one instruction
// reading an operand's element; an HloValue is what one position defines,
// with every position it flows to and every use of it.
#ifndef XLITE_ANALYSIS_HLO_VALUE_H_
#define XLITE_ANALYSIS_HLO_VALUE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xlite/analysis/shape_util.h"
#include "xlite/ir/instruction.h"

namespace xlite {

// Instruction + index into its output shape.
struct HloPosition {
  HloInstruction* instruction = nullptr;
  ShapeIndex index;

  // The subshape at `index` (the instruction's shape is valid for it).
  const Shape& shape() const;
  std::string ToString() const;  // "name{0,1}" ("name" for {})
  bool operator==(const HloPosition& other) const {
    return instruction == other.instruction && index == other.index;
  }
};

// `instruction` reads element `operand_index` of operand `operand_number`.
struct HloUse {
  HloInstruction* instruction = nullptr;
  int64_t operand_number = 0;
  ShapeIndex operand_index;

  std::string ToString() const;  // "name, operand 1, {0}"
  bool operator==(const HloUse& other) const {
    return instruction == other.instruction && operand_number == other.operand_number &&
           operand_index == other.operand_index;
  }
};

// Element `operand_index` of operand `operand_number` (one side of an
// in-place pair).
struct HloOperandIndex {
  int64_t operand_number = 0;
  ShapeIndex operand_index;
  bool operator==(const HloOperandIndex& other) const {
    return operand_number == other.operand_number && operand_index == other.operand_index;
  }
};

class HloValue {
 public:
  using Id = int64_t;

  HloValue(Id id, HloPosition defining_position, bool is_phi)
      : id_(id), is_phi_(is_phi), positions_{std::move(defining_position)} {}

  Id id() const { return id_; }
  const HloPosition& defining_position() const { return positions_.front(); }
  HloInstruction* defining_instruction() const { return positions_.front().instruction; }
  const ShapeIndex& defining_index() const { return positions_.front().index; }
  const Shape& shape() const { return defining_position().shape(); }

  // A phi value merges the values that reach one point from several places:
  // the values of a while (loop entry and back edge) or of a conditional
  // (the branch results), or the parameter of a computation called from
  // several sites. phi_inputs() are those values; alias analysis puts a phi
  // and its inputs in one buffer.
  bool is_phi() const { return is_phi_; }
  const std::vector<const HloValue*>& phi_inputs() const { return phi_inputs_; }

  // Every position holding this value; the defining position first.
  const std::vector<HloPosition>& positions() const { return positions_; }
  // Every instruction reading this value (instructions that only pass it on,
  // tuple and get-tuple-element of a nested element, are positions, not
  // uses).
  const std::vector<HloUse>& uses() const { return uses_; }
  // The value is (part of) the entry computation's result.
  bool live_out_of_module() const { return live_out_of_module_; }

  // "name{index}" plus " (phi)"; the index only for tuple-shaped definers.
  std::string ToShortString() const;
  std::string ToString() const;  // with positions and uses, one per line

 private:
  friend class HloDataflowAnalysis;
  Id id_;
  bool is_phi_;
  bool live_out_of_module_ = false;
  std::vector<HloPosition> positions_;
  std::vector<HloUse> uses_;
  std::vector<const HloValue*> phi_inputs_;
};

// The bytes `value` takes in memory: ShapeSizeBytes of its shape, except for
// the tuple of a multi-output fusion that only get-tuple-elements read (and
// that is not its computation's root): its kernel writes the elements, the
// get-tuple-elements alias them, and no thunk reads or writes a table (the
// CPU emitter hands thunks array leaves only), so it takes none. Its 64-byte
// slots had put lstm_scan's and linalg_solve's temp heaps 64 and 360 bytes
// above XLA's.
int64_t ValueSizeBytes(const HloValue& value);

}  // namespace xlite

#endif  // XLITE_ANALYSIS_HLO_VALUE_H_
