#include "xlite/stablehlo/check_ops.h"

#include <bit>
#include <cmath>
#include <limits>
#include <mutex>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "xlite/eval/evaluator.h"
#include "xlite/ir/float_format.h"
#include "xlite/support/status.h"
#include "xlite/text/parser.h"

namespace xlite::stablehlo {
namespace {

struct CheckConfig {
  double tolerance = 1e-4;
  uint64_t min_ulp = 0;
  uint64_t max_ulp = 3;
};

CheckConfig ParseConfig(const std::string& config) {
  CheckConfig c;
  for (absl::string_view kv : absl::StrSplit(config, ';', absl::SkipEmpty())) {
    std::pair<std::string, std::string> p = absl::StrSplit(kv, absl::MaxSplits('=', 1));
    double v = 0;
    if (!absl::SimpleAtod(p.second, &v)) continue;
    if (p.first == "tolerance") c.tolerance = v;
    if (p.first == "min_ulp_difference") c.min_ulp = static_cast<uint64_t>(v);
    if (p.first == "max_ulp_difference") c.max_ulp = static_cast<uint64_t>(v);
  }
  return c;
}

std::string IndexString(const Shape& shape, int64_t linear) {
  std::vector<int64_t> index(shape.rank());
  for (int64_t d = shape.rank() - 1; d >= 0; --d) {
    const int64_t size = shape.dimensions()[d];
    index[d] = size == 0 ? 0 : linear % size;
    linear = size == 0 ? 0 : linear / size;
  }
  return absl::StrCat("[", absl::StrJoin(index, ", "), "]");
}

// Bits of one real component in the component type's encoding.
uint64_t ComponentBits(PrimitiveType component, double v) {
  if (component == PrimitiveType::F32) return std::bit_cast<uint32_t>(static_cast<float>(v));
  return std::bit_cast<uint64_t>(v);
}

}  // namespace

uint64_t UlpDistance(PrimitiveType type, uint64_t a_bits, uint64_t b_bits) {
  const int width = PrimitiveBitWidth(type);
  const uint64_t mask = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  a_bits &= mask;
  b_bits &= mask;
  const std::optional<FloatFormat> f = GetFloatFormat(type);
  auto is_nan = [&](uint64_t bits) { return f && std::isnan(DecodeFloat(*f, bits)); };
  const bool a_nan = is_nan(a_bits), b_nan = is_nan(b_bits);
  if (a_nan || b_nan) return a_nan && b_nan ? 0 : std::numeric_limits<uint64_t>::max();
  const bool has_sign = !f || f->has_sign;
  const uint64_t sign = has_sign ? uint64_t{1} << (width - 1) : 0;
  // Map to a line where adjacent floats differ by one: -x -> -(|x| bits).
  auto ordered = [&](uint64_t bits) -> __int128 {
    const uint64_t magnitude = bits & ~sign;
    return (bits & sign) ? -static_cast<__int128>(magnitude) : static_cast<__int128>(magnitude);
  };
  __int128 d = ordered(a_bits) - ordered(b_bits);
  if (d < 0) d = -d;
  return d > std::numeric_limits<uint64_t>::max() ? std::numeric_limits<uint64_t>::max()
                                                  : static_cast<uint64_t>(d);
}

absl::Status RunCheck(const HloInstruction& check, const Literal& actual, const Literal& expected) {
  const std::string& target = check.attrs().custom_call_target;
  const OpMetadata& m = check.attrs().metadata;
  const std::string where =
      m.source_line > 0 ? absl::StrCat(m.source_file, ":", m.source_line, ":", m.source_column)
                        : check.name();
  if (!actual.shape().IsArray() || !expected.shape().IsArray()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", target, " compares arrays"));
  }
  if (actual.shape().dimensions() != expected.shape().dimensions() ||
      actual.shape().element_type() != expected.shape().element_type()) {
    return absl::FailedPreconditionError(absl::StrCat(where, ": ", target, " failed: actual is ",
                                                      actual.shape().ToString(), ", expected ",
                                                      expected.shape().ToString()));
  }
  const CheckConfig config = ParseConfig(check.attrs().backend_config);
  const PrimitiveType type = actual.shape().element_type();
  const bool is_float = IsFloatingPoint(type), is_complex = IsComplex(type);
  const PrimitiveType component =
      type == PrimitiveType::C64 ? PrimitiveType::F32 : PrimitiveType::F64;
  int64_t mismatches = 0;
  std::string examples;
  uint64_t worst_ulp = 0;
  for (int64_t i = 0; i < actual.element_count(); ++i) {
    bool ok;
    std::string detail;
    if (!is_float && !is_complex) {
      ok = actual.GetBits(i) == expected.GetBits(i);
    } else if (target == "check.expect_close") {
      uint64_t ulp;
      if (is_complex) {
        const std::complex<double> a = actual.GetComplex(i), e = expected.GetComplex(i);
        ulp = std::max(UlpDistance(component, ComponentBits(component, a.real()),
                                   ComponentBits(component, e.real())),
                       UlpDistance(component, ComponentBits(component, a.imag()),
                                   ComponentBits(component, e.imag())));
      } else {
        ulp = UlpDistance(type, actual.GetBits(i), expected.GetBits(i));
      }
      ok = ulp >= config.min_ulp && ulp <= config.max_ulp;
      if (!ok) {
        worst_ulp = std::max(worst_ulp, ulp);
        detail = ulp == std::numeric_limits<uint64_t>::max() ? " (NaN)"
                                                             : absl::StrCat(" (", ulp, " ULP)");
      }
    } else {
      const std::complex<double> a = actual.GetComplex(i), e = expected.GetComplex(i);
      auto close = [&](double x, double y) {
        if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
        if (x == y) return true;  // equal infinities
        // check.eq on floats is expect_almost_eq, as the StableHLO interpreter runs it.
        if (target != "check.expect_almost_eq" && target != "check.eq") return false;
        return std::abs(x - y) <= config.tolerance;
      };
      ok = close(a.real(), e.real()) && close(a.imag(), e.imag());
    }
    if (!ok) {
      if (++mismatches <= 5) {
        absl::StrAppend(&examples, "\n  at ", IndexString(actual.shape(), i), ": actual ",
                        actual.ElementToString(i), ", expected ", expected.ElementToString(i),
                        detail);
      }
    }
  }
  if (mismatches == 0) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat(where, ": ", target, " failed: ", mismatches, " of ", actual.element_count(),
                   " elements differ",
                   worst_ulp > 0 && worst_ulp != std::numeric_limits<uint64_t>::max()
                       ? absl::StrCat(" (worst ", worst_ulp, " ULP)")
                       : "",
                   examples));
}

// interpreter.run_parallel: backend_config is "RxP\n<HLO module text>"; the
// operands are the programs' arguments, device after device (replica-major),
// and so are the results.
absl::StatusOr<Literal> RunParallel(const HloInstruction& call,
                                    absl::Span<const Literal* const> operands) {
  const std::string& config = call.attrs().backend_config;
  const size_t newline = config.find('\n');
  int64_t replicas = 0, partitions = 0;
  std::pair<std::string, std::string> grid =
      absl::StrSplit(config.substr(0, newline), absl::MaxSplits('x', 1));
  if (newline == std::string::npos || !absl::SimpleAtoi(grid.first, &replicas) ||
      !absl::SimpleAtoi(grid.second, &partitions) || replicas < 1 || partitions < 1) {
    return absl::InvalidArgumentError("interpreter.run_parallel: bad backend_config");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<HloModule> program,
                   ParseHloModule(config.substr(newline + 1), "<run_parallel program>"));
  const int64_t devices = replicas * partitions;
  const int64_t per_device = program->entry_computation()->num_parameters();
  if (static_cast<int64_t>(operands.size()) != devices * per_device) {
    return absl::InvalidArgumentError(absl::StrCat("interpreter.run_parallel: ", operands.size(),
                                                   " operands for ", devices, " processes of ",
                                                   per_device, " arguments"));
  }
  std::vector<std::vector<Literal>> args(devices);
  for (int64_t d = 0; d < devices; ++d) {
    for (int64_t i = 0; i < per_device; ++i) args[d].push_back(*operands[d * per_device + i]);
  }
  EvalOptions options;
  options.replica_count = replicas;
  options.num_partitions = partitions;
  ASSIGN_OR_RETURN(std::vector<Literal> results, EvaluateReplicated(*program, args, options));
  std::vector<Literal> flat;
  const bool tuple_result = program->entry_computation()->root_instruction()->shape().IsTuple();
  for (Literal& r : results) {
    if (tuple_result) {
      for (Literal& e : r.tuple_elements()) flat.push_back(std::move(e));
    } else {
      flat.push_back(std::move(r));
    }
  }
  if (static_cast<int64_t>(flat.size()) != call.shape().tuple_shapes_size()) {
    return absl::InvalidArgumentError("interpreter.run_parallel: result count mismatch");
  }
  return Literal::Tuple(std::move(flat));
}

void RegisterCheckTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const char* target :
         {"check.expect_eq", "check.expect_almost_eq", "check.expect_close", "check.eq"}) {
      RegisterCustomCallTarget(
          target,
          [](const HloInstruction& call,
             absl::Span<const Literal* const> operands) -> absl::StatusOr<Literal> {
            if (operands.size() != 2) {
              return absl::InvalidArgumentError("a check compares two values");
            }
            absl::Status s = RunCheck(call, *operands[0], *operands[1]);
            if (!s.ok()) return s;
            Literal result(call.shape());
            if (call.shape().IsArray() && result.element_count() == 1) result.SetInt(0, 1);
            return result;
          });
    }
    RegisterCustomCallTarget("interpreter.run_parallel", RunParallel);
  });
}

}  // namespace xlite::stablehlo
