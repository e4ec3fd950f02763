// Custom calls through hostlib's registry (hostlib/custom_call_registry.h:
// jaxlib's typed-FFI LAPACK targets, lapack_?getrf_ffi, ...), and clear
// errors for the jaxlib targets we cannot run (Python callbacks, GPU and
// legacy ones).
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
#include "xlite/hostlib/custom_call_registry.h"
#include "xlite/hostlib/ffi_attributes.h"
#include "xlite/support/status.h"

namespace xlite::eval {
namespace {

using hostlib::FfiAttributes;
using hostlib::FfiCallFrame;

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
  // The buffer as the handler sees it.
  hostlib::FfiBuffer View() {
    return {*hostlib::ElementTypeFromName(PrimitiveTypeName(type)), dims, bytes.data()};
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

// "<target>: <message>" with the status's code.
absl::Status WithTarget(absl::string_view target, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(target, ": ", status.message()));
}

void CopyOut(const HostBuffer& buffer, Literal& literal) {
  const int width = literal.element_stride();
  uint8_t* dst = literal.mutable_raw_data();
  ForEachElement(buffer, [&](int64_t logical, int64_t physical) {
    std::memcpy(dst + logical * width, buffer.bytes.data() + physical * width, width);
  });
}

// The frontend attribute num_batch_dims (set for XLA's batch partitioner)
// must agree with the leading dimensions the kernels treat as batch.
absl::Status CheckNumBatchDims(const HloInstruction& instr, const FfiCallFrame& frame) {
  auto it = instr.attrs().frontend_attributes.find("num_batch_dims");
  if (it == instr.attrs().frontend_attributes.end()) return absl::OkStatus();
  int64_t value = 0;
  if (!absl::SimpleAtoi(it->second, &value) || value < 0) {
    return frame.Error("frontend attribute num_batch_dims=\"", it->second,
                       "\" is not a non-negative integer");
  }
  int64_t max_rank = 0;
  for (const hostlib::FfiBuffer& b : frame.args) {
    max_rank = std::max<int64_t>(max_rank, b.dims.size());
  }
  if (max_rank - 2 != value) {
    return frame.Error("frontend attribute num_batch_dims=", value, " disagrees with the operands ",
                       "(rank ", max_rank, " matrices have ", max_rank - 2, " batch dimensions)");
  }
  return absl::OkStatus();
}

}  // namespace

bool IsJaxlibCustomCallTarget(absl::string_view target) {
  return hostlib::CustomCallRegistry::Global().Find(target) != nullptr ||
         hostlib::UnsupportedCustomCallReason(target).has_value();
}

absl::StatusOr<Literal> EvalJaxlibCustomCall(const HloInstruction& instr,
                                             absl::Span<const Literal* const> operands) {
  const std::string& target = instr.attrs().custom_call_target;
  hostlib::CustomCallHandler handler = hostlib::CustomCallRegistry::Global().Find(target);
  if (handler == nullptr) {
    std::optional<std::string> reason = hostlib::UnsupportedCustomCallReason(target);
    return Unsupported(instr, absl::StrCat("custom-call target \"", target, "\" (",
                                           reason ? *reason : "unknown target", ")"));
  }
  FfiCallFrame frame;
  frame.target = target;
  if (instr.attrs().api_version != "API_VERSION_TYPED_FFI") {
    return frame.Error(
        "is a typed-FFI handler and needs api_version=API_VERSION_TYPED_FFI, got ",
        instr.attrs().api_version.empty() ? "the original API" : instr.attrs().api_version);
  }
  absl::StatusOr<FfiAttributes> attrs = hostlib::ParseFfiAttributes(instr.attrs().backend_config);
  if (!attrs.ok()) return WithTarget(target, attrs.status());
  frame.attrs = std::move(*attrs);

  std::vector<HostBuffer> args, rets;  // the memory the frame's buffers point at
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
    if (!buffer.ok()) return WithTarget(target, buffer.status());
    CopyIn(*operands[i], *buffer);
    args.push_back(std::move(*buffer));
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
    if (!buffer.ok()) return WithTarget(target, buffer.status());
    rets.push_back(std::move(*buffer));
  }
  // Aliased pairs share one buffer in XLA: same shape and layout.
  for (const OutputOperandAlias& alias : instr.attrs().output_to_operand_aliasing) {
    const size_t out = alias.output_index.empty() ? 0 : alias.output_index[0];
    if (alias.output_index.size() > 1 || !alias.operand_index.empty() || out >= rets.size() ||
        alias.operand < 0 || alias.operand >= static_cast<int64_t>(args.size())) {
      return frame.Error("output_to_operand_aliasing names a result or operand it does not have");
    }
    const HostBuffer& arg = args[alias.operand];
    const HostBuffer& ret = rets[out];
    if (arg.type != ret.type || arg.dims != ret.dims || arg.minor_to_major != ret.minor_to_major) {
      return frame.Error("result ", out, " aliases operand ", alias.operand,
                         " but their shapes or layouts differ");
    }
  }
  for (HostBuffer& b : args) frame.args.push_back(b.View());
  for (HostBuffer& b : rets) frame.rets.push_back(b.View());
  RETURN_IF_ERROR(CheckNumBatchDims(instr, frame));

  RETURN_IF_ERROR(handler(frame));

  Literal result = ResultLiteral(instr);
  if (shape.IsTuple()) {
    for (size_t i = 0; i < rets.size(); ++i) CopyOut(rets[i], result.tuple_elements()[i]);
  } else {
    CopyOut(rets[0], result);
  }
  return result;
}

}  // namespace xlite::eval
