#include "xlite/eval/fake_data.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>

#include "absl/strings/str_cat.h"
#include "xlite/eval/host_transfers.h"
#include "xlite/support/status.h"

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

absl::StatusOr<Literal> MakeFakeLiteral(const Shape& shape, FakeDataKind kind, uint64_t seed) {
  Shape s = shape;
  int64_t elements = 0;
  bool dynamic = false;
  std::function<void(Shape&)> visit = [&](Shape& t) {
    if (t.IsTuple()) {
      for (Shape& e : t.mutable_tuple_shapes()) visit(e);
      return;
    }
    t.clear_layout();
    if (!t.IsArray()) return;
    dynamic |= !t.is_static();
    if (t.is_static()) elements += t.ElementCount();
  };
  visit(s);
  if (dynamic) {
    return absl::UnimplementedError(
        absl::StrCat("fake data needs a static shape, got ", s.ToString(false)));
  }
  if (elements > (int64_t{1} << 31)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("too large: ", s.ToString(false), " has ", elements, " elements"));
  }
  std::mt19937_64 rng(seed);
  Literal lit(s);
  Fill(lit, kind, rng, IndexBound());
  return lit;
}

absl::Status AddFakeHostTransfers(const HloModule& module, uint64_t seed, int64_t devices,
                                  HostTransfers& transfers, std::vector<Literal>* sent) {
  struct Shared {
    std::mutex mu;
    std::vector<Literal>* sent = nullptr;
    std::map<int64_t, uint64_t> calls;  // recv calls per channel
  };
  auto shared = std::make_shared<Shared>();
  shared->sent = sent;
  std::vector<const HloComputation*> order;
  if (const HloComputation* entry = module.entry_computation()) order.push_back(entry);
  for (const auto& c : module.computations()) {
    if (c.get() != module.entry_computation()) order.push_back(c.get());
  }
  uint64_t block = 0;
  for (const HloComputation* c : order) {
    for (const HloInstruction* instr : c->MakeInstructionPostOrder()) {
      const HloOpcode op = instr->opcode();
      if (op == HloOpcode::kInfeed && instr->shape().IsTuple() &&
          instr->shape().tuple_shapes_size() >= 1) {
        for (int64_t d = 0; d < devices; ++d) {
          ASSIGN_OR_RETURN(Literal value,
                           MakeFakeLiteral(instr->shape().tuple_shapes(0), FakeDataKind::kRandom,
                                           seed * 7919 + block++));
          transfers.PushInfeed(d, std::move(value));
        }
      } else if (op == HloOpcode::kRecv && instr->attrs().is_host_transfer) {
        transfers.SetRecvCallback(
            instr->attrs().channel_id.value_or(0),
            [shared, seed](const HostTransferMetadata& m) -> absl::StatusOr<Literal> {
              uint64_t call;
              {
                std::lock_guard<std::mutex> lock(shared->mu);
                call = shared->calls[m.channel_id]++;
              }
              return MakeFakeLiteral(m.shape, FakeDataKind::kRandom,
                                     seed * 104729 + static_cast<uint64_t>(m.channel_id) * 65537 +
                                         static_cast<uint64_t>(m.device) * 257 + call);
            });
      } else if (op == HloOpcode::kSend && instr->attrs().is_host_transfer) {
        transfers.SetSendCallback(instr->attrs().channel_id.value_or(0),
                                  [shared](const HostTransferMetadata&, const Literal& value) {
                                    std::lock_guard<std::mutex> lock(shared->mu);
                                    if (shared->sent) shared->sent->push_back(value);
                                    return absl::OkStatus();
                                  });
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace xlite
