// algsimp: a core of XLA's AlgebraicSimplifier. Rewrites, in every
// computation, until nothing more applies:
//
//   elementwise (algsimp_elementwise.cc)
//     add(x, 0), add(0, x)           -> x        integer types only (x + 0.0 is not x for x = -0.0)
//     multiply(x, 1), multiply(1, x) -> x        pred, integer and real floating types
//                                                (not complex: (inf+0i)*(1+0i) has a NaN part)
//     subtract(x, x)                 -> broadcast(0)   integer types only (inf - inf is NaN)
//     negate(negate(x))              -> x
//     not(not(x))                    -> x
//     select(all-true, a, b) -> a; select(all-false, a, b) -> b
//   shape and data movement (algsimp_shape.cc)
//     convert to the same type, reshape to the same shape, transpose with the
//     identity permutation, broadcast to the same shape with identity
//     dimensions, copy with equal layouts, slice of the whole operand with
//     stride 1, concatenate of one operand, pad with no padding -> the operand
//     reshape(reshape(x))     -> reshape(x)
//     transpose(transpose(x)) -> transpose(x) with the composed permutation (or x)
//     broadcast(broadcast(x)) -> broadcast(x) with the composed dimensions
//     slice(slice(x))         -> slice(x) with composed start/limit/stride
//     dynamic-slice with constant start indices -> slice, the starts clamped
//       to [0, dim - size] as dynamic-slice clamps them
//   contractions and reductions (algsimp_reduction.cc)
//     dot with a zero-sized contracting dimension -> broadcast(0)
//     reduce whose reduced dimensions all have size 1 (or none)
//       -> reducer(broadcast(init), reshape(x)) when the reducer is one
//          elementwise binary op of its two parameters
//     reduce over some size-1 dimensions -> reduce(reshape(x)) over the others
//
// "0", "1", "all-true" are constants (non-elided literals) whose elements all
// have that value, or broadcasts of such a scalar constant.
//
// Preconditions and guarantees: the module should verify. An instruction is
// replaced by another only when their shapes are exactly equal (layout and
// dynamic dimensions included), so roots of called computations keep their
// shapes; instructions with control dependencies are left alone; every new
// instruction's shape is checked with shape inference before it is added, and
// a rewrite whose new instruction would not infer to the intended shape is
// skipped. Dynamic-shaped results are not rewritten into new instructions.
// Replaced instructions are left for dce to remove. New instructions are named
// "<old name>.simp" (made unique) and take the old instruction's metadata and
// sharding.
#ifndef XLITE_PASSES_ALGEBRAIC_SIMPLIFIER_H_
#define XLITE_PASSES_ALGEBRAIC_SIMPLIFIER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "xlite/ir/computation.h"
#include "xlite/passes/pass.h"

namespace xlite {

class AlgebraicSimplifier : public HloPass {
 public:
  absl::string_view name() const override { return "algsimp"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

namespace algsimp_internal {

// State shared by the rule families for one run.
class Rewriter {
 public:
  explicit Rewriter(HloModule& module);

  // Makes every use of `old` use `replacement`; false (nothing done) unless
  // their shapes are exactly equal.
  bool Replace(HloInstruction* old, HloInstruction* replacement);

  // A new instruction next to `like` (same computation, metadata, sharding),
  // named "<like>.simp". Returns nullptr (and adds nothing) if shape
  // inference disagrees with `shape`.
  HloInstruction* Add(const HloInstruction& like, HloOpcode opcode, const Shape& shape,
                      const std::vector<HloInstruction*>& operands,
                      const InstructionAttributes* attrs = nullptr,
                      const std::vector<HloComputation*>& called = {});

  // broadcast(constant 0) (or the constant itself for scalars) of `shape`;
  // nullptr if the shape is not a static array.
  HloInstruction* Zeros(const HloInstruction& like, const Shape& shape);

  // Replaces `old` by `replacement` when replacement is non-null.
  bool ReplaceWithNew(HloInstruction* old, HloInstruction* replacement) {
    return replacement != nullptr && Replace(old, replacement);
  }

 private:
  std::string UniqueName(const std::string& base);
  absl::flat_hash_set<std::string> names_;
};

// A literal and the element that every element of `instr` equals: a
// non-elided array constant whose elements all equal element 0, or a
// broadcast of a scalar such constant. Null literal if neither.
struct Splat {
  const Literal* literal = nullptr;
  int64_t index = 0;
};
Splat GetSplat(const HloInstruction& instr);

// Family entry points: true if `instr` was rewritten.
bool SimplifyElementwise(Rewriter& rw, HloInstruction* instr);
bool SimplifyShape(Rewriter& rw, HloInstruction* instr);
bool SimplifyReduction(Rewriter& rw, HloInstruction* instr);

}  // namespace algsimp_internal

}  // namespace xlite

#endif  // XLITE_PASSES_ALGEBRAIC_SIMPLIFIER_H_
