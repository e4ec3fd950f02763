#include "xlite/builder/xla_builder.h"

#include "absl/strings/str_cat.h"
#include "xlite/verify/shape_inference.h"
#include "xlite/verify/verifier.h"

namespace xlite {

XlaBuilder::XlaBuilder(std::string name) : XlaBuilder(std::move(name), nullptr) {}

XlaBuilder::XlaBuilder(std::string name, XlaBuilder* parent)
    : name_(std::move(name)),
      parent_(parent),
      computation_(std::make_unique<HloComputation>(name_)) {}

XlaBuilder::~XlaBuilder() = default;

std::unique_ptr<XlaBuilder> XlaBuilder::CreateSubBuilder(const std::string& name) {
  return std::unique_ptr<XlaBuilder>(new XlaBuilder(root_builder()->UniqueName(name), this));
}

std::string XlaBuilder::UniqueName(absl::string_view base) {
  XlaBuilder* root = root_builder();
  return absl::StrCat(base, ".", root->next_id_++);
}

XlaOp XlaBuilder::NoteError(absl::Status status) {
  XlaBuilder* b = this;
  while (b) {
    if (b->first_error_.ok()) b->first_error_ = status;
    b = b->parent_;
  }
  return XlaOp();
}

bool XlaBuilder::CheckOperands(absl::Span<const XlaOp> ops) {
  for (const XlaOp& op : ops) {
    if (!op.valid()) {
      if (first_error_.ok())
        NoteError(absl::InvalidArgumentError("operand is invalid (an earlier op failed)"));
      return false;
    }
    if (op.builder() != this) {
      NoteError(absl::InvalidArgumentError(
          absl::StrCat("operand '", op.instruction()->name(), "' belongs to builder '",
                       op.builder()->name_, "', not '", name_, "'")));
      return false;
    }
  }
  return true;
}

std::unique_ptr<HloInstruction> XlaBuilder::NewInstruction(HloOpcode op, const Shape& shape,
                                                           absl::Span<const XlaOp> operands) {
  auto instr = std::make_unique<HloInstruction>(op, UniqueName(HloOpcodeString(op)), shape);
  for (const XlaOp& o : operands) instr->AppendOperand(o.instruction());
  return instr;
}

XlaOp XlaBuilder::Add(std::unique_ptr<HloInstruction> instr, bool infer) {
  instr->set_parent(computation_.get());
  if (infer) {
    absl::StatusOr<Shape> shape = InferShape(*instr);
    if (!shape.ok()) {
      instr->DetachFromOperands();
      NoteError(shape.status());
      return XlaOp();
    }
    instr->mutable_shape() = *shape;
  }
  instr->mutable_shape().SetDefaultLayoutIfMissing();
  HloInstruction* raw = computation_->AddInstruction(std::move(instr));
  last_ = raw;
  return XlaOp(raw, this);
}

XlaOp XlaBuilder::Parameter(int64_t number, const Shape& shape, const std::string& name) {
  if (number < 0) return NoteError(absl::InvalidArgumentError("parameter number must be >= 0"));
  if (number < computation_->num_parameters() && computation_->parameter_instruction(number)) {
    return NoteError(
        absl::InvalidArgumentError(absl::StrCat("parameter ", number, " is defined twice")));
  }
  auto instr = std::make_unique<HloInstruction>(HloOpcode::kParameter, name, shape);
  instr->attrs().parameter_number = number;
  XlaOp op = Add(std::move(instr), /*infer=*/false);
  computation_->SetParameter(number, op.instruction());
  return op;
}

XlaOp XlaBuilder::ConstantLiteral(const Literal& literal) {
  auto instr = NewInstruction(HloOpcode::kConstant, literal.shape(), {});
  instr->attrs().literal = literal;
  return Add(std::move(instr), /*infer=*/false);
}

XlaOp XlaBuilder::ConstantR0(PrimitiveType type, double value) {
  Literal lit(Shape::Scalar(type));
  lit.SetDouble(0, value);
  return ConstantLiteral(lit);
}

XlaOp XlaBuilder::ConstantR1(PrimitiveType type, absl::Span<const double> values) {
  Literal lit(Shape::Array(type, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) lit.SetDouble(i, values[i]);
  return ConstantLiteral(lit);
}

XlaOp XlaBuilder::Iota(const Shape& shape, int64_t iota_dimension) {
  auto instr = NewInstruction(HloOpcode::kIota, shape, {});
  instr->attrs().iota_dimension = iota_dimension;
  return Add(std::move(instr));
}

XlaOp XlaBuilder::Unary(HloOpcode op, XlaOp x) {
  if (!CheckOperands({x})) return XlaOp();
  return Add(NewInstruction(op, x.instruction()->shape(), {x}));
}

XlaOp XlaBuilder::Binary(HloOpcode op, XlaOp lhs, XlaOp rhs) {
  if (!CheckOperands({lhs, rhs})) return XlaOp();
  return Add(NewInstruction(op, lhs.instruction()->shape(), {lhs, rhs}));
}

XlaOp XlaBuilder::Compare(XlaOp a, XlaOp b, ComparisonDirection direction) {
  if (!CheckOperands({a, b})) return XlaOp();
  Shape s = a.instruction()->shape();
  s.set_element_type(PrimitiveType::PRED);
  auto instr = NewInstruction(HloOpcode::kCompare, s, {a, b});
  instr->attrs().comparison_direction = direction;
  return Add(std::move(instr));
}

XlaOp XlaBuilder::Select(XlaOp pred, XlaOp on_true, XlaOp on_false) {
  if (!CheckOperands({pred, on_true, on_false})) return XlaOp();
  return Add(NewInstruction(HloOpcode::kSelect, on_true.instruction()->shape(),
                            {pred, on_true, on_false}));
}

XlaOp XlaBuilder::ConvertElementType(XlaOp x, PrimitiveType type) {
  if (!CheckOperands({x})) return XlaOp();
  Shape s = x.instruction()->shape();
  s.set_element_type(type);
  s.clear_layout();
  return Add(NewInstruction(HloOpcode::kConvert, s, {x}));
}

XlaOp XlaBuilder::Broadcast(XlaOp x, absl::Span<const int64_t> sizes) {
  if (!CheckOperands({x})) return XlaOp();
  const Shape& in = x.instruction()->shape();
  std::vector<int64_t> dims(sizes.begin(), sizes.end());
  std::vector<int64_t> mapping;
  for (int64_t i = 0; i < in.rank(); ++i) {
    mapping.push_back(static_cast<int64_t>(sizes.size()) + i);
    dims.push_back(in.dimensions(i));
  }
  return BroadcastInDim(x, dims, mapping);
}

XlaOp XlaBuilder::BroadcastInDim(XlaOp x, absl::Span<const int64_t> out_dims,
                                 absl::Span<const int64_t> broadcast_dimensions) {
  if (!CheckOperands({x})) return XlaOp();
  Shape s = Shape::Array(x.instruction()->shape().element_type(),
                         std::vector<int64_t>(out_dims.begin(), out_dims.end()));
  auto instr = NewInstruction(HloOpcode::kBroadcast, s, {x});
  instr->attrs().dimensions =
      std::vector<int64_t>(broadcast_dimensions.begin(), broadcast_dimensions.end());
  return Add(std::move(instr));
}

XlaOp XlaBuilder::Reshape(XlaOp x, absl::Span<const int64_t> new_sizes) {
  if (!CheckOperands({x})) return XlaOp();
  Shape s = Shape::Array(x.instruction()->shape().element_type(),
                         std::vector<int64_t>(new_sizes.begin(), new_sizes.end()));
  return Add(NewInstruction(HloOpcode::kReshape, s, {x}));
}

XlaOp XlaBuilder::Transpose(XlaOp x, absl::Span<const int64_t> permutation) {
  if (!CheckOperands({x})) return XlaOp();
  auto instr = NewInstruction(HloOpcode::kTranspose, x.instruction()->shape(), {x});
  instr->attrs().dimensions = std::vector<int64_t>(permutation.begin(), permutation.end());
  return Add(std::move(instr));
}

XlaOp XlaBuilder::Slice(XlaOp x, absl::Span<const int64_t> starts, absl::Span<const int64_t> limits,
                        absl::Span<const int64_t> strides) {
  if (!CheckOperands({x})) return XlaOp();
  if (starts.size() != limits.size() || starts.size() != strides.size()) {
    return NoteError(
        absl::InvalidArgumentError("Slice: starts, limits and strides differ in length"));
  }
  auto instr = NewInstruction(HloOpcode::kSlice, x.instruction()->shape(), {x});
  for (size_t i = 0; i < starts.size(); ++i)
    instr->attrs().slice.push_back({starts[i], limits[i], strides[i]});
  return Add(std::move(instr));
}

XlaOp XlaBuilder::ConcatInDim(absl::Span<const XlaOp> ops, int64_t dimension) {
  if (ops.empty())
    return NoteError(absl::InvalidArgumentError("ConcatInDim needs at least one operand"));
  if (!CheckOperands(ops)) return XlaOp();
  auto instr = NewInstruction(HloOpcode::kConcatenate, ops[0].instruction()->shape(), ops);
  instr->attrs().dimensions = std::vector<int64_t>{dimension};
  return Add(std::move(instr));
}

XlaOp XlaBuilder::Dot(XlaOp lhs, XlaOp rhs) {
  if (!CheckOperands({lhs, rhs})) return XlaOp();
  DotDimensionNumbers d;
  d.lhs_contracting_dimensions = {lhs.instruction()->shape().rank() - 1};
  d.rhs_contracting_dimensions = {0};
  return DotGeneral(lhs, rhs, d);
}

XlaOp XlaBuilder::DotGeneral(XlaOp lhs, XlaOp rhs, const DotDimensionNumbers& dnums) {
  if (!CheckOperands({lhs, rhs})) return XlaOp();
  // The declared element type is the preferred result type: the lhs's.
  auto instr = NewInstruction(HloOpcode::kDot,
                              Shape::Scalar(lhs.instruction()->shape().element_type()), {lhs, rhs});
  instr->attrs().dot_dimension_numbers = dnums;
  return Add(std::move(instr));
}

XlaOp XlaBuilder::Reduce(XlaOp operand, XlaOp init, const XlaComputation& computation,
                         absl::Span<const int64_t> dimensions) {
  if (!CheckOperands({operand, init})) return XlaOp();
  if (!computation.computation())
    return NoteError(absl::InvalidArgumentError("Reduce: computation is not built"));
  auto instr = NewInstruction(HloOpcode::kReduce, operand.instruction()->shape(), {operand, init});
  instr->attrs().dimensions = std::vector<int64_t>(dimensions.begin(), dimensions.end());
  instr->AppendCalledComputation(computation.computation());
  return Add(std::move(instr));
}

XlaOp XlaBuilder::While(const XlaComputation& condition, const XlaComputation& body, XlaOp init) {
  if (!CheckOperands({init})) return XlaOp();
  if (!condition.computation() || !body.computation()) {
    return NoteError(absl::InvalidArgumentError("While: condition or body is not built"));
  }
  auto instr = NewInstruction(HloOpcode::kWhile, init.instruction()->shape(), {init});
  instr->set_called_computations({condition.computation(), body.computation()});
  return Add(std::move(instr));
}

XlaOp XlaBuilder::Conditional(XlaOp predicate, XlaOp true_operand,
                              const XlaComputation& true_computation, XlaOp false_operand,
                              const XlaComputation& false_computation) {
  if (!CheckOperands({predicate, true_operand, false_operand})) return XlaOp();
  if (!true_computation.computation() || !false_computation.computation()) {
    return NoteError(absl::InvalidArgumentError("Conditional: a branch is not built"));
  }
  auto instr = NewInstruction(HloOpcode::kConditional,
                              true_computation.computation()->root_instruction()->shape(),
                              {predicate, true_operand, false_operand});
  instr->set_called_computations({true_computation.computation(), false_computation.computation()});
  return Add(std::move(instr));
}

XlaOp XlaBuilder::Tuple(absl::Span<const XlaOp> elements) {
  if (!CheckOperands(elements)) return XlaOp();
  std::vector<Shape> shapes;
  for (const XlaOp& e : elements) shapes.push_back(e.instruction()->shape());
  return Add(NewInstruction(HloOpcode::kTuple, Shape::Tuple(shapes), elements));
}

XlaOp XlaBuilder::GetTupleElement(XlaOp tuple, int64_t index) {
  if (!CheckOperands({tuple})) return XlaOp();
  const Shape& s = tuple.instruction()->shape();
  if (!s.IsTuple() || index < 0 || index >= s.tuple_shapes_size()) {
    return NoteError(absl::InvalidArgumentError(absl::StrCat(
        "GetTupleElement: index ", index, " is out of range for ", s.ToString(false))));
  }
  auto instr = NewInstruction(HloOpcode::kGetTupleElement, s.tuple_shapes(index), {tuple});
  instr->attrs().tuple_index = index;
  return Add(std::move(instr));
}

XlaOp XlaBuilder::CustomCall(const std::string& target, absl::Span<const XlaOp> operands,
                             const Shape& shape, const std::string& backend_config,
                             bool has_side_effect) {
  if (!CheckOperands(operands)) return XlaOp();
  auto instr = NewInstruction(HloOpcode::kCustomCall, shape, operands);
  instr->attrs().custom_call_target = target;
  instr->attrs().backend_config = backend_config;
  instr->attrs().custom_call_has_side_effect = has_side_effect;
  return Add(std::move(instr));
}

void XlaBuilder::SetUpAlias(const std::vector<int64_t>& output_index, int64_t param_number,
                            const std::vector<int64_t>& param_index, AliasKind kind) {
  InputOutputAlias a;
  a.output_index = output_index;
  a.parameter_number = param_number;
  a.parameter_index = param_index;
  a.kind = kind;
  root_builder()->aliases_.push_back(std::move(a));
}

absl::StatusOr<XlaComputation> XlaBuilder::BuildSubComputation(XlaOp root) {
  if (!parent_) return absl::FailedPreconditionError("BuildSubComputation is for sub-builders");
  if (!first_error_.ok()) return first_error_;
  if (!root.valid() || root.builder() != this) {
    return absl::InvalidArgumentError(
        absl::StrCat("root of '", name_, "' is not an op of this builder"));
  }
  computation_->set_root_instruction(root.instruction());
  HloComputation* raw = computation_.get();
  root_builder()->sub_computations_.push_back(std::move(computation_));
  computation_ = std::make_unique<HloComputation>(name_);
  return XlaComputation(raw);
}

absl::StatusOr<std::unique_ptr<HloModule>> XlaBuilder::Build() {
  if (!last_)
    return absl::FailedPreconditionError(absl::StrCat("builder '", name_, "' has no ops"));
  return Build(XlaOp(last_, this));
}

absl::StatusOr<std::unique_ptr<HloModule>> XlaBuilder::Build(XlaOp root) {
  if (parent_) return absl::FailedPreconditionError("sub-builders finish with BuildSubComputation");
  if (!first_error_.ok()) return first_error_;
  if (!root.valid() || root.builder() != this) {
    return absl::InvalidArgumentError("the root is not an op of this builder");
  }
  computation_->set_root_instruction(root.instruction());
  auto module = std::make_unique<HloModule>(name_);
  for (auto& c : sub_computations_) module->AddComputation(std::move(c));
  sub_computations_.clear();
  HloComputation* entry = module->AddComputation(std::move(computation_));
  computation_ = std::make_unique<HloComputation>(name_);
  module->set_entry_computation(entry);
  module->config().entry_computation_layout = module->ComputeEntryComputationLayout();
  module->config().input_output_alias = aliases_;
  module->config().input_output_alias_present = !aliases_.empty();
  absl::Status verified = VerifyModule(*module);
  if (!verified.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("built module does not verify: ", verified.message()));
  }
  return module;
}

}  // namespace xlite
