// Structured instruction attributes, one struct per family, mirroring the
// fields of XLA's HloInstructionProto and the text format's spellings.
#ifndef XLITE_IR_ATTRIBUTES_H_
#define XLITE_IR_ATTRIBUTES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "xlite/ir/primitive_type.h"
#include "xlite/ir/shape.h"

namespace xlite {

// metadata={op_type="..." op_name="..." ...}
struct OpMetadata {
  std::string op_type;
  std::string op_name;
  std::string source_file;
  int64_t source_line = 0;
  int64_t source_end_line = 0;
  int64_t source_column = 0;
  int64_t source_end_column = 0;
  std::vector<int64_t> profile_type;
  std::string deduplicated_name;
  bool preserve_layout = false;
  std::string scheduling_name;
  int64_t stack_frame_id = 0;
  bool empty() const;
  bool operator==(const OpMetadata&) const = default;
};

// A device mesh with named axes (XLA's Mesh, Shardy's sdy.mesh):
// mesh['data'=2,'model'=2] lists devices in iota order; device_ids gives any
// other order; maximal_mesh[device_id=N] is one device and no axes.
struct ShardingMesh {
  std::vector<std::string> axis_names;
  std::vector<int64_t> axis_sizes;
  std::vector<int64_t> device_ids;        // row-major over axis_sizes; empty = iota
  std::optional<int64_t> maximal_device;  // maximal_mesh[device_id=N]
  // device_ids=([4,16]T(1,0)): iota(product) reshaped to these dims and
  // transposed by this permutation (XLA's IotaTileAssignment); set instead
  // of device_ids.
  std::vector<int64_t> device_ids_iota_reshape;
  std::vector<int64_t> device_ids_iota_transpose;
  bool operator==(const ShardingMesh&) const = default;
};

// One mesh axis, or the sub-axis 'name':(pre_size)size of it (XLA's AxisRef).
struct MeshAxisRef {
  int64_t axis = 0;      // index into ShardingMesh::axis_names
  int64_t pre_size = 1;  // sub-axis only
  int64_t size = 0;      // sub-axis size; 0 = the whole axis
  bool operator==(const MeshAxisRef&) const = default;
};

// sharding={mesh[...], [{}, {'model'}], replicated={..}, ...}: XLA's
// NamedSharding. Each tensor dimension is split over its axes, major first; an
// open dimension ({?} / {'a', ?}) may be sharded further by propagation.
struct NamedSharding {
  struct Dim {
    std::vector<MeshAxisRef> axes;
    bool is_closed = true;
    bool operator==(const Dim&) const = default;
  };
  // How partial values on the unreduced axes combine: unreduced={..} sums,
  // unreduced=max{..} / unreduced=min{..} take the max / min.
  enum class Reduction { kSum, kMax, kMin };
  ShardingMesh mesh;
  std::vector<Dim> dims;
  std::vector<MeshAxisRef> replicated_axes;
  std::vector<MeshAxisRef> unreduced_axes;
  std::vector<MeshAxisRef> manual_axes;
  Reduction unreduced_reduction = Reduction::kSum;
  bool operator==(const NamedSharding&) const = default;
};

// sharding={...}: XLA's HloSharding.
struct HloSharding {
  enum class Kind { kReplicated, kMaximal, kManual, kUnknown, kUnreduced, kTiled, kTuple, kNamed };
  Kind kind = Kind::kReplicated;
  int64_t device = 0;                    // kMaximal
  std::vector<int64_t> tile_dimensions;  // kTiled: devices=[...]
  bool iota = false;                     // devices given as <=[reshape]T(perm)
  std::vector<int64_t> devices;          // explicit device list (iota == false)
  std::vector<int64_t> iota_reshape;
  std::vector<int64_t> iota_transpose;
  bool last_tile_dim_replicate = false;
  std::vector<std::string> last_tile_dims;  // subgroup types: manual, replicated, ...
  std::vector<HloSharding> tuple_elements;  // kTuple
  std::optional<NamedSharding> named;       // kNamed
  std::vector<OpMetadata> metadata;
  std::string shard_group;  // "shard_as 1" or "shard_like 2"; empty if none
  bool operator==(const HloSharding&) const = default;
};

// result_accuracy={mode=highest} or {tolerance={atol=..,rtol=..,ulps=..}}:
// how exact a transcendental unary op must be (XLA's ResultAccuracy).
struct ResultAccuracy {
  enum class Mode { kDefault, kHighest };
  struct Tolerance {
    double atol = 0;
    double rtol = 0;
    int64_t ulps = 0;
    bool operator==(const Tolerance&) const = default;
  };
  Mode mode = Mode::kDefault;
  std::optional<Tolerance> tolerance;
  // XLA prints the attribute only when it says more than the default.
  bool IsDefault() const { return !tolerance && mode == Mode::kDefault; }
  bool operator==(const ResultAccuracy&) const = default;
};

// statistics={visualizing_index=1,stat-1=33,stat-2=44}: XLA's StatisticsViz.
struct Statistics {
  int64_t visualizing_index = 0;
  std::vector<std::pair<std::string, double>> values;
  bool operator==(const Statistics&) const = default;
};

// replica_groups={{0,1},{2,3}} or the iota form [2,2]<=[4] / [2,2]<=[2,2]T(1,0).
struct ReplicaGroups {
  std::string mesh;  // mesh['a'=2,'b'=2] {'a'} form, as written
  bool iota = false;
  std::vector<std::vector<int64_t>> groups;
  std::vector<int64_t> iota_group_shape;  // [num_groups, group_size]
  std::vector<int64_t> iota_reshape;
  std::vector<int64_t> iota_transpose;
  bool operator==(const ReplicaGroups&) const = default;
};

struct WindowDimension {
  int64_t size = 0;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t window_dilation = 1;
  int64_t base_dilation = 1;
  bool window_reversal = false;
  bool operator==(const WindowDimension&) const = default;
};

// window={size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=.. rhs_dilate=.. rhs_reversal=..}
struct Window {
  std::vector<WindowDimension> dimensions;
  bool operator==(const Window&) const = default;
};

// dim_labels=b01f_01io->b01f
struct ConvolutionDimensionNumbers {
  int64_t input_batch_dimension = 0;
  int64_t input_feature_dimension = 0;
  std::vector<int64_t> input_spatial_dimensions;
  int64_t kernel_input_feature_dimension = 0;
  int64_t kernel_output_feature_dimension = 0;
  std::vector<int64_t> kernel_spatial_dimensions;
  int64_t output_batch_dimension = 0;
  int64_t output_feature_dimension = 0;
  std::vector<int64_t> output_spatial_dimensions;
  // Ranks as written in dim_labels; they differ from 2 + spatial dims only when
  // some dimensions are unknown ('?', allowed on custom calls).
  int64_t input_rank = 0, kernel_rank = 0, output_rank = 0;
  bool operator==(const ConvolutionDimensionNumbers&) const = default;
};

struct DotDimensionNumbers {
  std::vector<int64_t> lhs_batch_dimensions;
  std::vector<int64_t> rhs_batch_dimensions;
  std::vector<int64_t> lhs_contracting_dimensions;
  std::vector<int64_t> rhs_contracting_dimensions;
  bool operator==(const DotDimensionNumbers&) const = default;
};

struct RaggedDotDimensionNumbers {
  std::vector<int64_t> lhs_ragged_dimensions;
  std::vector<int64_t> rhs_group_dimensions;
  bool operator==(const RaggedDotDimensionNumbers&) const = default;
};

struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims;
  std::vector<int64_t> collapsed_slice_dims;
  std::vector<int64_t> start_index_map;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> start_indices_batching_dims;
  int64_t index_vector_dim = 0;
  bool operator==(const GatherDimensionNumbers&) const = default;
};

struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> inserted_window_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  std::vector<int64_t> input_batching_dims;
  std::vector<int64_t> scatter_indices_batching_dims;
  int64_t index_vector_dim = 0;
  bool operator==(const ScatterDimensionNumbers&) const = default;
};

// slice={[start:limit:stride], ...}
struct SliceDimension {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
  bool operator==(const SliceDimension&) const = default;
};

// padding=low_high_interior x ...
struct PaddingDimension {
  int64_t low = 0;
  int64_t high = 0;
  int64_t interior = 0;
  bool operator==(const PaddingDimension&) const = default;
};

// domain={kind="sharding", entry={...}, exit={...}}
struct DomainMetadata {
  std::string kind;
  HloSharding entry;
  HloSharding exit;
  bool operator==(const DomainMetadata&) const = default;
};

// output_to_operand_aliasing={{out}: (operand, {index})}
struct OutputOperandAlias {
  std::vector<int64_t> output_index;
  int64_t operand = 0;
  std::vector<int64_t> operand_index;
  bool operator==(const OutputOperandAlias&) const = default;
};

// source_target_pairs={{0,1},{1,2}}
using SourceTargetPairs = std::vector<std::pair<int64_t, int64_t>>;

// Sorted key/value pairs; values print quoted unless they lex as a {...} dict.
using FrontendAttributes = std::map<std::string, std::string>;

enum class ComparisonDirection { kEq, kNe, kGe, kGt, kLe, kLt };
// type=... (XLA's deprecated Comparison::Type) and order=... (Comparison::Order).
enum class ComparisonType { kDefault, kFloat, kTotalOrder, kSigned, kUnsigned };
enum class ComparisonOrder { kTotal, kWeak, kPartial };

}  // namespace xlite

#endif  // XLITE_IR_ATTRIBUTES_H_
