#include "xlite/cpu/command_buffer_thunk.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "xlite/codegen/denormals.h"
#include "xlite/cpu/control_flow_thunks.h"
#include "xlite/cpu/copy_thunk.h"
#include "xlite/cpu/device_thunks.h"
#include "xlite/cpu/kernel_thunk.h"
#include "xlite/support/status.h"

namespace xlite::cpu {
namespace {

bool CanRecordAll(const Thunk& thunk) {
  for (const auto& [label, sequence] : thunk.nested()) {
    for (const auto& t : *sequence) {
      if (!CommandBufferThunk::CanRecord(*t)) return false;
    }
  }
  return true;
}

}  // namespace

bool CommandBufferThunk::CanRecord(const Thunk& thunk) {
  if (thunk.info().has_side_effect) return false;
  switch (thunk.kind()) {
    case Kind::kKernel:
      return static_cast<const KernelThunk&>(thunk).function() != nullptr;
    case Kind::kCopy:
    case Kind::kPoison:
      return true;
    case Kind::kWhile:
    case Kind::kConditional:
    case Kind::kCall:
      return CanRecordAll(thunk);
    default:
      return false;
  }
}

int64_t CommandBufferThunk::CountCommands(const Thunk& thunk) {
  if (!CanRecord(thunk)) return 0;
  int64_t n = 0;
  switch (thunk.kind()) {
    case Kind::kPoison:
      for (const BufferSlice& s : static_cast<const PoisonThunk&>(thunk).slices()) {
        if (s.size > 0) ++n;
      }
      return n;
    case Kind::kCall:
      break;
    case Kind::kWhile:
    case Kind::kConditional:
      n = 1;
      break;
    default:
      return 1;
  }
  for (const auto& [label, sequence] : thunk.nested()) {
    for (const auto& t : *sequence) n += CountCommands(*t);
  }
  return n;
}

CommandBufferThunk::CommandBufferThunk(ThunkInfo info, ThunkSequence thunks)
    : Thunk(Kind::kCommandBuffer, std::move(info)), thunks_(std::move(thunks)) {}

absl::StatusOr<std::unique_ptr<CommandBufferThunk>> CommandBufferThunk::Create(
    ThunkSequence thunks) {
  ThunkInfo info;
  info.opcode = "command-buffer";
  if (!thunks.empty()) {
    info.instruction = thunks[0].info().instruction;
    if (thunks.size() > 1)
      absl::StrAppend(&info.instruction, "..", thunks[thunks.size() - 1].info().instruction);
  }
  std::unique_ptr<CommandBufferThunk> buffer(
      new CommandBufferThunk(std::move(info), std::move(thunks)));
  RETURN_IF_ERROR(buffer->Record(buffer->thunks_));
  if (buffer->commands_.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max()) ||
      buffer->args_.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return absl::InvalidArgumentError("command buffer too large to record");
  }

  // The union of the recorded thunks' uses, first occurrence kept.
  std::vector<BufferUse> all;
  AppendBufferUses(buffer->thunks_, all);
  absl::flat_hash_set<std::tuple<int64_t, int64_t, int64_t, bool>> seen;
  for (const BufferUse& u : all) {
    if (seen.insert({u.slice.allocation, u.slice.offset, u.slice.size,
                     u.access == BufferUse::Access::kWrite})
            .second) {
      buffer->uses_.push_back(u);
    }
  }
  return buffer;
}

int32_t CommandBufferThunk::AddArg(const BufferSlice& slice) {
  args_.push_back(slice);
  return static_cast<int32_t>(args_.size() - 1);
}

absl::Status CommandBufferThunk::Record(const ThunkSequence& sequence) {
  for (const auto& t : sequence) RETURN_IF_ERROR(RecordThunk(*t));
  return absl::OkStatus();
}

absl::Status CommandBufferThunk::RecordThunk(const Thunk& thunk) {
  if (!CanRecord(thunk)) {
    return absl::InvalidArgumentError(absl::StrCat("a command buffer cannot record ",
                                                   ThunkKindName(thunk.kind()), " '",
                                                   thunk.info().instruction, "'"));
  }
  switch (thunk.kind()) {
    case Kind::kKernel: {
      const auto& k = static_cast<const KernelThunk&>(thunk);
      Command c;
      c.op = Command::Op::kKernel;
      c.kernel = k.function();
      c.first_arg = static_cast<int32_t>(args_.size());
      for (const BufferSlice& s : k.buffers()) AddArg(s);
      c.num_args = static_cast<int32_t>(k.buffers().size());
      // The partitions the work can ever be worth (KernelThunk::Partitions
      // before the run's thread count is known).
      c.size = std::max<int64_t>(
          1, std::min(k.max_partitions(), k.work() / KernelThunk::kMinWorkPerPartition));
      c.work = k.work();
      c.next = static_cast<int32_t>(commands_.size() + 1);
      commands_.push_back(c);
      return absl::OkStatus();
    }
    case Kind::kCopy: {
      const auto& copy = static_cast<const CopyThunk&>(thunk);
      const int64_t bytes = std::min(copy.source().size, copy.destination().size);
      if (bytes <= 0) return absl::OkStatus();
      Command c;
      c.op = Command::Op::kCopy;
      c.first_arg = AddArg(copy.source());
      AddArg(copy.destination());
      c.num_args = 2;
      c.size = bytes;
      c.next = static_cast<int32_t>(commands_.size() + 1);
      commands_.push_back(c);
      return absl::OkStatus();
    }
    case Kind::kPoison:
      for (const BufferSlice& s : static_cast<const PoisonThunk&>(thunk).slices()) {
        if (s.size <= 0) continue;
        Command c;
        c.op = Command::Op::kPoison;
        c.first_arg = AddArg(s);
        c.num_args = 1;
        c.size = s.size;
        c.next = static_cast<int32_t>(commands_.size() + 1);
        commands_.push_back(c);
      }
      return absl::OkStatus();
    case Kind::kCall:
      return Record(static_cast<const CallThunk&>(thunk).callee());
    case Kind::kWhile:
    case Kind::kConditional: {
      has_control_flow_ = true;
      const size_t at = commands_.size();
      Command c;
      std::vector<const ThunkSequence*> nested;
      if (thunk.kind() == Kind::kWhile) {
        const auto& w = static_cast<const WhileThunk&>(thunk);
        c.op = Command::Op::kWhile;
        c.first_arg = AddArg(w.predicate());
        nested = {&w.condition(), &w.body()};
      } else {
        const auto& cond = static_cast<const ConditionalThunk&>(thunk);
        c.op = Command::Op::kConditional;
        c.selector_is_pred = cond.selector_is_pred();
        c.first_arg = AddArg(cond.selector());
        for (const ThunkSequence& b : cond.branches()) nested.push_back(&b);
      }
      c.num_args = 1;
      commands_.push_back(c);
      // Ranges are recorded after the nested commands, so reserve them first
      // (a nested while adds its own ranges while we record).
      const size_t first_range = ranges_.size();
      ranges_.resize(ranges_.size() + nested.size());
      for (size_t i = 0; i < nested.size(); ++i) {
        const auto begin = static_cast<int32_t>(commands_.size());
        RETURN_IF_ERROR(Record(*nested[i]));
        ranges_[first_range + i] = {begin, static_cast<int32_t>(commands_.size())};
      }
      commands_[at].first_range = static_cast<int32_t>(first_range);
      commands_[at].num_ranges = static_cast<int32_t>(nested.size());
      commands_[at].next = static_cast<int32_t>(commands_.size());
      return absl::OkStatus();
    }
    default:
      return absl::InternalError("unreachable: CanRecord accepted an unknown kind");
  }
}

void CommandBufferThunk::Replay(CommandRange range, void* const* args,
                                const ExecuteParams& params) const {
  const Command* commands = commands_.data();
  int32_t i = range.begin;
  while (i < range.end) {
    const Command& c = commands[i];
    switch (c.op) {
      case Command::Op::kKernel: {
        void** pointers = const_cast<void**>(args + c.first_arg);
        if (c.size <= 1 || params.runner == nullptr || params.runner->num_threads() <= 1) {
          c.kernel(pointers, 0, 1);
          break;
        }
        const int64_t parts = KernelThunk::Partitions(c.work, c.size, params.runner->num_threads());
        if (parts <= 1) {
          c.kernel(pointers, 0, 1);
          break;
        }
        const codegen::KernelFunction fn = c.kernel;
        const bool flush = params.flush_denormals;
        params.runner->ParallelFor(parts, [&](int64_t p) {
          codegen::ScopedFlushDenormals denormals(flush);  // pool threads' MXCSR
          fn(pointers, p, parts);
        });
        break;
      }
      case Command::Op::kCopy: {
        const void* from = args[c.first_arg];
        void* to = args[c.first_arg + 1];
        if (to != from) std::memmove(to, from, static_cast<size_t>(c.size));
        break;
      }
      case Command::Op::kPoison:
        std::memset(args[c.first_arg], PoisonThunk::kPattern, static_cast<size_t>(c.size));
        break;
      case Command::Op::kWhile: {
        const auto* predicate = static_cast<const uint8_t*>(args[c.first_arg]);
        const CommandRange condition = ranges_[c.first_range];
        const CommandRange body = ranges_[c.first_range + 1];
        while (true) {
          Replay(condition, args, params);
          if ((*predicate & 1) == 0) break;
          Replay(body, args, params);
        }
        break;
      }
      case Command::Op::kConditional: {
        const void* selector = args[c.first_arg];
        int64_t branch;
        if (c.selector_is_pred) {
          branch = (*static_cast<const uint8_t*>(selector) & 1) ? 0 : 1;
        } else {
          int32_t index;
          std::memcpy(&index, selector, sizeof(index));
          branch = ConditionalThunk::BranchFor(index, c.num_ranges);
        }
        Replay(ranges_[c.first_range + branch], args, params);
        break;
      }
    }
    i = c.next;
  }
}

absl::Status CommandBufferThunk::Execute(const ExecuteParams& params) const {
  // Bind this run's addresses once; every command (and every iteration of a
  // recorded loop) reads them from here.
  // (Left uninitialized: every entry is written before the replay.)
  constexpr size_t kOnStack = 64;
  void* on_stack[kOnStack];
  std::unique_ptr<void*[]> on_heap;
  void** args = on_stack;
  if (args_.size() > kOnStack) {
    on_heap.reset(new void*[args_.size()]);
    args = on_heap.get();
  }
  for (size_t i = 0; i < args_.size(); ++i) args[i] = params.buffers->Get(args_[i]);
  Replay({0, static_cast<int32_t>(commands_.size())}, args, params);
  return absl::OkStatus();
}

std::vector<BufferUse> CommandBufferThunk::buffer_uses() const { return uses_; }

std::vector<std::pair<std::string, const ThunkSequence*>> CommandBufferThunk::nested() const {
  return {{"commands", &thunks_}};
}

std::string CommandBufferThunk::Details() const {
  return absl::StrCat("commands=", commands_.size(), " args=", args_.size());
}

}  // namespace xlite::cpu
