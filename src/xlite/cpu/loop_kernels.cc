#include "xlite/cpu/loop_kernels.h"

#include <algorithm>
#include <tuple>

#include "xlite/cpu/control_flow_thunks.h"
#include "xlite/cpu/copy_thunk.h"
#include "xlite/cpu/device_thunks.h"

namespace xlite::cpu {
namespace {

using Step = codegen::KernelProgramStep;

class ProgramBuilder {
 public:
  explicit ProgramBuilder(absl::FunctionRef<int64_t(const KernelThunk&)> spec_of)
      : spec_of_(spec_of) {}

  // Appends the steps of `sequence` to `steps`; false if a thunk does not qualify.
  bool AddSequence(const ThunkSequence& sequence, std::vector<Step>& steps) {
    for (const auto& thunk : sequence) {
      if (!AddThunk(*thunk, steps)) return false;
    }
    return true;
  }

  bool AddThunk(const Thunk& thunk, std::vector<Step>& steps) {
    switch (thunk.kind()) {
      case Thunk::Kind::kKernel: {
        const auto& kernel = static_cast<const KernelThunk&>(thunk);
        const int64_t spec = spec_of_(kernel);
        // Work that splits over threads is worth the dispatch.
        if (spec < 0 || kernel.work() >= 2 * KernelThunk::kMinWorkPerPartition) return false;
        Step step;
        step.op = Step::Op::kKernel;
        step.kernel = spec;
        for (int64_t i = 0; i < static_cast<int64_t>(kernel.buffers().size()); ++i) {
          step.buffers.push_back(Index(kernel.buffers()[i], i >= kernel.num_operands()));
        }
        steps.push_back(std::move(step));
        callees_.push_back(&kernel);
        return true;
      }
      case Thunk::Kind::kCopy: {
        const auto& copy = static_cast<const CopyThunk&>(thunk);
        Step step;
        step.op = Step::Op::kCopy;
        step.bytes = std::min(copy.source().size, copy.destination().size);
        step.buffers = {Index(copy.destination(), true), Index(copy.source(), false)};
        steps.push_back(std::move(step));
        return true;
      }
      case Thunk::Kind::kPoison:  // --xlite_poison_dead_slices
        for (const BufferSlice& slice : static_cast<const PoisonThunk&>(thunk).slices()) {
          if (slice.size <= 0) continue;
          Step step;
          step.op = Step::Op::kFill;
          step.bytes = slice.size;
          step.fill = PoisonThunk::kPattern;
          step.buffers = {Index(slice, true)};
          steps.push_back(std::move(step));
        }
        return true;
      case Thunk::Kind::kWhile: {
        const auto& w = static_cast<const WhileThunk&>(thunk);
        Step step;
        step.op = Step::Op::kWhile;
        step.nested.resize(2);
        if (!AddSequence(w.condition(), step.nested[0])) return false;
        step.buffers = {Index(w.predicate(), false)};
        if (!AddSequence(w.body(), step.nested[1])) return false;
        steps.push_back(std::move(step));
        return true;
      }
      case Thunk::Kind::kConditional: {
        const auto& c = static_cast<const ConditionalThunk&>(thunk);
        Step step;
        step.op = Step::Op::kConditional;
        step.selector_is_pred = c.selector_is_pred();
        step.buffers = {Index(c.selector(), false)};
        for (const ThunkSequence& branch : c.branches()) {
          step.nested.emplace_back();
          if (!AddSequence(branch, step.nested.back())) return false;
        }
        steps.push_back(std::move(step));
        return true;
      }
      case Thunk::Kind::kCall:
        return AddSequence(static_cast<const CallThunk&>(thunk).callee(), steps);
      default:
        return false;
    }
  }

  // The table, read-only slices first: renumbers every step's buffers.
  LoopKernel Finish(std::vector<Step> steps) {
    std::vector<int64_t> order;
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t i = 0; i < slices_.size(); ++i) {
        if (written_[i] == (pass == 1)) order.push_back(static_cast<int64_t>(i));
      }
    }
    std::vector<int64_t> position(slices_.size());
    LoopKernel loop;
    for (size_t p = 0; p < order.size(); ++p) {
      position[order[p]] = static_cast<int64_t>(p);
      loop.buffers.push_back(slices_[order[p]]);
      if (!written_[order[p]]) ++loop.num_operands;
    }
    Renumber(steps, position);
    auto program = std::make_shared<codegen::KernelProgram>();
    program->num_buffers = static_cast<int64_t>(loop.buffers.size());
    program->num_operands = loop.num_operands;
    Group(loop.buffers, *program);
    program->steps = std::move(steps);
    loop.program = std::move(program);
    loop.callees = std::move(callees_);
    return loop;
  }

 private:
  int64_t Index(const BufferSlice& slice, bool written) {
    for (size_t i = 0; i < slices_.size(); ++i) {
      if (slices_[i] == slice) {
        written_[i] = written_[i] || written;
        return static_cast<int64_t>(i);
      }
    }
    slices_.push_back(slice);
    written_.push_back(written);
    return static_cast<int64_t>(slices_.size() - 1);
  }

  // Distinct allocations are distinct memory (an argument passed for two
  // parameters is only read): groups are the slices of one allocation whose
  // byte ranges meet, found by a sweep in offset order.
  static void Group(const std::vector<BufferSlice>& slices, codegen::KernelProgram& program) {
    const int64_t n = static_cast<int64_t>(slices.size());
    std::vector<int64_t> order(n);
    for (int64_t i = 0; i < n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return std::tie(slices[a].allocation, slices[a].offset, a) <
             std::tie(slices[b].allocation, slices[b].offset, b);
    });
    program.group_base.assign(n, 0);
    program.group_offset.assign(n, 0);
    int64_t base = -1, end = 0;
    for (int64_t i : order) {
      const BufferSlice& s = slices[i];
      const bool joins = base >= 0 && s.allocation >= 0 &&
                         s.allocation == slices[base].allocation && s.offset < end;
      if (!joins) {
        base = i;
        end = s.offset + s.size;
      }
      end = std::max(end, s.offset + s.size);
      program.group_base[i] = base;
      program.group_offset[i] = s.offset - slices[base].offset;
    }
  }

  static void Renumber(std::vector<Step>& steps, const std::vector<int64_t>& position) {
    for (Step& step : steps) {
      for (int64_t& b : step.buffers) b = position[b];
      for (std::vector<Step>& nested : step.nested) Renumber(nested, position);
    }
  }

  absl::FunctionRef<int64_t(const KernelThunk&)> spec_of_;
  std::vector<BufferSlice> slices_;
  std::vector<bool> written_;
  std::vector<const KernelThunk*> callees_;
};

}  // namespace

std::optional<LoopKernel> BuildLoopKernel(const Thunk& thunk,
                                          absl::FunctionRef<int64_t(const KernelThunk&)> spec_of) {
  if (thunk.kind() != Thunk::Kind::kWhile && thunk.kind() != Thunk::Kind::kConditional) {
    return std::nullopt;
  }
  ProgramBuilder builder(spec_of);
  std::vector<Step> steps;
  if (!builder.AddThunk(thunk, steps)) return std::nullopt;
  LoopKernel loop = builder.Finish(std::move(steps));
  if (loop.callees.empty()) return std::nullopt;
  return loop;
}

}  // namespace xlite::cpu
