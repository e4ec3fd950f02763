#include "xlite/buffers/heap_simulator.h"

#include <algorithm>
#include <random>

#include "gtest/gtest.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

// Every pair of intervals live at one time lies at disjoint bytes.
void ExpectDisjoint(const std::vector<HeapInterval>& v, const HeapPlacement& p) {
  ASSERT_EQ(p.offsets.size(), v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].size == 0) continue;
    EXPECT_GE(p.offsets[i], 0);
    EXPECT_LE(p.offsets[i] + v[i].size, p.heap_size);
    for (size_t j = i + 1; j < v.size(); ++j) {
      if (v[j].size == 0) continue;
      const bool live_together = v[i].start <= v[j].end && v[j].start <= v[i].end;
      const bool bytes_overlap =
          p.offsets[i] < p.offsets[j] + v[j].size && p.offsets[j] < p.offsets[i] + v[i].size;
      EXPECT_FALSE(live_together && bytes_overlap) << "intervals " << i << " and " << j;
    }
  }
}

TEST(HeapSimulator, BuffersLiveAtDifferentTimesShareBytes) {
  const std::vector<HeapInterval> v = {{100, 0, 1}, {100, 2, 3}, {100, 4, 5}};
  HeapPlacement p = PlaceIntervals(v, 1);
  EXPECT_EQ(p.heap_size, 100);
  EXPECT_EQ(p.offsets, (std::vector<int64_t>{0, 0, 0}));
}

TEST(HeapSimulator, OverlappingLifetimesGetDisjointBytes) {
  const std::vector<HeapInterval> v = {{100, 0, 3}, {50, 1, 2}, {30, 2, 5}};
  HeapPlacement p = PlaceIntervals(v, 1);
  ExpectDisjoint(v, p);
  EXPECT_EQ(p.heap_size, 180);
}

TEST(HeapSimulator, ALaterBufferReusesTheBytesOfADeadOne) {
  // Two 100-byte buffers live throughout; a 50-byte one early and a
  // 40-byte one late: the late one takes the early one's bytes.
  const std::vector<HeapInterval> v = {{100, 0, 9}, {50, 0, 3}, {100, 0, 9}, {40, 5, 6}};
  HeapPlacement p = PlaceIntervals(v, 1);
  ExpectDisjoint(v, p);
  EXPECT_EQ(p.heap_size, 250);
}

TEST(HeapSimulator, OffsetsAreAligned) {
  const std::vector<HeapInterval> v = {{4, 0, 5}, {4, 0, 5}, {100, 2, 3}, {1, 1, 4}};
  HeapPlacement p = PlaceIntervals(v, 64);
  ExpectDisjoint(v, p);
  for (int64_t offset : p.offsets) EXPECT_EQ(offset % 64, 0);
}

TEST(HeapSimulator, EmptyAndZeroSized) {
  EXPECT_EQ(PlaceIntervals({}, 64).heap_size, 0);
  HeapPlacement p = PlaceIntervals({{0, 0, 10}, {8, 3, 4}}, 64);
  EXPECT_EQ(p.heap_size, 8);
  EXPECT_EQ(p.offsets[0], 0);
}

TEST(HeapSimulator, StopsAtTheLowerBound) {
  // The first order already reaches the bound (nothing overlaps): one
  // order tried.
  HeapPlacement p = PlaceIntervals({{64, 0, 0}, {64, 1, 1}}, 64);
  EXPECT_EQ(p.heap_size, 64);
  EXPECT_EQ(p.tried.size(), 1u);
  EXPECT_EQ(p.order, "size");
}

TEST(HeapSimulator, RandomIntervalsNeverOverlapAndStayNearTheBound) {
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    std::vector<HeapInterval> v;
    const int n = 50 + round * 20;
    for (int i = 0; i < n; ++i) {
      const int64_t start = rng() % 200;
      const int64_t length = rng() % 8 == 0 ? rng() % 150 : rng() % 6;
      v.push_back({static_cast<int64_t>(1 + rng() % 4096), start, start + length});
    }
    HeapPlacement p = PlaceIntervals(v, 64);
    ExpectDisjoint(v, p);
    // The lower bound with aligned sizes.
    int64_t bound = 0;
    for (int64_t t = 0; t < 400; ++t) {
      int64_t live = 0;
      for (const HeapInterval& i : v) {
        if (i.start <= t && t <= i.end) live += (i.size + 63) / 64 * 64;
      }
      bound = std::max(bound, live);
    }
    EXPECT_GE((p.heap_size + 63) / 64 * 64, bound);
    EXPECT_LE(p.heap_size, bound * 1.3) << "round " << round;
    ASSERT_FALSE(p.tried.empty());
    for (const auto& [name, size] : p.tried) EXPECT_GE(size, p.heap_size);
  }
}

// Past 2,048 buffers the first two orders are placed at once (two threads):
// the result is still the best order's placement, reported as if tried in
// order.
TEST(HeapSimulator, ManyIntervalsPlacedAsIfInOrder) {
  std::mt19937 rng(11);
  std::vector<HeapInterval> v;
  for (int i = 0; i < 3000; ++i) {
    const int64_t start = rng() % 2000;
    const int64_t length = rng() % 8 == 0 ? rng() % 1500 : rng() % 20;
    v.push_back({static_cast<int64_t>(1 + rng() % 65536), start, start + length});
  }
  HeapPlacement p = PlaceIntervals(v, 64);
  ExpectDisjoint(v, p);
  ASSERT_GE(p.tried.size(), 1u);
  EXPECT_EQ(p.tried[0].first, "size");
  if (p.tried.size() > 1) EXPECT_EQ(p.tried[1].first, "length");
  int64_t best = p.tried[0].second;
  std::string best_order = p.tried[0].first;
  for (const auto& [name, size] : p.tried) {
    if (size < best) best = size, best_order = name;
  }
  EXPECT_EQ(p.heap_size, best);
  EXPECT_EQ(p.order, best_order);
  // The same intervals again: the same placement.
  HeapPlacement again = PlaceIntervals(v, 64);
  EXPECT_EQ(again.offsets, p.offsets);
  EXPECT_EQ(again.tried, p.tried);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
