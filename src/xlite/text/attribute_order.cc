#include "xlite/text/attribute_order.h"

namespace xlite {

using AttrList = std::vector<absl::string_view>;

const AttrList& OpcodeAttributeOrder(HloOpcode op) {
  static const AttrList kNone = {};
  static const AttrList kDimensions = {"dimensions"};
  static const AttrList kReduceLike = {"dimensions", "to_apply"};
  static const AttrList kParameter = {"parameter_replication"};
  static const AttrList kGte = {"index"};
  static const AttrList kReshape = {"inferred_dimension"};
  static const AttrList kSort = {"dimensions", "is_stable", "to_apply"};
  static const AttrList kScan = {"dimensions", "num_carries", "is_reverse", "is_associative",
                                 "to_apply"};
  static const AttrList kIota = {"iota_dimension"};
  static const AttrList kCompare = {"direction", "type", "order"};
  static const AttrList kSlice = {"slice"};
  static const AttrList kDynamicSlice = {"dynamic_slice_sizes"};
  static const AttrList kPad = {"padding"};
  static const AttrList kReduceWindow = {"window", "to_apply"};
  static const AttrList kSelectAndScatter = {"window", "select", "scatter"};
  static const AttrList kConvolution = {
      "window",          "dim_labels",        "feature_group_count", "batch_group_count",
      "conv_kind",       "operand_precision", "algorithm",           "sparsity_config",
      "convolution_kind"};
  static const AttrList kDot = {"lhs_batch_dims",    "lhs_contracting_dims",
                                "rhs_batch_dims",    "rhs_contracting_dims",
                                "operand_precision", "algorithm",
                                "sparsity"};
  static const AttrList kRaggedDot = {
      "lhs_batch_dims",  "lhs_contracting_dims", "rhs_batch_dims",    "rhs_contracting_dims",
      "lhs_ragged_dims", "rhs_group_dims",       "operand_precision", "algorithm"};
  static const AttrList kGather = {
      "offset_dims",           "collapsed_slice_dims",        "start_index_map",
      "operand_batching_dims", "start_indices_batching_dims", "index_vector_dim",
      "slice_sizes",           "indices_are_sorted"};
  static const AttrList kScatter = {"update_window_dims",
                                    "inserted_window_dims",
                                    "scatter_dims_to_operand_dims",
                                    "input_batching_dims",
                                    "scatter_indices_batching_dims",
                                    "index_vector_dim",
                                    "indices_are_sorted",
                                    "unique_indices",
                                    "to_apply"};
  static const AttrList kFusion = {"kind", "output_to_operand_aliasing", "calls"};
  static const AttrList kCustomCall = {"window",
                                       "dim_labels",
                                       "feature_group_count",
                                       "batch_group_count",
                                       "operand_precision",
                                       "algorithm",
                                       "padding_type",
                                       "custom_call_target",
                                       "operand_layout_constraints",
                                       "custom_call_has_side_effect",
                                       "literal",
                                       "output_to_operand_aliasing",
                                       "schedule",
                                       "api_version",
                                       "called_computations"};
  static const AttrList kBatchNorm = {"epsilon", "feature_index"};
  static const AttrList kFft = {"fft_type", "fft_length"};
  static const AttrList kTriangularSolve = {"left_side", "lower", "unit_diagonal", "transpose_a"};
  static const AttrList kCholesky = {"lower"};
  static const AttrList kRng = {"distribution"};
  static const AttrList kRngBitGenerator = {"algorithm"};
  static const AttrList kRngState = {"delta"};
  static const AttrList kReducePrecision = {"exponent_bits", "mantissa_bits"};
  static const AttrList kTopK = {"k", "largest", "is_stable"};
  static const AttrList kInfeed = {"infeed_config"};
  static const AttrList kOutfeed = {"outfeed_shape", "outfeed_config"};
  static const AttrList kDomain = {"domain"};
  static const AttrList kCopyStart = {"cross_program_prefetch_index"};
  static const AttrList kSendRecv = {"channel_id", "is_host_transfer"};
  // "mode" (cross_replica, ...) is read and dropped, as XLA's parser does:
  // the group mode follows from channel_id and use_global_device_ids.
  static const AttrList kAllReduce = {"channel_id",       "replica_groups",
                                      "constrain_layout", "use_global_device_ids",
                                      "to_apply",         "mode"};
  static const AttrList kReduceScatter = {"channel_id",
                                          "replica_groups",
                                          "constrain_layout",
                                          "use_global_device_ids",
                                          "dimensions",
                                          "to_apply",
                                          "mode"};
  static const AttrList kAllGather = {"channel_id", "replica_groups", "constrain_layout",
                                      "dimensions", "use_global_device_ids"};
  static const AttrList kAllToAll = {"channel_id", "replica_groups", "constrain_layout",
                                     "dimensions"};
  static const AttrList kRaggedAllToAll = {"channel_id", "replica_groups"};
  static const AttrList kCollectiveBroadcast = {"channel_id", "replica_groups", "constrain_layout",
                                                "has_dynamic_root"};
  static const AttrList kCollectivePermute = {"channel_id", "source_target_pairs", "slice_sizes"};
  static const AttrList kAsyncStart = {"async_execution_thread", "output_to_operand_aliasing",
                                       "calls"};
  static const AttrList kAsyncUpdateDone = {"output_to_operand_aliasing", "calls"};
  static const AttrList kWhile = {"condition", "body"};
  static const AttrList kConditional = {"true_computation", "false_computation",
                                        "branch_computations"};
  static const AttrList kCall = {"to_apply", "is_composite"};

  switch (op) {
    case HloOpcode::kParameter:
      return kParameter;
    case HloOpcode::kGetTupleElement:
      return kGte;
    case HloOpcode::kBroadcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kReverse:
    case HloOpcode::kConcatenate:
    case HloOpcode::kGetDimensionSize:
    case HloOpcode::kSetDimensionSize:
      return kDimensions;
    case HloOpcode::kReduce:
    case HloOpcode::kMap:
      return kReduceLike;
    case HloOpcode::kReshape:
      return kReshape;
    case HloOpcode::kSort:
      return kSort;
    case HloOpcode::kScan:
      return kScan;
    case HloOpcode::kIota:
      return kIota;
    case HloOpcode::kCompare:
      return kCompare;
    case HloOpcode::kSlice:
      return kSlice;
    case HloOpcode::kDynamicSlice:
      return kDynamicSlice;
    case HloOpcode::kPad:
      return kPad;
    case HloOpcode::kReduceWindow:
      return kReduceWindow;
    case HloOpcode::kSelectAndScatter:
      return kSelectAndScatter;
    case HloOpcode::kConvolution:
      return kConvolution;
    case HloOpcode::kDot:
    case HloOpcode::kScaledDot:
      return kDot;
    case HloOpcode::kRaggedDot:
      return kRaggedDot;
    case HloOpcode::kGather:
      return kGather;
    case HloOpcode::kScatter:
      return kScatter;
    case HloOpcode::kFusion:
      return kFusion;
    case HloOpcode::kCustomCall:
      return kCustomCall;
    case HloOpcode::kBatchNormTraining:
    case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormGrad:
      return kBatchNorm;
    case HloOpcode::kFft:
      return kFft;
    case HloOpcode::kTriangularSolve:
      return kTriangularSolve;
    case HloOpcode::kCholesky:
      return kCholesky;
    case HloOpcode::kRng:
      return kRng;
    case HloOpcode::kRngBitGenerator:
      return kRngBitGenerator;
    case HloOpcode::kRngGetAndUpdateState:
      return kRngState;
    case HloOpcode::kReducePrecision:
      return kReducePrecision;
    case HloOpcode::kTopK:
      return kTopK;
    case HloOpcode::kInfeed:
      return kInfeed;
    case HloOpcode::kOutfeed:
      return kOutfeed;
    case HloOpcode::kDomain:
      return kDomain;
    case HloOpcode::kCopyStart:
      return kCopyStart;
    case HloOpcode::kSend:
    case HloOpcode::kRecv:
    case HloOpcode::kSendDone:
    case HloOpcode::kRecvDone:
      return kSendRecv;
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
      return kAllReduce;
    case HloOpcode::kReduceScatter:
      return kReduceScatter;
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
      return kAllGather;
    case HloOpcode::kAllToAll:
      return kAllToAll;
    case HloOpcode::kRaggedAllToAll:
      return kRaggedAllToAll;
    case HloOpcode::kCollectiveBroadcast:
      return kCollectiveBroadcast;
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
      return kCollectivePermute;
    case HloOpcode::kAsyncStart:
      return kAsyncStart;
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncDone:
      return kAsyncUpdateDone;
    case HloOpcode::kWhile:
      return kWhile;
    case HloOpcode::kConditional:
      return kConditional;
    case HloOpcode::kCall:
      return kCall;
    default:
      return kNone;
  }
}

const AttrList& CommonAttributeOrder() {
  static const AttrList kCommon = {"sharding",   "frontend_attributes", "control-predecessors",
                                   "statistics", "result_accuracy",     "origin",
                                   "metadata",   "backend_config"};
  return kCommon;
}

}  // namespace xlite
