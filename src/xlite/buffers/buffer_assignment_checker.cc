#include "xlite/buffers/buffer_assignment_checker.h"

#include <algorithm>
#include <map>
#include <queue>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "xlite/analysis/in_place_pairs.h"
#include "xlite/schedule/schedule_module.h"
#include "xlite/support/status.h"

namespace xlite {
namespace {

// One buffer as the checker sees it: bytes [offset, offset + size) of an
// allocation over times [start, end].
struct Rect {
  const HloBuffer* buffer = nullptr;
  int64_t allocation = 0;
  int64_t offset = 0;
  int64_t size = 0;
  int64_t start = 0;
  int64_t end = 0;
  // The operand buffer whose bytes this one takes where it is made (it dies
  // there, and the user may write over what it reads), or nullptr.
  const HloBuffer* takes_over = nullptr;
};

std::string Describe(const HloBuffer& buffer) {
  std::string out;
  for (size_t i = 0; i < buffer.values().size() && i < 3; ++i) {
    absl::StrAppend(&out, i ? ", " : "", buffer.values()[i]->ToShortString());
  }
  if (buffer.values().size() > 3) absl::StrAppend(&out, ", ...");
  return absl::StrCat("{", out, "}");
}

class Checker {
 public:
  explicit Checker(const BufferAssignment& assignment) : a_(assignment) {}

  absl::StatusOr<AssignmentCheck> Run() {
    const HloModule& module = a_.module();
    ASSIGN_OR_RETURN(alias_, HloAliasAnalysis::Run(module));
    const CallGraph& graph = alias_->dataflow_analysis().call_graph();
    schedule_ = HloSchedule::FromInstructionOrder(ScheduledComputations(graph));
    ASSIGN_OR_RETURN(live_, HloLiveRange::Run(schedule_, *alias_));
    std::vector<Rect> rects;
    for (const HloBuffer& buffer : alias_->buffers()) {
      const LiveRange* range = live_->buffer_live_range(buffer);
      if (range == nullptr) continue;
      Rect rect;
      RETURN_IF_ERROR(CheckBuffer(buffer, *range, &rect));
      rects.push_back(rect);
      ++result_.buffers_checked;
    }
    FindTakeOvers(rects);
    RETURN_IF_ERROR(CheckDisjoint(rects));
    ComputeBounds(rects);
    const int64_t temp = a_.temp_allocation();
    if (temp >= 0 && a_.allocations()[temp].size() < result_.temp_lower_bound_bytes) {
      return Internal("buffer assignment: the temp heap (allocation ", temp, ") has ",
                      a_.allocations()[temp].size(), " bytes, below the schedule's lower bound of ",
                      result_.temp_lower_bound_bytes, ": some live buffers must overlap");
    }
    return result_;
  }

 private:
  bool Donated(const HloValue& parameter) const {
    const ModuleConfig& config = a_.module().config();
    if (!config.input_output_alias_present) return false;
    const int64_t number = parameter.defining_instruction()->attrs().parameter_number;
    for (const InputOutputAlias& alias : config.input_output_alias) {
      if (alias.parameter_number == number && alias.parameter_index == parameter.defining_index()) {
        return true;
      }
    }
    return false;
  }

  absl::Status CheckBuffer(const HloBuffer& buffer, const LiveRange& range, Rect* rect) {
    const HloComputation* entry = a_.module().entry_computation();
    const std::vector<BufferAllocation>& allocations = a_.allocations();
    std::optional<BufferSlice> first;
    const HloValue* first_value = nullptr;
    bool parameter = false, constant = false, live_out = false;
    int64_t size = 0;
    for (const HloValue* value : buffer.values()) {
      if (live_->value_live_range(*value) == nullptr) continue;
      ++result_.values_checked;
      const HloInstruction* d = value->defining_instruction();
      std::optional<BufferSlice> slice = a_.GetSlice(d, value->defining_index());
      if (!slice.has_value()) {
        return Internal("buffer assignment: value ", value->ToShortString(), " has no slice");
      }
      const int64_t bytes = ValueSizeBytes(*value);
      if (slice->size != bytes) {
        return Internal("buffer assignment: value ", value->ToShortString(), " of shape ",
                        value->shape().ToString(), " needs ", bytes, " bytes; its slice has ",
                        slice->size);
      }
      if (slice->allocation < 0 || slice->allocation >= static_cast<int64_t>(allocations.size())) {
        return Internal("buffer assignment: value ", value->ToShortString(), " names allocation ",
                        slice->allocation, ", which does not exist");
      }
      const BufferAllocation& allocation = allocations[slice->allocation];
      if (slice->offset < 0 || slice->offset + slice->size > allocation.size()) {
        return Internal("buffer assignment: value ", value->ToShortString(), " at bytes [",
                        slice->offset, ", ", slice->offset + slice->size,
                        ") lies outside allocation ", allocation.index(), " of ", allocation.size(),
                        " bytes");
      }
      if (!first.has_value()) {
        first = slice;
        first_value = value;
      } else if (first->allocation != slice->allocation || first->offset != slice->offset) {
        return Internal("buffer assignment: ", first_value->ToShortString(), " and ",
                        value->ToShortString(),
                        " are one buffer (alias analysis) but have different slices: allocation ",
                        first->allocation, " offset ", first->offset, " and allocation ",
                        slice->allocation, " offset ", slice->offset);
      }
      size = std::max(size, bytes);
      live_out |= value->live_out_of_module();
      if (d->opcode() == HloOpcode::kConstant) constant = true;
      if (d->opcode() == HloOpcode::kParameter && d->parent() == entry) {
        parameter = true;
        if (allocation.kind() != AllocationKind::kParameter ||
            allocation.parameter_number() != d->attrs().parameter_number ||
            allocation.parameter_index() != value->defining_index()) {
          return Internal("buffer assignment: entry parameter ", value->ToShortString(),
                          " lies in allocation ", allocation.index(), ", which is not parameter ",
                          d->attrs().parameter_number, " ",
                          ShapeIndexToString(value->defining_index()));
        }
        if (live_out && !Donated(*value)) {
          return Internal("buffer assignment: parameter ", value->ToShortString(),
                          " is not donated but shares a buffer with an output");
        }
      }
    }
    if (!first.has_value()) return Internal("buffer assignment: empty buffer ", buffer.id());
    const BufferAllocation& allocation = allocations[first->allocation];
    if (live_out && !allocation.maybe_live_out()) {
      return Internal("buffer assignment: buffer ", Describe(buffer),
                      " is an output, but allocation ", allocation.index(),
                      " is not maybe-live-out");
    }
    if (constant && allocation.kind() != AllocationKind::kConstant) {
      return Internal("buffer assignment: constant buffer ", Describe(buffer),
                      " lies in allocation ", allocation.index(),
                      ", which is not a constant allocation");
    }
    const bool temp = !parameter && !constant && !live_out;
    // A temp may also use an output's allocation while no output is live
    // there (the sweep below checks the times).
    const bool temp_in_output = temp && allocation.kind() == AllocationKind::kOutput;
    if (!temp_in_output && temp != (allocation.kind() == AllocationKind::kTemp)) {
      return Internal("buffer assignment: buffer ", Describe(buffer), " is ",
                      temp ? "temporary" : "not temporary", " but lies in ",
                      AllocationKindName(allocation.kind()), " allocation ", allocation.index());
    }
    if (temp && first->offset % a_.options().alignment != 0) {
      return Internal("buffer assignment: temp buffer ", Describe(buffer), " at offset ",
                      first->offset, " is not aligned to ", a_.options().alignment, " bytes");
    }
    *rect = Rect{&buffer, first->allocation, first->offset, size, range.start, range.end};
    return absl::OkStatus();
  }

  std::string At(int64_t time) const {
    const auto& sequence = live_->flattened_instruction_sequence();
    if (time < 0 || time >= static_cast<int64_t>(sequence.size())) return absl::StrCat(time);
    return absl::StrCat(time, " (", sequence[time]->name(), ")");
  }

  // A buffer may take the bytes of an operand buffer that dies at the
  // instruction making it (its last use), when that instruction reads each
  // element of it only for the same element of its result: elementwise ops
  // and loop fusions (MayShareOperandBuffer, XLA's CanShareOperandBufferWithUser),
  // every read of that operand. The two overlap at that one time.
  void FindTakeOvers(std::vector<Rect>& rects) const {
    // (allocation, offset, last time) of each buffer.
    using Key = std::tuple<int64_t, int64_t, int64_t>;
    absl::flat_hash_map<Key, std::vector<const Rect*>> ending;
    for (const Rect& r : rects) ending[Key(r.allocation, r.offset, r.end)].push_back(&r);
    const auto& sequence = live_->flattened_instruction_sequence();
    for (Rect& r : rects) {
      auto it = ending.find(Key(r.allocation, r.offset, r.start));
      if (it == ending.end() || r.start < 0 || r.start >= static_cast<int64_t>(sequence.size()) ||
          r.buffer->values().size() != 1) {
        continue;
      }
      const HloValue& value = *r.buffer->values()[0];
      const HloInstruction* user = value.defining_instruction();
      if (user != sequence[r.start]) continue;
      for (const Rect* candidate : it->second) {
        if (candidate == &r || candidate->size != r.size) continue;
        if (EveryReadMayShare(candidate->buffer->values(), *user, value.defining_index())) {
          r.takes_over = candidate->buffer;
          break;
        }
      }
    }
  }

  // Per allocation, a sweep over time keeping the live buffers by offset:
  // they are pairwise disjoint, so a new one need only be compared with its
  // neighbours.
  absl::Status CheckDisjoint(std::vector<Rect> rects) const {
    std::sort(rects.begin(), rects.end(), [](const Rect& a, const Rect& b) {
      if (a.allocation != b.allocation) return a.allocation < b.allocation;
      return a.start < b.start;
    });
    for (size_t begin = 0; begin < rects.size();) {
      size_t end = begin;
      while (end < rects.size() && rects[end].allocation == rects[begin].allocation) ++end;
      std::map<int64_t, const Rect*> active;  // by offset
      using Expiry = std::pair<int64_t, const Rect*>;
      std::priority_queue<Expiry, std::vector<Expiry>, std::greater<Expiry>> expiry;
      for (size_t i = begin; i < end; ++i) {
        const Rect& r = rects[i];
        if (r.size == 0) continue;
        while (!expiry.empty() && expiry.top().first < r.start) {
          auto it = active.find(expiry.top().second->offset);
          if (it != active.end() && it->second == expiry.top().second) active.erase(it);
          expiry.pop();
        }
        auto overlap = [&](const Rect& other) {
          return Internal("buffer assignment: buffers ", Describe(*r.buffer), " (bytes [", r.offset,
                          ", ", r.offset + r.size, "), live ", At(r.start), " to ", At(r.end),
                          ") and ", Describe(*other.buffer), " (bytes [", other.offset, ", ",
                          other.offset + other.size, "), live ", At(other.start), " to ",
                          At(other.end), ") share bytes of allocation ", r.allocation,
                          " while both are live at ", At(r.start));
        };
        const auto at = active.lower_bound(r.offset);
        auto next = at;
        if (next != active.end() && r.takes_over != nullptr &&
            next->second->buffer == r.takes_over && next->second->end == r.start) {
          ++next;  // its operand's bytes, free once it is made
        }
        if (next != active.end() && next->first < r.offset + r.size) return overlap(*next->second);
        if (at != active.begin()) {
          const Rect& prev = *std::prev(at)->second;
          if (prev.offset + prev.size > r.offset) return overlap(prev);
        }
        active[r.offset] = &r;
        expiry.push({r.end, &r});
      }
      begin = end;
    }
    return absl::OkStatus();
  }

  void ComputeBounds(const std::vector<Rect>& rects) {
    const int64_t times = live_->schedule_end_time() + 2;
    const int64_t align = a_.options().alignment;
    std::vector<int64_t> live(times, 0), all(times, 0), temp(times, 0), raw(times, 0);
    for (const Rect& r : rects) {
      live[r.start] += r.size;
      live[r.end + 1] -= r.size;
      // A buffer that takes its operand's bytes adds none where it is made.
      const int64_t from = r.takes_over != nullptr ? r.start + 1 : r.start;
      if (from > r.end) continue;
      all[from] += r.size;
      all[r.end + 1] -= r.size;
      if (a_.allocations()[r.allocation].kind() != AllocationKind::kTemp) continue;
      const int64_t rounded = (r.size + align - 1) / align * align;
      temp[from] += rounded;
      temp[r.end + 1] -= rounded;
      raw[from] += r.size;
      raw[r.end + 1] -= r.size;
    }
    int64_t l = 0, a = 0, t = 0, w = 0;
    for (int64_t time = 0; time < times; ++time) {
      l += live[time];
      a += all[time];
      t += temp[time];
      w += raw[time];
      if (l > result_.peak_live_bytes) {
        result_.peak_live_bytes = l;
        result_.peak_live_time = time;
      }
      if (a > result_.lower_bound_bytes) {
        result_.lower_bound_bytes = a;
        result_.lower_bound_time = time;
      }
      result_.temp_lower_bound_bytes = std::max(result_.temp_lower_bound_bytes, t);
      result_.temp_lower_bound_unaligned = std::max(result_.temp_lower_bound_unaligned, w);
    }
  }

  const BufferAssignment& a_;
  std::unique_ptr<HloAliasAnalysis> alias_;
  HloSchedule schedule_;
  std::unique_ptr<HloLiveRange> live_;
  AssignmentCheck result_;
};

}  // namespace

absl::StatusOr<AssignmentCheck> CheckBufferAssignment(const BufferAssignment& assignment) {
  return Checker(assignment).Run();
}

}  // namespace xlite
