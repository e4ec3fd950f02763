#include "xlite/buffers/buffer_assignment.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "xlite/analysis/in_place_pairs.h"
#include "xlite/schedule/schedule_module.h"
#include "xlite/support/status.h"

namespace xlite {

const char* AllocationKindName(AllocationKind kind) {
  switch (kind) {
    case AllocationKind::kParameter:
      return "parameter";
    case AllocationKind::kConstant:
      return "constant";
    case AllocationKind::kOutput:
      return "output";
    case AllocationKind::kTemp:
      return "temp";
  }
  return "?";
}

std::optional<BufferSlice> BufferAssignment::GetSlice(const HloValue& value) const {
  if (value.id() < 0 || value.id() >= static_cast<int64_t>(value_slice_.size())) {
    return std::nullopt;
  }
  const BufferSlice& slice = value_slice_[value.id()];
  if (slice.allocation < 0) return std::nullopt;
  return slice;
}

std::optional<BufferSlice> BufferAssignment::GetSlice(const HloInstruction* instruction,
                                                      const ShapeIndex& index) const {
  const HloValue* value = alias_->dataflow_analysis().GetValueAt(instruction, index);
  if (value == nullptr) return std::nullopt;
  return GetSlice(*value);
}

int64_t BufferAssignment::BytesOf(AllocationKind kind) const {
  int64_t bytes = 0;
  for (const BufferAllocation& a : allocations_) {
    if (a.kind() == kind) bytes += a.size();
  }
  return bytes;
}

int64_t BufferAssignment::TotalBytes() const {
  int64_t bytes = 0;
  for (const BufferAllocation& a : allocations_) bytes += a.size();
  return bytes;
}

void BufferAssignment::MoveBufferForTesting(const HloBuffer& buffer, int64_t offset) {
  const int64_t index = buffer_allocation_[buffer.id()];
  if (index < 0) return;
  for (auto& [b, o] : allocations_[index].buffers_) {
    if (b == &buffer) o = offset;
  }
  Index();
}

// Fills each allocation's value list and the per-value slices from the
// per-buffer offsets.
void BufferAssignment::Index() {
  const HloDataflowAnalysis& dataflow = alias_->dataflow_analysis();
  value_slice_.assign(dataflow.value_count(), BufferSlice{});
  buffer_allocation_.assign(alias_->buffer_count(), -1);
  for (BufferAllocation& allocation : allocations_) {
    allocation.assigned_.clear();
    for (const auto& [buffer, offset] : allocation.buffers_) {
      buffer_allocation_[buffer->id()] = allocation.index_;
      for (const HloValue* value : buffer->values()) {
        if (live_range_->value_live_range(*value) == nullptr) continue;
        const int64_t size = ValueSizeBytes(*value);
        allocation.assigned_.push_back({value, offset, size});
        value_slice_[value->id()] = BufferSlice{allocation.index_, offset, size};
      }
    }
    std::sort(allocation.assigned_.begin(), allocation.assigned_.end(),
              [](const BufferAllocation::Assigned& a, const BufferAllocation::Assigned& b) {
                return a.value->id() < b.value->id();
              });
  }
}

class BufferAssigner {
 public:
  BufferAssigner(const HloModule& module, const AssignmentOptions& options)
      : module_(module), options_(options) {}

  absl::StatusOr<std::unique_ptr<BufferAssignment>> Run() {
    if (module_.entry_computation() == nullptr) {
      return InvalidArgument("module ", module_.name(), " has no entry computation");
    }
    if (!module_.config().is_scheduled) {
      return absl::FailedPreconditionError(absl::StrCat(
          "buffer assignment needs a scheduled module; ", module_.name(), " is not scheduled"));
    }
    if (options_.alignment < 1) {
      return InvalidArgument("alignment must be positive, got ", options_.alignment);
    }
    auto result = std::unique_ptr<BufferAssignment>(new BufferAssignment());
    result->options_ = options_;
    ASSIGN_OR_RETURN(result->alias_, HloAliasAnalysis::Run(module_));
    const CallGraph& graph = result->alias_->dataflow_analysis().call_graph();
    result->schedule_ = HloSchedule::FromInstructionOrder(ScheduledComputations(graph));
    ASSIGN_OR_RETURN(result->live_range_, HloLiveRange::Run(result->schedule_, *result->alias_));
    a_ = result.get();
    RETURN_IF_ERROR(Assign());
    a_->Index();
    return result;
  }

 private:
  struct Plan {
    const HloBuffer* buffer;
    AllocationKind kind;
    int64_t size;
    const HloValue* parameter = nullptr;  // the entry parameter value, if any
    bool live_out = false;
  };

  absl::Status Classify(const HloBuffer& buffer, Plan* plan) const {
    const HloComputation* entry = module_.entry_computation();
    const HloValue* parameter = nullptr;
    const HloValue* constant = nullptr;
    const HloValue* written = nullptr;  // a value that is neither, nor a phi
    bool live_out = false;
    for (const HloValue* value : buffer.values()) {
      const HloInstruction* d = value->defining_instruction();
      if (a_->live_range_->value_live_range(*value) == nullptr) continue;
      live_out |= value->live_out_of_module();
      if (d->opcode() == HloOpcode::kParameter && d->parent() == entry) {
        if (parameter != nullptr) {
          return absl::FailedPreconditionError(absl::StrCat(
              "buffer assignment: entry parameters ", parameter->ToShortString(), " and ",
              value->ToShortString(), " share one buffer (run copy-insertion)"));
        }
        parameter = value;
      } else if (d->opcode() == HloOpcode::kConstant) {
        if (constant != nullptr) {
          return absl::FailedPreconditionError(
              absl::StrCat("buffer assignment: constants ", constant->ToShortString(), " and ",
                           value->ToShortString(), " share one buffer (run copy-insertion)"));
        }
        constant = value;
      } else if (!value->is_phi()) {
        written = value;
      }
    }
    plan->buffer = &buffer;
    plan->size = a_->live_range_->buffer_size(buffer);
    plan->live_out = live_out;
    plan->parameter = parameter;
    if (constant != nullptr && (parameter != nullptr || written != nullptr || live_out)) {
      return absl::FailedPreconditionError(
          absl::StrCat("buffer assignment: constant ", constant->ToShortString(),
                       live_out ? " is an output" : " shares its buffer with values written later",
                       "; constants are read-only (run copy-insertion)"));
    }
    if (parameter != nullptr && (live_out || written != nullptr) && !ParameterDonated(*parameter)) {
      return absl::FailedPreconditionError(
          absl::StrCat("buffer assignment: parameter ", parameter->ToShortString(),
                       " is not donated (no input_output_alias), but ",
                       live_out ? "it is an output" : "values are written into its buffer",
                       " (run copy-insertion)"));
    }
    if (parameter != nullptr) {
      plan->kind = AllocationKind::kParameter;
    } else if (constant != nullptr) {
      plan->kind = AllocationKind::kConstant;
    } else if (live_out) {
      plan->kind = AllocationKind::kOutput;
    } else {
      plan->kind = AllocationKind::kTemp;
    }
    return absl::OkStatus();
  }

  bool ParameterDonated(const HloValue& parameter) const {
    const ModuleConfig& config = module_.config();
    if (!config.input_output_alias_present) return false;
    const int64_t number = parameter.defining_instruction()->attrs().parameter_number;
    for (const InputOutputAlias& a : config.input_output_alias) {
      if (a.parameter_number == number && a.parameter_index == parameter.defining_index()) {
        return true;
      }
    }
    return false;
  }

  absl::Status Assign() {
    const HloAliasAnalysis& alias = *a_->alias_;
    const HloLiveRange& live = *a_->live_range_;
    std::vector<Plan> fixed, temps;
    for (const HloBuffer& buffer : alias.buffers()) {
      if (live.buffer_live_range(buffer) == nullptr) continue;  // not run sequentially
      Plan plan;
      RETURN_IF_ERROR(Classify(buffer, &plan));
      (plan.kind == AllocationKind::kTemp ? temps : fixed).push_back(plan);
    }
    // XLA's numbering: larger first; ties by the buffer's first value.
    std::stable_sort(fixed.begin(), fixed.end(),
                     [](const Plan& a, const Plan& b) { return a.size > b.size; });
    for (const Plan& plan : fixed) {
      BufferAllocation allocation;
      allocation.index_ = static_cast<int64_t>(a_->allocations_.size());
      allocation.size_ = plan.size;
      allocation.kind_ = plan.kind;
      allocation.maybe_live_out_ = plan.live_out;
      if (plan.parameter != nullptr) {
        allocation.parameter_number_ =
            plan.parameter->defining_instruction()->attrs().parameter_number;
        allocation.parameter_index_ = plan.parameter->defining_index();
      }
      allocation.buffers_.push_back({plan.buffer, 0});
      a_->allocations_.push_back(std::move(allocation));
    }
    if (temps.empty()) return absl::OkStatus();
    temps = PlaceInOutputs(std::move(temps), &a_->heap_);
    if (temps.empty()) return absl::OkStatus();
    BufferAllocation heap;
    heap.index_ = static_cast<int64_t>(a_->allocations_.size());
    heap.kind_ = AllocationKind::kTemp;
    // Rounded up, so the heap holds a whole number of aligned blocks.
    heap.size_ =
        (a_->heap_.heap_size + options_.alignment - 1) / options_.alignment * options_.alignment;
    for (size_t i = 0; i < temps.size(); ++i) {
      heap.buffers_.push_back({temps[i].buffer, a_->heap_.offsets[i]});
    }
    a_->temp_allocation_ = heap.index_;
    a_->allocations_.push_back(std::move(heap));
    return absl::OkStatus();
  }

  std::vector<HeapInterval> Intervals(const std::vector<Plan>& plans) const {
    std::vector<HeapInterval> intervals;
    intervals.reserve(plans.size());
    for (const Plan& plan : plans) {
      const LiveRange* range = a_->live_range_->buffer_live_range(*plan.buffer);
      intervals.push_back(HeapInterval{plan.size, range->start, range->end});
    }
    return intervals;
  }

  // As XLA's heap simulator shares a buffer with an operand buffer that dies
  // where it is made: when every read of that operand by the user that makes
  // it may be overwritten (MayShareOperandBuffer: elementwise ops and loop
  // fusions reading element i for element i), the two take one interval and
  // the kernel runs in place: no fresh bytes to fault in and fill, and no
  // more live at once. Per plan, the plan whose bytes it takes (itself if
  // none); each operand buffer goes to one user's result at most.
  std::vector<size_t> ShareWithOperands(const std::vector<Plan>& plans) const {
    const HloAliasAnalysis& alias = *a_->alias_;
    const HloLiveRange& live = *a_->live_range_;
    absl::flat_hash_map<const HloBuffer*, size_t> plan_of;
    for (size_t i = 0; i < plans.size(); ++i) plan_of[plans[i].buffer] = i;
    std::vector<size_t> host(plans.size());
    std::iota(host.begin(), host.end(), size_t{0});
    std::vector<bool> taken(plans.size(), false);
    for (size_t i = 0; i < plans.size(); ++i) {
      const HloBuffer& buffer = *plans[i].buffer;
      const LiveRange* range = live.buffer_live_range(buffer);
      if (buffer.values().size() != 1 || plans[i].size <= 0 || range == nullptr) continue;
      const HloValue& value = *buffer.values()[0];
      const HloInstruction& user = *value.defining_instruction();
      for (int64_t k = 0; k < user.operand_count(); ++k) {
        const HloBuffer* operand = alias.GetBufferAt(user.operand(k));
        auto it = operand == nullptr ? plan_of.end() : plan_of.find(operand);
        if (it == plan_of.end() || taken[it->second] || plans[it->second].size != plans[i].size) {
          continue;
        }
        const LiveRange* operand_range = live.buffer_live_range(*operand);
        if (operand_range == nullptr || operand_range->end != range->start) continue;
        if (!EveryReadMayShare(operand->values(), user, value.defining_index())) continue;
        taken[it->second] = true;
        host[i] = it->second;
        break;
      }
    }
    return host;
  }

  // The heap for `plans`, a buffer sharing its operand's bytes
  // (ShareWithOperands) placed as one interval with it.
  HeapPlacement PlaceTemps(const std::vector<Plan>& plans) const {
    const std::vector<size_t> host = ShareWithOperands(plans);
    const std::vector<HeapInterval> own = Intervals(plans);
    std::vector<HeapInterval> groups;
    std::vector<int64_t> group_of_root(plans.size(), -1), group(plans.size());
    for (size_t i = 0; i < plans.size(); ++i) {
      size_t root = i;
      while (host[root] != root) root = host[root];
      int64_t& g = group_of_root[root];
      if (g < 0) {
        g = static_cast<int64_t>(groups.size());
        groups.push_back(own[i]);
      }
      HeapInterval& interval = groups[g];
      interval.size = std::max(interval.size, own[i].size);
      interval.start = std::min(interval.start, own[i].start);
      interval.end = std::max(interval.end, own[i].end);
      group[i] = g;
    }
    HeapPlacement placed = PlaceIntervals(groups, options_.alignment);
    std::vector<int64_t> offsets(plans.size());
    for (size_t i = 0; i < plans.size(); ++i) offsets[i] = placed.offsets[group[i]];
    placed.offsets = std::move(offsets);
    return placed;
  }

  static bool IsArrayBuffer(const HloBuffer& buffer) {
    return std::all_of(buffer.values().begin(), buffer.values().end(),
                       [](const HloValue* v) { return v->shape().IsArray(); });
  }

  // As XLA does, a temp may live in an output's allocation while no output
  // value is live there (before the output is made): those bytes are held
  // anyway. Larger temps first, each into the smallest output allocation
  // with room and time for it; arrays only (tuple tables stay apart). Kept
  // only if the heap gets no larger; returns the temps left for the heap,
  // placed in `heap`.
  std::vector<Plan> PlaceInOutputs(std::vector<Plan> temps, HeapPlacement* heap) {
    const HloLiveRange& live = *a_->live_range_;
    struct Host {
      BufferAllocation* allocation;
      std::vector<LiveRange> busy;
    };
    std::vector<Host> hosts;
    for (BufferAllocation& allocation : a_->allocations_) {
      if (allocation.kind_ != AllocationKind::kOutput || allocation.buffers_.size() != 1 ||
          !IsArrayBuffer(*allocation.buffers_[0].first)) {
        continue;
      }
      hosts.push_back({&allocation, {*live.buffer_live_range(*allocation.buffers_[0].first)}});
    }
    auto alone = [&]() {
      *heap = PlaceTemps(temps);
      return std::move(temps);
    };
    if (hosts.empty()) return alone();
    std::sort(hosts.begin(), hosts.end(), [](const Host& a, const Host& b) {
      return a.allocation->size_ < b.allocation->size_;
    });
    std::vector<size_t> order(temps.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return temps[a].size > temps[b].size; });
    std::vector<int> host_of(temps.size(), -1);
    for (size_t i : order) {
      const Plan& plan = temps[i];
      if (plan.size <= 0 || !IsArrayBuffer(*plan.buffer)) continue;
      const LiveRange range = *live.buffer_live_range(*plan.buffer);
      for (size_t h = 0; h < hosts.size(); ++h) {
        if (hosts[h].allocation->size_ < plan.size) continue;
        const bool free = std::none_of(
            hosts[h].busy.begin(), hosts[h].busy.end(),
            [&](const LiveRange& r) { return r.start <= range.end && range.start <= r.end; });
        if (!free) continue;
        hosts[h].busy.push_back(range);
        host_of[i] = static_cast<int>(h);
        break;
      }
    }
    std::vector<Plan> rest;
    for (size_t i = 0; i < temps.size(); ++i) {
      if (host_of[i] < 0) rest.push_back(temps[i]);
    }
    if (rest.size() == temps.size()) return alone();
    HeapPlacement shared;
    if (!rest.empty()) shared = PlaceTemps(rest);
    if (HeapPlacement all = PlaceTemps(temps); shared.heap_size > all.heap_size) {
      *heap = std::move(all);
      return temps;
    }
    *heap = std::move(shared);
    for (size_t i = 0; i < temps.size(); ++i) {
      if (host_of[i] >= 0) hosts[host_of[i]].allocation->buffers_.push_back({temps[i].buffer, 0});
    }
    return rest;
  }

  const HloModule& module_;
  AssignmentOptions options_;
  BufferAssignment* a_ = nullptr;
};

absl::StatusOr<std::unique_ptr<BufferAssignment>> AssignBuffers(const HloModule& module,
                                                                const AssignmentOptions& options) {
  return BufferAssigner(module, options).Run();
}

}  // namespace xlite
