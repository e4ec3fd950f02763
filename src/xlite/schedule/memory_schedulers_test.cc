#include "xlite/schedule/memory_schedulers.h"

#include <algorithm>
#include <memory>

#include "gtest/gtest.h"
#include "xlite/analysis/analysis_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

using analysis_test::Find;
using analysis_test::Parse;

struct Modeled {
  std::unique_ptr<HloModule> module;
  std::unique_ptr<HloDataflowAnalysis> dataflow;
  std::unique_ptr<ComputationMemoryModel> model;

  int32_t Index(const char* name) const { return model->index_of(Find(*module, name)); }
  // Position of `name` in `order`.
  int64_t At(const std::vector<int32_t>& order, const char* name) const {
    return std::find(order.begin(), order.end(), Index(name)) - order.begin();
  }
};

Modeled Model(const char* text) {
  Modeled m;
  m.module = Parse(text);
  if (m.module == nullptr) return m;
  auto dataflow = HloDataflowAnalysis::Run(*m.module);
  EXPECT_TRUE(dataflow.ok()) << dataflow.status();
  if (!dataflow.ok()) return m;
  m.dataflow = std::move(*dataflow);
  m.model = std::make_unique<ComputationMemoryModel>(*m.module->entry_computation(), *m.dataflow);
  return m;
}

constexpr char kDiamond[] = R"(
HloModule m
ENTRY e {
  p = f32[10] parameter(0)
  small = f32[10] negate(p)
  c = f32[] constant(2)
  big = f32[1000] broadcast(c), dimensions={}
  bigsum = f32[10] slice(big), slice={[0:10]}
  tup = (f32[10], f32[10]) tuple(small, bigsum)
  g0 = f32[10] get-tuple-element(tup), index=0
  g1 = f32[10] get-tuple-element(tup), index=1
  ROOT r = f32[10] add(g0, g1)
}
)";

TEST(MemoryModel, CountsDefinitionsAndReadersByHloUse) {
  Modeled m = Model(kDiamond);
  ASSERT_NE(m.model, nullptr);
  // Parameters and constants are not counted.
  EXPECT_EQ(m.model->bytes_defined(m.Index("p")), 0);
  EXPECT_EQ(m.model->bytes_defined(m.Index("c")), 0);
  EXPECT_EQ(m.model->bytes_defined(m.Index("big")), 4000);
  EXPECT_EQ(m.model->bytes_defined(m.Index("tup")), 16);  // its table only
  EXPECT_EQ(m.model->bytes_defined(m.Index("g0")), 0);    // forwards small
  // small is read by r (through the tuple and g0), not by tup or g0.
  ASSERT_EQ(m.model->defined_values(m.Index("small")).size(), 1u);
  const int32_t small = m.model->defined_values(m.Index("small"))[0];
  EXPECT_EQ(m.model->value_users(small), std::vector<int32_t>{m.Index("r")});
  EXPECT_FALSE(m.model->value_lives_out(small));
  const int32_t r = m.model->defined_values(m.Index("r"))[0];
  EXPECT_TRUE(m.model->value_lives_out(r));
  EXPECT_EQ(m.model->use_count(r), 1);
  // Predecessors: distinct operands.
  EXPECT_EQ(m.model->predecessors(m.Index("r")).size(), 2u);
}

TEST(MemorySchedulers, DfsVisitsTheOperandWithTheLargerMemoryEffectFirst) {
  Modeled m = Model(kDiamond);
  ASSERT_NE(m.model, nullptr);
  auto dfs = DfsSchedule(*m.model);
  ASSERT_TRUE(dfs.ok()) << dfs.status();
  // tup's operands: bigsum carries 4040 bytes through big, small 40.
  EXPECT_LT(m.At(*dfs, "bigsum"), m.At(*dfs, "small"));
  EXPECT_LT(m.At(*dfs, "big"), m.At(*dfs, "p"));
  // The post order follows operand order instead.
  auto post = PostOrderSchedule(*m.model);
  ASSERT_TRUE(post.ok());
  EXPECT_LT(m.At(*post, "small"), m.At(*post, "bigsum"));
  // Making the big value first and slicing it at once needs less memory
  // than holding small while big is made: 4000 + 40 + 40 vs 40 + 4000 + 40.
  const std::vector<int64_t> none(m.model->size(), 0);
  EXPECT_EQ(SimulateComputationPeak(*m.model, *dfs, none), 4000 + 40);
  EXPECT_EQ(SimulateComputationPeak(*m.model, *post, none), 40 + 4000 + 40);
}

TEST(MemorySchedulers, ListPrefersWhatFreesMemory) {
  Modeled m = Model(R"(
HloModule m
ENTRY e {
  p = f32[] parameter(0)
  b1 = f32[1000] broadcast(p), dimensions={}
  b2 = f32[1000] broadcast(p), dimensions={}
  s1 = f32[10] slice(b1), slice={[0:10]}
  s2 = f32[10] slice(b2), slice={[0:10]}
  ROOT r = f32[10] add(s1, s2)
}
)");
  ASSERT_NE(m.model, nullptr);
  const std::vector<int64_t> none(m.model->size(), 0);
  auto list = ListSchedule(*m.model, none);
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 6u);
  // Each broadcast is sliced (freeing it) before the other is made.
  const int64_t b1 = m.At(*list, "b1"), b2 = m.At(*list, "b2");
  const int64_t s1 = m.At(*list, "s1"), s2 = m.At(*list, "s2");
  EXPECT_TRUE((s1 < b2 && b1 < s1) || (s2 < b1 && b2 < s2));
  // One broadcast, its slice and the other slice at worst.
  EXPECT_EQ(SimulateComputationPeak(*m.model, *list, none), 4000 + 40 + 40);
  auto post = PostOrderSchedule(*m.model);
  ASSERT_TRUE(post.ok());
  EXPECT_EQ(SimulateComputationPeak(*m.model, *post, none), 8000 + 40);
}

TEST(MemorySchedulers, ListCountsWhatACalleeNeedsWhileItRuns) {
  Modeled m = Model(R"(
HloModule m
ENTRY e {
  p = f32[] parameter(0)
  a = f32[100] broadcast(p), dimensions={}
  ROOT n = f32[100] negate(a)
}
)");
  ASSERT_NE(m.model, nullptr);
  std::vector<int64_t> callee(m.model->size(), 0);
  callee[m.Index("n")] = 1000;  // as if n ran a computation peaking at 1000
  auto post = PostOrderSchedule(*m.model);
  ASSERT_TRUE(post.ok());
  EXPECT_EQ(SimulateComputationPeak(*m.model, *post, callee), 400 + 400 + 1000);
}

TEST(MemorySchedulers, EverySchedulerIsATopologicalOrder) {
  Modeled m = Model(kDiamond);
  ASSERT_NE(m.model, nullptr);
  const std::vector<int64_t> none(m.model->size(), 0);
  for (auto order :
       {PostOrderSchedule(*m.model), DfsSchedule(*m.model), ListSchedule(*m.model, none)}) {
    ASSERT_TRUE(order.ok());
    std::vector<int64_t> position(m.model->size(), -1);
    for (size_t k = 0; k < order->size(); ++k) position[(*order)[k]] = static_cast<int64_t>(k);
    for (int32_t i = 0; i < m.model->size(); ++i) {
      ASSERT_GE(position[i], 0);
      for (int32_t p : m.model->predecessors(i)) EXPECT_LT(position[p], position[i]);
    }
  }
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
