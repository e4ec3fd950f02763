// Tests of the reference interpreter's reduction family: reduce, reduce-window,
// select-and-scatter, sort, map and scan. Expected values are worked out by
// hand from XLA's operation semantics.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xlite/eval/eval_test_util.h"
#include "xlite/eval/evaluator.h"
#include "xlite/text/parser.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

using eval_test::Array;
using eval_test::Doubles;
using eval_test::F32;
using eval_test::Ints;
using eval_test::S32;

// Scalar computations the tests call.
constexpr char kComputations[] = R"(HloModule t

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}

add_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT r = s32[] add(a, b)
}

max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] maximum(a, b)
}

ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=GE
}

lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=LT
}

gt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=GT
}

lt_total {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=LT, type=TOTALORDER
}

keys_lt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  va = s32[] parameter(2)
  vb = s32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=LT
}

// acc * 2 + x: not associative, so the result shows the order of application.
twice_plus {
  acc = f32[] parameter(0)
  x = f32[] parameter(1)
  two = f32[] constant(2)
  doubled = f32[] multiply(acc, two)
  ROOT r = f32[] add(doubled, x)
}

argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(b, a), direction=GT
  v = f32[] select(gt, b, a)
  i = s32[] select(gt, bi, ai)
  ROOT t = (f32[], s32[]) tuple(v, i)
}

running_sum {
  x = f32[] parameter(0)
  c = f32[] parameter(1)
  s = f32[] add(x, c)
  ROOT t = (f32[], f32[]) tuple(s, s)
}

running_sum_rows {
  x = f32[2] parameter(0)
  c = f32[2] parameter(1)
  s = f32[2] add(x, c)
  ROOT t = (f32[2], f32[2]) tuple(s, s)
}

double_it {
  x = f32[] parameter(0)
  ROOT d = f32[] add(x, x)
}

// keys_lt through a call: not liftable, so sort calls it per comparison.
keys_lt_called {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT r = pred[] call(a, b, c, d), to_apply=keys_lt
}

// twice_plus through a call: not liftable to arrays, so reduce applies it
// element by element.
twice_plus_called {
  acc = f32[] parameter(0)
  x = f32[] parameter(1)
  ROOT r = f32[] call(acc, x), to_apply=twice_plus
}
)";

// Evaluates an ENTRY computation body that may call the computations above.
absl::StatusOr<Literal> EvalHlo(const std::string& entry, const std::vector<Literal>& args) {
  std::string text = std::string(kComputations) + "\nENTRY e {\n" + entry + "\n}\n";
  auto module = ParseHloModule(text, "t.hlo");
  if (!module.ok()) return module.status();
  return Evaluate(**module, args);
}

// ---------------------------------------------------------------------------
// Reduce

TEST(EvalReduce, AlongEachDimension) {
  const Literal x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  const Literal zero = F32({}, {0});
  auto rows = EvalHlo(R"(
  x = f32[2,3] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[2] reduce(x, z), dimensions={1}, to_apply=add)",
                      {x, zero});
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(Doubles(*rows), (std::vector<double>{6, 15}));
  auto cols = EvalHlo(R"(
  x = f32[2,3] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[3] reduce(x, z), dimensions={0}, to_apply=add)",
                      {x, zero});
  ASSERT_TRUE(cols.ok()) << cols.status();
  EXPECT_EQ(Doubles(*cols), (std::vector<double>{5, 7, 9}));
  auto all = EvalHlo(R"(
  x = f32[2,3] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[] reduce(x, z), dimensions={1,0}, to_apply=add)",
                     {x, zero});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(Doubles(*all), (std::vector<double>{21}));
}

TEST(EvalReduce, FoldsInRowMajorOrderFromTheInitValue) {
  // ((((0*2+1)*2+2)*2+3)*2+4) = 26; any other order gives a different value.
  auto r = EvalHlo(R"(
  x = f32[2,2] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[] reduce(x, z), dimensions={1,0}, to_apply=twice_plus)",
                   {F32({2, 2}, {1, 2, 3, 4}), F32({}, {0})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{26}));
}

TEST(EvalReduce, NoDimensionsAppliesTheReducerOnce) {
  auto r = EvalHlo(R"(
  x = f32[3] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[3] reduce(x, z), dimensions={}, to_apply=add)",
                   {F32({3}, {1, 2, 3}), F32({}, {10})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{11, 12, 13}));
}

TEST(EvalReduce, EmptyDimensionGivesTheInitValue) {
  auto r = EvalHlo(R"(
  x = f32[2,0] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[2] reduce(x, z), dimensions={1}, to_apply=add)",
                   {F32({2, 0}, {}), F32({}, {5})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{5, 5}));
}

TEST(EvalReduce, VariadicArgmaxKeepsTheFirstMaximum) {
  auto r = EvalHlo(R"(
  x = f32[4] parameter(0)
  i = s32[4] parameter(1)
  z = f32[] parameter(2)
  zi = s32[] parameter(3)
  ROOT r = (f32[], s32[]) reduce(x, i, z, zi), dimensions={0}, to_apply=argmax)",
                   {F32({4}, {3, 7, 7, 1}), S32({4}, {0, 1, 2, 3}),
                    F32({}, {-std::numeric_limits<double>::infinity()}), S32({}, {-1})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(r->tuple_elements()[0]), (std::vector<double>{7}));
  EXPECT_EQ(Ints(r->tuple_elements()[1]), (std::vector<int64_t>{1}));
}

TEST(EvalReduce, ManyOutputsFoldInOrderOnWholeArraysAndPerElement) {
  // Rows reduce to ((0*2+1)*2+2)*2+3 = 11 and ((0*2+4)*2+5)*2+6 = 32, whether
  // the reducer runs on whole arrays (twice_plus) or per element (called).
  for (const char* reducer : {"twice_plus", "twice_plus_called"}) {
    auto r = EvalHlo(std::string(R"(
  x = f32[2,3] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[2] reduce(x, z), dimensions={1}, to_apply=)") +
                         reducer,
                     {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({}, {0})});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(Doubles(*r), (std::vector<double>{11, 32})) << reducer;
  }
}

TEST(EvalReduce, VariadicArgmaxPerRow) {
  auto r = EvalHlo(R"(
  x = f32[2,3] parameter(0)
  i = s32[2,3] parameter(1)
  z = f32[] parameter(2)
  zi = s32[] parameter(3)
  ROOT r = (f32[2], s32[2]) reduce(x, i, z, zi), dimensions={1}, to_apply=argmax)",
                   {F32({2, 3}, {3, 7, 7, 9, 1, 9}), S32({2, 3}, {0, 1, 2, 0, 1, 2}),
                    F32({}, {-std::numeric_limits<double>::infinity()}), S32({}, {-1})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(r->tuple_elements()[0]), (std::vector<double>{7, 9}));
  EXPECT_EQ(Ints(r->tuple_elements()[1]), (std::vector<int64_t>{1, 0}));
}

TEST(EvalReduce, WrongReducerIsAnError) {
  auto r = EvalHlo(R"(
  x = f32[3] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=argmax)",
                   {F32({3}, {1, 2, 3}), F32({}, {0})});
  EXPECT_FALSE(r.ok());
}

// ---------------------------------------------------------------------------
// Reduce-window

TEST(EvalReduceWindow, SlidingSum) {
  auto r = EvalHlo(R"(
  x = f32[4] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[3] reduce-window(x, z), window={size=2}, to_apply=add)",
                   {F32({4}, {1, 2, 3, 4}), F32({}, {0})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{3, 5, 7}));
}

TEST(EvalReduceWindow, PaddingTakesTheInitValue) {
  auto r = EvalHlo(R"(
  x = f32[4] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[5] reduce-window(x, z), window={size=2 pad=1_1}, to_apply=add)",
                   {F32({4}, {1, 2, 3, 4}), F32({}, {0})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{1, 3, 5, 7, 4}));
  // With a non-identity init value 10, the padded window [pad, 1] folds
  // 10 + 10 + 1 and the window [2, 3] folds 10 + 2 + 3.
  auto init = EvalHlo(R"(
  x = f32[3] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[2] reduce-window(x, z), window={size=2 stride=2 pad=1_0}, to_apply=add)",
                      {F32({3}, {1, 2, 3}), F32({}, {10})});
  ASSERT_TRUE(init.ok()) << init.status();
  EXPECT_EQ(Doubles(*init), (std::vector<double>{21, 15}));
}

TEST(EvalReduceWindow, MaxPool2D) {
  auto r = EvalHlo(R"(
  x = f32[4,4] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[2,2] reduce-window(x, z), window={size=2x2 stride=2x2}, to_apply=max)",
                   {F32({4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}),
                    F32({}, {-std::numeric_limits<double>::infinity()})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{6, 8, 14, 16}));
}

TEST(EvalReduceWindow, Dilations) {
  // Base dilation 2: [1,_,2,_,3]; holes take the init value 0.
  auto base = EvalHlo(R"(
  x = f32[3] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[4] reduce-window(x, z), window={size=2 lhs_dilate=2}, to_apply=add)",
                      {F32({3}, {1, 2, 3}), F32({}, {0})});
  ASSERT_TRUE(base.ok()) << base.status();
  EXPECT_EQ(Doubles(*base), (std::vector<double>{1, 2, 2, 3}));
  // Window dilation 2: windows {0,2}, {1,3}, {2,4}.
  auto window = EvalHlo(R"(
  x = f32[5] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[3] reduce-window(x, z), window={size=2 rhs_dilate=2}, to_apply=add)",
                        {F32({5}, {1, 2, 3, 4, 5}), F32({}, {0})});
  ASSERT_TRUE(window.ok()) << window.status();
  EXPECT_EQ(Doubles(*window), (std::vector<double>{4, 6, 8}));
}

TEST(EvalReduceWindow, Variadic) {
  auto r = EvalHlo(R"(
  x = f32[4] parameter(0)
  i = s32[4] parameter(1)
  z = f32[] parameter(2)
  zi = s32[] parameter(3)
  ROOT r = (f32[2], s32[2]) reduce-window(x, i, z, zi), window={size=2 stride=2}, to_apply=argmax)",
                   {F32({4}, {3, 5, 9, 1}), S32({4}, {0, 1, 2, 3}),
                    F32({}, {-std::numeric_limits<double>::infinity()}), S32({}, {-1})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(r->tuple_elements()[0]), (std::vector<double>{5, 9}));
  EXPECT_EQ(Ints(r->tuple_elements()[1]), (std::vector<int64_t>{1, 2}));
}

// ---------------------------------------------------------------------------
// Select-and-scatter

TEST(EvalSelectAndScatter, ScattersToTheSelectedElement) {
  auto r = EvalHlo(R"(
  x = f32[4] parameter(0)
  s = f32[2] parameter(1)
  z = f32[] parameter(2)
  ROOT r = f32[4] select-and-scatter(x, s, z), window={size=2 stride=2}, select=ge, scatter=add)",
                   {F32({4}, {1, 5, 3, 2}), F32({2}, {10, 20}), F32({}, {0})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{0, 10, 20, 0}));
}

TEST(EvalSelectAndScatter, OverlappingWindowsAccumulate) {
  auto r = EvalHlo(R"(
  x = f32[3] parameter(0)
  s = f32[2] parameter(1)
  z = f32[] parameter(2)
  ROOT r = f32[3] select-and-scatter(x, s, z), window={size=2}, select=ge, scatter=add)",
                   {F32({3}, {1, 9, 2}), F32({2}, {3, 4}), F32({}, {100})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{100, 107, 100}));
}

TEST(EvalSelectAndScatter, TiesKeepTheFirstAndPaddingIsNeverSelected) {
  auto ties = EvalHlo(R"(
  x = f32[2] parameter(0)
  s = f32[1] parameter(1)
  z = f32[] parameter(2)
  ROOT r = f32[2] select-and-scatter(x, s, z), window={size=2}, select=ge, scatter=add)",
                      {F32({2}, {5, 5}), F32({1}, {1}), F32({}, {0})});
  ASSERT_TRUE(ties.ok()) << ties.status();
  EXPECT_EQ(Doubles(*ties), (std::vector<double>{1, 0}));
  // Windows [pad, -1] and [-2, pad]: padding would win a GE selection.
  auto padded = EvalHlo(R"(
  x = f32[2] parameter(0)
  s = f32[2] parameter(1)
  z = f32[] parameter(2)
  ROOT r = f32[2] select-and-scatter(x, s, z), window={size=2 stride=2 pad=1_1}, select=ge, scatter=add)",
                        {F32({2}, {-1, -2}), F32({2}, {3, 4}), F32({}, {0})});
  ASSERT_TRUE(padded.ok()) << padded.status();
  EXPECT_EQ(Doubles(*padded), (std::vector<double>{3, 4}));
}

// ---------------------------------------------------------------------------
// Sort

TEST(EvalSort, Ascending) {
  auto r = EvalHlo(R"(
  x = f32[5] parameter(0)
  ROOT r = f32[5] sort(x), dimensions={0}, to_apply=lt)",
                   {F32({5}, {3, 1, 2, 5, 4})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{1, 2, 3, 4, 5}));
}

TEST(EvalSort, StableWithEqualKeysCarryingValues) {
  auto r = EvalHlo(R"(
  k = s32[6] parameter(0)
  v = s32[6] parameter(1)
  ROOT r = (s32[6], s32[6]) sort(k, v), dimensions={0}, is_stable=true, to_apply=keys_lt)",
                   {S32({6}, {2, 1, 2, 1, 0, 2}), S32({6}, {0, 1, 2, 3, 4, 5})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Ints(r->tuple_elements()[0]), (std::vector<int64_t>{0, 1, 1, 2, 2, 2}));
  EXPECT_EQ(Ints(r->tuple_elements()[1]), (std::vector<int64_t>{4, 1, 3, 0, 2, 5}));
}

TEST(EvalSort, ManySlicesSortTogetherOrOneByOneAlike) {
  // Rows of odd length with ties: lifted (keys_lt) and per-comparison
  // (keys_lt_called) comparators give the same stable orders.
  for (const char* comparator : {"keys_lt", "keys_lt_called"}) {
    auto r = EvalHlo(std::string(R"(
  k = s32[2,7] parameter(0)
  v = s32[2,7] parameter(1)
  ROOT r = (s32[2,7], s32[2,7]) sort(k, v), dimensions={1}, is_stable=true, to_apply=)") +
                         comparator,
                     {S32({2, 7}, {2, 1, 2, 1, 0, 2, 1, 5, 4, 3, 2, 1, 0, 3}),
                      S32({2, 7}, {0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6})});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(Ints(r->tuple_elements()[0]),
              (std::vector<int64_t>{0, 1, 1, 1, 2, 2, 2, 0, 1, 2, 3, 3, 4, 5}))
        << comparator;
    EXPECT_EQ(Ints(r->tuple_elements()[1]),
              (std::vector<int64_t>{4, 1, 3, 6, 0, 2, 5, 5, 4, 3, 2, 6, 1, 0}))
        << comparator;
  }
}

TEST(EvalSort, DescendingAlongTheFirstDimension) {
  auto r = EvalHlo(R"(
  x = f32[3,2] parameter(0)
  ROOT r = f32[3,2] sort(x), dimensions={0}, to_apply=gt)",
                   {F32({3, 2}, {1, 6, 3, 4, 2, 5})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{3, 6, 2, 5, 1, 4}));
}

TEST(EvalSort, TotalOrderPlacesNans) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  auto r = EvalHlo(R"(
  x = f32[6] parameter(0)
  ROOT r = f32[6] sort(x), dimensions={0}, to_apply=lt_total)",
                   {F32({6}, {nan, 1, -nan, -inf, 0.0, -0.0})});
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<double> v = Doubles(*r);
  ASSERT_EQ(v.size(), 6u);
  EXPECT_TRUE(std::isnan(v[0]) && std::signbit(v[0]));
  EXPECT_EQ(v[1], -inf);
  EXPECT_TRUE(v[2] == 0 && std::signbit(v[2]));
  EXPECT_TRUE(v[3] == 0 && !std::signbit(v[3]));
  EXPECT_EQ(v[4], 1);
  EXPECT_TRUE(std::isnan(v[5]) && !std::signbit(v[5]));
}

TEST(EvalSort, EmptyDimension) {
  auto r = EvalHlo(R"(
  x = f32[2,0] parameter(0)
  ROOT r = f32[2,0] sort(x), dimensions={1}, to_apply=lt)",
                   {F32({2, 0}, {})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->element_count(), 0);
}

// ---------------------------------------------------------------------------
// Map

TEST(EvalMap, AppliesElementwise) {
  auto sum = EvalHlo(R"(
  a = f32[2,2] parameter(0)
  b = f32[2,2] parameter(1)
  ROOT r = f32[2,2] map(a, b), dimensions={0,1}, to_apply=add)",
                     {F32({2, 2}, {1, 2, 3, 4}), F32({2, 2}, {10, 20, 30, 40})});
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_EQ(Doubles(*sum), (std::vector<double>{11, 22, 33, 44}));
  auto cmp = EvalHlo(R"(
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  ROOT r = pred[3] map(a, b), dimensions={0}, to_apply=ge)",
                     {F32({3}, {1, 5, 3}), F32({3}, {2, 5, 1})});
  ASSERT_TRUE(cmp.ok()) << cmp.status();
  EXPECT_EQ(Ints(*cmp), (std::vector<int64_t>{0, 1, 1}));
}

// ---------------------------------------------------------------------------
// Scan

TEST(EvalScan, RunningSumForwardAndReverse) {
  auto forward = EvalHlo(R"(
  x = f32[4] parameter(0)
  z = f32[] parameter(1)
  ROOT r = (f32[4], f32[]) scan(x, z), dimensions={0}, num_carries=1, to_apply=running_sum)",
                         {F32({4}, {1, 2, 3, 4}), F32({}, {0})});
  ASSERT_TRUE(forward.ok()) << forward.status();
  EXPECT_EQ(Doubles(forward->tuple_elements()[0]), (std::vector<double>{1, 3, 6, 10}));
  EXPECT_EQ(Doubles(forward->tuple_elements()[1]), (std::vector<double>{10}));
  auto reverse = EvalHlo(R"(
  x = f32[4] parameter(0)
  z = f32[] parameter(1)
  ROOT r = (f32[4], f32[]) scan(x, z), dimensions={0}, num_carries=1, is_reverse=true, to_apply=running_sum)",
                         {F32({4}, {1, 2, 3, 4}), F32({}, {0})});
  ASSERT_TRUE(reverse.ok()) << reverse.status();
  EXPECT_EQ(Doubles(reverse->tuple_elements()[0]), (std::vector<double>{10, 9, 7, 4}));
}

TEST(EvalScan, ArrayCarriesAlongAnInnerDimension) {
  auto r = EvalHlo(R"(
  x = f32[2,3] parameter(0)
  z = f32[2] parameter(1)
  ROOT r = (f32[2,3], f32[2]) scan(x, z), dimensions={1}, num_carries=1, to_apply=running_sum_rows)",
                   {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({2}, {0, 100})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(r->tuple_elements()[0]), (std::vector<double>{1, 3, 6, 104, 109, 115}));
  EXPECT_EQ(Doubles(r->tuple_elements()[1]), (std::vector<double>{6, 115}));
}

TEST(EvalScan, WithoutCarries) {
  auto r = EvalHlo(R"(
  x = f32[3] parameter(0)
  ROOT r = (f32[3]) scan(x), dimensions={0}, num_carries=0, to_apply=double_it)",
                   {F32({3}, {1, 2, 3})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(r->tuple_elements()[0]), (std::vector<double>{2, 4, 6}));
  // A single result may also be returned untupled.
  auto untupled = EvalHlo(R"(
  x = f32[3] parameter(0)
  ROOT r = f32[3] scan(x), dimensions={0}, num_carries=0, to_apply=double_it)",
                          {F32({3}, {1, 2, 3})});
  ASSERT_TRUE(untupled.ok()) << untupled.status();
  EXPECT_EQ(Doubles(*untupled), (std::vector<double>{2, 4, 6}));
}

TEST(EvalScan, BodyOfTheWrongTypeIsAnError) {
  auto r = EvalHlo(R"(
  x = s32[3] parameter(0)
  z = f32[] parameter(1)
  ROOT r = (f32[3], f32[]) scan(x, z), dimensions={0}, num_carries=1, to_apply=running_sum)",
                   {S32({3}, {1, 2, 3}), F32({}, {0})});
  EXPECT_FALSE(r.ok());
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
