// Internal to the HLO text parser: the parser class, shared by parser.cc
// (module, computations, instructions), parser_attributes.cc (attribute
// values) and parser_literal.cc (shapes, layouts, literals).
#ifndef XLITE_TEXT_PARSER_INTERNAL_H_
#define XLITE_TEXT_PARSER_INTERNAL_H_

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "xlite/ir/module.h"
#include "xlite/support/status.h"
#include "xlite/text/cursor.h"

namespace xlite::text_internal {

// Nesting deeper than this (tuples, literals, anonymous operands) is rejected
// rather than risking the stack on hostile input.
constexpr int kMaxDepth = 256;

// A constant written as one value for an array (constant(1) for f32[8,8])
// is filled up to this many elements; more is an error saying it is unsupported. The input's
// length bounds every other literal's work: this one would let a line make
// and print hundreds of millions of elements (a fuzzer's bf16[32768,8192]
// constant(1): 36 s, 3 GB). Write broadcast(constant(v)) instead.
constexpr int64_t kMaxSplatElements = int64_t{1} << 20;

struct NameRef {
  std::string name;
  size_t pos;
};

class HloParser {
 public:
  HloParser(absl::string_view text, std::string filename) : c_(text, std::move(filename)) {}

  absl::StatusOr<std::unique_ptr<HloModule>> ParseModule();
  absl::StatusOr<Shape> ParseShapeOnly() {
    ASSIGN_OR_RETURN(Shape s, ParseShape());
    if (!c_.AtEnd()) return c_.Error("extra text after shape");
    return s;
  }

 private:
  // Per-computation parsing scope.
  struct Scope {
    HloComputation* computation = nullptr;
    absl::flat_hash_map<std::string, HloInstruction*> by_name;
  };
  struct PendingCall {
    HloInstruction* instr;
    std::string attr;
    std::vector<NameRef> names;
  };
  struct PendingControl {
    HloInstruction* instr;
    std::vector<NameRef> names;
  };

  // Module structure.
  absl::Status ParseHeader();
  absl::Status ParseHeaderAttribute(const std::string& key, size_t key_pos);
  absl::Status ParseStackFrameSections();
  absl::Status ParseComputation(bool* saw_entry);
  absl::StatusOr<std::unique_ptr<HloComputation>> ParseComputationBody(const std::string& name,
                                                                       size_t name_pos, int depth);
  std::string UniqueComputationName(const std::string& base);
  absl::StatusOr<Shape> ParseSignature();
  absl::Status ParseInstruction(Scope& scope, bool* is_root_out, HloInstruction** out);
  absl::StatusOr<HloInstruction*> ParseInstructionBody(Scope& scope, std::string name,
                                                       size_t name_pos, bool name_given, int depth);
  absl::StatusOr<std::vector<HloInstruction*>> ParseOperands(Scope& scope, int depth);
  absl::StatusOr<HloInstruction*> ParseOperand(Scope& scope, int depth);
  absl::StatusOr<HloInstruction*> ResolveCompactGte(Scope& scope, HloInstruction* base,
                                                    std::vector<int64_t> path, size_t pos);
  absl::Status ResolvePending();
  // Structural rules XLA's parser itself enforces (the rest is the verifier's).
  absl::Status CheckParsedInstruction(HloInstruction& instr, std::optional<HloOpcode> wrapped,
                                      size_t pos);
  absl::Status FinishAsyncSugar(HloInstruction* instr, HloOpcode wrapped, absl::string_view suffix,
                                InstructionAttributes& wrapped_attrs, size_t pos);

  // Attributes.
  absl::Status ParseAttributes(HloInstruction* instr, std::optional<HloOpcode> wrapped,
                               InstructionAttributes* wrapped_attrs, size_t opcode_pos,
                               bool allow_attributes);
  absl::Status ParseAttributeValue(const std::string& key, size_t key_pos, HloInstruction* instr,
                                   InstructionAttributes& a);

  // Values.
  absl::StatusOr<Shape> ParseShape(int depth = 0);
  absl::StatusOr<Layout> ParseLayout(const Shape& shape);
  absl::StatusOr<std::vector<DimLevel>> ParseDimLevels();
  absl::Status CheckSparseLayout(const Layout& l, const Shape& shape, size_t pos);
  absl::StatusOr<Literal> ParseLiteral(const Shape& shape, int depth = 0);
  // "s32[2]{0} {1, 2}" or "( f32[] 1, s32[] 2 )": each leaf carries its shape.
  absl::StatusOr<Literal> ParseLiteralWithShape(int depth);
  absl::Status ParseArrayLiteral(Literal& lit);
  absl::Status ParseLiteralElement(Literal& lit, int64_t index);
  absl::StatusOr<std::vector<int64_t>> ParseShapeIndex();
  absl::StatusOr<OpMetadata> ParseMetadata();
  absl::StatusOr<HloSharding> ParseSharding(int depth = 0);
  absl::Status ParseShardingBody(HloSharding& s);
  absl::Status ParseNamedShardingBody(HloSharding& s);
  absl::StatusOr<ShardingMesh> ParseShardingMesh();
  absl::StatusOr<std::string> ParseQuotedAxisName();
  absl::StatusOr<MeshAxisRef> ParseMeshAxisRef(const ShardingMesh& mesh);
  absl::StatusOr<std::vector<MeshAxisRef>> ParseMeshAxisList(const ShardingMesh& mesh);
  absl::StatusOr<std::vector<NamedSharding::Dim>> ParseNamedDims(const ShardingMesh& mesh);
  absl::StatusOr<std::vector<OpMetadata>> ParseMetadataList();
  absl::StatusOr<ReplicaGroups> ParseReplicaGroups();
  absl::StatusOr<ResultAccuracy> ParseResultAccuracy();
  absl::StatusOr<Statistics> ParseStatistics();
  absl::StatusOr<std::string> ParseOriginalValue();
  absl::Status ParseOriginalArray();
  absl::StatusOr<std::string> ParseOriginRecoveryTable();
  absl::StatusOr<Window> ParseWindow();
  absl::StatusOr<ConvolutionDimensionNumbers> ParseDimLabels();
  absl::StatusOr<std::vector<SliceDimension>> ParseSlice();
  absl::StatusOr<std::vector<PaddingDimension>> ParsePadding();
  absl::StatusOr<FrontendAttributes> ParseFrontendAttributes();
  absl::StatusOr<std::vector<NameRef>> ParseNameList();
  absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> ParsePairs();
  absl::StatusOr<std::vector<int64_t>> ParseDxD(absl::string_view what);
  absl::StatusOr<std::string> ParseEnum(absl::string_view what,
                                        std::initializer_list<absl::string_view> allowed);
  absl::StatusOr<std::vector<bool>> ParseBoolList();

  Cursor c_;
  std::unique_ptr<HloModule> module_;
  std::vector<PendingCall> pending_calls_;
  absl::flat_hash_set<std::string> computation_names_;
  int inline_depth_ = 0;
  int recovery_depth_ = 0;  // origin_recovery_table modules inside each other
  absl::flat_hash_map<std::string, int> name_uses_;
  Scope* current_scope_ = nullptr;
  std::vector<std::unique_ptr<HloComputation>> generated_;  // async wrapped computations
};

// True if the text at the cursor starts a shape ("f32[", "(", "b(").
bool StartsShape(Cursor& c);

}  // namespace xlite::text_internal

#endif  // XLITE_TEXT_PARSER_INTERNAL_H_
