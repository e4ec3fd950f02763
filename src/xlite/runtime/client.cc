#include "xlite/runtime/client.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "xlite/hostlib/threads.h"
#include "xlite/support/host_cpus.h"

namespace xlite::runtime {

// One device's executor: a thread that runs the work scheduled on it in order.
class Client::DeviceThread {
 public:
  DeviceThread() : thread_([this] { Loop(); }) {}
  ~DeviceThread() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  void Schedule(std::function<void()> work) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(std::move(work));
    }
    cv_.notify_one();
  }

 private:
  void Loop() {
    for (;;) {
      std::function<void()> work;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopped, nothing left
        work = std::move(queue_.front());
        queue_.pop_front();
      }
      work();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  bool stop_ = false;                        // guarded by mu_
  std::thread thread_;                       // last: starts after the rest
};

int DefaultCpuThreads() { return UsableCpuCount(); }

ClientOptions ClientOptionsFrom(const DebugOptions& debug) {
  return ClientOptions{
      .cpu_threads = debug.cpu_threads,
      .device_count = debug.host_platform_device_count,
      .collective_timeout = std::chrono::seconds(debug.collective_timeout_seconds)};
}

Client::Client(int threads, int devices, std::chrono::milliseconds timeout)
    : pool_(threads), collective_timeout_(timeout) {
  for (int d = 0; d < devices; ++d) devices_.push_back(std::make_unique<DeviceThread>());
}

Client::~Client() = default;

void Client::Schedule(int device, std::function<void()> work) {
  devices_[device]->Schedule(std::move(work));
}

absl::StatusOr<std::unique_ptr<Client>> Client::Create(const ClientOptions& options) {
  if (options.cpu_threads < 0 || options.cpu_threads > kMaxCpuThreads) {
    return absl::InvalidArgumentError(absl::StrCat("cpu_threads must be in [0, ", kMaxCpuThreads,
                                                   "] (0: the cores usable), got ",
                                                   options.cpu_threads));
  }
  if (options.device_count < 1 || options.device_count > kMaxDevices) {
    return absl::InvalidArgumentError(
        absl::StrCat("device_count must be in [1, ", kMaxDevices, "], got ", options.device_count));
  }
  if (options.collective_timeout <= std::chrono::milliseconds(0)) {
    return absl::InvalidArgumentError(absl::StrCat("the collective timeout must be positive, got ",
                                                   options.collective_timeout.count(), " ms"));
  }
  const int threads = options.cpu_threads > 0 ? options.cpu_threads : DefaultCpuThreads();
  hostlib::SetHostThreads(threads);
  return std::unique_ptr<Client>(
      new Client(threads, options.device_count, options.collective_timeout));
}

}  // namespace xlite::runtime
