// LibraryThunk: one call into a host library (hostlib's matmul, convolution,
// FFT, sort, top-k, Cholesky, triangular solve, a custom-call target) on the
// addresses of the slices it declares. The emitter (library_emitter.h) binds
// the call's shapes and attributes into `call` at compile time; at run time
// the thunk only resolves addresses and calls it.
#ifndef XLITE_CPU_LIBRARY_THUNK_H_
#define XLITE_CPU_LIBRARY_THUNK_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "xlite/cpu/thunk.h"

namespace xlite::cpu {

class LibraryThunk final : public Thunk {
 public:
  // Receives one address per use, in the order of `uses`.
  using Call = std::function<absl::Status(absl::Span<void* const> addresses)>;
  // The same, with the run's threads (nullptr: the calling thread only).
  using ParallelCall =
      std::function<absl::Status(absl::Span<void* const> addresses, TaskRunner* runner)>;

  // kind: kLibrary or kCustomCall. `details`: what the dump prints
  // ("matmul b=1 m=64 k=32 n=16 f32").
  LibraryThunk(Kind kind, ThunkInfo info, std::vector<BufferUse> uses, Call call,
               std::string details);
  LibraryThunk(Kind kind, ThunkInfo info, std::vector<BufferUse> uses, ParallelCall call,
               std::string details);

  absl::Status Execute(const ExecuteParams& params) const override;
  std::vector<BufferUse> buffer_uses() const override { return uses_; }
  std::string Details() const override { return details_; }

 private:
  std::vector<BufferUse> uses_;
  ParallelCall call_;
  std::string details_;
};

}  // namespace xlite::cpu

#endif  // XLITE_CPU_LIBRARY_THUNK_H_
