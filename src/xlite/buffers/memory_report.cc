#include "xlite/buffers/memory_report.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "xlite/buffers/buffer_assignment_text.h"

namespace xlite {
namespace {

constexpr AllocationKind kKinds[] = {AllocationKind::kParameter, AllocationKind::kConstant,
                                     AllocationKind::kOutput, AllocationKind::kTemp};

// "file.py:12" from the metadata, or from its stack frame.
std::string SourceOf(const HloModule& module, const OpMetadata& metadata) {
  if (!metadata.source_file.empty()) {
    return metadata.source_line > 0 ? absl::StrCat(metadata.source_file, ":", metadata.source_line)
                                    : metadata.source_file;
  }
  const StackFrameIndex& frames = module.stack_frame_index();
  const int64_t frame = metadata.stack_frame_id;
  if (frame < 1 || frame > static_cast<int64_t>(frames.stack_frames.size())) return "";
  const int64_t location = frames.stack_frames[frame - 1].file_location_id;
  if (location < 1 || location > static_cast<int64_t>(frames.file_locations.size())) return "";
  const StackFrameIndex::FileLocation& l = frames.file_locations[location - 1];
  if (l.file_name_id < 1 || l.file_name_id > static_cast<int64_t>(frames.file_names.size())) {
    return "";
  }
  return absl::StrCat(frames.file_names[l.file_name_id - 1], ":", l.line);
}

// The instruction that writes a buffer first: its first value that is not a
// phi (its first value otherwise).
const HloValue& Representative(const HloBuffer& buffer) {
  for (const HloValue* value : buffer.values()) {
    if (!value->is_phi()) return *value;
  }
  return *buffer.values().front();
}

std::string Ratio(int64_t a, int64_t b) {
  return b > 0 ? absl::StrFormat("%.3f", static_cast<double>(a) / b) : std::string("n/a");
}

std::string StepName(const BufferAssignment& assignment, int64_t t) {
  const auto& sequence = assignment.live_range().flattened_instruction_sequence();
  if (t < 0 || t >= static_cast<int64_t>(sequence.size())) return absl::StrCat("step ", t);
  const HloInstruction* i = sequence[t];
  return absl::StrCat("step ", t, " (%", i->name(), " in %", i->parent()->name(), ")");
}

}  // namespace

std::vector<TimelineStep> MemoryTimeline(const BufferAssignment& assignment) {
  const HloLiveRange& live = assignment.live_range();
  const int64_t steps = live.schedule_end_time();
  std::vector<std::array<int64_t, 4>> delta(steps + 1, {0, 0, 0, 0});
  for (const BufferAllocation& allocation : assignment.allocations()) {
    const int kind = static_cast<int>(allocation.kind());
    for (const auto& [buffer, offset] : allocation.buffers()) {
      const LiveRange* range = live.buffer_live_range(*buffer);
      if (range == nullptr) continue;
      const int64_t size = live.buffer_size(*buffer);
      delta[std::min(range->start, steps)][kind] += size;
      delta[std::min(range->end + 1, steps)][kind] -= size;
    }
  }
  std::vector<TimelineStep> timeline(steps);
  std::array<int64_t, 4> running = {0, 0, 0, 0};
  for (int64_t t = 0; t < steps; ++t) {
    for (int k = 0; k < 4; ++k) {
      running[k] += delta[t][k];
      timeline[t].bytes[k] = running[k];
    }
    timeline[t].instruction = live.flattened_instruction_sequence()[t];
  }
  return timeline;
}

std::string MemoryReport(const MemoryPlan& plan, const ReportOptions& options) {
  const BufferAssignment& a = *plan.assignment;
  const HloModule& module = a.module();
  std::string out = absl::StrCat("Memory plan of module ", module.name(), "\n\n");

  // The schedule.
  absl::StrAppend(&out, "Schedule: ", plan.schedule.chosen, ", simulated peak ",
                  HumanReadableNumBytes(plan.schedule.peak_bytes));
  int64_t program_order = -1;
  if (!plan.schedule.peaks.empty()) {
    out += " (";
    for (size_t i = 0; i < plan.schedule.peaks.size(); ++i) {
      const SchedulerPeak& p = plan.schedule.peaks[i];
      absl::StrAppend(&out, i ? ", " : "", MemorySchedulerName(p.scheduler), " ",
                      HumanReadableNumBytes(p.peak_bytes));
      if (p.scheduler == MemoryScheduler::kPostOrder) program_order = p.peak_bytes;
    }
    out += ")";
  }
  out += "\n";
  if (program_order > 0) {
    absl::StrAppend(&out, "  chosen / program order peak = ",
                    Ratio(plan.schedule.peak_bytes, program_order), "\n");
  }
  if (plan.flattened) out += "  (the call graph was flattened first)\n";
  if (plan.rematerialization.has_value()) out += plan.rematerialization->Summary();

  // Allocations by kind: total bytes and the most live at once.
  const std::vector<TimelineStep> timeline = MemoryTimeline(a);
  int64_t peak[4] = {0, 0, 0, 0}, peak_total = 0, peak_step = 0;
  for (size_t t = 0; t < timeline.size(); ++t) {
    for (int k = 0; k < 4; ++k) peak[k] = std::max(peak[k], timeline[t].bytes[k]);
    if (timeline[t].total() > peak_total) {
      peak_total = timeline[t].total();
      peak_step = static_cast<int64_t>(t);
    }
  }
  absl::StrAppend(&out, "\nAllocations       count         total     peak live\n");
  int64_t count_all = 0;
  for (AllocationKind kind : kKinds) {
    int64_t count = 0;
    for (const BufferAllocation& allocation : a.allocations()) count += allocation.kind() == kind;
    count_all += count;
    absl::StrAppend(&out, absl::StrFormat("  %-12s %8d  %12s  %12s\n", AllocationKindName(kind),
                                          count, HumanReadableNumBytes(a.BytesOf(kind)),
                                          HumanReadableNumBytes(peak[static_cast<int>(kind)])));
  }
  absl::StrAppend(&out, absl::StrFormat("  %-12s %8d  %12s  %12s\n", "all", count_all,
                                        HumanReadableNumBytes(a.TotalBytes()),
                                        HumanReadableNumBytes(peak_total)));
  if (a.temp_allocation() >= 0) {
    const HeapPlacement& heap = a.heap();
    absl::StrAppend(&out, "  temp heap: ", a.allocations()[a.temp_allocation()].buffers().size(),
                    " buffers placed in order '", heap.order, "' (tried");
    for (const auto& [name, size] : heap.tried) {
      absl::StrAppend(&out, " ", name, " ", HumanReadableNumBytes(size));
    }
    absl::StrAppend(&out, "), aligned to ", a.options().alignment, " bytes\n");
  }

  // Bounds from the checker.
  if (plan.check.has_value()) {
    const AssignmentCheck& c = *plan.check;
    absl::StrAppend(&out, "\nLower bound (the checker, this schedule): ",
                    HumanReadableNumBytes(c.lower_bound_bytes), " live at ",
                    StepName(a, c.lower_bound_time), "\n");
    absl::StrAppend(&out, "  allocated (the plan's peak) ", HumanReadableNumBytes(a.TotalBytes()),
                    " / bound = ", Ratio(a.TotalBytes(), c.lower_bound_bytes), "\n");
    const int64_t heap = a.temp_allocation() >= 0 ? a.allocations()[a.temp_allocation()].size() : 0;
    absl::StrAppend(&out, "  temp heap ", HumanReadableNumBytes(heap), ", bound ",
                    HumanReadableNumBytes(c.temp_lower_bound_bytes), " (",
                    HumanReadableNumBytes(c.temp_lower_bound_unaligned),
                    " before alignment): heap / bound = ", Ratio(heap, c.temp_lower_bound_bytes),
                    "\n");
    absl::StrAppend(&out, "  checked: ", c.values_checked, " values in ", c.buffers_checked,
                    " buffers, no overlap\n");
  } else {
    out += "\nLower bound: not computed (the checker did not run)\n";
  }

  // The largest buffers live at the peak.
  struct Live {
    const HloBuffer* buffer;
    AllocationKind kind;
    int64_t size;
  };
  std::vector<Live> live;
  for (const BufferAllocation& allocation : a.allocations()) {
    for (const auto& [buffer, offset] : allocation.buffers()) {
      const LiveRange* range = a.live_range().buffer_live_range(*buffer);
      if (range == nullptr || range->start > peak_step || range->end < peak_step) continue;
      live.push_back({buffer, allocation.kind(), a.live_range().buffer_size(*buffer)});
    }
  }
  std::stable_sort(live.begin(), live.end(),
                   [](const Live& x, const Live& y) { return x.size > y.size; });
  absl::StrAppend(&out, "\nLive at the peak, ", StepName(a, peak_step), ": ",
                  HumanReadableNumBytes(peak_total), " in ", live.size(), " buffers");
  const size_t shown = std::min<size_t>(live.size(), std::max<int64_t>(options.top_buffers, 0));
  absl::StrAppend(&out, shown < live.size() ? absl::StrCat("; the ", shown, " largest") : "", "\n");
  if (shown > 0) {
    absl::StrAppend(&out, absl::StrFormat("  %10s  %-9s  %-28s  %-24s  %s\n", "bytes", "kind",
                                          "instruction", "shape", "op_name  source"));
  }
  for (size_t i = 0; i < shown; ++i) {
    const HloValue& value = Representative(*live[i].buffer);
    const HloInstruction* d = value.defining_instruction();
    const OpMetadata& metadata = d->attrs().metadata;
    std::string where = metadata.op_name;
    const std::string source = SourceOf(module, metadata);
    if (!source.empty()) absl::StrAppend(&where, where.empty() ? "" : "  ", source);
    absl::StrAppend(
        &out,
        absl::StrFormat("  %10s  %-9s  %-28s  %-24s  %s\n", HumanReadableNumBytes(live[i].size),
                        AllocationKindName(live[i].kind), absl::StrCat("%", value.ToShortString()),
                        value.shape().ToString(false), where));
  }

  // Donations.
  absl::StrAppend(&out, "\nEntry parameters (", plan.donations.size(), " array element",
                  plan.donations.size() == 1 ? "" : "s", ")\n");
  for (const DonationVerdict& v : plan.donations) absl::StrAppend(&out, "  ", v.text, "\n");
  for (const DonorPairing& p : plan.donor_pairs) {
    if (!p.output_index.has_value()) continue;
    absl::StrAppend(&out, "  buffer_donor pair: parameter ", p.parameter_number, " ",
                    ShapeIndexToString(p.parameter_index), " -> output ",
                    ShapeIndexToString(*p.output_index), "\n");
  }

  // Copies.
  absl::StrAppend(&out, "\nInserted copies (", plan.copies.size(), ")\n");
  for (const InsertedCopy& c : plan.copies) {
    absl::StrAppend(&out, "  %", c.name, " in %", c.computation, " [", CopyReasonName(c.reason),
                    "] ", c.explanation, "\n");
  }
  return out;
}

std::string MemoryTimelineTsv(const BufferAssignment& assignment) {
  std::string out = "step\tcomputation\tinstruction\tparameter\tconstant\toutput\ttemp\ttotal\n";
  const std::vector<TimelineStep> timeline = MemoryTimeline(assignment);
  for (size_t t = 0; t < timeline.size(); ++t) {
    const TimelineStep& s = timeline[t];
    absl::StrAppend(&out, t, "\t", s.instruction->parent()->name(), "\t", s.instruction->name());
    for (int k = 0; k < 4; ++k) absl::StrAppend(&out, "\t", s.bytes[k]);
    absl::StrAppend(&out, "\t", s.total(), "\n");
  }
  return out;
}

std::string MemoryTimelineSvg(const BufferAssignment& assignment) {
  const std::vector<TimelineStep> timeline = MemoryTimeline(assignment);
  constexpr int kWidth = 960, kHeight = 420, kLeft = 90, kRight = 150, kTop = 40, kBottom = 50;
  const int plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  // At most one column per pixel: each keeps the step with the most bytes.
  std::vector<TimelineStep> columns;
  const size_t n = timeline.size();
  const size_t buckets = std::min<size_t>(n, plot_w);
  for (size_t b = 0; b < buckets; ++b) {
    const size_t lo = b * n / buckets, hi = std::max(lo + 1, (b + 1) * n / buckets);
    TimelineStep best = timeline[lo];
    for (size_t t = lo; t < hi && t < n; ++t) {
      if (timeline[t].total() > best.total()) best = timeline[t];
    }
    columns.push_back(best);
  }
  int64_t top = 1;
  for (const TimelineStep& s : columns) top = std::max(top, s.total());
  const char* colors[4] = {"#4c78a8", "#9d755d", "#54a24b", "#e45756"};
  std::string out = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<title>Live bytes per schedule step: %s</title>\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
      "<text x=\"%d\" y=\"22\" font-size=\"15\">Live bytes per schedule step, module %s "
      "(peak %s)</text>\n",
      kWidth, kHeight, assignment.module().name(), kLeft, assignment.module().name(),
      HumanReadableNumBytes(top));
  auto x_of = [&](size_t column) {
    return kLeft + (columns.size() <= 1 ? 0.0 : plot_w * double(column) / (columns.size() - 1));
  };
  auto y_of = [&](int64_t bytes) { return kTop + plot_h - plot_h * double(bytes) / top; };
  // Stacked: parameter at the bottom, temp on top.
  for (int k = 3; k >= 0 && !columns.empty(); --k) {
    std::string points;
    for (size_t c = 0; c < columns.size(); ++c) {
      int64_t below = 0;
      for (int j = 0; j <= k; ++j) below += columns[c].bytes[j];
      absl::StrAppend(&points, absl::StrFormat("%.1f,%.1f ", x_of(c), y_of(below)));
    }
    absl::StrAppend(&points, absl::StrFormat("%.1f,%.1f %.1f,%.1f", x_of(columns.size() - 1),
                                             y_of(0), x_of(0), y_of(0)));
    absl::StrAppend(&out, "<polygon fill=\"", colors[k], "\" stroke=\"none\" points=\"", points,
                    "\"/>\n");
  }
  // Axes, ticks and the legend.
  absl::StrAppend(
      &out, absl::StrFormat("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n"
                            "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n",
                            kLeft, kTop, kLeft, kTop + plot_h, kLeft, kTop + plot_h, kLeft + plot_w,
                            kTop + plot_h));
  for (int i = 0; i <= 4; ++i) {
    const int64_t bytes = top * i / 4;
    absl::StrAppend(&out,
                    absl::StrFormat("<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                                    kLeft - 6, y_of(bytes) + 4, HumanReadableNumBytes(bytes)));
  }
  absl::StrAppend(&out,
                  absl::StrFormat("<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">schedule step "
                                  "(0 to %d)</text>\n",
                                  kLeft + plot_w / 2, kHeight - 15, n == 0 ? 0 : int64_t(n - 1)));
  for (int k = 0; k < 4; ++k) {
    const int y = kTop + 10 + 22 * (3 - k);
    absl::StrAppend(
        &out, absl::StrFormat("<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\"/>"
                              "<text x=\"%d\" y=\"%d\">%s</text>\n",
                              kLeft + plot_w + 16, y, colors[k], kLeft + plot_w + 36, y + 12,
                              AllocationKindName(kKinds[k])));
  }
  out += "</svg>\n";
  return out;
}

}  // namespace xlite
