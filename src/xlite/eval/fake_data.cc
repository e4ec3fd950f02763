#include "xlite/eval/fake_data.h"

#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"

namespace xlite {
namespace {

// Inclusive upper bound for an index value: the operand dimension minus the
// extent that is read or written starting there.
struct IndexBound {
  int64_t max = -1;  // -1: unconstrained
  void Tighten(int64_t m) {
    max = max < 0 ? std::max<int64_t>(m, 0) : std::min(max, std::max<int64_t>(m, 0));
  }
};

// Bounds for entry parameters used directly as index operands.
std::vector<IndexBound> IndexBounds(const HloComputation& entry) {
  std::vector<IndexBound> bounds(entry.num_parameters());
  auto param_number = [&](const HloInstruction* i) -> int64_t {
    return i->opcode() == HloOpcode::kParameter ? i->attrs().parameter_number : -1;
  };
  for (const auto& instr : entry.instructions()) {
    const auto& a = instr->attrs();
    switch (instr->opcode()) {
      case HloOpcode::kDynamicSlice:
      case HloOpcode::kDynamicUpdateSlice: {
        const Shape& operand = instr->operand(0)->shape();
        const int64_t first_index = instr->opcode() == HloOpcode::kDynamicSlice ? 1 : 2;
        for (int64_t k = first_index; k < instr->operand_count(); ++k) {
          int64_t p = param_number(instr->operand(k));
          int64_t dim = k - first_index;
          if (p < 0 || dim >= operand.rank()) continue;
          int64_t extent = instr->opcode() == HloOpcode::kDynamicSlice
                               ? (dim < static_cast<int64_t>(a.dynamic_slice_sizes.size())
                                      ? a.dynamic_slice_sizes[dim]
                                      : 0)
                               : instr->operand(1)->shape().dimensions(dim);
          bounds[p].Tighten(operand.dimensions(dim) - extent);
        }
        break;
      }
      case HloOpcode::kGather: {
        int64_t p = param_number(instr->operand(1));
        if (p < 0 || !a.gather_dimension_numbers) break;
        const Shape& operand = instr->operand(0)->shape();
        for (size_t k = 0; k < a.gather_dimension_numbers->start_index_map.size(); ++k) {
          int64_t dim = a.gather_dimension_numbers->start_index_map[k];
          if (dim < 0 || dim >= operand.rank() || k >= a.gather_slice_sizes.size()) continue;
          int64_t size = dim < static_cast<int64_t>(a.gather_slice_sizes.size())
                             ? a.gather_slice_sizes[dim]
                             : 1;
          bounds[p].Tighten(operand.dimensions(dim) - size);
        }
        break;
      }
      case HloOpcode::kScatter: {
        const int64_t n = instr->operand_count() / 2;
        if (n < 1) break;
        int64_t p = param_number(instr->operand(n));
        if (p < 0 || !a.scatter_dimension_numbers) break;
        const Shape& operand = instr->operand(0)->shape();
        for (int64_t dim : a.scatter_dimension_numbers->scatter_dims_to_operand_dims) {
          if (dim < 0 || dim >= operand.rank()) continue;
          // Conservative: the whole window fits when the index is 0.
          bounds[p].Tighten(0);
        }
        break;
      }
      case HloOpcode::kRaggedDot: {
        // Group sizes that together fit the ragged dimension.
        if (instr->operand_count() != 3) break;
        const int64_t p = param_number(instr->operand(2));
        const auto& rn = a.ragged_dot_dimension_numbers;
        const Shape& sizes = instr->operand(2)->shape();
        if (p < 0 || !rn || rn->lhs_ragged_dimensions.size() != 1 || sizes.rank() < 1) break;
        const Shape& lhs = instr->operand(0)->shape();
        const int64_t dim = rn->lhs_ragged_dimensions[0];
        const int64_t groups = sizes.dimensions(sizes.rank() - 1);
        if (dim < 0 || dim >= lhs.rank() || groups <= 0) break;
        bounds[p].Tighten(lhs.dimensions(dim) / groups);
        break;
      }
      default:
        break;
    }
  }
  return bounds;
}

void Fill(Literal& lit, FakeDataKind kind, std::mt19937_64& rng, const IndexBound& bound) {
  if (lit.shape().IsTuple()) {
    for (Literal& e : lit.tuple_elements()) Fill(e, kind, rng, IndexBound());
    return;
  }
  if (!lit.shape().IsArray() || kind == FakeDataKind::kZeros) return;
  const PrimitiveType t = lit.shape().element_type();
  const int64_t n = lit.element_count();
  for (int64_t i = 0; i < n; ++i) {
    if (t == PrimitiveType::PRED) {
      lit.SetInt(i, rng() & 1);
    } else if (IsInteger(t)) {
      int64_t hi = bound.max >= 0 ? bound.max : (PrimitiveBitWidth(t) <= 4 ? 3 : 15);
      int64_t lo = (bound.max >= 0 || IsUnsignedInt(t)) ? 0 : -std::min<int64_t>(hi, 8);
      lit.SetInt(i, lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1)));
    } else if (IsComplex(t)) {
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      lit.SetComplex(i, {u(rng), u(rng)});
    } else {
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      lit.SetDouble(i, u(rng));
    }
  }
}

}  // namespace

absl::StatusOr<std::vector<Literal>> MakeFakeArguments(const HloModule& module, FakeDataKind kind,
                                                       uint64_t seed) {
  const HloComputation* entry = module.entry_computation();
  if (!entry) return absl::InvalidArgumentError("module has no entry computation");
  std::vector<IndexBound> bounds = IndexBounds(*entry);
  std::mt19937_64 rng(seed);
  std::vector<Literal> args;
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    Shape s = entry->parameter_instruction(i)->shape();
    s.clear_layout();
    // Bounded dynamic dimensions take their bound, as XLA's fake data does.
    if (s.IsArray() && !s.is_static()) {
      bool bounded = true;
      for (int64_t d = 0; d < s.rank(); ++d) {
        if (s.dimensions(d) < 0) bounded = false;
      }
      if (bounded) {
        for (int64_t d = 0; d < s.rank(); ++d) s.set_dynamic_dimension(d, false);
      }
    }
    if (!s.is_static()) {
      return absl::UnimplementedError(absl::StrCat("parameter ", i, " has dynamic shape ",
                                                   s.ToString(false),
                                                   "; fake data needs static or bounded shapes"));
    }
    if (s.IsArray() && s.ElementCount() > (int64_t{1} << 31)) {
      return absl::ResourceExhaustedError(
          absl::StrCat("too large: parameter ", i, " has ", s.ElementCount(), " elements"));
    }
    Literal lit(s);
    Fill(lit, kind, rng, bounds[i]);
    args.push_back(std::move(lit));
  }
  return args;
}

}  // namespace xlite
