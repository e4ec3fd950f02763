// excess-precision: inside each kLoop fusion, arithmetic on bf16 / f16 values
// is done in f32 from the fusion's inputs to its output, rounding once where
// a value leaves the fusion (or meets an explicit convert) instead of after
// every op. This is what XLA:CPU does under --xla_allow_excess_precision
// (default true): its FloatNormalization computes bf16 ops in f32 between
// converts and SimplifyFPConversions drops the f32->bf16->f32 pairs.
//
// Widened: elementwise ops whose floating operands and result are all one
// narrow type (add ... tanh, select, clamp, copy), and data movement of such
// values (broadcast, reshape, bitcast, transpose, slice, reverse, concatenate,
// pad, dynamic-slice) when an operand is already wide. A compare or convert
// of a widened value reads the wide value (a convert to f32 of it is it).
// Explicit converts to a narrow type, bitcast-converts, reduce-precision and
// reductions round as written. The compiler runs this pass only under
// --xla_allow_excess_precision (default true); without it every op rounds, as
// the interpreter does.
#ifndef XLITE_CPU_EXCESS_PRECISION_H_
#define XLITE_CPU_EXCESS_PRECISION_H_

#include "xlite/passes/pass.h"

namespace xlite::cpu {

class ExcessPrecision : public HloPass {
 public:
  absl::string_view name() const override { return "excess-precision"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace xlite::cpu

#endif  // XLITE_CPU_EXCESS_PRECISION_H_
