// SideStreams: the device's threads that may block. Asynchronous work
// (async-start, copy-start, ...) runs on them, and so do the concurrent
// executor's helpers; the kernel ThreadPool's workers never block, so none of
// this work goes there.
//
// Every Launch gets a thread of its own at once: an idle cached one, or a new
// one when all are busy. Two tasks in flight therefore never wait for each
// other to start, so an asynchronous computation that blocks until another
// in-flight one makes progress cannot deadlock. XLA names side streams by the
// `async_execution_thread` attribute; here the name only labels the work, as
// one named stream holding two blocked ops at once must not serialize them.
//
//   SideStreams& streams = SideStreams::Default();
//   streams.Launch([&] { ... });   // runs now on another thread
#ifndef XLITE_CPU_SIDE_STREAMS_H_
#define XLITE_CPU_SIDE_STREAMS_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/any_invocable.h"

namespace xlite::cpu {

class SideStreams {
 public:
  // The process-wide streams (never destroyed: executions on any thread may
  // use them until the process ends).
  static SideStreams& Default();

  SideStreams();
  // Joins the threads; no task may still be running.
  ~SideStreams();
  SideStreams(const SideStreams&) = delete;
  SideStreams& operator=(const SideStreams&) = delete;

  // Runs `task` on another thread, starting now. The task must not throw.
  void Launch(absl::AnyInvocable<void() &&> task);

  // Threads started so far (busy and idle).
  int64_t num_threads() const;

 private:
  struct Worker;
  void Loop(Worker* worker);

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Worker>> workers_;  // guarded by mu_
  std::vector<Worker*> idle_;                     // guarded by mu_
  bool stop_ = false;                             // guarded by mu_
};

}  // namespace xlite::cpu

#endif  // XLITE_CPU_SIDE_STREAMS_H_
