#include "xlite/cpu/fusion.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "xlite/analysis/call_graph.h"
#include "xlite/codegen/kernel.h"
#include "xlite/ir/computation.h"
#include "xlite/ir/name_uniquer.h"
#include "xlite/support/status.h"

namespace xlite::cpu {
namespace {

// Worth computing once rather than in every reader: the unary
// transcendentals (the opcodes that may carry result_accuracy, sqrt and rsqrt
// among them), atan, and division-like binary ops.
bool IsExpensive(HloOpcode opcode) {
  if (HloOpcodeTraits(opcode) & kResultAccuracy) return true;
  switch (opcode) {
    case HloOpcode::kAtan:
    case HloOpcode::kDivide:
    case HloOpcode::kRemainder:
    case HloOpcode::kPower:
    case HloOpcode::kAtan2:
      return true;
    default:
      return false;
  }
}

// Arrays only, no control edges, nothing the fusion could not re-run freely.
bool Movable(const HloInstruction& instr) {
  return instr.shape().IsArray() && instr.shape().is_static() && !instr.HasSideEffect() &&
         instr.control_predecessors().empty() && instr.control_successors().empty() &&
         // A libm call keeps the loop around it from vectorizing, so fusing
         // one with vector work would make that work scalar: it stays a
         // kernel of its own until the emitters have vector versions.
         !codegen::CallsScalarLibrary(instr);
}

// Instructions a kernel computes element by element from its operands'
// elements, each cheap to recompute where it is read.
bool IsFusibleProducer(const HloInstruction& instr) {
  if (!Movable(instr)) return false;
  if (HloOpcodeTraits(instr.opcode()) & kElementwise) return true;
  switch (instr.opcode()) {
    case HloOpcode::kConstant:  // a scalar becomes an immediate; arrays stay buffers
      return instr.shape().ElementCount() == 1 && instr.attrs().literal.has_value() &&
             !instr.attrs().literal->elided();
    default:
      return IsElementalDataMovement(instr.opcode());
  }
}

// A reduction over its operand's minor-most dimension (a row reduction: each
// result element folds a contiguous run), the one reduce a loop kernel folds
// as fast where it is read as at its own root. One fusion that reads each
// result element once then folds it there (a mean's divide, a norm's rsqrt
// and convert in the reduce's kernel, as XLA's reduction epilogue fusion):
// one kernel less to compile and run, no intermediate buffer. Column
// reductions keep a kernel of their own (their vector path needs the root).
// Which readers may take it: ReadsElementForElement.
bool IsFusibleRowReduce(const HloInstruction& instr) {
  if (instr.opcode() != HloOpcode::kReduce || !Movable(instr) || instr.operand_count() != 2 ||
      !instr.attrs().dimensions) {
    return false;
  }
  const Shape& input = instr.operand(0)->shape();
  if (!input.IsArray() || input.rank() == 0) return false;
  const int64_t minor = input.has_layout() && !input.layout().minor_to_major.empty()
                            ? input.layout().minor_to_major[0]
                            : input.rank() - 1;
  return std::find(instr.attrs().dimensions->begin(), instr.attrs().dimensions->end(), minor) !=
         instr.attrs().dimensions->end();
}

bool IsFusibleConsumer(const HloInstruction& instr) {
  if (instr.opcode() == HloOpcode::kConstant) return false;  // nothing to fuse into it
  return IsFusibleProducer(instr) || (instr.opcode() == HloOpcode::kReduce && Movable(instr));
}

// True if computing `instr` where it is read reads no more memory than
// reading its stored value: data movement, or one array operand besides
// scalars and broadcasts of them.
bool RecomputingReadsNoMore(const HloInstruction& instr) {
  if (IsElementalDataMovement(instr.opcode())) return true;
  int64_t arrays = 0;
  for (const HloInstruction* op : instr.operands()) {
    const bool scalar_like =
        op->shape().ElementCount() == 1 ||
        (op->opcode() == HloOpcode::kBroadcast && op->operand(0)->shape().ElementCount() == 1);
    if (!scalar_like) ++arrays;
  }
  return arrays <= 1;
}

// True if `user` reads some element of its operand `operand` more than once.
bool ReusesOperand(const HloInstruction& user, const HloInstruction& operand) {
  return user.opcode() == HloOpcode::kBroadcast &&
         user.shape().ElementCount() > operand.shape().ElementCount();
}

class ComputationFusion {
 public:
  ComputationFusion(HloModule& module, HloComputation& computation, NameUniquer& names,
                    NameUniquer& computation_names)
      : module_(module),
        computation_(computation),
        names_(names),
        computation_names_(computation_names) {}

  bool Run() {
    post_order_ = computation_.MakeInstructionPostOrder();
    for (size_t i = 0; i < post_order_.size(); ++i) position_[post_order_[i]] = i;
    for (auto it = post_order_.rbegin(); it != post_order_.rend(); ++it) Decide(*it);
    bool changed = false;
    for (Group& g : groups_) {
      if (g.members.size() > 1) {
        Materialize(g);
        changed = true;
      }
    }
    if (!changed) return false;
    RemoveDeadMembers();
    computation_.SetInstructionOrder(computation_.MakeInstructionPostOrder());
    return true;
  }

 private:
  struct Group {
    HloInstruction* root;
    std::vector<HloInstruction*> members;  // root first, then producers as they join
    absl::flat_hash_set<const HloInstruction*> member_set;
    absl::flat_hash_set<const HloInstruction*> operands;  // values read from outside
  };

  // The operands `group` would read from outside once `producer` joins.
  int64_t OperandsWith(const Group& group, const HloInstruction* producer) const {
    absl::flat_hash_set<const HloInstruction*> operands = group.operands;
    operands.erase(producer);
    for (const HloInstruction* op : producer->operands()) {
      if (!group.member_set.contains(op)) operands.insert(op);
    }
    return static_cast<int64_t>(operands.size());
  }

  // True if ok(user, operand) holds for every member of `group` reading
  // `instr`, directly or through other members; each member is walked once
  // (a diamond of members would otherwise be walked once per path).
  bool EveryReadInside(
      const Group& group, const HloInstruction* instr,
      absl::FunctionRef<bool(const HloInstruction& user, const HloInstruction& operand)> ok) const {
    std::vector<const HloInstruction*> stack = {instr};
    absl::flat_hash_set<const HloInstruction*> seen = {instr};
    while (!stack.empty()) {
      const HloInstruction* operand = stack.back();
      stack.pop_back();
      for (const HloInstruction* user : operand->users()) {
        if (!group.member_set.contains(user)) continue;
        if (!ok(*user, *operand)) return false;
        if (seen.insert(user).second) stack.push_back(user);
      }
    }
    return true;
  }

  // True if some element of `instr` is read more than once inside `group`:
  // a broadcast of it, or of a member computed from it.
  bool ReusedInside(const Group& group, const HloInstruction* instr) const {
    return !EveryReadInside(group, instr, [](const HloInstruction& user, const HloInstruction& op) {
      return !ReusesOperand(user, op);
    });
  }

  // True if every member of `group` that reads `instr` (directly or through
  // other members) computes its element at index i from `instr`'s element i
  // alone: elementwise ops of its element count, and reshapes and bitcasts.
  // A reduce joining such a group folds each result element once, and the
  // group's root has its elements to partition the kernel by; a broadcast,
  // a clamp or dynamic-slice reading it as a scalar, slices, or another
  // reduce would fold it again per element read, or serially.
  bool ReadsElementForElement(const Group& group, const HloInstruction* instr) const {
    return EveryReadInside(group, instr, [](const HloInstruction& user, const HloInstruction& op) {
      return user.shape().IsArray() && user.shape().ElementCount() == op.shape().ElementCount() &&
             ((HloOpcodeTraits(user.opcode()) & kElementwise) ||
              user.opcode() == HloOpcode::kReshape || user.opcode() == HloOpcode::kBitcast);
    });
  }

  // The one group reading `instr`, when nothing else does and `instr` may
  // join it (an expensive value or a reduce is computed once, in one
  // fusion); -1 otherwise.
  int SoleReader(const std::vector<int>& reading_groups, bool read_plainly,
                 const HloInstruction* instr) const {
    if (read_plainly || reading_groups.size() != 1 || !CanJoin(groups_[reading_groups[0]], instr)) {
      return -1;
    }
    return reading_groups[0];
  }

  void Join(int g, HloInstruction* producer) {
    Group& group = groups_[g];
    group.members.push_back(producer);
    group.member_set.insert(producer);
    group.operands.erase(producer);
    for (const HloInstruction* op : producer->operands()) {
      if (!group.member_set.contains(op)) group.operands.insert(op);
    }
    groups_of_[producer].push_back(g);
  }

  bool CanJoin(const Group& group, const HloInstruction* producer) const {
    return static_cast<int64_t>(group.members.size()) < LoopFusion::kMaxFusionSize &&
           OperandsWith(group, producer) <= LoopFusion::kMaxFusionOperands;
  }

  // Visited after all its users: joins the groups that read it, and becomes
  // the root of a group of its own where its value is still needed.
  void Decide(HloInstruction* instr) {
    if (instr->opcode() == HloOpcode::kParameter) return;
    // The groups whose members read it, and whether anything reads it as a
    // plain instruction (a user left alone, or the computation's result).
    std::vector<int> reading_groups;
    bool read_plainly = instr == computation_.root_instruction();
    for (HloInstruction* user : instr->users()) {
      auto it = groups_of_.find(user);
      if (it != groups_of_.end()) {
        for (int g : it->second) {
          if (std::find(reading_groups.begin(), reading_groups.end(), g) == reading_groups.end()) {
            reading_groups.push_back(g);
          }
        }
      }
      if (plain_.contains(user)) read_plainly = true;
    }
    if (IsFusibleProducer(*instr)) {
      if (!IsExpensive(instr->opcode())) {
        // A value stored anyway is read where recomputing it would read more
        // than it (several arrays): duplicating it then only costs, and
        // would split the expensive producers below it between fusions.
        std::vector<int> joinable;
        for (int g : reading_groups) {
          if (CanJoin(groups_[g], instr)) {
            joinable.push_back(g);
          } else {
            read_plainly = true;
          }
        }
        if (!read_plainly || RecomputingReadsNoMore(*instr)) {
          for (int g : joinable) Join(g, instr);
        }
      } else if (const int g = SoleReader(reading_groups, read_plainly, instr);
                 g >= 0 && !ReusedInside(groups_[g], instr)) {
        Join(g, instr);
      } else {
        read_plainly = true;
      }
    } else if (const int g = IsFusibleRowReduce(*instr)
                                 ? SoleReader(reading_groups, read_plainly, instr)
                                 : -1;
               g >= 0 && ReadsElementForElement(groups_[g], instr)) {
      Join(g, instr);
    } else {
      read_plainly |= !reading_groups.empty();
    }
    if (!read_plainly) return;
    // Its own value is needed: it stays, as the root of a fusion if producers
    // join it.
    if (!IsFusibleConsumer(*instr)) {
      plain_.insert(instr);
      return;
    }
    const int g = static_cast<int>(groups_.size());
    groups_.push_back(Group{instr, {instr}, {instr}, {}});
    for (const HloInstruction* op : instr->operands()) groups_.back().operands.insert(op);
    groups_of_[instr].push_back(g);
  }

  void Materialize(Group& group) {
    std::sort(group.members.begin(), group.members.end(),
              [&](const HloInstruction* a, const HloInstruction* b) {
                return position_.at(a) < position_.at(b);
              });
    FusedComputationBuilder builder(module_, computation_, names_, computation_names_);
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
    for (HloInstruction* member : group.members) {
      std::vector<HloInstruction*> operands;
      for (HloInstruction* op : member->operands()) {
        operands.push_back(group.member_set.contains(op) ? map.at(op) : builder.Parameter(op));
      }
      HloInstruction* added = builder.Clone(*member, operands);
      clones_.push_back({added, member, member->name()});
      map[member] = added;
    }
    group.root->ReplaceAllUsesWith(
        builder.Finish(map.at(group.root), group.root->attrs().metadata));
  }

  // Members nothing reads any more go; a clone takes its original's name
  // when the original is gone (the first clone, where it was duplicated).
  void RemoveDeadMembers() {
    absl::flat_hash_set<const HloInstruction*> removed;
    for (auto it = post_order_.rbegin(); it != post_order_.rend(); ++it) {
      HloInstruction* instr = *it;
      if (!groups_of_.contains(instr) || !instr->users().empty() ||
          instr == computation_.root_instruction()) {
        continue;
      }
      names_.Release(instr->name());
      removed.insert(instr);
      instr->DetachFromOperands();
      computation_.RemoveInstruction(instr);
    }
    for (const Clone& c : clones_) {
      if (!removed.contains(c.original) || !names_.TryTake(c.original_name)) continue;
      names_.Release(c.clone->name());
      c.clone->set_name(c.original_name);
    }
  }

  struct Clone {
    HloInstruction* clone;
    const HloInstruction* original;  // compared by address only: it may be deleted
    std::string original_name;
  };

  HloModule& module_;
  HloComputation& computation_;
  NameUniquer& names_;
  NameUniquer& computation_names_;
  std::vector<HloInstruction*> post_order_;
  absl::flat_hash_map<const HloInstruction*, size_t> position_;
  std::vector<Group> groups_;
  absl::flat_hash_map<const HloInstruction*, std::vector<int>> groups_of_;
  absl::flat_hash_set<const HloInstruction*> plain_;
  std::vector<Clone> clones_;
};

}  // namespace

bool IsElementalDataMovement(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kIota:
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kSlice:
    case HloOpcode::kReverse:
    case HloOpcode::kPad:
    case HloOpcode::kConcatenate:
    case HloOpcode::kDynamicSlice:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<std::vector<HloComputation*>> FusibleComputations(const HloModule& module) {
  ASSIGN_OR_RETURN(std::unique_ptr<CallGraph> call_graph, CallGraph::Build(module));
  std::vector<HloComputation*> computations;
  for (const CallGraphNode& node : call_graph->nodes()) {
    HloComputation* computation = node.computation();
    if (node.context() == CallContext::kSequential && node.reachable_from_entry() &&
        !computation->IsAsyncComputation()) {
      computations.push_back(computation);
    }
  }
  return computations;
}

FusedComputationBuilder::FusedComputationBuilder(HloModule& module, HloComputation& computation,
                                                 NameUniquer& names, NameUniquer& computation_names)
    : module_(module),
      computation_(computation),
      names_(names),
      body_(std::make_unique<HloComputation>(computation_names.Get("fused_computation"))) {}

HloInstruction* FusedComputationBuilder::Parameter(HloInstruction* operand) {
  if (auto it = parameter_of_.find(operand); it != parameter_of_.end()) return it->second;
  const int64_t number = static_cast<int64_t>(operands_.size());
  auto param = std::make_unique<HloInstruction>(
      HloOpcode::kParameter, names_.Get(absl::StrCat("param_", number)), operand->shape());
  param->attrs().parameter_number = number;
  HloInstruction* added = body_->AddInstruction(std::move(param));
  body_->SetParameter(number, added);
  operands_.push_back(operand);
  parameter_of_[operand] = added;
  return added;
}

HloInstruction* FusedComputationBuilder::Clone(const HloInstruction& instr,
                                               absl::Span<HloInstruction* const> operands) {
  auto clone =
      std::make_unique<HloInstruction>(instr.opcode(), names_.Get(instr.name()), instr.shape());
  clone->attrs() = instr.attrs();
  clone->set_called_computations(instr.called_computations());
  for (HloInstruction* op : operands) clone->AppendOperand(op);
  return Add(std::move(clone));
}

HloInstruction* FusedComputationBuilder::Add(std::unique_ptr<HloInstruction> instr) {
  return body_->AddInstruction(std::move(instr));
}

HloInstruction* FusedComputationBuilder::Finish(HloInstruction* root, const OpMetadata& metadata) {
  body_->set_root_instruction(root);
  const HloComputation* before = nullptr;
  for (const auto& c : module_.computations()) {
    if (c.get() == &computation_) break;
    before = c.get();
  }
  HloComputation* fused = before != nullptr ? module_.AddComputationAfter(std::move(body_), before)
                                            : module_.AddComputation(std::move(body_));
  auto fusion =
      std::make_unique<HloInstruction>(HloOpcode::kFusion, names_.Get("fusion"), root->shape());
  fusion->attrs().fusion_kind = "kLoop";
  fusion->attrs().metadata = metadata;
  fusion->set_called_computations({fused});
  for (HloInstruction* op : operands_) fusion->AppendOperand(op);
  HloInstruction* added = computation_.AddInstruction(std::move(fusion));
  fused->set_fusion_instruction(added);
  return added;
}

absl::StatusOr<bool> LoopFusion::Run(HloModule& module) {
  NameUniquer names = NameUniquer::ForInstructions(module);
  NameUniquer computation_names = NameUniquer::ForComputations(module);
  ASSIGN_OR_RETURN(std::vector<HloComputation*> computations, FusibleComputations(module));
  bool changed = false;
  for (HloComputation* computation : computations) {
    changed |= ComputationFusion(module, *computation, names, computation_names).Run();
  }
  return changed;
}

}  // namespace xlite::cpu
