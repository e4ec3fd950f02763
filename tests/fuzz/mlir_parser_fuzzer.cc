// libFuzzer target for the StableHLO MLIR text reader and the lowering.
//
// Parses the input bytes as MLIR text; when that succeeds, lowers the program
// to HLO and verifies the result. Any status is fine; a crash, a sanitizer
// report or a hang is not.
//
// Build: CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DXLITE_FUZZ=ON ...
// Run:   FUZZ_CORPUS=../shared/corpus/stablehlo FUZZ_SEED_NAME='*.mlir' \
//        FUZZ_DICT=tests/fuzz/mlir.dict bash tests/fuzz/smoke.sh build-fuzz/bin/mlir_parser_fuzzer
//        60
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "xlite/stablehlo/lower.h"
#include "xlite/stablehlo/mlir_parser.h"
#include "xlite/verify/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return -1;  // -1: do not add to the corpus.
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto program = xlite::mlir::ParseMlir(text, "<fuzz>");
  if (!program.ok()) return 0;
  auto module = xlite::stablehlo::LowerToHlo(**program);
  if (!module.ok()) return 0;
  absl::Status verified = xlite::VerifyModule(**module);
  (void)verified;
  return 0;
}
