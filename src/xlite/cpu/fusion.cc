#include "xlite/cpu/fusion.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <queue>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "xlite/analysis/call_graph.h"
#include "xlite/codegen/kernel.h"
#include "xlite/cpu/fusion_cost_model.h"
#include "xlite/ir/computation.h"
#include "xlite/ir/name_uniquer.h"
#include "xlite/support/status.h"

namespace xlite::cpu {
namespace {

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
  return instr.opcode() == HloOpcode::kReduce && Movable(instr) && instr.operand_count() == 2 &&
         instr.operand(0)->shape().IsArray() && ReducesMinorDimension(instr);
}

bool IsFusibleConsumer(const HloInstruction& instr) {
  if (instr.opcode() == HloOpcode::kConstant) return false;  // nothing to fuse into it
  return IsFusibleProducer(instr) || (instr.opcode() == HloOpcode::kReduce && Movable(instr));
}

// Priority fusion in one computation. Every instruction a kernel can
// compute starts as a kernel of its own (a group: a root and the members
// computed inline). The candidate with the largest estimated saving goes
// first: a producer group joins every group that reads its root and may take
// it (duplicated where several do), the saving being its own time (when
// nothing else needs its value) plus its readers' times, less their times
// with it inside (FusionCostModel). After each merge the groups whose
// savings changed -- the readers, and the producers they read before and
// now -- are estimated again when they reach the queue's front. Groups are
// cones (a root and ancestors of it), so no merge makes a cycle.
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
    // Dead code is left to dce: it neither becomes a kernel nor keeps its
    // operands stored.
    auto dead = [&](const HloInstruction* instr) {
      return instr->users().empty() && instr != computation_.root_instruction() &&
             !instr->HasSideEffect() && instr->control_successors().empty();
    };
    for (HloInstruction* instr : post_order_) {
      // A scalar constant is only a producer (nothing fuses into it).
      if ((IsFusibleConsumer(*instr) || IsFusibleProducer(*instr)) && !dead(instr)) {
        AddGroup(instr);
      }
    }
    for (HloInstruction* instr : post_order_) {
      bool stored = instr == computation_.root_instruction();
      for (const HloInstruction* user : instr->users()) {
        stored |= !group_of_root_.contains(user) && !dead(user);
      }
      if (stored) stored_.insert(instr);
    }
    for (int g = 0; g < static_cast<int>(groups_.size()); ++g) Prioritize(g);
    while (!queue_.empty()) {
      const Candidate c = queue_.top();
      queue_.pop();
      Group& group = groups_[c.group];
      if (!group.alive || c.version != group.version) continue;  // stale
      if (group.changed) {
        Prioritize(c.group);  // estimated again when its turn comes
      } else {
        FuseIntoReaders(c.group);  // only Prioritize queues unchanged groups
      }
    }
    // Readers first: a reader that holds a copy of another group's root
    // clones it before that root's uses move to its fusion.
    std::vector<Group*> fused;
    for (Group& g : groups_) {
      // Not one that every reader took whole (still alive: it could not be
      // dropped when its fusion was decided): its kernel would have no users.
      const auto readers = readers_.find(g.root);
      const bool read =
          stored_.contains(g.root) || (readers != readers_.end() && !readers->second.empty());
      if (g.alive && g.members.size() > 1 && read) fused.push_back(&g);
    }
    if (fused.empty()) return false;
    std::sort(fused.begin(), fused.end(), [&](const Group* a, const Group* b) {
      return position_.at(a->root) > position_.at(b->root);
    });
    for (Group* g : fused) Materialize(*g);
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
    double time_ns = 0;                                   // FusionCostModel's estimate
    bool folds = false;                                   // a member is a reduce
    bool producer = false;                                // its root may join its readers
    bool alive = true;    // false once it has joined all its readers
    int64_t version = 0;  // candidates of older versions are stale
    int64_t content = 0;  // bumped when producers join: cached estimates are stale
    double saving_ns = -std::numeric_limits<double>::infinity();  // last estimated
    bool changed = false;                                         // since saving_ns was estimated
  };

  // A reader's estimated time with a producer inside, for the contents it
  // was estimated at: a producer read by many kernels (a scalar constant) is
  // prioritized again whenever one of them changes, and only that one needs
  // estimating again.
  struct MergedTime {
    int64_t reader_content = -1;  // never estimated
    int64_t producer_content = -1;
    double time_ns = 0;
  };

  struct Candidate {
    double saving_ns;
    size_t position;  // ties: nearer the computation's root first
    int group;
    int64_t version;
    bool operator<(const Candidate& o) const {
      return saving_ns != o.saving_ns ? saving_ns < o.saving_ns : position < o.position;
    }
  };

  // Savings within this of zero are ties, broken towards fusing: a value
  // stored anyway (a loop state's scalar, a transpose that is also a result)
  // recomputed where it is read instead of read from its buffer costs about
  // the same by the model, and the reader then waits for one kernel less (at
  // 0.1 ns, threefry's scalar key schedules split into kernels of their own).
  static constexpr double kTieNs = 1;

  void AddGroup(HloInstruction* instr) {
    const int g = static_cast<int>(groups_.size());
    groups_.push_back(Group{instr, {instr}, {instr}, {}});
    for (const HloInstruction* op : instr->operands()) {
      groups_[g].operands.insert(op);
      readers_[op].insert(g);
    }
    groups_[g].time_ns = Estimate(groups_[g], nullptr).time_ns;
    groups_[g].folds = instr->opcode() == HloOpcode::kReduce;
    groups_[g].producer = IsFusibleProducer(*instr) || IsFusibleRowReduce(*instr);
    group_of_root_[instr] = g;
  }

  // The kernel `group` makes, with `joining`'s members too when not null.
  KernelCost Estimate(const Group& group, const Group* joining) const {
    return FusionCostModel::Estimate(*group.root, [&](const HloInstruction* instr) {
      return group.member_set.contains(instr) ||
             (joining != nullptr && joining->member_set.contains(instr));
    });
  }

  // The operands `group` would read from outside once `producer` joins
  // (its root, and any of its members `group` read, now computed inside).
  int64_t OperandsWith(const Group& group, const Group& producer) const {
    int64_t count = 0;
    for (const HloInstruction* op : group.operands) {
      if (!producer.member_set.contains(op)) ++count;
    }
    for (const HloInstruction* op : producer.operands) {
      if (!group.member_set.contains(op) && !group.operands.contains(op)) ++count;
    }
    return count;
  }

  bool CanTake(const Group& group, const Group& producer) const {
    int64_t size = static_cast<int64_t>(group.members.size());
    for (const HloInstruction* m : producer.members) size += group.member_set.contains(m) ? 0 : 1;
    return size <= LoopFusion::kMaxFusionSize &&
           OperandsWith(group, producer) <= LoopFusion::kMaxFusionOperands;
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

  // The readers group `g` would join, and whether its own kernel stays
  // (its value stored, or a reader that cannot take it).
  std::vector<int> Targets(int g, bool& stays) const {
    const Group& group = groups_[g];
    std::vector<int> targets;
    stays = stored_.contains(group.root);
    auto it = readers_.find(group.root);
    if (it == readers_.end()) return targets;
    for (int reader : it->second) {
      if (CanTake(groups_[reader], group)) {
        targets.push_back(reader);
      } else {
        stays = true;
      }
    }
    // A row reduction is folded once, by the one kernel that reads it (or
    // the kernel holding it) element for element: the emitter would fold it
    // again for every element read otherwise (no compiler hoists a loop).
    if (group.folds && (stays || targets.size() != 1 ||
                        !ReadsElementForElement(groups_[targets[0]], group.root))) {
      targets.clear();
    }
    return targets;
  }

  double MergedTimeNs(int reader, int producer) {
    const Group& r = groups_[reader];
    const Group& p = groups_[producer];
    MergedTime& cached = merged_times_[{reader, producer}];
    if (cached.reader_content != r.content || cached.producer_content != p.content) {
      cached = {r.content, p.content, Estimate(r, &p).time_ns};
    }
    return cached.time_ns;
  }

  void Prioritize(int g) {
    Group& group = groups_[g];
    ++group.version;
    group.changed = false;
    group.saving_ns = -std::numeric_limits<double>::infinity();
    if (!group.alive || !group.producer) return;
    bool stays = false;
    const std::vector<int> targets = Targets(g, stays);
    if (targets.empty()) return;
    double saving = stays ? 0 : group.time_ns;
    for (int t : targets) saving += groups_[t].time_ns - MergedTimeNs(t, g);
    group.saving_ns = saving;
    if (saving > -kTieNs) queue_.push({saving, position_.at(group.root), g, group.version});
  }

  // A fusion changed `g`'s readers or their costs. Its saving is estimated
  // again lazily, when it comes out of the queue at its last saving: a
  // producer read by many kernels (a scalar constant) may change many times
  // before its turn, and is estimated once.
  void MarkChanged(int g) {
    Group& group = groups_[g];
    if (!group.alive || !group.producer || group.changed) return;  // changed: queued already
    group.changed = true;
    queue_.push({group.saving_ns, position_.at(group.root), g, ++group.version});
  }

  void FuseIntoReaders(int g) {
    bool stays = false;
    const std::vector<int> targets = Targets(g, stays);
    Group& producer = groups_[g];
    // Savings that change: the producer's, the readers', and those of the
    // groups whose readers change (what the readers read before and now).
    std::set<int> changed = {g};
    auto changes_with = [&](const HloInstruction* value) {
      if (auto it = group_of_root_.find(value); it != group_of_root_.end()) {
        changed.insert(it->second);
      }
    };
    for (int t : targets) {
      // The kernel it becomes, as estimated for the saving (cached).
      const double merged_ns = MergedTimeNs(t, g);
      Group& reader = groups_[t];
      changed.insert(t);
      for (HloInstruction* m : producer.members) {
        if (!reader.member_set.insert(m).second) continue;
        reader.members.push_back(m);
        // Its root, or a member the reader read from outside: now inside.
        if (reader.operands.erase(m) > 0) {
          readers_[m].erase(t);
          changes_with(m);
        }
      }
      for (const HloInstruction* op : producer.operands) {
        if (reader.member_set.contains(op)) continue;
        reader.operands.insert(op);
        readers_[op].insert(t);
      }
      for (const HloInstruction* op : reader.operands) changes_with(op);
      reader.time_ns = merged_ns;
      reader.folds |= producer.folds;
      ++reader.content;
    }
    if (!stays) {
      producer.alive = false;
      for (const HloInstruction* op : producer.operands) {
        readers_[op].erase(g);
        changes_with(op);
      }
    }
    for (int c : changed) MarkChanged(c);
  }

  void Materialize(Group& group) {
    std::sort(group.members.begin(), group.members.end(),
              [&](const HloInstruction* a, const HloInstruction* b) {
                return position_.at(a) < position_.at(b);
              });
    FusedComputationBuilder builder(module_, computation_, names_, computation_names_);
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
    for (HloInstruction* member : group.members) {
      fused_members_.insert(member);
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
    std::vector<HloInstruction*> dead;  // removed together: one pass over the list
    for (auto it = post_order_.rbegin(); it != post_order_.rend(); ++it) {
      HloInstruction* instr = *it;
      if (!fused_members_.contains(instr) || !instr->users().empty() ||
          instr == computation_.root_instruction()) {
        continue;
      }
      names_.Release(instr->name());
      removed.insert(instr);
      instr->DetachFromOperands();
      dead.push_back(instr);
    }
    computation_.RemoveInstructions(dead);
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
  absl::flat_hash_map<const HloInstruction*, int> group_of_root_;
  // The groups reading each value from outside (ordered: deterministic).
  absl::flat_hash_map<const HloInstruction*, std::set<int>> readers_;
  // Values something other than a kernel reads (or the computation's result).
  absl::flat_hash_set<const HloInstruction*> stored_;
  std::priority_queue<Candidate> queue_;
  absl::flat_hash_map<std::pair<int, int>, MergedTime> merged_times_;
  absl::flat_hash_set<const HloInstruction*> fused_members_;
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

bool ReducesMinorDimension(const HloInstruction& reduce) {
  const int64_t minor = codegen::MinorDimension(reduce.operand(0)->shape());
  const std::optional<std::vector<int64_t>>& dims = reduce.attrs().dimensions;
  return minor >= 0 && dims && std::find(dims->begin(), dims->end(), minor) != dims->end();
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
