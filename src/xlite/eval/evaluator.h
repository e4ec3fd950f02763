// The reference interpreter: evaluates HLO modules on literals with XLA's
// exact semantics. Obviously correct rather than fast; every compiled result
// is checked against it.
#ifndef XLITE_EVAL_EVALUATOR_H_
#define XLITE_EVAL_EVALUATOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "xlite/ir/module.h"

namespace xlite {

class CollectiveRendezvous;
class HostTransfers;

struct EvalOptions {
  int64_t replica_count = 1;
  int64_t num_partitions = 1;
  // Stop a run whose instructions produce more than this many elements in
  // total (0 = unlimited); the error says the module is too slow to interpret.
  int64_t max_total_elements = 0;
  // Stop after this much wall-clock time (0 = unlimited); same error.
  double max_seconds = 0;
  // Infeed/outfeed queues and host send/recv callbacks (eval/host_transfers.h,
  // shared with the CPU runtime); nullptr: a run reaching infeed, outfeed or a
  // host send/recv fails, saying none was given.
  HostTransfers* host_transfers = nullptr;
};

// A custom-call target: computes the result from the operands.
using CustomCallFn = std::function<absl::StatusOr<Literal>(
    const HloInstruction& call, absl::Span<const Literal* const> operands)>;
// Registers `target` for all evaluators (process-wide).
void RegisterCustomCallTarget(const std::string& target, CustomCallFn fn);
const CustomCallFn* FindCustomCallTarget(const std::string& target);

// What an instruction's evaluation may ask of the evaluator.
class EvalContext {
 public:
  virtual ~EvalContext() = default;
  // Evaluates a called computation on the given arguments.
  virtual absl::StatusOr<Literal> Call(const HloComputation& computation,
                                       absl::Span<const Literal* const> args) = 0;
  virtual int64_t replica_id() const = 0;
  virtual int64_t partition_id() const = 0;
  virtual const EvalOptions& options() const = 0;
  // For collectives: every participant contributes `value` for `instr`; returns
  // the contributions of all replicas*partitions devices, indexed by global
  // device id (replica * num_partitions + partition). Blocks until all arrive.
  virtual absl::StatusOr<std::vector<Literal>> Exchange(const HloInstruction& instr,
                                                        const Literal& value) = 0;
  // Accounts `work` units (elements produced, scalar calls made) against the
  // budgets; ResourceExhausted ("too slow") once one is spent. Loops that
  // bypass Call (fast paths) report their work here.
  virtual absl::Status Progress(int64_t work) = 0;
  // Process-wide state that XLA keeps per device (rng-get-and-update-state).
  virtual uint64_t& rng_state() = 0;
};

// Evaluates `module`'s entry computation on `args` (one literal per parameter).
absl::StatusOr<Literal> Evaluate(const HloModule& module, absl::Span<const Literal> args,
                                 const EvalOptions& options = {});

// Evaluates one instruction on one device (replica 0, partition 0) given its
// operands' values; called computations are evaluated as needed. For
// constant folding: collectives and side effects are the caller's to exclude.
absl::StatusOr<Literal> EvaluateStandalone(const HloInstruction& instr,
                                           absl::Span<const Literal* const> operands,
                                           const EvalOptions& options = {});

// Evaluates on replica_count * num_partitions simulated devices, each with its
// own arguments (args[device]); returns one result per device.
absl::StatusOr<std::vector<Literal>> EvaluateReplicated(
    const HloModule& module, const std::vector<std::vector<Literal>>& args,
    const EvalOptions& options);

// EvaluateReplicated for one computation of a module (a manual computation's
// body runs so, once per device of its mesh).
absl::StatusOr<std::vector<Literal>> EvaluateComputationReplicated(
    const HloComputation& computation, const std::vector<std::vector<Literal>>& args,
    const EvalOptions& options);

// One instruction, given its operands' values. Families live in
// eval_<family>.cc; each returns NotFound for opcodes it does not own.
absl::StatusOr<Literal> EvaluateInstruction(const HloInstruction& instr,
                                            absl::Span<const Literal* const> operands,
                                            EvalContext& context);
namespace eval {
absl::StatusOr<Literal> EvalElementwise(const HloInstruction&, absl::Span<const Literal* const>,
                                        EvalContext&);
absl::StatusOr<Literal> EvalDataMovement(const HloInstruction&, absl::Span<const Literal* const>,
                                         EvalContext&);
absl::StatusOr<Literal> EvalLinalg(const HloInstruction&, absl::Span<const Literal* const>,
                                   EvalContext&);
absl::StatusOr<Literal> EvalReduction(const HloInstruction&, absl::Span<const Literal* const>,
                                      EvalContext&);
absl::StatusOr<Literal> EvalControl(const HloInstruction&, absl::Span<const Literal* const>,
                                    EvalContext&);
absl::StatusOr<Literal> EvalCollective(const HloInstruction&, absl::Span<const Literal* const>,
                                       EvalContext&);
absl::StatusOr<Literal> EvalRandom(const HloInstruction&, absl::Span<const Literal* const>,
                                   EvalContext&);
// Sharding annotations and Shardy's manual computations (eval_sharding.cc).
absl::StatusOr<Literal> EvalSharding(const HloInstruction&, absl::Span<const Literal* const>,
                                     EvalContext&);

// JAX's CPU custom calls (jaxlib's LAPACK targets; eval_custom_call_jaxlib.cc).
// True for the targets it runs and for the jaxlib ones it refuses by name.
bool IsJaxlibCustomCallTarget(absl::string_view target);
absl::StatusOr<Literal> EvalJaxlibCustomCall(const HloInstruction& instr,
                                             absl::Span<const Literal* const> operands);

// "opcode 'name': unsupported <feature>" as an Unimplemented status.
absl::Status Unsupported(const HloInstruction& instr, absl::string_view feature);
// Row-major strides of `shape`.
std::vector<int64_t> Strides(const Shape& shape);
// The literal with the instruction's shape (layout dropped), zero-filled.
Literal ResultLiteral(const HloInstruction& instr);
}  // namespace eval

}  // namespace xlite

#endif  // XLITE_EVAL_EVALUATOR_H_
