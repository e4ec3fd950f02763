// HloInstruction: one node of a computation. Attributes are flat fields, as in
// XLA's HloInstructionProto; which ones an opcode uses is decided by the
// text format's attribute table (text/attributes.cc) and, later, the verifier.
#ifndef XLITE_IR_INSTRUCTION_H_
#define XLITE_IR_INSTRUCTION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xlite/ir/attributes.h"
#include "xlite/ir/heap_optional.h"
#include "xlite/ir/literal.h"
#include "xlite/ir/opcode.h"
#include "xlite/ir/shape.h"

namespace xlite {

class HloComputation;

// The attributes that only describe an instruction (where it came from, what
// was observed of it): never part of what it computes, so structural equality
// (ir/identical.h, XLA's Identical) ignores them.
struct InstructionAnnotations {
  OpMetadata metadata;
  std::optional<Statistics> statistics;
  std::string original_value;  // origin={...}: checked with XLA's grammar, kept as written

  bool operator==(const InstructionAnnotations&) const = default;
};

// The attributes that decide what an instruction computes.
struct InstructionSemantics {
  // Common to all opcodes.
  HeapOptional<HloSharding> sharding;
  FrontendAttributes frontend_attributes;
  std::string backend_config;                     // raw; printed bare when it lexes as a {...} dict
  std::optional<ResultAccuracy> result_accuracy;  // unary transcendentals only

  // Leaves and structure.
  HeapOptional<Literal> literal;  // constant; custom-call literal=
  int64_t parameter_number = 0;
  std::optional<std::vector<bool>> parameter_replication;
  int64_t tuple_index = 0;
  std::optional<std::vector<int64_t>> dimensions;
  int64_t iota_dimension = 0;
  std::vector<SliceDimension> slice;
  std::vector<int64_t> dynamic_slice_sizes;
  std::vector<PaddingDimension> padding;
  std::optional<int64_t> inferred_dimension;

  // Dot, convolution.
  std::optional<Window> window;
  HeapOptional<ConvolutionDimensionNumbers> convolution_dimension_numbers;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  HeapOptional<DotDimensionNumbers> dot_dimension_numbers;
  std::optional<RaggedDotDimensionNumbers> ragged_dot_dimension_numbers;
  std::vector<std::string> operand_precision;  // default, high, highest
  std::string algorithm;                       // dot algorithm or rng algorithm
  std::string sparsity;                        // sparsity=... as written
  std::string sparsity_config;                 // sparsity_config={...} as written

  // Gather, scatter.
  HeapOptional<GatherDimensionNumbers> gather_dimension_numbers;
  std::vector<int64_t> gather_slice_sizes;
  HeapOptional<ScatterDimensionNumbers> scatter_dimension_numbers;
  bool indices_are_sorted = false;
  bool unique_indices = false;

  // Compare.
  ComparisonDirection comparison_direction = ComparisonDirection::kEq;
  std::optional<ComparisonType> comparison_type;    // type=, the older spelling
  std::optional<ComparisonOrder> comparison_order;  // order=; see ir/comparison.h

  // Collectives and communication.
  std::optional<int64_t> channel_id;
  HeapOptional<ReplicaGroups> replica_groups;
  bool use_global_device_ids = false;
  bool constrain_layout = false;
  std::optional<SourceTargetPairs> source_target_pairs;
  std::optional<std::vector<std::vector<int64_t>>> slice_sizes_list;  // collective-permute
  bool has_dynamic_root = false;                                      // collective-broadcast
  bool is_host_transfer = false;

  // Calls and fusion.
  bool is_composite = false;
  std::string fusion_kind;  // kLoop, kInput, kOutput, kCustom
  std::vector<OutputOperandAlias> output_to_operand_aliasing;
  std::string async_execution_thread;  // "main" unless set
  std::optional<int64_t> cross_program_prefetch_index;

  // Custom call.
  std::string custom_call_target;
  bool custom_call_has_side_effect = false;
  std::string api_version;           // API_VERSION_*; empty = original
  std::string custom_call_schedule;  // SCHEDULE_*; empty = none
  std::optional<std::vector<Shape>> operand_layout_constraints;

  // Numerics and misc.
  float epsilon = 0;
  int64_t feature_index = 0;
  int64_t exponent_bits = 0;
  int64_t mantissa_bits = 0;
  std::string distribution;  // rng_uniform, rng_normal
  std::string fft_type;
  std::vector<int64_t> fft_length;
  bool left_side = false;
  bool lower = false;
  bool unit_diagonal = false;
  std::string transpose_a;  // NO_TRANSPOSE, TRANSPOSE, ADJOINT
  int64_t k = 0;
  bool largest = true;
  std::string infeed_config;
  std::string outfeed_config;
  HeapOptional<Shape> outfeed_shape;
  bool is_stable = false;
  std::optional<bool> topk_is_stable;
  HeapOptional<DomainMetadata> domain;
  std::optional<int64_t> num_carries;  // scan
  bool is_reverse = false;             // scan
  std::optional<bool> is_associative;  // scan
  int64_t delta = 0;                   // rng-get-and-update-state
  std::string padding_type;            // custom-call PADDING_*
  std::string convolution_kind;        // fprop, wgrad, dgrad

  bool operator==(const InstructionSemantics&) const = default;
};

// Every attribute an instruction may carry, as flat fields. Defaults are the
// values XLA omits when printing.
struct InstructionAttributes : InstructionSemantics, InstructionAnnotations {
  // Equal in everything but the annotations.
  bool SameSemantics(const InstructionAttributes& other) const {
    return static_cast<const InstructionSemantics&>(*this) == other;
  }
  bool operator==(const InstructionAttributes&) const = default;
};

class HloInstruction {
 public:
  HloInstruction(HloOpcode opcode, std::string name, Shape shape)
      : opcode_(opcode), name_(std::move(name)), shape_(std::move(shape)) {}

  HloOpcode opcode() const { return opcode_; }
  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  const Shape& shape() const { return shape_; }
  Shape& mutable_shape() { return shape_; }

  const std::vector<HloInstruction*>& operands() const { return operands_; }
  HloInstruction* operand(int64_t i) const { return operands_[i]; }
  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  void AppendOperand(HloInstruction* op);
  // Removes this instruction from its operands' user lists (before it is
  // discarded without joining a computation).
  void DetachFromOperands();
  // Makes every user of this instruction (and its computation's root, if it is
  // the root) use `replacement` instead. Shapes are the caller's concern.
  void ReplaceAllUsesWith(HloInstruction* replacement);
  // Makes operand `i` `replacement`, keeping both user lists right.
  void ReplaceOperandWith(int64_t i, HloInstruction* replacement);
  // Makes `user` read `replacement` wherever it read this instruction.
  void ReplaceUseWith(HloInstruction* user, HloInstruction* replacement);
  // Removes this instruction from the control edges of others.
  void DropControlDependencies();
  // True if removing this instruction could change what a program does even
  // when nothing uses its value (XLA's HasSideEffect).
  bool HasSideEffect() const;
  const std::vector<HloInstruction*>& users() const { return users_; }

  const std::vector<HloComputation*>& called_computations() const { return called_; }
  void AppendCalledComputation(HloComputation* c) { called_.push_back(c); }
  void set_called_computations(std::vector<HloComputation*> c) { called_ = std::move(c); }

  const std::vector<HloInstruction*>& control_predecessors() const { return control_preds_; }
  const std::vector<HloInstruction*>& control_successors() const { return control_succs_; }
  bool HasControlEdges() const { return !control_preds_.empty() || !control_succs_.empty(); }
  void AddControlDependencyTo(HloInstruction* successor);

  HloComputation* parent() const { return parent_; }
  void set_parent(HloComputation* c) { parent_ = c; }

  InstructionAttributes& attrs() { return attrs_; }
  const InstructionAttributes& attrs() const { return attrs_; }

  // For async-start/update/done: the wrapped computation and its root.
  HloComputation* async_wrapped_computation() const;
  HloInstruction* async_wrapped_instruction() const;
  // The opcode a generic async op wraps (kCustomCall for custom-call-start).
  std::optional<HloOpcode> async_wrapped_opcode() const;

 private:
  HloOpcode opcode_;
  std::string name_;
  Shape shape_;
  std::vector<HloInstruction*> operands_;
  std::vector<HloInstruction*> users_;
  std::vector<HloComputation*> called_;
  std::vector<HloInstruction*> control_preds_;
  std::vector<HloInstruction*> control_succs_;
  HloComputation* parent_ = nullptr;
  InstructionAttributes attrs_;
};

}  // namespace xlite

#endif  // XLITE_IR_INSTRUCTION_H_
