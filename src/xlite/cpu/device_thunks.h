// Thunks that read the device's state: replica-id and partition-id (the
// ids ExecuteParams carries; 0 on one device) and rng-get-and-update-state
// (XLA's per-executable 128-bit rng state).
#ifndef XLITE_CPU_DEVICE_THUNKS_H_
#define XLITE_CPU_DEVICE_THUNKS_H_

#include <atomic>
#include <cstdint>

#include "xlite/cpu/thunk.h"

namespace xlite::cpu {

// replica-id / partition-id: writes the id as a u32 scalar.
class DeviceIdThunk final : public Thunk {
 public:
  // kind: kReplicaId or kPartitionId.
  DeviceIdThunk(Kind kind, ThunkInfo info, BufferSlice destination);

  absl::Status Execute(const ExecuteParams& params) const override;
  std::vector<BufferUse> buffer_uses() const override;

 private:
  BufferSlice destination_;
};

// rng-get-and-update-state: writes the state before advancing it by `delta`
// as u64[2] {low, high}. The state is the executable's (shared by every
// thread running it), starting at XLA:CPU's initial value 0x7012395, as the
// interpreter starts each evaluation.
class RngGetAndUpdateStateThunk final : public Thunk {
 public:
  RngGetAndUpdateStateThunk(ThunkInfo info, BufferSlice destination, int64_t delta);

  static constexpr uint64_t kInitialState = 0x7012395;

  absl::Status Execute(const ExecuteParams& params) const override;
  std::vector<BufferUse> buffer_uses() const override;
  std::string Details() const override;

 private:
  BufferSlice destination_;
  int64_t delta_;
  mutable std::atomic<uint64_t> state_{0};
};

// Writes a poison pattern (0xFF bytes: NaN for floats, -1 for integers)
// over slices whose buffers are dead, so that a planner error (two live
// buffers sharing bytes) shows up as a wrong answer
// (--xlite_poison_dead_slices).
class PoisonThunk final : public Thunk {
 public:
  PoisonThunk(ThunkInfo info, std::vector<BufferSlice> slices);
  static constexpr uint8_t kPattern = 0xFF;

  absl::Status Execute(const ExecuteParams& params) const override;
  std::vector<BufferUse> buffer_uses() const override;

  const std::vector<BufferSlice>& slices() const { return slices_; }

 private:
  std::vector<BufferSlice> slices_;
};

}  // namespace xlite::cpu

#endif  // XLITE_CPU_DEVICE_THUNKS_H_
