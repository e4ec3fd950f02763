// XlaBuilder: build HLO modules from C++ without writing text, modelled on
// XLA's XlaBuilder. Ops return XlaOp handles; the first error is recorded and
// returned by Build(), which also runs the verifier.
//
//   XlaBuilder b("axpy");
//   XlaOp a = b.Parameter(0, Shape::Scalar(F32), "a");
//   XlaOp x = b.Parameter(1, Shape::Array(F32, {8}), "x");
//   b.Add(b.Mul(b.Broadcast(a, {8}), x), x);
//   absl::StatusOr<std::unique_ptr<HloModule>> m = b.Build();
#ifndef XLITE_BUILDER_XLA_BUILDER_H_
#define XLITE_BUILDER_XLA_BUILDER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "xlite/ir/module.h"

namespace xlite {

class XlaBuilder;

// A value produced by an op of a builder.
class XlaOp {
 public:
  XlaOp() = default;
  bool valid() const { return instr_ != nullptr; }
  HloInstruction* instruction() const { return instr_; }
  XlaBuilder* builder() const { return builder_; }

 private:
  friend class XlaBuilder;
  XlaOp(HloInstruction* i, XlaBuilder* b) : instr_(i), builder_(b) {}
  HloInstruction* instr_ = nullptr;
  XlaBuilder* builder_ = nullptr;
};

// A computation built by a sub-builder, for Reduce/While/Conditional/Map.
class XlaComputation {
 public:
  XlaComputation() = default;
  HloComputation* computation() const { return computation_; }

 private:
  friend class XlaBuilder;
  explicit XlaComputation(HloComputation* c) : computation_(c) {}
  HloComputation* computation_ = nullptr;
};

class XlaBuilder {
 public:
  explicit XlaBuilder(std::string name);
  ~XlaBuilder();

  // A builder for a nested computation; its Build(root) returns an XlaComputation
  // owned by this builder's module.
  std::unique_ptr<XlaBuilder> CreateSubBuilder(const std::string& name);

  // Leaves.
  XlaOp Parameter(int64_t number, const Shape& shape, const std::string& name);
  XlaOp ConstantLiteral(const Literal& literal);
  XlaOp ConstantR0(PrimitiveType type, double value);
  XlaOp ConstantR1(PrimitiveType type, absl::Span<const double> values);
  XlaOp Iota(const Shape& shape, int64_t iota_dimension);

  // Elementwise.
  XlaOp Unary(HloOpcode op, XlaOp x);
  XlaOp Binary(HloOpcode op, XlaOp lhs, XlaOp rhs);
  XlaOp Add(XlaOp a, XlaOp b) { return Binary(HloOpcode::kAdd, a, b); }
  XlaOp Sub(XlaOp a, XlaOp b) { return Binary(HloOpcode::kSubtract, a, b); }
  XlaOp Mul(XlaOp a, XlaOp b) { return Binary(HloOpcode::kMultiply, a, b); }
  XlaOp Div(XlaOp a, XlaOp b) { return Binary(HloOpcode::kDivide, a, b); }
  XlaOp Max(XlaOp a, XlaOp b) { return Binary(HloOpcode::kMaximum, a, b); }
  XlaOp Min(XlaOp a, XlaOp b) { return Binary(HloOpcode::kMinimum, a, b); }
  XlaOp Pow(XlaOp a, XlaOp b) { return Binary(HloOpcode::kPower, a, b); }
  XlaOp And(XlaOp a, XlaOp b) { return Binary(HloOpcode::kAnd, a, b); }
  XlaOp Or(XlaOp a, XlaOp b) { return Binary(HloOpcode::kOr, a, b); }
  XlaOp Exp(XlaOp x) { return Unary(HloOpcode::kExp, x); }
  XlaOp Log(XlaOp x) { return Unary(HloOpcode::kLog, x); }
  XlaOp Neg(XlaOp x) { return Unary(HloOpcode::kNegate, x); }
  XlaOp Abs(XlaOp x) { return Unary(HloOpcode::kAbs, x); }
  XlaOp Tanh(XlaOp x) { return Unary(HloOpcode::kTanh, x); }
  XlaOp Sqrt(XlaOp x) { return Unary(HloOpcode::kSqrt, x); }
  XlaOp Compare(XlaOp a, XlaOp b, ComparisonDirection direction);
  XlaOp Select(XlaOp pred, XlaOp on_true, XlaOp on_false);
  XlaOp ConvertElementType(XlaOp x, PrimitiveType type);

  // Shape manipulation.
  // Adds leading dimensions of the given sizes (XLA's Broadcast).
  XlaOp Broadcast(XlaOp x, absl::Span<const int64_t> sizes);
  // Maps operand dimension i to result dimension broadcast_dimensions[i].
  XlaOp BroadcastInDim(XlaOp x, absl::Span<const int64_t> out_dims,
                       absl::Span<const int64_t> broadcast_dimensions);
  XlaOp Reshape(XlaOp x, absl::Span<const int64_t> new_sizes);
  XlaOp Transpose(XlaOp x, absl::Span<const int64_t> permutation);
  XlaOp Slice(XlaOp x, absl::Span<const int64_t> starts, absl::Span<const int64_t> limits,
              absl::Span<const int64_t> strides);
  XlaOp ConcatInDim(absl::Span<const XlaOp> ops, int64_t dimension);

  // Linear algebra and reductions.
  XlaOp Dot(XlaOp lhs, XlaOp rhs);  // matrix/vector product, contracting lhs's last dim
  XlaOp DotGeneral(XlaOp lhs, XlaOp rhs, const DotDimensionNumbers& dnums);
  XlaOp Reduce(XlaOp operand, XlaOp init, const XlaComputation& computation,
               absl::Span<const int64_t> dimensions);

  // Control flow and structure.
  XlaOp While(const XlaComputation& condition, const XlaComputation& body, XlaOp init);
  XlaOp Conditional(XlaOp predicate, XlaOp true_operand, const XlaComputation& true_computation,
                    XlaOp false_operand, const XlaComputation& false_computation);
  XlaOp Tuple(absl::Span<const XlaOp> elements);
  XlaOp GetTupleElement(XlaOp tuple, int64_t index);
  XlaOp CustomCall(const std::string& target, absl::Span<const XlaOp> operands, const Shape& shape,
                   const std::string& backend_config = "", bool has_side_effect = false);

  // Declares that output `output_index` may reuse (or must reuse) the buffer of
  // parameter `param_number` at `param_index`; checked by the verifier.
  void SetUpAlias(const std::vector<int64_t>& output_index, int64_t param_number,
                  const std::vector<int64_t>& param_index, AliasKind kind = AliasKind::kMayAlias);

  // The module with this builder's computation as entry, rooted at the last op
  // (or `root`), verified.
  absl::StatusOr<std::unique_ptr<HloModule>> Build();
  absl::StatusOr<std::unique_ptr<HloModule>> Build(XlaOp root);
  // For sub-builders: the finished computation.
  absl::StatusOr<XlaComputation> BuildSubComputation(XlaOp root);

  // The first error recorded, if any.
  absl::Status first_error() const { return first_error_; }

 private:
  XlaBuilder(std::string name, XlaBuilder* parent);
  XlaBuilder* root_builder() { return parent_ ? parent_->root_builder() : this; }
  // Adds `instr` (operands already appended), inferring its shape when
  // `infer` is true; records errors.
  XlaOp Add(std::unique_ptr<HloInstruction> instr, bool infer = true);
  std::unique_ptr<HloInstruction> NewInstruction(HloOpcode op, const Shape& shape,
                                                 absl::Span<const XlaOp> operands);
  bool CheckOperands(absl::Span<const XlaOp> ops);
  XlaOp NoteError(absl::Status status);
  std::string UniqueName(absl::string_view base);

  std::string name_;
  XlaBuilder* parent_ = nullptr;
  std::unique_ptr<HloComputation> computation_;
  HloInstruction* last_ = nullptr;
  absl::Status first_error_;
  int64_t next_id_ = 0;
  // Owned by the root builder: finished sub-computations, in build order.
  std::vector<std::unique_ptr<HloComputation>> sub_computations_;
  std::vector<InputOutputAlias> aliases_;
};

}  // namespace xlite

#endif  // XLITE_BUILDER_XLA_BUILDER_H_
