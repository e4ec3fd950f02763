// Shape inference for linear algebra and numerics: dot, ragged-dot, scaled-dot,
// convolution, fft, triangular-solve, cholesky, batch-norm-*, topk and the
// random-number ops. Dot and convolution may accumulate into a "preferred"
// element type (XLA), so their result element type is the declared one and only
// its category is checked.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "xlite/support/status.h"
#include "xlite/verify/shape_inference.h"

namespace xlite::shape_inference {
namespace {

using absl::StrCat;

std::string SizeString(int64_t size) { return IsUnbounded(size) ? "?" : StrCat(size); }

// The more specific of two matching dimensions: a known size beats '?', and a
// bounded dynamic side keeps the result dynamic.
Dim MostSpecific(Dim a, Dim b) {
  if (IsUnbounded(a.size)) return b;
  if (IsUnbounded(b.size)) return a;
  return {a.size, a.dynamic || b.dynamic};
}

// Operand i after checking it is an array.
absl::StatusOr<const Shape*> ArrayOperand(const HloInstruction& instr, int64_t i,
                                          absl::string_view role) {
  const Shape& s = instr.operand(i)->shape();
  RETURN_IF_ERROR(ExpectArray(instr, s, role));
  return &s;
}

// Checks that each of `dims` lies in [0, rank) and was not already used by an
// earlier list of the same operand (`used` is shared across its lists).
absl::Status CheckDimensionList(const HloInstruction& instr, absl::string_view what,
                                const std::vector<int64_t>& dims, int64_t rank,
                                std::vector<bool>& used) {
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return Error(instr, StrCat(what, " dimension ", d, " is out of range for rank ", rank));
    }
    if (used[d]) return Error(instr, StrCat(what, " dimension ", d, " is used more than once"));
    used[d] = true;
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Result element type of dot and convolution.

// The declared element type. XLA accepts any "preferred" type for
// floating-point operands and forbids narrowing integer operands; a complex
// product also needs a complex result.
absl::StatusOr<PrimitiveType> AccumulationType(const HloInstruction& instr, PrimitiveType lhs,
                                               PrimitiveType rhs) {
  PrimitiveType result = instr.shape().element_type();
  if (!IsArrayType(result)) {
    return Error(instr, StrCat("result must be an array, got ", instr.shape().ToString(false)));
  }
  std::string operands = StrCat("operands (", TypeName(lhs), ", ", TypeName(rhs), ")");
  if ((IsComplex(lhs) || IsComplex(rhs)) && !IsComplex(result)) {
    return Error(instr,
                 StrCat("complex ", operands, " need a complex result, got ", TypeName(result)));
  }
  bool any_float = IsFloatingPoint(lhs) || IsFloatingPoint(rhs);
  int widest = std::max(PrimitiveBitWidth(lhs), PrimitiveBitWidth(rhs));
  if (!any_float && PrimitiveBitWidth(result) < widest) {
    return Error(instr, StrCat("result type ", TypeName(result), " is narrower than ", operands));
  }
  return result;
}

// ---------------------------------------------------------------------------
// Dot family.

// Which dimensions of lhs and rhs the dimension numbers name (batch or
// contracting); the rest are free and appear in the result.
struct DotDimensionUse {
  std::vector<bool> lhs;
  std::vector<bool> rhs;
};

absl::Status CheckMatchingSizes(const HloInstruction& instr, absl::string_view kind,
                                const Shape& lhs, const std::vector<int64_t>& lhs_dims,
                                const Shape& rhs, const std::vector<int64_t>& rhs_dims,
                                const std::vector<bool>& skip) {
  for (size_t i = 0; i < lhs_dims.size(); ++i) {
    int64_t l = lhs.dimensions(lhs_dims[i]);
    int64_t r = rhs.dimensions(rhs_dims[i]);
    if (skip[i] || SizesMatch(l, r)) continue;
    return Error(
        instr, StrCat("lhs ", kind, " dimension ", lhs_dims[i], " has size ", SizeString(l),
                      " but rhs ", kind, " dimension ", rhs_dims[i], " has size ", SizeString(r)));
  }
  return absl::OkStatus();
}

// Sparse dots (sparsity=L.1@2:4) store a compressed contracting dimension;
// its size is not compared with the dense side.
std::vector<bool> SparseContractingDims(const HloInstruction& instr,
                                        const DotDimensionNumbers& dnums) {
  std::vector<bool> skip(dnums.lhs_contracting_dimensions.size(), false);
  if (instr.attrs().sparsity.empty()) return skip;
  for (size_t i = 0; i < skip.size(); ++i) {
    std::string lhs = StrCat("L.", dnums.lhs_contracting_dimensions[i], "@");
    std::string rhs = StrCat("R.", dnums.rhs_contracting_dimensions[i], "@");
    skip[i] = instr.attrs().sparsity.find(lhs) != std::string::npos ||
              instr.attrs().sparsity.find(rhs) != std::string::npos;
  }
  return skip;
}

absl::StatusOr<DotDimensionUse> CheckDotDimensions(const HloInstruction& instr, const Shape& lhs,
                                                   const Shape& rhs,
                                                   const DotDimensionNumbers& dnums) {
  if (dnums.lhs_batch_dimensions.size() != dnums.rhs_batch_dimensions.size()) {
    return Error(instr,
                 StrCat("lhs has ", dnums.lhs_batch_dimensions.size(),
                        " batch dimensions but rhs has ", dnums.rhs_batch_dimensions.size()));
  }
  if (dnums.lhs_contracting_dimensions.size() != dnums.rhs_contracting_dimensions.size()) {
    return Error(instr, StrCat("lhs has ", dnums.lhs_contracting_dimensions.size(),
                               " contracting dimensions but rhs has ",
                               dnums.rhs_contracting_dimensions.size()));
  }
  DotDimensionUse use{std::vector<bool>(lhs.rank(), false), std::vector<bool>(rhs.rank(), false)};
  RETURN_IF_ERROR(
      CheckDimensionList(instr, "lhs batch", dnums.lhs_batch_dimensions, lhs.rank(), use.lhs));
  RETURN_IF_ERROR(CheckDimensionList(instr, "lhs contracting", dnums.lhs_contracting_dimensions,
                                     lhs.rank(), use.lhs));
  RETURN_IF_ERROR(
      CheckDimensionList(instr, "rhs batch", dnums.rhs_batch_dimensions, rhs.rank(), use.rhs));
  RETURN_IF_ERROR(CheckDimensionList(instr, "rhs contracting", dnums.rhs_contracting_dimensions,
                                     rhs.rank(), use.rhs));
  std::vector<bool> no_skip(dnums.lhs_batch_dimensions.size(), false);
  RETURN_IF_ERROR(CheckMatchingSizes(instr, "batch", lhs, dnums.lhs_batch_dimensions, rhs,
                                     dnums.rhs_batch_dimensions, no_skip));
  RETURN_IF_ERROR(CheckMatchingSizes(instr, "contracting", lhs, dnums.lhs_contracting_dimensions,
                                     rhs, dnums.rhs_contracting_dimensions,
                                     SparseContractingDims(instr, dnums)));
  return use;
}

// Batch dimensions, then lhs free dimensions, then rhs free dimensions.
std::vector<Dim> DotResultDims(const Shape& lhs, const Shape& rhs, const DotDimensionNumbers& dnums,
                               const DotDimensionUse& use) {
  std::vector<Dim> dims;
  for (size_t i = 0; i < dnums.lhs_batch_dimensions.size(); ++i) {
    dims.push_back(MostSpecific(DimOf(lhs, dnums.lhs_batch_dimensions[i]),
                                DimOf(rhs, dnums.rhs_batch_dimensions[i])));
  }
  for (int64_t i = 0; i < lhs.rank(); ++i) {
    if (!use.lhs[i]) dims.push_back(DimOf(lhs, i));
  }
  for (int64_t i = 0; i < rhs.rank(); ++i) {
    if (!use.rhs[i]) dims.push_back(DimOf(rhs, i));
  }
  return dims;
}

const DotDimensionNumbers& DotNumbers(const HloInstruction& instr) {
  static const DotDimensionNumbers kNone;
  const auto& d = instr.attrs().dot_dimension_numbers;
  return d ? *d : kNone;
}

absl::StatusOr<Shape> InferDot(const HloInstruction& instr) {
  // A sparse dot carries one metadata operand per sparse side ("L.1@2:4").
  const std::string& sparsity = instr.attrs().sparsity;
  RETURN_IF_ERROR(ExpectOperandCount(instr, 2 + std::count(sparsity.begin(), sparsity.end(), '@')));
  ASSIGN_OR_RETURN(const Shape* lhs, ArrayOperand(instr, 0, "lhs"));
  ASSIGN_OR_RETURN(const Shape* rhs, ArrayOperand(instr, 1, "rhs"));
  const DotDimensionNumbers& dnums = DotNumbers(instr);
  ASSIGN_OR_RETURN(DotDimensionUse use, CheckDotDimensions(instr, *lhs, *rhs, dnums));
  ASSIGN_OR_RETURN(PrimitiveType type,
                   AccumulationType(instr, lhs->element_type(), rhs->element_type()));
  return MakeArray(type, DotResultDims(*lhs, *rhs, dnums, use));
}

// A block scale has the operand's rank; each contracting dimension of the
// operand is a whole number of blocks, the other dimensions match one to one.
// A scalar scales the whole operand.
absl::Status CheckBlockScale(const HloInstruction& instr, absl::string_view side,
                             const Shape& operand, const Shape& scale,
                             const std::vector<int64_t>& contracting) {
  RETURN_IF_ERROR(ExpectArray(instr, scale, StrCat(side, " scale")));
  if (scale.rank() == 0) return absl::OkStatus();
  if (scale.rank() != operand.rank()) {
    return Error(instr, StrCat(side, " scale has rank ", scale.rank(), " but ", side, " has rank ",
                               operand.rank()));
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    int64_t size = operand.dimensions(i);
    int64_t blocks = scale.dimensions(i);
    if (IsUnbounded(size) || IsUnbounded(blocks)) continue;
    bool ok =
        Contains(contracting, i) ? (blocks == 0 ? size == 0 : size % blocks == 0) : size == blocks;
    if (!ok) {
      return Error(instr, StrCat(side, " scale dimension ", i, " has size ", blocks,
                                 ", which does not fit ", side, " dimension size ", size));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferScaledDot(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 4));
  ASSIGN_OR_RETURN(const Shape* lhs, ArrayOperand(instr, 0, "lhs"));
  ASSIGN_OR_RETURN(const Shape* rhs, ArrayOperand(instr, 1, "rhs"));
  const DotDimensionNumbers& dnums = DotNumbers(instr);
  ASSIGN_OR_RETURN(DotDimensionUse use, CheckDotDimensions(instr, *lhs, *rhs, dnums));
  RETURN_IF_ERROR(CheckBlockScale(instr, "lhs", *lhs, instr.operand(2)->shape(),
                                  dnums.lhs_contracting_dimensions));
  RETURN_IF_ERROR(CheckBlockScale(instr, "rhs", *rhs, instr.operand(3)->shape(),
                                  dnums.rhs_contracting_dimensions));
  ASSIGN_OR_RETURN(PrimitiveType type,
                   AccumulationType(instr, lhs->element_type(), rhs->element_type()));
  return MakeArray(type, DotResultDims(*lhs, *rhs, dnums, use));
}

// Ragged dot's three modes, by the kind of the lhs ragged dimension (see
// jax.lax.ragged_dot_general): non-contracting needs an rhs group dimension and
// drops it; contracting prepends a group dimension; batch changes nothing.
enum class RaggedMode { kNonContracting, kContracting, kBatch };

absl::StatusOr<RaggedMode> RaggedDotMode(const HloInstruction& instr, const Shape& lhs,
                                         const DotDimensionNumbers& dnums,
                                         const RaggedDotDimensionNumbers& ragged) {
  if (ragged.lhs_ragged_dimensions.size() != 1) {
    return Error(instr, StrCat("needs exactly one lhs ragged dimension, got ",
                               ragged.lhs_ragged_dimensions.size()));
  }
  int64_t r = ragged.lhs_ragged_dimensions[0];
  if (r < 0 || r >= lhs.rank()) {
    return Error(instr,
                 StrCat("lhs ragged dimension ", r, " is out of range for rank ", lhs.rank()));
  }
  if (Contains(dnums.lhs_contracting_dimensions, r)) return RaggedMode::kContracting;
  if (Contains(dnums.lhs_batch_dimensions, r)) return RaggedMode::kBatch;
  return RaggedMode::kNonContracting;
}

// Checks the rhs group dimension against the mode; returns it, or -1 if none.
absl::StatusOr<int64_t> RhsGroupDimension(const HloInstruction& instr, const Shape& rhs,
                                          const RaggedDotDimensionNumbers& ragged, RaggedMode mode,
                                          DotDimensionUse& use) {
  const std::vector<int64_t>& groups = ragged.rhs_group_dimensions;
  if (mode != RaggedMode::kNonContracting) {
    if (groups.empty()) return -1;
    return Error(instr,
                 "an rhs group dimension is only allowed when the lhs ragged dimension "
                 "is a non-contracting dimension");
  }
  if (groups.size() != 1) {
    return Error(instr, StrCat("a ragged non-contracting dimension needs exactly one rhs group "
                               "dimension, got ",
                               groups.size()));
  }
  RETURN_IF_ERROR(CheckDimensionList(instr, "rhs group", groups, rhs.rank(), use.rhs));
  return groups[0];
}

absl::StatusOr<Shape> InferRaggedDot(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 3));
  ASSIGN_OR_RETURN(const Shape* lhs, ArrayOperand(instr, 0, "lhs"));
  ASSIGN_OR_RETURN(const Shape* rhs, ArrayOperand(instr, 1, "rhs"));
  ASSIGN_OR_RETURN(const Shape* group_sizes, ArrayOperand(instr, 2, "group_sizes"));
  if (!instr.attrs().ragged_dot_dimension_numbers) {
    return Error(instr, "missing lhs_ragged_dims");
  }
  const RaggedDotDimensionNumbers& ragged = *instr.attrs().ragged_dot_dimension_numbers;
  const DotDimensionNumbers& dnums = DotNumbers(instr);
  ASSIGN_OR_RETURN(DotDimensionUse use, CheckDotDimensions(instr, *lhs, *rhs, dnums));
  ASSIGN_OR_RETURN(RaggedMode mode, RaggedDotMode(instr, *lhs, dnums, ragged));
  ASSIGN_OR_RETURN(int64_t group_dim, RhsGroupDimension(instr, *rhs, ragged, mode, use));
  // group_sizes is [outer dims..., g]; the outer dims may also be broadcast, so
  // only the group count is checked.
  if (!IsInteger(group_sizes->element_type()) || group_sizes->rank() < 1) {
    return Error(instr, StrCat("group_sizes must be an integer array of rank >= 1, got ",
                               group_sizes->ToString(false)));
  }
  Dim groups = DimOf(*group_sizes, group_sizes->rank() - 1);
  if (group_dim >= 0 && !SizesMatch(groups.size, rhs->dimensions(group_dim))) {
    return Error(instr, StrCat("group_sizes has ", SizeString(groups.size),
                               " groups but rhs group dimension ", group_dim, " has size ",
                               SizeString(rhs->dimensions(group_dim))));
  }
  ASSIGN_OR_RETURN(PrimitiveType type,
                   AccumulationType(instr, lhs->element_type(), rhs->element_type()));
  std::vector<Dim> dims = DotResultDims(*lhs, *rhs, dnums, use);
  if (mode == RaggedMode::kContracting) dims.insert(dims.begin(), groups);
  return MakeArray(type, dims);
}

// ---------------------------------------------------------------------------
// Windows (convolution).

// ---------------------------------------------------------------------------
// Convolution.

// Every dimension of one operand named exactly once by dim_labels.
absl::Status CheckConvolutionLayout(const HloInstruction& instr, absl::string_view operand,
                                    int64_t rank, int64_t batch_or_input, int64_t feature_or_output,
                                    const std::vector<int64_t>& spatial) {
  std::vector<bool> used(rank, false);
  std::vector<int64_t> all = {batch_or_input, feature_or_output};
  all.insert(all.end(), spatial.begin(), spatial.end());
  return CheckDimensionList(instr, StrCat(operand, " dim_labels"), all, rank, used);
}

absl::Status CheckConvolutionRanks(const HloInstruction& instr, const Shape& lhs, const Shape& rhs,
                                   const ConvolutionDimensionNumbers& dn) {
  int64_t spatial = dn.input_spatial_dimensions.size();
  if (dn.kernel_spatial_dimensions.size() != spatial ||
      dn.output_spatial_dimensions.size() != spatial) {
    return Error(instr, StrCat("dim_labels name ", spatial, " input, ",
                               dn.kernel_spatial_dimensions.size(), " kernel and ",
                               dn.output_spatial_dimensions.size(), " output spatial dimensions"));
  }
  if (lhs.rank() != spatial + 2 || rhs.rank() != spatial + 2) {
    return Error(instr,
                 StrCat("lhs rank ", lhs.rank(), " and rhs rank ", rhs.rank(), " must both be ",
                        spatial + 2, " (", spatial, " spatial dimensions)"));
  }
  RETURN_IF_ERROR(CheckConvolutionLayout(instr, "input", spatial + 2, dn.input_batch_dimension,
                                         dn.input_feature_dimension, dn.input_spatial_dimensions));
  RETURN_IF_ERROR(
      CheckConvolutionLayout(instr, "kernel", spatial + 2, dn.kernel_input_feature_dimension,
                             dn.kernel_output_feature_dimension, dn.kernel_spatial_dimensions));
  return CheckConvolutionLayout(instr, "output", spatial + 2, dn.output_batch_dimension,
                                dn.output_feature_dimension, dn.output_spatial_dimensions);
}

// Feature groups split the input features among groups of kernels; batch
// groups split the batch the same way. At most one of them is above 1.
absl::Status CheckConvolutionGroups(const HloInstruction& instr, const Shape& lhs, const Shape& rhs,
                                    const ConvolutionDimensionNumbers& dn) {
  int64_t fgc = instr.attrs().feature_group_count;
  int64_t bgc = instr.attrs().batch_group_count;
  if (fgc < 1 || bgc < 1) {
    return Error(instr, StrCat("feature_group_count ", fgc, " and batch_group_count ", bgc,
                               " must be positive"));
  }
  if (fgc > 1 && bgc > 1) {
    return Error(instr, StrCat("feature_group_count ", fgc, " and batch_group_count ", bgc,
                               " cannot both be above 1"));
  }
  int64_t input_features = lhs.dimensions(dn.input_feature_dimension);
  int64_t kernel_inputs = rhs.dimensions(dn.kernel_input_feature_dimension);
  int64_t kernel_outputs = rhs.dimensions(dn.kernel_output_feature_dimension);
  int64_t batch = lhs.dimensions(dn.input_batch_dimension);
  auto known = [](int64_t v) { return !IsUnbounded(v); };
  if (known(input_features) && input_features % fgc != 0) {
    return Error(instr, StrCat("input feature size ", input_features,
                               " is not a multiple of feature_group_count ", fgc));
  }
  if (known(input_features) && known(kernel_inputs) && input_features / fgc != kernel_inputs) {
    return Error(instr, StrCat("input feature size ", input_features, " / feature_group_count ",
                               fgc, " does not match kernel input feature size ", kernel_inputs));
  }
  if (known(kernel_outputs) && kernel_outputs % fgc != 0) {
    return Error(instr, StrCat("kernel output feature size ", kernel_outputs,
                               " is not a multiple of feature_group_count ", fgc));
  }
  if (known(batch) && batch % bgc != 0) {
    return Error(
        instr, StrCat("input batch size ", batch, " is not a multiple of batch_group_count ", bgc));
  }
  if (known(kernel_outputs) && kernel_outputs % bgc != 0) {
    return Error(instr, StrCat("kernel output feature size ", kernel_outputs,
                               " is not a multiple of batch_group_count ", bgc));
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferConvolution(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 2));
  ASSIGN_OR_RETURN(const Shape* lhs, ArrayOperand(instr, 0, "lhs"));
  ASSIGN_OR_RETURN(const Shape* rhs, ArrayOperand(instr, 1, "rhs"));
  if (!instr.attrs().convolution_dimension_numbers) return Error(instr, "missing dim_labels");
  const ConvolutionDimensionNumbers& dn = *instr.attrs().convolution_dimension_numbers;
  RETURN_IF_ERROR(CheckConvolutionRanks(instr, *lhs, *rhs, dn));
  static const Window kNoWindow;
  const Window& window = instr.attrs().window ? *instr.attrs().window : kNoWindow;
  int64_t spatial = dn.input_spatial_dimensions.size();
  if (static_cast<int64_t>(window.dimensions.size()) != spatial) {
    return Error(instr,
                 StrCat("window has ", window.dimensions.size(),
                        " dimensions but the convolution has ", spatial, " spatial dimensions"));
  }
  RETURN_IF_ERROR(CheckConvolutionGroups(instr, *lhs, *rhs, dn));
  ASSIGN_OR_RETURN(PrimitiveType type,
                   AccumulationType(instr, lhs->element_type(), rhs->element_type()));
  std::vector<Dim> out(spatial + 2);
  Dim batch = DimOf(*lhs, dn.input_batch_dimension);
  if (!IsUnbounded(batch.size)) batch.size /= instr.attrs().batch_group_count;
  out[dn.output_batch_dimension] = batch;
  out[dn.output_feature_dimension] = DimOf(*rhs, dn.kernel_output_feature_dimension);
  for (int64_t i = 0; i < spatial; ++i) {
    const WindowDimension& w = window.dimensions[i];
    RETURN_IF_ERROR(CheckWindowDimension(instr, i, w, "lhs", "rhs"));
    int64_t kernel = rhs->dimensions(dn.kernel_spatial_dimensions[i]);
    if (!SizesMatch(kernel, w.size)) {
      return Error(instr, StrCat("window dimension ", i, " has size ", w.size,
                                 " but kernel spatial dimension ", dn.kernel_spatial_dimensions[i],
                                 " has size ", SizeString(kernel)));
    }
    Dim input = DimOf(*lhs, dn.input_spatial_dimensions[i]);
    ASSIGN_OR_RETURN(int64_t size, WindowedSize(instr, input.size, w));
    out[dn.output_spatial_dimensions[i]] = {size, input.dynamic};
  }
  return MakeArray(type, out);
}

// ---------------------------------------------------------------------------
// FFT.

// fft_length[-1] real points hold this many complex ones (Hermitian symmetry).
int64_t HalfSpectrum(int64_t n) { return n == 0 ? 0 : n / 2 + 1; }

absl::Status CheckFftDimension(const HloInstruction& instr, const Shape& operand, int64_t d,
                               int64_t expected) {
  if (SizesMatch(operand.dimensions(d), expected)) return absl::OkStatus();
  return Error(instr,
               StrCat(instr.attrs().fft_type, " operand dimension ", d, " has size ",
                      SizeString(operand.dimensions(d)), " but fft_length requires ", expected));
}

absl::StatusOr<Shape> InferRealFft(const HloInstruction& instr, const Shape& operand) {
  const std::vector<int64_t>& length = instr.attrs().fft_length;
  int64_t first = operand.rank() - length.size();
  PrimitiveType t = operand.element_type();
  if (t != PrimitiveType::F32 && t != PrimitiveType::F64) {
    return Error(instr, StrCat("RFFT needs an f32 or f64 operand, got ", TypeName(t)));
  }
  for (size_t i = 0; i < length.size(); ++i) {
    RETURN_IF_ERROR(CheckFftDimension(instr, operand, first + i, length[i]));
  }
  std::vector<Dim> dims = DimsOf(operand);
  dims.back() = {HalfSpectrum(length.back()), false};
  return MakeArray(t == PrimitiveType::F32 ? PrimitiveType::C64 : PrimitiveType::C128, dims);
}

absl::StatusOr<Shape> InferInverseRealFft(const HloInstruction& instr, const Shape& operand) {
  const std::vector<int64_t>& length = instr.attrs().fft_length;
  int64_t first = operand.rank() - length.size();
  PrimitiveType t = operand.element_type();
  if (t != PrimitiveType::C64 && t != PrimitiveType::C128) {
    return Error(instr, StrCat("IRFFT needs a c64 or c128 operand, got ", TypeName(t)));
  }
  for (size_t i = 0; i + 1 < length.size(); ++i) {
    RETURN_IF_ERROR(CheckFftDimension(instr, operand, first + i, length[i]));
  }
  RETURN_IF_ERROR(
      CheckFftDimension(instr, operand, operand.rank() - 1, HalfSpectrum(length.back())));
  std::vector<Dim> dims = DimsOf(operand);
  dims.back() = {length.back(), false};
  return MakeArray(t == PrimitiveType::C64 ? PrimitiveType::F32 : PrimitiveType::F64, dims);
}

absl::StatusOr<Shape> InferFft(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 1));
  ASSIGN_OR_RETURN(const Shape* operand, ArrayOperand(instr, 0, "operand"));
  const std::vector<int64_t>& length = instr.attrs().fft_length;
  if (length.empty() || length.size() > 3) {
    return Error(instr, StrCat("fft_length must have 1 to 3 entries, got ", length.size()));
  }
  for (int64_t n : length) {
    if (n < 0) return Error(instr, StrCat("fft_length has negative entry ", n));
  }
  if (operand->rank() < static_cast<int64_t>(length.size())) {
    return Error(instr, StrCat("operand rank ", operand->rank(), " is less than the ",
                               length.size(), " transformed dimensions"));
  }
  const std::string& type = instr.attrs().fft_type;
  if (type == "RFFT") return InferRealFft(instr, *operand);
  if (type == "IRFFT") return InferInverseRealFft(instr, *operand);
  if (type != "FFT" && type != "IFFT") {
    return Error(instr, StrCat("unknown fft_type '", type, "'"));
  }
  if (!IsComplex(operand->element_type())) {
    return Error(instr,
                 StrCat(type, " needs a complex operand, got ", TypeName(operand->element_type())));
  }
  return WithoutLayout(*operand);
}

// ---------------------------------------------------------------------------
// Triangular solve and Cholesky.

absl::Status CheckFloatOrComplex(const HloInstruction& instr, const Shape& s,
                                 absl::string_view role) {
  if (IsFloatingPoint(s.element_type()) || IsComplex(s.element_type())) {
    return absl::OkStatus();
  }
  return Error(
      instr, StrCat(role, " must be floating-point or complex, got ", TypeName(s.element_type())));
}

// A batch of square matrices: rank >= 2, the two minor dimensions equal.
absl::Status CheckSquareMatrices(const HloInstruction& instr, const Shape& a,
                                 absl::string_view role) {
  RETURN_IF_ERROR(CheckFloatOrComplex(instr, a, role));
  if (a.rank() < 2) {
    return Error(instr, StrCat(role, " must have rank >= 2, got ", a.ToString(false)));
  }
  int64_t rows = a.dimensions(a.rank() - 2);
  int64_t cols = a.dimensions(a.rank() - 1);
  if (!SizesMatch(rows, cols)) {
    return Error(instr, StrCat(role, " must be square in its two minor dimensions, got ",
                               a.ToString(false)));
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferTriangularSolve(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 2));
  ASSIGN_OR_RETURN(const Shape* a, ArrayOperand(instr, 0, "a"));
  ASSIGN_OR_RETURN(const Shape* b, ArrayOperand(instr, 1, "b"));
  RETURN_IF_ERROR(CheckSquareMatrices(instr, *a, "a"));
  if (a->element_type() != b->element_type()) {
    return Error(instr, StrCat("a has type ", TypeName(a->element_type()), " but b has type ",
                               TypeName(b->element_type())));
  }
  if (a->rank() != b->rank()) {
    return Error(instr, StrCat("a has rank ", a->rank(), " but b has rank ", b->rank()));
  }
  int64_t rank = a->rank();
  for (int64_t i = 0; i < rank - 2; ++i) {
    if (!SizesMatch(a->dimensions(i), b->dimensions(i))) {
      return Error(instr, StrCat("batch dimension ", i, " has size ", SizeString(a->dimensions(i)),
                                 " in a but ", SizeString(b->dimensions(i)), " in b"));
    }
  }
  // left_side solves op(a) x = b, so a meets b's rows; otherwise x op(a) = b.
  bool left = instr.attrs().left_side;
  int64_t b_dim = left ? rank - 2 : rank - 1;
  if (!SizesMatch(a->dimensions(rank - 1), b->dimensions(b_dim))) {
    return Error(
        instr, StrCat("a is ", SizeString(a->dimensions(rank - 1)), "x",
                      SizeString(a->dimensions(rank - 1)), " but b dimension ", b_dim, " has size ",
                      SizeString(b->dimensions(b_dim)), left ? " (left_side)" : " (right side)"));
  }
  const std::string& transpose = instr.attrs().transpose_a;
  if (!transpose.empty() && transpose != "NO_TRANSPOSE" && transpose != "TRANSPOSE" &&
      transpose != "ADJOINT") {
    return Error(instr, StrCat("unknown transpose_a '", transpose, "'"));
  }
  return WithoutLayout(*b);
}

absl::StatusOr<Shape> InferCholesky(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 1));
  ASSIGN_OR_RETURN(const Shape* a, ArrayOperand(instr, 0, "operand"));
  RETURN_IF_ERROR(CheckSquareMatrices(instr, *a, "operand"));
  return WithoutLayout(*a);
}

// ---------------------------------------------------------------------------
// Batch normalization.

// The operand, and its feature dimension (feature_index).
absl::StatusOr<Dim> BatchNormFeature(const HloInstruction& instr, const Shape& operand) {
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  if (!IsFloatingPoint(operand.element_type())) {
    return Error(instr,
                 StrCat("operand must be floating-point, got ", TypeName(operand.element_type())));
  }
  int64_t index = instr.attrs().feature_index;
  if (index < 0 || index >= operand.rank()) {
    return Error(instr, StrCat("feature_index ", index, " is out of range for operand rank ",
                               operand.rank()));
  }
  return DimOf(operand, index);
}

// Operand i is one value per feature: rank 1, feature-sized, operand's type.
absl::Status CheckPerFeature(const HloInstruction& instr, int64_t i, absl::string_view role,
                             const Shape& operand, Dim feature) {
  const Shape& s = instr.operand(i)->shape();
  RETURN_IF_ERROR(ExpectArray(instr, s, role));
  if (s.rank() != 1 || !SizesMatch(s.dimensions(0), feature.size)) {
    return Error(instr, StrCat(role, " must be [", SizeString(feature.size),
                               "] (one value per feature), got ", s.ToString(false)));
  }
  if (s.element_type() != operand.element_type()) {
    return Error(instr, StrCat(role, " has type ", TypeName(s.element_type()),
                               " but the operand has type ", TypeName(operand.element_type())));
  }
  return absl::OkStatus();
}

// (normalized or gradient, per-feature, per-feature), as training and grad return.
Shape BatchNormTuple(const Shape& operand, Dim feature) {
  Shape per_feature = MakeArray(operand.element_type(), {feature});
  return Shape::Tuple({WithoutLayout(operand), per_feature, per_feature});
}

absl::StatusOr<Shape> InferBatchNormTraining(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 3));
  const Shape& operand = instr.operand(0)->shape();
  ASSIGN_OR_RETURN(Dim feature, BatchNormFeature(instr, operand));
  RETURN_IF_ERROR(CheckPerFeature(instr, 1, "scale", operand, feature));
  RETURN_IF_ERROR(CheckPerFeature(instr, 2, "offset", operand, feature));
  return BatchNormTuple(operand, feature);
}

absl::StatusOr<Shape> InferBatchNormInference(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 5));
  const Shape& operand = instr.operand(0)->shape();
  ASSIGN_OR_RETURN(Dim feature, BatchNormFeature(instr, operand));
  RETURN_IF_ERROR(CheckPerFeature(instr, 1, "scale", operand, feature));
  RETURN_IF_ERROR(CheckPerFeature(instr, 2, "offset", operand, feature));
  RETURN_IF_ERROR(CheckPerFeature(instr, 3, "mean", operand, feature));
  RETURN_IF_ERROR(CheckPerFeature(instr, 4, "variance", operand, feature));
  return WithoutLayout(operand);
}

absl::StatusOr<Shape> InferBatchNormGrad(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 5));
  const Shape& operand = instr.operand(0)->shape();
  ASSIGN_OR_RETURN(Dim feature, BatchNormFeature(instr, operand));
  RETURN_IF_ERROR(CheckPerFeature(instr, 1, "scale", operand, feature));
  RETURN_IF_ERROR(CheckPerFeature(instr, 2, "mean", operand, feature));
  RETURN_IF_ERROR(CheckPerFeature(instr, 3, "variance", operand, feature));
  const Shape& grad = instr.operand(4)->shape();
  RETURN_IF_ERROR(ExpectArray(instr, grad, "grad_output"));
  bool same_dims = grad.rank() == operand.rank();
  for (int64_t i = 0; same_dims && i < grad.rank(); ++i) {
    same_dims = SizesMatch(grad.dimensions(i), operand.dimensions(i));
  }
  if (!same_dims || grad.element_type() != operand.element_type()) {
    return Error(instr, StrCat("grad_output ", grad.ToString(false),
                               " must have the operand's shape ", operand.ToString(false)));
  }
  return BatchNormTuple(operand, feature);
}

// ---------------------------------------------------------------------------
// TopK and random numbers.

absl::StatusOr<Shape> InferTopK(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 1));
  ASSIGN_OR_RETURN(const Shape* operand, ArrayOperand(instr, 0, "operand"));
  if (operand->rank() < 1) return Error(instr, "operand must have rank >= 1");
  int64_t k = instr.attrs().k;
  int64_t last = operand->dimensions(operand->rank() - 1);
  if (k < 0) return Error(instr, StrCat("k=", k, " is negative"));
  if (!IsUnbounded(last) && k > last) {
    return Error(instr, StrCat("k=", k, " exceeds the last dimension size ", last));
  }
  std::vector<Dim> dims = DimsOf(*operand);
  dims.back() = {k, false};
  return Shape::Tuple(
      {MakeArray(operand->element_type(), dims), MakeArray(PrimitiveType::S32, dims)});
}

// rng(a, b): uniform in [a, b) or normal with mean a and deviation b, of the
// declared shape. XLA's rng tests add a third operand (a shape vector).
absl::StatusOr<Shape> InferRng(const HloInstruction& instr) {
  const Shape& result = instr.shape();
  RETURN_IF_ERROR(ExpectArray(instr, result, "result"));
  if (instr.operand_count() != 2 && instr.operand_count() != 3) {
    return Error(instr, StrCat("expects 2 operands, got ", instr.operand_count()));
  }
  for (int64_t i = 0; i < 2; ++i) {
    const Shape& p = instr.operand(i)->shape();
    if (!p.IsScalar() || p.element_type() != result.element_type()) {
      return Error(instr, StrCat("parameter ", i, " must be a ", TypeName(result.element_type()),
                                 " scalar like the result, got ", p.ToString(false)));
    }
  }
  const std::string& distribution = instr.attrs().distribution;
  PrimitiveType t = result.element_type();
  if (distribution == "rng_normal") {
    if (!IsFloatingPoint(t)) {
      return Error(instr, StrCat("rng_normal needs a floating-point result, got ", TypeName(t)));
    }
  } else if (distribution == "rng_uniform") {
    if (!IsFloatingPoint(t) && !IsInteger(t) && t != PrimitiveType::PRED) {
      return Error(instr, StrCat("rng_uniform cannot produce ", TypeName(t)));
    }
  } else {
    return Error(instr, StrCat("unknown distribution '", distribution, "'"));
  }
  return WithoutLayout(result);
}

// rng-bit-generator(state) -> (new state, bits of the declared output shape).
absl::StatusOr<Shape> InferRngBitGenerator(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 1));
  // XLA keeps the state in u64, but its own tests also pass other element
  // types through; only the rank is checked.
  ASSIGN_OR_RETURN(const Shape* state, ArrayOperand(instr, 0, "initial state"));
  if (state->rank() != 1) {
    return Error(instr,
                 StrCat("initial state must be a rank-1 array, got ", state->ToString(false)));
  }
  const Shape& declared = instr.shape();
  if (!declared.IsTuple() || declared.tuple_shapes_size() != 2) {
    return Error(instr,
                 StrCat("result must be a (state, output) tuple, got ", declared.ToString(false)));
  }
  const Shape& output = declared.tuple_shapes(1);
  if (!output.IsArray() ||
      !(IsInteger(output.element_type()) || IsFloatingPoint(output.element_type()))) {
    return Error(instr, StrCat("output must be an integer or floating-point array, got ",
                               output.ToString(false)));
  }
  return Shape::Tuple({WithoutLayout(*state), WithoutLayout(output)});
}

absl::StatusOr<Shape> InferRngGetAndUpdateState(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectOperandCount(instr, 0));
  return Shape::Array(PrimitiveType::U64, {2});
}

}  // namespace

absl::StatusOr<Shape> InferLinalgShape(const HloInstruction& instr) {
  switch (instr.opcode()) {
    case HloOpcode::kDot:
      return InferDot(instr);
    case HloOpcode::kRaggedDot:
      return InferRaggedDot(instr);
    case HloOpcode::kScaledDot:
      return InferScaledDot(instr);
    case HloOpcode::kConvolution:
      return InferConvolution(instr);
    case HloOpcode::kFft:
      return InferFft(instr);
    case HloOpcode::kTriangularSolve:
      return InferTriangularSolve(instr);
    case HloOpcode::kCholesky:
      return InferCholesky(instr);
    case HloOpcode::kBatchNormTraining:
      return InferBatchNormTraining(instr);
    case HloOpcode::kBatchNormInference:
      return InferBatchNormInference(instr);
    case HloOpcode::kBatchNormGrad:
      return InferBatchNormGrad(instr);
    case HloOpcode::kTopK:
      return InferTopK(instr);
    case HloOpcode::kRng:
      return InferRng(instr);
    case HloOpcode::kRngBitGenerator:
      return InferRngBitGenerator(instr);
    case HloOpcode::kRngGetAndUpdateState:
      return InferRngGetAndUpdateState(instr);
    default:
      return absl::NotFoundError("not handled");
  }
}

}  // namespace xlite::shape_inference
