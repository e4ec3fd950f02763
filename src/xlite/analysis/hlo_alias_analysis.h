// HloAliasAnalysis: which values must live in the same memory (XLA's
// HloAliasAnalysis). An HloBuffer is a set of values that share one
// allocation; buffer assignment gives each buffer one slice. Values are
// joined when
//   - a phi meets its inputs: a while's init, loop state (body and condition
//     parameters), body result and while result; a conditional's branch
//     results and its result; a parameter of a computation called from
//     several sites and the operands passed there;
//   - an instruction updates an operand in place (in_place_pairs.h:
//     dynamic-update-slice, scatter, all-reduce-start, fusions around them,
//     output_to_operand_aliasing, ...);
//   - the module's input_output_alias says an entry parameter element and an
//     output element are one buffer.
// Values that flow unchanged (tuple, get-tuple-element, bitcast, call, async
// start/done, copy-start/done, send/recv-done, ...) are already one value.
// buffer_donor does not join anything: a donor's memory may be reused for
// any output, which buffer assignment decides.
#ifndef XLITE_ANALYSIS_HLO_ALIAS_ANALYSIS_H_
#define XLITE_ANALYSIS_HLO_ALIAS_ANALYSIS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "xlite/analysis/hlo_dataflow_analysis.h"

namespace xlite {

class HloBuffer {
 public:
  using Id = int64_t;
  Id id() const { return id_; }
  // The values in the buffer, by increasing id.
  const std::vector<const HloValue*>& values() const { return values_; }
  // Every position of every value in the buffer.
  std::vector<HloPosition> ComputePositions() const;
  std::string ToString() const;  // "buffer 3: {v1, v4 (phi)}"

 private:
  friend class HloAliasAnalysis;
  Id id_ = 0;
  std::vector<const HloValue*> values_;
};

class HloAliasAnalysis {
 public:
  // Runs dataflow analysis, then joins values. An input_output_alias naming
  // a parameter or index the entry does not have is InvalidArgument.
  static absl::StatusOr<std::unique_ptr<HloAliasAnalysis>> Run(const HloModule& module);

  const HloModule& module() const { return dataflow_->module(); }
  const HloDataflowAnalysis& dataflow_analysis() const { return *dataflow_; }

  // Buffers, indexed by id; buffer ids follow their smallest value id.
  const std::vector<HloBuffer>& buffers() const { return buffers_; }
  int64_t buffer_count() const { return static_cast<int64_t>(buffers_.size()); }
  const HloBuffer& GetBuffer(HloBuffer::Id id) const { return buffers_[id]; }
  const HloBuffer& GetBufferContainingValue(const HloValue& value) const {
    return buffers_[value_to_buffer_[value.id()]];
  }
  // The buffer at a position; nullptr if the position does not exist.
  const HloBuffer* GetBufferAt(const HloInstruction* instruction,
                               const ShapeIndex& index = {}) const;
  // True if some value of the buffer is part of the entry's result.
  bool BufferLivesOut(const HloBuffer& buffer) const;

  std::string ToString() const;

 private:
  HloAliasAnalysis() = default;
  std::unique_ptr<HloDataflowAnalysis> dataflow_;
  std::vector<HloBuffer> buffers_;
  std::vector<HloBuffer::Id> value_to_buffer_;
};

}  // namespace xlite

#endif  // XLITE_ANALYSIS_HLO_ALIAS_ANALYSIS_H_
