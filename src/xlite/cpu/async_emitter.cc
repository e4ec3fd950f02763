// ThunkEmitter::EmitAsync: async-start/update/done (the op-start/op-done
// sugar parses to them) and copy-start/done, as start/done thunk pairs
// (async_thunks.h) whose work runs on a side stream.
//
// The buffer assignment gives the start's operand elements {0, i} the
// operands' buffers, the wrapped computation's parameters the operands'
// buffers (when one start calls it) and the start's output element {1} the
// wrapped root's buffer, which the done passes on; copies are emitted only
// where the slices differ, as for calls. All of them stay live from the
// start to the done (hlo_live_range extends them), so the work may use them
// while the main stream goes on.
#include "absl/strings/str_cat.h"
#include "xlite/cpu/async_thunks.h"
#include "xlite/cpu/copy_thunk.h"
#include "xlite/cpu/thunk_emitter.h"
#include "xlite/ir/computation.h"
#include "xlite/support/status.h"

namespace xlite::cpu {
namespace {

// The side stream's name: the op's async_execution_thread, else its wrapped
// computation's execution thread.
std::string StreamName(const HloInstruction& start) {
  if (!start.attrs().async_execution_thread.empty()) return start.attrs().async_execution_thread;
  if (start.opcode() == HloOpcode::kAsyncStart && !start.called_computations().empty() &&
      start.called_computations()[0] != nullptr) {
    return start.called_computations()[0]->execution_thread();
  }
  return std::string(HloOpcodeString(start.opcode()));
}

}  // namespace

absl::Status ThunkEmitter::EmitAsyncStart(const HloInstruction& start, ThunkSequence work,
                                          ThunkSequence& out) {
  std::unique_ptr<AsyncStartThunk> thunk =
      MakeAsyncStart(InfoOf(start), next_async_slot_++, StreamName(start), std::move(work));
  async_starts_[&start] = thunk.get();
  out.push_back(std::move(thunk));
  return absl::OkStatus();
}

absl::Status ThunkEmitter::EmitAsyncDone(const HloInstruction& done, ThunkSequence& out) {
  // Through async-updates to the start.
  const HloInstruction* start = done.operand_count() > 0 ? done.operand(0) : nullptr;
  while (start != nullptr && start->opcode() == HloOpcode::kAsyncUpdate &&
         start->operand_count() > 0) {
    start = start->operand(0);
  }
  // The verifier lets an async context flow only into async-update and
  // async-done, so this finds the start emitted before in the same sequence.
  auto it = start != nullptr ? async_starts_.find(start) : async_starts_.end();
  if (it == async_starts_.end()) {
    return Unsupported(done, "an asynchronous done whose start cannot be found before it");
  }
  out.push_back(MakeAsyncDone(InfoOf(done), *it->second));
  return absl::OkStatus();
}

absl::Status ThunkEmitter::EmitAsync(const HloInstruction& instr, ThunkSequence& out) {
  switch (instr.opcode()) {
    case HloOpcode::kAsyncStart: {
      // ((operands...), output, context...): the wrapped computation runs on
      // the operands and leaves its root in {1}.
      const HloComputation* wrapped =
          instr.called_computations().empty() ? nullptr : instr.called_computations()[0];
      const Shape& shape = instr.shape();
      if (wrapped == nullptr || wrapped->root_instruction() == nullptr || !shape.IsTuple() ||
          shape.tuple_shapes_size() < 2) {
        return absl::InvalidArgumentError(absl::StrCat(
            "async-start '", instr.name(),
            "' needs a wrapped computation and a ((operands...), output, context...) shape"));
      }
      if (wrapped->num_parameters() != instr.operand_count()) {
        return Unsupported(instr, "an async-start that binds operands late (by async-update)");
      }
      const Shape& operands = shape.tuple_shapes(0);
      const bool operand_tuple =
          operands.IsTuple() && operands.tuple_shapes_size() == instr.operand_count();
      for (int64_t i = 0; i < instr.operand_count() && operand_tuple; ++i) {
        RETURN_IF_ERROR(CopyLeaves(instr.operand(i), {}, &instr, {0, i}, instr.operand(i)->shape(),
                                   instr, out));
      }
      ThunkSequence work;
      for (int64_t i = 0; i < instr.operand_count(); ++i) {
        RETURN_IF_ERROR(CopyLeaves(instr.operand(i), {}, wrapped->parameter_instruction(i), {},
                                   instr.operand(i)->shape(), instr, work));
      }
      ASSIGN_OR_RETURN(ThunkSequence body, EmitComputation(*wrapped));
      work.Append(std::move(body));
      RETURN_IF_ERROR(CopyLeaves(wrapped->root_instruction(), {}, &instr, {1},
                                 shape.tuple_shapes(1), instr, work));
      return EmitAsyncStart(instr, std::move(work), out);
    }
    case HloOpcode::kAsyncUpdate: {
      // Waits for nothing; the context keeps its buffers (moving them while
      // the work writes them would race).
      ThunkSequence copies;
      RETURN_IF_ERROR(CopyLeaves(instr.operand(0), {}, &instr, {}, instr.shape(), instr, copies));
      if (!copies.empty()) {
        return Unsupported(instr,
                           "an async-update whose context the buffer assignment moves to other "
                           "buffers while its work runs");
      }
      return absl::OkStatus();
    }
    case HloOpcode::kAsyncDone:
      RETURN_IF_ERROR(EmitAsyncDone(instr, out));
      return CopyLeaves(instr.operand(0), {1}, &instr, {}, instr.shape(), instr, out);
    case HloOpcode::kCopyStart: {
      // (destination, source, u32 context): the copy into {0} runs on a side
      // stream; {1} aliases the source. Host memory has one memory space:
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
      ThunkSequence work;
      RETURN_IF_ERROR(CopyLeaves(instr.operand(0), {}, &instr, {0}, source, instr, work));
      return EmitAsyncStart(instr, std::move(work), out);
    }
    case HloOpcode::kCopyDone:
      RETURN_IF_ERROR(EmitAsyncDone(instr, out));
      return CopyLeaves(instr.operand(0), {0}, &instr, {}, instr.shape(), instr, out);
    default:
      return Unsupported(instr, "asynchronous work");
  }
}

}  // namespace xlite::cpu
