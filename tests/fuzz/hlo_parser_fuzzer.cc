// libFuzzer target for the HLO text parser and printer.
//
// Parses the input bytes as HLO text. When parsing succeeds, the module is
// verified (any status is fine, a crash is not), then printed in long and short form (and long form
// without async syntax sugar), then the long form is parsed again: that must succeed, and printing
// the re-parsed module must give back the same text (print is a fixpoint of parse . print). Any
// violation aborts via __builtin_trap so libFuzzer keeps the input as a crash artifact.
//
// Build: CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DXLITE_FUZZ=ON ...
// Run:   bash tests/fuzz/smoke.sh build-fuzz/bin/hlo_parser_fuzzer 60
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "xlite/text/parser.h"
#include "xlite/text/printer.h"
#include "xlite/verify/verifier.h"

namespace {

// Larger inputs only slow the fuzzer down; the interesting bugs are local.
constexpr size_t kMaxInputBytes = 64 * 1024;

[[noreturn]] void Fail(const char* what, const std::string& detail, const std::string& printed) {
  std::fprintf(stderr, "\n=== hlo_parser_fuzzer: %s ===\n%s\n", what, detail.c_str());
  std::fprintf(stderr, "--- long form printed from the input ---\n%s\n", printed.c_str());
  std::fflush(stderr);
  __builtin_trap();
}

// Index of the first differing byte, for the failure message.
size_t FirstDiff(const std::string& a, const std::string& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return i;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > kMaxInputBytes) return -1;  // -1: do not add to the corpus.
  absl::string_view text(reinterpret_cast<const char*>(data), size);

  auto parsed = xlite::ParseHloModule(text, "<fuzz>");
  if (!parsed.ok()) return 0;  // Rejecting bad input is fine; crashing is not.
  const xlite::HloModule& module = **parsed;
  // The verifier must give a status on anything the parser accepts.
  absl::Status verified = xlite::VerifyModule(module);
  (void)verified;

  const std::string long_form = xlite::PrintModule(module, xlite::PrintOptions::Long());
  const std::string short_form = xlite::PrintModule(module, xlite::PrintOptions::Short());
  xlite::PrintOptions no_sugar = xlite::PrintOptions::Long();
  no_sugar.syntax_sugar_async_ops = false;
  const std::string long_no_sugar = xlite::PrintModule(module, no_sugar);
  (void)short_form;
  (void)long_no_sugar;

  // The printer's output must be parseable ...
  auto reparsed = xlite::ParseHloModule(long_form, "<fuzz-reprint>");
  if (!reparsed.ok()) {
    Fail("re-parsing the printed long form failed", std::string(reparsed.status().message()),
         long_form);
  }
  // ... and printing it again must be stable.
  const std::string long_again = xlite::PrintModule(**reparsed, xlite::PrintOptions::Long());
  if (long_again != long_form) {
    const size_t at = FirstDiff(long_form, long_again);
    std::string detail = "print(parse(print(m))) != print(m); first difference at byte " +
                         std::to_string(at) + "\n--- reprinted ---\n" + long_again;
    Fail("long form is not a fixpoint", detail, long_form);
  }
  return 0;
}
