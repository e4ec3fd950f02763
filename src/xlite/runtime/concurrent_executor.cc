#include "xlite/runtime/concurrent_executor.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <queue>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "xlite/codegen/denormals.h"
#include "xlite/cpu/kernel_thunk.h"

namespace xlite::runtime {
namespace {

// Whether `thunk` or one in its nested sequences (a loop's body, a branch)
// satisfies `pred`.
bool AnyInTree(const cpu::Thunk& thunk, absl::FunctionRef<bool(const cpu::Thunk&)> pred) {
  if (pred(thunk)) return true;
  for (const auto& [label, nested] : thunk.nested()) {
    for (const auto& t : *nested) {
      if (AnyInTree(*t, pred)) return true;
    }
  }
  return false;
}

// True for thunks whose effects their declared slices do not show (the
// thunk's own; nested ones count through AnyInTree).
bool HasHiddenEffects(const cpu::Thunk& thunk) {
  switch (thunk.kind()) {
    case cpu::Thunk::Kind::kRngGetAndUpdateState:
    case cpu::Thunk::Kind::kCollective:
    case cpu::Thunk::Kind::kHostTransfer:
    case cpu::Thunk::Kind::kAsyncStart:
    case cpu::Thunk::Kind::kAsyncDone:
      return true;
    default:
      break;
  }
  return thunk.info().has_side_effect;
}

bool KeepsProgramOrder(const cpu::Thunk& thunk) { return AnyInTree(thunk, HasHiddenEffects); }

// Forks an OpenMP team of the whole budget, itself or in a nested sequence
// (a loop around a convolution).
bool ForksThreadTeam(const cpu::Thunk& thunk) {
  return AnyInTree(thunk, [](const cpu::Thunk& t) { return t.info().forks_thread_team; });
}

// A thunk that finishes in nanoseconds (see ExecutionGraph::num_large).
bool IsSmall(const cpu::Thunk& thunk, const std::vector<cpu::BufferUse>& uses) {
  switch (thunk.kind()) {
    case cpu::Thunk::Kind::kKernel:  // a whole-loop kernel is control flow
      if (static_cast<const cpu::KernelThunk&>(thunk).runs_control_flow()) return false;
      break;
    case cpu::Thunk::Kind::kCopy:
    case cpu::Thunk::Kind::kPoison:
    case cpu::Thunk::Kind::kLibrary:
    case cpu::Thunk::Kind::kReplicaId:
    case cpu::Thunk::Kind::kPartitionId:
    case cpu::Thunk::Kind::kRngGetAndUpdateState:
      break;
    case cpu::Thunk::Kind::kCommandBuffer:  // small when all it recorded is
      for (const auto& [label, nested] : thunk.nested()) {
        for (const auto& t : *nested) {
          if (!IsSmall(*t, t->buffer_uses())) return false;
        }
      }
      return true;
    default:
      return false;
  }
  for (const cpu::BufferUse& u : uses) {
    if (u.slice.size > ExecutionGraph::kSmallBytes) return false;
  }
  return true;
}

// One earlier access to part of an allocation.
struct Access {
  int64_t begin = 0, end = 0;
  int32_t thunk = 0;
  bool write = false;
};

}  // namespace

ExecutionGraph ExecutionGraph::Build(const cpu::ThunkSequence& sequence) {
  const int32_t n = static_cast<int32_t>(sequence.size());
  ExecutionGraph g;
  g.in_degree.assign(n, 0);
  g.out_edges.resize(n);
  // The accesses a later thunk may conflict with, per allocation. A write
  // drops the accesses it covers: whatever conflicts with them conflicts
  // with the write, which already comes after them.
  absl::flat_hash_map<int64_t, std::vector<Access>> live;
  std::vector<int32_t> edge_to(n, -1);  // edge_to[i] == j: i -> j is added
  int32_t last_ordered = -1, last_team = -1;
  for (int32_t j = 0; j < n; ++j) {
    auto add_edge = [&](int32_t i) {
      if (i == j || edge_to[i] == j) return;
      edge_to[i] = j;
      g.out_edges[i].push_back(j);
      ++g.in_degree[j];
    };
    const cpu::Thunk& thunk = sequence[j];
    const std::vector<cpu::BufferUse> uses = thunk.buffer_uses();
    if (!IsSmall(thunk, uses)) ++g.num_large;
    for (const cpu::BufferUse& u : uses) {
      if (u.slice.allocation < 0 || u.slice.size <= 0) continue;
      auto it = live.find(u.slice.allocation);
      if (it == live.end()) continue;
      const bool write = u.access == cpu::BufferUse::Access::kWrite;
      const int64_t begin = u.slice.offset, end = u.slice.offset + u.slice.size;
      for (const Access& a : it->second) {
        if ((a.write || write) && a.begin < end && begin < a.end) add_edge(a.thunk);
      }
    }
    if (KeepsProgramOrder(thunk)) {
      if (last_ordered >= 0) add_edge(last_ordered);
      last_ordered = j;
    }
    if (ForksThreadTeam(thunk)) {
      if (last_team >= 0) add_edge(last_team);
      last_team = j;
    }
    for (const cpu::BufferUse& u : uses) {
      if (u.slice.allocation < 0 || u.slice.size <= 0) continue;
      std::vector<Access>& list = live[u.slice.allocation];
      const bool write = u.access == cpu::BufferUse::Access::kWrite;
      const int64_t begin = u.slice.offset, end = u.slice.offset + u.slice.size;
      if (write) {
        list.erase(
            std::remove_if(list.begin(), list.end(),
                           [&](const Access& a) { return begin <= a.begin && a.end <= end; }),
            list.end());
      } else if (!list.empty() && list.back().thunk == j && list.back().begin == begin &&
                 list.back().end == end) {
        continue;
      }
      list.push_back(Access{begin, end, j, write});
    }
    if (j > 0 && edge_to[j - 1] != j) g.is_chain = false;
  }
  return g;
}

int64_t ExecutionGraph::num_edges() const {
  int64_t n = 0;
  for (const auto& e : out_edges) n += static_cast<int64_t>(e.size());
  return n;
}

std::string ExecutionGraph::ToString() const {
  std::string out;
  for (size_t i = 0; i < out_edges.size(); ++i) {
    absl::StrAppend(&out, i, " ->");
    for (int32_t j : out_edges[i]) absl::StrAppend(&out, " ", j);
    out += "\n";
  }
  return out;
}

ExecutionGraphs::ExecutionGraphs(const cpu::ThunkSequence& top) { Add(top); }

void ExecutionGraphs::Add(const cpu::ThunkSequence& sequence) {
  built_[&sequence] = std::make_unique<ExecutionGraph>(ExecutionGraph::Build(sequence));
  for (const auto& t : sequence) {
    // A command buffer replays its recorded thunks itself; no executor runs them.
    if (t->kind() == cpu::Thunk::Kind::kCommandBuffer) continue;
    for (const auto& [label, nested] : t->nested()) Add(*nested);
  }
}

bool ExecutionGraphs::AllRunInOrder() const {
  for (const auto& [sequence, graph] : built_) {
    if (!graph->run_in_order()) return false;
  }
  return true;
}

const ExecutionGraph& ExecutionGraphs::For(const cpu::ThunkSequence& sequence) const {
  if (auto it = built_.find(&sequence); it != built_.end()) return *it->second;
  std::lock_guard<std::mutex> lock(mu_);
  std::unique_ptr<ExecutionGraph>& g = late_[&sequence];
  if (g == nullptr) g = std::make_unique<ExecutionGraph>(ExecutionGraph::Build(sequence));
  return *g;
}

// One Run: shared with the helpers, which may outlive Run's frame by the
// few instructions after their last unlock.
struct ConcurrentThunkExecutor::RunState {
  const cpu::ThunkSequence* sequence = nullptr;
  const ExecutionGraph* graph = nullptr;
  cpu::ExecuteParams params;
  cpu::SideStreams* helper_threads = nullptr;
  int max_threads = 2;
  ThunkProfile* profile = nullptr;
  std::mutex mu;
  std::condition_variable cv;  // a thunk became ready, or all finished
  // Guarded by mu:
  std::vector<int32_t> pending;  // unfinished in-edges per thunk
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<int32_t>> ready;
  int64_t unfinished = 0;  // thunks neither finished nor skipped
  int helpers = 0;         // helpers inside Work
  int starting = 0;        // helpers launched that have not looked for work yet
  int waiting = 0;         // threads waiting on cv for ready thunks
  absl::Status error;
};

ConcurrentThunkExecutor::ConcurrentThunkExecutor(const ExecutionGraphs& graphs,
                                                 cpu::SideStreams& helpers, int max_threads,
                                                 ThunkProfile* profile)
    : graphs_(graphs),
      helpers_(helpers),
      max_threads_(std::max(max_threads, 2)),
      profile_(profile),
      sequential_(profile) {}

absl::Status ConcurrentThunkExecutor::Run(const cpu::ThunkSequence& sequence,
                                          const cpu::ExecuteParams& params) const {
  const ExecutionGraph& graph = graphs_.For(sequence);
  if (graph.run_in_order()) return sequential_.Run(sequence, params);
  auto state = std::make_shared<RunState>();
  state->sequence = &sequence;
  state->graph = &graph;
  state->params = params;
  state->helper_threads = &helpers_;
  state->max_threads = max_threads_;
  state->profile = profile_;
  state->pending = graph.in_degree;
  state->unfinished = static_cast<int64_t>(sequence.size());
  for (size_t i = 0; i < sequence.size(); ++i) {
    if (graph.in_degree[i] == 0) state->ready.push(static_cast<int32_t>(i));
  }
  Work(state, /*is_caller=*/true);
  return state->error;
}

void ConcurrentThunkExecutor::SpawnHelpers(const std::shared_ptr<RunState>& state) {
  RunState& s = *state;
  const size_t idle = static_cast<size_t>(s.waiting);
  while (s.ready.size() > idle + static_cast<size_t>(s.starting) && 1 + s.helpers < s.max_threads) {
    ++s.helpers;
    ++s.starting;
    s.helper_threads->Launch([state] {
      codegen::ScopedFlushDenormals denormals(state->params.flush_denormals);
      Work(state, /*is_caller=*/false);
    });
  }
}

void ConcurrentThunkExecutor::Work(const std::shared_ptr<RunState>& state, bool is_caller) {
  RunState& s = *state;
  std::unique_lock<std::mutex> lock(s.mu);
  if (!is_caller) --s.starting;
  while (true) {
    if (!s.ready.empty()) {
      const int32_t id = s.ready.top();
      s.ready.pop();
      SpawnHelpers(state);
      const bool skip = !s.error.ok();
      lock.unlock();
      absl::Status status;
      if (!skip) {
        const cpu::Thunk& thunk = (*s.sequence)[id];
        if (s.profile == nullptr) {
          status = thunk.Execute(s.params);
        } else {
          const auto start = std::chrono::steady_clock::now();
          status = thunk.Execute(s.params);
          s.profile->Add(
              thunk,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        }
      }
      lock.lock();
      if (!status.ok() && s.error.ok()) s.error = std::move(status);
      --s.unfinished;
      for (int32_t next : s.graph->out_edges[id]) {
        if (--s.pending[next] == 0) s.ready.push(next);
      }
      if (s.unfinished == 0) {
        s.cv.notify_all();
      } else if (s.waiting > 0 && s.ready.size() == 1) {
        s.cv.notify_one();
      } else if (s.waiting > 0 && s.ready.size() > 1) {
        s.cv.notify_all();
      }
      continue;
    }
    if (s.unfinished == 0) {
      if (!is_caller) --s.helpers;
      return;
    }
    // More thunks will become ready: wait for them rather than leave (a new
    // helper costs a hand-off to another thread).
    ++s.waiting;
    s.cv.wait(lock);
    --s.waiting;
  }
}

}  // namespace xlite::runtime
