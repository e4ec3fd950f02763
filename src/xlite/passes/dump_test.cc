#include "xlite/passes/dump.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "xlite/passes/dce.h"
#include "xlite/text/parser.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

namespace fs = std::filesystem;

std::set<std::string> Files(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

TEST(Dump, XlaFileNamesOneSnapshotPerPass) {
  const fs::path dir = fs::path(testing::TempDir()) / "xlite_dump_test";
  fs::remove_all(dir);
  auto m = ParseHloModule(
      "HloModule jit_f\nENTRY e {\n  p = f32[2] parameter(0)\n  d = f32[2] negate(p)\n  ROOT r "
      "= f32[2] exponential(p)\n}\n",
      "t.hlo");
  ASSERT_TRUE(m.ok());
  DebugOptions options;
  options.dump_to = dir.string();
  options.dump_hlo_pass_re = ".*";
  ModuleDumper dumper(options, **m, 1);
  ASSERT_TRUE(dumper.enabled());
  HloPassPipeline pipeline("simplify");
  pipeline.AddPass<HloDce>();
  pipeline.AddPass<HloDce>();
  PipelineOptions pipeline_options;
  pipeline_options.verify_each_pass = true;
  pipeline_options.after_pass = [&](const HloModule& module, const PassRecord& r) {
    dumper.AfterPass(module, r);
  };
  pipeline.set_options(pipeline_options);
  ASSERT_TRUE(dumper.DumpStage(**m, "before_optimizations").ok());
  ASSERT_TRUE(pipeline.Run(**m).ok());
  ASSERT_TRUE(dumper.DumpStage(**m, "after_optimizations").ok());
  ASSERT_TRUE(dumper.Finish().ok());
  EXPECT_EQ(Files(dir), (std::set<std::string>{
                            "module_0001.jit_f.before_optimizations.txt",
                            "module_0001.jit_f.0001.simplify.after_dce.before_dce.txt",
                            "module_0001.jit_f.0002.simplify.after_dce.before_pipeline-end.txt",
                            "module_0001.jit_f.after_optimizations.txt",
                            "module_0001.jit_f.index.txt",
                        }));
  fs::remove_all(dir);
}

TEST(Dump, PassDiffsOnlyForPassesThatChanged) {
  const fs::path dir = fs::path(testing::TempDir()) / "xlite_dump_diff_test";
  fs::remove_all(dir);
  auto m = ParseHloModule(
      "HloModule jit_f\nENTRY e {\n  p = f32[2] parameter(0)\n  d = f32[2] negate(p)\n  ROOT r "
      "= f32[2] exponential(p)\n}\n",
      "t.hlo");
  ASSERT_TRUE(m.ok());
  DebugOptions options;
  options.dump_to = dir.string();
  options.dump_pass_diffs = true;
  ModuleDumper dumper(options, **m, 1);
  HloPassPipeline pipeline("simplify");
  pipeline.AddPass<HloDce>();
  pipeline.AddPass<HloDce>();
  PipelineOptions pipeline_options;
  pipeline_options.after_pass = [&](const HloModule& module, const PassRecord& r) {
    dumper.AfterPass(module, r);
  };
  pipeline.set_options(pipeline_options);
  ASSERT_TRUE(dumper.DumpStage(**m, "before_optimizations").ok());
  ASSERT_TRUE(pipeline.Run(**m).ok());
  ASSERT_TRUE(dumper.Finish().ok());
  const std::string diff_name = "module_0001.jit_f.0001.simplify.after_dce.diff";
  EXPECT_EQ(Files(dir), (std::set<std::string>{"module_0001.jit_f.before_optimizations.txt",
                                               diff_name, "module_0001.jit_f.index.txt"}));
  std::ifstream in(dir / diff_name);
  const std::string diff((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(diff.rfind("--- before_dce\n+++ after_dce\n@@ ", 0), 0u) << diff;
  EXPECT_NE(diff.find("\n-  %d = f32[2]{0} negate(f32[2]{0} %p)\n"), std::string::npos) << diff;
  fs::remove_all(dir);
}

TEST(Dump, ModuleFilterAndPassFilter) {
  auto m =
      ParseHloModule("HloModule other\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n", "t.hlo");
  ASSERT_TRUE(m.ok());
  DebugOptions options;
  options.dump_to = (fs::path(testing::TempDir()) / "xlite_dump_filter").string();
  options.dump_hlo_module_re = "^jit_";
  EXPECT_FALSE(ModuleDumper(options, **m, 1).enabled());
  options.dump_hlo_module_re = "oth";
  EXPECT_TRUE(ModuleDumper(options, **m, 1).enabled());
}

TEST(Flags, XlaFlagsThenCommandLineWhichWins) {
  setenv("XLA_FLAGS", "--xla_dump_to=/env --xla_disable_hlo_passes=cse,dce", 1);
  std::vector<std::string> args = {"--xla_dump_to=/cli", "file.hlo", "--xlite_pass_timing"};
  absl::StatusOr<DebugOptions> o = ReadDebugOptions(args);
  unsetenv("XLA_FLAGS");
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->dump_to, "/cli");
  EXPECT_EQ(o->disable_hlo_passes, (std::vector<std::string>{"cse", "dce"}));
  EXPECT_TRUE(o->pass_timing);
  EXPECT_EQ(args, std::vector<std::string>{"file.hlo"});
  std::vector<std::string> bad = {"--xla_nope=1"};
  EXPECT_EQ(ReadDebugOptions(bad).status().message(), "unknown flag --xla_nope");
  std::vector<std::string> bad_re = {"--xla_dump_hlo_pass_re=("};
  EXPECT_FALSE(ReadDebugOptions(bad_re).ok());
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
