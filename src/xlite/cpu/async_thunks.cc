#include "xlite/cpu/async_thunks.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "xlite/codegen/denormals.h"

namespace xlite::cpu {

AsyncExecuteState::AsyncExecuteState(SideStreams& streams, int64_t num_slots)
    : streams_(streams), slots_(static_cast<size_t>(std::max<int64_t>(num_slots, 0))) {}

AsyncExecuteState::~AsyncExecuteState() { WaitAll().IgnoreError(); }

absl::Status AsyncExecuteState::Launch(int64_t slot, const ThunkInfo& start,
                                       const ThunkSequence& work, const ExecuteParams& params) {
  if (params.executor == nullptr) {
    return absl::InternalError(
        absl::StrCat("'", start.instruction, "' launches work but no executor was given"));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (slot < 0 || slot >= num_slots()) {
      return absl::InternalError(
          absl::StrCat("'", start.instruction, "' uses async slot ", slot, " of ", num_slots()));
    }
    Slot& s = slots_[slot];
    if (s.in_flight) {
      return absl::InternalError(absl::StrCat("'", start.instruction,
                                              "' starts again while its work from '", s.start,
                                              "' has not been waited for"));
    }
    s.in_flight = true;
    s.finished = work.empty();
    s.status = absl::OkStatus();
    s.start = start.instruction;
    if (s.finished) return absl::OkStatus();
  }
  streams_.Launch([this, slot, &work, params] {
    // MXCSR is per thread: the side stream flushes denormals as the caller does.
    codegen::ScopedFlushDenormals denormals(params.flush_denormals);
    absl::Status status = params.executor->Run(work, params);
    std::lock_guard<std::mutex> lock(mu_);
    slots_[slot].finished = true;
    slots_[slot].status = std::move(status);
    // Notified under the lock: a waiter may destroy this state as soon as
    // it sees `finished`.
    finished_cv_.notify_all();
  });
  return absl::OkStatus();
}

absl::Status AsyncExecuteState::Wait(int64_t slot, const ThunkInfo& done) {
  std::unique_lock<std::mutex> lock(mu_);
  if (slot < 0 || slot >= num_slots() || !slots_[slot].in_flight) {
    return absl::InternalError(absl::StrCat("'", done.instruction, "' waits for async slot ", slot,
                                            ", which has no work"));
  }
  Slot& s = slots_[slot];
  finished_cv_.wait(lock, [&] { return s.finished; });
  s.in_flight = false;
  if (s.status.ok()) return absl::OkStatus();
  absl::Status error(s.status.code(), absl::StrCat(done.opcode, " '", done.instruction,
                                                   "': the asynchronous work of '", s.start,
                                                   "' failed: ", s.status.message()));
  s.status = absl::OkStatus();
  return error;
}

absl::Status AsyncExecuteState::WaitAll() {
  std::unique_lock<std::mutex> lock(mu_);
  absl::Status first;
  for (Slot& s : slots_) {
    if (!s.in_flight) continue;
    finished_cv_.wait(lock, [&] { return s.finished; });
    s.in_flight = false;
    if (!s.status.ok() && first.ok()) {
      first = absl::Status(s.status.code(), absl::StrCat("the asynchronous work of '", s.start,
                                                         "' failed: ", s.status.message()));
    }
    s.status = absl::OkStatus();
  }
  return first;
}

AsyncStartThunk::AsyncStartThunk(ThunkInfo info, int64_t slot, std::string stream,
                                 ThunkSequence work)
    : Thunk(Kind::kAsyncStart, std::move(info)),
      slot_(slot),
      stream_(std::move(stream)),
      work_(std::move(work)) {}

absl::Status AsyncStartThunk::Execute(const ExecuteParams& params) const {
  if (params.async != nullptr) return params.async->Launch(slot_, info(), work_, params);
  if (params.executor == nullptr) {
    return absl::InternalError(
        absl::StrCat("'", info().instruction, "' runs nested thunks but no executor was given"));
  }
  return params.executor->Run(work_, params);
}

std::vector<BufferUse> AsyncStartThunk::buffer_uses() const {
  std::vector<BufferUse> uses;
  AppendBufferUses(work_, uses);
  return uses;
}

std::vector<std::pair<std::string, const ThunkSequence*>> AsyncStartThunk::nested() const {
  return {{absl::StrCat("work (side stream \"", stream_, "\")"), &work_}};
}

std::string AsyncStartThunk::Details() const { return absl::StrCat("slot=", slot_); }

AsyncDoneThunk::AsyncDoneThunk(ThunkInfo info, int64_t slot, std::string start,
                               std::vector<BufferUse> uses)
    : Thunk(Kind::kAsyncDone, std::move(info)),
      slot_(slot),
      start_(std::move(start)),
      uses_(std::move(uses)) {}

absl::Status AsyncDoneThunk::Execute(const ExecuteParams& params) const {
  if (params.async == nullptr) return absl::OkStatus();  // the start ran the work
  return params.async->Wait(slot_, info());
}

std::string AsyncDoneThunk::Details() const {
  return absl::StrCat("slot=", slot_, " start=", start_);
}

std::unique_ptr<AsyncStartThunk> MakeAsyncStart(ThunkInfo start_info, int64_t slot,
                                                std::string stream, ThunkSequence work) {
  return std::make_unique<AsyncStartThunk>(std::move(start_info), slot, std::move(stream),
                                           std::move(work));
}

std::unique_ptr<AsyncDoneThunk> MakeAsyncDone(ThunkInfo done_info, const AsyncStartThunk& start) {
  return std::make_unique<AsyncDoneThunk>(std::move(done_info), start.slot(),
                                          start.info().instruction, start.buffer_uses());
}

int64_t CountAsyncSlots(const ThunkSequence& sequence) {
  int64_t n = 0;
  for (const auto& t : sequence) {
    if (t->kind() == Thunk::Kind::kAsyncStart) {
      if (const auto* start = dynamic_cast<const AsyncStartThunk*>(t.get())) {
        n = std::max(n, start->slot() + 1);
      }
    }
    for (const auto& [label, nested] : t->nested()) n = std::max(n, CountAsyncSlots(*nested));
  }
  return n;
}

}  // namespace xlite::cpu
