// Pass tests: HLO text in, one pass run (then dce, which cleans up what most
// passes leave behind) with the verifier after each pass, the printed module
// out.
#ifndef XLITE_PASSES_PASS_TEST_UTIL_H_
#define XLITE_PASSES_PASS_TEST_UTIL_H_

#include <string>

#include "gtest/gtest.h"
#include "xlite/passes/dce.h"
#include "xlite/passes/pipeline.h"
#include "xlite/text/parser.h"
#include "xlite/text/printer.h"

namespace xlite::pass_test {

// Sets *changed (when given) to whether `Pass` itself changed the module.
template <typename Pass>
std::string RunPass(const std::string& text, bool* changed = nullptr, bool then_dce = true,
                    const PrintOptions& print = PrintOptions()) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "t.hlo");
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return "";
  HloPassPipeline pipeline("test");
  pipeline.AddPass<Pass>();
  if (then_dce) pipeline.AddPass<HloDce>();
  PipelineOptions options;
  options.verify_each_pass = true;
  pipeline.set_options(options);
  absl::StatusOr<bool> result = pipeline.Run(**m);
  EXPECT_TRUE(result.ok()) << result.status();
  if (changed != nullptr) {
    *changed = result.ok() && !pipeline.records().empty() && pipeline.records().front().changed;
  }
  return PrintModule(**m, print);
}

}  // namespace xlite::pass_test

#endif  // XLITE_PASSES_PASS_TEST_UTIL_H_
