#include "xlite/passes/pipeline.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "xlite/support/status.h"
#include "xlite/verify/verifier.h"

namespace xlite {

bool HloPassPipeline::Enabled(absl::string_view pass) const {
  auto listed = [&](const std::vector<std::string>& names) {
    return std::find(names.begin(), names.end(), pass) != names.end();
  };
  if (listed(options_.disabled_passes)) return false;
  return options_.enabled_passes_only.empty() || listed(options_.enabled_passes_only);
}

absl::StatusOr<bool> HloPassPipeline::Run(HloModule& module) {
  bool changed_any = false;
  for (int iteration = 0; iteration < std::max(1, max_iterations_); ++iteration) {
    bool changed = false;
    for (const std::unique_ptr<HloPass>& pass : passes_) {
      auto* nested = dynamic_cast<HloPassPipeline*>(pass.get());
      if (nested == nullptr && !Enabled(pass->name())) continue;
      if (nested != nullptr) nested->set_options(options_);
      const size_t nested_before = nested != nullptr ? nested->records().size() : 0;
      const auto start = std::chrono::steady_clock::now();
      absl::StatusOr<bool> result = pass->Run(module);
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      if (!result.ok()) {
        return absl::Status(result.status().code(),
                            absl::StrCat("pass '", pass->name(), "' in pipeline '", name_,
                                         "': ", result.status().message()));
      }
      if (nested != nullptr) {
        records_.insert(records_.end(), nested->records().begin() + nested_before,
                        nested->records().end());
      } else {
        PassRecord record{name_, std::string(pass->name()), ms, *result};
        records_.push_back(record);
        if (options_.after_pass) options_.after_pass(module, record);
      }
      if (options_.verify_each_pass && nested == nullptr) {
        if (absl::Status s = VerifyModule(module); !s.ok()) {
          return absl::InternalError(absl::StrCat("verifier failed after pass '", pass->name(),
                                                  "' in pipeline '", name_, "': ", s.message()));
        }
      }
      changed |= *result;
    }
    changed_any |= changed;
    if (!changed) break;
  }
  return changed_any;
}

std::string FormatPassTiming(const std::vector<PassRecord>& records) {
  std::string out = absl::StrFormat("%-32s %-20s %10s  %s\n", "pass", "pipeline", "ms", "changed");
  double total = 0;
  for (const PassRecord& r : records) {
    absl::StrAppend(&out, absl::StrFormat("%-32s %-20s %10.3f  %s\n", r.pass, r.pipeline,
                                          r.milliseconds, r.changed ? "yes" : "no"));
    total += r.milliseconds;
  }
  absl::StrAppend(&out, absl::StrFormat("%-32s %-20s %10.3f\n", "total", "", total));
  return out;
}

}  // namespace xlite
