// A meeting point for the participants of one collective: every participant
// arrives with a value (a pointer to what it contributes) and leaves with all
// of them in rank order once all have arrived. Keyed by (run, op, devices) as
// XLA's RendezvousKey is; a participant that waits past its timeout gets
// DeadlineExceeded naming the devices that did not arrive, never a hang.
#ifndef XLITE_COLLECTIVES_RENDEZVOUS_H_
#define XLITE_COLLECTIVES_RENDEZVOUS_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace xlite::collectives {

struct RendezvousKey {
  int64_t run_id = 0;            // one execution of the program
  int64_t op_id = 0;             // the collective (instruction) within it
  std::vector<int64_t> devices;  // the participants' global device ids, by rank
  std::string ToString() const;
  bool operator<(const RendezvousKey& o) const {
    return std::tie(run_id, op_id, devices) < std::tie(o.run_id, o.op_id, o.devices);
  }
};

using Timeout = std::chrono::steady_clock::duration;

// One completed meeting: the values by rank, and a second barrier (Depart)
// that returns once every participant is done with the others' values, so
// that what they point to stays alive until then.
class Meeting {
 public:
  const std::vector<const void*>& values() const { return values_; }
  // Participant `rank` is done; waits until every participant is, or the
  // timeout (DeadlineExceeded naming the devices still working). After that
  // error a late participant may still read this one's buffers: callers keep
  // them alive or treat the run as failed, as after any collective error.
  absl::Status Depart(int64_t rank, Timeout timeout);

 private:
  friend class Rendezvous;
  RendezvousKey key_;
  std::vector<const void*> values_;
  std::vector<bool> arrived_;
  std::vector<bool> departed_;
  int64_t arrivals_ = 0;
  int64_t departures_ = 0;
  absl::Status failed_;
  std::mutex mu_;
  std::condition_variable cv_;
};

class Rendezvous {
 public:
  // Contributes `value` as participant `rank` of `key.devices`; returns the
  // meeting once all have arrived. Errors: a rank out of range or arriving
  // twice (InvalidArgument), the timeout (DeadlineExceeded naming the missing
  // devices; every participant waiting on that meeting gets the same error).
  absl::StatusOr<std::shared_ptr<Meeting>> Arrive(const RendezvousKey& key, int64_t rank,
                                                  const void* value, Timeout timeout);

  // Meetings under way (for tests: a finished or failed meeting is removed).
  int64_t pending() const;

  // One device of run `run_id` failed: every participant waiting to meet in
  // that run, and every later arrival of it, gets `error` at once instead of
  // waiting for its timeout. Forget(run_id) once the run is over.
  void Abort(int64_t run_id, absl::Status error);
  void Forget(int64_t run_id);

 private:
  mutable std::mutex mu_;
  std::map<RendezvousKey, std::shared_ptr<Meeting>> meetings_;
  std::map<int64_t, absl::Status> aborted_;  // by run id
};

}  // namespace xlite::collectives

#endif  // XLITE_COLLECTIVES_RENDEZVOUS_H_
