// ThunkEmitter::EmitCollective: collectives among several devices.
#include "xlite/cpu/thunk_emitter.h"

namespace xlite::cpu {

absl::Status ThunkEmitter::EmitCollective(const HloInstruction& instr, ThunkSequence& out) {
  return Unsupported(instr, "communication among devices");
}

}  // namespace xlite::cpu
