#include "xlite/analysis/call_graph.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace xlite {

std::string CallContextToString(CallContext context) {
  switch (context) {
    case CallContext::kNone:
      return "none";
    case CallContext::kSequential:
      return "sequential";
    case CallContext::kEmbedded:
      return "embedded";
    case CallContext::kBoth:
      return "both";
  }
  return "?";
}

CallContext GetInstructionCallContext(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kCall:
    case HloOpcode::kConditional:
    case HloOpcode::kWhile:
    case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncDone:
      return CallContext::kSequential;
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kCollectiveReduce:
    case HloOpcode::kMap:
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kScatter:
    case HloOpcode::kSelectAndScatter:
    case HloOpcode::kSort:
    case HloOpcode::kTopK:
    case HloOpcode::kScan:
    case HloOpcode::kFusion:
    case HloOpcode::kCustomCall:
      return CallContext::kEmbedded;
    default:
      return CallContext::kNone;
  }
}

namespace {

CallContext Merge(CallContext a, CallContext b) {
  if (a == CallContext::kNone) return b;
  if (b == CallContext::kNone || a == b) return a;
  return CallContext::kBoth;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CallGraph>> CallGraph::Build(const HloModule& module) {
  auto graph = std::unique_ptr<CallGraph>(new CallGraph());
  graph->module_ = &module;
  graph->nodes_.resize(module.computations().size());
  for (size_t i = 0; i < module.computations().size(); ++i) {
    HloComputation* c = module.computations()[i].get();
    graph->nodes_[i].computation_ = c;
    graph->node_index_[c] = static_cast<int64_t>(i);
  }
  for (CallGraphNode& node : graph->nodes_) {
    absl::flat_hash_set<HloComputation*> callees;
    for (const auto& instr : node.computation_->instructions()) {
      if (instr->called_computations().empty()) continue;
      CallSite site;
      site.instruction = instr.get();
      site.called_computations = instr->called_computations();
      site.context = GetInstructionCallContext(instr->opcode());
      // An opcode not in XLA's table that still calls computations (none
      // today) is treated as embedded: it cannot allocate.
      if (site.context == CallContext::kNone) site.context = CallContext::kEmbedded;
      for (HloComputation* callee : site.called_computations) {
        auto it = graph->node_index_.find(callee);
        if (callee == nullptr || it == graph->node_index_.end()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "instruction '", instr->name(), "' in computation '", node.computation_->name(),
              "' calls a computation outside module ", module.name()));
        }
        CallGraphNode& callee_node = graph->nodes_[it->second];
        callee_node.caller_callsites_.push_back(site);
        if (callees.insert(callee).second) {
          node.callees_.push_back(callee);
          callee_node.callers_.push_back(node.computation_);
        }
      }
      node.callsites_.push_back(std::move(site));
    }
  }

  // Post order (callees first) by an iterative DFS; a computation met again
  // while it is on the stack is recursion.
  enum State : uint8_t { kUnvisited, kOnStack, kDone };
  std::vector<State> state(graph->nodes_.size(), kUnvisited);
  for (size_t root = 0; root < graph->nodes_.size(); ++root) {
    if (state[root] != kUnvisited) continue;
    std::vector<std::pair<int64_t, size_t>> stack = {{static_cast<int64_t>(root), 0}};
    state[root] = kOnStack;
    while (!stack.empty()) {
      auto& [node_index, next] = stack.back();
      CallGraphNode& node = graph->nodes_[node_index];
      if (next < node.callees_.size()) {
        const int64_t callee = graph->node_index_.at(node.callees_[next++]);
        if (state[callee] == kOnStack) {
          return absl::InvalidArgumentError(absl::StrCat(
              "computation '", graph->nodes_[callee].computation_->name(),
              "' calls itself (through '", node.computation_->name(), "'); HLO has no recursion"));
        }
        if (state[callee] == kUnvisited) {
          state[callee] = kOnStack;
          stack.push_back({callee, 0});
        }
        continue;
      }
      state[node_index] = kDone;
      graph->post_order_.push_back(node.computation_);
      stack.pop_back();
    }
  }

  // Contexts flow from callers to callees: reverse post order visits every
  // caller before its callees. Roots (the entry and computations nothing
  // calls) are sequential.
  for (auto it = graph->post_order_.rbegin(); it != graph->post_order_.rend(); ++it) {
    CallGraphNode& node = graph->nodes_[graph->node_index_.at(*it)];
    if (node.caller_callsites_.empty() || node.computation_ == module.entry_computation()) {
      node.context_ = Merge(node.context_, CallContext::kSequential);
    }
    for (const CallSite& site : node.callsites_) {
      const CallContext inherited =
          site.context == CallContext::kEmbedded ? CallContext::kEmbedded : node.context_;
      for (HloComputation* callee : site.called_computations) {
        CallGraphNode& callee_node = graph->nodes_[graph->node_index_.at(callee)];
        callee_node.context_ = Merge(callee_node.context_, inherited);
      }
    }
  }

  if (const HloComputation* entry = module.entry_computation(); entry != nullptr) {
    auto found = graph->node_index_.find(entry);
    if (found != graph->node_index_.end()) {
      std::vector<int64_t> stack = {found->second};
      graph->nodes_[found->second].reachable_ = true;
      while (!stack.empty()) {
        const CallGraphNode& node = graph->nodes_[stack.back()];
        stack.pop_back();
        for (HloComputation* callee : node.callees_) {
          const int64_t i = graph->node_index_.at(callee);
          if (!graph->nodes_[i].reachable_) {
            graph->nodes_[i].reachable_ = true;
            stack.push_back(i);
          }
        }
      }
    }
  }
  return graph;
}

const CallGraphNode& CallGraph::GetNode(const HloComputation* computation) const {
  static const CallGraphNode* const kMissing = new CallGraphNode();
  auto it = node_index_.find(computation);
  return it == node_index_.end() ? *kMissing : nodes_[it->second];
}

bool CallGraph::IsSequential(const HloComputation* computation) const {
  const CallContext context = GetNode(computation).context();
  return context == CallContext::kSequential || context == CallContext::kBoth;
}

std::vector<const CallSite*> CallGraph::SequentialCallers(const HloComputation* computation) const {
  std::vector<const CallSite*> sites;
  for (const CallSite& site : GetNode(computation).caller_callsites()) {
    const HloOpcode op = site.instruction->opcode();
    if (site.context != CallContext::kSequential || op == HloOpcode::kAsyncUpdate ||
        op == HloOpcode::kAsyncDone) {
      continue;
    }
    if (!IsSequential(site.instruction->parent())) continue;
    // A conditional naming one computation for two branches is two sites.
    for (const HloComputation* callee : site.called_computations) {
      if (callee == computation) sites.push_back(&site);
    }
  }
  return sites;
}

bool CallGraph::IsFlattened() const {
  for (const CallGraphNode& node : nodes_) {
    if (IsSequential(node.computation()) && SequentialCallers(node.computation()).size() > 1) {
      return false;
    }
  }
  return true;
}

std::string CallGraph::ToString() const {
  std::string out = absl::StrCat("CallGraph of ", module_->name(), ":\n");
  for (const HloComputation* c : post_order_) {
    const CallGraphNode& node = GetNode(c);
    absl::StrAppend(
        &out, "  ", c->name(), " [", CallContextToString(node.context()), "]", " callers: {",
        absl::StrJoin(node.callers(), ", ",
                      [](std::string* o, const HloComputation* x) { o->append(x->name()); }),
        "}\n");
  }
  return out;
}

}  // namespace xlite
