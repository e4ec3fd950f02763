// layout-normalization: the layouts a framework writes on intermediate arrays
// are its own guesses, not constraints -- JAX marks a transpose as free by
// permuting its layout ({0,1}), and the elementwise ops after it inherit that,
// so a fusion mixing them with row-major arrays reads one of them across its
// rows. What binds is the entry computation layout, each computation's
// parameters and result, and the layout-sensitive instructions (bitcast,
// custom calls, tuples and control flow, fusions, in-place updates,
// collectives, host transfers). This pass gives every other array
// instruction of a non-fusion computation the default major-to-minor layout:
// those of the opcodes below whose users all take any operand layout. The
// entry's root (or its root tuple's operands) take the entry result's
// layouts instead, where only the tuple binds them. A
// transpose then moves data, which transpose-folding can fold into a dot,
// and loops read and write in order.
//
// Normalized opcodes: elementwise ops, broadcast, transpose, reshape, slice,
// concatenate, pad, reverse, iota, reduce and reduce-window (array results),
// dynamic-slice, gather, dot, copy. Layouts with tiles, memory spaces or
// element sizes are left alone. Not for scheduled modules (their layouts
// were decided with the schedule).
#ifndef XLITE_PASSES_LAYOUT_NORMALIZATION_H_
#define XLITE_PASSES_LAYOUT_NORMALIZATION_H_

#include "xlite/passes/pass.h"

namespace xlite {

class LayoutNormalization : public HloPass {
 public:
  absl::string_view name() const override { return "layout-normalization"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace xlite

#endif  // XLITE_PASSES_LAYOUT_NORMALIZATION_H_
