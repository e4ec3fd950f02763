// HloEmitter: appends instructions to one HloComputation, inferring each
// result shape with the verifier's shape inference. The StableHLO lowering and
// the chlo decompositions build HLO through it.
#ifndef XLITE_STABLEHLO_HLO_EMITTER_H_
#define XLITE_STABLEHLO_HLO_EMITTER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "xlite/ir/computation.h"
#include "xlite/ir/instruction.h"

namespace xlite::stablehlo {

class HloEmitter {
 public:
  // `name_counter` is shared by all emitters of one module so names stay unique.
  HloEmitter(HloComputation* computation, int64_t* name_counter)
      : computation_(computation), name_counter_(name_counter) {}

  HloComputation* computation() const { return computation_; }

  // A new instruction named after its opcode ("add.12"), operands appended.
  std::unique_ptr<HloInstruction> Make(HloOpcode opcode, absl::Span<HloInstruction* const> operands,
                                       const Shape& shape = Shape());
  // Adds `instr`; with `infer`, its shape comes from shape inference (errors
  // name the instruction and the rule broken).
  absl::StatusOr<HloInstruction*> Add(std::unique_ptr<HloInstruction> instr, bool infer = true);

  // Shorthands; all infer shapes.
  absl::StatusOr<HloInstruction*> Op(HloOpcode opcode, absl::Span<HloInstruction* const> operands);
  absl::StatusOr<HloInstruction*> Compare(ComparisonDirection direction, HloInstruction* lhs,
                                          HloInstruction* rhs);
  absl::StatusOr<HloInstruction*> Convert(HloInstruction* x, PrimitiveType type);
  absl::StatusOr<HloInstruction*> Constant(Literal literal);
  // `value` as a constant of x's element type broadcast to x's shape (complex: real part).
  absl::StatusOr<HloInstruction*> Splat(HloInstruction* like, double value);
  absl::StatusOr<HloInstruction*> Broadcast(HloInstruction* x, const Shape& shape,
                                            absl::Span<const int64_t> dimensions);
  absl::StatusOr<HloInstruction*> Select(HloInstruction* pred, HloInstruction* on_true,
                                         HloInstruction* on_false);

 private:
  HloComputation* computation_;
  int64_t* name_counter_;
};

}  // namespace xlite::stablehlo

#endif  // XLITE_STABLEHLO_HLO_EMITTER_H_
