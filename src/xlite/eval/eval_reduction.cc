// Reference semantics of ops that apply a called computation across elements:
// reduce, reduce-window, select-and-scatter, sort, map and scan.
//
// XLA leaves the order of application unspecified; the reference fixes it:
// - reduce folds each output element's inputs in row-major order of the input
//   index, starting from the init values: acc = f(acc..., x...). With no
//   reduced dimensions every output is f(init..., x...).
// - reduce-window folds each window in row-major order of the window index,
//   starting from the init values. Positions in padding or in base-dilation
//   holes contribute the init values as x (the StableHLO spec and XLA's
//   operation semantics: "as though the input came in with the dimensions it
//   has after padding"). XLA's own evaluator skips them instead; the two agree
//   whenever the init value is the reducer's identity, as in every real model.
// - select-and-scatter visits source elements in row-major order; within a
//   window it keeps the first in-bounds element and replaces it by a later one
//   whenever select(kept, later) is false; padding is never selected. The
//   scatter computation is called as scatter(current output, source value).
// - sort is always a stable merge sort, which satisfies is_stable=false too.
// - scan follows XLA's ScanExpander: the body takes (input slices...,
//   carries...) and returns (outputs..., new carries...); is_reverse walks the
//   scan dimension from its end; is_associative is only a hint.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "xlite/eval/eval_util.h"
#include "xlite/eval/evaluator.h"
#include "xlite/ir/computation.h"
#include "xlite/support/status.h"
#include "xlite/verify/shape_inference.h"

namespace xlite::eval {
namespace {

// ---------------------------------------------------------------------------
// Elements.

// Output i of a variadic op: the i-th tuple element, or the result itself.
Literal& OutputArray(Literal& result, int64_t i) {
  return result.shape().IsTuple() ? result.tuple_elements()[i] : result;
}

// ---------------------------------------------------------------------------
// A called computation applied to scalars again and again. Its argument
// literals are allocated once, typed as its parameters, and refilled per call.

class ScalarFunction {
 public:
  // Binds called computation `index` of `instr`, which returns `results` scalars.
  static absl::StatusOr<ScalarFunction> Bind(const HloInstruction& instr, size_t index,
                                             int64_t results, EvalContext& context) {
    const auto& called = instr.called_computations();
    if (index >= called.size() || called[index] == nullptr) {
      return InvalidArgument(Where(instr), "missing called computation ", index);
    }
    ScalarFunction f;
    f.computation_ = called[index];
    f.context_ = &context;
    f.results_ = results;
    for (const HloInstruction* p : f.computation_->parameter_instructions()) {
      if (p == nullptr || !p->shape().IsScalar()) {
        return InvalidArgument(Where(instr), "computation '", f.computation_->name(),
                               "' must take scalar parameters");
      }
      f.arguments_.emplace_back(Shape::Scalar(p->shape().element_type()));
    }
    return f;
  }

  int64_t parameter_count() const { return static_cast<int64_t>(arguments_.size()); }
  const Literal& argument(int64_t i) const { return arguments_[i]; }
  // Argument i = element `at` of `value`, converted to the parameter's type.
  void SetArgument(int64_t i, const Literal& value, int64_t at) {
    ConvertElement(value, at, arguments_[i], 0);
  }

  absl::Status Call() {
    pointers_.clear();
    for (const Literal& a : arguments_) pointers_.push_back(&a);
    ASSIGN_OR_RETURN(result_, context_->Call(*computation_, pointers_));
    const bool single = result_.shape().IsScalar() && results_ == 1;
    bool tuple = result_.shape().IsTuple() && result_.tuple_elements().size() == results_;
    for (int64_t i = 0; tuple && i < results_; ++i) {
      tuple = result_.tuple_elements()[i].shape().IsScalar();
    }
    if (!single && !tuple) {
      return InvalidArgument("computation '", computation_->name(), "' returned ",
                             result_.shape().ToString(false), " where ", results_,
                             " scalars were expected");
    }
    return absl::OkStatus();
  }

  // Result i of the last call (a scalar).
  const Literal& result(int64_t i) const {
    return result_.shape().IsTuple() ? result_.tuple_elements()[i] : result_;
  }
  bool BoolResult() const { return result(0).GetInt(0) != 0; }

  // The first `count` arguments become the first `count` results (accumulators).
  void AccumulateResults(int64_t count) {
    for (int64_t i = 0; i < count; ++i) SetArgument(i, result(i), 0);
  }

 private:
  const HloComputation* computation_ = nullptr;
  EvalContext* context_ = nullptr;
  int64_t results_ = 1;
  std::vector<Literal> arguments_;
  std::vector<const Literal*> pointers_;
  Literal result_;
};

// ---------------------------------------------------------------------------
// Accumulation on whole arrays: acc = f(acc, x_c) for every step c, for all
// outputs at once, when f lifts to arrays (see LiftToArrays). Each output
// still sees its inputs in the same order as the per-element loop, so the
// results are identical; the computation runs `steps` times instead of
// `steps * outputs` times.

// Where output o takes its step-c input in the operands, or -1 for the init value.
using StepIndex = std::function<int64_t(int64_t o, int64_t c)>;

// The reducer (called computation 0, taking n accumulators then n inputs)
// lifted to arrays of `outputs` elements; null when it does not lift or there
// is nothing to gain (a single output).
std::unique_ptr<HloComputation> LiftedReducer(const HloInstruction& instr, int64_t outputs) {
  const int64_t n = instr.operand_count() / 2;
  const auto& called = instr.called_computations();
  if (outputs < 2 || called.empty() || called[0] == nullptr ||
      called[0]->num_parameters() != 2 * n) {
    return nullptr;
  }
  std::unique_ptr<HloComputation> lifted = LiftToArrays(*called[0], {outputs});
  if (!lifted) return nullptr;
  const HloInstruction* root = lifted->root_instruction();
  if (n > 1 ? root->opcode() != HloOpcode::kTuple || root->operand_count() != n
            : root->opcode() == HloOpcode::kTuple) {
    return nullptr;
  }
  return lifted;
}

// Folds the operands into `result` with `lifted` (from LiftedReducer).
absl::Status AccumulateOnArrays(const HloInstruction& instr, const HloComputation& lifted,
                                absl::Span<const Literal* const> operands, int64_t outputs,
                                int64_t steps, const StepIndex& index, Literal& result,
                                EvalContext& context) {
  const int64_t n = instr.operand_count() / 2;
  std::vector<Literal> acc, column;
  for (int64_t i = 0; i < 2 * n; ++i) {
    Literal value(lifted.parameter_instruction(i)->shape());
    if (i < n) {
      for (int64_t o = 0; o < outputs; ++o) ConvertElement(*operands[n + i], 0, value, o);
    }
    (i < n ? acc : column).push_back(std::move(value));
  }
  std::vector<const Literal*> args;
  for (const Literal& a : acc) args.push_back(&a);
  for (const Literal& c : column) args.push_back(&c);
  for (int64_t c = 0; c < steps; ++c) {
    for (int64_t o = 0; o < outputs; ++o) {
      const int64_t at = index(o, c);
      for (int64_t i = 0; i < n; ++i) {
        ConvertElement(at < 0 ? *operands[n + i] : *operands[i], at < 0 ? 0 : at, column[i], o);
      }
    }
    ASSIGN_OR_RETURN(Literal next, context.Call(lifted, args));
    for (int64_t i = 0; i < n; ++i) {
      Literal& value = n > 1 ? next.tuple_elements()[i] : next;
      if (!value.shape().EqualIgnoringLayout(acc[i].shape())) {
        return InvalidArgument("computation '", instr.called_computations()[0]->name(),
                               "' returned ", value.shape().ToString(false), " where ",
                               acc[i].shape().ToString(false), " was expected");
      }
      acc[i] = std::move(value);
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t o = 0; o < outputs; ++o) ConvertElement(acc[i], o, OutputArray(result, i), o);
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Reduce.

absl::StatusOr<Literal> EvalReduce(const HloInstruction& instr,
                                   absl::Span<const Literal* const> operands,
                                   EvalContext& context) {
  RETURN_IF_ERROR(CheckShapes(instr, operands));
  const int64_t n = instr.operand_count() / 2;
  const Shape& input = operands[0]->shape();
  std::vector<bool> reduced(input.rank(), false);
  for (int64_t d : instr.attrs().dimensions.value_or(std::vector<int64_t>{})) reduced[d] = true;
  const std::vector<int64_t> strides = Strides(input);
  std::vector<int64_t> kept_sizes, kept_strides, reduced_sizes, reduced_strides;
  for (int64_t d = 0; d < input.rank(); ++d) {
    (reduced[d] ? reduced_sizes : kept_sizes).push_back(input.dimensions(d));
    (reduced[d] ? reduced_strides : kept_strides).push_back(strides[d]);
  }
  Literal result = ResultLiteral(instr);
  const int64_t outputs = Product(kept_sizes);
  const int64_t reduced_count = Product(reduced_sizes);
  if (std::unique_ptr<HloComputation> lifted = LiftedReducer(instr, outputs)) {
    const std::vector<int64_t> kept_offsets = OffsetTable(kept_sizes, kept_strides);
    const std::vector<int64_t> reduced_offsets = OffsetTable(reduced_sizes, reduced_strides);
    RETURN_IF_ERROR(AccumulateOnArrays(
        instr, *lifted, operands, outputs, reduced_count,
        [&](int64_t o, int64_t c) { return kept_offsets[o] + reduced_offsets[c]; }, result,
        context));
    return result;
  }
  ASSIGN_OR_RETURN(ScalarFunction f, ScalarFunction::Bind(instr, 0, n, context));
  MultiIndex out(kept_sizes);
  for (int64_t o = 0; o < outputs; ++o, out.Next()) {
    int64_t base = 0;
    for (size_t d = 0; d < kept_sizes.size(); ++d) base += out[d] * kept_strides[d];
    for (int64_t i = 0; i < n; ++i) f.SetArgument(i, *operands[n + i], 0);
    MultiIndex r(reduced_sizes);
    for (int64_t c = 0; c < reduced_count; ++c, r.Next()) {
      int64_t at = base;
      for (size_t d = 0; d < reduced_sizes.size(); ++d) at += r[d] * reduced_strides[d];
      for (int64_t i = 0; i < n; ++i) f.SetArgument(n + i, *operands[i], at);
      RETURN_IF_ERROR(f.Call());
      f.AccumulateResults(n);
    }
    for (int64_t i = 0; i < n; ++i) ConvertElement(f.argument(i), 0, OutputArray(result, i), o);
  }
  return result;
}

// ---------------------------------------------------------------------------
// Windows (reduce-window, select-and-scatter).

// Where each window position of each output element lands in the base.
class WindowWalker {
 public:
  WindowWalker(const Window& window, const Shape& base)
      : window_(window), base_sizes_(base.dimensions()), base_strides_(Strides(base)) {
    for (const WindowDimension& w : window.dimensions) sizes_.push_back(w.size);
  }

  const std::vector<int64_t>& window_sizes() const { return sizes_; }

  // Linear base index of window position `k` of the window at `out`, or -1
  // for padding and base-dilation holes.
  int64_t BaseIndex(const MultiIndex& out, const MultiIndex& k) const {
    int64_t at = 0;
    for (size_t d = 0; d < sizes_.size(); ++d) {
      const WindowDimension& w = window_.dimensions[d];
      int64_t x = out[d] * w.stride + k[d] * w.window_dilation - w.padding_low;
      if (x < 0 || x % w.base_dilation != 0) return -1;
      x /= w.base_dilation;
      if (x >= base_sizes_[d]) return -1;
      at += x * base_strides_[d];
    }
    return at;
  }

 private:
  const Window& window_;
  std::vector<int64_t> base_sizes_;
  std::vector<int64_t> base_strides_;
  std::vector<int64_t> sizes_;
};

const Window& WindowOf(const HloInstruction& instr) {
  static const Window kNoWindow;
  return instr.attrs().window ? *instr.attrs().window : kNoWindow;
}

absl::StatusOr<Literal> EvalReduceWindow(const HloInstruction& instr,
                                         absl::Span<const Literal* const> operands,
                                         EvalContext& context) {
  RETURN_IF_ERROR(CheckShapes(instr, operands));
  const int64_t n = instr.operand_count() / 2;
  const WindowWalker walker(WindowOf(instr), operands[0]->shape());
  const int64_t window_count = Product(walker.window_sizes());
  Literal result = ResultLiteral(instr);
  const Literal& first = OutputArray(result, 0);
  const int64_t outputs = first.element_count();
  // The lifted path tabulates every (output, window position); bound its size.
  std::unique_ptr<HloComputation> lifted;
  if (outputs * window_count <= (int64_t{1} << 26)) lifted = LiftedReducer(instr, outputs);
  if (lifted) {
    // Base indices of every (output, window position); -1 for padding.
    std::vector<int64_t> at(outputs * window_count);
    MultiIndex out(first.shape().dimensions());
    for (int64_t o = 0; o < outputs; ++o, out.Next()) {
      MultiIndex k(walker.window_sizes());
      for (int64_t c = 0; c < window_count; ++c, k.Next()) {
        at[o * window_count + c] = walker.BaseIndex(out, k);
      }
    }
    RETURN_IF_ERROR(AccumulateOnArrays(
        instr, *lifted, operands, outputs, window_count,
        [&](int64_t o, int64_t c) { return at[o * window_count + c]; }, result, context));
    return result;
  }
  ASSIGN_OR_RETURN(ScalarFunction f, ScalarFunction::Bind(instr, 0, n, context));
  MultiIndex out(first.shape().dimensions());
  for (int64_t o = 0; o < outputs; ++o, out.Next()) {
    for (int64_t i = 0; i < n; ++i) f.SetArgument(i, *operands[n + i], 0);
    MultiIndex k(walker.window_sizes());
    for (int64_t c = 0; c < window_count; ++c, k.Next()) {
      const int64_t at = walker.BaseIndex(out, k);
      for (int64_t i = 0; i < n; ++i) {
        if (at < 0) {
          f.SetArgument(n + i, *operands[n + i], 0);  // padding is the init value
        } else {
          f.SetArgument(n + i, *operands[i], at);
        }
      }
      RETURN_IF_ERROR(f.Call());
      f.AccumulateResults(n);
    }
    for (int64_t i = 0; i < n; ++i) ConvertElement(f.argument(i), 0, OutputArray(result, i), o);
  }
  return result;
}

absl::StatusOr<Literal> EvalSelectAndScatter(const HloInstruction& instr,
                                             absl::Span<const Literal* const> operands,
                                             EvalContext& context) {
  RETURN_IF_ERROR(CheckShapes(instr, operands));
  const Literal& operand = *operands[0];
  const Literal& source = *operands[1];
  const Literal& init = *operands[2];
  const WindowWalker walker(WindowOf(instr), operand.shape());
  const int64_t window_count = Product(walker.window_sizes());
  ASSIGN_OR_RETURN(ScalarFunction select, ScalarFunction::Bind(instr, 0, 1, context));
  ASSIGN_OR_RETURN(ScalarFunction scatter, ScalarFunction::Bind(instr, 1, 1, context));
  Literal result = ResultLiteral(instr);
  for (int64_t i = 0; i < result.element_count(); ++i) ConvertElement(init, 0, result, i);
  MultiIndex s(source.shape().dimensions());
  for (int64_t si = 0; si < source.element_count(); ++si, s.Next()) {
    int64_t selected = -1;
    MultiIndex k(walker.window_sizes());
    for (int64_t c = 0; c < window_count; ++c, k.Next()) {
      const int64_t at = walker.BaseIndex(s, k);
      if (at < 0) continue;
      if (selected < 0) {
        selected = at;
        select.SetArgument(0, operand, selected);
        continue;
      }
      select.SetArgument(1, operand, at);
      RETURN_IF_ERROR(select.Call());
      if (!select.BoolResult()) {
        selected = at;
        select.SetArgument(0, operand, selected);
      }
    }
    if (selected < 0) continue;  // the window lies entirely in padding
    scatter.SetArgument(0, result, selected);
    scatter.SetArgument(1, source, si);
    RETURN_IF_ERROR(scatter.Call());
    ConvertElement(scatter.result(0), 0, result, selected);
  }
  return result;
}

// ---------------------------------------------------------------------------
// Sort.

// StableMergeSort on every slice at once, when the comparator lifts to arrays:
// the merges of one level advance together, one comparison each per step, in
// one call of the comparator lifted to that level's merge count (merges that
// are done compare placeholder elements, and their answers are ignored). Each
// merge makes the same comparisons in the same order as StableMergeSort, so
// the orders are equal. orders[s * length + p] is position p of slice s,
// whose elements start at bases[s] with `stride`. False if the comparator
// does not lift.
absl::StatusOr<bool> SortLockstep(const HloComputation& comparator,
                                  absl::Span<const Literal* const> keys,
                                  const std::vector<int64_t>& bases, int64_t length, int64_t stride,
                                  std::vector<int64_t>& orders, EvalContext& context) {
  struct Merge {
    int64_t slice, left, mid, right, end, out;
    bool comparing() const { return left < mid && right < end; }
  };
  const int64_t n = static_cast<int64_t>(keys.size());
  std::vector<int64_t> merged(orders.size());
  std::vector<Merge> merges;
  for (int64_t width = 1; width < length; width *= 2) {
    merges.clear();
    for (int64_t s = 0; s < static_cast<int64_t>(bases.size()); ++s) {
      for (int64_t lo = 0; lo < length; lo += 2 * width) {
        const int64_t mid = std::min(lo + width, length), hi = std::min(lo + 2 * width, length);
        const int64_t at = s * length;
        merges.push_back({s, at + lo, at + mid, at + mid, at + hi, at + lo});
      }
    }
    const int64_t count = static_cast<int64_t>(merges.size());
    std::unique_ptr<HloComputation> lifted = LiftToArrays(comparator, {count});
    if (!lifted || lifted->root_instruction()->opcode() == HloOpcode::kTuple) return false;
    std::vector<Literal> args;
    for (int64_t i = 0; i < 2 * n; ++i)
      args.emplace_back(lifted->parameter_instruction(i)->shape());
    std::vector<const Literal*> pointers;
    for (const Literal& arg : args) pointers.push_back(&arg);
    while (true) {
      bool any = false;
      for (int64_t j = 0; j < count; ++j) {
        Merge& m = merges[j];
        if (!m.comparing()) {  // one run is used up: the rest of the other follows
          while (m.left < m.mid) merged[m.out++] = orders[m.left++];
          while (m.right < m.end) merged[m.out++] = orders[m.right++];
        }
        any |= m.comparing();
        const int64_t base = bases[m.slice];
        const int64_t a = m.comparing() ? base + orders[m.right] * stride : base;
        const int64_t b = m.comparing() ? base + orders[m.left] * stride : base;
        for (int64_t k = 0; k < n; ++k) {
          ConvertElement(*keys[k], a, args[2 * k], j);
          ConvertElement(*keys[k], b, args[2 * k + 1], j);
        }
      }
      if (!any) break;
      ASSIGN_OR_RETURN(Literal right_first, context.Call(*lifted, pointers));
      if (!right_first.shape().IsArray() ||
          right_first.shape().element_type() != PrimitiveType::PRED ||
          right_first.element_count() != count) {
        return InvalidArgument("comparator '", comparator.name(), "' must return pred[], got ",
                               right_first.shape().ToString(false));
      }
      for (int64_t j = 0; j < count; ++j) {
        Merge& m = merges[j];
        if (!m.comparing()) continue;
        merged[m.out++] = right_first.GetInt(j) != 0 ? orders[m.right++] : orders[m.left++];
      }
    }
    orders.swap(merged);
  }
  return true;
}

absl::StatusOr<Literal> EvalSort(const HloInstruction& instr,
                                 absl::Span<const Literal* const> operands, EvalContext& context) {
  RETURN_IF_ERROR(CheckShapes(instr, operands));
  const int64_t n = instr.operand_count();
  const Shape& shape = operands[0]->shape();
  const int64_t dim = (*instr.attrs().dimensions)[0];
  const int64_t length = shape.dimensions(dim);
  const int64_t stride = Strides(shape)[dim];
  Literal result = ResultLiteral(instr);
  // Each slice along `dim` starts at an index whose `dim` coordinate is 0.
  std::vector<int64_t> slice_starts = shape.dimensions();
  slice_starts[dim] = 1;
  const std::vector<int64_t> strides = Strides(shape);
  const int64_t slices = length == 0 ? 0 : Product(slice_starts);
  const auto& called = instr.called_computations();
  if (length > 1 && !called.empty() && called[0] != nullptr &&
      called[0]->num_parameters() == 2 * n) {
    std::vector<int64_t> bases;
    std::vector<int64_t> orders;
    MultiIndex start(slice_starts);
    for (int64_t s = 0; s < slices; ++s, start.Next()) {
      int64_t base = 0;
      for (int64_t d = 0; d < shape.rank(); ++d) base += start[d] * strides[d];
      bases.push_back(base);
      for (int64_t p = 0; p < length; ++p) orders.push_back(p);
    }
    ASSIGN_OR_RETURN(bool done,
                     SortLockstep(*called[0], operands, bases, length, stride, orders, context));
    if (done) {
      for (int64_t s = 0; s < slices; ++s) {
        for (int64_t k = 0; k < n; ++k) {
          for (int64_t p = 0; p < length; ++p) {
            ConvertElement(*operands[k], bases[s] + orders[s * length + p] * stride,
                           OutputArray(result, k), bases[s] + p * stride);
          }
        }
      }
      return result;
    }
  }
  ASSIGN_OR_RETURN(ScalarFunction comparator, ScalarFunction::Bind(instr, 0, 1, context));
  int64_t base = 0;
  auto less = [&](int64_t a, int64_t b) -> absl::StatusOr<bool> {
    for (int64_t k = 0; k < n; ++k) {
      comparator.SetArgument(2 * k, *operands[k], base + a * stride);
      comparator.SetArgument(2 * k + 1, *operands[k], base + b * stride);
    }
    RETURN_IF_ERROR(comparator.Call());
    return comparator.BoolResult();
  };
  MultiIndex start(slice_starts);
  std::vector<int64_t> order(length);
  for (int64_t s = 0; s < slices; ++s, start.Next()) {
    base = 0;
    for (int64_t d = 0; d < shape.rank(); ++d) base += start[d] * strides[d];
    std::iota(order.begin(), order.end(), 0);
    RETURN_IF_ERROR(StableMergeSort(order, less));
    for (int64_t k = 0; k < n; ++k) {
      for (int64_t p = 0; p < length; ++p) {
        ConvertElement(*operands[k], base + order[p] * stride, OutputArray(result, k),
                       base + p * stride);
      }
    }
  }
  return result;
}

// ---------------------------------------------------------------------------
// Map.

absl::StatusOr<Literal> EvalMap(const HloInstruction& instr,
                                absl::Span<const Literal* const> operands, EvalContext& context) {
  RETURN_IF_ERROR(CheckShapes(instr, operands));
  ASSIGN_OR_RETURN(ScalarFunction f, ScalarFunction::Bind(instr, 0, 1, context));
  Literal result = ResultLiteral(instr);
  for (int64_t i = 0; i < result.element_count(); ++i) {
    for (int64_t k = 0; k < instr.operand_count(); ++k) f.SetArgument(k, *operands[k], i);
    RETURN_IF_ERROR(f.Call());
    ConvertElement(f.result(0), 0, result, i);
  }
  return result;
}

// ---------------------------------------------------------------------------
// Scan.

// An array viewed as [outer, length, inner] around one dimension.
struct Slicing {
  int64_t outer = 1, length = 1, inner = 1;
  Slicing(const std::vector<int64_t>& dims, int64_t dim) {
    for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
      if (d < dim) outer *= dims[d];
      if (d == dim) length = dims[d];
      if (d > dim) inner *= dims[d];
    }
  }
};

// The slice of `array` at position t of dimension `dim`, without that dimension.
Literal SliceAt(const Literal& array, int64_t dim, int64_t t) {
  std::vector<int64_t> dims = array.shape().dimensions();
  const Slicing s(dims, dim);
  dims.erase(dims.begin() + dim);
  Literal slice(Shape::Array(array.shape().element_type(), dims));
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      ConvertElement(array, (o * s.length + t) * s.inner + i, slice, o * s.inner + i);
    }
  }
  return slice;
}

// Writes `element` into `stacked` at position t of dimension `dim`.
void StoreSliceAt(const Literal& element, int64_t dim, int64_t t, Literal& stacked) {
  const Slicing s(stacked.shape().dimensions(), dim);
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      ConvertElement(element, o * s.inner + i, stacked, (o * s.length + t) * s.inner + i);
    }
  }
}

Shape WithoutLayout(Shape s) {
  s.clear_layout();
  for (Shape& e : s.mutable_tuple_shapes()) e = WithoutLayout(e);
  return s;
}

// The body's results split into per-step outputs and new carries.
absl::Status SplitScanResult(const HloInstruction& instr, Literal body_result,
                             const std::vector<Shape>& output_elements,
                             std::vector<Literal>& outputs, std::vector<Literal>& carries) {
  const size_t n_out = output_elements.size(), n_carry = carries.size();
  std::vector<Literal> parts;
  if (body_result.shape().IsTuple()) {
    parts = std::move(body_result.tuple_elements());
  } else {
    parts.push_back(std::move(body_result));
  }
  if (parts.size() != n_out + n_carry) {
    return InvalidArgument(Where(instr), "body returned ", parts.size(), " values, expected ",
                           n_out + n_carry);
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    const Shape& expected = i < n_out ? output_elements[i] : carries[i - n_out].shape();
    if (!SameDimensionsAndType(parts[i].shape(), expected)) {
      return InvalidArgument(Where(instr), "body result ", i, " is ",
                             parts[i].shape().ToString(false), ", expected ",
                             expected.ToString(false));
    }
  }
  outputs.assign(std::make_move_iterator(parts.begin()),
                 std::make_move_iterator(parts.begin() + n_out));
  for (size_t i = 0; i < n_carry; ++i) carries[i] = std::move(parts[n_out + i]);
  return absl::OkStatus();
}

absl::StatusOr<Literal> EvalScan(const HloInstruction& instr,
                                 absl::Span<const Literal* const> operands, EvalContext& context) {
  RETURN_IF_ERROR(CheckOperandValues(instr, operands));
  ASSIGN_OR_RETURN(Shape inferred, InferShape(instr));
  // XLA also allows a scan with a single result to return it untupled.
  const bool tupled = instr.shape().IsTuple();
  if (!tupled && inferred.tuple_shapes_size() != 1) {
    return InvalidArgument(Where(instr), "an untupled scan must have exactly one result, got ",
                           inferred.ToString(false));
  }
  RETURN_IF_ERROR(CheckDeclaredShape(instr, tupled ? inferred : inferred.tuple_shapes(0)));
  if (instr.called_computations().empty() || instr.called_computations()[0] == nullptr) {
    return InvalidArgument(Where(instr), "missing body computation");
  }
  const HloComputation& body = *instr.called_computations()[0];
  const int64_t n_carry = instr.attrs().num_carries.value_or(0);
  const int64_t n_in = instr.operand_count() - n_carry;
  const int64_t n_out = inferred.tuple_shapes_size() - n_carry;
  const int64_t dim = (*instr.attrs().dimensions)[0];
  const int64_t length = operands[0]->shape().dimensions(dim);

  std::vector<Literal> stacked;        // the result's outputs, filled step by step
  std::vector<Shape> output_elements;  // shape of one step's output
  for (int64_t j = 0; j < n_out; ++j) {
    Shape s = WithoutLayout(inferred.tuple_shapes(j));
    stacked.emplace_back(s);
    std::vector<int64_t> dims = s.dimensions();
    const int64_t at = std::min<int64_t>(dim, s.rank() - 1);
    dims.erase(dims.begin() + at);
    output_elements.push_back(Shape::Array(s.element_type(), dims));
  }
  std::vector<Literal> carries;
  for (int64_t c = 0; c < n_carry; ++c) carries.push_back(*operands[n_in + c]);

  std::vector<Literal> slices(n_in);
  std::vector<const Literal*> arguments;
  std::vector<Literal> step_outputs;
  for (int64_t step = 0; step < length; ++step) {
    const int64_t t = instr.attrs().is_reverse ? length - 1 - step : step;
    arguments.clear();
    for (int64_t k = 0; k < n_in; ++k) {
      slices[k] = SliceAt(*operands[k], dim, t);
      arguments.push_back(&slices[k]);
    }
    for (const Literal& c : carries) arguments.push_back(&c);
    ASSIGN_OR_RETURN(Literal body_result, context.Call(body, arguments));
    RETURN_IF_ERROR(
        SplitScanResult(instr, std::move(body_result), output_elements, step_outputs, carries));
    for (int64_t j = 0; j < n_out; ++j) {
      const int64_t at = std::min<int64_t>(dim, stacked[j].shape().rank() - 1);
      StoreSliceAt(step_outputs[j], at, t, stacked[j]);
    }
  }
  if (!tupled) return std::move(n_out == 1 ? stacked[0] : carries[0]);
  Literal result = ResultLiteral(instr);
  for (int64_t j = 0; j < n_out; ++j) result.tuple_elements()[j] = std::move(stacked[j]);
  for (int64_t c = 0; c < n_carry; ++c) result.tuple_elements()[n_out + c] = std::move(carries[c]);
  return result;
}

}  // namespace

absl::StatusOr<Literal> EvalReduction(const HloInstruction& instr,
                                      absl::Span<const Literal* const> operands,
                                      EvalContext& context) {
  switch (instr.opcode()) {
    case HloOpcode::kReduce:
      return EvalReduce(instr, operands, context);
    case HloOpcode::kReduceWindow:
      return EvalReduceWindow(instr, operands, context);
    case HloOpcode::kSelectAndScatter:
      return EvalSelectAndScatter(instr, operands, context);
    case HloOpcode::kSort:
      return EvalSort(instr, operands, context);
    case HloOpcode::kMap:
      return EvalMap(instr, operands, context);
    case HloOpcode::kScan:
      return EvalScan(instr, operands, context);
    default:
      return absl::NotFoundError("not handled");
  }
}

}  // namespace xlite::eval
