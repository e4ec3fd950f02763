// ThunkEmitter::EmitHostTransfer: infeed, outfeed, send/recv.
#include "xlite/cpu/thunk_emitter.h"

namespace xlite::cpu {

absl::Status ThunkEmitter::EmitHostTransfer(const HloInstruction& instr, ThunkSequence& out) {
  return Unsupported(instr, "host and device transfers");
}

}  // namespace xlite::cpu
