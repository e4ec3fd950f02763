// The direction-independent half of the StableHLO <-> VHLO conversions.
//
// Upgrader (upgrade.cc) and Downgrader (downgrade.cc) both rebuild an op tree
// op by op: each new op gets a converted name and attributes, operands that
// point at the new values, results and block arguments of converted types,
// and copies of the regions and blocks. Only naming the op, converting its
// attributes and converting a type differ by direction; those are the hooks.
#ifndef XLITE_VHLO_OP_TREE_REWRITER_H_
#define XLITE_VHLO_OP_TREE_REWRITER_H_

#include <cstddef>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "xlite/stablehlo/mlir.h"
#include "xlite/support/status.h"

namespace xlite::vhlo {

class OpTreeRewriter {
 public:
  virtual ~OpTreeRewriter() = default;

 protected:
  // A new op for `op` (nested in `parent`, null at the top) and, recursively,
  // for every op in its regions. Operands defined later in the tree and
  // successors stay null until ResolveForwardReferences.
  absl::StatusOr<mlir::OwningOp> RewriteOp(const mlir::Operation& op,
                                           const mlir::Operation* parent);

  // Points the operands and successors left null by RewriteOp at their new
  // values and blocks, once the whole tree has been rewritten. The errors are
  // InvalidArgument and name the op.
  absl::Status ResolveForwardReferences();

  // Replaces the types nested in `type` (tuple elements, function results)
  // by `convert(nested)`: both directions recurse into them the same way.
  template <typename Convert>
  static absl::Status ConvertNestedTypes(mlir::Type& type, const Convert& convert) {
    for (mlir::Type& t : type.elements) {
      ASSIGN_OR_RETURN(t, convert(t));
    }
    for (mlir::Type& t : type.results) {
      ASSIGN_OR_RETURN(t, convert(t));
    }
    return absl::OkStatus();
  }

  // Hook: sets `out`'s name and attributes from `op`'s.
  virtual absl::Status ConvertNameAndAttributes(const mlir::Operation& op,
                                                const mlir::Operation* parent,
                                                mlir::Operation& out) = 0;
  // Hook: the type of a result or block argument of `op`.
  virtual absl::StatusOr<mlir::Type> ConvertValueType(const mlir::Type& type,
                                                      const mlir::Operation& op) const = 0;

 private:
  absl::flat_hash_map<const mlir::Value*, mlir::Value*> values_;
  absl::flat_hash_map<const mlir::Block*, mlir::Block*> blocks_;
  std::vector<std::tuple<mlir::Operation*, size_t, const mlir::Value*>> forward_operands_;
  std::vector<std::tuple<mlir::Operation*, size_t, const mlir::Block*>> forward_successors_;
};

}  // namespace xlite::vhlo

#endif  // XLITE_VHLO_OP_TREE_REWRITER_H_
