#include "xlite/cpu/control_flow_thunks.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "xlite/support/status.h"

namespace xlite::cpu {
namespace {

absl::Status RunNested(const ThunkSequence& sequence, const ExecuteParams& params,
                       const ThunkInfo& info) {
  if (params.executor == nullptr) {
    return absl::InternalError(
        absl::StrCat("'", info.instruction, "' runs nested thunks but no executor was given"));
  }
  return params.executor->Run(sequence, params);
}

}  // namespace

WhileThunk::WhileThunk(ThunkInfo info, ThunkSequence condition, BufferSlice predicate,
                       ThunkSequence body)
    : Thunk(Kind::kWhile, std::move(info)),
      condition_(std::move(condition)),
      predicate_(predicate),
      body_(std::move(body)) {}

absl::Status WhileThunk::Execute(const ExecuteParams& params) const {
  const uint8_t* predicate = static_cast<const uint8_t*>(params.buffers->Get(predicate_));
  while (true) {
    RETURN_IF_ERROR(RunNested(condition_, params, info()));
    if ((*predicate & 1) == 0) return absl::OkStatus();
    RETURN_IF_ERROR(RunNested(body_, params, info()));
  }
}

std::vector<BufferUse> WhileThunk::buffer_uses() const {
  std::vector<BufferUse> uses;
  AppendBufferUses(condition_, uses);
  uses.push_back(BufferUse::Read(predicate_));
  AppendBufferUses(body_, uses);
  return uses;
}

std::vector<std::pair<std::string, const ThunkSequence*>> WhileThunk::nested() const {
  return {{"condition", &condition_}, {"body", &body_}};
}

std::string WhileThunk::Details() const {
  return absl::StrCat("predicate=", SliceToString(predicate_));
}

ConditionalThunk::ConditionalThunk(ThunkInfo info, BufferSlice selector, bool selector_is_pred,
                                   std::vector<ThunkSequence> branches)
    : Thunk(Kind::kConditional, std::move(info)),
      selector_(selector),
      selector_is_pred_(selector_is_pred),
      branches_(std::move(branches)) {}

int64_t ConditionalThunk::BranchFor(int64_t index, int64_t count) {
  return index < 0 || index >= count ? count - 1 : index;
}

absl::Status ConditionalThunk::Execute(const ExecuteParams& params) const {
  const void* selector = params.buffers->Get(selector_);
  int64_t branch;
  if (selector_is_pred_) {
    branch = (*static_cast<const uint8_t*>(selector) & 1) ? 0 : 1;
  } else {
    int32_t index;
    std::memcpy(&index, selector, sizeof(index));
    branch = BranchFor(index, static_cast<int64_t>(branches_.size()));
  }
  return RunNested(branches_[branch], params, info());
}

std::vector<BufferUse> ConditionalThunk::buffer_uses() const {
  std::vector<BufferUse> uses = {BufferUse::Read(selector_)};
  for (const ThunkSequence& b : branches_) AppendBufferUses(b, uses);
  return uses;
}

std::vector<std::pair<std::string, const ThunkSequence*>> ConditionalThunk::nested() const {
  std::vector<std::pair<std::string, const ThunkSequence*>> out;
  for (size_t i = 0; i < branches_.size(); ++i) {
    out.emplace_back(absl::StrCat("branch ", i), &branches_[i]);
  }
  return out;
}

std::vector<ThunkSequence*> ConditionalThunk::mutable_nested() {
  std::vector<ThunkSequence*> out;
  for (ThunkSequence& b : branches_) out.push_back(&b);
  return out;
}

std::string ConditionalThunk::Details() const {
  return absl::StrCat("selector=", SliceToString(selector_), selector_is_pred_ ? " (pred)" : "");
}

CallThunk::CallThunk(ThunkInfo info, ThunkSequence callee)
    : Thunk(Kind::kCall, std::move(info)), callee_(std::move(callee)) {}

absl::Status CallThunk::Execute(const ExecuteParams& params) const {
  return RunNested(callee_, params, info());
}

std::vector<BufferUse> CallThunk::buffer_uses() const {
  std::vector<BufferUse> uses;
  AppendBufferUses(callee_, uses);
  return uses;
}

std::vector<std::pair<std::string, const ThunkSequence*>> CallThunk::nested() const {
  return {{"callee", &callee_}};
}

}  // namespace xlite::cpu
