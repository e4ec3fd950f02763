// Host transfers end to end: the CPU backend and the interpreter run the same
// module against HostTransfers with the same blocks and callbacks, and must
// give the same results, the same outfeed values and the same errors.
#include "xlite/cpu/host_transfer_thunks.h"

#include <functional>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "xlite/cpu/cpu_test_util.h"
#include "xlite/eval/host_transfers.h"

namespace xlite::cpu {
namespace {
namespace XLITE_UNITY_ID {

using testing::CompileText;
using testing::ParseOrDie;

Literal F32(std::vector<float> values) {
  Literal l(Shape::Array(PrimitiveType::F32, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) l.SetDouble(static_cast<int64_t>(i), values[i]);
  return l;
}

std::vector<double> Doubles(const Literal& l) {
  std::vector<double> out;
  for (int64_t i = 0; i < l.element_count(); ++i) out.push_back(l.GetDouble(i));
  return out;
}

struct Outcome {
  absl::StatusOr<Literal> result = absl::UnknownError("not run");
  std::vector<Literal> outfeed;  // device 0's, in order
};

// Runs `text` on the interpreter (compiled = false) or the CPU backend, with
// a fresh HostTransfers that `setup` fills.
Outcome RunWith(const std::string& text, bool compiled, std::vector<Literal> args,
                const std::function<void(HostTransfers&)>& setup) {
  HostTransfers transfers(std::chrono::milliseconds(200));
  setup(transfers);
  Outcome run;
  if (compiled) {
    absl::StatusOr<std::unique_ptr<runtime::Executable>> e = CompileText(text);
    if (!e.ok()) {
      run.result = e.status();
      return run;
    }
    runtime::ExecuteOptions options;
    options.host_transfers = &transfers;
    run.result = (*e)->ExecuteLiterals(args, options);
  } else {
    std::unique_ptr<HloModule> m = ParseOrDie(text);
    EvalOptions options;
    options.host_transfers = &transfers;
    run.result = Evaluate(*m, args, options);
  }
  while (transfers.outfeed_size(0) > 0) run.outfeed.push_back(*transfers.PopOutfeed(0));
  return run;
}

// The same run on both; expects equal results and outfeeds; returns the
// compiled one.
Outcome ExpectSameOnBoth(const std::string& text, const std::vector<Literal>& args,
                         const std::function<void(HostTransfers&)>& setup) {
  Outcome interpreted = RunWith(text, false, args, setup);
  Outcome compiled = RunWith(text, true, args, setup);
  EXPECT_TRUE(interpreted.result.ok()) << interpreted.result.status();
  EXPECT_TRUE(compiled.result.ok()) << compiled.result.status();
  if (interpreted.result.ok() && compiled.result.ok()) {
    runtime::Comparison c = runtime::CompareLiterals(*compiled.result, *interpreted.result);
    EXPECT_TRUE(c.matches) << c.ToString(true);
  }
  EXPECT_EQ(compiled.outfeed.size(), interpreted.outfeed.size());
  for (size_t i = 0; i < std::min(compiled.outfeed.size(), interpreted.outfeed.size()); ++i) {
    runtime::Comparison c = runtime::CompareLiterals(compiled.outfeed[i], interpreted.outfeed[i]);
    EXPECT_TRUE(c.matches) << "outfeed " << i << ": " << c.ToString(true);
  }
  return compiled;
}

constexpr char kInfeedLoop[] = R"(
HloModule infeed_loop
cond {
  p = (s32[], f32[3], token[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[3], token[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = f32[3] get-tuple-element(p), index=1
  tok = token[] get-tuple-element(p), index=2
  in = (f32[3], token[]) infeed(tok)
  x = f32[3] get-tuple-element(in), index=0
  t1 = token[] get-tuple-element(in), index=1
  sum = f32[3] add(acc, x)
  t2 = token[] outfeed(sum, t1), outfeed_shape=f32[3]{0}
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT r = (s32[], f32[3], token[]) tuple(next, sum, t2)
}
ENTRY e {
  zero = s32[] constant(0)
  z = f32[] constant(0)
  acc = f32[3] broadcast(z), dimensions={}
  tok = token[] after-all()
  init = (s32[], f32[3], token[]) tuple(zero, acc, tok)
  w = (s32[], f32[3], token[]) while(init), condition=cond, body=body
  ROOT out = f32[3] get-tuple-element(w), index=1
}
)";

TEST(HostTransfers, InfeedLoopOnBothBackends) {
  Outcome run = ExpectSameOnBoth(kInfeedLoop, {}, [](HostTransfers& t) {
    for (int k = 0; k < 4; ++k) t.PushInfeed(0, F32({1.0f * k, 10.0f * k, -1}));
  });
  ASSERT_TRUE(run.result.ok());
  EXPECT_EQ(Doubles(*run.result), (std::vector<double>{6, 60, -4}));
  ASSERT_EQ(run.outfeed.size(), 4u);
  EXPECT_EQ(Doubles(run.outfeed[0]), (std::vector<double>{0, 0, -1}));
  EXPECT_EQ(Doubles(run.outfeed[3]), (std::vector<double>{6, 60, -4}));
}

TEST(HostTransfers, OutfeedsComeOutInTokenOrder) {
  constexpr char kText[] = R"(
HloModule outfeed_order
ENTRY e {
  x = f32[2] parameter(0)
  t0 = token[] after-all()
  t1 = token[] outfeed(x, t0), outfeed_shape=f32[2]{0}
  y = f32[2] negate(x)
  t2 = token[] outfeed(y, t1), outfeed_shape=f32[2]{0}
  z = f32[2] add(x, x)
  pair = (f32[2], f32[2]) tuple(z, y)
  t3 = token[] outfeed(pair, t2), outfeed_shape=(f32[2]{0}, f32[2]{0})
  ROOT r = f32[2] multiply(x, x)
})";
  std::vector<Literal> args;
  args.push_back(F32({1.5f, -2}));
  Outcome run = ExpectSameOnBoth(kText, args, [](HostTransfers&) {});
  ASSERT_EQ(run.outfeed.size(), 3u);
  EXPECT_EQ(Doubles(run.outfeed[0]), (std::vector<double>{1.5, -2}));
  EXPECT_EQ(Doubles(run.outfeed[1]), (std::vector<double>{-1.5, 2}));
  ASSERT_EQ(run.outfeed[2].tuple_elements().size(), 2u);
  EXPECT_EQ(Doubles(run.outfeed[2].tuple_elements()[0]), (std::vector<double>{3, -4}));
}

TEST(HostTransfers, TupleInfeedWithAColumnMajorLayout) {
  constexpr char kText[] = R"(
HloModule tuple_infeed
ENTRY e {
  t0 = token[] after-all()
  in = ((s32[2,3]{0,1}, pred[]), token[]) infeed(t0)
  d = (s32[2,3]{0,1}, pred[]) get-tuple-element(in), index=0
  a = s32[2,3]{0,1} get-tuple-element(d), index=0
  ROOT r = s32[2,3] negate(a)
})";
  Outcome run = ExpectSameOnBoth(kText, {}, [](HostTransfers& t) {
    Literal a(Shape::Array(PrimitiveType::S32, {2, 3}));
    for (int i = 0; i < 6; ++i) a.SetInt(i, i + 1);
    std::vector<Literal> elements;
    elements.push_back(std::move(a));
    elements.push_back(Literal(Shape::Array(PrimitiveType::PRED, {})));
    t.PushInfeed(0, Literal::Tuple(std::move(elements)));
  });
  ASSERT_TRUE(run.result.ok());
  EXPECT_EQ(Doubles(*run.result), (std::vector<double>{-1, -2, -3, -4, -5, -6}));
}

TEST(HostTransfers, HostSendAndRecvGoThroughTheChannelsCallbacks) {
  constexpr char kText[] = R"(
HloModule send_recv
ENTRY e {
  x = f32[3] parameter(0)
  t0 = token[] after-all()
  s = (f32[3], u32[], token[]) send(x, t0), channel_id=3, is_host_transfer=true
  sd = token[] send-done(s), channel_id=3, is_host_transfer=true
  r = (f32[3], u32[], token[]) recv(sd), channel_id=5, is_host_transfer=true
  rd = (f32[3], token[]) recv-done(r), channel_id=5, is_host_transfer=true
  v = f32[3] get-tuple-element(rd), index=0
  ROOT y = f32[3] add(v, x)
})";
  for (bool compiled : {false, true}) {
    SCOPED_TRACE(compiled ? "compiled" : "interpreted");
    std::vector<Literal> sent;
    std::vector<HostTransferMetadata> seen;
    std::vector<Literal> args;
    args.push_back(F32({1, 2, 3}));
    Outcome run = RunWith(kText, compiled, std::move(args), [&](HostTransfers& t) {
      t.SetSendCallback(3, [&](const HostTransferMetadata& m, const Literal& v) {
        seen.push_back(m);
        sent.push_back(v);
        return absl::OkStatus();
      });
      t.SetRecvCallback(5, [&](const HostTransferMetadata& m) -> absl::StatusOr<Literal> {
        seen.push_back(m);
        return F32({10, 20, 30});
      });
    });
    ASSERT_TRUE(run.result.ok()) << run.result.status();
    EXPECT_EQ(Doubles(*run.result), (std::vector<double>{11, 22, 33}));
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(Doubles(sent[0]), (std::vector<double>{1, 2, 3}));
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0].channel_id, 3);
    EXPECT_EQ(seen[0].shape.ToString(false), "f32[3]");
    EXPECT_EQ(seen[0].instruction, "send 's'");
    EXPECT_EQ(seen[1].channel_id, 5);
    EXPECT_EQ(seen[1].instruction, "recv 'r'");
  }
}

constexpr char kOneInfeed[] = R"(
HloModule one_infeed
ENTRY e {
  t0 = token[] after-all()
  in = (f32[3], token[]) infeed(t0)
  ROOT x = f32[3] get-tuple-element(in), index=0
})";

TEST(HostTransfers, EmptyInfeedTimesOutNamingTheInstruction) {
  for (bool compiled : {false, true}) {
    SCOPED_TRACE(compiled ? "compiled" : "interpreted");
    Outcome run = RunWith(kOneInfeed, compiled, {}, [](HostTransfers&) {});
    ASSERT_FALSE(run.result.ok());
    EXPECT_TRUE(absl::IsDeadlineExceeded(run.result.status())) << run.result.status();
    EXPECT_TRUE(absl::StrContains(run.result.status().message(), "infeed 'in'"))
        << run.result.status();
  }
}

TEST(HostTransfers, InfeedShapeMismatchNamesBothShapes) {
  for (bool compiled : {false, true}) {
    SCOPED_TRACE(compiled ? "compiled" : "interpreted");
    Outcome run = RunWith(kOneInfeed, compiled, {}, [](HostTransfers& t) {
      t.PushInfeed(0, F32({1, 2}));
    });
    ASSERT_FALSE(run.result.ok());
    const absl::Status& s = run.result.status();
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "infeed 'in'")) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "f32[2]")) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "f32[3]")) << s;
  }
}

TEST(HostTransfers, MissingCallbackNamesTheChannelAndInstruction) {
  constexpr char kText[] = R"(
HloModule missing
ENTRY e {
  t0 = token[] after-all()
  r = (f32[2], u32[], token[]) recv(t0), channel_id=7, is_host_transfer=true
  rd = (f32[2], token[]) recv-done(r), channel_id=7, is_host_transfer=true
  ROOT v = f32[2] get-tuple-element(rd), index=0
})";
  for (bool compiled : {false, true}) {
    SCOPED_TRACE(compiled ? "compiled" : "interpreted");
    Outcome run = RunWith(kText, compiled, {}, [](HostTransfers& t) {
      // Another channel's callback does not serve channel 7.
      t.SetRecvCallback(8, [](const HostTransferMetadata&) { return F32({1, 2}); });
    });
    ASSERT_FALSE(run.result.ok());
    const absl::Status& s = run.result.status();
    EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "channel 7")) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "recv 'r'")) << s;
  }
}

TEST(HostTransfers, RecvCallbackOfTheWrongShapeOrFailingIsAnError) {
  constexpr char kText[] = R"(
HloModule bad_recv
ENTRY e {
  t0 = token[] after-all()
  r = (f32[2], u32[], token[]) recv(t0), channel_id=1, is_host_transfer=true
  rd = (f32[2], token[]) recv-done(r), channel_id=1, is_host_transfer=true
  ROOT v = f32[2] get-tuple-element(rd), index=0
})";
  for (bool compiled : {false, true}) {
    Outcome wrong = RunWith(kText, compiled, {}, [](HostTransfers& t) {
      t.SetRecvCallback(1, [](const HostTransferMetadata&) { return F32({1, 2, 3}); });
    });
    ASSERT_FALSE(wrong.result.ok());
    EXPECT_TRUE(absl::IsInvalidArgument(wrong.result.status())) << wrong.result.status();
    EXPECT_TRUE(absl::StrContains(wrong.result.status().message(), "f32[3]"));
    Outcome failing = RunWith(kText, compiled, {}, [](HostTransfers& t) {
      t.SetRecvCallback(1, [](const HostTransferMetadata&) -> absl::StatusOr<Literal> {
        return absl::UnavailableError("host is gone");
      });
    });
    ASSERT_FALSE(failing.result.ok());
    EXPECT_TRUE(absl::IsUnavailable(failing.result.status())) << failing.result.status();
    EXPECT_TRUE(absl::StrContains(failing.result.status().message(), "host is gone"));
  }
}

TEST(HostTransfers, WithoutHostTransfersTheRunSaysNoInfeedWasGiven) {
  absl::StatusOr<std::unique_ptr<runtime::Executable>> e = CompileText(kOneInfeed);
  ASSERT_TRUE(e.ok()) << e.status();
  absl::StatusOr<Literal> compiled = (*e)->ExecuteLiterals({});
  ASSERT_FALSE(compiled.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(compiled.status())) << compiled.status();
  EXPECT_TRUE(absl::StrContains(compiled.status().message(), "no infeed was given"));
  absl::StatusOr<Literal> interpreted = Evaluate(*ParseOrDie(kOneInfeed), {});
  ASSERT_FALSE(interpreted.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(interpreted.status())) << interpreted.status();
  EXPECT_TRUE(absl::StrContains(interpreted.status().message(), "no infeed was given"));
}

TEST(HostTransfers, DeviceToDeviceSendIsUnimplemented) {
  constexpr char kText[] = R"(
HloModule d2d
ENTRY e {
  x = f32[2] parameter(0)
  t0 = token[] after-all()
  s = (f32[2], u32[], token[]) send(x, t0), channel_id=1
  ROOT sd = token[] send-done(s), channel_id=1
})";
  absl::StatusOr<std::unique_ptr<runtime::Executable>> e = CompileText(kText);
  ASSERT_FALSE(e.ok());
  EXPECT_TRUE(absl::IsUnimplemented(e.status())) << e.status();
  EXPECT_TRUE(absl::StrContains(e.status().message(), "'s'")) << e.status();
  EXPECT_TRUE(absl::StrContains(e.status().message(), "device-to-device")) << e.status();
  std::vector<Literal> args;
  args.push_back(F32({1, 2}));
  absl::StatusOr<Literal> interpreted = Evaluate(*ParseOrDie(kText), args);
  ASSERT_FALSE(interpreted.ok());
  EXPECT_TRUE(absl::IsUnimplemented(interpreted.status())) << interpreted.status();
}

TEST(HostTransfers, ThunkDeclaresItsSlicesAndQueuesArePerDevice) {
  absl::StatusOr<std::unique_ptr<runtime::Executable>> e = CompileText(kOneInfeed);
  ASSERT_TRUE(e.ok()) << e.status();
  const std::string dump = (*e)->thunks().ToString();
  EXPECT_TRUE(absl::StrContains(dump, "kHostTransfer")) << dump;
  EXPECT_TRUE(absl::StrContains(dump, "writes")) << dump;
  // Replica 1 reads device 1's queue (partition * replicas + replica).
  HostTransfers transfers(std::chrono::milliseconds(100));
  transfers.PushInfeed(0, F32({1, 2, 3}));
  transfers.PushInfeed(1, F32({4, 5, 6}));
  runtime::ExecuteOptions options;
  options.host_transfers = &transfers;
  options.replica_id = 1;
  absl::StatusOr<Literal> got = (*e)->ExecuteLiterals({}, options);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(Doubles(*got), (std::vector<double>{4, 5, 6}));
  EXPECT_EQ(transfers.infeed_size(0), 1);
  EXPECT_EQ(transfers.infeed_size(1), 0);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::cpu
