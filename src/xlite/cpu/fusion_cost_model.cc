#include "xlite/cpu/fusion_cost_model.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "xlite/codegen/kernel.h"
#include "xlite/cpu/fusion.h"
#include "xlite/ir/computation.h"

namespace xlite::cpu {
namespace {

// Nanoseconds per f32 element, measured with `xlite run` on f32[65536]
// kernels that each apply an op eight times (minus the same kernel with
// negate): what the emitters' vector code costs, memory traffic hidden.
// Ops without a row cost kCheapNs (add measured 0.007).
constexpr double kCheapNs = 0.01;
// Integer division and remainder: up to 32 bits the emitter divides in
// double, vectorized (s32 measured 0.34); 64-bit ones stay scalar (no vector
// instruction; s32's scalar division measured 1.9).
constexpr double kIntegerDivisionNs = 0.34;
constexpr double kScalarIntegerDivisionNs = 1.9;

double F32ElementCostNs(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kDivide:
    case HloOpcode::kRemainder:
      return 0.03;
    case HloOpcode::kConvert:  // f32 <-> bf16: 0.056 for the round trip
      return 0.03;
    case HloOpcode::kMaximum:  // NaN propagation: compares and selects
    case HloOpcode::kMinimum:
      return 0.06;
    case HloOpcode::kSqrt:
      return 0.067;
    case HloOpcode::kRsqrt:
      return 0.12;
    case HloOpcode::kTanh:
    case HloOpcode::kErf:
      return 0.16;
    case HloOpcode::kExp:
      return 0.21;
    case HloOpcode::kLogistic:
      return 0.24;
    case HloOpcode::kLog:
      return 0.39;
    case HloOpcode::kLog1p:
    case HloOpcode::kSin:
    case HloOpcode::kCos:
      return 0.52;
    case HloOpcode::kPower:
      return 3.3;
    case HloOpcode::kClamp:
      return 2 * kCheapNs;
    default:
      return kCheapNs;
  }
}

double Elements(const HloInstruction& instr) {
  return instr.shape().IsArray() ? static_cast<double>(instr.shape().ElementCount()) : 1;
}

double MinorSize(const HloInstruction& instr) {
  const int64_t minor = instr.shape().IsArray() ? codegen::MinorDimension(instr.shape()) : -1;
  return minor < 0 ? 1 : static_cast<double>(instr.shape().dimensions()[minor]);
}

// The elements over which a broadcast repeats one value of its operand in
// the kernel's inner loop, which LLVM computes it outside of: all of them for
// a scalar (once per kernel); where the broadcast's minor-most dimension is
// the inner loop (it is reached from the root through elementwise ops,
// reshapes and reduce inputs only: the kernel loops over rows and the root's, or a
// reduce's input's, minor-most dimension), that dimension's size if it is
// new; else 1.
double BroadcastRun(const HloInstruction& broadcast, bool in_loop_order) {
  const Shape& shape = broadcast.shape();
  if (broadcast.operand(0)->shape().ElementCount() == 1) return Elements(broadcast);
  if (shape.rank() == 0 || !in_loop_order) return 1;
  const int64_t minor = codegen::MinorDimension(shape);
  const std::vector<int64_t>& from = broadcast.attrs().dimensions.value_or(std::vector<int64_t>{});
  if (std::find(from.begin(), from.end(), minor) != from.end()) return 1;
  return static_cast<double>(shape.dimensions()[minor]);
}

// How many elements of operand `i` one element of `user` reads (`user`'s
// minor-most dimension the kernel's inner loop or not).
double ReadsPerElement(const HloInstruction& user, int64_t i, bool in_loop_order = false) {
  const double ratio = Elements(*user.operand(i)) / std::max(1.0, Elements(user));
  switch (user.opcode()) {
    case HloOpcode::kBroadcast:
      return 1 / std::max(1.0, BroadcastRun(user, in_loop_order));
    case HloOpcode::kReduce:  // inputs, then one init value per input
      return i < user.operand_count() / 2 ? ratio : 1;
    case HloOpcode::kConcatenate:
      return ratio;
    case HloOpcode::kPad:  // a negative padding crops
      return i == 0 ? std::min(1.0, ratio) : 1;
    default:
      return 1;
  }
}

}  // namespace

double FusionCostModel::ElementCostNs(const HloInstruction& instr) {
  if (instr.opcode() == HloOpcode::kReduce) {
    double step = 0;
    for (const HloComputation* reducer : instr.called_computations()) {
      for (const auto& op : reducer->instructions()) {
        if (op->opcode() != HloOpcode::kParameter) step += ElementCostNs(*op);
      }
    }
    return step;
  }
  if (IsElementalDataMovement(instr.opcode()) || instr.opcode() == HloOpcode::kConstant ||
      instr.opcode() == HloOpcode::kTuple || instr.opcode() == HloOpcode::kGetTupleElement ||
      instr.opcode() == HloOpcode::kParameter) {
    return 0;
  }
  const PrimitiveType type = instr.shape().element_type();
  if ((instr.opcode() == HloOpcode::kDivide || instr.opcode() == HloOpcode::kRemainder) &&
      IsInteger(type)) {
    // By a scalar constant LLVM multiplies and shifts instead (and
    // vectorizes); an array constant's elements are loaded.
    const HloInstruction* divisor = instr.operand(1);
    if (divisor->opcode() == HloOpcode::kBroadcast) divisor = divisor->operand(0);
    if (divisor->opcode() == HloOpcode::kConstant && divisor->shape().rank() == 0) {
      return 2 * kCheapNs;
    }
    return PrimitiveBitWidth(type) <= 32 ? kIntegerDivisionNs : kScalarIntegerDivisionNs;
  }
  // 64-bit elements (of the result or an operand): half as many per vector
  // (f64 measured: divide 4x f32's, exp 1x).
  int bits = IsArrayType(type) ? PrimitiveBitWidth(type) : 0;
  for (const HloInstruction* op : instr.operands()) {
    if (op->shape().IsArray()) bits = std::max(bits, PrimitiveBitWidth(op->shape().element_type()));
  }
  return F32ElementCostNs(instr.opcode()) * (bits >= 64 ? 2 : 1);
}

KernelCost FusionCostModel::Estimate(const HloInstruction& root,
                                     absl::FunctionRef<bool(const HloInstruction*)> is_member) {
  // Every instruction met gets a slot: the members reached from the root
  // through operands, and the values they read from outside. Priority fusion
  // estimates thousands of kernels per computation: the scratch space is
  // kept between calls.
  struct Slot {
    const HloInstruction* instr;
    bool member;
    int64_t first_operand;  // operand slots: operand_slots[first_operand...]
    // The emitter computes a value once per element where several members
    // read it at the same index (elementwise ops of its element count):
    // those reads count as their largest, others add up.
    double same_index = 0;
    double other = 0;
    // Reached through something other than elementwise ops, reshapes and
    // reduce inputs: its minor-most dimension need not be the kernel's inner
    // loop.
    bool off_loop = false;
  };
  struct Scratch {
    absl::flat_hash_map<const HloInstruction*, int> slot_of;
    std::vector<Slot> slots;
    std::vector<int> operand_slots;
    std::vector<int> post_order;  // member slots, operands before users
    std::vector<std::pair<int, int64_t>> stack;
  };
  thread_local Scratch scratch;
  Scratch& s = scratch;
  s.slot_of.clear();
  s.slots.clear();
  s.operand_slots.clear();
  s.post_order.clear();
  auto add_slot = [&](const HloInstruction* instr, bool member) {
    s.slot_of[instr] = static_cast<int>(s.slots.size());
    s.slots.push_back({instr, member, static_cast<int64_t>(s.operand_slots.size())});
    if (member) s.operand_slots.resize(s.operand_slots.size() + instr->operand_count());
    return static_cast<int>(s.slots.size()) - 1;
  };
  add_slot(&root, true);
  s.stack.assign(1, {0, 0});
  while (!s.stack.empty()) {
    auto& [index, next] = s.stack.back();
    const HloInstruction* instr = s.slots[index].instr;
    if (next < instr->operand_count()) {
      const HloInstruction* op = instr->operand(next);
      const int64_t operand_slot = s.slots[index].first_operand + next++;
      auto it = s.slot_of.find(op);
      if (it != s.slot_of.end()) {
        s.operand_slots[operand_slot] = it->second;
        continue;
      }
      const bool member = is_member(op);
      const int added = add_slot(op, member);
      s.operand_slots[operand_slot] = added;
      if (member) s.stack.push_back({added, 0});  // invalidates index, next
      continue;
    }
    s.post_order.push_back(index);
    s.stack.pop_back();
  }
  s.slots[0].same_index = Elements(root);
  KernelCost cost;
  for (auto it = s.post_order.rbegin(); it != s.post_order.rend(); ++it) {
    const Slot member = s.slots[*it];
    const HloInstruction& instr = *member.instr;
    const double evaluated = member.same_index + member.other;
    const bool elementwise = HloOpcodeTraits(instr.opcode()) & kElementwise;
    const bool reduce = instr.opcode() == HloOpcode::kReduce;
    // A reduce folds its input's elements per result element; a row
    // reduction in its own inner loop over the input's minor-most dimension.
    const double steps = reduce ? ReadsPerElement(instr, 0) : 1;
    const bool row_reduce = reduce && ReducesMinorDimension(instr);
    cost.compute_ns += evaluated * steps * ElementCostNs(instr);
    for (int64_t i = 0; i < instr.operand_count(); ++i) {
      Slot& op = s.slots[s.operand_slots[member.first_operand + i]];
      const bool same_count = Elements(*op.instr) == Elements(instr);
      const bool row_reduce_input = row_reduce && i < instr.operand_count() / 2;
      // Reshapes and bitcasts that keep the minor-most dimension keep the
      // order (they mostly add or drop dimensions of size 1 around
      // reductions).
      const bool reshape =
          instr.opcode() == HloOpcode::kReshape || instr.opcode() == HloOpcode::kBitcast;
      const bool keeps_order =
          same_count && (elementwise || (reshape && MinorSize(*op.instr) == MinorSize(instr)));
      // A row reduction runs its own inner loop, however it is reached.
      op.off_loop |= !row_reduce_input && (member.off_loop || !keeps_order);
      // At least one evaluation where the member is evaluated at all (a
      // broadcast's hoisted operand read through a slice).
      const double n = std::max(evaluated * ReadsPerElement(instr, i, !member.off_loop),
                                std::min(1.0, evaluated));
      // Reached only at the root's own index (through elementwise members of
      // its element count): read there once.
      if (op.member && elementwise && member.other == 0 && same_count) {
        op.same_index = std::max(op.same_index, n);
      } else {
        op.other += n;  // for values from outside: the reads, whatever their index
      }
    }
  }
  auto bytes_of = [](const HloInstruction& instr, double elements) {
    if (!instr.shape().IsArray()) return 0.0;
    return std::min(elements, Elements(instr)) * PrimitiveByteWidth(instr.shape().element_type());
  };
  for (const Slot& slot : s.slots) {
    if (!slot.member) cost.bytes += bytes_of(*slot.instr, slot.other);
  }
  cost.bytes += bytes_of(root, Elements(root));
  // The first kCacheBytes stream at cache speed, the rest at memory's (no
  // step at the boundary for the priority queue to trip on).
  cost.memory_ns = std::min(cost.bytes, kCacheBytes) / kCacheBytesPerNs +
                   std::max(0.0, cost.bytes - kCacheBytes) / kMemoryBytesPerNs;
  cost.time_ns = kKernelLaunchNs + std::max(cost.compute_ns, cost.memory_ns);
  return cost;
}

}  // namespace xlite::cpu
