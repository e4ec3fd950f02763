#include "xlite/eval/host_transfers.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace xlite {
namespace {

// Element types, dimensions and tuple structure; layouts and dynamic-ness
// ignored (a bounded dynamic dimension travels at its bound).
bool SameData(const Shape& a, const Shape& b) {
  if (a.IsTuple() != b.IsTuple()) return false;
  if (a.IsTuple()) {
    if (a.tuple_shapes_size() != b.tuple_shapes_size()) return false;
    for (int64_t i = 0; i < a.tuple_shapes_size(); ++i) {
      if (!SameData(a.tuple_shapes(i), b.tuple_shapes(i))) return false;
    }
    return true;
  }
  return a.element_type() == b.element_type() && a.dimensions() == b.dimensions();
}

std::string Seconds(HostTransfers::Duration d) {
  return absl::StrCat(std::chrono::duration<double>(d).count(), " s");
}

}  // namespace

HostTransfers::Duration HostTransfers::timeout() const {
  std::lock_guard<std::mutex> lock(mu_);
  return timeout_;
}

void HostTransfers::set_timeout(Duration timeout) {
  std::lock_guard<std::mutex> lock(mu_);
  timeout_ = timeout;
}

void HostTransfers::PushInfeed(int64_t device, Literal block) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    infeed_[device].push_back(std::move(block));
  }
  changed_.notify_all();
}

absl::StatusOr<Literal> HostTransfers::PopOutfeed(int64_t device, Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  std::deque<Literal>& queue = outfeed_[device];
  if (!changed_.wait_for(lock, timeout, [&] { return !queue.empty(); })) {
    return absl::DeadlineExceededError(
        absl::StrCat("no outfeed value from device ", device, " after ", Seconds(timeout)));
  }
  Literal value = std::move(queue.front());
  queue.pop_front();
  return value;
}

void HostTransfers::SetSendCallback(int64_t channel_id, HostSendCallback callback) {
  std::lock_guard<std::mutex> lock(mu_);
  send_[channel_id] = std::move(callback);
}

void HostTransfers::SetRecvCallback(int64_t channel_id, HostRecvCallback callback) {
  std::lock_guard<std::mutex> lock(mu_);
  recv_[channel_id] = std::move(callback);
}

int64_t HostTransfers::infeed_size(int64_t device) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = infeed_.find(device);
  return it == infeed_.end() ? 0 : static_cast<int64_t>(it->second.size());
}

int64_t HostTransfers::outfeed_size(int64_t device) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = outfeed_.find(device);
  return it == outfeed_.end() ? 0 : static_cast<int64_t>(it->second.size());
}

absl::StatusOr<Literal> HostTransfers::TakeInfeed(int64_t device, const Shape& shape,
                                                  absl::string_view instruction) {
  std::unique_lock<std::mutex> lock(mu_);
  std::deque<Literal>& queue = infeed_[device];
  if (!changed_.wait_for(lock, timeout_, [&] { return !queue.empty(); })) {
    return absl::DeadlineExceededError(absl::StrCat(instruction, ": no infeed block for device ",
                                                    device, " after ", Seconds(timeout_),
                                                    " (the infeed queue is empty)"));
  }
  if (!SameData(queue.front().shape(), shape)) {
    // The block stays queued: the host may inspect or replace it.
    return absl::InvalidArgumentError(absl::StrCat(
        instruction, ": the next infeed block of device ", device, " has shape ",
        queue.front().shape().ToString(false), " but the infeed reads ", shape.ToString(false)));
  }
  Literal block = std::move(queue.front());
  queue.pop_front();
  return block;
}

void HostTransfers::PutOutfeed(int64_t device, Literal value) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    outfeed_[device].push_back(std::move(value));
  }
  changed_.notify_all();
}

absl::Status HostTransfers::Send(const HostTransferMetadata& metadata, const Literal& value) {
  HostSendCallback callback;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = send_.find(metadata.channel_id);
    if (it == send_.end()) {
      return absl::FailedPreconditionError(absl::StrCat(
          metadata.instruction, ": no send callback for channel ", metadata.channel_id));
    }
    callback = it->second;
  }
  // Called unlocked: a callback may push infeed or pop outfeed.
  absl::Status status = callback(metadata, value);
  if (!status.ok()) {
    return absl::Status(status.code(),
                        absl::StrCat(metadata.instruction, ": send callback for channel ",
                                     metadata.channel_id, ": ", status.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> HostTransfers::Recv(const HostTransferMetadata& metadata) {
  HostRecvCallback callback;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = recv_.find(metadata.channel_id);
    if (it == recv_.end()) {
      return absl::FailedPreconditionError(absl::StrCat(
          metadata.instruction, ": no recv callback for channel ", metadata.channel_id));
    }
    callback = it->second;
  }
  absl::StatusOr<Literal> value = callback(metadata);
  if (!value.ok()) {
    return absl::Status(value.status().code(),
                        absl::StrCat(metadata.instruction, ": recv callback for channel ",
                                     metadata.channel_id, ": ", value.status().message()));
  }
  if (!SameData(value->shape(), metadata.shape)) {
    return absl::InvalidArgumentError(
        absl::StrCat(metadata.instruction, ": the recv callback for channel ", metadata.channel_id,
                     " gave shape ", value->shape().ToString(false), " but the recv reads ",
                     metadata.shape.ToString(false)));
  }
  return value;
}

}  // namespace xlite
