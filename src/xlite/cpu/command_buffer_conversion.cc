#include "xlite/cpu/command_buffer_conversion.h"

#include <memory>
#include <utility>
#include <vector>

#include "xlite/cpu/command_buffer_thunk.h"
#include "xlite/support/status.h"

namespace xlite::cpu {

absl::StatusOr<int64_t> ConvertToCommandBuffers(ThunkSequence& sequence,
                                                const CommandBufferConversionOptions& options) {
  int64_t made = 0;
  std::vector<std::unique_ptr<Thunk>> thunks = sequence.Release();
  ThunkSequence run;
  int64_t run_commands = 0;

  auto flush = [&]() -> absl::Status {
    if (run.empty()) return absl::OkStatus();
    if (run_commands >= options.min_commands) {
      ASSIGN_OR_RETURN(std::unique_ptr<CommandBufferThunk> buffer,
                       CommandBufferThunk::Create(std::move(run)));
      sequence.push_back(std::move(buffer));
      ++made;
    } else {
      sequence.Append(std::move(run));
    }
    run = ThunkSequence();
    run_commands = 0;
    return absl::OkStatus();
  };

  for (std::unique_ptr<Thunk>& thunk : thunks) {
    if (CommandBufferThunk::CanRecord(*thunk)) {
      run_commands += CommandBufferThunk::CountCommands(*thunk);
      run.push_back(std::move(thunk));
      continue;
    }
    RETURN_IF_ERROR(flush());
    for (ThunkSequence* nested : thunk->mutable_nested()) {
      ASSIGN_OR_RETURN(int64_t n, ConvertToCommandBuffers(*nested, options));
      made += n;
    }
    sequence.push_back(std::move(thunk));
  }
  RETURN_IF_ERROR(flush());
  return made;
}

}  // namespace xlite::cpu
