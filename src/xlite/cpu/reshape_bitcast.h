// cpu-reshape-bitcast: a reshape whose operand and result are both row-major
// (same element type) moves no data -- the elements keep their order -- so it
// becomes a bitcast, which shares its operand's buffer (dataflow forwards it;
// XLA's layout-sensitive algebraic simplifier does the same). A reshape
// left outside fusions after loop fusion (one feeding a dot, say: encoder's
// 8x128x512 -> 1024x512 operand, 0.7 ms of copying) then costs nothing.
// Computation roots stay (their buffers are the results); not for fusion
// bodies.
#ifndef XLITE_CPU_RESHAPE_BITCAST_H_
#define XLITE_CPU_RESHAPE_BITCAST_H_

#include "xlite/passes/pass.h"

namespace xlite::cpu {

class ReshapeToBitcast : public HloPass {
 public:
  absl::string_view name() const override { return "cpu-reshape-bitcast"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace xlite::cpu

#endif  // XLITE_CPU_RESHAPE_BITCAST_H_
