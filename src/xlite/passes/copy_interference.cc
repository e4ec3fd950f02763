#include "xlite/passes/copy_interference.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "xlite/analysis/in_place_pairs.h"

namespace xlite {
namespace {

bool IsEntryParameterValue(const HloValue& value) {
  const HloInstruction* d = value.defining_instruction();
  return d->opcode() == HloOpcode::kParameter && d->parent() != nullptr && d->parent()->is_entry();
}

bool ParameterHasAlias(const HloModule& module, int64_t number, const ShapeIndex& index) {
  if (!module.config().input_output_alias_present) return false;
  for (const InputOutputAlias& a : module.config().input_output_alias) {
    if (a.parameter_number == number && a.parameter_index == index) return true;
  }
  return false;
}

}  // namespace

std::string Interference::ToString() const {
  const std::string writes = writer->defining_instruction()->opcode() == HloOpcode::kParameter
                                 ? absl::StrCat("parameter ", writer->ToShortString())
                                 : writer->defining_instruction()->name();
  if (read_only) {
    const HloInstruction* d = needed->defining_instruction();
    const std::string what = d->opcode() == HloOpcode::kConstant
                                 ? absl::StrCat("constant ", d->name())
                                 : absl::StrCat("parameter ", d->attrs().parameter_number, " ",
                                                ShapeIndexToString(needed->defining_index()), " (",
                                                d->name(), "), which is not donated,");
    return absl::StrCat(what, " is read-only, but ", writes, " would write its buffer");
  }
  std::string when;
  if (reader != nullptr) {
    when = absl::StrCat("is still read by ", reader->name());
  } else if (end_of != nullptr && end_of->is_entry()) {
    when = "is still needed as an output";
  } else if (end_of != nullptr) {
    when = absl::StrCat("is still needed at the end of ", end_of->name());
  } else {
    when = "is still needed";
  }
  return absl::StrCat(needed->ToShortString(), " ", when, " after ", writes,
                      " writes the buffer they share");
}

BufferInterference::BufferInterference(const HloAliasAnalysis& alias,
                                       const DependencyOrdering& ordering)
    : alias_(alias), dataflow_(alias.dataflow_analysis()), ordering_(ordering) {}

bool BufferInterference::Considered(const HloValue& value) const {
  const Shape& shape = value.shape();
  if (shape.IsTuple() || shape.IsToken()) return false;
  const HloComputation* c = value.defining_instruction()->parent();
  const CallGraph& graph = dataflow_.call_graph();
  return c != nullptr && graph.IsSequential(c) && graph.GetNode(c).reachable_from_entry();
}

BufferInterference::Info BufferInterference::MakeInfo(const HloValue& value) const {
  Info info;
  info.value = &value;
  const HloInstruction* d = value.defining_instruction();
  const HloComputation* c = d->parent();
  if (value.is_phi()) {
    info.phi = PhiKind::kOther;
    if (d->opcode() == HloOpcode::kWhile) {
      info.phi = PhiKind::kLoopResult;
      info.construct = d;
    } else if (d->opcode() == HloOpcode::kConditional) {
      info.phi = PhiKind::kConditionalResult;
      info.construct = d;
    } else if (d->opcode() == HloOpcode::kParameter) {
      std::vector<const CallSite*> callers = dataflow_.call_graph().SequentialCallers(c);
      if (callers.size() == 1 && callers[0]->instruction->opcode() == HloOpcode::kWhile) {
        info.phi = PhiKind::kLoopState;
        info.construct = callers[0]->instruction;
      }
    }
  } else {
    info.def =
        d->opcode() == HloOpcode::kParameter ? ProgramPoint::Start(c) : ProgramPoint::Write(d);
    info.read_only = d->opcode() == HloOpcode::kConstant ||
                     (IsEntryParameterValue(value) &&
                      !ParameterHasAlias(dataflow_.module(), d->attrs().parameter_number,
                                         value.defining_index()));
  }
  for (const HloUse& use : value.uses()) {
    info.reads.push_back(Read{ProgramPoint::Read(use.instruction), use.instruction,
                              use.operand_number, use.operand_index});
  }
  const CallGraph& graph = dataflow_.call_graph();
  for (const HloPosition& position : value.positions()) {
    const HloComputation* pc = position.instruction->parent();
    if (pc == nullptr || pc->root_instruction() != position.instruction ||
        !graph.IsSequential(pc)) {
      continue;
    }
    const bool seen = std::any_of(info.reads.begin(), info.reads.end(), [&](const Read& r) {
      return r.user == nullptr && r.point.computation == pc;
    });
    if (!seen) info.reads.push_back(Read{ProgramPoint::End(pc), nullptr, 0, {}});
  }
  return info;
}

bool BufferInterference::CanShare(const Read& read, const Info& writer) const {
  const HloInstruction* user = read.user;
  const ShapeIndex& output = writer.value->defining_index();
  if (MayHaveInPlacePairs(user->opcode())) {
    for (const auto& [input, out] : GetInPlaceInputOutputPairs(*user)) {
      if (input.operand_number == read.operand_number &&
          input.operand_index == read.operand_index && out == output) {
        return true;
      }
    }
  }
  // An elementwise op or loop fusion reads each element before it writes
  // the same one.
  return read.operand_index.empty() && MayShareOperandBuffer(*user, read.operand_number, output);
}

std::optional<Interference> BufferInterference::Interferes(const Info& x, const Info& y) const {
  auto late_read = [&]() -> std::optional<Interference> {
    const HloInstruction* writer =
        y.def.kind == ProgramPoint::Kind::kWrite ? y.def.instruction : nullptr;
    for (const Read& r : x.reads) {
      if (r.user != nullptr && r.user == writer) {
        if (CanShare(r, y)) continue;
      } else if (ordering_.ExecutesBefore(r.point, y.def) ||
                 ordering_.MutuallyExclusive(r.point, y.def)) {
        continue;
      }
      Interference found;
      found.needed = x.value;
      found.writer = y.value;
      found.reader = r.user;
      found.end_of = r.user == nullptr ? r.point.computation : nullptr;
      return found;
    }
    return std::nullopt;
  };
  switch (x.phi) {
    case PhiKind::kNone:
      if (x.read_only) {
        Interference found;
        found.needed = x.value;
        found.writer = y.value;
        found.read_only = true;
        return found;
      }
      if (ordering_.ExecutesBefore(y.def, x.def)) return std::nullopt;
      return late_read();
    case PhiKind::kLoopResult:
    case PhiKind::kConditionalResult:
      // Writes inside produce the result; writes before it are the inputs'
      // business (their own reads reach the construct).
      if (ordering_.IsInside(y.def, x.construct)) return std::nullopt;
      if (ordering_.ExecutesBefore(y.def, ProgramPoint::Read(x.construct))) return std::nullopt;
      return late_read();
    case PhiKind::kLoopState:
      if (!ordering_.IsInside(y.def, x.construct) &&
          ordering_.ExecutesBefore(y.def, ProgramPoint::Read(x.construct))) {
        return std::nullopt;
      }
      return late_read();
    case PhiKind::kOther:
      return late_read();
  }
  return std::nullopt;
}

std::optional<Interference> BufferInterference::Check(const std::vector<Info>& values) const {
  for (const Info& y : values) {
    if (y.phi != PhiKind::kNone) continue;
    for (const Info& x : values) {
      if (x.value == y.value) continue;
      if (std::optional<Interference> found = Interferes(x, y)) return found;
    }
  }
  return std::nullopt;
}

std::optional<Interference> BufferInterference::InBuffer(const HloBuffer& buffer) const {
  std::vector<Info> infos;
  for (const HloValue* value : buffer.values()) {
    if (Considered(*value)) infos.push_back(MakeInfo(*value));
  }
  return Check(infos);
}

std::optional<Interference> BufferInterference::IfCopyRemoved(
    const HloInstruction* copy, const absl::flat_hash_set<const HloInstruction*>& removable,
    std::vector<const HloInstruction*>* also) const {
  const HloValue* source = dataflow_.GetValueAt(copy->operand(0));
  const HloValue* dest = dataflow_.GetValueAt(copy);
  Interference keep;
  keep.needed = source;
  keep.writer = dest;
  keep.reader = copy;
  if (source == nullptr || dest == nullptr || dest->defining_instruction() != copy ||
      !Considered(*source) || !Considered(*dest)) {
    return keep;
  }
  const HloBuffer& a = alias_.GetBufferContainingValue(*source);
  const HloBuffer& b = alias_.GetBufferContainingValue(*dest);
  if (&a == &b) return keep;
  // Values that disappear, and the value each one's readers read instead.
  absl::flat_hash_map<const HloValue*, const HloValue*> replaced = {{dest, source}};
  std::vector<const HloValue*> merged;
  for (const HloBuffer* buffer : {&a, &b}) {
    for (const HloValue* value : buffer->values()) {
      if (value != dest && Considered(*value)) merged.push_back(value);
    }
  }
  for (const HloValue* value : merged) {
    const HloInstruction* d = value->defining_instruction();
    if (d->opcode() != HloOpcode::kCopy || !removable.contains(d) || d == copy) continue;
    const HloValue* from = dataflow_.GetValueAt(d->operand(0));
    if (from == nullptr || value->defining_index() != ShapeIndex{}) continue;
    const HloBuffer& home = alias_.GetBufferContainingValue(*from);
    if (&home != &a && &home != &b) continue;
    replaced[value] = from;
    also->push_back(d);
  }
  auto resolve = [&](const HloValue* v) {
    for (int guard = 0; guard < 1 << 16; ++guard) {
      auto it = replaced.find(v);
      if (it == replaced.end()) break;
      v = it->second;
    }
    return v;
  };
  absl::flat_hash_map<const HloValue*, size_t> slot;
  std::vector<Info> infos;
  for (const HloValue* value : merged) {
    if (replaced.contains(value)) continue;
    slot[value] = infos.size();
    infos.push_back(MakeInfo(*value));
  }
  // Readers of a removed copy read its source; the copy's own read goes.
  absl::flat_hash_set<const HloInstruction*> gone = {copy};
  for (const HloInstruction* c : *also) gone.insert(c);
  for (const auto& [value, to] : replaced) {
    auto it = slot.find(resolve(value));
    if (it == slot.end()) continue;
    Info& target = infos[it->second];
    Info removed = MakeInfo(*value);
    target.reads.insert(target.reads.end(), removed.reads.begin(), removed.reads.end());
  }
  for (Info& info : infos) {
    info.reads.erase(std::remove_if(info.reads.begin(), info.reads.end(),
                                    [&](const Read& r) { return gone.contains(r.user); }),
                     info.reads.end());
  }
  std::optional<Interference> found = Check(infos);
  if (found.has_value()) also->clear();
  return found;
}

}  // namespace xlite
