#include "xlite/runtime/executable.h"

#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "xlite/analysis/shape_util.h"
#include "xlite/codegen/denormals.h"
#include "xlite/cpu/async_thunks.h"
#include "xlite/cpu/collective_thunks.h"
#include "xlite/cpu/host_transfer_thunks.h"
#include "xlite/cpu/physical_layout.h"
#include "xlite/ir/computation.h"
#include "xlite/support/status.h"

namespace xlite::runtime {
namespace {

constexpr int64_t kAlignment = 64;

int64_t RoundUp(int64_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

bool SameArrayShapes(const Shape& a, const Shape& b) {
  if (a.IsTuple() != b.IsTuple()) return false;
  if (a.IsTuple()) {
    if (a.tuple_shapes_size() != b.tuple_shapes_size()) return false;
    for (int64_t i = 0; i < a.tuple_shapes_size(); ++i) {
      if (!SameArrayShapes(a.tuple_shapes(i), b.tuple_shapes(i))) return false;
    }
    return true;
  }
  if (!a.IsArray() || !b.IsArray()) return a.element_type() == b.element_type();
  // After dynamic-padder a dynamic dimension is static at its bound: a
  // `f32[<=8]` argument is passed as its full f32[8] buffer.
  return a.element_type() == b.element_type() && a.dimensions() == b.dimensions();
}

// Whether any thunk, nested ones included, poisons dead slices.
bool ContainsPoison(const cpu::ThunkSequence& sequence) {
  for (const auto& t : sequence) {
    if (t->kind() == cpu::Thunk::Kind::kPoison) return true;
    for (const auto& [label, nested] : t->nested()) {
      if (ContainsPoison(*nested)) return true;
    }
  }
  return false;
}

}  // namespace

void Executable::Aligned::operator()(uint8_t* p) const { std::free(p); }

absl::StatusOr<Executable::Memory> Executable::Allocate(int64_t bytes, absl::string_view what) {
  const size_t size = static_cast<size_t>(RoundUp(std::max<int64_t>(bytes, 1)));
  void* p = std::aligned_alloc(kAlignment, size);
  if (p == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate ", bytes, " bytes for ", what));
  }
  return Memory(static_cast<uint8_t*>(p));
}

Executable::~Executable() = default;

absl::StatusOr<std::unique_ptr<Executable>> Executable::Create(
    std::unique_ptr<HloModule> module, MemoryPlan plan, std::unique_ptr<codegen::Jit> jit,
    cpu::ThunkSequence thunks, absl::Span<const cpu::ConstantSlice> constants,
    const ExecutableOptions& executable_options) {
  std::unique_ptr<Executable> e(new Executable());
  e->module_ = std::move(module);
  e->plan_ = std::move(plan);
  e->jit_ = std::move(jit);
  e->thunks_ = std::move(thunks);
  e->options_ = executable_options;
  e->graphs_ = std::make_unique<ExecutionGraphs>(e->thunks_);
  e->runs_in_order_ = e->graphs_->AllRunInOrder();
  e->async_slots_ = cpu::CountAsyncSlots(e->thunks_);
  const BufferAssignment& assignment = *e->plan_.assignment;
  const HloComputation* entry = e->module_->entry_computation();
  const auto& allocations = assignment.allocations();
  e->constant_memory_.resize(allocations.size());
  e->arena_offset_.assign(allocations.size(), -1);
  for (const BufferAllocation& a : allocations) {
    if (a.kind() == AllocationKind::kConstant) {
      ASSIGN_OR_RETURN(e->constant_memory_[a.index()],
                       Allocate(a.size(), absl::StrCat("constant allocation ", a.index())));
      std::memset(e->constant_memory_[a.index()].get(), 0, static_cast<size_t>(a.size()));
      continue;
    }
    e->arena_offset_[a.index()] = e->arena_bytes_;
    e->arena_bytes_ += RoundUp(a.size());
    if (a.kind() == AllocationKind::kParameter) {
      if (a.parameter_number() < 0 || a.parameter_number() >= entry->num_parameters()) {
        return absl::InternalError(
            absl::StrCat("allocation ", a.index(), " names parameter ", a.parameter_number()));
      }
      const Shape* s = SubshapeAt(entry->parameter_instruction(a.parameter_number())->shape(),
                                  a.parameter_index());
      if (s == nullptr) {
        return absl::InternalError(
            absl::StrCat("allocation ", a.index(), " names no parameter element"));
      }
      if (s->IsArray()) {
        RETURN_IF_ERROR(
            cpu::CheckRunnableLayout(*s, absl::StrCat("parameter ", a.parameter_number(), " ",
                                                      ShapeIndexToString(a.parameter_index()))));
        e->parameter_slots_.push_back(
            ParameterSlot{a.index(), a.parameter_number(), a.parameter_index(), *s});
      }
    }
  }
  e->arenas_ = std::make_unique<ArenaPool>(e->arena_bytes_, ContainsPoison(e->thunks_));
  // Constants, baked once.
  for (const cpu::ConstantSlice& c : constants) {
    const Literal* literal = c.instruction->attrs().literal
                                 ? c.instruction->attrs().literal->Subliteral(c.index)
                                 : nullptr;
    const Shape* shape = SubshapeAt(c.instruction->shape(), c.index);
    if (literal == nullptr || shape == nullptr || !literal->shape().IsArray() ||
        c.instruction->attrs().literal->elided()) {
      return absl::InvalidArgumentError(
          absl::StrCat("constant '", c.instruction->name(), "' has no value to place"));
    }
    if (c.slice.allocation < 0 || c.slice.allocation >= static_cast<int64_t>(allocations.size()) ||
        e->constant_memory_[c.slice.allocation] == nullptr) {
      return absl::InternalError(
          absl::StrCat("constant '", c.instruction->name(), "' is not in a constant allocation"));
    }
    RETURN_IF_ERROR(
        cpu::CheckRunnableLayout(*shape, absl::StrCat("constant '", c.instruction->name(), "'")));
    cpu::LiteralToPhysical(*literal, *shape,
                           e->constant_memory_[c.slice.allocation].get() + c.slice.offset);
  }
  // The result's leaves.
  const HloInstruction* root = entry->root_instruction();
  std::string error;
  ForEachSubshape(root->shape(), [&](const Shape& s, const ShapeIndex& index) {
    if (!s.IsArray() || !error.empty()) return;
    if (absl::Status st = cpu::CheckRunnableLayout(s, "the result"); !st.ok()) {
      error = std::string(st.message());
      return;
    }
    std::optional<BufferSlice> slice = assignment.GetSlice(root, index);
    if (!slice && ShapeSizeBytes(s) != 0) {
      error = absl::StrCat("the result at ", ShapeIndexToString(index), " has no slice");
      return;
    }
    e->output_slots_.push_back(OutputSlot{index, s, slice.value_or(cpu::EmptySlice())});
  });
  if (!error.empty()) return absl::UnimplementedError(error);
  // Output allocations that hold exactly one leaf, whole (and, before it is
  // made, any temps buffer assignment put there: the fresh output buffer is
  // this run's own, free until the result is written).
  std::vector<int> leaves_in(allocations.size(), 0);
  for (const OutputSlot& o : e->output_slots_) {
    if (o.slice.allocation >= 0) ++leaves_in[o.slice.allocation];
  }
  for (OutputSlot& o : e->output_slots_) {
    if (o.slice.allocation < 0) continue;
    const BufferAllocation& a = allocations[o.slice.allocation];
    o.owns_allocation = a.kind() == AllocationKind::kOutput && leaves_in[a.index()] == 1 &&
                        o.slice.offset == 0 && o.slice.size == a.size();
  }
  // Execute's arguments: one per parameter array, as the donation rules
  // number them.
  e->rules_ = DonationRules::FromModule(*e->module_, e->plan_.donations);
  e->argument_of_allocation_.assign(allocations.size(), -1);
  if (e->rules_.ok()) {
    for (const ParameterSlot& p : e->parameter_slots_) {
      e->argument_of_allocation_[p.allocation] =
          e->rules_->ArgumentIndex(p.number, p.index).value_or(-1);
    }
  }
  return e;
}

absl::StatusOr<const DonationRules*> Executable::donation_rules() const {
  if (!rules_.ok()) return rules_.status();
  return &*rules_;
}

absl::StatusOr<std::vector<std::unique_ptr<Buffer>>> Executable::Execute(
    absl::Span<Buffer* const> arguments, const ExecuteOptions& options) const {
  ASSIGN_OR_RETURN(const DonationRules* rules, donation_rules());
  ASSIGN_OR_RETURN(
      std::unique_ptr<PreparedArguments> prepared,
      PreparedArguments::Prepare(*rules, arguments, options.non_donatable_input_indices));
  // Fresh buffers for the outputs no argument backs.
  std::vector<std::unique_ptr<Buffer>> outputs(output_slots_.size());
  for (size_t j = 0; j < output_slots_.size(); ++j) {
    if (prepared->output_is_aliased(static_cast<int64_t>(j))) continue;
    ASSIGN_OR_RETURN(outputs[j], Buffer::AllocateUninitialized(output_slots_[j].shape));
  }
  ASSIGN_OR_RETURN(ArenaPool::Lease arena, arenas_->Acquire());
  Bases bases(arena_offset_.size(), nullptr);
  for (size_t a = 0; a < bases.size(); ++a) {
    if (arena_offset_[a] < 0) {
      bases[a] = constant_memory_[a].get();
    } else if (argument_of_allocation_[a] >= 0) {
      bases[a] = static_cast<uint8_t*>(prepared->parameter_data(argument_of_allocation_[a]));
    } else {
      bases[a] = arena.data() + arena_offset_[a];
    }
  }
  for (size_t j = 0; j < output_slots_.size(); ++j) {
    if (outputs[j] != nullptr && output_slots_[j].owns_allocation) {
      bases[output_slots_[j].slice.allocation] = static_cast<uint8_t*>(outputs[j]->data());
    }
  }
  if (absl::Status s = Run(bases, options); !s.ok()) {
    prepared->AbandonAfterFailedRun();
    return s;
  }
  // Results the run left elsewhere than their buffers: copied there.
  cpu::BufferAllocations buffers(bases);
  for (size_t j = 0; j < output_slots_.size(); ++j) {
    const OutputSlot& o = output_slots_[j];
    void* want = outputs[j] != nullptr ? outputs[j]->data()
                                       : prepared->aliased_output_data(static_cast<int64_t>(j));
    const void* have = buffers.Get(o.slice);
    if (want != nullptr && want != have && o.slice.size > 0) {
      std::memmove(want, have, static_cast<size_t>(o.slice.size));
    }
  }
  return prepared->Finish(std::move(outputs));
}

absl::Status Executable::Run(absl::Span<uint8_t* const> bases,
                             const ExecuteOptions& options) const {
  cpu::BufferAllocations buffers(bases);
  const bool concurrent =
      !runs_in_order_ &&
      (options.executor == ExecutorKind::kConcurrent ||
       (options.executor == ExecutorKind::kDefault && options_.concurrent_executor));
  ThunkExecutor sequential(options.profile);
  // Only what this program and this call need is built: the concurrent
  // executor when a graph can overlap, the async state when there are async
  // slots, the host-transfer parameters when queues were given.
  std::optional<ConcurrentThunkExecutor> parallel;
  cpu::SideStreams* streams = nullptr;
  auto side_streams = [&]() -> cpu::SideStreams& {
    if (streams == nullptr) {
      streams =
          options.side_streams != nullptr ? options.side_streams : &cpu::SideStreams::Default();
    }
    return *streams;
  };
  if (concurrent) {
    // Kernels split over the runner's threads: as many thunks at once.
    const int threads = options.runner != nullptr ? options.runner->num_threads() : 1;
    parallel.emplace(*graphs_, side_streams(), threads, options.profile);
  }
  const cpu::SequenceExecutor& executor =
      parallel ? static_cast<const cpu::SequenceExecutor&>(*parallel) : sequential;
  if (options.profile != nullptr) options.profile->set_top_level(&thunks_);
  std::optional<cpu::AsyncExecuteState> async;
  if (options.async && async_slots_ > 0) async.emplace(side_streams(), async_slots_);
  cpu::ExecuteParams params;
  params.buffers = &buffers;
  params.runner = options.runner;
  params.executor = &executor;
  params.replica_id = options.replica_id;
  params.partition_id = options.partition_id;
  params.collectives = options.collectives;
  params.flush_denormals = options.flush_denormals;
  std::optional<cpu::HostTransferParams> host;
  if (options.host_transfers != nullptr) {
    // The global device id; on one device, XLA's default placement
    // (partition * replicas + replica).
    host.emplace(*options.host_transfers,
                 options.collectives != nullptr
                     ? options.collectives->device
                     : options.partition_id * module_->config().replica_count + options.replica_id);
    params.host = &*host;
  }
  params.async = async ? &*async : nullptr;
  codegen::ScopedFlushDenormals flush(options.flush_denormals);
  absl::Status status = executor.Run(thunks_, params);
  // Never return while launched work still runs, also after an error.
  absl::Status pending = async ? async->WaitAll() : absl::OkStatus();
  return status.ok() ? pending : status;
}

absl::StatusOr<Literal> Executable::ExecuteLiterals(absl::Span<const Literal> arguments,
                                                    const ExecuteOptions& options) const {
  const HloComputation* entry = module_->entry_computation();
  if (static_cast<int64_t>(arguments.size()) != entry->num_parameters()) {
    return absl::InvalidArgumentError(absl::StrCat("'", module_->name(), "' takes ",
                                                   entry->num_parameters(), " arguments, got ",
                                                   arguments.size()));
  }
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    const Shape& want = entry->parameter_instruction(i)->shape();
    if (!SameArrayShapes(want, arguments[i].shape())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument ", i, " has shape ", arguments[i].shape().ToString(false), " but parameter ", i,
          " ('", entry->parameter_instruction(i)->name(), "') is ", want.ToString(false)));
    }
  }
  ASSIGN_OR_RETURN(ArenaPool::Lease arena, arenas_->Acquire());
  Bases bases(arena_offset_.size(), nullptr);
  for (size_t a = 0; a < bases.size(); ++a) {
    bases[a] = arena_offset_[a] >= 0 ? arena.data() + arena_offset_[a] : constant_memory_[a].get();
  }
  for (const ParameterSlot& p : parameter_slots_) {
    const Literal* leaf = arguments[p.number].Subliteral(p.index);
    if (leaf == nullptr) return absl::InvalidArgumentError("argument tuple structure mismatch");
    cpu::LiteralToPhysical(*leaf, p.shape, bases[p.allocation]);
  }
  RETURN_IF_ERROR(Run(bases, options));
  // Literals are in logical order: the result's shape carries no layout. Its
  // dynamic dimensions (kept in the entry_computation_layout) come back
  // padded to their bounds.
  Shape result_shape = cpu::WithoutLayouts(entry->root_instruction()->shape());
  if (const auto& layout = module_->config().entry_computation_layout;
      layout && SameArrayShapes(layout->result, result_shape)) {
    result_shape = cpu::WithoutLayouts(layout->result);
  }
  Literal result(result_shape);
  cpu::BufferAllocations buffers(bases);
  for (const OutputSlot& o : output_slots_) {
    Literal* leaf = result.MutableSubliteral(o.index);
    cpu::PhysicalToLiteral(buffers.Get(o.slice), o.shape, *leaf);
  }
  return result;
}

}  // namespace xlite::runtime
