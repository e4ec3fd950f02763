// Test helpers for the analyses and schedulers: HLO text in, a verified
// module out; instructions by name.
#ifndef XLITE_ANALYSIS_ANALYSIS_TEST_UTIL_H_
#define XLITE_ANALYSIS_ANALYSIS_TEST_UTIL_H_

#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "xlite/text/parser.h"
#include "xlite/verify/verifier.h"

namespace xlite::analysis_test {

// Parses and verifies `text`; nullptr (and a test failure) if either fails.
inline std::unique_ptr<HloModule> Parse(absl::string_view text) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "test.hlo");
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return nullptr;
  absl::Status s = VerifyModule(**m);
  EXPECT_TRUE(s.ok()) << s;
  if (!s.ok()) return nullptr;
  return std::move(*m);
}

// The instruction called `name` in any computation; nullptr if none.
inline HloInstruction* Find(const HloModule& m, absl::string_view name) {
  for (const auto& c : m.computations()) {
    for (const auto& i : c->instructions()) {
      if (i->name() == name) return i.get();
    }
  }
  ADD_FAILURE() << "no instruction " << name;
  return nullptr;
}

inline HloComputation* FindComputation(const HloModule& m, absl::string_view name) {
  HloComputation* c = m.GetComputationWithName(name);
  if (c == nullptr) ADD_FAILURE() << "no computation " << name;
  return c;
}

}  // namespace xlite::analysis_test

#endif  // XLITE_ANALYSIS_ANALYSIS_TEST_UTIL_H_
