// Kernels: the loop around the elemental emitter, and the instructions that
// are not one element at a time (scatter, select-and-scatter, in-place
// dynamic-update-slice, rng-bit-generator's state).
//
// Partitions split the rows of an output (its elements with the most minor
// dimension left out, in physical order) into equal ranges. Scatter and
// select-and-scatter keep each output element with the partition that owns
// its row: every partition walks all updates in the interpreter's order and
// applies those that land in its rows, so each element sees its updates in
// order whatever the partition count.
#include <algorithm>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/MDBuilder.h"
#include "xlite/codegen/ir_emitter.h"
#include "xlite/codegen/kernel.h"
#include "xlite/support/status.h"

namespace xlite::codegen {
namespace {

using llvm::Value;

// Partitions are ranges of whole granules of elements (in physical order):
// vector loops stay whole, and with granules of kGranule elements two threads
// never write one cache line (granules of whole rows may share one line at a
// boundary: elements are at least a byte, so never one byte).
constexpr int64_t kGranule = 64;
// Results smaller than this are made element by element even where they read
// an input transposed (EmitTransposingTiles): the tiled kernel costs LLVM
// ~14 ms more to compile, and at 64 x 64 floats saves 0.6 us a run (1.8 ->
// 1.2 us; at 128 x 128 7.9 -> 2.6 us, at 512 x 512 335 -> 53 us).
constexpr int64_t kTransposingTilesMinElements = 128 * 128;
// The element-by-element loops at a tile's edges (under t x t elements):
// scalar, as their vector forms (main, epilogue, remainder) cost more LLVM
// time than they save.
constexpr LoopHints kEdgeLoop = {.unroll = false, .vectorize = false};

// Operand rows a column reduction folds per pass over its accumulators, when
// it has at least kColumnReduceBlockedRows of them: fewer gain little at run
// time and cost LLVM more than they gain (lstm_scan's 50-row reduction inside
// its loop kernel: 114 -> 181 ms of JIT time).
constexpr int64_t kColumnReduceRowBlock = 8;
constexpr int64_t kColumnReduceBlockedRows = 256;

// An array's elements as rows: `outer_dims` (major to minor) select a row,
// `minor` indexes within it.
struct Rows {
  Shape shape;
  int64_t minor = -1;  // -1 for rank 0
  int64_t inner = 1;
  std::vector<int64_t> outer_dims;
  int64_t count = 1;

  // Elements per granule: kGranule, or a whole number of rows (AlignToRows).
  int64_t granule = kGranule;

  int64_t elements() const { return count * inner; }
  // Partitions beyond this many get no elements.
  int64_t Partitions() const { return std::max<int64_t>(1, (elements() + granule - 1) / granule); }
  // Granules of whole rows (at least kGranule elements) where that leaves
  // enough of them to share among threads: every row is then whole in one
  // partition, and its loop runs [0, inner) with constant bounds, which LLVM
  // vectorizes without remainder checks and compiles in less time. A few long
  // rows keep kGranule-element granules.
  void AlignToRows() {
    constexpr int64_t kEnoughRows = 64;
    if (minor < 0 || inner == 0 || (inner > kGranule && count < kEnoughRows)) return;
    granule = inner * ((kGranule + inner - 1) / inner);
  }
  bool RowAligned() const { return minor >= 0 && inner > 0 && granule % inner == 0; }

  static Rows Of(const Shape& shape) {
    Rows rows;
    rows.shape = shape;
    const std::vector<int64_t> order = MinorToMajor(shape);
    if (!order.empty()) {
      rows.minor = order[0];
      rows.inner = shape.dimensions(rows.minor);
      for (size_t k = order.size(); k-- > 1;) {
        rows.outer_dims.push_back(order[k]);
        rows.count *= shape.dimensions(order[k]);
      }
    }
    rows.AlignToRows();
    return rows;
  }
};

class KernelEmitter {
 public:
  KernelEmitter(IrEmitter& e, Value* buffers, Value* partition, Value* num_partitions)
      : e_(e),
        b_(e.b()),
        buffers_arg_(buffers),
        partition_(partition),
        num_partitions_(num_partitions) {}

  absl::StatusOr<int64_t> Emit(const HloInstruction& instr);

 private:
  Value* I64(int64_t v) { return e_.I64(v); }
  Value* BufferPointer(int64_t i);
  // The buffer an instruction of the kernel body is read from, or -1.
  int64_t BufferOf(const HloInstruction* instr) const {
    auto it = input_buffer_.find(instr);
    return it == input_buffer_.end() ? -1 : it->second;
  }
  void BindInput(const HloInstruction* instr, int64_t buffer);
  // Alias scopes for the function's buffer accesses so far: each output's
  // stores in a scope of their own, and loads from an input no output may
  // share (kernel.h: an output shares only an operand of its own shape)
  // marked as not aliasing any output. Without them LLVM keeps loads of a
  // row's broadcast values inside the row loop, as a store might change them.
  void ScopeBufferAccesses();
  // This partition's [begin, end) of the elements of `rows`, in physical order.
  std::pair<Value*, Value*> PartitionRange(const Rows& rows);
  // body(index) for the elements [begin, end) of `rows`, row by row;
  // `independent`: each element's body touches memory no other one's writes
  // (IrEmitter::ForIndependentIterations).
  absl::Status ForRows(const Rows& rows, Value* begin, Value* end,
                       absl::FunctionRef<absl::Status(const IrIndex&)> body,
                       bool independent = false);
  // Whether element `index` of `rows` lies in [begin, end) (ownership).
  Value* Owned(const Rows& rows, const IrIndex& index, Value* begin, Value* end);

  absl::StatusOr<int64_t> EmitElementalLoop(const HloInstruction& root);
  // The root's element(s) at `index`, stored to each output there.
  absl::Status EmitElement(const HloInstruction& root, const IrIndex& index);
  // Whether element i of every buffer of rank > 0 is element i of the
  // result (same dimensions and layout, elementwise ops and broadcasts of
  // scalars only): then one flat loop over physical offsets serves, with no
  // index arithmetic and vectors as long as the whole array, however short
  // its rows.
  bool IsFlat(const HloInstruction& root) const;
  absl::StatusOr<int64_t> EmitDynamicUpdateSlice(const HloInstruction& root);
  // A reduce over the major dimensions of its operand (column sums), with
  // the result's elements as the accumulators; nullopt when `root` is not one.
  absl::StatusOr<std::optional<int64_t>> EmitColumnReduce(const HloInstruction& root);
  // A transpose of an input buffer that swaps two groups of dimensions, moved
  // in tiles; nullopt when `root` is not one.
  absl::StatusOr<std::optional<int64_t>> EmitTiledTranspose(const HloInstruction& root);
  // `lines` (t vectors of t elements, t a power of two: a t x t tile, row by
  // row) become the tile's columns: log2(t) rounds of two-vector shuffles,
  // each swapping the off-diagonal blocks of its size.
  void TransposeInRegisters(std::vector<Value*>& lines);
  // The rows (or columns) of a tile of t starting at `first` that lie in a
  // dimension of `size`: t but at the edge.
  Value* TileExtent(Value* first, int64_t t, int64_t size);
  // Copies a tile of `lines` lines of `length` elements (each at most t; t a
  // power of two), line i at src[from + i * src_stride ...] contiguous,
  // transposed to dst: line k at dst[to + k * dst_stride ...] holds element k
  // of every source line. A whole tile moves as t vectors transposed in
  // registers; a partial one (at an array's edge) element by element.
  absl::Status CopyTileTransposed(llvm::Type* element, Value* src, Value* from, int64_t src_stride,
                                  Value* lines, Value* length, Value* dst, Value* to,
                                  int64_t dst_stride, int64_t t);
  // An elementwise computation that reads an input through a transpose which
  // moves that input's minor dimension away from the result's (x.T + y),
  // computed in tiles; nullopt when `root` is not one (EmitElementalLoop's
  // preconditions hold).
  absl::StatusOr<std::optional<int64_t>> EmitTransposingTiles(const HloInstruction& root);
  absl::StatusOr<int64_t> EmitScatter(const HloInstruction& root);
  absl::StatusOr<int64_t> EmitSelectAndScatter(const HloInstruction& root);
  absl::StatusOr<int64_t> EmitRngBitGenerator(const HloInstruction& root);

  IrEmitter& e_;
  llvm::IRBuilder<>& b_;
  Value* buffers_arg_;
  Value* partition_;
  Value* num_partitions_;
  std::vector<Shape> buffer_shapes_;
  std::vector<Value*> pointers_;
  int64_t num_inputs_ = 0;
  absl::flat_hash_map<const HloInstruction*, int64_t> input_buffer_;
  // In a flat loop (IsFlat): the physical offset of the element being made;
  // inputs of rank > 0 are read there, whatever index they are asked for.
  Value* flat_offset_ = nullptr;
};

Value* KernelEmitter::BufferPointer(int64_t i) {
  if (pointers_[i] == nullptr) {
    llvm::Type* ptr = llvm::PointerType::get(e_.context(), 0);
    Value* slot = b_.CreateInBoundsGEP(ptr, buffers_arg_, I64(i));
    pointers_[i] = b_.CreateAlignedLoad(ptr, slot, llvm::Align(8), absl::StrCat("buffer", i));
  }
  return pointers_[i];
}

void KernelEmitter::BindInput(const HloInstruction* instr, int64_t buffer) {
  if (input_buffer_.contains(instr)) return;  // an operand used twice reads its first buffer
  input_buffer_[instr] = buffer;
  const Shape shape = buffer_shapes_[buffer];
  Value* base = BufferPointer(buffer);
  e_.Bind(instr, [this, shape, base](const IrIndex& index) -> absl::StatusOr<IrValues> {
    if (static_cast<int64_t>(index.size()) != shape.rank()) {
      return Internal("index of rank ", index.size(), " into a buffer of rank ", shape.rank());
    }
    if (flat_offset_ != nullptr && shape.rank() > 0) {
      return IrValues{e_.Load(shape.element_type(), base, flat_offset_)};
    }
    return IrValues{e_.Load(shape.element_type(), base, e_.PhysicalOffset(shape, index))};
  });
}

std::pair<Value*, Value*> KernelEmitter::PartitionRange(const Rows& rows) {
  Value* one = I64(1);
  Value* n = b_.CreateSelect(b_.CreateICmpSLT(num_partitions_, one), one, num_partitions_);
  Value* p = partition_;
  Value* valid = b_.CreateAnd(b_.CreateICmpSGE(p, I64(0)), b_.CreateICmpSLT(p, n));
  Value* total = I64(rows.elements());
  const int64_t granule_count = rows.Partitions();
  if (granule_count == 1) {  // all of it in partition 0, no division
    Value* first = b_.CreateICmpEQ(p, I64(0));
    return {I64(0), b_.CreateSelect(first, total, I64(0))};
  }
  Value* granules = I64(granule_count);
  // One part (the common call) takes every granule without a 64-bit
  // division, which costs as much as a small kernel's work.
  absl::StatusOr<IrValues> per_part = e_.If(
      b_.CreateICmpEQ(n, one), [&]() -> absl::StatusOr<IrValues> { return IrValues{granules}; },
      [&]() -> absl::StatusOr<IrValues> {
        return IrValues{b_.CreateUDiv(b_.CreateAdd(granules, b_.CreateSub(n, one)), n)};
      });
  Value* chunk = b_.CreateMul(per_part.ok() ? (*per_part)[0] : granules, I64(rows.granule));
  Value* begin = b_.CreateMul(b_.CreateSelect(valid, p, I64(0)), chunk);
  begin = b_.CreateSelect(b_.CreateICmpUGT(begin, total), total, begin);
  Value* end = b_.CreateAdd(begin, chunk);
  end = b_.CreateSelect(b_.CreateICmpUGT(end, total), total, end);
  return {begin, b_.CreateSelect(valid, end, begin)};
}

absl::Status KernelEmitter::ForRows(const Rows& rows, Value* begin, Value* end,
                                    absl::FunctionRef<absl::Status(const IrIndex&)> body,
                                    bool independent) {
  if (rows.elements() == 0) return absl::OkStatus();
  auto loop = [&](Value* from, Value* to, absl::FunctionRef<absl::Status(Value*)> fn,
                  const char* name) {
    return independent ? e_.ForIndependentIterations(from, to, fn, name)
                       : e_.ForLoop(from, to, fn, name);
  };
  const int64_t inner = rows.inner;
  Value* first_row = b_.CreateUDiv(begin, I64(inner));
  Value* last_row = b_.CreateUDiv(b_.CreateAdd(end, I64(inner - 1)), I64(inner));
  return loop(
      first_row, last_row,
      [&](Value* row) -> absl::Status {
        IrIndex index(rows.shape.rank(), nullptr);
        Value* rest = row;
        for (size_t k = rows.outer_dims.size(); k-- > 0;) {
          const int64_t d = rows.outer_dims[k];
          const int64_t size = std::max<int64_t>(rows.shape.dimensions(d), 1);
          index[d] = k == 0 ? rest : b_.CreateURem(rest, I64(size));
          if (k > 0) rest = b_.CreateUDiv(rest, I64(size));
        }
        if (rows.minor < 0) return body(index);
        if (rows.RowAligned()) {  // the whole row is in [begin, end)
          return loop(
              I64(0), I64(inner),
              [&](Value* j) -> absl::Status {
                index[rows.minor] = j;
                return body(index);
              },
              "inner.");
        }
        // The part of this row inside [begin, end).
        Value* row_start = b_.CreateMul(row, I64(inner));
        Value* lo = b_.CreateSelect(b_.CreateICmpUGT(begin, row_start),
                                    b_.CreateSub(begin, row_start), I64(0));
        Value* hi = b_.CreateSub(end, row_start);
        hi = b_.CreateSelect(b_.CreateICmpSLT(hi, I64(inner)), hi, I64(inner));
        return loop(
            lo, hi,
            [&](Value* j) -> absl::Status {
              index[rows.minor] = j;
              return body(index);
            },
            "inner.");
      },
      "row.");
}

void KernelEmitter::ScopeBufferAccesses() {
  llvm::LLVMContext& ctx = e_.context();
  const int64_t n = static_cast<int64_t>(buffer_shapes_.size());
  absl::flat_hash_map<const Value*, int64_t> buffer_of;
  for (int64_t i = 0; i < n; ++i) buffer_of[pointers_[i]] = i;
  llvm::MDBuilder md(ctx);
  llvm::MDNode* domain = md.createAnonymousAliasScopeDomain("buffers");
  std::vector<llvm::Metadata*> output_scopes;
  for (int64_t k = num_inputs_; k < n; ++k) {
    output_scopes.push_back(md.createAnonymousAliasScope(domain, absl::StrCat("output", k)));
  }
  llvm::MDNode* all_outputs = llvm::MDNode::get(ctx, output_scopes);
  std::vector<bool> apart(n, false);  // an input no output may share
  for (int64_t i = 0; i < num_inputs_; ++i) {
    apart[i] = std::none_of(buffer_shapes_.begin() + num_inputs_, buffer_shapes_.end(),
                            [&](const Shape& out) { return out == buffer_shapes_[i]; });
  }
  llvm::Function* function = b_.GetInsertBlock()->getParent();
  for (llvm::BasicBlock& block : *function) {
    for (llvm::Instruction& instr : block) {
      Value* pointer = llvm::getLoadStorePointerOperand(&instr);
      if (pointer == nullptr) continue;
      auto it = buffer_of.find(llvm::getUnderlyingObject(pointer, 0));
      if (it == buffer_of.end()) continue;
      const int64_t i = it->second;
      if (llvm::isa<llvm::StoreInst>(instr) && i >= num_inputs_) {
        instr.setMetadata(llvm::LLVMContext::MD_alias_scope,
                          llvm::MDNode::get(ctx, {output_scopes[i - num_inputs_]}));
      } else if (llvm::isa<llvm::LoadInst>(instr) && i < num_inputs_ && apart[i]) {
        instr.setMetadata(llvm::LLVMContext::MD_noalias, all_outputs);
      }
    }
  }
}

Value* KernelEmitter::Owned(const Rows& rows, const IrIndex& index, Value* begin, Value* end) {
  Value* element = I64(0);
  for (int64_t d : rows.outer_dims) {
    element = b_.CreateAdd(b_.CreateMul(element, I64(rows.shape.dimensions(d))), index[d]);
  }
  if (rows.minor >= 0) {
    element = b_.CreateAdd(b_.CreateMul(element, I64(rows.inner)), index[rows.minor]);
  }
  return b_.CreateAnd(b_.CreateICmpSGE(element, begin), b_.CreateICmpSLT(element, end));
}

absl::StatusOr<int64_t> KernelEmitter::Emit(const HloInstruction& instr) {
  buffer_shapes_ = KernelBufferShapes(instr);
  pointers_.assign(buffer_shapes_.size(), nullptr);
  // Every pointer is read up front: a store to an output could otherwise
  // (for all LLVM knows) change `buffers`, and keep loads in the loops.
  for (size_t i = 0; i < buffer_shapes_.size(); ++i) BufferPointer(i);
  num_inputs_ = instr.operand_count();
  for (int64_t i = 0; i < static_cast<int64_t>(buffer_shapes_.size()); ++i) {
    if (!buffer_shapes_[i].IsArray()) {
      return UnsupportedInstruction(instr,
                                    i < num_inputs_ ? "a non-array operand" : "a non-array result");
    }
  }
  const HloInstruction* root = &instr;
  if (instr.opcode() == HloOpcode::kFusion) {
    if (!instr.attrs().fusion_kind.empty() && instr.attrs().fusion_kind != "kLoop") {
      return UnsupportedInstruction(instr, absl::StrCat("fusion kind ", instr.attrs().fusion_kind));
    }
    if (instr.called_computations().size() != 1 || instr.called_computations()[0] == nullptr) {
      return InvalidInstruction(instr, "needs one fused computation");
    }
    const HloComputation& fused = *instr.called_computations()[0];
    if (fused.num_parameters() != num_inputs_) {
      return InvalidInstruction(instr,
                                "operand count differs from the fused computation's parameters");
    }
    for (int64_t i = 0; i < num_inputs_; ++i) {
      if (fused.parameter_instruction(i) == nullptr)
        return InvalidInstruction(instr, "missing parameter");
      BindInput(fused.parameter_instruction(i), i);
    }
    root = fused.root_instruction();
    if (!root->shape().EqualIgnoringLayout(instr.shape())) {
      return InvalidInstruction(instr, "the fused root's shape differs from the fusion's");
    }
  } else {
    for (int64_t i = 0; i < num_inputs_; ++i) BindInput(instr.operand(i), i);
  }
  switch (root->opcode()) {
    case HloOpcode::kScatter:
      return EmitScatter(*root);
    case HloOpcode::kSelectAndScatter:
      return EmitSelectAndScatter(*root);
    case HloOpcode::kRngBitGenerator:
      return EmitRngBitGenerator(*root);
    case HloOpcode::kDynamicUpdateSlice:
      return EmitDynamicUpdateSlice(*root);
    case HloOpcode::kReduce: {
      ASSIGN_OR_RETURN(std::optional<int64_t> partitions, EmitColumnReduce(*root));
      if (partitions) return *partitions;
      return EmitElementalLoop(*root);
    }
    case HloOpcode::kTranspose: {
      ASSIGN_OR_RETURN(std::optional<int64_t> partitions, EmitTiledTranspose(*root));
      if (partitions) return *partitions;
      return EmitElementalLoop(*root);
    }
    default:
      return EmitElementalLoop(*root);
  }
}

// The element-by-element fold of a reduce over the major dimensions reads its
// operand down columns, a row apart per step. Here the result's elements are
// the accumulators instead: initialized, then updated one operand row at a
// time, so the inner loop runs along a contiguous row and vectorizes. Each
// element still folds its column in the interpreter's order. One
// non-variadic reduce whose reduced dimensions are the operand's leading
// ones, row-major operand buffer and result, and one type throughout (the
// reducer's too).
absl::StatusOr<std::optional<int64_t>> KernelEmitter::EmitColumnReduce(const HloInstruction& root) {
  const int64_t outputs = static_cast<int64_t>(buffer_shapes_.size()) - num_inputs_;
  if (root.operand_count() != 2 || root.called_computations().size() != 1 || outputs != 1 ||
      !root.shape().IsArray() || !root.attrs().dimensions) {
    return std::nullopt;
  }
  const HloComputation& reducer = *root.called_computations()[0];
  const HloInstruction* input = root.operand(0);
  const Shape& in = input->shape();
  const std::vector<int64_t>& reduced = *root.attrs().dimensions;
  const int64_t k = static_cast<int64_t>(reduced.size());
  if (k < 1 || k >= in.rank()) return std::nullopt;
  for (int64_t i = 0; i < k; ++i) {
    if (reduced[i] != i) return std::nullopt;
  }
  const Shape& out_shape = buffer_shapes_[num_inputs_];
  const PrimitiveType type = out_shape.element_type();
  if (out_shape.dimensions() !=
          std::vector<int64_t>(in.dimensions().begin() + k, in.dimensions().end()) ||
      !out_shape.HasRowMajorLayout() || in.element_type() != type ||
      root.operand(1)->shape().element_type() != type || reducer.num_parameters() != 2 ||
      reducer.parameter_instruction(0) == nullptr || reducer.parameter_instruction(1) == nullptr ||
      reducer.parameter_instruction(0)->shape().element_type() != type ||
      reducer.parameter_instruction(1)->shape().element_type() != type ||
      !reducer.root_instruction()->shape().IsArray() ||
      reducer.root_instruction()->shape().element_type() != type) {
    return std::nullopt;
  }
  if (const int64_t buffer = BufferOf(input);
      buffer >= 0 && !buffer_shapes_[buffer].HasRowMajorLayout()) {
    return std::nullopt;
  }
  const Rows rows = Rows::Of(out_shape);
  auto [begin, end] = PartitionRange(rows);
  Value* out = BufferPointer(num_inputs_);
  ASSIGN_OR_RETURN(Value * init, e_.EmitOne(*root.operand(1), {}));
  RETURN_IF_ERROR(ForRows(rows, begin, end, [&](const IrIndex& index) -> absl::Status {
    e_.Store(type, init, out, e_.PhysicalOffset(out_shape, index));
    return absl::OkStatus();
  }));
  const std::vector<int64_t> reduced_sizes(in.dimensions().begin(), in.dimensions().begin() + k);
  int64_t count = 1;
  for (int64_t d : reduced_sizes) count *= d;
  // Operand rows [r, r + block) fold into each accumulator held in a
  // register, stored once per block: the same order per element, a block's
  // worth fewer accumulator loads and stores (which also stalled the operand's
  // loads where the two addresses agree modulo 4 KiB, every row at a row
  // length of a multiple of 4 KiB).
  auto fold_rows = [&](Value* r, int64_t block) -> absl::Status {
    std::vector<IrIndex> at_rows;
    for (int64_t t = 0; t < block; ++t) {
      at_rows.push_back(
          e_.DelinearizeRowMajor(reduced_sizes, t == 0 ? r : b_.CreateAdd(r, I64(t))));
    }
    return ForRows(rows, begin, end, [&](const IrIndex& index) -> absl::Status {
      Value* offset = e_.PhysicalOffset(out_shape, index);
      Value* acc = e_.Load(type, out, offset);
      for (const IrIndex& at_row : at_rows) {
        IrIndex at = at_row;
        at.insert(at.end(), index.begin(), index.end());
        ASSIGN_OR_RETURN(Value * x, e_.EmitOne(*input, at));
        ASSIGN_OR_RETURN(IrValues result, e_.EmitCall(reducer, {acc, x}, root));
        if (result.size() != 1) return InvalidInstruction(root, "the reducer must give one value");
        acc = result[0];
      }
      e_.Store(type, acc, out, offset);
      return absl::OkStatus();
    });
  };
  const int64_t block = count >= kColumnReduceBlockedRows ? kColumnReduceRowBlock : 1;
  const int64_t blocked = count / block * block;
  RETURN_IF_ERROR(e_.ForLoop(
      I64(0), I64(blocked / block),
      [&](Value* b) -> absl::Status { return fold_rows(b_.CreateMul(b, I64(block)), block); },
      "reduce_row."));
  if (blocked < count) {
    RETURN_IF_ERROR(e_.ForLoop(
        I64(blocked), I64(count), [&](Value* r) -> absl::Status { return fold_rows(r, 1); },
        "reduce_rest."));
  }
  return rows.Partitions();
}

Value* KernelEmitter::TileExtent(Value* first, int64_t t, int64_t size) {
  Value* past = b_.CreateAdd(first, I64(t));
  return b_.CreateSub(b_.CreateSelect(b_.CreateICmpULT(past, I64(size)), past, I64(size)), first);
}

void KernelEmitter::TransposeInRegisters(std::vector<Value*>& lines) {
  const int64_t t = static_cast<int64_t>(lines.size());
  for (int64_t s = t / 2; s >= 1; s /= 2) {
    std::vector<int> low(t), high(t);
    for (int64_t c = 0; c < t; ++c) {
      low[c] = static_cast<int>((c & s) ? t + (c ^ s) : c);
      high[c] = static_cast<int>((c & s) ? t + c : (c ^ s));
    }
    for (int64_t r = 0; r < t; ++r) {
      if (r & s) continue;
      Value* upper = lines[r];
      Value* lower = lines[r | s];
      lines[r] = b_.CreateShuffleVector(upper, lower, low);
      lines[r | s] = b_.CreateShuffleVector(upper, lower, high);
    }
  }
}

absl::Status KernelEmitter::CopyTileTransposed(llvm::Type* element, Value* src, Value* from,
                                               int64_t src_stride, Value* lines, Value* length,
                                               Value* dst, Value* to, int64_t dst_stride,
                                               int64_t t) {
  const unsigned bits = element->getIntegerBitWidth();
  llvm::Type* vector = llvm::FixedVectorType::get(element, t);
  const llvm::Align align(bits / 8);
  auto at = [&](Value* base, Value* offset) { return b_.CreateInBoundsGEP(element, base, offset); };
  Value* whole = b_.CreateAnd(b_.CreateICmpEQ(lines, I64(t)), b_.CreateICmpEQ(length, I64(t)));
  return e_
      .If(
          whole,
          [&]() -> absl::StatusOr<IrValues> {
            std::vector<Value*> vectors(t);
            for (int64_t i = 0; i < t; ++i) {
              vectors[i] = b_.CreateAlignedLoad(
                  vector, at(src, b_.CreateAdd(from, I64(i * src_stride))), align);
            }
            TransposeInRegisters(vectors);
            for (int64_t k = 0; k < t; ++k) {
              b_.CreateAlignedStore(vectors[k], at(dst, b_.CreateAdd(to, I64(k * dst_stride))),
                                    align);
            }
            return IrValues{};
          },
          [&]() -> absl::StatusOr<IrValues> {
            RETURN_IF_ERROR(e_.ForLoop(
                I64(0), length,
                [&](Value* k) -> absl::Status {
                  return e_.ForLoop(
                      I64(0), lines,
                      [&](Value* i) -> absl::Status {
                        Value* x = b_.CreateAlignedLoad(
                            element,
                            at(src, b_.CreateAdd(
                                        from, b_.CreateAdd(b_.CreateMul(i, I64(src_stride)), k))),
                            align);
                        b_.CreateAlignedStore(
                            x,
                            at(dst,
                               b_.CreateAdd(to, b_.CreateAdd(b_.CreateMul(k, I64(dst_stride)), i))),
                            align);
                        return absl::OkStatus();
                      },
                      "edge_line.", kEdgeLoop);
                },
                "edge_element.", kEdgeLoop));
            return IrValues{};
          })
      .status();
}

// The transposes that swap two groups of dimensions: once dimensions of
// size 1 are dropped and runs of dimensions that stay adjacent and in order
// are merged, the operand is [batch, A, B] and the result [batch, B, A] (a
// convolution's NHWC <-> NCHW, a matrix transpose). Element by element, one
// side is read or written a row apart per step; here T x T tiles move whole:
// T operand rows loaded as vectors, transposed in registers (log2 T rounds of
// two-vector shuffles, each swapping the off-diagonal blocks of its size),
// stored as T result rows. Tiles at the edges that are not whole copy element
// by element. Elements move as integers of their width in a buffer (8 to 64
// bits).
absl::StatusOr<std::optional<int64_t>> KernelEmitter::EmitTiledTranspose(
    const HloInstruction& root) {
  const int64_t outputs = static_cast<int64_t>(buffer_shapes_.size()) - num_inputs_;
  if (outputs != 1 || root.operand_count() != 1 || !root.attrs().dimensions) return std::nullopt;
  const int64_t in_buffer = BufferOf(root.operand(0));
  if (in_buffer < 0) return std::nullopt;
  const Shape& in = buffer_shapes_[in_buffer];
  const Shape& out = buffer_shapes_[num_inputs_];
  const std::vector<int64_t>& permutation = *root.attrs().dimensions;
  const int64_t rank = in.rank();
  const int bits = 8 * PrimitiveByteWidth(in.element_type());  // s4 is a byte in a buffer
  if (static_cast<int64_t>(permutation.size()) != rank || out.rank() != rank ||
      out.element_type() != in.element_type() || !in.HasRowMajorLayout() ||
      !out.HasRowMajorLayout() || (bits != 8 && bits != 16 && bits != 32 && bits != 64) ||
      in.ElementCount() == 0) {
    return std::nullopt;  // an empty array's buffer must not be touched
  }
  // The operand's dimensions of size > 1 in the result's order, each as its
  // position among them in the operand's order.
  std::vector<int64_t> position(rank, -1);
  for (int64_t d = 0, p = 0; d < rank; ++d) {
    if (in.dimensions(d) > 1) position[d] = p++;
  }
  struct Group {
    int64_t first = 0;  // position of its first dimension in the operand
    int64_t size = 1;
  };
  std::vector<Group> groups;  // in the result's order
  int64_t last = -2;
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t d = permutation[i];
    if (d < 0 || d >= rank || out.dimensions(i) != in.dimensions(d)) return std::nullopt;
    if (position[d] < 0) continue;
    if (position[d] != last + 1 || groups.empty()) groups.push_back({position[d], 1});
    groups.back().size *= in.dimensions(d);
    last = position[d];
  }
  const int64_t m = static_cast<int64_t>(groups.size());
  if (m < 2) return std::nullopt;
  // Groups before the last two keep their order; the last two swap.
  for (int64_t g = 1; g + 2 < m; ++g) {
    if (groups[g].first < groups[g - 1].first) return std::nullopt;
  }
  if (groups[m - 1].first > groups[m - 2].first ||
      (m > 2 && groups[m - 1].first < groups[m - 3].first)) {
    return std::nullopt;
  }
  int64_t batch = 1;
  for (int64_t g = 0; g + 2 < m; ++g) batch *= groups[g].size;
  const int64_t a = groups[m - 1].size;  // operand rows of a batch
  const int64_t b = groups[m - 2].size;  // operand columns
  const int64_t t = bits == 64 ? 8 : 16;
  if (a < t || b < t) return std::nullopt;

  llvm::Type* element = b_.getIntNTy(bits);
  Value* src = BufferPointer(in_buffer);
  Value* dst = BufferPointer(num_inputs_);
  const int64_t tiles_a = (a + t - 1) / t, tiles_b = (b + t - 1) / t;
  Rows tiles;
  tiles.count = batch * tiles_b * tiles_a;
  tiles.granule = 1;
  auto [begin, end] = PartitionRange(tiles);
  RETURN_IF_ERROR(e_.ForLoop(
      begin, end,
      [&](Value* tile) -> absl::Status {
        // Tiles along the operand's rows run consecutively: a result row's
        // cache lines fill across neighbouring tiles.
        Value* ti = b_.CreateURem(tile, I64(tiles_a));
        Value* rest = b_.CreateUDiv(tile, I64(tiles_a));
        Value* tj = b_.CreateURem(rest, I64(tiles_b));
        Value* k = b_.CreateUDiv(rest, I64(tiles_b));
        Value* i0 = b_.CreateMul(ti, I64(t));
        Value* j0 = b_.CreateMul(tj, I64(t));
        // Offsets of element (i0, j0) of the operand and (j0, i0) of the result.
        Value* from =
            b_.CreateAdd(b_.CreateMul(b_.CreateAdd(b_.CreateMul(k, I64(a)), i0), I64(b)), j0);
        Value* to =
            b_.CreateAdd(b_.CreateMul(b_.CreateAdd(b_.CreateMul(k, I64(b)), j0), I64(a)), i0);
        // The tile's rows and columns inside the arrays: t of each but at the edges.
        Value* rows = TileExtent(i0, t, a);
        Value* columns = TileExtent(j0, t, b);
        return CopyTileTransposed(element, src, from, b, rows, columns, dst, to, a, t);
      },
      "tile."));
  ScopeBufferAccesses();
  return tiles.Partitions();
}

absl::StatusOr<int64_t> KernelEmitter::EmitElementalLoop(const HloInstruction& root) {
  const int64_t outputs = static_cast<int64_t>(buffer_shapes_.size()) - num_inputs_;
  if (outputs < 1) return InvalidInstruction(root, "has no output");
  for (int64_t k = 1; k < outputs; ++k) {
    if (buffer_shapes_[num_inputs_ + k].dimensions() != buffer_shapes_[num_inputs_].dimensions()) {
      return UnsupportedInstruction(root, "a tuple result whose elements differ in dimensions");
    }
  }
  ASSIGN_OR_RETURN(std::optional<int64_t> tiled, EmitTransposingTiles(root));
  if (tiled) return *tiled;
  const Rows rows = Rows::Of(buffer_shapes_[num_inputs_]);
  auto [begin, end] = PartitionRange(rows);
  if (IsFlat(root)) {
    // Any index of the result's rank will do (a tuple root passes it to each
    // element): the ops ignore it and the inputs read flat_offset_.
    const IrIndex index(buffer_shapes_[num_inputs_].rank(), I64(0));
    // Element by element: an output shares a buffer only with an operand it
    // reads at the same element (kernel.h), so iterations are independent.
    RETURN_IF_ERROR(e_.ForIndependentIterations(
        begin, end,
        [&](Value* offset) -> absl::Status {
          flat_offset_ = offset;
          absl::StatusOr<IrValues> values = e_.Emit(root, index);
          flat_offset_ = nullptr;
          if (!values.ok()) return values.status();
          if (static_cast<int64_t>(values->size()) != outputs) {
            return Internal("'", root.name(), "' yields ", values->size(), " values for ", outputs,
                            " outputs");
          }
          for (int64_t k = 0; k < outputs; ++k) {
            e_.Store(buffer_shapes_[num_inputs_ + k].element_type(), (*values)[k],
                     BufferPointer(num_inputs_ + k), offset);
          }
          return absl::OkStatus();
        },
        "flat."));
    ScopeBufferAccesses();
    return rows.Partitions();
  }
  RETURN_IF_ERROR(ForRows(
      rows, begin, end, [&](const IrIndex& index) { return EmitElement(root, index); },
      /*independent=*/true));
  ScopeBufferAccesses();
  return rows.Partitions();
}

// Element by element in the result's order, each read of such an input is a
// cache line of its own, a row of the input apart (x.T + y over 4096^2 floats:
// 99 ms against 10.5 for the transpose alone), and vectorized as gathers. Here
// the result is made in tiles of the two dimensions (the result's minor one
// and the one the input's minor dimension becomes): each tile of the input is
// first transposed into a scratch tile (t rows loaded as vectors and
// shuffled, as EmitTiledTranspose does; element by element at the edges), then
// every element of the result's tile is made by the elemental emitter, the
// transpose reading the scratch tile: contiguous loads and stores that
// vectorize, any elementwise computation around the transpose fused.
absl::StatusOr<std::optional<int64_t>> KernelEmitter::EmitTransposingTiles(
    const HloInstruction& root) {
  const Shape& result = buffer_shapes_[num_inputs_];
  const int64_t rank = result.rank();
  if (rank < 2 || result.ElementCount() < kTransposingTilesMinElements) return std::nullopt;
  const int64_t minor = MinorToMajor(result)[0];
  // The instructions that read their operands at their own index, the
  // result's: the root and what it reaches through elementwise ops of the
  // result's dimensions (and a multi-output root's tuple), inputs excluded.
  // The transposes it reaches are candidates, themselves read at the
  // result's index but reading their operand elsewhere.
  absl::flat_hash_set<const HloInstruction*> at_own_index = {&root};
  absl::flat_hash_set<const HloInstruction*> seen;
  std::vector<const HloInstruction*> transposes;
  std::vector<const HloInstruction*> stack = {&root};
  while (!stack.empty()) {
    const HloInstruction* instr = stack.back();
    stack.pop_back();
    if (BufferOf(instr) >= 0 || !seen.insert(instr).second) continue;
    const bool result_dims =
        instr->shape().IsArray() && instr->shape().dimensions() == result.dimensions();
    if (instr->opcode() == HloOpcode::kTranspose && result_dims) {
      transposes.push_back(instr);
    } else if (instr->opcode() == HloOpcode::kTuple ||
               (IsElementwiseOpcode(instr->opcode()) && result_dims)) {
      at_own_index.insert(instr);
      for (const HloInstruction* operand : instr->operands()) stack.push_back(operand);
    }
  }
  // A transpose of an input that moves its minor dimension off the result's,
  // read only at the result's own index (every path from it to the root
  // elementwise: the scratch tile holds only the tile's elements; another
  // transpose on the way, as in a + a.T, reads it elsewhere).
  auto read_at_own_index_only = [&](const HloInstruction* transpose) {
    std::vector<const HloInstruction*> users = {transpose};
    while (!users.empty()) {
      const HloInstruction* instr = users.back();
      users.pop_back();
      if (instr == &root) continue;
      for (const HloInstruction* user : instr->users()) {
        if (!at_own_index.contains(user)) return false;
        users.push_back(user);
      }
    }
    return true;
  };
  const HloInstruction* transpose = nullptr;
  int64_t strided = -1;  // the result dimension the input's minor one becomes
  int bits = 0;          // the input's element width in its buffer (s4: a byte)
  int64_t t = 0;         // a tile of t x t
  for (const HloInstruction* candidate : transposes) {
    const int64_t buffer = BufferOf(candidate->operand(0));
    if (buffer < 0 || !candidate->attrs().dimensions) continue;
    const Shape& input = buffer_shapes_[buffer];
    const std::vector<int64_t>& permutation = *candidate->attrs().dimensions;
    if (input.rank() != rank || static_cast<int64_t>(permutation.size()) != rank) continue;
    const int candidate_bits = 8 * PrimitiveByteWidth(input.element_type());
    if (candidate_bits != 8 && candidate_bits != 16 && candidate_bits != 32 &&
        candidate_bits != 64) {
      continue;
    }
    const int64_t tile = candidate_bits == 64 ? 8 : 16;
    // The result dimension the input's minor one becomes.
    const int64_t d = std::find(permutation.begin(), permutation.end(), MinorToMajor(input)[0]) -
                      permutation.begin();
    if (d < rank && d != minor && result.dimensions(d) >= tile &&
        result.dimensions(minor) >= tile && read_at_own_index_only(candidate)) {
      transpose = candidate;
      strided = d;
      bits = candidate_bits;
      t = tile;
      break;
    }
  }
  if (transpose == nullptr) return std::nullopt;
  const int64_t input_buffer = BufferOf(transpose->operand(0));
  const Shape& input = buffer_shapes_[input_buffer];
  const int64_t rows_size = result.dimensions(strided);
  const int64_t columns_size = result.dimensions(minor);
  const std::vector<int64_t>& permutation = *transpose->attrs().dimensions;
  // The input's stride along the result's columns (along its rows it is 1).
  const int64_t column_stride = PhysicalStrides(input)[permutation[minor]];

  std::vector<int64_t> outer_dims;  // the result's other dimensions, major to minor
  int64_t outer = 1;
  for (int64_t d : MinorToMajor(result)) {
    if (d == strided || d == minor) continue;
    outer_dims.insert(outer_dims.begin(), d);
    outer *= result.dimensions(d);
  }
  const int64_t row_tiles = (rows_size + t - 1) / t;
  const int64_t column_tiles = (columns_size + t - 1) / t;
  Rows tiles;
  tiles.count = outer * row_tiles * column_tiles;
  tiles.granule = 1;
  auto [begin, end] = PartitionRange(tiles);
  llvm::Type* element = b_.getIntNTy(bits);
  // The input's tile in the result's orientation: row r, column c at r * t + c.
  Value* scratch = e_.Alloca(llvm::ArrayType::get(element, t * t), "transposed_tile");
  Value* src = BufferPointer(input_buffer);
  RETURN_IF_ERROR(e_.ForLoop(
      begin, end,
      [&](Value* tile) -> absl::Status {
        // Tiles along the result's rows run consecutively.
        IrIndex index(rank, nullptr);
        Value* column0 = b_.CreateMul(b_.CreateURem(tile, I64(column_tiles)), I64(t));
        Value* rest = b_.CreateUDiv(tile, I64(column_tiles));
        Value* row0 = b_.CreateMul(b_.CreateURem(rest, I64(row_tiles)), I64(t));
        rest = b_.CreateUDiv(rest, I64(row_tiles));
        for (size_t k = outer_dims.size(); k-- > 0;) {
          const int64_t size = result.dimensions(outer_dims[k]);
          index[outer_dims[k]] = k == 0 ? rest : b_.CreateURem(rest, I64(size));
          if (k > 0) rest = b_.CreateUDiv(rest, I64(size));
        }
        Value* rows = TileExtent(row0, t, rows_size);
        Value* columns = TileExtent(column0, t, columns_size);
        // The input's element at the tile's (row0, column0).
        index[strided] = row0;
        index[minor] = column0;
        IrIndex input_index(rank, nullptr);
        for (int64_t d = 0; d < rank; ++d) input_index[permutation[d]] = index[d];
        Value* from = e_.PhysicalOffset(input, input_index);
        // 1. The scratch tile: the input's tile in the result's orientation.
        RETURN_IF_ERROR(CopyTileTransposed(element, src, from, column_stride, columns, rows,
                                           scratch, I64(0), t, t));
        // 2. The result's tile, the transpose read from the scratch tile.
        const PrimitiveType type = input.element_type();
        e_.Bind(transpose, [&, row0, column0](const IrIndex& at) -> absl::StatusOr<IrValues> {
          Value* offset = b_.CreateAdd(b_.CreateMul(b_.CreateSub(at[strided], row0), I64(t)),
                                       b_.CreateSub(at[minor], column0));
          return IrValues{e_.Load(type, scratch, offset)};
        });
        absl::Status status = e_.ForIndependentIterations(
            I64(0), rows,
            [&](Value* r) -> absl::Status {
              index[strided] = b_.CreateAdd(row0, r);
              return e_.ForIndependentIterations(I64(0), columns,
                                                 [&](Value* c) -> absl::Status {
                                                   index[minor] = b_.CreateAdd(column0, c);
                                                   return EmitElement(root, index);
                                                 },
                                                 "tile_column.", {.unroll = false});
            },
            "tile_row.");
        e_.Unbind(transpose);
        return status;
      },
      "tile."));
  ScopeBufferAccesses();
  return tiles.Partitions();
}

absl::Status KernelEmitter::EmitElement(const HloInstruction& root, const IrIndex& index) {
  const int64_t outputs = static_cast<int64_t>(buffer_shapes_.size()) - num_inputs_;
  ASSIGN_OR_RETURN(IrValues values, e_.Emit(root, index));
  if (static_cast<int64_t>(values.size()) != outputs) {
    return Internal("'", root.name(), "' yields ", values.size(), " values for ", outputs,
                    " outputs");
  }
  for (int64_t k = 0; k < outputs; ++k) {
    const Shape& shape = buffer_shapes_[num_inputs_ + k];
    e_.Store(shape.element_type(), values[k], BufferPointer(num_inputs_ + k),
             e_.PhysicalOffset(shape, index));
  }
  return absl::OkStatus();
}

bool KernelEmitter::IsFlat(const HloInstruction& root) const {
  const Shape& result = buffer_shapes_[num_inputs_];
  if (result.rank() == 0) return false;
  for (const Shape& shape : buffer_shapes_) {
    if (shape.rank() > 0 && (shape.dimensions() != result.dimensions() ||
                             MinorToMajor(shape) != MinorToMajor(result))) {
      return false;
    }
  }
  // Every instruction that makes the root: elementwise on operands of its own
  // dimensions, or a broadcast of a scalar; the kernel's inputs end the walk.
  std::vector<const HloInstruction*> stack = {&root};
  absl::flat_hash_set<const HloInstruction*> seen;
  while (!stack.empty()) {
    const HloInstruction* instr = stack.back();
    stack.pop_back();
    if (!seen.insert(instr).second || BufferOf(instr) >= 0) continue;
    const HloOpcode op = instr->opcode();
    if (op == HloOpcode::kBroadcast) {
      if (instr->operand_count() != 1 || instr->operand(0)->shape().rank() != 0) return false;
    } else if (op == HloOpcode::kConstant) {
      if (instr->shape().rank() != 0) return false;
      continue;
    } else if (op == HloOpcode::kTuple && instr == &root) {
      // a multi-output fusion's root: each element is checked below
    } else if (!IsElementwiseOpcode(op) || !instr->called_computations().empty()) {
      return false;
    }
    for (const HloInstruction* operand : instr->operands()) {
      if (op != HloOpcode::kBroadcast && op != HloOpcode::kTuple &&
          operand->shape().dimensions() != instr->shape().dimensions()) {
        return false;
      }
      stack.push_back(operand);
    }
  }
  return true;
}

// In place when the runtime passes the operand's buffer as the output: only
// the update's elements are written. Otherwise every output element.
absl::StatusOr<int64_t> KernelEmitter::EmitDynamicUpdateSlice(const HloInstruction& root) {
  const int64_t operand_buffer = BufferOf(root.operand(0));
  if (operand_buffer < 0 || root.operand_count() < 2) return EmitElementalLoop(root);
  const Shape& out_shape = buffer_shapes_[num_inputs_];
  const HloInstruction* update = root.operand(1);
  if (update->shape().rank() != out_shape.rank()) return InvalidInstruction(root, "rank mismatch");
  Shape update_shape = update->shape();
  update_shape.SetDefaultLayoutIfMissing();
  const Rows update_rows = Rows::Of(update_shape);
  Value* out = BufferPointer(num_inputs_);
  Value* in_place = b_.CreateICmpEQ(out, BufferPointer(operand_buffer));
  int64_t partitions = 1;
  ASSIGN_OR_RETURN(
      IrValues unused,
      e_.If(
          in_place,
          [&]() -> absl::StatusOr<IrValues> {
            ASSIGN_OR_RETURN(IrIndex starts, e_.ClampedStarts(root, 2, out_shape.dimensions(),
                                                              update_shape.dimensions()));
            auto [begin, end] = PartitionRange(update_rows);
            RETURN_IF_ERROR(ForRows(update_rows, begin, end, [&](const IrIndex& u) -> absl::Status {
              ASSIGN_OR_RETURN(Value * v, e_.EmitOne(*update, u));
              IrIndex to(u.size());
              for (size_t d = 0; d < u.size(); ++d) {
                to[d] = b_.CreateAdd(starts[d], u[d]);
              }
              e_.Store(out_shape.element_type(), v, out, e_.PhysicalOffset(out_shape, to));
              return absl::OkStatus();
            }));
            return IrValues{};
          },
          [&]() -> absl::StatusOr<IrValues> {
            ASSIGN_OR_RETURN(partitions, EmitElementalLoop(root));
            return IrValues{};
          }));
  (void)unused;
  return std::max(partitions, update_rows.Partitions());
}

absl::StatusOr<int64_t> KernelEmitter::EmitScatter(const HloInstruction& root) {
  const int64_t n = (root.operand_count() - 1) / 2;
  if (n < 1 || root.operand_count() != 2 * n + 1 || root.called_computations().size() != 1 ||
      !root.attrs().scatter_dimension_numbers) {
    return InvalidInstruction(
        root, "needs N inputs, indices, N updates, dimension numbers and a combiner");
  }
  const int64_t outputs = static_cast<int64_t>(buffer_shapes_.size()) - num_inputs_;
  if (outputs != n) return InvalidInstruction(root, "result count differs from the input count");
  const ScatterDimensionNumbers& dn = *root.attrs().scatter_dimension_numbers;
  const HloComputation& combiner = *root.called_computations()[0];
  const HloInstruction* indices = root.operand(n);
  const Shape& input = root.operand(0)->shape();
  const Shape& updates = root.operand(n + 1)->shape();
  const int64_t rank = input.rank(), indices_rank = indices->shape().rank();
  auto in_range = [](const std::vector<int64_t>& v, int64_t r) {
    return std::all_of(v.begin(), v.end(), [r](int64_t d) { return d >= 0 && d < r; });
  };
  if (!IsInteger(indices->shape().element_type()) || dn.index_vector_dim < 0 ||
      dn.index_vector_dim > indices_rank || !in_range(dn.update_window_dims, updates.rank()) ||
      !in_range(dn.inserted_window_dims, rank) ||
      !in_range(dn.scatter_dims_to_operand_dims, rank) || !in_range(dn.input_batching_dims, rank) ||
      !in_range(dn.scatter_indices_batching_dims, indices_rank) ||
      dn.input_batching_dims.size() != dn.scatter_indices_batching_dims.size()) {
    return InvalidInstruction(root, "dimension numbers do not fit the shapes");
  }
  auto contains = [](const std::vector<int64_t>& v, int64_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  std::vector<int64_t> scatter_dims, window_operand_dims, index_batch_dims;
  for (int64_t d = 0; d < updates.rank(); ++d) {
    if (!contains(dn.update_window_dims, d)) scatter_dims.push_back(d);
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (!contains(dn.inserted_window_dims, d) && !contains(dn.input_batching_dims, d)) {
      window_operand_dims.push_back(d);
    }
  }
  for (int64_t d = 0; d < indices_rank; ++d) {
    if (d != dn.index_vector_dim) index_batch_dims.push_back(d);
  }
  const int64_t vector_size =
      dn.index_vector_dim < indices_rank ? indices->shape().dimensions(dn.index_vector_dim) : 1;
  if (static_cast<int64_t>(dn.scatter_dims_to_operand_dims.size()) != vector_size ||
      scatter_dims.size() != index_batch_dims.size() ||
      window_operand_dims.size() != dn.update_window_dims.size()) {
    return InvalidInstruction(root, "dimension numbers do not fit the shapes");
  }
  std::vector<int64_t> scatter_shape, window_shape, window_size(rank, 1);
  for (int64_t d : scatter_dims) scatter_shape.push_back(updates.dimensions(d));
  for (size_t k = 0; k < dn.update_window_dims.size(); ++k) {
    window_shape.push_back(updates.dimensions(dn.update_window_dims[k]));
    window_size[window_operand_dims[k]] = window_shape.back();
  }
  std::vector<PrimitiveType> types;
  for (int64_t i = 0; i < n; ++i) types.push_back(buffer_shapes_[num_inputs_ + i].element_type());
  for (int64_t i = 0; i < n; ++i) types.push_back(root.operand(n + 1 + i)->shape().element_type());

  const Rows rows = Rows::Of(buffer_shapes_[num_inputs_]);
  auto [begin, end] = PartitionRange(rows);
  // 1. This partition's rows of each output start as the input (unless the
  //    output is the input's own buffer).
  std::vector<Value*> copy(n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t in_buffer = BufferOf(root.operand(i));
    copy[i] = in_buffer < 0
                  ? b_.getTrue()
                  : b_.CreateICmpNE(BufferPointer(in_buffer), BufferPointer(num_inputs_ + i));
  }
  // The test is outside the loop: in place, no loop runs at all (a scatter of
  // one element into 100000 no longer walks them all).
  for (int64_t i = 0; i < n; ++i) {
    RETURN_IF_ERROR(e_.When(copy[i], [&]() -> absl::Status {
      return ForRows(rows, begin, end, [&](const IrIndex& index) -> absl::Status {
        ASSIGN_OR_RETURN(Value * v, e_.EmitOne(*root.operand(i), index));
        const Shape& shape = buffer_shapes_[num_inputs_ + i];
        e_.Store(shape.element_type(), v, BufferPointer(num_inputs_ + i),
                 e_.PhysicalOffset(shape, index));
        return absl::OkStatus();
      });
    }));
  }
  // 2. Every update window, in order; the elements this partition owns.
  RETURN_IF_ERROR(e_.ForLoopNest(scatter_shape, [&](const IrIndex& batch) -> absl::Status {
    IrIndex position(indices_rank, I64(0));
    for (size_t k = 0; k < index_batch_dims.size(); ++k) position[index_batch_dims[k]] = batch[k];
    IrIndex start(rank, I64(0));
    for (int64_t k = 0; k < vector_size; ++k) {
      IrIndex at = position;
      if (dn.index_vector_dim < indices_rank) at[dn.index_vector_dim] = I64(k);
      ASSIGN_OR_RETURN(Value * raw, e_.EmitOne(*indices, at));
      start[dn.scatter_dims_to_operand_dims[k]] =
          e_.IndexValue(indices->shape().element_type(), raw);
    }
    for (size_t i = 0; i < dn.input_batching_dims.size(); ++i) {
      start[dn.input_batching_dims[i]] = position[dn.scatter_indices_batching_dims[i]];
    }
    Value* fits = b_.getTrue();  // a window not wholly inside is skipped
    for (int64_t d = 0; d < rank; ++d) {
      fits = b_.CreateAnd(fits, b_.CreateICmpSGE(start[d], I64(0)));
      fits =
          b_.CreateAnd(fits, b_.CreateICmpSLE(start[d], I64(input.dimensions(d) - window_size[d])));
    }
    return e_.When(fits, [&]() -> absl::Status {
      return e_.ForLoopNest(window_shape, [&](const IrIndex& window) -> absl::Status {
        IrIndex update_index(updates.rank(), I64(0)), to = start;
        for (size_t k = 0; k < scatter_dims.size(); ++k) update_index[scatter_dims[k]] = batch[k];
        for (size_t k = 0; k < window.size(); ++k) {
          update_index[dn.update_window_dims[k]] = window[k];
          to[window_operand_dims[k]] = b_.CreateAdd(to[window_operand_dims[k]], window[k]);
        }
        return e_.When(Owned(rows, to, begin, end), [&]() -> absl::Status {
          IrValues args;
          std::vector<Value*> offsets;
          for (int64_t i = 0; i < n; ++i) {
            const Shape& shape = buffer_shapes_[num_inputs_ + i];
            offsets.push_back(e_.PhysicalOffset(shape, to));
            args.push_back(
                e_.Load(shape.element_type(), BufferPointer(num_inputs_ + i), offsets[i]));
          }
          for (int64_t i = 0; i < n; ++i) {
            ASSIGN_OR_RETURN(Value * u, e_.EmitOne(*root.operand(n + 1 + i), update_index));
            args.push_back(u);
          }
          ASSIGN_OR_RETURN(IrValues result, e_.EmitConvertingCall(combiner, args, types, root));
          if (static_cast<int64_t>(result.size()) != n) {
            return InvalidInstruction(root, "the combiner must return one value per input");
          }
          const Shape& result_shape = combiner.root_instruction()->shape();
          for (int64_t i = 0; i < n; ++i) {
            const PrimitiveType result_type = result_shape.IsTuple()
                                                  ? result_shape.tuple_shapes(i).element_type()
                                                  : result_shape.element_type();
            ASSIGN_OR_RETURN(Value * v, e_.Convert(root, result_type, types[i], result[i]));
            e_.Store(types[i], v, BufferPointer(num_inputs_ + i), offsets[i]);
          }
          return absl::OkStatus();
        });
      });
    });
  }));
  return rows.Partitions();
}

absl::StatusOr<int64_t> KernelEmitter::EmitSelectAndScatter(const HloInstruction& root) {
  if (root.operand_count() != 3 || root.called_computations().size() != 2) {
    return InvalidInstruction(root,
                              "needs an operand, a source, an init value and two computations");
  }
  const HloInstruction* operand = root.operand(0);
  const HloInstruction* source = root.operand(1);
  const HloInstruction* init = root.operand(2);
  const HloComputation& select = *root.called_computations()[0];
  const HloComputation& scatter = *root.called_computations()[1];
  const Shape& out_shape = buffer_shapes_[num_inputs_];
  const PrimitiveType type = out_shape.element_type();
  const PrimitiveType source_type = source->shape().element_type();
  const int64_t rank = operand->shape().rank();
  static const Window kNoWindow;
  const Window& window = root.attrs().window ? *root.attrs().window : kNoWindow;
  if (static_cast<int64_t>(window.dimensions.size()) != rank || source->shape().rank() != rank) {
    return InvalidInstruction(root, "window rank differs from the operand's");
  }
  std::vector<int64_t> sizes;
  for (const WindowDimension& w : window.dimensions) {
    if (w.window_reversal) return UnsupportedInstruction(root, "window reversal");
    if (w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1) {
      return InvalidInstruction(root, "window strides and dilations must be positive");
    }
    sizes.push_back(w.size);
  }
  Value* out = BufferPointer(num_inputs_);
  const Rows rows = Rows::Of(out_shape);
  auto [begin, end] = PartitionRange(rows);
  ASSIGN_OR_RETURN(Value * init_value, e_.EmitOne(*init, {}));
  RETURN_IF_ERROR(ForRows(rows, begin, end, [&](const IrIndex& index) -> absl::Status {
    e_.Store(type, init_value, out, e_.PhysicalOffset(out_shape, index));
    return absl::OkStatus();
  }));
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::AllocaInst* found = e_.Alloca(b_.getInt1Ty(), "found");
  llvm::AllocaInst* kept_value = e_.Alloca(e_.IrType(type), "kept");
  std::vector<llvm::AllocaInst*> kept_index;
  for (int64_t d = 0; d < rank; ++d) kept_index.push_back(e_.Alloca(i64, "kept.index"));
  RETURN_IF_ERROR(
      e_.ForLoopNest(source->shape().dimensions(), [&](const IrIndex& s) -> absl::Status {
        b_.CreateStore(b_.getFalse(), found);
        RETURN_IF_ERROR(e_.ForLoopNest(sizes, [&](const IrIndex& k) -> absl::Status {
          IrIndex at(rank);
          Value* valid = b_.getTrue();
          for (int64_t d = 0; d < rank; ++d) {
            const WindowDimension& w = window.dimensions[d];
            Value* x = b_.CreateSub(b_.CreateAdd(b_.CreateMul(s[d], I64(w.stride)),
                                                 b_.CreateMul(k[d], I64(w.window_dilation))),
                                    I64(w.padding_low));
            valid = b_.CreateAnd(valid, b_.CreateICmpSGE(x, I64(0)));
            if (w.base_dilation > 1) {
              valid = b_.CreateAnd(valid,
                                   b_.CreateICmpEQ(b_.CreateSRem(x, I64(w.base_dilation)), I64(0)));
              x = b_.CreateSDiv(x, I64(w.base_dilation));
            }
            valid = b_.CreateAnd(valid, b_.CreateICmpSLT(x, I64(operand->shape().dimensions(d))));
            at[d] = x;
          }
          return e_.When(valid, [&]() -> absl::Status {
            ASSIGN_OR_RETURN(Value * v, e_.EmitOne(*operand, at));
            Value* have = b_.CreateLoad(b_.getInt1Ty(), found);
            // The first element is kept; a later one replaces it when
            // select(kept, later) is false.
            ASSIGN_OR_RETURN(
                IrValues take,
                e_.If(
                    have,
                    [&]() -> absl::StatusOr<IrValues> {
                      Value* kept = b_.CreateLoad(kept_value->getAllocatedType(), kept_value);
                      ASSIGN_OR_RETURN(
                          IrValues r, e_.EmitConvertingCall(select, {kept, v}, {type, type}, root));
                      if (r.size() != 1 || !r[0]->getType()->isIntegerTy(8)) {
                        return InvalidInstruction(root, "select must return pred[]");
                      }
                      return IrValues{b_.CreateICmpEQ(r[0], b_.getInt8(0))};
                    },
                    [&]() -> absl::StatusOr<IrValues> { return IrValues{b_.getTrue()}; }));
            return e_.When(take[0], [&]() -> absl::Status {
              b_.CreateStore(b_.getTrue(), found);
              b_.CreateStore(v, kept_value);
              for (int64_t d = 0; d < rank; ++d) b_.CreateStore(at[d], kept_index[d]);
              return absl::OkStatus();
            });
          });
        }));
        Value* have = b_.CreateLoad(b_.getInt1Ty(), found);
        return e_.When(have, [&]() -> absl::Status {
          IrIndex target(rank);
          for (int64_t d = 0; d < rank; ++d) target[d] = b_.CreateLoad(i64, kept_index[d]);
          return e_.When(Owned(rows, target, begin, end), [&]() -> absl::Status {
            Value* offset = e_.PhysicalOffset(out_shape, target);
            Value* current = e_.Load(type, out, offset);
            ASSIGN_OR_RETURN(Value * src, e_.EmitOne(*source, s));
            ASSIGN_OR_RETURN(IrValues r, e_.EmitConvertingCall(scatter, {current, src},
                                                               {type, source_type}, root));
            if (r.size() != 1) return InvalidInstruction(root, "scatter must return one value");
            ASSIGN_OR_RETURN(
                Value * v,
                e_.Convert(root, scatter.root_instruction()->shape().element_type(), type, r[0]));
            e_.Store(type, v, out, offset);
            return absl::OkStatus();
          });
        });
      }));
  return rows.Partitions();
}

// ------------------------------------------------------------ random bits

// Threefry-2x32 (20 rounds) and Philox-4x32-10, as the interpreter's
// eval_random.cc (XLA's prng.cc) defines them.
struct Generators {
  llvm::IRBuilder<>& b;

  Value* C32(uint32_t v) { return b.getInt32(v); }
  Value* RotateLeft(Value* v, int distance) {
    return b.CreateOr(b.CreateShl(v, distance), b.CreateLShr(v, 32 - distance));
  }
  std::array<Value*, 2> Threefry(std::array<Value*, 2> key, std::array<Value*, 2> counter) {
    static constexpr int kRotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
    Value* schedule[3] = {key[0], key[1],
                          b.CreateXor(C32(0x1BD11BDA), b.CreateXor(key[0], key[1]))};
    Value* x0 = b.CreateAdd(counter[0], schedule[0]);
    Value* x1 = b.CreateAdd(counter[1], schedule[1]);
    for (uint32_t injection = 1; injection <= 5; ++injection) {
      for (int rotation : kRotations[(injection - 1) % 2]) {
        x0 = b.CreateAdd(x0, x1);
        x1 = b.CreateXor(RotateLeft(x1, rotation), x0);
      }
      x0 = b.CreateAdd(x0, schedule[injection % 3]);
      x1 = b.CreateAdd(x1, b.CreateAdd(schedule[(injection + 1) % 3], C32(injection)));
    }
    return {x0, x1};
  }
  std::array<Value*, 4> Philox(std::array<Value*, 2> key, std::array<Value*, 4> x) {
    llvm::Type* i64 = b.getInt64Ty();
    llvm::Type* i32 = b.getInt32Ty();
    for (int round = 0; round < 10; ++round) {
      Value* p0 = b.CreateMul(b.CreateZExt(x[0], i64), b.getInt64(0xD2511F53));
      Value* p1 = b.CreateMul(b.CreateZExt(x[2], i64), b.getInt64(0xCD9E8D57));
      auto high = [&](Value* p) { return b.CreateTrunc(b.CreateLShr(p, 32), i32); };
      auto low = [&](Value* p) { return b.CreateTrunc(p, i32); };
      x = {b.CreateXor(b.CreateXor(high(p1), x[1]), key[0]), low(p1),
           b.CreateXor(b.CreateXor(high(p0), x[3]), key[1]), low(p0)};
      key[0] = b.CreateAdd(key[0], C32(0x9E3779B9));
      key[1] = b.CreateAdd(key[1], C32(0xBB67AE85));
    }
    return x;
  }
  std::array<Value*, 2> Split(Value* v) {
    return {b.CreateTrunc(v, b.getInt32Ty()), b.CreateTrunc(b.CreateLShr(v, 32), b.getInt32Ty())};
  }
  Value* Join(Value* low, Value* high) {
    llvm::Type* i64 = b.getInt64Ty();
    return b.CreateOr(b.CreateZExt(low, i64), b.CreateShl(b.CreateZExt(high, i64), 32));
  }
};

absl::StatusOr<int64_t> KernelEmitter::EmitRngBitGenerator(const HloInstruction& root) {
  const HloInstruction* state = root.operand(0);
  const Shape& s = state->shape();
  const bool u64_like =
      s.element_type() == PrimitiveType::U64 || s.element_type() == PrimitiveType::S64;
  if (root.operand_count() != 1 || s.rank() != 1 || !u64_like || s.dimensions(0) < 2) {
    return UnsupportedInstruction(root,
                                  absl::StrCat("rng-bit-generator state ", s.ToString(false)));
  }
  const std::string& algorithm = root.attrs().algorithm;
  const bool threefry = algorithm == "rng_three_fry";
  if (!threefry && algorithm != "rng_philox" && algorithm != "rng_default" && !algorithm.empty()) {
    return UnsupportedInstruction(root, absl::StrCat("rng algorithm '", algorithm, "'"));
  }
  if (buffer_shapes_.size() != static_cast<size_t>(num_inputs_ + 2)) {
    return InvalidInstruction(root, "the result must be (state, bits)");
  }
  const Shape& state_out = buffer_shapes_[num_inputs_];
  const Shape& bits_shape = buffer_shapes_[num_inputs_ + 1];
  const PrimitiveType type = bits_shape.element_type();
  if (type == PrimitiveType::PRED || IsComplex(type)) {
    return UnsupportedInstruction(root,
                                  absl::StrCat("random bits of type ", PrimitiveTypeName(type)));
  }
  const int width = PrimitiveBitWidth(type) <= 32 ? 32 : 64;
  const std::vector<int64_t>& dims = bits_shape.dimensions();
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  // Threefry's 32-bit values come in pairs along one dimension (XLA's
  // SplitShapeIntoHalves): the first even one, else the first largest.
  int64_t split_dim = -1, outer = 1, size = 1, inner = 1;
  if (!dims.empty()) {
    for (size_t i = 0; i < dims.size() && split_dim < 0; ++i) {
      if (dims[i] % 2 == 0) split_dim = static_cast<int64_t>(i);
    }
    if (split_dim < 0) {
      split_dim = 0;
      for (size_t i = 1; i < dims.size(); ++i) {
        if (dims[i] > dims[split_dim]) split_dim = static_cast<int64_t>(i);
      }
    }
    for (int64_t i = 0; i < split_dim; ++i) outer *= dims[i];
    size = dims[split_dim];
    for (size_t i = split_dim + 1; i < dims.size(); ++i) inner *= dims[i];
  }
  const int64_t pairs = (size + 1) / 2;
  const int64_t per_block = width == 64 ? 2 : 4;
  const uint64_t advance = threefry
                               ? static_cast<uint64_t>(width == 64 ? count : outer * pairs * inner)
                               : static_cast<uint64_t>((count + per_block - 1) / per_block);
  Generators g{b_};
  ASSIGN_OR_RETURN(Value * key, e_.EmitOne(*state, {I64(0)}));
  ASSIGN_OR_RETURN(Value * counter, e_.EmitOne(*state, {I64(1)}));
  const bool long_state = s.dimensions(0) >= 3;
  Value* counter_high = key;
  if (!threefry && long_state) {
    ASSIGN_OR_RETURN(counter_high, e_.EmitOne(*state, {I64(2)}));
  }
  // The new state: written once, by partition 0.
  RETURN_IF_ERROR(e_.When(b_.CreateICmpEQ(partition_, I64(0)), [&]() -> absl::Status {
    Value* out = BufferPointer(num_inputs_);
    for (int64_t i = 0; i < s.dimensions(0); ++i) {
      ASSIGN_OR_RETURN(Value * v, e_.EmitOne(*state, {I64(i)}));
      if (i == 1) {
        Value* low = b_.CreateAdd(counter, I64(static_cast<int64_t>(advance)));
        v = low;
      } else if (i == 2 && !threefry) {
        Value* low = b_.CreateAdd(counter, I64(static_cast<int64_t>(advance)));
        Value* carry = b_.CreateZExt(b_.CreateICmpULT(low, counter), b_.getInt64Ty());
        v = b_.CreateAdd(v, carry);
      }
      e_.Store(state_out.element_type(), v, out, e_.PhysicalOffset(state_out, {I64(i)}));
    }
    return absl::OkStatus();
  }));
  const std::array<Value*, 2> key_words = g.Split(key);
  const Rows rows = Rows::Of(bits_shape);
  auto [begin, end] = PartitionRange(rows);
  RETURN_IF_ERROR(ForRows(rows, begin, end, [&](const IrIndex& index) -> absl::Status {
    Value* i = e_.RowMajorLinear(dims, index);
    Value* value;
    if (threefry) {
      if (width == 64) {
        auto x = g.Threefry(key_words, g.Split(b_.CreateAdd(counter, i)));
        value = g.Join(x[0], x[1]);
      } else {
        // Element i's pair and side in the [outer, pairs, inner] split.
        Value* o = b_.CreateUDiv(i, I64(std::max<int64_t>(size * inner, 1)));
        Value* j = b_.CreateURem(b_.CreateUDiv(i, I64(std::max<int64_t>(inner, 1))),
                                 I64(std::max<int64_t>(size, 1)));
        Value* m = b_.CreateURem(i, I64(std::max<int64_t>(inner, 1)));
        Value* pair = b_.CreateAdd(
            b_.CreateMul(b_.CreateAdd(b_.CreateMul(o, I64(pairs)), b_.CreateUDiv(j, I64(2))),
                         I64(inner)),
            m);
        Value* side = b_.CreateICmpNE(b_.CreateURem(j, I64(2)), I64(0));
        auto x = g.Threefry(key_words, g.Split(b_.CreateAdd(counter, pair)));
        value = b_.CreateZExt(b_.CreateSelect(side, x[1], x[0]), b_.getInt64Ty());
      }
    } else {
      Value* block = b_.CreateUDiv(i, I64(per_block));
      Value* k = b_.CreateURem(i, I64(per_block));
      Value* low = b_.CreateAdd(counter, block);
      Value* high = b_.CreateAdd(counter_high,
                                 b_.CreateZExt(b_.CreateICmpULT(low, counter), b_.getInt64Ty()));
      auto lo = g.Split(low);
      auto hi = g.Split(high);
      auto x = g.Philox(key_words, {lo[0], lo[1], hi[0], hi[1]});
      if (width == 64) {
        Value* first = g.Join(x[0], x[1]);
        Value* second = g.Join(x[2], x[3]);
        value = b_.CreateSelect(b_.CreateICmpEQ(k, I64(0)), first, second);
      } else {
        Value* w = b_.CreateSelect(b_.CreateICmpEQ(k, I64(0)), x[0], x[1]);
        w = b_.CreateSelect(b_.CreateICmpEQ(k, I64(2)), x[2], w);
        w = b_.CreateSelect(b_.CreateICmpEQ(k, I64(3)), x[3], w);
        value = b_.CreateZExt(w, b_.getInt64Ty());
      }
    }
    const int bits = PrimitiveBitWidth(type);
    Value* v = e_.FromBits(type, b_.CreateTrunc(value, b_.getIntNTy(bits)));
    e_.Store(type, v, BufferPointer(num_inputs_ + 1), e_.PhysicalOffset(bits_shape, index));
    return absl::OkStatus();
  }));
  return rows.Partitions();
}

}  // namespace

absl::StatusOr<int64_t> EmitKernel(const HloInstruction& instr, const std::string& name,
                                   llvm::Module& module) {
  llvm::LLVMContext& ctx = module.getContext();
  llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  llvm::FunctionType* type =
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, i64, i64}, false);
  llvm::Function* function =
      llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, name, module);
  function->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx, "entry", function);
  llvm::IRBuilder<> builder(entry);
  IrEmitter emitter(module, *function, builder);
  KernelEmitter kernel(emitter, function->getArg(0), function->getArg(1), function->getArg(2));
  function->getArg(0)->setName("buffers");
  function->getArg(1)->setName("partition");
  function->getArg(2)->setName("num_partitions");
  absl::StatusOr<int64_t> partitions = kernel.Emit(instr);
  if (!partitions.ok()) {
    function->eraseFromParent();
    return partitions.status();
  }
  builder.CreateRetVoid();
  return partitions;
}

}  // namespace xlite::codegen
