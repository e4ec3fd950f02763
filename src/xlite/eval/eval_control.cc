// Control flow and calls: while, conditional, call, fusion, the generic async
// ops (async-start/update/done), custom-call, and the host transfers (infeed,
// outfeed, send/recv with is_host_transfer=true) through
// EvalOptions::host_transfers.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "xlite/eval/eval_util.h"
#include "xlite/eval/evaluator.h"
#include "xlite/eval/host_transfers.h"
#include "xlite/support/status.h"

namespace xlite::eval {
namespace {

absl::StatusOr<const HloComputation*> CalledComputation(const HloInstruction& instr, size_t index) {
  if (instr.called_computations().size() <= index || !instr.called_computations()[index]) {
    return absl::InvalidArgumentError(
        absl::StrCat("expects at least ", index + 1, " called computation(s)"));
  }
  return instr.called_computations()[index];
}

bool IsScalarPredicate(const Literal& value) {
  return value.shape().IsArray() && value.element_count() == 1 &&
         value.shape().element_type() == PrimitiveType::PRED;
}

// while: runs the body on the loop state while the condition holds.
absl::StatusOr<Literal> EvalWhile(const HloInstruction& instr,
                                  absl::Span<const Literal* const> operands, EvalContext& context) {
  if (instr.called_computations().size() != 2 || operands.size() != 1) {
    return absl::InvalidArgumentError("while takes one operand, a condition and a body");
  }
  const HloComputation& condition = *instr.called_computations()[0];
  const HloComputation& body = *instr.called_computations()[1];
  Literal state = *operands[0];
  while (true) {
    const Literal* args[] = {&state};
    ASSIGN_OR_RETURN(Literal keep_going, context.Call(condition, args));
    if (!IsScalarPredicate(keep_going)) {
      return absl::InvalidArgumentError(absl::StrCat("the condition must return pred[], got ",
                                                     keep_going.shape().ToString(false)));
    }
    if (keep_going.GetInt(0) == 0) return state;
    ASSIGN_OR_RETURN(Literal next, context.Call(body, args));
    state = std::move(next);
  }
}

// The branch a conditional takes: for a pred, true is branch 0 and false
// branch 1; an s32 index outside [0, N) selects the last branch, as in XLA.
absl::StatusOr<int64_t> SelectedBranch(const Literal& selector, int64_t branch_count) {
  if (!selector.shape().IsArray() || selector.element_count() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("the branch selector must be a scalar, got ",
                                                   selector.shape().ToString(false)));
  }
  if (selector.shape().element_type() == PrimitiveType::PRED) {
    return selector.GetInt(0) != 0 ? 0 : 1;
  }
  const int64_t index = selector.GetInt(0);
  return index < 0 || index >= branch_count ? branch_count - 1 : index;
}

absl::StatusOr<Literal> EvalConditional(const HloInstruction& instr,
                                        absl::Span<const Literal* const> operands,
                                        EvalContext& context) {
  const std::vector<HloComputation*>& branches = instr.called_computations();
  const int64_t branch_count = static_cast<int64_t>(branches.size());
  if (branch_count == 0 || static_cast<int64_t>(operands.size()) != branch_count + 1) {
    return absl::InvalidArgumentError(absl::StrCat("conditional with ", branch_count,
                                                   " branches needs ", branch_count + 1,
                                                   " operands, got ", operands.size()));
  }
  ASSIGN_OR_RETURN(int64_t branch, SelectedBranch(*operands[0], branch_count));
  const Literal* args[] = {operands[branch + 1]};
  return context.Call(*branches[branch], args);
}

// call and fusion: the called computation on the operands.
absl::StatusOr<Literal> EvalCall(const HloInstruction& instr,
                                 absl::Span<const Literal* const> operands, EvalContext& context) {
  ASSIGN_OR_RETURN(const HloComputation* callee, CalledComputation(instr, 0));
  return context.Call(*callee, operands);
}

// Element 0 of an async context: the operands, as a tuple unless the context
// holds the single operand itself.
Literal AsyncOperandsElement(const Shape& element_shape,
                             absl::Span<const Literal* const> operands) {
  const bool tuple_of_operands =
      element_shape.IsTuple() &&
      element_shape.tuple_shapes_size() == static_cast<int64_t>(operands.size()) &&
      !(operands.size() == 1 && operands[0]->shape().EqualIgnoringLayout(element_shape));
  if (!tuple_of_operands && operands.size() == 1) return *operands[0];
  Shape shape = element_shape;
  shape.clear_layout();
  Literal element(shape);
  for (size_t i = 0; i < operands.size() && i < element.tuple_elements().size(); ++i) {
    element.tuple_elements()[i] = *operands[i];
  }
  return element;
}

// async-start: runs the wrapped computation now and returns the context
// ((operands...), result, zeros for the remaining context state).
absl::StatusOr<Literal> EvalAsyncStart(const HloInstruction& instr,
                                       absl::Span<const Literal* const> operands,
                                       EvalContext& context) {
  ASSIGN_OR_RETURN(const HloComputation* wrapped, CalledComputation(instr, 0));
  const Shape& shape = instr.shape();
  if (!shape.IsTuple() || shape.tuple_shapes_size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the async context must be ((operands...), output, ...), got ", shape.ToString(false)));
  }
  ASSIGN_OR_RETURN(Literal output, context.Call(*wrapped, operands));
  Literal result = ResultLiteral(instr);
  result.tuple_elements()[0] = AsyncOperandsElement(shape.tuple_shapes(0), operands);
  result.tuple_elements()[1] = std::move(output);
  return result;
}

// async-done: the output stored in the context.
absl::StatusOr<Literal> EvalAsyncDone(absl::Span<const Literal* const> operands) {
  if (operands.size() != 1 || operands[0]->tuple_elements().size() < 2) {
    return absl::InvalidArgumentError("async-done takes an async context ((operands...), output)");
  }
  return operands[0]->tuple_elements()[1];
}

// ---------------------------------------------------------------------------
// custom-call

// Targets that only annotate their operand (placement, layout): the value
// passes through unchanged. Sharding annotations are eval_sharding.cc's.
bool IsAnnotationTarget(const std::string& target) {
  static const auto* targets = new absl::flat_hash_set<std::string>{
      "annotate_device_placement", "MoveToHost", "MoveToDevice", "LayoutConstraint"};
  return targets->contains(target);
}

absl::StatusOr<Literal> EvalAnnotation(const HloInstruction& instr,
                                       absl::Span<const Literal* const> operands) {
  if (operands.size() != 1 || !operands[0]->shape().EqualIgnoringLayout(instr.shape())) {
    return Unsupported(instr,
                       absl::StrCat("custom-call target \"", instr.attrs().custom_call_target,
                                    "\" that changes its operand's shape"));
  }
  return *operands[0];
}

// "TopK" (what XLA's TopK custom call does, and how JAX's lax.top_k reaches
// HLO): along the last dimension, the k first elements of a stable sort by the
// comparator, with their s32 indices.
absl::StatusOr<Literal> EvalTopKCustomCall(const HloInstruction& instr,
                                           absl::Span<const Literal* const> operands,
                                           EvalContext& context) {
  ASSIGN_OR_RETURN(const HloComputation* comparator, CalledComputation(instr, 0));
  const Shape& shape = instr.shape();
  if (operands.size() != 1 || !operands[0]->shape().IsArray() || operands[0]->shape().rank() < 1 ||
      !shape.IsTuple() || shape.tuple_shapes_size() != 2 || !shape.tuple_shapes(0).IsArray() ||
      shape.tuple_shapes(0).rank() != operands[0]->shape().rank()) {
    return absl::InvalidArgumentError("TopK takes one array and returns (values, indices)");
  }
  const Literal& input = *operands[0];
  const int64_t n = input.shape().dimensions().back();
  const int64_t k = shape.tuple_shapes(0).dimensions().back();
  const int64_t rows = n == 0 ? 0 : input.element_count() / n;
  if (k > n) return absl::InvalidArgumentError(absl::StrCat("TopK asks for ", k, " of ", n));
  Literal result = ResultLiteral(instr);
  Literal& values = result.tuple_elements()[0];
  Literal& indices = result.tuple_elements()[1];
  for (int64_t row = 0; row < rows; ++row) {
    std::vector<int64_t> order(n);
    for (int64_t i = 0; i < n; ++i) order[i] = i;
    // The comparator sees (lhs, rhs) values, or, as sort-style TopK
    // comparators do, (lhs value, rhs value, lhs index, rhs index).
    const bool with_indices = comparator->num_parameters() == 4;
    if (!with_indices && comparator->num_parameters() != 2) {
      return absl::InvalidArgumentError("TopK comparator must take 2 or 4 parameters");
    }
    auto less = [&](int64_t a, int64_t b) -> absl::StatusOr<bool> {
      const Literal lhs = ScalarAt(input, row * n + a), rhs = ScalarAt(input, row * n + b);
      Literal lhs_index(Shape::Scalar(PrimitiveType::S32)),
          rhs_index(Shape::Scalar(PrimitiveType::S32));
      lhs_index.SetInt(0, a);
      rhs_index.SetInt(0, b);
      const Literal* args[] = {&lhs, &rhs, &lhs_index, &rhs_index};
      ASSIGN_OR_RETURN(Literal before,
                       context.Call(*comparator, absl::MakeConstSpan(args, with_indices ? 4 : 2)));
      return before.GetInt(0) != 0;
    };
    RETURN_IF_ERROR(StableMergeSort(order, less));
    for (int64_t i = 0; i < k; ++i) {
      CopyElement(input, row * n + order[i], values, row * k + i);
      indices.SetInt(row * k + i, order[i]);
    }
  }
  return result;
}

absl::StatusOr<Literal> EvalCustomCall(const HloInstruction& instr,
                                       absl::Span<const Literal* const> operands,
                                       EvalContext& context) {
  const std::string& target = instr.attrs().custom_call_target;
  if (const CustomCallFn* registered = FindCustomCallTarget(target)) {
    return (*registered)(instr, operands);
  }
  if (IsJaxlibCustomCallTarget(target)) return EvalJaxlibCustomCall(instr, operands);
  if (IsAnnotationTarget(target)) return EvalAnnotation(instr, operands);
  if (target == "TopK" && !instr.called_computations().empty()) {
    return EvalTopKCustomCall(instr, operands, context);
  }
  // The buffer's contents are unspecified; zeros are as good as any.
  if (target == "AllocateBuffer" && operands.empty()) return ResultLiteral(instr);
  return absl::UnimplementedError(absl::StrCat("unsupported custom-call target \"", target, "\""));
}

Shape WithoutLayouts(Shape shape) {
  if (shape.IsTuple()) {
    for (Shape& s : shape.mutable_tuple_shapes()) s = WithoutLayouts(s);
  } else {
    shape.clear_layout();
  }
  return shape;
}

// "infeed 'in.1'", as errors name it.
std::string Named(const HloInstruction& instr) {
  return absl::StrCat(HloOpcodeString(instr.opcode()), " '", instr.name(), "'");
}

// infeed, outfeed, send/recv (+ -done) with the host: HostTransfers' rules,
// which the CPU runtime follows too. Values are taken or given when the
// infeed, outfeed, send or recv runs; the -done ops forward them.
absl::StatusOr<Literal> EvalHostTransfer(const HloInstruction& instr,
                                         absl::Span<const Literal* const> operands,
                                         EvalContext& context) {
  const HloOpcode op = instr.opcode();
  const bool host =
      op == HloOpcode::kInfeed || op == HloOpcode::kOutfeed || instr.attrs().is_host_transfer;
  if (!host) {
    return Unsupported(instr, "device-to-device send/recv (is_host_transfer=false)");
  }
  if (op == HloOpcode::kSendDone) return Literal(Shape::Token());
  if (op == HloOpcode::kRecvDone) {
    if (operands.size() != 1 || operands[0]->tuple_elements().empty()) {
      return absl::InvalidArgumentError("recv-done takes the recv's (data, context, token)");
    }
    std::vector<Literal> elements;
    elements.push_back(operands[0]->tuple_elements()[0]);
    elements.push_back(Literal(Shape::Token()));
    return Literal::Tuple(std::move(elements));
  }
  HostTransfers* transfers = context.options().host_transfers;
  if (transfers == nullptr) {
    const char* what = op == HloOpcode::kInfeed    ? "infeed was given"
                       : op == HloOpcode::kOutfeed ? "outfeed queue was given"
                                                   : "send/recv callbacks were given";
    return absl::FailedPreconditionError(
        absl::StrCat(Named(instr), ": no ", what,
                     " (the run has no host transfers: EvalOptions::host_transfers)"));
  }
  // XLA's default placement: the queues' device id.
  const int64_t device =
      context.partition_id() * context.options().replica_count + context.replica_id();
  const std::string name = Named(instr);
  if (!instr.shape().IsTuple() && op != HloOpcode::kOutfeed) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": expects a tuple shape"));
  }
  switch (op) {
    case HloOpcode::kInfeed: {
      ASSIGN_OR_RETURN(Literal block,
                       transfers->TakeInfeed(device, instr.shape().tuple_shapes(0), name));
      std::vector<Literal> elements;
      elements.push_back(std::move(block));
      elements.push_back(Literal(Shape::Token()));
      return Literal::Tuple(std::move(elements));
    }
    case HloOpcode::kOutfeed:
      if (operands.empty()) return absl::InvalidArgumentError("outfeed takes a value");
      transfers->PutOutfeed(device, *operands[0]);
      return Literal(Shape::Token());
    case HloOpcode::kSend: {
      if (operands.empty()) return absl::InvalidArgumentError("send takes a value");
      HostTransferMetadata metadata{device, instr.attrs().channel_id.value_or(0),
                                    operands[0]->shape(), name};
      RETURN_IF_ERROR(transfers->Send(metadata, *operands[0]));
      std::vector<Literal> elements;
      elements.push_back(*operands[0]);
      elements.push_back(Literal(Shape::Array(PrimitiveType::U32, {})));
      elements.push_back(Literal(Shape::Token()));
      return Literal::Tuple(std::move(elements));
    }
    case HloOpcode::kRecv: {
      Shape data = WithoutLayouts(instr.shape().tuple_shapes(0));
      HostTransferMetadata metadata{device, instr.attrs().channel_id.value_or(0), data, name};
      ASSIGN_OR_RETURN(Literal value, transfers->Recv(metadata));
      std::vector<Literal> elements;
      elements.push_back(std::move(value));
      elements.push_back(Literal(Shape::Array(PrimitiveType::U32, {})));
      elements.push_back(Literal(Shape::Token()));
      return Literal::Tuple(std::move(elements));
    }
    default:
      return absl::NotFoundError("not handled");
  }
}

}  // namespace

absl::StatusOr<Literal> EvalControl(const HloInstruction& instr,
                                    absl::Span<const Literal* const> operands,
                                    EvalContext& context) {
  switch (instr.opcode()) {
    case HloOpcode::kWhile:
      return EvalWhile(instr, operands, context);
    case HloOpcode::kConditional:
      return EvalConditional(instr, operands, context);
    case HloOpcode::kCall:
    case HloOpcode::kFusion:
      return EvalCall(instr, operands, context);
    case HloOpcode::kAsyncStart:
      return EvalAsyncStart(instr, operands, context);
    case HloOpcode::kAsyncUpdate:
      if (operands.size() != 1) return absl::InvalidArgumentError("expects one operand");
      return *operands[0];
    case HloOpcode::kAsyncDone:
      return EvalAsyncDone(operands);
    case HloOpcode::kCustomCall:
      return EvalCustomCall(instr, operands, context);
    case HloOpcode::kInfeed:
    case HloOpcode::kOutfeed:
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
      return EvalHostTransfer(instr, operands, context);
    default:
      return absl::NotFoundError("not handled");
  }
}

}  // namespace xlite::eval
