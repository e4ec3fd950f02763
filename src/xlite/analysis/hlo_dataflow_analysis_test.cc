#include "xlite/analysis/hlo_dataflow_analysis.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "xlite/analysis/analysis_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

using analysis_test::Find;
using analysis_test::FindComputation;
using analysis_test::Parse;

// Runs the analysis (and its self-check) on `text`.
struct Analyzed {
  std::unique_ptr<HloModule> module;
  std::unique_ptr<HloDataflowAnalysis> dataflow;

  HloInstruction* operator[](const char* name) const { return Find(*module, name); }
  const HloValue* At(const char* name, const ShapeIndex& index = {}) const {
    return dataflow->GetValueAt(Find(*module, name), index);
  }
  bool Defines(const char* name, const ShapeIndex& index = {}) const {
    return dataflow->ValueIsDefinedAt(Find(*module, name), index);
  }
};

Analyzed Analyze(const char* text) {
  Analyzed a;
  a.module = Parse(text);
  if (a.module == nullptr) return a;
  auto dataflow = HloDataflowAnalysis::Run(*a.module);
  EXPECT_TRUE(dataflow.ok()) << dataflow.status();
  if (!dataflow.ok()) return a;
  a.dataflow = std::move(*dataflow);
  absl::Status verified = a.dataflow->Verify();
  EXPECT_TRUE(verified.ok()) << verified;
  return a;
}

bool HasUse(const HloValue* value, const HloInstruction* user, int64_t operand,
            const ShapeIndex& index = {}) {
  return std::find(value->uses().begin(), value->uses().end(),
                   HloUse{const_cast<HloInstruction*>(user), operand, index}) !=
         value->uses().end();
}

bool UsedBy(const HloValue* value, const HloInstruction* user) {
  return std::any_of(value->uses().begin(), value->uses().end(),
                     [&](const HloUse& u) { return u.instruction == user; });
}

// "name:operand{index}->{output}" for every in-place pair of the module.
std::vector<std::string> PairStrings(const HloDataflowAnalysis& dataflow) {
  std::vector<std::string> pairs;
  for (const InPlacePair& p : dataflow.in_place_pairs()) {
    pairs.push_back(absl::StrCat(p.instruction->name(), ":", p.input.operand_number,
                                 ShapeIndexToString(p.input.operand_index), "->",
                                 ShapeIndexToString(p.output)));
  }
  return pairs;
}

TEST(Dataflow, ElementwiseOpsDefineOneValueEach) {
  Analyzed a = Analyze(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  ROOT s = f32[4] add(n, p)
}
)");
  ASSERT_NE(a.dataflow, nullptr);
  EXPECT_EQ(a.dataflow->value_count(), 3);
  EXPECT_TRUE(a.Defines("p"));
  EXPECT_TRUE(a.Defines("n"));
  const HloValue* p = a.At("p");
  EXPECT_TRUE(HasUse(p, a["n"], 0));
  EXPECT_TRUE(HasUse(p, a["s"], 1));
  EXPECT_EQ(p->positions().size(), 1u);
  EXPECT_TRUE(a.At("s")->live_out_of_module());
  EXPECT_FALSE(p->live_out_of_module());
}

TEST(Dataflow, TupleAndGetTupleElementForward) {
  Analyzed a = Analyze(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  q = s32[2] parameter(1)
  t = (f32[4], s32[2]) tuple(p, q)
  g = s32[2] get-tuple-element(t), index=1
  ROOT r = s32[2] negate(g)
}
)");
  ASSERT_NE(a.dataflow, nullptr);
  // The tuple defines only its table; its elements are the operands' values.
  EXPECT_TRUE(a.Defines("t"));
  EXPECT_FALSE(a.Defines("t", {0}));
  EXPECT_EQ(a.At("t", {0}), a.At("p"));
  EXPECT_EQ(a.At("t", {1}), a.At("q"));
  EXPECT_FALSE(a.Defines("g"));
  EXPECT_EQ(a.At("g"), a.At("q"));
  const HloValue* q = a.At("q");
  EXPECT_EQ(q->positions().size(), 3u);  // q, t{1}, g
  // The tuple passes q on, get-tuple-element reads only t's table: the
  // negate is q's only reader.
  EXPECT_FALSE(UsedBy(q, a["t"]));
  EXPECT_FALSE(UsedBy(q, a["g"]));
  EXPECT_TRUE(HasUse(q, a["r"], 0));
  EXPECT_TRUE(HasUse(a.At("t"), a["g"], 0));
}

TEST(Dataflow, BitcastForwardsAndCopyDefines) {
  Analyzed a = Analyze(R"(
HloModule m
ENTRY e {
  p = f32[2,2] parameter(0)
  b = f32[4] bitcast(p)
  c = f32[4] copy(b)
  q = f32[4] parameter(1)
  t = (f32[4], f32[4]) tuple(c, q)
  ROOT tc = (f32[4], f32[4]) copy(t)
}
)");
  ASSERT_NE(a.dataflow, nullptr);
  EXPECT_FALSE(a.Defines("b"));
  EXPECT_EQ(a.At("b"), a.At("p"));
  EXPECT_TRUE(HasUse(a.At("p"), a["b"], 0));
  EXPECT_TRUE(a.Defines("c"));
  // A copy of a tuple copies the table only.
  EXPECT_TRUE(a.Defines("tc"));
  EXPECT_EQ(a.At("tc", {0}), a.At("c"));
  EXPECT_EQ(a.At("tc", {1}), a.At("q"));
  EXPECT_FALSE(UsedBy(a.At("q"), a["tc"]));
  EXPECT_TRUE(HasUse(a.At("t"), a["tc"], 0));
}

TEST(Dataflow, OptimizationBarrierAndAddDependencyForward) {
  Analyzed a = Analyze(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  t = (f32[4], f32[4]) tuple(p, q)
  b = (f32[4], f32[4]) opt-barrier(t)
  tok = token[] after-all()
  d = f32[4] add-dependency(p, tok)
  g = f32[4] get-tuple-element(b), index=1
  ROOT s = f32[4] add(g, d)
}
)");
  ASSERT_NE(a.dataflow, nullptr);
  EXPECT_FALSE(a.Defines("b"));
  EXPECT_EQ(a.At("b"), a.At("t"));
  EXPECT_EQ(a.At("b", {1}), a.At("q"));
  EXPECT_FALSE(a.Defines("d"));
  EXPECT_EQ(a.At("d"), a.At("p"));
}

constexpr char kWhileModule[] = R"(
HloModule m

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
  ROOT r = (s32[], f32[4]) tuple(i2, v)
}

ENTRY e {
  p = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, p)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT out = f32[4] get-tuple-element(w), index=1
}
)";

TEST(Dataflow, WhileDefinesPhisAtLoopStateAndResult) {
  Analyzed a = Analyze(kWhileModule);
  ASSERT_NE(a.dataflow, nullptr);
  const HloComputation* body = FindComputation(*a.module, "body");
  const HloComputation* cond = FindComputation(*a.module, "cond");
  const HloInstruction* body_param = body->parameter_instruction(0);
  const HloInstruction* cond_param = cond->parameter_instruction(0);
  for (const ShapeIndex& index : {ShapeIndex{}, ShapeIndex{0}, ShapeIndex{1}}) {
    const HloValue* w = a.At("w", index);
    ASSERT_NE(w, nullptr);
    EXPECT_TRUE(w->is_phi());
    EXPECT_EQ(w->defining_instruction(), a["w"]);
    const HloValue* bp = a.dataflow->GetValueAt(body_param, index);
    const HloValue* cp = a.dataflow->GetValueAt(cond_param, index);
    EXPECT_TRUE(bp->is_phi());
    EXPECT_TRUE(cp->is_phi());
    EXPECT_EQ(bp->defining_instruction(), body_param);
    EXPECT_EQ(cp->defining_instruction(), cond_param);
  }
  // Element 0: init's zero and the body's i2 meet at each phi.
  const HloValue* w0 = a.At("w", {0});
  ASSERT_EQ(w0->phi_inputs().size(), 2u);
  EXPECT_EQ(w0->phi_inputs()[0], a.At("zero"));
  EXPECT_EQ(w0->phi_inputs()[1], a.At("i2"));
  // Element 1 passes through the body: its back edge is the body
  // parameter's own phi.
  const HloValue* bp1 = a.dataflow->GetValueAt(body_param, {1});
  EXPECT_EQ(a.At("v"), bp1);
  EXPECT_EQ(a.dataflow->GetValueAt(body->root_instruction(), {1}), bp1);
  const HloValue* w1 = a.At("w", {1});
  ASSERT_EQ(w1->phi_inputs().size(), 2u);
  EXPECT_EQ(w1->phi_inputs()[0], a.At("p"));
  EXPECT_EQ(w1->phi_inputs()[1], bp1);
  EXPECT_EQ(a.At("out"), w1);
  // The while reads its whole init.
  EXPECT_TRUE(HasUse(a.At("p"), a["w"], 0, {1}));
  EXPECT_TRUE(HasUse(a.At("init"), a["w"], 0, {}));
}

TEST(Dataflow, ConditionalForwardsOperandsToBranchesAndMergesResults) {
  Analyzed a = Analyze(R"(
HloModule m

on_true {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}

on_false {
  y = f32[4] parameter(0)
  ROOT y2 = f32[4] exponential(y)
}

ENTRY e {
  pred = pred[] parameter(0)
  a = f32[4] parameter(1)
  b = f32[4] parameter(2)
  ROOT c = f32[4] conditional(pred, a, b), true_computation=on_true, false_computation=on_false
}
)");
  ASSERT_NE(a.dataflow, nullptr);
  EXPECT_EQ(a.At("x"), a.At("a"));
  EXPECT_EQ(a.At("y"), a.At("b"));
  EXPECT_FALSE(a.Defines("x"));
  const HloValue* c = a.At("c");
  EXPECT_TRUE(c->is_phi());
  ASSERT_EQ(c->phi_inputs().size(), 2u);
  EXPECT_EQ(c->phi_inputs()[0], a.At("n"));
  EXPECT_EQ(c->phi_inputs()[1], a.At("y2"));
  EXPECT_TRUE(HasUse(a.At("a"), a["c"], 1));
  EXPECT_TRUE(HasUse(a.At("a"), a["n"], 0));
}

TEST(Dataflow, CallForwardsArgumentsAndResult) {
  Analyzed a = Analyze(R"(
HloModule m

callee {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  s = f32[4] add(x, y)
  ROOT t = (f32[4], f32[4]) tuple(s, x)
}

ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  ROOT c = (f32[4], f32[4]) call(p, q), to_apply=callee
}
)");
  ASSERT_NE(a.dataflow, nullptr);
  EXPECT_EQ(a.At("x"), a.At("p"));
  EXPECT_EQ(a.At("y"), a.At("q"));
  EXPECT_FALSE(a.Defines("c"));
  EXPECT_EQ(a.At("c"), a.At("t"));
  EXPECT_EQ(a.At("c", {0}), a.At("s"));
  EXPECT_EQ(a.At("c", {1}), a.At("p"));
  EXPECT_TRUE(HasUse(a.At("p"), a["c"], 0));
  EXPECT_TRUE(a.At("s")->live_out_of_module());
}

TEST(Dataflow, ComputationCalledFromTwoSitesGetsParameterPhis) {
  Analyzed a = Analyze(R"(
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
)");
  ASSERT_NE(a.dataflow, nullptr);
  const HloValue* x = a.At("x");
  EXPECT_TRUE(x->is_phi());
  ASSERT_EQ(x->phi_inputs().size(), 2u);
  EXPECT_EQ(x->phi_inputs()[0], a.At("p"));
  EXPECT_EQ(x->phi_inputs()[1], a.At("n"));
  EXPECT_EQ(a.At("c1"), a.At("n"));
  EXPECT_EQ(a.At("c2"), a.At("n"));
}

TEST(Dataflow, OneComputationForTwoBranchesGetsAParameterPhi) {
  Analyzed a = Analyze(R"(
HloModule m

branch {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}

ENTRY e {
  i = s32[] parameter(0)
  p = f32[4] parameter(1)
  q = f32[4] parameter(2)
  ROOT c = f32[4] conditional(i, p, q), branch_computations={branch, branch}
}
)");
  ASSERT_NE(a.dataflow, nullptr);
  const HloValue* x = a.At("x");
  EXPECT_TRUE(x->is_phi());
  ASSERT_EQ(x->phi_inputs().size(), 2u);
  EXPECT_EQ(x->phi_inputs()[0], a.At("p"));
  EXPECT_EQ(x->phi_inputs()[1], a.At("q"));
  const HloValue* c = a.At("c");
  ASSERT_EQ(c->phi_inputs().size(), 1u);  // both branches end in n
  EXPECT_EQ(c->phi_inputs()[0], a.At("n"));
}

TEST(Dataflow, EmbeddedComputationParametersDefineValues) {
  Analyzed a = Analyze(R"(
HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

fused {
  f0 = f32[4] parameter(0)
  ROOT fn = f32[4] negate(f0)
}

ENTRY e {
  p = f32[4] parameter(0)
  f = f32[4] fusion(p), kind=kLoop, calls=fused
  z = f32[] constant(0)
  ROOT r = f32[] reduce(f, z), dimensions={0}, to_apply=add
}
)");
  ASSERT_NE(a.dataflow, nullptr);
  EXPECT_TRUE(a.Defines("x"));
  EXPECT_TRUE(a.Defines("f0"));
  EXPECT_NE(a.At("f0"), a.At("p"));
  EXPECT_TRUE(a.Defines("f"));
  EXPECT_TRUE(HasUse(a.At("p"), a["f"], 0));
}

TEST(Dataflow, AsyncStartPassesOperandsAndWrappedResult) {
  Analyzed a = Analyze(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  s = ((f32[4]), f32[8], s32[]) custom-call-start(p), custom_call_target="foo"
  u = ((f32[4]), f32[8], s32[]) custom-call-update(s)
  ROOT d = f32[8] custom-call-done(u)
}
)");
  ASSERT_NE(a.dataflow, nullptr);
  const HloComputation* wrapped = a["s"]->async_wrapped_computation();
  ASSERT_NE(wrapped, nullptr);
  const HloInstruction* root = wrapped->root_instruction();
  // {0, i}: the operands; {1}: the wrapped result; tables and context new.
  EXPECT_TRUE(a.Defines("s"));
  EXPECT_TRUE(a.Defines("s", {0}));
  EXPECT_EQ(a.At("s", {0, 0}), a.At("p"));
  EXPECT_EQ(a.At("s", {1}), a.dataflow->GetValueAt(root));
  EXPECT_TRUE(a.Defines("s", {2}));
  EXPECT_EQ(a.dataflow->GetValueAt(wrapped->parameter_instruction(0)), a.At("p"));
  // Update passes everything on but its tables; done returns the result.
  EXPECT_TRUE(a.Defines("u"));
  EXPECT_EQ(a.At("u", {0, 0}), a.At("p"));
  EXPECT_EQ(a.At("u", {2}), a.At("s", {2}));
  EXPECT_FALSE(a.Defines("d"));
  EXPECT_EQ(a.At("d"), a.dataflow->GetValueAt(root));
  // The operand is read until the done: it stays alive that long.
  EXPECT_TRUE(HasUse(a.At("p"), a["d"], 0, {0, 0}));
}

TEST(Dataflow, CopyStartAndCopyDone) {
  Analyzed a = Analyze(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  cs = (f32[4], f32[4], u32[]) copy-start(p)
  ROOT cd = f32[4] copy-done(cs)
}
)");
  ASSERT_NE(a.dataflow, nullptr);
  EXPECT_TRUE(a.Defines("cs", {0}));  // the destination
  EXPECT_EQ(a.At("cs", {1}), a.At("p"));
  EXPECT_TRUE(a.Defines("cs", {2}));
  EXPECT_EQ(a.At("cd"), a.At("cs", {0}));
  EXPECT_TRUE(HasUse(a.At("p"), a["cd"], 0, {1}));
}

TEST(Dataflow, AllReduceStartDefinesInPlaceAndDoneForwards) {
  Analyzed a = Analyze(R"(
HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  p = f32[4] parameter(0)
  ars = f32[4] all-reduce-start(p), replica_groups={}, to_apply=add
  ROOT ard = f32[4] all-reduce-done(ars)
}
)");
  ASSERT_NE(a.dataflow, nullptr);
  EXPECT_TRUE(a.Defines("ars"));
  EXPECT_EQ(a.At("ard"), a.At("ars"));
  ASSERT_EQ(a.dataflow->in_place_pairs().size(), 1u);
  const InPlacePair& pair = a.dataflow->in_place_pairs()[0];
  EXPECT_EQ(pair.instruction, a["ars"]);
  EXPECT_EQ(pair.input, (HloOperandIndex{0, {}}));
  EXPECT_EQ(pair.output, ShapeIndex{});
}

TEST(Dataflow, AllGatherStartAndDone) {
  Analyzed a = Analyze(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ags = (f32[4], f32[8]) all-gather-start(p), replica_groups={{0,1}}, dimensions={0}
  ROOT agd = f32[8] all-gather-done(ags)
}
)");
  ASSERT_NE(a.dataflow, nullptr);
  EXPECT_EQ(a.At("ags", {0}), a.At("p"));
  EXPECT_TRUE(a.Defines("ags", {1}));
  EXPECT_EQ(a.At("agd"), a.At("ags", {1}));
  EXPECT_TRUE(HasUse(a.At("p"), a["agd"], 0, {0}));
}

TEST(Dataflow, CollectivePermuteStartAndDone) {
  Analyzed a = Analyze(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  cps = (f32[4], f32[4], u32[], u32[]) collective-permute-start(p), source_target_pairs={{0,1},{1,0}}
  ROOT cpd = f32[4] collective-permute-done(cps)
}
)");
  ASSERT_NE(a.dataflow, nullptr);
  EXPECT_EQ(a.At("cps", {0}), a.At("p"));
  EXPECT_TRUE(a.Defines("cps", {1}));
  EXPECT_TRUE(a.Defines("cps", {2}));
  EXPECT_EQ(a.At("cpd"), a.At("cps", {1}));
}

TEST(Dataflow, OlderCollectiveStartFormsThatReturnTheResult) {
  // A start whose shape is the result alone (all-gather, collective-permute)
  // or an (operand, result) tuple (all-reduce), as in hlo_to_mhlo's tests.
  Analyzed a = Analyze(R"(
HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  p = f32[128,32] parameter(0)
  ags = f32[128,128] all-gather-start(p), channel_id=1, replica_groups={{0,2,4,6},{1,3,5,7}}, dimensions={1}, use_global_device_ids=true
  agd = f32[128,128] all-gather-done(ags)
  cps = f32[128,32] collective-permute-start(p), channel_id=2, source_target_pairs={{0,1},{1,2}}
  cpd = f32[128,32] collective-permute-done(cps)
  ars = (f32[128,32], f32[128,32]) all-reduce-start(p), channel_id=3, replica_groups={{0,2,4,6},{1,3,5,7}}, to_apply=add, use_global_device_ids=true
  ard = f32[128,32] all-reduce-done(ars)
  ROOT t = (f32[128,128], f32[128,32], f32[128,32]) tuple(agd, cpd, ard)
}
)");
  ASSERT_NE(a.dataflow, nullptr);
  EXPECT_TRUE(a.Defines("ags"));
  EXPECT_EQ(a.At("agd"), a.At("ags"));
  EXPECT_TRUE(a.Defines("cps"));
  EXPECT_EQ(a.At("cpd"), a.At("cps"));
  EXPECT_TRUE(a.Defines("ars", {1}));
  EXPECT_EQ(a.At("ard"), a.At("ars", {1}));
  // The tuple form updates nothing in place.
  for (const InPlacePair& pair : a.dataflow->in_place_pairs()) {
    EXPECT_NE(pair.instruction, a["ars"]);
  }
}

TEST(Dataflow, DomainForwards) {
  Analyzed a = Analyze(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  d = f32[4] domain(p), domain={kind="sharding", entry={maximal device=0}, exit={replicated}}
  ROOT n = f32[4] negate(d)
}
)");
  ASSERT_NE(a.dataflow, nullptr);
  EXPECT_FALSE(a.Defines("d"));
  EXPECT_EQ(a.At("d"), a.At("p"));
  // A domain passes its operand on without reading it.
  EXPECT_FALSE(UsedBy(a.At("p"), a["d"]));
  EXPECT_TRUE(HasUse(a.At("p"), a["n"], 0));
}

TEST(Dataflow, SendAndRecvDone) {
  Analyzed a = Analyze(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  tok = token[] after-all()
  snd = (f32[4], u32[], token[]) send(p, tok), channel_id=1
  sd = token[] send-done(snd), channel_id=1
  rcv = (f32[4], u32[], token[]) recv(tok), channel_id=2
  rd = (f32[4], token[]) recv-done(rcv), channel_id=2
  ROOT g = f32[4] get-tuple-element(rd), index=0
}
)");
  ASSERT_NE(a.dataflow, nullptr);
  EXPECT_EQ(a.At("snd", {0}), a.At("p"));
  EXPECT_TRUE(a.Defines("snd", {1}));
  // send-done reads the whole context, the data included.
  EXPECT_TRUE(HasUse(a.At("p"), a["sd"], 0, {0}));
  EXPECT_TRUE(a.Defines("rcv", {0}));
  EXPECT_EQ(a.At("rd", {0}), a.At("rcv", {0}));
  EXPECT_TRUE(a.Defines("rd"));
  EXPECT_TRUE(a.Defines("rd", {1}));
  EXPECT_EQ(a.At("g"), a.At("rcv", {0}));
}

TEST(Dataflow, InPlaceOpsDefineValuesAndRecordPairs) {
  Analyzed a = Analyze(R"(
HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  p = f32[8] parameter(0)
  u = f32[2] parameter(1)
  i = s32[] parameter(2)
  dus = f32[8] dynamic-update-slice(p, u, i)
  idx = s32[2,1] parameter(3)
  sc = f32[8] scatter(dus, idx, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  cc = (f32[8], f32[2]) custom-call(sc, u), custom_call_target="k", output_to_operand_aliasing={{0}: (0, {})}
  ROOT g = f32[8] get-tuple-element(cc), index=0
}
)");
  ASSERT_NE(a.dataflow, nullptr);
  EXPECT_TRUE(a.Defines("dus"));
  EXPECT_TRUE(a.Defines("sc"));
  EXPECT_TRUE(a.Defines("cc", {0}));
  std::vector<std::string> pairs = PairStrings(*a.dataflow);
  EXPECT_EQ(pairs, (std::vector<std::string>{"dus:0{}->{}", "sc:0{}->{}", "cc:0{}->{0}"}));
}

TEST(Dataflow, MoreInPlaceOperations) {
  Analyzed a = Analyze(R"(
HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

wrapped {
  w0 = f32[4] parameter(0)
  ROOT wc = f32[4] custom-call(w0), custom_call_target="inc", output_to_operand_aliasing={{}: (0, {})}
}

ENTRY e {
  p = f32[4,4] parameter(0)
  n = s32[] parameter(1)
  sds = f32[4,<=4] set-dimension-size(p, n), dimensions={1}
  r0 = f32[6] parameter(2)
  r1 = f32[6] parameter(3)
  o = s32[3] parameter(4)
  ra = f32[6] ragged-all-to-all(r0, r1, o, o, o, o), channel_id=1, replica_groups={{0,1,2}}
  input = f32[8,8] parameter(5)
  output = f32[8,8] parameter(6)
  zero = s32[] constant(0)
  off = (s32[], s32[]) tuple(zero, zero)
  offs = ((s32[], s32[])) tuple(off)
  cp = f32[8,8] collective-permute(input, output, offs, offs), source_target_pairs={{0,1}}, slice_sizes={{1,8}}
  a0 = f32[4] parameter(7)
  a1 = f32[4] parameter(8)
  idx = s32[2,1] parameter(9)
  u0 = f32[2] parameter(10)
  sc = (f32[4], f32[4]) scatter(a0, a1, idx, u0, u0), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add2
  ars = (f32[4], f32[4]) all-reduce-start(a0, a1), replica_groups={}, to_apply=add
  ard = (f32[4], f32[4]) all-reduce-done(ars)
  as = ((f32[4]), f32[4], s32[]) async-start(a0), calls=wrapped, output_to_operand_aliasing={{1}: (0, {})}
  ad = f32[4] async-done(as)
  ROOT t = (f32[4,<=4], f32[6], f32[8,8], (f32[4], f32[4]), (f32[4], f32[4]), f32[4]) tuple(sds, ra, cp, sc, ard, ad)
}

add2 {
  x0 = f32[] parameter(0)
  x1 = f32[] parameter(1)
  y0 = f32[] parameter(2)
  y1 = f32[] parameter(3)
  s0 = f32[] add(x0, y0)
  s1 = f32[] add(x1, y1)
  ROOT t = (f32[], f32[]) tuple(s0, s1)
}
)");
  ASSERT_NE(a.dataflow, nullptr);
  std::vector<std::string> pairs = PairStrings(*a.dataflow);
  for (const char* expected :
       {"sds:0{}->{}", "ra:1{}->{}", "cp:1{}->{}", "sc:0{}->{0}", "sc:1{}->{1}", "ars:0{}->{0}",
        "ars:1{}->{1}", "as:0{}->{1}", "wc:0{}->{}"}) {
    EXPECT_NE(std::find(pairs.begin(), pairs.end(), expected), pairs.end())
        << expected << " missing from " << absl::StrJoin(pairs, " ");
  }
  EXPECT_EQ(pairs.size(), 9u) << absl::StrJoin(pairs, " ");
}

TEST(Dataflow, FusionAroundDynamicUpdateSliceUpdatesItsParameterInPlace) {
  Analyzed a = Analyze(R"(
HloModule m

fused {
  f0 = f32[8] parameter(0)
  f1 = f32[2] parameter(1)
  f2 = s32[] parameter(2)
  n = f32[2] negate(f1)
  ROOT d = f32[8] dynamic-update-slice(f0, n, f2)
}

ENTRY e {
  p = f32[8] parameter(0)
  u = f32[2] parameter(1)
  i = s32[] parameter(2)
  ROOT f = f32[8] fusion(p, u, i), kind=kLoop, calls=fused
}
)");
  ASSERT_NE(a.dataflow, nullptr);
  bool found = false;
  for (const InPlacePair& p : a.dataflow->in_place_pairs()) {
    if (p.instruction == a["f"]) {
      found = true;
      EXPECT_EQ(p.input, (HloOperandIndex{0, {}}));
      EXPECT_EQ(p.output, ShapeIndex{});
    }
  }
  EXPECT_TRUE(found);
}

TEST(Dataflow, LateBoundAsyncOperandsAreUnimplemented) {
  // XLA's verifier refuses this form; the analysis must still not crash.
  auto m = ParseHloModule(R"(
HloModule m

wrapped {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  ROOT s = f32[4] add(x, y)
}

ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  st = ((f32[4]), f32[4], s32[]) async-start(p), calls=wrapped
  up = ((f32[4], f32[4]), f32[4], s32[]) async-update(st, q)
  ROOT d = f32[4] async-done(up)
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  auto dataflow = HloDataflowAnalysis::Run(**m);
  ASSERT_FALSE(dataflow.ok());
  EXPECT_EQ(dataflow.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(dataflow.status().message().find("late"), std::string::npos) << dataflow.status();
}

TEST(Dataflow, MalformedGetTupleElementIsAnErrorNotACrash) {
  // Built by hand: the parser and verifier would refuse this module.
  HloModule m("bad");
  auto c = std::make_unique<HloComputation>("e");
  auto p = std::make_unique<HloInstruction>(
      HloOpcode::kParameter, "p",
      Shape::Tuple({Shape::Array(PrimitiveType::F32, {4}), Shape::Array(PrimitiveType::F32, {4})}));
  HloInstruction* param = c->AddInstruction(std::move(p));
  c->SetParameter(0, param);
  auto g = std::make_unique<HloInstruction>(HloOpcode::kGetTupleElement, "g",
                                            Shape::Array(PrimitiveType::F32, {4}));
  g->attrs().tuple_index = 5;
  g->AppendOperand(param);
  c->set_root_instruction(c->AddInstruction(std::move(g)));
  c->set_is_entry(true);
  m.set_entry_computation(m.AddComputation(std::move(c)));
  auto dataflow = HloDataflowAnalysis::Run(m);
  ASSERT_FALSE(dataflow.ok());
  EXPECT_EQ(dataflow.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(dataflow.status().message().find("'g'"), std::string::npos) << dataflow.status();
  EXPECT_NE(dataflow.status().message().find("{5}"), std::string::npos) << dataflow.status();
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
