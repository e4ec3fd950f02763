#include "xlite/cpu/collective_thunks.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "xlite/collectives/in_process_communicator.h"
#include "xlite/support/status.h"

namespace xlite::cpu {
namespace {

using collectives::ChunkMove;
using collectives::Communicator;
using collectives::OpKey;

// The state a run on one device without CollectiveExecuteParams uses: a
// group of one, met at a rendezvous of its own.
struct LocalDevice {
  collectives::DeviceAssignment assignment = *collectives::DeviceAssignment::Default(1, 1);
  InProcessCommunicatorFactory communicators;
  CollectiveExecuteParams params;
  LocalDevice() {
    params.assignment = &assignment;
    params.communicators = &communicators;
  }
};

int64_t ReadInt(const void* base, PrimitiveType type, int64_t i) {
  if (PrimitiveByteWidth(type) == 8) {
    int64_t v;
    std::memcpy(&v, static_cast<const uint8_t*>(base) + 8 * i, 8);
    return v;
  }
  int32_t v;
  std::memcpy(&v, static_cast<const uint8_t*>(base) + 4 * i, 4);
  return v;
}

std::vector<int64_t> ReadInts(const ExecuteParams& params, const BufferSlice& slice,
                              PrimitiveType type) {
  const int64_t n = slice.size / PrimitiveByteWidth(type);
  const void* base = params.buffers->Get(slice);
  std::vector<int64_t> out(n);
  for (int64_t i = 0; i < n; ++i) out[i] = ReadInt(base, type, i);
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Communicator>> InProcessCommunicatorFactory::Create(
    std::vector<int64_t> devices, int64_t rank) const {
  if (rank < 0 || rank >= static_cast<int64_t>(devices.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", rank, " is outside the clique [", absl::StrJoin(devices, ", "), "]"));
  }
  return std::make_unique<collectives::InProcessCommunicator>(rendezvous_, std::move(devices),
                                                              rank);
}

void InProcessCommunicatorFactory::AbortRun(int64_t run_id, const absl::Status& error) const {
  rendezvous_->Abort(run_id, error);
}

void InProcessCommunicatorFactory::ForgetRun(int64_t run_id) const { rendezvous_->Forget(run_id); }

int64_t InvocationCounter::Next(const Thunk* thunk) {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_[thunk]++;
}

const char* CollectiveKindName(CollectiveOp::Kind kind) {
  switch (kind) {
    case CollectiveOp::Kind::kAllReduce:
      return "all-reduce";
    case CollectiveOp::Kind::kReduceScatter:
      return "reduce-scatter";
    case CollectiveOp::Kind::kAllGather:
      return "all-gather";
    case CollectiveOp::Kind::kAllToAll:
      return "all-to-all";
    case CollectiveOp::Kind::kAllToAllTuple:
      return "all-to-all (tuple)";
    case CollectiveOp::Kind::kCollectivePermute:
      return "collective-permute";
    case CollectiveOp::Kind::kCollectiveBroadcast:
      return "collective-broadcast";
    case CollectiveOp::Kind::kRaggedAllToAll:
      return "ragged-all-to-all";
  }
  return "collective";
}

CollectiveThunk::CollectiveThunk(ThunkInfo info, CollectiveOp op)
    : Thunk(Kind::kCollective, std::move(info)), op_(std::move(op)) {}

std::vector<BufferUse> CollectiveThunk::buffer_uses() const {
  std::vector<BufferUse> uses;
  for (const CollectiveOp::Operand& o : op_.operands) uses.push_back(BufferUse::Read(o.source));
  for (const BufferSlice& s : op_.ragged_sizes) uses.push_back(BufferUse::Read(s));
  for (const CollectiveOp::Operand& o : op_.operands) {
    uses.push_back(BufferUse::Write(o.destination));
  }
  return uses;
}

std::string CollectiveThunk::Details() const {
  std::string out =
      absl::StrCat(CollectiveKindName(op_.kind), " ", collectives::GroupModeName(op_.mode),
                   " operands=", op_.operands.size());
  if (op_.kind == CollectiveOp::Kind::kAllReduce ||
      op_.kind == CollectiveOp::Kind::kReduceScatter) {
    absl::StrAppend(&out, " reduction=",
                    op_.reduction ? collectives::ReductionKindName(*op_.reduction) : "compiled");
  }
  return out;
}

absl::StatusOr<collectives::Reduction> CollectiveThunk::Reduction() const {
  if (op_.reduction.has_value()) return collectives::Reduction::Of(*op_.reduction);
  if (reducer_ == nullptr) {
    return absl::InternalError(
        absl::StrCat("collective thunk for '", info().instruction, "' has no compiled reducer"));
  }
  codegen::KernelFunction f = reducer_;
  return collectives::Reduction::Custom([f](const void* a, const void* b, void* out) {
    void* buffers[3] = {const_cast<void*>(a), const_cast<void*>(b), out};
    f(buffers, 0, 1);
  });
}

absl::Status CollectiveThunk::Execute(const ExecuteParams& params) const {
  const CollectiveExecuteParams* device = params.collectives;
  std::optional<LocalDevice> local;
  if (device == nullptr) {
    if (!op_.single_device) {
      return absl::InvalidArgumentError(
          absl::StrCat(op_.opcode, " '", info().instruction,
                       "': the module runs on several devices (replica_count x num_partitions > "
                       "1); run it on them (runtime::ExecuteOnDevices, xlite run --replicas/"
                       "--partitions)"));
    }
    local.emplace();
    device = &local->params;
  }
  absl::Status s = Run(params, *device);
  if (!s.ok()) {
    return absl::Status(s.code(),
                        absl::StrCat(op_.opcode, " '", info().instruction, "': ", s.message()));
  }
  return s;
}

absl::Status CollectiveThunk::Run(const ExecuteParams& params,
                                  const CollectiveExecuteParams& device) const {
  if (device.assignment == nullptr || device.communicators == nullptr) {
    return absl::InternalError("collective parameters without a device assignment or transport");
  }
  // (thunk id, invocation, step): each device runs the same steps of each
  // invocation, so equal keys are the same meeting.
  const int64_t invocation = device.invocations.Next(this);
  auto key = [&](int64_t step) {
    return OpKey{device.run_id, ((op_.id << 32) + invocation) * 4096 + step % 4096, device.timeout};
  };
  const BufferAllocations& buffers = *params.buffers;
  using Kind = CollectiveOp::Kind;

  if (op_.kind == Kind::kCollectivePermute) {
    ASSIGN_OR_RETURN(
        collectives::PermutePeers peers,
        collectives::PermutePeersOf(device.logical, op_.mode, op_.pairs, *device.assignment));
    ASSIGN_OR_RETURN(std::unique_ptr<Communicator> comm,
                     device.communicators->Create(peers.row.devices, peers.row.rank));
    for (size_t i = 0; i < op_.operands.size(); ++i) {
      const CollectiveOp::Operand& o = op_.operands[i];
      RETURN_IF_ERROR(comm->CollectivePermute(key(i), buffers.Get(o.source),
                                              buffers.Get(o.destination), o.type, o.elements,
                                              peers.source, peers.targets));
    }
    return absl::OkStatus();
  }

  ASSIGN_OR_RETURN(
      collectives::Participants group,
      collectives::ParticipantsOf(device.logical, op_.mode, op_.groups, *device.assignment));
  const int64_t n = group.size(), rank = group.rank;
  ASSIGN_OR_RETURN(std::unique_ptr<Communicator> comm,
                   device.communicators->Create(group.devices, rank));

  switch (op_.kind) {
    case Kind::kAllReduce: {
      ASSIGN_OR_RETURN(collectives::Reduction reduction, Reduction());
      for (size_t i = 0; i < op_.operands.size(); ++i) {
        const CollectiveOp::Operand& o = op_.operands[i];
        RETURN_IF_ERROR(comm->AllReduce(key(i), buffers.Get(o.source), buffers.Get(o.destination),
                                        o.type, o.elements, reduction));
      }
      return absl::OkStatus();
    }
    case Kind::kReduceScatter: {
      ASSIGN_OR_RETURN(collectives::Reduction reduction, Reduction());
      for (size_t i = 0; i < op_.operands.size(); ++i) {
        const CollectiveOp::Operand& o = op_.operands[i];
        int64_t outer = 1;
        for (int64_t d = 0; d < o.dimension; ++d) outer *= o.dims[d];
        void* out = buffers.Get(o.destination);
        if (outer == 1 || o.destination.size == 0) {
          RETURN_IF_ERROR(comm->ReduceScatter(key(i), buffers.Get(o.source), out, o.type,
                                              o.destination.size / PrimitiveByteWidth(o.type),
                                              reduction));
          continue;
        }
        // Along a minor dimension this rank's block is not contiguous: reduce
        // everything (the same fold, so the same bits), keep the block.
        std::vector<uint8_t> all(static_cast<size_t>(o.source.size));
        RETURN_IF_ERROR(comm->AllReduce(key(i), buffers.Get(o.source), all.data(), o.type,
                                        o.elements, reduction));
        const int64_t row = o.destination.size / outer;  // this rank's bytes per outer index
        for (int64_t r = 0; r < outer; ++r) {
          std::memcpy(static_cast<uint8_t*>(out) + r * row, all.data() + (r * n + rank) * row,
                      static_cast<size_t>(row));
        }
      }
      return absl::OkStatus();
    }
    case Kind::kCollectiveBroadcast:
      for (size_t i = 0; i < op_.operands.size(); ++i) {
        const CollectiveOp::Operand& o = op_.operands[i];
        RETURN_IF_ERROR(comm->Broadcast(key(i), buffers.Get(o.source), buffers.Get(o.destination),
                                        o.type, o.elements, /*root=*/0));
      }
      return absl::OkStatus();
    case Kind::kAllGather:
    case Kind::kAllToAll:
    case Kind::kAllToAllTuple: {
      if (op_.kind == Kind::kAllToAllTuple && static_cast<int64_t>(op_.operands.size()) != n) {
        return absl::InvalidArgumentError(
            absl::StrCat("the tuple form needs one operand per device of the group (", n, "), got ",
                         op_.operands.size()));
      }
      // Sources that share bytes with a destination are read from a copy:
      // the peers read them while this device writes its results.
      std::vector<std::vector<uint8_t>> copies(op_.operands.size());
      std::vector<const void*> sends;
      std::vector<void*> recvs;
      std::vector<int64_t> sizes;
      for (size_t i = 0; i < op_.operands.size(); ++i) {
        const CollectiveOp::Operand& o = op_.operands[i];
        const void* send = buffers.Get(o.source);
        for (const CollectiveOp::Operand& other : op_.operands) {
          if (!Overlap(o.source, other.destination)) continue;
          copies[i].assign(static_cast<const uint8_t*>(send),
                           static_cast<const uint8_t*>(send) + o.source.size);
          send = copies[i].data();
          break;
        }
        sends.push_back(send);
        recvs.push_back(buffers.Get(o.destination));
        sizes.push_back(o.destination.size);
      }
      std::vector<ChunkMove> moves;
      for (size_t i = 0; i < op_.operands.size(); ++i) {
        const CollectiveOp::Operand& o = op_.operands[i];
        const int64_t width = PrimitiveByteWidth(o.type);
        if (op_.kind == Kind::kAllToAllTuple) {
          moves.push_back(ChunkMove{static_cast<int64_t>(i), static_cast<int64_t>(i), 0, rank, 0,
                                    o.source.size});
          continue;
        }
        if (o.elements == 0) continue;
        ASSIGN_OR_RETURN(
            std::vector<ChunkMove> m,
            op_.kind == Kind::kAllGather
                ? collectives::AllGatherMoves(o.dims, o.dimension, n, rank, width, i)
                : collectives::AllToAllMoves(o.dims, o.dimension, o.dimension, n, rank, width, i));
        moves.insert(moves.end(), m.begin(), m.end());
      }
      return comm->AllToAllChunks(key(0), sends, recvs, sizes, moves);
    }
    case Kind::kRaggedAllToAll: {
      if (op_.operands.size() != 2 || op_.ragged_sizes.size() != 4) {
        return absl::InternalError("ragged-all-to-all needs input, output and four size arrays");
      }
      const CollectiveOp::Operand& input = op_.operands[0];
      const CollectiveOp::Operand& output = op_.operands[1];
      void* out = buffers.Get(output.destination);
      const void* in = buffers.Get(input.source);
      std::vector<uint8_t> input_copy;
      if (Overlap(input.source, output.destination)) {
        input_copy.assign(static_cast<const uint8_t*>(in),
                          static_cast<const uint8_t*>(in) + input.source.size);
        in = input_copy.data();
      }
      if (buffers.Get(output.source) != out && output.destination.size > 0) {
        std::memmove(out, buffers.Get(output.source), static_cast<size_t>(output.destination.size));
      }
      collectives::RaggedAllToAllArgs args;
      args.input = in;
      args.output = out;
      args.type = input.type;
      args.row_elements = 1;
      for (size_t d = 1; d < input.dims.size(); ++d) args.row_elements *= input.dims[d];
      args.input_rows = input.dims.empty() ? 0 : input.dims[0];
      args.output_rows = output.dims.empty() ? 0 : output.dims[0];
      args.input_offsets = ReadInts(params, op_.ragged_sizes[0], op_.ragged_size_types[0]);
      args.send_sizes = ReadInts(params, op_.ragged_sizes[1], op_.ragged_size_types[1]);
      args.output_offsets = ReadInts(params, op_.ragged_sizes[2], op_.ragged_size_types[2]);
      args.recv_sizes = ReadInts(params, op_.ragged_sizes[3], op_.ragged_size_types[3]);
      return comm->RaggedAllToAll(key(0), args);
    }
    case Kind::kCollectivePermute:
      break;
  }
  return absl::InternalError("unknown collective kind");
}

}  // namespace xlite::cpu
