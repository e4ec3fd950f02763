// Every collective instruction of the XLA corpus modules (all-reduce,
// all-gather, reduce-scatter, all-to-all, collective-permute,
// collective-broadcast), run on random inputs by the interpreter's own code
// (EvaluateInstruction on one thread per device) and by the library (as a CPU
// thunk would call it); the results must be bitwise identical. Reads
// $XLITE_CORPUS/xla (../shared/corpus) and skips loudly without it.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "xlite/collectives/collectives_test_util.h"
#include "xlite/ir/module.h"
#include "xlite/text/parser.h"

namespace xlite::collectives {
namespace {
namespace XLITE_UNITY_ID {

namespace fs = std::filesystem;
using testing::OnThreads;

// The interpreter's view of one device: collectives meet through a Rendezvous
// among all devices; called computations run on the interpreter.
class ThreadContext : public EvalContext {
 public:
  ThreadContext(int64_t device, const EvalOptions& options, std::shared_ptr<Rendezvous> rendezvous)
      : device_(device), options_(options), rendezvous_(std::move(rendezvous)) {}
  absl::StatusOr<Literal> Call(const HloComputation& computation,
                               absl::Span<const Literal* const> args) override {
    std::vector<std::vector<Literal>> per_device(1);
    for (const Literal* a : args) per_device[0].push_back(*a);
    ASSIGN_OR_RETURN(std::vector<Literal> r,
                     EvaluateComputationReplicated(computation, per_device, EvalOptions{}));
    return std::move(r[0]);
  }
  int64_t replica_id() const override { return device_ / options_.num_partitions; }
  int64_t partition_id() const override { return device_ % options_.num_partitions; }
  const EvalOptions& options() const override { return options_; }
  absl::StatusOr<std::vector<Literal>> Exchange(const HloInstruction& instr,
                                                const Literal& value) override {
    RendezvousKey key{0, 0, {}};
    for (int64_t d = 0; d < options_.replica_count * options_.num_partitions; ++d) {
      key.devices.push_back(d);
    }
    ASSIGN_OR_RETURN(std::shared_ptr<Meeting> meeting,
                     rendezvous_->Arrive(key, device_, &value, std::chrono::seconds(60)));
    std::vector<Literal> all;
    for (const void* v : meeting->values()) all.push_back(*static_cast<const Literal*>(v));
    RETURN_IF_ERROR(meeting->Depart(device_, std::chrono::seconds(60)));
    return all;
  }
  absl::Status Progress(int64_t) override { return absl::OkStatus(); }
  uint64_t& rng_state() override { return rng_; }

 private:
  int64_t device_;
  EvalOptions options_;
  std::shared_ptr<Rendezvous> rendezvous_;
  uint64_t rng_ = 0;
};

// What decides a collective's result apart from its inputs' values.
std::string FormOf(const HloInstruction& instr, const HloModule& m) {
  std::string key =
      absl::StrCat(m.config().replica_count, "x", m.config().num_partitions, " ",
                   HloOpcodeString(instr.opcode()), " ", instr.shape().ToString(false));
  for (const HloInstruction* op : instr.operands())
    absl::StrAppend(&key, " ", op->shape().ToString(false));
  const InstructionAttributes& a = instr.attrs();
  absl::StrAppend(&key, " ch", a.channel_id.has_value(), " g", a.use_global_device_ids);
  if (a.replica_groups.has_value()) {
    const ReplicaGroups& g = *a.replica_groups;
    absl::StrAppend(&key, " rg", g.mesh, g.iota, absl::StrJoin(g.iota_group_shape, ","), "|",
                    absl::StrJoin(g.iota_reshape, ","), "|", absl::StrJoin(g.iota_transpose, ","));
    for (const auto& group : g.groups) absl::StrAppend(&key, "{", absl::StrJoin(group, ","), "}");
  }
  if (a.dimensions.has_value()) absl::StrAppend(&key, " d", absl::StrJoin(*a.dimensions, ","));
  for (const auto& [x, y] : a.source_target_pairs.value_or(SourceTargetPairs{})) {
    absl::StrAppend(&key, " ", x, ">", y);
  }
  for (const HloComputation* c : instr.called_computations()) {
    for (const auto& i : c->instructions()) {
      absl::StrAppend(&key, " ", HloOpcodeString(i->opcode()));
      for (const HloInstruction* o : i->operands()) {
        absl::StrAppend(&key, ":", HloOpcodeString(o->opcode()), o->attrs().parameter_number);
      }
    }
  }
  return key;
}

bool Driven(const HloInstruction& instr) {
  switch (instr.opcode()) {
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllGather:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kAllToAll:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectiveBroadcast:
      return true;
    default:
      return false;
  }
}

// The device grid to run `instr` on: the module's, grown to what the ids
// and the result shapes need.
absl::StatusOr<std::pair<int64_t, int64_t>> GridFor(const HloInstruction& instr,
                                                    const HloModule& module) {
  int64_t replicas = std::max<int64_t>(1, module.config().replica_count);
  int64_t partitions = std::max<int64_t>(1, module.config().num_partitions);
  ASSIGN_OR_RETURN(CollectiveOpGroupMode mode, GroupModeOf(instr));
  std::vector<std::vector<int64_t>> lists;
  if (instr.attrs().replica_groups.has_value()) {
    ASSIGN_OR_RETURN(lists, ExpandReplicaGroups(*instr.attrs().replica_groups));
  }
  int64_t max_id = -1;
  for (const auto& g : lists) {
    for (int64_t id : g) max_id = std::max(max_id, id);
  }
  for (const auto& [a, b] : instr.attrs().source_target_pairs.value_or(SourceTargetPairs{})) {
    max_id = std::max({max_id, a, b});
  }
  // With empty groups, the group size is what all-gather / reduce-scatter
  // shapes imply.
  if (lists.empty() && instr.attrs().dimensions.has_value() && instr.operand_count() == 1 &&
      instr.shape().IsArray() && instr.operand(0)->shape().IsArray()) {
    const int64_t dim = (*instr.attrs().dimensions)[0];
    const int64_t in = instr.operand(0)->shape().dimensions(dim);
    const int64_t out = instr.shape().dimensions(dim);
    if (instr.opcode() == HloOpcode::kAllGather && in > 0) max_id = out / in - 1;
    if (instr.opcode() == HloOpcode::kReduceScatter && out > 0) max_id = in / out - 1;
  }
  switch (mode) {
    case CollectiveOpGroupMode::kCrossPartition:
      partitions = std::max(partitions, max_id + 1);
      break;
    case CollectiveOpGroupMode::kFlattenedId:
      if (replicas * partitions <= max_id) replicas = max_id + 1, partitions = 1;
      break;
    default:
      replicas = std::max(replicas, max_id + 1);
  }
  return std::make_pair(replicas, partitions);
}

struct Tally {
  int64_t compared = 0, agreed = 0;
  std::map<std::string, int64_t> skipped;  // reason -> count
  std::vector<std::string> disagreements;
};

void CheckInstruction(const HloInstruction& instr, const HloModule& module,
                      const std::string& where, Tally& tally) {
  auto skip = [&](const std::string& why) { ++tally.skipped[why]; };
  for (const HloInstruction* op : instr.operands()) {
    if (!op->shape().IsArray()) return skip("operand not an array");
    if (op->shape().ElementCount() > (1 << 18)) return skip("operand over 2^18 elements");
  }
  absl::StatusOr<std::pair<int64_t, int64_t>> grid = GridFor(instr, module);
  if (!grid.ok()) return skip(absl::StrCat("groups: ", grid.status().message()));
  const auto [replicas, partitions] = *grid;
  const int64_t n = replicas * partitions;
  if (n > 64) return skip("more than 64 devices");
  std::mt19937_64 rng(tally.compared + 17);
  std::vector<std::vector<Literal>> inputs(n);
  for (int64_t d = 0; d < n; ++d) {
    for (const HloInstruction* op : instr.operands()) {
      Shape s = op->shape();
      s.clear_layout();
      inputs[d].push_back(testing::RandomLiteral(s, rng));
    }
  }
  // The interpreter: its collective code on one thread per device.
  EvalOptions options;
  options.replica_count = replicas;
  options.num_partitions = partitions;
  auto rendezvous = std::make_shared<Rendezvous>();
  std::vector<Literal> expected(n);
  std::vector<absl::Status> status = OnThreads(n, [&](int64_t d) -> absl::Status {
    ThreadContext context(d, options, rendezvous);
    std::vector<const Literal*> operands;
    for (const Literal& l : inputs[d]) operands.push_back(&l);
    ASSIGN_OR_RETURN(expected[d], EvaluateInstruction(instr, operands, context));
    return absl::OkStatus();
  });
  for (const absl::Status& s : status) {
    if (!s.ok()) return skip(absl::StrCat("interpreter: ", s.message().substr(0, 60)));
  }
  absl::StatusOr<std::vector<std::vector<Literal>>> actual =
      testing::RunLibrary(instr, replicas, partitions, inputs);
  ++tally.compared;
  if (!actual.ok()) {
    tally.disagreements.push_back(
        absl::StrCat(where, ": library failed: ", actual.status().message()));
    return;
  }
  for (int64_t d = 0; d < n; ++d) {
    const std::vector<Literal>& got = (*actual)[d];
    const bool tuple = expected[d].shape().IsTuple();
    bool same = got.size() == (tuple ? expected[d].tuple_elements().size() : 1);
    for (size_t i = 0; same && i < got.size(); ++i) {
      const Literal& want = tuple ? expected[d].tuple_elements()[i] : expected[d];
      same = want.raw_data() == got[i].raw_data();
    }
    if (!same) {
      tally.disagreements.push_back(
          absl::StrCat(where, ": device ", d, " of ", replicas, "x", partitions, " differs"));
      return;
    }
  }
  ++tally.agreed;
}

TEST(CorpusCollectives, LibraryMatchesInterpreterOnCorpusCollectives) {
  const char* env = std::getenv("XLITE_CORPUS");
  const fs::path dir = fs::path(env ? env : "../shared/corpus") / "xla";
  if (!fs::exists(dir)) {
    std::cerr << "\n*** SKIPPING corpus collectives: " << dir
              << " not found (set XLITE_CORPUS) ***\n\n";
    GTEST_SKIP() << "corpus not found at " << dir;
  }
  Tally tally;
  std::set<std::string> seen;
  int64_t files = 0, unparsed = 0;
  std::vector<fs::path> paths;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string p = entry.path().string();
    if (!entry.is_regular_file() || p.find("error") != std::string::npos) continue;
    paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  for (const fs::path& path : paths) {
    std::ifstream in(path);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    if (text.find("all-reduce(") == std::string::npos &&
        text.find("all-gather(") == std::string::npos &&
        text.find("reduce-scatter(") == std::string::npos &&
        text.find("all-to-all(") == std::string::npos &&
        text.find("collective-permute(") == std::string::npos &&
        text.find("collective-broadcast(") == std::string::npos) {
      continue;
    }
    ++files;
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, path.string());
    if (!module.ok()) {
      ++unparsed;
      continue;
    }
    for (const auto& computation : (*module)->computations()) {
      for (const auto& instr : computation->instructions()) {
        if (!Driven(*instr)) continue;
        // Model dumps repeat one collective many times: compare each form once.
        if (!seen.insert(FormOf(*instr, **module)).second) {
          ++tally.skipped["same form as one compared before"];
          continue;
        }
        CheckInstruction(*instr, **module,
                         absl::StrCat(path.filename().string(), " ", instr->name()), tally);
      }
    }
  }
  std::cout << "corpus collectives: " << files << " files (" << unparsed << " unparsed), "
            << tally.compared << " instructions compared, " << tally.agreed << " identical\n";
  for (const auto& [why, count] : tally.skipped)
    std::cout << "  skipped " << count << ": " << why << "\n";
  for (const std::string& d : tally.disagreements) ADD_FAILURE() << d;
  EXPECT_EQ(tally.agreed, tally.compared);
  EXPECT_GE(tally.compared, 20) << "the corpus should hold at least 20 collectives to compare";
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::collectives
