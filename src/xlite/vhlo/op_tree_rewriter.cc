#include "xlite/vhlo/op_tree_rewriter.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "xlite/support/status.h"

namespace xlite::vhlo {

using mlir::Block;
using mlir::Operation;
using mlir::OwningOp;
using mlir::Region;
using mlir::Value;

absl::StatusOr<OwningOp> OpTreeRewriter::RewriteOp(const Operation& op, const Operation* parent) {
  auto out = std::make_unique<Operation>();
  out->loc = op.loc;
  RETURN_IF_ERROR(ConvertNameAndAttributes(op, parent, *out));

  for (size_t i = 0; i < op.operands.size(); ++i) {
    auto it = values_.find(op.operands[i]);
    if (it != values_.end()) {
      out->operands.push_back(it->second);
    } else {
      out->operands.push_back(nullptr);
      forward_operands_.emplace_back(out.get(), i, op.operands[i]);
    }
  }
  for (size_t i = 0; i < op.results.size(); ++i) {
    auto value = std::make_unique<Value>(*op.results[i]);
    ASSIGN_OR_RETURN(value->type, ConvertValueType(value->type, op));
    value->defining_op = out.get();
    value->owner = nullptr;
    values_[op.results[i].get()] = value.get();
    out->results.push_back(std::move(value));
  }
  for (size_t i = 0; i < op.successors.size(); ++i) {
    out->successors.push_back(nullptr);
    forward_successors_.emplace_back(out.get(), i, op.successors[i]);
  }
  for (const auto& region : op.regions) {
    auto new_region = std::make_unique<Region>();
    // Blocks (and their arguments) first: successors and later uses refer to them.
    for (const auto& block : region->blocks) {
      auto new_block = std::make_unique<Block>();
      new_block->label = block->label;
      new_block->parent = out.get();
      for (const auto& arg : block->arguments) {
        auto value = std::make_unique<Value>(*arg);
        ASSIGN_OR_RETURN(value->type, ConvertValueType(value->type, op));
        value->owner = new_block.get();
        value->defining_op = nullptr;
        values_[arg.get()] = value.get();
        new_block->arguments.push_back(std::move(value));
      }
      blocks_[block.get()] = new_block.get();
      new_region->blocks.push_back(std::move(new_block));
    }
    for (size_t b = 0; b < region->blocks.size(); ++b) {
      for (const auto& inner : region->blocks[b]->operations) {
        ASSIGN_OR_RETURN(OwningOp converted, RewriteOp(*inner, &op));
        new_region->blocks[b]->operations.push_back(std::move(converted));
      }
    }
    out->regions.push_back(std::move(new_region));
  }
  return out;
}

absl::Status OpTreeRewriter::ResolveForwardReferences() {
  for (const auto& [op, index, old_value] : forward_operands_) {
    auto it = values_.find(old_value);
    if (it == values_.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("operand %", old_value->name, " of '", op->name, "' is not defined"));
    }
    op->operands[index] = it->second;
  }
  for (const auto& [op, index, old_block] : forward_successors_) {
    auto it = blocks_.find(old_block);
    if (it == blocks_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("successor of '", op->name, "' unknown"));
    }
    op->successors[index] = it->second;
  }
  return absl::OkStatus();
}

}  // namespace xlite::vhlo
