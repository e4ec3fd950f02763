// Shape inference for control flow, calls and side-effecting I/O: while,
// conditional, call, fusion, custom-call, async-start/update/done, infeed,
// outfeed, send/recv and their -done ops. Rules follow XLA's shape inference
// and HLO verifier (operation_semantics.md, async_ops.md).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "xlite/ir/computation.h"
#include "xlite/verify/shape_inference.h"

namespace xlite::shape_inference {
namespace {

absl::Status ExpectToken(const HloInstruction& instr, int64_t operand, absl::string_view role) {
  const Shape& shape = instr.operand(operand)->shape();
  if (shape.IsToken()) return absl::OkStatus();
  return Error(instr, absl::StrCat(role, " (operand ", operand, ") must be a token, got ",
                                   ShapeText(shape)));
}

absl::StatusOr<const HloComputation*> CalledComputation(const HloInstruction& instr, int64_t index,
                                                        absl::string_view role) {
  if (index >= static_cast<int64_t>(instr.called_computations().size()) ||
      instr.called_computations()[index] == nullptr) {
    return Error(instr, absl::StrCat("missing ", role, " computation"));
  }
  return instr.called_computations()[index];
}

// The shapes of a computation's parameters, in parameter order.
absl::StatusOr<std::vector<Shape>> ParameterShapes(const HloInstruction& instr,
                                                   const HloComputation& computation) {
  std::vector<Shape> shapes;
  for (int64_t i = 0; i < computation.num_parameters(); ++i) {
    const HloInstruction* param = computation.parameter_instruction(i);
    if (param == nullptr) {
      return Error(instr,
                   absl::StrCat("computation '", computation.name(), "' has no parameter ", i));
    }
    shapes.push_back(param->shape());
  }
  return shapes;
}

absl::StatusOr<Shape> RootShape(const HloInstruction& instr, const HloComputation& computation) {
  if (computation.root_instruction() == nullptr) {
    return Error(instr, absl::StrCat("computation '", computation.name(), "' has no root"));
  }
  return computation.root_instruction()->shape();
}

// The single parameter of a while condition/body or a conditional branch.
absl::StatusOr<Shape> OnlyParameterShape(const HloInstruction& instr,
                                         const HloComputation& computation,
                                         absl::string_view role) {
  if (computation.num_parameters() != 1) {
    return Error(instr,
                 absl::StrCat("the ", role, " computation '", computation.name(),
                              "' must take 1 parameter; got ", computation.num_parameters()));
  }
  absl::StatusOr<std::vector<Shape>> params = ParameterShapes(instr, computation);
  if (!params.ok()) return params.status();
  return (*params)[0];
}

// Arguments passed to a computation (call, fusion) must match its parameters.
absl::Status CheckArgumentsMatchParameters(const HloInstruction& instr,
                                           const HloComputation& computation) {
  if (computation.num_parameters() != instr.operand_count()) {
    return Error(instr, absl::StrCat("computation '", computation.name(), "' takes ",
                                     computation.num_parameters(), " parameters but ",
                                     instr.operand_count(), " operands are passed"));
  }
  absl::StatusOr<std::vector<Shape>> params = ParameterShapes(instr, computation);
  if (!params.ok()) return params.status();
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    const Shape& argument = instr.operand(i)->shape();
    if (!Compatible(argument, (*params)[i])) {
      return Error(instr, absl::StrCat("operand ", i, " has shape ", ShapeText(argument),
                                       " but parameter ", i, " of '", computation.name(),
                                       "' has shape ", ShapeText((*params)[i])));
    }
  }
  return absl::OkStatus();
}

// A buffer b(T) aliases an array T (custom-call "Pin" turns one into the other).
const Shape& UnwrapBuffer(const Shape& shape) {
  return shape.IsBuffer() && shape.tuple_shapes_size() == 1 ? shape.tuple_shapes(0) : shape;
}

// output_to_operand_aliasing pairs must name existing, compatible subshapes.
absl::Status CheckOutputOperandAliasing(const HloInstruction& instr) {
  for (const OutputOperandAlias& alias : instr.attrs().output_to_operand_aliasing) {
    if (alias.operand < 0 || alias.operand >= instr.operand_count()) {
      return Error(instr, absl::StrCat("output_to_operand_aliasing names operand ", alias.operand,
                                       " but there are ", instr.operand_count(), " operands"));
    }
    const Shape* output = SubshapeAt(instr.shape(), alias.output_index);
    const Shape* operand = SubshapeAt(instr.operand(alias.operand)->shape(), alias.operand_index);
    if (output == nullptr || operand == nullptr) {
      return Error(instr, "output_to_operand_aliasing names a shape index that does not exist");
    }
    if (!Compatible(UnwrapBuffer(*output), UnwrapBuffer(*operand))) {
      return Error(instr, absl::StrCat("output_to_operand_aliasing pairs output subshape ",
                                       ShapeText(*output), " with operand ", alias.operand,
                                       " subshape ", ShapeText(*operand)));
    }
  }
  return absl::OkStatus();
}

// while: condition(T) -> pred[], body(T) -> T, init: T; the result is T.
absl::StatusOr<Shape> InferWhile(const HloInstruction& instr) {
  if (absl::Status s = ExpectOperandCount(instr, 1); !s.ok()) return s;
  absl::StatusOr<const HloComputation*> condition = CalledComputation(instr, 0, "condition");
  if (!condition.ok()) return condition.status();
  absl::StatusOr<const HloComputation*> body = CalledComputation(instr, 1, "body");
  if (!body.ok()) return body.status();
  absl::StatusOr<Shape> condition_param = OnlyParameterShape(instr, **condition, "condition");
  if (!condition_param.ok()) return condition_param.status();
  absl::StatusOr<Shape> body_param = OnlyParameterShape(instr, **body, "body");
  if (!body_param.ok()) return body_param.status();
  absl::StatusOr<Shape> condition_result = RootShape(instr, **condition);
  if (!condition_result.ok()) return condition_result.status();
  absl::StatusOr<Shape> body_result = RootShape(instr, **body);
  if (!body_result.ok()) return body_result.status();

  const Shape& init = instr.operand(0)->shape();
  if (!Compatible(*condition_param, init) || !Compatible(*body_param, init) ||
      !Compatible(*body_result, init)) {
    return Error(
        instr, absl::StrCat("the parameter of condition and body, the result of the "
                            "body, and init must all have the same shape; got "
                            "condition: ",
                            ShapeText(*condition_param), ", body: ", ShapeText(*body_param), " -> ",
                            ShapeText(*body_result), ", init: ", ShapeText(init)));
  }
  if (!Compatible(*condition_result, Shape::Scalar(PrimitiveType::PRED))) {
    return Error(instr,
                 absl::StrCat("condition must return pred[]; got ", ShapeText(*condition_result)));
  }
  return WithoutLayout(init);
}

// conditional: index pred[] (2 branches) or s32[]; branch i takes operand i+1
// and every branch returns the same shape.
absl::StatusOr<Shape> InferConditional(const HloInstruction& instr) {
  const std::vector<HloComputation*>& branches = instr.called_computations();
  if (branches.empty()) return Error(instr, "needs at least one branch computation");
  if (instr.operand_count() != static_cast<int64_t>(branches.size()) + 1) {
    return Error(instr,
                 absl::StrCat("has ", branches.size(), " branches and so expects ",
                              branches.size() + 1, " operands, got ", instr.operand_count()));
  }
  const Shape& index = instr.operand(0)->shape();
  if (Compatible(index, Shape::Scalar(PrimitiveType::PRED))) {
    if (branches.size() != 2) {
      return Error(instr, absl::StrCat("a pred branch index needs exactly 2 branches, got ",
                                       branches.size()));
    }
  } else if (!Compatible(index, Shape::Scalar(PrimitiveType::S32))) {
    return Error(instr,
                 absl::StrCat("branch index must be pred[] or s32[], got ", ShapeText(index)));
  }

  std::optional<Shape> result;
  for (size_t i = 0; i < branches.size(); ++i) {
    absl::StatusOr<const HloComputation*> branch = CalledComputation(instr, i, "branch");
    if (!branch.ok()) return branch.status();
    absl::StatusOr<Shape> param = OnlyParameterShape(instr, **branch, absl::StrCat("branch ", i));
    if (!param.ok()) return param.status();
    const Shape& operand = instr.operand(i + 1)->shape();
    if (!Compatible(operand, *param)) {
      return Error(instr, absl::StrCat("branch operand ", i + 1, " has shape ", ShapeText(operand),
                                       " but the parameter of branch ", i, " has shape ",
                                       ShapeText(*param)));
    }
    absl::StatusOr<Shape> root = RootShape(instr, **branch);
    if (!root.ok()) return root.status();
    if (!result) {
      result = *root;
    } else if (!Compatible(*result, *root)) {
      return Error(instr, absl::StrCat("branch 0 returns ", ShapeText(*result), " but branch ", i,
                                       " returns ", ShapeText(*root)));
    }
  }
  return WithoutLayout(*result);
}

// call: to_apply's parameters match the operands; the result is its root.
absl::StatusOr<Shape> InferCall(const HloInstruction& instr) {
  absl::StatusOr<const HloComputation*> callee = CalledComputation(instr, 0, "to_apply");
  if (!callee.ok()) return callee.status();
  if (absl::Status s = CheckArgumentsMatchParameters(instr, **callee); !s.ok()) return s;
  absl::StatusOr<Shape> root = RootShape(instr, **callee);
  if (!root.ok()) return root.status();
  return WithoutLayout(*root);
}

// fusion: as call, with the fused computation; layouts are free, types not.
absl::StatusOr<Shape> InferFusion(const HloInstruction& instr) {
  absl::StatusOr<const HloComputation*> fused = CalledComputation(instr, 0, "fused");
  if (!fused.ok()) return fused.status();
  if (absl::Status s = CheckArgumentsMatchParameters(instr, **fused); !s.ok()) return s;
  if (absl::Status s = CheckOutputOperandAliasing(instr); !s.ok()) return s;
  absl::StatusOr<Shape> root = RootShape(instr, **fused);
  if (!root.ok()) return root.status();
  return WithoutLayout(*root);
}

// custom-call: the result is whatever the instruction declares.
absl::StatusOr<Shape> InferCustomCall(const HloInstruction& instr) {
  if (const auto& constraints = instr.attrs().operand_layout_constraints) {
    if (static_cast<int64_t>(constraints->size()) != instr.operand_count()) {
      return Error(instr, absl::StrCat("has ", instr.operand_count(), " operands but ",
                                       constraints->size(), " operand_layout_constraints"));
    }
    for (int64_t i = 0; i < instr.operand_count(); ++i) {
      if (!Compatible((*constraints)[i], instr.operand(i)->shape())) {
        return Error(
            instr,
            absl::StrCat("operand_layout_constraints[", i, "] ", ShapeText((*constraints)[i]),
                         " does not match operand shape ", ShapeText(instr.operand(i)->shape())));
      }
    }
  }
  if (absl::Status s = CheckOutputOperandAliasing(instr); !s.ok()) return s;
  return WithoutLayout(instr.shape());
}

// An async-start/update result () in the output slot: the output buffer is
// bound later (by an update or the done), as XLA's parser allows.
bool IsUnboundOutput(const Shape& shape) {
  return shape.IsTuple() && shape.tuple_shapes_size() == 0;
}

// Operands bound so far must match the leading parameters of the wrapped
// computation; later async-update operands bind the rest.
absl::Status CheckBoundOperands(const HloInstruction& instr, const std::vector<Shape>& bound,
                                const HloComputation& wrapped) {
  absl::StatusOr<std::vector<Shape>> params = ParameterShapes(instr, wrapped);
  if (!params.ok()) return params.status();
  if (bound.size() > params->size()) {
    return Error(instr, absl::StrCat(bound.size(), " operands are bound but '", wrapped.name(),
                                     "' takes ", params->size(), " parameters"));
  }
  for (size_t i = 0; i < bound.size(); ++i) {
    if (!Compatible(bound[i], (*params)[i])) {
      return Error(instr, absl::StrCat("async operand ", i, " has shape ", ShapeText(bound[i]),
                                       " but parameter ", i, " of '", wrapped.name(),
                                       "' has shape ", ShapeText((*params)[i])));
    }
  }
  return absl::OkStatus();
}

// The output slot of an async context: the wrapped root, or () while unbound.
absl::StatusOr<Shape> OutputSlot(const HloInstruction& instr, const Shape& slot,
                                 const HloComputation& wrapped) {
  absl::StatusOr<Shape> root = RootShape(instr, wrapped);
  if (!root.ok()) return root.status();
  if (IsUnboundOutput(slot) && !IsUnboundOutput(*root)) return slot;
  return *root;
}

// An async context is ((bound operands...), output, context state...).
absl::Status ExpectAsyncContext(const HloInstruction& instr, const Shape& context) {
  if (context.IsTuple() && context.tuple_shapes_size() >= 2 && context.tuple_shapes(0).IsTuple()) {
    return absl::OkStatus();
  }
  return Error(instr, absl::StrCat("async context must be a tuple ((operands...), output, "
                                   "context...), got ",
                                   ShapeText(context)));
}

// The context state elements are the backend's choice: taken as declared.
void AppendDeclaredState(const Shape& declared, std::vector<Shape>& elements) {
  for (int64_t i = 2; declared.IsTuple() && i < declared.tuple_shapes_size(); ++i) {
    elements.push_back(declared.tuple_shapes(i));
  }
}

const HloComputation* AsyncWrapped(const HloInstruction& instr) {
  if (!instr.called_computations().empty()) return instr.called_computations()[0];
  return instr.async_wrapped_computation();
}

// async-start: ((operand shapes...), wrapped root shape, state...).
absl::StatusOr<Shape> InferAsyncStart(const HloInstruction& instr) {
  absl::StatusOr<const HloComputation*> wrapped = CalledComputation(instr, 0, "async wrapped");
  if (!wrapped.ok()) return wrapped.status();
  std::vector<Shape> operands;
  for (const HloInstruction* operand : instr.operands()) operands.push_back(operand->shape());
  if (absl::Status s = CheckBoundOperands(instr, operands, **wrapped); !s.ok()) return s;
  const Shape& declared = instr.shape();
  Shape declared_output =
      declared.IsTuple() && declared.tuple_shapes_size() >= 2 ? declared.tuple_shapes(1) : Shape();
  absl::StatusOr<Shape> output = OutputSlot(instr, declared_output, **wrapped);
  if (!output.ok()) return output.status();
  std::vector<Shape> elements = {Shape::Tuple(std::move(operands)), *output};
  AppendDeclaredState(declared, elements);
  return WithoutLayout(Shape::Tuple(std::move(elements)));
}

// async-update passes its context through unchanged; extra operands bind
// further parameters (late binding), which may also change the state.
absl::StatusOr<Shape> InferAsyncUpdate(const HloInstruction& instr) {
  if (instr.operand_count() < 1) return Error(instr, "needs an async context operand");
  const Shape& context = instr.operand(0)->shape();
  if (absl::Status s = ExpectAsyncContext(instr, context); !s.ok()) return s;
  const HloComputation* wrapped = AsyncWrapped(instr);
  if (wrapped == nullptr) {
    if (instr.operand_count() != 1) return Error(instr, "binds operands of an unknown computation");
    return WithoutLayout(context);
  }
  std::vector<Shape> bound = context.tuple_shapes(0).tuple_shapes();
  for (int64_t i = 1; i < instr.operand_count(); ++i) bound.push_back(instr.operand(i)->shape());
  if (absl::Status s = CheckBoundOperands(instr, bound, *wrapped); !s.ok()) return s;
  const Shape& declared = instr.shape();
  Shape output_slot = context.tuple_shapes(1);
  if (IsUnboundOutput(output_slot) && declared.IsTuple() && declared.tuple_shapes_size() >= 2) {
    output_slot = declared.tuple_shapes(1);  // an update may bind the output buffer
  }
  absl::StatusOr<Shape> output = OutputSlot(instr, output_slot, *wrapped);
  if (!output.ok()) return output.status();
  std::vector<Shape> elements = {Shape::Tuple(std::move(bound)), *output};
  if (instr.operand_count() == 1) {
    for (int64_t i = 2; i < context.tuple_shapes_size(); ++i) {
      elements.push_back(context.tuple_shapes(i));
    }
  } else {
    AppendDeclaredState(declared, elements);
  }
  return WithoutLayout(Shape::Tuple(std::move(elements)));
}

// async-done returns the wrapped result; every parameter must be bound by now.
absl::StatusOr<Shape> InferAsyncDone(const HloInstruction& instr) {
  if (absl::Status s = ExpectOperandCount(instr, 1); !s.ok()) return s;
  const Shape& context = instr.operand(0)->shape();
  if (absl::Status s = ExpectAsyncContext(instr, context); !s.ok()) return s;
  const HloComputation* wrapped = AsyncWrapped(instr);
  if (wrapped == nullptr) return WithoutLayout(context.tuple_shapes(1));
  const std::vector<Shape>& bound = context.tuple_shapes(0).tuple_shapes();
  if (absl::Status s = CheckBoundOperands(instr, bound, *wrapped); !s.ok()) return s;
  if (static_cast<int64_t>(bound.size()) != wrapped->num_parameters()) {
    return Error(instr, absl::StrCat("only ", bound.size(), " of the ", wrapped->num_parameters(),
                                     " parameters of '", wrapped->name(), "' are bound"));
  }
  absl::StatusOr<Shape> root = RootShape(instr, *wrapped);
  if (!root.ok()) return root.status();
  if (!IsUnboundOutput(context.tuple_shapes(1)) && !Compatible(context.tuple_shapes(1), *root)) {
    return Error(instr, absl::StrCat("async context output ", ShapeText(context.tuple_shapes(1)),
                                     " does not match the root of '", wrapped->name(), "' ",
                                     ShapeText(*root)));
  }
  return WithoutLayout(*root);
}

// infeed(token) -> (data, token[]); the data shape is declared.
absl::StatusOr<Shape> InferInfeed(const HloInstruction& instr) {
  if (absl::Status s = ExpectOperandCount(instr, 1); !s.ok()) return s;
  if (absl::Status s = ExpectToken(instr, 0, "infeed operand"); !s.ok()) return s;
  const Shape& declared = instr.shape();
  if (!declared.IsTuple() || declared.tuple_shapes_size() != 2 ||
      !declared.tuple_shapes(1).IsToken()) {
    return Error(instr, absl::StrCat("shape must be (data, token[]), got ", ShapeText(declared)));
  }
  return WithoutLayout(Shape::Tuple({declared.tuple_shapes(0), Shape::Token()}));
}

// outfeed(data, token) -> token[]; outfeed_shape, if given, is data's shape.
absl::StatusOr<Shape> InferOutfeed(const HloInstruction& instr) {
  if (absl::Status s = ExpectOperandCount(instr, 2); !s.ok()) return s;
  if (absl::Status s = ExpectToken(instr, 1, "outfeed token"); !s.ok()) return s;
  const auto& outfeed_shape = instr.attrs().outfeed_shape;
  if (outfeed_shape && !Compatible(*outfeed_shape, instr.operand(0)->shape())) {
    return Error(instr, absl::StrCat("outfeed_shape ", ShapeText(*outfeed_shape),
                                     " does not match the data operand ",
                                     ShapeText(instr.operand(0)->shape())));
  }
  return Shape::Token();
}

// The (data, u32[] context, token[]) tuple that send and recv produce.
Shape TransferContext(const Shape& data) {
  return WithoutLayout(Shape::Tuple({data, Shape::Scalar(PrimitiveType::U32), Shape::Token()}));
}

absl::Status ExpectTransferContext(const HloInstruction& instr, const Shape& shape,
                                   absl::string_view what) {
  if (shape.IsTuple() && shape.tuple_shapes_size() == 3 &&
      Compatible(shape, TransferContext(shape.tuple_shapes(0)))) {
    return absl::OkStatus();
  }
  return Error(instr,
               absl::StrCat(what, " must be (data, u32[], token[]), got ", ShapeText(shape)));
}

// send(data, token) -> (data, u32[], token[]).
absl::StatusOr<Shape> InferSend(const HloInstruction& instr) {
  if (absl::Status s = ExpectOperandCount(instr, 2); !s.ok()) return s;
  if (absl::Status s = ExpectToken(instr, 1, "send token"); !s.ok()) return s;
  return TransferContext(instr.operand(0)->shape());
}

// recv(token) -> (data, u32[], token[]); the data shape is declared.
absl::StatusOr<Shape> InferRecv(const HloInstruction& instr) {
  if (absl::Status s = ExpectOperandCount(instr, 1); !s.ok()) return s;
  if (absl::Status s = ExpectToken(instr, 0, "recv token"); !s.ok()) return s;
  if (absl::Status s = ExpectTransferContext(instr, instr.shape(), "shape"); !s.ok()) return s;
  return TransferContext(instr.shape().tuple_shapes(0));
}

// send-done(send context) -> token[].
absl::StatusOr<Shape> InferSendDone(const HloInstruction& instr) {
  if (absl::Status s = ExpectOperandCount(instr, 1); !s.ok()) return s;
  const Shape& context = instr.operand(0)->shape();
  if (absl::Status s = ExpectTransferContext(instr, context, "operand"); !s.ok()) return s;
  return Shape::Token();
}

// recv-done(recv context) -> (data, token[]).
absl::StatusOr<Shape> InferRecvDone(const HloInstruction& instr) {
  if (absl::Status s = ExpectOperandCount(instr, 1); !s.ok()) return s;
  const Shape& context = instr.operand(0)->shape();
  if (absl::Status s = ExpectTransferContext(instr, context, "operand"); !s.ok()) return s;
  return WithoutLayout(Shape::Tuple({context.tuple_shapes(0), Shape::Token()}));
}

}  // namespace

absl::StatusOr<Shape> InferControlShape(const HloInstruction& instr) {
  switch (instr.opcode()) {
    case HloOpcode::kWhile:
      return InferWhile(instr);
    case HloOpcode::kConditional:
      return InferConditional(instr);
    case HloOpcode::kCall:
      return InferCall(instr);
    case HloOpcode::kFusion:
      return InferFusion(instr);
    case HloOpcode::kCustomCall:
      return InferCustomCall(instr);
    case HloOpcode::kAsyncStart:
      return InferAsyncStart(instr);
    case HloOpcode::kAsyncUpdate:
      return InferAsyncUpdate(instr);
    case HloOpcode::kAsyncDone:
      return InferAsyncDone(instr);
    case HloOpcode::kInfeed:
      return InferInfeed(instr);
    case HloOpcode::kOutfeed:
      return InferOutfeed(instr);
    case HloOpcode::kSend:
      return InferSend(instr);
    case HloOpcode::kRecv:
      return InferRecv(instr);
    case HloOpcode::kSendDone:
      return InferSendDone(instr);
    case HloOpcode::kRecvDone:
      return InferRecvDone(instr);
    default:
      return absl::NotFoundError("not handled");
  }
}

}  // namespace xlite::shape_inference
