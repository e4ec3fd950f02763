// Tests for the data movement family of the reference interpreter. Expected
// values come from XLA's operation semantics, worked out by hand.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "xlite/eval/evaluator.h"
#include "xlite/text/parser.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

// Evaluates a whole module.
absl::StatusOr<Literal> RunModule(absl::string_view text, const std::vector<Literal>& args = {}) {
  auto module = ParseHloModule(text, "t.hlo");
  if (!module.ok()) return module.status();
  return Evaluate(**module, args);
}

// Evaluates `body` as the entry computation, after the computations in
// `prelude` (combiners).
absl::StatusOr<Literal> Evaluated(absl::string_view body, absl::string_view prelude = "",
                                  const std::vector<Literal>& args = {}) {
  return RunModule(absl::StrCat("HloModule m\n\n", prelude, "\nENTRY e {\n", body, "\n}\n"), args);
}

// The result as XLA prints a literal's values, or "error: <message>".
std::string Eval(absl::string_view body, absl::string_view prelude = "",
                 const std::vector<Literal>& args = {}) {
  absl::StatusOr<Literal> result = Evaluated(body, prelude, args);
  if (!result.ok()) return absl::StrCat("error: ", result.status().message());
  return result->ToStringWithoutShapeOneline();
}

bool IsError(const std::string& s) { return s.rfind("error:", 0) == 0; }

constexpr absl::string_view kAdd =
    "add {\n  x = s32[] parameter(0)\n  y = s32[] parameter(1)\n  ROOT s = s32[] add(x, y)\n}\n";

// ------------------------------------------------------------ reshaping

TEST(EvalDataMovementTest, Constant) {
  EXPECT_EQ(Eval("ROOT c = f32[2,2] constant({{1, 2}, {3, 4}})"), "{ { 1, 2 }, { 3, 4 } }");
  absl::StatusOr<Literal> elided = Evaluated("ROOT c = f32[2,2] constant({...})");
  EXPECT_EQ(elided.status().code(), absl::StatusCode::kUnimplemented) << elided.status();
}

TEST(EvalDataMovementTest, Broadcast) {
  EXPECT_EQ(Eval("a = s32[2] constant({1, 2})\nROOT r = s32[2,3] broadcast(a), dimensions={0}"),
            "{ { 1, 1, 1 }, { 2, 2, 2 } }");
  EXPECT_EQ(Eval("a = s32[3] constant({1, 2, 3})\nROOT r = s32[2,3] broadcast(a), dimensions={1}"),
            "{ { 1, 2, 3 }, { 1, 2, 3 } }");
  EXPECT_EQ(Eval("a = s32[] constant(7)\nROOT r = s32[2] broadcast(a), dimensions={}"), "{7, 7}");
  EXPECT_TRUE(
      IsError(Eval("a = s32[2] constant({1, 2})\nROOT r = s32[3,3] broadcast(a), dimensions={0}")));
}

TEST(EvalDataMovementTest, ReshapeTransposeReverse) {
  const std::string a = "a = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n";
  EXPECT_EQ(Eval(a + "ROOT r = s32[3,2] reshape(a)"), "{ { 1, 2 }, { 3, 4 }, { 5, 6 } }");
  EXPECT_EQ(Eval(a + "ROOT r = s32[3,2] transpose(a), dimensions={1,0}"),
            "{ { 1, 4 }, { 2, 5 }, { 3, 6 } }");
  EXPECT_EQ(Eval(a + "ROOT r = s32[2,3] reverse(a), dimensions={1}"),
            "{ { 3, 2, 1 }, { 6, 5, 4 } }");
  EXPECT_EQ(Eval(a + "ROOT r = s32[2,3] reverse(a), dimensions={0,1}"),
            "{ { 6, 5, 4 }, { 3, 2, 1 } }");
  EXPECT_TRUE(IsError(Eval(a + "ROOT r = s32[4,2] reshape(a)")));
  EXPECT_TRUE(
      IsError(Eval("a = s32[2,2] constant({{1, 2}, {3, 4}})\n"
                   "ROOT r = s32[2,2] transpose(a), dimensions={0,0}")));
}

TEST(EvalDataMovementTest, SliceWithStrides) {
  EXPECT_EQ(Eval("a = s32[2,5] constant({{0, 1, 2, 3, 4}, {5, 6, 7, 8, 9}})\n"
                 "ROOT r = s32[1,2] slice(a), slice={[1:2], [1:5:2]}"),
            "{ { 6, 8 } }");
  EXPECT_EQ(Eval("a = s32[4] constant({0, 1, 2, 3})\nROOT r = s32[0] slice(a), slice={[2:2]}"),
            "{}");
}

TEST(EvalDataMovementTest, ConcatenateAndIota) {
  EXPECT_EQ(Eval("a = s32[1,2] constant({{1, 2}})\nb = s32[2,2] constant({{3, 4}, {5, 6}})\n"
                 "z = s32[0,2] constant({ })\n"
                 "ROOT r = s32[3,2] concatenate(a, z, b), dimensions={0}"),
            "{ { 1, 2 }, { 3, 4 }, { 5, 6 } }");
  EXPECT_EQ(Eval("ROOT r = s32[2,3] iota(), iota_dimension=1"), "{ { 0, 1, 2 }, { 0, 1, 2 } }");
  EXPECT_EQ(Eval("ROOT r = f32[3] iota(), iota_dimension=0"), "{0, 1, 2}");
  EXPECT_EQ(Eval("ROOT r = c64[2] iota(), iota_dimension=0"), "{(0, 0), (1, 0)}");
  absl::StatusOr<Literal> wrapped = Evaluated("ROOT r = u8[300] iota(), iota_dimension=0");
  ASSERT_TRUE(wrapped.ok()) << wrapped.status();
  EXPECT_EQ(wrapped->GetInt(255), 255);
  EXPECT_EQ(wrapped->GetInt(257), 1);  // wraps at 256
}

// ------------------------------------------------------------------ pad

TEST(EvalDataMovementTest, PadWithInteriorAndNegativeEdges) {
  const std::string a = "a = s32[3] constant({1, 2, 3})\nz = s32[] constant(0)\n";
  EXPECT_EQ(Eval(a + "ROOT r = s32[8] pad(a, z), padding=2_1_1"), "{0, 0, 1, 0, 2, 0, 3, 0}");
  EXPECT_EQ(Eval(a + "ROOT r = s32[3] pad(a, z), padding=-1_-1_1"), "{0, 2, 0}");
  EXPECT_EQ(Eval(a + "ROOT r = s32[2] pad(a, z), padding=-2_1_0"), "{3, 0}");
  EXPECT_EQ(Eval("a = f32[2,2] constant({{1, 2}, {3, 4}})\nz = f32[] constant(-1)\n"
                 "ROOT r = f32[3,4] pad(a, z), padding=1_0_0x0_1_1"),
            "{ { -1, -1, -1, -1 }, { 1, -1, 2, -1 }, { 3, -1, 4, -1 } }");
}

// --------------------------------------------------------- dynamic slices

TEST(EvalDataMovementTest, DynamicSliceClampsStartIndices) {
  const std::string a = "a = s32[5] constant({0, 1, 2, 3, 4})\n";
  EXPECT_EQ(Eval(a + "i = s32[] constant(4)\n"
                     "ROOT r = s32[2] dynamic-slice(a, i), dynamic_slice_sizes={2}"),
            "{3, 4}");
  EXPECT_EQ(Eval(a + "i = s32[] constant(-3)\n"
                     "ROOT r = s32[2] dynamic-slice(a, i), dynamic_slice_sizes={2}"),
            "{0, 1}");
  EXPECT_EQ(Eval(a + "i = u64[] constant(18446744073709551615)\n"
                     "ROOT r = s32[2] dynamic-slice(a, i), dynamic_slice_sizes={2}"),
            "{3, 4}");
  EXPECT_EQ(Eval("a = s32[3,3] constant({{0, 1, 2}, {3, 4, 5}, {6, 7, 8}})\n"
                 "i = s32[] constant(1)\nj = s32[] constant(7)\n"
                 "ROOT r = s32[2,2] dynamic-slice(a, i, j), dynamic_slice_sizes={2,2}"),
            "{ { 4, 5 }, { 7, 8 } }");
}

TEST(EvalDataMovementTest, DynamicUpdateSliceClampsStartIndices) {
  const std::string a = "a = s32[5] constant({0, 1, 2, 3, 4})\nu = s32[2] constant({8, 9})\n";
  EXPECT_EQ(Eval(a + "i = s32[] constant(10)\nROOT r = s32[5] dynamic-update-slice(a, u, i)"),
            "{0, 1, 2, 8, 9}");
  EXPECT_EQ(Eval(a + "i = s32[] constant(-1)\nROOT r = s32[5] dynamic-update-slice(a, u, i)"),
            "{8, 9, 2, 3, 4}");
  EXPECT_EQ(Eval(a + "i = s32[] constant(1)\nROOT r = s32[5] dynamic-update-slice(a, u, i)"),
            "{0, 8, 9, 3, 4}");
}

// ----------------------------------------------------------------- gather

TEST(EvalDataMovementTest, GatherRowsClampsOutOfBoundsStarts) {
  EXPECT_EQ(Eval("a = s32[3,4] constant({{0, 1, 2, 3}, {10, 11, 12, 13}, {20, 21, 22, 23}})\n"
                 "i = s32[3,1] constant({{2}, {5}, {-1}})\n"
                 "ROOT r = s32[3,4] gather(a, i), offset_dims={1}, collapsed_slice_dims={0}, "
                 "start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}"),
            "{ { 20, 21, 22, 23 }, { 20, 21, 22, 23 }, { 0, 1, 2, 3 } }");
}

TEST(EvalDataMovementTest, GatherWindowsWithImplicitIndexVector) {
  // index_vector_dim == rank(indices): each index is a one-element vector.
  // Windows of 2 columns; start 3 clamps to 2.
  EXPECT_EQ(Eval("a = s32[2,4] constant({{0, 1, 2, 3}, {4, 5, 6, 7}})\n"
                 "i = s32[2] constant({1, 3})\n"
                 "ROOT r = s32[2,2,2] gather(a, i), offset_dims={0,1}, collapsed_slice_dims={}, "
                 "start_index_map={1}, index_vector_dim=1, slice_sizes={2,2}"),
            "{ { { 1, 2 }, { 2, 3 } }, { { 5, 6 }, { 6, 7 } } }");
}

TEST(EvalDataMovementTest, GatherWithBatchingDims) {
  // Each batch row picks one of its own elements.
  EXPECT_EQ(Eval("a = s32[2,3] constant({{0, 1, 2}, {10, 11, 12}})\n"
                 "i = s32[2,1] constant({{2}, {0}})\n"
                 "ROOT r = s32[2] gather(a, i), offset_dims={}, collapsed_slice_dims={1}, "
                 "start_index_map={1}, operand_batching_dims={0}, "
                 "start_indices_batching_dims={0}, index_vector_dim=1, slice_sizes={1,1}"),
            "{2, 10}");
  // Batch dimension of the indices after the index vector dimension.
  EXPECT_EQ(Eval("a = s32[3,2] constant({{0, 1}, {2, 3}, {4, 5}})\n"
                 "i = s32[1,2] constant({{1, 0}})\n"
                 "ROOT r = s32[2] gather(a, i), offset_dims={}, collapsed_slice_dims={0}, "
                 "start_index_map={0}, operand_batching_dims={1}, "
                 "start_indices_batching_dims={1}, index_vector_dim=0, slice_sizes={1,1}"),
            "{2, 1}");
}

TEST(EvalDataMovementTest, GatherRejectsBadDimensionNumbers) {
  EXPECT_TRUE(
      IsError(Eval("a = s32[3] constant({0, 1, 2})\ni = s32[1,1] constant({{0}})\n"
                   "ROOT r = s32[4] gather(a, i), offset_dims={}, "
                   "collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
                   "slice_sizes={1}")));
  EXPECT_TRUE(
      IsError(Eval("a = s32[3] constant({0, 1, 2})\ni = s32[1,1] constant({{0}})\n"
                   "ROOT r = s32[1] gather(a, i), offset_dims={}, "
                   "collapsed_slice_dims={4}, start_index_map={0}, index_vector_dim=1, "
                   "slice_sizes={1}")));
}

// ---------------------------------------------------------------- scatter

TEST(EvalDataMovementTest, ScatterAccumulatesDuplicatesAndSkipsOutOfBounds) {
  EXPECT_EQ(Eval("a = s32[5] constant({0, 0, 0, 0, 0})\n"
                 "i = s32[5,1] constant({{1}, {3}, {1}, {7}, {-1}})\n"
                 "u = s32[5] constant({10, 20, 30, 40, 50})\n"
                 "ROOT r = s32[5] scatter(a, i, u), update_window_dims={}, "
                 "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                 "index_vector_dim=1, to_apply=add",
                 kAdd),
            "{0, 40, 0, 20, 0}");
}

TEST(EvalDataMovementTest, ScatterSkipsWindowsThatDoNotFit) {
  // Windows of two rows: the one starting at row 3 does not fit and is
  // skipped whole, although its first row would be in bounds.
  EXPECT_EQ(Eval("a = s32[4,2] constant({{0, 0}, {0, 0}, {0, 0}, {0, 0}})\n"
                 "i = s32[2,1] constant({{0}, {3}})\n"
                 "u = s32[2,2,2] constant({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}})\n"
                 "ROOT r = s32[4,2] scatter(a, i, u), update_window_dims={1,2}, "
                 "inserted_window_dims={}, scatter_dims_to_operand_dims={0}, "
                 "index_vector_dim=1, to_apply=add",
                 kAdd),
            "{ { 1, 2 }, { 3, 4 }, { 0, 0 }, { 0, 0 } }");
}

TEST(EvalDataMovementTest, ScatterWithBatchingDims) {
  EXPECT_EQ(Eval("a = s32[2,3] constant({{0, 0, 0}, {0, 0, 0}})\n"
                 "i = s32[2,1] constant({{2}, {0}})\nu = s32[2] constant({5, 7})\n"
                 "ROOT r = s32[2,3] scatter(a, i, u), update_window_dims={}, "
                 "inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, "
                 "input_batching_dims={0}, scatter_indices_batching_dims={0}, "
                 "index_vector_dim=1, to_apply=add",
                 kAdd),
            "{ { 0, 0, 5 }, { 7, 0, 0 } }");
}

TEST(EvalDataMovementTest, ScatterCombinerOrderAndOverwrite) {
  // A combiner that keeps the update: the last update to an index wins.
  constexpr absl::string_view kAssign =
      "assign {\n  x = s32[] parameter(0)\n  ROOT y = s32[] parameter(1)\n}\n";
  EXPECT_EQ(Eval("a = s32[3] constant({1, 2, 3})\ni = s32[3] constant({0, 0, 2})\n"
                 "u = s32[3] constant({7, 8, 9})\n"
                 "ROOT r = s32[3] scatter(a, i, u), update_window_dims={}, "
                 "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                 "index_vector_dim=1, to_apply=assign",
                 kAssign),
            "{8, 2, 9}");
}

TEST(EvalDataMovementTest, VariadicScatter) {
  // Keeps the (value, index) pair with the larger value.
  constexpr absl::string_view kArgmax =
      "argmax {\n  v0 = f32[] parameter(0)\n  i0 = s32[] parameter(1)\n"
      "  v1 = f32[] parameter(2)\n  i1 = s32[] parameter(3)\n"
      "  gt = pred[] compare(v1, v0), direction=GT\n"
      "  v = f32[] select(gt, v1, v0)\n  i = s32[] select(gt, i1, i0)\n"
      "  ROOT t = (f32[], s32[]) tuple(v, i)\n}\n";
  EXPECT_EQ(Eval("a = f32[2] constant({0, 5})\nb = s32[2] constant({-1, -1})\n"
                 "i = s32[3] constant({0, 1, 0})\nuv = f32[3] constant({3, 4, 2})\n"
                 "ui = s32[3] constant({10, 11, 12})\n"
                 "ROOT r = (f32[2], s32[2]) scatter(a, b, i, uv, ui), update_window_dims={}, "
                 "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                 "index_vector_dim=1, to_apply=argmax",
                 kArgmax),
            "( {3, 5}, {10, -1} )");
}

// ---------------------------------------------------------------- bitcasts

TEST(EvalDataMovementTest, BitcastConvertSameWidth) {
  EXPECT_EQ(Eval("a = f32[2] constant({1, -2})\nROOT r = u32[2] bitcast-convert(a)"),
            "{1065353216, 3221225472}");
  EXPECT_EQ(Eval("a = s32[1] constant({1065353216})\nROOT r = f32[1] bitcast-convert(a)"), "{1}");
  EXPECT_EQ(Eval("a = s4[2] constant({-1, 7})\nROOT r = u4[2] bitcast-convert(a)"), "{15, 7}");
}

TEST(EvalDataMovementTest, BitcastConvertChangesWidthLittleEndian) {
  EXPECT_EQ(Eval("a = f32[] constant(1)\nROOT r = u8[4] bitcast-convert(a)"), "{0, 0, 128, 63}");
  EXPECT_EQ(Eval("a = u8[2,2] constant({{1, 2}, {3, 4}})\nROOT r = u16[2] bitcast-convert(a)"),
            "{513, 1027}");
  EXPECT_EQ(Eval("a = c64[1] constant({(1, -2)})\nROOT r = u32[1,2] bitcast-convert(a)"),
            "{ { 1065353216, 3221225472 } }");
  EXPECT_TRUE(IsError(Eval("a = u8[3] constant({1, 2, 3})\nROOT r = u16[1] bitcast-convert(a)")));
  EXPECT_EQ(Eval("a = c64[1] constant({(1, -2)})\nb = u64[1] bitcast-convert(a)\n"
                 "ROOT r = c64[1] bitcast-convert(b)"),
            "{(1, -2)}");
}

TEST(EvalDataMovementTest, BitcastFollowsLayouts) {
  // Same bytes; the result's column-major layout reads them as a transpose.
  EXPECT_EQ(Eval("a = f32[2,3]{1,0} constant({{1, 2, 3}, {4, 5, 6}})\n"
                 "ROOT r = f32[3,2]{0,1} bitcast(a)"),
            "{ { 1, 4 }, { 2, 5 }, { 3, 6 } }");
  EXPECT_EQ(Eval("a = f32[2,3]{1,0} constant({{1, 2, 3}, {4, 5, 6}})\n"
                 "ROOT r = f32[3,2]{1,0} bitcast(a)"),
            "{ { 1, 2 }, { 3, 4 }, { 5, 6 } }");
}

// ------------------------------------------------------ tuples and friends

TEST(EvalDataMovementTest, TuplesAndPassThroughOps) {
  EXPECT_EQ(Eval("a = s32[2] constant({1, 2})\nb = f32[] constant(3)\n"
                 "t = (s32[2], f32[]) tuple(a, b)\nROOT r = f32[] get-tuple-element(t), index=1"),
            "3");
  EXPECT_EQ(Eval("a = s32[2] constant({1, 2})\nt = (s32[2]) tuple(a)\n"
                 "o = (s32[2]) opt-barrier(t)\ng = s32[2] get-tuple-element(o), index=0\n"
                 "tok = token[] after-all()\n"
                 "ROOT r = s32[2] add-dependency(g, tok)"),
            "{1, 2}");
  EXPECT_EQ(Eval("a = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n"
                 "ROOT r = s32[] get-dimension-size(a), dimensions={1}"),
            "3");
  EXPECT_EQ(Eval("a = s32[2] constant({1, 2})\n"
                 "s = (s32[2], s32[2], u32[]) copy-start(a)\n"
                 "ROOT r = s32[2] copy-done(s)"),
            "{1, 2}");
}

TEST(EvalDataMovementTest, ZeroSizedArrays) {
  EXPECT_EQ(Eval("a = s32[0,2] constant({ })\nROOT r = s32[2,0] transpose(a), dimensions={1,0}"),
            "{ {}, {} }");
  EXPECT_EQ(Eval("a = s32[0] constant({})\nz = s32[] constant(9)\n"
                 "ROOT r = s32[3] pad(a, z), padding=1_1_1"),
            "{9, 9, 9}");
  EXPECT_EQ(Eval("a = s32[3] constant({1, 2, 3})\ni = s32[0,1] constant({ })\n"
                 "ROOT r = s32[0] gather(a, i), offset_dims={}, collapsed_slice_dims={0}, "
                 "start_index_map={0}, index_vector_dim=1, slice_sizes={1}"),
            "{}");
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
