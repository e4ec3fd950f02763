// Private to codegen/ (includes LLVM): the elemental IR emitter and the
// kernel emitter built on it.
//
// The elemental emitter produces the value of one element of an instruction
// inside a computation, at a multi-index given as IR values, from the
// elements of its operands, recursively. An instruction can be *bound* to a
// generator (a kernel's operand read from its buffer, a fusion parameter, a
// called computation's scalar argument); everything else is emitted from its
// opcode. So one emitter serves standalone instructions, fusion bodies and
// the computations that reduce, map and scatter apply.
//
// Element values in IR (IrType): pred is i8 0/1; sN/uN are iN; f32 is float,
// f64 double; f16, bf16 and the f8/f4 types are their bits as iN (arithmetic
// decodes them to float, computes, and rounds back once, as the interpreter
// does); c64 and c128 are {float, float} / {double, double}. Tuple-shaped
// instructions (variadic reduce, tuple) yield one value per leaf.
#ifndef XLITE_CODEGEN_IR_EMITTER_H_
#define XLITE_CODEGEN_IR_EMITTER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "xlite/codegen/kernel.h"
#include "xlite/ir/computation.h"

namespace xlite::codegen {

using IrIndex = std::vector<llvm::Value*>;   // one i64 per dimension
using IrValues = std::vector<llvm::Value*>;  // one per array leaf

// "opcode 'name': <what> is not supported by the CPU code generator".
absl::Status UnsupportedInstruction(const HloInstruction& instr, absl::string_view what);
// "opcode 'name': <what>" as InvalidArgument: input the emitters cannot mean.
absl::Status InvalidInstruction(const HloInstruction& instr, absl::string_view what);

// What LLVM may do with a loop (its llvm.loop metadata): `unroll` false
// keeps a short loop LLVM would otherwise unroll fully (and then vectorize the
// loop around it instead); `vectorize` false keeps scalar a loop whose vector
// forms would cost more to compile than they save.
struct LoopHints {
  bool unroll = true;
  bool vectorize = true;
};

class IrEmitter {
 public:
  using Generator = std::function<absl::StatusOr<IrValues>(const IrIndex&)>;

  IrEmitter(llvm::Module& module, llvm::Function& function, llvm::IRBuilder<>& builder);

  llvm::IRBuilder<>& b() { return b_; }
  llvm::LLVMContext& context() { return module_.getContext(); }
  llvm::Module& module() { return module_; }
  llvm::Function& function() { return function_; }

  // ------------------------------------------------------------ elements

  // `instr` yields `generator`'s values instead of being emitted.
  void Bind(const HloInstruction* instr, Generator generator);
  void Unbind(const HloInstruction* instr);

  // The element(s) of `instr` at `index` (one value per leaf of its shape).
  absl::StatusOr<IrValues> Emit(const HloInstruction& instr, const IrIndex& index);
  // `computation` applied to values of `types`, each converted to its
  // parameter's type first (as the interpreter converts its arguments).
  absl::StatusOr<IrValues> EmitConvertingCall(const HloComputation& computation,
                                              const IrValues& args,
                                              const std::vector<PrimitiveType>& types,
                                              const HloInstruction& caller);
  // The element of an array-shaped `instr`.
  absl::StatusOr<llvm::Value*> EmitOne(const HloInstruction& instr, const IrIndex& index);
  // `computation` applied to scalar arguments (reducers, map, scatter
  // combiners, comparators); one value per leaf of its result.
  absl::StatusOr<IrValues> EmitCall(const HloComputation& computation, const IrValues& args,
                                    const HloInstruction& caller);

  // ------------------------------------------------------------ types

  // The IR type of one element value (see above); nullptr if not compiled.
  llvm::Type* IrType(PrimitiveType type);
  // The type an element occupies in memory (sub-byte types: i8).
  llvm::Type* StorageType(PrimitiveType type);
  // True for the floating-point types kept as bits (f16, bf16, f8, f4).
  static bool IsSmallFloat(PrimitiveType type);
  // float for every floating-point type but f64 (double).
  llvm::Type* ComputeFloatType(PrimitiveType type);

  llvm::Value* I64(int64_t v) { return b_.getInt64(v); }
  llvm::Value* IntConstant(PrimitiveType type, uint64_t bits);
  // Zero of `type` in IR form.
  llvm::Value* Zero(PrimitiveType type);

  // ------------------------------------------------------------ memory

  llvm::Value* Load(PrimitiveType type, llvm::Value* base, llvm::Value* offset);
  void Store(PrimitiveType type, llvm::Value* value, llvm::Value* base, llvm::Value* offset);
  // Element offset of `index` in a buffer with `shape`'s physical layout.
  llvm::Value* PhysicalOffset(const Shape& shape, const IrIndex& index);
  // Row-major (logical) linear index of `index` in `dims`, and back.
  llvm::Value* RowMajorLinear(const std::vector<int64_t>& dims, const IrIndex& index);
  IrIndex DelinearizeRowMajor(const std::vector<int64_t>& dims, llvm::Value* linear);
  // The operand index of a reshape from `operand_dims` to `result_dims`.
  IrIndex ReshapeOperandIndex(const std::vector<int64_t>& result_dims,
                              const std::vector<int64_t>& operand_dims, const IrIndex& index);
  // An alloca in the entry block (promoted to registers by the optimizer).
  llvm::AllocaInst* Alloca(llvm::Type* type, const char* name = "");

  // ------------------------------------------------------------ control flow

  // for (iv = begin; iv < end; ++iv) body(iv), i64. The body's cached values
  // stay inside the loop.
  absl::Status ForLoop(llvm::Value* begin, llvm::Value* end,
                       absl::FunctionRef<absl::Status(llvm::Value*)> body, const char* name = "",
                       LoopHints hints = {});
  // The same, for a body whose iterations touch disjoint memory (no
  // iteration reads what another writes): the loop is marked
  // llvm.loop.parallel_accesses, its buffer accesses put in one access
  // group, so the vectorizer needs no run-time overlap checks -- which fail,
  // and fall back to scalar code, where an output shares its operand's
  // buffer (in place, element i for element i). Accesses to allocas are left
  // out (an iteration may reuse one), so a loop keeping one is vectorized
  // only where LLVM proves it safe itself.
  absl::Status ForIndependentIterations(llvm::Value* begin, llvm::Value* end,
                                        absl::FunctionRef<absl::Status(llvm::Value*)> body,
                                        const char* name = "", LoopHints hints = {});
  // cond ? then_fn() : else_fn(), both yielding values of the same types.
  absl::StatusOr<IrValues> If(llvm::Value* cond,
                              absl::FunctionRef<absl::StatusOr<IrValues>()> then_fn,
                              absl::FunctionRef<absl::StatusOr<IrValues>()> else_fn);
  // if (cond) then_fn();
  absl::Status When(llvm::Value* cond, absl::FunctionRef<absl::Status()> then_fn);
  // Nested loops over every index of `sizes` in row-major order.
  absl::Status ForLoopNest(const std::vector<int64_t>& sizes,
                           absl::FunctionRef<absl::Status(const IrIndex&)> body);

  // ------------------------------------------------------------ floats

  // Value of a floating-point element in its compute type (float / double).
  llvm::Value* ToCompute(PrimitiveType type, llvm::Value* v);
  // A compute value (float or double) rounded to `type`'s element value.
  llvm::Value* FromCompute(PrimitiveType type, llvm::Value* f);
  // A small float's bits decoded exactly to double.
  llvm::Value* DecodeSmallFloat(PrimitiveType type, llvm::Value* bits);
  // A float or double rounded to nearest even into a small type's bits, in
  // integer arithmetic (LLVM 16 would call __truncsfbf2 for bfloat, which
  // Debian 12's libgcc lacks), with the interpreter's NaN and overflow rules.
  llvm::Value* EncodeSmallFloat(PrimitiveType type, llvm::Value* f);
  // `v` of type `from` converted to `to` with XLA's convert semantics.
  absl::StatusOr<llvm::Value*> Convert(const HloInstruction& instr, PrimitiveType from,
                                       PrimitiveType to, llvm::Value* v);
  // An integer or pred element as a signed index (unsigned beyond int64: max).
  llvm::Value* IndexValue(PrimitiveType type, llvm::Value* v);

  // A call of a C function taking and returning `type` values (libm, helpers).
  llvm::Value* CallC(const char* name, llvm::Type* result, llvm::ArrayRef<llvm::Value*> args);
  // A libm function: as CallC, declared as touching no memory (errno is not
  // read), so the loop vectorizer may use its libmvec variant (jit.cc).
  llvm::Value* CallMath(const std::string& name, llvm::Type* result,
                        llvm::ArrayRef<llvm::Value*> args);

 private:
  // The llvm.loop properties `hints` asks for (none by default).
  std::vector<llvm::Metadata*> LoopHintProperties(LoopHints hints);
  // Marks `back_edge` with a loop ID holding `properties`.
  void SetLoopId(llvm::BranchInst& back_edge, std::vector<llvm::Metadata*> properties);

  using CacheKey = std::vector<const void*>;
  using Cache = absl::flat_hash_map<CacheKey, IrValues>;

  absl::StatusOr<IrValues> EmitUncached(const HloInstruction& instr, const IrIndex& index);
  // Per family (elemental_emitter.cc, elemental_indexing.cc, elemental_reduction.cc).
  absl::StatusOr<llvm::Value*> EmitElementwise(const HloInstruction& instr, const IrIndex& index);
  absl::StatusOr<llvm::Value*> EmitCompare(const HloInstruction& instr, llvm::Value* x,
                                           llvm::Value* y);
  absl::StatusOr<llvm::Value*> EmitUnary(const HloInstruction& instr, llvm::Value* x);
  absl::StatusOr<llvm::Value*> EmitBinary(const HloInstruction& instr, llvm::Value* x,
                                          llvm::Value* y);
  absl::StatusOr<llvm::Value*> EmitComplexOp(const HloInstruction& instr, const IrValues& args);
  absl::StatusOr<llvm::Value*> EmitReducePrecision(const HloInstruction& instr, llvm::Value* x);
  absl::StatusOr<llvm::Value*> EmitStochasticConvert(const HloInstruction& instr, llvm::Value* x,
                                                     llvm::Value* random);
  absl::StatusOr<IrValues> EmitDataMovement(const HloInstruction& instr, const IrIndex& index);
  absl::StatusOr<IrValues> EmitGather(const HloInstruction& instr, const IrIndex& index);
  absl::StatusOr<IrValues> EmitDynamicSlice(const HloInstruction& instr, const IrIndex& index);
  absl::StatusOr<IrValues> EmitDynamicUpdateSlice(const HloInstruction& instr,
                                                  const IrIndex& index);
  absl::StatusOr<IrValues> EmitConstant(const HloInstruction& instr, const IrIndex& index);
  absl::StatusOr<IrValues> EmitBitcastConvert(const HloInstruction& instr, const IrIndex& index);
  absl::StatusOr<IrValues> EmitReduce(const HloInstruction& instr, const IrIndex& index);
  absl::StatusOr<IrValues> EmitFloatMaxMinReduce(const HloInstruction& instr, const IrIndex& index,
                                                 HloOpcode op,
                                                 const std::vector<int64_t>& reduced_dims,
                                                 const std::vector<int64_t>& reduced_sizes);
  absl::StatusOr<IrValues> EmitReduceWindow(const HloInstruction& instr, const IrIndex& index);
  absl::StatusOr<IrValues> EmitMap(const HloInstruction& instr, const IrIndex& index);
  absl::StatusOr<IrValues> EmitFusion(const HloInstruction& instr, const IrIndex& index);

 public:
  // Start indices of dynamic-slice / dynamic-update-slice, clamped so the
  // `sizes` window fits `operand_dims`.
  absl::StatusOr<IrIndex> ClampedStarts(const HloInstruction& instr, int64_t first_operand,
                                        const std::vector<int64_t>& operand_dims,
                                        const std::vector<int64_t>& sizes);
  // Bits of an element value (same width as the type; complex: real then
  // imaginary, little-endian) and back.
  llvm::Value* ToBits(PrimitiveType type, llvm::Value* v);
  llvm::Value* FromBits(PrimitiveType type, llvm::Value* bits);

 private:
  llvm::Module& module_;
  llvm::Function& function_;
  llvm::IRBuilder<>& b_;
  absl::flat_hash_map<const HloInstruction*, Generator> bindings_;
  absl::flat_hash_map<const HloInstruction*, llvm::GlobalVariable*> constants_;
  absl::flat_hash_set<const HloInstruction*> checked_;  // shapes verified once
  std::vector<Cache> cache_scopes_;
};

// Emits the kernel function `name` for `instr` into `module` (see kernel.h for
// the ABI). Returns the number of partitions worth running.
absl::StatusOr<int64_t> EmitKernel(const HloInstruction& instr, const std::string& name,
                                   llvm::Module& module);

// Emits the whole-loop kernel `name` running `program` (kernel.h); `callees`
// are the functions of the batch's earlier specs, which it calls inline.
absl::Status EmitKernelProgram(const KernelProgram& program, const std::string& name,
                               absl::Span<llvm::Function* const> callees, llvm::Module& module);

}  // namespace xlite::codegen

#endif  // XLITE_CODEGEN_IR_EMITTER_H_
