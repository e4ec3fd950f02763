// Instruction building shared by the passes that put library calls into the
// shapes the CPU runtime's kernels take (dot-decomposer,
// conv-canonicalization): transposes and reshapes next to an instruction,
// checked by shape inference, with module-unique names, and the replacement
// of the original instruction.
#ifndef XLITE_PASSES_CANONICALIZE_UTIL_H_
#define XLITE_PASSES_CANONICALIZE_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "xlite/ir/module.h"

namespace xlite::canonicalize {

class InstructionAdder {
 public:
  explicit InstructionAdder(const HloModule& module);

  // `instr` added to like's computation, named "<like>.<suffix>" (made
  // unique), with like's metadata; Internal if shape inference disagrees
  // with its shape (a bug in the caller).
  absl::StatusOr<HloInstruction*> Add(const HloInstruction& like,
                                      std::unique_ptr<HloInstruction> instr,
                                      absl::string_view suffix);
  // transpose(operand), dimensions={permutation}; the operand itself for the
  // identity permutation.
  absl::StatusOr<HloInstruction*> Transpose(const HloInstruction& like, HloInstruction* operand,
                                            const std::vector<int64_t>& permutation,
                                            absl::string_view suffix);
  // reshape(operand) to `dims`; the operand itself when it has them already.
  absl::StatusOr<HloInstruction*> Reshape(const HloInstruction& like, HloInstruction* operand,
                                          const std::vector<int64_t>& dims,
                                          absl::string_view suffix);

  // Makes `replacement` stand for `old` (users, root, control edges,
  // sharding, frontend attributes) and deletes `old`. The instructions added
  // since the last Replace move to old's place in the instruction list, so a
  // scheduled module stays in a valid order. Shapes must be equal.
  void Replace(HloInstruction* old, HloInstruction* replacement);

 private:
  std::string UniqueName(const std::string& base);
  absl::flat_hash_set<std::string> names_;
  std::vector<HloInstruction*> added_;
};

// A shape of `type` and `dims`, with the default layout when `like` has a
// layout (parsed modules do).
Shape ArrayShapeLike(const Shape& like, PrimitiveType type, const std::vector<int64_t>& dims);

// The dimensions of a rank-`rank` dot operand that are neither batch nor
// contracting, ascending.
std::vector<int64_t> DotFreeDimensions(int64_t rank, const std::vector<int64_t>& batch,
                                       const std::vector<int64_t>& contracting);

// Dimension d of `shape` for each d in `order`.
std::vector<int64_t> PermutedDims(const Shape& shape, const std::vector<int64_t>& order);

}  // namespace xlite::canonicalize

#endif  // XLITE_PASSES_CANONICALIZE_UTIL_H_
