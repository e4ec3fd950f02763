#include "xlite/collectives/rendezvous.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace xlite::collectives {
namespace {

std::string Millis(Timeout timeout) {
  return absl::StrCat(std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count(),
                      " ms");
}

// "devices 2, 5" of `key` whose flag in `present` is false.
std::string Missing(const RendezvousKey& key, const std::vector<bool>& present) {
  std::vector<int64_t> missing;
  for (size_t i = 0; i < present.size(); ++i) {
    if (!present[i]) missing.push_back(key.devices[i]);
  }
  return absl::StrCat(missing.size() == 1 ? "device " : "devices ", absl::StrJoin(missing, ", "));
}

}  // namespace

std::string RendezvousKey::ToString() const {
  return absl::StrCat("op ", op_id, " of run ", run_id, " among devices [",
                      absl::StrJoin(devices, ", "), "]");
}

absl::Status Meeting::Depart(int64_t rank, Timeout timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  const int64_t n = static_cast<int64_t>(values_.size());
  if (rank < 0 || rank >= n || departed_[rank]) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", rank, " cannot depart from ", key_.ToString()));
  }
  departed_[rank] = true;
  ++departures_;
  cv_.notify_all();
  if (!cv_.wait_for(lock, timeout, [&] { return departures_ == n; })) {
    return absl::DeadlineExceededError(absl::StrCat("collective ", key_.ToString(), ": ",
                                                    Missing(key_, departed_),
                                                    " did not finish within ", Millis(timeout)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<Meeting>> Rendezvous::Arrive(const RendezvousKey& key, int64_t rank,
                                                            const void* value, Timeout timeout) {
  const int64_t n = static_cast<int64_t>(key.devices.size());
  if (rank < 0 || rank >= n) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", rank, " is outside the ", n, " participants of ", key.ToString()));
  }
  std::shared_ptr<Meeting> meeting;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = aborted_.find(key.run_id); it != aborted_.end()) return it->second;
    std::shared_ptr<Meeting>& slot = meetings_[key];
    if (!slot) {
      slot = std::make_shared<Meeting>();
      slot->key_ = key;
      slot->values_.assign(n, nullptr);
      slot->arrived_.assign(n, false);
      slot->departed_.assign(n, false);
    }
    meeting = slot;
  }
  std::unique_lock<std::mutex> lock(meeting->mu_);
  if (!meeting->failed_.ok()) return meeting->failed_;  // timed out just before we came
  if (meeting->arrived_[rank]) {
    return absl::InvalidArgumentError(
        absl::StrCat("device ", key.devices[rank], " arrived twice at ", key.ToString()));
  }
  meeting->arrived_[rank] = true;
  meeting->values_[rank] = value;
  if (++meeting->arrivals_ == n) {
    std::lock_guard<std::mutex> map_lock(mu_);
    auto it = meetings_.find(key);
    if (it != meetings_.end() && it->second == meeting) meetings_.erase(it);
    meeting->cv_.notify_all();
    return meeting;
  }
  const bool met = meeting->cv_.wait_for(
      lock, timeout, [&] { return meeting->arrivals_ == n || !meeting->failed_.ok(); });
  if (met && meeting->failed_.ok()) return meeting;
  if (meeting->failed_.ok()) {
    meeting->failed_ = absl::DeadlineExceededError(
        absl::StrCat("rendezvous for ", key.ToString(), " timed out after ", Millis(timeout), ": ",
                     Missing(key, meeting->arrived_), " did not arrive"));
    meeting->cv_.notify_all();
    std::lock_guard<std::mutex> map_lock(mu_);
    auto it = meetings_.find(key);
    if (it != meetings_.end() && it->second == meeting) meetings_.erase(it);
  }
  return meeting->failed_;
}

void Rendezvous::Abort(int64_t run_id, absl::Status error) {
  if (error.ok()) error = absl::AbortedError(absl::StrCat("run ", run_id, " was aborted"));
  std::vector<std::shared_ptr<Meeting>> waiting;
  {
    std::lock_guard<std::mutex> lock(mu_);
    aborted_.emplace(run_id, error);
    for (auto it = meetings_.begin(); it != meetings_.end();) {
      if (it->first.run_id != run_id) {
        ++it;
        continue;
      }
      waiting.push_back(it->second);
      it = meetings_.erase(it);
    }
  }
  for (const std::shared_ptr<Meeting>& m : waiting) {
    std::lock_guard<std::mutex> lock(m->mu_);
    // A meeting all reached just now goes ahead: its participants work and
    // depart together.
    if (m->failed_.ok() && m->arrivals_ < static_cast<int64_t>(m->values_.size())) {
      m->failed_ = error;
    }
    m->cv_.notify_all();
  }
}

void Rendezvous::Forget(int64_t run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  aborted_.erase(run_id);
}

int64_t Rendezvous::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(meetings_.size());
}

}  // namespace xlite::collectives
