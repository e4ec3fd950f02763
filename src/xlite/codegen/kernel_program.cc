// Whole-loop kernels (kernel.h's KernelProgram): one function that calls the
// batch's kernels inline, with while loops and conditionals as branches of
// its own, so a scan of small kernels runs without a dispatch per kernel.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "xlite/codegen/ir_emitter.h"
#include "xlite/codegen/kernel.h"
#include "xlite/support/status.h"

namespace xlite::codegen {
namespace {

using Step = KernelProgramStep;

class ProgramEmitter {
 public:
  ProgramEmitter(const KernelProgram& program, absl::Span<llvm::Function* const> callees,
                 llvm::Function& function, llvm::IRBuilder<>& b)
      : program_(program), callees_(callees), function_(function), b_(b) {}

  // The steps over `table` (the impl function's arguments).
  absl::Status Emit(std::vector<llvm::Value*> table) {
    table_ = std::move(table);
    return EmitSteps(program_.steps);
  }

 private:
  llvm::BasicBlock* NewBlock(const std::string& name) {
    return llvm::BasicBlock::Create(b_.getContext(), name, &function_);
  }

  absl::StatusOr<llvm::Value*> Buffer(const Step& step, size_t i) const {
    if (i >= step.buffers.size() || step.buffers[i] < 0 ||
        step.buffers[i] >= static_cast<int64_t>(table_.size())) {
      return absl::InvalidArgumentError(absl::StrCat("a kernel program step names buffer ",
                                                     i < step.buffers.size() ? step.buffers[i] : -1,
                                                     " of a table of ", table_.size()));
    }
    return table_[step.buffers[i]];
  }

  absl::Status EmitSteps(const std::vector<Step>& steps) {
    for (const Step& step : steps) {
      switch (step.op) {
        case Step::Op::kKernel:
          RETURN_IF_ERROR(EmitCall(step));
          break;
        case Step::Op::kCopy: {
          ASSIGN_OR_RETURN(llvm::Value * destination, Buffer(step, 0));
          ASSIGN_OR_RETURN(llvm::Value * source, Buffer(step, 1));
          b_.CreateMemMove(destination, llvm::MaybeAlign(), source, llvm::MaybeAlign(),
                           b_.getInt64(step.bytes));
          break;
        }
        case Step::Op::kFill: {
          ASSIGN_OR_RETURN(llvm::Value * destination, Buffer(step, 0));
          b_.CreateMemSet(destination, b_.getInt8(step.fill), b_.getInt64(step.bytes),
                          llvm::MaybeAlign());
          break;
        }
        case Step::Op::kWhile:
          RETURN_IF_ERROR(EmitWhile(step));
          break;
        case Step::Op::kConditional:
          RETURN_IF_ERROR(EmitConditional(step));
          break;
      }
    }
    return absl::OkStatus();
  }

  // The callee's buffer array is a local the call is inlined over: SROA then
  // turns its loads from the array into the table's pointers.
  absl::Status EmitCall(const Step& step) {
    if (step.kernel < 0 || step.kernel >= static_cast<int64_t>(callees_.size()) ||
        callees_[step.kernel] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("a kernel program calls kernel ", step.kernel,
                                                     " of ", callees_.size(),
                                                     " compiled before it"));
    }
    const int64_t n = static_cast<int64_t>(step.buffers.size());
    llvm::IRBuilder<> entry(&function_.getEntryBlock(), function_.getEntryBlock().begin());
    llvm::Value* array = entry.CreateAlloca(
        llvm::ArrayType::get(b_.getPtrTy(), std::max<int64_t>(n, 1)), nullptr, "args");
    for (int64_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(llvm::Value * pointer, Buffer(step, i));
      b_.CreateStore(pointer, b_.CreateConstGEP1_64(b_.getPtrTy(), array, i));
    }
    llvm::CallInst* call =
        b_.CreateCall(callees_[step.kernel], {array, b_.getInt64(0), b_.getInt64(1)});
    call->addFnAttr(llvm::Attribute::AlwaysInline);
    return absl::OkStatus();
  }

  absl::Status EmitWhile(const Step& step) {
    if (step.nested.size() != 2) {
      return absl::InvalidArgumentError("a kernel program's while needs a condition and a body");
    }
    ASSIGN_OR_RETURN(llvm::Value * predicate, Buffer(step, 0));
    llvm::BasicBlock* condition = NewBlock("while.condition");
    llvm::BasicBlock* body = NewBlock("while.body");
    llvm::BasicBlock* exit = NewBlock("while.exit");
    b_.CreateBr(condition);
    b_.SetInsertPoint(condition);
    RETURN_IF_ERROR(EmitSteps(step.nested[0]));
    llvm::Value* pred = b_.CreateLoad(b_.getInt8Ty(), predicate, "predicate");
    b_.CreateCondBr(b_.CreateICmpNE(b_.CreateAnd(pred, b_.getInt8(1)), b_.getInt8(0)), body, exit);
    b_.SetInsertPoint(body);
    RETURN_IF_ERROR(EmitSteps(step.nested[1]));
    b_.CreateBr(condition);
    b_.SetInsertPoint(exit);
    return absl::OkStatus();
  }

  absl::Status EmitConditional(const Step& step) {
    const int64_t count = static_cast<int64_t>(step.nested.size());
    if (count == 0 || (step.selector_is_pred && count != 2)) {
      return absl::InvalidArgumentError(
          "a kernel program's conditional needs branches (two for a pred selector)");
    }
    ASSIGN_OR_RETURN(llvm::Value * selector, Buffer(step, 0));
    llvm::Value* index;
    if (step.selector_is_pred) {
      // true runs branch 0, false branch 1.
      llvm::Value* pred = b_.CreateLoad(b_.getInt8Ty(), selector, "selector");
      index = b_.CreateZExt(b_.CreateICmpEQ(b_.CreateAnd(pred, b_.getInt8(1)), b_.getInt8(0)),
                            b_.getInt32Ty());
    } else {
      index = b_.CreateLoad(b_.getInt32Ty(), selector, "selector");
    }
    llvm::BasicBlock* exit = NewBlock("conditional.exit");
    std::vector<llvm::BasicBlock*> branches;
    for (int64_t i = 0; i < count; ++i) branches.push_back(NewBlock(absl::StrCat("branch", i)));
    // Out of range (negative too) runs the last branch.
    llvm::SwitchInst* dispatch = b_.CreateSwitch(index, branches.back(), count - 1);
    for (int64_t i = 0; i + 1 < count; ++i) dispatch->addCase(b_.getInt32(i), branches[i]);
    for (int64_t i = 0; i < count; ++i) {
      b_.SetInsertPoint(branches[i]);
      RETURN_IF_ERROR(EmitSteps(step.nested[i]));
      b_.CreateBr(exit);
    }
    b_.SetInsertPoint(exit);
    return absl::OkStatus();
  }

  const KernelProgram& program_;
  absl::Span<llvm::Function* const> callees_;
  llvm::Function& function_;
  llvm::IRBuilder<>& b_;
  std::vector<llvm::Value*> table_;
};

}  // namespace

// Two functions: `<name>.impl` takes one pointer per group of the table
// (KernelProgram::group_base), each `noalias` (inlining turns that into alias
// scopes, so a loop's carried values stay in registers), and runs the steps;
// `<name>` has the kernel ABI, loads the groups' pointers and calls it inline.
absl::Status EmitKernelProgram(const KernelProgram& program, const std::string& name,
                               absl::Span<llvm::Function* const> callees, llvm::Module& module) {
  llvm::LLVMContext& ctx = module.getContext();
  llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type* void_type = llvm::Type::getVoidTy(ctx);
  const int64_t n = program.num_buffers;
  const bool grouped = static_cast<int64_t>(program.group_base.size()) == n &&
                       static_cast<int64_t>(program.group_offset.size()) == n;
  // One argument per group, for its base buffer.
  std::vector<int64_t> bases;
  std::vector<int64_t> argument_of(n, -1);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t base = grouped ? program.group_base[i] : i;
    if (base < 0 || base >= n || (grouped && program.group_base[base] != base) ||
        (grouped && program.group_offset[i] < 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("kernel program '", name, "': buffer ", i, " has a bad group"));
    }
    if (base == i) {
      argument_of[i] = static_cast<int64_t>(bases.size());
      bases.push_back(i);
    }
  }
  llvm::Function* impl = llvm::Function::Create(
      llvm::FunctionType::get(void_type, std::vector<llvm::Type*>(bases.size(), ptr), false),
      llvm::GlobalValue::InternalLinkage, name + ".impl", module);
  impl->addFnAttr(llvm::Attribute::NoUnwind);
  impl->addFnAttr(llvm::Attribute::AlwaysInline);
  for (size_t j = 0; j < bases.size(); ++j) {
    impl->getArg(j)->setName(absl::StrCat("group", bases[j]));
    if (grouped) impl->addParamAttr(j, llvm::Attribute::NoAlias);
  }
  {
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", impl));
    std::vector<llvm::Value*> table;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t base = grouped ? program.group_base[i] : i;
      llvm::Value* group = impl->getArg(argument_of[base]);
      const int64_t offset = grouped ? program.group_offset[i] : 0;
      table.push_back(offset == 0 ? group
                                  : b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), group, offset,
                                                                 absl::StrCat("buffer", i)));
    }
    ProgramEmitter emitter(program, callees, *impl, b);
    if (absl::Status status = emitter.Emit(std::move(table)); !status.ok()) {
      impl->eraseFromParent();
      return status;
    }
    b.CreateRetVoid();
  }

  llvm::Function* function =
      llvm::Function::Create(llvm::FunctionType::get(void_type, {ptr, i64, i64}, false),
                             llvm::GlobalValue::ExternalLinkage, name, module);
  function->addFnAttr(llvm::Attribute::NoUnwind);
  function->getArg(0)->setName("buffers");
  function->getArg(1)->setName("partition");
  function->getArg(2)->setName("num_partitions");
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", function));
  // Only partition 0 of any count has work: the program runs as one part.
  llvm::BasicBlock* run = llvm::BasicBlock::Create(ctx, "run", function);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx, "done", function);
  b.CreateCondBr(b.CreateICmpEQ(function->getArg(1), b.getInt64(0)), run, done);
  b.SetInsertPoint(run);
  std::vector<llvm::Value*> groups;
  for (int64_t base : bases) {
    groups.push_back(b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, function->getArg(0), base),
                                  absl::StrCat("buffer", base)));
  }
  b.CreateCall(impl, groups);
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  return absl::OkStatus();
}

}  // namespace xlite::codegen
