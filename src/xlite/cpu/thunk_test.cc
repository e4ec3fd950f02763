// Thunks on their own: a BufferAllocations over test memory, a trivial
// executor, and the sequence printer.
#include "xlite/cpu/thunk.h"

#include <cstring>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "xlite/cpu/control_flow_thunks.h"
#include "xlite/cpu/copy_thunk.h"
#include "xlite/cpu/device_thunks.h"
#include "xlite/cpu/kernel_thunk.h"
#include "xlite/cpu/library_thunk.h"

namespace xlite::cpu {
namespace {
namespace XLITE_UNITY_ID {

class SimpleExecutor final : public SequenceExecutor {
 public:
  absl::Status Run(const ThunkSequence& sequence, const ExecuteParams& params) const override {
    for (const auto& t : sequence) {
      if (absl::Status s = t->Execute(params); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
};

ThunkInfo Info(const char* name) { return ThunkInfo{name, "test", ""}; }

struct Fixture {
  alignas(64) uint8_t memory[2][256] = {};
  uint8_t* bases[2] = {memory[0], memory[1]};
  BufferAllocations buffers{bases};
  SimpleExecutor executor;
  ExecuteParams params() {
    ExecuteParams p;
    p.buffers = &buffers;
    p.executor = &executor;
    return p;
  }
};

TEST(Thunks, CopyMovesBytesBetweenSlices) {
  Fixture f;
  for (int i = 0; i < 16; ++i) f.memory[0][i] = static_cast<uint8_t>(i + 1);
  CopyThunk copy(Info("c"), BufferSlice{0, 0, 16}, BufferSlice{1, 32, 16});
  ASSERT_TRUE(copy.Execute(f.params()).ok());
  EXPECT_EQ(std::memcmp(f.memory[0], f.memory[1] + 32, 16), 0);
  ASSERT_EQ(copy.buffer_uses().size(), 2u);
  EXPECT_EQ(copy.buffer_uses()[1].access, BufferUse::Access::kWrite);
}

TEST(Thunks, WhileRunsTheConditionBeforeEveryIteration) {
  Fixture f;
  // The condition copies a pred from a countdown table, the body bumps a counter.
  ThunkSequence condition;
  // Predicate at a1[0]; each body run shifts a0's table down by one byte.
  condition.push_back(
      std::make_unique<CopyThunk>(Info("cond"), BufferSlice{0, 0, 1}, BufferSlice{1, 0, 1}));
  ThunkSequence body;
  body.push_back(std::make_unique<LibraryThunk>(
      Thunk::Kind::kLibrary, Info("shift"),
      std::vector<BufferUse>{BufferUse::Write(BufferSlice{0, 0, 8}),
                             BufferUse::Write(BufferSlice{1, 8, 1})},
      [](absl::Span<void* const> a) {
        auto* table = static_cast<uint8_t*>(a[0]);
        std::memmove(table, table + 1, 7);
        table[7] = 0;
        ++*static_cast<uint8_t*>(a[1]);
        return absl::OkStatus();
      },
      "shift"));
  for (int i = 0; i < 3; ++i) f.memory[0][i] = 1;  // three iterations
  WhileThunk loop(Info("w"), std::move(condition), BufferSlice{1, 0, 1}, std::move(body));
  ASSERT_TRUE(loop.Execute(f.params()).ok());
  EXPECT_EQ(f.memory[1][8], 3);
  EXPECT_EQ(loop.nested().size(), 2u);
}

TEST(Thunks, ConditionalPicksXlasBranch) {
  EXPECT_EQ(ConditionalThunk::BranchFor(1, 3), 1);
  EXPECT_EQ(ConditionalThunk::BranchFor(3, 3), 2);
  EXPECT_EQ(ConditionalThunk::BranchFor(-1, 3), 2);
}

TEST(Thunks, DeviceIdsRngStateAndPoison) {
  Fixture f;
  ExecuteParams p = f.params();
  p.replica_id = 3;
  DeviceIdThunk replica(Thunk::Kind::kReplicaId, Info("r"), BufferSlice{0, 0, 4});
  ASSERT_TRUE(replica.Execute(p).ok());
  uint32_t id;
  std::memcpy(&id, f.memory[0], 4);
  EXPECT_EQ(id, 3u);
  RngGetAndUpdateStateThunk rng(Info("s"), BufferSlice{0, 64, 16}, 10);
  ASSERT_TRUE(rng.Execute(p).ok());
  ASSERT_TRUE(rng.Execute(p).ok());
  uint64_t state[2];
  std::memcpy(state, f.memory[0] + 64, 16);
  EXPECT_EQ(state[0], RngGetAndUpdateStateThunk::kInitialState + 10);
  EXPECT_EQ(state[1], 0u);
  PoisonThunk poison(Info("p"), {BufferSlice{1, 0, 8}});
  ASSERT_TRUE(poison.Execute(p).ok());
  for (int i = 0; i < 8; ++i) EXPECT_EQ(f.memory[1][i], PoisonThunk::kPattern);
  EXPECT_EQ(f.memory[1][8], 0);
}

TEST(Thunks, KernelWithoutCodeAndLibraryErrorsNameTheInstruction) {
  Fixture f;
  KernelThunk kernel(Info("k"), {BufferSlice{0, 0, 4}}, 0, 1);
  absl::Status s = kernel.Execute(f.params());
  EXPECT_TRUE(absl::IsInternal(s));
  EXPECT_TRUE(absl::StrContains(s.message(), "'k'")) << s;
  LibraryThunk failing(
      Thunk::Kind::kLibrary, Info("lib"), {},
      [](absl::Span<void* const>) { return absl::InvalidArgumentError("bad pivot"); }, "");
  s = failing.Execute(f.params());
  EXPECT_TRUE(absl::StrContains(s.message(), "'lib'")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "bad pivot")) << s;
}

TEST(Thunks, PartitionsGrowWithWorkUpToTheThreads) {
  EXPECT_EQ(KernelThunk::Partitions(10, 100, 8), 1);
  EXPECT_EQ(KernelThunk::Partitions(KernelThunk::kMinWorkPerPartition * 3, 100, 8), 3);
  EXPECT_EQ(KernelThunk::Partitions(KernelThunk::kMinWorkPerPartition * 30, 100, 8), 8);
  EXPECT_EQ(KernelThunk::Partitions(KernelThunk::kMinWorkPerPartition * 30, 2, 8), 2);
}

TEST(Thunks, SequencePrintsNestedThunksInExecutionOrder) {
  ThunkSequence body;
  body.push_back(
      std::make_unique<CopyThunk>(Info("inner"), BufferSlice{0, 0, 4}, BufferSlice{1, 0, 4}));
  ThunkSequence top;
  top.push_back(std::make_unique<CallThunk>(Info("call"), std::move(body)));
  top.push_back(std::make_unique<PoisonThunk>(Info("after"), std::vector<BufferSlice>{}));
  const std::string text = top.ToString();
  EXPECT_EQ(top.CountAll(), 3);
  EXPECT_TRUE(absl::StrContains(text, "001: kCall")) << text;
  EXPECT_TRUE(absl::StrContains(text, "002: kCopy")) << text;
  EXPECT_TRUE(absl::StrContains(text, "reads a0[0:+4]  writes a1[0:+4]")) << text;
  EXPECT_TRUE(absl::StrContains(text, "003: kPoison")) << text;
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::cpu
