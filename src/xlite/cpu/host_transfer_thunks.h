// Host transfers on the CPU backend: infeed, outfeed, and send/recv with
// is_host_transfer=true, through the run's HostTransfers
// (eval/host_transfers.h: per-device FIFO queues, callbacks per channel id,
// an infeed timeout), the same object and rules the interpreter uses.
//
// Each runs synchronously where its instruction runs: infeed pops a block and
// writes its leaves into the result's data slices; recv calls the channel's
// recv callback and writes the value into recv's data slices (recv-done
// shares them); outfeed and send read their operand's slices into a literal
// and push it or hand it to the send callback (send-done does nothing).
#ifndef XLITE_CPU_HOST_TRANSFER_THUNKS_H_
#define XLITE_CPU_HOST_TRANSFER_THUNKS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xlite/analysis/shape_util.h"
#include "xlite/cpu/thunk.h"
#include "xlite/eval/host_transfers.h"

namespace xlite::cpu {

// What ExecuteParams::host points to for one device's run: the run's
// transfers and the device id its queues are keyed by (XLA's default
// placement, partition * replicas + replica).
class HostTransferParams {
 public:
  HostTransferParams(HostTransfers& transfers, int64_t device)
      : transfers_(&transfers), device_(device) {}
  HostTransfers& transfers() const { return *transfers_; }
  int64_t device() const { return device_; }

 private:
  HostTransfers* transfers_;
  int64_t device_;
};

// One array leaf of a transferred value: its index in the value, its
// physical shape (with layout) and its slice.
struct TransferLeaf {
  ShapeIndex index;
  Shape shape;
  BufferSlice slice;
};

class HostTransferThunk final : public Thunk {
 public:
  enum class Direction {
    kInfeed,   // host -> device queue
    kOutfeed,  // device -> host queue
    kSend,     // device -> the channel's send callback
    kRecv,     // the channel's recv callback -> device
  };
  // `value` is the transferred value's shape (no layout); `leaves` are its
  // array leaves in ForEachSubshape order.
  HostTransferThunk(ThunkInfo info, Direction direction, Shape value,
                    std::vector<TransferLeaf> leaves, int64_t channel_id);

  absl::Status Execute(const ExecuteParams& params) const override;
  std::vector<BufferUse> buffer_uses() const override;
  std::string Details() const override;

 private:
  std::string Name() const;
  Literal Read(const BufferAllocations& buffers) const;
  void Write(const Literal& value, const BufferAllocations& buffers) const;

  Direction direction_;
  Shape value_;
  std::vector<TransferLeaf> leaves_;
  int64_t channel_id_;
};

}  // namespace xlite::cpu

#endif  // XLITE_CPU_HOST_TRANSFER_THUNKS_H_
