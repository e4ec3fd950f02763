// Tests of the random family. rng-bit-generator must reproduce XLA's bits:
// the generators are checked against the Random123 known-answer vectors
// (Threefry-2x32-20, Philox-4x32-10) and against an answer XLA itself gave
// (StableHLO's testdata/rng_bit_generator_uint64_2.mlir, produced by JAX on
// XLA); the output layouts follow XLA's prng.cc.
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "xlite/eval/evaluator.h"
#include "xlite/text/parser.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

std::unique_ptr<HloModule> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "t.hlo");
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? std::move(*module) : nullptr;
}

Literal U64State(std::vector<uint64_t> words) {
  Literal lit(Shape::Array(PrimitiveType::U64, {static_cast<int64_t>(words.size())}));
  for (size_t i = 0; i < words.size(); ++i) lit.SetBits(i, words[i]);
  return lit;
}

std::vector<uint64_t> Bits(const Literal& lit) {
  std::vector<uint64_t> out;
  for (int64_t i = 0; i < lit.element_count(); ++i) out.push_back(lit.GetBits(i));
  return out;
}

struct Generated {
  std::vector<uint64_t> state;
  std::vector<uint64_t> bits;
};

// Runs rng-bit-generator with `algorithm` on `state`, producing `output` (a
// shape such as "u32[4]").
Generated Generate(const std::string& algorithm, const std::vector<uint64_t>& state,
                   const std::string& output) {
  const std::string state_shape = absl::StrCat("u64[", state.size(), "]");
  auto module = Parse(absl::StrCat("HloModule m\nENTRY e {\n  s = ", state_shape,
                                   " parameter(0)\n  ROOT r = (", state_shape, ", ", output,
                                   ") rng-bit-generator(s), algorithm=", algorithm, "\n}\n"));
  if (!module) return {};
  absl::StatusOr<Literal> result = Evaluate(*module, {U64State(state)});
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return {};
  return {Bits(result->tuple_elements()[0]), Bits(result->tuple_elements()[1])};
}

uint64_t Join(uint32_t low, uint32_t high) { return uint64_t{low} | (uint64_t{high} << 32); }

// ---------------------------------------------------------------------------
// Threefry

TEST(EvalRandom, ThreefryMatchesRandom123KnownAnswers) {
  // A u64 output is one Threefry block (x0 low, x1 high) with key = state[0]
  // and counter = state[1], each split into (low, high) words.
  Generated zero = Generate("rng_three_fry", {0, 0}, "u64[]");
  EXPECT_EQ(zero.bits, (std::vector<uint64_t>{Join(0x6b200159, 0x99ba4efe)}));
  EXPECT_EQ(zero.state, (std::vector<uint64_t>{0, 1}));

  Generated ones = Generate("rng_three_fry", {~uint64_t{0}, ~uint64_t{0}}, "u64[]");
  EXPECT_EQ(ones.bits, (std::vector<uint64_t>{Join(0x1cb996fc, 0xbb002be7)}));

  Generated pi = Generate("rng_three_fry",
                          {Join(0x13198a2e, 0x03707344), Join(0x243f6a88, 0x85a308d3)}, "u64[]");
  EXPECT_EQ(pi.bits, (std::vector<uint64_t>{Join(0xc4923a9c, 0x483df7a0)}));
}

TEST(EvalRandom, ThreefryMatchesAnAnswerFromXla) {
  Generated g = Generate("rng_three_fry", {3, 3}, "u64[]");
  EXPECT_EQ(g.bits, (std::vector<uint64_t>{3349939604322698703ull}));
  EXPECT_EQ(g.state, (std::vector<uint64_t>{3, 4}));
}

TEST(EvalRandom, ThreefryU64ArraysUseOneCounterPerElement) {
  Generated g = Generate("rng_three_fry", {7, 100}, "u64[2,2]");
  ASSERT_EQ(g.bits.size(), 4u);
  for (uint64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(g.bits[i], Generate("rng_three_fry", {7, 100 + i}, "u64[]").bits[0]);
  }
  EXPECT_EQ(g.state, (std::vector<uint64_t>{7, 104}));
}

TEST(EvalRandom, ThreefryU32ValuesComeInPairsAlongTheFirstEvenDimension) {
  // Block c's two words, as a u64 output gives them.
  const std::vector<uint64_t> blocks = Generate("rng_three_fry", {5, 0}, "u64[3]").bits;
  auto word = [&](int c, int side) { return side == 0 ? blocks[c] & 0xffffffff : blocks[c] >> 32; };

  // u32[]: the low word of block 0; one block used.
  Generated scalar = Generate("rng_three_fry", {5, 0}, "u32[]");
  EXPECT_EQ(scalar.bits, (std::vector<uint64_t>{word(0, 0)}));
  EXPECT_EQ(scalar.state, (std::vector<uint64_t>{5, 1}));

  // u32[3,2]: dimension 1 is the first even one; element (i, j) is side j of block i.
  Generated rows = Generate("rng_three_fry", {5, 0}, "u32[3,2]");
  EXPECT_EQ(rows.bits, (std::vector<uint64_t>{word(0, 0), word(0, 1), word(1, 0), word(1, 1),
                                              word(2, 0), word(2, 1)}));
  EXPECT_EQ(rows.state, (std::vector<uint64_t>{5, 3}));

  // u32[2,3]: dimension 0 is split; element (j, n) is side j of block n.
  Generated cols = Generate("rng_three_fry", {5, 0}, "u32[2,3]");
  EXPECT_EQ(cols.bits, (std::vector<uint64_t>{word(0, 0), word(1, 0), word(2, 0), word(0, 1),
                                              word(1, 1), word(2, 1)}));
  EXPECT_EQ(cols.state, (std::vector<uint64_t>{5, 3}));

  // u32[3]: no even dimension; the largest is split into ceil(3/2) pairs.
  Generated odd = Generate("rng_three_fry", {5, 0}, "u32[3]");
  EXPECT_EQ(odd.bits, (std::vector<uint64_t>{word(0, 0), word(0, 1), word(1, 0)}));
  EXPECT_EQ(odd.state, (std::vector<uint64_t>{5, 2}));
}

TEST(EvalRandom, ThreefryNarrowTypesKeepTheLowBits) {
  const std::vector<uint64_t> wide = Generate("rng_three_fry", {9, 4}, "u32[2,2]").bits;
  Generated narrow = Generate("rng_three_fry", {9, 4}, "u16[2,2]");
  ASSERT_EQ(narrow.bits.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(narrow.bits[i], wide[i] & 0xffff);
  EXPECT_EQ(Generate("rng_three_fry", {9, 4}, "s32[2,2]").bits, wide);
  EXPECT_EQ(Generate("rng_three_fry", {9, 4}, "f32[2,2]").bits, wide);
}

// ---------------------------------------------------------------------------
// Philox

constexpr uint32_t kPhiloxZero[4] = {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8};

TEST(EvalRandom, PhiloxMatchesRandom123KnownAnswers) {
  // state = (key, counter low, counter high); a u32[4] output is one block.
  Generated zero = Generate("rng_philox", {0, 0, 0}, "u32[4]");
  EXPECT_EQ(zero.bits, (std::vector<uint64_t>{kPhiloxZero[0], kPhiloxZero[1], kPhiloxZero[2],
                                              kPhiloxZero[3]}));
  EXPECT_EQ(zero.state, (std::vector<uint64_t>{0, 1, 0}));

  Generated ones = Generate("rng_philox", {~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0}}, "u32[4]");
  EXPECT_EQ(ones.bits, (std::vector<uint64_t>{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));

  Generated pi = Generate(
      "rng_philox",
      {Join(0xa4093822, 0x299f31d0), Join(0x243f6a88, 0x85a308d3), Join(0x13198a2e, 0x03707344)},
      "u32[4]");
  EXPECT_EQ(pi.bits, (std::vector<uint64_t>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(EvalRandom, PhiloxIsTheDefaultAlgorithm) {
  EXPECT_EQ(Generate("rng_default", {0, 0, 0}, "u32[4]").bits,
            Generate("rng_philox", {0, 0, 0}, "u32[4]").bits);
}

TEST(EvalRandom, PhiloxLayouts) {
  // u64 values: the block's words (0, 1) then (2, 3), low word first.
  Generated wide = Generate("rng_philox", {0, 0, 0}, "u64[2]");
  EXPECT_EQ(wide.bits, (std::vector<uint64_t>{Join(kPhiloxZero[0], kPhiloxZero[1]),
                                              Join(kPhiloxZero[2], kPhiloxZero[3])}));
  EXPECT_EQ(wide.state, (std::vector<uint64_t>{0, 1, 0}));

  // Narrow values keep the low bits of the 32-bit words.
  EXPECT_EQ(Generate("rng_philox", {0, 0, 0}, "u8[2,2]").bits,
            (std::vector<uint64_t>{0xd5, 0x8d, 0x4c, 0xd8}));
  // A partial block still consumes a whole counter.
  Generated five = Generate("rng_philox", {0, 0, 0}, "u32[5]");
  EXPECT_EQ(
      std::vector<uint64_t>(five.bits.begin(), five.bits.begin() + 4),
      (std::vector<uint64_t>{kPhiloxZero[0], kPhiloxZero[1], kPhiloxZero[2], kPhiloxZero[3]}));
  EXPECT_EQ(five.state, (std::vector<uint64_t>{0, 2, 0}));
  EXPECT_EQ(five.bits[4], Generate("rng_philox", {0, 1, 0}, "u32[]").bits[0]);
}

TEST(EvalRandom, PhiloxCounterIs128Bits) {
  Generated g = Generate("rng_philox", {3, ~uint64_t{0}, 7}, "u32[8]");
  EXPECT_EQ(g.state, (std::vector<uint64_t>{3, 1, 8}));
  EXPECT_EQ(std::vector<uint64_t>(g.bits.begin() + 4, g.bits.end()),
            Generate("rng_philox", {3, 0, 8}, "u32[4]").bits);
}

TEST(EvalRandom, PhiloxTwoWordStateUsesTheKeyAsTheCounterHighWord) {
  // XLA reverses a u64[2] state: counter = (state[1], state[0]); only the low
  // counter word is written back.
  const uint64_t key = 0x0123456789abcdef;
  Generated two = Generate("rng_philox", {key, 41}, "u32[6]");
  Generated three = Generate("rng_philox", {key, 41, key}, "u32[6]");
  EXPECT_EQ(two.bits, three.bits);
  EXPECT_EQ(two.state, (std::vector<uint64_t>{key, 43}));
}

// ---------------------------------------------------------------------------
// rng, rng-get-and-update-state

absl::StatusOr<Literal> RunRng(const std::string& type, const std::string& distribution, double a,
                               double b) {
  auto module =
      Parse(absl::StrCat("HloModule m\nENTRY e {\n  a = ", type, "[] parameter(0)\n  b = ", type,
                         "[] parameter(1)\n  ROOT r = ", type,
                         "[10000] rng(a, b), distribution=", distribution, "\n}\n"));
  if (!module) return absl::InternalError("parse failed");
  const PrimitiveType t = *PrimitiveTypeFromName(type);
  Literal la(Shape::Scalar(t)), lb(Shape::Scalar(t));
  la.SetDouble(0, a);
  lb.SetDouble(0, b);
  return Evaluate(*module, {la, lb});
}

void MeanAndDeviation(const Literal& lit, double& mean, double& deviation) {
  double sum = 0, squares = 0;
  const int64_t n = lit.element_count();
  for (int64_t i = 0; i < n; ++i) sum += lit.GetDouble(i);
  mean = sum / n;
  for (int64_t i = 0; i < n; ++i) squares += std::pow(lit.GetDouble(i) - mean, 2);
  deviation = std::sqrt(squares / n);
}

TEST(EvalRandom, RngUniformFloatIsInTheHalfOpenRange) {
  for (const char* type : {"f32", "f64"}) {
    absl::StatusOr<Literal> r = RunRng(type, "rng_uniform", 2, 5);
    ASSERT_TRUE(r.ok()) << r.status();
    for (int64_t i = 0; i < r->element_count(); ++i) {
      ASSERT_GE(r->GetDouble(i), 2.0);
      ASSERT_LT(r->GetDouble(i), 5.0);
    }
    double mean, deviation;
    MeanAndDeviation(*r, mean, deviation);
    EXPECT_NEAR(mean, 3.5, 0.05) << type;
    EXPECT_NEAR(deviation, 3 / std::sqrt(12.0), 0.05) << type;
  }
}

TEST(EvalRandom, RngUniformIntCoversTheHalfOpenRange) {
  for (const char* type : {"s32", "s64", "u32"}) {
    absl::StatusOr<Literal> r =
        RunRng(type, "rng_uniform", std::string(type)[0] == 'u' ? 3 : -3, 4);
    ASSERT_TRUE(r.ok()) << r.status();
    std::set<int64_t> seen;
    for (int64_t i = 0; i < r->element_count(); ++i) seen.insert(r->GetInt(i));
    const int64_t low = std::string(type)[0] == 'u' ? 3 : -3;
    EXPECT_EQ(*seen.begin(), low) << type;
    EXPECT_EQ(*seen.rbegin(), 3) << type;
    EXPECT_EQ(static_cast<int64_t>(seen.size()), 4 - low) << type;
  }
}

TEST(EvalRandom, RngNormalHasTheRequestedMeanAndDeviation) {
  for (const char* type : {"f32", "f64", "bf16"}) {
    absl::StatusOr<Literal> r = RunRng(type, "rng_normal", 1, 2);
    ASSERT_TRUE(r.ok()) << r.status();
    double mean, deviation;
    MeanAndDeviation(*r, mean, deviation);
    EXPECT_NEAR(mean, 1, 0.1) << type;
    EXPECT_NEAR(deviation, 2, 0.1) << type;
  }
}

TEST(EvalRandom, RngIsReproducibleAndAdvancesItsState) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  r0 = f32[8] rng(a, b), distribution=rng_uniform
  r1 = f32[8] rng(a, b), distribution=rng_uniform
  ROOT t = (f32[8], f32[8]) tuple(r0, r1)
})");
  ASSERT_NE(module, nullptr);
  Literal a(Shape::Scalar(PrimitiveType::F32)), b(Shape::Scalar(PrimitiveType::F32));
  b.SetDouble(0, 1);
  absl::StatusOr<Literal> first = Evaluate(*module, {a, b});
  absl::StatusOr<Literal> second = Evaluate(*module, {a, b});
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(*first, *second);
  EXPECT_NE(Bits(first->tuple_elements()[0]), Bits(first->tuple_elements()[1]));
}

TEST(EvalRandom, RngGetAndUpdateStateAdvancesByDelta) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  s0 = u64[2] rng-get-and-update-state(), delta=4
  s1 = u64[2] rng-get-and-update-state(), delta=2
  s2 = u64[2] rng-get-and-update-state(), delta=1
  ROOT t = (u64[2], u64[2], u64[2]) tuple(s0, s1, s2)
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<Literal> result = Evaluate(*module, {});
  ASSERT_TRUE(result.ok()) << result.status();
  // XLA's CPU runtime starts the state at 0x7012395.
  EXPECT_EQ(Bits(result->tuple_elements()[0]), (std::vector<uint64_t>{0x7012395, 0}));
  EXPECT_EQ(Bits(result->tuple_elements()[1]), (std::vector<uint64_t>{0x7012395 + 4, 0}));
  EXPECT_EQ(Bits(result->tuple_elements()[2]), (std::vector<uint64_t>{0x7012395 + 6, 0}));
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
