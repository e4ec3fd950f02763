#include "xlite/cpu/multi_output_fusion.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "xlite/cpu/fusion.h"
#include "xlite/ir/computation.h"
#include "xlite/ir/name_uniquer.h"
#include "xlite/support/status.h"

namespace xlite::cpu {
namespace {

// A root the kernel emitter computes element by element: an elementwise op
// or data movement.
bool IsElementalRoot(const HloInstruction& root) {
  return (HloOpcodeTraits(root.opcode()) & kElementwise) || IsElementalDataMovement(root.opcode());
}

// How many instructions of the module call each computation (those made by
// merges, absent, have one).
using CallerCounts = absl::flat_hash_map<const HloComputation*, int64_t>;

// A kLoop fusion without control edges calling one computation that nothing
// else calls (a merge removes the computations it merged).
const HloComputation* LoopFusionBody(const HloInstruction& instr, const CallerCounts& callers) {
  if (instr.opcode() != HloOpcode::kFusion || instr.attrs().fusion_kind != "kLoop" ||
      !instr.control_predecessors().empty() || !instr.control_successors().empty() ||
      instr.called_computations().size() != 1 || instr.called_computations()[0] == nullptr ||
      instr.called_computations()[0]->root_instruction() == nullptr) {
    return nullptr;
  }
  auto it = callers.find(instr.called_computations()[0]);
  if (it != callers.end() && it->second > 1) return nullptr;
  return instr.called_computations()[0];
}

// A kLoop fusion with one array result that the kernel emitter computes
// element by element: merging it into a tuple-rooted fusion keeps the kernel
// it would get alone.
bool IsSibling(const HloInstruction& instr, const CallerCounts& callers) {
  const HloComputation* body = LoopFusionBody(instr, callers);
  return body != nullptr && instr.shape().IsArray() && IsElementalRoot(*body->root_instruction());
}

// A sibling, or a multi-output fusion made of siblings (a tuple root of
// elemental roots of one set of dimensions, read only through
// get-tuple-elements): what a producer may join as one more output.
bool IsConsumer(const HloInstruction& instr, const CallerCounts& callers) {
  if (IsSibling(instr, callers)) return true;
  const HloComputation* body = LoopFusionBody(instr, callers);
  if (body == nullptr || !instr.shape().IsTuple() || instr.parent()->root_instruction() == &instr) {
    return false;
  }
  const HloInstruction& root = *body->root_instruction();
  if (root.opcode() != HloOpcode::kTuple || root.operand_count() == 0) return false;
  for (const HloInstruction* element : root.operands()) {
    if (!element->shape().IsArray() || !IsElementalRoot(*element) ||
        element->shape().dimensions() != root.operand(0)->shape().dimensions()) {
      return false;
    }
  }
  for (const HloInstruction* user : instr.users()) {
    if (user->opcode() != HloOpcode::kGetTupleElement) return false;
  }
  return true;
}

// The dimensions every result of a sibling or consumer has.
const std::vector<int64_t>& ResultDimensions(const HloInstruction& fusion) {
  return fusion.shape().IsArray() ? fusion.shape().dimensions()
                                  : fusion.shape().tuple_shapes(0).dimensions();
}

int64_t Size(const HloInstruction& fusion) {
  return static_cast<int64_t>(fusion.called_computations()[0]->instructions().size());
}

// What both kinds of merge share: instructions' levels (a walk for
// dependences prunes by them), kept valid after every merge, and the removal
// of merged fusions.
class Merger {
 public:
  Merger(HloModule& module, HloComputation& computation, NameUniquer& names,
         NameUniquer& computation_names, const CallerCounts& callers)
      : module_(module),
        computation_(computation),
        names_(names),
        computation_names_(computation_names),
        callers_(callers) {}

 protected:
  // Gives every instruction of the computation a level above its operands'
  // and control predecessors': its position in a post order, times 4 (the
  // gaps spare some raises after merges). Returns that post order, whose
  // positions order candidates in program order.
  std::vector<HloInstruction*> Number() {
    std::vector<HloInstruction*> order = computation_.MakeInstructionPostOrder();
    level_.clear();
    position_.clear();
    for (size_t i = 0; i < order.size(); ++i) {
      position_[order[i]] = i;
      level_[order[i]] = 4 * static_cast<int64_t>(i);
    }
    return order;
  }

  // After a merge made `merged` (and get-tuple-elements reading it) in
  // place of its members: its level from its operands, and its readers'
  // (transitively) raised where they are no longer above their operands. A
  // merge moves dependences -- a reader of one member now waits for all of
  // them -- but raises few levels (mixtral_8x7b_bf16_2x8: 4357 over all
  // merges; 2.5 million with longest-path depths instead of positions), where
  // a new post order would cost the whole computation per merge.
  void Renumber(HloInstruction* merged) {
    int64_t level = 0;
    for (const HloInstruction* op : merged->operands()) level = std::max(level, Level(op) + 1);
    level_[merged] = level;
    std::vector<const HloInstruction*> stack = {merged};
    while (!stack.empty()) {
      const HloInstruction* instr = stack.back();
      stack.pop_back();
      const int64_t above = level_.at(instr) + 1;
      auto raise = [&](const HloInstruction* reader) {
        if (reader->parent() != &computation_) return;
        auto [it, inserted] = level_.try_emplace(reader, above);
        if (!inserted && it->second >= above) return;
        it->second = above;
        stack.push_back(reader);
      };
      for (const HloInstruction* user : instr->users()) raise(user);
      for (const HloInstruction* succ : instr->control_successors()) raise(succ);
    }
  }

  // The level of an instruction of this computation; -1 for operands from
  // elsewhere (in malformed input).
  int64_t Level(const HloInstruction* instr) const {
    auto it = level_.find(instr);
    return it == level_.end() ? -1 : it->second;
  }

  // True if `to` depends on `from` through operands or control edges (both
  // in this computation). A path from `from` runs through instructions of
  // higher levels (operands from elsewhere, in malformed input, are walked
  // through).
  bool Reaches(const HloInstruction* from, const HloInstruction* to) const {
    const int64_t floor = level_.at(from);
    std::vector<const HloInstruction*> stack = {to};
    absl::flat_hash_set<const HloInstruction*> seen;
    while (!stack.empty()) {
      const HloInstruction* i = stack.back();
      stack.pop_back();
      if (i == from) return true;
      if (!seen.insert(i).second) continue;
      for (const HloInstruction* op : i->operands()) {
        auto it = level_.find(op);
        if (it == level_.end() || it->second >= floor) stack.push_back(op);
      }
      for (const HloInstruction* op : i->control_predecessors()) {
        auto it = level_.find(op);
        if (it == level_.end() || it->second >= floor) stack.push_back(op);
      }
    }
    return false;
  }

  // Clones `fusion`'s body into `builder`; parameters reading an instruction
  // in `bound` become its value there, the others parameters of the new
  // fusion. Returns the clones of its results: the root's, or the elements
  // of a tuple root (not cloned).
  std::vector<HloInstruction*> CloneBody(
      FusedComputationBuilder& builder, const HloInstruction& fusion,
      const absl::flat_hash_map<const HloInstruction*, HloInstruction*>& bound = {}) {
    const HloComputation& fused = *fusion.called_computations()[0];
    const HloInstruction* root = fused.root_instruction();
    const bool tuple_root = root->opcode() == HloOpcode::kTuple;
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
    for (HloInstruction* instr : fused.MakeInstructionPostOrder()) {
      if (instr == root && tuple_root) continue;
      if (instr->opcode() == HloOpcode::kParameter) {
        HloInstruction* operand = fusion.operand(instr->attrs().parameter_number);
        auto it = bound.find(operand);
        map[instr] = it != bound.end() ? it->second : builder.Parameter(operand);
        continue;
      }
      std::vector<HloInstruction*> operands;
      for (const HloInstruction* op : instr->operands()) operands.push_back(map.at(op));
      HloInstruction* clone = builder.Clone(*instr, operands);
      clones_.push_back({clone, instr->name()});
      map[instr] = clone;
    }
    if (!tuple_root) return {map.at(root)};
    std::vector<HloInstruction*> results;
    for (const HloInstruction* element : root->operands()) results.push_back(map.at(element));
    return results;
  }

  // After a merge removed the fused computations cloned from: each clone
  // takes its original's name (the names stay those of the program).
  void RestoreNames() {
    for (const auto& [clone, name] : clones_) {
      if (names_.TryTake(name)) {
        names_.Release(clone->name());
        clone->set_name(name);
      }
    }
    clones_.clear();
  }

  // Makes a tuple of `roots` (the results of `shapes`) the body's root and
  // returns the new fusion calling it.
  HloInstruction* FinishWithTuple(FusedComputationBuilder& builder,
                                  const std::vector<HloInstruction*>& roots,
                                  const std::vector<Shape>& shapes, const OpMetadata& metadata) {
    auto tuple = std::make_unique<HloInstruction>(HloOpcode::kTuple, names_.Get("tuple"),
                                                  Shape::Tuple(shapes));
    for (HloInstruction* r : roots) tuple->AppendOperand(r);
    return builder.Finish(builder.Add(std::move(tuple)), metadata);
  }

  // A get-tuple-element of `merged` that stands for `fusion` (and takes its
  // name), then `fusion` gone.
  HloInstruction* ReplaceByElement(HloInstruction* fusion, HloInstruction* merged, int64_t index) {
    auto gte = std::make_unique<HloInstruction>(HloOpcode::kGetTupleElement,
                                                names_.Get(fusion->name()), fusion->shape());
    gte->attrs().tuple_index = index;
    gte->AppendOperand(merged);
    HloInstruction* element = computation_.AddInstruction(std::move(gte));
    const bool was_root = fusion == computation_.root_instruction();
    fusion->ReplaceAllUsesWith(element);
    if (was_root) computation_.set_root_instruction(element);
    const std::string name = fusion->name();
    Remove(fusion);
    // The element takes the fusion's name: its users read the same value.
    if (names_.TryTake(name)) {
      names_.Release(element->name());
      element->set_name(name);
    }
    return element;
  }

  // Removes a fusion nothing reads any more, with its body (whose names
  // are free again).
  void Remove(HloInstruction* fusion) {
    HloComputation* old = fusion->called_computations()[0];
    for (const auto& instr : old->instructions()) names_.Release(instr->name());
    names_.Release(fusion->name());
    merged_.insert(fusion);
    // A new instruction may take its address: it must not inherit its level.
    level_.erase(fusion);
    position_.erase(fusion);
    fusion->DetachFromOperands();
    computation_.RemoveInstruction(fusion);
    module_.RemoveComputation(old);
  }

  HloModule& module_;
  HloComputation& computation_;
  NameUniquer& names_;
  NameUniquer& computation_names_;
  const CallerCounts& callers_;
  absl::flat_hash_map<const HloInstruction*, int64_t> level_;
  // Positions in the post order Number took: the original instructions'
  // program order (merged fusions, never siblings, have none).
  absl::flat_hash_map<const HloInstruction*, size_t> position_;
  absl::flat_hash_set<const HloInstruction*> merged_;  // removed: compared by address only
  std::vector<std::pair<HloInstruction*, std::string>> clones_;  // since the last RestoreNames
};

// Siblings: fusions reading a common operand.
class SiblingFusion : public Merger {
 public:
  using Merger::Merger;

  bool Run() {
    std::vector<HloInstruction*> order = Number();
    bool changed = false;
    for (HloInstruction* shared : order) {
      if (merged_.contains(shared)) continue;  // removed by an earlier merge
      // One group at a time, its readers found again after each merge: two
      // groups formed together may each depend on the other once one is
      // merged (a fusion kept out of a group by the limits, not by a
      // dependence, may read another group's member).
      while (MergeOneGroup(*shared)) changed = true;
    }
    if (changed) computation_.SetInstructionOrder(computation_.MakeInstructionPostOrder());
    return changed;
  }

 private:
  // Merges the first group of siblings reading `shared`; false if none.
  bool MergeOneGroup(const HloInstruction& shared) {
    std::vector<HloInstruction*> candidates;
    for (HloInstruction* user : shared.users()) {
      if (IsSibling(*user, callers_) && user->parent() == &computation_ &&
          std::find(candidates.begin(), candidates.end(), user) == candidates.end()) {
        candidates.push_back(user);
      }
    }
    if (candidates.size() < 2) return false;
    std::sort(candidates.begin(), candidates.end(),
              [&](const HloInstruction* a, const HloInstruction* b) {
                return position_.at(a) < position_.at(b);
              });
    // Greedy groups, in program order: a fusion joins the first group it
    // fits (same dimensions, no dependence either way, within the limits).
    std::vector<std::vector<HloInstruction*>> groups;
    for (HloInstruction* c : candidates) {
      bool placed = false;
      for (auto& group : groups) {
        if (Fits(group, c)) {
          group.push_back(c);
          placed = true;
          break;
        }
      }
      if (!placed) groups.push_back({c});
    }
    for (auto& group : groups) {
      if (group.size() < 2) continue;
      Renumber(Merge(group));
      return true;
    }
    return false;
  }

  bool Fits(const std::vector<HloInstruction*>& group, HloInstruction* c) const {
    if (c->shape().dimensions() != group[0]->shape().dimensions()) return false;
    int64_t size = Size(*c);
    absl::flat_hash_set<const HloInstruction*> operands(c->operands().begin(), c->operands().end());
    for (const HloInstruction* m : group) {
      if (Reaches(m, c) || Reaches(c, m)) return false;
      size += Size(*m);
      operands.insert(m->operands().begin(), m->operands().end());
    }
    return size <= LoopFusion::kMaxFusionSize &&
           static_cast<int64_t>(operands.size()) <= LoopFusion::kMaxFusionOperands;
  }

  // One fusion for the group: the union of their operands as parameters,
  // each member's body cloned onto them, a tuple of their roots. Returns it.
  HloInstruction* Merge(const std::vector<HloInstruction*>& group) {
    FusedComputationBuilder builder(module_, computation_, names_, computation_names_);
    std::vector<HloInstruction*> roots;
    std::vector<Shape> shapes;
    for (HloInstruction* member : group) {
      roots.push_back(CloneBody(builder, *member)[0]);
      shapes.push_back(member->shape());
    }
    HloInstruction* merged = FinishWithTuple(builder, roots, shapes, group[0]->attrs().metadata);
    for (size_t k = 0; k < group.size(); ++k) {
      ReplaceByElement(group[k], merged, static_cast<int64_t>(k));
    }
    RestoreNames();
    return merged;
  }
};

// Producer and consumer: a fusion whose value is stored anyway (read by
// others too) joins a fusion reading it element for element, as one more
// output: the consumer's loop computes it where it would have read it, so it
// is read from memory once less and its kernel goes.
class ProducerConsumerFusion : public Merger {
 public:
  using Merger::Merger;

  bool Run() {
    std::vector<HloInstruction*> order = Number();
    bool changed = false;
    for (HloInstruction* consumer : order) {
      if (merged_.contains(consumer) || !IsConsumer(*consumer, callers_)) continue;
      while (HloInstruction* producer = MergeableProducer(*consumer)) {
        consumer = Merge(producer, consumer);
        Renumber(consumer);
        changed = true;
      }
    }
    if (changed) computation_.SetInstructionOrder(computation_.MakeInstructionPostOrder());
    return changed;
  }

 private:
  // What `consumer` reads of `producer`: the producer itself, or (a
  // multi-output one) its get-tuple-elements.
  static bool IsValueOf(const HloInstruction* operand, const HloInstruction* producer) {
    return operand == producer ||
           (producer->shape().IsTuple() && operand->opcode() == HloOpcode::kGetTupleElement &&
            operand->operand(0) == producer);
  }

  // The fusion behind an operand of a consumer that may join it: a stored
  // sibling (read by others too), or a multi-output fusion of siblings
  // (IsConsumer: Adam's moments, whose update the consumer then computes)
  // read through its get-tuple-elements. Null for any other operand.
  HloInstruction* ProducerCandidate(HloInstruction* operand) const {
    if (IsSibling(*operand, callers_)) return operand->users().size() < 2 ? nullptr : operand;
    if (operand->opcode() != HloOpcode::kGetTupleElement) return nullptr;
    HloInstruction* producer = operand->operand(0);
    return producer->shape().IsTuple() && IsConsumer(*producer, callers_) ? producer : nullptr;
  }

  // The first producer of an operand of `consumer` that may join it, or null.
  HloInstruction* MergeableProducer(const HloInstruction& consumer) const {
    for (HloInstruction* operand : consumer.operands()) {
      HloInstruction* producer = ProducerCandidate(operand);
      if (producer == nullptr || producer == &consumer || producer->parent() != &computation_ ||
          ResultDimensions(*producer) != ResultDimensions(consumer) ||
          !ReadsElementForElement(consumer, producer) ||
          Size(consumer) + Size(*producer) > LoopFusion::kMaxFusionSize) {
        continue;
      }
      absl::flat_hash_set<const HloInstruction*> operands(producer->operands().begin(),
                                                          producer->operands().end());
      bool cycle = false;
      for (const HloInstruction* op : consumer.operands()) {
        if (IsValueOf(op, producer)) {
          // The merged kernel reads the producer's operands, not this
          // get-tuple-element: an order its control edges give would be lost.
          cycle |= op != producer && op->HasControlEdges();
          continue;
        }
        // Another path from the producer to the consumer would need the
        // merged fusion's output before it runs.
        if (Reaches(producer, op)) {
          cycle = true;
          break;
        }
        operands.insert(op);
      }
      if (!cycle && static_cast<int64_t>(operands.size()) <= LoopFusion::kMaxFusionOperands) {
        return producer;
      }
    }
    return nullptr;
  }

  // True if `consumer` computes its element i from `producer`'s element i
  // alone: every path from a parameter reading it to the root runs through
  // elementwise ops of the result's dimensions. Computed at element i, the
  // producer's value is then computed once per element, and stored there.
  static bool ReadsElementForElement(const HloInstruction& consumer,
                                     const HloInstruction* producer) {
    const HloComputation& fused = *consumer.called_computations()[0];
    const HloInstruction* root = fused.root_instruction();
    const std::vector<int64_t>& dims = ResultDimensions(consumer);
    std::vector<const HloInstruction*> stack;
    for (int64_t i = 0; i < consumer.operand_count(); ++i) {
      if (IsValueOf(consumer.operand(i), producer) && i < fused.num_parameters()) {
        stack.push_back(fused.parameter_instruction(i));
      }
    }
    absl::flat_hash_set<const HloInstruction*> seen;
    while (!stack.empty()) {
      const HloInstruction* instr = stack.back();
      stack.pop_back();
      for (const HloInstruction* user : instr->users()) {
        if (user == root && user->opcode() == HloOpcode::kTuple) continue;
        if (!IsElementwiseOpcode(user->opcode()) || !user->called_computations().empty() ||
            !user->shape().IsArray() || user->shape().dimensions() != dims) {
          return false;
        }
        if (seen.insert(user).second) stack.push_back(user);
      }
    }
    return true;
  }

  // One fusion: the producer's body, the consumer's reading it, a tuple of
  // the consumer's results and then the producer's. Returns it.
  HloInstruction* Merge(HloInstruction* producer, HloInstruction* consumer) {
    FusedComputationBuilder builder(module_, computation_, names_, computation_names_);
    const std::vector<HloInstruction*> produced = CloneBody(builder, *producer);
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> bound;
    if (producer->shape().IsTuple()) {
      for (const HloInstruction* op : consumer->operands()) {
        if (IsValueOf(op, producer)) bound[op] = produced[op->attrs().tuple_index];
      }
    } else {
      bound[producer] = produced[0];
    }
    std::vector<HloInstruction*> roots = CloneBody(builder, *consumer, bound);
    std::vector<Shape> shapes = consumer->shape().IsTuple() ? consumer->shape().tuple_shapes()
                                                            : std::vector<Shape>{consumer->shape()};
    const int64_t first_produced = static_cast<int64_t>(roots.size());
    roots.insert(roots.end(), produced.begin(), produced.end());
    if (producer->shape().IsTuple()) {
      shapes.insert(shapes.end(), producer->shape().tuple_shapes().begin(),
                    producer->shape().tuple_shapes().end());
    } else {
      shapes.push_back(producer->shape());
    }
    HloInstruction* merged = FinishWithTuple(builder, roots, shapes, consumer->attrs().metadata);
    if (consumer->shape().IsTuple()) {
      // Its readers are get-tuple-elements: the same indices in the merged one.
      for (HloInstruction* user : std::vector<HloInstruction*>(consumer->users())) {
        consumer->ReplaceUseWith(user, merged);
      }
      Remove(consumer);
    } else {
      ReplaceByElement(consumer, merged, 0);
    }
    if (producer->shape().IsTuple()) {
      // Its readers are get-tuple-elements (IsConsumer): the same elements,
      // after the consumer's, in the merged one.
      for (HloInstruction* user : std::vector<HloInstruction*>(producer->users())) {
        user->attrs().tuple_index += first_produced;
        producer->ReplaceUseWith(user, merged);
      }
      Remove(producer);
    } else {
      ReplaceByElement(producer, merged, first_produced);
    }
    RestoreNames();
    return merged;
  }
};

}  // namespace

absl::StatusOr<bool> MultiOutputFusion::Run(HloModule& module) {
  NameUniquer names = NameUniquer::ForInstructions(module);
  NameUniquer computation_names = NameUniquer::ForComputations(module);
  ASSIGN_OR_RETURN(std::vector<HloComputation*> computations, FusibleComputations(module));
  CallerCounts callers;
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      for (const HloComputation* called : instr->called_computations()) ++callers[called];
    }
  }
  bool changed = false;
  for (HloComputation* computation : computations) {
    changed |= SiblingFusion(module, *computation, names, computation_names, callers).Run();
    changed |=
        ProducerConsumerFusion(module, *computation, names, computation_names, callers).Run();
  }
  return changed;
}

}  // namespace xlite::cpu
