#include <algorithm>

#include "xlite/schedule/memory_schedulers.h"
#include "xlite/support/status.h"

namespace xlite {

absl::StatusOr<std::vector<int32_t>> DfsSchedule(const ComputationMemoryModel& model) {
  const int32_t n = model.size();
  ASSIGN_OR_RETURN(std::vector<int32_t> post_order, PostOrderSchedule(model));

  // Per instruction, over everything reachable through its operands (paths
  // counted again where they rejoin, capped so sums cannot overflow): users
  // beyond the first, and bytes defined. Parameters and constants count 0.
  std::vector<int64_t> extra_users(n, 0), total_bytes(n, 0);
  int64_t cumulative_bytes = 0;
  for (int32_t i : post_order) {
    if (model.opcode(i) == HloOpcode::kParameter || model.opcode(i) == HloOpcode::kConstant) {
      continue;
    }
    extra_users[i] = std::max(0, model.user_count(i) - 1);
    total_bytes[i] = model.bytes_defined(i);
    cumulative_bytes += model.bytes_defined(i);
    for (int32_t k = 0; k < model.operand_predecessor_count(i); ++k) {
      const int32_t p = model.predecessors(i)[k];
      extra_users[i] += extra_users[p];
      total_bytes[i] += total_bytes[p];
    }
    total_bytes[i] = std::min(total_bytes[i], cumulative_bytes);
    extra_users[i] = std::min<int64_t>(extra_users[i], n);
  }
  auto visit_first = [&](int32_t a, int32_t b) {
    if (extra_users[a] != extra_users[b]) return extra_users[a] > extra_users[b];
    if (total_bytes[a] != total_bytes[b]) return total_bytes[a] > total_bytes[b];
    return model.instruction(a)->name() < model.instruction(b)->name();
  };

  // Post-order DFS from the instructions nothing depends on, the root last.
  enum State : uint8_t { kNew, kOpen, kDone };
  std::vector<State> state(n, kNew);
  std::vector<int32_t> order;
  order.reserve(n);
  std::vector<int32_t> children;
  std::vector<std::pair<int32_t, bool>> stack;
  auto dfs = [&](int32_t start) {
    stack.push_back({start, false});
    while (!stack.empty()) {
      auto [i, expanded] = stack.back();
      stack.pop_back();
      if (expanded) {
        state[i] = kDone;
        order.push_back(i);
        continue;
      }
      if (state[i] != kNew) continue;
      state[i] = kOpen;
      stack.push_back({i, true});
      // Operands by memory effect, then control predecessors; pushed in
      // reverse so the first is visited first.
      const std::vector<int32_t>& preds = model.predecessors(i);
      const int32_t operands = model.operand_predecessor_count(i);
      children.assign(preds.begin(), preds.begin() + operands);
      std::sort(children.begin(), children.end(), visit_first);
      children.insert(children.end(), preds.begin() + operands, preds.end());
      for (auto it = children.rbegin(); it != children.rend(); ++it) {
        if (state[*it] == kNew) stack.push_back({*it, false});
      }
    }
  };
  const HloInstruction* root = model.computation().root_instruction();
  for (int32_t i = 0; i < n; ++i) {
    if (model.instruction(i) != root && model.successors(i).empty()) dfs(i);
  }
  if (const int32_t r = model.index_of(root); r >= 0) dfs(r);
  if (static_cast<int32_t>(order.size()) != n) {
    return InvalidArgument("computation '", model.computation().name(),
                           "' has a cycle through operands or control edges");
  }
  return order;
}

}  // namespace xlite
