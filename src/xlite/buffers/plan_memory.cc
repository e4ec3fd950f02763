#include "xlite/buffers/plan_memory.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "xlite/passes/flatten_call_graph.h"
#include "xlite/support/status.h"

namespace xlite {
namespace {

std::string Element(int64_t number, const ShapeIndex& index) {
  return absl::StrCat("parameter ", number, " ", ShapeIndexToString(index));
}

// One verdict per array element of every entry parameter.
std::vector<DonationVerdict> JudgeDonations(const HloModule& module, const MemoryPlan& plan) {
  std::vector<DonationVerdict> verdicts;
  const HloComputation* entry = module.entry_computation();
  const ModuleConfig& config = module.config();
  for (const HloInstruction* param : entry->parameter_instructions()) {
    if (param == nullptr) continue;
    const int64_t number = param->attrs().parameter_number;
    ForEachSubshape(param->shape(), [&](const Shape& shape, const ShapeIndex& index) {
      if (shape.IsTuple() || shape.IsToken()) return;
      DonationVerdict v;
      v.parameter_number = number;
      v.parameter_index = index;
      const InputOutputAlias* alias = nullptr;
      for (const InputOutputAlias& a : config.input_output_alias) {
        if (a.parameter_number == number && a.parameter_index == index) alias = &a;
      }
      const DonorPairing* donor = nullptr;
      for (const DonorPairing& d : plan.donor_pairs) {
        if (d.parameter_number == number && d.parameter_index == index) donor = &d;
      }
      const std::string what = absl::StrCat(Element(number, index), " ", shape.ToString(false));
      if (alias != nullptr) {
        v.output_index = alias->output_index;
        v.from_buffer_donor = donor != nullptr && donor->output_index.has_value();
        v.must_alias = alias->kind == AliasKind::kMustAlias;
        const std::string how = v.from_buffer_donor
                                    ? "donated (buffer_donor); chosen to back output "
                                    : "aliased to output ";
        const InsertedCopy* copied = nullptr;
        for (const InsertedCopy& c : plan.copies) {
          if (c.reason == CopyReason::kAliasedParameter && c.parameter_number == number &&
              c.parameter_index == index) {
            copied = &c;
          }
        }
        v.kind =
            copied != nullptr ? DonationVerdict::Kind::kCopied : DonationVerdict::Kind::kInPlace;
        v.text = absl::StrCat(what, ": ", how, ShapeIndexToString(alias->output_index), " (",
                              v.must_alias ? "must-alias" : "may-alias", ")");
        if (copied != nullptr) {
          absl::StrAppend(&v.text, "; copied first (", copied->name,
                          ") because it is still live: ", copied->explanation);
        } else {
          absl::StrAppend(&v.text, "; updated in place");
        }
      } else if (donor != nullptr) {
        v.kind = DonationVerdict::Kind::kDonatedUnused;
        v.text = absl::StrCat(what, ": donated (buffer_donor) but unused: ", donor->why_unused);
      } else {
        v.kind = DonationVerdict::Kind::kNotDonated;
        v.text = absl::StrCat(what, ": not donated (read-only)");
        for (const InsertedCopy& c : plan.copies) {
          if (c.reason == CopyReason::kReadOnlyOutput && c.parameter_number == number &&
              c.parameter_index == index && c.output_index.has_value()) {
            absl::StrAppend(&v.text, "; returned as output ", ShapeIndexToString(*c.output_index),
                            " through ", c.name);
          }
        }
      }
      verdicts.push_back(std::move(v));
    });
  }
  return verdicts;
}

}  // namespace

PlanOptions PlanOptionsFrom(const DebugOptions& debug) {
  PlanOptions options;
  options.verify = debug.verify_buffer_assignment;
  options.strict_donation = debug.strict_donation;
  options.rematerialization.memory_limit_bytes = debug.memory_limit;
  return options;
}

absl::StatusOr<MemoryPlan> PlanMemory(HloModule& module, const PlanOptions& options) {
  if (module.entry_computation() == nullptr) {
    return InvalidArgument("module ", module.name(), " has no entry computation");
  }
  MemoryPlan plan;
  {
    ASSIGN_OR_RETURN(std::unique_ptr<CallGraph> graph, CallGraph::Build(module));
    if (!graph->IsFlattened()) {
      ASSIGN_OR_RETURN(plan.flattened, FlattenCallGraph().Run(module));
    }
  }
  plan.donor_pairs = PairBufferDonors(module);
  CopyInsertion copy_insertion;
  RETURN_IF_ERROR(copy_insertion.Run(module).status());
  plan.copies = copy_insertion.inserted_copies();
  ASSIGN_OR_RETURN(plan.schedule, ScheduleModule(module, options.schedule));
  if (options.rematerialization.memory_limit_bytes > 0) {
    ASSIGN_OR_RETURN(plan.rematerialization, Rematerialize(module, options.rematerialization));
    // The clones are in the module's order; the scheduler's sequences are
    // stale (peak_bytes stays the scheduler's; the result has the new one).
    ASSIGN_OR_RETURN(std::unique_ptr<CallGraph> graph, CallGraph::Build(module));
    plan.schedule.schedule = HloSchedule::FromInstructionOrder(ScheduledComputations(*graph));
  }
  ASSIGN_OR_RETURN(plan.assignment, AssignBuffers(module, options.assignment));
  if (options.verify) {
    ASSIGN_OR_RETURN(plan.check, CheckBufferAssignment(*plan.assignment));
  }
  plan.donations = JudgeDonations(module, plan);
  if (options.strict_donation) {
    std::vector<std::string> unusable;
    for (const DonationVerdict& v : plan.donations) {
      if (v.kind == DonationVerdict::Kind::kDonatedUnused) unusable.push_back(v.text);
    }
    if (!unusable.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--xlite_strict_donation: ", unusable.size(), " donated parameter element",
          unusable.size() == 1 ? " is" : "s are", " unusable: ", absl::StrJoin(unusable, "; ")));
    }
  }
  return plan;
}

}  // namespace xlite
