#include "xlite/passes/copy_insertion.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "xlite/analysis/dependency_ordering.h"
#include "xlite/analysis/hlo_alias_analysis.h"
#include "xlite/analysis/in_place_pairs.h"
#include "xlite/passes/copy_interference.h"
#include "xlite/support/status.h"

namespace xlite {

const char* CopyReasonName(CopyReason reason) {
  switch (reason) {
    case CopyReason::kInPlaceOperand:
      return "in-place-operand";
    case CopyReason::kWhileInit:
      return "while-init";
    case CopyReason::kWhileBody:
      return "while-body";
    case CopyReason::kConditionalBranch:
      return "conditional-branch";
    case CopyReason::kAliasedParameter:
      return "aliased-parameter";
    case CopyReason::kAliasedOutput:
      return "aliased-output";
    case CopyReason::kReadOnlyOutput:
      return "read-only-output";
    case CopyReason::kNonDistinctOutput:
      return "non-distinct-output";
    case CopyReason::kReadOnlyShared:
      return "read-only-shared";
  }
  return "?";
}

namespace {

// Every array (and opaque) index of `shape` under `prefix`, in
// ForEachSubshape order.
std::vector<ShapeIndex> LeavesUnder(const Shape& shape, const ShapeIndex& prefix) {
  std::vector<ShapeIndex> leaves;
  const Shape* sub = SubshapeAt(shape, prefix);
  if (sub == nullptr) return leaves;
  ForEachSubshape(*sub, [&](const Shape& s, const ShapeIndex& index) {
    if (s.IsTuple() || s.IsToken()) return;
    ShapeIndex full = prefix;
    full.insert(full.end(), index.begin(), index.end());
    leaves.push_back(std::move(full));
  });
  return leaves;
}

bool HasPrefix(const ShapeIndex& index, const ShapeIndex& prefix) {
  return index.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), index.begin());
}

// A copy this pass made, with what it protects (for the reason text).
struct CopyRecord {
  CopyReason reason;
  std::string context;  // "dynamic-update-slice.3 updates operand 0 in place"
  int64_t parameter_number = -1;
  ShapeIndex parameter_index;
  std::optional<ShapeIndex> output_index;
};

class Inserter {
 public:
  explicit Inserter(HloModule& module) : module_(module) {
    for (const auto& c : module.computations()) {
      for (const auto& i : c->instructions()) {
        names_.insert(i->name());
        original_.insert(i.get());
      }
    }
  }

  absl::StatusOr<bool> Run(std::vector<InsertedCopy>* out) {
    if (module_.entry_computation() == nullptr) return false;
    {
      ASSIGN_OR_RETURN(std::unique_ptr<CallGraph> graph, CallGraph::Build(module_));
      if (!graph->IsFlattened()) {
        return absl::FailedPreconditionError(
            "copy-insertion needs a flattened call graph (run flatten-call-graph first): some "
            "computation runs from more than one call site");
      }
    }
    RETURN_IF_ERROR(AddConservativeCopies());
    FoldScaffolding(/*final=*/false);
    RETURN_IF_ERROR(RemoveUnneededCopies());
    FoldScaffolding(/*final=*/true);
    RETURN_IF_ERROR(AddSpecialCaseCopies());
    FoldScaffolding(/*final=*/true);
    const bool changed = !created_.empty() || orphans_removed_;
    if (!changed) return false;
    RETURN_IF_ERROR(CheckNoInterference());
    if (module_.config().is_scheduled) RepairSchedule();
    for (const auto& c : module_.computations()) {
      for (const auto& i : c->instructions()) {
        if (i->opcode() != HloOpcode::kCopy) continue;
        auto it = kept_.find(i.get());
        if (it == kept_.end()) continue;
        const CopyRecord& r = it->second;
        out->push_back(InsertedCopy{i->name(), c->name(), r.reason, r.context, r.parameter_number,
                                    r.parameter_index, r.output_index});
      }
    }
    return true;
  }

 private:
  // --- Building instructions ------------------------------------------------

  std::string NewName(absl::string_view base) {
    for (int64_t n = counters_[std::string(base)] + 1;; ++n) {
      std::string name = absl::StrCat(base, ".", n);
      if (names_.insert(name).second) {
        counters_[std::string(base)] = n;
        return name;
      }
    }
  }

  HloInstruction* Add(HloComputation* c, HloOpcode op, const Shape& shape,
                      std::vector<HloInstruction*> operands, absl::string_view base) {
    auto instr = std::make_unique<HloInstruction>(op, NewName(base), shape);
    for (HloInstruction* o : operands) instr->AppendOperand(o);
    HloInstruction* added = c->AddInstruction(std::move(instr));
    created_.insert(added);
    return added;
  }

  // A value equal to `x` whose leaves at `marked` are fresh copies (XLA's
  // DeepCopyInstruction): copies of arrays, get-tuple-element and tuple to
  // take tuples apart and rebuild them. `copies` receives (leaf, copy).
  HloInstruction* DeepCopy(HloInstruction* x, const std::vector<ShapeIndex>& marked,
                           std::vector<std::pair<ShapeIndex, HloInstruction*>>* copies) {
    return DeepCopyAt(x, x->shape(), {}, marked, copies);
  }

  HloInstruction* DeepCopyAt(HloInstruction* x, const Shape& shape, const ShapeIndex& index,
                             const std::vector<ShapeIndex>& marked,
                             std::vector<std::pair<ShapeIndex, HloInstruction*>>* copies) {
    const bool any = std::any_of(marked.begin(), marked.end(),
                                 [&](const ShapeIndex& m) { return HasPrefix(m, index); });
    if (!any) return x;
    HloComputation* c = x->parent();
    if (!shape.IsTuple()) {
      HloInstruction* copy = Add(c, HloOpcode::kCopy, shape, {x}, "copy");
      copies->push_back({index, copy});
      return copy;
    }
    std::vector<HloInstruction*> elements;
    const bool is_tuple =
        x->opcode() == HloOpcode::kTuple && x->operand_count() == shape.tuple_shapes_size();
    // Rebuilt from its operands, the tuple itself may be left unused.
    if (is_tuple && !created_.contains(x)) displaced_.insert(x);
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      HloInstruction* gte = is_tuple ? x->operand(i) : nullptr;
      if (gte == nullptr) {
        gte = Add(c, HloOpcode::kGetTupleElement, shape.tuple_shapes(i), {x}, "get-tuple-element");
        gte->attrs().tuple_index = i;
      }
      ShapeIndex sub = index;
      sub.push_back(i);
      elements.push_back(DeepCopyAt(gte, shape.tuple_shapes(i), sub, marked, copies));
    }
    return Add(c, HloOpcode::kTuple, shape, elements, "tuple");
  }

  void Record(const std::vector<std::pair<ShapeIndex, HloInstruction*>>& copies, CopyReason reason,
              const std::string& context) {
    for (const auto& [index, copy] : copies) {
      records_[copy] =
          CopyRecord{reason,
                     absl::StrCat(context, index.empty() ? "" : " at ", ShapeIndexToString(index)),
                     -1,
                     {},
                     std::nullopt};
      candidates_.push_back(copy);
    }
  }

  // Users of `x` (taken before the deep copy added its own) read `copy`.
  void Redirect(HloInstruction* x, const std::vector<HloInstruction*>& users,
                HloInstruction* copy) {
    for (HloInstruction* user : users) {
      x->ReplaceUseWith(user, copy);
      if (user->opcode() == HloOpcode::kGetTupleElement) redirected_gte_[user] = x;
    }
    displaced_.insert(x);
  }

  void SetRoot(HloComputation* c, HloInstruction* root) {
    displaced_.insert(c->root_instruction());
    c->set_root_instruction(root);
  }

  void SetOperand(HloInstruction* user, int64_t i, HloInstruction* operand) {
    displaced_.insert(user->operand(i));
    user->ReplaceOperandWith(i, operand);
  }

  // --- 1. Conservative copies -----------------------------------------------

  absl::Status AddConservativeCopies() {
    ASSIGN_OR_RETURN(std::unique_ptr<HloAliasAnalysis> alias, HloAliasAnalysis::Run(module_));
    const HloDataflowAnalysis& dataflow = alias->dataflow_analysis();
    const CallGraph& graph = dataflow.call_graph();
    // Plans first (on the unchanged module), then the rewrites.
    struct InPlace {
      HloInstruction* instr;
      int64_t operand;
      std::vector<ShapeIndex> leaves;
    };
    struct Loop {
      HloInstruction* loop;
      std::vector<ShapeIndex> leaves;
    };
    std::vector<InPlace> in_place;
    std::vector<Loop> loops;
    std::vector<HloInstruction*> conditionals;
    for (const HloComputation* c : graph.ComputationsInPostOrder()) {
      if (!graph.IsSequential(c) || !graph.GetNode(c).reachable_from_entry()) continue;
      for (HloInstruction* instr : c->MakeInstructionPostOrder()) {
        if (instr->opcode() == HloOpcode::kWhile) {
          std::vector<ShapeIndex> changed = ChangedLoopLeaves(dataflow, *instr);
          if (!changed.empty()) loops.push_back({instr, std::move(changed)});
        } else if (instr->opcode() == HloOpcode::kConditional) {
          conditionals.push_back(instr);
        }
        if (!MayHaveInPlacePairs(instr->opcode())) continue;
        std::map<int64_t, std::vector<ShapeIndex>> by_operand;
        for (const auto& [input, output] : GetInPlaceInputOutputPairs(*instr)) {
          if (input.operand_number < 0 || input.operand_number >= instr->operand_count()) continue;
          for (ShapeIndex& leaf :
               LeavesUnder(instr->operand(input.operand_number)->shape(), input.operand_index)) {
            by_operand[input.operand_number].push_back(std::move(leaf));
          }
        }
        for (auto& [operand, leaves] : by_operand) {
          if (!leaves.empty()) in_place.push_back({instr, operand, std::move(leaves)});
        }
      }
    }
    for (InPlace& p : in_place) {
      HloInstruction* operand = p.instr->operand(p.operand);
      std::vector<std::pair<ShapeIndex, HloInstruction*>> copies;
      HloInstruction* copy = DeepCopy(operand, p.leaves, &copies);
      SetOperand(p.instr, p.operand, copy);
      Record(copies, CopyReason::kInPlaceOperand,
             absl::StrCat(p.instr->name(), " updates operand ", p.operand, " in place"));
    }
    for (Loop& l : loops) AddLoopCopies(l.loop, l.leaves);
    for (HloInstruction* conditional : conditionals) AddBranchCopies(conditional);
    AddAliasCopies(dataflow);
    return absl::OkStatus();
  }

  // Leaves of the loop state the body changes (its result there is not its
  // parameter's value).
  static std::vector<ShapeIndex> ChangedLoopLeaves(const HloDataflowAnalysis& dataflow,
                                                   const HloInstruction& loop) {
    std::vector<ShapeIndex> changed;
    if (loop.called_computations().size() != 2) return changed;
    const HloComputation* body = loop.called_computations()[1];
    if (body->num_parameters() != 1 || body->parameter_instruction(0) == nullptr) return changed;
    for (const ShapeIndex& leaf : LeavesUnder(loop.shape(), {})) {
      const HloValue* result = dataflow.GetValueAt(body->root_instruction(), leaf);
      const HloValue* state = dataflow.GetValueAt(body->parameter_instruction(0), leaf);
      if (result != nullptr && result != state) changed.push_back(leaf);
    }
    return changed;
  }

  void AddLoopCopies(HloInstruction* loop, const std::vector<ShapeIndex>& leaves) {
    HloComputation* body = loop->called_computations()[1];
    const std::string element = absl::StrCat(loop->name(), " changes loop state");
    {  // The initial value.
      std::vector<std::pair<ShapeIndex, HloInstruction*>> copies;
      HloInstruction* init = DeepCopy(loop->operand(0), leaves, &copies);
      SetOperand(loop, 0, init);
      Record(copies, CopyReason::kWhileInit, absl::StrCat("the initial value: ", element));
    }
    HloInstruction* param = body->parameter_instruction(0);
    HloInstruction* root = body->root_instruction();
    std::vector<HloInstruction*> users = param->users();
    std::vector<std::pair<ShapeIndex, HloInstruction*>> param_copies, root_copies;
    HloInstruction* param_copy = DeepCopy(param, leaves, &param_copies);
    Redirect(param, users, param_copy);
    HloInstruction* root_copy = DeepCopy(root, leaves, &root_copies);
    SetRoot(body, root_copy);
    // The old state is copied out before the new one is copied in.
    for (const auto& [index, from] : param_copies) {
      for (const auto& [index2, to] : root_copies) {
        if (index == index2) from->AddControlDependencyTo(to);
      }
    }
    Record(param_copies, CopyReason::kWhileBody, absl::StrCat("the body's parameter: ", element));
    Record(root_copies, CopyReason::kWhileBody, absl::StrCat("the body's result: ", element));
  }

  void AddBranchCopies(HloInstruction* conditional) {
    const std::vector<ShapeIndex> leaves = LeavesUnder(conditional->shape(), {});
    if (leaves.empty()) return;
    for (HloComputation* branch : conditional->called_computations()) {
      HloInstruction* root = branch->root_instruction();
      std::vector<std::pair<ShapeIndex, HloInstruction*>> copies;
      HloInstruction* copy = DeepCopy(root, leaves, &copies);
      SetRoot(branch, copy);
      Record(copies, CopyReason::kConditionalBranch,
             absl::StrCat("the result of branch ", branch->name(), " of ", conditional->name()));
    }
  }

  // Each donated parameter element and the output it backs, unless the
  // output already is that parameter element.
  void AddAliasCopies(const HloDataflowAnalysis& dataflow) {
    const ModuleConfig& config = module_.config();
    if (!config.input_output_alias_present || config.input_output_alias.empty()) return;
    HloComputation* entry = module_.entry_computation();
    std::map<int64_t, std::vector<ShapeIndex>> params;
    std::vector<ShapeIndex> outputs;
    std::map<ShapeIndex, const InputOutputAlias*> alias_of_output;
    for (const InputOutputAlias& a : config.input_output_alias) {
      if (a.parameter_number < 0 || a.parameter_number >= entry->num_parameters()) continue;
      HloInstruction* param = entry->parameter_instruction(a.parameter_number);
      if (param == nullptr) continue;
      const HloValue* in = dataflow.GetValueAt(param, a.parameter_index);
      const HloValue* out = dataflow.GetValueAt(entry->root_instruction(), a.output_index);
      if (in == nullptr || out == nullptr || in == out || in->shape().IsTuple()) continue;
      params[a.parameter_number].push_back(a.parameter_index);
      outputs.push_back(a.output_index);
      alias_of_output[a.output_index] = &a;
    }
    if (outputs.empty()) return;
    // The parameter element's copy, to order it before its output's copy.
    std::map<std::pair<int64_t, ShapeIndex>, HloInstruction*> param_copy;
    for (auto& [number, leaves] : params) {
      HloInstruction* param = entry->parameter_instruction(number);
      std::vector<HloInstruction*> users = param->users();
      std::vector<std::pair<ShapeIndex, HloInstruction*>> copies;
      HloInstruction* copy = DeepCopy(param, leaves, &copies);
      Redirect(param, users, copy);
      if (entry->root_instruction() == param) SetRoot(entry, copy);
      for (const auto& [index, c] : copies) {
        param_copy[{number, index}] = c;
        records_[c] = CopyRecord{CopyReason::kAliasedParameter,
                                 absl::StrCat("parameter ", number, " ", ShapeIndexToString(index),
                                              " is donated (input_output_alias)"),
                                 number, index, std::nullopt};
        candidates_.push_back(c);
      }
    }
    HloInstruction* root = entry->root_instruction();
    std::vector<std::pair<ShapeIndex, HloInstruction*>> copies;
    HloInstruction* copy = DeepCopy(root, outputs, &copies);
    SetRoot(entry, copy);
    for (const auto& [index, c] : copies) {
      const InputOutputAlias* a = alias_of_output[index];
      // The old value is copied out before the new one is copied in (XLA
      // orders the two copies the same way).
      auto from = param_copy.find({a->parameter_number, a->parameter_index});
      if (from != param_copy.end()) from->second->AddControlDependencyTo(c);
      records_[c] = CopyRecord{
          CopyReason::kAliasedOutput,
          absl::StrCat("output ", ShapeIndexToString(index), " is written into parameter ",
                       a->parameter_number, " ", ShapeIndexToString(a->parameter_index)),
          a->parameter_number, a->parameter_index, index};
      candidates_.push_back(c);
    }
  }

  // --- Folding the tuples the deep copies built -------------------------------

  // Folds the tuple structure deep copies built. Before copy removal
  // (`final` false): get-tuple-elements of tuples this pass built, and this
  // pass's get-tuple-elements of any tuple, as XLA runs tuple-simplifier
  // before removing copies (removal must see the dependencies that stay).
  // At the end only folds that keep every dependency: a tuple this pass
  // built that rebuilds its source, or that has the operands of a tuple it
  // displaced (which comes back). Then what this pass built and nothing uses
  // is deleted, and at the end also what it emptied or displaced.
  void FoldScaffolding(bool final) {
    auto fold = [&](HloInstruction* instr, HloInstruction* replacement) {
      instr->ReplaceAllUsesWith(replacement);
      if (!created_.contains(instr)) orphans_.insert(instr);
    };
    auto same_operands = [](const HloInstruction& a, const HloInstruction& b) {
      return a.operands() == b.operands() && a.shape() == b.shape();
    };
    // Only computations holding what this pass built or emptied have
    // anything to fold or delete (not the fusions' bodies, most of a large
    // module: their sweeps were 6% of mixtral_8x7b_bf16_2x8's passes).
    absl::flat_hash_set<const HloComputation*> touched;
    for (const auto* set : {&created_, &displaced_, &orphans_}) {
      for (const HloInstruction* instr : *set) touched.insert(instr->parent());
    }
    std::vector<HloComputation*> computations;
    for (const auto& c : module_.computations()) {
      if (touched.contains(c.get())) computations.push_back(c.get());
    }
    for (bool progress = true; progress;) {
      progress = false;
      for (HloComputation* c : computations) {
        std::vector<HloInstruction*> instrs;
        for (const auto& owned : c->instructions()) instrs.push_back(owned.get());
        std::vector<HloInstruction*> displaced_tuples, orphan_gtes;
        for (HloInstruction* instr : instrs) {
          if (instr->opcode() == HloOpcode::kTuple && displaced_.contains(instr)) {
            displaced_tuples.push_back(instr);
          }
          if (instr->opcode() == HloOpcode::kGetTupleElement && orphans_.contains(instr)) {
            orphan_gtes.push_back(instr);
          }
        }
        // The module's own get-tuple-element comes back where this pass's
        // reads the same element.
        for (HloInstruction* instr : instrs) {
          if (!final || instr->opcode() != HloOpcode::kGetTupleElement ||
              !created_.contains(instr)) {
            continue;
          }
          for (HloInstruction* old : orphan_gtes) {
            auto it = redirected_gte_.find(old);
            if (!orphans_.contains(old) || it == redirected_gte_.end() ||
                it->second != instr->operand(0) ||
                old->attrs().tuple_index != instr->attrs().tuple_index ||
                !(old->shape() == instr->shape())) {
              continue;
            }
            old->ReplaceOperandWith(0, instr->operand(0));
            instr->ReplaceAllUsesWith(old);
            orphans_.erase(old);
            progress = true;
            break;
          }
        }
        for (HloInstruction* instr : instrs) {
          if (!final || instr->opcode() != HloOpcode::kTuple || !created_.contains(instr)) continue;
          if (instr->users().empty() && c->root_instruction() != instr) continue;
          HloInstruction* source = RebuiltSource(*instr);
          for (HloInstruction* old : displaced_tuples) {
            if (source == nullptr && same_operands(*instr, *old)) source = old;
          }
          if (source != nullptr) {
            fold(instr, source);
            displaced_.erase(source);
            progress = true;
          }
        }
        if (final) continue;
        for (HloInstruction* instr : instrs) {
          if (instr->opcode() != HloOpcode::kGetTupleElement) continue;
          if (instr->users().empty() && c->root_instruction() != instr) continue;
          HloInstruction* tuple = instr->operand(0);
          const int64_t i = instr->attrs().tuple_index;
          if (tuple->opcode() != HloOpcode::kTuple || i < 0 || i >= tuple->operand_count() ||
              !(tuple->operand(i)->shape() == instr->shape()) ||
              (!created_.contains(instr) && !created_.contains(tuple))) {
            continue;
          }
          fold(instr, tuple->operand(i));
          progress = true;
        }
      }
    }
    // Delete the dead, users before operands.
    for (bool removed = true; removed;) {
      removed = false;
      for (HloComputation* c : computations) {
        std::vector<HloInstruction*> dead;
        for (const auto& owned : c->instructions()) {
          HloInstruction* instr = owned.get();
          const bool ours = created_.contains(instr);
          const bool emptied = final && (orphans_.contains(instr) || displaced_.contains(instr));
          if ((ours || emptied) && instr->users().empty() && c->root_instruction() != instr &&
              !instr->HasControlEdges() &&
              (ours || (instr->opcode() != HloOpcode::kParameter && !instr->HasSideEffect()))) {
            dead.push_back(instr);
          }
        }
        for (HloInstruction* instr : dead) {
          if (created_.erase(instr) == 0) orphans_removed_ = true;
          orphans_.erase(instr);
          displaced_.erase(instr);
          candidates_.erase(std::remove(candidates_.begin(), candidates_.end(), instr),
                            candidates_.end());
        }
        if (!dead.empty()) {
          c->RemoveInstructions(dead);
          removed = true;
        }
      }
    }
  }

  // tuple(gte(t, 0), ..., gte(t, n-1)) -> t.
  static HloInstruction* RebuiltSource(const HloInstruction& tuple) {
    HloInstruction* source = nullptr;
    for (int64_t i = 0; i < tuple.operand_count(); ++i) {
      const HloInstruction* op = tuple.operand(i);
      if (op->opcode() != HloOpcode::kGetTupleElement || op->attrs().tuple_index != i) {
        return nullptr;
      }
      if (source == nullptr) source = op->operand(0);
      if (op->operand(0) != source) return nullptr;
    }
    if (source == nullptr || !(source->shape() == tuple.shape())) return nullptr;
    return source;
  }

  // --- 2. Removing what is not needed ---------------------------------------

  // Rounds over every copy added in 1, each on a fresh analysis: a copy
  // whose removal leaves its merged buffer free of interference goes (with
  // copies that would then copy a buffer onto itself); one whose buffers
  // another removal of this round touched waits for the next round. The
  // last round removes nothing, so each kept copy's reason describes the
  // final module.
  absl::Status RemoveUnneededCopies() {
    for (int round = 0;; ++round) {
      if (round > 64) return Internal("copy-insertion: copy removal does not converge");
      ASSIGN_OR_RETURN(std::unique_ptr<HloAliasAnalysis> alias, HloAliasAnalysis::Run(module_));
      DependencyOrdering ordering(alias->dataflow_analysis());
      BufferInterference interference(*alias, ordering);
      // In module order, as XLA (computations, then their instruction lists).
      const HloDataflowAnalysis& dataflow = alias->dataflow_analysis();
      std::vector<HloInstruction*> ordered = candidates_;
      std::sort(ordered.begin(), ordered.end(), [&](HloInstruction* a, HloInstruction* b) {
        return dataflow.instruction_id(a) < dataflow.instruction_id(b);
      });
      absl::flat_hash_set<const HloInstruction*> open(candidates_.begin(), candidates_.end());
      absl::flat_hash_set<HloBuffer::Id> touched;
      absl::flat_hash_set<const HloInstruction*> decided;
      std::vector<HloInstruction*> removable;
      bool deferred = false;
      for (HloInstruction* copy : ordered) {
        if (decided.contains(copy)) continue;
        const HloBuffer* a = alias->GetBufferAt(copy->operand(0));
        const HloBuffer* b = alias->GetBufferAt(copy);
        if (a == nullptr || b == nullptr) {
          Keep(copy, std::nullopt);
          continue;
        }
        if (touched.contains(a->id()) || touched.contains(b->id())) {
          deferred = true;
          continue;
        }
        std::vector<const HloInstruction*> also;
        std::optional<Interference> found = interference.IfCopyRemoved(copy, open, &also);
        if (found.has_value()) {
          Keep(copy, found);
          continue;
        }
        removable.push_back(copy);
        for (const HloInstruction* other : also) {
          if (decided.insert(other).second) removable.push_back(const_cast<HloInstruction*>(other));
        }
        touched.insert(a->id());
        touched.insert(b->id());
      }
      if (removable.empty() && !deferred) return absl::OkStatus();
      std::map<HloComputation*, std::vector<HloInstruction*>> by_computation;
      for (HloInstruction* copy : removable) {
        copy->DropControlDependencies();
        copy->ReplaceAllUsesWith(copy->operand(0));
        records_.erase(copy);
        created_.erase(copy);
        kept_.erase(copy);
        // No set keeps a deleted instruction (its address may come back).
        displaced_.erase(copy);
        orphans_.erase(copy);
        by_computation[copy->parent()].push_back(copy);
      }
      const absl::flat_hash_set<HloInstruction*> gone(removable.begin(), removable.end());
      candidates_.erase(std::remove_if(candidates_.begin(), candidates_.end(),
                                       [&](HloInstruction* c) { return gone.contains(c); }),
                        candidates_.end());
      for (auto& [computation, copies] : by_computation) computation->RemoveInstructions(copies);
    }
  }

  void Keep(HloInstruction* copy, const std::optional<Interference>& why) {
    auto it = records_.find(copy);
    if (it == records_.end()) return;
    CopyRecord kept = it->second;
    if (why.has_value()) absl::StrAppend(&kept.context, ": ", why->ToString());
    kept_[copy] = std::move(kept);
  }

  // --- 3. Special cases ------------------------------------------------------

  absl::Status AddSpecialCaseCopies() {
    ASSIGN_OR_RETURN(std::unique_ptr<HloAliasAnalysis> alias, HloAliasAnalysis::Run(module_));
    const HloDataflowAnalysis& dataflow = alias->dataflow_analysis();
    HloComputation* entry = module_.entry_computation();
    HloInstruction* root = entry->root_instruction();
    const ModuleConfig& config = module_.config();
    auto output_alias = [&](const ShapeIndex& index) -> const InputOutputAlias* {
      if (!config.input_output_alias_present) return nullptr;
      for (const InputOutputAlias& a : config.input_output_alias) {
        if (a.output_index == index) return &a;
      }
      return nullptr;
    };
    auto parameter_alias = [&](int64_t number, const ShapeIndex& index) {
      if (!config.input_output_alias_present) return false;
      for (const InputOutputAlias& a : config.input_output_alias) {
        if (a.parameter_number == number && a.parameter_index == index) return true;
      }
      return false;
    };
    // Outputs: read-only values and buffers seen at an earlier index.
    std::map<ShapeIndex, CopyRecord> marks;
    absl::flat_hash_map<HloBuffer::Id, ShapeIndex> seen;
    // Tuple indices too: a table that is read-only or appears twice is
    // rebuilt (a new tuple), as XLA's deep copy does.
    std::vector<ShapeIndex> indices;
    ForEachSubshape(root->shape(), [&](const Shape& shape, const ShapeIndex& index) {
      if (!shape.IsToken()) indices.push_back(index);
    });
    for (const ShapeIndex& index : indices) {
      const HloValue* value = dataflow.GetValueAt(root, index);
      if (value == nullptr) continue;
      const std::string out = absl::StrCat("output ", ShapeIndexToString(index));
      // The output's buffer must not be read-only: neither the value itself
      // nor one it holds through a loop or branch (a constant, a parameter
      // not donated).
      const HloBuffer& held = alias->GetBufferContainingValue(*value);
      for (const HloValue* v : held.values()) {
        const HloInstruction* d = v->defining_instruction();
        const std::string how =
            v == value ? " is " : absl::StrCat(" holds, through ", value->ToShortString(), ", ");
        if (d->opcode() == HloOpcode::kConstant) {
          marks[index] = {CopyReason::kReadOnlyOutput,
                          absl::StrCat(out, how, "constant ", d->name(), ", which is read-only"),
                          -1,
                          {},
                          index};
          break;
        }
        if (d->opcode() == HloOpcode::kParameter && d->parent() == entry &&
            !parameter_alias(d->attrs().parameter_number, v->defining_index())) {
          marks[index] = {CopyReason::kReadOnlyOutput,
                          absl::StrCat(out, how, "parameter ", d->attrs().parameter_number, " ",
                                       ShapeIndexToString(v->defining_index()),
                                       ", which is not donated (read-only)"),
                          d->attrs().parameter_number, v->defining_index(), index};
          break;
        }
      }
      const HloBuffer& buffer = alias->GetBufferContainingValue(*value);
      auto [it, first] = seen.emplace(buffer.id(), index);
      if (first) continue;
      const ShapeIndex& earlier = it->second;
      if (output_alias(index) != nullptr) {
        marks[earlier] = {
            CopyReason::kNonDistinctOutput,
            absl::StrCat("output ", ShapeIndexToString(earlier),
                         " holds the same buffer as output ", ShapeIndexToString(index),
                         ", which is aliased to a parameter"),
            -1,
            {},
            earlier};
      } else {
        marks[index] = {
            CopyReason::kNonDistinctOutput,
            absl::StrCat(out, " holds the same buffer as output ", ShapeIndexToString(earlier)),
            -1,
            {},
            index};
      }
    }
    // Read-only values that still share a buffer with a written value.
    const CallGraph& graph = dataflow.call_graph();
    auto graph_reaches = [&](const HloInstruction* d) {
      return d->parent() != nullptr && graph.IsSequential(d->parent()) &&
             graph.GetNode(d->parent()).reachable_from_entry();
    };
    DependencyOrdering ordering(dataflow);
    BufferInterference interference(*alias, ordering);
    std::vector<std::pair<const HloValue*, std::string>> shared;
    for (const HloBuffer& buffer : alias->buffers()) {
      if (buffer.values().size() < 2) continue;
      std::optional<Interference> found = interference.InBuffer(buffer);
      if (found.has_value() && found->read_only) {
        shared.push_back({found->needed, found->ToString()});
        continue;
      }
      // Tables are not checked for interference, but a read-only one (an
      // entry parameter's or a constant's) must not be written at all.
      const HloValue* table = nullptr;
      const HloValue* writer = nullptr;
      for (const HloValue* value : buffer.values()) {
        const HloInstruction* d = value->defining_instruction();
        const bool read_only =
            d->opcode() == HloOpcode::kConstant ||
            (d->opcode() == HloOpcode::kParameter && d->parent() == entry &&
             !parameter_alias(d->attrs().parameter_number, value->defining_index()));
        if (value->shape().IsTuple() && read_only) {
          table = value;
        } else if (!value->is_phi() && interference.Considered(*value)) {
          writer = value;
        } else if (!value->is_phi() && value->shape().IsTuple() &&
                   graph_reaches(value->defining_instruction())) {
          writer = value;
        }
      }
      if (table != nullptr && writer != nullptr) {
        shared.push_back(
            {table, absl::StrCat("the table of ", table->ToShortString(), " is read-only, but ",
                                 writer->ToShortString(), " would write its buffer")});
      }
    }
    std::vector<ShapeIndex> leaves;
    for (const auto& [index, record] : marks) leaves.push_back(index);
    std::vector<std::tuple<HloInstruction*, ShapeIndex, std::string>> at_definition;
    for (const auto& [value, why] : shared) {
      at_definition.push_back({value->defining_instruction(), value->defining_index(), why});
    }
    alias.reset();
    if (!leaves.empty()) {
      std::vector<std::pair<ShapeIndex, HloInstruction*>> copies;
      HloInstruction* copy = DeepCopy(root, leaves, &copies);
      SetRoot(entry, copy);
      for (const auto& [index, c] : copies) kept_[c] = marks[index];
    }
    for (auto& [instr, index, why] : at_definition) {
      std::vector<HloInstruction*> users = instr->users();
      std::vector<std::pair<ShapeIndex, HloInstruction*>> copies;
      HloInstruction* copy = DeepCopy(instr, {index}, &copies);
      Redirect(instr, users, copy);
      if (instr->parent()->root_instruction() == instr) SetRoot(instr->parent(), copy);
      for (const auto& [i, c] : copies)
        kept_[c] = CopyRecord{CopyReason::kReadOnlyShared, why, -1, {}, std::nullopt};
    }
    return absl::OkStatus();
  }

  // What is left must be free of interference; anything else is a bug here.
  absl::Status CheckNoInterference() {
    ASSIGN_OR_RETURN(std::unique_ptr<HloAliasAnalysis> alias, HloAliasAnalysis::Run(module_));
    DependencyOrdering ordering(alias->dataflow_analysis());
    BufferInterference interference(*alias, ordering);
    for (const HloBuffer& buffer : alias->buffers()) {
      if (buffer.values().size() < 2) continue;
      if (std::optional<Interference> found = interference.InBuffer(buffer)) {
        return Internal("copy-insertion left two values of one buffer interfering: ",
                        found->ToString());
      }
    }
    return absl::OkStatus();
  }

  // --- Keeping a schedule -------------------------------------------------------

  // New instructions go right before their first user in the old order;
  // the old order is otherwise kept (a topological order by position).
  void RepairSchedule() {
    for (const auto& c : module_.computations()) {
      bool has_new = false;
      absl::flat_hash_map<const HloInstruction*, int64_t> position;
      int64_t p = 0;
      for (const auto& i : c->instructions()) {
        if (original_.contains(i.get())) {
          position[i.get()] = 2 * p++;
        } else {
          has_new = true;
        }
      }
      if (!has_new) continue;
      // A new instruction's place: just before its earliest (old) user.
      std::function<int64_t(const HloInstruction*)> place = [&](const HloInstruction* i) {
        auto it = position.find(i);
        if (it != position.end()) return it->second;
        int64_t best = 2 * p + 1;  // no user: at the end
        for (const HloInstruction* user : i->users()) best = std::min(best, place(user) - 1);
        for (const HloInstruction* succ : i->control_successors()) {
          best = std::min(best, place(succ) - 1);
        }
        position[i] = best;
        return best;
      };
      std::vector<HloInstruction*> all;
      for (const auto& i : c->instructions()) all.push_back(i.get());
      for (HloInstruction* i : all) place(i);
      // Kahn's algorithm taking the ready instruction with the lowest place.
      absl::flat_hash_map<const HloInstruction*, int64_t> waiting;
      absl::flat_hash_map<const HloInstruction*, int64_t> sequence;
      using Entry = std::tuple<int64_t, int64_t, HloInstruction*>;
      std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
      for (size_t k = 0; k < all.size(); ++k) {
        HloInstruction* i = all[k];
        sequence[i] = static_cast<int64_t>(k);
        int64_t preds = 0;
        for (const HloInstruction* op : i->operands()) preds += op->parent() == c.get();
        for (const HloInstruction* op : i->control_predecessors()) preds += op->parent() == c.get();
        waiting[i] = preds;
        if (preds == 0) ready.push({position[i], sequence[i], i});
      }
      std::vector<HloInstruction*> order;
      while (!ready.empty()) {
        HloInstruction* i = std::get<2>(ready.top());
        ready.pop();
        order.push_back(i);
        auto release = [&](HloInstruction* next) {
          if (next->parent() != c.get()) return;
          if (--waiting[next] == 0) ready.push({position[next], sequence[next], next});
        };
        // Operands listed twice count twice: release once per listing.
        for (HloInstruction* user : i->users()) {
          for (const HloInstruction* op : user->operands()) {
            if (op == i) release(user);
          }
        }
        for (HloInstruction* succ : i->control_successors()) release(succ);
      }
      if (order.size() == all.size()) c->SetInstructionOrder(order);
    }
  }

  HloModule& module_;
  absl::flat_hash_set<std::string> names_;
  absl::flat_hash_map<std::string, int64_t> counters_;
  absl::flat_hash_set<const HloInstruction*> original_;
  absl::flat_hash_set<HloInstruction*> created_;
  absl::flat_hash_map<HloInstruction*, CopyRecord> records_;
  std::vector<HloInstruction*> candidates_;
  absl::flat_hash_map<HloInstruction*, CopyRecord> kept_;
  // The module's own instructions this pass took users from.
  absl::flat_hash_set<HloInstruction*> displaced_;
  // The module's get-tuple-elements that read what a deep copy replaced.
  absl::flat_hash_map<HloInstruction*, HloInstruction*> redirected_gte_;
  // The module's get-tuple-elements folded away (deleted once unused).
  absl::flat_hash_set<HloInstruction*> orphans_;
  bool orphans_removed_ = false;
};

}  // namespace

absl::StatusOr<bool> CopyInsertion::Run(HloModule& module) {
  copies_.clear();
  Inserter inserter(module);
  return inserter.Run(&copies_);
}

}  // namespace xlite
