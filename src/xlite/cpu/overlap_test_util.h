// Test custom calls for overlap tests that do not depend on timing, registered
// in hostlib's registry by the test binaries that include this header:
//
//   xlite_test.rendezvous  copies its f32 operand to its result, but only
//                          after a partner call has arrived at the same
//                          two-party barrier: two of them complete only when
//                          they run at the same time. Alone, it fails with
//                          DeadlineExceeded after RendezvousTimeout().
//   xlite_test.fail        fails (InvalidArgument), after setting FailSignal.
//   xlite_test.after_fail  waits until FailSignal is set (bounded by the
//                          timeout), copies its operand, then sets
//                          AfterFailFinished: work still running when a run
//                          fails.
#ifndef XLITE_CPU_OVERLAP_TEST_UTIL_H_
#define XLITE_CPU_OVERLAP_TEST_UTIL_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "xlite/hostlib/custom_call_registry.h"

namespace xlite::cpu::testing {

// A reusable barrier for two parties with a timeout.
class TwoPartyBarrier {
 public:
  // Returns once the other party has arrived too; DeadlineExceeded (and the
  // arrival withdrawn) if it does not within `timeout`.
  absl::Status ArriveAndWait(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    const int64_t generation = generation_;
    if (++arrived_ == 2) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return absl::OkStatus();
    }
    if (cv_.wait_for(lock, timeout, [&] { return generation_ != generation; })) {
      return absl::OkStatus();
    }
    --arrived_;
    return absl::DeadlineExceededError("the partner never arrived at the barrier");
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  int64_t generation_ = 0;
};

inline TwoPartyBarrier& RendezvousBarrier() {
  static TwoPartyBarrier* barrier = new TwoPartyBarrier();
  return *barrier;
}

// How long a call waits for its partner. Tests that expect the rendezvous to
// succeed use a long one (it is never reached then); tests that expect it
// to fail use a short one.
inline std::atomic<int64_t>& RendezvousTimeoutMs() {
  static std::atomic<int64_t> ms{60'000};
  return ms;
}

struct FailSignal {
  std::mutex mu;
  std::condition_variable cv;
  bool failed = false;
  bool after_fail_finished = false;
  void Reset() {
    std::lock_guard<std::mutex> lock(mu);
    failed = false;
    after_fail_finished = false;
  }
};

inline FailSignal& Signal() {
  static FailSignal* s = new FailSignal();
  return *s;
}

inline absl::Status CopyFirstOperand(hostlib::FfiCallFrame& frame) {
  if (frame.args.empty() || frame.rets.empty() || frame.args[0].bytes() != frame.rets[0].bytes()) {
    return frame.Error("expects one operand and a result of its size");
  }
  std::memcpy(frame.rets[0].data, frame.args[0].data, static_cast<size_t>(frame.args[0].bytes()));
  return absl::OkStatus();
}

inline absl::Status Rendezvous(hostlib::FfiCallFrame& frame) {
  const auto timeout = std::chrono::milliseconds(RendezvousTimeoutMs().load());
  absl::Status s = RendezvousBarrier().ArriveAndWait(timeout);
  if (!s.ok()) {
    return absl::DeadlineExceededError(
        absl::StrCat(frame.target, ": no partner arrived within ", timeout.count(), " ms"));
  }
  return CopyFirstOperand(frame);
}

inline absl::Status Fail(hostlib::FfiCallFrame& frame) {
  {
    std::lock_guard<std::mutex> lock(Signal().mu);
    Signal().failed = true;
  }
  Signal().cv.notify_all();
  return frame.Error("failed on purpose");
}

inline absl::Status AfterFail(hostlib::FfiCallFrame& frame) {
  FailSignal& s = Signal();
  std::unique_lock<std::mutex> lock(s.mu);
  if (!s.cv.wait_for(lock, std::chrono::milliseconds(RendezvousTimeoutMs().load()),
                     [&] { return s.failed; })) {
    return absl::DeadlineExceededError(absl::StrCat(frame.target, ": nothing failed"));
  }
  absl::Status copied = CopyFirstOperand(frame);
  s.after_fail_finished = true;
  return copied;
}

inline void RegisterOverlapTestTargets() {
  static const bool registered = [] {
    hostlib::CustomCallRegistry& r = hostlib::CustomCallRegistry::Global();
    r.Register("xlite_test.rendezvous", &Rendezvous).IgnoreError();
    r.Register("xlite_test.fail", &Fail).IgnoreError();
    r.Register("xlite_test.after_fail", &AfterFail).IgnoreError();
    return true;
  }();
  (void)registered;
}

}  // namespace xlite::cpu::testing

#endif  // XLITE_CPU_OVERLAP_TEST_UTIL_H_
