#include "xlite/cpu/side_streams.h"

#include <utility>

namespace xlite::cpu {

struct SideStreams::Worker {
  std::thread thread;
  std::condition_variable cv;          // a task was handed over, or stop
  absl::AnyInvocable<void() &&> task;  // guarded by SideStreams::mu_
};

SideStreams& SideStreams::Default() {
  static SideStreams* streams = new SideStreams();
  return *streams;
}

SideStreams::SideStreams() = default;

SideStreams::~SideStreams() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    for (auto& w : workers_) w->cv.notify_all();
  }
  for (auto& w : workers_) w->thread.join();
}

void SideStreams::Launch(absl::AnyInvocable<void() &&> task) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!idle_.empty()) {
    Worker* w = idle_.back();
    idle_.pop_back();
    w->task = std::move(task);
    w->cv.notify_one();
    return;
  }
  auto w = std::make_unique<Worker>();
  w->task = std::move(task);
  Worker* raw = w.get();
  workers_.push_back(std::move(w));
  raw->thread = std::thread([this, raw] { Loop(raw); });
}

int64_t SideStreams::num_threads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(workers_.size());
}

void SideStreams::Loop(Worker* worker) {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    worker->cv.wait(lock, [&] { return stop_ || worker->task != nullptr; });
    if (worker->task == nullptr) return;  // stop_ and nothing to run
    absl::AnyInvocable<void()&&> task = std::move(worker->task);
    worker->task = nullptr;
    lock.unlock();
    std::move(task)();
    task = nullptr;  // destroy what the task captured before idling
    lock.lock();
    if (stop_) return;
    idle_.push_back(worker);
  }
}

}  // namespace xlite::cpu
