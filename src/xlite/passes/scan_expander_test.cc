#include "xlite/passes/scan_expander.h"

#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "xlite/passes/dce.h"
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

// Expands `text` and compares the interpreter before and after (bitwise) on
// two seeds; also checks that no scan is left.
std::string Check(const std::string& text) {
  for (uint64_t seed : {1, 2}) {
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "t.hlo");
    if (!module.ok()) return absl::StrCat("parse: ", module.status().ToString());
    bool changed = false;
    std::string diff = CheckExpansion<ScanExpander>(**module, Compare, &changed, seed);
    if (!diff.empty()) return diff;
    if (!changed) return "nothing changed";
    const std::string printed = PrintModule(**module);
    if (printed.find(" scan(") != std::string::npos) return "a scan is left:\n" + printed;
  }
  return "";
}

// A cumulative sum: outputs the running sum, carries it.
constexpr char kCumsum[] = R"(HloModule m

add {
  x = f32[] parameter(0)
  acc = f32[] parameter(1)
  s = f32[] add(acc, x)
  ROOT t = (f32[], f32[]) tuple(s, s)
}

ENTRY e {
  input = f32[5] parameter(0)
  init = f32[] parameter(1)
  ROOT scan = (f32[5], f32[]) scan(input, init), dimensions={0}, num_carries=1, to_apply=add
}
)";

TEST(ScanExpander, CumulativeSum) { EXPECT_EQ(Check(kCumsum), ""); }

TEST(ScanExpander, ReverseCumulativeSum) {
  std::string text = kCumsum;
  text.replace(text.find("to_apply=add"), 12, "is_reverse=true, to_apply=add");
  EXPECT_EQ(Check(text), "");
}

// Several inputs, outputs and carries of different types and ranks, along
// a middle dimension; outputs of lower and higher rank than the slices.
TEST(ScanExpander, ManyInputsOutputsAndCarriesAlongAMiddleDimension) {
  for (const std::string reverse : {"false", "true"}) {
    const std::string text = absl::StrCat(R"(HloModule m

body {
  a = f32[2,4] parameter(0)
  b = s32[2,4] parameter(1)
  c0 = f32[2,4] parameter(2)
  c1 = s32[] parameter(3)
  bf = f32[2,4] convert(b)
  sum = f32[2,4] add(a, bf)
  next0 = f32[2,4] multiply(c0, sum)
  one = s32[] constant(1)
  next1 = s32[] add(c1, one)
  out_scalar = s32[] multiply(c1, c1)
  out_big = f32[2,4,3] broadcast(sum), dimensions={0,1}
  out_u8 = u8[2,4] convert(b)
  ROOT t = (f32[2,4], s32[], f32[2,4,3], u8[2,4], f32[2,4], s32[]) tuple(sum, out_scalar, out_big, out_u8, next0, next1)
}

ENTRY e {
  x = f32[2,6,4] parameter(0)
  y = s32[2,6,4] parameter(1)
  i0 = f32[2,4] parameter(2)
  i1 = s32[] parameter(3)
  ROOT scan = (f32[2,6,4], s32[6], f32[2,6,4,3], u8[2,6,4], f32[2,4], s32[]) scan(x, y, i0, i1), dimensions={1}, num_carries=2, is_reverse=)",
                                          reverse, R"(, to_apply=body
}
)");
    SCOPED_TRACE(text);
    EXPECT_EQ(Check(text), "");
  }
}

TEST(ScanExpander, NoCarries) {
  EXPECT_EQ(Check(R"(HloModule m

sq {
  x = bf16[3] parameter(0)
  ROOT t = (bf16[3]) tuple(bf16[3] multiply(x, x))
}

ENTRY e {
  input = bf16[4,3] parameter(0)
  ROOT scan = (bf16[4,3]) scan(input), dimensions={0}, num_carries=0, to_apply=sq
}
)"),
            "");
}

TEST(ScanExpander, UntupledResults) {
  // One output, returned untupled, from an untupled body.
  EXPECT_EQ(Check(R"(HloModule m

neg {
  x = s8[] parameter(0)
  ROOT n = s8[] negate(x)
}

ENTRY e {
  input = s8[7] parameter(0)
  ROOT scan = s8[7] scan(input), dimensions={0}, num_carries=0, to_apply=neg
}
)"),
            "");
  // Only a carry: the final one.
  EXPECT_EQ(Check(R"(HloModule m

mx {
  x = f64[2] parameter(0)
  acc = f64[2] parameter(1)
  ROOT m = f64[2] maximum(acc, x)
}

ENTRY e {
  input = f64[5,2] parameter(0)
  init = f64[2] parameter(1)
  ROOT scan = f64[2] scan(input, init), dimensions={0}, num_carries=1, to_apply=mx
}
)"),
            "");
}

TEST(ScanExpander, EmptyScanDimension) {
  EXPECT_EQ(Check(R"(HloModule m

add {
  x = s32[] parameter(0)
  acc = s32[] parameter(1)
  s = s32[] add(acc, x)
  ROOT t = (s32[], s32[]) tuple(s, s)
}

ENTRY e {
  input = s32[0] parameter(0)
  init = s32[] parameter(1)
  ROOT scan = (s32[0], s32[]) scan(input, init), dimensions={0}, num_carries=1, is_reverse=true, to_apply=add
}
)"),
            "");
}

// A body with nested computations (a reduce, a while) and a control edge;
// two scans share it.
TEST(ScanExpander, BodiesWithNestedComputationsAndSharedBodies) {
  EXPECT_EQ(Check(R"(HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

cond {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

loop {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  ni = s32[] add(i, one)
  nv = f32[] add(v, v)
  ROOT t = (s32[], f32[]) tuple(ni, nv)
}

body {
  x = f32[3] parameter(0)
  acc = f32[] parameter(1)
  zero = f32[] constant(0)
  r = f32[] reduce(x, zero), dimensions={0}, to_apply=add
  z = s32[] constant(0)
  init = (s32[], f32[]) tuple(z, r)
  w = (s32[], f32[]) while(init), condition=cond, body=loop
  doubled = f32[] get-tuple-element(w), index=1
  s = f32[] add(acc, doubled), control-predecessors={r}
  ROOT t = (f32[], f32[]) tuple(s, s)
}

ENTRY e {
  input = f32[4,3] parameter(0)
  init = f32[] parameter(1)
  first = (f32[4], f32[]) scan(input, init), dimensions={0}, num_carries=1, to_apply=body
  second = (f32[4], f32[]) scan(input, init), dimensions={0}, num_carries=1, is_reverse=true, to_apply=body
  ROOT t = ((f32[4], f32[]), (f32[4], f32[])) tuple(first, second)
}
)"),
            "");
}

TEST(ScanExpander, BuildsXlasLoop) {
  bool changed = false;
  const std::string out = pass_test::RunPass<ScanExpander>(kCumsum, &changed);
  EXPECT_TRUE(changed);
  EXPECT_EQ(out.find(" scan("), std::string::npos) << out;
  EXPECT_NE(out.find("%scan_condition"), std::string::npos) << out;
  EXPECT_NE(out.find("%scan_body"), std::string::npos) << out;
  EXPECT_NE(out.find("direction=LT"), std::string::npos) << out;
  EXPECT_NE(out.find("dynamic-slice("), std::string::npos) << out;
  EXPECT_NE(out.find("dynamic-update-slice("), std::string::npos) << out;
  EXPECT_NE(out.find("(s64[], f32[], f32[5]{0}, f32[5]{0}) while("), std::string::npos) << out;
}

TEST(ScanExpander, RejectsAnInvalidScanWithoutChangingIt) {
  // The verifier would reject these; the pass names the problem instead of
  // crashing.
  for (const std::string attrs : {"dimensions={1}, num_carries=1", "dimensions={-1}, num_carries=1",
                                  "dimensions={0}, num_carries=3"}) {
    const std::string text = absl::StrCat(R"(HloModule m

add {
  x = f32[] parameter(0)
  acc = f32[] parameter(1)
  s = f32[] add(acc, x)
  ROOT t = (f32[], f32[]) tuple(s, s)
}

ENTRY e {
  input = f32[5] parameter(0)
  init = f32[] parameter(1)
  ROOT scan = (f32[5], f32[]) scan(input, init), )",
                                          attrs, R"(, to_apply=add
}
)");
    SCOPED_TRACE(text);
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "t.hlo");
    ASSERT_TRUE(module.ok()) << module.status();
    const std::string before = PrintModule(**module);
    ScanExpander pass;
    absl::StatusOr<bool> ran = pass.Run(**module);
    EXPECT_FALSE(ran.ok());
    EXPECT_NE(ran.status().ToString().find("scan"), std::string::npos) << ran.status();
    EXPECT_EQ(PrintModule(**module), before);
  }
}

TEST(ScanExpander, LeavesModulesWithoutScans) {
  bool changed = true;
  pass_test::RunPass<ScanExpander>(
      "HloModule m\n\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT n = f32[2] negate(a)\n}\n",
      &changed);
  EXPECT_FALSE(changed);
}

TEST(ScanExpander, KeepsTheSchedule) {
  const std::string text = R"(HloModule m, is_scheduled=true

add {
  x = f32[] parameter(0)
  acc = f32[] parameter(1)
  s = f32[] add(acc, x)
  ROOT t = (f32[], f32[]) tuple(s, s)
}

ENTRY e {
  input = f32[5]{0} parameter(0)
  init = f32[] parameter(1)
  neg = f32[5]{0} negate(input)
  scan = (f32[5]{0}, f32[]) scan(neg, init), dimensions={0}, num_carries=1, is_reverse=true, to_apply=add
  out = f32[5]{0} get-tuple-element(scan), index=0
  ROOT r = f32[5]{0} add(out, neg)
}
)";
  EXPECT_EQ(pass_test::CheckScheduleKept<ScanExpander>(text), "");
}

// `text` with `computation` as its entry and what it does not call removed
// (for corpus modules whose other computations the verifier rejects).
absl::StatusOr<std::unique_ptr<HloModule>> RootedAt(const std::string& text,
                                                    const std::string& computation) {
  ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, ParseHloModule(text, "t.hlo"));
  HloComputation* entry = module->GetComputationWithName(computation);
  if (entry == nullptr) return absl::NotFoundError(computation);
  module->set_entry_computation(entry);
  module->config().entry_computation_layout.reset();
  HloDce dce;
  RETURN_IF_ERROR(dce.Run(*module).status());
  RETURN_IF_ERROR(VerifyModule(*module));
  return module;
}

TEST(ScanExpander, CorpusModulesWithScanAreBitwiseTheInterpreters) {
  const auto files = pass_test::CorpusFilesWith(" scan(");
  if (files.empty()) GTEST_SKIP() << "no XLA corpus (set XLITE_CORPUS); SKIPPED";
  int scans = 0;
  for (const auto& file : files) {
    const std::string text = pass_test::ReadFile(file);
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, file.string());
    ASSERT_TRUE(module.ok()) << module.status();
    std::vector<std::string> parents;
    for (const auto& c : (*module)->computations()) {
      for (const auto& i : c->instructions()) {
        if (i->opcode() == HloOpcode::kScan) parents.push_back(c->name());
      }
    }
    scans += parents.size();
    // A module the verifier rejects as written (XLA's importer tests hold
    // some) is checked from each scan's computation.
    if (VerifyModule(**module).ok()) parents = {(*module)->entry_computation()->name()};
    for (const std::string& parent : parents) {
      absl::StatusOr<std::unique_ptr<HloModule>> rooted = RootedAt(text, parent);
      ASSERT_TRUE(rooted.ok()) << file << ": " << rooted.status();
      bool changed = false;
      EXPECT_EQ(CheckExpansion<ScanExpander>(**rooted, Compare, &changed), "")
          << file << " from " << parent;
      EXPECT_TRUE(changed) << file << " from " << parent;
    }
  }
  std::cout << "scan-expander on the XLA corpus: " << files.size() << " modules, " << scans
            << " scans, all bitwise equal\n";
  EXPECT_EQ(scans, static_cast<int>(files.size()));
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
