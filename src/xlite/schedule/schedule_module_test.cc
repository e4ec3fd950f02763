#include "xlite/schedule/schedule_module.h"

#include <algorithm>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "xlite/analysis/analysis_test_util.h"
#include "xlite/analysis/hlo_live_range.h"
#include "xlite/text/printer.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

using analysis_test::Find;
using analysis_test::FindComputation;
using analysis_test::Parse;

// Two 4000-byte broadcasts, each reduced to a scalar. The text (and post)
// order makes both broadcasts before either reduce; reducing each right
// after its broadcast halves the peak.
constexpr char kTwoBroadcasts[] = R"(
HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  p = f32[] parameter(0)
  b1 = f32[1000] broadcast(p), dimensions={}
  b2 = f32[1000] broadcast(p), dimensions={}
  zero = f32[] constant(0)
  s1 = f32[] reduce(b1, zero), dimensions={0}, to_apply=add
  s2 = f32[] reduce(b2, zero), dimensions={0}, to_apply=add
  ROOT r = f32[] add(s1, s2)
}
)";

int64_t Position(const HloSchedule& schedule, const HloComputation* c, const HloInstruction* i) {
  const auto& seq = schedule.sequence(c);
  return std::find(seq.begin(), seq.end(), i) - seq.begin();
}

int64_t PeakOf(const ScheduleResult& r, MemoryScheduler s) {
  for (const SchedulerPeak& p : r.peaks) {
    if (p.scheduler == s) return p.peak_bytes;
  }
  ADD_FAILURE() << "no peak for " << MemorySchedulerName(s);
  return -1;
}

TEST(ScheduleModule, KeepsTheLowestPeakOfTheSchedulers) {
  auto m = Parse(kTwoBroadcasts);
  ASSERT_NE(m, nullptr);
  auto r = ProposeSchedule(*m);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->peaks.size(), 3u);
  // Post order: p, b1, b2 alive together with the reduce making s1.
  EXPECT_EQ(PeakOf(*r, MemoryScheduler::kPostOrder), 4 + 4000 + 4000 + 4 + 4);
  // List and dfs reduce each broadcast before making the next one.
  EXPECT_EQ(PeakOf(*r, MemoryScheduler::kList), 4 + 4000 + 4 + 4 + 4);
  EXPECT_EQ(PeakOf(*r, MemoryScheduler::kDfs), 4 + 4000 + 4 + 4 + 4);
  EXPECT_EQ(r->chosen, "list");  // first of the equal lowest
  EXPECT_EQ(r->peak_bytes, PeakOf(*r, MemoryScheduler::kList));
  const HloComputation* entry = m->entry_computation();
  EXPECT_LT(Position(r->schedule, entry, Find(*m, "s2")),
            Position(r->schedule, entry, Find(*m, "b1")));
  // Only sequential computations get a sequence.
  EXPECT_TRUE(r->schedule.is_computation_scheduled(entry));
  EXPECT_FALSE(r->schedule.is_computation_scheduled(FindComputation(*m, "add")));
  EXPECT_TRUE(VerifySchedule(*m, r->schedule).ok());
  EXPECT_FALSE(m->config().is_scheduled);  // Propose changes nothing
}

TEST(ScheduleModule, RespectsControlDependencies) {
  auto m = Parse(R"(
HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  p = f32[] parameter(0)
  b1 = f32[1000] broadcast(p), dimensions={}
  b2 = f32[1000] broadcast(p), dimensions={}
  zero = f32[] constant(0)
  s1 = f32[] reduce(b1, zero), dimensions={0}, to_apply=add, control-predecessors={b2}
  s2 = f32[] reduce(b2, zero), dimensions={0}, to_apply=add, control-predecessors={b1}
  ROOT r = f32[] add(s1, s2)
}
)");
  ASSERT_NE(m, nullptr);
  auto alias = HloAliasAnalysis::Run(*m);
  ASSERT_TRUE(alias.ok()) << alias.status();
  const HloComputation* entry = m->entry_computation();
  for (MemoryScheduler s :
       {MemoryScheduler::kList, MemoryScheduler::kDfs, MemoryScheduler::kPostOrder}) {
    auto schedule = RunMemoryScheduler(**alias, s);
    ASSERT_TRUE(schedule.ok()) << schedule.status();
    EXPECT_TRUE(VerifySchedule(*m, *schedule).ok()) << MemorySchedulerName(s);
    EXPECT_LT(Position(*schedule, entry, Find(*m, "b2")),
              Position(*schedule, entry, Find(*m, "s1")))
        << MemorySchedulerName(s);
    EXPECT_LT(Position(*schedule, entry, Find(*m, "b1")),
              Position(*schedule, entry, Find(*m, "s2")))
        << MemorySchedulerName(s);
  }
  // Both broadcasts must now be alive at once, whatever the order.
  auto r = ProposeSchedule(*m);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GE(r->peak_bytes, 8000);
}

TEST(ScheduleModule, WritesTheScheduleIntoTheModuleAndPrintsIt) {
  auto m = Parse(kTwoBroadcasts);
  ASSERT_NE(m, nullptr);
  auto r = ScheduleModule(*m);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(m->config().is_scheduled);
  const HloComputation* entry = m->entry_computation();
  std::vector<std::string> order;
  for (const auto& i : entry->instructions()) order.push_back(i->name());
  std::vector<std::string> expected;
  for (const HloInstruction* i : r->schedule.sequence(entry)) expected.push_back(i->name());
  EXPECT_EQ(order, expected);

  const std::string printed = PrintModule(*m);
  EXPECT_EQ(printed.rfind("HloModule m, is_scheduled=true", 0), 0u) << printed;
  // The printed order is the schedule: s2 before b1.
  EXPECT_LT(printed.find("%s2 ="), printed.find("%b1 ="));
  // Read back, the module keeps that schedule and prints the same.
  auto again = Parse(printed);
  ASSERT_NE(again, nullptr);
  auto kept = ScheduleModule(*again);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->chosen, "existing");
  EXPECT_TRUE(kept->peaks.empty());
  EXPECT_EQ(kept->peak_bytes, r->peak_bytes);
  EXPECT_EQ(PrintModule(*again), printed);
}

TEST(ScheduleModule, ScheduledModuleKeepsItsTextOrder) {
  // A valid order that no scheduler here would choose (both broadcasts
  // first): it is kept as it is.
  auto m = Parse(R"(
HloModule m, is_scheduled=true

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  zero = f32[] constant(0)
  p = f32[] parameter(0)
  b2 = f32[1000] broadcast(p), dimensions={}
  b1 = f32[1000] broadcast(p), dimensions={}
  s1 = f32[] reduce(b1, zero), dimensions={0}, to_apply=add
  s2 = f32[] reduce(b2, zero), dimensions={0}, to_apply=add
  ROOT r = f32[] add(s1, s2)
}
)");
  ASSERT_NE(m, nullptr);
  const std::string before = PrintModule(*m);
  auto r = ScheduleModule(*m);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->chosen, "existing");
  EXPECT_EQ(r->peak_bytes, 4 + 4000 + 4000 + 4 + 4);
  EXPECT_EQ(PrintModule(*m), before);
  EXPECT_LT(before.find("%b2 ="), before.find("%b1 ="));

  // Asked not to keep it, the schedulers do better.
  ScheduleOptions fresh;
  fresh.keep_existing_schedule = false;
  auto better = ProposeSchedule(*m, fresh);
  ASSERT_TRUE(better.ok()) << better.status();
  EXPECT_LT(better->peak_bytes, r->peak_bytes);
}

TEST(ScheduleModule, InvalidKeptScheduleIsAnError) {
  auto m = Parse(kTwoBroadcasts);
  ASSERT_NE(m, nullptr);
  // s2 must now run before b1, but b1 comes first in the instruction list.
  Find(*m, "s2")->AddControlDependencyTo(Find(*m, "b1"));
  m->config().is_scheduled = true;
  auto r = ScheduleModule(*m);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("'b1' comes before its control predecessor 's2'"),
            std::string::npos)
      << r.status();
}

TEST(ScheduleModule, SchedulesEveryComputationRunSequentially) {
  auto m = Parse(R"(
HloModule m

fused {
  f0 = f32[4] parameter(0)
  ROOT fn = f32[4] negate(f0)
}

cond {
  t = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(i, ten), direction=LT
}

body {
  t = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  v = f32[4] get-tuple-element(t), index=1
  f = f32[4] fusion(v), kind=kLoop, calls=fused
  ROOT r = (s32[], f32[4]) tuple(i2, f)
}

callee {
  x = f32[4] parameter(0)
  ROOT e = f32[4] exponential(x)
}

ENTRY main {
  p = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, p)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  v = f32[4] get-tuple-element(w), index=1
  ROOT c = f32[4] call(v), to_apply=callee
}
)");
  ASSERT_NE(m, nullptr);
  auto r = ScheduleModule(*m);
  ASSERT_TRUE(r.ok()) << r.status();
  for (const char* name : {"main", "cond", "body", "callee"}) {
    EXPECT_TRUE(r->schedule.is_computation_scheduled(FindComputation(*m, name))) << name;
  }
  EXPECT_FALSE(r->schedule.is_computation_scheduled(FindComputation(*m, "fused")));
  EXPECT_TRUE(VerifySchedule(*m, r->schedule).ok());
}

TEST(ScheduleModule, UnboundedDimensionIsUnimplemented) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[?] parameter(0)
  ROOT n = f32[?] negate(p)
}
)");
  ASSERT_NE(m, nullptr);
  auto r = ScheduleModule(*m);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_FALSE(m->config().is_scheduled);
}

TEST(HloSchedule, VerifySequenceNamesWhatIsWrong) {
  auto m = Parse(kTwoBroadcasts);
  ASSERT_NE(m, nullptr);
  const HloComputation* entry = m->entry_computation();
  std::vector<HloInstruction*> seq;
  for (const auto& i : entry->instructions()) seq.push_back(i.get());
  EXPECT_TRUE(HloSchedule::VerifySequence(*entry, seq).ok());

  std::vector<HloInstruction*> swapped = seq;
  std::swap(swapped[0], swapped[1]);  // b1 before its operand p
  absl::Status s = HloSchedule::VerifySequence(*entry, swapped);
  EXPECT_NE(s.message().find("'b1' comes before its operand 'p'"), std::string::npos) << s;

  std::vector<HloInstruction*> twice = seq;
  twice[1] = twice[0];
  s = HloSchedule::VerifySequence(*entry, twice);
  EXPECT_NE(s.message().find("'p' appears twice"), std::string::npos) << s;

  std::vector<HloInstruction*> short_seq(seq.begin(), seq.end() - 1);
  s = HloSchedule::VerifySequence(*entry, short_seq);
  EXPECT_NE(s.message().find("has 6 instructions, the computation has 7"), std::string::npos) << s;

  HloSchedule schedule;
  schedule.set_sequence(entry, swapped);
  EXPECT_FALSE(schedule.ApplyTo(*m).ok());
  auto other = Parse(kTwoBroadcasts);
  ASSERT_NE(other, nullptr);
  HloSchedule foreign;
  foreign.set_sequence(other->entry_computation(), seq);
  s = foreign.ApplyTo(*m);
  EXPECT_NE(s.message().find("not in module m"), std::string::npos) << s;
  EXPECT_FALSE(m->config().is_scheduled);  // nothing changed
  EXPECT_FALSE(VerifySchedule(*m, HloSchedule()).ok());
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
