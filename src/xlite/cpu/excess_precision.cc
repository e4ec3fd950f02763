#include "xlite/cpu/excess_precision.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "xlite/ir/computation.h"
#include "xlite/ir/name_uniquer.h"

namespace xlite::cpu {
namespace {

bool IsNarrowFloat(PrimitiveType t) { return t == PrimitiveType::BF16 || t == PrimitiveType::F16; }

bool IsNarrowArray(const HloInstruction& instr) {
  return instr.shape().IsArray() && IsNarrowFloat(instr.shape().element_type());
}

// Elementwise arithmetic whose value is a real number computed from its
// floating operands: the same number in f32, rounded later.
bool IsWidenableArithmetic(HloOpcode op) {
  if (!(HloOpcodeTraits(op) & kElementwise)) return false;
  switch (op) {
    case HloOpcode::kConvert:
    case HloOpcode::kBitcastConvert:
    case HloOpcode::kReducePrecision:
    case HloOpcode::kStochasticConvert:
    case HloOpcode::kCompare:
    case HloOpcode::kIsFinite:
    case HloOpcode::kReal:
    case HloOpcode::kImag:
    case HloOpcode::kComplex:
      return false;
    default:
      return true;
  }
}

bool IsDataMovement(HloOpcode op) {
  switch (op) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kSlice:
    case HloOpcode::kReverse:
    case HloOpcode::kConcatenate:
    case HloOpcode::kPad:
    case HloOpcode::kDynamicSlice:
      return true;
    default:
      return false;
  }
}

class WidenComputation {
 public:
  WidenComputation(HloComputation& computation, NameUniquer& names)
      : computation_(computation), names_(names) {}

  bool Run() {
    const std::vector<HloInstruction*> post_order = computation_.MakeInstructionPostOrder();
    bool changed = false;
    for (HloInstruction* instr : post_order) {
      if (ShouldWiden(*instr)) {
        Widen(instr);
        changed = true;
      } else if (instr->opcode() == HloOpcode::kCompare || instr->opcode() == HloOpcode::kConvert) {
        changed |= ReadWide(instr);
      }
    }
    if (!changed) return false;
    RemoveDead(computation_.MakeInstructionPostOrder());
    for (auto& [wide, name] : renames_) {
      if (!names_.TryTake(name)) continue;
      names_.Release(wide->name());
      wide->set_name(name);
    }
    // The wide ops were appended: put them before their readers again (a
    // scheduled module prints each computation in its stored order).
    computation_.SetInstructionOrder(computation_.MakeInstructionPostOrder());
    return true;
  }

 private:
  HloInstruction* Add(HloOpcode opcode, const std::string& name, Shape shape,
                      const std::vector<HloInstruction*>& operands) {
    auto instr = std::make_unique<HloInstruction>(opcode, names_.Get(name), std::move(shape));
    for (HloInstruction* op : operands) instr->AppendOperand(op);
    return computation_.AddInstruction(std::move(instr));
  }

  static Shape WithType(const Shape& shape, PrimitiveType type) {
    Shape s = shape;
    s.set_element_type(type);
    return s;
  }

  // The f32 value of a narrow one: its widened form, or a convert of it.
  HloInstruction* Wide(HloInstruction* narrow) {
    if (auto it = wide_.find(narrow); it != wide_.end()) return it->second;
    HloInstruction* c = Add(HloOpcode::kConvert, "convert",
                            WithType(narrow->shape(), PrimitiveType::F32), {narrow});
    wide_[narrow] = c;
    return c;
  }

  bool ShouldWiden(const HloInstruction& instr) const {
    if (!IsNarrowArray(instr) || instr.opcode() == HloOpcode::kParameter ||
        !instr.control_predecessors().empty() || !instr.control_successors().empty()) {
      return false;
    }
    const PrimitiveType t = instr.shape().element_type();
    if (IsWidenableArithmetic(instr.opcode())) {
      for (const HloInstruction* op : instr.operands()) {
        const PrimitiveType ot = op->shape().element_type();
        if ((IsFloatingPoint(ot) || IsComplex(ot)) && ot != t) return false;
      }
      return true;
    }
    if (!IsDataMovement(instr.opcode())) return false;
    // Moving narrow values costs nothing: widen only what already is wide.
    for (const HloInstruction* op : instr.operands()) {
      if (op->shape().element_type() == t && wide_.contains(op)) return true;
    }
    return false;
  }

  void Widen(HloInstruction* instr) {
    const PrimitiveType t = instr->shape().element_type();
    std::vector<HloInstruction*> operands;
    for (HloInstruction* op : instr->operands()) {
      operands.push_back(op->shape().element_type() == t ? Wide(op) : op);
    }
    HloInstruction* wide =
        Add(instr->opcode(), instr->name(), WithType(instr->shape(), PrimitiveType::F32), operands);
    wide->attrs() = instr->attrs();
    HloInstruction* rounded = Add(HloOpcode::kConvert, "convert", instr->shape(), {wide});
    instr->ReplaceAllUsesWith(rounded);
    wide_[instr] = wide;
    wide_[rounded] = wide;
    renames_.push_back({wide, instr->name()});
  }

  // A compare or convert of values that have wide forms reads those.
  bool ReadWide(HloInstruction* instr) {
    bool any = false;
    for (const HloInstruction* op : instr->operands()) any |= wide_.contains(op);
    if (!any) return false;
    for (int64_t i = 0; i < instr->operand_count(); ++i) {
      HloInstruction* op = instr->operand(i);
      if (IsNarrowArray(*op)) instr->ReplaceOperandWith(i, Wide(op));
    }
    // A convert to f32 of a wide value is that value.
    if (instr->opcode() == HloOpcode::kConvert &&
        instr->shape().element_type() == PrimitiveType::F32 &&
        instr->operand(0)->shape().element_type() == PrimitiveType::F32 &&
        instr->operand(0)->shape() == instr->shape()) {
      instr->ReplaceAllUsesWith(instr->operand(0));
    }
    return true;
  }

  void RemoveDead(const std::vector<HloInstruction*>& post_order) {
    for (auto it = post_order.rbegin(); it != post_order.rend(); ++it) {
      HloInstruction* instr = *it;
      if (!instr->users().empty() || instr == computation_.root_instruction() ||
          instr->opcode() == HloOpcode::kParameter) {
        continue;
      }
      names_.Release(instr->name());
      wide_.erase(instr);
      instr->DetachFromOperands();
      computation_.RemoveInstruction(instr);
    }
  }

  HloComputation& computation_;
  NameUniquer& names_;
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> wide_;
  std::vector<std::pair<HloInstruction*, std::string>> renames_;
};

}  // namespace

absl::StatusOr<bool> ExcessPrecision::Run(HloModule& module) {
  NameUniquer names = NameUniquer::ForInstructions(module);
  bool changed = false;
  for (const auto& c : module.computations()) {
    const HloInstruction* fusion = c->fusion_instruction();
    if (fusion == nullptr || fusion->opcode() != HloOpcode::kFusion ||
        (!fusion->attrs().fusion_kind.empty() && fusion->attrs().fusion_kind != "kLoop")) {
      continue;
    }
    changed |= WidenComputation(*c, names).Run();
  }
  return changed;
}

}  // namespace xlite::cpu
