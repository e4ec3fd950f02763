// ArenaPool: the memory one Execute needs for its allocations (parameters,
// outputs and the temp heap, Executable's "arena"), kept between runs so
// that a run does not allocate it anew. Each call holds its own arena while
// it runs (a Lease); calls running at once never share one. Returned arenas
// wait in a bounded set of slots (kSlots, lock-free: one atomic exchange to
// take, one compare-exchange to give back); an arena returned while every
// slot is full is freed. The pool frees what it holds on destruction; leases
// must have ended by then (an Executable outlives its Execute calls).
//
// A reused arena holds the previous run's bytes. Kernels never read memory
// they have not written in the same run, so results do not depend on them;
// with `poison` (executables compiled with --xlite_poison_dead_slices) every
// arena handed out is first filled with 0xFF bytes (NaN for floats, -1 for
// integers), the pattern of cpu::PoisonThunk, so a read of a stale value
// shows.
#ifndef XLITE_RUNTIME_ARENA_POOL_H_
#define XLITE_RUNTIME_ARENA_POOL_H_

#include <array>
#include <atomic>
#include <cstdint>

#include "absl/status/statusor.h"

namespace xlite::runtime {

class ArenaPool {
 public:
  // Arenas kept for reuse at most: as many calls at once as this reuse
  // their memory; more allocate and free as before.
  static constexpr int kSlots = 8;
  static constexpr int64_t kAlignment = 64;

  // Arenas of `bytes` (at least 1; rounded up to kAlignment).
  explicit ArenaPool(int64_t bytes, bool poison = false);
  ~ArenaPool();
  ArenaPool(const ArenaPool&) = delete;
  ArenaPool& operator=(const ArenaPool&) = delete;

  // One call's arena; gives it back to the pool on destruction.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept : pool_(other.pool_), data_(other.data_) {
      other.pool_ = nullptr;
      other.data_ = nullptr;
    }
    Lease& operator=(Lease&& other) noexcept;
    ~Lease();
    uint8_t* data() const { return data_; }

   private:
    friend class ArenaPool;
    Lease(ArenaPool* pool, uint8_t* data) : pool_(pool), data_(data) {}
    ArenaPool* pool_ = nullptr;
    uint8_t* data_ = nullptr;
  };

  // A cached arena, else a new one. ResourceExhausted naming the bytes when
  // the allocation fails.
  absl::StatusOr<Lease> Acquire();

  int64_t bytes() const { return bytes_; }
  bool poison() const { return poison_; }
  // Arenas allocated so far and arenas waiting in the slots (tests).
  int64_t allocations() const { return allocations_.load(std::memory_order_relaxed); }
  int64_t cached() const;

 private:
  void Release(uint8_t* data);

  const int64_t bytes_;
  const bool poison_;
  std::array<std::atomic<uint8_t*>, kSlots> slots_{};
  std::atomic<int64_t> allocations_{0};
};

}  // namespace xlite::runtime

#endif  // XLITE_RUNTIME_ARENA_POOL_H_
