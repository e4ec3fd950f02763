// ThunkEmitter::EmitHostTransfer: infeed, outfeed, and send/recv with
// is_host_transfer=true (cpu/host_transfer_thunks.h). Device-to-device
// send/recv is Unimplemented, naming the instruction.
#include "absl/strings/str_cat.h"
#include "xlite/cpu/host_transfer_thunks.h"
#include "xlite/cpu/physical_layout.h"
#include "xlite/cpu/thunk_emitter.h"
#include "xlite/support/status.h"

namespace xlite::cpu {

absl::Status ThunkEmitter::EmitHostTransfer(const HloInstruction& instr, ThunkSequence& out) {
  const HloOpcode op = instr.opcode();
  if (op != HloOpcode::kInfeed && op != HloOpcode::kOutfeed && !instr.attrs().is_host_transfer) {
    return Unsupported(instr, "device-to-device send/recv (is_host_transfer=false)");
  }
  if (op == HloOpcode::kSendDone) {
    // Waits for an asynchronous send; a synchronous one already ran.
    if (instr.operand_count() == 1 && async_starts_.contains(instr.operand(0))) {
      return EmitAsyncDone(instr, out);
    }
    return absl::OkStatus();
  }
  if (op != HloOpcode::kOutfeed &&
      (!instr.shape().IsTuple() || instr.shape().tuple_shapes_size() < 2)) {
    return absl::InvalidArgumentError(absl::StrCat(HloOpcodeString(op), " '", instr.name(),
                                                   "' expects a (data, ..., token) tuple"));
  }
  if (op == HloOpcode::kRecvDone) {
    // Dataflow makes recv-done's data recv's own; a copy only where they differ.
    if (instr.operand_count() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("recv-done '", instr.name(), "' takes one operand"));
    }
    if (async_starts_.contains(instr.operand(0))) RETURN_IF_ERROR(EmitAsyncDone(instr, out));
    return CopyLeaves(instr.operand(0), {0}, &instr, {0}, instr.shape().tuple_shapes(0), instr,
                      out);
  }
  // The value's leaves: in the result (infeed, recv: index {0, ...}) or in
  // operand 0 (outfeed, send).
  const bool into_result = op == HloOpcode::kInfeed || op == HloOpcode::kRecv;
  if (!into_result && instr.operand_count() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(HloOpcodeString(op), " '", instr.name(), "' takes a value"));
  }
  const HloInstruction* holder = into_result ? &instr : instr.operand(0);
  const Shape& value = into_result ? instr.shape().tuple_shapes(0) : holder->shape();
  std::vector<TransferLeaf> leaves;
  absl::Status status;
  ForEachSubshape(value, [&](const Shape& s, const ShapeIndex& index) {
    if (!status.ok() || !s.IsArray()) return;
    status = CheckRunnableLayout(s, absl::StrCat(HloOpcodeString(op), " '", instr.name(), "'"));
    if (!status.ok()) return;
    ShapeIndex at = index;
    if (into_result) at.insert(at.begin(), 0);
    absl::StatusOr<BufferSlice> slice = Slice(holder, at);
    if (!slice.ok()) {
      status = slice.status();
      return;
    }
    leaves.push_back(TransferLeaf{index, s, *slice});
  });
  RETURN_IF_ERROR(status);
  const HostTransferThunk::Direction direction =
      op == HloOpcode::kInfeed    ? HostTransferThunk::Direction::kInfeed
      : op == HloOpcode::kOutfeed ? HostTransferThunk::Direction::kOutfeed
      : op == HloOpcode::kSend    ? HostTransferThunk::Direction::kSend
                                  : HostTransferThunk::Direction::kRecv;
  auto thunk =
      std::make_unique<HostTransferThunk>(InfoOf(instr), direction, WithoutLayouts(value),
                                          std::move(leaves), instr.attrs().channel_id.value_or(0));
  if (op != HloOpcode::kSend && op != HloOpcode::kRecv) {
    out.push_back(std::move(thunk));
    return absl::OkStatus();
  }
  // send/recv run on a side stream until their -done, as the async design
  // has them, when their data stays in the send's/recv's own value (the send
  // forwards its operand); otherwise at once.
  ThunkSequence work;
  work.push_back(std::move(thunk));
  ASSIGN_OR_RETURN(bool contained, WorkStaysInsideValue(instr, work));
  if (!contained) {
    out.Append(std::move(work));
    return absl::OkStatus();
  }
  return EmitAsyncStart(instr, std::move(work), out);
}

}  // namespace xlite::cpu
