#include "xlite/schedule/schedule_module.h"

#include <algorithm>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "xlite/analysis/hlo_live_range.h"
#include "xlite/schedule/memory_model.h"
#include "xlite/schedule/memory_schedulers.h"
#include "xlite/support/status.h"

namespace xlite {
namespace {

// The memory model of every scheduled computation, callees first.
std::vector<std::unique_ptr<ComputationMemoryModel>> BuildModels(
    const HloDataflowAnalysis& dataflow, const std::vector<int64_t>* value_sizes) {
  std::vector<std::unique_ptr<ComputationMemoryModel>> models;
  MemoryModelScratch scratch;
  scratch.value_sizes = value_sizes;
  for (const HloComputation* c : ScheduledComputations(dataflow.call_graph())) {
    models.push_back(std::make_unique<ComputationMemoryModel>(*c, dataflow, &scratch));
  }
  return models;
}

absl::StatusOr<std::vector<int32_t>> RunOn(MemoryScheduler scheduler,
                                           const ComputationMemoryModel& model,
                                           const std::vector<int64_t>& callee_bytes) {
  switch (scheduler) {
    case MemoryScheduler::kList:
      return ListSchedule(model, callee_bytes);
    case MemoryScheduler::kDfs:
      return DfsSchedule(model);
    case MemoryScheduler::kPostOrder:
      return PostOrderSchedule(model);
  }
  return InvalidArgument("unknown scheduler");
}

absl::StatusOr<HloSchedule> ScheduleWith(
    const std::vector<std::unique_ptr<ComputationMemoryModel>>& models, MemoryScheduler scheduler) {
  HloSchedule schedule;
  // Peak of each computation already scheduled, for its callers.
  absl::flat_hash_map<const HloComputation*, int64_t> peak_of;
  std::vector<int64_t> callee_bytes;
  for (const auto& model : models) {
    callee_bytes.assign(model->size(), 0);
    for (int32_t i = 0; i < model->size(); ++i) {
      const HloOpcode op = model->opcode(i);
      // Only these run scheduled computations; the rest call embedded ones.
      if (op != HloOpcode::kCall && op != HloOpcode::kWhile && op != HloOpcode::kConditional &&
          op != HloOpcode::kAsyncStart) {
        continue;
      }
      for (const HloComputation* callee : model->instruction(i)->called_computations()) {
        auto it = peak_of.find(callee);
        if (it != peak_of.end()) callee_bytes[i] = std::max(callee_bytes[i], it->second);
      }
    }
    ASSIGN_OR_RETURN(std::vector<int32_t> order, RunOn(scheduler, *model, callee_bytes));
    peak_of[&model->computation()] = SimulateComputationPeak(*model, order, callee_bytes);
    std::vector<HloInstruction*> sequence;
    sequence.reserve(order.size());
    for (int32_t i : order) sequence.push_back(model->instruction(i));
    schedule.set_sequence(&model->computation(), std::move(sequence));
  }
  return schedule;
}

absl::StatusOr<int64_t> SimulatedPeak(const HloSchedule& schedule, const HloAliasAnalysis& alias,
                                      const std::vector<int64_t>& value_sizes) {
  LiveRangeOptions options;
  options.allow_unflattened = true;  // an estimate to compare orders
  options.value_sizes = &value_sizes;
  ASSIGN_OR_RETURN(std::unique_ptr<HloLiveRange> live, HloLiveRange::Run(schedule, alias, options));
  return live->peak_bytes();
}

absl::Status VerifyScheduleWith(const CallGraph& call_graph, const HloSchedule& schedule) {
  for (const HloComputation* c : ScheduledComputations(call_graph)) {
    if (!schedule.is_computation_scheduled(c)) {
      return InvalidArgument("computation '", c->name(), "' has no schedule");
    }
    RETURN_IF_ERROR(HloSchedule::VerifySequence(*c, schedule.sequence(c)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::string_view MemorySchedulerName(MemoryScheduler scheduler) {
  switch (scheduler) {
    case MemoryScheduler::kList:
      return "list";
    case MemoryScheduler::kDfs:
      return "dfs";
    case MemoryScheduler::kPostOrder:
      return "post-order";
  }
  return "?";
}

std::vector<const HloComputation*> ScheduledComputations(const CallGraph& call_graph) {
  std::vector<const HloComputation*> out;
  for (const HloComputation* c : call_graph.ComputationsInPostOrder()) {
    if (call_graph.IsSequential(c)) out.push_back(c);
  }
  return out;
}

absl::StatusOr<HloSchedule> RunMemoryScheduler(const HloAliasAnalysis& alias,
                                               MemoryScheduler scheduler) {
  return ScheduleWith(BuildModels(alias.dataflow_analysis(), nullptr), scheduler);
}

absl::Status VerifySchedule(const HloModule& module, const HloSchedule& schedule) {
  ASSIGN_OR_RETURN(std::unique_ptr<CallGraph> call_graph, CallGraph::Build(module));
  return VerifyScheduleWith(*call_graph, schedule);
}

absl::StatusOr<ScheduleResult> ProposeSchedule(const HloModule& module,
                                               const ScheduleOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<HloAliasAnalysis> alias, HloAliasAnalysis::Run(module));
  const HloDataflowAnalysis& dataflow = alias->dataflow_analysis();
  const std::vector<int64_t> sizes = ComputeValueSizes(dataflow);
  for (HloValue::Id v = 0; v < dataflow.value_count(); ++v) {
    const HloValue& value = dataflow.GetValue(v);
    if (sizes[v] < 0 &&
        dataflow.call_graph().IsSequential(value.defining_instruction()->parent())) {
      return Unimplemented("cannot schedule for memory: value ", value.ToShortString(),
                           " has shape ", value.shape().ToString(),
                           " with an unbounded dimension, whose size is unknown");
    }
  }
  ScheduleResult result;
  if (options.keep_existing_schedule && module.config().is_scheduled) {
    result.schedule =
        HloSchedule::FromInstructionOrder(ScheduledComputations(dataflow.call_graph()));
    if (absl::Status s = VerifyScheduleWith(dataflow.call_graph(), result.schedule); !s.ok()) {
      return InvalidArgument("module ", module.name(),
                             " is_scheduled=true, but its order is not a schedule: ", s.message());
    }
    result.chosen = "existing";
    ASSIGN_OR_RETURN(result.peak_bytes, SimulatedPeak(result.schedule, *alias, sizes));
    return result;
  }
  if (options.schedulers.empty()) return InvalidArgument("ScheduleOptions names no scheduler");
  const auto models = BuildModels(dataflow, &sizes);
  bool have = false;
  for (MemoryScheduler scheduler : options.schedulers) {
    ASSIGN_OR_RETURN(HloSchedule schedule, ScheduleWith(models, scheduler));
    // The schedulers' orders are topological by construction (the corpus
    // test checks them independently); ApplyTo checks before writing.
    ASSIGN_OR_RETURN(int64_t peak, SimulatedPeak(schedule, *alias, sizes));
    result.peaks.push_back({scheduler, peak});
    if (!have || peak < result.peak_bytes) {
      have = true;
      result.peak_bytes = peak;
      result.chosen = std::string(MemorySchedulerName(scheduler));
      result.schedule = std::move(schedule);
    }
  }
  return result;
}

absl::StatusOr<ScheduleResult> ScheduleModule(HloModule& module, const ScheduleOptions& options) {
  ASSIGN_OR_RETURN(ScheduleResult result, ProposeSchedule(module, options));
  RETURN_IF_ERROR(result.schedule.ApplyTo(module));
  return result;
}

}  // namespace xlite
