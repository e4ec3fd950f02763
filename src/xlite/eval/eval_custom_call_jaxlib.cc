// JAX's CPU custom calls: the typed-FFI LAPACK targets jaxlib registers
// (lapack_?getrf_ffi, ...), run on hostlib's kernels, and clear errors for
// the jaxlib targets we cannot run (Python callbacks, GPU and legacy ones).
//
// XLA hands an FFI handler raw buffers laid out per the custom call's
// operand_layout_constraints (operands) and result shapes (results); jaxlib's
// kernels read them as batches of column-major matrices. Literals hold data
// in logical row-major order, so each operand is first laid out in memory
// exactly as XLA would, the kernel runs on that memory, and each result is
// read back through its layout. Without operand_layout_constraints (JAX always
// spells them) operands and results are taken as default row-major.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "xlite/eval/evaluator.h"
#include "xlite/hostlib/ffi_attributes.h"
#include "xlite/hostlib/lapack.h"
#include "xlite/support/status.h"

namespace xlite::eval {
namespace {

using hostlib::FfiAttributes;
using hostlib::RealOf;

// ---------------------------------------------------------------------------
// Buffers in XLA's memory order.

// One operand or result as the handler sees it: dims, type, and bytes in the
// order the layout gives.
struct HostBuffer {
  PrimitiveType type = PrimitiveType::PRIMITIVE_TYPE_INVALID;
  std::vector<int64_t> dims;
  std::vector<int64_t> minor_to_major;
  std::vector<std::byte> bytes;  // operator new's alignment suits every element type

  int64_t elements() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
  template <typename T>
  T* data() {
    return reinterpret_cast<T*>(bytes.data());
  }
};

absl::StatusOr<std::vector<int64_t>> MinorToMajor(const Shape& shape, bool use_layout) {
  const int64_t rank = shape.rank();
  std::vector<int64_t> order;
  if (!use_layout || !shape.has_layout() || shape.layout().minor_to_major.empty()) {
    for (int64_t d = rank - 1; d >= 0; --d) order.push_back(d);
    return order;
  }
  const Layout& layout = shape.layout();
  if (!layout.HasOnlyMinorToMajor()) {
    return Unimplemented("layout ", layout.ToString(), " (only dimension orders are supported)");
  }
  order = layout.minor_to_major;
  std::vector<bool> seen(rank, false);
  for (int64_t d : order) {
    if (d < 0 || d >= rank || seen[d]) {
      return InvalidArgument("layout ", layout.ToString(), " is not a permutation of ", rank,
                             " dimensions");
    }
    seen[d] = true;
  }
  if (static_cast<int64_t>(order.size()) != rank) {
    return InvalidArgument("layout ", layout.ToString(), " does not order all ", rank,
                           " dimensions");
  }
  return order;
}

// Physical stride (in elements) of each logical dimension.
std::vector<int64_t> PhysicalStrides(const HostBuffer& buffer) {
  std::vector<int64_t> strides(buffer.dims.size(), 1);
  int64_t stride = 1;
  for (int64_t d : buffer.minor_to_major) {
    strides[d] = stride;
    stride *= buffer.dims[d];
  }
  return strides;
}

// Calls fn(logical_index, physical_index) for every element.
template <typename Fn>
void ForEachElement(const HostBuffer& buffer, Fn fn) {
  const int64_t count = buffer.elements();
  if (count == 0) return;
  const std::vector<int64_t> strides = PhysicalStrides(buffer);
  const int64_t rank = static_cast<int64_t>(buffer.dims.size());
  std::vector<int64_t> index(rank, 0);
  int64_t physical = 0;
  for (int64_t logical = 0; logical < count; ++logical) {
    fn(logical, physical);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < buffer.dims[d]) {
        physical += strides[d];
        break;
      }
      physical -= strides[d] * (buffer.dims[d] - 1);
      index[d] = 0;
    }
  }
}

absl::StatusOr<HostBuffer> AllocateBuffer(const Shape& shape, bool use_layout) {
  if (!shape.IsArray()) {
    return InvalidArgument("expects arrays, got ", shape.ToString(false));
  }
  HostBuffer buffer;
  buffer.type = shape.element_type();
  buffer.dims = shape.dimensions();
  ASSIGN_OR_RETURN(buffer.minor_to_major, MinorToMajor(shape, use_layout));
  buffer.bytes.resize(buffer.elements() * PrimitiveByteWidth(buffer.type));
  return buffer;
}

void CopyIn(const Literal& literal, HostBuffer& buffer) {
  const int width = literal.element_stride();
  const uint8_t* src = literal.raw_data().data();
  ForEachElement(buffer, [&](int64_t logical, int64_t physical) {
    std::memcpy(buffer.bytes.data() + physical * width, src + logical * width, width);
  });
}

void CopyOut(const HostBuffer& buffer, Literal& literal) {
  const int width = literal.element_stride();
  uint8_t* dst = literal.mutable_raw_data();
  ForEachElement(buffer, [&](int64_t logical, int64_t physical) {
    std::memcpy(dst + logical * width, buffer.bytes.data() + physical * width, width);
  });
}

// ---------------------------------------------------------------------------
// The call frame: what an XLA FFI handler receives.

struct Frame {
  std::string target;
  std::vector<HostBuffer> args;
  std::vector<HostBuffer> rets;
  FfiAttributes attrs;

  template <typename... Args>
  absl::Status Error(const Args&... args) const {
    return InvalidArgument(target, ": ", args...);
  }
};

std::string DimsString(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

// The element types and counts of the arguments and results, as the
// handler's binding declares them.
absl::Status CheckSignature(const Frame& frame, std::vector<PrimitiveType> args,
                            std::vector<PrimitiveType> rets) {
  auto check = [&](const std::vector<HostBuffer>& have, const std::vector<PrimitiveType>& want,
                   absl::string_view what) -> absl::Status {
    if (have.size() != want.size()) {
      return frame.Error("takes ", want.size(), " ", what, "s, got ", have.size());
    }
    for (size_t i = 0; i < want.size(); ++i) {
      if (have[i].type != want[i]) {
        return frame.Error(what, " ", i, " must be ", PrimitiveTypeName(want[i]), ", got ",
                           PrimitiveTypeName(have[i].type));
      }
    }
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(check(frame.args, args, "operand"));
  return check(frame.rets, rets, "result");
}

struct Batch2D {
  std::vector<int64_t> batch_dims;
  int64_t batch = 1, rows = 0, cols = 0;
};

// Leading dimensions are batch dimensions; the last two a matrix (jaxlib's
// SplitBatch2D).
absl::StatusOr<Batch2D> SplitBatch2D(const Frame& frame, const HostBuffer& buffer,
                                     absl::string_view what) {
  if (buffer.dims.size() < 2) {
    return frame.Error(what, " must have rank >= 2, got ", DimsString(buffer.dims));
  }
  Batch2D split;
  split.batch_dims.assign(buffer.dims.begin(), buffer.dims.end() - 2);
  for (int64_t d : split.batch_dims) split.batch *= d;
  split.rows = buffer.dims[buffer.dims.size() - 2];
  split.cols = buffer.dims.back();
  return split;
}

// `buffer` must have dims batch_dims + tail.
absl::Status ExpectDims(const Frame& frame, const HostBuffer& buffer, const Batch2D& batch,
                        std::vector<int64_t> tail, absl::string_view what) {
  std::vector<int64_t> want = batch.batch_dims;
  want.insert(want.end(), tail.begin(), tail.end());
  if (buffer.dims != want) {
    return frame.Error(what, " must be ", DimsString(want), ", got ", DimsString(buffer.dims));
  }
  return absl::OkStatus();
}

// jaxlib's CopyIfDiffBuffer: the kernel starts from a raw copy of the operand.
absl::Status CopyArgToRet(const Frame& frame, const HostBuffer& arg, HostBuffer& ret,
                          absl::string_view what) {
  if (arg.bytes.size() != ret.bytes.size()) {
    return frame.Error(what, " must have the operand's size, got ", DimsString(ret.dims), " for ",
                       DimsString(arg.dims));
  }
  ret.bytes = arg.bytes;
  return absl::OkStatus();
}

absl::Status CheckSquare(const Frame& frame, const Batch2D& x) {
  if (x.rows != x.cols) {
    return frame.Error("expects square matrices, got ", x.rows, "x", x.cols);
  }
  return absl::OkStatus();
}

template <typename T>
constexpr PrimitiveType TypeOf() {
  if constexpr (std::is_same_v<T, float>) return PrimitiveType::F32;
  if constexpr (std::is_same_v<T, double>) return PrimitiveType::F64;
  if constexpr (std::is_same_v<T, std::complex<float>>) return PrimitiveType::C64;
  if constexpr (std::is_same_v<T, std::complex<double>>) return PrimitiveType::C128;
  return PrimitiveType::PRIMITIVE_TYPE_INVALID;
}
constexpr PrimitiveType kS32 = PrimitiveType::S32;

absl::Status WithTarget(const Frame& frame, absl::Status status) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(frame.target, ": ", status.message()));
}

// ---------------------------------------------------------------------------
// The targets. Operand, result and attribute lists are jaxlib's
// (JAX_CPU_DEFINE_* in jaxlib/cpu/lapack_kernels.cc).

template <typename T>
absl::Status RunTrsm(Frame& f) {
  // Current jaxlib binds (x, y); older ones (x, y, alpha: scalar).
  std::vector<PrimitiveType> args = {TypeOf<T>(), TypeOf<T>()};
  if (f.args.size() == 3) args.push_back(TypeOf<T>());
  RETURN_IF_ERROR(CheckSignature(f, args, {TypeOf<T>()}));
  RETURN_IF_ERROR(f.attrs.CheckNoOthers({"side", "uplo", "trans_x", "diag"}));
  ASSIGN_OR_RETURN(char side, f.attrs.GetChar("side", "LR"));
  ASSIGN_OR_RETURN(char uplo, f.attrs.GetChar("uplo", "LU"));
  ASSIGN_OR_RETURN(char trans, f.attrs.GetChar("trans_x", "NTC"));
  ASSIGN_OR_RETURN(char diag, f.attrs.GetChar("diag", "NU"));
  ASSIGN_OR_RETURN(Batch2D y, SplitBatch2D(f, f.args[1], "y"));
  const int64_t k = side == 'L' ? y.rows : y.cols;
  RETURN_IF_ERROR(ExpectDims(f, f.args[0], y, {k, k}, "x (the triangular matrix)"));
  T alpha(1);
  if (f.args.size() == 3) {
    if (!f.args[2].dims.empty()) return f.Error("alpha must be a scalar");
    alpha = *f.args[2].template data<T>();
  }
  RETURN_IF_ERROR(CopyArgToRet(f, f.args[1], f.rets[0], "the result"));
  return WithTarget(
      f, hostlib::Trsm<T>(static_cast<hostlib::Side>(side), static_cast<hostlib::UpLo>(uplo),
                          static_cast<hostlib::Transpose>(trans), static_cast<hostlib::Diag>(diag),
                          alpha, y.batch, y.rows, y.cols, f.args[0].template data<T>(),
                          f.rets[0].template data<T>()));
}

template <typename T>
absl::Status RunGetrf(Frame& f) {
  RETURN_IF_ERROR(CheckSignature(f, {TypeOf<T>()}, {TypeOf<T>(), kS32, kS32}));
  RETURN_IF_ERROR(f.attrs.CheckNoOthers({}));
  ASSIGN_OR_RETURN(Batch2D x, SplitBatch2D(f, f.args[0], "x"));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[1], x, {std::min(x.rows, x.cols)}, "ipiv"));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[2], x, {}, "info"));
  RETURN_IF_ERROR(CopyArgToRet(f, f.args[0], f.rets[0], "the LU result"));
  return WithTarget(
      f, hostlib::Getrf<T>(x.batch, x.rows, x.cols, f.rets[0].template data<T>(),
                           f.rets[1].template data<int32_t>(), f.rets[2].template data<int32_t>()));
}

template <typename T>
absl::Status RunGeqrf(Frame& f) {
  RETURN_IF_ERROR(CheckSignature(f, {TypeOf<T>()}, {TypeOf<T>(), TypeOf<T>()}));
  RETURN_IF_ERROR(f.attrs.CheckNoOthers({}));
  ASSIGN_OR_RETURN(Batch2D x, SplitBatch2D(f, f.args[0], "x"));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[1], x, {std::min(x.rows, x.cols)}, "tau"));
  RETURN_IF_ERROR(CopyArgToRet(f, f.args[0], f.rets[0], "the QR result"));
  return WithTarget(f, hostlib::Geqrf<T>(x.batch, x.rows, x.cols, f.rets[0].template data<T>(),
                                         f.rets[1].template data<T>()));
}

template <typename T>
absl::Status RunGeqp3(Frame& f) {
  RETURN_IF_ERROR(CheckSignature(f, {TypeOf<T>(), kS32}, {TypeOf<T>(), kS32, TypeOf<T>()}));
  RETURN_IF_ERROR(f.attrs.CheckNoOthers({}));
  ASSIGN_OR_RETURN(Batch2D x, SplitBatch2D(f, f.args[0], "x"));
  RETURN_IF_ERROR(ExpectDims(f, f.args[1], x, {x.cols}, "jpvt"));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[2], x, {std::min(x.rows, x.cols)}, "tau"));
  RETURN_IF_ERROR(CopyArgToRet(f, f.args[0], f.rets[0], "the QR result"));
  RETURN_IF_ERROR(CopyArgToRet(f, f.args[1], f.rets[1], "jpvt_out"));
  return WithTarget(
      f, hostlib::Geqp3<T>(x.batch, x.rows, x.cols, f.rets[0].template data<T>(),
                           f.rets[1].template data<int32_t>(), f.rets[2].template data<T>()));
}

template <typename T>
absl::Status RunOrgqr(Frame& f) {
  RETURN_IF_ERROR(CheckSignature(f, {TypeOf<T>(), TypeOf<T>()}, {TypeOf<T>()}));
  RETURN_IF_ERROR(f.attrs.CheckNoOthers({}));
  ASSIGN_OR_RETURN(Batch2D x, SplitBatch2D(f, f.args[0], "x"));
  if (f.args[1].dims.empty()) return f.Error("tau must have rank >= 1");
  const int64_t k = f.args[1].dims.back();
  RETURN_IF_ERROR(ExpectDims(f, f.args[1], x, {k}, "tau"));
  RETURN_IF_ERROR(CopyArgToRet(f, f.args[0], f.rets[0], "the result"));
  return WithTarget(f, hostlib::Orgqr<T>(x.batch, x.rows, x.cols, k, f.rets[0].template data<T>(),
                                         f.args[1].template data<T>()));
}

template <typename T>
absl::Status RunOrmqr(Frame& f) {
  RETURN_IF_ERROR(CheckSignature(f, {TypeOf<T>(), TypeOf<T>(), TypeOf<T>()}, {TypeOf<T>()}));
  RETURN_IF_ERROR(f.attrs.CheckNoOthers({"left", "transpose"}));
  ASSIGN_OR_RETURN(bool left, f.attrs.GetBool("left"));
  ASSIGN_OR_RETURN(bool transpose, f.attrs.GetBool("transpose"));
  ASSIGN_OR_RETURN(Batch2D c, SplitBatch2D(f, f.args[2], "c"));
  ASSIGN_OR_RETURN(Batch2D a, SplitBatch2D(f, f.args[0], "a"));
  if (a.batch_dims != c.batch_dims) {
    return f.Error("a and c must have the same batch dimensions, got ", DimsString(f.args[0].dims),
                   " and ", DimsString(f.args[2].dims));
  }
  if (f.args[1].dims.empty()) return f.Error("tau must have rank >= 1");
  const int64_t k = f.args[1].dims.back();
  RETURN_IF_ERROR(ExpectDims(f, f.args[1], c, {k}, "tau"));
  RETURN_IF_ERROR(CopyArgToRet(f, f.args[2], f.rets[0], "the result"));
  return WithTarget(f,
                    hostlib::Ormqr<T>(left, transpose, c.batch, c.rows, c.cols, k,
                                      f.args[0].template data<T>(), a.rows, a.cols,
                                      f.args[1].template data<T>(), f.rets[0].template data<T>()));
}

template <typename T>
absl::Status RunPotrf(Frame& f) {
  RETURN_IF_ERROR(CheckSignature(f, {TypeOf<T>()}, {TypeOf<T>(), kS32}));
  RETURN_IF_ERROR(f.attrs.CheckNoOthers({"uplo"}));
  ASSIGN_OR_RETURN(char uplo, f.attrs.GetChar("uplo", "LU"));
  ASSIGN_OR_RETURN(Batch2D x, SplitBatch2D(f, f.args[0], "x"));
  RETURN_IF_ERROR(CheckSquare(f, x));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[1], x, {}, "info"));
  RETURN_IF_ERROR(CopyArgToRet(f, f.args[0], f.rets[0], "the factor"));
  return WithTarget(
      f, hostlib::Potrf<T>(static_cast<hostlib::UpLo>(uplo), x.batch, x.cols,
                           f.rets[0].template data<T>(), f.rets[1].template data<int32_t>()));
}

// gesdd and gesvd share jaxlib's binding: (x) -> (x_out, s, u, vt, info).
template <typename T, bool kDivideAndConquer>
absl::Status RunSvd(Frame& f) {
  constexpr PrimitiveType kReal = TypeOf<RealOf<T>>();
  RETURN_IF_ERROR(
      CheckSignature(f, {TypeOf<T>()}, {TypeOf<T>(), kReal, TypeOf<T>(), TypeOf<T>(), kS32}));
  RETURN_IF_ERROR(f.attrs.CheckNoOthers({"mode"}));
  ASSIGN_OR_RETURN(char mode, f.attrs.GetChar("mode", "ASON"));
  ASSIGN_OR_RETURN(Batch2D x, SplitBatch2D(f, f.args[0], "x"));
  ASSIGN_OR_RETURN(Batch2D u, SplitBatch2D(f, f.rets[2], "u"));
  ASSIGN_OR_RETURN(Batch2D vt, SplitBatch2D(f, f.rets[3], "vt"));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[1], x, {std::min(x.rows, x.cols)}, "s"));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[2], x, {u.rows, u.cols}, "u"));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[3], x, {vt.rows, vt.cols}, "vt"));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[4], x, {}, "info"));
  RETURN_IF_ERROR(CopyArgToRet(f, f.args[0], f.rets[0], "x_out"));
  auto* kernel = kDivideAndConquer ? &hostlib::Gesdd<T> : &hostlib::Gesvd<T>;
  return WithTarget(
      f, kernel(static_cast<hostlib::SvdMode>(mode), x.batch, x.rows, x.cols,
                f.rets[0].template data<T>(), f.rets[1].template data<RealOf<T>>(),
                f.rets[2].template data<T>(), u.rows, u.cols, f.rets[3].template data<T>(), vt.rows,
                vt.cols, f.rets[4].template data<int32_t>()));
}

template <typename T>
absl::Status RunSyevd(Frame& f) {
  RETURN_IF_ERROR(CheckSignature(f, {TypeOf<T>()}, {TypeOf<T>(), TypeOf<RealOf<T>>(), kS32}));
  RETURN_IF_ERROR(f.attrs.CheckNoOthers({"uplo", "mode"}));
  ASSIGN_OR_RETURN(char uplo, f.attrs.GetChar("uplo", "LU"));
  ASSIGN_OR_RETURN(char mode, f.attrs.GetChar("mode", "NV"));
  ASSIGN_OR_RETURN(Batch2D x, SplitBatch2D(f, f.args[0], "x"));
  RETURN_IF_ERROR(CheckSquare(f, x));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[1], x, {x.cols}, "eigenvalues"));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[2], x, {}, "info"));
  RETURN_IF_ERROR(CopyArgToRet(f, f.args[0], f.rets[0], "the eigenvectors"));
  return WithTarget(
      f,
      hostlib::Syevd<T>(static_cast<hostlib::EigMode>(mode), static_cast<hostlib::UpLo>(uplo),
                        x.batch, x.cols, f.rets[0].template data<T>(),
                        f.rets[1].template data<RealOf<T>>(), f.rets[2].template data<int32_t>()));
}

template <typename T>
absl::Status RunGeev(Frame& f) {
  RETURN_IF_ERROR(f.attrs.CheckNoOthers({"compute_left", "compute_right"}));
  ASSIGN_OR_RETURN(char left, f.attrs.GetChar("compute_left", "NV"));
  ASSIGN_OR_RETURN(char right, f.attrs.GetChar("compute_right", "NV"));
  const auto left_mode = static_cast<hostlib::EigMode>(left);
  const auto right_mode = static_cast<hostlib::EigMode>(right);
  if constexpr (hostlib::kIsComplex<T>) {
    RETURN_IF_ERROR(
        CheckSignature(f, {TypeOf<T>()}, {TypeOf<T>(), TypeOf<T>(), TypeOf<T>(), kS32}));
  } else {
    constexpr PrimitiveType kComplex = TypeOf<std::complex<T>>();
    RETURN_IF_ERROR(
        CheckSignature(f, {TypeOf<T>()}, {TypeOf<T>(), TypeOf<T>(), kComplex, kComplex, kS32}));
  }
  ASSIGN_OR_RETURN(Batch2D x, SplitBatch2D(f, f.args[0], "x"));
  RETURN_IF_ERROR(CheckSquare(f, x));
  const size_t vectors = f.rets.size() - 3;  // index of vl
  for (size_t i = 0; i < vectors; ++i) {
    RETURN_IF_ERROR(ExpectDims(f, f.rets[i], x, {x.cols}, "eigenvalues"));
  }
  RETURN_IF_ERROR(ExpectDims(f, f.rets[vectors], x, {x.cols, x.cols}, "left eigenvectors"));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[vectors + 1], x, {x.cols, x.cols}, "right eigenvectors"));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[vectors + 2], x, {}, "info"));
  int32_t* info = f.rets[vectors + 2].template data<int32_t>();
  if constexpr (hostlib::kIsComplex<T>) {
    return WithTarget(f, hostlib::GeevComplex<T>(
                             left_mode, right_mode, x.batch, x.cols, f.args[0].template data<T>(),
                             f.rets[0].template data<T>(), f.rets[1].template data<T>(),
                             f.rets[2].template data<T>(), info));
  } else {
    return WithTarget(f, hostlib::GeevReal<T>(
                             left_mode, right_mode, x.batch, x.cols, f.args[0].template data<T>(),
                             f.rets[0].template data<T>(), f.rets[1].template data<T>(),
                             f.rets[2].template data<std::complex<T>>(),
                             f.rets[3].template data<std::complex<T>>(), info));
  }
}

template <typename T>
absl::Status RunSytrd(Frame& f) {
  constexpr PrimitiveType kReal = TypeOf<RealOf<T>>();
  RETURN_IF_ERROR(CheckSignature(f, {TypeOf<T>()}, {TypeOf<T>(), kReal, kReal, TypeOf<T>(), kS32}));
  RETURN_IF_ERROR(f.attrs.CheckNoOthers({"uplo"}));
  ASSIGN_OR_RETURN(char uplo, f.attrs.GetChar("uplo", "LU"));
  ASSIGN_OR_RETURN(Batch2D x, SplitBatch2D(f, f.args[0], "x"));
  RETURN_IF_ERROR(CheckSquare(f, x));
  const int64_t off = std::max<int64_t>(x.cols - 1, 0);
  RETURN_IF_ERROR(ExpectDims(f, f.rets[1], x, {x.cols}, "the diagonal"));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[2], x, {off}, "the off-diagonal"));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[3], x, {off}, "tau"));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[4], x, {}, "info"));
  RETURN_IF_ERROR(CopyArgToRet(f, f.args[0], f.rets[0], "the result"));
  return WithTarget(
      f, hostlib::Sytrd<T>(static_cast<hostlib::UpLo>(uplo), x.batch, x.cols,
                           f.rets[0].template data<T>(), f.rets[1].template data<RealOf<T>>(),
                           f.rets[2].template data<RealOf<T>>(), f.rets[3].template data<T>(),
                           f.rets[4].template data<int32_t>()));
}

template <typename T>
absl::Status RunGees(Frame& f) {
  RETURN_IF_ERROR(f.attrs.CheckNoOthers({"mode", "sort"}));
  ASSIGN_OR_RETURN(char mode, f.attrs.GetChar("mode", "NV"));
  ASSIGN_OR_RETURN(char sort, f.attrs.GetChar("sort", "NS"));
  if constexpr (hostlib::kIsComplex<T>) {
    RETURN_IF_ERROR(
        CheckSignature(f, {TypeOf<T>()}, {TypeOf<T>(), TypeOf<T>(), TypeOf<T>(), kS32, kS32}));
  } else {
    RETURN_IF_ERROR(CheckSignature(
        f, {TypeOf<T>()}, {TypeOf<T>(), TypeOf<T>(), TypeOf<T>(), TypeOf<T>(), kS32, kS32}));
  }
  ASSIGN_OR_RETURN(Batch2D x, SplitBatch2D(f, f.args[0], "x"));
  RETURN_IF_ERROR(CheckSquare(f, x));
  const size_t eigenvalues = f.rets.size() - 4;
  RETURN_IF_ERROR(ExpectDims(f, f.rets[1], x, {x.cols, x.cols}, "the Schur vectors"));
  for (size_t i = 2; i < 2 + eigenvalues; ++i) {
    RETURN_IF_ERROR(ExpectDims(f, f.rets[i], x, {x.cols}, "eigenvalues"));
  }
  RETURN_IF_ERROR(ExpectDims(f, f.rets[2 + eigenvalues], x, {}, "selected_eigvals"));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[3 + eigenvalues], x, {}, "info"));
  RETURN_IF_ERROR(CopyArgToRet(f, f.args[0], f.rets[0], "the Schur form"));
  const auto mode_flag = static_cast<hostlib::SchurMode>(mode);
  const auto sort_flag = static_cast<hostlib::SchurSort>(sort);
  int32_t* sdim = f.rets[2 + eigenvalues].template data<int32_t>();
  int32_t* info = f.rets[3 + eigenvalues].template data<int32_t>();
  if constexpr (hostlib::kIsComplex<T>) {
    return WithTarget(
        f, hostlib::GeesComplex<T>(mode_flag, sort_flag, x.batch, x.cols,
                                   f.rets[0].template data<T>(), f.rets[1].template data<T>(),
                                   f.rets[2].template data<T>(), sdim, info));
  } else {
    return WithTarget(
        f, hostlib::GeesReal<T>(mode_flag, sort_flag, x.batch, x.cols, f.rets[0].template data<T>(),
                                f.rets[1].template data<T>(), f.rets[2].template data<T>(),
                                f.rets[3].template data<T>(), sdim, info));
  }
}

template <typename T>
absl::Status RunGehrd(Frame& f) {
  RETURN_IF_ERROR(CheckSignature(f, {TypeOf<T>()}, {TypeOf<T>(), TypeOf<T>(), kS32}));
  RETURN_IF_ERROR(f.attrs.CheckNoOthers({"low", "high"}));
  ASSIGN_OR_RETURN(int32_t low, f.attrs.GetI32("low"));
  ASSIGN_OR_RETURN(int32_t high, f.attrs.GetI32("high"));
  ASSIGN_OR_RETURN(Batch2D x, SplitBatch2D(f, f.args[0], "x"));
  RETURN_IF_ERROR(CheckSquare(f, x));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[1], x, {std::max<int64_t>(x.cols - 1, 0)}, "tau"));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[2], x, {}, "info"));
  RETURN_IF_ERROR(CopyArgToRet(f, f.args[0], f.rets[0], "the result"));
  return WithTarget(
      f, hostlib::Gehrd<T>(x.batch, x.cols, low, high, f.rets[0].template data<T>(),
                           f.rets[1].template data<T>(), f.rets[2].template data<int32_t>()));
}

template <typename T>
absl::Status RunGtsv(Frame& f) {
  const PrimitiveType t = TypeOf<T>();
  RETURN_IF_ERROR(CheckSignature(f, {t, t, t, t}, {t, t, t, t, kS32}));
  RETURN_IF_ERROR(f.attrs.CheckNoOthers({}));
  ASSIGN_OR_RETURN(Batch2D b, SplitBatch2D(f, f.args[3], "b"));
  for (int i = 0; i < 3; ++i) {
    RETURN_IF_ERROR(ExpectDims(f, f.args[i], b, {b.rows}, "each diagonal"));
    RETURN_IF_ERROR(CopyArgToRet(f, f.args[i], f.rets[i], "each diagonal result"));
  }
  RETURN_IF_ERROR(ExpectDims(f, f.rets[4], b, {}, "info"));
  RETURN_IF_ERROR(CopyArgToRet(f, f.args[3], f.rets[3], "the solution"));
  return WithTarget(
      f, hostlib::Gtsv<T>(b.batch, b.rows, b.cols, f.rets[0].template data<T>(),
                          f.rets[1].template data<T>(), f.rets[2].template data<T>(),
                          f.rets[3].template data<T>(), f.rets[4].template data<int32_t>()));
}

// ---------------------------------------------------------------------------
// Target names.

using Runner = absl::Status (*)(Frame&);

// The runner for the LAPACK type prefix s, d, c or z.
template <typename Make>
Runner ForPrefix(char prefix, Make make) {
  switch (prefix) {
    case 's':
      return make.template operator()<float>();
    case 'd':
      return make.template operator()<double>();
    case 'c':
      return make.template operator()<std::complex<float>>();
    case 'z':
      return make.template operator()<std::complex<double>>();
  }
  return nullptr;
}

// "lapack_<p><routine>_ffi": the runner, or null for a name jaxlib does not
// register. Real-only and complex-only routine names (orgqr/ungqr,
// syevd/heevd, sytrd/hetrd, ormqr/unmqr) take only their own prefixes.
Runner FindLapackRunner(absl::string_view target) {
  if (!absl::ConsumePrefix(&target, "lapack_") || !absl::ConsumeSuffix(&target, "_ffi") ||
      target.size() < 2) {
    return nullptr;
  }
  const char p = target[0];
  const absl::string_view routine = target.substr(1);
  const bool real = p == 's' || p == 'd', complex = p == 'c' || p == 'z';
  if (!real && !complex) return nullptr;
#define XLITE_RUNNER(Fn) [&]<typename T>() -> Runner { return &Fn<T>; }
  if (routine == "trsm") return ForPrefix(p, XLITE_RUNNER(RunTrsm));
  if (routine == "getrf") return ForPrefix(p, XLITE_RUNNER(RunGetrf));
  if (routine == "geqrf") return ForPrefix(p, XLITE_RUNNER(RunGeqrf));
  if (routine == "geqp3") return ForPrefix(p, XLITE_RUNNER(RunGeqp3));
  if (routine == (real ? "orgqr" : "ungqr")) return ForPrefix(p, XLITE_RUNNER(RunOrgqr));
  if (routine == (real ? "ormqr" : "unmqr")) return ForPrefix(p, XLITE_RUNNER(RunOrmqr));
  if (routine == "potrf") return ForPrefix(p, XLITE_RUNNER(RunPotrf));
  if (routine == (real ? "syevd" : "heevd")) return ForPrefix(p, XLITE_RUNNER(RunSyevd));
  if (routine == "geev") return ForPrefix(p, XLITE_RUNNER(RunGeev));
  if (routine == (real ? "sytrd" : "hetrd")) return ForPrefix(p, XLITE_RUNNER(RunSytrd));
  if (routine == "gees") return ForPrefix(p, XLITE_RUNNER(RunGees));
  if (routine == "gehrd") return ForPrefix(p, XLITE_RUNNER(RunGehrd));
  if (routine == "gtsv") return ForPrefix(p, XLITE_RUNNER(RunGtsv));
  if (routine == "gesdd") {
    return ForPrefix(p, [&]<typename T>() -> Runner { return &RunSvd<T, true>; });
  }
  if (routine == "gesvd") {
    return ForPrefix(p, [&]<typename T>() -> Runner { return &RunSvd<T, false>; });
  }
#undef XLITE_RUNNER
  return nullptr;
}

// Why a jaxlib (or JAX-emitted) target that we do not run cannot run here;
// nullopt for names that are not JAX's.
std::optional<std::string> UnsupportedReason(absl::string_view target) {
  static constexpr absl::string_view kPythonCallbacks[] = {
      "xla_python_cpu_callback",
      "xla_ffi_python_cpu_callback",
      "xla_ffi_partitioned_python_cpu_callback",
      "xla_python_gpu_callback",
      "xla_ffi_python_gpu_callback",
      "xla_ffi_partitioned_python_gpu_callback"};
  for (absl::string_view name : kPythonCallbacks) {
    if (target == name) {
      return "it calls back into JAX's Python runtime (jax.pure_callback, jax.experimental."
             "io_callback, jax.debug.print/callback), which a compiled module cannot carry";
    }
  }
  if (target == "ducc_fft" || target == "dynamic_ducc_fft") {
    return "jaxlib's old FFT custom call; current JAX emits the fft op instead";
  }
  if (target == "cpu_csr_sparse_dense_ffi") {
    return "jax.experimental.sparse's CSR kernel is not implemented";
  }
  if (target == "tridiagonal_solve_perturbed_ffi") {
    return "jaxlib's perturbed tridiagonal solver is not implemented";
  }
  for (absl::string_view prefix : {"cusolver_", "hipsolver_", "cusparse_", "hipsparse_", "cu_",
                                   "hip_", "cublas", "__cublas$", "__cudnn$", "__gpu$"}) {
    if (absl::StartsWith(target, prefix)) {
      return "a GPU (CUDA/ROCm) library call; this module was lowered for GPU, lower it for CPU";
    }
  }
  for (absl::string_view name : {"Eigh", "Qr", "ProductOfElementaryHouseholderReflectors",
                                 "LuDecomposition", "ApproxTopK", "tpu_custom_call"}) {
    if (target == name) return "a TPU target; this module was lowered for TPU, lower it for CPU";
  }
  if ((absl::StartsWith(target, "lapack_") || absl::StartsWith(target, "blas_")) &&
      !absl::EndsWith(target, "_ffi")) {
    return "jaxlib's legacy (pre-FFI) LAPACK calling convention from modules exported by old JAX "
           "versions; re-export with a current JAX";
  }
  if (absl::StartsWith(target, "lapack_")) return "not a LAPACK target jaxlib registers";
  return std::nullopt;
}

// The frontend attribute num_batch_dims (set for XLA's batch partitioner)
// must agree with the leading dimensions the kernels treat as batch.
absl::Status CheckNumBatchDims(const HloInstruction& instr, const Frame& frame) {
  auto it = instr.attrs().frontend_attributes.find("num_batch_dims");
  if (it == instr.attrs().frontend_attributes.end()) return absl::OkStatus();
  int64_t value = 0;
  if (!absl::SimpleAtoi(it->second, &value) || value < 0) {
    return frame.Error("frontend attribute num_batch_dims=\"", it->second,
                       "\" is not a non-negative integer");
  }
  int64_t max_rank = 0;
  for (const HostBuffer& b : frame.args) max_rank = std::max<int64_t>(max_rank, b.dims.size());
  if (max_rank - 2 != value) {
    return frame.Error("frontend attribute num_batch_dims=", value, " disagrees with the operands ",
                       "(rank ", max_rank, " matrices have ", max_rank - 2, " batch dimensions)");
  }
  return absl::OkStatus();
}

}  // namespace

bool IsJaxlibCustomCallTarget(absl::string_view target) {
  return FindLapackRunner(target) != nullptr || UnsupportedReason(target).has_value();
}

absl::StatusOr<Literal> EvalJaxlibCustomCall(const HloInstruction& instr,
                                             absl::Span<const Literal* const> operands) {
  const std::string& target = instr.attrs().custom_call_target;
  Runner runner = FindLapackRunner(target);
  if (runner == nullptr) {
    std::optional<std::string> reason = UnsupportedReason(target);
    return Unsupported(instr, absl::StrCat("custom-call target \"", target, "\" (",
                                           reason ? *reason : "unknown target", ")"));
  }
  Frame frame;
  frame.target = target;
  if (instr.attrs().api_version != "API_VERSION_TYPED_FFI") {
    return frame.Error(
        "is a typed-FFI handler and needs api_version=API_VERSION_TYPED_FFI, got ",
        instr.attrs().api_version.empty() ? "the original API" : instr.attrs().api_version);
  }
  absl::StatusOr<FfiAttributes> attrs = hostlib::ParseFfiAttributes(instr.attrs().backend_config);
  if (!attrs.ok()) return WithTarget(frame, attrs.status());
  frame.attrs = std::move(*attrs);

  // Operands: laid out per operand_layout_constraints (XLA's layout
  // assignment honors them); without constraints everything is row-major.
  const std::optional<std::vector<Shape>>& constraints = instr.attrs().operand_layout_constraints;
  const bool constrained = constraints.has_value();
  if (constrained && constraints->size() != operands.size()) {
    return frame.Error("has ", operands.size(), " operands but ", constraints->size(),
                       " operand_layout_constraints");
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    const Shape& shape = constrained ? (*constraints)[i] : operands[i]->shape();
    if (!shape.EqualIgnoringLayout(operands[i]->shape())) {
      return frame.Error("operand_layout_constraints[", i, "] ", shape.ToString(false),
                         " does not match operand ", operands[i]->shape().ToString(false));
    }
    absl::StatusOr<HostBuffer> buffer = AllocateBuffer(shape, constrained);
    if (!buffer.ok()) return WithTarget(frame, buffer.status());
    CopyIn(*operands[i], *buffer);
    frame.args.push_back(std::move(*buffer));
  }
  // Results: one array, or a tuple of arrays.
  const Shape& shape = instr.shape();
  std::vector<const Shape*> result_shapes;
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) result_shapes.push_back(&s);
  } else {
    result_shapes.push_back(&shape);
  }
  for (const Shape* s : result_shapes) {
    absl::StatusOr<HostBuffer> buffer = AllocateBuffer(*s, constrained);
    if (!buffer.ok()) return WithTarget(frame, buffer.status());
    frame.rets.push_back(std::move(*buffer));
  }
  // Aliased pairs share one buffer in XLA: same shape and layout.
  for (const OutputOperandAlias& alias : instr.attrs().output_to_operand_aliasing) {
    const size_t out = alias.output_index.empty() ? 0 : alias.output_index[0];
    if (alias.output_index.size() > 1 || !alias.operand_index.empty() || out >= frame.rets.size() ||
        alias.operand < 0 || alias.operand >= static_cast<int64_t>(frame.args.size())) {
      return frame.Error("output_to_operand_aliasing names a result or operand it does not have");
    }
    const HostBuffer& arg = frame.args[alias.operand];
    const HostBuffer& ret = frame.rets[out];
    if (arg.type != ret.type || arg.dims != ret.dims || arg.minor_to_major != ret.minor_to_major) {
      return frame.Error("result ", out, " aliases operand ", alias.operand,
                         " but their shapes or layouts differ");
    }
  }
  RETURN_IF_ERROR(CheckNumBatchDims(instr, frame));

  RETURN_IF_ERROR(runner(frame));

  Literal result = ResultLiteral(instr);
  if (shape.IsTuple()) {
    for (size_t i = 0; i < frame.rets.size(); ++i) {
      CopyOut(frame.rets[i], result.tuple_elements()[i]);
    }
  } else {
    CopyOut(frame.rets[0], result);
  }
  return result;
}

}  // namespace xlite::eval
