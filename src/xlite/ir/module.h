// HloModule: computations plus the module-level configuration XLA prints in
// the "HloModule name, ..." header.
#ifndef XLITE_IR_MODULE_H_
#define XLITE_IR_MODULE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "xlite/ir/computation.h"

namespace xlite {

// entry_computation_layout={(p0, p1)->result}
struct ProgramShape {
  std::vector<Shape> parameters;
  Shape result;
};

enum class AliasKind { kMayAlias, kMustAlias };

// input_output_alias={ {out_index}: (param, {param_index}, may-alias) }
struct InputOutputAlias {
  std::vector<int64_t> output_index;
  int64_t parameter_number = 0;
  std::vector<int64_t> parameter_index;
  AliasKind kind = AliasKind::kMayAlias;
  bool kind_printed = true;  // XLA omits the kind in its oldest spelling
};

// buffer_donor={ (param, {param_index}) }
struct BufferDonor {
  int64_t parameter_number = 0;
  std::vector<int64_t> parameter_index;
};

// The FileNames/FunctionNames/FileLocations/StackFrames sections.
struct StackFrameIndex {
  struct FileLocation {
    int64_t file_name_id = 0, function_name_id = 0, line = 0, end_line = 0, column = 0,
            end_column = 0;
  };
  struct StackFrame {
    int64_t file_location_id = 0, parent_frame_id = 0;
  };
  std::vector<std::string> file_names;
  std::vector<std::string> function_names;
  std::vector<FileLocation> file_locations;
  std::vector<StackFrame> stack_frames;
  bool empty() const {
    return file_names.empty() && function_names.empty() && file_locations.empty() &&
           stack_frames.empty();
  }
};

struct ModuleConfig {
  bool is_scheduled = false;
  std::optional<ProgramShape> entry_computation_layout;
  std::vector<InputOutputAlias> input_output_alias;
  bool input_output_alias_present = false;
  std::vector<BufferDonor> buffer_donor;
  bool alias_passthrough_params = false;
  std::vector<bool> allow_spmd_sharding_propagation_to_parameters;
  std::vector<bool> allow_spmd_sharding_propagation_to_output;
  int64_t replica_count = 1;
  int64_t num_partitions = 1;
  FrontendAttributes frontend_attributes;
  std::string origin_recovery_table;  // body as written
  std::string debug_attributes;       // body as written
};

class HloModule {
 public:
  explicit HloModule(std::string name) : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }

  HloComputation* AddComputation(std::unique_ptr<HloComputation> c);
  // Inserts `c` right after `after` in print order (a clone stays next to
  // its original, so callees still come before callers).
  HloComputation* AddComputationAfter(std::unique_ptr<HloComputation> c,
                                      const HloComputation* after);
  // Computations in print order (callees before callers, entry last).
  const std::vector<std::unique_ptr<HloComputation>>& computations() const { return computations_; }
  HloComputation* entry_computation() const { return entry_; }
  void set_entry_computation(HloComputation* e);
  HloComputation* GetComputationWithName(absl::string_view name) const;
  // Deletes a computation nothing calls any more (not the entry).
  void RemoveComputation(HloComputation* computation);

  ModuleConfig& config() { return config_; }
  const ModuleConfig& config() const { return config_; }
  StackFrameIndex& stack_frame_index() { return stack_frames_; }
  const StackFrameIndex& stack_frame_index() const { return stack_frames_; }

  // The entry signature with layouts: the configured one, else the entry's.
  ProgramShape ComputeEntryComputationLayout() const;

 private:
  std::string name_;
  std::vector<std::unique_ptr<HloComputation>> computations_;
  HloComputation* entry_ = nullptr;
  ModuleConfig config_;
  StackFrameIndex stack_frames_;
};

}  // namespace xlite

#endif  // XLITE_IR_MODULE_H_
