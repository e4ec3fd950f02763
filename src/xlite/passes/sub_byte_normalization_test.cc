#include "xlite/passes/sub_byte_normalization.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "xlite/passes/expander_test_util.h"
#include "xlite/passes/pass_test_util.h"
#include "xlite/verify/verifier.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

using pass_test::CheckExpansion;
using pass_test::CompareBitwise;

std::string Compare(const Literal& a, const Literal& b) { return CompareBitwise(a, b); }

// Runs the pass on `text`; the printed module, or the error.
std::string RunPass(const std::string& text, SubByteNormalization::Mode mode, bool* changed) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "t.hlo");
  if (!module.ok()) return absl::StrCat("parse: ", module.status().ToString());
  SubByteNormalization pass(mode);
  absl::StatusOr<bool> ran = pass.Run(**module);
  if (!ran.ok()) return ran.status().ToString();
  *changed = *ran;
  if (absl::Status s = VerifyModule(**module); !s.ok()) return s.ToString();
  return PrintModule(**module);
}

constexpr char kPacked[] =
    R"(HloModule m, entry_computation_layout={(s4[4,2]{1,0:E(4)}, u2[3]{0:E(2)})->(s4[4,2]{1,0:E(4)}, s8[3]{0})}

fused {
  p = s4[4,2]{1,0:E(4)} parameter(0)
  c = s4[4,2]{1,0:E(4)} constant({ {1, -2}, {3, -4}, {5, -6}, {7, -8} })
  ROOT a = s4[4,2]{1,0:E(4)} add(p, c)
}

ENTRY e {
  a = s4[4,2]{1,0:E(4)} parameter(0)
  b = u2[3]{0:E(2)} parameter(1)
  f = s4[4,2]{1,0:E(4)} fusion(a), kind=kLoop, calls=fused
  t = s4[2,4]{0,1:E(4)} bitcast(f)
  r = s4[4,2]{1,0:E(4)} transpose(t), dimensions={1,0}
  cv = s8[3]{0} convert(b)
  ROOT out = (s4[4,2]{1,0:E(4)}, s8[3]{0}) tuple(r, cv)
}
)";

TEST(SubByteNormalization, RemovesEveryElementSize) {
  bool changed = false;
  const std::string out =
      RunPass(kPacked, SubByteNormalization::Mode::kRemoveElementSize, &changed);
  EXPECT_TRUE(changed);
  EXPECT_EQ(out.find("E("), std::string::npos) << out;
  EXPECT_NE(out.find("entry_computation_layout={(s4[4,2]{1,0}, u2[3]{0})->(s4[4,2]{1,0}, "
                     "s8[3]{0})}"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("s4[4,2]{1,0} constant({ { 1, -2 }"), std::string::npos) << out;
  // A second run has nothing left to do.
  bool again = true;
  RunPass(out, SubByteNormalization::Mode::kRemoveElementSize, &again);
  EXPECT_FALSE(again);
}

TEST(SubByteNormalization, ValuesAreBitwiseTheSame) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(kPacked, "t.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  bool changed = false;
  EXPECT_EQ(CheckExpansion<SubByteNormalization>(**module, Compare, &changed), "");
  EXPECT_TRUE(changed);
}

TEST(SubByteNormalization, ConstraintsLiteralsAndOutfeedShapesToo) {
  const std::string text = R"(HloModule m

ENTRY e {
  a = s4[4]{0:E(4)} parameter(0)
  cc = s4[4]{0:E(4)} custom-call(a), custom_call_target="foo", operand_layout_constraints={s4[4]{0:E(4)}}
  tok = token[] after-all()
  ROOT o = token[] outfeed(cc, tok), outfeed_shape=s4[4]{0:E(4)}
}
)";
  bool changed = false;
  const std::string out = RunPass(text, SubByteNormalization::Mode::kRemoveElementSize, &changed);
  EXPECT_TRUE(changed);
  EXPECT_EQ(out.find("E("), std::string::npos) << out;
  EXPECT_NE(out.find("operand_layout_constraints={s4[4]{0}}"), std::string::npos) << out;
  EXPECT_NE(out.find("outfeed_shape=s4[4]{0}"), std::string::npos) << out;
}

TEST(SubByteNormalization, RefusesBitcastsThatReinterpretPackedStorage) {
  for (const std::string bitcast :
       {"s8[8]{0} bitcast(a)", "s4[16]{0:E(4)} bitcast(a)", "u8[4,2]{1,0} bitcast(a)"}) {
    const std::string text = absl::StrCat(
        "HloModule m\n\nENTRY e {\n  a = s4[8,2]{1,0:E(4)} parameter(0)\n  ROOT b = ", bitcast,
        "\n}\n");
    SCOPED_TRACE(text);
    bool changed = false;
    const std::string out = RunPass(text, SubByteNormalization::Mode::kRemoveElementSize, &changed);
    if (bitcast.find("s4[16]") != std::string::npos) {
      // Same width and count: a plain relayout, still valid unpacked.
      EXPECT_TRUE(changed);
      EXPECT_EQ(out.find("E("), std::string::npos) << out;
    } else {
      EXPECT_NE(out.find("UNIMPLEMENTED"), std::string::npos) << out;
      EXPECT_NE(out.find("bitcast 'b'"), std::string::npos) << out;
    }
  }
}

TEST(SubByteNormalization, LeavesModulesWithoutElementSizes) {
  bool changed = true;
  const std::string text =
      "HloModule m\n\nENTRY e {\n  a = s4[8]{0} parameter(0)\n  ROOT n = s4[8]{0} negate(a)\n}\n";
  RunPass(text, SubByteNormalization::Mode::kRemoveElementSize, &changed);
  EXPECT_FALSE(changed);
}

TEST(SubByteNormalization, SetterPacksNarrowTypesOnly) {
  const std::string text = R"(HloModule m

ENTRY e {
  a = s4[8]{0} parameter(0)
  b = f32[8]{0:E(32)} parameter(1)
  c = f4e2m1fn[8]{0} convert(b)
  d = u2[8]{0} convert(a)
  p = pred[8]{0} compare(a, a), direction=EQ
  ROOT t = (f4e2m1fn[8]{0}, u2[8]{0}, pred[8]{0}) tuple(c, d, p)
}
)";
  bool changed = false;
  const std::string out = RunPass(text, SubByteNormalization::Mode::kSetElementSize, &changed);
  EXPECT_TRUE(changed);
  EXPECT_NE(out.find("%a = s4[8]{0:E(4)} parameter(0)"), std::string::npos) << out;
  EXPECT_NE(out.find("%b = f32[8]{0} parameter(1)"), std::string::npos) << out;
  EXPECT_NE(out.find("%c = f4e2m1fn[8]{0:E(4)} convert("), std::string::npos) << out;
  EXPECT_NE(out.find("%d = u2[8]{0:E(2)} convert("), std::string::npos) << out;
  EXPECT_NE(out.find("%p = pred[8]{0} compare("), std::string::npos) << out;
}

TEST(SubByteNormalization, KeepsTheSchedule) {
  const std::string text = R"(HloModule m, is_scheduled=true

ENTRY e {
  a = s4[4,2]{1,0:E(4)} parameter(0)
  n = s4[4,2]{1,0:E(4)} negate(a)
  ROOT r = s4[4,2]{1,0:E(4)} add(n, a)
}
)";
  EXPECT_EQ(pass_test::CheckScheduleKept<SubByteNormalization>(text), "");
}

// Every corpus module with E(n) in its code (XLA's hlo_file and
// hlo_file_headerless): the pass removes every E(n), the verifier accepts
// the result, and the interpreter gives bitwise the same results before and
// after on every module it runs.
TEST(SubByteNormalization, CorpusModulesWithElementSizesKeepTheirValues) {
  namespace fs = std::filesystem;
  const char* env = std::getenv("XLITE_CORPUS");
  const fs::path root = (env ? fs::path(env) : fs::path("../shared/corpus")) / "xla";
  std::vector<fs::path> files;
  for (const char* dir : {"hlo_file", "hlo_file_headerless"}) {
    if (!fs::exists(root / dir)) continue;
    for (const auto& entry : fs::directory_iterator(root / dir)) {
      if (entry.path().extension() != ".hlo") continue;
      const std::string text = pass_test::ReadFile(entry.path());
      // E(n) outside comments (CHECK lines mention it too).
      std::istringstream lines(text);
      bool in_code = false;
      for (std::string line; std::getline(lines, line);) {
        const size_t start = line.find_first_not_of(" \t");
        if (start != std::string::npos && line.compare(start, 2, "//") != 0 &&
            line.find(":E(") != std::string::npos) {
          in_code = true;
        }
      }
      if (in_code) files.push_back(entry.path());
    }
  }
  if (files.empty()) GTEST_SKIP() << "no XLA corpus (set XLITE_CORPUS); SKIPPED";
  std::sort(files.begin(), files.end());
  int equal = 0, not_run = 0, too_large = 0;
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    absl::StatusOr<std::unique_ptr<HloModule>> module =
        ParseHloModule(pass_test::ReadFile(file), file.string());
    ASSERT_TRUE(module.ok()) << module.status();
    ASSERT_TRUE(VerifyModule(**module).ok());
    int64_t elements = 0;
    for (const HloInstruction* p : (*module)->entry_computation()->parameter_instructions()) {
      if (p->shape().IsArray()) elements += p->shape().ElementCount();
    }
    if (elements > (int64_t{1} << 24)) {
      // Too large for the interpreter in a unit test: the pass alone.
      ++too_large;
      SubByteNormalization pass;
      absl::StatusOr<bool> ran = pass.Run(**module);
      ASSERT_TRUE(ran.ok()) << ran.status();
      EXPECT_TRUE(*ran);
      EXPECT_TRUE(VerifyModule(**module).ok());
      EXPECT_EQ(PrintModule(**module).find(":E("), std::string::npos);
      continue;
    }
    absl::StatusOr<std::vector<Literal>> args =
        MakeFakeArguments(**module, FakeDataKind::kRandom, 1);
    ASSERT_TRUE(args.ok()) << args.status();
    if (!Evaluate(**module, *args).ok()) {
      // The interpreter does not run it (e.g. an all-gather across replicas):
      // check the pass alone.
      ++not_run;
      SubByteNormalization pass;
      absl::StatusOr<bool> ran = pass.Run(**module);
      ASSERT_TRUE(ran.ok()) << ran.status();
      EXPECT_TRUE(*ran);
      EXPECT_TRUE(VerifyModule(**module).ok());
      EXPECT_EQ(PrintModule(**module).find(":E("), std::string::npos);
      continue;
    }
    bool changed = false;
    EXPECT_EQ(pass_test::CheckExpansionOn<SubByteNormalization>(**module, *args, Compare, &changed),
              "");
    EXPECT_TRUE(changed);
    EXPECT_EQ(PrintModule(**module).find(":E("), std::string::npos);
    ++equal;
  }
  std::cout << "sub-byte-size-removal on the XLA corpus: " << files.size() << " modules with E(n); "
            << equal << " interpreter-equal (bitwise), " << not_run
            << " the interpreter does not run, " << too_large
            << " too large to interpret here (pass and verifier only)\n";
  EXPECT_GT(equal, 0);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
