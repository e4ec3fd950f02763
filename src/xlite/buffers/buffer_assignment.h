// Buffer assignment (XLA's BufferAssigner for XLA:CPU): every HloBuffer (a
// set of values that must share memory, alias analysis) of a scheduled,
// copy-inserted module gets one slice (allocation, offset, size) of a few
// allocations:
//   parameter  one per buffer holding an entry parameter element (its
//              number and index); maybe-live-out when input_output_alias
//              makes an output live there (updated in place);
//   constant   one per buffer holding a constant;
//   output     one per other buffer that is (part of) the entry's result
//              (maybe-live-out; the caller receives each as its own buffer);
//   temp       one heap for every other buffer, placed by lifetime
//              (heap_simulator.h), offsets aligned.
// Values the alias analysis put in one buffer (while state, conditional
// results, async start/done pairs, in-place updates, input_output_alias)
// share its slice; each value's slice has the value's own size. Values of
// embedded computations (fusion bodies, to_apply) get no slice: they live
// in the kernel that computes them (XLA's thread-local allocations).
//
// Lifetimes come from HloLiveRange over the module's schedule (its
// instruction order; the module must be is_scheduled). Allocations are
// numbered as XLA numbers them: the non-temp ones by decreasing size, the
// temp heap last.
#ifndef XLITE_BUFFERS_BUFFER_ASSIGNMENT_H_
#define XLITE_BUFFERS_BUFFER_ASSIGNMENT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "xlite/analysis/hlo_live_range.h"
#include "xlite/buffers/heap_simulator.h"

namespace xlite {

enum class AllocationKind { kParameter, kConstant, kOutput, kTemp };

// "parameter", "constant", "output", "temp".
const char* AllocationKindName(AllocationKind kind);

struct BufferSlice {
  int64_t allocation = -1;
  int64_t offset = 0;
  int64_t size = 0;
  bool operator==(const BufferSlice&) const = default;
};

// Whether two slices share bytes (empty slices share none).
inline bool Overlap(const BufferSlice& a, const BufferSlice& b) {
  return a.allocation >= 0 && a.allocation == b.allocation && a.size > 0 && b.size > 0 &&
         a.offset < b.offset + b.size && b.offset < a.offset + a.size;
}

class BufferAllocation {
 public:
  struct Assigned {
    const HloValue* value = nullptr;
    int64_t offset = 0;
    int64_t size = 0;
  };

  int64_t index() const { return index_; }
  int64_t size() const { return size_; }
  AllocationKind kind() const { return kind_; }
  bool maybe_live_out() const { return maybe_live_out_; }
  // Parameter allocations: which entry parameter element.
  int64_t parameter_number() const { return parameter_number_; }
  const ShapeIndex& parameter_index() const { return parameter_index_; }
  // The buffers placed here and, per buffer, its offset (one buffer, at 0,
  // except in the temp heap).
  const std::vector<std::pair<const HloBuffer*, int64_t>>& buffers() const { return buffers_; }
  // Every value with its slice, by increasing value id.
  const std::vector<Assigned>& assigned() const { return assigned_; }

 private:
  friend class BufferAssigner;
  friend class BufferAssignment;
  int64_t index_ = 0;
  int64_t size_ = 0;
  AllocationKind kind_ = AllocationKind::kTemp;
  bool maybe_live_out_ = false;
  int64_t parameter_number_ = -1;
  ShapeIndex parameter_index_;
  std::vector<std::pair<const HloBuffer*, int64_t>> buffers_;
  std::vector<Assigned> assigned_;
};

struct AssignmentOptions {
  // Temp heap offsets are multiples of this (XLA:CPU aligns to 64 bytes).
  int64_t alignment = 64;
};

class BufferAssignment {
 public:
  const HloModule& module() const { return alias_->module(); }
  const HloAliasAnalysis& alias_analysis() const { return *alias_; }
  const HloLiveRange& live_range() const { return *live_range_; }
  const HloSchedule& schedule() const { return schedule_; }
  const AssignmentOptions& options() const { return options_; }

  const std::vector<BufferAllocation>& allocations() const { return allocations_; }
  // The temp heap's index, or -1 when nothing is temporary.
  int64_t temp_allocation() const { return temp_allocation_; }
  // How the temp heap was placed (orders tried and their sizes).
  const HeapPlacement& heap() const { return heap_; }

  // The value's slice; nullopt for values without one (embedded
  // computations, computations the entry does not reach).
  std::optional<BufferSlice> GetSlice(const HloValue& value) const;
  std::optional<BufferSlice> GetSlice(const HloInstruction* instruction,
                                      const ShapeIndex& index = {}) const;
  // The allocation of a buffer; -1 if it has none.
  int64_t AllocationOf(const HloBuffer& buffer) const { return buffer_allocation_[buffer.id()]; }

  // Sum of allocation sizes of one kind.
  int64_t BytesOf(AllocationKind kind) const;
  int64_t TotalBytes() const;

  // Moves a buffer within its allocation, for tests that plant an error for
  // the checker; nothing is checked.
  void MoveBufferForTesting(const HloBuffer& buffer, int64_t offset);

 private:
  friend class BufferAssigner;
  BufferAssignment() = default;
  void Index();

  std::unique_ptr<HloAliasAnalysis> alias_;
  HloSchedule schedule_;
  std::unique_ptr<HloLiveRange> live_range_;
  AssignmentOptions options_;
  std::vector<BufferAllocation> allocations_;
  int64_t temp_allocation_ = -1;
  HeapPlacement heap_;
  std::vector<int64_t> buffer_allocation_;  // by buffer id; -1: none
  std::vector<BufferSlice> value_slice_;    // by value id; allocation -1: none
};

// Assigns every buffer of a scheduled module (is_scheduled, a flattened call
// graph, copies inserted). Errors: a module that is not scheduled or not
// flattened (FailedPrecondition), sizes unknown (Unimplemented), a buffer
// that copy insertion should have split — two entry parameters, a constant
// that is written, a parameter that is not donated or a constant in the
// output (FailedPrecondition, naming the values).
absl::StatusOr<std::unique_ptr<BufferAssignment>> AssignBuffers(
    const HloModule& module, const AssignmentOptions& options = {});

}  // namespace xlite

#endif  // XLITE_BUFFERS_BUFFER_ASSIGNMENT_H_
