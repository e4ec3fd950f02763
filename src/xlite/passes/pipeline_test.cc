#include "xlite/passes/pipeline.h"

#include <string>

#include "gtest/gtest.h"
#include "xlite/text/parser.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

// Changes the module the first `times` runs (renames it), then reports no change.
class CountdownPass : public HloPass {
 public:
  CountdownPass(std::string name, int times) : name_(std::move(name)), times_(times) {}
  absl::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(HloModule& module) override {
    ++runs;
    if (times_ == 0) return false;
    --times_;
    module.set_name(module.name() + "x");
    return true;
  }
  int runs = 0;

 private:
  std::string name_;
  int times_;
};

// Breaks the module: the entry root gets a wrong shape.
class BreakingPass : public HloPass {
 public:
  absl::string_view name() const override { return "breaker"; }
  absl::StatusOr<bool> Run(HloModule& module) override {
    module.entry_computation()->root_instruction()->mutable_shape() =
        Shape::Array(PrimitiveType::S32, {7});
    return true;
  }
};

std::unique_ptr<HloModule> Module() {
  auto m = ParseHloModule(
      "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] "
      "negate(p)\n}\n",
      "t.hlo");
  EXPECT_TRUE(m.ok());
  return std::move(*m);
}

TEST(Pipeline, FixedPointRepeatsUntilNothingChanges) {
  auto m = Module();
  HloPassPipeline pipeline("simplify", /*max_iterations=*/10);
  CountdownPass& a = pipeline.AddPass<CountdownPass>("a", 2);
  CountdownPass& b = pipeline.AddPass<CountdownPass>("b", 0);
  absl::StatusOr<bool> changed = pipeline.Run(*m);
  ASSERT_TRUE(changed.ok());
  EXPECT_TRUE(*changed);
  EXPECT_EQ(a.runs, 3);  // changed, changed, then a quiet round ends the loop
  EXPECT_EQ(b.runs, 3);
  ASSERT_EQ(pipeline.records().size(), 6u);
  EXPECT_TRUE(pipeline.records()[0].changed);
  EXPECT_FALSE(pipeline.records()[5].changed);
  EXPECT_NE(FormatPassTiming(pipeline.records()).find("total"), std::string::npos);
}

TEST(Pipeline, DisabledAndEnabledOnlyPasses) {
  auto m = Module();
  HloPassPipeline pipeline("p");
  CountdownPass& a = pipeline.AddPass<CountdownPass>("a", 1);
  CountdownPass& b = pipeline.AddPass<CountdownPass>("b", 1);
  pipeline.set_options({.disabled_passes = {"a"}});
  ASSERT_TRUE(pipeline.Run(*m).ok());
  EXPECT_EQ(a.runs, 0);
  EXPECT_EQ(b.runs, 1);
  HloPassPipeline only("q");
  CountdownPass& c = only.AddPass<CountdownPass>("c", 1);
  CountdownPass& d = only.AddPass<CountdownPass>("d", 1);
  only.set_options({.enabled_passes_only = {"d"}});
  ASSERT_TRUE(only.Run(*m).ok());
  EXPECT_EQ(c.runs, 0);
  EXPECT_EQ(d.runs, 1);
}

TEST(Pipeline, VerifierAfterEachPassNamesThePass) {
  auto m = Module();
  HloPassPipeline pipeline("p");
  pipeline.AddPass<BreakingPass>();
  pipeline.set_options({.verify_each_pass = true});
  absl::StatusOr<bool> r = pipeline.Run(*m);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("verifier failed after pass 'breaker' in pipeline 'p'"),
            std::string::npos)
      << r.status();
}

TEST(Pipeline, NestedPipelinesRecordTheirPasses) {
  auto m = Module();
  HloPassPipeline outer("outer");
  HloPassPipeline& inner = outer.AddPass<HloPassPipeline>("inner", 5);
  inner.AddPass<CountdownPass>("x", 1);
  std::vector<std::string> seen;
  outer.set_options({.after_pass = [&](const HloModule&, const PassRecord& r) {
    seen.push_back(r.pipeline + "/" + r.pass);
  }});
  ASSERT_TRUE(outer.Run(*m).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"inner/x", "inner/x"}));
  EXPECT_EQ(outer.records().size(), 2u);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
