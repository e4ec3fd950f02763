// What the memory schedulers know about one sequential computation (the role
// of XLA's TuplePointsToAnalysis in its schedulers), in flat arrays indexed by
// the instruction's position in the computation's instruction list:
//   - predecessors (operands and control predecessors in the computation)
//     and successors;
//   - the values each instruction allocates: those it defines, and those
//     that enter the computation through it from a callee (a call's result,
//     an async-start's output); values of parameters and constants are
//     neither counted nor freed, as in XLA;
//   - the values each instruction reads (its HloUses), each value's size,
//     readers and whether it leaves the computation through the root.
// A value is freed once its last reader has run, unless it leaves the
// computation.
#ifndef XLITE_SCHEDULE_MEMORY_MODEL_H_
#define XLITE_SCHEDULE_MEMORY_MODEL_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "xlite/analysis/hlo_dataflow_analysis.h"

namespace xlite {

// Buffers sized to the module, reused while building the models of many
// computations (each constructor leaves them as it found them).
struct MemoryModelScratch {
  std::vector<int32_t> local_of_value;        // by value id; -1 when unset
  std::vector<int32_t> local_of_instruction;  // by instruction id; -1 when unset
  // ComputeValueSizes(dataflow) if the caller has it; else sizes are computed.
  const std::vector<int64_t>* value_sizes = nullptr;
};

class ComputationMemoryModel {
 public:
  ComputationMemoryModel(const HloComputation& computation, const HloDataflowAnalysis& dataflow,
                         MemoryModelScratch* scratch = nullptr);

  const HloComputation& computation() const { return *computation_; }
  int32_t size() const { return static_cast<int32_t>(instructions_.size()); }
  HloInstruction* instruction(int32_t i) const { return instructions_[i]; }
  // -1 for an instruction of another computation.
  int32_t index_of(const HloInstruction* instruction) const;

  // Distinct operands in this computation, then the control predecessors
  // that are not operands.
  const std::vector<int32_t>& predecessors(int32_t i) const { return predecessors_[i]; }
  // How many of predecessors(i) are operands (they come first).
  int32_t operand_predecessor_count(int32_t i) const { return operand_predecessors_[i]; }
  const std::vector<int32_t>& successors(int32_t i) const { return successors_[i]; }

  HloOpcode opcode(int32_t i) const { return opcodes_[i]; }
  // Distinct users (in this computation, as every user is).
  int32_t user_count(int32_t i) const { return user_count_[i]; }
  // The result is a single element (rank 0 or all dimensions 1).
  bool is_effective_scalar(int32_t i) const { return effective_scalar_[i]; }

  int64_t bytes_defined(int32_t i) const { return bytes_defined_[i]; }
  const std::vector<int32_t>& defined_values(int32_t i) const { return defined_[i]; }
  // Distinct values the instruction reads.
  const std::vector<int32_t>& used_values(int32_t i) const { return used_[i]; }

  int32_t value_count() const { return static_cast<int32_t>(value_size_.size()); }
  int64_t value_size(int32_t v) const { return value_size_[v]; }
  // Instructions reading the value.
  const std::vector<int32_t>& value_users(int32_t v) const { return value_users_[v]; }
  bool value_lives_out(int32_t v) const { return value_lives_out_[v]; }
  // Readers, plus one if the value leaves the computation (never freed).
  int32_t use_count(int32_t v) const {
    return static_cast<int32_t>(value_users_[v].size()) + (value_lives_out_[v] ? 1 : 0);
  }

 private:
  int32_t Track(int64_t size);

  const HloComputation* computation_;
  std::vector<HloInstruction*> instructions_;
  absl::flat_hash_map<const HloInstruction*, int32_t> index_;
  std::vector<std::vector<int32_t>> predecessors_, successors_;
  std::vector<int32_t> operand_predecessors_;
  std::vector<HloOpcode> opcodes_;
  std::vector<int32_t> user_count_;
  std::vector<bool> effective_scalar_;
  std::vector<int64_t> bytes_defined_;
  std::vector<std::vector<int32_t>> defined_, used_;
  std::vector<int64_t> value_size_;
  std::vector<std::vector<int32_t>> value_users_;
  std::vector<bool> value_lives_out_;
};

// The most bytes alive at once when `model`'s computation runs in `order`
// (instruction indices): each instruction's values are allocated when it
// runs, together with `callee_bytes[i]` (the peak of what it calls) for its
// duration, and freed after their last reader.
int64_t SimulateComputationPeak(const ComputationMemoryModel& model,
                                const std::vector<int32_t>& order,
                                const std::vector<int64_t>& callee_bytes);

}  // namespace xlite

#endif  // XLITE_SCHEDULE_MEMORY_MODEL_H_
