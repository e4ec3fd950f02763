#include "xlite/passes/while_loop_state.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "xlite/ir/module.h"

namespace xlite {
namespace {

HloComputation& Condition(const HloInstruction& loop) { return *loop.called_computations()[0]; }
HloComputation& Body(const HloInstruction& loop) { return *loop.called_computations()[1]; }

// The get-tuple-elements of `c`'s parameter that read element `index`.
std::vector<HloInstruction*> ElementReaders(const HloComputation& c, int64_t index) {
  std::vector<HloInstruction*> out;
  for (HloInstruction* user : c.parameter_instruction(0)->users()) {
    if (user->attrs().tuple_index == index) out.push_back(user);
  }
  return out;
}

HloInstruction* Add(HloComputation& c, HloOpcode opcode, std::string name, Shape shape,
                    const std::vector<HloInstruction*>& operands) {
  auto instr = std::make_unique<HloInstruction>(opcode, std::move(name), std::move(shape));
  for (HloInstruction* op : operands) instr->AppendOperand(op);
  return c.AddInstruction(std::move(instr));
}

// `made` (appended last) moved right before `anchor` in `c`'s order; at the
// end where `anchor` is null.
void PlaceBefore(HloComputation& c, const std::vector<HloInstruction*>& made,
                 const HloInstruction* anchor) {
  const absl::flat_hash_set<const HloInstruction*> moving(made.begin(), made.end());
  std::vector<HloInstruction*> order;
  order.reserve(c.instructions().size());
  bool placed = false;
  for (const auto& i : c.instructions()) {
    if (moving.contains(i.get())) continue;
    if (!placed && i.get() == anchor) {
      order.insert(order.end(), made.begin(), made.end());
      placed = true;
    }
    order.push_back(i.get());
  }
  if (!placed) order.insert(order.end(), made.begin(), made.end());
  c.SetInstructionOrder(order);
}

// The first instruction of `c`'s order among `set`.
const HloInstruction* FirstOf(const HloComputation& c,
                              const absl::flat_hash_set<const HloInstruction*>& set) {
  for (const auto& i : c.instructions()) {
    if (set.contains(i.get())) return i.get();
  }
  return nullptr;
}

// Copies `value` and what it is computed from into `c`, operands first.
HloInstruction* CloneFromNothing(const HloInstruction& value, HloComputation& c, NameUniquer& names,
                                 std::vector<HloInstruction*>& made) {
  std::vector<HloInstruction*> operands;
  for (const HloInstruction* op : value.operands()) {
    operands.push_back(CloneFromNothing(*op, c, names, made));
  }
  HloInstruction* clone =
      Add(c, value.opcode(), names.Get(value.name() + ".sunk"), value.shape(), operands);
  clone->attrs() = value.attrs();
  made.push_back(clone);
  return clone;
}

// Calls computations of its own (a fusion's body, a loop's, a call's, a
// branch): kept, not removed with dead loop state (dce removes them with
// their computations). Reducers and comparators are shared and go freely.
bool OwnsComputations(const HloInstruction& instr) {
  if (instr.called_computations().empty()) return false;
  switch (instr.opcode()) {
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kSort:
    case HloOpcode::kMap:
    case HloOpcode::kScatter:
    case HloOpcode::kSelectAndScatter:
      return false;
    default:
      return true;
  }
}

// Removes those of `seeds` nothing reads that may go (no parameters, side
// effects, control edges or called computations: loops, calls and fusions are
// left to dce), then their operands the same way. A seed may be
// named twice or be removed as another's operand first: only instructions
// still in `c` are looked at.
void RemoveUnread(HloComputation& c, std::vector<HloInstruction*> seeds) {
  absl::flat_hash_set<const HloInstruction*> present;
  for (const auto& i : c.instructions()) present.insert(i.get());
  while (!seeds.empty()) {
    HloInstruction* instr = seeds.back();
    seeds.pop_back();
    if (!present.contains(instr) || !instr->users().empty() || c.root_instruction() == instr ||
        instr->opcode() == HloOpcode::kParameter || instr->HasSideEffect() ||
        instr->HasControlEdges() || !instr->called_computations().empty()) {
      continue;
    }
    std::vector<HloInstruction*> operands = instr->operands();
    present.erase(instr);
    c.RemoveInstruction(instr);
    seeds.insert(seeds.end(), operands.begin(), operands.end());
  }
}

// `replacement` takes `old`'s place in its computation's order (and its root
// role); `old` is removed (nothing may read it any more).
void Supersede(HloInstruction* old, HloInstruction* replacement) {
  HloComputation& c = *old->parent();
  PlaceBefore(c, {replacement}, old);
  if (c.root_instruction() == old) c.set_root_instruction(replacement);
  c.RemoveInstruction(old);
}

}  // namespace

bool ReadsParameterByElement(const HloComputation& c) {
  if (c.num_parameters() != 1 || c.parameter_instruction(0) == nullptr) return false;
  for (const HloInstruction* user : c.parameter_instruction(0)->users()) {
    if (user->opcode() != HloOpcode::kGetTupleElement) return false;
  }
  return c.root_instruction() != c.parameter_instruction(0);
}

absl::flat_hash_map<const HloComputation*, int64_t> CountCallers(const HloModule& module) {
  absl::flat_hash_map<const HloComputation*, int64_t> callers;
  for (const auto& c : module.computations()) {
    for (const auto& i : c->instructions()) {
      for (const HloComputation* called : i->called_computations()) ++callers[called];
    }
  }
  return callers;
}

bool HasElementwiseState(const HloInstruction& loop,
                         const absl::flat_hash_map<const HloComputation*, int64_t>& callers) {
  if (loop.opcode() != HloOpcode::kWhile || loop.operand_count() != 1 ||
      loop.called_computations().size() != 2 || !loop.shape().IsTuple() || loop.HasControlEdges()) {
    return false;
  }
  const HloComputation& body = Body(loop);
  const HloComputation& condition = Condition(loop);
  if (&body == &condition) return false;
  for (const HloComputation* c : {&body, &condition}) {
    auto it = callers.find(c);
    if (it == callers.end() || it->second != 1 || !ReadsParameterByElement(*c)) return false;
  }
  const HloInstruction* root = body.root_instruction();
  return root != nullptr && root->opcode() == HloOpcode::kTuple &&
         root->operand_count() == loop.shape().tuple_shapes_size() && root->users().empty() &&
         !root->HasControlEdges();
}

bool IsInvariantElement(const HloInstruction& loop, int64_t index) {
  const HloComputation& body = Body(loop);
  const HloInstruction* r = body.root_instruction()->operand(index);
  return r->opcode() == HloOpcode::kGetTupleElement &&
         r->operand(0) == body.parameter_instruction(0) && r->attrs().tuple_index == index;
}

bool IsComputedFromNothing(const HloInstruction& value, int64_t max_constant_elements) {
  if (!value.shape().IsArray() || value.HasControlEdges()) return false;
  switch (value.opcode()) {
    case HloOpcode::kConstant:
      return max_constant_elements < 0 || value.shape().ElementCount() <= max_constant_elements;
    case HloOpcode::kIota:
      return true;
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
    case HloOpcode::kConvert:
      return IsComputedFromNothing(*value.operand(0), max_constant_elements);
    default:
      return false;
  }
}

std::vector<HloInstruction*> SinkInvariantElement(HloInstruction& loop, int64_t index,
                                                  const HloInstruction& value, NameUniquer& names) {
  std::vector<HloInstruction*> roots;
  for (HloComputation* c : {&Body(loop), &Condition(loop)}) {
    const HloInstruction* root = c->root_instruction();
    const bool is_body = c == &Body(loop);
    // (reader, operand number) pairs to reroute.
    std::vector<std::pair<HloInstruction*, int64_t>> reads;
    for (HloInstruction* element : ElementReaders(*c, index)) {
      for (HloInstruction* user : element->users()) {
        for (int64_t k = 0; k < user->operand_count(); ++k) {
          if (user->operand(k) != element || (is_body && user == root && k == index)) continue;
          reads.push_back({user, k});
        }
      }
    }
    if (reads.empty()) continue;
    std::vector<HloInstruction*> made;
    HloInstruction* copy = CloneFromNothing(value, *c, names, made);
    absl::flat_hash_set<const HloInstruction*> readers;
    for (auto& [user, k] : reads) {
      user->ReplaceOperandWith(k, copy);
      readers.insert(user);
    }
    PlaceBefore(*c, made, FirstOf(*c, readers));
    roots.push_back(copy);
  }
  return roots;
}

int64_t RemoveDeadElements(HloInstruction& loop, NameUniquer& names,
                           const std::vector<bool>* removable) {
  HloComputation& body = Body(loop);
  HloComputation& condition = Condition(loop);
  HloComputation& outside = *loop.parent();
  HloInstruction* root = body.root_instruction();
  const int64_t n = loop.shape().tuple_shapes_size();
  if (outside.root_instruction() == &loop) return 0;
  std::vector<bool> needed(n, false);
  for (int64_t i = 0; removable != nullptr && i < n; ++i) {
    needed[i] = i >= static_cast<int64_t>(removable->size()) || !(*removable)[i];
  }
  for (const HloInstruction* user : loop.users()) {
    if (user->opcode() != HloOpcode::kGetTupleElement) return 0;
    needed[user->attrs().tuple_index] = true;
  }
  for (int64_t i = 0; i < n; ++i) {
    for (const HloInstruction* e : ElementReaders(condition, i)) {
      needed[i] = needed[i] || !e->users().empty() || condition.root_instruction() == e;
    }
  }
  // The body's work that matters: what the needed elements' next values and
  // the side effects are computed from. An element read there is needed too;
  // until nothing changes.
  for (bool grew = true; grew;) {
    grew = false;
    absl::flat_hash_set<const HloInstruction*> live;
    std::vector<const HloInstruction*> stack;
    for (int64_t i = 0; i < n; ++i) {
      if (needed[i]) stack.push_back(root->operand(i));
    }
    for (const auto& instr : body.instructions()) {
      if (instr->HasSideEffect() || instr->HasControlEdges() || OwnsComputations(*instr)) {
        stack.push_back(instr.get());
      }
    }
    while (!stack.empty()) {
      const HloInstruction* instr = stack.back();
      stack.pop_back();
      if (!live.insert(instr).second) continue;
      for (const HloInstruction* op : instr->operands()) stack.push_back(op);
    }
    for (const HloInstruction* e : body.parameter_instruction(0)->users()) {
      const int64_t i = e->attrs().tuple_index;
      if (!needed[i] && live.contains(e)) needed[i] = grew = true;
    }
  }
  std::vector<int64_t> new_index(n, -1);
  Shape state = loop.shape();
  state.mutable_tuple_shapes().clear();
  for (int64_t i = 0; i < n; ++i) {
    if (!needed[i]) continue;
    new_index[i] = state.tuple_shapes_size();
    state.mutable_tuple_shapes().push_back(loop.shape().tuple_shapes(i));
  }
  const int64_t removed = n - state.tuple_shapes_size();
  if (removed == 0) return 0;

  // The body: a root of the kept elements, its parameter reads renumbered.
  std::vector<HloInstruction*> kept_results;
  for (int64_t i = 0; i < n; ++i) {
    if (needed[i]) kept_results.push_back(root->operand(i));
  }
  std::vector<HloInstruction*> dropped_results = root->operands();
  Supersede(root, Add(body, HloOpcode::kTuple, root->name(), state, kept_results));
  for (HloComputation* c : {&body, &condition}) {
    HloInstruction* param = c->parameter_instruction(0);
    param->mutable_shape() = state;
    // A dropped element's reads go with everything computed from them: none
    // of it is needed (dead code earlier passes left included), or the
    // element would be.
    std::vector<HloInstruction*> dead;
    absl::flat_hash_set<HloInstruction*> seen;
    for (HloInstruction* e : param->users()) {
      const int64_t i = e->attrs().tuple_index;
      if (needed[i]) {
        e->attrs().tuple_index = new_index[i];
      } else if (seen.insert(e).second) {
        dead.push_back(e);
      }
    }
    for (size_t k = 0; k < dead.size(); ++k) {
      for (HloInstruction* user : dead[k]->users()) {
        if (seen.insert(user).second) dead.push_back(user);
      }
    }
    c->RemoveInstructions(dead);
    if (c == &body) RemoveUnread(*c, dropped_results);
  }

  // The init: a tuple of the kept elements.
  HloInstruction* init = loop.operand(0);
  if (init->opcode() == HloOpcode::kTuple && init->users().size() == 1 &&
      init->operand_count() == n && !init->HasControlEdges() &&
      outside.root_instruction() != init) {
    std::vector<HloInstruction*> kept, dropped = init->operands();
    for (int64_t i = 0; i < n; ++i) {
      if (needed[i]) kept.push_back(init->operand(i));
    }
    HloInstruction* tuple = Add(outside, HloOpcode::kTuple, init->name(), state, kept);
    tuple->attrs().metadata = init->attrs().metadata;
    loop.ReplaceOperandWith(0, tuple);
    Supersede(init, tuple);
    RemoveUnread(outside, std::move(dropped));
  } else {
    std::vector<HloInstruction*> elements, made;
    for (int64_t i = 0; i < n; ++i) {
      if (!needed[i]) continue;
      HloInstruction* e = Add(outside, HloOpcode::kGetTupleElement, names.Get("get-tuple-element"),
                              loop.shape().tuple_shapes(i), {init});
      e->attrs().tuple_index = i;
      elements.push_back(e);
      made.push_back(e);
    }
    HloInstruction* tuple = Add(outside, HloOpcode::kTuple, names.Get("tuple"), state, elements);
    made.push_back(tuple);
    loop.ReplaceOperandWith(0, tuple);
    PlaceBefore(outside, made, &loop);
  }
  loop.mutable_shape() = state;
  for (HloInstruction* user : loop.users()) {
    user->attrs().tuple_index = new_index[user->attrs().tuple_index];
  }
  return removed;
}

}  // namespace xlite
