// Donation on real aliasing configurations: every XLA corpus module with
// input_output_alias or buffer_donor (hlo_file, parser_test) that parses and
// verifies, and the JAX programs in their three forms. For each, the rules
// are built from the module as read and after PlanMemory (with its
// verdicts, so buffer_donor pairs count); then, with arguments allocated,
// one call donates every aliased argument (each aliased output must be
// backed by its argument's own memory, the argument deleted afterwards) and
// one call donates none (copy protection everywhere, the inputs unchanged;
// must-alias parameters refused). Skips loudly without the corpus.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "xlite/buffers/plan_memory.h"
#include "xlite/runtime/donation.h"
#include "xlite/stablehlo/import.h"
#include "xlite/text/parser.h"
#include "xlite/verify/verifier.h"
#include "xlite/vhlo/upgrade.h"

namespace xlite::runtime {
namespace {
namespace XLITE_UNITY_ID {

namespace fs = std::filesystem;

fs::path Corpus() {
  const char* env = std::getenv("XLITE_CORPUS");
  return env ? fs::path(env) : fs::path("../shared/corpus");
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Arguments above this many bytes in all are not allocated (the llama
// benchmark modules); their rules are still built and checked.
constexpr int64_t kMaxArgumentBytes = int64_t{256} << 20;

struct Tally {
  int modules = 0, simulated = 0, too_large = 0, aliased_arguments = 0, donor_pairs = 0,
      must_alias = 0;
  std::vector<std::string> failures;
  std::vector<std::string> unsupported;  // shapes Buffer refuses (Unimplemented)
};

// Allocates the arguments, donates all, then none; checks the effects.
void Simulate(const DonationRules& rules, const std::string& label, Tally& tally) {
  std::vector<std::unique_ptr<Buffer>> owned;
  std::vector<Buffer*> args;
  int64_t bytes = 0;
  std::vector<const Shape*> shapes;
  for (const ArgumentLeaf& leaf : rules.arguments()) shapes.push_back(&leaf.shape);
  for (const OutputLeaf& leaf : rules.outputs()) shapes.push_back(&leaf.shape);
  for (size_t k = 0; k < shapes.size(); ++k) {
    absl::StatusOr<int64_t> size = BufferSizeBytes(*shapes[k]);
    if (size.status().code() == absl::StatusCode::kUnimplemented) {
      tally.unsupported.push_back(label + ": " + std::string(size.status().message()));
      return;
    }
    if (!size.ok()) {
      tally.failures.push_back(label + ": " + std::string(size.status().message()));
      return;
    }
    if (k < rules.arguments().size()) bytes += *size;
  }
  if (bytes > kMaxArgumentBytes) {
    ++tally.too_large;
    return;
  }
  for (const ArgumentLeaf& leaf : rules.arguments()) {
    absl::StatusOr<std::unique_ptr<Buffer>> buffer = Buffer::Allocate(leaf.shape);
    if (!buffer.ok()) {
      tally.failures.push_back(label + ": " + std::string(buffer.status().message()));
      return;
    }
    std::memset((*buffer)->data(), 0x5a, (*buffer)->size_bytes());
    args.push_back(buffer->get());
    owned.push_back(*std::move(buffer));
  }
  ++tally.simulated;
  auto fresh_outputs = [&](const PreparedArguments& prepared) {
    std::vector<std::unique_ptr<Buffer>> outputs(rules.outputs().size());
    for (size_t j = 0; j < outputs.size(); ++j) {
      if (prepared.output_is_aliased(static_cast<int64_t>(j))) continue;
      outputs[j] = *Buffer::AllocateUninitialized(rules.outputs()[j].shape);
    }
    return outputs;
  };

  // Nothing donated: copy protection, or an error for must-alias.
  absl::flat_hash_set<int64_t> none;
  bool any_must = false;
  for (int64_t i = 0; i < static_cast<int64_t>(args.size()); ++i) {
    none.insert(i);
    any_must |= rules.arguments()[i].output_leaf.has_value() &&
                rules.arguments()[i].alias_kind == AliasKind::kMustAlias;
  }
  {
    absl::StatusOr<std::unique_ptr<PreparedArguments>> prepared =
        PreparedArguments::Prepare(rules, args, none);
    if (any_must != !prepared.ok()) {
      tally.failures.push_back(
          label + ": nothing donated: " +
          (prepared.ok() ? "no must-alias error" : std::string(prepared.status().message())));
      return;
    }
    if (prepared.ok()) {
      for (size_t j = 0; j < rules.outputs().size(); ++j) {
        const std::optional<int64_t> arg = rules.outputs()[j].aliased_argument;
        if (!arg) continue;
        auto* out = static_cast<uint8_t*>((*prepared)->aliased_output_data(j));
        if (out == args[*arg]->data()) {
          tally.failures.push_back(label + ": copy protection shares the input's memory");
        }
        if (args[*arg]->size_bytes() > 0) out[0] ^= 0xff;  // the run writes the output
      }
      absl::StatusOr<std::vector<std::unique_ptr<Buffer>>> outputs =
          (*prepared)->Finish(fresh_outputs(**prepared));
      if (!outputs.ok()) {
        tally.failures.push_back(label + ": " + std::string(outputs.status().message()));
        return;
      }
      for (size_t i = 0; i < args.size(); ++i) {
        const auto* data = static_cast<const uint8_t*>(args[i]->data());
        if (args[i]->is_deleted() || (args[i]->size_bytes() > 0 && data[0] != 0x5a)) {
          tally.failures.push_back(label + ": a copy-protected input changed");
          return;
        }
      }
    }
  }

  // Everything aliased donated.
  std::vector<void*> memory;
  for (Buffer* b : args) memory.push_back(b->data());
  absl::StatusOr<std::unique_ptr<PreparedArguments>> prepared =
      PreparedArguments::Prepare(rules, args, {});
  if (!prepared.ok()) {
    tally.failures.push_back(label + ": all donated: " + std::string(prepared.status().message()));
    return;
  }
  for (size_t j = 0; j < rules.outputs().size(); ++j) {
    const std::optional<int64_t> arg = rules.outputs()[j].aliased_argument;
    if (arg && (*prepared)->aliased_output_data(j) != memory[*arg]) {
      tally.failures.push_back(label + ": a donated output is not backed by its argument");
    }
  }
  absl::StatusOr<std::vector<std::unique_ptr<Buffer>>> outputs =
      (*prepared)->Finish(fresh_outputs(**prepared));
  if (!outputs.ok()) {
    tally.failures.push_back(label + ": " + std::string(outputs.status().message()));
    return;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgumentLeaf& leaf = rules.arguments()[i];
    if (args[i]->is_deleted() != leaf.output_leaf.has_value()) {
      tally.failures.push_back(label + ": " + rules.ArgumentName(i) +
                               (leaf.output_leaf ? " donated but not deleted" : " deleted"));
    }
    if (leaf.output_leaf && (*outputs)[*leaf.output_leaf]->data() != memory[i]) {
      tally.failures.push_back(label + ": output does not own the donated memory");
    }
  }
}

void Check(HloModule& module, const std::string& label, Tally& tally) {
  ++tally.modules;
  absl::StatusOr<DonationRules> raw = DonationRules::FromModule(module);
  if (!raw.ok()) {
    tally.failures.push_back(label + " (as read): " + std::string(raw.status().message()));
    return;
  }
  absl::StatusOr<MemoryPlan> plan = PlanMemory(module);
  if (!plan.ok()) return;  // the planner's refusals are buffer_assignment_corpus_test's
  absl::StatusOr<DonationRules> rules = DonationRules::FromModule(module, plan->donations);
  if (!rules.ok()) {
    tally.failures.push_back(label + " (planned): " + std::string(rules.status().message()));
    return;
  }
  for (const ArgumentLeaf& leaf : rules->arguments()) {
    if (!leaf.output_leaf) continue;
    ++tally.aliased_arguments;
    tally.donor_pairs += leaf.from_buffer_donor;
    tally.must_alias += leaf.alias_kind == AliasKind::kMustAlias;
  }
  Simulate(*rules, label, tally);
}

TEST(DonationCorpus, XlaModulesWithAliasing) {
  const fs::path dir = Corpus() / "xla";
  if (!fs::exists(dir)) GTEST_SKIP() << "corpus not found at " << dir << " (set XLITE_CORPUS)";
  Tally tally;
  int unreadable = 0;
  for (const char* kind : {"hlo_file", "parser_test"}) {
    if (!fs::exists(dir / kind)) continue;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir / kind)) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      const std::string text = ReadFile(file);
      if (!absl::StrContains(text, "input_output_alias") &&
          !absl::StrContains(text, "buffer_donor")) {
        continue;
      }
      const std::string label = std::string(kind) + "/" + file.filename().string();
      absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, label);
      if (!module.ok() || !VerifyModule(**module).ok()) {
        ++unreadable;  // reported by xla_corpus_test
        continue;
      }
      Check(**module, label, tally);
    }
  }
  std::printf(
      "XLA corpus: %d modules with aliasing (%d more do not parse or verify), %d simulated "
      "(%d with arguments over 256 MiB not); "
      "%d aliased arguments (%d from buffer_donor pairs, %d must-alias); %zu failures\n",
      tally.modules, unreadable, tally.simulated, tally.too_large, tally.aliased_arguments,
      tally.donor_pairs, tally.must_alias, tally.failures.size());
  std::printf("  not simulated, shapes Buffer does not hold (Unimplemented): %zu\n",
              tally.unsupported.size());
  for (const std::string& u : tally.unsupported) std::printf("    %s\n", u.c_str());
  for (const std::string& f : tally.failures) ADD_FAILURE() << f;
  EXPECT_GT(tally.modules, 100);
  EXPECT_GT(tally.aliased_arguments, 0);
}

TEST(DonationCorpus, JaxProgramsInThreeForms) {
  const fs::path dir = Corpus() / "jax";
  if (!fs::exists(dir)) GTEST_SKIP() << "corpus not found at " << dir << " (set XLITE_CORPUS)";
  Tally tally;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_directory()) continue;
    for (const char* form : {"before_optimizations.txt", "stablehlo.mlir", "portable.mlir.bc"}) {
      const fs::path path = entry.path() / form;
      if (!fs::exists(path)) continue;
      const std::string text = ReadFile(path);
      const std::string label = entry.path().filename().string() + "/" + form;
      absl::StatusOr<std::unique_ptr<HloModule>> module =
          std::string(form) == "before_optimizations.txt" ? ParseHloModule(text, label)
          : std::string(form) == "stablehlo.mlir"
              ? std::move(stablehlo::ImportStablehlo(text, label, false).front().module)
              : vhlo::ImportPortableArtifact(text, label);
      if (!module.ok()) {
        tally.failures.push_back(label + ": " + std::string(module.status().message()));
        continue;
      }
      Check(**module, label, tally);
    }
  }
  std::printf("JAX programs: %d modules, %d simulated, %d aliased arguments; %zu failures\n",
              tally.modules, tally.simulated, tally.aliased_arguments, tally.failures.size());
  for (const std::string& f : tally.failures) ADD_FAILURE() << f;
  EXPECT_EQ(tally.modules, 21);
  // adam_mlp_train_step's StableHLO form donates through tf.aliasing_output.
  EXPECT_GT(tally.aliased_arguments, 0);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::runtime
