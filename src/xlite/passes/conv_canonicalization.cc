#include "xlite/passes/conv_canonicalization.h"

#include <memory>
#include <vector>

#include "xlite/ir/computation.h"
#include "xlite/passes/canonicalize_util.h"
#include "xlite/support/status.h"

namespace xlite {
namespace {

using canonicalize::ArrayShapeLike;
using canonicalize::InstructionAdder;
using canonicalize::PermutedDims;

ConvolutionDimensionNumbers CanonicalNumbers(int64_t spatial) {
  ConvolutionDimensionNumbers d;
  d.input_batch_dimension = 0;
  d.output_batch_dimension = 0;
  for (int64_t i = 0; i < spatial; ++i) {
    d.input_spatial_dimensions.push_back(i + 1);
    d.kernel_spatial_dimensions.push_back(i);
    d.output_spatial_dimensions.push_back(i + 1);
  }
  d.input_feature_dimension = spatial + 1;
  d.output_feature_dimension = spatial + 1;
  d.kernel_input_feature_dimension = spatial;
  d.kernel_output_feature_dimension = spatial + 1;
  d.input_rank = d.kernel_rank = d.output_rank = spatial + 2;
  return d;
}

// (batch, spatial..., feature) of a data operand or result.
std::vector<int64_t> DataOrder(int64_t batch, const std::vector<int64_t>& spatial,
                               int64_t feature) {
  std::vector<int64_t> order = {batch};
  order.insert(order.end(), spatial.begin(), spatial.end());
  order.push_back(feature);
  return order;
}

bool Rewritable(const HloInstruction& conv) {
  if (conv.opcode() != HloOpcode::kConvolution || conv.operand_count() != 2) return false;
  if (!conv.attrs().convolution_dimension_numbers || !conv.shape().IsArray() ||
      !conv.shape().is_static()) {
    return false;
  }
  for (const HloInstruction* op : conv.operands()) {
    if (!op->shape().IsArray() || !op->shape().is_static()) return false;
  }
  return !IsCanonicalConvolution(conv);
}

absl::Status Canonicalize(InstructionAdder& adder, HloInstruction* conv) {
  const ConvolutionDimensionNumbers& d = *conv->attrs().convolution_dimension_numbers;
  const int64_t spatial = static_cast<int64_t>(d.output_spatial_dimensions.size());
  const std::vector<int64_t> input_order =
      DataOrder(d.input_batch_dimension, d.input_spatial_dimensions, d.input_feature_dimension);
  std::vector<int64_t> kernel_order = d.kernel_spatial_dimensions;
  kernel_order.push_back(d.kernel_input_feature_dimension);
  kernel_order.push_back(d.kernel_output_feature_dimension);
  const std::vector<int64_t> output_order =
      DataOrder(d.output_batch_dimension, d.output_spatial_dimensions, d.output_feature_dimension);

  ASSIGN_OR_RETURN(HloInstruction * input,
                   adder.Transpose(*conv, conv->operand(0), input_order, "input_transpose"));
  ASSIGN_OR_RETURN(HloInstruction * kernel,
                   adder.Transpose(*conv, conv->operand(1), kernel_order, "kernel_transpose"));
  auto canonical =
      std::make_unique<HloInstruction>(HloOpcode::kConvolution, "",
                                       ArrayShapeLike(conv->shape(), conv->shape().element_type(),
                                                      PermutedDims(conv->shape(), output_order)));
  canonical->attrs() = conv->attrs();
  canonical->attrs().sharding.reset();
  canonical->attrs().frontend_attributes.clear();
  canonical->attrs().convolution_dimension_numbers = CanonicalNumbers(spatial);
  canonical->AppendOperand(input);
  canonical->AppendOperand(kernel);
  ASSIGN_OR_RETURN(HloInstruction * new_conv, adder.Add(*conv, std::move(canonical), "canonical"));
  // The result back in the convolution's order: the inverse permutation.
  std::vector<int64_t> inverse(output_order.size());
  for (size_t i = 0; i < output_order.size(); ++i) inverse[output_order[i]] = i;
  HloInstruction* result = new_conv;
  bool identity = true;
  for (size_t i = 0; i < inverse.size(); ++i) identity &= inverse[i] == int64_t(i);
  if (!identity) {
    auto transpose = std::make_unique<HloInstruction>(HloOpcode::kTranspose, "", conv->shape());
    transpose->attrs().dimensions = inverse;
    transpose->AppendOperand(new_conv);
    ASSIGN_OR_RETURN(result, adder.Add(*conv, std::move(transpose), "output_transpose"));
  } else {
    new_conv->mutable_shape() = conv->shape();
  }
  adder.Replace(conv, result);
  return absl::OkStatus();
}

}  // namespace

bool IsCanonicalConvolution(const HloInstruction& conv) {
  if (conv.opcode() != HloOpcode::kConvolution || !conv.attrs().convolution_dimension_numbers) {
    return false;
  }
  const ConvolutionDimensionNumbers& d = *conv.attrs().convolution_dimension_numbers;
  const ConvolutionDimensionNumbers c =
      CanonicalNumbers(static_cast<int64_t>(d.output_spatial_dimensions.size()));
  return d.input_batch_dimension == c.input_batch_dimension &&
         d.input_feature_dimension == c.input_feature_dimension &&
         d.input_spatial_dimensions == c.input_spatial_dimensions &&
         d.kernel_input_feature_dimension == c.kernel_input_feature_dimension &&
         d.kernel_output_feature_dimension == c.kernel_output_feature_dimension &&
         d.kernel_spatial_dimensions == c.kernel_spatial_dimensions &&
         d.output_batch_dimension == c.output_batch_dimension &&
         d.output_feature_dimension == c.output_feature_dimension &&
         d.output_spatial_dimensions == c.output_spatial_dimensions;
}

absl::StatusOr<bool> ConvCanonicalization::Run(HloModule& module) {
  InstructionAdder adder(module);
  bool changed = false;
  for (const auto& computation : module.computations()) {
    if (computation->fusion_instruction() != nullptr) continue;
    std::vector<HloInstruction*> convs;
    for (const auto& instr : computation->instructions()) {
      if (Rewritable(*instr)) convs.push_back(instr.get());
    }
    for (HloInstruction* conv : convs) {
      RETURN_IF_ERROR(Canonicalize(adder, conv));
      changed = true;
    }
  }
  return changed;
}

}  // namespace xlite
