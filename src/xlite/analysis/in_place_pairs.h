// Which operands an instruction updates in place (XLA's
// HloDataflowAnalysis::GetInPlaceInputOutputPairs / AliasInfo): each pair is
// an operand element and the output element that must share its buffer.
// The output is a value of its own (the contents change); alias analysis puts
// both values in one buffer, and copy insertion adds a copy where the
// operand is still needed afterwards.
//
//   dynamic-update-slice      operand 0 -> {}
//   scatter (n operands)      operand i -> {i} ({} when n == 1)
//   all-reduce-start          operand i -> {i} ({} for one operand)
//   collective-permute with 4 operands (in place)        operand 1 -> {}
//   collective-permute-start in place (slice_sizes)      operand 1 -> {1}
//   ragged-all-to-all         operand 1 -> {}
//   set-dimension-size        operand 0 -> {}
//   custom-call, async-start  their output_to_operand_aliasing
//   fusion                    output_to_operand_aliasing, plus every output
//                             whose fused root (through tuple,
//                             get-tuple-element and bitcast) is an in-place
//                             op updating a fusion parameter
#ifndef XLITE_ANALYSIS_IN_PLACE_PAIRS_H_
#define XLITE_ANALYSIS_IN_PLACE_PAIRS_H_

#include <utility>
#include <vector>

#include "xlite/analysis/hlo_value.h"

namespace xlite {

std::vector<std::pair<HloOperandIndex, ShapeIndex>> GetInPlaceInputOutputPairs(
    const HloInstruction& instruction);

// False for opcodes that never have in-place pairs (a cheap filter).
bool MayHaveInPlacePairs(HloOpcode opcode);

// True if `user` may write its output element `output` into the buffer of
// its operand `operand_number` (an array of the same shape) even though it
// reads that operand: it reads each element only to make the same element of
// its outputs, and makes all of an element's outputs before storing any (XLA's
// CanShareOperandBufferWithUser for elementwise ops and loop fusions). True
// for elementwise ops, and for kLoop fusions where every use of the
// parameter inside, and of what it makes, is an elementwise op of the
// dimensions it reads, a reshape between row-major shapes (the same linear
// order), or the root tuple.
bool MayShareOperandBuffer(const HloInstruction& user, int64_t operand_number,
                           const ShapeIndex& output);

// True if `user` reads `values` (one buffer's: directly, or inside a tuple
// operand) and every such read is a whole operand that MayShareOperandBuffer
// lets it write `output` over: then that result may take the buffer's bytes
// where the buffer dies (buffer assignment's in-place sharing, and its checker).
bool EveryReadMayShare(const std::vector<const HloValue*>& values, const HloInstruction& user,
                       const ShapeIndex& output);

}  // namespace xlite

#endif  // XLITE_ANALYSIS_IN_PLACE_PAIRS_H_
