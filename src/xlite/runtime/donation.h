// Donation: which argument buffers of one Execute back outputs, decided
// before anything runs (XLA's aliasing document, PjRt's ExecuteOptions):
//
// - An entry parameter element named by input_output_alias (may-alias or
//   must-alias; buffer_donor entries the compiler paired with an output, see
//   buffers/donor_pairing.h, are may-alias entries by then) is *donated* when
//   its argument index is not in non_donatable_input_indices: the run writes
//   the output into the argument's memory, the output buffer takes that
//   memory over and the argument is deleted.
// - A may-alias element that is not donated is *copy-protected*: the output
//   gets a fresh buffer initialised with a copy of the argument, which the
//   run updates in place; the argument is never written.
// - A must-alias element that is not donated is an error.
// - Everything else is read-only (a buffer_donor no output could use stays
//   the caller's, as in JAX).
//
// Arguments are one buffer per array of the entry's parameters, in order
// (parameter 0's arrays in ForEachSubshape order, then parameter 1's, ...):
// PjRt's flattened arguments. Outputs are the arrays of the result shape in
// the same order ("output leaves"). Tokens hold no data: they take no
// argument buffer and are no output leaf.
//
//   // at compile time, after PlanMemory:
//   ASSIGN_OR_RETURN(DonationRules rules, DonationRules::FromModule(module, plan.donations));
//   // in Execute:
//   ASSIGN_OR_RETURN(std::unique_ptr<PreparedArguments> prepared,
//                    PreparedArguments::Prepare(rules, args, options.non_donatable_input_indices));
//   prepared->parameter_data(i);        // the memory the run uses for argument i
//   prepared->output_is_aliased(j);     // else the executable allocates output leaf j
//   prepared->aliased_output_data(j);   // the memory backing an aliased output leaf j
//   ... run; allocate the other outputs ...
//   ASSIGN_OR_RETURN(outputs, prepared->Finish(std::move(fresh_outputs)));
//
// Errors (InvalidArgument naming the argument index and its parameter): wrong
// count, shape, element type or layout; a null or deleted buffer; one buffer
// passed twice where either use is donated (PjRt's wording); a must-alias
// element not donated; a non_donatable index out of range.
#ifndef XLITE_RUNTIME_DONATION_H_
#define XLITE_RUNTIME_DONATION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "xlite/analysis/shape_util.h"
#include "xlite/buffers/plan_memory.h"
#include "xlite/ir/module.h"
#include "xlite/runtime/buffer.h"

namespace xlite::runtime {

// One array of an entry parameter: one argument buffer.
struct ArgumentLeaf {
  int64_t parameter_number = 0;
  ShapeIndex parameter_index;
  Shape shape;  // with layout
  // The output leaf this element may back, and how (input_output_alias).
  std::optional<int64_t> output_leaf;
  AliasKind alias_kind = AliasKind::kMayAlias;
  bool from_buffer_donor = false;  // the alias was paired from buffer_donor
  bool unused_donor = false;       // in buffer_donor, but no output took it
};

// One array of the result.
struct OutputLeaf {
  ShapeIndex index;
  Shape shape;  // with layout
  std::optional<int64_t> aliased_argument;
};

// The entry signature and its aliasing, checked once per executable.
class DonationRules {
 public:
  // `verdicts` (PlanMemory's, optional) add the pairs the compiler chose for
  // buffer_donor entries when the module's input_output_alias does not list
  // them yet. InvalidArgument for aliases naming no array element of the
  // parameters or the result, an output or parameter element aliased twice,
  // aliased elements of different shapes, or verdicts that contradict the
  // module; Unimplemented for a parameter holding opaques.
  static absl::StatusOr<DonationRules> Create(absl::Span<const Shape> parameter_shapes,
                                              const Shape& result_shape,
                                              absl::Span<const InputOutputAlias> aliases,
                                              absl::Span<const BufferDonor> donors,
                                              absl::Span<const DonationVerdict> verdicts = {});
  // From the module's entry computation layout and configuration.
  static absl::StatusOr<DonationRules> FromModule(const HloModule& module,
                                                  absl::Span<const DonationVerdict> verdicts = {});

  const std::vector<ArgumentLeaf>& arguments() const { return arguments_; }
  const std::vector<OutputLeaf>& outputs() const { return outputs_; }
  // "argument 2 (parameter 1 {0})".
  std::string ArgumentName(int64_t argument) const;
  // The argument holding parameter element (number, index), and the output
  // leaf at `index` of the result (how a parameter or output allocation of
  // the buffer assignment finds its buffer); nullopt when there is none.
  std::optional<int64_t> ArgumentIndex(int64_t parameter_number, const ShapeIndex& index) const;
  std::optional<int64_t> OutputLeafIndex(const ShapeIndex& index) const;
  // Whether any argument may back an output: without one no call donates,
  // and no buffer passed twice can clash.
  bool has_aliases() const { return has_aliases_; }

 private:
  bool has_aliases_ = false;
  std::vector<ArgumentLeaf> arguments_;
  std::vector<OutputLeaf> outputs_;
  absl::flat_hash_map<std::pair<int64_t, ShapeIndex>, int64_t> argument_of_;
  absl::flat_hash_map<ShapeIndex, int64_t> output_of_;
};

enum class ArgumentRole {
  kReadOnly,       // the run only reads it
  kDonated,        // its memory backs the output; deleted after the run
  kCopyProtected,  // the output gets a copy of it; it is never written
};

struct ArgumentDecision {
  ArgumentRole role = ArgumentRole::kReadOnly;
  std::optional<int64_t> output_leaf;  // kDonated, kCopyProtected
};

absl::string_view ArgumentRoleName(ArgumentRole role);

// The decision alone (no holds taken, nothing allocated): every check above.
absl::StatusOr<std::vector<ArgumentDecision>> DecideDonation(
    const DonationRules& rules, absl::Span<Buffer* const> arguments,
    const absl::flat_hash_set<int64_t>& non_donatable_input_indices);

// One Execute's arguments, decided and held: donated buffers hold a donation
// (they look deleted to every other caller from here on), the others a usage
// hold; copy-protected arguments are copied. Destroying it without Finish()
// or AbandonAfterFailedRun() gives the donations back (nothing ran).
class PreparedArguments {
 public:
  // DecideDonation's errors; ResourceExhausted when a protective copy cannot
  // be allocated; InvalidArgument when another thread deleted an argument
  // meanwhile.
  static absl::StatusOr<std::unique_ptr<PreparedArguments>> Prepare(
      const DonationRules& rules, absl::Span<Buffer* const> arguments,
      const absl::flat_hash_set<int64_t>& non_donatable_input_indices);
  ~PreparedArguments();
  PreparedArguments(const PreparedArguments&) = delete;
  PreparedArguments& operator=(const PreparedArguments&) = delete;

  const std::vector<ArgumentDecision>& decisions() const { return decisions_; }
  // The memory the run uses for argument i's parameter allocation: the
  // argument's own (read-only or donated) or its copy (copy-protected).
  void* parameter_data(int64_t argument) const;
  // Whether an argument (or its copy) backs output leaf j; if not, the
  // executable allocates that output itself.
  bool output_is_aliased(int64_t output_leaf) const;
  // The memory backing output leaf j when output_is_aliased(j) (nullptr
  // otherwise, and for an empty borrowed array over a null pointer).
  void* aliased_output_data(int64_t output_leaf) const;

  // After a successful run. `outputs` has one entry per output leaf: the
  // executable's own buffers, nullptr where output_is_aliased().
  // Returns every output: the donated memory (the argument is deleted) or
  // the protective copy in the aliased places. InvalidArgument (and nothing
  // changed) for a wrong count or a missing or superfluous buffer.
  absl::StatusOr<std::vector<std::unique_ptr<Buffer>>> Finish(
      std::vector<std::unique_ptr<Buffer>> outputs);
  // After a run that failed once it had started: donated arguments may hold
  // partial results, so they are deleted all the same.
  void AbandonAfterFailedRun();

 private:
  PreparedArguments(const DonationRules& rules, absl::Span<Buffer* const> arguments,
                    std::vector<ArgumentDecision> decisions);
  void ReleaseHolds();

  // One argument: its buffer, the hold taken on it, its protective copy.
  struct Held {
    Buffer* buffer = nullptr;
    bool usage = false;
    bool donation = false;
    std::unique_ptr<Buffer> copy;  // copy-protected only
  };

  const DonationRules& rules_;
  std::vector<ArgumentDecision> decisions_;
  std::vector<Held> held_;  // per argument (one allocation per call)
  bool finished_ = false;
};

}  // namespace xlite::runtime

#endif  // XLITE_RUNTIME_DONATION_H_
