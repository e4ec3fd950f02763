// The thunk pass `command-buffer-conversion`: replaces each maximal run of
// thunks a CommandBufferThunk can record (CommandBufferThunk::CanRecord) by
// one CommandBufferThunk, in the sequence and in every sequence nested in a
// thunk it leaves alone (the body of a while that also runs a library call,
// an async start's work, ...).
//
// A run is converted when it records at least `min_commands` commands: two
// kernels in a row, or a single while whose condition and body are all
// kernels (a loop is many commands per run). A lone kernel or copy stays as
// it is: replaying one command saves nothing over calling it.
//
// Runs only after the JIT has bound the kernels (an unbound kernel is not
// recordable) and before the executable builds its execution graphs from
// the buffer uses.
#ifndef XLITE_CPU_COMMAND_BUFFER_CONVERSION_H_
#define XLITE_CPU_COMMAND_BUFFER_CONVERSION_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "xlite/cpu/thunk.h"

namespace xlite::cpu {

struct CommandBufferConversionOptions {
  int64_t min_commands = 2;
};

// The number of command buffers made (0: the sequence is unchanged).
absl::StatusOr<int64_t> ConvertToCommandBuffers(ThunkSequence& sequence,
                                                const CommandBufferConversionOptions& options = {});

}  // namespace xlite::cpu

#endif  // XLITE_CPU_COMMAND_BUFFER_CONVERSION_H_
