// conv-canonicalization (XLA:CPU's ConvCanonicalization): every convolution
// gets the dimension order the CPU runtime's convolution kernel (hostlib,
// oneDNN's plain nhwc/hwio formats) takes,
//   input  [batch, spatial..., feature]                      (b01f)
//   kernel [spatial..., input feature, output feature]       (01io)
//   output [batch, spatial..., feature]                      (b01f)
// by transposing the input and kernel into that order and the result back to
// the convolution's shape. The window (strides, padding, dilations,
// reversal), feature_group_count, batch_group_count and operand_precision
// are kept: only the dimension mapping changes, never a size. A convolution
// already in that order is left alone.
//
// Skipped: convolutions with dynamic dimensions and those in fusion bodies.
// The replaced convolution is deleted; the new instructions take its place in
// the instruction order. Precondition: a verified module.
#ifndef XLITE_PASSES_CONV_CANONICALIZATION_H_
#define XLITE_PASSES_CONV_CANONICALIZATION_H_

#include "xlite/passes/pass.h"

namespace xlite {

class ConvCanonicalization : public HloPass {
 public:
  absl::string_view name() const override { return "conv-canonicalization"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

// True if `conv` has the dimension numbers above.
bool IsCanonicalConvolution(const HloInstruction& conv);

}  // namespace xlite

#endif  // XLITE_PASSES_CONV_CANONICALIZATION_H_
