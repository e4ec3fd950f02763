#include "xlite/eval/evaluator.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "xlite/eval/eval_util.h"
#include "xlite/support/status.h"

namespace xlite {
namespace {

std::mutex& RegistryMutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, CustomCallFn>& Registry() {
  static auto* r = new std::map<std::string, CustomCallFn>();
  return *r;
}

// Matches the k-th execution of a collective instruction on every device.
class Rendezvous {
 public:
  explicit Rendezvous(int64_t devices) : devices_(devices) {}

  absl::StatusOr<std::vector<Literal>> Exchange(const HloInstruction* instr, int64_t sequence,
                                                int64_t device, const Literal& value) {
    std::unique_lock<std::mutex> lock(mu_);
    Slot& slot = slots_[{instr, sequence}];
    if (slot.values.empty()) slot.values.resize(devices_);
    slot.values[device] = value;
    ++slot.arrived;
    cv_.notify_all();
    cv_.wait(lock, [&] { return slot.arrived == devices_ || aborted_; });
    if (aborted_) return absl::AbortedError("another device failed during a collective");
    std::vector<Literal> out = slot.values;
    if (++slot.departed == devices_) slots_.erase({instr, sequence});
    return out;
  }

  void Abort() {
    std::lock_guard<std::mutex> lock(mu_);
    aborted_ = true;
    cv_.notify_all();
  }

 private:
  struct Slot {
    std::vector<Literal> values;
    int64_t arrived = 0;
    int64_t departed = 0;
  };
  int64_t devices_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::pair<const HloInstruction*, int64_t>, Slot> slots_;
  bool aborted_ = false;
};

int64_t ShapeElements(const Shape& s) {
  if (s.IsTuple()) {
    int64_t n = 0;
    for (const Shape& e : s.tuple_shapes()) n += ShapeElements(e);
    return n;
  }
  if (!s.IsArray()) return 0;
  int64_t n = 1;
  for (int64_t d : s.dimensions()) {
    if (d <= 0) return 0;
    if (n > (int64_t{1} << 40) / d) return int64_t{1} << 40;
    n *= d;
  }
  return n;
}

class DeviceEvaluator : public EvalContext {
 public:
  DeviceEvaluator(const EvalOptions& options, int64_t replica, int64_t partition,
                  Rendezvous* rendezvous)
      : options_(options), replica_(replica), partition_(partition), rendezvous_(rendezvous) {}

  absl::StatusOr<Literal> Call(const HloComputation& comp,
                               absl::Span<const Literal* const> args) override {
    if (++depth_ > 512) {
      --depth_;
      return absl::ResourceExhaustedError(
          absl::StrCat("call depth exceeds 512 in '", comp.name(), "'"));
    }
    absl::StatusOr<Literal> result = EvaluateComputation(comp, args);
    --depth_;
    return result;
  }
  int64_t replica_id() const override { return replica_; }
  int64_t partition_id() const override { return partition_; }
  const EvalOptions& options() const override { return options_; }
  uint64_t& rng_state() override { return rng_state_; }

  absl::StatusOr<std::vector<Literal>> Exchange(const HloInstruction& instr,
                                                const Literal& value) override {
    if (!rendezvous_) return std::vector<Literal>{value};
    int64_t seq = sequence_[&instr]++;
    return rendezvous_->Exchange(&instr, seq, replica_ * options_.num_partitions + partition_,
                                 value);
  }

  absl::Status Progress(int64_t work) override {
    if (options_.max_total_elements > 0) {
      elements_ += work;
      if (elements_ > options_.max_total_elements) {
        return absl::ResourceExhaustedError(absl::StrCat("too slow: produced more than ",
                                                         options_.max_total_elements, " elements"));
      }
    }
    if (options_.max_seconds > 0 && (++steps_ & 1023) == 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() >
            options_.max_seconds) {
      return absl::ResourceExhaustedError(
          absl::StrCat("too slow: still running after ", options_.max_seconds, " s"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Literal> EvaluateComputation(const HloComputation& comp,
                                              absl::Span<const Literal* const> args) {
    if (static_cast<int64_t>(args.size()) != comp.num_parameters()) {
      return absl::InvalidArgumentError(absl::StrCat("computation '", comp.name(), "' takes ",
                                                     comp.num_parameters(), " arguments, got ",
                                                     args.size()));
    }
    // Module computations keep their plan; a computation outside any module
    // (built on the fly, e.g. a lifted reducer) may be freed and its address
    // reused, so its plan is not kept.
    std::unique_ptr<Plan> transient;
    const Plan* cached = nullptr;
    if (comp.parent() == nullptr) {
      ASSIGN_OR_RETURN(transient, MakePlan(comp));
    } else {
      ASSIGN_OR_RETURN(cached, PlanFor(comp));
    }
    const Plan& plan = transient ? *transient : *cached;
    const size_t n = plan.order.size();
    // values[k] holds instruction k's result; parameters are read in place.
    std::vector<Literal> values(n);
    std::vector<const Literal*> value_of(n, nullptr);
    std::vector<const Literal*> operand_values;
    for (size_t k = 0; k < n; ++k) {
      const HloInstruction* instr = plan.order[k];
      if (instr->opcode() == HloOpcode::kParameter) {
        const Literal* arg = args[instr->attrs().parameter_number];
        if (!arg->shape().EqualIgnoringLayout(instr->shape()) &&
            !(arg->shape().IsArray() && instr->shape().IsArray() &&
              arg->shape().element_type() == instr->shape().element_type() &&
              arg->shape().dimensions() == instr->shape().dimensions())) {
          return absl::InvalidArgumentError(absl::StrCat(
              "argument ", instr->attrs().parameter_number, " of '", comp.name(), "' has shape ",
              arg->shape().ToString(false), ", expected ", instr->shape().ToString(false)));
        }
        value_of[k] = arg;
        continue;
      }
      // Refuse results that cannot fit the budget before allocating them
      // (tuple and get-tuple-element only pass values on).
      const bool forwards =
          instr->opcode() == HloOpcode::kTuple || instr->opcode() == HloOpcode::kGetTupleElement;
      const int64_t result_elements = forwards ? 0 : ShapeElements(instr->shape());
      if (result_elements > (int64_t{1} << 31) ||
          (options_.max_total_elements > 0 &&
           elements_ + result_elements > options_.max_total_elements)) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "too slow: '", instr->name(), "' produces ", result_elements, " elements"));
      }
      operand_values.clear();
      for (int32_t slot : plan.operand_slots[k]) operand_values.push_back(value_of[slot]);
      absl::StatusOr<Literal> result = Forward(plan, k, values, value_of);
      if (!result.ok()) result = EvaluateGuarded(*instr, operand_values);
      if (!result.ok()) {
        if (absl::IsUnimplemented(result.status()) || absl::IsResourceExhausted(result.status())) {
          return result.status();
        }
        return absl::Status(result.status().code(),
                            absl::StrCat("evaluating '", instr->name(), "' in '", comp.name(),
                                         "': ", result.status().message()));
      }
      RETURN_IF_ERROR(
          Progress(result->shape().IsArray() && !forwards ? result->element_count() : int64_t{1}));
      values[k] = std::move(*result);
      value_of[k] = &values[k];
      for (int32_t slot : plan.release_after[k]) values[slot] = Literal();
    }
    if (value_of[plan.root_slot] != &values[plan.root_slot]) return *value_of[plan.root_slot];
    return std::move(values[plan.root_slot]);
  }

 private:
  // A computation's evaluation order, computed once per computation: operands
  // as slots in that order, and the slots whose last use each step is.
  struct Plan {
    std::vector<const HloInstruction*> order;
    std::vector<std::vector<int32_t>> operand_slots;
    std::vector<std::vector<int32_t>> release_after;
    int32_t root_slot = 0;
  };

  absl::StatusOr<const Plan*> PlanFor(const HloComputation& comp) {
    std::unique_ptr<Plan>& cached = plans_[&comp];
    if (!cached) {
      ASSIGN_OR_RETURN(cached, MakePlan(comp));
    }
    return cached.get();
  }

  // Fails on what the verifier rejects and evaluation cannot survive: a
  // cycle, an operand from elsewhere, no root.
  static absl::StatusOr<std::unique_ptr<Plan>> MakePlan(const HloComputation& comp) {
    auto plan = std::make_unique<Plan>();
    plan->order = eval::PostOrder(comp);
    absl::flat_hash_map<const HloInstruction*, int32_t> slot;
    for (size_t k = 0; k < plan->order.size(); ++k) slot[plan->order[k]] = static_cast<int32_t>(k);
    std::vector<int32_t> last_use(plan->order.size(), -1);
    plan->operand_slots.resize(plan->order.size());
    plan->release_after.resize(plan->order.size());
    for (size_t k = 0; k < plan->order.size(); ++k) {
      for (const HloInstruction* op : plan->order[k]->operands()) {
        auto it = slot.find(op);
        if (it == slot.end() || it->second >= static_cast<int32_t>(k)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "computation '", comp.name(), "': operand '", op->name(), "' of '",
              plan->order[k]->name(),
              it == slot.end() ? "' is not in the computation" : "' is part of a cycle"));
        }
        plan->operand_slots[k].push_back(it->second);
        last_use[it->second] = static_cast<int32_t>(k);
      }
    }
    auto root = slot.find(comp.root_instruction());
    if (root == slot.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("computation '", comp.name(), "' has no root instruction"));
    }
    plan->root_slot = root->second;
    for (size_t s = 0; s < last_use.size(); ++s) {
      if (last_use[s] >= 0 && static_cast<int32_t>(s) != plan->root_slot) {
        plan->release_after[last_use[s]].push_back(static_cast<int32_t>(s));
      }
    }
    return plan;
  }

  // tuple and get-tuple-element pass values on: an operand used for the last
  // time is moved rather than copied. NotFound for any other instruction, or
  // anything unusual (the op families then report it).
  static absl::StatusOr<Literal> Forward(const Plan& plan, size_t k, std::vector<Literal>& values,
                                         const std::vector<const Literal*>& value_of) {
    const HloInstruction* instr = plan.order[k];
    const std::vector<int32_t>& slots = plan.operand_slots[k];
    auto last_use = [&](int32_t slot) {
      return value_of[slot] == &values[slot] && std::count(slots.begin(), slots.end(), slot) == 1 &&
             std::count(plan.release_after[k].begin(), plan.release_after[k].end(), slot) == 1;
    };
    if (instr->opcode() == HloOpcode::kTuple) {
      std::vector<Literal> elements;
      elements.reserve(slots.size());
      for (int32_t slot : slots) {
        elements.push_back(last_use(slot) ? std::move(values[slot]) : *value_of[slot]);
      }
      return Literal::Tuple(std::move(elements));
    }
    if (instr->opcode() == HloOpcode::kGetTupleElement && slots.size() == 1) {
      const Literal& tuple = *value_of[slots[0]];
      const int64_t index = instr->attrs().tuple_index;
      if (tuple.shape().IsTuple() && index >= 0 &&
          index < static_cast<int64_t>(tuple.tuple_elements().size())) {
        if (last_use(slots[0])) return std::move(values[slots[0]].tuple_elements()[index]);
        return tuple.tuple_elements()[index];
      }
    }
    return absl::NotFoundError("not forwarded");
  }

  // Running out of memory on a huge intermediate is an error, not an abort.
  absl::StatusOr<Literal> EvaluateGuarded(const HloInstruction& instr,
                                          absl::Span<const Literal* const> operands) {
    try {
      return EvaluateInstruction(instr, operands, *this);
    } catch (const std::bad_alloc&) {
      return absl::ResourceExhaustedError(
          absl::StrCat("out of memory evaluating '", instr.name(), "'"));
    } catch (const std::length_error&) {
      return absl::ResourceExhaustedError(
          absl::StrCat("out of memory evaluating '", instr.name(), "'"));
    }
  }

  EvalOptions options_;
  int64_t replica_, partition_;
  Rendezvous* rendezvous_;
  absl::flat_hash_map<const HloInstruction*, int64_t> sequence_;
  uint64_t rng_state_ = 0;
  int64_t elements_ = 0;
  int64_t steps_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  int depth_ = 0;
  absl::flat_hash_map<const HloComputation*, std::unique_ptr<Plan>> plans_;
};

}  // namespace

void RegisterCustomCallTarget(const std::string& target, CustomCallFn fn) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  Registry()[target] = std::move(fn);
}

const CustomCallFn* FindCustomCallTarget(const std::string& target) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  auto it = Registry().find(target);
  return it == Registry().end() ? nullptr : &it->second;
}

namespace eval {

absl::Status Unsupported(const HloInstruction& instr, absl::string_view feature) {
  return absl::UnimplementedError(absl::StrCat(HloOpcodeString(instr.opcode()), " '", instr.name(),
                                               "': unsupported ", feature));
}

std::vector<int64_t> Strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.rank(), 1);
  for (int64_t i = shape.rank() - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape.dimensions(i + 1);
  return strides;
}

Literal ResultLiteral(const HloInstruction& instr) {
  Shape s = instr.shape();
  s.clear_layout();
  return Literal(s);
}

}  // namespace eval

absl::StatusOr<Literal> EvaluateInstruction(const HloInstruction& instr,
                                            absl::Span<const Literal* const> operands,
                                            EvalContext& context) {
  using Family = absl::StatusOr<Literal> (*)(const HloInstruction&,
                                             absl::Span<const Literal* const>, EvalContext&);
  static constexpr Family kFamilies[] = {
      eval::EvalElementwise, eval::EvalDataMovement, eval::EvalLinalg,     eval::EvalReduction,
      eval::EvalSharding,    eval::EvalControl,      eval::EvalCollective, eval::EvalRandom};
  for (const Literal* op : operands) {
    if (op->elided())
      return eval::Unsupported(instr, "operand whose constant values were elided ({...})");
  }
  for (Family f : kFamilies) {
    absl::StatusOr<Literal> r = f(instr, operands, context);
    if (r.ok() || !absl::IsNotFound(r.status())) return r;
  }
  return eval::Unsupported(instr, absl::StrCat("opcode ", HloOpcodeString(instr.opcode())));
}

absl::StatusOr<Literal> Evaluate(const HloModule& module, absl::Span<const Literal> args,
                                 const EvalOptions& options) {
  if (!module.entry_computation())
    return absl::InvalidArgumentError("module has no entry computation");
  DeviceEvaluator device(options, 0, 0, nullptr);
  std::vector<const Literal*> ptrs;
  for (const Literal& a : args) ptrs.push_back(&a);
  return device.EvaluateComputation(*module.entry_computation(), ptrs);
}

absl::StatusOr<Literal> EvaluateStandalone(const HloInstruction& instr,
                                           absl::Span<const Literal* const> operands,
                                           const EvalOptions& options) {
  DeviceEvaluator device(options, 0, 0, nullptr);
  return EvaluateInstruction(instr, operands, device);
}

absl::StatusOr<std::vector<Literal>> EvaluateReplicated(
    const HloModule& module, const std::vector<std::vector<Literal>>& args,
    const EvalOptions& options) {
  if (!module.entry_computation())
    return absl::InvalidArgumentError("module has no entry computation");
  return EvaluateComputationReplicated(*module.entry_computation(), args, options);
}

absl::StatusOr<std::vector<Literal>> EvaluateComputationReplicated(
    const HloComputation& computation, const std::vector<std::vector<Literal>>& args,
    const EvalOptions& options) {
  const int64_t devices = options.replica_count * options.num_partitions;
  if (devices < 1) return absl::InvalidArgumentError("need at least one device");
  if (static_cast<int64_t>(args.size()) != devices) {
    return absl::InvalidArgumentError(
        absl::StrCat("need arguments for ", devices, " devices, got ", args.size()));
  }
  Rendezvous rendezvous(devices);
  std::vector<absl::StatusOr<Literal>> results(devices, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (int64_t d = 0; d < devices; ++d) {
    threads.emplace_back([&, d] {
      DeviceEvaluator device(options, d / options.num_partitions, d % options.num_partitions,
                             devices > 1 ? &rendezvous : nullptr);
      std::vector<const Literal*> ptrs;
      for (const Literal& a : args[d]) ptrs.push_back(&a);
      results[d] = device.EvaluateComputation(computation, ptrs);
      if (!results[d].ok()) rendezvous.Abort();
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<Literal> out;
  for (int64_t d = 0; d < devices; ++d) {
    if (!results[d].ok() && !absl::IsAborted(results[d].status())) return results[d].status();
  }
  for (int64_t d = 0; d < devices; ++d) {
    if (!results[d].ok()) return results[d].status();
    out.push_back(std::move(*results[d]));
  }
  return out;
}

}  // namespace xlite
