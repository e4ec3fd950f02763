// Tests for data-movement shape inference: each rule once where it holds and
// once where it is broken (asserting the message names the rule).
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "xlite/text/parser.h"
#include "xlite/verify/shape_inference.h"
#include "xlite/verify/shape_inference_test_util.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

// The inferred shape of the ROOT of entry computation `body` (after any
// `computations`), or the error.
std::string Infer(absl::string_view body, absl::string_view computations = "") {
  return shape_inference_test::InferModuleRoot(
      absl::StrCat("HloModule m\n\n", computations, "\nENTRY e {\n", body, "\n}\n"));
}

// Inference of `body` fails with a message containing `needle`.
::testing::AssertionResult FailsWith(absl::string_view body, absl::string_view needle,
                                     absl::string_view computations = "") {
  return shape_inference_test::IsErrorContaining(Infer(body, computations), needle);
}

constexpr absl::string_view kAddF32 = R"(
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
add_pair {
  a0 = f32[] parameter(0)
  a1 = s32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = s32[] parameter(3)
  s0 = f32[] add(a0, b0)
  s1 = s32[] add(a1, b1)
  ROOT t = (f32[], s32[]) tuple(s0, s1)
}
)";

// --------------------------------------------------------------- broadcast

TEST(DataMovementShapeTest, BroadcastMapsOperandDimensions) {
  EXPECT_EQ(Infer("p = f32[3] parameter(0)\nROOT b = f32[2,3] broadcast(p), dimensions={1}"),
            "f32[2,3]");
  EXPECT_EQ(Infer("p = f32[] parameter(0)\nROOT b = f32[4,5] broadcast(p), dimensions={}"),
            "f32[4,5]");
  // HLO broadcast may also transpose: dimensions need not increase.
  EXPECT_EQ(Infer("p = f32[2,3] parameter(0)\nROOT b = f32[3,7,2] broadcast(p), dimensions={2,0}"),
            "f32[3,7,2]");
}

TEST(DataMovementShapeTest, BroadcastRules) {
  EXPECT_TRUE(FailsWith("p = f32[3] parameter(0)\nROOT b = f32[3,2] broadcast(p), dimensions={1}",
                        "operand dimension 0 of size 3 maps to result dimension 1 of size 2"));
  // HLO has no size-1 expansion (XLA's verifier requires equal sizes).
  EXPECT_TRUE(FailsWith("p = f32[1] parameter(0)\nROOT b = f32[3] broadcast(p), dimensions={0}",
                        "operand dimension 0 of size 1 maps to result dimension 0 of size 3"));
  EXPECT_TRUE(FailsWith("p = f32[3] parameter(0)\nROOT b = f32[3] broadcast(p), dimensions={}",
                        "has 0 entries but operand rank is 1"));
  EXPECT_TRUE(FailsWith("p = f32[3] parameter(0)\nROOT b = f32[3] broadcast(p), dimensions={1}",
                        "dimensions entry 1 is out of range [0, 1)"));
  EXPECT_TRUE(
      FailsWith("p = f32[3,3] parameter(0)\nROOT b = f32[3,3] broadcast(p), dimensions={0,0}",
                "dimensions repeats dimension 0"));
}

// ------------------------------------------------------ reshape, transpose

TEST(DataMovementShapeTest, ReshapeKeepsElementCount) {
  EXPECT_EQ(Infer("p = f32[2,6] parameter(0)\nROOT r = f32[3,4] reshape(p)"), "f32[3,4]");
  EXPECT_EQ(Infer("p = f32[<=6] parameter(0)\nROOT r = f32[<=6,1] reshape(p)"), "f32[<=6,1]");
  EXPECT_EQ(Infer("p = f32[?,2] parameter(0)\nROOT r = f32[?] reshape(p)"), "f32[?]");
  EXPECT_TRUE(FailsWith("p = f32[2,6] parameter(0)\nROOT r = f32[13] reshape(p)",
                        "element count changes from 12 (f32[2,6]) to 13 (f32[13])"));
}

TEST(DataMovementShapeTest, DynamicReshape) {
  EXPECT_EQ(Infer("p = f32[6] parameter(0)\na = s32[] parameter(1)\nb = s32[] parameter(2)\n"
                  "ROOT r = f32[<=2,<=3] dynamic-reshape(p, a, b)"),
            "f32[<=2,<=3]");
  EXPECT_TRUE(
      FailsWith("p = f32[6] parameter(0)\na = s32[] parameter(1)\n"
                "ROOT r = f32[<=2,<=3] dynamic-reshape(p, a)",
                "expects one size operand per result dimension (2), got 1"));
  EXPECT_TRUE(
      FailsWith("p = f32[6] parameter(0)\na = s64[] parameter(1)\n"
                "ROOT r = f32[<=6] dynamic-reshape(p, a)",
                "size operand 0 must be s32[], got s64[]"));
}

TEST(DataMovementShapeTest, TransposePermutesDimensions) {
  EXPECT_EQ(
      Infer(
          "p = f32[2,3,<=4] parameter(0)\nROOT t = f32[<=4,2,3] transpose(p), dimensions={2,0,1}"),
      "f32[<=4,2,3]");
  EXPECT_TRUE(
      FailsWith("p = f32[2,3] parameter(0)\nROOT t = f32[2,2] transpose(p), dimensions={0,0}",
                "dimensions repeats dimension 0"));
  EXPECT_TRUE(FailsWith("p = f32[2,3] parameter(0)\nROOT t = f32[2] transpose(p), dimensions={0}",
                        "is not a permutation of the operand's 2 dimensions"));
}

TEST(DataMovementShapeTest, Reverse) {
  EXPECT_EQ(Infer("p = s32[2,3] parameter(0)\nROOT r = s32[2,3] reverse(p), dimensions={0,1}"),
            "s32[2,3]");
  EXPECT_TRUE(FailsWith("p = s32[2,3] parameter(0)\nROOT r = s32[2,3] reverse(p), dimensions={2}",
                        "dimensions entry 2 is out of range [0, 2)"));
}

TEST(DataMovementShapeTest, Iota) {
  EXPECT_EQ(Infer("ROOT i = s32[4,5] iota(), iota_dimension=1"), "s32[4,5]");
  EXPECT_TRUE(FailsWith("ROOT i = s32[4,5] iota(), iota_dimension=2",
                        "iota_dimension 2 is out of range for rank 2"));
  EXPECT_TRUE(FailsWith("ROOT i = s32[] iota(), iota_dimension=0", "result must not be a scalar"));
  EXPECT_TRUE(FailsWith("ROOT i = pred[3] iota(), iota_dimension=0", "got pred"));
}

// ------------------------------------------------------------------ slices

TEST(DataMovementShapeTest, SliceWithStrides) {
  EXPECT_EQ(Infer("p = f32[10,4] parameter(0)\nROOT s = f32[4,2] slice(p), slice={[1:8:2], [2:4]}"),
            "f32[4,2]");
  EXPECT_EQ(Infer("p = f32[?] parameter(0)\nROOT s = f32[3] slice(p), slice={[0:3]}"), "f32[3]");
}

TEST(DataMovementShapeTest, SliceRules) {
  EXPECT_TRUE(FailsWith("p = f32[4] parameter(0)\nROOT s = f32[5] slice(p), slice={[0:5]}",
                        "limit 5 of dimension 0 exceeds operand size 4"));
  EXPECT_TRUE(FailsWith("p = f32[4] parameter(0)\nROOT s = f32[0] slice(p), slice={[3:2]}",
                        "limit 2 of dimension 0 is below start 3"));
  EXPECT_TRUE(FailsWith("p = f32[4] parameter(0)\nROOT s = f32[4] slice(p), slice={[0:4:0]}",
                        "stride 0 of dimension 0 must be positive"));
  EXPECT_TRUE(FailsWith("p = f32[4,4] parameter(0)\nROOT s = f32[4] slice(p), slice={[0:4]}",
                        "slice has 1 dimensions but operand rank is 2"));
}

TEST(DataMovementShapeTest, DynamicSliceWithScalarIndices) {
  EXPECT_EQ(Infer("p = f32[8,8] parameter(0)\ni = s32[] parameter(1)\nj = s32[] parameter(2)\n"
                  "ROOT d = f32[2,8] dynamic-slice(p, i, j), dynamic_slice_sizes={2,8}"),
            "f32[2,8]");
}

TEST(DataMovementShapeTest, DynamicSliceWithLegacyIndexVector) {
  EXPECT_EQ(Infer("p = f32[8,8] parameter(0)\ni = s32[2] parameter(1)\n"
                  "ROOT d = f32[2,3] dynamic-slice(p, i), dynamic_slice_sizes={2,3}"),
            "f32[2,3]");
  EXPECT_TRUE(
      FailsWith("p = f32[8,8] parameter(0)\ni = s32[3] parameter(1)\n"
                "ROOT d = f32[2,3] dynamic-slice(p, i), dynamic_slice_sizes={2,3}",
                "start index vector has 3 entries but operand rank is 2"));
}

TEST(DataMovementShapeTest, DynamicSliceRules) {
  EXPECT_TRUE(
      FailsWith("p = f32[8] parameter(0)\ni = s32[] parameter(1)\n"
                "ROOT d = f32[9] dynamic-slice(p, i), dynamic_slice_sizes={9}",
                "slice size 9 of dimension 0 exceeds operand size 8"));
  EXPECT_TRUE(
      FailsWith("p = f32[8,8] parameter(0)\ni = s32[] parameter(1)\n"
                "ROOT d = f32[2,2] dynamic-slice(p, i), dynamic_slice_sizes={2,2}",
                "expects 2 scalar start indices (one per operand dimension), got 1"));
  EXPECT_TRUE(
      FailsWith("p = f32[8,8] parameter(0)\ni = s32[] parameter(1)\nj = s64[] parameter(2)\n"
                "ROOT d = f32[2,2] dynamic-slice(p, i, j), dynamic_slice_sizes={2,2}",
                "start indices differ in type: s32 and s64"));
  EXPECT_TRUE(
      FailsWith("p = f32[8] parameter(0)\ni = f32[] parameter(1)\n"
                "ROOT d = f32[2] dynamic-slice(p, i), dynamic_slice_sizes={2}",
                "start index 0 type f32 is not an integer type"));
  EXPECT_TRUE(
      FailsWith("p = f32[8] parameter(0)\ni = s32[] parameter(1)\n"
                "ROOT d = f32[2] dynamic-slice(p, i), dynamic_slice_sizes={2,2}",
                "dynamic_slice_sizes has 2 entries but operand rank is 1"));
}

TEST(DataMovementShapeTest, DynamicUpdateSlice) {
  EXPECT_EQ(Infer("p = f32[8,8] parameter(0)\nu = f32[2,8] parameter(1)\n"
                  "i = s32[] parameter(2)\nj = s32[] parameter(3)\n"
                  "ROOT d = f32[8,8] dynamic-update-slice(p, u, i, j)"),
            "f32[8,8]");
  EXPECT_TRUE(
      FailsWith("p = f32[8,8] parameter(0)\nu = f32[2,9] parameter(1)\n"
                "i = s32[] parameter(2)\nj = s32[] parameter(3)\n"
                "ROOT d = f32[8,8] dynamic-update-slice(p, u, i, j)",
                "update dimension 1 of size 9 exceeds operand size 8"));
  EXPECT_TRUE(
      FailsWith("p = f32[8,8] parameter(0)\nu = f32[2] parameter(1)\n"
                "i = s32[] parameter(2)\nj = s32[] parameter(3)\n"
                "ROOT d = f32[8,8] dynamic-update-slice(p, u, i, j)",
                "update rank 1 differs from operand rank 2"));
  EXPECT_TRUE(
      FailsWith("p = f32[8] parameter(0)\nu = s32[2] parameter(1)\ni = s32[] parameter(2)\n"
                "ROOT d = f32[8] dynamic-update-slice(p, u, i)",
                "update type s32 differs from operand type f32"));
}

// ------------------------------------------------------- pad, concatenate

TEST(DataMovementShapeTest, PadWithNegativeEdgesAndInterior) {
  // 5 + 2 + (-1) + 4 * 1 = 10; 3 + 0 + 0 = 3.
  EXPECT_EQ(Infer("p = f32[5,3] parameter(0)\nv = f32[] parameter(1)\n"
                  "ROOT r = f32[10,3] pad(p, v), padding=2_-1_1x0_0"),
            "f32[10,3]");
  EXPECT_EQ(Infer("p = f32[?] parameter(0)\nv = f32[] parameter(1)\n"
                  "ROOT r = f32[?] pad(p, v), padding=1_1"),
            "f32[?]");
}

TEST(DataMovementShapeTest, PadRules) {
  EXPECT_TRUE(
      FailsWith("p = f32[5] parameter(0)\nv = f32[] parameter(1)\n"
                "ROOT r = f32[5] pad(p, v), padding=0_0_-1",
                "interior padding -1 of dimension 0 is negative"));
  EXPECT_TRUE(
      FailsWith("p = f32[5] parameter(0)\nv = f32[1] parameter(1)\n"
                "ROOT r = f32[5] pad(p, v), padding=0_0",
                "padding value must be a scalar, got f32[1]"));
  EXPECT_TRUE(
      FailsWith("p = f32[2] parameter(0)\nv = f32[] parameter(1)\n"
                "ROOT r = f32[0] pad(p, v), padding=-2_-1",
                "padding -2_-1_0 of dimension 0 (size 2) gives a negative"));
  EXPECT_TRUE(
      FailsWith("p = f32[2] parameter(0)\nv = s32[] parameter(1)\n"
                "ROOT r = f32[2] pad(p, v), padding=0_0",
                "padding value type s32 differs from operand type f32"));
  EXPECT_TRUE(
      FailsWith("p = f32[2,2] parameter(0)\nv = f32[] parameter(1)\n"
                "ROOT r = f32[2,2] pad(p, v), padding=0_0",
                "padding has 1 dimensions but operand rank is 2"));
}

TEST(DataMovementShapeTest, ConcatenateSumsOneDimension) {
  EXPECT_EQ(Infer("a = f32[2,3] parameter(0)\nb = f32[2,5] parameter(1)\n"
                  "ROOT c = f32[2,8] concatenate(a, b), dimensions={1}"),
            "f32[2,8]");
  EXPECT_EQ(Infer("a = f32[<=2,3] parameter(0)\nb = f32[4,3] parameter(1)\n"
                  "ROOT c = f32[<=6,3] concatenate(a, b), dimensions={0}"),
            "f32[<=6,3]");
  EXPECT_EQ(Infer("a = f32[?,3] parameter(0)\nb = f32[4,3] parameter(1)\n"
                  "ROOT c = f32[?,3] concatenate(a, b), dimensions={0}"),
            "f32[?,3]");
}

TEST(DataMovementShapeTest, ConcatenateRules) {
  EXPECT_TRUE(
      FailsWith("a = f32[2,1] parameter(0)\nb = f32[3,1] parameter(1)\n"
                "ROOT c = f32[3,2] concatenate(a, b), dimensions={1}",
                "operand 1 f32[3,1] differs from operand 0 f32[2,1] in dimension 0"));
  EXPECT_TRUE(
      FailsWith("a = f32[2] parameter(0)\nb = f32[2,1] parameter(1)\n"
                "ROOT c = f32[4] concatenate(a, b), dimensions={0}",
                "operand 1 has rank 2 but operand 0 has rank 1"));
  EXPECT_TRUE(
      FailsWith("a = f32[2] parameter(0)\nb = f32[2] parameter(1)\n"
                "ROOT c = f32[4] concatenate(a, b), dimensions={1}",
                "dimension 1 is out of range for rank 1"));
  EXPECT_TRUE(
      FailsWith("a = f32[2] parameter(0)\nb = s32[2] parameter(1)\n"
                "ROOT c = f32[4] concatenate(a, b), dimensions={0}",
                "operand 1 type s32 differs from operand 0 type f32"));
}

// ------------------------------------------------------------------ gather

TEST(DataMovementShapeTest, GatherRows) {
  EXPECT_EQ(Infer("p = f32[3,4] parameter(0)\ni = s32[2,1] parameter(1)\n"
                  "ROOT g = f32[2,4] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, "
                  "start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}"),
            "f32[2,4]");
  // index_vector_dim == rank: an implicit trailing index vector of size 1.
  EXPECT_EQ(Infer("p = f32[3,4] parameter(0)\ni = s32[5] parameter(1)\n"
                  "ROOT g = f32[5,2] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, "
                  "start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}"),
            "f32[5,2]");
}

TEST(DataMovementShapeTest, GatherWithBatchingDimensions) {
  EXPECT_EQ(Infer("p = f32[5,3,4] parameter(0)\ni = s32[5,2,1] parameter(1)\n"
                  "ROOT g = f32[5,2,4] gather(p, i), offset_dims={2}, collapsed_slice_dims={1}, "
                  "start_index_map={1}, operand_batching_dims={0}, "
                  "start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,4}"),
            "f32[5,2,4]");
  EXPECT_TRUE(
      FailsWith("p = f32[5,3,4] parameter(0)\ni = s32[6,2,1] parameter(1)\n"
                "ROOT g = f32[6,2,4] gather(p, i), offset_dims={2}, "
                "collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, "
                "start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,4}",
                "operand_batching_dims dimension 0 (size 5) and "
                "start_indices_batching_dims dimension 0 (size 6) differ in size"));
  EXPECT_TRUE(
      FailsWith("p = f32[5,3,4] parameter(0)\ni = s32[5,2,1] parameter(1)\n"
                "ROOT g = f32[5,2,4] gather(p, i), offset_dims={2}, "
                "collapsed_slice_dims={1}, start_index_map={0}, operand_batching_dims={0}, "
                "start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,4}",
                "start_index_map and operand_batching_dims both contain dimension 0"));
  EXPECT_TRUE(
      FailsWith("p = f32[5,3,4] parameter(0)\ni = s32[5,2,1] parameter(1)\n"
                "ROOT g = f32[5,2,4] gather(p, i), offset_dims={2}, "
                "collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, "
                "start_indices_batching_dims={2}, index_vector_dim=2, slice_sizes={1,1,4}",
                "start_indices_batching_dims contains index_vector_dim 2"));
}

TEST(DataMovementShapeTest, GatherRules) {
  const char* kPrefix = "p = f32[3,4] parameter(0)\ni = s32[2,1] parameter(1)\n";
  EXPECT_TRUE(FailsWith(absl::StrCat(kPrefix,
                                     "ROOT g = f32[2,5] gather(p, i), offset_dims={1}, "
                                     "collapsed_slice_dims={0}, start_index_map={0}, "
                                     "index_vector_dim=1, slice_sizes={1,5}"),
                        "slice size 5 of dimension 1 is outside [0, 4]"));
  EXPECT_TRUE(FailsWith(absl::StrCat(kPrefix,
                                     "ROOT g = f32[2,4] gather(p, i), offset_dims={1}, "
                                     "collapsed_slice_dims={0}, start_index_map={0}, "
                                     "index_vector_dim=1, slice_sizes={2,4}"),
                        "collapsed dimension 0 has slice size 2, must be 0 or 1"));
  EXPECT_TRUE(FailsWith(absl::StrCat(kPrefix,
                                     "ROOT g = f32[2,4] gather(p, i), offset_dims={1}, "
                                     "collapsed_slice_dims={0}, start_index_map={0,1}, "
                                     "index_vector_dim=1, slice_sizes={1,4}"),
                        "start_index_map has 2 entries but the index vector has 1"));
  EXPECT_TRUE(FailsWith(absl::StrCat(kPrefix,
                                     "ROOT g = f32[2,1,4] gather(p, i), offset_dims={1,2}, "
                                     "collapsed_slice_dims={0}, start_index_map={0}, "
                                     "index_vector_dim=1, slice_sizes={1,4}"),
                        "operand rank 2 must equal offset_dims (2) + collapsed_slice_dims (1)"));
  EXPECT_TRUE(FailsWith(absl::StrCat(kPrefix,
                                     "ROOT g = f32[2,4] gather(p, i), offset_dims={1}, "
                                     "collapsed_slice_dims={0}, start_index_map={0}, "
                                     "index_vector_dim=3, slice_sizes={1,4}"),
                        "index_vector_dim 3 is out of range [0, 2]"));
  EXPECT_TRUE(
      FailsWith("p = f32[3,4] parameter(0)\ni = f32[2,1] parameter(1)\n"
                "ROOT g = f32[2,4] gather(p, i), offset_dims={1}, "
                "collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
                "slice_sizes={1,4}",
                "start_indices type f32 is not an integer type"));
  EXPECT_TRUE(
      FailsWith("p = f32[3,4,5] parameter(0)\ni = s32[2,1] parameter(1)\n"
                "ROOT g = f32[2,5,4] gather(p, i), offset_dims={2,1}, "
                "collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
                "slice_sizes={1,4,5}",
                "offset_dims {2,1} must be sorted"));
}

// ----------------------------------------------------------------- scatter

TEST(DataMovementShapeTest, ScatterRows) {
  EXPECT_EQ(Infer("p = f32[3,4] parameter(0)\ni = s32[2,1] parameter(1)\n"
                  "u = f32[2,4] parameter(2)\n"
                  "ROOT s = f32[3,4] scatter(p, i, u), update_window_dims={1}, "
                  "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                  "index_vector_dim=1, to_apply=add_f32",
                  kAddF32),
            "f32[3,4]");
}

TEST(DataMovementShapeTest, VariadicScatterGivesTuple) {
  EXPECT_EQ(
      Infer("p = f32[3,4] parameter(0)\nq = s32[3,4] parameter(1)\n"
            "i = s32[2,1] parameter(2)\nu = f32[2,4] parameter(3)\nv = s32[2,4] parameter(4)\n"
            "ROOT s = (f32[3,4], s32[3,4]) scatter(p, q, i, u, v), update_window_dims={1}, "
            "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
            "index_vector_dim=1, to_apply=add_pair",
            kAddF32),
      "(f32[3,4], s32[3,4])");
  EXPECT_TRUE(
      FailsWith("p = f32[3,4] parameter(0)\nq = s32[3,4] parameter(1)\n"
                "i = s32[2,1] parameter(2)\nu = f32[2,4] parameter(3)\n"
                "v = s32[2,4] parameter(4)\n"
                "ROOT s = (f32[3,4], s32[3,4]) scatter(p, q, i, u, v), "
                "update_window_dims={1}, inserted_window_dims={0}, "
                "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32",
                "to_apply takes 2 parameters, expected 4", kAddF32));
}

TEST(DataMovementShapeTest, ScatterWithBatchingDimensions) {
  EXPECT_EQ(Infer("p = f32[5,3,4] parameter(0)\ni = s32[5,2,1] parameter(1)\n"
                  "u = f32[5,2,4] parameter(2)\n"
                  "ROOT s = f32[5,3,4] scatter(p, i, u), update_window_dims={2}, "
                  "inserted_window_dims={1}, input_batching_dims={0}, "
                  "scatter_indices_batching_dims={0}, scatter_dims_to_operand_dims={1}, "
                  "index_vector_dim=2, to_apply=add_f32",
                  kAddF32),
            "f32[5,3,4]");
  EXPECT_TRUE(
      FailsWith("p = f32[5,3,4] parameter(0)\ni = s32[5,2,1] parameter(1)\n"
                "u = f32[5,2,4] parameter(2)\n"
                "ROOT s = f32[5,3,4] scatter(p, i, u), update_window_dims={2}, "
                "inserted_window_dims={0}, input_batching_dims={0}, "
                "scatter_indices_batching_dims={0}, scatter_dims_to_operand_dims={1}, "
                "index_vector_dim=2, to_apply=add_f32",
                "inserted_window_dims and input_batching_dims both contain dimension 0", kAddF32));
}

TEST(DataMovementShapeTest, ScatterRules) {
  const char* kPrefix = "p = f32[3,4] parameter(0)\ni = s32[2,1] parameter(1)\n";
  EXPECT_TRUE(FailsWith(absl::StrCat(kPrefix,
                                     "u = f32[2,5] parameter(2)\n"
                                     "ROOT s = f32[3,4] scatter(p, i, u), update_window_dims={1}, "
                                     "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                                     "index_vector_dim=1, to_apply=add_f32"),
                        "update window dimension 1 of size 5 exceeds input dimension 1 of size 4",
                        kAddF32));
  EXPECT_TRUE(FailsWith(absl::StrCat(kPrefix,
                                     "u = f32[3,4] parameter(2)\n"
                                     "ROOT s = f32[3,4] scatter(p, i, u), update_window_dims={1}, "
                                     "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                                     "index_vector_dim=1, to_apply=add_f32"),
                        "update scatter dimension 0 has size 3 but the matching scatter_indices "
                        "dimension has size 2",
                        kAddF32));
  EXPECT_TRUE(FailsWith(absl::StrCat(kPrefix,
                                     "u = f32[2,1,4] parameter(2)\n"
                                     "ROOT s = f32[3,4] scatter(p, i, u), update_window_dims={2}, "
                                     "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                                     "index_vector_dim=1, to_apply=add_f32"),
                        "updates rank 3 must equal update_window_dims (1) + scatter dimensions (1)",
                        kAddF32));
  EXPECT_TRUE(FailsWith(absl::StrCat(kPrefix,
                                     "u = f32[2,4] parameter(2)\n"
                                     "ROOT s = f32[3,4] scatter(p, i, u), update_window_dims={1}, "
                                     "inserted_window_dims={}, scatter_dims_to_operand_dims={0}, "
                                     "index_vector_dim=1, to_apply=add_f32"),
                        "input rank 2 must equal update_window_dims (1) + inserted_window_dims (0)",
                        kAddF32));
  EXPECT_TRUE(FailsWith(absl::StrCat(kPrefix,
                                     "ROOT s = f32[3,4] scatter(p, i), update_window_dims={1}, "
                                     "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                                     "index_vector_dim=1, to_apply=add_f32"),
                        "an odd count >= 3), got 2 operands", kAddF32));
  EXPECT_TRUE(FailsWith(absl::StrCat(kPrefix,
                                     "u = s32[2,4] parameter(2)\n"
                                     "ROOT s = f32[3,4] scatter(p, i, u), update_window_dims={1}, "
                                     "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                                     "index_vector_dim=1, to_apply=add_f32"),
                        "update 0 type s32 differs from input type f32", kAddF32));
}

// ----------------------------------------------------- tuples and tokens

TEST(DataMovementShapeTest, TupleAndGetTupleElement) {
  EXPECT_EQ(Infer("a = f32[2]{0} parameter(0)\nb = s32[] parameter(1)\n"
                  "ROOT t = (f32[2], s32[]) tuple(a, b)"),
            "(f32[2], s32[])");
  EXPECT_EQ(Infer("p = (f32[2], s32[]) parameter(0)\n"
                  "ROOT g = s32[] get-tuple-element(p), index=1"),
            "s32[]");
  EXPECT_TRUE(
      FailsWith("p = (f32[2], s32[]) parameter(0)\n"
                "ROOT g = s32[] get-tuple-element(p), index=2",
                "index 2 is out of range for a tuple of 2 elements"));
  EXPECT_TRUE(FailsWith("p = f32[2] parameter(0)\nROOT g = f32[2] get-tuple-element(p), index=0",
                        "operand must be a tuple, got f32[2]"));
}

TEST(DataMovementShapeTest, TokensAndDependencies) {
  EXPECT_EQ(Infer("p = f32[] parameter(0)\nt = token[] after-all()\n"
                  "ROOT a = token[] after-all(p, t)"),
            "token[]");
  EXPECT_EQ(Infer("p = f32[2] parameter(0)\nt = token[] after-all()\n"
                  "ROOT d = f32[2] add-dependency(p, t)"),
            "f32[2]");
  EXPECT_TRUE(
      FailsWith("p = f32[2] parameter(0)\nq = f32[] parameter(1)\n"
                "ROOT d = f32[2] add-dependency(p, q)",
                "operand 1 must be a token, got f32[]"));
}

TEST(DataMovementShapeTest, PassThroughOps) {
  EXPECT_EQ(Infer("p = (f32[2], s32[]) parameter(0)\n"
                  "ROOT b = (f32[2], s32[]) opt-barrier(p)"),
            "(f32[2], s32[])");
  EXPECT_EQ(Infer("p = f32[] parameter(0)\nROOT d = f32[] domain(p), "
                  "domain={kind=\"sharding\", entry={maximal device=0}, exit={maximal device=1}}"),
            "f32[]");
}

TEST(DataMovementShapeTest, CopyStartAndDone) {
  EXPECT_EQ(Infer("p = f32[2,3]{1,0:S(1)} parameter(0)\n"
                  "ROOT c = (f32[2,3]{1,0:S(2)}, f32[2,3]{1,0:S(1)}, u32[]) copy-start(p)"),
            "(f32[2,3], f32[2,3], u32[])");
  EXPECT_EQ(Infer("p = f32[2,3] parameter(0)\n"
                  "c = (f32[2,3], f32[2,3], u32[]) copy-start(p)\n"
                  "ROOT d = f32[2,3] copy-done(c)"),
            "f32[2,3]");
  EXPECT_TRUE(FailsWith("p = f32[2,3] parameter(0)\nROOT d = f32[2,3] copy-done(p)",
                        "operand must be a copy-start tuple, got f32[2,3]"));
}

// ------------------------------------------------------- dynamic dimensions

TEST(DataMovementShapeTest, GetAndSetDimensionSize) {
  EXPECT_EQ(Infer("p = f32[<=4,3] parameter(0)\n"
                  "ROOT s = s32[] get-dimension-size(p), dimensions={0}"),
            "s32[]");
  EXPECT_TRUE(
      FailsWith("p = f32[4,3] parameter(0)\n"
                "ROOT s = s32[] get-dimension-size(p), dimensions={2}",
                "dimension 2 is out of range for rank 2"));
  EXPECT_EQ(Infer("p = f32[4,3] parameter(0)\nn = s32[] parameter(1)\n"
                  "ROOT s = f32[<=4,3] set-dimension-size(p, n), dimensions={0}"),
            "f32[<=4,3]");
  EXPECT_TRUE(
      FailsWith("p = f32[4,3] parameter(0)\nn = s64[] parameter(1)\n"
                "ROOT s = f32[<=4,3] set-dimension-size(p, n), dimensions={0}",
                "size operand must be s32[], got s64[]"));
}

// ---------------------------------------------------- leaves and bitcast

TEST(DataMovementShapeTest, DeclaredShapesLoseTheirLayout) {
  absl::StatusOr<Shape> shape = shape_inference_test::InferModuleRootShape(
      "HloModule m\nENTRY e {\nROOT p = f32[2,3]{0,1} parameter(0)\n}\n");
  ASSERT_TRUE(shape.ok()) << shape.status();
  EXPECT_EQ(shape->ToString(false), "f32[2,3]");
  EXPECT_FALSE(shape->has_layout());
  EXPECT_EQ(Infer("p = f32[2,3] parameter(0)\nROOT b = f32[3,2]{0,1} bitcast(p)"), "f32[3,2]");
  EXPECT_EQ(Infer("ROOT c = s32[2] constant({1, 2})"), "s32[2]");
}

TEST(DataMovementShapeTest, OtherOpcodesAreLeftToOtherFamilies) {
  auto module = ParseHloModule(
      "HloModule m\n\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT a = f32[2] add(p, p)\n}\n");
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<Shape> shape =
      shape_inference::InferDataMovementShape(*(*module)->entry_computation()->root_instruction());
  EXPECT_TRUE(absl::IsNotFound(shape.status())) << shape.status();
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
