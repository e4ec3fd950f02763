// HostTransfers: what a run's infeed, outfeed and host send/recv talk to.
// One object serves the reference interpreter (EvalOptions::host_transfers)
// and the CPU runtime (runtime::ExecuteOptions::host_transfers), so both
// follow the rules below by construction.
//
// - Infeed and outfeed are FIFO queues per device (the global device id of
//   XLA's default placement, partition * replicas + replica; 0 on one
//   device). Each infeed pops one block: a literal of the infeed's data
//   shape (a tuple for a tuple-shaped infeed). A block of another shape is
//   InvalidArgument naming the instruction and both shapes; an empty queue
//   waits up to timeout() and is then DeadlineExceeded naming the
//   instruction, never a hang. Each outfeed pushes its operand, with the
//   instruction's outfeed_shape, on the device's outfeed queue.
// - Send and recv with is_host_transfer=true call the callback registered for
//   their channel id, as PjRt's ExecuteOptions::send_callbacks and
//   recv_callbacks: once per execution of the send (it receives the value
//   and its shape) or the recv (it produces the value, which must have the
//   recv's shape). No callback for the channel is FailedPrecondition naming
//   the channel and the instruction. A callback's error fails the run.
//
// Thread-safe: several devices of one run, and the host, may use it at once.
#ifndef XLITE_EVAL_HOST_TRANSFERS_H_
#define XLITE_EVAL_HOST_TRANSFERS_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "xlite/ir/literal.h"
#include "xlite/ir/shape.h"

namespace xlite {

// What a send or recv callback is told (PjRt's PjRtTransferMetadata, plus
// where the transfer comes from).
struct HostTransferMetadata {
  int64_t device = 0;
  int64_t channel_id = 0;
  Shape shape;              // the value's shape, without layout
  std::string instruction;  // "send 'send.3'"
};

using HostSendCallback =
    std::function<absl::Status(const HostTransferMetadata& metadata, const Literal& value)>;
using HostRecvCallback =
    std::function<absl::StatusOr<Literal>(const HostTransferMetadata& metadata)>;

class HostTransfers {
 public:
  using Duration = std::chrono::milliseconds;
  static constexpr Duration kDefaultTimeout = std::chrono::seconds(30);

  explicit HostTransfers(Duration timeout = kDefaultTimeout) : timeout_(timeout) {}
  HostTransfers(const HostTransfers&) = delete;
  HostTransfers& operator=(const HostTransfers&) = delete;

  // How long an infeed waits for a block.
  Duration timeout() const;
  void set_timeout(Duration timeout);

  // The host's side.
  void PushInfeed(int64_t device, Literal block);
  // The oldest outfeed value of `device`; DeadlineExceeded after `timeout`.
  absl::StatusOr<Literal> PopOutfeed(int64_t device, Duration timeout = Duration(0));
  void SetSendCallback(int64_t channel_id, HostSendCallback callback);
  void SetRecvCallback(int64_t channel_id, HostRecvCallback callback);
  int64_t infeed_size(int64_t device) const;
  int64_t outfeed_size(int64_t device) const;

  // The device's side. `instruction` names the instruction for errors
  // ("infeed 'in.1'").
  absl::StatusOr<Literal> TakeInfeed(int64_t device, const Shape& shape,
                                     absl::string_view instruction);
  void PutOutfeed(int64_t device, Literal value);
  absl::Status Send(const HostTransferMetadata& metadata, const Literal& value);
  absl::StatusOr<Literal> Recv(const HostTransferMetadata& metadata);

 private:
  Duration timeout_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::map<int64_t, std::deque<Literal>> infeed_;
  std::map<int64_t, std::deque<Literal>> outfeed_;
  std::map<int64_t, HostSendCallback> send_;
  std::map<int64_t, HostRecvCallback> recv_;
};

}  // namespace xlite

#endif  // XLITE_EVAL_HOST_TRANSFERS_H_
