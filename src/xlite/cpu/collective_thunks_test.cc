// Collective thunks on 1-4 devices (runtime::ExecuteOnDevices) against the
// interpreter's EvaluateReplicated: every op kind, -start/-done forms,
// replica-group forms and modes, layouts, a while loop with many
// invocations; ragged-all-to-all against its definition (the interpreter
// does not run it); the rendezvous timeout and a failing device.
#include "xlite/cpu/collective_thunks.h"

#include <chrono>

#include "gtest/gtest.h"
#include "xlite/cpu/cpu_test_util.h"
#include "xlite/runtime/execute_on_devices.h"

namespace xlite::cpu {
namespace {
namespace XLITE_UNITY_ID {

using testing::CompileText;
using testing::ParseOrDie;

std::unique_ptr<runtime::Client> MakeClient(
    int devices, std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  absl::StatusOr<std::unique_ptr<runtime::Client>> client = runtime::Client::Create(
      {.cpu_threads = 2, .device_count = devices, .collective_timeout = timeout});
  EXPECT_TRUE(client.ok()) << client.status();
  return std::move(*client);
}

// Seeded random arguments, different on each device.
std::vector<std::vector<Literal>> DeviceArguments(const HloModule& module, int64_t devices) {
  std::vector<std::vector<Literal>> args;
  for (int64_t d = 0; d < devices; ++d) {
    absl::StatusOr<std::vector<Literal>> a =
        MakeFakeArguments(module, FakeDataKind::kRandom, 100 + d);
    EXPECT_TRUE(a.ok()) << a.status();
    args.push_back(a.ok() ? std::move(*a) : std::vector<Literal>{});
  }
  return args;
}

// Compiles `text` and runs it on R x P devices; expects each device's result
// to be the interpreter's. Returns the thunks as text.
std::string ExpectDevicesAgree(const std::string& text, int64_t replicas, int64_t partitions,
                               std::vector<int64_t> device_ids = {}) {
  std::unique_ptr<HloModule> reference = ParseOrDie(text);
  if (reference == nullptr) return "";
  const int64_t n = replicas * partitions;
  std::vector<std::vector<Literal>> args = DeviceArguments(*reference, n);
  EvalOptions eval;
  eval.replica_count = replicas;
  eval.num_partitions = partitions;
  absl::StatusOr<std::vector<Literal>> expected = EvaluateReplicated(*reference, args, eval);
  EXPECT_TRUE(expected.ok()) << expected.status();
  absl::StatusOr<std::unique_ptr<runtime::Executable>> e = CompileText(text);
  EXPECT_TRUE(e.ok()) << e.status();
  if (!e.ok() || !expected.ok()) return "";
  std::unique_ptr<runtime::Client> client = MakeClient(static_cast<int>(n));
  absl::StatusOr<collectives::DeviceAssignment> assignment =
      device_ids.empty() ? collectives::DeviceAssignment::Default(replicas, partitions)
                         : collectives::DeviceAssignment::Create(replicas, partitions, device_ids);
  EXPECT_TRUE(assignment.ok()) << assignment.status();
  absl::StatusOr<std::vector<Literal>> got =
      runtime::ExecuteOnDevices(*client, **e, args, *assignment);
  EXPECT_TRUE(got.ok()) << got.status() << "\n" << (*e)->thunks().ToString();
  if (!got.ok()) return "";
  for (int64_t d = 0; d < n; ++d) {
    runtime::Comparison c = runtime::CompareLiterals((*got)[d], (*expected)[d]);
    EXPECT_TRUE(c.matches) << "device " << d << ": " << c.ToString(true) << "\n"
                           << (*e)->thunks().ToString();
  }
  return (*e)->thunks().ToString();
}

constexpr char kAdd[] = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
)";

std::string Module(const std::string& header, const std::string& body) {
  return absl::StrCat("HloModule ", header, "\n", kAdd, "\nENTRY e {\n", body, "\n}\n");
}

TEST(CollectiveThunks, AllReduceInGroupsOnFourReplicas) {
  const std::string thunks = ExpectDevicesAgree(Module("m, replica_count=4", R"(
  p = f32[4,8] parameter(0)
  ROOT ar = f32[4,8] all-reduce(p), replica_groups={{0,2},{1,3}}, to_apply=add)"),
                                                4, 1);
  EXPECT_NE(thunks.find("kCollective"), std::string::npos) << thunks;
  EXPECT_NE(thunks.find("reduction=sum"), std::string::npos) << thunks;
}

TEST(CollectiveThunks, AllReduceWithACompiledReducerAndEveryPlainKind) {
  const std::string thunks = ExpectDevicesAgree(R"(
HloModule m, replica_count=3
odd {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  m = f32[] maximum(a, b)
  c = f32[] constant(0.5)
  ROOT r = f32[] subtract(m, c)
}
mul {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT r = s32[] multiply(a, b)
}
min {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT r = bf16[] minimum(a, b)
}
or {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT r = pred[] or(a, b)
}
ENTRY e {
  p = f32[5,3] parameter(0)
  q = s32[7] parameter(1)
  r = bf16[6] parameter(2)
  s = pred[4] parameter(3)
  a = f32[5,3] all-reduce(p), replica_groups={}, to_apply=odd
  b = s32[7] all-reduce(q), replica_groups={}, to_apply=mul
  c = bf16[6] all-reduce(r), replica_groups={}, to_apply=min
  d = pred[4] all-reduce(s), replica_groups={}, to_apply=or
  ROOT t = (f32[5,3], s32[7], bf16[6], pred[4]) tuple(a, b, c, d)
})",
                                                3, 1);
  EXPECT_NE(thunks.find("reduction=compiled"), std::string::npos) << thunks;
  EXPECT_NE(thunks.find("reduction=product"), std::string::npos) << thunks;
}

TEST(CollectiveThunks, VariadicAllReduceAndItsStartDone) {
  ExpectDevicesAgree(Module("m, replica_count=2", R"(
  p = f32[8] parameter(0)
  q = f32[2,3] parameter(1)
  ar = (f32[8], f32[2,3]) all-reduce(p, q), replica_groups={{0,1}}, to_apply=add
  s = f32[8] all-reduce-start(p), replica_groups={{0,1}}, to_apply=add
  d = f32[8] all-reduce-done(s)
  ROOT t = ((f32[8], f32[2,3]), f32[8]) tuple(ar, d))"),
                     2, 1);
}

TEST(CollectiveThunks, AllGatherAlongEveryDimensionAndItsStartDone) {
  ExpectDevicesAgree(Module("m, replica_count=2, num_partitions=2", R"(
  p = f32[3,4] parameter(0)
  q = s32[2] parameter(1)
  g0 = f32[12,4] all-gather(p), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={0}, use_global_device_ids=true
  g1 = f32[3,8] all-gather(p), replica_groups={{0,1}}, dimensions={1}
  gv = (f32[6,4], s32[4]) all-gather(p, q), replica_groups={}, dimensions={0}
  s = (f32[3,4], f32[6,4]) all-gather-start(p), replica_groups={{0,1}}, dimensions={0}
  d = f32[6,4] all-gather-done(s)
  ROOT t = (f32[12,4], f32[3,8], (f32[6,4], s32[4]), f32[6,4]) tuple(g0, g1, gv, d))"),
                     2, 2);
}

TEST(CollectiveThunks, AllGatherInAColumnMajorLayout) {
  ExpectDevicesAgree(Module("m, replica_count=4", R"(
  p = f32[3,5]{0,1} parameter(0)
  ROOT g = f32[3,20]{0,1} all-gather(p), replica_groups={}, dimensions={1})"),
                     4, 1);
}

TEST(CollectiveThunks, ReduceScatterAlongMajorAndMinorDimensions) {
  ExpectDevicesAgree(Module("m, replica_count=2", R"(
  p = f32[4,6] parameter(0)
  a = f32[2,6] reduce-scatter(p), replica_groups={}, dimensions={0}, to_apply=add
  b = f32[4,3] reduce-scatter(p), replica_groups={}, dimensions={1}, to_apply=add
  ROOT t = (f32[2,6], f32[4,3]) tuple(a, b))"),
                     2, 1);
}

TEST(CollectiveThunks, AllToAllArrayAndTupleForms) {
  ExpectDevicesAgree(Module("m, replica_count=4", R"(
  p = f32[8,4] parameter(0)
  q = s32[4] parameter(1)
  r = s32[4] parameter(2)
  a = f32[8,4] all-to-all(p), replica_groups={}, dimensions={0}
  b = f32[8,4] all-to-all(p), replica_groups={}, dimensions={1}
  c = (s32[4], s32[4]) all-to-all(q, r), replica_groups={{0,1},{2,3}}
  ROOT t = (f32[8,4], f32[8,4], (s32[4], s32[4])) tuple(a, b, c))"),
                     4, 1);
}

TEST(CollectiveThunks, CollectivePermuteWithADeviceThatReceivesNothing) {
  ExpectDevicesAgree(Module("m, replica_count=1, num_partitions=4", R"(
  p = f32[6] parameter(0)
  a = f32[6] collective-permute(p), channel_id=1, source_target_pairs={{0,1},{1,2},{2,0}}
  s = (f32[6], f32[6], u32[], u32[]) collective-permute-start(p), channel_id=2, source_target_pairs={{3,0},{0,3}}
  d = f32[6] collective-permute-done(s)
  ROOT t = (f32[6], f32[6]) tuple(a, d))"),
                     1, 4);
}

TEST(CollectiveThunks, CollectiveBroadcastIotaGroupsAndEveryMode) {
  ExpectDevicesAgree(Module("m, replica_count=2, num_partitions=2", R"(
  p = f32[5] parameter(0)
  b = f32[5] collective-broadcast(p), channel_id=1, replica_groups={{1,0}}
  a = f32[5] all-reduce(p), channel_id=2, replica_groups=[1,2]<=[2], to_apply=add
  c = f32[5] all-reduce(p), channel_id=3, replica_groups={{0},{1}}, use_global_device_ids=false, to_apply=add
  ROOT t = (f32[5], f32[5], f32[5]) tuple(b, a, c))"),
                     2, 2);
}

TEST(CollectiveThunks, MeshGroupsWithGlobalDeviceIds) {
  ExpectDevicesAgree(Module("m, replica_count=1, num_partitions=4", R"(
  p = f32[2,3] parameter(0)
  a = f32[2,3] all-reduce(p), channel_id=1, replica_groups=mesh['x'=2,'y'=2] {'x'}, use_global_device_ids=true, to_apply=add
  g = f32[4,3] all-gather(p), channel_id=2, replica_groups=mesh['x'=2,'y'=2] {'y'}, use_global_device_ids=true, dimensions={0}
  ROOT t = (f32[2,3], f32[4,3]) tuple(a, g))"),
                     1, 4);
}

TEST(CollectiveThunks, AnyDeviceAssignmentGivesTheLogicalDevicesResults) {
  // Logical (replica, partition) -> client device: [[3, 0], [2, 1]].
  ExpectDevicesAgree(Module("m, replica_count=2, num_partitions=2", R"(
  p = f32[3] parameter(0)
  r = u32[] replica-id()
  q = u32[] partition-id()
  s = u32[] add(r, q)
  f = f32[] convert(s)
  b = f32[3] broadcast(f), dimensions={}
  x = f32[3] add(p, b)
  a = f32[12] all-gather(x), channel_id=1, replica_groups={{0,1}}, dimensions={0}
  c = f32[3] collective-permute(x), channel_id=2, source_target_pairs={{0,1}}
  ROOT t = (f32[12], f32[3]) tuple(a, c))"),
                     2, 2, {3, 0, 2, 1});
}

TEST(CollectiveThunks, AllReduceInAWhileBodyMeetsOncePerIteration) {
  ExpectDevicesAgree(Module("m, replica_count=3", R"(
  p = f32[4] parameter(0)
  i = s32[] constant(0)
  init = (s32[], f32[4]) tuple(i, p)
  ROOT w = (s32[], f32[4]) while(init), condition=cond, body=body)") +
                         R"(
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(25)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  r = f32[4] all-reduce(x), replica_groups={}, to_apply=add
  third = f32[] constant(0.33)
  t = f32[4] broadcast(third), dimensions={}
  y = f32[4] multiply(r, t)
  ROOT out = (s32[], f32[4]) tuple(j, y)
}
)",
                     3, 1);
}

TEST(CollectiveThunks, BuffersOnDevicesGiveTheLiteralsResults) {
  const std::string text = Module("m, replica_count=2", R"(
  p = f32[3] parameter(0)
  ROOT g = f32[6] all-gather(p), replica_groups={}, dimensions={0})");
  absl::StatusOr<std::unique_ptr<runtime::Executable>> e = CompileText(text);
  ASSERT_TRUE(e.ok()) << e.status();
  std::unique_ptr<HloModule> m = ParseOrDie(text);
  std::vector<std::vector<Literal>> args = DeviceArguments(*m, 2);
  std::vector<std::unique_ptr<runtime::Buffer>> owned;
  std::vector<std::vector<runtime::Buffer*>> buffers(2);
  for (int d = 0; d < 2; ++d) {
    absl::StatusOr<std::unique_ptr<runtime::Buffer>> b = runtime::Buffer::FromLiteral(args[d][0]);
    ASSERT_TRUE(b.ok()) << b.status();
    buffers[d].push_back(b->get());
    owned.push_back(std::move(*b));
  }
  std::unique_ptr<runtime::Client> client = MakeClient(2);
  const collectives::DeviceAssignment assignment = *collectives::DeviceAssignment::Default(2, 1);
  absl::StatusOr<std::vector<std::vector<std::unique_ptr<runtime::Buffer>>>> got =
      runtime::ExecuteBuffersOnDevices(*client, **e, buffers, assignment);
  ASSERT_TRUE(got.ok()) << got.status();
  absl::StatusOr<std::vector<Literal>> want =
      runtime::ExecuteOnDevices(*client, **e, args, assignment);
  ASSERT_TRUE(want.ok()) << want.status();
  for (int d = 0; d < 2; ++d) {
    ASSERT_EQ((*got)[d].size(), 1u);
    absl::StatusOr<Literal> l = (*got)[d][0]->ToLiteral();
    ASSERT_TRUE(l.ok()) << l.status();
    EXPECT_EQ(l->raw_data(), (*want)[d].raw_data());
    EXPECT_TRUE(l->shape().EqualIgnoringLayout((*want)[d].shape()));
  }
}

TEST(CollectiveThunks, OneDeviceRunsCollectivesAsAGroupOfOne) {
  // replica_count=1: no devices needed; the interpreter is the oracle.
  testing::ExpectAgreesWithInterpreter(Module("m", R"(
  p = f32[3,2] parameter(0)
  g = f32[3,2] all-gather(p), replica_groups={}, dimensions={0}
  a = f32[3,2] all-reduce(g), replica_groups={{0}}, to_apply=add
  ROOT c = f32[3,2] collective-permute(a), source_target_pairs={{0,0}})"));
}

TEST(CollectiveThunks, SeveralDeviceModuleWithoutDevicesIsAnErrorNamingTheInstruction) {
  absl::StatusOr<std::unique_ptr<runtime::Executable>> e =
      CompileText(Module("m, replica_count=2", R"(
  p = f32[4] parameter(0)
  ROOT my_sum = f32[4] all-reduce(p), replica_groups={}, to_apply=add)"));
  ASSERT_TRUE(e.ok()) << e.status();
  Literal arg(Shape::Array(PrimitiveType::F32, {4}));
  absl::StatusOr<Literal> r = (*e)->ExecuteLiterals({arg});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("all-reduce 'my_sum'"), std::string::npos) << r.status();
}

// ragged-all-to-all against its definition: on 2 devices, each sends rows of
// its input to the peers' outputs at the offsets it names.
TEST(CollectiveThunks, RaggedAllToAllMovesTheNamedRows) {
  absl::StatusOr<std::unique_ptr<runtime::Executable>> e = CompileText(R"(
HloModule m, replica_count=2
ENTRY e {
  input = f32[4,2] parameter(0)
  output = f32[5,2] parameter(1)
  input_offsets = s64[2] parameter(2)
  send_sizes = s64[2] parameter(3)
  output_offsets = s64[2] parameter(4)
  recv_sizes = s64[2] parameter(5)
  ROOT r = f32[5,2] ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets, recv_sizes), replica_groups={{0,1}}
})");
  ASSERT_TRUE(e.ok()) << e.status();
  auto array = [](std::vector<int64_t> dims, std::vector<double> values) {
    Literal l(Shape::Array(PrimitiveType::F32, dims));
    for (size_t i = 0; i < values.size(); ++i) l.SetDouble(i, values[i]);
    return l;
  };
  auto ints = [](std::vector<int64_t> v) {
    Literal l(Shape::Array(PrimitiveType::S64, {static_cast<int64_t>(v.size())}));
    for (size_t i = 0; i < v.size(); ++i) l.SetInt(i, v[i]);
    return l;
  };
  // Device 0 sends row 0 to itself (at its row 0) and rows 1-2 to device 1
  // (at device 1's rows 3-4); device 1 sends row 3 to device 0 (at row 1)
  // and nothing to itself.
  std::vector<std::vector<Literal>> args(2);
  args[0].push_back(array({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}));
  args[0].push_back(array({5, 2}, std::vector<double>(10, -1)));
  args[0].push_back(ints({0, 1}));
  args[0].push_back(ints({1, 2}));
  args[0].push_back(ints({0, 3}));
  args[0].push_back(ints({1, 1}));
  args[1].push_back(array({4, 2}, {11, 12, 13, 14, 15, 16, 17, 18}));
  args[1].push_back(array({5, 2}, std::vector<double>(10, -2)));
  args[1].push_back(ints({3, 0}));
  args[1].push_back(ints({1, 0}));
  args[1].push_back(ints({1, 0}));
  args[1].push_back(ints({2, 0}));
  std::unique_ptr<runtime::Client> client = MakeClient(2);
  absl::StatusOr<std::vector<Literal>> got =
      runtime::ExecuteOnDevices(*client, **e, args, *collectives::DeviceAssignment::Default(2, 1));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0], array({5, 2}, {1, 2, 17, 18, -1, -1, -1, -1, -1, -1}));
  EXPECT_EQ((*got)[1], array({5, 2}, {-2, -2, -2, -2, -2, -2, 3, 4, 5, 6}));
}

constexpr char kOnlyReplicaZeroReduces[] = R"(
HloModule m, replica_count=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
reduce {
  x = f32[4] parameter(0)
  ROOT lonely_sum = f32[4] all-reduce(x), replica_groups={}, to_apply=add
}
skip {
  ROOT x = f32[4] parameter(0)
}
ENTRY e {
  p = f32[4] parameter(0)
  id = u32[] replica-id()
  zero = u32[] constant(0)
  first = pred[] compare(id, zero), direction=EQ
  ROOT c = f32[4] conditional(first, p, p), true_computation=reduce, false_computation=skip
})";

TEST(CollectiveThunks, ADeviceThatNeverArrivesEndsInTheTimeoutNamingIt) {
  absl::StatusOr<std::unique_ptr<runtime::Executable>> e = CompileText(kOnlyReplicaZeroReduces);
  ASSERT_TRUE(e.ok()) << e.status();
  std::unique_ptr<runtime::Client> client = MakeClient(2, std::chrono::milliseconds(200));
  std::vector<std::vector<Literal>> args(2);
  for (auto& a : args) a.emplace_back(Shape::Array(PrimitiveType::F32, {4}));
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<Literal>> got =
      runtime::ExecuteOnDevices(*client, **e, args, *collectives::DeviceAssignment::Default(2, 1));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  ASSERT_EQ(got.status().code(), absl::StatusCode::kDeadlineExceeded) << got.status();
  const std::string message(got.status().message());
  EXPECT_NE(message.find("device 0 (replica 0, partition 0)"), std::string::npos) << message;
  EXPECT_NE(message.find("all-reduce 'lonely_sum'"), std::string::npos) << message;
  EXPECT_NE(message.find("device 1 did not arrive"), std::string::npos) << message;
  // The client stays usable: a run where both arrive.
  absl::StatusOr<std::vector<Literal>> again =
      runtime::ExecuteOnDevices(*client, **e, args, *collectives::DeviceAssignment::Default(2, 1));
  EXPECT_EQ(again.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(CollectiveThunks, AFailingDeviceAbortsItsPeersAtOnce) {
  absl::StatusOr<std::unique_ptr<runtime::Executable>> e =
      CompileText(Module("m, replica_count=2", R"(
  p = f32[4] parameter(0)
  ROOT s = f32[4] all-reduce(p), replica_groups={}, to_apply=add)"));
  ASSERT_TRUE(e.ok()) << e.status();
  // A one-minute timeout that must not be waited for: device 1's argument
  // has the wrong shape, so it fails before the all-reduce.
  std::unique_ptr<runtime::Client> client = MakeClient(2, std::chrono::seconds(60));
  std::vector<std::vector<Literal>> args(2);
  args[0].emplace_back(Shape::Array(PrimitiveType::F32, {4}));
  args[1].emplace_back(Shape::Array(PrimitiveType::F32, {5}));
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<Literal>> got =
      runtime::ExecuteOnDevices(*client, **e, args, *collectives::DeviceAssignment::Default(2, 1));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  ASSERT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << got.status();
  EXPECT_NE(got.status().message().find("device 1 (replica 1, partition 0): argument 0"),
            std::string::npos)
      << got.status();
  // Then both run fine.
  args[1][0] = Literal(Shape::Array(PrimitiveType::F32, {4}));
  EXPECT_TRUE(
      runtime::ExecuteOnDevices(*client, **e, args, *collectives::DeviceAssignment::Default(2, 1))
          .ok());
}

TEST(CollectiveThunks, WrongArgumentCountsAndMissingDevicesAreErrors) {
  absl::StatusOr<std::unique_ptr<runtime::Executable>> e =
      CompileText(Module("m, replica_count=2", R"(
  ROOT p = f32[4] parameter(0))"));
  ASSERT_TRUE(e.ok()) << e.status();
  std::unique_ptr<runtime::Client> client = MakeClient(1);
  std::vector<std::vector<Literal>> args(2);
  for (auto& a : args) a.emplace_back(Shape::Array(PrimitiveType::F32, {4}));
  absl::StatusOr<std::vector<Literal>> got =
      runtime::ExecuteOnDevices(*client, **e, args, *collectives::DeviceAssignment::Default(2, 1));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(got.status().message().find("uses device 1 but the client has 1"), std::string::npos)
      << got.status();
  args.pop_back();
  got = runtime::ExecuteOnDevices(*MakeClient(2), **e, args,
                                  *collectives::DeviceAssignment::Default(2, 1));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::cpu
