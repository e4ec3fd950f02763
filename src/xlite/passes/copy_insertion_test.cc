#include "xlite/passes/copy_insertion.h"

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "xlite/ir/hlo_schedule.h"
#include "xlite/schedule/schedule_module.h"
#include "xlite/text/parser.h"
#include "xlite/text/printer.h"
#include "xlite/verify/verifier.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

struct Inserted {
  std::unique_ptr<HloModule> module;
  bool changed = false;
  std::vector<InsertedCopy> copies;
  std::string text;  // printed short form after the pass
};

Inserted Insert(const std::string& hlo) {
  Inserted r;
  auto m = ParseHloModule(hlo, "t.hlo");
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return r;
  r.module = std::move(*m);
  EXPECT_TRUE(VerifyModule(*r.module).ok());
  CopyInsertion pass;
  absl::StatusOr<bool> changed = pass.Run(*r.module);
  EXPECT_TRUE(changed.ok()) << changed.status();
  if (!changed.ok()) return r;
  r.changed = *changed;
  r.copies = pass.inserted_copies();
  absl::Status verified = VerifyModule(*r.module);
  EXPECT_TRUE(verified.ok()) << verified;
  r.text = PrintModule(*r.module, PrintOptions::Short());
  return r;
}

// The explanations of the copies made for a while body's state.
std::vector<std::string> WhileBodyCopies(const Inserted& r) {
  std::vector<std::string> body_copies;
  for (const InsertedCopy& c : r.copies) {
    if (c.reason == CopyReason::kWhileBody) body_copies.push_back(c.explanation);
  }
  return body_copies;
}

int CountCopies(const std::string& text) {
  int n = 0;
  for (size_t at = text.find(" copy("); at != std::string::npos; at = text.find(" copy(", at + 1)) {
    ++n;
  }
  return n;
}

TEST(CopyInsertion, IncrementAliasedIsUpdatedInPlace) {
  Inserted r = Insert(R"(
HloModule increment, input_output_alias={ {}: (0, {}) }

ENTRY entry {
  p = f32[] parameter(0)
  c = f32[] constant(1)
  ROOT out = f32[] add(p, c)
}
)");
  EXPECT_FALSE(r.changed);
  EXPECT_TRUE(r.copies.empty());
  EXPECT_EQ(CountCopies(r.text), 0);
}

TEST(CopyInsertion, InPlaceUpdateOfAValueStillReadIsCopied) {
  Inserted r = Insert(R"(
HloModule m

ENTRY e {
  p = f32[8] parameter(0)
  x = f32[8] negate(p)
  u = f32[2] parameter(1)
  i = s32[] parameter(2)
  d = f32[8] dynamic-update-slice(x, u, i)
  later = f32[8] exponential(x)
  ROOT t = (f32[8], f32[8]) tuple(d, later)
}
)");
  ASSERT_EQ(r.copies.size(), 1u);
  EXPECT_EQ(r.copies[0].reason, CopyReason::kInPlaceOperand);
  EXPECT_TRUE(absl::StrContains(r.copies[0].explanation, "d updates operand 0 in place"))
      << r.copies[0].explanation;
  EXPECT_TRUE(absl::StrContains(r.copies[0].explanation, "still read by later"))
      << r.copies[0].explanation;
  EXPECT_TRUE(absl::StrContains(r.text, "dynamic-update-slice(copy."));
}

TEST(CopyInsertion, InPlaceUpdateAfterTheLastReadNeedsNoCopy) {
  Inserted r = Insert(R"(
HloModule m

ENTRY e {
  p = f32[8] parameter(0)
  x = f32[8] negate(p)
  s = f32[2] slice(x), slice={[0:2]}
  u = f32[2] exponential(s)
  i = s32[] parameter(1)
  ROOT d = f32[8] dynamic-update-slice(x, u, i)
}
)");
  EXPECT_FALSE(r.changed) << r.text;
  EXPECT_TRUE(r.copies.empty());
}

TEST(CopyInsertion, InPlaceUpdateOfAParameterNotDonatedIsCopied) {
  Inserted r = Insert(R"(
HloModule m

ENTRY e {
  p = f32[8] parameter(0)
  u = f32[2] parameter(1)
  i = s32[] parameter(2)
  ROOT d = f32[8] dynamic-update-slice(p, u, i)
}
)");
  ASSERT_EQ(r.copies.size(), 1u);
  EXPECT_EQ(r.copies[0].reason, CopyReason::kInPlaceOperand);
  EXPECT_TRUE(absl::StrContains(r.copies[0].explanation, "read-only")) << r.copies[0].explanation;
}

TEST(CopyInsertion, InPlaceUpdateOfADonatedParameterNeedsNoCopy) {
  Inserted r = Insert(R"(
HloModule m, input_output_alias={ {}: (0, {}) }

ENTRY e {
  p = f32[8] parameter(0)
  u = f32[2] parameter(1)
  i = s32[] parameter(2)
  ROOT d = f32[8] dynamic-update-slice(p, u, i)
}
)");
  EXPECT_TRUE(r.copies.empty()) << r.text;
}

constexpr char kScan[] = R"(
HloModule scan

cond {
  p = (s32[], f32[8], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(8)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[8], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  acc = f32[8] get-tuple-element(p), index=1
  w = f32[8] get-tuple-element(p), index=2
  v = f32[1] dynamic-slice(w, i), dynamic_slice_sizes={1}
  acc1 = f32[8] dynamic-update-slice(acc, v, i)
  ROOT t = (s32[], f32[8], f32[8]) tuple(i1, acc1, w)
}

ENTRY e {
  a = f32[8] parameter(0)
  w = f32[8] parameter(1)
  z = s32[] constant(0)
  init = (s32[], f32[8], f32[8]) tuple(z, a, w)
  loop = (s32[], f32[8], f32[8]) while(init), condition=cond, body=body
  ROOT r = f32[8] get-tuple-element(loop), index=1
}
)";

TEST(CopyInsertion, WhileLoop) {
  Inserted r = Insert(kScan);
  // The counter: read by the dynamic-slice and the update after the add
  // may write it (a copy in the body); its initial value is a constant,
  // and the accumulator's is a parameter that is not donated (copies of
  // the initial values). The third element passes through: no copy.
  int init = 0, body = 0;
  for (const InsertedCopy& c : r.copies) {
    if (c.reason == CopyReason::kWhileInit) ++init;
    if (c.reason == CopyReason::kWhileBody) ++body;
  }
  EXPECT_EQ(init, 2) << r.text;
  EXPECT_EQ(body, 1) << r.text;
  EXPECT_EQ(r.copies.size(), 3u) << r.text;
  // The accumulator is updated in place: the dynamic-update-slice reads
  // the loop state directly.
  EXPECT_TRUE(absl::StrContains(r.text, "acc1 = f32[8]{0} dynamic-update-slice(acc, v, "))
      << r.text;
}

// A loop state updated by a loop fusion (one output, and a multi-output
// fusion's element) that reads it element by element is updated in place,
// as XLA's CanShareOperandBufferWithUser allows; one that reads it through a
// reverse (element i for element n-1-i) must not be: that state is copied.
TEST(CopyInsertion, LoopFusionsReadingTheStateElementwiseUpdateItInPlace) {
  Inserted r = Insert(R"(
HloModule m

fused_scale {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  ROOT m = f32[8] multiply(p0, p1)
}

fused_pair {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  a = f32[8] add(p0, p1)
  e = f32[8] exponential(p0)
  ROOT t = (f32[8], f32[8]) tuple(a, e)
}

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}

fused_reversed {
  p0 = f32[8] parameter(0)
  rv = f32[8] reverse(p0), dimensions={0}
  ROOT n = f32[8] negate(rv)
}

cond {
  p = (f32[8], f32[8], f32[8], f32[8]) parameter(0)
  x = f32[8] get-tuple-element(p), index=0
  z = f32[] constant(0)
  s = f32[] reduce(x, z), dimensions={0}, to_apply=sum
  ROOT lt = pred[] compare(s, z), direction=LT
}

body {
  p = (f32[8], f32[8], f32[8], f32[8]) parameter(0)
  x = f32[8] get-tuple-element(p), index=0
  y = f32[8] get-tuple-element(p), index=1
  w = f32[8] get-tuple-element(p), index=2
  v = f32[8] get-tuple-element(p), index=3
  x1 = f32[8] fusion(x, w), kind=kLoop, calls=fused_scale
  pair = (f32[8], f32[8]) fusion(y, w), kind=kLoop, calls=fused_pair
  y1 = f32[8] get-tuple-element(pair), index=1
  v1 = f32[8] fusion(v), kind=kLoop, calls=fused_reversed
  ROOT t = (f32[8], f32[8], f32[8], f32[8]) tuple(x1, y1, w, v1)
}

ENTRY e {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  w = f32[8] parameter(2)
  v = f32[8] parameter(3)
  x0 = f32[8] negate(x)
  y0 = f32[8] negate(y)
  v0 = f32[8] negate(v)
  init = (f32[8], f32[8], f32[8], f32[8]) tuple(x0, y0, w, v0)
  loop = (f32[8], f32[8], f32[8], f32[8]) while(init), condition=cond, body=body
  ROOT r = f32[8] get-tuple-element(loop), index=0
}
)");
  const std::vector<std::string> body_copies = WhileBodyCopies(r);
  // Only the reversed state needs its copy.
  ASSERT_EQ(body_copies.size(), 1u) << r.text;
  EXPECT_TRUE(absl::StrContains(body_copies[0], "{3}")) << body_copies[0];
  EXPECT_TRUE(absl::StrContains(r.text, "x1 = f32[8]{0} fusion(x, w)")) << r.text;
  EXPECT_TRUE(absl::StrContains(r.text, "pair = (f32[8]{0}, f32[8]{0}) fusion(y, w)")) << r.text;
}

// A loop fusion that reads the state through reshapes between row-major
// shapes ([8] -> [2,4] -> [8]: element i for element i) updates it in place
// too; one whose reshape reads a column-major [2,4] (element i of the state is
// not element i of the reshape) keeps its copy.
TEST(CopyInsertion, LoopFusionsReadingTheStateThroughRowMajorReshapesUpdateItInPlace) {
  Inserted r = Insert(R"(
HloModule m

fused_reshaped {
  p0 = f32[8] parameter(0)
  r = f32[2,4]{1,0} reshape(p0)
  n = f32[2,4]{1,0} negate(r)
  ROOT b = f32[8] reshape(n)
}

fused_column_major {
  p0 = f32[2,4]{0,1} parameter(0)
  r = f32[8] reshape(p0)
  n = f32[8] negate(r)
  ROOT b = f32[2,4]{0,1} reshape(n)
}

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}

cond {
  p = (f32[8], f32[2,4]{0,1}) parameter(0)
  x = f32[8] get-tuple-element(p), index=0
  z = f32[] constant(0)
  s = f32[] reduce(x, z), dimensions={0}, to_apply=sum
  ROOT lt = pred[] compare(s, z), direction=LT
}

body {
  p = (f32[8], f32[2,4]{0,1}) parameter(0)
  x = f32[8] get-tuple-element(p), index=0
  y = f32[2,4]{0,1} get-tuple-element(p), index=1
  x1 = f32[8] fusion(x), kind=kLoop, calls=fused_reshaped
  y1 = f32[2,4]{0,1} fusion(y), kind=kLoop, calls=fused_column_major
  ROOT t = (f32[8], f32[2,4]{0,1}) tuple(x1, y1)
}

ENTRY e {
  x = f32[8] parameter(0)
  y = f32[2,4]{0,1} parameter(1)
  x0 = f32[8] negate(x)
  y0 = f32[2,4]{0,1} negate(y)
  init = (f32[8], f32[2,4]{0,1}) tuple(x0, y0)
  loop = (f32[8], f32[2,4]{0,1}) while(init), condition=cond, body=body
  ROOT r = f32[8] get-tuple-element(loop), index=0
}
)");
  const std::vector<std::string> body_copies = WhileBodyCopies(r);
  ASSERT_EQ(body_copies.size(), 1u) << r.text;
  EXPECT_TRUE(absl::StrContains(body_copies[0], "{1}")) << body_copies[0];
  EXPECT_TRUE(absl::StrContains(r.text, "x1 = f32[8]{0} fusion(x)")) << r.text;
}

TEST(CopyInsertion, WhileSwappingTwoElements) {
  Inserted r = Insert(R"(
HloModule swap

cond {
  p = (f32[4], f32[4], pred[]) parameter(0)
  ROOT b = pred[] get-tuple-element(p), index=2
}

body {
  p = (f32[4], f32[4], pred[]) parameter(0)
  x = f32[4] get-tuple-element(p), index=0
  y = f32[4] get-tuple-element(p), index=1
  b = pred[] get-tuple-element(p), index=2
  ROOT t = (f32[4], f32[4], pred[]) tuple(y, x, b)
}

ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  b = pred[] parameter(2)
  x1 = f32[4] negate(x)
  y1 = f32[4] negate(y)
  init = (f32[4], f32[4], pred[]) tuple(x1, y1, b)
  ROOT w = (f32[4], f32[4], pred[]) while(init), condition=cond, body=body
}
)");
  // Two buffers exchanging values need a temporary and two moves at least;
  // removal never adds an ordering, so the parameter and result copies of
  // both elements stay (XLA's outcome too).
  int body = 0;
  for (const InsertedCopy& c : r.copies) body += c.reason == CopyReason::kWhileBody;
  EXPECT_EQ(body, 4) << r.text;
  // The flag b, a parameter that is not donated, reaches the output through
  // the loop: the output gets a copy.
  ASSERT_EQ(r.copies.size(), 5u) << r.text;
  EXPECT_EQ(r.copies.back().reason, CopyReason::kReadOnlyOutput) << r.copies.back().explanation;
  EXPECT_EQ(r.copies.back().output_index, ShapeIndex({2}));
}

TEST(CopyInsertion, ConditionalBranchReturningItsOperand) {
  Inserted r = Insert(R"(
HloModule cond

yes {
  a = f32[4] parameter(0)
  ROOT ya = f32[4] negate(a)
}

no {
  ROOT b = f32[4] parameter(0)
}

ENTRY e {
  pred = pred[] parameter(0)
  x = f32[4] parameter(1)
  x1 = f32[4] exponential(x)
  c = f32[4] conditional(pred, x1, x1), true_computation=yes, false_computation=no
  ROOT d = f32[4] add(c, x1)
}
)");
  // The false branch returns x1, which is still read after the
  // conditional: its result is copied; the true branch's is fresh.
  ASSERT_EQ(r.copies.size(), 1u) << r.text;
  EXPECT_EQ(r.copies[0].reason, CopyReason::kConditionalBranch);
  EXPECT_EQ(r.copies[0].computation, "no");
}

TEST(CopyInsertion, DonatedParameterStillReadWhileItsOutputIsWritten) {
  Inserted r = Insert(R"(
HloModule m, input_output_alias={ {0}: (0, {}) }

ENTRY e {
  p = f32[8] parameter(0)
  q = f32[8] parameter(1)
  n = f32[8] negate(q)
  late = f32[8] multiply(p, n)
  ROOT t = (f32[8], f32[8]) tuple(n, late)
}
)");
  // With the output computed from the parameter's last read, no copy.
  Inserted direct = Insert(R"(
HloModule m, input_output_alias={ {0}: (0, {}) }

ENTRY e {
  p = f32[8] parameter(0)
  q = f32[8] parameter(1)
  late = f32[8] multiply(p, q)
  n = f32[8] negate(late)
  ROOT t = (f32[8], f32[8]) tuple(n, late)
}
)");
  EXPECT_TRUE(direct.copies.empty()) << direct.text;
  // Output {0} (n) lives in p's buffer, but p is read by `late`, and
  // neither runs before the other: p is copied out first, and n copied in
  // after (a control edge orders the two copies).
  ASSERT_EQ(r.copies.size(), 2u) << r.text;
  EXPECT_EQ(r.copies[0].reason, CopyReason::kAliasedParameter) << r.copies[0].explanation;
  EXPECT_EQ(r.copies[0].parameter_number, 0);
  EXPECT_TRUE(absl::StrContains(r.copies[0].explanation, "still read by late"))
      << r.copies[0].explanation;
  EXPECT_EQ(r.copies[1].reason, CopyReason::kAliasedOutput) << r.copies[1].explanation;
  EXPECT_EQ(r.copies[1].output_index, ShapeIndex({0}));
  const std::string long_form = PrintModule(*r.module);
  EXPECT_TRUE(absl::StrContains(long_form, "control-predecessors={%copy.1}")) << long_form;
}

TEST(CopyInsertion, ParameterReachingTheOutputThroughALoopIsCopied) {
  Inserted r = Insert(R"(
HloModule m

cond {
  cp = (s32[], f32[4]) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(ci, n), direction=LT
}

body {
  bp = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x = f32[4] get-tuple-element(bp), index=1
  ROOT r = (s32[], f32[4]) tuple(i1, x)
}

ENTRY e {
  v = f32[4] parameter(0)
  z = s32[] parameter(1)
  init = (s32[], f32[4]) tuple(z, v)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT out = f32[4] get-tuple-element(w), index=1
}
)");
  ASSERT_EQ(r.copies.size(), 2u) << r.text;
  EXPECT_EQ(r.copies[0].reason, CopyReason::kWhileInit);
  EXPECT_EQ(r.copies[1].reason, CopyReason::kReadOnlyOutput);
  EXPECT_TRUE(absl::StrContains(r.copies[1].explanation, "holds, through w{1} (phi), parameter 0"))
      << r.copies[1].explanation;
}

TEST(CopyInsertion, OutputsThatAreParametersConstantsOrRepeated) {
  Inserted r = Insert(R"(
HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  c = f32[4] constant({1, 2, 3, 4})
  n = f32[4] negate(p)
  ROOT t = (f32[4], f32[4], f32[4], f32[4]) tuple(p, c, n, n)
}
)");
  ASSERT_EQ(r.copies.size(), 3u) << r.text;
  int read_only = 0, repeated = 0;
  for (const InsertedCopy& c : r.copies) {
    read_only += c.reason == CopyReason::kReadOnlyOutput;
    repeated += c.reason == CopyReason::kNonDistinctOutput;
    ASSERT_TRUE(c.output_index.has_value());
  }
  EXPECT_EQ(read_only, 2);
  EXPECT_EQ(repeated, 1);
}

TEST(CopyInsertion, NestedAliasingCopiesTheUnaliasedRepeats) {
  Inserted r = Insert(R"(
HloModule m, input_output_alias={ {0, 0}: (0, {0}), {1, 1}: (0, {1}) }

ENTRY entry {
  p = (f32[], f32[]) parameter(0)
  p0 = f32[] get-tuple-element(p), index=0
  p1 = f32[] get-tuple-element(p), index=1
  t0 = (f32[], f32[]) tuple(p0, p1)
  t1 = (f32[], f32[]) tuple(p0, p1)
  ROOT out = ((f32[], f32[]), (f32[], f32[])) tuple(t0, t1)
}
)");
  ASSERT_EQ(r.copies.size(), 2u) << r.text;
  std::vector<ShapeIndex> outputs;
  for (const InsertedCopy& c : r.copies) {
    EXPECT_EQ(c.reason, CopyReason::kNonDistinctOutput);
    outputs.push_back(*c.output_index);
  }
  std::sort(outputs.begin(), outputs.end());
  EXPECT_EQ(outputs, (std::vector<ShapeIndex>{{0, 1}, {1, 0}}));
}

TEST(CopyInsertion, NeedsAFlattenedCallGraph) {
  auto m = ParseHloModule(R"(
HloModule m

f {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
}

ENTRY e {
  p = f32[] parameter(0)
  c1 = f32[] call(p), to_apply=f
  ROOT c2 = f32[] call(c1), to_apply=f
}
)",
                          "t.hlo");
  ASSERT_TRUE(m.ok());
  absl::StatusOr<bool> changed = CopyInsertion().Run(**m);
  EXPECT_TRUE(absl::IsFailedPrecondition(changed.status())) << changed.status();
}

TEST(CopyInsertion, ScheduledModuleStaysScheduled) {
  Inserted r = Insert(R"(
HloModule m, is_scheduled=true

ENTRY e {
  p = f32[8] parameter(0)
  u = f32[2] parameter(1)
  i = s32[] parameter(2)
  d = f32[8] dynamic-update-slice(p, u, i)
  ROOT t = (f32[8], f32[8]) tuple(d, p)
}
)");
  ASSERT_FALSE(r.copies.empty());
  EXPECT_TRUE(r.module->config().is_scheduled);
  const HloComputation* entry = r.module->entry_computation();
  std::vector<HloInstruction*> order;
  for (const auto& i : entry->instructions()) order.push_back(i.get());
  EXPECT_TRUE(HloSchedule::VerifySequence(*entry, order).ok()) << r.text;
}

TEST(CopyInsertion, AsyncCopyPairNeedsNoCopy) {
  Inserted r = Insert(R"(
HloModule m

ENTRY e {
  p = f32[8] parameter(0)
  n = f32[8] negate(p)
  s = (f32[8], f32[8], u32[]) copy-start(n)
  d = f32[8] copy-done(s)
  ROOT a = f32[8] add(d, n)
}
)");
  EXPECT_TRUE(r.copies.empty()) << r.text;
}

TEST(CopyInsertion, CustomCallUpdatingItsOperandInPlace) {
  Inserted r = Insert(R"(
HloModule m

ENTRY e {
  p = f32[8] parameter(0)
  n = f32[8] negate(p)
  c = f32[8] custom-call(n), custom_call_target="update", output_to_operand_aliasing={{}: (0, {})}
  ROOT t = (f32[8], f32[8]) tuple(c, n)
}
)");
  // n is an output too, so the in-place update works on a copy.
  ASSERT_EQ(r.copies.size(), 1u) << r.text;
  EXPECT_EQ(r.copies[0].reason, CopyReason::kInPlaceOperand);
}

TEST(CopyInsertion, ReasonNames) {
  EXPECT_STREQ(CopyReasonName(CopyReason::kInPlaceOperand), "in-place-operand");
  EXPECT_STREQ(CopyReasonName(CopyReason::kWhileInit), "while-init");
  EXPECT_STREQ(CopyReasonName(CopyReason::kNonDistinctOutput), "non-distinct-output");
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
