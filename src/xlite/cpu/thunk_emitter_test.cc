// The thunk emitter and every thunk kind, end to end: HLO text compiled by
// Compile() (with dead slices poisoned) against the interpreter.
#include "xlite/cpu/thunk_emitter.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "xlite/cpu/cpu_test_util.h"
#include "xlite/hostlib/custom_call_registry.h"
#include "xlite/runtime/task_runner.h"
#include "xlite/runtime/thread_pool.h"

namespace xlite::cpu {
namespace {
namespace XLITE_UNITY_ID {

using testing::CompileText;
using testing::ExpectAgreesWithInterpreter;

TEST(ThunkEmitter, ElementwiseAndFusionAreKernels) {
  const std::string thunks = ExpectAgreesWithInterpreter(R"(
HloModule m
fused {
  a = f32[64,32] parameter(0)
  b = f32[64,32] parameter(1)
  m = f32[64,32] multiply(a, b)
  ROOT e = f32[64,32] exponential(m)
}
ENTRY e {
  x = f32[64,32] parameter(0)
  y = f32[64,32] parameter(1)
  f = f32[64,32] fusion(x, y), kind=kLoop, calls=fused
  ROOT t = f32[64,32] tanh(f)
})");
  EXPECT_TRUE(absl::StrContains(thunks, "kKernel")) << thunks;
}

TEST(ThunkEmitter, KernelsSplitAcrossThreads) {
  runtime::ThreadPool pool(3);
  runtime::PoolTaskRunner runner(pool);
  ExpectAgreesWithInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[512,512] parameter(0)
  y = f32[512,512] parameter(1)
  a = f32[512,512] add(x, y)
  ROOT t = f32[512,512]{0,1} transpose(a), dimensions={1,0}
})",
                              &runner);
}

TEST(ThunkEmitter, TuplesAndGetTupleElementNeedNoThunk) {
  const std::string thunks = ExpectAgreesWithInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[16] parameter(0)
  y = f32[16] parameter(1)
  a = f32[16] add(x, y)
  t = (f32[16], f32[16]) tuple(a, x)
  g = f32[16] get-tuple-element(t), index=0
  ROOT r = (f32[16], f32[16]) tuple(g, a)
})");
  EXPECT_FALSE(absl::StrContains(thunks, "tuple (tuple)")) << thunks;
  EXPECT_FALSE(absl::StrContains(thunks, "get-tuple-element")) << thunks;
}

TEST(ThunkEmitter, DotOnTheLibraryWithAnyLayout) {
  const std::string thunks = ExpectAgreesWithInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[4,32,48]{2,1,0} parameter(0)
  y = f32[4,24,48]{1,2,0} parameter(1)
  ROOT d = f32[4,32,24]{1,2,0} dot(x, y), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
})");
  EXPECT_TRUE(absl::StrContains(thunks, "matmul b=4 m=32 k=48 n=24")) << thunks;
}

TEST(ThunkEmitter, IntegerAndDoubleDots) {
  ExpectAgreesWithInterpreter(R"(
HloModule m
ENTRY e {
  x = s32[8,16] parameter(0)
  y = s32[16,4] parameter(1)
  ROOT d = s32[8,4] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ExpectAgreesWithInterpreter(R"(
HloModule m
ENTRY e {
  x = f64[16] parameter(0)
  y = f64[16,4] parameter(1)
  ROOT d = f64[4] dot(x, y), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})");
}

TEST(ThunkEmitter, Convolution) {
  const std::string thunks = ExpectAgreesWithInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[2,3,10,10] parameter(0)
  k = f32[8,3,3,3] parameter(1)
  ROOT c = f32[2,8,5,5] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})");
  EXPECT_TRUE(absl::StrContains(thunks, "convolution N=2")) << thunks;
}

TEST(ThunkEmitter, Fft) {
  ExpectAgreesWithInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[3,16] parameter(0)
  r = c64[3,9] fft(x), fft_type=RFFT, fft_length={16}
  ROOT i = f32[3,16] fft(r), fft_type=IRFFT, fft_length={16}
})");
}

TEST(ThunkEmitter, SortWithACompiledComparator) {
  const std::string thunks = ExpectAgreesWithInterpreter(R"(
HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT, type=TOTALORDER
}
ENTRY e {
  x = f32[8,100] parameter(0)
  i = s32[8,100] iota(), iota_dimension=1
  ROOT s = (f32[8,100], s32[8,100]) sort(x, i), dimensions={1}, is_stable=true, to_apply=cmp
})");
  EXPECT_TRUE(absl::StrContains(thunks, "sort dims=[8,100]")) << thunks;
}

TEST(ThunkEmitter, TopKCholeskyAndTriangularSolve) {
  ExpectAgreesWithInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[4,50] parameter(0)
  ROOT t = (f32[4,5], s32[4,5]) topk(x), k=5, largest=true
})");
  ExpectAgreesWithInterpreter(R"(
HloModule m
ENTRY e {
  a = f32[3,6,6] parameter(0)
  b = f32[3,6,4] parameter(1)
  at = f32[3,6,6] transpose(a), dimensions={0,2,1}
  p = f32[3,6,6] dot(a, at), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  d = f32[3,6,6] broadcast(f32[] constant(6)), dimensions={}
  i = f32[3,6,6] iota(), iota_dimension=1
  j = f32[3,6,6] iota(), iota_dimension=2
  eq = pred[3,6,6] compare(i, j), direction=EQ
  z = f32[3,6,6] broadcast(f32[] constant(0)), dimensions={}
  diag = f32[3,6,6] select(eq, d, z)
  spd = f32[3,6,6] add(p, diag)
  l = f32[3,6,6] cholesky(spd), lower=true
  ROOT x = f32[3,6,4] triangular-solve(l, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
})");
}

TEST(ThunkEmitter, WhileLoopRunsItsConditionEachIteration) {
  const std::string thunks = ExpectAgreesWithInterpreter(R"(
HloModule m
cond {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(10)), direction=LT
}
body {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[8] get-tuple-element(s), index=1
  i1 = s32[] add(i, s32[] constant(1))
  v1 = f32[8] multiply(v, v)
  q = f32[] constant(0.25)
  qb = f32[8] broadcast(q), dimensions={}
  v2 = f32[8] add(v1, qb)
  ROOT t = (s32[], f32[8]) tuple(i1, v2)
}
ENTRY e {
  x = f32[8] parameter(0)
  init = (s32[], f32[8]) tuple(s32[] constant(0), x)
  ROOT w = (s32[], f32[8]) while(init), condition=cond, body=body
})");
  // A loop of small kernels runs as one whole-loop kernel (loop_kernels.h).
  EXPECT_TRUE(absl::StrContains(thunks, "kernel=w_loop")) << thunks;
}

// Flat loops (codegen: same dimensions and layout everywhere, elementwise
// ops and scalar broadcasts): a multi-output fusion, a column-major one, and
// one whose operand layout differs (rows then).
TEST(ThunkEmitter, FlatElementwiseKernels) {
  ExpectAgreesWithInterpreter(R"(
HloModule flat
fused {
  a = u32[16,16] parameter(0)
  b = u32[16,16] parameter(1)
  k = u32[] parameter(2)
  kb = u32[16,16] broadcast(k), dimensions={}
  x = u32[16,16] xor(a, b)
  s = u32[16,16] shift-left(x, kb)
  ROOT t = (u32[16,16], u32[16,16]) tuple(x, s)
}
ENTRY e {
  a = u32[16,16] parameter(0)
  b = u32[16,16] parameter(1)
  k = u32[] constant(3)
  ROOT f = (u32[16,16], u32[16,16]) fusion(a, b, k), kind=kLoop, calls=fused
})");
  ExpectAgreesWithInterpreter(R"(
HloModule flat_column_major
ENTRY e {
  a = f32[5,3]{0,1} parameter(0)
  b = f32[5,3]{0,1} parameter(1)
  ROOT m = f32[5,3]{0,1} multiply(a, b)
})");
  ExpectAgreesWithInterpreter(R"(
HloModule not_flat
ENTRY e {
  a = f32[5,3]{0,1} parameter(0)
  b = f32[5,3]{1,0} parameter(1)
  ROOT m = f32[5,3]{1,0} add(a, b)
})");
}

TEST(ThunkEmitter, ConditionalByPredAndByIndex) {
  const std::string branches = testing::kThreeBranches;
  for (const char* selector : {"s32[] constant(1)", "s32[] constant(7)", "s32[] constant(-1)"}) {
    ExpectAgreesWithInterpreter(absl::StrCat("HloModule m\n", branches, R"(
ENTRY e {
  x = f32[4] parameter(0)
  ROOT c = f32[4] conditional()",
                                             selector,
                                             R"(, x, x, x), branch_computations={b0, b1, b2}
})"));
  }
  ExpectAgreesWithInterpreter(absl::StrCat("HloModule m\n", branches, R"(
ENTRY e {
  x = f32[4] parameter(0)
  p = pred[] compare(f32[] constant(1), f32[] constant(2)), direction=LT
  ROOT c = f32[4] conditional(p, x, x), true_computation=b0, false_computation=b1
})"));
}

TEST(ThunkEmitter, CallRunsItsCallee) {
  const std::string thunks = ExpectAgreesWithInterpreter(R"(
HloModule m
f {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT s = f32[4] subtract(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  c = f32[4] call(x, y), to_apply=f
  ROOT r = f32[4] call(c, x), to_apply=f
})");
  EXPECT_FALSE(thunks.empty());
}

TEST(ThunkEmitter, DeviceIdsAndRngState) {
  ExpectAgreesWithInterpreter(R"(
HloModule m
ENTRY e {
  r = u32[] replica-id()
  p = u32[] partition-id()
  s = u64[2] rng-get-and-update-state(), delta=16
  ROOT t = (u32[], u32[], u64[2]) tuple(r, p, s)
})");
}

TEST(ThunkEmitter, RngStateAdvancesAcrossRuns) {
  auto e = CompileText(R"(
HloModule m
ENTRY e {
  ROOT s = u64[2] rng-get-and-update-state(), delta=5
})");
  ASSERT_TRUE(e.ok()) << e.status();
  auto first = (*e)->ExecuteLiterals({});
  auto second = (*e)->ExecuteLiterals({});
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(second->GetBits(0) - first->GetBits(0), 5u);
}

TEST(ThunkEmitter, CustomCallThroughTheRegistry) {
  ExpectAgreesWithInterpreter(R"(
HloModule m
ENTRY e {
  a = f32[5,5] parameter(0)
  at = f32[5,5] transpose(a), dimensions={1,0}
  p = f32[5,5] dot(a, at), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  i = f32[5,5] iota(), iota_dimension=0
  j = f32[5,5] iota(), iota_dimension=1
  eq = pred[5,5] compare(i, j), direction=EQ
  five = f32[] constant(5)
  zero = f32[] constant(0)
  fb = f32[5,5] broadcast(five), dimensions={}
  zb = f32[5,5] broadcast(zero), dimensions={}
  d = f32[5,5] select(eq, fb, zb)
  spd = f32[5,5] add(p, d)
  c = (f32[5,5]{0,1}, s32[]) custom-call(spd), custom_call_target="lapack_spotrf_ffi", operand_layout_constraints={f32[5,5]{0,1}}, output_to_operand_aliasing={{0}: (0, {})}, api_version=API_VERSION_TYPED_FFI, backend_config={uplo = 76 : ui8}
  ROOT g = f32[5,5]{0,1} get-tuple-element(c), index=0
})");
}

TEST(ThunkEmitter, UnsupportedWorkIsUnimplementedNamingTheInstruction) {
  // Collectives run (collective_thunks_test.cc); a dynamic-root broadcast
  // does not, as in the interpreter.
  auto collective = CompileText(R"(
HloModule m, replica_count=2
ENTRY e {
  x = f32[4] parameter(0)
  root = f32[1] parameter(1)
  ROOT ar = f32[4] collective-broadcast(x, root), replica_groups={{1,0}}, has_dynamic_root=true
})");
  ASSERT_FALSE(collective.ok());
  EXPECT_TRUE(absl::IsUnimplemented(collective.status())) << collective.status();
  EXPECT_TRUE(absl::StrContains(collective.status().message(), "'ar'")) << collective.status();

  auto custom = CompileText(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(x), custom_call_target="my_unknown_kernel"
})");
  ASSERT_FALSE(custom.ok());
  EXPECT_TRUE(absl::IsUnimplemented(custom.status())) << custom.status();
  EXPECT_TRUE(absl::StrContains(custom.status().message(), "my_unknown_kernel"));
}

TEST(ThunkEmitter, CopyStartAndDoneRunAsACopy) {
  // Synchronous until the runtime has streams: the source is read while
  // still live after the start, and the done returns the destination.
  const std::string thunks = ExpectAgreesWithInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[32,8] parameter(0)
  n = f32[32,8] negate(x)
  cs = (f32[32,8], f32[32,8], u32[]) copy-start(n)
  a = f32[32,8] add(n, x)
  cd = f32[32,8] copy-done(cs)
  ROOT r = f32[32,8] multiply(cd, a)
})");
  EXPECT_TRUE(absl::StrContains(thunks, "kCopy")) << thunks;
}

TEST(ThunkEmitter, PoisonThunksFollowTheLastUseOfTempBuffers) {
  const std::string thunks = ExpectAgreesWithInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[256] parameter(0)
  a = f32[256] exponential(x)
  b = f32[256] negate(a)
  c = f32[256] remainder(b, x)
  ROOT d = f32[256] add(c, x)
})");
  // remainder (fmod, a scalar libm call) stays out of fusions, so temps live
  // between kernels.
  EXPECT_TRUE(absl::StrContains(thunks, "kPoison")) << thunks;
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::cpu

namespace xlite::cpu {
namespace {
namespace XLITE_UNITY_ID {

TEST(ThunkEmitter, TupleConstantsAndConvolutionsWithoutSpatialDimensions) {
  testing::ExpectAgreesWithInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  c = (f32[2], s32[3]) constant(({1.5, -2}, {1, 2, 3}))
  g = f32[2] get-tuple-element(c), index=0
  a = f32[2] add(x, g)
  ROOT t = (f32[2], (f32[2], s32[3])) tuple(a, c)
})");
  testing::ExpectAgreesWithInterpreter(R"(
HloModule m
ENTRY e {
  input = f32[1,2]{1,0} parameter(0)
  filter = f32[2,2]{1,0} parameter(1)
  ROOT c = f32[1,2]{0,1} convolution(input, filter), dim_labels=bf_io->bf
})");
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::cpu

namespace xlite::cpu {
namespace {
namespace XLITE_UNITY_ID {

TEST(Compiler, ScheduledModulesKeepTheirFusionsAndOrder) {
  const std::string thunks = testing::ExpectAgreesWithInterpreter(R"(
HloModule m, is_scheduled=true
fused {
  a = f32[32] parameter(0)
  b = f32[32] parameter(1)
  s = f32[32] add(a, a)
  ROOT m = f32[32] multiply(s, b)
}
ENTRY e {
  x = f32[32] parameter(0)
  y = f32[32] parameter(1)
  n = f32[32] negate(y)
  f = f32[32] fusion(x, n), kind=kLoop, calls=fused
  ROOT t = f32[32] add(f, f)
})");
  // Not simplified: add(f, f) stays, the fusion is one kernel, in order.
  const size_t negate = thunks.find("n (negate)");
  const size_t fusion = thunks.find("f (fusion)");
  const size_t add = thunks.find("t (add)");
  EXPECT_NE(fusion, std::string::npos) << thunks;
  EXPECT_LT(negate, fusion) << thunks;
  EXPECT_LT(fusion, add) << thunks;
}

TEST(Compiler, DebugFlagsOfTheCpuBackend) {
  std::vector<std::string> args = {"--xla_disable_all_hlo_passes", "--xlite_poison_dead_slices",
                                   "--xlite_profile=true", "file.hlo"};
  absl::StatusOr<DebugOptions> d = ReadDebugOptions(args);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->disable_all_hlo_passes);
  EXPECT_TRUE(d->poison_dead_slices);
  EXPECT_TRUE(d->profile);
  EXPECT_EQ(args, std::vector<std::string>{"file.hlo"});
  std::vector<std::string> bad = {"--xlite_profile=maybe"};
  EXPECT_FALSE(ReadDebugOptions(bad).ok());
}

TEST(Compiler, DisableAllHloPassesKeepsTheModule) {
  auto m = testing::ParseOrDie(R"(
HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  z = f32[8] multiply(x, f32[8] constant({1,1,1,1,1,1,1,1}))
  ROOT r = f32[8] add(z, x)
})");
  ASSERT_NE(m, nullptr);
  CompileOptions options;
  options.debug.disable_all_hlo_passes = true;
  auto e = Compile(std::move(m), options);
  ASSERT_TRUE(e.ok()) << e.status();
  // The multiply by ones is still there (simplification would remove it).
  EXPECT_NE((*e)->thunks().ToString().find("z (multiply)"), std::string::npos)
      << (*e)->thunks().ToString();
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::cpu

namespace xlite::cpu {
namespace {
namespace XLITE_UNITY_ID {

// change-op-data-type (in the CPU lowering) puts converts around it: LAPACK
// has no f16/bf16.
TEST(ThunkEmitter, NarrowFloatCholeskyRunsInF32) {
  const std::string thunks = testing::ExpectAgreesWithInterpreter(R"(
HloModule m
ENTRY e {
  a = f16[2,4,4] parameter(0)
  at = f16[2,4,4] transpose(a), dimensions={0,2,1}
  p = f16[2,4,4] dot(a, at), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  ROOT l = f16[2,4,4] cholesky(p), lower=true
})");
  // change-op-data-type gives the library an f32 cholesky between converts.
  EXPECT_NE(thunks.find("l.convert (convert)"), std::string::npos) << thunks;
  EXPECT_NE(thunks.find("cholesky batch=2 n=4 lower"), std::string::npos) << thunks;
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::cpu

namespace xlite::cpu {
namespace {
namespace XLITE_UNITY_ID {

// Keeps the allocation below from being optimised away.
char* volatile out_of_memory_sink = nullptr;

absl::Status AllocateAnExabyte(hostlib::FfiCallFrame&) {
  out_of_memory_sink = new char[size_t{1} << 60];
  return absl::OkStatus();
}

TEST(ThunkEmitter, ALibraryCallOutOfMemoryIsResourceExhausted) {
  // Registered once per process (gtest_repeat runs the test again).
  absl::Status registered = hostlib::CustomCallRegistry::Global().Register(
      "xlite_test_allocate_an_exabyte", &AllocateAnExabyte);
  ASSERT_TRUE(registered.ok() || absl::IsAlreadyExists(registered)) << registered;
  std::unique_ptr<HloModule> m = testing::ParseOrDie(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(x), custom_call_target="xlite_test_allocate_an_exabyte", api_version=API_VERSION_TYPED_FFI
})");
  ASSERT_NE(m, nullptr);
  auto e = Compile(std::move(m));
  ASSERT_TRUE(e.ok()) << e.status();
  absl::Status s = (*e)->ExecuteLiterals({Literal(Shape::Array(PrimitiveType::F32, {4}))}).status();
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "'c'")) << s;
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::cpu
