// Control flow: while, conditional and call, each running nested
// ThunkSequences through the executor (ExecuteParams::executor). The thunk
// emitter wires the values: where the buffer assignment puts an operand and
// the callee's parameter (or the callee's root and the result) in different
// slices, the nested sequences start (or end) with copies, so these thunks
// only decide what runs.
#ifndef XLITE_CPU_CONTROL_FLOW_THUNKS_H_
#define XLITE_CPU_CONTROL_FLOW_THUNKS_H_

#include <string>
#include <vector>

#include "xlite/cpu/thunk.h"

namespace xlite::cpu {

// while: runs `condition`, reads the pred at `predicate`, and while it is
// true runs `body` and the condition again.
class WhileThunk final : public Thunk {
 public:
  WhileThunk(ThunkInfo info, ThunkSequence condition, BufferSlice predicate, ThunkSequence body);

  absl::Status Execute(const ExecuteParams& params) const override;
  std::vector<BufferUse> buffer_uses() const override;
  std::vector<std::pair<std::string, const ThunkSequence*>> nested() const override;
  std::string Details() const override;
  std::vector<ThunkSequence*> mutable_nested() override { return {&condition_, &body_}; }

  const ThunkSequence& condition() const { return condition_; }
  const BufferSlice& predicate() const { return predicate_; }
  const ThunkSequence& body() const { return body_; }

 private:
  ThunkSequence condition_;
  BufferSlice predicate_;
  ThunkSequence body_;
};

// conditional: reads the branch selector at `selector` (a pred: true runs
// branch 0, false branch 1; an s32: that branch, out-of-range ones the last,
// as XLA specifies) and runs that branch's sequence.
class ConditionalThunk final : public Thunk {
 public:
  ConditionalThunk(ThunkInfo info, BufferSlice selector, bool selector_is_pred,
                   std::vector<ThunkSequence> branches);

  absl::Status Execute(const ExecuteParams& params) const override;
  std::vector<BufferUse> buffer_uses() const override;
  std::vector<std::pair<std::string, const ThunkSequence*>> nested() const override;
  std::string Details() const override;

  // The branch XLA runs for selector value `index` among `count` branches.
  static int64_t BranchFor(int64_t index, int64_t count);

  std::vector<ThunkSequence*> mutable_nested() override;
  const BufferSlice& selector() const { return selector_; }
  bool selector_is_pred() const { return selector_is_pred_; }
  const std::vector<ThunkSequence>& branches() const { return branches_; }

 private:
  BufferSlice selector_;
  bool selector_is_pred_;
  std::vector<ThunkSequence> branches_;
};

// call: runs the callee's sequence once.
class CallThunk final : public Thunk {
 public:
  CallThunk(ThunkInfo info, ThunkSequence callee);

  absl::Status Execute(const ExecuteParams& params) const override;
  std::vector<BufferUse> buffer_uses() const override;
  std::vector<std::pair<std::string, const ThunkSequence*>> nested() const override;
  std::vector<ThunkSequence*> mutable_nested() override { return {&callee_}; }

  const ThunkSequence& callee() const { return callee_; }

 private:
  ThunkSequence callee_;
};

}  // namespace xlite::cpu

#endif  // XLITE_CPU_CONTROL_FLOW_THUNKS_H_
