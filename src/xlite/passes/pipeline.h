// HloPassPipeline: runs passes in order (optionally repeated to a fixed
// point), skipping the ones XLA's --xla_disable_hlo_passes /
// --xla_enable_hlo_passes_only exclude, verifying after each pass when asked,
// and recording each pass's time and whether it changed the module.
#ifndef XLITE_PASSES_PIPELINE_H_
#define XLITE_PASSES_PIPELINE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "xlite/passes/pass.h"

namespace xlite {

struct PassRecord {
  std::string pipeline;
  std::string pass;
  double milliseconds = 0;
  bool changed = false;
};

struct PipelineOptions {
  bool verify_each_pass = false;                 // --xlite_verify_each_pass; always on in tests
  std::vector<std::string> disabled_passes;      // --xla_disable_hlo_passes=a,b
  std::vector<std::string> enabled_passes_only;  // --xla_enable_hlo_passes_only=a,b
  // Called after every pass that ran (dumps hook in here).
  std::function<void(const HloModule&, const PassRecord&)> after_pass;
};

class HloPassPipeline : public HloPass {
 public:
  // max_iterations > 1 repeats the whole list until no pass changes anything
  // (or the limit is hit).
  explicit HloPassPipeline(std::string name, int max_iterations = 1)
      : name_(std::move(name)), max_iterations_(max_iterations) {}

  template <typename P, typename... Args>
  P& AddPass(Args&&... args) {
    auto pass = std::make_unique<P>(std::forward<Args>(args)...);
    P& ref = *pass;
    passes_.push_back(std::move(pass));
    return ref;
  }

  // Adds a pass made elsewhere (e.g. by the registry).
  HloPass& AddPass(std::unique_ptr<HloPass> pass) {
    passes_.push_back(std::move(pass));
    return *passes_.back();
  }

  absl::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(HloModule& module) override;

  void set_options(PipelineOptions options) { options_ = std::move(options); }
  // Every pass run so far, nested pipelines' passes included, in order.
  const std::vector<PassRecord>& records() const { return records_; }

 private:
  bool Enabled(absl::string_view pass) const;

  std::string name_;
  int max_iterations_;
  std::vector<std::unique_ptr<HloPass>> passes_;
  PipelineOptions options_;
  std::vector<PassRecord> records_;
};

// The records as a table: pass, pipeline, milliseconds, changed (--xlite_pass_timing).
std::string FormatPassTiming(const std::vector<PassRecord>& records);

}  // namespace xlite

#endif  // XLITE_PASSES_PIPELINE_H_
