// jaxlib's typed-FFI LAPACK custom-call targets (lapack_?getrf_ffi, ...):
// the operand, result and attribute lists of jaxlib's handlers
// (JAX_CPU_DEFINE_* in jaxlib/cpu/lapack_kernels.cc), checked and run on
// lapack.h's kernels. Buffers hold batches of column-major matrices, as the
// calls' layout constraints put them.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "xlite/hostlib/custom_call_registry.h"
#include "xlite/hostlib/lapack.h"
#include "xlite/support/status.h"

namespace xlite::hostlib {
namespace {

std::string DimsString(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

// The element types and counts of the arguments and results, as the
// handler's binding declares them.
absl::Status CheckSignature(const FfiCallFrame& frame, std::vector<ElementType> args,
                            std::vector<ElementType> rets) {
  auto check = [&](const std::vector<FfiBuffer>& have, const std::vector<ElementType>& want,
                   absl::string_view what) -> absl::Status {
    if (have.size() != want.size()) {
      return frame.Error("takes ", want.size(), " ", what, "s, got ", have.size());
    }
    for (size_t i = 0; i < want.size(); ++i) {
      if (have[i].type != want[i]) {
        return frame.Error(what, " ", i, " must be ", ElementTypeName(want[i]), ", got ",
                           ElementTypeName(have[i].type));
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
absl::StatusOr<Batch2D> SplitBatch2D(const FfiCallFrame& frame, const FfiBuffer& buffer,
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
absl::Status ExpectDims(const FfiCallFrame& frame, const FfiBuffer& buffer, const Batch2D& batch,
                        std::vector<int64_t> tail, absl::string_view what) {
  std::vector<int64_t> want = batch.batch_dims;
  want.insert(want.end(), tail.begin(), tail.end());
  if (buffer.dims != want) {
    return frame.Error(what, " must be ", DimsString(want), ", got ", DimsString(buffer.dims));
  }
  return absl::OkStatus();
}

// jaxlib's CopyIfDiffBuffer: the kernel starts from a raw copy of the operand.
absl::Status CopyArgToRet(const FfiCallFrame& frame, const FfiBuffer& arg, FfiBuffer& ret,
                          absl::string_view what) {
  if (arg.bytes() != ret.bytes()) {
    return frame.Error(what, " must have the operand's size, got ", DimsString(ret.dims), " for ",
                       DimsString(arg.dims));
  }
  if (ret.data != arg.data) std::memmove(ret.data, arg.data, arg.bytes());
  return absl::OkStatus();
}

absl::Status CheckSquare(const FfiCallFrame& frame, const Batch2D& x) {
  if (x.rows != x.cols) {
    return frame.Error("expects square matrices, got ", x.rows, "x", x.cols);
  }
  return absl::OkStatus();
}

template <typename T>
constexpr ElementType TypeOf() {
  if constexpr (std::is_same_v<T, float>) return ElementType::kF32;
  if constexpr (std::is_same_v<T, double>) return ElementType::kF64;
  if constexpr (std::is_same_v<T, std::complex<float>>) return ElementType::kC64;
  if constexpr (std::is_same_v<T, std::complex<double>>) return ElementType::kC128;
}
constexpr ElementType kS32 = ElementType::kS32;

absl::Status WithTarget(const FfiCallFrame& frame, absl::Status status) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(frame.target, ": ", status.message()));
}

// ---------------------------------------------------------------------------
// The targets. Operand, result and attribute lists are jaxlib's
// (JAX_CPU_DEFINE_* in jaxlib/cpu/lapack_kernels.cc).

template <typename T>
absl::Status RunTrsm(FfiCallFrame& f) {
  // Current jaxlib binds (x, y); older ones (x, y, alpha: scalar).
  std::vector<ElementType> args = {TypeOf<T>(), TypeOf<T>()};
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
    std::memcpy(&alpha, f.args[2].data, sizeof(T));
  }
  RETURN_IF_ERROR(CopyArgToRet(f, f.args[1], f.rets[0], "the result"));
  return WithTarget(
      f, Trsm<T>(static_cast<Side>(side), static_cast<UpLo>(uplo), static_cast<Transpose>(trans),
                 static_cast<Diag>(diag), alpha, y.batch, y.rows, y.cols,
                 f.args[0].template typed<T>(), f.rets[0].template typed<T>()));
}

template <typename T>
absl::Status RunGetrf(FfiCallFrame& f) {
  RETURN_IF_ERROR(CheckSignature(f, {TypeOf<T>()}, {TypeOf<T>(), kS32, kS32}));
  RETURN_IF_ERROR(f.attrs.CheckNoOthers({}));
  ASSIGN_OR_RETURN(Batch2D x, SplitBatch2D(f, f.args[0], "x"));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[1], x, {std::min(x.rows, x.cols)}, "ipiv"));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[2], x, {}, "info"));
  RETURN_IF_ERROR(CopyArgToRet(f, f.args[0], f.rets[0], "the LU result"));
  return WithTarget(
      f, Getrf<T>(x.batch, x.rows, x.cols, f.rets[0].template typed<T>(),
                  f.rets[1].template typed<int32_t>(), f.rets[2].template typed<int32_t>()));
}

template <typename T>
absl::Status RunGeqrf(FfiCallFrame& f) {
  RETURN_IF_ERROR(CheckSignature(f, {TypeOf<T>()}, {TypeOf<T>(), TypeOf<T>()}));
  RETURN_IF_ERROR(f.attrs.CheckNoOthers({}));
  ASSIGN_OR_RETURN(Batch2D x, SplitBatch2D(f, f.args[0], "x"));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[1], x, {std::min(x.rows, x.cols)}, "tau"));
  RETURN_IF_ERROR(CopyArgToRet(f, f.args[0], f.rets[0], "the QR result"));
  return WithTarget(f, Geqrf<T>(x.batch, x.rows, x.cols, f.rets[0].template typed<T>(),
                                f.rets[1].template typed<T>()));
}

template <typename T>
absl::Status RunGeqp3(FfiCallFrame& f) {
  RETURN_IF_ERROR(CheckSignature(f, {TypeOf<T>(), kS32}, {TypeOf<T>(), kS32, TypeOf<T>()}));
  RETURN_IF_ERROR(f.attrs.CheckNoOthers({}));
  ASSIGN_OR_RETURN(Batch2D x, SplitBatch2D(f, f.args[0], "x"));
  RETURN_IF_ERROR(ExpectDims(f, f.args[1], x, {x.cols}, "jpvt"));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[2], x, {std::min(x.rows, x.cols)}, "tau"));
  RETURN_IF_ERROR(CopyArgToRet(f, f.args[0], f.rets[0], "the QR result"));
  RETURN_IF_ERROR(CopyArgToRet(f, f.args[1], f.rets[1], "jpvt_out"));
  return WithTarget(f,
                    Geqp3<T>(x.batch, x.rows, x.cols, f.rets[0].template typed<T>(),
                             f.rets[1].template typed<int32_t>(), f.rets[2].template typed<T>()));
}

template <typename T>
absl::Status RunOrgqr(FfiCallFrame& f) {
  RETURN_IF_ERROR(CheckSignature(f, {TypeOf<T>(), TypeOf<T>()}, {TypeOf<T>()}));
  RETURN_IF_ERROR(f.attrs.CheckNoOthers({}));
  ASSIGN_OR_RETURN(Batch2D x, SplitBatch2D(f, f.args[0], "x"));
  if (f.args[1].dims.empty()) return f.Error("tau must have rank >= 1");
  const int64_t k = f.args[1].dims.back();
  RETURN_IF_ERROR(ExpectDims(f, f.args[1], x, {k}, "tau"));
  RETURN_IF_ERROR(CopyArgToRet(f, f.args[0], f.rets[0], "the result"));
  return WithTarget(f, Orgqr<T>(x.batch, x.rows, x.cols, k, f.rets[0].template typed<T>(),
                                f.args[1].template typed<T>()));
}

template <typename T>
absl::Status RunOrmqr(FfiCallFrame& f) {
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
  return WithTarget(
      f, Ormqr<T>(left, transpose, c.batch, c.rows, c.cols, k, f.args[0].template typed<T>(),
                  a.rows, a.cols, f.args[1].template typed<T>(), f.rets[0].template typed<T>()));
}

template <typename T>
absl::Status RunPotrf(FfiCallFrame& f) {
  RETURN_IF_ERROR(CheckSignature(f, {TypeOf<T>()}, {TypeOf<T>(), kS32}));
  RETURN_IF_ERROR(f.attrs.CheckNoOthers({"uplo"}));
  ASSIGN_OR_RETURN(char uplo, f.attrs.GetChar("uplo", "LU"));
  ASSIGN_OR_RETURN(Batch2D x, SplitBatch2D(f, f.args[0], "x"));
  RETURN_IF_ERROR(CheckSquare(f, x));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[1], x, {}, "info"));
  RETURN_IF_ERROR(CopyArgToRet(f, f.args[0], f.rets[0], "the factor"));
  return WithTarget(
      f, Potrf<T>(static_cast<UpLo>(uplo), x.batch, x.cols, f.rets[0].template typed<T>(),
                  f.rets[1].template typed<int32_t>()));
}

// gesdd and gesvd share jaxlib's binding: (x) -> (x_out, s, u, vt, info).
template <typename T, bool kDivideAndConquer>
absl::Status RunSvd(FfiCallFrame& f) {
  constexpr ElementType kReal = TypeOf<RealOf<T>>();
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
  auto* kernel = kDivideAndConquer ? &Gesdd<T> : &Gesvd<T>;
  return WithTarget(
      f,
      kernel(static_cast<SvdMode>(mode), x.batch, x.rows, x.cols, f.rets[0].template typed<T>(),
             f.rets[1].template typed<RealOf<T>>(), f.rets[2].template typed<T>(), u.rows, u.cols,
             f.rets[3].template typed<T>(), vt.rows, vt.cols, f.rets[4].template typed<int32_t>()));
}

template <typename T>
absl::Status RunSyevd(FfiCallFrame& f) {
  RETURN_IF_ERROR(CheckSignature(f, {TypeOf<T>()}, {TypeOf<T>(), TypeOf<RealOf<T>>(), kS32}));
  RETURN_IF_ERROR(f.attrs.CheckNoOthers({"uplo", "mode"}));
  ASSIGN_OR_RETURN(char uplo, f.attrs.GetChar("uplo", "LU"));
  ASSIGN_OR_RETURN(char mode, f.attrs.GetChar("mode", "NV"));
  ASSIGN_OR_RETURN(Batch2D x, SplitBatch2D(f, f.args[0], "x"));
  RETURN_IF_ERROR(CheckSquare(f, x));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[1], x, {x.cols}, "eigenvalues"));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[2], x, {}, "info"));
  RETURN_IF_ERROR(CopyArgToRet(f, f.args[0], f.rets[0], "the eigenvectors"));
  return WithTarget(f,
                    Syevd<T>(static_cast<EigMode>(mode), static_cast<UpLo>(uplo), x.batch, x.cols,
                             f.rets[0].template typed<T>(), f.rets[1].template typed<RealOf<T>>(),
                             f.rets[2].template typed<int32_t>()));
}

template <typename T>
absl::Status RunGeev(FfiCallFrame& f) {
  RETURN_IF_ERROR(f.attrs.CheckNoOthers({"compute_left", "compute_right"}));
  ASSIGN_OR_RETURN(char left, f.attrs.GetChar("compute_left", "NV"));
  ASSIGN_OR_RETURN(char right, f.attrs.GetChar("compute_right", "NV"));
  const auto left_mode = static_cast<EigMode>(left);
  const auto right_mode = static_cast<EigMode>(right);
  if constexpr (kIsComplex<T>) {
    RETURN_IF_ERROR(
        CheckSignature(f, {TypeOf<T>()}, {TypeOf<T>(), TypeOf<T>(), TypeOf<T>(), kS32}));
  } else {
    constexpr ElementType kComplex = TypeOf<std::complex<T>>();
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
  int32_t* info = f.rets[vectors + 2].template typed<int32_t>();
  if constexpr (kIsComplex<T>) {
    return WithTarget(
        f, GeevComplex<T>(left_mode, right_mode, x.batch, x.cols, f.args[0].template typed<T>(),
                          f.rets[0].template typed<T>(), f.rets[1].template typed<T>(),
                          f.rets[2].template typed<T>(), info));
  } else {
    return WithTarget(
        f, GeevReal<T>(left_mode, right_mode, x.batch, x.cols, f.args[0].template typed<T>(),
                       f.rets[0].template typed<T>(), f.rets[1].template typed<T>(),
                       f.rets[2].template typed<std::complex<T>>(),
                       f.rets[3].template typed<std::complex<T>>(), info));
  }
}

template <typename T>
absl::Status RunSytrd(FfiCallFrame& f) {
  constexpr ElementType kReal = TypeOf<RealOf<T>>();
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
      f, Sytrd<T>(static_cast<UpLo>(uplo), x.batch, x.cols, f.rets[0].template typed<T>(),
                  f.rets[1].template typed<RealOf<T>>(), f.rets[2].template typed<RealOf<T>>(),
                  f.rets[3].template typed<T>(), f.rets[4].template typed<int32_t>()));
}

template <typename T>
absl::Status RunGees(FfiCallFrame& f) {
  RETURN_IF_ERROR(f.attrs.CheckNoOthers({"mode", "sort"}));
  ASSIGN_OR_RETURN(char mode, f.attrs.GetChar("mode", "NV"));
  ASSIGN_OR_RETURN(char sort, f.attrs.GetChar("sort", "NS"));
  if constexpr (kIsComplex<T>) {
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
  const auto mode_flag = static_cast<SchurMode>(mode);
  const auto sort_flag = static_cast<SchurSort>(sort);
  int32_t* sdim = f.rets[2 + eigenvalues].template typed<int32_t>();
  int32_t* info = f.rets[3 + eigenvalues].template typed<int32_t>();
  if constexpr (kIsComplex<T>) {
    return WithTarget(
        f,
        GeesComplex<T>(mode_flag, sort_flag, x.batch, x.cols, f.rets[0].template typed<T>(),
                       f.rets[1].template typed<T>(), f.rets[2].template typed<T>(), sdim, info));
  } else {
    return WithTarget(
        f, GeesReal<T>(mode_flag, sort_flag, x.batch, x.cols, f.rets[0].template typed<T>(),
                       f.rets[1].template typed<T>(), f.rets[2].template typed<T>(),
                       f.rets[3].template typed<T>(), sdim, info));
  }
}

template <typename T>
absl::Status RunGehrd(FfiCallFrame& f) {
  RETURN_IF_ERROR(CheckSignature(f, {TypeOf<T>()}, {TypeOf<T>(), TypeOf<T>(), kS32}));
  RETURN_IF_ERROR(f.attrs.CheckNoOthers({"low", "high"}));
  ASSIGN_OR_RETURN(int32_t low, f.attrs.GetI32("low"));
  ASSIGN_OR_RETURN(int32_t high, f.attrs.GetI32("high"));
  ASSIGN_OR_RETURN(Batch2D x, SplitBatch2D(f, f.args[0], "x"));
  RETURN_IF_ERROR(CheckSquare(f, x));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[1], x, {std::max<int64_t>(x.cols - 1, 0)}, "tau"));
  RETURN_IF_ERROR(ExpectDims(f, f.rets[2], x, {}, "info"));
  RETURN_IF_ERROR(CopyArgToRet(f, f.args[0], f.rets[0], "the result"));
  return WithTarget(f,
                    Gehrd<T>(x.batch, x.cols, low, high, f.rets[0].template typed<T>(),
                             f.rets[1].template typed<T>(), f.rets[2].template typed<int32_t>()));
}

template <typename T>
absl::Status RunGtsv(FfiCallFrame& f) {
  const ElementType t = TypeOf<T>();
  RETURN_IF_ERROR(CheckSignature(f, {t, t, t, t}, {t, t, t, t, kS32}));
  RETURN_IF_ERROR(f.attrs.CheckNoOthers({}));
  ASSIGN_OR_RETURN(Batch2D b, SplitBatch2D(f, f.args[3], "b"));
  for (int i = 0; i < 3; ++i) {
    RETURN_IF_ERROR(ExpectDims(f, f.args[i], b, {b.rows}, "each diagonal"));
    RETURN_IF_ERROR(CopyArgToRet(f, f.args[i], f.rets[i], "each diagonal result"));
  }
  RETURN_IF_ERROR(ExpectDims(f, f.rets[4], b, {}, "info"));
  RETURN_IF_ERROR(CopyArgToRet(f, f.args[3], f.rets[3], "the solution"));
  return WithTarget(f, Gtsv<T>(b.batch, b.rows, b.cols, f.rets[0].template typed<T>(),
                               f.rets[1].template typed<T>(), f.rets[2].template typed<T>(),
                               f.rets[3].template typed<T>(), f.rets[4].template typed<int32_t>()));
}

// ---------------------------------------------------------------------------
// Registration.

// Registers `Run<T>` as lapack_<p><routine>_ffi for each type prefix.
template <template <typename> class Runner>
void RegisterForTypes(CustomCallRegistry& registry, absl::string_view real_routine,
                      absl::string_view complex_routine) {
  auto add = [&](char prefix, absl::string_view routine, CustomCallHandler handler) {
    absl::Status status = registry.Register(
        absl::StrCat("lapack_", std::string(1, prefix), routine, "_ffi"), handler);
    (void)status;  // registered once, at the registry's creation
  };
  add('s', real_routine, &Runner<float>::Run);
  add('d', real_routine, &Runner<double>::Run);
  add('c', complex_routine, &Runner<std::complex<float>>::Run);
  add('z', complex_routine, &Runner<std::complex<double>>::Run);
}

#define XLITE_RUNNER(Name, Fn)                                    \
  template <typename T>                                           \
  struct Name {                                                   \
    static absl::Status Run(FfiCallFrame& f) { return Fn<T>(f); } \
  };
XLITE_RUNNER(TrsmRunner, RunTrsm)
XLITE_RUNNER(GetrfRunner, RunGetrf)
XLITE_RUNNER(GeqrfRunner, RunGeqrf)
XLITE_RUNNER(Geqp3Runner, RunGeqp3)
XLITE_RUNNER(OrgqrRunner, RunOrgqr)
XLITE_RUNNER(OrmqrRunner, RunOrmqr)
XLITE_RUNNER(PotrfRunner, RunPotrf)
XLITE_RUNNER(SyevdRunner, RunSyevd)
XLITE_RUNNER(GeevRunner, RunGeev)
XLITE_RUNNER(SytrdRunner, RunSytrd)
XLITE_RUNNER(GeesRunner, RunGees)
XLITE_RUNNER(GehrdRunner, RunGehrd)
XLITE_RUNNER(GtsvRunner, RunGtsv)
#undef XLITE_RUNNER
template <typename T>
struct GesddRunner {
  static absl::Status Run(FfiCallFrame& f) { return RunSvd<T, true>(f); }
};
template <typename T>
struct GesvdRunner {
  static absl::Status Run(FfiCallFrame& f) { return RunSvd<T, false>(f); }
};

}  // namespace

void RegisterLapackTargets(CustomCallRegistry& registry) {
  // Real-only and complex-only routine names take only their own prefixes.
  RegisterForTypes<TrsmRunner>(registry, "trsm", "trsm");
  RegisterForTypes<GetrfRunner>(registry, "getrf", "getrf");
  RegisterForTypes<GeqrfRunner>(registry, "geqrf", "geqrf");
  RegisterForTypes<Geqp3Runner>(registry, "geqp3", "geqp3");
  RegisterForTypes<OrgqrRunner>(registry, "orgqr", "ungqr");
  RegisterForTypes<OrmqrRunner>(registry, "ormqr", "unmqr");
  RegisterForTypes<PotrfRunner>(registry, "potrf", "potrf");
  RegisterForTypes<SyevdRunner>(registry, "syevd", "heevd");
  RegisterForTypes<GeevRunner>(registry, "geev", "geev");
  RegisterForTypes<SytrdRunner>(registry, "sytrd", "hetrd");
  RegisterForTypes<GeesRunner>(registry, "gees", "gees");
  RegisterForTypes<GehrdRunner>(registry, "gehrd", "gehrd");
  RegisterForTypes<GtsvRunner>(registry, "gtsv", "gtsv");
  RegisterForTypes<GesddRunner>(registry, "gesdd", "gesdd");
  RegisterForTypes<GesvdRunner>(registry, "gesvd", "gesvd");
}

}  // namespace xlite::hostlib
