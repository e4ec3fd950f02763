// Test support: run one JIT-compiled kernel on literals laid out in the
// physical layouts of its buffers, and compare its results with the
// interpreter's (the oracle).
#ifndef XLITE_CODEGEN_CODEGEN_TEST_UTIL_H_
#define XLITE_CODEGEN_CODEGEN_TEST_UTIL_H_

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "xlite/codegen/jit.h"
#include "xlite/eval/evaluator.h"
#include "xlite/eval/fake_data.h"
#include "xlite/ir/float_format.h"
#include "xlite/text/parser.h"

namespace xlite::codegen::testing {

// The bytes of a logical (row-major) literal in `shape`'s physical layout.
inline std::vector<uint8_t> ToPhysical(const Literal& literal, const Shape& shape) {
  const int64_t bytes = literal.element_stride();
  std::vector<uint8_t> out(std::max<int64_t>(literal.raw_data().size(), 1), 0);
  const std::vector<int64_t> strides = PhysicalStrides(shape);
  const std::vector<int64_t>& dims = shape.dimensions();
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t i = 0, n = literal.element_count(); i < n; ++i) {
    int64_t p = 0;
    for (size_t d = 0; d < dims.size(); ++d) p += index[d] * strides[d];
    std::memcpy(out.data() + p * bytes, literal.raw_data().data() + i * bytes, bytes);
    for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

// The logical literal of `shape` whose physical bytes are `data`.
inline Literal FromPhysical(const std::vector<uint8_t>& data, const Shape& shape) {
  Shape logical = shape;
  logical.clear_layout();
  Literal literal(logical);
  const int64_t bytes = literal.element_stride();
  const std::vector<int64_t> strides = PhysicalStrides(shape);
  const std::vector<int64_t>& dims = shape.dimensions();
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t i = 0, n = literal.element_count(); i < n; ++i) {
    int64_t p = 0;
    for (size_t d = 0; d < dims.size(); ++d) p += index[d] * strides[d];
    std::memcpy(literal.mutable_raw_data() + i * bytes, data.data() + p * bytes, bytes);
    for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  return literal;
}

// Empty if `actual` matches `expected`; otherwise the first difference.
// Integers and pred compare bitwise (the type's bits), floats within
// relative 2e-3 or 1e-3 of the largest expected magnitude (NaN matches NaN),
// or bitwise when `exact`.
inline std::string Compare(const Literal& expected, const Literal& actual, bool exact) {
  const PrimitiveType type = expected.shape().element_type();
  if (actual.shape().element_type() != type ||
      actual.shape().dimensions() != expected.shape().dimensions()) {
    return absl::StrCat("shape ", actual.shape().ToString(false), " vs expected ",
                        expected.shape().ToString(false));
  }
  const int64_t n = expected.element_count();
  const int bits = PrimitiveBitWidth(type);
  auto mask = [&](uint64_t v) {
    return IsComplex(type) || bits >= 64 ? v : v & ((uint64_t{1} << bits) - 1);
  };
  if (!IsFloatingPoint(type) && !IsComplex(type)) {
    for (int64_t i = 0; i < n; ++i) {
      if (mask(expected.GetBits(i)) != mask(actual.GetBits(i))) {
        return absl::StrCat("element ", i, ": ", actual.ElementToString(i), " vs expected ",
                            expected.ElementToString(i));
      }
    }
    return "";
  }
  if (exact) {
    if (std::memcmp(expected.raw_data().data(), actual.raw_data().data(),
                    expected.raw_data().size()) == 0) {
      return "";
    }
    for (int64_t i = 0; i < n; ++i) {
      if (std::memcmp(expected.raw_data().data() + i * expected.element_stride(),
                      actual.raw_data().data() + i * expected.element_stride(),
                      expected.element_stride()) != 0) {
        return absl::StrCat("element ", i, ": ", actual.ElementToString(i),
                            " vs expected (bitwise) ", expected.ElementToString(i));
      }
    }
    return "";
  }
  auto parts = [&](const Literal& l, int64_t i) -> std::vector<double> {
    if (IsComplex(type)) return {l.GetComplex(i).real(), l.GetComplex(i).imag()};
    return {l.GetDouble(i)};
  };
  double largest = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (double v : parts(expected, i)) {
      if (std::isfinite(v)) largest = std::max(largest, std::fabs(v));
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    const std::vector<double> e = parts(expected, i), a = parts(actual, i);
    for (size_t k = 0; k < e.size(); ++k) {
      if (std::isnan(e[k]) && std::isnan(a[k])) continue;
      if (e[k] == a[k]) continue;
      const double diff = std::fabs(e[k] - a[k]);
      if (std::isfinite(e[k]) && std::isfinite(a[k]) &&
          (diff <= 2e-3 * std::fabs(e[k]) || diff <= 1e-3 * largest)) {
        continue;
      }
      return absl::StrCat("element ", i, ": ", actual.ElementToString(i), " vs expected ",
                          expected.ElementToString(i));
    }
  }
  return "";
}

struct KernelRun {
  absl::Status status;         // compile or run error
  std::string mismatch;        // empty when every output agrees
  bool unimplemented = false;  // the code generator refused the instruction
};

// Compiles `instr` (its operands must be constants or entry parameters, or
// the kernel is a whole fusion whose operands are) and runs it as
// `num_partitions` parts on `args` (the entry parameters' values); compares
// with `expected`, the interpreter's value of `instr`.
inline KernelRun RunKernel(Jit& jit, const HloInstruction& instr, const std::vector<Literal>& args,
                           const Literal& expected, bool exact,
                           const std::vector<int64_t>& partition_counts = {1}) {
  KernelRun run;
  absl::StatusOr<std::vector<CompiledKernel>> kernels =
      jit.Compile({KernelSpec{&instr, "", nullptr}});
  if (!kernels.ok()) {
    run.status = kernels.status();
    run.unimplemented = absl::IsUnimplemented(kernels.status());
    return run;
  }
  const CompiledKernel& kernel = (*kernels)[0];
  std::vector<std::vector<uint8_t>> inputs;
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    const HloInstruction* op = instr.operand(i);
    if (op->opcode() == HloOpcode::kConstant && op->attrs().literal) {
      inputs.push_back(ToPhysical(*op->attrs().literal, kernel.buffer_shapes[i]));
      continue;
    }
    if (op->opcode() != HloOpcode::kParameter ||
        op->attrs().parameter_number >= static_cast<int64_t>(args.size())) {
      run.status =
          absl::InvalidArgumentError("kernel operands must be entry parameters or constants");
      return run;
    }
    inputs.push_back(ToPhysical(args[op->attrs().parameter_number], kernel.buffer_shapes[i]));
  }
  std::vector<const Literal*> expected_leaves;
  if (expected.shape().IsTuple()) {
    for (const Literal& e : expected.tuple_elements()) expected_leaves.push_back(&e);
  } else {
    expected_leaves.push_back(&expected);
  }
  const size_t outputs = kernel.buffer_shapes.size() - inputs.size();
  if (outputs != expected_leaves.size()) {
    run.status = absl::InternalError("output count differs from the interpreter's");
    return run;
  }
  for (int64_t parts : partition_counts) {
    std::vector<std::vector<uint8_t>> out;
    std::vector<void*> buffers;
    for (auto& in : inputs) buffers.push_back(in.data());
    for (size_t k = 0; k < outputs; ++k) {
      const Shape& s = kernel.buffer_shapes[inputs.size() + k];
      // Filled with a pattern, so unwritten elements show.
      out.emplace_back(
          std::max<int64_t>(s.ElementCount() * PrimitiveByteWidth(s.element_type()), 1), 0xA5);
    }
    for (auto& o : out) buffers.push_back(o.data());
    for (int64_t p = 0; p < parts; ++p) kernel.function(buffers.data(), p, parts);
    for (size_t k = 0; k < outputs; ++k) {
      const Literal actual = FromPhysical(out[k], kernel.buffer_shapes[inputs.size() + k]);
      std::string mismatch = Compare(*expected_leaves[k], actual, exact);
      if (!mismatch.empty()) {
        run.mismatch = absl::StrCat("output ", k, " with ", parts, " partitions: ", mismatch);
        return run;
      }
    }
  }
  return run;
}

}  // namespace xlite::codegen::testing

#endif  // XLITE_CODEGEN_CODEGEN_TEST_UTIL_H_
