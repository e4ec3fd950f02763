// Reference semantics of the linear-algebra family: dot, convolution, fft,
// triangular-solve, cholesky, topk and batch-norm-{training,inference,grad}.
//
// Numerics (the choices XLA leaves to implementations):
// - dot and convolution accumulate floating-point products in double
//   (complex<double> for complex results) and round once to the declared
//   result type. Integer products wrap modulo 2^64 and are truncated to the
//   result width, which equals XLA's wrapping arithmetic in the result type
//   (never narrower than the operands). Floating-point operands with an
//   integer result are summed in double and converted once (saturating, NaN
//   to 0). operand_precision and dot algorithms are ignored: the reference is
//   always at least as precise.
// - fft is a direct O(n^2) DFT per axis, summed in complex<long double>; IFFT and IRFFT
//   scale by 1/n per axis; IRFFT treats its input as the first n/2+1 entries of
//   a Hermitian spectrum (the imaginary parts of the DC and Nyquist bins do not
//   contribute), like numpy/pocketfft.
// - triangular-solve and cholesky compute in complex<double>. triangular-solve
//   reads only the `lower` (or upper) triangle of a and divides by its
//   diagonal (a zero pivot gives inf/nan). cholesky reads only the requested
//   triangle, writes zeros to the other one, and does not check for positive
//   definiteness: a non-positive pivot takes sqrt of a negative number, and the
//   NaN spreads to the rest of that column and to later columns, as in XLA.
// - batch-norm statistics are computed in double; the variance is the biased
//   (population) one.
// - with an element budget (EvalOptions::max_total_elements), dot, convolution
//   and fft refuse as too slow an instruction needing more than 100
//   multiply-adds per budgeted element, before doing the work.
// - topk orders floating-point values by IEEE total order (+NaN above +inf,
//   -NaN below -inf, -0 below +0); ties keep the lower index first.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <numbers>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "xlite/eval/eval_util.h"
#include "xlite/eval/evaluator.h"
#include "xlite/ir/float_format.h"
#include "xlite/support/status.h"
#include "xlite/verify/shape_inference.h"

namespace xlite::eval {
namespace {

using Complex = std::complex<double>;

// A run with an element budget (EvalOptions::max_total_elements) may spend
// this many multiply-adds per budgeted element in one instruction; beyond it
// the instruction is refused as too slow instead of running for minutes.
constexpr int64_t kMultiplyAddsPerBudgetElement = 100;

// `multiply_adds` saturates; it is the instruction's inner-loop work.
absl::Status CheckWork(const HloInstruction& instr, EvalContext& context, int64_t multiply_adds) {
  const int64_t budget = context.options().max_total_elements;
  if (budget <= 0 || multiply_adds / kMultiplyAddsPerBudgetElement <= budget) {
    return absl::OkStatus();
  }
  return absl::ResourceExhaustedError(
      absl::StrCat("too slow: '", instr.name(), "' needs ", multiply_adds, " multiply-adds"));
}

// Reports a long loop's work to the run's budgets as it goes, so that a time
// limit (EvalOptions::max_seconds) stops an instruction in the middle instead
// of after it: a 7x7 f16 convolution of 128x64x112x112 results ran 44 s past
// a 5 s limit. Progress(0) counts no elements; it ticks the clock check.
class WorkMeter {
 public:
  explicit WorkMeter(EvalContext& context) : context_(context) {}
  // One Progress(0) per kReportEvery multiply-adds: the context reads the
  // clock once per 1024 of them, 67M multiply-adds (about 0.1 s of a dot
  // here, up to 1 s of a convolution with one input feature, whose window
  // offsets cost more than its products).
  absl::Status Add(int64_t multiply_adds) {
    for (pending_ += multiply_adds; pending_ >= kReportEvery; pending_ -= kReportEvery) {
      RETURN_IF_ERROR(context_.Progress(0));
    }
    return absl::OkStatus();
  }

 private:
  static constexpr int64_t kReportEvery = int64_t{1} << 16;
  EvalContext& context_;
  int64_t pending_ = 0;
};

// a * b, saturating at INT64_MAX (both non-negative).
int64_t SaturatingMultiply(int64_t a, int64_t b) {
  int64_t product;
  if (__builtin_mul_overflow(a, b, &product)) return INT64_MAX;
  return product;
}

// ---------------------------------------------------------------------------
// Element access.

bool IsIntegerOrPred(PrimitiveType t) { return IsInteger(t) || t == PrimitiveType::PRED; }

// v converted to integer type `t` as XLA's convert does: NaN gives 0,
// out-of-range values saturate.
int64_t SaturatingIntegerFromDouble(double v, PrimitiveType t) {
  if (t == PrimitiveType::PRED) return v != 0;
  if (std::isnan(v)) return 0;
  const int width = PrimitiveBitWidth(t);
  if (IsSignedInt(t)) {
    const double lo = -std::ldexp(1.0, width - 1);
    const double hi = std::ldexp(1.0, width - 1);  // exclusive
    if (v <= lo) return width == 64 ? INT64_MIN : -(int64_t{1} << (width - 1));
    if (v >= hi) return width == 64 ? INT64_MAX : (int64_t{1} << (width - 1)) - 1;
    return static_cast<int64_t>(v);
  }
  if (v <= 0) return 0;
  const double hi = std::ldexp(1.0, width);  // exclusive
  if (v >= hi) return static_cast<int64_t>(width == 64 ? UINT64_MAX : (uint64_t{1} << width) - 1);
  return static_cast<int64_t>(static_cast<uint64_t>(v));
}

void StoreDouble(Literal& lit, int64_t i, double v) {
  PrimitiveType t = lit.shape().element_type();
  if (IsIntegerOrPred(t)) {
    lit.SetInt(i, SaturatingIntegerFromDouble(v, t));
  } else {
    lit.SetDouble(i, v);
  }
}

// Non-complex types keep the real part.
void StoreComplex(Literal& lit, int64_t i, Complex v) {
  if (IsComplex(lit.shape().element_type())) {
    lit.SetComplex(i, v);
  } else {
    StoreDouble(lit, i, v.real());
  }
}

// Accumulator types: wrapped integers, doubles and complex doubles.
template <typename T>
T Load(const Literal& lit, int64_t i);
template <>
uint64_t Load<uint64_t>(const Literal& lit, int64_t i) {
  return static_cast<uint64_t>(lit.GetInt(i));
}
template <>
double Load<double>(const Literal& lit, int64_t i) {
  return lit.GetDouble(i);
}
template <>
Complex Load<Complex>(const Literal& lit, int64_t i) {
  return lit.GetComplex(i);
}

void Store(Literal& lit, int64_t i, uint64_t v) { lit.SetInt(i, static_cast<int64_t>(v)); }
void Store(Literal& lit, int64_t i, double v) { StoreDouble(lit, i, v); }
void Store(Literal& lit, int64_t i, Complex v) { StoreComplex(lit, i, v); }

// Every element of `lit`, decoded once.
template <typename T>
std::vector<T> Values(const Literal& lit) {
  std::vector<T> values(lit.element_count());
  for (int64_t i = 0; i < lit.element_count(); ++i) values[i] = Load<T>(lit, i);
  return values;
}

enum class Arithmetic { kInteger, kReal, kComplex };

// How dot and convolution multiply and accumulate, by result and operand types.
Arithmetic ArithmeticFor(PrimitiveType result, PrimitiveType lhs, PrimitiveType rhs) {
  if (IsComplex(result)) return Arithmetic::kComplex;
  if (IsIntegerOrPred(result) && IsIntegerOrPred(lhs) && IsIntegerOrPred(rhs)) {
    return Arithmetic::kInteger;
  }
  return Arithmetic::kReal;
}

std::vector<int64_t> Pick(const std::vector<int64_t>& values, const std::vector<int64_t>& at) {
  std::vector<int64_t> picked;
  for (int64_t i : at) picked.push_back(values[i]);
  return picked;
}

// ---------------------------------------------------------------------------
// Dot.

// Each operand is packed as a [batch, free, contracting] matrix (dimensions
// in that order, each group in dimension-number order), so that the result,
// [batch..., lhs free..., rhs free...] in row-major order, is a batched
// matrix product over contiguous rows.
struct DotPlan {
  int64_t batch = 1, lhs_free = 1, rhs_free = 1, contracting = 1;
  std::vector<int64_t> lhs_order, rhs_order;  // operand dimensions in packed order
};

// batch, then free (in order), then contracting dimensions of one operand.
std::vector<int64_t> PackedOrder(int64_t rank, const std::vector<int64_t>& batch,
                                 const std::vector<int64_t>& contracting) {
  std::vector<int64_t> order = batch;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
      order.push_back(d);
    }
  }
  order.insert(order.end(), contracting.begin(), contracting.end());
  return order;
}

// Product of the free dimensions of a packed order.
int64_t FreeSize(const Shape& s, const std::vector<int64_t>& order, size_t batch,
                 size_t contracting) {
  int64_t n = 1;
  for (size_t i = batch; i + contracting < order.size(); ++i) n *= s.dimensions(order[i]);
  return n;
}

DotPlan PlanDot(const Shape& lhs, const Shape& rhs, const DotDimensionNumbers& dnums) {
  DotPlan plan;
  plan.lhs_order =
      PackedOrder(lhs.rank(), dnums.lhs_batch_dimensions, dnums.lhs_contracting_dimensions);
  plan.rhs_order =
      PackedOrder(rhs.rank(), dnums.rhs_batch_dimensions, dnums.rhs_contracting_dimensions);
  const size_t batch = dnums.lhs_batch_dimensions.size();
  const size_t contracting = dnums.lhs_contracting_dimensions.size();
  plan.batch = Product(Pick(lhs.dimensions(), dnums.lhs_batch_dimensions));
  plan.contracting = Product(Pick(lhs.dimensions(), dnums.lhs_contracting_dimensions));
  plan.lhs_free = FreeSize(lhs, plan.lhs_order, batch, contracting);
  plan.rhs_free = FreeSize(rhs, plan.rhs_order, batch, contracting);
  return plan;
}

// The values of `lit` with its dimensions permuted into `order`, row-major.
template <typename T>
std::vector<T> PermutedValues(const Literal& lit, const std::vector<int64_t>& order) {
  const std::vector<int64_t> strides = Strides(lit.shape());
  const std::vector<int64_t> sizes = Pick(lit.shape().dimensions(), order);
  const std::vector<int64_t> offsets = OffsetTable(sizes, Pick(strides, order));
  std::vector<T> values(offsets.size());
  for (size_t i = 0; i < offsets.size(); ++i) values[i] = Load<T>(lit, offsets[i]);
  return values;
}

template <typename T>
absl::StatusOr<Literal> DotWith(const Shape& result_shape, const Literal& lhs, const Literal& rhs,
                                const DotPlan& plan, EvalContext& context) {
  const std::vector<T> a = PermutedValues<T>(lhs, plan.lhs_order);
  const std::vector<T> b = PermutedValues<T>(rhs, plan.rhs_order);
  const int64_t k_size = plan.contracting;
  Literal result(Shape::Array(result_shape.element_type(), result_shape.dimensions()));
  WorkMeter meter(context);
  int64_t out = 0;
  for (int64_t batch = 0; batch < plan.batch; ++batch) {
    for (int64_t i = 0; i < plan.lhs_free; ++i) {
      const T* row = a.data() + (batch * plan.lhs_free + i) * k_size;
      for (int64_t j = 0; j < plan.rhs_free; ++j) {
        const T* column = b.data() + (batch * plan.rhs_free + j) * k_size;
        T sum{};
        for (int64_t k = 0; k < k_size; ++k) sum += row[k] * column[k];
        Store(result, out++, sum);
      }
      RETURN_IF_ERROR(meter.Add(plan.rhs_free * k_size));
    }
  }
  return result;
}

absl::StatusOr<Literal> EvalDot(const HloInstruction& instr,
                                absl::Span<const Literal* const> operands, EvalContext& context) {
  if (!instr.attrs().sparsity.empty()) return Unsupported(instr, "sparse dot");
  RETURN_IF_ERROR(CheckShapes(instr, operands));
  static const DotDimensionNumbers kNoDimensions;
  const DotDimensionNumbers& dnums =
      instr.attrs().dot_dimension_numbers ? *instr.attrs().dot_dimension_numbers : kNoDimensions;
  const Literal& lhs = *operands[0];
  const Literal& rhs = *operands[1];
  DotPlan plan = PlanDot(lhs.shape(), rhs.shape(), dnums);
  RETURN_IF_ERROR(CheckWork(instr, context,
                            SaturatingMultiply(instr.shape().ElementCount(), plan.contracting)));
  switch (ArithmeticFor(instr.shape().element_type(), lhs.shape().element_type(),
                        rhs.shape().element_type())) {
    case Arithmetic::kInteger:
      return DotWith<uint64_t>(instr.shape(), lhs, rhs, plan, context);
    case Arithmetic::kReal:
      return DotWith<double>(instr.shape(), lhs, rhs, plan, context);
    case Arithmetic::kComplex:
      return DotWith<Complex>(instr.shape(), lhs, rhs, plan, context);
  }
  return Unsupported(instr, "element types");
}

// ---------------------------------------------------------------------------
// Scaled dot: dot(lhs * expand(lhs_scale), rhs * expand(rhs_scale)), where a
// scale dimension of size s over an operand dimension of size n covers blocks
// of n / s consecutive elements (a scalar scale covers everything).

absl::StatusOr<Literal> ApplyBlockScale(const HloInstruction& instr, const Literal& value,
                                        const Literal& scale, absl::string_view side) {
  const Shape& shape = value.shape();
  const Shape& scale_shape = scale.shape();
  const bool uniform = scale_shape.rank() == 0;
  if (!uniform && scale_shape.rank() != shape.rank()) {
    return InvalidArgument(Where(instr), side, " scale ", scale_shape.ToString(false),
                           " must be a scalar or have the rank of ", shape.ToString(false));
  }
  std::vector<int64_t> block(shape.rank(), 1);
  for (int64_t d = 0; !uniform && d < shape.rank(); ++d) {
    const int64_t n = shape.dimensions(d), s = scale_shape.dimensions(d);
    if (s <= 0 ? n != 0 : n % s != 0) {
      return InvalidArgument(Where(instr), side, " dimension ", d, " of size ", n,
                             " does not split into ", s, " scale blocks");
    }
    block[d] = s == 0 ? 1 : n / s;
  }
  // Products of the narrow operand and scale types are exact in f64.
  Literal scaled(Shape::Array(PrimitiveType::F64, shape.dimensions()));
  const std::vector<int64_t> scale_strides = Strides(scale_shape);
  MultiIndex index(shape.dimensions());
  for (int64_t i = 0; i < value.element_count(); ++i, index.Next()) {
    int64_t at = 0;
    for (int64_t d = 0; !uniform && d < shape.rank(); ++d) {
      at += index[d] / block[d] * scale_strides[d];
    }
    scaled.SetDouble(i, value.GetDouble(i) * scale.GetDouble(at));
  }
  return scaled;
}

absl::StatusOr<Literal> EvalScaledDot(const HloInstruction& instr,
                                      absl::Span<const Literal* const> operands,
                                      EvalContext& context) {
  RETURN_IF_ERROR(CheckShapes(instr, operands));
  if (operands.size() != 4) {
    return InvalidArgument(Where(instr), "takes lhs, rhs, lhs_scale and rhs_scale");
  }
  bool all_floating = IsFloatingPoint(instr.shape().element_type());
  for (const Literal* op : operands) all_floating &= IsFloatingPoint(op->shape().element_type());
  if (!all_floating) return Unsupported(instr, "non-floating-point operands or result");
  static const DotDimensionNumbers kNoDimensions;
  const DotDimensionNumbers& dnums =
      instr.attrs().dot_dimension_numbers ? *instr.attrs().dot_dimension_numbers : kNoDimensions;
  ASSIGN_OR_RETURN(Literal lhs, ApplyBlockScale(instr, *operands[0], *operands[2], "lhs"));
  ASSIGN_OR_RETURN(Literal rhs, ApplyBlockScale(instr, *operands[1], *operands[3], "rhs"));
  DotPlan plan = PlanDot(lhs.shape(), rhs.shape(), dnums);
  RETURN_IF_ERROR(CheckWork(instr, context,
                            SaturatingMultiply(instr.shape().ElementCount(), plan.contracting)));
  return DotWith<double>(instr.shape(), lhs, rhs, plan, context);
}

// ---------------------------------------------------------------------------
// Ragged dot (jax.lax.ragged_dot_general). The lhs ragged dimension is split
// into consecutive groups of group_sizes[..., j] elements, one set of sizes
// per index of the context dimensions (lhs batch dimensions, then the lhs
// dimensions of the ragged one's kind that precede it; a [g] group_sizes is
// broadcast). Three modes, by the ragged dimension's kind:
//   non-contracting: row r of group j is multiplied by rhs[j] (the rhs group
//     dimension); rows in no group are zero;
//   contracting: out[j] is the dot over the contracting positions of group j;
//   batch: a plain dot whose batches in no group are zero.

class RaggedGroups {
 public:
  static absl::StatusOr<RaggedGroups> Make(const HloInstruction& instr, const Shape& lhs,
                                           const DotDimensionNumbers& dn, int64_t ragged,
                                           const Literal& group_sizes) {
    RaggedGroups groups;
    groups.ragged_ = ragged;
    auto is = [](const std::vector<int64_t>& v, int64_t d) {
      return std::find(v.begin(), v.end(), d) != v.end();
    };
    const bool batch = is(dn.lhs_batch_dimensions, ragged);
    const bool contracting = is(dn.lhs_contracting_dimensions, ragged);
    if (!batch) groups.context_ = dn.lhs_batch_dimensions;
    for (int64_t d = 0; d < ragged; ++d) {
      const bool same_kind =
          batch         ? is(dn.lhs_batch_dimensions, d)
          : contracting ? is(dn.lhs_contracting_dimensions, d)
                        : !is(dn.lhs_batch_dimensions, d) && !is(dn.lhs_contracting_dimensions, d);
      if (same_kind) groups.context_.push_back(d);
    }
    const Shape& gs = group_sizes.shape();
    if (gs.rank() < 1) return InvalidArgument(Where(instr), "group_sizes must have rank >= 1");
    groups.count_ = gs.dimensions(gs.rank() - 1);
    if (gs.rank() == 1) {
      groups.context_.clear();
    } else {
      bool fits = gs.rank() == static_cast<int64_t>(groups.context_.size()) + 1;
      for (size_t i = 0; fits && i < groups.context_.size(); ++i) {
        fits = gs.dimensions(i) == lhs.dimensions(groups.context_[i]);
      }
      if (!fits) {
        return InvalidArgument(Where(instr), "group_sizes ", gs.ToString(false),
                               " does not match the lhs context dimensions and the group count");
      }
    }
    // Group j of each context row covers [ends[j-1], ends[j]).
    const int64_t rows = group_sizes.element_count() / std::max<int64_t>(groups.count_, 1);
    for (int64_t row = 0; row < rows; ++row) {
      int64_t end = 0;
      for (int64_t j = 0; j < groups.count_; ++j) {
        const int64_t size = group_sizes.GetInt(row * groups.count_ + j);
        if (size < 0) return InvalidArgument(Where(instr), "negative group size ", size);
        end = std::min<int64_t>(end + size, lhs.dimensions(ragged));
        groups.ends_.push_back(end);
      }
    }
    for (int64_t d : groups.context_) groups.context_sizes_.push_back(lhs.dimensions(d));
    return groups;
  }

  int64_t count() const { return count_; }

  // The group of the lhs element at `index` (only the context and ragged
  // coordinates are read), or -1.
  int64_t GroupOf(const std::vector<int64_t>& index) const {
    int64_t row = 0;
    for (size_t i = 0; i < context_.size(); ++i) row = row * context_sizes_[i] + index[context_[i]];
    const int64_t r = index[ragged_];
    for (int64_t j = 0; j < count_; ++j) {
      if (r < ends_[row * count_ + j]) return j;
    }
    return -1;
  }

 private:
  int64_t ragged_ = 0;
  int64_t count_ = 0;
  std::vector<int64_t> context_, context_sizes_, ends_;
};

// The lhs index (batch and free coordinates) of an element of a dot's result.
std::vector<int64_t> LhsIndexOfResult(const std::vector<int64_t>& out, int64_t lhs_rank,
                                      const DotDimensionNumbers& dn) {
  std::vector<int64_t> index(lhs_rank, 0);
  size_t k = 0;
  for (int64_t d : dn.lhs_batch_dimensions) index[d] = out[k++];
  for (int64_t d = 0; d < lhs_rank; ++d) {
    if (std::find(dn.lhs_batch_dimensions.begin(), dn.lhs_batch_dimensions.end(), d) ==
            dn.lhs_batch_dimensions.end() &&
        std::find(dn.lhs_contracting_dimensions.begin(), dn.lhs_contracting_dimensions.end(), d) ==
            dn.lhs_contracting_dimensions.end()) {
      index[d] = out[k++];
    }
  }
  return index;
}

// group(index) for every element of `shape`, in row-major order.
std::vector<int64_t> GroupOfEach(const Shape& shape,
                                 const std::function<int64_t(const std::vector<int64_t>&)>& group) {
  std::vector<int64_t> groups(shape.ElementCount());
  MultiIndex index(shape.dimensions());
  std::vector<int64_t> at(shape.rank());
  for (size_t i = 0; i < groups.size(); ++i, index.Next()) {
    for (size_t d = 0; d < at.size(); ++d) at[d] = index[d];
    groups[i] = group(at);
  }
  return groups;
}

// `value` with the elements outside group `j` set to zero.
Literal InGroupOnly(const Literal& value, const std::vector<int64_t>& group_of, int64_t j) {
  Literal out(value.shape());
  for (int64_t i = 0; i < value.element_count(); ++i) {
    if (group_of[i] == j) CopyElement(value, i, out, i);
  }
  return out;
}

// rhs[j] along dimension `dim` (which is removed).
Literal SliceOut(const Literal& rhs, int64_t dim, int64_t j) {
  std::vector<int64_t> dims = rhs.shape().dimensions();
  dims.erase(dims.begin() + dim);
  Literal out(Shape::Array(rhs.shape().element_type(), dims));
  const std::vector<int64_t> strides = Strides(rhs.shape());
  MultiIndex index(dims);
  for (int64_t i = 0; i < out.element_count(); ++i, index.Next()) {
    int64_t at = j * strides[dim];
    for (int64_t d = 0, k = 0; d < rhs.shape().rank(); ++d) {
      if (d != dim) at += index[k++] * strides[d];
    }
    CopyElement(rhs, at, out, i);
  }
  return out;
}

absl::StatusOr<Literal> EvalRaggedDot(const HloInstruction& instr,
                                      absl::Span<const Literal* const> operands,
                                      EvalContext& context) {
  RETURN_IF_ERROR(CheckShapes(instr, operands));
  if (operands.size() != 3 || !instr.attrs().ragged_dot_dimension_numbers ||
      instr.attrs().ragged_dot_dimension_numbers->lhs_ragged_dimensions.size() != 1) {
    return InvalidArgument(Where(instr),
                           "takes lhs, rhs and group_sizes and one lhs ragged dimension");
  }
  static const DotDimensionNumbers kNoDimensions;
  const DotDimensionNumbers& dn =
      instr.attrs().dot_dimension_numbers ? *instr.attrs().dot_dimension_numbers : kNoDimensions;
  const RaggedDotDimensionNumbers& rn = *instr.attrs().ragged_dot_dimension_numbers;
  const Literal& lhs = *operands[0];
  const Literal& rhs = *operands[1];
  const int64_t ragged = rn.lhs_ragged_dimensions[0];
  if (ragged < 0 || ragged >= lhs.shape().rank()) {
    return InvalidArgument(Where(instr), "lhs ragged dimension ", ragged, " is out of range");
  }
  ASSIGN_OR_RETURN(RaggedGroups groups,
                   RaggedGroups::Make(instr, lhs.shape(), dn, ragged, *operands[2]));
  const Shape& shape = instr.shape();
  const PrimitiveType type = shape.element_type();
  const Arithmetic arithmetic =
      ArithmeticFor(type, lhs.shape().element_type(), rhs.shape().element_type());
  auto dot = [&](const Shape& result_shape, const Literal& a, const Literal& b,
                 const DotDimensionNumbers& d) -> absl::StatusOr<Literal> {
    const DotPlan plan = PlanDot(a.shape(), b.shape(), d);
    RETURN_IF_ERROR(CheckWork(instr, context,
                              SaturatingMultiply(result_shape.ElementCount(), plan.contracting)));
    switch (arithmetic) {
      case Arithmetic::kInteger:
        return DotWith<uint64_t>(result_shape, a, b, plan, context);
      case Arithmetic::kReal:
        return DotWith<double>(result_shape, a, b, plan, context);
      case Arithmetic::kComplex:
        return DotWith<Complex>(result_shape, a, b, plan, context);
    }
    return Unsupported(instr, "element types");
  };
  auto contains = [](const std::vector<int64_t>& v, int64_t d) {
    return std::find(v.begin(), v.end(), d) != v.end();
  };
  Literal result = ResultLiteral(instr);
  if (contains(dn.lhs_contracting_dimensions, ragged)) {
    // out[j] = the dot over group j's contracting positions; both operands are
    // masked so that excluded products are 0 * 0.
    std::vector<int64_t> dims = shape.dimensions();
    if (dims.empty() || dims[0] != groups.count()) {
      return InvalidArgument(Where(instr), "the result must lead with the group count");
    }
    dims.erase(dims.begin());
    const Shape per_group = Shape::Array(type, dims);
    const int64_t block = per_group.ElementCount();
    const std::vector<int64_t> lhs_groups =
        GroupOfEach(lhs.shape(), [&](const std::vector<int64_t>& i) { return groups.GroupOf(i); });
    const std::vector<int64_t> rhs_groups =
        GroupOfEach(rhs.shape(), [&](const std::vector<int64_t>& i) {
          // The lhs coordinates this rhs element meets: its batch and contracting ones.
          std::vector<int64_t> l(lhs.shape().rank(), 0);
          for (size_t k = 0; k < dn.lhs_batch_dimensions.size(); ++k) {
            l[dn.lhs_batch_dimensions[k]] = i[dn.rhs_batch_dimensions[k]];
          }
          for (size_t k = 0; k < dn.lhs_contracting_dimensions.size(); ++k) {
            l[dn.lhs_contracting_dimensions[k]] = i[dn.rhs_contracting_dimensions[k]];
          }
          return groups.GroupOf(l);
        });
    for (int64_t j = 0; j < groups.count(); ++j) {
      const Literal a = InGroupOnly(lhs, lhs_groups, j);
      const Literal b = InGroupOnly(rhs, rhs_groups, j);
      ASSIGN_OR_RETURN(Literal d, dot(per_group, a, b, dn));
      for (int64_t e = 0; e < block; ++e) CopyElement(d, e, result, j * block + e);
    }
    return result;
  }
  const bool by_batch = contains(dn.lhs_batch_dimensions, ragged);
  if (!by_batch && rn.rhs_group_dimensions.size() != 1) {
    return InvalidArgument(Where(instr),
                           "a non-contracting ragged dimension needs one rhs group dimension");
  }
  const int64_t group_dim = by_batch ? -1 : rn.rhs_group_dimensions[0];
  if (!by_batch && (group_dim < 0 || group_dim >= rhs.shape().rank() ||
                    rhs.shape().dimensions(group_dim) != groups.count())) {
    return InvalidArgument(Where(instr), "rhs group dimension does not hold ", groups.count(),
                           " groups");
  }
  DotDimensionNumbers sliced = dn;  // rhs dimensions once the group dimension is gone
  for (auto* dims : {&sliced.rhs_batch_dimensions, &sliced.rhs_contracting_dimensions}) {
    for (int64_t& d : *dims) d -= (!by_batch && d > group_dim) ? 1 : 0;
  }
  // The group of each result element, from its lhs coordinates.
  const std::vector<int64_t> group_of = GroupOfEach(shape, [&](const std::vector<int64_t>& out) {
    return groups.GroupOf(LhsIndexOfResult(out, lhs.shape().rank(), dn));
  });
  for (int64_t j = 0; j < (by_batch ? 1 : groups.count()); ++j) {
    ASSIGN_OR_RETURN(Literal d, by_batch ? dot(shape, lhs, rhs, dn)
                                         : dot(shape, lhs, SliceOut(rhs, group_dim, j), sliced));
    for (int64_t e = 0; e < result.element_count(); ++e) {
      if (by_batch ? group_of[e] >= 0 : group_of[e] == j) CopyElement(d, e, result, e);
    }
  }
  return result;
}

// ---------------------------------------------------------------------------
// Convolution.
//
// out[b, o, y] = sum over kernel positions k and input features c of the group
//   lhs[batch(b, o), feature(o, c), x(y, k)] * rhs[c, o, reversed(k)]
// where x(y, k) = y * stride + k * rhs_dilation - padding_low is a position in
// the lhs-dilated base (holes and padding contribute nothing). Feature groups
// split the input features and the output features into groups that convolve
// pairwise; batch groups do the same with the input batch: output feature o
// belongs to batch group o / (output features / batch_group_count), which
// reads input batches [group * batch', (group + 1) * batch') -- the XLA
// operation semantics and the StableHLO spec (XLA's own evaluator indexes
// differently when the output batch is larger than 1).

struct ConvPlan {
  const ConvolutionDimensionNumbers* dn;
  const Window* window;
  int64_t spatial;
  std::vector<int64_t> lhs_strides, rhs_strides;
  std::vector<int64_t> input_spatial_sizes;
  // Per kernel position p (row-major over the window): its window index in each
  // spatial dimension, and the offset of the (possibly reversed) kernel element.
  std::vector<int64_t> kernel_positions;  // p * spatial + i
  std::vector<int64_t> kernel_offsets;
  int64_t kernel_input_features;
  int64_t outputs_per_feature_group;
  int64_t outputs_per_batch_group;
  int64_t batch_per_group;
};

ConvPlan PlanConvolution(const HloInstruction& instr, const Shape& lhs, const Shape& rhs) {
  ConvPlan plan;
  // The shape check guarantees dimension numbers, and a window with one
  // dimension per spatial dimension (none at all when there are none).
  static const Window kNoWindow;
  plan.dn = &*instr.attrs().convolution_dimension_numbers;
  plan.window = instr.attrs().window ? &*instr.attrs().window : &kNoWindow;
  const ConvolutionDimensionNumbers& dn = *plan.dn;
  plan.spatial = static_cast<int64_t>(dn.input_spatial_dimensions.size());
  plan.lhs_strides = Strides(lhs);
  plan.rhs_strides = Strides(rhs);
  plan.input_spatial_sizes = Pick(lhs.dimensions(), dn.input_spatial_dimensions);
  std::vector<int64_t> window_sizes;
  for (const WindowDimension& w : plan.window->dimensions) window_sizes.push_back(w.size);
  MultiIndex k(window_sizes);
  for (int64_t n = Product(window_sizes); n > 0; --n, k.Next()) {
    int64_t offset = 0;
    for (int64_t i = 0; i < plan.spatial; ++i) {
      const WindowDimension& w = plan.window->dimensions[i];
      plan.kernel_positions.push_back(k[i]);
      int64_t kernel_index = w.window_reversal ? w.size - 1 - k[i] : k[i];
      offset += kernel_index * plan.rhs_strides[dn.kernel_spatial_dimensions[i]];
    }
    plan.kernel_offsets.push_back(offset);
  }
  const int64_t outputs = rhs.dimensions(dn.kernel_output_feature_dimension);
  plan.kernel_input_features = rhs.dimensions(dn.kernel_input_feature_dimension);
  plan.outputs_per_feature_group =
      std::max<int64_t>(1, outputs / instr.attrs().feature_group_count);
  plan.outputs_per_batch_group = std::max<int64_t>(1, outputs / instr.attrs().batch_group_count);
  plan.batch_per_group = lhs.dimensions(dn.input_batch_dimension) / instr.attrs().batch_group_count;
  return plan;
}

// Offset into lhs of the window element at kernel position p for output
// spatial index `out`, or -1 if it falls in padding or a dilation hole.
int64_t LhsSpatialOffset(const ConvPlan& plan, const MultiIndex& out, int64_t p) {
  int64_t offset = 0;
  for (int64_t i = 0; i < plan.spatial; ++i) {
    const WindowDimension& w = plan.window->dimensions[i];
    int64_t y = out[plan.dn->output_spatial_dimensions[i]];
    int64_t x = y * w.stride + plan.kernel_positions[p * plan.spatial + i] * w.window_dilation -
                w.padding_low;
    if (x < 0 || x % w.base_dilation != 0) return -1;
    x /= w.base_dilation;
    if (x >= plan.input_spatial_sizes[i]) return -1;
    offset += x * plan.lhs_strides[plan.dn->input_spatial_dimensions[i]];
  }
  return offset;
}

template <typename T>
absl::StatusOr<Literal> ConvolutionWith(const HloInstruction& instr, const Literal& lhs,
                                        const Literal& rhs, const ConvPlan& plan,
                                        EvalContext& context) {
  const std::vector<T> a = Values<T>(lhs), b = Values<T>(rhs);
  const ConvolutionDimensionNumbers& dn = *plan.dn;
  const int64_t lhs_feature_stride = plan.lhs_strides[dn.input_feature_dimension];
  const int64_t rhs_feature_stride = plan.rhs_strides[dn.kernel_input_feature_dimension];
  Literal result = ResultLiteral(instr);
  const int64_t work_per_result =
      static_cast<int64_t>(plan.kernel_offsets.size()) * plan.kernel_input_features;
  WorkMeter meter(context);
  MultiIndex out(result.shape().dimensions());
  for (int64_t i = 0; i < result.element_count(); ++i, out.Next()) {
    RETURN_IF_ERROR(meter.Add(work_per_result));
    const int64_t o = out[dn.output_feature_dimension];
    const int64_t feature_group = o / plan.outputs_per_feature_group;
    const int64_t batch_group = o / plan.outputs_per_batch_group;
    const int64_t batch = batch_group * plan.batch_per_group + out[dn.output_batch_dimension];
    const int64_t lhs_base = batch * plan.lhs_strides[dn.input_batch_dimension] +
                             feature_group * plan.kernel_input_features * lhs_feature_stride;
    const int64_t rhs_base = o * plan.rhs_strides[dn.kernel_output_feature_dimension];
    T sum{};
    for (size_t p = 0; p < plan.kernel_offsets.size(); ++p) {
      const int64_t spatial = LhsSpatialOffset(plan, out, p);
      if (spatial < 0) continue;
      const int64_t lhs_at = lhs_base + spatial;
      const int64_t rhs_at = rhs_base + plan.kernel_offsets[p];
      for (int64_t c = 0; c < plan.kernel_input_features; ++c) {
        sum += a[lhs_at + c * lhs_feature_stride] * b[rhs_at + c * rhs_feature_stride];
      }
    }
    Store(result, i, sum);
  }
  return result;
}

absl::StatusOr<Literal> EvalConvolution(const HloInstruction& instr,
                                        absl::Span<const Literal* const> operands,
                                        EvalContext& context) {
  RETURN_IF_ERROR(CheckShapes(instr, operands));
  const Literal& lhs = *operands[0];
  const Literal& rhs = *operands[1];
  const ConvPlan plan = PlanConvolution(instr, lhs.shape(), rhs.shape());
  RETURN_IF_ERROR(CheckWork(
      instr, context,
      SaturatingMultiply(SaturatingMultiply(instr.shape().ElementCount(),
                                            static_cast<int64_t>(plan.kernel_offsets.size())),
                         plan.kernel_input_features)));
  switch (ArithmeticFor(instr.shape().element_type(), lhs.shape().element_type(),
                        rhs.shape().element_type())) {
    case Arithmetic::kInteger:
      return ConvolutionWith<uint64_t>(instr, lhs, rhs, plan, context);
    case Arithmetic::kReal:
      return ConvolutionWith<double>(instr, lhs, rhs, plan, context);
    case Arithmetic::kComplex:
      return ConvolutionWith<Complex>(instr, lhs, rhs, plan, context);
  }
  return Unsupported(instr, "element types");
}

// ---------------------------------------------------------------------------
// FFT.

// A complex array being transformed axis by axis.
struct ComplexArray {
  std::vector<int64_t> dims;
  std::vector<Complex> values;
};

// Replaces the values along `axis` (length in) by their DFT of length n,
// keeping the first `out` coefficients: y[k] = sum_j x[j] w^(jk), w =
// exp(-+2 pi i / n), scaled by 1/n when inverse. in and out are at most n.
void TransformAxis(ComplexArray& x, int64_t axis, int64_t n, int64_t out, bool inverse) {
  const int64_t in = x.dims[axis];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dims[d];
  for (int64_t d = axis + 1; d < static_cast<int64_t>(x.dims.size()); ++d) inner *= x.dims[d];
  // Twiddles and sums in long double: the reference stays within about an ULP
  // of the exact transform, like the FFT libraries XLA uses.
  using Wide = std::complex<long double>;
  std::vector<Wide> twiddle(n);
  const long double sign = inverse ? 1.0L : -1.0L;
  const long double pi = 3.141592653589793238462643383279502884L;
  for (int64_t m = 0; m < n; ++m) {
    const long double angle = sign * 2.0L * pi * static_cast<long double>(m) / n;
    twiddle[m] = Wide(std::cos(angle), std::sin(angle));
  }
  const long double scale = inverse && n > 0 ? 1.0L / n : 1.0L;
  std::vector<Complex> y(outer * out * inner);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t k = 0; k < out; ++k) {
        Wide sum = 0;
        int64_t power = 0;  // j * k mod n
        for (int64_t j = 0; j < in; ++j) {
          const Complex v = x.values[(o * in + j) * inner + i];
          const Wide& w = twiddle[power];
          sum += Wide(v.real() * w.real() - v.imag() * w.imag(),
                      v.real() * w.imag() + v.imag() * w.real());
          power += k;
          if (power >= n) power -= n;
        }
        y[(o * out + k) * inner + i] = Complex(static_cast<double>(sum.real() * scale),
                                               static_cast<double>(sum.imag() * scale));
      }
    }
  }
  x.values = std::move(y);
  x.dims[axis] = out;
}

// Extends the first n/2+1 entries along `axis` to the n entries of a Hermitian
// sequence: x[j] = conj(x[n - j]) for j > n/2.
void HermitianExtend(ComplexArray& x, int64_t axis, int64_t n) {
  const int64_t half = x.dims[axis];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dims[d];
  for (int64_t d = axis + 1; d < static_cast<int64_t>(x.dims.size()); ++d) inner *= x.dims[d];
  std::vector<Complex> y(outer * n * inner);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        Complex v = j < half ? x.values[(o * half + j) * inner + i]
                             : std::conj(x.values[(o * half + (n - j)) * inner + i]);
        y[(o * n + j) * inner + i] = v;
      }
    }
  }
  x.values = std::move(y);
  x.dims[axis] = n;
}

absl::StatusOr<Literal> EvalFft(const HloInstruction& instr,
                                absl::Span<const Literal* const> operands, EvalContext& context) {
  RETURN_IF_ERROR(CheckShapes(instr, operands));
  int64_t work = 0;  // one DFT of length n per line: n multiply-adds per element
  for (int64_t n : instr.attrs().fft_length) {
    work = std::min<int64_t>(
        INT64_MAX / 2,
        work + SaturatingMultiply(
                   std::max(operands[0]->element_count(), instr.shape().ElementCount()), n));
  }
  RETURN_IF_ERROR(CheckWork(instr, context, work));
  const std::string& type = instr.attrs().fft_type;
  const std::vector<int64_t>& length = instr.attrs().fft_length;
  const Literal& operand = *operands[0];
  ComplexArray x{operand.shape().dimensions(), Values<Complex>(operand)};
  const int64_t rank = operand.shape().rank();
  const int64_t first = rank - static_cast<int64_t>(length.size());
  if (type == "FFT" || type == "IFFT") {
    for (size_t i = 0; i < length.size(); ++i) {
      if (x.dims[first + i] != length[i]) {
        return InvalidArgument("fft '", instr.name(), "': operand dimension ", first + i,
                               " has size ", x.dims[first + i], " but fft_length is {",
                               absl::StrJoin(length, ","), "}");
      }
    }
    for (int64_t axis = rank - 1; axis >= first; --axis) {
      TransformAxis(x, axis, length[axis - first], length[axis - first], type == "IFFT");
    }
  } else if (type == "RFFT") {
    const int64_t n = length.back();
    TransformAxis(x, rank - 1, n, n == 0 ? 0 : n / 2 + 1, false);
    for (int64_t axis = rank - 2; axis >= first; --axis) {
      TransformAxis(x, axis, length[axis - first], length[axis - first], false);
    }
  } else {  // IRFFT (the shape check rejected other types)
    for (int64_t axis = rank - 2; axis >= first; --axis) {
      TransformAxis(x, axis, length[axis - first], length[axis - first], true);
    }
    const int64_t n = length.back();
    HermitianExtend(x, rank - 1, n);
    TransformAxis(x, rank - 1, n, n, true);
  }
  Literal result = ResultLiteral(instr);
  for (int64_t i = 0; i < result.element_count(); ++i) StoreComplex(result, i, x.values[i]);
  return result;
}

// ---------------------------------------------------------------------------
// Triangular solve and Cholesky: batches of matrices in the two minor dimensions.

// An n x n (or rows x cols) matrix of complex doubles, row-major.
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<Complex> values;
  Complex& at(int64_t r, int64_t c) { return values[r * cols + c]; }
  Complex at(int64_t r, int64_t c) const { return values[r * cols + c]; }
};

Matrix LoadMatrix(const Literal& lit, int64_t batch) {
  const Shape& s = lit.shape();
  Matrix m;
  m.rows = s.dimensions(s.rank() - 2);
  m.cols = s.dimensions(s.rank() - 1);
  m.values.resize(m.rows * m.cols);
  const int64_t base = batch * m.rows * m.cols;
  for (int64_t i = 0; i < m.rows * m.cols; ++i) m.values[i] = lit.GetComplex(base + i);
  return m;
}

void StoreMatrix(const Matrix& m, int64_t batch, Literal& lit) {
  const int64_t base = batch * m.rows * m.cols;
  for (int64_t i = 0; i < m.rows * m.cols; ++i) StoreComplex(lit, base + i, m.values[i]);
}

int64_t BatchCount(const Shape& s) {
  int64_t n = 1;
  for (int64_t d = 0; d + 2 < s.rank(); ++d) n *= s.dimensions(d);
  return n;
}

// op(T), where T is a's `lower` (or upper) triangle with an optional unit diagonal.
Matrix TriangularOperator(const Matrix& a, bool lower, bool unit_diagonal,
                          const std::string& transpose) {
  const int64_t n = a.rows;
  Matrix m{n, n, std::vector<Complex>(n * n)};
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      bool in_triangle = lower ? j <= i : j >= i;
      Complex t = !in_triangle ? Complex(0) : (i == j && unit_diagonal ? Complex(1) : a.at(i, j));
      if (transpose == "TRANSPOSE") {
        m.at(j, i) = t;
      } else if (transpose == "ADJOINT") {
        m.at(j, i) = std::conj(t);
      } else {
        m.at(i, j) = t;
      }
    }
  }
  return m;
}

// Solves m x = b (left) or x m = b (right) in place in b, for triangular m.
void SolveTriangular(const Matrix& m, bool m_lower, bool left, Matrix& b) {
  const int64_t n = m.rows;
  if (left) {
    for (int64_t c = 0; c < b.cols; ++c) {
      for (int64_t step = 0; step < n; ++step) {
        const int64_t i = m_lower ? step : n - 1 - step;
        Complex v = b.at(i, c);
        for (int64_t j = 0; j < n; ++j) {
          if (m_lower ? j < i : j > i) v -= m.at(i, j) * b.at(j, c);
        }
        b.at(i, c) = v / m.at(i, i);
      }
    }
    return;
  }
  for (int64_t r = 0; r < b.rows; ++r) {
    for (int64_t step = 0; step < n; ++step) {
      const int64_t j = m_lower ? n - 1 - step : step;
      Complex v = b.at(r, j);
      for (int64_t i = 0; i < n; ++i) {
        if (m_lower ? i > j : i < j) v -= b.at(r, i) * m.at(i, j);
      }
      b.at(r, j) = v / m.at(j, j);
    }
  }
}

absl::StatusOr<Literal> EvalTriangularSolve(const HloInstruction& instr,
                                            absl::Span<const Literal* const> operands) {
  RETURN_IF_ERROR(CheckShapes(instr, operands));
  const InstructionAttributes& attrs = instr.attrs();
  const bool transposed = attrs.transpose_a == "TRANSPOSE" || attrs.transpose_a == "ADJOINT";
  Literal result = ResultLiteral(instr);
  const int64_t batches = BatchCount(operands[1]->shape());
  for (int64_t batch = 0; batch < batches; ++batch) {
    Matrix a = LoadMatrix(*operands[0], batch);
    Matrix b = LoadMatrix(*operands[1], batch);
    Matrix m = TriangularOperator(a, attrs.lower, attrs.unit_diagonal, attrs.transpose_a);
    SolveTriangular(m, attrs.lower != transposed, attrs.left_side, b);
    StoreMatrix(b, batch, result);
  }
  return result;
}

// The Cholesky factor of the Hermitian matrix whose lower triangle is given by
// `lower_entry(i, j)` (i >= j): a = l l^H.
template <typename Entry>
Matrix CholeskyLower(int64_t n, Entry lower_entry) {
  Matrix l{n, n, std::vector<Complex>(n * n)};
  for (int64_t j = 0; j < n; ++j) {
    double diagonal = lower_entry(j, j).real();
    for (int64_t k = 0; k < j; ++k) diagonal -= std::norm(l.at(j, k));
    const double pivot = std::sqrt(diagonal);  // NaN when not positive definite
    l.at(j, j) = pivot;
    for (int64_t i = j + 1; i < n; ++i) {
      Complex v = lower_entry(i, j);
      for (int64_t k = 0; k < j; ++k) v -= l.at(i, k) * std::conj(l.at(j, k));
      l.at(i, j) = v / pivot;
    }
  }
  return l;
}

absl::StatusOr<Literal> EvalCholesky(const HloInstruction& instr,
                                     absl::Span<const Literal* const> operands) {
  RETURN_IF_ERROR(CheckShapes(instr, operands));
  const bool lower = instr.attrs().lower;
  Literal result = ResultLiteral(instr);
  const int64_t batches = BatchCount(operands[0]->shape());
  for (int64_t batch = 0; batch < batches; ++batch) {
    const Matrix a = LoadMatrix(*operands[0], batch);
    // With lower=false, a = u^H u reads the upper triangle: its conjugate
    // transpose is the lower triangle of the same Hermitian matrix.
    Matrix l = CholeskyLower(
        a.rows, [&](int64_t i, int64_t j) { return lower ? a.at(i, j) : std::conj(a.at(j, i)); });
    if (!lower) {
      Matrix u{l.rows, l.cols, std::vector<Complex>(l.values.size())};
      for (int64_t i = 0; i < l.rows; ++i) {
        for (int64_t j = 0; j <= i; ++j) u.at(j, i) = std::conj(l.at(i, j));
      }
      l = std::move(u);
    }
    StoreMatrix(l, batch, result);
  }
  return result;
}

// ---------------------------------------------------------------------------
// TopK.

// A key whose signed order is the element type's total order.
class TotalOrderKeyOf {
 public:
  explicit TotalOrderKeyOf(PrimitiveType type) : type_(type), format_(GetFloatFormat(type)) {}

  int64_t operator()(const Literal& lit, int64_t i) const {
    if (format_) {
      const int bits = format_->total_bits();
      uint64_t raw = lit.GetBits(i);
      if (bits < 64) raw &= (uint64_t{1} << bits) - 1;
      if (!format_->has_sign) return static_cast<int64_t>(raw);
      const uint64_t magnitude = raw & ((uint64_t{1} << (bits - 1)) - 1);
      const bool negative = (raw >> (bits - 1)) & 1;
      return negative ? ~static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
    }
    if (IsUnsignedInt(type_)) {
      return static_cast<int64_t>(static_cast<uint64_t>(lit.GetInt(i)) ^ (uint64_t{1} << 63));
    }
    return lit.GetInt(i);
  }

 private:
  PrimitiveType type_;
  std::optional<FloatFormat> format_;
};

absl::StatusOr<Literal> EvalTopK(const HloInstruction& instr,
                                 absl::Span<const Literal* const> operands) {
  RETURN_IF_ERROR(CheckShapes(instr, operands));
  const Literal& operand = *operands[0];
  const PrimitiveType type = operand.shape().element_type();
  if (IsComplex(type)) return Unsupported(instr, "complex operand (not ordered)");
  const int64_t n = operand.shape().dimensions().back();
  const int64_t k = instr.attrs().k;
  const bool largest = instr.attrs().largest;
  Literal result = ResultLiteral(instr);
  Literal& values = result.tuple_elements()[0];
  Literal& indices = result.tuple_elements()[1];
  const int64_t rows = n == 0 ? 0 : operand.element_count() / n;
  const TotalOrderKeyOf key(type);
  std::vector<int64_t> keys(n);
  std::vector<int64_t> order(n);
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t j = 0; j < n; ++j) keys[j] = key(operand, row * n + j);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
      return largest ? keys[x] > keys[y] : keys[x] < keys[y];
    });
    for (int64_t j = 0; j < k; ++j) {
      values.SetBits(row * k + j, operand.GetBits(row * n + order[j]));
      indices.SetInt(row * k + j, order[j]);
    }
  }
  return result;
}

// ---------------------------------------------------------------------------
// Batch normalization. Statistics are per feature (feature_index) over every
// other dimension.

struct FeatureLayout {
  int64_t features;
  int64_t stride;  // of the feature dimension
  int64_t per_feature;
  int64_t FeatureOf(int64_t linear) const { return (linear / stride) % features; }
};

FeatureLayout LayoutOf(const Shape& operand, int64_t feature_index) {
  FeatureLayout f;
  f.features = operand.dimensions(feature_index);
  f.stride = Strides(operand)[feature_index];
  f.per_feature = f.features == 0 ? 0 : operand.ElementCount() / f.features;
  return f;
}

// Per-feature sums of `values`.
std::vector<double> FeatureSums(const std::vector<double>& values, const FeatureLayout& f) {
  std::vector<double> sums(f.features, 0.0);
  for (size_t i = 0; i < values.size(); ++i) sums[f.FeatureOf(i)] += values[i];
  return sums;
}

// Per-feature means of `values` (NaN when a feature has no elements).
std::vector<double> FeatureMeans(const std::vector<double>& values, const FeatureLayout& f) {
  std::vector<double> means = FeatureSums(values, f);
  for (double& s : means) s /= static_cast<double>(f.per_feature);
  return means;
}

void StoreVector(const std::vector<double>& v, Literal& lit) {
  for (size_t i = 0; i < v.size(); ++i) StoreDouble(lit, i, v[i]);
}

absl::StatusOr<Literal> EvalBatchNormTraining(const HloInstruction& instr,
                                              absl::Span<const Literal* const> operands) {
  RETURN_IF_ERROR(CheckShapes(instr, operands));
  const FeatureLayout f = LayoutOf(operands[0]->shape(), instr.attrs().feature_index);
  const std::vector<double> x = Values<double>(*operands[0]);
  const std::vector<double> scale = Values<double>(*operands[1]);
  const std::vector<double> offset = Values<double>(*operands[2]);
  const double epsilon = instr.attrs().epsilon;
  const std::vector<double> mean = FeatureMeans(x, f);
  std::vector<double> squares(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = x[i] - mean[f.FeatureOf(i)];
    squares[i] = d * d;
  }
  const std::vector<double> variance = FeatureMeans(squares, f);
  Literal result = ResultLiteral(instr);
  Literal& y = result.tuple_elements()[0];
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t c = f.FeatureOf(i);
    StoreDouble(y, i, (x[i] - mean[c]) / std::sqrt(variance[c] + epsilon) * scale[c] + offset[c]);
  }
  StoreVector(mean, result.tuple_elements()[1]);
  StoreVector(variance, result.tuple_elements()[2]);
  return result;
}

absl::StatusOr<Literal> EvalBatchNormInference(const HloInstruction& instr,
                                               absl::Span<const Literal* const> operands) {
  RETURN_IF_ERROR(CheckShapes(instr, operands));
  const FeatureLayout f = LayoutOf(operands[0]->shape(), instr.attrs().feature_index);
  const std::vector<double> x = Values<double>(*operands[0]);
  const std::vector<double> scale = Values<double>(*operands[1]);
  const std::vector<double> offset = Values<double>(*operands[2]);
  const std::vector<double> mean = Values<double>(*operands[3]);
  const std::vector<double> variance = Values<double>(*operands[4]);
  const double epsilon = instr.attrs().epsilon;
  Literal result = ResultLiteral(instr);
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t c = f.FeatureOf(i);
    StoreDouble(result, i,
                (x[i] - mean[c]) / std::sqrt(variance[c] + epsilon) * scale[c] + offset[c]);
  }
  return result;
}

// XLA's formulas, with per-feature sums over the m other elements:
//   grad_offset = sum(dy), grad_scale = sum(dy * (x - mean)) / sqrt(var + eps),
//   grad_x = scale / sqrt(var + eps) *
//            (dy - mean(dy) - (x - mean) * mean(dy * (x - mean)) / (var + eps)).
absl::StatusOr<Literal> EvalBatchNormGrad(const HloInstruction& instr,
                                          absl::Span<const Literal* const> operands) {
  RETURN_IF_ERROR(CheckShapes(instr, operands));
  const FeatureLayout f = LayoutOf(operands[0]->shape(), instr.attrs().feature_index);
  const std::vector<double> x = Values<double>(*operands[0]);
  const std::vector<double> scale = Values<double>(*operands[1]);
  const std::vector<double> mean = Values<double>(*operands[2]);
  const std::vector<double> variance = Values<double>(*operands[3]);
  const std::vector<double> dy = Values<double>(*operands[4]);
  const double epsilon = instr.attrs().epsilon;
  std::vector<double> dy_centered(x.size());
  for (size_t i = 0; i < x.size(); ++i) dy_centered[i] = dy[i] * (x[i] - mean[f.FeatureOf(i)]);
  const std::vector<double> mean_dy = FeatureMeans(dy, f);
  const std::vector<double> mean_dy_centered = FeatureMeans(dy_centered, f);
  Literal result = ResultLiteral(instr);
  Literal& grad_x = result.tuple_elements()[0];
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t c = f.FeatureOf(i);
    const double var_eps = variance[c] + epsilon;
    const double g = scale[c] / std::sqrt(var_eps) *
                     (dy[i] - mean_dy[c] - (x[i] - mean[c]) * mean_dy_centered[c] / var_eps);
    StoreDouble(grad_x, i, g);
  }
  // Sums, not mean * m: with no elements per feature they are 0, as in XLA.
  std::vector<double> grad_offset = FeatureSums(dy, f);
  std::vector<double> grad_scale = FeatureSums(dy_centered, f);
  for (int64_t c = 0; c < f.features; ++c) grad_scale[c] /= std::sqrt(variance[c] + epsilon);
  StoreVector(grad_scale, result.tuple_elements()[1]);
  StoreVector(grad_offset, result.tuple_elements()[2]);
  return result;
}

}  // namespace

absl::StatusOr<Literal> EvalLinalg(const HloInstruction& instr,
                                   absl::Span<const Literal* const> operands,
                                   EvalContext& context) {
  switch (instr.opcode()) {
    case HloOpcode::kDot:
      return EvalDot(instr, operands, context);
    case HloOpcode::kRaggedDot:
      return EvalRaggedDot(instr, operands, context);
    case HloOpcode::kScaledDot:
      return EvalScaledDot(instr, operands, context);
    case HloOpcode::kConvolution:
      return EvalConvolution(instr, operands, context);
    case HloOpcode::kFft:
      return EvalFft(instr, operands, context);
    case HloOpcode::kTriangularSolve:
      return EvalTriangularSolve(instr, operands);
    case HloOpcode::kCholesky:
      return EvalCholesky(instr, operands);
    case HloOpcode::kTopK:
      return EvalTopK(instr, operands);
    case HloOpcode::kBatchNormTraining:
      return EvalBatchNormTraining(instr, operands);
    case HloOpcode::kBatchNormInference:
      return EvalBatchNormInference(instr, operands);
    case HloOpcode::kBatchNormGrad:
      return EvalBatchNormGrad(instr, operands);
    default:
      return absl::NotFoundError("not handled");
  }
}

}  // namespace xlite::eval
