// Convolution in the canonical dimension order that the
// conv-canonicalization pass leaves (src/xlite/passes/conv_canonicalization.h),
// XLA:CPU's: lhs [N, spatial..., C] (b01f), rhs [spatial..., C/G, O] (01io),
// out [N/BG, spatial..., O] (b01f), all row-major, G = feature_group_count,
// BG = batch_group_count.
//
// Semantics are HLO's: out[b, y, o] = sum over kernel positions p and the
// input features c of o's group of lhs[b', x(y, p), c] * rhs[p', c, o], with
// x(y, p) = y * stride + p * rhs_dilation - padding_low a position in the
// lhs-dilated input (holes and padding contribute nothing), p' = p or its
// reversal, output feature o in feature group o / (O/G) and batch group
// o / (O/BG), b' = (o / (O/BG)) * (N/BG) + b. Arithmetic and element types as
// in matmul.h.
//
// Backends: oneDNN forward convolution (1 to 3 spatial dimensions, strides,
// window dilation, padding, feature groups; window reversal by a reversed
// copy of the kernel) for the types oneDNN takes here (f32, bf16, f16 with a
// same-type or f32 result; s8/u8 x s8 -> s32); hostlib's own loops for the
// rest: other types, lhs (base) dilation, batch groups, padding oneDNN
// refuses.
#ifndef XLITE_HOSTLIB_CONVOLUTION_H_
#define XLITE_HOSTLIB_CONVOLUTION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "xlite/hostlib/element_type.h"

namespace xlite::hostlib {

struct ConvolutionShape {
  int64_t batch = 1;            // N: lhs batch
  int64_t input_features = 1;   // C: lhs features
  int64_t output_features = 1;  // O: rhs output features = out features
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  // One entry per spatial dimension.
  std::vector<int64_t> input_spatial, kernel_spatial, output_spatial;
  std::vector<int64_t> strides, padding_low, padding_high, lhs_dilation, rhs_dilation;
  std::vector<bool> window_reversal;

  // "N=8 C=3 O=32 in=[32,32] kernel=[3,3] ..." for errors and cache keys.
  std::string ToString() const;
  // Every rule above; InvalidArgument naming the broken one.
  absl::Status Validate() const;
};

enum class ConvolutionBackend { kAuto, kOneDnn, kLoops };

absl::Status Convolution(const ConvolutionShape& shape, ElementType lhs_type, const void* lhs,
                         ElementType rhs_type, const void* rhs, ElementType out_type, void* out,
                         ConvolutionBackend backend = ConvolutionBackend::kAuto,
                         ConvolutionBackend* used = nullptr);

}  // namespace xlite::hostlib

#endif  // XLITE_HOSTLIB_CONVOLUTION_H_
