#include "xlite/passes/registry.h"

#include <functional>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "xlite/passes/algebraic_simplifier.h"
#include "xlite/passes/batchnorm_expander.h"
#include "xlite/passes/call_inliner.h"
#include "xlite/passes/change_op_data_type.h"
#include "xlite/passes/constant_folding.h"
#include "xlite/passes/conv_canonicalization.h"
#include "xlite/passes/copy_insertion.h"
#include "xlite/passes/cse.h"
#include "xlite/passes/dce.h"
#include "xlite/passes/dot_decomposer.h"
#include "xlite/passes/dynamic_padder.h"
#include "xlite/passes/flatten_call_graph.h"
#include "xlite/passes/layout_normalization.h"
#include "xlite/passes/ragged_dot_rewriter.h"
#include "xlite/passes/rng_expander.h"
#include "xlite/passes/scaled_dot_rewriter.h"
#include "xlite/passes/scan_expander.h"
#include "xlite/passes/sub_byte_normalization.h"
#include "xlite/passes/transpose_folding.h"
#include "xlite/passes/tuple_simplifier.h"
#include "xlite/passes/while_loop_constant_sinking.h"
#include "xlite/passes/while_loop_invariant_code_motion.h"
#include "xlite/passes/while_loop_simplifier.h"
#include "xlite/passes/zero_sized_hlo_elimination.h"

namespace xlite {
namespace {

using Factory = std::function<std::unique_ptr<HloPass>()>;

// One row per pass.
const std::map<std::string, Factory, std::less<>>& Factories() {
  static const auto* kFactories = new std::map<std::string, Factory, std::less<>>{
      {"algsimp", [] { return std::make_unique<AlgebraicSimplifier>(); }},
      {"batchnorm-expander", [] { return std::make_unique<BatchNormExpander>(); }},
      {"call-inliner", [] { return std::make_unique<CallInliner>(); }},
      {"change-op-data-type", [] { return ChangeOpDataType::ForHostLinalg(); }},
      {"constant-folding", [] { return std::make_unique<ConstantFolding>(); }},
      {"conv-canonicalization", [] { return std::make_unique<ConvCanonicalization>(); }},
      {"copy-insertion", [] { return std::make_unique<CopyInsertion>(); }},
      {"cse", [] { return std::make_unique<HloCse>(); }},
      {"dce", [] { return std::make_unique<HloDce>(); }},
      {"dot-decomposer", [] { return std::make_unique<DotDecomposer>(); }},
      {"dynamic-padder", [] { return std::make_unique<DynamicPadder>(); }},
      {"flatten-call-graph", [] { return std::make_unique<FlattenCallGraph>(); }},
      {"layout-normalization", [] { return std::make_unique<LayoutNormalization>(); }},
      {"ragged-dot-rewriter", [] { return std::make_unique<RaggedDotRewriter>(); }},
      {"rng-expander", [] { return std::make_unique<RngExpander>(); }},
      {"scaled-dot-rewriter", [] { return std::make_unique<ScaledDotRewriter>(); }},
      {"scan-expander", [] { return std::make_unique<ScanExpander>(); }},
      {"sub-byte-size-removal",
       [] {
         return std::make_unique<SubByteNormalization>(
             SubByteNormalization::Mode::kRemoveElementSize);
       }},
      {"sub-byte-size-setter",
       [] {
         return std::make_unique<SubByteNormalization>(SubByteNormalization::Mode::kSetElementSize);
       }},
      {"transpose-folding", [] { return std::make_unique<TransposeFolding>(); }},
      {"tuple-simplifier", [] { return std::make_unique<TupleSimplifier>(); }},
      {"while-loop-constant-sinking", [] { return std::make_unique<WhileLoopConstantSinking>(); }},
      {"while-loop-invariant-code-motion",
       [] { return std::make_unique<WhileLoopInvariantCodeMotion>(); }},
      {"while-loop-simplifier", [] { return std::make_unique<WhileLoopSimplifier>(); }},
      {"zero-sized-hlo-elimination", [] { return std::make_unique<ZeroSizedHloElimination>(); }},
  };
  return *kFactories;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HloPass>> CreatePass(absl::string_view name) {
  auto it = Factories().find(name);
  if (it == Factories().end()) {
    return absl::NotFoundError(absl::StrCat(
        "unknown pass '", name, "' (known: ", absl::StrJoin(KnownPassNames(), ", "), ")"));
  }
  return it->second();
}

std::vector<std::string> KnownPassNames() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : Factories()) names.push_back(name);
  return names;
}

}  // namespace xlite
