#include "xlite/cpu/library_emitter.h"

#include <cstring>
#include <functional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "xlite/cpu/library_thunk.h"
#include "xlite/cpu/physical_layout.h"
#include "xlite/hostlib/convolution.h"
#include "xlite/hostlib/custom_call_registry.h"
#include "xlite/hostlib/element_type.h"
#include "xlite/hostlib/ffi_attributes.h"
#include "xlite/hostlib/fft.h"
#include "xlite/hostlib/linalg_ops.h"
#include "xlite/hostlib/matmul.h"
#include "xlite/hostlib/top_k.h"
#include "xlite/passes/conv_canonicalization.h"
#include "xlite/passes/dot_decomposer.h"
#include "xlite/stablehlo/check_ops.h"
#include "xlite/support/status.h"

namespace xlite::cpu {
namespace {

using hostlib::ElementType;

absl::StatusOr<ElementType> HostType(const HloInstruction& instr, PrimitiveType type) {
  std::optional<ElementType> t = hostlib::ElementTypeFromName(PrimitiveTypeName(type));
  if (!t) {
    return UnsupportedLibraryCall(
        instr, absl::StrCat("element type ", PrimitiveTypeName(type), " in a library call"));
  }
  return *t;
}

int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < dims.size(); ++i) p *= dims[i];
  return p;
}

std::vector<BufferUse> Uses(const std::vector<BufferSlice>& reads,
                            const std::vector<BufferSlice>& writes) {
  std::vector<BufferUse> uses;
  for (const BufferSlice& s : reads) uses.push_back(BufferUse::Read(s));
  for (const BufferSlice& s : writes) uses.push_back(BufferUse::Write(s));
  return uses;
}

std::unique_ptr<Thunk> Library(ThunkInfo info, const std::vector<BufferSlice>& reads,
                               const std::vector<BufferSlice>& writes, LibraryThunk::Call call,
                               std::string details) {
  return std::make_unique<LibraryThunk>(Thunk::Kind::kLibrary, std::move(info), Uses(reads, writes),
                                        std::move(call), std::move(details));
}

absl::StatusOr<std::unique_ptr<Thunk>> EmitDot(const HloInstruction& instr, ThunkInfo info,
                                               const std::vector<BufferSlice>& operands,
                                               const std::vector<BufferSlice>& outputs) {
  if (!IsCanonicalDot(instr)) {
    return UnsupportedLibraryCall(instr, "a dot not in canonical form (dot-decomposer's)");
  }
  const CanonicalDotDims dims = DimsOfCanonicalDot(instr);
  hostlib::MatmulShape shape;
  shape.batch = dims.batch;
  shape.m = dims.m;
  shape.k = dims.k;
  shape.n = dims.n;
  shape.transpose_lhs = dims.lhs_transposed;
  shape.transpose_rhs = dims.rhs_transposed;
  ASSIGN_OR_RETURN(ElementType lt, HostType(instr, instr.operand(0)->shape().element_type()));
  ASSIGN_OR_RETURN(ElementType rt, HostType(instr, instr.operand(1)->shape().element_type()));
  ASSIGN_OR_RETURN(ElementType ot, HostType(instr, instr.shape().element_type()));
  std::string details =
      absl::StrCat("matmul b=", shape.batch, " m=", shape.m, " k=", shape.k, " n=", shape.n, " ",
                   hostlib::ElementTypeName(lt), shape.transpose_lhs ? "^T" : "", "x",
                   hostlib::ElementTypeName(rt), shape.transpose_rhs ? "^T" : "", "->",
                   hostlib::ElementTypeName(ot));
  // A team sgemm under any budget of two threads or more (hostlib::Matmul).
  info.forks_thread_team = hostlib::IsTeamSgemm(shape, lt, rt, ot, /*threads=*/2);
  LibraryThunk::ParallelCall call = [=](absl::Span<void* const> a, TaskRunner* runner) {
    return hostlib::Matmul(shape, lt, a[0], rt, a[1], ot, a[2], hostlib::MatmulBackend::kAuto,
                           nullptr, HostParallelismOf(runner));
  };
  return std::make_unique<LibraryThunk>(Thunk::Kind::kLibrary, std::move(info),
                                        Uses(operands, outputs), std::move(call),
                                        std::move(details));
}

absl::StatusOr<std::unique_ptr<Thunk>> EmitConvolution(const HloInstruction& instr, ThunkInfo info,
                                                       const std::vector<BufferSlice>& operands,
                                                       const std::vector<BufferSlice>& outputs) {
  if (!IsCanonicalConvolution(instr)) {
    return UnsupportedLibraryCall(instr,
                                  "a convolution not in canonical form (conv-canonicalization's)");
  }
  const std::vector<int64_t>& lhs = instr.operand(0)->shape().dimensions();
  const std::vector<int64_t>& rhs = instr.operand(1)->shape().dimensions();
  const std::vector<int64_t>& out = instr.shape().dimensions();
  const size_t spatial = lhs.size() - 2;
  // No window: a convolution without spatial dimensions.
  static const std::vector<WindowDimension>* const kNoWindow = new std::vector<WindowDimension>();
  const std::vector<WindowDimension>& window =
      instr.attrs().window ? instr.attrs().window->dimensions : *kNoWindow;
  if (window.size() != spatial || rhs.size() != spatial + 2 || out.size() != spatial + 2) {
    return UnsupportedLibraryCall(instr, "a convolution whose window and ranks disagree");
  }
  hostlib::ConvolutionShape shape;
  shape.batch = lhs[0];
  shape.input_features = lhs.back();
  shape.output_features = rhs.back();
  shape.feature_group_count = instr.attrs().feature_group_count;
  shape.batch_group_count = instr.attrs().batch_group_count;
  for (size_t d = 0; d < spatial; ++d) {
    shape.input_spatial.push_back(lhs[1 + d]);
    shape.kernel_spatial.push_back(rhs[d]);
    shape.output_spatial.push_back(out[1 + d]);
    shape.strides.push_back(window[d].stride);
    shape.padding_low.push_back(window[d].padding_low);
    shape.padding_high.push_back(window[d].padding_high);
    shape.lhs_dilation.push_back(window[d].base_dilation);
    shape.rhs_dilation.push_back(window[d].window_dilation);
    shape.window_reversal.push_back(window[d].window_reversal);
  }
  if (absl::Status s = shape.Validate(); !s.ok()) {
    return UnsupportedLibraryCall(instr, absl::StrCat("convolution ", s.message()));
  }
  ASSIGN_OR_RETURN(ElementType lt, HostType(instr, instr.operand(0)->shape().element_type()));
  ASSIGN_OR_RETURN(ElementType rt, HostType(instr, instr.operand(1)->shape().element_type()));
  ASSIGN_OR_RETURN(ElementType ot, HostType(instr, instr.shape().element_type()));
  std::string details = absl::StrCat("convolution ", shape.ToString());
  info.forks_thread_team = true;  // hostlib::Convolution's oneDNN primitive
  return Library(
      std::move(info), operands, outputs,
      [=](absl::Span<void* const> a) {
        return hostlib::Convolution(shape, lt, a[0], rt, a[1], ot, a[2]);
      },
      std::move(details));
}

absl::StatusOr<std::unique_ptr<Thunk>> EmitFft(const HloInstruction& instr, ThunkInfo info,
                                               const std::vector<BufferSlice>& operands,
                                               const std::vector<BufferSlice>& outputs) {
  const std::string& kind = instr.attrs().fft_type;
  hostlib::FftType type;
  if (kind == "FFT") {
    type = hostlib::FftType::kFft;
  } else if (kind == "IFFT") {
    type = hostlib::FftType::kIfft;
  } else if (kind == "RFFT") {
    type = hostlib::FftType::kRfft;
  } else if (kind == "IRFFT") {
    type = hostlib::FftType::kIrfft;
  } else {
    return UnsupportedLibraryCall(instr, absl::StrCat("fft_type ", kind));
  }
  const std::vector<int64_t> length = instr.attrs().fft_length;
  const Shape& in = instr.operand(0)->shape();
  // The real side decides the precision: f32/c64 or f64/c128.
  const PrimitiveType t = instr.shape().element_type();
  const PrimitiveType real_or_complex = type == hostlib::FftType::kIrfft ? t : in.element_type();
  ElementType precision;
  if (real_or_complex == PrimitiveType::F32 || real_or_complex == PrimitiveType::C64) {
    precision = ElementType::kF32;
  } else if (real_or_complex == PrimitiveType::F64 || real_or_complex == PrimitiveType::C128) {
    precision = ElementType::kF64;
  } else {
    return UnsupportedLibraryCall(instr,
                                  absl::StrCat("fft of ", PrimitiveTypeName(in.element_type())));
  }
  if (length.empty() || length.size() > 3 || static_cast<int64_t>(length.size()) > in.rank()) {
    return UnsupportedLibraryCall(instr, absl::StrCat("fft over ", length.size(), " dimensions"));
  }
  const int64_t batch = Product(in.dimensions(), 0, in.rank() - length.size());
  return Library(
      std::move(info), operands, outputs,
      [=](absl::Span<void* const> a) {
        return hostlib::Fft(type, precision, batch, length, a[0], a[1]);
      },
      absl::StrCat("fft ", kind, " batch=", batch, " length=", absl::StrJoin(length, "x")));
}

absl::StatusOr<std::unique_ptr<Thunk>> EmitTopK(const HloInstruction& instr, ThunkInfo info,
                                                const std::vector<BufferSlice>& operands,
                                                const std::vector<BufferSlice>& outputs) {
  const Shape& in = instr.operand(0)->shape();
  if (in.rank() < 1 || outputs.size() != 2 || !instr.shape().IsTuple() ||
      instr.shape().tuple_shapes(1).element_type() != PrimitiveType::S32) {
    return UnsupportedLibraryCall(instr, "a topk other than array -> (values, s32 indices)");
  }
  ASSIGN_OR_RETURN(ElementType type, HostType(instr, in.element_type()));
  const int64_t n = in.dimensions().back();
  const int64_t rows = Product(in.dimensions(), 0, in.rank() - 1);
  const int64_t k = instr.shape().tuple_shapes(0).dimensions().back();
  const bool largest = instr.attrs().largest;
  return Library(
      std::move(info), operands, outputs,
      [=](absl::Span<void* const> a) {
        return hostlib::TopK(type, rows, n, k, largest, a[0], a[1], static_cast<int32_t*>(a[2]));
      },
      absl::StrCat("topk rows=", rows, " n=", n, " k=", k, largest ? " largest" : " smallest"));
}

absl::StatusOr<std::unique_ptr<Thunk>> EmitCholesky(const HloInstruction& instr, ThunkInfo info,
                                                    const std::vector<BufferSlice>& operands,
                                                    const std::vector<BufferSlice>& outputs) {
  const Shape& a = instr.operand(0)->shape();
  if (a.rank() < 2) return UnsupportedLibraryCall(instr, "cholesky of rank < 2");
  ASSIGN_OR_RETURN(ElementType type, HostType(instr, a.element_type()));
  const int64_t n = a.dimensions().back();
  const int64_t batch = Product(a.dimensions(), 0, a.rank() - 2);
  const bool lower = instr.attrs().lower;
  // LAPACK has no f16/bf16: change-op-data-type, which Compile always runs,
  // gives the library an f32 cholesky between converts.
  if (hostlib::IsNarrowFloatType(type)) {
    return UnsupportedLibraryCall(instr,
                                  absl::StrCat("cholesky of ", hostlib::ElementTypeName(type),
                                               " (change-op-data-type computes it in f32)"));
  }
  return Library(
      std::move(info), operands, outputs,
      [=](absl::Span<void* const> p) {
        return hostlib::Cholesky(type, lower, batch, n, p[0], p[1]);
      },
      absl::StrCat("cholesky batch=", batch, " n=", n, lower ? " lower" : " upper"));
}

absl::StatusOr<std::unique_ptr<Thunk>> EmitTriangularSolve(
    const HloInstruction& instr, ThunkInfo info, const std::vector<BufferSlice>& operands,
    const std::vector<BufferSlice>& outputs) {
  const Shape& b = instr.operand(1)->shape();
  if (b.rank() < 2) return UnsupportedLibraryCall(instr, "triangular-solve of rank < 2");
  ASSIGN_OR_RETURN(ElementType type, HostType(instr, b.element_type()));
  hostlib::TriangularTranspose transpose;
  const std::string& t = instr.attrs().transpose_a;
  if (t.empty() || t == "NO_TRANSPOSE") {
    transpose = hostlib::TriangularTranspose::kNoTranspose;
  } else if (t == "TRANSPOSE") {
    transpose = hostlib::TriangularTranspose::kTranspose;
  } else if (t == "ADJOINT") {
    transpose = hostlib::TriangularTranspose::kAdjoint;
  } else {
    return UnsupportedLibraryCall(instr, absl::StrCat("transpose_a=", t));
  }
  const int64_t m = b.dimensions(b.rank() - 2), n = b.dimensions().back();
  const int64_t batch = Product(b.dimensions(), 0, b.rank() - 2);
  const bool left = instr.attrs().left_side, lower = instr.attrs().lower,
             unit = instr.attrs().unit_diagonal;
  return Library(
      std::move(info), operands, outputs,
      [=](absl::Span<void* const> p) {
        return hostlib::TriangularSolve(type, left, lower, unit, transpose, batch, m, n, p[0], p[1],
                                        p[2]);
      },
      absl::StrCat("triangular-solve batch=", batch, " m=", m, " n=", n));
}

// The array leaves of `shape` (one, or a tuple's elements).
std::vector<const Shape*> Leaves(const Shape& shape) {
  std::vector<const Shape*> out;
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) out.push_back(&s);
  } else {
    out.push_back(&shape);
  }
  return out;
}

absl::StatusOr<std::unique_ptr<Thunk>> EmitRegisteredCustomCall(
    const HloInstruction& instr, ThunkInfo info, const std::vector<BufferSlice>& operands,
    const std::vector<BufferSlice>& outputs) {
  const std::string& target = instr.attrs().custom_call_target;
  hostlib::CustomCallHandler handler = hostlib::CustomCallRegistry::Global().Find(target);
  if (handler == nullptr) {
    std::optional<std::string> reason = hostlib::UnsupportedCustomCallReason(target);
    return UnsupportedLibraryCall(
        instr, absl::StrCat("custom-call target \"", target, "\"",
                            reason ? absl::StrCat(" (", *reason, ")") : std::string()));
  }
  if (instr.attrs().api_version != "API_VERSION_TYPED_FFI") {
    return UnsupportedLibraryCall(
        instr, absl::StrCat("custom-call target \"", target, "\" without API_VERSION_TYPED_FFI"));
  }
  absl::StatusOr<hostlib::FfiAttributes> attrs =
      hostlib::ParseFfiAttributes(instr.attrs().backend_config);
  if (!attrs.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", instr.name(), "': ", target, ": ", attrs.status().message()));
  }
  // The buffers arrive in the layouts the call names: the operands' (which
  // library_layouts.h made its operand_layout_constraints) and the results'.
  const std::optional<std::vector<Shape>>& constraints = instr.attrs().operand_layout_constraints;
  std::vector<hostlib::FfiBuffer> args, rets;
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    const Shape& s = instr.operand(i)->shape();
    if (!s.IsArray()) return UnsupportedLibraryCall(instr, "a non-array custom-call operand");
    if (constraints && (constraints->size() != static_cast<size_t>(instr.operand_count()) ||
                        ((*constraints)[i].has_layout() && s.has_layout() &&
                         !((*constraints)[i].layout() == s.layout())))) {
      return absl::InternalError(absl::StrCat("'", instr.name(), "': operand ", i,
                                              " is not in its operand_layout_constraints layout"));
    }
    ASSIGN_OR_RETURN(ElementType t, HostType(instr, s.element_type()));
    args.push_back({t, s.dimensions(), nullptr});
  }
  for (const Shape* s : Leaves(instr.shape())) {
    if (!s->IsArray()) return UnsupportedLibraryCall(instr, "a non-array custom-call result");
    ASSIGN_OR_RETURN(ElementType t, HostType(instr, s->element_type()));
    rets.push_back({t, s->dimensions(), nullptr});
  }
  auto shared_attrs = std::make_shared<const hostlib::FfiAttributes>(std::move(*attrs));
  LibraryThunk::Call call = [=](absl::Span<void* const> a) {
    hostlib::FfiCallFrame frame;
    frame.target = target;
    frame.args = args;
    frame.rets = rets;
    for (size_t i = 0; i < args.size(); ++i) frame.args[i].data = a[i];
    for (size_t i = 0; i < rets.size(); ++i) frame.rets[i].data = a[args.size() + i];
    frame.attrs = *shared_attrs;
    return handler(frame);
  };
  return std::make_unique<LibraryThunk>(Thunk::Kind::kCustomCall, std::move(info),
                                        Uses(operands, outputs), std::move(call),
                                        absl::StrCat("target=", target));
}

bool IsCheckTarget(const std::string& target) {
  return target == "check.expect_eq" || target == "check.expect_almost_eq" ||
         target == "check.expect_close" || target == "check.eq";
}

// The StableHLO interpreter's check ops (stablehlo/check_ops.h): compare the
// two operands at run time with the checks' own rules; a failing check is
// the run's error. check.eq's pred result is true when it passes.
absl::StatusOr<std::unique_ptr<Thunk>> EmitCheck(const HloInstruction& instr, ThunkInfo info,
                                                 const std::vector<BufferSlice>& operands,
                                                 const std::vector<BufferSlice>& outputs) {
  if (instr.operand_count() != 2 || operands.size() != 2 || outputs.size() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", instr.name(), "': a check compares two arrays"));
  }
  for (const HloInstruction* op : instr.operands()) {
    RETURN_IF_ERROR(CheckRunnableLayout(op->shape(), absl::StrCat("'", instr.name(), "'")));
  }
  const HloInstruction* check = &instr;
  const bool has_result =
      outputs.size() == 1 && instr.shape().IsArray() && instr.shape().ElementCount() == 1;
  LibraryThunk::Call call = [check, has_result](absl::Span<void* const> a) -> absl::Status {
    Literal actual(check->operand(0)->shape()), expected(check->operand(1)->shape());
    PhysicalToLiteral(a[0], check->operand(0)->shape(), actual);
    PhysicalToLiteral(a[1], check->operand(1)->shape(), expected);
    RETURN_IF_ERROR(stablehlo::RunCheck(*check, actual, expected));
    if (has_result) *static_cast<uint8_t*>(a[2]) = 1;
    return absl::OkStatus();
  };
  return std::make_unique<LibraryThunk>(Thunk::Kind::kCustomCall, std::move(info),
                                        Uses(operands, outputs), std::move(call),
                                        absl::StrCat("check=", instr.attrs().custom_call_target));
}

}  // namespace

absl::Status UnsupportedLibraryCall(const HloInstruction& instr, absl::string_view what) {
  return absl::UnimplementedError(absl::StrCat(HloOpcodeString(instr.opcode()), " '", instr.name(),
                                               "': ", what,
                                               " is not supported by the CPU backend"));
}

bool HasRowMajorArrays(const HloInstruction& instr) {
  auto row_major = [](const Shape& s) { return !s.IsArray() || s.HasRowMajorLayout(); };
  for (const HloInstruction* op : instr.operands()) {
    if (!row_major(op->shape())) return false;
  }
  for (const Shape* s : Leaves(instr.shape())) {
    if (!row_major(*s)) return false;
  }
  return true;
}

bool IsPassThroughCustomCall(const HloInstruction& instr) {
  static const auto* targets = new absl::flat_hash_set<std::string>{"Sharding",
                                                                    "xla.sdy.FuncResultSharding",
                                                                    "xla.sdy.PropagationBarrier",
                                                                    "MoveToHost",
                                                                    "MoveToDevice",
                                                                    "annotate_device_placement",
                                                                    "LayoutConstraint"};
  return instr.opcode() == HloOpcode::kCustomCall &&
         targets->contains(instr.attrs().custom_call_target) && instr.operand_count() == 1 &&
         instr.shape().IsArray() && instr.operand(0)->shape() == instr.shape();
}

bool IsHostLibraryOpcode(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kDot:
    case HloOpcode::kConvolution:
    case HloOpcode::kFft:
    case HloOpcode::kSort:
    case HloOpcode::kTopK:
    case HloOpcode::kCholesky:
    case HloOpcode::kTriangularSolve:
      return true;
    default:
      return false;
  }
}

bool IsLibraryInstruction(const HloInstruction& instr) {
  return instr.opcode() == HloOpcode::kCustomCall ||
         (IsHostLibraryOpcode(instr.opcode()) && instr.opcode() != HloOpcode::kSort);
}

absl::StatusOr<std::unique_ptr<Thunk>> EmitLibraryThunk(const HloInstruction& instr, ThunkInfo info,
                                                        const std::vector<BufferSlice>& operands,
                                                        const std::vector<BufferSlice>& outputs) {
  if (instr.opcode() == HloOpcode::kCustomCall && IsCheckTarget(instr.attrs().custom_call_target)) {
    return EmitCheck(instr, std::move(info), operands, outputs);
  }
  if (instr.opcode() == HloOpcode::kCustomCall) {
    return EmitRegisteredCustomCall(instr, std::move(info), operands, outputs);
  }
  if (!HasRowMajorArrays(instr)) {
    return absl::InternalError(absl::StrCat(
        "'", instr.name(), "' reaches the library emitter with a non-row-major layout"));
  }
  switch (instr.opcode()) {
    case HloOpcode::kDot:
      return EmitDot(instr, std::move(info), operands, outputs);
    case HloOpcode::kConvolution:
      return EmitConvolution(instr, std::move(info), operands, outputs);
    case HloOpcode::kFft:
      return EmitFft(instr, std::move(info), operands, outputs);
    case HloOpcode::kTopK:
      return EmitTopK(instr, std::move(info), operands, outputs);
    case HloOpcode::kCholesky:
      return EmitCholesky(instr, std::move(info), operands, outputs);
    case HloOpcode::kTriangularSolve:
      return EmitTriangularSolve(instr, std::move(info), operands, outputs);
    default:
      return UnsupportedLibraryCall(instr, "this opcode as a library call");
  }
}

}  // namespace xlite::cpu
