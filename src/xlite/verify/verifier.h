// The HLO verifier: structural rules, shapes against shape inference, and the
// async and aliasing invariants of XLA's designs. Each error names the
// instruction, its computation and the rule broken.
#ifndef XLITE_VERIFY_VERIFIER_H_
#define XLITE_VERIFY_VERIFIER_H_

#include "absl/status/status.h"
#include "xlite/ir/module.h"

namespace xlite {

struct VerifyOptions {
  // Check every instruction's declared shape against shape inference.
  bool check_shapes = true;
};

absl::Status VerifyModule(const HloModule& module, const VerifyOptions& options = {});

}  // namespace xlite

#endif  // XLITE_VERIFY_VERIFIER_H_
