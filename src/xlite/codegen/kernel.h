// Kernels: JIT-compiled code for one HLO instruction (or one kLoop fusion),
// and the C ABI the CPU runtime's thunks call them through. No LLVM here.
//
//   void kernel(void** buffers, int64_t partition, int64_t num_partitions);
//
// buffers: one pointer per array the instruction reads or writes, in this
//   order: the operands (operand i of the instruction, whatever it is), then the
//   outputs (the result, or one pointer per leaf of a tuple result, in leaf
//   order). KernelBufferShapes() lists them.
// Each buffer holds its array in the physical layout of its shape: element
//   (i0, ..., in) lives at sum_d i_d * stride_d, strides following the layout's
//   minor_to_major (the first entry is the fastest-varying dimension; shapes
//   without a layout are row-major). Elements are little-endian, one element
//   per PrimitiveByteWidth() bytes: pred and the sub-byte types (s2, s4, u4,
//   f4e2m1fn, ...) take one byte each, the value in the low bits and the others
//   zero, as Literal stores them (kernels ignore the high bits they read);
//   complex is (real, imaginary). Packed sub-byte layouts (E(4)), tiles and
//   dynamic shapes are not compiled (Unimplemented).
// partition, num_partitions: the kernel does the part `partition` of
//   `num_partitions` equal parts of its work (runs of 64-element granules of
//   its first output, in physical order; runs of tiles where a kernel moves a
//   transpose in tiles), so a thunk can run one kernel on
//   several threads at once; together the parts produce the whole result.
//   num_partitions <= 0 counts as 1; a partition outside [0, num_partitions)
//   does nothing. CompiledKernel::max_partitions says beyond which count
//   more parts are empty.
// In place: dynamic-update-slice and scatter update their output in place
//   when the runtime passes the same pointer for operand 0 (each input) and
//   the output (the buffer planner aliases them); otherwise they copy first.
//   An output may also share the buffer of an operand with its shape and
//   layout whose element i it reads only for its own element i (elementwise
//   ops and loop fusions, as XLA's CanShareBuffer allows:
//   MayShareOperandBuffer). Other overlaps are not allowed, nor
//   rng-bit-generator's state output on its state input.
// Floating point: kernels assume the default rounding mode (nearest even);
//   they are correct with or without flush-to-zero / denormals-are-zero, and
//   the CPU runtime runs them with both set, as XLA:CPU does, so denormal
//   results and inputs read as zero there (see docs/codegen.md).
#ifndef XLITE_CODEGEN_KERNEL_H_
#define XLITE_CODEGEN_KERNEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "xlite/ir/instruction.h"
#include "xlite/ir/shape.h"

namespace xlite::codegen {

using KernelFunction = void (*)(void** buffers, int64_t partition, int64_t num_partitions);

// A whole-loop kernel (cpu/loop_kernels.h): steps over a table of buffers
// -- calls of other kernels of the same Jit::Compile batch, copies, fills,
// while loops and conditionals -- compiled into one function with the kernel ABI
// whose buffers are the table. Its callees are inlined into it, so a loop of
// small kernels runs without a dispatch per kernel. It runs as one partition.
struct KernelProgramStep {
  enum class Op : uint8_t { kKernel, kCopy, kFill, kWhile, kConditional };
  Op op = Op::kKernel;
  // kKernel: the callee, the index of an earlier spec of the same batch.
  int64_t kernel = -1;
  // Indices into the table. kKernel: the callee's buffers (kernel ABI order);
  // kCopy: {destination, source}; kFill: {destination}; kWhile:
  // {predicate}, read after the condition; kConditional: {selector}.
  std::vector<int64_t> buffers;
  int64_t bytes = 0;              // kCopy, kFill
  uint8_t fill = 0;               // kFill: the byte written
  bool selector_is_pred = false;  // kConditional: pred (true: branch 0) or s32
  // kWhile: {condition, body}; kConditional: one per branch (an s32 selector
  // out of range runs the last, as XLA specifies).
  std::vector<std::vector<KernelProgramStep>> nested;
};

struct KernelProgram {
  int64_t num_buffers = 0;
  int64_t num_operands = 0;  // the first buffers, only read
  // Buffers that may share bytes (slices of one allocation whose byte ranges
  // meet, directly or through others) form a group: group_base[i] is the
  // buffer at the start of buffer i's group, group_offset[i] buffer i's byte
  // offset from it. The program addresses a group's buffers from one pointer,
  // so LLVM sees exactly which accesses meet, and tells it that different
  // groups never do: a loop then keeps its carried values in registers.
  // Empty: each buffer is a group of its own that may meet any other.
  std::vector<int64_t> group_base;
  std::vector<int64_t> group_offset;
  std::vector<KernelProgramStep> steps;
};

// What to compile: one instruction inside a computation of a module that
// outlives the compilation (the compiled code keeps no pointer to it), or a
// program of other kernels of the batch.
struct KernelSpec {
  const HloInstruction* instruction = nullptr;  // with a program: names it only
  // The kernel's symbol; empty: derived from the instruction's name. Made
  // unique within a Jit if taken.
  std::string name;
  std::shared_ptr<const KernelProgram> program;
  // Only programs of the same batch call it (a whole-loop kernel's callees):
  // internal to the LLVM module, so it is gone once inlined; its
  // CompiledKernel has no function.
  bool internal = false;
};

struct CompiledKernel {
  std::string name;  // the symbol in the JIT
  KernelFunction function = nullptr;
  // The shapes of buffers[0..n), operands then output leaves, with layouts
  // (empty for a program: its table holds slices of any shape).
  std::vector<Shape> buffer_shapes;
  int64_t num_operands = 0;
  // Partitions beyond this many do no work (at least 1).
  int64_t max_partitions = 1;
};

// The buffers of `instr`'s kernel: its operands' shapes, then the leaves of its
// result; every array gets its layout (row-major where it has none).
std::vector<Shape> KernelBufferShapes(const HloInstruction& instr);

// Strides in elements of `shape`'s physical layout (see above).
std::vector<int64_t> PhysicalStrides(const Shape& shape);

// The dimensions of `shape` from the most minor to the most major.
std::vector<int64_t> MinorToMajor(const Shape& shape);
// MinorToMajor(shape)[0] without the vector; -1 for a scalar.
int64_t MinorDimension(const Shape& shape);

// True if the kernel computes `instr`'s elements by a scalar C library call
// (libm, or a complex helper of runtime_symbols.cc): a loop holding one does
// not vectorize. Elementwise opcodes only; false for everything else.
bool CallsScalarLibrary(const HloInstruction& instr);

}  // namespace xlite::codegen

#endif  // XLITE_CODEGEN_KERNEL_H_
