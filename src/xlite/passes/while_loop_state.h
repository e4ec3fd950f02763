// Rewrites of a while loop's state (its tuple of loop-carried values), shared
// by while-loop-constant-sinking, while-loop-simplifier and
// rematerialization (schedule/rematerialization.h). Each keeps the order of
// every instruction list it touches a schedule: an instruction that replaces
// another takes its place, a clone goes right before its first reader, so
// they serve scheduled modules as well as unscheduled ones.
//
// They need the shape XLA's while utilities need: one operand, a tuple shape,
// a body whose root is a tuple and a body and condition that read their
// parameter only through get-tuple-element, called by this loop alone; no
// control edges on the loop.
#ifndef XLITE_PASSES_WHILE_LOOP_STATE_H_
#define XLITE_PASSES_WHILE_LOOP_STATE_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "xlite/ir/computation.h"
#include "xlite/ir/module.h"
#include "xlite/ir/name_uniquer.h"

namespace xlite {

// Whether `loop` has the form above. `callers` counts the instructions that
// call each computation (CountCallers).
bool HasElementwiseState(const HloInstruction& loop,
                         const absl::flat_hash_map<const HloComputation*, int64_t>& callers);

absl::flat_hash_map<const HloComputation*, int64_t> CountCallers(const HloModule& module);

// Whether `c` (a loop body or condition) has one parameter, reads it only
// through get-tuple-element and does not return it whole.
bool ReadsParameterByElement(const HloComputation& c);

// Whether the body passes state element `index` through unchanged (its root's
// operand `index` is get-tuple-element `index` of its parameter).
bool IsInvariantElement(const HloInstruction& loop, int64_t index);

// Whether `value` is computed from nothing but constants: a constant, an iota,
// or a broadcast, reshape or convert of one (as deep as they nest). These are
// what a loop can make again instead of carrying.
// With `max_constant_elements` >= 0, only constants of at most that many
// elements count (1: made from scalars).
bool IsComputedFromNothing(const HloInstruction& value, int64_t max_constant_elements = -1);

// Makes every reader of invariant element `index` in the body (but the root's
// slot `index`) and in the condition read a copy of `value` instead (with the
// instructions it is computed from; IsComputedFromNothing must hold), placed
// right before the first such reader. Returns the copies' roots (none where
// nothing read the element).
std::vector<HloInstruction*> SinkInvariantElement(HloInstruction& loop, int64_t index,
                                                  const HloInstruction& value, NameUniquer& names);

// Removes the state elements the loop does not need: those the condition does
// not read, that the body reads only to hand to its root at the same index,
// and that the loop's users (all get-tuple-elements) do not read. What only
// they read in the body, and the init's operands only they read, go too (none
// with side effects). With `removable`, only the elements it marks may go
// (the others count as needed). Returns how many elements went.
int64_t RemoveDeadElements(HloInstruction& loop, NameUniquer& names,
                           const std::vector<bool>* removable = nullptr);

}  // namespace xlite

#endif  // XLITE_PASSES_WHILE_LOOP_STATE_H_
