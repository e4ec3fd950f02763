#include "xlite/analysis/hlo_live_range.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "xlite/support/status.h"

namespace xlite {

// Works on the dataflow's dense instruction ids: one hash lookup per
// scheduled instruction, arrays everywhere else.
class HloLiveRange::Builder {
 public:
  Builder(HloLiveRange& r, const HloSchedule& schedule, const LiveRangeOptions& options)
      : r_(r),
        df_(r.alias_->dataflow_analysis()),
        schedule_(schedule),
        options_(options),
        span_start_(df_.instruction_count(), -1),
        span_end_(df_.instruction_count(), -1),
        async_end_(df_.instruction_count(), -1) {
    r_.time_.assign(df_.instruction_count(), -1);
  }

  absl::Status Run() {
    if (options_.value_sizes == nullptr) {
      own_sizes_ = ComputeValueSizes(df_);
      sizes_ = &own_sizes_;
    } else if (static_cast<int64_t>(options_.value_sizes->size()) != df_.value_count()) {
      return InvalidArgument("LiveRangeOptions::value_sizes has ", options_.value_sizes->size(),
                             " sizes for ", df_.value_count(), " values");
    } else {
      sizes_ = options_.value_sizes;
    }
    const HloModule& module = df_.module();
    const HloComputation* entry = module.entry_computation();
    if (entry == nullptr) return InvalidArgument("module ", module.name(), " has no entry");
    RETURN_IF_ERROR(Flatten(entry, nullptr));
    ComputeAsyncEnds();
    RETURN_IF_ERROR(ComputeValueRanges());
    ComputeBufferRanges();
    ComputePeak();
    return absl::OkStatus();
  }

 private:
  absl::Status Flatten(const HloComputation* computation, const HloInstruction* async_start) {
    if (!flattening_.insert(computation).second) {
      if (options_.allow_unflattened) return absl::OkStatus();
      return absl::FailedPreconditionError(absl::StrCat(
          "computation '", computation->name(),
          "' runs from more than one sequential call site; memory planning needs one site per "
          "computation (run flatten-call-graph first)"));
    }
    if (!schedule_.is_computation_scheduled(computation)) {
      return absl::FailedPreconditionError(
          absl::StrCat("computation '", computation->name(), "' has no schedule"));
    }
    if (async_start != nullptr) async_context_.push_back({computation, async_start});
    const int64_t start = static_cast<int64_t>(r_.sequence_.size());
    const std::vector<HloInstruction*>& sequence = schedule_.sequence(computation);
    std::vector<int32_t> ids;
    ids.reserve(sequence.size());
    for (HloInstruction* instr : sequence) {
      const int32_t id = instr->parent() == computation ? df_.instruction_id(instr) : -1;
      if (id < 0) {
        return InvalidArgument("the schedule of '", computation->name(), "' holds '", instr->name(),
                               "' of another computation");
      }
      if (r_.time_[id] >= 0) {
        return InvalidArgument("the schedule of '", computation->name(), "' holds '", instr->name(),
                               "' twice");
      }
      ids.push_back(id);
      const auto& called = instr->called_computations();
      switch (instr->opcode()) {
        case HloOpcode::kCall:
        case HloOpcode::kConditional:
        case HloOpcode::kWhile:  // condition, then body
          for (const HloComputation* c : called) RETURN_IF_ERROR(Flatten(c, async_start));
          break;
        case HloOpcode::kAsyncStart:
          if (!called.empty()) RETURN_IF_ERROR(Flatten(called[0], instr));
          break;
        default:
          break;
      }
      r_.time_[id] = static_cast<int64_t>(r_.sequence_.size());
      r_.sequence_.push_back(instr);
    }
    const int64_t end = static_cast<int64_t>(r_.sequence_.size());
    r_.span_[computation] = LiveRange{start, end};
    for (int32_t id : ids) {
      span_start_[id] = start;
      span_end_[id] = end;
    }
    return absl::OkStatus();
  }

  // The time of the async-done ending the chain an async-start begins, or
  // the end of the start's computation when the chain has no done.
  int64_t AsyncDoneTime(const HloInstruction* start) const {
    const HloInstruction* current = start;
    for (size_t steps = 0; steps <= r_.sequence_.size(); ++steps) {
      const HloInstruction* next = nullptr;
      for (const HloInstruction* user : current->users()) {
        if ((user->opcode() == HloOpcode::kAsyncUpdate ||
             user->opcode() == HloOpcode::kAsyncDone) &&
            user->operand_count() > 0 && user->operand(0) == current) {
          next = user;
          break;
        }
      }
      if (next == nullptr) break;
      if (next->opcode() == HloOpcode::kAsyncDone) {
        const int64_t t = r_.instruction_time(next);
        if (t >= 0) return t;
        break;
      }
      current = next;
    }
    const LiveRange* span = r_.computation_span(start->parent());
    return span != nullptr ? span->end : r_.schedule_end_time();
  }

  // Everything flattened under an async-start (its computation and what that
  // calls) lives at least until the chain's done.
  void ComputeAsyncEnds() {
    for (const auto& [computation, start] : async_context_) {
      const int64_t done = AsyncDoneTime(start);
      for (const HloInstruction* instr : schedule_.sequence(computation)) {
        async_end_[df_.instruction_id(instr)] = done;
      }
    }
  }

  bool IsRoot(int32_t id) const { return df_.is_root(id); }

  // A position in a computation's root counts as the computation's end.
  int64_t PositionTime(int32_t id) const { return IsRoot(id) ? span_end_[id] : r_.time_[id]; }

  bool FlowsInto(HloValue::Id value, const HloComputation* callee) const {
    for (int32_t id : df_.position_instruction_ids(value)) {
      if (df_.instruction(id)->parent() == callee) return true;
    }
    return false;
  }

  int64_t LastUseTime(HloValue::Id value) const {
    int64_t end = -1;
    for (int32_t id : df_.use_instruction_ids(value)) {
      const HloOpcode op = df_.opcode(id);
      if (op != HloOpcode::kCall && op != HloOpcode::kWhile) {
        end = std::max(end, r_.time_[id]);
        continue;
      }
      const HloInstruction* user = df_.instruction(id);
      if (op == HloOpcode::kCall && !user->called_computations().empty() &&
          r_.span_.contains(user->called_computations()[0]) &&
          FlowsInto(value, user->called_computations()[0])) {
        continue;  // the callee's own uses count
      }
      if (op == HloOpcode::kWhile && user->called_computations().size() == 2) {
        if (const LiveRange* body = r_.computation_span(user->called_computations()[1])) {
          end = std::max(end, body->start);  // the body's parameter takes over
          continue;
        }
      }
      end = std::max(end, r_.time_[id]);
    }
    return end;
  }

  bool ParameterHasAlias(int64_t number, const ShapeIndex& index) const {
    const ModuleConfig& config = df_.module().config();
    if (!config.input_output_alias_present) return false;
    for (const InputOutputAlias& a : config.input_output_alias) {
      if (a.parameter_number == number && a.parameter_index == index) return true;
    }
    return false;
  }

  absl::Status ComputeValueRanges() {
    const HloComputation* entry = df_.module().entry_computation();
    r_.value_range_.assign(df_.value_count(), LiveRange{-1, -1});
    for (HloValue::Id v = 0; v < df_.value_count(); ++v) {
      const int32_t definer = df_.defining_instruction_id(v);
      const int64_t time = r_.time_[definer];
      if (time < 0) continue;  // not run sequentially
      const HloValue& value = df_.GetValue(v);
      if ((*sizes_)[v] < 0) {
        return Unimplemented("value ", value.ToShortString(), " has shape ",
                             value.shape().ToString(),
                             " with an unbounded dimension; its size is unknown");
      }
      const HloInstruction* instr = df_.instruction(definer);
      const bool is_param = df_.opcode(definer) == HloOpcode::kParameter;
      const int64_t start = is_param ? span_start_[definer] : time;
      int64_t end = std::max(IsRoot(definer) ? span_end_[definer] : time, async_end_[definer]);
      for (int32_t position : df_.position_instruction_ids(v)) {
        end = std::max(end, PositionTime(position));
      }
      if (is_param && instr->parent() == entry &&
          !ParameterHasAlias(instr->attrs().parameter_number, value.defining_index())) {
        end = r_.schedule_end_time();
      } else {
        end = std::max(end, LastUseTime(v));
      }
      r_.value_range_[v] = LiveRange{start, end};
    }
    return absl::OkStatus();
  }

  void ComputeBufferRanges() {
    const HloAliasAnalysis& alias = *r_.alias_;
    r_.buffer_range_.assign(alias.buffer_count(), LiveRange{-1, -1});
    r_.buffer_size_.assign(alias.buffer_count(), 0);
    for (const HloBuffer& buffer : alias.buffers()) {
      LiveRange& range = r_.buffer_range_[buffer.id()];
      int64_t size = 0;
      for (const HloValue* value : buffer.values()) {
        const LiveRange& v = r_.value_range_[value->id()];
        if (v.start < 0) continue;
        size = std::max(size, (*sizes_)[value->id()]);
        if (range.start < 0) {
          range = v;
        } else {
          range.start = std::min(range.start, v.start);
          range.end = std::max(range.end, v.end);
        }
      }
      r_.buffer_size_[buffer.id()] = size;
    }
  }

  void ComputePeak() {
    // Each buffer's size added at its start and taken off after its end,
    // then summed up to each time.
    std::vector<int64_t>& live_bytes = r_.live_bytes_;
    live_bytes.assign(r_.sequence_.size() + 2, 0);
    for (size_t b = 0; b < r_.buffer_range_.size(); ++b) {
      const LiveRange& range = r_.buffer_range_[b];
      if (range.start < 0) continue;
      live_bytes[range.start] += r_.buffer_size_[b];
      live_bytes[range.end + 1] -= r_.buffer_size_[b];
    }
    int64_t live = 0;
    for (size_t t = 0; t < live_bytes.size(); ++t) {
      live += live_bytes[t];
      live_bytes[t] = live;
      if (live > r_.peak_bytes_) {
        r_.peak_bytes_ = live;
        r_.peak_time_ = static_cast<int64_t>(t);
        r_.peak_times_ = 1;
      } else if (live == r_.peak_bytes_ && live > 0) {
        ++r_.peak_times_;
      }
    }
  }

  HloLiveRange& r_;
  const HloDataflowAnalysis& df_;
  const HloSchedule& schedule_;
  const LiveRangeOptions& options_;
  absl::flat_hash_set<const HloComputation*> flattening_;
  std::vector<std::pair<const HloComputation*, const HloInstruction*>> async_context_;
  std::vector<int64_t> span_start_, span_end_, async_end_;  // by instruction id
  std::vector<int64_t> own_sizes_;
  const std::vector<int64_t>* sizes_ = nullptr;  // by value id
};

std::vector<int64_t> ComputeValueSizes(const HloDataflowAnalysis& dataflow) {
  std::vector<int64_t> sizes(dataflow.value_count());
  for (HloValue::Id v = 0; v < dataflow.value_count(); ++v) {
    const HloValue& value = dataflow.GetValue(v);
    const Shape& shape = value.shape();
    // A tuple's table has a size even when an element has none.
    sizes[v] = !shape.IsTuple() && HasUnboundedDimension(shape) ? -1 : ValueSizeBytes(value);
  }
  return sizes;
}

absl::StatusOr<std::unique_ptr<HloLiveRange>> HloLiveRange::Run(const HloSchedule& schedule,
                                                                const HloAliasAnalysis& alias,
                                                                const LiveRangeOptions& options) {
  auto live_range = std::unique_ptr<HloLiveRange>(new HloLiveRange());
  live_range->alias_ = &alias;
  Builder builder(*live_range, schedule, options);
  RETURN_IF_ERROR(builder.Run());
  return live_range;
}

int64_t HloLiveRange::instruction_time(const HloInstruction* instruction) const {
  const int32_t id = alias_->dataflow_analysis().instruction_id(instruction);
  return id < 0 ? -1 : time_[id];
}

const LiveRange* HloLiveRange::computation_span(const HloComputation* computation) const {
  auto it = span_.find(computation);
  return it == span_.end() ? nullptr : &it->second;
}

const LiveRange* HloLiveRange::value_live_range(const HloValue& value) const {
  const LiveRange& r = value_range_[value.id()];
  return r.start < 0 ? nullptr : &r;
}

const LiveRange* HloLiveRange::buffer_live_range(const HloBuffer& buffer) const {
  const LiveRange& r = buffer_range_[buffer.id()];
  return r.start < 0 ? nullptr : &r;
}

std::string HloLiveRange::ToString() const {
  std::string out = absl::StrCat("HloLiveRange: ", sequence_.size(), " instructions, peak ",
                                 peak_bytes_, " bytes at time ", peak_time_, "\n");
  for (size_t t = 0; t < sequence_.size(); ++t) {
    absl::StrAppend(&out, "  ", t, ": ", sequence_[t]->name(), "\n");
  }
  for (const HloBuffer& buffer : alias_->buffers()) {
    const LiveRange* r = buffer_live_range(buffer);
    if (r == nullptr) continue;
    absl::StrAppend(&out, "  ", buffer.ToString(), " [", r->start, ", ", r->end, "] ",
                    buffer_size(buffer), " bytes\n");
  }
  return out;
}

}  // namespace xlite
