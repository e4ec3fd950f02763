#include "xlite/analysis/hlo_live_range.h"

#include <memory>

#include "gtest/gtest.h"
#include "xlite/analysis/analysis_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

using analysis_test::Find;
using analysis_test::FindComputation;
using analysis_test::Parse;

// The instruction order of every computation as the schedule.
HloSchedule TextOrder(const HloModule& m) {
  std::vector<const HloComputation*> all;
  for (const auto& c : m.computations()) all.push_back(c.get());
  return HloSchedule::FromInstructionOrder(all);
}

struct Live {
  std::unique_ptr<HloModule> module;
  std::unique_ptr<HloAliasAnalysis> alias;
  std::unique_ptr<HloLiveRange> live;

  LiveRange Value(const char* name, const ShapeIndex& index = {}) const {
    const HloValue* v = alias->dataflow_analysis().GetValueAt(Find(*module, name), index);
    const LiveRange* r = v ? live->value_live_range(*v) : nullptr;
    EXPECT_NE(r, nullptr) << name;
    return r ? *r : LiveRange{-1, -1};
  }
  LiveRange Buffer(const char* name, const ShapeIndex& index = {}) const {
    const HloBuffer* b = alias->GetBufferAt(Find(*module, name), index);
    const LiveRange* r = b ? live->buffer_live_range(*b) : nullptr;
    EXPECT_NE(r, nullptr) << name;
    return r ? *r : LiveRange{-1, -1};
  }
  int64_t Time(const char* name) const { return live->instruction_time(Find(*module, name)); }
};

Live Analyze(const char* text, const LiveRangeOptions& options = {}) {
  Live l;
  l.module = Parse(text);
  if (l.module == nullptr) return l;
  auto alias = HloAliasAnalysis::Run(*l.module);
  EXPECT_TRUE(alias.ok()) << alias.status();
  if (!alias.ok()) return l;
  l.alias = std::move(*alias);
  auto live = HloLiveRange::Run(TextOrder(*l.module), *l.alias, options);
  EXPECT_TRUE(live.ok()) << live.status();
  if (live.ok()) l.live = std::move(*live);
  return l;
}

TEST(LiveRange, ChainRangesAndPeak) {
  Live l = Analyze(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] negate(p)
  b = f32[4] exponential(a)
  c = f32[4] add(a, b)
  ROOT d = f32[4] negate(c)
}
)");
  ASSERT_NE(l.live, nullptr);
  EXPECT_EQ(l.live->schedule_end_time(), 5);
  EXPECT_EQ(l.Value("p"), (LiveRange{0, 5}));  // entry parameters live to the end
  EXPECT_EQ(l.Value("a"), (LiveRange{1, 3}));  // to its last reader
  EXPECT_EQ(l.Value("b"), (LiveRange{2, 3}));
  EXPECT_EQ(l.Value("c"), (LiveRange{3, 4}));
  EXPECT_EQ(l.Value("d"), (LiveRange{4, 5}));  // the result lives out
  // At time 3: p, a, b, c.
  EXPECT_EQ(l.live->peak_bytes(), 64);
  EXPECT_EQ(l.live->peak_time(), 3);
  EXPECT_EQ(l.live->peak_times(), 1);  // times 2 and 4 hold 48
  EXPECT_EQ(l.live->live_bytes(), (std::vector<int64_t>{16, 32, 48, 64, 48, 32, 0}));
}

TEST(LiveRange, TupleTablesCountEightBytesPerElement) {
  Live l = Analyze(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] negate(p)
  ROOT t = (f32[4], f32[4], f32[4]) tuple(a, a, p)
}
)");
  ASSERT_NE(l.live, nullptr);
  const HloBuffer* table = l.alias->GetBufferAt(Find(*l.module, "t"));
  EXPECT_EQ(l.live->buffer_size(*table), 24);
  EXPECT_EQ(l.live->peak_bytes(), 16 + 16 + 24);
}

TEST(LiveRange, AliasedParameterEndsAtItsLastUseButItsBufferLivesOut) {
  Live l = Analyze(R"(
HloModule m, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  a = f32[4] negate(p)
  b = f32[4] add(a, q)
  ROOT c = f32[4] exponential(b)
}
)");
  ASSERT_NE(l.live, nullptr);
  EXPECT_EQ(l.Value("p"), (LiveRange{0, 2}));
  EXPECT_EQ(l.Value("q"), (LiveRange{0, 5}));
  EXPECT_EQ(l.Buffer("p"), (LiveRange{0, 5}));  // joined with the result
  EXPECT_EQ(l.Buffer("c"), l.Buffer("p"));
}

TEST(LiveRange, WhileFlattensConditionThenBodyBeforeTheLoop) {
  Live l = Analyze(R"(
HloModule m

cond {
  ct = (s32[], f32[4]) parameter(0)
  ci = s32[] get-tuple-element(ct), index=0
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(ci, ten), direction=LT
}

body {
  bt = (s32[], f32[4]) parameter(0)
  bi = s32[] get-tuple-element(bt), index=0
  one = s32[] constant(1)
  i2 = s32[] add(bi, one)
  v = f32[4] get-tuple-element(bt), index=1
  v2 = f32[4] negate(v)
  ROOT r = (s32[], f32[4]) tuple(i2, v2)
}

ENTRY e {
  p = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, p)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT out = f32[4] get-tuple-element(w), index=1
}
)");
  ASSERT_NE(l.live, nullptr);
  EXPECT_EQ(l.live->schedule_end_time(), 5 + 4 + 7);
  EXPECT_EQ(l.Time("p"), 0);
  EXPECT_EQ(l.Time("init"), 2);
  EXPECT_EQ(l.Time("ct"), 3);
  EXPECT_EQ(l.Time("lt"), 6);
  EXPECT_EQ(l.Time("bt"), 7);
  EXPECT_EQ(l.Time("r"), 13);
  EXPECT_EQ(l.Time("w"), 14);
  const LiveRange* body = l.live->computation_span(FindComputation(*l.module, "body"));
  ASSERT_NE(body, nullptr);
  EXPECT_EQ(*body, (LiveRange{7, 14}));
  // The init tuple table dies as the body starts; the body's result lives to
  // the end of the body; the loop state buffer spans all of it.
  EXPECT_EQ(l.Value("init"), (LiveRange{2, 7}));
  EXPECT_EQ(l.Value("v2"), (LiveRange{12, 14}));
  EXPECT_EQ(l.Value("bt", {1}), (LiveRange{7, 12}));  // read by v2 through v
  EXPECT_EQ(l.Buffer("v2"), (LiveRange{0, 16}));
}

TEST(LiveRange, AsyncOperandLivesUntilTheDone) {
  Live l = Analyze(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  s = ((f32[4]), f32[8], s32[]) custom-call-start(n), custom_call_target="foo"
  x = f32[4] exponential(p)
  y = f32[4] negate(x)
  d = f32[8] custom-call-done(s)
  ROOT t = (f32[8], f32[4]) tuple(d, y)
}
)");
  ASSERT_NE(l.live, nullptr);
  // The wrapped computation (parameter, custom-call) runs just before s.
  EXPECT_EQ(l.Time("s"), 4);
  EXPECT_EQ(l.Time("d"), 7);
  EXPECT_EQ(l.Value("n"), (LiveRange{1, 7}));
  // The result is allocated inside the async computation, alive to the end.
  EXPECT_EQ(l.Buffer("d"), (LiveRange{3, 9}));
}

TEST(LiveRange, UnflattenedCallGraphNeedsTheOption) {
  const char* text = R"(
HloModule m

f {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}

ENTRY e {
  p = f32[4] parameter(0)
  c1 = f32[4] call(p), to_apply=f
  c2 = f32[4] call(c1), to_apply=f
  ROOT r = f32[4] add(c1, c2)
}
)";
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  auto alias = HloAliasAnalysis::Run(*m);
  ASSERT_TRUE(alias.ok()) << alias.status();
  auto live = HloLiveRange::Run(TextOrder(*m), **alias);
  ASSERT_FALSE(live.ok());
  EXPECT_EQ(live.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(live.status().message().find("flatten-call-graph"), std::string::npos);
  LiveRangeOptions options;
  options.allow_unflattened = true;
  EXPECT_TRUE(HloLiveRange::Run(TextOrder(*m), **alias, options).ok());
}

TEST(LiveRange, MissingSequenceIsFailedPrecondition) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
)");
  ASSERT_NE(m, nullptr);
  auto alias = HloAliasAnalysis::Run(*m);
  ASSERT_TRUE(alias.ok());
  auto live = HloLiveRange::Run(HloSchedule(), **alias);
  ASSERT_FALSE(live.ok());
  EXPECT_EQ(live.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(LiveRange, UnboundedDimensionIsUnimplemented) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[?] parameter(0)
  ROOT n = f32[?] negate(p)
}
)");
  ASSERT_NE(m, nullptr);
  auto alias = HloAliasAnalysis::Run(*m);
  ASSERT_TRUE(alias.ok());
  auto live = HloLiveRange::Run(TextOrder(*m), **alias);
  ASSERT_FALSE(live.ok());
  EXPECT_EQ(live.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(live.status().message().find("unbounded"), std::string::npos);
}

TEST(LiveRange, SequenceWithForeignOrRepeatedInstructionsIsAnError) {
  auto m = Parse(R"(
HloModule m

f {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}

ENTRY e {
  p = f32[4] parameter(0)
  ROOT c = f32[4] call(p), to_apply=f
}
)");
  ASSERT_NE(m, nullptr);
  auto alias = HloAliasAnalysis::Run(*m);
  ASSERT_TRUE(alias.ok());
  HloSchedule schedule = TextOrder(*m);
  const HloComputation* entry = m->entry_computation();
  std::vector<HloInstruction*> twice = schedule.sequence(entry);
  twice.push_back(twice.front());
  HloSchedule repeated = schedule;
  repeated.set_sequence(entry, twice);
  auto live = HloLiveRange::Run(repeated, **alias);
  ASSERT_FALSE(live.ok());
  EXPECT_NE(live.status().message().find("'p' twice"), std::string::npos) << live.status();

  std::vector<HloInstruction*> foreign = schedule.sequence(entry);
  foreign.push_back(Find(*m, "n"));
  HloSchedule mixed = schedule;
  mixed.set_sequence(entry, foreign);
  live = HloLiveRange::Run(mixed, **alias);
  ASSERT_FALSE(live.ok());
  EXPECT_NE(live.status().message().find("'n' of another computation"), std::string::npos)
      << live.status();
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
