#include "xlite/cpu/fusion_cost_model.h"

#include <memory>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"
#include "xlite/ir/computation.h"
#include "xlite/ir/module.h"
#include "xlite/text/parser.h"

namespace xlite::cpu {
namespace {
namespace XLITE_UNITY_ID {

class FusionCostModelTest : public ::testing::Test {
 protected:
  void Parse(const std::string& text) {
    auto parsed = ParseHloModule(text);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    module_ = std::move(*parsed);
  }

  HloInstruction* Get(absl::string_view name) const {
    for (const auto& c : module_->computations()) {
      for (const auto& instr : c->instructions()) {
        if (instr->name() == name) return instr.get();
      }
    }
    ADD_FAILURE() << "no " << name;
    return nullptr;
  }

  // The kernel rooted at `root` with `members` inline.
  KernelCost Estimate(absl::string_view root, std::initializer_list<absl::string_view> members) {
    absl::flat_hash_set<const HloInstruction*> set;
    for (absl::string_view m : members) set.insert(Get(m));
    return FusionCostModel::Estimate(
        *Get(root), [&](const HloInstruction* instr) { return set.contains(instr); });
  }

  std::unique_ptr<HloModule> module_;
};

constexpr double kCheap = 0.01;  // ns per element of an add or multiply

TEST_F(FusionCostModelTest, CountsDistinctBytesAndTheArithmeticOfEachElement) {
  Parse(R"(
HloModule m
ENTRY e {
  x = f32[1024] parameter(0)
  y = f32[1024] parameter(1)
  e = f32[1024] exponential(x)
  m = f32[1024] multiply(e, x)
  ROOT a = f32[1024] add(m, y)
})");
  const KernelCost alone = Estimate("a", {});
  EXPECT_DOUBLE_EQ(alone.bytes, 3 * 4096);
  EXPECT_DOUBLE_EQ(alone.compute_ns, 1024 * kCheap);
  EXPECT_DOUBLE_EQ(alone.memory_ns, 3 * 4096 / FusionCostModel::kCacheBytesPerNs);
  EXPECT_DOUBLE_EQ(alone.time_ns, FusionCostModel::kKernelLaunchNs + alone.memory_ns);
  // x is read by two members but counted once.
  const KernelCost fused = Estimate("a", {"m", "e"});
  EXPECT_DOUBLE_EQ(fused.bytes, 3 * 4096);
  EXPECT_DOUBLE_EQ(fused.compute_ns,
                   1024 * (2 * kCheap + FusionCostModel::ElementCostNs(*Get("e"))));
  EXPECT_GT(FusionCostModel::ElementCostNs(*Get("e")), 10 * kCheap);
}

// A value two members read at the same index is computed once per element
// (the emitter keeps it), not once per path: a chain of diamonds (threefry's
// rounds) stays linear.
TEST_F(FusionCostModelTest, ComputesAValueReadTwiceAtTheSameIndexOnce) {
  Parse(R"(
HloModule m
ENTRY e {
  x = f32[1024] parameter(0)
  e = f32[1024] exponential(x)
  a = f32[1024] add(e, x)
  b = f32[1024] multiply(e, a)
  c = f32[1024] subtract(a, b)
  ROOT d = f32[1024] add(b, c)
})");
  const KernelCost cost = Estimate("d", {"c", "b", "a", "e"});
  EXPECT_DOUBLE_EQ(cost.compute_ns,
                   1024 * (4 * kCheap + FusionCostModel::ElementCostNs(*Get("e"))));
}

// A value read through a broadcast is computed once per element, except
// over the broadcast's minor-most dimension where that is new (the inner loop
// LLVM hoists it out of): s once per row, t for every element. A slice reads only its
// window of `big`.
TEST_F(FusionCostModelTest, RecomputesThroughBroadcastsAndReadsOnlySlicedWindows) {
  Parse(R"(
HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  s = f32[8] sqrt(x)
  b = f32[8,256] broadcast(s), dimensions={0}
  y = f32[256] parameter(2)
  t = f32[256] sqrt(y)
  c = f32[8,256] broadcast(t), dimensions={1}
  big = f32[1000000] parameter(1)
  w = f32[2048] slice(big), slice={[0:2048]}
  r = f32[8,256] reshape(w)
  m1 = f32[8,256] multiply(b, r)
  ROOT m = f32[8,256] multiply(m1, c)
})");
  const KernelCost cost = Estimate("m", {"m1", "b", "s", "c", "t", "r", "w"});
  const double sqrt = FusionCostModel::ElementCostNs(*Get("s"));
  EXPECT_DOUBLE_EQ(cost.compute_ns, 2 * 2048 * kCheap + 8 * sqrt + 2048 * sqrt);
  EXPECT_DOUBLE_EQ(cost.bytes, 4 * (8 + 256 + 2048 + 2048));
}

// Only the minor-most dimension is the inner loop: over [8,4,64] with the
// operand on dimension 0, s is computed once per row of 64 (32 times); a
// scalar's broadcast is computed once; behind a transpose the broadcast's
// minor dimension is not the kernel's, and t is computed for every element.
TEST_F(FusionCostModelTest, HoistsBroadcastOperandsOutOfTheInnerLoopOnly) {
  Parse(R"(
HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  s = f32[8] sqrt(x)
  b = f32[8,4,64] broadcast(s), dimensions={0}
  c = f32[] parameter(1)
  e = f32[] exponential(c)
  be = f32[8,4,64] broadcast(e), dimensions={}
  ROOT m = f32[8,4,64] multiply(b, be)
})");
  const KernelCost cost = Estimate("m", {"b", "s", "be", "e"});
  EXPECT_DOUBLE_EQ(cost.compute_ns, 2048 * kCheap + 32 * FusionCostModel::ElementCostNs(*Get("s")) +
                                        FusionCostModel::ElementCostNs(*Get("e")));
  Parse(R"(
HloModule m
ENTRY e {
  y = f32[8] parameter(0)
  t = f32[8] sqrt(y)
  b = f32[8,64] broadcast(t), dimensions={0}
  tr = f32[64,8] transpose(b), dimensions={1,0}
  z = f32[64,8] parameter(1)
  ROOT m = f32[64,8] multiply(tr, z)
})");
  const KernelCost transposed = Estimate("m", {"tr", "b", "t"});
  EXPECT_DOUBLE_EQ(transposed.compute_ns,
                   512 * kCheap + 512 * FusionCostModel::ElementCostNs(*Get("t")));
}

// A reshape that keeps the minor-most dimension keeps the loop order; one
// that flattens it does not (the row loop then runs over all 16384 elements,
// and s is computed for each).
TEST_F(FusionCostModelTest, ReshapesKeepTheLoopOrderOnlyWithTheMinorDimension) {
  Parse(R"(
HloModule m
ENTRY e {
  x = f32[64] parameter(0)
  s = f32[64] sqrt(x)
  b = f32[64,256] broadcast(s), dimensions={0}
  kept = f32[64,1,256] reshape(b)
  flat = f32[16384] reshape(b)
  y = f32[64,1,256] parameter(1)
  z = f32[16384] parameter(2)
  mk = f32[64,1,256] multiply(kept, y)
  ROOT mf = f32[16384] multiply(flat, z)
})");
  const double sqrt = FusionCostModel::ElementCostNs(*Get("s"));
  EXPECT_DOUBLE_EQ(Estimate("mk", {"kept", "b", "s"}).compute_ns, 16384 * kCheap + 64 * sqrt);
  EXPECT_DOUBLE_EQ(Estimate("mf", {"flat", "b", "s"}).compute_ns, 16384 * kCheap + 16384 * sqrt);
}

TEST_F(FusionCostModelTest, ReductionsFoldEveryInputElementAndConcatenatesReadTheirParts) {
  Parse(R"(
HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[64,128] parameter(0)
  n = f32[64,128] negate(x)
  z = f32[] constant(0)
  ROOT r = f32[64] reduce(n, z), dimensions={1}, to_apply=sum
  p = f32[100] parameter(1)
  q = f32[300] parameter(2)
  c = f32[400] concatenate(p, q), dimensions={0}
})");
  const KernelCost reduce = Estimate("r", {"n"});
  EXPECT_DOUBLE_EQ(reduce.compute_ns, 64 * 128 * kCheap /*negate*/ + 64 * 128 * kCheap /*add*/);
  EXPECT_DOUBLE_EQ(reduce.bytes, 4 * (64 * 128 + 1 + 64));
  const KernelCost concat = Estimate("c", {});
  EXPECT_DOUBLE_EQ(concat.bytes, 4 * (100 + 300 + 400));
  EXPECT_DOUBLE_EQ(concat.compute_ns, 0);
}

TEST_F(FusionCostModelTest, LargeWorkingSetsStreamAtMemoryBandwidth) {
  Parse(R"(
HloModule m
ENTRY e {
  x = f32[8388608] parameter(0)
  ROOT n = f32[8388608] negate(x)
})");
  const KernelCost cost = Estimate("n", {});
  EXPECT_DOUBLE_EQ(cost.bytes, 64.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(
      cost.memory_ns,
      FusionCostModel::kCacheBytes / FusionCostModel::kCacheBytesPerNs +
          (cost.bytes - FusionCostModel::kCacheBytes) / FusionCostModel::kMemoryBytesPerNs);
}

// Integer division costs a double division up to 32 bits and is scalar
// for 64-bit integers; 64-bit elements of the result or an operand (a
// select's pred first operand does not make it narrow) take twice f32's.
TEST_F(FusionCostModelTest, PricesIntegerDivisionAndWideElements) {
  Parse(R"(
HloModule m
ENTRY e {
  a = s32[64] parameter(0)
  b = s32[64] parameter(1)
  q = s32[64] divide(a, b)
  a64 = s64[64] parameter(7)
  b64 = s64[64] parameter(8)
  q64 = s64[64] divide(a64, b64)
  seven = s32[] constant(7)
  b7 = s32[64] broadcast(seven), dimensions={}
  qc = s32[64] remainder(a, b7)
  a2 = s32[2] slice(a), slice={[0:2]}
  k2 = s32[2] constant({3, 5})
  qa = s32[2] divide(a2, k2)
  x = f32[64] parameter(2)
  y = f32[64] parameter(3)
  fq = f32[64] divide(x, y)
  p = pred[64] parameter(4)
  u = f64[64] parameter(5)
  v = f64[64] parameter(6)
  s = f64[64] select(p, u, v)
  t = f32[64] select(p, x, y)
  ROOT w = f64[64] convert(x)
})");
  EXPECT_GT(FusionCostModel::ElementCostNs(*Get("q")),
            10 * FusionCostModel::ElementCostNs(*Get("fq")));
  EXPECT_GT(FusionCostModel::ElementCostNs(*Get("q64")),
            5 * FusionCostModel::ElementCostNs(*Get("q")));
  // By a scalar constant: a multiply and shifts; by an array constant, a
  // division of loaded elements.
  EXPECT_LT(FusionCostModel::ElementCostNs(*Get("qc")), FusionCostModel::ElementCostNs(*Get("fq")));
  EXPECT_DOUBLE_EQ(FusionCostModel::ElementCostNs(*Get("qa")),
                   FusionCostModel::ElementCostNs(*Get("q")));
  EXPECT_DOUBLE_EQ(FusionCostModel::ElementCostNs(*Get("s")),
                   2 * FusionCostModel::ElementCostNs(*Get("t")));
  EXPECT_DOUBLE_EQ(FusionCostModel::ElementCostNs(*Get("w")), 2 * 0.03);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::cpu
