// multi_output_fusion: multi-output fusion for the CPU code generator (XLA's
// multi_output_fusion, siblings and producer-consumer pairs).
// Siblings: kLoop fusions that read a common operand and make results of the
// same dimensions merge into one fusion whose root is a tuple of their roots:
// one kernel, one loop, the shared operands read once; their users read
// get-tuple-elements. Producer and consumer: a kLoop fusion whose value is
// read by others too (so stored anyway) joins a kLoop fusion that reads it
// element for element (only through elementwise ops) as one more output: the
// consumer's loop computes it where it read it, stores it, and its own kernel
// goes; a multi-output fusion (of siblings, or an earlier merge) read
// through get-tuple-elements joins with all its results. Never where a merge would make a cycle (one fusion depending on the
// other, or a path from the producer to the consumer through others), and
// only fusions whose roots the kernel emitter computes element by element
// (elementwise ops and data movement: never a reduce, a scatter or an
// in-place update, whose own loops would be lost). A merged fusion keeps
// LoopFusion's limits on instructions and operands; fused instructions keep
// their names. Runs after LoopFusion; CSE and DCE follow it.
#ifndef XLITE_CPU_MULTI_OUTPUT_FUSION_H_
#define XLITE_CPU_MULTI_OUTPUT_FUSION_H_

#include "xlite/passes/pass.h"

namespace xlite::cpu {

class MultiOutputFusion : public HloPass {
 public:
  absl::string_view name() const override { return "multi_output_fusion"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace xlite::cpu

#endif  // XLITE_CPU_MULTI_OUTPUT_FUSION_H_
