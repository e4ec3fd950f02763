#include "xlite/runtime/client.h"

#include <sched.h>
#include <sys/resource.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "xlite/hostlib/matmul.h"
#include "xlite/hostlib/threads.h"

namespace xlite::runtime {
namespace {
namespace XLITE_UNITY_ID {

TEST(Client, DefaultBudgetIsTheCoresThisProcessMayUse) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  EXPECT_EQ(DefaultCpuThreads(), CPU_COUNT(&set));
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Create();
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ((*client)->cpu_threads(), CPU_COUNT(&set));
  EXPECT_EQ(hostlib::HostThreads(), CPU_COUNT(&set));

  // Pinned to one core, the default follows.
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) {
      CPU_SET(cpu, &one);
      break;
    }
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  EXPECT_EQ(DefaultCpuThreads(), 1);
  ASSERT_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
}

TEST(Client, ExplicitBudgetSetsThePoolAndOneDnnsTeam) {
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Create({.cpu_threads = 3});
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ((*client)->cpu_threads(), 3);
  EXPECT_EQ((*client)->thread_pool().num_threads(), 3);
  EXPECT_EQ(hostlib::HostThreads(), 3);
}

TEST(Client, BadBudgetsAreErrors) {
  for (int n : {-1, Client::kMaxCpuThreads + 1}) {
    absl::Status s = Client::Create({.cpu_threads = n}).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << n;
    EXPECT_NE(s.message().find("cpu_threads"), std::string::npos) << s;
  }
}

TEST(Client, FlagSetsTheBudget) {
  std::vector<std::string> args = {"--xlite_cpu_threads=2", "file.hlo"};
  absl::StatusOr<DebugOptions> debug = ReadDebugOptions(args);
  ASSERT_TRUE(debug.ok()) << debug.status();
  EXPECT_EQ(debug->cpu_threads, 2);
  EXPECT_EQ(args, std::vector<std::string>{"file.hlo"});
  EXPECT_EQ(ClientOptionsFrom(*debug).cpu_threads, 2);
  DebugOptions defaults;
  EXPECT_EQ(ClientOptionsFrom(defaults).cpu_threads, 0);
  for (const char* bad : {"--xlite_cpu_threads=-2", "--xlite_cpu_threads=two",
                          "--xlite_cpu_threads=", "--xlite_cpu_threads=99999999999"}) {
    DebugOptions options;
    absl::StatusOr<bool> used = ApplyDebugFlag(bad, options);
    EXPECT_EQ(used.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(used.status().message().find("--xlite_cpu_threads"), std::string::npos);
  }
}

TEST(Client, DeviceCountAndCollectiveTimeoutFromXlaFlags) {
  setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=4", 1);
  std::vector<std::string> args = {"--xla_cpu_collective_call_terminate_timeout_seconds=7", "f"};
  absl::StatusOr<DebugOptions> debug = ReadDebugOptions(args);
  unsetenv("XLA_FLAGS");
  ASSERT_TRUE(debug.ok()) << debug.status();
  EXPECT_EQ(args, std::vector<std::string>{"f"});
  const ClientOptions options = ClientOptionsFrom(*debug);
  EXPECT_EQ(options.device_count, 4);
  EXPECT_EQ(options.collective_timeout, std::chrono::seconds(7));
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Create(options);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ((*client)->device_count(), 4);
  EXPECT_EQ(ClientOptionsFrom(DebugOptions{}).device_count, 1);
  EXPECT_EQ(ClientOptionsFrom(DebugOptions{}).collective_timeout, std::chrono::seconds(60));
  for (const char* bad :
       {"--xla_force_host_platform_device_count=0", "--xla_force_host_platform_device_count=x",
        "--xla_cpu_collective_call_terminate_timeout_seconds=-1"}) {
    DebugOptions o;
    absl::StatusOr<bool> used = ApplyDebugFlag(bad, o);
    EXPECT_EQ(used.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(Client::Create({.device_count = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(Client, EachDeviceRunsItsWorkInOrderOnItsOwnThread) {
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Create({.device_count = 3});
  ASSERT_TRUE(client.ok()) << client.status();
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::vector<int>> order(3);
  std::vector<std::thread::id> ids(3);
  int done = 0;
  for (int d = 0; d < 3; ++d) {
    for (int k = 0; k < 5; ++k) {
      (*client)->Schedule(d, [&, d, k] {
        std::lock_guard<std::mutex> lock(mu);
        order[d].push_back(k);
        ids[d] = std::this_thread::get_id();
        if (++done == 15) cv.notify_all();
      });
    }
  }
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return done == 15; });
  for (int d = 0; d < 3; ++d) EXPECT_EQ(order[d], (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_NE(ids[0], ids[1]);
  EXPECT_NE(ids[1], ids[2]);
  EXPECT_NE(ids[0], std::this_thread::get_id());
}

double CpuSeconds() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

// Busy work that the optimizer cannot drop.
double Spin(int64_t iterations) {
  volatile double x = 1.0;
  for (int64_t i = 0; i < iterations; ++i) x = x * 1.0000001 + 1e-9;
  return x;
}

// CPU time / wall time over a parallel run (the pool's ParallelFor of busy
// work, then oneDNN matmuls) stays within the budget.
void CheckBudget(int threads) {
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Create({.cpu_threads = threads});
  ASSERT_TRUE(client.ok()) << client.status();
  constexpr int64_t kDim = 384;
  std::vector<float> lhs(kDim * kDim, 0.5f), rhs(kDim * kDim, 0.25f), out(kDim * kDim);
  const hostlib::MatmulShape shape{.batch = 1, .m = kDim, .k = kDim, .n = kDim};

  const double cpu_start = CpuSeconds();
  const auto wall_start = std::chrono::steady_clock::now();
  for (int round = 0; round < 3; ++round) {
    (*client)->thread_pool().ParallelFor(8 * threads, [](int64_t) { Spin(3'000'000); });
    for (int i = 0; i < 10; ++i) {
      ASSERT_TRUE(hostlib::Matmul(shape, hostlib::ElementType::kF32, lhs.data(),
                                  hostlib::ElementType::kF32, rhs.data(),
                                  hostlib::ElementType::kF32, out.data())
                      .ok());
    }
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  const double cpu = CpuSeconds() - cpu_start;
  EXPECT_FLOAT_EQ(out[0], kDim * 0.125f);
  const double ratio = cpu / wall;
  std::printf("cpu_threads=%d: cpu %.3f s / wall %.3f s = %.2f\n", threads, cpu, wall, ratio);
  ::testing::Test::RecordProperty("cpu_over_wall_x100_" + std::to_string(threads),
                                  static_cast<int>(ratio * 100));
  EXPECT_LE(ratio, threads + 0.2);
}

TEST(Client, CpuTimeStaysWithinOneThread) { CheckBudget(1); }
TEST(Client, CpuTimeStaysWithinTwoThreads) { CheckBudget(2); }

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::runtime
