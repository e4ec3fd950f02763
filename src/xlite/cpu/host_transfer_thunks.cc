#include "xlite/cpu/host_transfer_thunks.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "xlite/cpu/physical_layout.h"
#include "xlite/support/status.h"

namespace xlite::cpu {
HostTransferThunk::HostTransferThunk(ThunkInfo info, Direction direction, Shape value,
                                     std::vector<TransferLeaf> leaves, int64_t channel_id)
    : Thunk(Kind::kHostTransfer, std::move(info)),
      direction_(direction),
      value_(std::move(value)),
      leaves_(std::move(leaves)),
      channel_id_(channel_id) {}

std::string HostTransferThunk::Name() const {
  return absl::StrCat(info().opcode, " '", info().instruction, "'");
}

Literal HostTransferThunk::Read(const BufferAllocations& buffers) const {
  Literal value(value_);
  for (const TransferLeaf& leaf : leaves_) {
    PhysicalToLiteral(buffers.Get(leaf.slice), leaf.shape, *value.MutableSubliteral(leaf.index));
  }
  return value;
}

void HostTransferThunk::Write(const Literal& value, const BufferAllocations& buffers) const {
  // The value's shape was checked against value_ (HostTransfers), so every
  // leaf is there.
  for (const TransferLeaf& leaf : leaves_) {
    LiteralToPhysical(*value.Subliteral(leaf.index), leaf.shape, buffers.Get(leaf.slice));
  }
}

absl::Status HostTransferThunk::Execute(const ExecuteParams& params) const {
  if (params.host == nullptr) {
    const char* what = direction_ == Direction::kInfeed    ? "infeed was given"
                       : direction_ == Direction::kOutfeed ? "outfeed queue was given"
                                                           : "send/recv callbacks were given";
    return absl::FailedPreconditionError(absl::StrCat(
        Name(), ": no ", what, " (the run has no host transfers: ExecuteOptions::host_transfers)"));
  }
  HostTransfers& transfers = params.host->transfers();
  const int64_t device = params.host->device();
  switch (direction_) {
    case Direction::kInfeed: {
      ASSIGN_OR_RETURN(Literal block, transfers.TakeInfeed(device, value_, Name()));
      Write(block, *params.buffers);
      return absl::OkStatus();
    }
    case Direction::kOutfeed:
      transfers.PutOutfeed(device, Read(*params.buffers));
      return absl::OkStatus();
    case Direction::kSend:
      return transfers.Send(HostTransferMetadata{device, channel_id_, value_, Name()},
                            Read(*params.buffers));
    case Direction::kRecv: {
      ASSIGN_OR_RETURN(Literal value,
                       transfers.Recv(HostTransferMetadata{device, channel_id_, value_, Name()}));
      Write(value, *params.buffers);
      return absl::OkStatus();
    }
  }
  return absl::InternalError("unknown host transfer direction");
}

std::vector<BufferUse> HostTransferThunk::buffer_uses() const {
  const bool writes = direction_ == Direction::kInfeed || direction_ == Direction::kRecv;
  std::vector<BufferUse> uses;
  for (const TransferLeaf& leaf : leaves_) {
    uses.push_back(writes ? BufferUse::Write(leaf.slice) : BufferUse::Read(leaf.slice));
  }
  return uses;
}

std::string HostTransferThunk::Details() const {
  std::string details = value_.ToString(false);
  if (direction_ == Direction::kSend || direction_ == Direction::kRecv) {
    absl::StrAppend(&details, " channel ", channel_id_);
  }
  return details;
}

}  // namespace xlite::cpu
