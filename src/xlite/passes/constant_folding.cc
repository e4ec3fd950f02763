#include "xlite/passes/constant_folding.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "xlite/eval/evaluator.h"

namespace xlite {
namespace {

// Values that differ between devices or runs, or effects.
bool DeviceOrEffectful(const HloInstruction& instr) {
  switch (instr.opcode()) {
    case HloOpcode::kReplicaId:
    case HloOpcode::kPartitionId:
    case HloOpcode::kRng:
    case HloOpcode::kRngBitGenerator:
    case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kCustomCall:
      return true;
    default:
      return (HloOpcodeTraits(instr.opcode()) & kCollective) != 0 || instr.HasSideEffect();
  }
}

class Folder {
 public:
  Folder(HloModule& module, const ConstantFolding::Options& options) : options_(options) {
    for (const auto& c : module.computations()) {
      for (const auto& i : c->instructions()) names_.insert(i->name());
    }
  }

  bool FoldComputation(HloComputation& comp) {
    bool changed = false;
    for (HloInstruction* instr : comp.MakeInstructionPostOrder()) {
      if (!Foldable(*instr)) continue;
      std::vector<Literal> storage;
      std::vector<const Literal*> operands;
      if (!OperandValues(*instr, storage, operands)) continue;
      EvalOptions eval_options;
      eval_options.max_seconds = options_.max_seconds;
      eval_options.max_total_elements = 64 * options_.max_result_elements;
      absl::StatusOr<Literal> value = EvaluateStandalone(*instr, operands, eval_options);
      if (!value.ok() || !value->shape().IsArray() ||
          value->shape().dimensions() != instr->shape().dimensions() ||
          value->shape().element_type() != instr->shape().element_type()) {
        continue;
      }
      auto constant = std::make_unique<HloInstruction>(HloOpcode::kConstant, Unique(instr->name()),
                                                       instr->shape());
      constant->attrs().literal = std::move(*value);
      constant->attrs().metadata = instr->attrs().metadata;
      constant->attrs().sharding = instr->attrs().sharding;
      instr->ReplaceAllUsesWith(comp.AddInstruction(std::move(constant)));
      changed = true;
    }
    return changed;
  }

 private:
  bool Foldable(const HloInstruction& instr) {
    switch (instr.opcode()) {
      case HloOpcode::kConstant:
      case HloOpcode::kParameter:
      case HloOpcode::kBroadcast:
      case HloOpcode::kIota:
      case HloOpcode::kTuple:
        return false;
      default:
        break;
    }
    const Shape& shape = instr.shape();
    if (instr.operand_count() == 0 || !shape.IsArray() || !shape.is_static() ||
        shape.ElementCount() > options_.max_result_elements || instr.HasControlEdges() ||
        (instr.users().empty() && instr.parent()->root_instruction() != &instr)) {
      return false;
    }
    for (const HloInstruction* op : instr.operands()) {
      if (ConstantLiteral(*op) == nullptr && !Expandable(*op)) return false;
    }
    if (DeviceOrEffectful(instr)) return false;
    for (const HloComputation* callee : instr.called_computations()) {
      if (!Independent(*callee)) return false;
    }
    return true;
  }

  // True if nothing `comp` runs (transitively) is device-dependent or effectful.
  bool Independent(const HloComputation& comp) {
    if (auto it = independent_.find(&comp); it != independent_.end()) return it->second;
    independent_[&comp] = false;  // a cycle is not independent
    bool result = true;
    for (const auto& i : comp.instructions()) {
      if (DeviceOrEffectful(*i)) result = false;
      for (const HloComputation* callee : i->called_computations()) {
        if (result && !Independent(*callee)) result = false;
      }
      if (!result) break;
    }
    return independent_[&comp] = result;
  }

  // The operands' values: a constant's literal, or (computed here) a
  // broadcast or iota of constants. False when an operand is neither, or
  // when the fold would grow the module: a result larger than the literals
  // it comes from folds only when small (an iota -> compare mask stays a
  // computation).
  bool OperandValues(const HloInstruction& instr, std::vector<Literal>& storage,
                     std::vector<const Literal*>& operands) {
    int64_t literal_elements = 0;
    for (const HloInstruction* op : instr.operands()) {
      if (const Literal* lit = ConstantLiteral(*op)) {
        literal_elements += lit->element_count();
      } else if (!Expandable(*op)) {
        return false;
      }
    }
    if (instr.shape().ElementCount() > std::max(options_.small_result_elements, literal_elements)) {
      return false;
    }
    storage.reserve(instr.operand_count());
    for (const HloInstruction* op : instr.operands()) {
      if (const Literal* lit = ConstantLiteral(*op)) {
        operands.push_back(lit);
        continue;
      }
      std::vector<const Literal*> inner;
      if (op->operand_count() == 1) inner.push_back(ConstantLiteral(*op->operand(0)));
      absl::StatusOr<Literal> value = EvaluateStandalone(*op, inner);
      if (!value.ok()) return false;
      storage.push_back(std::move(*value));
      operands.push_back(&storage.back());
    }
    return true;
  }

  bool Expandable(const HloInstruction& op) const {
    const bool generator = (op.opcode() == HloOpcode::kBroadcast && op.operand_count() == 1 &&
                            ConstantLiteral(*op.operand(0)) != nullptr) ||
                           (op.opcode() == HloOpcode::kIota && op.operand_count() == 0);
    return generator && op.shape().IsArray() && op.shape().is_static() &&
           op.shape().ElementCount() <= options_.max_result_elements;
  }

  static const Literal* ConstantLiteral(const HloInstruction& instr) {
    if (instr.opcode() != HloOpcode::kConstant || !instr.attrs().literal) return nullptr;
    const Literal& lit = *instr.attrs().literal;
    return lit.elided() || !lit.shape().IsArray() ? nullptr : &lit;
  }

  std::string Unique(const std::string& base) {
    std::string name = absl::StrCat(base, ".folded");
    for (int n = 1; names_.contains(name); ++n) name = absl::StrCat(base, ".folded", n);
    names_.insert(name);
    return name;
  }

  const ConstantFolding::Options& options_;
  absl::flat_hash_set<std::string> names_;
  absl::flat_hash_map<const HloComputation*, bool> independent_;
};

}  // namespace

absl::StatusOr<bool> ConstantFolding::Run(HloModule& module) {
  Folder folder(module, options_);
  bool changed = false;
  for (const auto& comp : module.computations()) changed |= folder.FoldComputation(*comp);
  return changed;
}

}  // namespace xlite
