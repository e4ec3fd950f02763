#include <cstdint>
#include <limits>
#include <set>
#include <tuple>

#include "xlite/analysis/shape_util.h"
#include "xlite/schedule/memory_schedulers.h"
#include "xlite/support/status.h"

namespace xlite {
namespace {

class ListScheduler {
 public:
  ListScheduler(const ComputationMemoryModel& model, const std::vector<int64_t>& callee_bytes)
      : model_(model), callee_bytes_(callee_bytes) {}

  absl::StatusOr<std::vector<int32_t>> Run() {
    const int32_t n = model_.size();
    unscheduled_uses_.resize(model_.value_count());
    for (int32_t v = 0; v < model_.value_count(); ++v) unscheduled_uses_[v] = model_.use_count(v);
    std::vector<int32_t> waiting(n);
    key_.assign(n, Key{});
    ready_flag_.assign(n, false);
    for (int32_t i = 0; i < n; ++i) {
      waiting[i] = static_cast<int32_t>(model_.predecessors(i).size());
      if (waiting[i] == 0) MakeReady(i);
    }
    std::vector<int32_t> order;
    order.reserve(n);
    while (!ready_.empty()) {
      auto best = std::prev(ready_.end());
      const int32_t i = std::get<3>(*best);
      ready_.erase(best);
      ready_flag_[i] = false;
      order.push_back(i);
      for (int32_t v : model_.used_values(i)) {
        if (--unscheduled_uses_[v] != 1) continue;
        // The value's last reader frees it now: those readers rank higher.
        for (int32_t user : model_.value_users(v)) {
          if (ready_flag_[user]) Rekey(user);
        }
      }
      for (int32_t s : model_.successors(i)) {
        if (--waiting[s] == 0) MakeReady(s);
      }
    }
    if (static_cast<int32_t>(order.size()) != n) {
      return InvalidArgument("computation '", model_.computation().name(),
                             "' has a cycle through operands or control edges");
    }
    return order;
  }

 private:
  // (bytes freed minus bytes allocated, user count, readiness order, index):
  // the largest runs next; among equals the most recently ready.
  using Key = std::tuple<int64_t, int64_t, int64_t, int32_t>;

  Key Priority(int32_t i) {
    const HloInstruction* instr = model_.instruction(i);  // read only for feeds
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    // Scalars cluster, so unfused ones can stay in registers.
    if (model_.is_effective_scalar(i)) return {kMax, kMax, sequence_++, i};
    const int64_t users = model_.user_count(i);
    const HloOpcode op = model_.opcode(i);
    // An outfeed early and an infeed late give the other side time (XLA).
    if (op == HloOpcode::kOutfeed && !instr->attrs().outfeed_config.empty()) {
      return {kMax, users, sequence_++, i};
    }
    if (op == HloOpcode::kInfeed && !instr->attrs().infeed_config.empty()) {
      return {std::numeric_limits<int64_t>::min(), users, sequence_++, i};
    }
    int64_t freed = 0;
    for (int32_t v : model_.used_values(i)) {
      if (unscheduled_uses_[v] == 1) freed += model_.value_size(v);
    }
    const int64_t callee = callee_bytes_[i];
    // A while's, call's or conditional's result is its callee's result,
    // which the callee's peak already counts.
    const bool result_from_callee =
        op == HloOpcode::kWhile || op == HloOpcode::kCall || op == HloOpcode::kConditional;
    const int64_t allocated =
        callee > 0 && result_from_callee ? callee : model_.bytes_defined(i) + callee;
    return {freed - allocated, users, sequence_++, i};
  }

  void MakeReady(int32_t i) {
    key_[i] = Priority(i);
    ready_.insert(key_[i]);
    ready_flag_[i] = true;
  }

  void Rekey(int32_t i) {
    const Key fresh = Priority(i);
    if (std::get<0>(fresh) == std::get<0>(key_[i]) && std::get<1>(fresh) == std::get<1>(key_[i])) {
      return;
    }
    ready_.erase(key_[i]);
    key_[i] = fresh;
    ready_.insert(key_[i]);
  }

  const ComputationMemoryModel& model_;
  const std::vector<int64_t>& callee_bytes_;
  std::vector<int32_t> unscheduled_uses_;
  std::set<Key> ready_;
  std::vector<Key> key_;
  std::vector<bool> ready_flag_;
  int64_t sequence_ = 0;
};

}  // namespace

absl::StatusOr<std::vector<int32_t>> ListSchedule(const ComputationMemoryModel& model,
                                                  const std::vector<int64_t>& callee_bytes) {
  return ListScheduler(model, callee_bytes).Run();
}

}  // namespace xlite
