// HloComputation: a list of instructions with parameters and one root.
#ifndef XLITE_IR_COMPUTATION_H_
#define XLITE_IR_COMPUTATION_H_

#include <memory>
#include <string>
#include <vector>

#include "xlite/ir/instruction.h"

namespace xlite {

class HloModule;

class HloComputation {
 public:
  explicit HloComputation(std::string name) : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }

  // Takes ownership; instructions keep their insertion order, which the
  // printer preserves.
  HloInstruction* AddInstruction(std::unique_ptr<HloInstruction> instr);
  const std::vector<std::unique_ptr<HloInstruction>>& instructions() const { return instructions_; }
  int64_t instruction_count() const { return static_cast<int64_t>(instructions_.size()); }
  // Puts the instruction list in `order` (a scheduled module prints and runs
  // in this order). False, and nothing changes, unless `order` holds every
  // instruction of this computation exactly once.
  bool SetInstructionOrder(const std::vector<HloInstruction*>& order);
  // Moves `moved` (in that order) to just before `anchor`, the others keeping
  // their order. Instructions just added (the list's last ones, in order) are
  // moved without a lookup per instruction. False, and nothing changes,
  // unless `moved` and `anchor` are distinct instructions of this computation.
  bool MoveInstructionsBefore(const std::vector<HloInstruction*>& moved,
                              const HloInstruction* anchor);

  // Deletes `instr`, which must have no users and not be the root or a
  // parameter; it leaves its operands' user lists and all control edges.
  void RemoveInstruction(HloInstruction* instr);
  // The same for many instructions at once, in one sweep (no user may remain
  // outside the set).
  void RemoveInstructions(const std::vector<HloInstruction*>& instrs);

  // Every instruction after its operands and control predecessors (within
  // this computation); otherwise in list order.
  std::vector<HloInstruction*> MakeInstructionPostOrder() const;

  HloInstruction* root_instruction() const { return root_; }
  void set_root_instruction(HloInstruction* r) { root_ = r; }

  // Parameters indexed by parameter number (nullptr for gaps while parsing).
  const std::vector<HloInstruction*>& parameter_instructions() const { return parameters_; }
  HloInstruction* parameter_instruction(int64_t i) const { return parameters_[i]; }
  int64_t num_parameters() const { return static_cast<int64_t>(parameters_.size()); }
  void SetParameter(int64_t number, HloInstruction* p);

  HloModule* parent() const { return parent_; }
  void set_parent(HloModule* m) { parent_ = m; }

  bool is_entry() const { return is_entry_; }
  void set_is_entry(bool e) { is_entry_ = e; }
  const std::string& execution_thread() const { return execution_thread_; }
  void set_execution_thread(std::string t) { execution_thread_ = std::move(t); }

  // True for computations wrapped by async-start/update/done.
  bool IsAsyncComputation() const { return is_async_; }
  void set_is_async_computation(bool a) { is_async_ = a; }

  // The instruction this computation is fused into, if any.
  HloInstruction* fusion_instruction() const { return fusion_instruction_; }
  void set_fusion_instruction(HloInstruction* f) { fusion_instruction_ = f; }

  // Signature shape "(p0, p1) -> root" pieces.
  Shape ComputeProgramShapeResult() const { return root_ ? root_->shape() : Shape(); }

 private:
  std::string name_;
  std::vector<std::unique_ptr<HloInstruction>> instructions_;
  std::vector<HloInstruction*> parameters_;
  HloInstruction* root_ = nullptr;
  HloModule* parent_ = nullptr;
  bool is_entry_ = false;
  std::string execution_thread_ = "main";
  bool is_async_ = false;
  HloInstruction* fusion_instruction_ = nullptr;
};

}  // namespace xlite

#endif  // XLITE_IR_COMPUTATION_H_
