// CopyThunk: copies the bytes of one slice into another (an array copy whose
// source and destination have the same layout; a layout-changing copy is a
// kernel). Also used for pass-through custom calls (sharding annotations).
#ifndef XLITE_CPU_COPY_THUNK_H_
#define XLITE_CPU_COPY_THUNK_H_

#include "xlite/cpu/thunk.h"

namespace xlite::cpu {

class CopyThunk final : public Thunk {
 public:
  // Copies min(source.size, destination.size) bytes; both slices hold the
  // same array, so the sizes agree when emitted.
  CopyThunk(ThunkInfo info, BufferSlice source, BufferSlice destination);

  absl::Status Execute(const ExecuteParams& params) const override;
  std::vector<BufferUse> buffer_uses() const override;
  std::string Details() const override;

  const BufferSlice& source() const { return source_; }
  const BufferSlice& destination() const { return destination_; }

 private:
  BufferSlice source_, destination_;
};

}  // namespace xlite::cpu

#endif  // XLITE_CPU_COPY_THUNK_H_
