#include "xlite/analysis/hlo_alias_analysis.h"

#include <numeric>

#include "absl/strings/str_cat.h"
#include "xlite/support/status.h"

namespace xlite {
namespace {

// Union-find over value ids, the smaller id as representative.
class DisjointSets {
 public:
  explicit DisjointSets(int64_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int64_t Find(int64_t x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }
  void Union(int64_t a, int64_t b) {
    a = Find(a);
    b = Find(b);
    if (a == b) return;
    if (b < a) std::swap(a, b);
    parent_[b] = a;
  }

 private:
  std::vector<int64_t> parent_;
};

}  // namespace

std::vector<HloPosition> HloBuffer::ComputePositions() const {
  std::vector<HloPosition> positions;
  for (const HloValue* value : values_) {
    positions.insert(positions.end(), value->positions().begin(), value->positions().end());
  }
  return positions;
}

std::string HloBuffer::ToString() const {
  std::string out = absl::StrCat("buffer ", id_, ": {");
  for (size_t i = 0; i < values_.size(); ++i) {
    absl::StrAppend(&out, i ? ", " : "", values_[i]->ToShortString());
  }
  return out + "}";
}

absl::StatusOr<std::unique_ptr<HloAliasAnalysis>> HloAliasAnalysis::Run(const HloModule& module) {
  auto analysis = std::unique_ptr<HloAliasAnalysis>(new HloAliasAnalysis());
  ASSIGN_OR_RETURN(analysis->dataflow_, HloDataflowAnalysis::Run(module));
  const HloDataflowAnalysis& dataflow = *analysis->dataflow_;
  DisjointSets sets(dataflow.value_count());

  for (const auto& value : dataflow.values()) {
    for (const HloValue* input : value->phi_inputs()) sets.Union(value->id(), input->id());
  }
  for (const InPlacePair& pair : dataflow.in_place_pairs()) {
    // Both ends were checked to exist when the pair was recorded.
    const HloValue* in = dataflow.GetValueAt(pair.instruction->operand(pair.input.operand_number),
                                             pair.input.operand_index);
    const HloValue* out = dataflow.GetValueAt(pair.instruction, pair.output);
    sets.Union(in->id(), out->id());
  }
  if (module.config().input_output_alias_present) {
    const HloComputation* entry = module.entry_computation();
    for (const InputOutputAlias& alias : module.config().input_output_alias) {
      if (entry == nullptr || entry->root_instruction() == nullptr) {
        return InvalidArgument("input_output_alias needs an entry computation with a root");
      }
      if (alias.parameter_number < 0 || alias.parameter_number >= entry->num_parameters() ||
          entry->parameter_instruction(alias.parameter_number) == nullptr) {
        return InvalidArgument("input_output_alias names parameter ", alias.parameter_number,
                               "; the entry has ", entry->num_parameters());
      }
      const HloValue* out = dataflow.GetValueAt(entry->root_instruction(), alias.output_index);
      const HloValue* in = dataflow.GetValueAt(entry->parameter_instruction(alias.parameter_number),
                                               alias.parameter_index);
      if (out == nullptr || in == nullptr) {
        return InvalidArgument("input_output_alias ", ShapeIndexToString(alias.output_index), ": (",
                               alias.parameter_number, ", ",
                               ShapeIndexToString(alias.parameter_index),
                               ") names an element the entry's result or parameter lacks");
      }
      sets.Union(in->id(), out->id());
    }
  }

  const int64_t n = dataflow.value_count();
  analysis->value_to_buffer_.assign(n, -1);
  for (int64_t id = 0; id < n; ++id) {
    const int64_t root = sets.Find(id);
    if (analysis->value_to_buffer_[root] < 0) {
      analysis->value_to_buffer_[root] = static_cast<HloBuffer::Id>(analysis->buffers_.size());
      analysis->buffers_.emplace_back();
      analysis->buffers_.back().id_ = analysis->value_to_buffer_[root];
    }
    analysis->value_to_buffer_[id] = analysis->value_to_buffer_[root];
    analysis->buffers_[analysis->value_to_buffer_[id]].values_.push_back(
        dataflow.values()[id].get());
  }
  return analysis;
}

const HloBuffer* HloAliasAnalysis::GetBufferAt(const HloInstruction* instruction,
                                               const ShapeIndex& index) const {
  const HloValue* value = dataflow_->GetValueAt(instruction, index);
  return value == nullptr ? nullptr : &GetBufferContainingValue(*value);
}

bool HloAliasAnalysis::BufferLivesOut(const HloBuffer& buffer) const {
  for (const HloValue* value : buffer.values()) {
    if (value->live_out_of_module()) return true;
  }
  return false;
}

std::string HloAliasAnalysis::ToString() const {
  std::string out =
      absl::StrCat("HloAliasAnalysis of ", module().name(), ": ", buffers_.size(), " buffers\n");
  for (const HloBuffer& buffer : buffers_) absl::StrAppend(&out, "  ", buffer.ToString(), "\n");
  return out;
}

}  // namespace xlite
