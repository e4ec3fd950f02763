#include "xlite/analysis/in_place_pairs.h"

#include "absl/container/flat_hash_set.h"
#include "xlite/ir/computation.h"

namespace xlite {
namespace {

using Pairs = std::vector<std::pair<HloOperandIndex, ShapeIndex>>;

// Operand i -> output {i}, or operand 0 -> {} when there is one.
Pairs OperandPerOutput(int64_t count) {
  if (count == 1) return {{HloOperandIndex{0, {}}, {}}};
  Pairs pairs;
  for (int64_t i = 0; i < count; ++i) pairs.push_back({HloOperandIndex{i, {}}, {i}});
  return pairs;
}

// Operand `operand` -> `output`, plus element by element when it is a tuple.
Pairs OperandToOutput(const HloInstruction& instr, int64_t operand, const ShapeIndex& output) {
  Pairs pairs = {{HloOperandIndex{operand, {}}, output}};
  const Shape& shape = instr.operand(operand)->shape();
  for (int64_t i = 0; shape.IsTuple() && i < shape.tuple_shapes_size(); ++i) {
    ShapeIndex out = output;
    out.push_back(i);
    pairs.push_back({HloOperandIndex{operand, {i}}, out});
  }
  return pairs;
}

void AppendDeclaredAliasing(const HloInstruction& instr, Pairs& pairs) {
  for (const OutputOperandAlias& a : instr.attrs().output_to_operand_aliasing) {
    pairs.push_back({HloOperandIndex{a.operand, a.operand_index}, a.output_index});
  }
}

// Follows tuple, get-tuple-element and bitcast back to the instruction whose
// output element is (instr, index).
std::pair<const HloInstruction*, ShapeIndex> FollowIndirections(const HloInstruction* instr,
                                                                ShapeIndex index) {
  while (true) {
    if (instr->opcode() == HloOpcode::kTuple && !index.empty() && index.front() >= 0 &&
        index.front() < instr->operand_count()) {
      instr = instr->operand(index.front());
      index.erase(index.begin());
    } else if (instr->opcode() == HloOpcode::kGetTupleElement && instr->operand_count() == 1) {
      index.insert(index.begin(), instr->attrs().tuple_index);
      instr = instr->operand(0);
    } else if (instr->opcode() == HloOpcode::kBitcast && index.empty() &&
               instr->operand_count() == 1) {
      instr = instr->operand(0);
    } else {
      return {instr, std::move(index)};
    }
  }
}

Pairs FusionPairs(const HloInstruction& fusion) {
  Pairs pairs;
  const HloComputation* body =
      fusion.called_computations().empty() ? nullptr : fusion.called_computations()[0];
  if (body != nullptr && body->root_instruction() != nullptr) {
    ForEachSubshape(fusion.shape(), [&](const Shape& subshape, const ShapeIndex& index) {
      if (subshape.IsTuple()) return;
      auto [source, source_index] = FollowIndirections(body->root_instruction(), index);
      for (const auto& [input, output] : GetInPlaceInputOutputPairs(*source)) {
        if (output != source_index || input.operand_number < 0 ||
            input.operand_number >= source->operand_count()) {
          continue;
        }
        auto [origin, origin_index] =
            FollowIndirections(source->operand(input.operand_number), input.operand_index);
        if (origin->opcode() == HloOpcode::kParameter && origin->parent() == body) {
          pairs.push_back({HloOperandIndex{origin->attrs().parameter_number, origin_index}, index});
        }
        break;  // one output aliases at most one input
      }
    });
  }
  AppendDeclaredAliasing(fusion, pairs);
  return pairs;
}

}  // namespace

bool MayHaveInPlacePairs(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kScatter:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kRaggedAllToAll:
    case HloOpcode::kSetDimensionSize:
    case HloOpcode::kCustomCall:
    case HloOpcode::kAsyncStart:
    case HloOpcode::kFusion:
      return true;
    default:
      return false;
  }
}

Pairs GetInPlaceInputOutputPairs(const HloInstruction& instr) {
  if (!MayHaveInPlacePairs(instr.opcode())) return {};
  switch (instr.opcode()) {
    case HloOpcode::kDynamicUpdateSlice:
      return instr.operand_count() >= 1 ? OperandPerOutput(1) : Pairs{};
    case HloOpcode::kScatter:
      // operands..., indices, updates...: n operands and n updates.
      return instr.operand_count() >= 3 ? OperandPerOutput((instr.operand_count() - 1) / 2)
                                        : Pairs{};
    case HloOpcode::kAllReduceStart: {
      // The start is the result (or a tuple of results); the older
      // (operand, result) tuple form updates nothing in place.
      if (instr.operand_count() < 1) return {};
      Pairs pairs = OperandPerOutput(instr.operand_count());
      for (const auto& [input, output] : pairs) {
        const Shape* out = SubshapeAt(instr.shape(), output);
        if (out == nullptr || out->IsTuple()) return {};
      }
      return pairs;
    }
    case HloOpcode::kCollectivePermute:
      if (instr.operand_count() == 4 && instr.attrs().slice_sizes_list.has_value()) {
        return OperandToOutput(instr, 1, {});
      }
      return {};
    case HloOpcode::kCollectivePermuteStart:
      if (instr.operand_count() == 4 && instr.attrs().slice_sizes_list.has_value()) {
        return OperandToOutput(instr, 1, {1});
      }
      return {};
    case HloOpcode::kRaggedAllToAll:
      return instr.operand_count() >= 2 ? Pairs{{HloOperandIndex{1, {}}, {}}} : Pairs{};
    case HloOpcode::kSetDimensionSize:
      return instr.operand_count() >= 1 ? Pairs{{HloOperandIndex{0, {}}, {}}} : Pairs{};
    case HloOpcode::kCustomCall:
    case HloOpcode::kAsyncStart: {
      Pairs pairs;
      AppendDeclaredAliasing(instr, pairs);
      return pairs;
    }
    case HloOpcode::kFusion:
      return FusionPairs(instr);
    default:
      return {};
  }
}

bool MayShareOperandBuffer(const HloInstruction& user, int64_t operand_number,
                           const ShapeIndex& output) {
  if (operand_number < 0 || operand_number >= user.operand_count()) return false;
  const Shape& operand = user.operand(operand_number)->shape();
  if (!operand.IsArray()) return false;
  if (IsElementwiseOpcode(user.opcode())) {
    return output.empty() && user.called_computations().empty() && operand == user.shape();
  }
  if (user.opcode() != HloOpcode::kFusion || user.attrs().fusion_kind != "kLoop" ||
      user.called_computations().size() != 1) {
    return false;
  }
  const Shape* result = &user.shape();
  for (int64_t i : output) {
    if (!result->IsTuple() || i < 0 || i >= static_cast<int64_t>(result->tuple_shapes().size())) {
      return false;
    }
    result = &result->tuple_shapes()[i];
  }
  if (*result != operand) return false;
  const HloComputation& fused = *user.called_computations()[0];
  if (operand_number >= fused.num_parameters()) return false;
  const HloInstruction* root = fused.root_instruction();
  std::vector<const HloInstruction*> stack = {fused.parameter_instruction(operand_number)};
  absl::flat_hash_set<const HloInstruction*> seen;
  while (!stack.empty()) {
    const HloInstruction* instr = stack.back();
    stack.pop_back();
    for (const HloInstruction* u : instr->users()) {
      if (!seen.insert(u).second) continue;
      if (u == root && u->opcode() == HloOpcode::kTuple) continue;
      // Element i for element i: elementwise ops of the dimensions they read,
      // and reshapes between row-major shapes (the same linear order), such as
      // the [1024, 2048] -> [8, 128, 2048] around a dot's bias and activation.
      const bool elementwise = IsElementwiseOpcode(u->opcode()) &&
                               u->called_computations().empty() &&
                               u->shape().dimensions() == instr->shape().dimensions();
      const bool row_major_reshape = u->opcode() == HloOpcode::kReshape && u->shape().IsArray() &&
                                     u->shape().HasRowMajorLayout() && instr->shape().IsArray() &&
                                     instr->shape().HasRowMajorLayout();
      if (!elementwise && !row_major_reshape) return false;
      stack.push_back(u);
    }
  }
  return true;
}

bool EveryReadMayShare(const std::vector<const HloValue*>& values, const HloInstruction& user,
                       const ShapeIndex& output) {
  bool reads = false;
  for (const HloValue* v : values) {
    for (const HloUse& use : v->uses()) {
      if (use.instruction != &user) continue;
      reads = true;
      if (!use.operand_index.empty() || !MayShareOperandBuffer(user, use.operand_number, output)) {
        return false;
      }
    }
  }
  return reads;
}

}  // namespace xlite
