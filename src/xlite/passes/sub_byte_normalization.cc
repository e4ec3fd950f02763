#include "xlite/passes/sub_byte_normalization.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "xlite/ir/computation.h"
#include "xlite/support/status.h"

namespace xlite {
namespace {

using SubByteMode = SubByteNormalization::Mode;

bool UpdateShape(Shape& shape, SubByteMode mode);

// The element size `mode` wants on a layout of `type`.
int64_t WantedElementSize(PrimitiveType type, SubByteMode mode) {
  if (mode == SubByteMode::kRemoveElementSize || !IsArrayType(type)) return 0;
  const int bits = PrimitiveBitWidth(type);
  return bits < 8 ? bits : 0;
}

bool UpdateLayout(Layout& layout, PrimitiveType type, SubByteMode mode) {
  bool changed = false;
  const int64_t wanted = WantedElementSize(type, mode);
  if (layout.element_size_in_bits != wanted) {
    layout.element_size_in_bits = wanted;
    changed = true;
  }
  // P(shape) describes the same storage; keep it consistent.
  if (layout.physical_shape != nullptr) {
    Shape physical = *layout.physical_shape;
    if (UpdateShape(physical, mode)) {
      layout.physical_shape = std::make_shared<Shape>(std::move(physical));
      changed = true;
    }
  }
  return changed;
}

// True if a layout in `shape` changed.
bool UpdateShape(Shape& shape, SubByteMode mode) {
  bool changed = false;
  for (Shape& element : shape.mutable_tuple_shapes()) changed |= UpdateShape(element, mode);
  if (shape.IsArray() && shape.has_layout()) {
    changed |= UpdateLayout(shape.mutable_layout(), shape.element_type(), mode);
  }
  return changed;
}

// `literal` with its shape's layouts updated, when any changes (literals
// hold elements unpacked whatever their layout says, so the bytes carry
// over as they are).
std::optional<Literal> UpdateLiteral(const Literal& literal, SubByteMode mode) {
  Shape shape = literal.shape();
  if (!UpdateShape(shape, mode)) return std::nullopt;
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (const Literal& e : literal.tuple_elements()) {
      std::optional<Literal> updated = UpdateLiteral(e, mode);
      elements.push_back(updated ? std::move(*updated) : e);
    }
    Literal tuple = Literal::Tuple(std::move(elements));
    tuple.set_elided(literal.elided());
    return tuple;
  }
  Literal out(shape);
  const size_t bytes = std::min(out.raw_data().size(), literal.raw_data().size());
  if (bytes > 0) std::memcpy(out.mutable_raw_data(), literal.raw_data().data(), bytes);
  out.set_elided(literal.elided());
  return out;
}

bool HasElementSize(const Shape& shape) {
  for (const Shape& element : shape.tuple_shapes()) {
    if (HasElementSize(element)) return true;
  }
  return shape.IsArray() && shape.has_layout() && shape.layout().element_size_in_bits != 0;
}

// A bitcast whose meaning depends on how packed elements sit in bytes: it
// changes the element width or count and one side is packed.
absl::Status CheckNoPackedReinterpretation(const HloModule& module) {
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      if (instr->opcode() != HloOpcode::kBitcast || instr->operand_count() != 1) continue;
      const Shape& in = instr->operand(0)->shape();
      const Shape& out = instr->shape();
      if (!in.IsArray() || !out.IsArray() || (!HasElementSize(in) && !HasElementSize(out))) {
        continue;
      }
      if (PrimitiveBitWidth(in.element_type()) != PrimitiveBitWidth(out.element_type()) ||
          !in.is_static() || !out.is_static() || in.ElementCount() != out.ElementCount()) {
        return Unimplemented("sub-byte-size-removal: bitcast '", instr->name(), "' in '",
                             computation->name(), "' reinterprets packed storage (", in.ToString(),
                             " -> ", out.ToString(), "); without E(n) its byte sizes would differ");
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> SubByteNormalization::Run(HloModule& module) {
  if (mode_ == SubByteMode::kRemoveElementSize)
    RETURN_IF_ERROR(CheckNoPackedReinterpretation(module));
  bool changed = false;
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      changed |= UpdateShape(instr->mutable_shape(), mode_);
      InstructionAttributes& attrs = instr->attrs();
      if (attrs.literal) {
        if (std::optional<Literal> updated = UpdateLiteral(*attrs.literal, mode_)) {
          attrs.literal = std::move(*updated);
          changed = true;
        }
      }
      if (attrs.operand_layout_constraints) {
        for (Shape& s : *attrs.operand_layout_constraints) changed |= UpdateShape(s, mode_);
      }
      if (attrs.outfeed_shape) changed |= UpdateShape(*attrs.outfeed_shape, mode_);
    }
  }
  if (std::optional<ProgramShape>& layout = module.config().entry_computation_layout) {
    for (Shape& p : layout->parameters) changed |= UpdateShape(p, mode_);
    changed |= UpdateShape(layout->result, mode_);
  }
  return changed;
}

}  // namespace xlite
