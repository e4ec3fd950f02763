#include "xlite/collectives/rendezvous.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace xlite::collectives {
namespace {
namespace XLITE_UNITY_ID {

using std::chrono::milliseconds;

TEST(Rendezvous, EveryoneLeavesWithAllValuesByRank) {
  for (int n : {1, 2, 4, 8}) {
    Rendezvous rendezvous;
    RendezvousKey key{7, 3, {}};
    for (int i = 0; i < n; ++i) key.devices.push_back(10 + i);
    std::vector<int> values(n);
    std::vector<std::vector<const void*>> seen(n);
    std::vector<absl::Status> status(n);
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i) {
      values[i] = i;
      threads.emplace_back([&, i] {
        absl::StatusOr<std::shared_ptr<Meeting>> m =
            rendezvous.Arrive(key, i, &values[i], std::chrono::seconds(30));
        status[i] = m.status();
        if (!m.ok()) return;
        seen[i] = (*m)->values();
        status[i] = (*m)->Depart(i, std::chrono::seconds(30));
      });
    }
    for (std::thread& t : threads) t.join();
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(status[i].ok()) << status[i];
      ASSERT_EQ(seen[i].size(), static_cast<size_t>(n));
      for (int j = 0; j < n; ++j) EXPECT_EQ(seen[i][j], &values[j]);
    }
    EXPECT_EQ(rendezvous.pending(), 0);
  }
}

TEST(Rendezvous, SameKeyTwiceInARowMeetsTwice) {
  Rendezvous rendezvous;
  RendezvousKey key{1, 1, {0, 1}};
  std::vector<std::thread> threads;
  std::vector<absl::Status> status(2);
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&, i] {
      for (int round = 0; round < 100 && status[i].ok(); ++round) {
        int value = round * 10 + i;
        absl::StatusOr<std::shared_ptr<Meeting>> m =
            rendezvous.Arrive(key, i, &value, std::chrono::seconds(30));
        if (!m.ok()) {
          status[i] = m.status();
          break;
        }
        // Both contributions belong to this round.
        for (int j = 0; j < 2; ++j) {
          if (*static_cast<const int*>((*m)->values()[j]) != round * 10 + j) {
            status[i] = absl::InternalError("values of another round");
          }
        }
        absl::Status d = (*m)->Depart(i, std::chrono::seconds(30));
        if (!d.ok()) status[i] = d;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_TRUE(status[0].ok()) << status[0];
  EXPECT_TRUE(status[1].ok()) << status[1];
}

TEST(Rendezvous, TimeoutNamesTheDevicesThatDidNotArrive) {
  Rendezvous rendezvous;
  RendezvousKey key{5, 42, {0, 1, 2, 3}};
  const auto timeout = milliseconds(200);
  std::vector<absl::Status> status(4);
  std::vector<std::thread> threads;
  const auto start = std::chrono::steady_clock::now();
  for (int i : {0, 2}) {  // devices 1 and 3 never come
    threads.emplace_back([&, i] {
      int value = i;
      status[i] = rendezvous.Arrive(key, i, &value, timeout).status();
    });
  }
  for (std::thread& t : threads) t.join();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  for (int i : {0, 2}) {
    EXPECT_EQ(status[i].code(), absl::StatusCode::kDeadlineExceeded) << status[i];
    EXPECT_NE(status[i].message().find("devices 1, 3 did not arrive"), std::string::npos)
        << status[i];
    EXPECT_NE(status[i].message().find("op 42 of run 5"), std::string::npos) << status[i];
  }
  EXPECT_GE(elapsed, timeout);
  EXPECT_LT(elapsed, std::chrono::seconds(10));  // bounded, no hang
  EXPECT_EQ(rendezvous.pending(), 0);
}

TEST(Rendezvous, OneParticipantWaitingAloneTimesOut) {
  Rendezvous rendezvous;
  RendezvousKey key{0, 0, {4, 9}};
  int value = 0;
  absl::Status s = rendezvous.Arrive(key, 0, &value, milliseconds(50)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(s.message().find("device 9 did not arrive"), std::string::npos) << s;
}

TEST(Rendezvous, DepartTimesOutNamingTheDevicesStillWorking) {
  Rendezvous rendezvous;
  RendezvousKey key{0, 0, {0, 1}};
  int a = 0, b = 1;
  std::shared_ptr<Meeting> m0, m1;
  std::thread t([&] { m1 = *rendezvous.Arrive(key, 1, &b, std::chrono::seconds(30)); });
  m0 = *rendezvous.Arrive(key, 0, &a, std::chrono::seconds(30));
  t.join();
  absl::Status s = m0->Depart(0, milliseconds(50));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(s.message().find("device 1 did not finish"), std::string::npos) << s;
  EXPECT_TRUE(m1->Depart(1, milliseconds(50)).ok());
}

TEST(Rendezvous, BadRanksAreErrors) {
  Rendezvous rendezvous;
  RendezvousKey key{0, 0, {0, 1}};
  int v = 0;
  EXPECT_EQ(rendezvous.Arrive(key, 2, &v, milliseconds(10)).status().code(),
            absl::StatusCode::kInvalidArgument);
  std::thread t([&] { (void)rendezvous.Arrive(key, 0, &v, milliseconds(300)); });
  std::this_thread::sleep_for(milliseconds(50));  // only makes the duplicate likely
  absl::Status twice = rendezvous.Arrive(key, 0, &v, milliseconds(10)).status();
  t.join();
  EXPECT_FALSE(twice.ok());
}

TEST(Rendezvous, AbortEndsTheRunsMeetingsAtOnceWithTheError) {
  Rendezvous rendezvous;
  const RendezvousKey key{5, 1, {0, 1}};
  absl::Status waited;
  const auto start = std::chrono::steady_clock::now();
  std::thread waiter([&] {
    int value = 0;
    waited = rendezvous.Arrive(key, 0, &value, std::chrono::seconds(60)).status();
  });
  while (rendezvous.pending() == 0) std::this_thread::yield();
  rendezvous.Abort(5, absl::InternalError("device 1 failed"));
  waiter.join();
  EXPECT_EQ(waited, absl::InternalError("device 1 failed"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_EQ(rendezvous.pending(), 0);
  // Later arrivals of that run fail too; other runs meet as before.
  int value = 0;
  EXPECT_EQ(rendezvous.Arrive(RendezvousKey{5, 2, {0}}, 0, &value, milliseconds(10)).status(),
            absl::InternalError("device 1 failed"));
  EXPECT_TRUE(rendezvous.Arrive(RendezvousKey{6, 2, {0}}, 0, &value, milliseconds(10)).ok());
  rendezvous.Forget(5);
  EXPECT_TRUE(rendezvous.Arrive(RendezvousKey{5, 2, {0}}, 0, &value, milliseconds(10)).ok());
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::collectives
