#include "xlite/cpu/thunk.h"

#include <new>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace xlite::cpu {

void* BufferAllocations::EmptyAddress() {
  alignas(64) static uint8_t empty[64];
  return empty;
}

const char* ThunkKindName(Thunk::Kind kind) {
  switch (kind) {
    case Thunk::Kind::kKernel:
      return "kKernel";
    case Thunk::Kind::kCopy:
      return "kCopy";
    case Thunk::Kind::kWhile:
      return "kWhile";
    case Thunk::Kind::kConditional:
      return "kConditional";
    case Thunk::Kind::kCall:
      return "kCall";
    case Thunk::Kind::kReplicaId:
      return "kReplicaId";
    case Thunk::Kind::kPartitionId:
      return "kPartitionId";
    case Thunk::Kind::kRngGetAndUpdateState:
      return "kRngGetAndUpdateState";
    case Thunk::Kind::kCustomCall:
      return "kCustomCall";
    case Thunk::Kind::kPoison:
      return "kPoison";
    case Thunk::Kind::kLibrary:
      return "kLibrary";
    case Thunk::Kind::kCollective:
      return "kCollective";
    case Thunk::Kind::kAsyncStart:
      return "kAsyncStart";
    case Thunk::Kind::kAsyncDone:
      return "kAsyncDone";
    case Thunk::Kind::kHostTransfer:
      return "kHostTransfer";
    case Thunk::Kind::kCommandBuffer:
      return "kCommandBuffer";
  }
  return "kUnknown";
}

std::string SliceToString(const BufferSlice& slice) {
  if (slice.allocation < 0) return "empty";
  return absl::StrCat("a", slice.allocation, "[", slice.offset, ":+", slice.size, "]");
}

void ThunkSequence::Append(ThunkSequence&& other) {
  for (auto& t : other.thunks_) thunks_.push_back(std::move(t));
  other.thunks_.clear();
}

void ThunkSequence::Insert(size_t at, std::unique_ptr<Thunk> thunk) {
  thunks_.insert(thunks_.begin() + static_cast<std::ptrdiff_t>(std::min(at, thunks_.size())),
                 std::move(thunk));
}

int64_t ThunkSequence::CountAll() const {
  int64_t n = 0;
  for (const auto& t : thunks_) {
    ++n;
    for (const auto& [label, nested] : t->nested()) n += nested->CountAll();
  }
  return n;
}

namespace {

void Print(const ThunkSequence& sequence, int depth, int64_t& counter, std::string& out) {
  const std::string indent(2 * depth, ' ');
  for (const auto& t : sequence) {
    const ThunkInfo& info = t->info();
    absl::StrAppendFormat(&out, "%s%03d: %-22s %s (%s)", indent, ++counter,
                          ThunkKindName(t->kind()), info.instruction, info.opcode);
    std::string reads, writes;
    // Control flow lists its nested thunks' uses under them, not here.
    if (t->nested().empty()) {
      for (const BufferUse& use : t->buffer_uses()) {
        std::string& list = use.access == BufferUse::Access::kRead ? reads : writes;
        absl::StrAppend(&list, " ", SliceToString(use.slice));
      }
    }
    if (!reads.empty()) absl::StrAppend(&out, "  reads", reads);
    if (!writes.empty()) absl::StrAppend(&out, "  writes", writes);
    const std::string details = t->Details();
    if (!details.empty()) absl::StrAppend(&out, "  ", details);
    if (!info.op_name.empty()) absl::StrAppend(&out, "  op_name=\"", info.op_name, "\"");
    out += "\n";
    for (const auto& [label, nested] : t->nested()) {
      absl::StrAppend(&out, indent, "  ", label, ":\n");
      Print(*nested, depth + 2, counter, out);
    }
  }
}

}  // namespace

std::string ThunkSequence::ToString() const {
  std::string out;
  int64_t counter = 0;
  Print(*this, 0, counter, out);
  return out;
}

void AppendBufferUses(const ThunkSequence& sequence, std::vector<BufferUse>& uses) {
  for (const auto& t : sequence) {
    std::vector<BufferUse> u = t->buffer_uses();
    uses.insert(uses.end(), u.begin(), u.end());
  }
}

absl::Status CallCatchingOutOfMemory(absl::FunctionRef<absl::Status()> call) {
  try {
    return call();
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("out of memory in a host library call");
  }
}

hostlib::HostParallelism HostParallelismOf(TaskRunner* runner) {
  hostlib::HostParallelism parallelism;
  if (runner != nullptr && runner->num_threads() > 1) {
    parallelism.threads = runner->num_threads();
    parallelism.run = [runner](int64_t parts, absl::FunctionRef<void(int64_t)> fn) {
      runner->ParallelFor(parts, fn);
    };
  }
  return parallelism;
}

}  // namespace xlite::cpu
