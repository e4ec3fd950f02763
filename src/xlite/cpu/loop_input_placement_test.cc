#include "xlite/cpu/loop_input_placement.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "xlite/cpu/cpu_test_util.h"
#include "xlite/runtime/task_runner.h"
#include "xlite/runtime/thread_pool.h"

namespace xlite::cpu {
namespace {
namespace XLITE_UNITY_ID {

// A scan over y = exp(x): the loop reads y[i] in iteration i (one whole-loop
// kernel); `extra_instructions` may add other readers of y to the entry.
std::string Scan(const std::string& extra_instructions, const std::string& root) {
  return absl::StrCat(R"(
HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = f32[] add(a, b) }
body {
  s = (s32[], f32[], f32[262144]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = f32[] get-tuple-element(s), index=1
  y = f32[262144] get-tuple-element(s), index=2
  d = f32[1] dynamic-slice(y, i), dynamic_slice_sizes={1}
  e = f32[] reshape(d)
  ROOT t = (s32[], f32[], f32[262144]) tuple(s32[] add(i, s32[] constant(1)), f32[] add(acc, e), y)
}
cond {
  s = (s32[], f32[], f32[262144]) parameter(0)
  n = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(n, s32[] constant(64)), direction=LT
}
ENTRY e {
  x = f32[262144] parameter(0)
  y = f32[262144] exponential(x)
  w = (s32[], f32[], f32[262144]) while((s32[], f32[], f32[262144]) tuple(s32[] constant(0), f32[] constant(0), y)), condition=cond, body=body
  sum = f32[] get-tuple-element(w), index=1
  )",
                      extra_instructions, "\n  ROOT r = ", root, "\n}\n");
}

// The thunk line of the kernel computing y (its instruction is exponential
// or a fusion holding it).
std::string LineOf(const std::string& thunks, const std::string& what) {
  for (absl::string_view line : absl::StrSplit(thunks, '\n')) {
    if (absl::StrContains(line, what)) return std::string(line);
  }
  return "";
}

TEST(LoopInputPlacement, AKernelOnlyALoopKernelReadsRunsOnOneThread) {
  const std::string text = Scan("", "f32[] copy(sum)");
  runtime::ThreadPool pool(2);
  runtime::PoolTaskRunner runner(pool);
  const std::string thunks = testing::ExpectAgreesWithInterpreter(text, &runner);
  ASSERT_NE(LineOf(thunks, "(whole loop)"), "") << thunks;
  const std::string line = LineOf(thunks, "(exponential)");
  ASSERT_NE(line, "") << thunks;
  EXPECT_NE(line.find("partitions<=1 "), std::string::npos) << thunks;
}

// Another reader of y, before the loop or after it (z scales y by the
// loop's sum, so it runs after): the split stays.
TEST(LoopInputPlacement, AnotherReaderKeepsTheSplit) {
  for (const auto& [extra, root] : std::vector<std::pair<std::string, std::string>>{
           {"ys = f32[] reduce(y, f32[] constant(0)), dimensions={0}, to_apply=add\n"
            "  add2 = f32[262144] add(y, y)",
            "(f32[], f32[], f32[262144]) tuple(sum, ys, add2)"},
           {"bs = f32[262144] broadcast(sum), dimensions={}\n  z = f32[262144] multiply(y, bs)",
            "(f32[], f32[262144]) tuple(sum, z)"},
       }) {
    const std::string text = Scan(extra, root);
    runtime::ThreadPool pool(2);
    runtime::PoolTaskRunner runner(pool);
    const std::string thunks = testing::ExpectAgreesWithInterpreter(text, &runner);
    const std::string line = LineOf(thunks, "(exponential)");
    ASSERT_NE(line, "") << thunks;
    EXPECT_EQ(line.find("partitions<=1 "), std::string::npos) << thunks;
  }
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::cpu
