#include "xlite/cpu/library_thunk.h"

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"

namespace xlite::cpu {

LibraryThunk::LibraryThunk(Kind kind, ThunkInfo info, std::vector<BufferUse> uses, Call call,
                           std::string details)
    : LibraryThunk(kind, std::move(info), std::move(uses),
                   ParallelCall([call = std::move(call)](absl::Span<void* const> addresses,
                                                         TaskRunner*) { return call(addresses); }),
                   std::move(details)) {}

LibraryThunk::LibraryThunk(Kind kind, ThunkInfo info, std::vector<BufferUse> uses,
                           ParallelCall call, std::string details)
    : Thunk(kind, std::move(info)),
      uses_(std::move(uses)),
      call_(std::move(call)),
      details_(std::move(details)) {}

absl::Status LibraryThunk::Execute(const ExecuteParams& params) const {
  absl::InlinedVector<void*, 8> addresses(uses_.size());
  for (size_t i = 0; i < uses_.size(); ++i) addresses[i] = params.buffers->Get(uses_[i].slice);
  absl::Status status = CallCatchingOutOfMemory([&] { return call_(addresses, params.runner); });
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat("'", info().instruction, "' (", info().opcode,
                                                    "): ", status.message()));
  }
  return status;
}

}  // namespace xlite::cpu
