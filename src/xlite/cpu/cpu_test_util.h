// Test helpers for the CPU backend: compile HLO text, run it on seeded
// random arguments, and compare with the interpreter.
#ifndef XLITE_CPU_CPU_TEST_UTIL_H_
#define XLITE_CPU_CPU_TEST_UTIL_H_

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "xlite/compiler.h"
#include "xlite/eval/evaluator.h"
#include "xlite/eval/fake_data.h"
#include "xlite/runtime/compare_literals.h"
#include "xlite/text/parser.h"

namespace xlite::cpu::testing {

// Three f32[4] -> f32[4] branch computations (b0 negate, b1 abs, b2
// exponential) for conditional tests.
inline constexpr char kThreeBranches[] = R"(
b0 {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
b1 {
  p = f32[4] parameter(0)
  ROOT a = f32[4] abs(p)
}
b2 {
  p = f32[4] parameter(0)
  ROOT e = f32[4] exponential(p)
}
)";

// How many times `what` occurs in `text` (overlapping ones too).
inline int64_t Occurrences(const std::string& text, const std::string& what) {
  int64_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

inline std::unique_ptr<HloModule> ParseOrDie(const std::string& text) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "test");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

inline absl::StatusOr<std::unique_ptr<runtime::Executable>> CompileText(const std::string& text,
                                                                        bool poison = true) {
  std::unique_ptr<HloModule> m = ParseOrDie(text);
  if (m == nullptr) return absl::InvalidArgumentError("does not parse");
  CompileOptions options;
  options.debug.poison_dead_slices = poison;
  return Compile(std::move(m), options);
}

// Compiles `text`, runs it on seeded random arguments (and `runner`'s
// threads), and expects the interpreter's result within tolerance. Returns
// the executable's thunks as text, for the caller's checks.
inline std::string ExpectAgreesWithInterpreter(const std::string& text,
                                               cpu::TaskRunner* runner = nullptr,
                                               uint64_t seed = 1) {
  std::unique_ptr<HloModule> reference = ParseOrDie(text);
  if (reference == nullptr) return "";
  absl::StatusOr<std::vector<Literal>> args =
      MakeFakeArguments(*reference, FakeDataKind::kRandom, seed);
  EXPECT_TRUE(args.ok()) << args.status();
  if (!args.ok()) return "";
  absl::StatusOr<Literal> expected = Evaluate(*reference, *args);
  EXPECT_TRUE(expected.ok()) << expected.status();
  absl::StatusOr<std::unique_ptr<runtime::Executable>> e = CompileText(text);
  EXPECT_TRUE(e.ok()) << e.status();
  if (!e.ok() || !expected.ok()) return "";
  runtime::ExecuteOptions options;
  options.runner = runner;
  absl::StatusOr<Literal> got = (*e)->ExecuteLiterals(*args, options);
  EXPECT_TRUE(got.ok()) << got.status();
  if (!got.ok()) return "";
  runtime::Comparison c = runtime::CompareLiterals(*got, *expected);
  EXPECT_TRUE(c.matches) << c.ToString(true) << "\n" << (*e)->thunks().ToString();
  return (*e)->thunks().ToString();
}

}  // namespace xlite::cpu::testing

#endif  // XLITE_CPU_CPU_TEST_UTIL_H_
