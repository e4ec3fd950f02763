#include "xlite/buffers/memory_report.h"

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "xlite/buffers/buffer_assignment_text.h"
#include "xlite/buffers/buffers_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

using buffers_test::Plan;
using buffers_test::Planned;

TEST(MemoryReport, SectionsBoundsPeakBuffersDonationsCopies) {
  Planned p = Plan(R"(
HloModule m

ENTRY e {
  x = f32[1024] parameter(0)
  a = f32[1024] negate(x), metadata={op_name="jit(f)/neg" source_file="model.py" source_line=7}
  b = f32[1024] exponential(a)
  c = f32[1024] add(a, b)
  ROOT t = (f32[1024], f32[1024]) tuple(c, x)
}
)");
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();
  const std::string report = MemoryReport(*p.plan);
  for (const char* expected :
       {"Memory plan of module m", "Schedule: ", "Allocations       count", "  parameter ",
        "  temp ", "Lower bound (the checker, this schedule): ", "allocated (the plan's peak) ",
        "heap / bound = ", "Live at the peak", "jit(f)/neg  model.py:7",
        "parameter 0 {} f32[1024]: not donated (read-only); returned as output {1} through copy",
        "Inserted copies (1)", "[read-only-output] output {1} is parameter 0 {}"}) {
    EXPECT_TRUE(absl::StrContains(report, expected)) << expected << "\n" << report;
  }
}

TEST(MemoryReport, SourceFromStackFrames) {
  Planned p = Plan(R"(
HloModule m

FileNames
1 "model.py"

FunctionNames
1 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=42 end_line=42 column=1 end_column=9}

StackFrames
1 {file_location_id=1 parent_frame_id=0}

ENTRY e {
  x = f32[1024] parameter(0)
  b = f32[1024] exponential(x), metadata={op_name="jit(f)/exp" stack_frame_id=1}
  ROOT c = f32[1024] negate(b)
}
)");
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();
  const std::string report = MemoryReport(*p.plan);
  EXPECT_TRUE(absl::StrContains(report, "jit(f)/exp  model.py:42")) << report;
}

TEST(MemoryReport, TimelineTsvAndSvg) {
  Planned p = Plan(R"(
HloModule m

ENTRY e {
  x = f32[256] parameter(0)
  a = f32[256] negate(x)
  b = f32[256] exponential(a)
  ROOT c = f32[256] add(a, b)
}
)");
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();
  const BufferAssignment& a = *p.plan->assignment;
  const std::string tsv = MemoryTimelineTsv(a);
  std::vector<std::string> lines = absl::StrSplit(tsv, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 5u);  // the header and four steps
  EXPECT_EQ(lines[0], "step\tcomputation\tinstruction\tparameter\tconstant\toutput\ttemp\ttotal");
  // Every step: the parameter is live, totals add up.
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> f = absl::StrSplit(lines[i], '\t');
    ASSERT_EQ(f.size(), 8u);
    EXPECT_EQ(f[3], "1024");
    EXPECT_EQ(std::stoll(f[3]) + std::stoll(f[4]) + std::stoll(f[5]) + std::stoll(f[6]),
              std::stoll(f[7]));
  }
  const std::string svg = MemoryTimelineSvg(a);
  EXPECT_TRUE(absl::StartsWith(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_TRUE(absl::StrContains(svg, "<polygon"));
  EXPECT_TRUE(absl::StrContains(svg, ">temp</text>"));
  EXPECT_TRUE(absl::EndsWith(svg, "</svg>\n"));
}

TEST(MemoryReport, HumanReadableBytesAsXla) {
  EXPECT_EQ(HumanReadableNumBytes(4), "4B");
  EXPECT_EQ(HumanReadableNumBytes(1023), "1023B");
  EXPECT_EQ(HumanReadableNumBytes(409600), "400.0KiB");
  EXPECT_EQ(HumanReadableNumBytes(1091820), "1.04MiB");
  EXPECT_EQ(HumanReadableNumBytes(16274260), "15.52MiB");
  EXPECT_EQ(HumanReadableNumBytes(-2048), "-2.0KiB");
}

TEST(MemoryReport, XlaBufferAssignmentAndMemoryUsageText) {
  Planned p = Plan(R"(
HloModule increment, input_output_alias={ {}: (0, {}) }

ENTRY entry {
  p = f32[] parameter(0)
  c = f32[] constant(1)
  ROOT out = f32[] add(p, c)
}
)");
  ASSERT_TRUE(p.plan.ok()) << p.plan.status();
  // The schedule puts the constant first, so it has value 0.
  const std::string ba = BufferAssignmentToXlaString(*p.plan->assignment);
  EXPECT_TRUE(absl::StartsWith(ba,
                               "BufferAssignment:\n"
                               "allocation 0: size 4, page 0, constant:\n"
                               " value: <0 c @0> (size=4,offset=0): f32[]\n"
                               "allocation 1: size 4, page 0, parameter 0, shape |f32[]| at "
                               "ShapeIndex {}, output shape is |f32[]|, maybe-live-out:\n"
                               " value: <1 p @0> (size=4,offset=0): f32[]\n"
                               " value: <2 out @0> (size=4,offset=0): f32[]\n"
                               "\nTotal bytes used: 8 (8B)\n\nUsed values:\n<0 c @0>\n"
                               " positions:\n  c\n uses:\n  out, operand 1\n"
                               " from instruction: %c = f32[] constant(1)\n"))
      << ba;
  const std::string usage = XlaMemoryUsageReport(*p.plan->assignment);
  EXPECT_EQ(usage,
            "Memory Space: default (color=0)\n"
            "Total bytes: 8 (8B)\n"
            "  cumulative_size;       size;       offset; used_by_n_values; shapes_list\n"
            "  ------------------------------------------------------------\n"
            "         4B(100%);         4B;            0;                1; f32[]\n"
            "\n"
            "  cumulative_size;       size;       offset; used_by_n_values; shapes_list\n"
            "  ------------------------------------------------------------\n"
            "         4B(100%);         4B;            0;                2; 2×f32[]\n"
            "\n"
            "\n");
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
