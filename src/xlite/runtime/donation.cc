#include "xlite/runtime/donation.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace xlite::runtime {
namespace {

Shape WithDefaultLayout(Shape shape) {
  shape.SetDefaultLayoutIfMissing();
  return shape;
}

std::string AliasToString(const InputOutputAlias& alias) {
  return absl::StrCat("input_output_alias ", ShapeIndexToString(alias.output_index), ": (",
                      alias.parameter_number, ", ", ShapeIndexToString(alias.parameter_index),
                      alias.kind == AliasKind::kMustAlias ? ", must-alias)" : ", may-alias)");
}

// Why `got` is not a buffer for `expected` (both with layouts); empty when it is.
std::string ShapeMismatch(const Shape& expected, const Shape& got) {
  if (got.element_type() != expected.element_type()) {
    return absl::StrCat("element type ", PrimitiveTypeName(got.element_type()),
                        " differs from the parameter's ", expected.ToString());
  }
  if (!got.EqualIgnoringLayout(expected)) {
    return absl::StrCat("shape ", got.ToString(), " differs from the parameter's ",
                        expected.ToString());
  }
  if (!(got == expected)) {
    return absl::StrCat("layout of ", got.ToString(), " differs from the parameter's ",
                        expected.ToString());
  }
  return "";
}

}  // namespace

absl::string_view ArgumentRoleName(ArgumentRole role) {
  switch (role) {
    case ArgumentRole::kReadOnly:
      return "read-only";
    case ArgumentRole::kDonated:
      return "donated";
    case ArgumentRole::kCopyProtected:
      return "copy-protected";
  }
  return "?";
}

std::string DonationRules::ArgumentName(int64_t argument) const {
  if (argument < 0 || argument >= static_cast<int64_t>(arguments_.size())) {
    return absl::StrCat("argument ", argument);
  }
  const ArgumentLeaf& leaf = arguments_[argument];
  return absl::StrCat("argument ", argument, " (parameter ", leaf.parameter_number, " ",
                      ShapeIndexToString(leaf.parameter_index), ")");
}

std::optional<int64_t> DonationRules::ArgumentIndex(int64_t parameter_number,
                                                    const ShapeIndex& index) const {
  auto it = argument_of_.find({parameter_number, index});
  if (it == argument_of_.end()) return std::nullopt;
  return it->second;
}

std::optional<int64_t> DonationRules::OutputLeafIndex(const ShapeIndex& index) const {
  auto it = output_of_.find(index);
  if (it == output_of_.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<DonationRules> DonationRules::Create(absl::Span<const Shape> parameter_shapes,
                                                    const Shape& result_shape,
                                                    absl::Span<const InputOutputAlias> aliases,
                                                    absl::Span<const BufferDonor> donors,
                                                    absl::Span<const DonationVerdict> verdicts) {
  DonationRules rules;
  // (parameter, index) -> argument; output index -> output leaf.
  auto& argument_of = rules.argument_of_;
  auto& output_of = rules.output_of_;
  absl::Status status;
  for (int64_t p = 0; p < static_cast<int64_t>(parameter_shapes.size()); ++p) {
    const Shape shape = WithDefaultLayout(parameter_shapes[p]);
    ForEachSubshape(shape, [&](const Shape& sub, const ShapeIndex& index) {
      // Tokens order effects and hold no data: no argument buffer (as for
      // outputs).
      if (sub.IsTuple() || sub.IsToken()) return;
      if (!sub.IsArray()) {
        if (status.ok()) {
          status = absl::UnimplementedError(
              absl::StrCat("parameter ", p, " ", ShapeIndexToString(index), " is ", sub.ToString(),
                           ": the CPU runtime passes arrays only"));
        }
        return;
      }
      argument_of[{p, index}] = static_cast<int64_t>(rules.arguments_.size());
      ArgumentLeaf& leaf = rules.arguments_.emplace_back();
      leaf.parameter_number = p;
      leaf.parameter_index = index;
      leaf.shape = sub;
    });
  }
  if (!status.ok()) return status;
  ForEachSubshape(WithDefaultLayout(result_shape), [&](const Shape& sub, const ShapeIndex& index) {
    if (!sub.IsArray()) return;
    output_of[index] = static_cast<int64_t>(rules.outputs_.size());
    OutputLeaf& leaf = rules.outputs_.emplace_back();
    leaf.index = index;
    leaf.shape = sub;
  });

  auto add_alias = [&](const InputOutputAlias& alias, bool from_donor) -> absl::Status {
    auto argument = argument_of.find({alias.parameter_number, alias.parameter_index});
    if (argument == argument_of.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          AliasToString(alias), ": the parameters have no array at (", alias.parameter_number, ", ",
          ShapeIndexToString(alias.parameter_index), ")"));
    }
    auto output = output_of.find(alias.output_index);
    if (output == output_of.end()) {
      return absl::InvalidArgumentError(absl::StrCat(AliasToString(alias),
                                                     ": the result has no array at ",
                                                     ShapeIndexToString(alias.output_index)));
    }
    ArgumentLeaf& arg = rules.arguments_[argument->second];
    OutputLeaf& out = rules.outputs_[output->second];
    if (arg.output_leaf.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat(AliasToString(alias), ": parameter ", alias.parameter_number, " ",
                       ShapeIndexToString(alias.parameter_index), " already backs output ",
                       ShapeIndexToString(rules.outputs_[*arg.output_leaf].index)));
    }
    if (out.aliased_argument.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat(AliasToString(alias), ": output ", ShapeIndexToString(alias.output_index),
                       " is already backed by ", rules.ArgumentName(*out.aliased_argument)));
    }
    if (!(arg.shape == out.shape)) {
      return absl::InvalidArgumentError(absl::StrCat(AliasToString(alias), ": parameter shape ",
                                                     arg.shape.ToString(), " and output shape ",
                                                     out.shape.ToString(), " differ"));
    }
    arg.output_leaf = output->second;
    arg.alias_kind = alias.kind;
    arg.from_buffer_donor = from_donor;
    out.aliased_argument = argument->second;
    return absl::OkStatus();
  };
  for (const InputOutputAlias& alias : aliases) {
    if (absl::Status s = add_alias(alias, /*from_donor=*/false); !s.ok()) return s;
  }
  for (const DonationVerdict& verdict : verdicts) {
    if (!verdict.output_index.has_value()) continue;
    auto argument = argument_of.find({verdict.parameter_number, verdict.parameter_index});
    InputOutputAlias alias{
        .output_index = *verdict.output_index,
        .parameter_number = verdict.parameter_number,
        .parameter_index = verdict.parameter_index,
        .kind = verdict.must_alias ? AliasKind::kMustAlias : AliasKind::kMayAlias};
    if (argument != argument_of.end() && rules.arguments_[argument->second].output_leaf) {
      ArgumentLeaf& arg = rules.arguments_[argument->second];
      if (rules.outputs_[*arg.output_leaf].index != *verdict.output_index) {
        return absl::InvalidArgumentError(absl::StrCat(
            "donation verdict '", verdict.text, "' pairs parameter ", verdict.parameter_number, " ",
            ShapeIndexToString(verdict.parameter_index), " with output ",
            ShapeIndexToString(*verdict.output_index), " but the module aliases it to output ",
            ShapeIndexToString(rules.outputs_[*arg.output_leaf].index)));
      }
      // PlanMemory already wrote the pair into input_output_alias.
      arg.from_buffer_donor |= verdict.from_buffer_donor;
      continue;
    }
    if (absl::Status s = add_alias(alias, verdict.from_buffer_donor); !s.ok()) return s;
  }
  for (const BufferDonor& donor : donors) {
    auto argument = argument_of.find({donor.parameter_number, donor.parameter_index});
    if (argument == argument_of.end()) {
      return absl::InvalidArgumentError(absl::StrCat("buffer_donor (", donor.parameter_number, ", ",
                                                     ShapeIndexToString(donor.parameter_index),
                                                     "): the parameters have no array there"));
    }
    ArgumentLeaf& arg = rules.arguments_[argument->second];
    if (!arg.output_leaf.has_value()) arg.unused_donor = true;
  }
  for (const ArgumentLeaf& leaf : rules.arguments_) {
    if (leaf.output_leaf.has_value()) rules.has_aliases_ = true;
  }
  return rules;
}

absl::StatusOr<DonationRules> DonationRules::FromModule(
    const HloModule& module, absl::Span<const DonationVerdict> verdicts) {
  const ProgramShape program = module.ComputeEntryComputationLayout();
  return Create(program.parameters, program.result, module.config().input_output_alias,
                module.config().buffer_donor, verdicts);
}

absl::StatusOr<std::vector<ArgumentDecision>> DecideDonation(
    const DonationRules& rules, absl::Span<Buffer* const> arguments,
    const absl::flat_hash_set<int64_t>& non_donatable_input_indices) {
  const int64_t count = static_cast<int64_t>(rules.arguments().size());
  if (static_cast<int64_t>(arguments.size()) != count) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Execute expects ", count,
        " argument buffers (one per array of the entry's parameters), got ", arguments.size()));
  }
  for (int64_t index : non_donatable_input_indices) {
    if (index < 0 || index >= count) {
      return absl::InvalidArgumentError(absl::StrCat("non_donatable_input_indices names argument ",
                                                     index, ", but there are ", count));
    }
  }
  std::vector<ArgumentDecision> decisions(count);
  // Each buffer's first use: (donated, argument); PjRt's donation clash test,
  // needed only where some argument may be donated.
  const bool check_clashes = rules.has_aliases() && count > 1;
  absl::flat_hash_map<const Buffer*, std::pair<bool, int64_t>> first_use;
  for (int64_t i = 0; i < count; ++i) {
    const ArgumentLeaf& leaf = rules.arguments()[i];
    Buffer* buffer = arguments[i];
    if (buffer == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(rules.ArgumentName(i), " is null"));
    }
    if (buffer->is_deleted()) {
      return absl::InvalidArgumentError(absl::StrCat(
          rules.ArgumentName(i), " has been deleted or donated (", leaf.shape.ToString(), ")"));
    }
    // The fast path: the one shape and layout the parameter takes (XLA's
    // CPU client accepts no other), computed when the rules were made.
    if (!(buffer->shape() == leaf.shape)) {
      return absl::InvalidArgumentError(
          absl::StrCat(rules.ArgumentName(i), ": ", ShapeMismatch(leaf.shape, buffer->shape())));
    }
    ArgumentDecision& decision = decisions[i];
    if (leaf.output_leaf.has_value()) {
      decision.output_leaf = leaf.output_leaf;
      if (!non_donatable_input_indices.contains(i)) {
        decision.role = ArgumentRole::kDonated;
      } else if (leaf.alias_kind == AliasKind::kMustAlias) {
        return absl::InvalidArgumentError(
            absl::StrCat(rules.ArgumentName(i), " must alias output ",
                         ShapeIndexToString(rules.outputs()[*leaf.output_leaf].index),
                         " (must-alias) but is not donated (non_donatable_input_indices)"));
      } else {
        decision.role = ArgumentRole::kCopyProtected;
      }
    }
    if (!check_clashes) continue;
    const bool donated = decision.role == ArgumentRole::kDonated;
    auto [it, first] = first_use.try_emplace(buffer, donated, i);
    if (!first && (donated || it->second.first)) {
      const int64_t earlier = it->second.second;
      if (donated && it->second.first) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Attempt to donate the same buffer twice in Execute(): ", rules.ArgumentName(i),
            " is the buffer ", rules.ArgumentName(earlier),
            " already donates. Toy example for this bug: `f(donate(a), donate(a))`."));
      }
      if (donated) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Attempt to donate a buffer which is also used by the same call to Execute(): ",
            rules.ArgumentName(i), " is the buffer of ", rules.ArgumentName(earlier),
            ". Toy example for this bug: `f(a, donate(a))`."));
      }
      return absl::InvalidArgumentError(
          absl::StrCat("Attempt to use a buffer that was donated in the same call to Execute(): ",
                       rules.ArgumentName(i), " is the buffer ", rules.ArgumentName(earlier),
                       " donates. Toy example for this bug: `f(donate(a), a)`."));
    }
  }
  return decisions;
}

PreparedArguments::PreparedArguments(const DonationRules& rules,
                                     absl::Span<Buffer* const> arguments,
                                     std::vector<ArgumentDecision> decisions)
    : rules_(rules), decisions_(std::move(decisions)), held_(arguments.size()) {
  for (size_t i = 0; i < arguments.size(); ++i) held_[i].buffer = arguments[i];
}

absl::StatusOr<std::unique_ptr<PreparedArguments>> PreparedArguments::Prepare(
    const DonationRules& rules, absl::Span<Buffer* const> arguments,
    const absl::flat_hash_set<int64_t>& non_donatable_input_indices) {
  absl::StatusOr<std::vector<ArgumentDecision>> decisions =
      DecideDonation(rules, arguments, non_donatable_input_indices);
  if (!decisions.ok()) return decisions.status();
  std::unique_ptr<PreparedArguments> prepared(
      new PreparedArguments(rules, arguments, *std::move(decisions)));
  PreparedArguments& p = *prepared;
  const int64_t count = static_cast<int64_t>(arguments.size());
  // Donations first (each may wait for other calls' reads to end), then
  // usage holds (never waiting): no call waits while it holds a use.
  for (int64_t i = 0; i < count; ++i) {
    if (p.decisions_[i].role != ArgumentRole::kDonated) continue;
    if (absl::Status s = arguments[i]->AcquireDonation(); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(rules.ArgumentName(i), ": ", s.message()));
    }
    p.held_[i].donation = true;
  }
  for (int64_t i = 0; i < count; ++i) {
    if (p.decisions_[i].role == ArgumentRole::kDonated) continue;
    if (absl::Status s = arguments[i]->AcquireUsage(); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(rules.ArgumentName(i), ": ", s.message()));
    }
    p.held_[i].usage = true;
    if (p.decisions_[i].role == ArgumentRole::kCopyProtected) {
      absl::StatusOr<std::unique_ptr<Buffer>> copy = arguments[i]->Copy();
      if (!copy.ok()) {
        return absl::Status(copy.status().code(),
                            absl::StrCat("copy protection of ", rules.ArgumentName(i), ": ",
                                         copy.status().message()));
      }
      p.held_[i].copy = *std::move(copy);
    }
  }
  return prepared;
}

PreparedArguments::~PreparedArguments() { ReleaseHolds(); }

void PreparedArguments::ReleaseHolds() {
  for (Held& h : held_) {
    if (h.usage) h.buffer->ReleaseUsage();
    if (h.donation) h.buffer->CancelDonation();
    h.usage = h.donation = false;
  }
}

void* PreparedArguments::parameter_data(int64_t argument) const {
  if (argument < 0 || argument >= static_cast<int64_t>(held_.size())) return nullptr;
  const Held& h = held_[argument];
  if (h.copy != nullptr) return h.copy->data();
  // A donated buffer looks deleted to others; its memory is still ours.
  return h.donation ? h.buffer->donated_data() : h.buffer->data();
}

bool PreparedArguments::output_is_aliased(int64_t output_leaf) const {
  if (output_leaf < 0 || output_leaf >= static_cast<int64_t>(rules_.outputs().size())) {
    return false;
  }
  const std::optional<int64_t> argument = rules_.outputs()[output_leaf].aliased_argument;
  return argument.has_value() && decisions_[*argument].role != ArgumentRole::kReadOnly;
}

void* PreparedArguments::aliased_output_data(int64_t output_leaf) const {
  if (!output_is_aliased(output_leaf)) return nullptr;
  return parameter_data(*rules_.outputs()[output_leaf].aliased_argument);
}

absl::StatusOr<std::vector<std::unique_ptr<Buffer>>> PreparedArguments::Finish(
    std::vector<std::unique_ptr<Buffer>> outputs) {
  const std::vector<OutputLeaf>& leaves = rules_.outputs();
  if (finished_) return absl::FailedPreconditionError("Finish called twice");
  if (outputs.size() != leaves.size()) {
    return absl::InvalidArgumentError(absl::StrCat("Finish expects ", leaves.size(),
                                                   " output buffers (one per result array), got ",
                                                   outputs.size()));
  }
  for (size_t j = 0; j < leaves.size(); ++j) {
    const bool aliased = output_is_aliased(static_cast<int64_t>(j));
    if (aliased && outputs[j] != nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "output ", ShapeIndexToString(leaves[j].index), " is backed by ",
          rules_.ArgumentName(*leaves[j].aliased_argument), "; its buffer must be null"));
    }
    if (!aliased && outputs[j] == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("output ", ShapeIndexToString(leaves[j].index), " has no buffer"));
    }
  }
  for (size_t i = 0; i < held_.size(); ++i) {
    const ArgumentDecision& decision = decisions_[i];
    if (decision.role == ArgumentRole::kDonated) {
      outputs[*decision.output_leaf] =
          held_[i].buffer->ConfirmDonation(leaves[*decision.output_leaf].shape);
      held_[i].donation = false;
    } else if (decision.role == ArgumentRole::kCopyProtected) {
      outputs[*decision.output_leaf] = std::move(held_[i].copy);
    }
  }
  ReleaseHolds();
  finished_ = true;
  return outputs;
}

void PreparedArguments::AbandonAfterFailedRun() {
  for (Held& h : held_) {
    if (!h.donation) continue;
    // The memory may hold partial results: it is the caller's no more.
    h.buffer->ConfirmDonation(h.buffer->shape());
    h.donation = false;
  }
  for (Held& h : held_) h.copy.reset();
  ReleaseHolds();
  finished_ = true;
}

}  // namespace xlite::runtime
