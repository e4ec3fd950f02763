// libFuzzer target for the VHLO bytecode reader (src/xlite/vhlo).
//
// Reads the input bytes as MLIR bytecode, then upgrades what reads to
// StableHLO and lowers it to HLO (and verifies). Any status is fine; a crash,
// a sanitizer report, a hang or an absurd allocation is not.
//
// Build: CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DXLITE_FUZZ=ON ...
// Run:   mkdir /tmp/vhlo-seeds && cp ../shared/corpus/vhlo/*.bc /tmp/vhlo-seeds &&
//        build-fuzz/bin/vhlo_bytecode_fuzzer -max_total_time=300 /tmp/vhlo-seeds
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "xlite/stablehlo/lower.h"
#include "xlite/verify/verifier.h"
#include "xlite/vhlo/upgrade.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 256 * 1024) return -1;  // -1: do not add to the corpus.
  absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  // vhlo::ImportPortableArtifact's steps, without registering the check
  // dialect with the interpreter (not linked here).
  auto program = xlite::vhlo::DeserializePortableArtifact(bytes, "<fuzz>");
  if (!program.ok()) return 0;
  auto module = xlite::stablehlo::LowerToHlo(**program);
  if (module.ok()) (void)xlite::VerifyModule(**module);
  return 0;
}
