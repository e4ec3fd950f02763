// ArenaPool: reuse, bounds, poisoning and exclusive leases under threads.
#include "xlite/runtime/arena_pool.h"

#include <atomic>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace xlite::runtime {
namespace {
namespace XLITE_UNITY_ID {

TEST(ArenaPool, ReturnedArenaIsReused) {
  ArenaPool pool(1000);
  EXPECT_EQ(pool.bytes(), 1024);  // rounded up to the alignment
  uint8_t* first = nullptr;
  for (int i = 0; i < 5; ++i) {
    absl::StatusOr<ArenaPool::Lease> lease = pool.Acquire();
    ASSERT_TRUE(lease.ok()) << lease.status();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(lease->data()) % ArenaPool::kAlignment, 0u);
    if (i == 0) first = lease->data();
    EXPECT_EQ(lease->data(), first);
  }
  EXPECT_EQ(pool.allocations(), 1);
  EXPECT_EQ(pool.cached(), 1);
}

TEST(ArenaPool, LeasesHeldAtOnceAreDistinctAndTheCacheIsBounded) {
  ArenaPool pool(64);
  std::vector<ArenaPool::Lease> leases;
  std::set<uint8_t*> seen;
  const int n = ArenaPool::kSlots + 3;
  for (int i = 0; i < n; ++i) {
    absl::StatusOr<ArenaPool::Lease> lease = pool.Acquire();
    ASSERT_TRUE(lease.ok());
    EXPECT_TRUE(seen.insert(lease->data()).second) << "arena handed out twice";
    leases.push_back(*std::move(lease));
  }
  EXPECT_EQ(pool.allocations(), n);
  EXPECT_EQ(pool.cached(), 0);
  leases.clear();
  // The extra arenas were freed: the slots hold at most kSlots.
  EXPECT_EQ(pool.cached(), ArenaPool::kSlots);
  for (int i = 0; i < ArenaPool::kSlots; ++i) leases.push_back(*pool.Acquire());
  EXPECT_EQ(pool.allocations(), n);  // all from the cache
}

TEST(ArenaPool, MovedLeaseReturnsOnce) {
  ArenaPool pool(64);
  {
    ArenaPool::Lease a = *pool.Acquire();
    ArenaPool::Lease b = std::move(a);
    EXPECT_EQ(a.data(), nullptr);
    ArenaPool::Lease c = *pool.Acquire();
    c = std::move(b);  // c's own arena goes back now
    EXPECT_EQ(pool.cached(), 1);
  }
  EXPECT_EQ(pool.cached(), 2);
  EXPECT_EQ(pool.allocations(), 2);
}

TEST(ArenaPool, PoisonedPoolFillsEveryArenaItHandsOut) {
  ArenaPool pool(256, /*poison=*/true);
  {
    ArenaPool::Lease lease = *pool.Acquire();
    for (int i = 0; i < 256; ++i) EXPECT_EQ(lease.data()[i], 0xFF) << i;  // a fresh one
    std::memset(lease.data(), 0x12, 256);                                 // a run's values
  }
  ArenaPool::Lease again = *pool.Acquire();
  EXPECT_EQ(pool.allocations(), 1);
  for (int i = 0; i < 256; ++i) ASSERT_EQ(again.data()[i], 0xFF) << i;  // no stale value
}

TEST(ArenaPool, UnpoisonedPoolKeepsBytes) {
  // Documents the behaviour the poisoned mode exists for: reuse keeps bytes.
  ArenaPool pool(64);
  { std::memset(pool.Acquire()->data(), 0x5A, 64); }
  EXPECT_EQ(pool.Acquire()->data()[0], 0x5A);
}

TEST(ArenaPool, ThreadsNeverShareALease) {
  ArenaPool pool(4096);
  std::atomic<int> clashes{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int it = 0; it < 2000; ++it) {
        ArenaPool::Lease lease = *pool.Acquire();
        std::memset(lease.data(), t + 1, 4096);
        std::this_thread::yield();
        for (int i = 0; i < 4096; i += 64) {
          if (lease.data()[i] != t + 1) {
            ++clashes;
            break;
          }
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(clashes.load(), 0);
  // Reused, not allocated per call (a scan may miss an arena being returned).
  EXPECT_LT(pool.allocations(), 800);
  EXPECT_LE(pool.cached(), ArenaPool::kSlots);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::runtime
