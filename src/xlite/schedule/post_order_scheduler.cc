#include "xlite/schedule/memory_schedulers.h"
#include "xlite/support/status.h"

namespace xlite {

// HloComputation::MakeInstructionPostOrder on the model's indices: from each
// instruction in list order, a DFS over operands, then control predecessors.
absl::StatusOr<std::vector<int32_t>> PostOrderSchedule(const ComputationMemoryModel& model) {
  const int32_t n = model.size();
  std::vector<int32_t> order;
  order.reserve(n);
  std::vector<bool> seen(n, false);
  std::vector<std::pair<int32_t, size_t>> stack;
  for (int32_t start = 0; start < n; ++start) {
    if (seen[start]) continue;
    seen[start] = true;
    stack.push_back({start, 0});
    while (!stack.empty()) {
      auto& [i, next] = stack.back();
      const std::vector<int32_t>& preds = model.predecessors(i);
      if (next == preds.size()) {
        order.push_back(i);
        stack.pop_back();
        continue;
      }
      const int32_t p = preds[next++];
      if (!seen[p]) {
        seen[p] = true;
        stack.push_back({p, 0});
      }
    }
  }
  return order;
}

}  // namespace xlite
