#include "xlite/buffers/heap_simulator.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <optional>
#include <system_error>
#include <thread>

#include "xlite/support/host_cpus.h"

namespace xlite {
namespace {

int64_t RoundUp(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

constexpr int64_t kMaxForThirdOrder = 16384;
// Below this many buffers the orders run one after another (a thread costs
// more than placing them).
constexpr int64_t kMinForParallelOrders = 2048;

// Sorts 64-bit keys: an LSD radix sort on 8-bit digits for long lists (only
// over the digits some key uses), std::sort for short ones.
void SortKeys(std::vector<uint64_t>& keys, std::vector<uint64_t>& scratch) {
  const size_t n = keys.size();
  if (n < 128) {
    std::sort(keys.begin(), keys.end());
    return;
  }
  uint64_t all = 0;
  for (uint64_t k : keys) all |= k;
  scratch.resize(n);
  uint64_t* from = keys.data();
  uint64_t* to = scratch.data();
  for (int shift = 0; shift < 64 && (all >> shift) != 0; shift += 8) {
    if (((all >> shift) & 0xff) == 0) continue;
    size_t count[257] = {0};
    for (size_t i = 0; i < n; ++i) ++count[((from[i] >> shift) & 0xff) + 1];
    for (int d = 0; d < 256; ++d) count[d + 1] += count[d];
    for (size_t i = 0; i < n; ++i) to[count[(from[i] >> shift) & 0xff]++] = from[i];
    std::swap(from, to);
  }
  if (from != keys.data()) std::copy(from, from + n, keys.data());
}

// Every interval, searchable by lifetime: a centered interval tree (each
// node keeps the intervals containing its center time, sorted by start and
// by end), built once and shared by the orders. A query reports every
// interval overlapping [start, end] in O(log T + k); the caller skips the
// ones not placed yet.
class IntervalTree {
 public:
  explicit IntervalTree(const std::vector<HeapInterval>& intervals) : intervals_(intervals) {
    std::vector<int32_t> all;
    for (int32_t i = 0; i < static_cast<int32_t>(intervals.size()); ++i) {
      if (intervals[i].size > 0) all.push_back(i);
    }
    root_ = Build(all);
  }

  template <typename Fn>
  void ForEachOverlapping(int64_t start, int64_t end, Fn&& fn) const {
    int32_t stack[128];
    int top = 0;
    if (root_ >= 0) stack[top++] = root_;
    while (top > 0) {
      const Node& node = nodes_[stack[--top]];
      if (end < node.center) {
        for (int32_t k = node.begin; k < node.end && intervals_[by_start_[k]].start <= end; ++k) {
          fn(by_start_[k]);
        }
        if (node.left >= 0) stack[top++] = node.left;
      } else if (start > node.center) {
        for (int32_t k = node.begin; k < node.end && intervals_[by_end_[k]].end >= start; ++k) {
          fn(by_end_[k]);
        }
        if (node.right >= 0) stack[top++] = node.right;
      } else {
        for (int32_t k = node.begin; k < node.end; ++k) fn(by_start_[k]);
        if (node.left >= 0) stack[top++] = node.left;
        if (node.right >= 0) stack[top++] = node.right;
      }
    }
  }

 private:
  struct Node {
    int64_t center = 0;
    int32_t begin = 0, end = 0;  // into by_start_ / by_end_
    int32_t left = -1, right = -1;
  };

  int32_t Build(std::vector<int32_t>& ids) {
    if (ids.empty()) return -1;
    // The center: the median of the intervals' midpoints keeps depth
    // logarithmic.
    std::vector<int64_t> mids;
    mids.reserve(ids.size());
    for (int32_t i : ids)
      mids.push_back(intervals_[i].start + (intervals_[i].end - intervals_[i].start) / 2);
    std::nth_element(mids.begin(), mids.begin() + mids.size() / 2, mids.end());
    const int64_t center = mids[mids.size() / 2];
    std::vector<int32_t> left, right, here;
    for (int32_t i : ids) {
      if (intervals_[i].end < center) {
        left.push_back(i);
      } else if (intervals_[i].start > center) {
        right.push_back(i);
      } else {
        here.push_back(i);
      }
    }
    ids.clear();
    ids.shrink_to_fit();
    const int32_t index = static_cast<int32_t>(nodes_.size());
    nodes_.push_back(Node{center, static_cast<int32_t>(by_start_.size()), 0, -1, -1});
    std::vector<int32_t> by_end = here;
    std::sort(here.begin(), here.end(),
              [&](int32_t a, int32_t b) { return intervals_[a].start < intervals_[b].start; });
    std::sort(by_end.begin(), by_end.end(),
              [&](int32_t a, int32_t b) { return intervals_[a].end > intervals_[b].end; });
    by_start_.insert(by_start_.end(), here.begin(), here.end());
    by_end_.insert(by_end_.end(), by_end.begin(), by_end.end());
    nodes_[index].end = static_cast<int32_t>(by_start_.size());
    const int32_t l = Build(left);
    const int32_t r = Build(right);
    nodes_[index].left = l;
    nodes_[index].right = r;
    return index;
  }

  const std::vector<HeapInterval>& intervals_;
  std::vector<Node> nodes_;
  std::vector<int32_t> by_start_, by_end_;
  int32_t root_ = -1;
};

// Best fit in the given order; returns the heap size.
int64_t PlaceInOrder(const std::vector<HeapInterval>& intervals, const IntervalTree& tree,
                     const std::vector<int64_t>& order, int64_t alignment,
                     std::vector<int64_t>* offsets) {
  const int64_t n = static_cast<int64_t>(intervals.size());
  offsets->assign(n, 0);
  std::vector<int64_t> ends(n, -1);  // -1: not placed yet
  std::vector<int32_t> overlapping;
  // The overlapping buffers by offset (packed keys, or pairs).
  std::vector<uint64_t> keys, scratch;
  std::vector<std::pair<int64_t, int64_t>> taken;
  int64_t heap = 0;
  for (int64_t id : order) {
    const HeapInterval& interval = intervals[id];
    if (interval.size <= 0) continue;
    overlapping.clear();
    tree.ForEachOverlapping(interval.start, interval.end, [&](int32_t other) {
      if (ends[other] >= 0) overlapping.push_back(other);
    });
    int64_t best = -1, best_gap = 0;
    int64_t cursor = 0;  // aligned start of the current gap
    auto consider = [&](int64_t begin, int64_t end) {
      if (begin > cursor) {
        const int64_t gap = begin - cursor;
        if (gap >= interval.size && (best < 0 || gap < best_gap)) {
          best = cursor;
          best_gap = gap;
        }
      }
      cursor = std::max(cursor, RoundUp(end, alignment));
    };
    // Sorting by offset: offsets are multiples of the alignment, so
    // (offset / alignment) << b | position, with b the bits of k, packs both
    // into a 64-bit key while that fits.
    const uint64_t k = overlapping.size();
    int bits = 1;
    while ((uint64_t{1} << bits) < k) ++bits;
    if (bits < 32 && static_cast<uint64_t>(heap / alignment) < (uint64_t{1} << (63 - bits))) {
      keys.clear();
      for (uint64_t j = 0; j < k; ++j) {
        keys.push_back(static_cast<uint64_t>((*offsets)[overlapping[j]] / alignment) << bits | j);
      }
      SortKeys(keys, scratch);
      const uint64_t mask = (uint64_t{1} << bits) - 1;
      for (uint64_t key : keys) {
        const int32_t other = overlapping[key & mask];
        consider((*offsets)[other], ends[other]);
      }
    } else {
      taken.clear();
      for (int32_t other : overlapping) taken.push_back({(*offsets)[other], ends[other]});
      std::sort(taken.begin(), taken.end());
      for (const auto& [begin, end] : taken) consider(begin, end);
    }
    const int64_t offset = best >= 0 ? best : cursor;
    (*offsets)[id] = offset;
    ends[id] = offset + interval.size;
    heap = std::max(heap, offset + interval.size);
  }
  return heap;
}

}  // namespace

HeapPlacement PlaceIntervals(const std::vector<HeapInterval>& intervals, int64_t alignment) {
  if (alignment < 1) alignment = 1;
  const int64_t n = static_cast<int64_t>(intervals.size());
  auto length = [&](int64_t i) { return intervals[i].end - intervals[i].start + 1; };
  std::vector<int64_t> ids(n);
  std::iota(ids.begin(), ids.end(), 0);
  const std::vector<std::pair<const char*, std::function<bool(int64_t, int64_t)>>> orders = {
      {"size",
       [&](int64_t a, int64_t b) {
         const HeapInterval &x = intervals[a], &y = intervals[b];
         if (x.size != y.size) return x.size > y.size;
         if (length(a) != length(b)) return length(a) > length(b);
         return x.start < y.start;
       }},
      {"length",
       [&](int64_t a, int64_t b) {
         if (length(a) != length(b)) return length(a) > length(b);
         if (intervals[a].size != intervals[b].size) return intervals[a].size > intervals[b].size;
         return intervals[a].start < intervals[b].start;
       }},
      {"area",
       [&](int64_t a, int64_t b) {
         // size x length without overflow: compare as long double.
         const long double x = static_cast<long double>(intervals[a].size) * length(a);
         const long double y = static_cast<long double>(intervals[b].size) * length(b);
         if (x != y) return x > y;
         if (intervals[a].size != intervals[b].size) return intervals[a].size > intervals[b].size;
         return intervals[a].start < intervals[b].start;
       }},
  };
  HeapPlacement result;
  const IntervalTree tree(intervals);
  bool have = false;
  // No heap of aligned offsets is below the most (rounded) bytes live at
  // once: an order that reaches it ends the search.
  int64_t bound = 0;
  {
    std::vector<std::pair<int64_t, int64_t>> events;
    for (const HeapInterval& i : intervals) {
      if (i.size <= 0) continue;
      events.push_back({i.start, RoundUp(i.size, alignment)});
      events.push_back({i.end + 1, -RoundUp(i.size, alignment)});
    }
    std::sort(events.begin(), events.end());
    int64_t live = 0;
    for (const auto& [time, delta] : events) {
      live += delta;
      bound = std::max(bound, live);
    }
  }
  // Each order's placement, made on demand: a large heap's first two orders
  // at once, on two threads where there are two (mixtral_8x7b's 9,400 temps
  // take about 80 ms an order).
  struct Placed {
    bool done = false;
    int64_t heap = 0;
    std::vector<int64_t> offsets;
  };
  std::vector<Placed> placed(orders.size());
  auto place = [&](size_t k) {
    std::vector<int64_t> order = ids;
    std::stable_sort(order.begin(), order.end(), orders[k].second);
    placed[k].heap = PlaceInOrder(intervals, tree, order, alignment, &placed[k].offsets);
    placed[k].done = true;
  };
  if (n >= kMinForParallelOrders && UsableCpuCount() > 1) {
    std::optional<std::thread> second;
    try {
      second.emplace(place, 1);
    } catch (const std::system_error&) {  // no thread: in order below
    }
    place(0);
    if (second.has_value()) second->join();
  }
  // As if in order: the search ends at an order that reaches the bound.
  for (size_t k = 0; k < orders.size(); ++k) {
    const char* name = orders[k].first;
    if (have && RoundUp(result.heap_size, alignment) <= bound) break;
    // A compile-time cap: past kMaxForThirdOrder buffers only XLA's two
    // orders (size, length) run.
    if (std::string(name) == "area" && n > kMaxForThirdOrder) break;
    if (!placed[k].done) place(k);
    const int64_t heap = placed[k].heap;
    result.tried.push_back({name, heap});
    if (!have || heap < result.heap_size) {
      have = true;
      result.heap_size = heap;
      result.order = name;
      result.offsets = std::move(placed[k].offsets);
    }
  }
  if (!have) result.order = "size";
  return result;
}

}  // namespace xlite
