// Shape inference for ops that apply a called computation across elements:
// reduce, reduce-window, select-and-scatter, sort, map and scan. Besides the
// result shape, each checks the called computation's signature against the
// operands, as XLA's verifier does.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "xlite/ir/computation.h"
#include "xlite/support/status.h"
#include "xlite/verify/shape_inference.h"

namespace xlite::shape_inference {
namespace {

using absl::StrCat;

// One shape as is; several as a tuple (variadic ops).
Shape SingleOrTuple(std::vector<Shape> shapes) {
  if (shapes.size() == 1) return std::move(shapes[0]);
  return Shape::Tuple(std::move(shapes));
}

absl::Status ExpectScalar(const HloInstruction& instr, const Shape& s, absl::string_view role) {
  if (s.IsScalar()) return absl::OkStatus();
  return Error(instr, StrCat(role, " must be a scalar, got ", ShapeText(s)));
}

// Operands [first, first + count) as arrays with the dimensions of the first.
absl::StatusOr<std::vector<const Shape*>> SameDimensionArrays(const HloInstruction& instr,
                                                              int64_t first, int64_t count,
                                                              absl::string_view role) {
  std::vector<const Shape*> shapes;
  for (int64_t i = first; i < first + count; ++i) {
    const Shape& s = instr.operand(i)->shape();
    RETURN_IF_ERROR(ExpectArray(instr, s, StrCat(role, " ", i - first)));
    if (!shapes.empty() && !SameDimensions(s, *shapes[0])) {
      return Error(instr,
                   StrCat(role, " ", i - first, " is ", ShapeText(s), " but ", role, " 0 is ",
                          ShapeText(*shapes[0]), "; they must have the same dimensions"));
    }
    shapes.push_back(&s);
  }
  return shapes;
}

// Checks that each of `dims` lies in [0, rank) and appears once.
absl::Status CheckDimensions(const HloInstruction& instr, const std::vector<int64_t>& dims,
                             int64_t rank) {
  std::vector<bool> used(rank, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return Error(instr, StrCat("dimension ", d, " is out of range for rank ", rank));
    }
    if (used[d]) return Error(instr, StrCat("dimension ", d, " is given more than once"));
    used[d] = true;
  }
  return absl::OkStatus();
}

// The single dimension of sort and scan (dimensions={d}).
absl::StatusOr<int64_t> SingleDimension(const HloInstruction& instr, int64_t rank) {
  const auto& dims = instr.attrs().dimensions;
  if (!dims || dims->size() != 1) {
    return Error(instr, StrCat("needs exactly one dimension, got {",
                               dims ? absl::StrJoin(*dims, ",") : "", "}"));
  }
  RETURN_IF_ERROR(CheckDimensions(instr, *dims, rank));
  return (*dims)[0];
}

// ---------------------------------------------------------------------------
// Called computations.

// A called computation's parameter shapes (in parameter order) and the
// elements of its root (a tuple's elements, or the root itself).
struct Signature {
  std::string name;
  std::vector<const Shape*> parameters;
  std::vector<const Shape*> results;
  const Shape* root = nullptr;
};

absl::StatusOr<Signature> CalledSignature(const HloInstruction& instr, size_t index,
                                          absl::string_view role) {
  const auto& called = instr.called_computations();
  if (called.size() <= index || called[index] == nullptr) {
    return Error(instr, StrCat("missing ", role, " computation"));
  }
  const HloComputation& comp = *called[index];
  Signature sig;
  sig.name = comp.name();
  for (const HloInstruction* p : comp.parameter_instructions()) {
    if (p == nullptr) {
      return Error(instr, StrCat(role, " '", comp.name(), "' has a gap in its parameters"));
    }
    sig.parameters.push_back(&p->shape());
  }
  const HloInstruction* root = comp.root_instruction();
  if (root == nullptr) return Error(instr, StrCat(role, " '", comp.name(), "' has no root"));
  sig.root = &root->shape();
  if (root->shape().IsTuple()) {
    for (const Shape& e : root->shape().tuple_shapes()) sig.results.push_back(&e);
  } else {
    sig.results.push_back(&root->shape());
  }
  return sig;
}

// The computation's only result; a one-element tuple counts as its element
// (XLA's importer tests write map, sort and select computations that way).
const Shape* SingleResult(const Signature& sig) {
  return sig.results.size() == 1 ? sig.results[0] : nullptr;
}

absl::Status ExpectParameterCount(const HloInstruction& instr, const Signature& sig, size_t count) {
  if (sig.parameters.size() == count) return absl::OkStatus();
  return Error(instr, StrCat("computation '", sig.name, "' takes ", sig.parameters.size(),
                             " parameters but needs ", count));
}

// Parameter i of `sig` is a scalar whose type matches `type` (ignoring
// floating-point precision when `loose`).
absl::Status CheckScalarParameter(const HloInstruction& instr, const Signature& sig, size_t i,
                                  PrimitiveType type, bool loose) {
  const Shape& p = *sig.parameters[i];
  bool ok = p.IsScalar() && (loose ? SameTypeIgnoringFpPrecision(p.element_type(), type)
                                   : p.element_type() == type);
  if (ok) return absl::OkStatus();
  return Error(instr, StrCat("computation '", sig.name, "' parameter ", i, " is ", ShapeText(p),
                             " but must be a ", TypeName(type), " scalar"));
}

// A reducer combines N accumulators with N values: 2N scalar parameters
// (accumulators first) and N scalar results, one per init value. Returns the
// accumulator types, which are the result element types.
absl::StatusOr<std::vector<PrimitiveType>> CheckReducer(
    const HloInstruction& instr, const Signature& sig, const std::vector<PrimitiveType>& init_types,
    const std::vector<PrimitiveType>& value_types) {
  size_t n = init_types.size();
  RETURN_IF_ERROR(ExpectParameterCount(instr, sig, 2 * n));
  if (sig.results.size() != n) {
    return Error(instr, StrCat("computation '", sig.name, "' returns ", sig.results.size(),
                               " values but the op reduces ", n));
  }
  std::vector<PrimitiveType> accumulators;
  for (size_t i = 0; i < n; ++i) {
    const Shape& acc = *sig.results[i];
    if (!acc.IsScalar() || !SameTypeIgnoringFpPrecision(acc.element_type(), init_types[i])) {
      return Error(instr, StrCat("computation '", sig.name, "' result ", i, " is ", ShapeText(acc),
                                 " but init value ", i, " is ", TypeName(init_types[i])));
    }
    RETURN_IF_ERROR(CheckScalarParameter(instr, sig, i, acc.element_type(), true));
    RETURN_IF_ERROR(CheckScalarParameter(instr, sig, n + i, value_types[i], true));
    accumulators.push_back(acc.element_type());
  }
  return accumulators;
}

// Init values (operands [first, first + count)) are scalars; returns their types.
absl::StatusOr<std::vector<PrimitiveType>> InitTypes(const HloInstruction& instr, int64_t first,
                                                     int64_t count) {
  std::vector<PrimitiveType> types;
  for (int64_t i = first; i < first + count; ++i) {
    RETURN_IF_ERROR(
        ExpectScalar(instr, instr.operand(i)->shape(), StrCat("init value ", i - first)));
    types.push_back(instr.operand(i)->shape().element_type());
  }
  return types;
}

std::vector<PrimitiveType> ElementTypes(const std::vector<const Shape*>& shapes) {
  std::vector<PrimitiveType> types;
  for (const Shape* s : shapes) types.push_back(s->element_type());
  return types;
}

// Number of inputs of a variadic reduction: N inputs followed by N init values.
absl::StatusOr<int64_t> ReductionInputCount(const HloInstruction& instr) {
  int64_t n = instr.operand_count();
  if (n == 0 || n % 2 != 0) {
    return Error(instr, StrCat("expects N inputs followed by N init values, got ", n, " operands"));
  }
  return n / 2;
}

// ---------------------------------------------------------------------------
// Windows (reduce-window, select-and-scatter).

// The dimensions a window over `operand` produces (one window dimension per
// operand dimension).
absl::StatusOr<std::vector<Dim>> WindowedDims(const HloInstruction& instr, const Shape& operand) {
  static const Window kNoWindow;
  const Window& window = instr.attrs().window ? *instr.attrs().window : kNoWindow;
  if (static_cast<int64_t>(window.dimensions.size()) != operand.rank()) {
    return Error(instr, StrCat("window has ", window.dimensions.size(),
                               " dimensions but the operand has rank ", operand.rank()));
  }
  std::vector<Dim> dims;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const WindowDimension& w = window.dimensions[i];
    RETURN_IF_ERROR(CheckWindowDimension(instr, i, w, "base", "window"));
    ASSIGN_OR_RETURN(int64_t size, WindowedSize(instr, operand.dimensions(i), w));
    dims.push_back({size, operand.is_dynamic_dimension(i)});
  }
  return dims;
}

// ---------------------------------------------------------------------------
// Reduce and reduce-window.

absl::StatusOr<Shape> InferReduce(const HloInstruction& instr) {
  ASSIGN_OR_RETURN(int64_t n, ReductionInputCount(instr));
  ASSIGN_OR_RETURN(std::vector<const Shape*> inputs, SameDimensionArrays(instr, 0, n, "input"));
  ASSIGN_OR_RETURN(std::vector<PrimitiveType> init_types, InitTypes(instr, n, n));
  std::vector<int64_t> reduced = instr.attrs().dimensions.value_or(std::vector<int64_t>{});
  RETURN_IF_ERROR(CheckDimensions(instr, reduced, inputs[0]->rank()));
  ASSIGN_OR_RETURN(Signature sig, CalledSignature(instr, 0, "to_apply"));
  ASSIGN_OR_RETURN(std::vector<PrimitiveType> types,
                   CheckReducer(instr, sig, init_types, ElementTypes(inputs)));
  std::vector<Dim> kept;
  for (int64_t i = 0; i < inputs[0]->rank(); ++i) {
    if (std::find(reduced.begin(), reduced.end(), i) == reduced.end()) {
      kept.push_back(DimOf(*inputs[0], i));
    }
  }
  std::vector<Shape> results;
  for (PrimitiveType t : types) results.push_back(MakeArray(t, kept));
  return SingleOrTuple(std::move(results));
}

absl::StatusOr<Shape> InferReduceWindow(const HloInstruction& instr) {
  ASSIGN_OR_RETURN(int64_t n, ReductionInputCount(instr));
  ASSIGN_OR_RETURN(std::vector<const Shape*> inputs, SameDimensionArrays(instr, 0, n, "input"));
  ASSIGN_OR_RETURN(std::vector<PrimitiveType> init_types, InitTypes(instr, n, n));
  ASSIGN_OR_RETURN(std::vector<Dim> dims, WindowedDims(instr, *inputs[0]));
  ASSIGN_OR_RETURN(Signature sig, CalledSignature(instr, 0, "to_apply"));
  ASSIGN_OR_RETURN(std::vector<PrimitiveType> types,
                   CheckReducer(instr, sig, init_types, ElementTypes(inputs)));
  std::vector<Shape> results;
  for (PrimitiveType t : types) results.push_back(MakeArray(t, dims));
  return SingleOrTuple(std::move(results));
}

// ---------------------------------------------------------------------------
// Select-and-scatter.

// The computation returns pred[].
absl::Status ExpectPredicateResult(const HloInstruction& instr, const Signature& sig,
                                   absl::string_view role) {
  const Shape* result = SingleResult(sig);
  if (result && result->IsScalar() && result->element_type() == PrimitiveType::PRED) {
    return absl::OkStatus();
  }
  return Error(instr,
               StrCat(role, " '", sig.name, "' must return pred[], got ", ShapeText(*sig.root)));
}

// select(a, b) -> pred picks one element of each window of the operand.
absl::Status CheckSelect(const HloInstruction& instr, PrimitiveType operand_type) {
  ASSIGN_OR_RETURN(Signature sig, CalledSignature(instr, 0, "select"));
  RETURN_IF_ERROR(ExpectParameterCount(instr, sig, 2));
  RETURN_IF_ERROR(CheckScalarParameter(instr, sig, 0, operand_type, false));
  RETURN_IF_ERROR(CheckScalarParameter(instr, sig, 1, operand_type, false));
  return ExpectPredicateResult(instr, sig, "select computation");
}

absl::StatusOr<Shape> InferSelectAndScatter(const HloInstruction& instr) {
  if (instr.operand_count() != 3) {
    return Error(instr, StrCat("expects 3 operands, got ", instr.operand_count()));
  }
  const Shape& operand = instr.operand(0)->shape();
  const Shape& source = instr.operand(1)->shape();
  const Shape& init = instr.operand(2)->shape();
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  RETURN_IF_ERROR(ExpectArray(instr, source, "source"));
  RETURN_IF_ERROR(ExpectScalar(instr, init, "init value"));
  ASSIGN_OR_RETURN(std::vector<Dim> windows, WindowedDims(instr, operand));
  Shape expected_source = MakeArray(source.element_type(), windows);
  if (!SameDimensions(source, expected_source)) {
    return Error(instr, StrCat("source is ", ShapeText(source), " but the window over the ",
                               "operand gives ", ShapeText(expected_source)));
  }
  RETURN_IF_ERROR(CheckSelect(instr, operand.element_type()));
  ASSIGN_OR_RETURN(Signature scatter, CalledSignature(instr, 1, "scatter"));
  RETURN_IF_ERROR(
      CheckReducer(instr, scatter, {init.element_type()}, {source.element_type()}).status());
  if (!SameTypeIgnoringFpPrecision(init.element_type(), operand.element_type())) {
    return Error(instr, StrCat("init value is ", TypeName(init.element_type()),
                               " but the operand is ", TypeName(operand.element_type())));
  }
  return WithoutLayout(operand);
}

// ---------------------------------------------------------------------------
// Sort, map and scan.

absl::StatusOr<Shape> InferSort(const HloInstruction& instr) {
  int64_t n = instr.operand_count();
  if (n == 0) return Error(instr, "expects at least one operand");
  ASSIGN_OR_RETURN(std::vector<const Shape*> operands, SameDimensionArrays(instr, 0, n, "operand"));
  RETURN_IF_ERROR(SingleDimension(instr, operands[0]->rank()).status());
  // The comparator sees a pair of elements, (lhs, rhs), of every operand.
  ASSIGN_OR_RETURN(Signature sig, CalledSignature(instr, 0, "comparator"));
  RETURN_IF_ERROR(ExpectParameterCount(instr, sig, 2 * n));
  for (int64_t i = 0; i < n; ++i) {
    PrimitiveType t = operands[i]->element_type();
    RETURN_IF_ERROR(CheckScalarParameter(instr, sig, 2 * i, t, false));
    RETURN_IF_ERROR(CheckScalarParameter(instr, sig, 2 * i + 1, t, false));
  }
  RETURN_IF_ERROR(ExpectPredicateResult(instr, sig, "comparator"));
  std::vector<Shape> results;
  for (const Shape* s : operands) results.push_back(WithoutLayout(*s));
  return SingleOrTuple(std::move(results));
}

absl::StatusOr<Shape> InferMap(const HloInstruction& instr) {
  int64_t n = instr.operand_count();
  if (n == 0) return Error(instr, "expects at least one operand");
  ASSIGN_OR_RETURN(std::vector<const Shape*> operands, SameDimensionArrays(instr, 0, n, "operand"));
  // XLA maps over all dimensions, in order.
  if (const auto& dims = instr.attrs().dimensions) {
    for (size_t i = 0; i < dims->size(); ++i) {
      if ((*dims)[i] != static_cast<int64_t>(i) || dims->size() != operands[0]->rank()) {
        return Error(instr, StrCat("dimensions {", absl::StrJoin(*dims, ","),
                                   "} must list every operand dimension in order"));
      }
    }
  }
  ASSIGN_OR_RETURN(Signature sig, CalledSignature(instr, 0, "to_apply"));
  RETURN_IF_ERROR(ExpectParameterCount(instr, sig, n));
  for (int64_t i = 0; i < n; ++i) {
    RETURN_IF_ERROR(CheckScalarParameter(instr, sig, i, operands[i]->element_type(), false));
  }
  const Shape* result = SingleResult(sig);
  if (!result || !result->IsScalar()) {
    return Error(instr, StrCat("computation '", sig.name, "' must return a scalar, got ",
                               ShapeText(*sig.root)));
  }
  return MakeArray(result->element_type(), DimsOf(*operands[0]));
}

// scan(inputs..., inits...): the body maps (input elements..., carries...) to
// (outputs..., new carries...); the result stacks the outputs along the scan
// dimension and ends with the final carries (num_carries of them).
absl::StatusOr<Shape> InferScan(const HloInstruction& instr) {
  int64_t carries = instr.attrs().num_carries.value_or(0);
  int64_t inputs = instr.operand_count() - carries;
  if (carries < 0) return Error(instr, StrCat("num_carries ", carries, " is negative"));
  if (inputs < 1) {
    return Error(instr, StrCat("needs at least one input besides its ", carries, " carries, got ",
                               instr.operand_count(), " operands"));
  }
  ASSIGN_OR_RETURN(std::vector<const Shape*> scanned,
                   SameDimensionArrays(instr, 0, inputs, "input"));
  ASSIGN_OR_RETURN(int64_t dim, SingleDimension(instr, scanned[0]->rank()));
  Dim length = DimOf(*scanned[0], dim);
  ASSIGN_OR_RETURN(Signature sig, CalledSignature(instr, 0, "to_apply"));
  RETURN_IF_ERROR(ExpectParameterCount(instr, sig, instr.operand_count()));
  int64_t outputs = static_cast<int64_t>(sig.results.size()) - carries;
  if (outputs < 0) {
    return Error(instr, StrCat("computation '", sig.name, "' returns ", sig.results.size(),
                               " values, fewer than the ", carries, " carries"));
  }
  std::vector<Shape> results;
  for (int64_t i = 0; i < outputs; ++i) {
    const Shape& element = *sig.results[i];
    RETURN_IF_ERROR(ExpectArray(instr, element, StrCat("scan output ", i)));
    std::vector<Dim> dims = DimsOf(element);
    dims.insert(dims.begin() + std::min<int64_t>(dim, element.rank()), length);
    results.push_back(MakeArray(element.element_type(), dims));
  }
  for (int64_t i = inputs; i < instr.operand_count(); ++i) {
    results.push_back(WithoutLayout(instr.operand(i)->shape()));
  }
  return Shape::Tuple(std::move(results));
}

}  // namespace

absl::StatusOr<Shape> InferReductionShape(const HloInstruction& instr) {
  switch (instr.opcode()) {
    case HloOpcode::kReduce:
      return InferReduce(instr);
    case HloOpcode::kReduceWindow:
      return InferReduceWindow(instr);
    case HloOpcode::kSelectAndScatter:
      return InferSelectAndScatter(instr);
    case HloOpcode::kSort:
      return InferSort(instr);
    case HloOpcode::kMap:
      return InferMap(instr);
    case HloOpcode::kScan:
      return InferScan(instr);
    default:
      return absl::NotFoundError("not handled");
  }
}

}  // namespace xlite::shape_inference
