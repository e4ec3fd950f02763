#include "xlite/schedule/memory_model.h"

#include <algorithm>

namespace xlite {
namespace {

constexpr int32_t kUnset = -1;
constexpr int32_t kIgnored = -2;  // a parameter's or constant's value

}  // namespace

ComputationMemoryModel::ComputationMemoryModel(const HloComputation& computation,
                                               const HloDataflowAnalysis& dataflow,
                                               MemoryModelScratch* scratch)
    : computation_(&computation) {
  MemoryModelScratch own;
  if (scratch == nullptr) scratch = &own;
  if (static_cast<int64_t>(scratch->local_of_value.size()) < dataflow.value_count()) {
    scratch->local_of_value.resize(dataflow.value_count(), kUnset);
  }
  if (static_cast<int32_t>(scratch->local_of_instruction.size()) < dataflow.instruction_count()) {
    scratch->local_of_instruction.resize(dataflow.instruction_count(), kUnset);
  }
  std::vector<int32_t>& local_of_value = scratch->local_of_value;
  std::vector<int32_t>& local_of_instruction = scratch->local_of_instruction;
  std::vector<HloValue::Id> touched;

  const int32_t n = static_cast<int32_t>(computation.instructions().size());
  instructions_.reserve(n);
  index_.reserve(n);
  std::vector<int32_t> ids;
  ids.reserve(n);
  opcodes_.reserve(n);
  effective_scalar_.reserve(n);
  for (const auto& instr : computation.instructions()) {
    const int32_t local = static_cast<int32_t>(instructions_.size());
    index_[instr.get()] = local;
    instructions_.push_back(instr.get());
    ids.push_back(dataflow.instruction_id(instr.get()));
    if (ids.back() >= 0) local_of_instruction[ids.back()] = local;
    opcodes_.push_back(instr->opcode());
    effective_scalar_.push_back(IsEffectiveScalar(instr->shape()));
  }
  auto local_of = [&](int32_t id) { return id < 0 ? -1 : local_of_instruction[id]; };

  predecessors_.resize(n);
  successors_.resize(n);
  operand_predecessors_.assign(n, 0);
  user_count_.assign(n, 0);
  std::vector<int32_t> added_for(n, -1);  // dedupes a tuple's thousand operands in O(1) each
  for (int32_t i = 0; i < n; ++i) {
    if (ids[i] < 0) continue;
    std::vector<int32_t>& preds = predecessors_[i];
    auto add = [&](int32_t p) {
      if (p < 0 || added_for[p] == i) return;
      added_for[p] = i;
      preds.push_back(p);
      successors_[p].push_back(i);
    };
    for (int32_t operand : dataflow.operand_ids(ids[i])) add(local_of(operand));
    operand_predecessors_[i] = static_cast<int32_t>(preds.size());
    for (int32_t p : preds) ++user_count_[p];
    for (int32_t pred : dataflow.control_predecessor_ids(ids[i])) add(local_of(pred));
  }

  // Values of parameters and constants are not the computation's to free.
  auto mark = [&](HloValue::Id v, int32_t local) {
    local_of_value[v] = local;
    touched.push_back(v);
  };
  for (int32_t i = 0; i < n; ++i) {
    if (ids[i] < 0 || opcodes_[i] != HloOpcode::kParameter) continue;
    for (HloValue::Id v : dataflow.value_ids_at(ids[i])) {
      if (local_of_value[v] == kUnset) mark(v, kIgnored);
    }
  }
  bytes_defined_.assign(n, 0);
  defined_.resize(n);
  used_.resize(n);
  for (int32_t i = 0; i < n; ++i) {
    if (ids[i] < 0 || opcodes_[i] == HloOpcode::kParameter) continue;
    // Only these pass on values their callee defines (as their results).
    const bool from_callee =
        opcodes_[i] == HloOpcode::kCall || opcodes_[i] == HloOpcode::kAsyncStart;
    for (HloValue::Id v : dataflow.value_ids_at(ids[i])) {
      if (local_of_value[v] != kUnset) continue;
      const int32_t definer = dataflow.defining_instruction_id(v);
      if (dataflow.opcode(definer) == HloOpcode::kConstant) {
        mark(v, kIgnored);
      } else if (definer == ids[i] ||
                 (from_callee && dataflow.instruction(definer)->parent() != computation_)) {
        const int64_t size = scratch->value_sizes != nullptr
                                 ? std::max<int64_t>(0, (*scratch->value_sizes)[v])
                                 : ValueSizeBytes(dataflow.GetValue(v));
        const int32_t local = Track(size);
        mark(v, local);
        defined_[i].push_back(local);
        bytes_defined_[i] += value_size_[local];
      }
    }
  }

  // Readers, by XLA's HloUse rules: tuple and domain read nothing,
  // get-tuple-element and copy only the operand's tuple table.
  std::vector<int32_t> last_reader(value_size_.size(), -1);
  for (int32_t i = 0; i < n; ++i) {
    const HloOpcode op = opcodes_[i];
    if (ids[i] < 0 || op == HloOpcode::kTuple || op == HloOpcode::kDomain) continue;
    const bool table_only = op == HloOpcode::kGetTupleElement || op == HloOpcode::kCopy;
    for (int32_t operand : dataflow.operand_ids(ids[i])) {
      absl::Span<const HloValue::Id> values = dataflow.value_ids_at(operand);
      if (table_only) values = values.subspan(0, 1);
      for (HloValue::Id v : values) {
        const int32_t local = local_of_value[v];
        if (local < 0 || last_reader[local] == i) continue;
        last_reader[local] = i;
        used_[i].push_back(local);
        value_users_[local].push_back(i);
      }
    }
  }
  if (const HloInstruction* root = computation.root_instruction(); root != nullptr) {
    const int32_t root_id = dataflow.instruction_id(root);
    for (HloValue::Id v :
         root_id < 0 ? absl::Span<const HloValue::Id>() : dataflow.value_ids_at(root_id)) {
      if (local_of_value[v] >= 0) value_lives_out_[local_of_value[v]] = true;
    }
  }

  for (HloValue::Id v : touched) local_of_value[v] = kUnset;
  for (int32_t id : ids) {
    if (id >= 0) local_of_instruction[id] = kUnset;
  }
}

int32_t ComputationMemoryModel::Track(int64_t size) {
  const int32_t local = static_cast<int32_t>(value_size_.size());
  value_size_.push_back(size);
  value_users_.emplace_back();
  value_lives_out_.push_back(false);
  return local;
}

int32_t ComputationMemoryModel::index_of(const HloInstruction* instruction) const {
  auto it = index_.find(instruction);
  return it == index_.end() ? -1 : it->second;
}

int64_t SimulateComputationPeak(const ComputationMemoryModel& model,
                                const std::vector<int32_t>& order,
                                const std::vector<int64_t>& callee_bytes) {
  std::vector<int32_t> remaining(model.value_count());
  for (int32_t v = 0; v < model.value_count(); ++v) remaining[v] = model.use_count(v);
  int64_t live = 0, peak = 0;
  for (int32_t i : order) {
    live += model.bytes_defined(i);
    peak = std::max(peak, live + callee_bytes[i]);
    for (int32_t v : model.used_values(i)) {
      if (--remaining[v] == 0) live -= model.value_size(v);
    }
    for (int32_t v : model.defined_values(i)) {
      if (remaining[v] == 0) live -= model.value_size(v);  // dead on arrival
    }
  }
  return peak;
}

}  // namespace xlite
