#include "xlite/passes/dynamic_padder.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "xlite/eval/evaluator.h"
#include "xlite/passes/expander_test_util.h"
#include "xlite/passes/pass_test_util.h"
#include "xlite/support/status.h"
#include "xlite/verify/verifier.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

using pass_test::CheckExpansion;
using pass_test::CompareBitwise;

std::string Compare(const Literal& a, const Literal& b) { return CompareBitwise(a, b); }

bool HasDynamicShape(const Shape& shape) {
  for (const Shape& s : shape.tuple_shapes()) {
    if (HasDynamicShape(s)) return true;
  }
  return shape.IsArray() && !shape.is_static();
}

// Pads `text` and compares the interpreter before and after (bitwise, the
// padding included) on two seeds; checks no dynamic shape or size op is left.
std::string Check(const std::string& text) {
  for (uint64_t seed : {1, 2}) {
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "t.hlo");
    if (!module.ok()) return absl::StrCat("parse: ", module.status().ToString());
    bool changed = false;
    std::string diff = CheckExpansion<DynamicPadder>(**module, Compare, &changed, seed);
    if (!diff.empty()) return diff;
    if (!changed) return "nothing changed";
    for (const auto& c : (*module)->computations()) {
      for (const auto& i : c->instructions()) {
        if (HasDynamicShape(i->shape()) || i->opcode() == HloOpcode::kSetDimensionSize ||
            i->opcode() == HloOpcode::kGetDimensionSize ||
            i->opcode() == HloOpcode::kDynamicReshape) {
          return absl::StrCat("left: ", i->name(), "\n", PrintModule(**module));
        }
      }
    }
  }
  return "";
}

// The pass's error on `text`; the module must be unchanged by a refusal.
absl::Status Refusal(const std::string& text) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "t.hlo");
  if (!module.ok()) return Internal("parse: ", module.status().ToString());
  const std::string before = PrintModule(**module);
  DynamicPadder pass;
  absl::StatusOr<bool> ran = pass.Run(**module);
  if (ran.ok()) return Internal("padded:\n", PrintModule(**module));
  if (PrintModule(**module) != before) return Internal("changed by a refusal");
  return ran.status();
}

TEST(DynamicPadder, SizesTravelAsScalars) {
  // get-dimension-size of a parameter is its bound; after set-dimension-size
  // it is the size set, through elementwise ops, broadcast, transpose and a
  // reshape adding a size-1 dimension.
  EXPECT_EQ(Check(R"(HloModule m
ENTRY e {
  p = f32[<=6,3] parameter(0)
  n = s32[] parameter(1)
  bound = s32[] get-dimension-size(p), dimensions={0}
  s = f32[<=6,3] set-dimension-size(p, n), dimensions={0}
  a = f32[<=6,3] add(s, p)
  t = f32[3,<=6] transpose(a), dimensions={1,0}
  b = f32[2,3,<=6] broadcast(t), dimensions={1,2}
  r = f32[2,3,1,<=6] reshape(b)
  c = pred[2,3,1,<=6] compare(r, r), direction=EQ
  other = s32[] get-dimension-size(c), dimensions={1}
  ROOT out = (pred[2,3,1,<=6], s32[], s32[]) tuple(c, other, bound)
})"),
            "");
}

// XLA's get-dimension-size returns the size set-dimension-size set. The
// interpreter has no runtime sizes (it answers the bound), so this is checked
// on the padded, static module.
TEST(DynamicPadder, GetDimensionSizeIsTheSizeSet) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(HloModule m
ENTRY e {
  p = f32[<=6,3] parameter(0)
  n = s32[] parameter(1)
  s = f32[<=6,3] set-dimension-size(p, n), dimensions={0}
  t = f32[3,<=6] transpose(s), dimensions={1,0}
  r = f32[1,3,<=6] reshape(t)
  size = s32[] get-dimension-size(r), dimensions={2}
  ROOT out = (f32[1,3,<=6], s32[]) tuple(r, size)
})",
                                                                     "t.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  DynamicPadder pass;
  absl::StatusOr<bool> ran = pass.Run(**module);
  ASSERT_TRUE(ran.ok()) << ran.status();
  ASSERT_TRUE(VerifyModule(**module).ok()) << PrintModule(**module);
  std::vector<Literal> args;
  args.emplace_back(Shape::Array(PrimitiveType::F32, {6, 3}));
  for (int64_t i = 0; i < 18; ++i) args[0].SetDouble(i, static_cast<double>(i));
  args.emplace_back(Shape::Scalar(PrimitiveType::S32));
  args[1].SetInt(0, 4);
  absl::StatusOr<Literal> out = Evaluate(**module, args);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->tuple_elements()[1].GetInt(0), 4);
  // The data keeps its padding: element [0][1][5] is p[5][1].
  EXPECT_EQ(out->tuple_elements()[0].GetDouble(1 * 6 + 5), 16.0);
}

TEST(DynamicPadder, SizeOfASizeAndConstantSizes) {
  // A size computed from another size; a constant size equal to the bound
  // makes the dimension full again, so a reduce over it is fine.
  EXPECT_EQ(Check(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[<=4] parameter(1)
  g = s32[] get-dimension-size(q), dimensions={0}
  s = f32[<=4] set-dimension-size(p, g), dimensions={0}
  g2 = s32[] get-dimension-size(s), dimensions={0}
  four = s32[] constant(4)
  full = f32[<=4] set-dimension-size(p, four), dimensions={0}
  z = f32[] constant(0)
  sum = f32[] reduce(full, z), dimensions={0}, to_apply=add
  ROOT out = (f32[<=4], s32[], f32[]) tuple(s, g2, sum)
})"),
            "");
}

// The interpreter has no dynamic-reshape: the padded module is checked.
TEST(DynamicPadder, DynamicReshapeToItsBounds) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  two = s32[] constant(2)
  three = s32[] constant(3)
  ROOT r = f32[3,<=2] dynamic-reshape(p, three, two)
})",
                                                                     "t.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  DynamicPadder pass;
  absl::StatusOr<bool> ran = pass.Run(**module);
  ASSERT_TRUE(ran.ok()) << ran.status();
  ASSERT_TRUE(VerifyModule(**module).ok()) << PrintModule(**module);
  const HloInstruction* root = (*module)->entry_computation()->root_instruction();
  EXPECT_EQ(root->opcode(), HloOpcode::kReshape);
  EXPECT_EQ(root->shape().ToString(false), "f32[3,2]");
  EXPECT_EQ(root->operand(0)->name(), "p");
}

TEST(DynamicPadder, CalledComputationsAtTheirBounds) {
  EXPECT_EQ(Check(R"(HloModule m
body {
  x = f32[<=4] parameter(0)
  ROOT y = f32[<=4] negate(x)
}
ENTRY e {
  p = f32[<=4] parameter(0)
  ROOT c = f32[<=4] call(p), to_apply=body
})"),
            "");
}

TEST(DynamicPadder, StaticModulesUnchanged) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
})",
                                                                     "t.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  DynamicPadder pass;
  absl::StatusOr<bool> ran = pass.Run(**module);
  ASSERT_TRUE(ran.ok()) << ran.status();
  EXPECT_FALSE(*ran);
}

TEST(DynamicPadder, KeepsTheInterfaceAndASchedule) {
  constexpr char kText[] = R"(HloModule m, is_scheduled=true
ENTRY e {
  p = f32[<=4]{0} parameter(0)
  n = s32[] parameter(1)
  s = f32[<=4]{0} set-dimension-size(p, n), dimensions={0}
  g = s32[] get-dimension-size(p), dimensions={0}
  ROOT out = (f32[<=4]{0}, s32[]) tuple(s, g)
})";
  EXPECT_EQ(pass_test::CheckScheduleKept<DynamicPadder>(kText), "");
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(kText, "t.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  DynamicPadder pass;
  ASSERT_TRUE(pass.Run(**module).ok());
  ASSERT_TRUE((*module)->config().entry_computation_layout.has_value());
  EXPECT_EQ((*module)->config().entry_computation_layout->result.ToString(false),
            "(f32[<=4], s32[])");
  EXPECT_TRUE(VerifyModule(**module).ok());
}

TEST(DynamicPadder, RefusesWhatNeedsMasking) {
  constexpr char kHead[] = R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
)";
  struct Case {
    std::string body;
    std::string message;
  };
  const std::vector<Case> cases = {
      {R"(ENTRY e {
  p = f32[8] parameter(0)
  n = s32[] parameter(1)
  s = f32[<=8] set-dimension-size(p, n), dimensions={0}
  z = f32[] constant(0)
  ROOT r = f32[] reduce(s, z), dimensions={0}, to_apply=add
})",
       "reduce 'r' reads 's', which has a runtime dimension size"},
      {R"(ENTRY e {
  p = f32[2,4] parameter(0)
  n = s32[] parameter(1)
  s = f32[2,<=4] set-dimension-size(p, n), dimensions={1}
  ROOT r = f32[<=8] reshape(s)
})",
       "reshape 'r' reshapes a runtime-sized dimension"},
      {R"(ENTRY e {
  p = f32[4] parameter(0)
  n = s32[] parameter(1)
  s = f32[<=4] set-dimension-size(p, n), dimensions={0}
  ROOT r = f32[2] slice(s), slice={[0:2]}
})",
       "slice 'r' reads 's'"},
      {R"(body {
  x = f32[4] parameter(0)
  m = s32[] constant(2)
  ROOT y = f32[<=4] set-dimension-size(x, m), dimensions={0}
}
ENTRY e {
  p = f32[4] parameter(0)
  ROOT c = f32[<=4] call(p), to_apply=body
})",
       "returns a runtime-sized value from a called computation"},
      {R"(ENTRY e {
  p = f32[2,3] parameter(0)
  n = s32[] parameter(1)
  two = s32[] constant(2)
  ROOT r = f32[3,<=2] dynamic-reshape(p, n, two)
})",
       "dynamic-reshape 'r' has sizes that are not constants equal to its bounds"},
      {R"(ENTRY e {
  p = f32[4] parameter(0)
  n = s64[] parameter(1)
  ROOT s = f32[<=4] set-dimension-size(p, n), dimensions={0}
})",
       "needs an s32[] size"},
      {R"(ENTRY e {
  p = f32[?] parameter(0)
  ROOT n = f32[?] negate(p)
})",
       "parameter 'p' has an unbounded dynamic dimension"},
  };
  for (const Case& c : cases) {
    absl::Status status = Refusal(absl::StrCat(kHead, c.body));
    EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented) << status << "\n" << c.body;
    EXPECT_TRUE(absl::StrContains(status.message(), c.message)) << status << "\n" << c.body;
  }
}

// Every XLA-corpus module with a bounded dynamic shape or a size op: padded
// (the interpreter agrees before and after, bitwise) or refused by name.
TEST(DynamicPadder, XlaCorpus) {
  std::set<std::filesystem::path> files;
  for (const char* needle : {"[<=", ",<=", "dimension-size(", "dynamic-reshape("}) {
    for (const auto& f : pass_test::CorpusFilesWith(needle)) files.insert(f);
  }
  if (files.empty()) GTEST_SKIP() << "no XLA corpus (set XLITE_CORPUS); SKIPPED";
  // The modules the CPU backend needs this pass for.
  const std::set<std::string> expected = {
      "xla__hlo__translate__hlo_to_mhlo__tests__import_bounded_dynamism.part1.hlo",
      "xla__hlo__translate__hlo_to_mhlo__tests__import_bounded_dynamism.part2.hlo",
      "xla__hlo__translate__hlo_to_mhlo__tests__import_bounded_dynamism.part3.hlo",
      "xla__hlo__translate__hlo_to_mhlo__tests__import_bounded_dynamism.part4.hlo",
      "xla__hlo__translate__hlo_to_mhlo__tests__import_bounded_dynamism.part5.hlo",
      "xla__hlo__translate__hlo_to_mhlo__tests__import_emit_stablehlo.part58.hlo",
      "xla__hlo__translate__hlo_to_mhlo__tests__import_emit_stablehlo.part88.hlo",
      "xla__hlo__translate__hlo_to_mhlo__tests__import_emit_stablehlo.part103.hlo",
      "xla__tools__multihost_hlo_runner__data__dynamic_shaped_arguments.hlo",
  };
  int padded = 0, refused = 0, unevaluable = 0;
  for (const auto& file : files) {
    const std::string text = pass_test::ReadFile(file);
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, file.string());
    if (!module.ok() || !VerifyModule(**module).ok()) {
      EXPECT_FALSE(expected.contains(file.filename().string())) << file;
      ++unevaluable;
      continue;
    }
    const std::string diff = CheckExpansion<DynamicPadder>(**module, Compare);
    if (diff.empty()) {
      ++padded;
    } else if (absl::StartsWith(diff, "pass: ") && absl::StrContains(diff, "dynamic-padder: ")) {
      ++refused;
      EXPECT_FALSE(expected.contains(file.filename().string())) << file << ": " << diff;
    } else if (absl::StartsWith(diff, "before: ") || absl::StartsWith(diff, "arguments: ")) {
      ++unevaluable;  // the interpreter cannot run it as written
      EXPECT_FALSE(expected.contains(file.filename().string())) << file << ": " << diff;
    } else {
      ADD_FAILURE() << file << ": " << diff;
    }
  }
  std::cout << "dynamic-padder corpus: " << files.size() << " modules, " << padded << " padded, "
            << refused << " refused, " << unevaluable << " not evaluable as written\n";
  EXPECT_GE(padded, static_cast<int>(expected.size()));
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
