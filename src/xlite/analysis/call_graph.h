// CallGraph: which computation calls which, from which instructions, and in
// what context (XLA's CallGraph). A computation runs in a sequential context
// when it executes as a whole, allocating its own values: the entry, while
// condition and body, conditional branches, call's callee, the computation an
// async-start wraps. It runs embedded when it is a fragment of its caller
// that allocates nothing: fusion bodies and the to_apply/comparator/select/
// scatter computations of reduce, map, sort, scatter, select-and-scatter,
// all-reduce, custom-call, ... . A sequential call from inside an embedded
// computation is embedded too. Computations nothing calls are roots and
// count as sequential.
#ifndef XLITE_ANALYSIS_CALL_GRAPH_H_
#define XLITE_ANALYSIS_CALL_GRAPH_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "xlite/ir/module.h"

namespace xlite {

enum class CallContext { kNone, kSequential, kEmbedded, kBoth };

std::string CallContextToString(CallContext context);

// The context in which `opcode` calls its computations (kNone for opcodes
// that call none).
CallContext GetInstructionCallContext(HloOpcode opcode);

// One instruction calling one or more computations.
struct CallSite {
  HloInstruction* instruction = nullptr;
  std::vector<HloComputation*> called_computations;
  CallContext context = CallContext::kNone;
};

class CallGraphNode {
 public:
  HloComputation* computation() const { return computation_; }
  // The merge of the contexts of every site calling this computation.
  CallContext context() const { return context_; }
  // Instructions of this computation that call computations.
  const std::vector<CallSite>& callsites() const { return callsites_; }
  // Sites (in other computations) that call this one.
  const std::vector<CallSite>& caller_callsites() const { return caller_callsites_; }
  const std::vector<HloComputation*>& callees() const { return callees_; }
  const std::vector<HloComputation*>& callers() const { return callers_; }
  // Reached from the entry through calls of any kind.
  bool reachable_from_entry() const { return reachable_; }

 private:
  friend class CallGraph;
  HloComputation* computation_ = nullptr;
  CallContext context_ = CallContext::kNone;
  std::vector<CallSite> callsites_;
  std::vector<CallSite> caller_callsites_;
  std::vector<HloComputation*> callees_;
  std::vector<HloComputation*> callers_;
  bool reachable_ = false;
};

class CallGraph {
 public:
  // Fails on a computation that calls itself, directly or not, or on a
  // called computation that is not in the module.
  static absl::StatusOr<std::unique_ptr<CallGraph>> Build(const HloModule& module);

  const HloModule& module() const { return *module_; }
  const CallGraphNode& GetNode(const HloComputation* computation) const;
  const std::vector<CallGraphNode>& nodes() const { return nodes_; }

  // Every computation after the computations it calls (callees first), in
  // a deterministic order.
  const std::vector<HloComputation*>& ComputationsInPostOrder() const { return post_order_; }

  // True if the computation runs in a sequential context (kSequential or
  // kBoth): it gets a schedule and allocates its values.
  bool IsSequential(const HloComputation* computation) const;

  // The sites that run `computation` sequentially, counting one async chain
  // (async-start/update/done) once, at its async-start.
  std::vector<const CallSite*> SequentialCallers(const HloComputation* computation) const;

  // True if no computation is run from more than one sequential site (what
  // passes/flatten_call_graph makes true). Memory planning needs it: one
  // computation called from two sites would share its values between them.
  bool IsFlattened() const;

  std::string ToString() const;

 private:
  const HloModule* module_ = nullptr;
  std::vector<CallGraphNode> nodes_;
  absl::flat_hash_map<const HloComputation*, int64_t> node_index_;
  std::vector<HloComputation*> post_order_;
};

}  // namespace xlite

#endif  // XLITE_ANALYSIS_CALL_GRAPH_H_
