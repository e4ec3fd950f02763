// An executable's arguments as runtime::Buffers made once from literals, for
// callers that run it many times as a framework holding its arrays on the
// device does (cpu_bench, e2e_bench, `xlite run`): Next() hands out the
// buffers for one run, with fresh copies of the ones the executable donates
// (a run consumes those), made before the caller starts its clock.
#ifndef XLITE_RUNTIME_ARGUMENT_BUFFERS_H_
#define XLITE_RUNTIME_ARGUMENT_BUFFERS_H_

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "xlite/ir/literal.h"
#include "xlite/runtime/buffer.h"
#include "xlite/runtime/executable.h"

namespace xlite::runtime {

class ArgumentBuffers {
 public:
  // One buffer per array of the entry's parameters (DonationRules' argument
  // order, each in its parameter's layout). Errors: the entry's (tokens among
  // its parameters), a literal structure that does not match, and
  // Buffer::FromLiteral's.
  static absl::StatusOr<ArgumentBuffers> Create(const Executable& exe,
                                                const std::vector<Literal>& args) {
    absl::StatusOr<const DonationRules*> rules = exe.donation_rules();
    if (!rules.ok()) return rules.status();
    ArgumentBuffers a;
    for (const ArgumentLeaf& leaf : (*rules)->arguments()) {
      const Literal* lit =
          leaf.parameter_number >= 0 && leaf.parameter_number < static_cast<int64_t>(args.size())
              ? args[leaf.parameter_number].Subliteral(leaf.parameter_index)
              : nullptr;
      if (lit == nullptr) return absl::InvalidArgumentError("argument structure mismatch");
      absl::StatusOr<std::unique_ptr<Buffer>> b = Buffer::FromLiteral(*lit, leaf.shape);
      if (!b.ok()) return b.status();
      a.masters_.push_back(std::move(*b));
      a.donated_.push_back(leaf.output_leaf.has_value());
    }
    return a;
  }

  // The buffers for the next run (the previous run's copies are freed).
  absl::StatusOr<std::vector<Buffer*>> Next() {
    fresh_.clear();
    std::vector<Buffer*> out;
    for (size_t i = 0; i < masters_.size(); ++i) {
      if (!donated_[i]) {
        out.push_back(masters_[i].get());
        continue;
      }
      absl::StatusOr<std::unique_ptr<Buffer>> copy = masters_[i]->Copy();
      if (!copy.ok()) return copy.status();
      out.push_back(copy->get());
      fresh_.push_back(std::move(*copy));
    }
    return out;
  }

  int64_t bytes() const {
    int64_t n = 0;
    for (const auto& b : masters_) n += b->size_bytes();
    return n;
  }

 private:
  std::vector<std::unique_ptr<Buffer>> masters_;
  std::vector<bool> donated_;
  std::vector<std::unique_ptr<Buffer>> fresh_;
};

}  // namespace xlite::runtime

#endif  // XLITE_RUNTIME_ARGUMENT_BUFFERS_H_
