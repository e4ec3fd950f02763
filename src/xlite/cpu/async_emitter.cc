// ThunkEmitter::EmitAsync: async-start/update/done and copy-start/done.
#include "xlite/cpu/copy_thunk.h"
#include "xlite/cpu/thunk_emitter.h"
#include "xlite/support/status.h"

namespace xlite::cpu {

absl::Status ThunkEmitter::EmitAsync(const HloInstruction& instr, ThunkSequence& out) {
  switch (instr.opcode()) {
    case HloOpcode::kCopyStart: {
      // Synchronous for now: the copy happens at the start ({0}: the
      // destination; {1} aliases the source); the done only forwards {0}.
      // The u32 context is never read. Host memory has one memory space:
      // S(n) does not matter here.
      auto in_host_memory = [](Shape shape) {
        if (shape.has_layout()) shape.mutable_layout().memory_space = 0;
        return shape;
      };
      const Shape& source = instr.operand(0)->shape();
      if (!instr.shape().IsTuple() || instr.shape().tuple_shapes_size() < 2 ||
          in_host_memory(instr.shape().tuple_shapes(0)) != in_host_memory(source)) {
        return Unsupported(instr, "a copy-start that changes the layout");
      }
      RETURN_IF_ERROR(CopyLeaves(instr.operand(0), {}, &instr, {1}, source, instr, out));
      return CopyLeaves(instr.operand(0), {}, &instr, {0}, source, instr, out);
    }
    case HloOpcode::kCopyDone:
      return CopyLeaves(instr.operand(0), {0}, &instr, {}, instr.shape(), instr, out);
    default:
      return Unsupported(instr, "asynchronous work");
  }
}

}  // namespace xlite::cpu
