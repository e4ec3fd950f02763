#include "xlite/cpu/fusion.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "xlite/ir/computation.h"

namespace xlite::cpu {
namespace {

bool IsExpensive(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kDivide:
    case HloOpcode::kRemainder:
    case HloOpcode::kPower:
    case HloOpcode::kAtan2:
    case HloOpcode::kSqrt:
    case HloOpcode::kRsqrt:
    case HloOpcode::kCbrt:
    case HloOpcode::kExp:
    case HloOpcode::kExpm1:
    case HloOpcode::kLog:
    case HloOpcode::kLog1p:
    case HloOpcode::kLogistic:
    case HloOpcode::kTanh:
    case HloOpcode::kSin:
    case HloOpcode::kCos:
    case HloOpcode::kTan:
    case HloOpcode::kErf:
    case HloOpcode::kAcos:
    case HloOpcode::kAcosh:
    case HloOpcode::kAsin:
    case HloOpcode::kAsinh:
    case HloOpcode::kAtan:
    case HloOpcode::kAtanh:
    case HloOpcode::kCosh:
    case HloOpcode::kSinh:
      return true;
    default:
      return false;
  }
}

// Floating-point ops the code generator computes with a scalar C library
// call (libm; complex helpers): a loop holding one does not vectorize, so
// fusing one with vectorizable ops would make them scalar too. They stay
// kernels of their own until the emitters have vector versions.
bool IsScalarCall(const HloInstruction& instr) {
  const PrimitiveType type = instr.shape().element_type();
  if (!IsFloatingPoint(type) && !IsComplex(type)) return false;
  switch (instr.opcode()) {
    case HloOpcode::kTanh:  // a rational approximation below f64
      return type == PrimitiveType::F64 || IsComplex(type);
    case HloOpcode::kCbrt:
    case HloOpcode::kExp:
    case HloOpcode::kExpm1:
    case HloOpcode::kLog:
    case HloOpcode::kLog1p:
    case HloOpcode::kLogistic:
    case HloOpcode::kSin:
    case HloOpcode::kCos:
    case HloOpcode::kTan:
    case HloOpcode::kSinh:
    case HloOpcode::kCosh:
    case HloOpcode::kAsin:
    case HloOpcode::kAcos:
    case HloOpcode::kAtan:
    case HloOpcode::kAsinh:
    case HloOpcode::kAcosh:
    case HloOpcode::kAtanh:
    case HloOpcode::kErf:
    case HloOpcode::kPower:
    case HloOpcode::kAtan2:
      return true;
    default:
      return IsComplex(type) && (HloOpcodeTraits(instr.opcode()) & kElementwise) &&
             instr.opcode() != HloOpcode::kAdd && instr.opcode() != HloOpcode::kSubtract &&
             instr.opcode() != HloOpcode::kNegate && instr.opcode() != HloOpcode::kReal &&
             instr.opcode() != HloOpcode::kImag && instr.opcode() != HloOpcode::kComplex;
  }
}

// Arrays only, no control edges, nothing the fusion could not re-run freely.
bool Movable(const HloInstruction& instr) {
  return instr.shape().IsArray() && instr.shape().is_static() && !instr.HasSideEffect() &&
         instr.control_predecessors().empty() && instr.control_successors().empty() &&
         !IsScalarCall(instr);
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

bool IsFusibleConsumer(const HloInstruction& instr) {
  if (instr.opcode() == HloOpcode::kConstant) return false;  // nothing to fuse into it
  return IsFusibleProducer(instr) || (instr.opcode() == HloOpcode::kReduce && Movable(instr));
}

// True if `user` reads some element of its operand `operand` more than once.
bool ReusesOperand(const HloInstruction& user, const HloInstruction& operand) {
  return user.opcode() == HloOpcode::kBroadcast &&
         user.shape().ElementCount() > operand.shape().ElementCount();
}

// The computations that run as a sequence of thunks: the entry and,
// through while / conditional / call, what they run.
std::vector<HloComputation*> SequentialComputations(const HloModule& module) {
  std::vector<HloComputation*> out;
  absl::flat_hash_set<HloComputation*> seen;
  std::vector<HloComputation*> work;
  if (module.entry_computation() != nullptr) work.push_back(module.entry_computation());
  while (!work.empty()) {
    HloComputation* c = work.back();
    work.pop_back();
    if (c == nullptr || !seen.insert(c).second) continue;
    out.push_back(c);
    for (const auto& i : c->instructions()) {
      if (i->opcode() == HloOpcode::kWhile || i->opcode() == HloOpcode::kConditional ||
          i->opcode() == HloOpcode::kCall) {
        for (HloComputation* called : i->called_computations()) work.push_back(called);
      }
    }
  }
  return out;
}

class ComputationFusion {
 public:
  ComputationFusion(HloModule& module, HloComputation& computation,
                    absl::flat_hash_set<std::string>& names)
      : module_(module), computation_(computation), names_(names) {}

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

  std::string Unique(const std::string& base) {
    std::string name = base;
    for (int n = 1; names_.contains(name); ++n) name = absl::StrCat(base, ".", n);
    names_.insert(name);
    return name;
  }

  // The operands `group` would read from outside once `producer` joins.
  int64_t OperandsWith(const Group& group, const HloInstruction* producer) const {
    absl::flat_hash_set<const HloInstruction*> operands = group.operands;
    operands.erase(producer);
    for (const HloInstruction* op : producer->operands()) {
      if (!group.member_set.contains(op)) operands.insert(op);
    }
    return static_cast<int64_t>(operands.size());
  }

  // True if some element of `instr` (a member) is read more than once inside
  // `group`: a broadcast of it, or of a member computed from it.
  bool ReusedInside(const Group& group, const HloInstruction* instr, int depth = 0) const {
    if (depth > LoopFusion::kMaxFusionSize) return true;
    for (const HloInstruction* user : instr->users()) {
      if (!group.member_set.contains(user)) continue;
      if (ReusesOperand(*user, *instr) || ReusedInside(group, user, depth + 1)) return true;
    }
    return false;
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
        for (int g : reading_groups) {
          if (CanJoin(groups_[g], instr)) {
            Join(g, instr);
          } else {
            read_plainly = true;
          }
        }
      } else if (!read_plainly && reading_groups.size() == 1 &&
                 CanJoin(groups_[reading_groups[0]], instr)) {
        Group& group = groups_[reading_groups[0]];
        group.member_set.insert(instr);  // to ask about its users inside
        const bool reused = ReusedInside(group, instr);
        group.member_set.erase(instr);
        if (!reused) {
          Join(reading_groups[0], instr);
        } else {
          read_plainly = true;
        }
      } else {
        read_plainly = true;
      }
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
    auto body = std::make_unique<HloComputation>(Unique("fused_computation"));
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
    std::vector<HloInstruction*> operands;
    auto value_of = [&](HloInstruction* op) -> HloInstruction* {
      if (auto it = map.find(op); it != map.end()) return it->second;
      auto param = std::make_unique<HloInstruction>(
          HloOpcode::kParameter, Unique(absl::StrCat("param_", operands.size())), op->shape());
      param->attrs().parameter_number = static_cast<int64_t>(operands.size());
      HloInstruction* added = body->AddInstruction(std::move(param));
      body->SetParameter(static_cast<int64_t>(operands.size()), added);
      operands.push_back(op);
      map[op] = added;
      return added;
    };
    for (HloInstruction* member : group.members) {
      auto clone = std::make_unique<HloInstruction>(member->opcode(), Unique(member->name()),
                                                    member->shape());
      clone->attrs() = member->attrs();
      clone->set_called_computations(member->called_computations());
      for (HloInstruction* op : member->operands()) {
        clone->AppendOperand(group.member_set.contains(op) ? map.at(op) : value_of(op));
      }
      HloInstruction* added = body->AddInstruction(std::move(clone));
      clones_.push_back({added, member, member->name()});
      map[member] = added;
    }
    body->set_root_instruction(map.at(group.root));
    // Fused computations print before the computation that calls them.
    const HloComputation* before = nullptr;
    for (const auto& c : module_.computations()) {
      if (c.get() == &computation_) break;
      before = c.get();
    }
    HloComputation* fused = before != nullptr ? module_.AddComputationAfter(std::move(body), before)
                                              : module_.AddComputation(std::move(body));
    auto fusion =
        std::make_unique<HloInstruction>(HloOpcode::kFusion, Unique("fusion"), group.root->shape());
    fusion->attrs().fusion_kind = "kLoop";
    fusion->attrs().metadata = group.root->attrs().metadata;
    fusion->set_called_computations({fused});
    for (HloInstruction* op : operands) fusion->AppendOperand(op);
    HloInstruction* added = computation_.AddInstruction(std::move(fusion));
    fused->set_fusion_instruction(added);
    group.root->ReplaceAllUsesWith(added);
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
      names_.erase(instr->name());
      removed.insert(instr);
      instr->DetachFromOperands();
      computation_.RemoveInstruction(instr);
    }
    for (const Clone& c : clones_) {
      if (!removed.contains(c.original) || names_.contains(c.original_name)) continue;
      names_.erase(c.clone->name());
      names_.insert(c.original_name);
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
  absl::flat_hash_set<std::string>& names_;
  std::vector<HloInstruction*> post_order_;
  absl::flat_hash_map<const HloInstruction*, size_t> position_;
  std::vector<Group> groups_;
  absl::flat_hash_map<const HloInstruction*, std::vector<int>> groups_of_;
  absl::flat_hash_set<const HloInstruction*> plain_;
  std::vector<Clone> clones_;
};

}  // namespace

absl::StatusOr<bool> LoopFusion::Run(HloModule& module) {
  absl::flat_hash_set<std::string> names;
  for (const auto& c : module.computations()) {
    names.insert(c->name());
    for (const auto& i : c->instructions()) names.insert(i->name());
  }
  bool changed = false;
  for (HloComputation* computation : SequentialComputations(module)) {
    changed |= ComputationFusion(module, *computation, names).Run();
  }
  return changed;
}

}  // namespace xlite::cpu
