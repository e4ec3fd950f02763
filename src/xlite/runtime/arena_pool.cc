#include "xlite/runtime/arena_pool.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace xlite::runtime {
namespace {

int64_t BlockBytes(int64_t n) {
  const int64_t a = ArenaPool::kAlignment;
  return (std::max<int64_t>(n, 1) + a - 1) / a * a;
}

}  // namespace

ArenaPool::ArenaPool(int64_t bytes, bool poison) : bytes_(BlockBytes(bytes)), poison_(poison) {}

ArenaPool::~ArenaPool() {
  for (std::atomic<uint8_t*>& slot : slots_) std::free(slot.exchange(nullptr));
}

ArenaPool::Lease& ArenaPool::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    if (pool_ != nullptr) pool_->Release(data_);
    pool_ = other.pool_;
    data_ = other.data_;
    other.pool_ = nullptr;
    other.data_ = nullptr;
  }
  return *this;
}

ArenaPool::Lease::~Lease() {
  if (pool_ != nullptr) pool_->Release(data_);
}

absl::StatusOr<ArenaPool::Lease> ArenaPool::Acquire() {
  uint8_t* data = nullptr;
  for (std::atomic<uint8_t*>& slot : slots_) {
    if (slot.load(std::memory_order_relaxed) == nullptr) continue;
    data = slot.exchange(nullptr, std::memory_order_acquire);
    if (data != nullptr) break;
  }
  if (data == nullptr) {
    data = static_cast<uint8_t*>(std::aligned_alloc(kAlignment, static_cast<size_t>(bytes_)));
    if (data == nullptr) {
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot allocate ", bytes_, " bytes for one run of the executable"));
    }
    allocations_.fetch_add(1, std::memory_order_relaxed);
  }
  if (poison_) std::memset(data, 0xFF, static_cast<size_t>(bytes_));
  return Lease(this, data);
}

void ArenaPool::Release(uint8_t* data) {
  for (std::atomic<uint8_t*>& slot : slots_) {
    uint8_t* empty = nullptr;
    if (slot.load(std::memory_order_relaxed) == nullptr &&
        slot.compare_exchange_strong(empty, data, std::memory_order_release,
                                     std::memory_order_relaxed)) {
      return;
    }
  }
  std::free(data);
}

int64_t ArenaPool::cached() const {
  int64_t n = 0;
  for (const std::atomic<uint8_t*>& slot : slots_) n += slot.load() != nullptr ? 1 : 0;
  return n;
}

}  // namespace xlite::runtime
