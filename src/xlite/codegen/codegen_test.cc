// Every opcode the code generator compiles, over representative element
// types, shapes and layouts (non-default layouts, size 0, rank 0): each
// kernel runs on seeded random inputs laid out physically, as 1 and as
// several partitions, and must agree with the interpreter.
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "xlite/codegen/codegen_test_util.h"
#include "xlite/codegen/denormals.h"
#include "xlite/codegen/jit.h"
#include "xlite/codegen/runtime_symbols.h"
#include "xlite/hostlib/float_convert.h"

namespace xlite::codegen {
namespace {
namespace XLITE_UNITY_ID {

using testing::KernelRun;
using testing::RunKernel;

struct Options {
  bool exact = false;  // floats bitwise (data movement, conversions that are exact)
  double scale = 1.0;  // floats drawn from [-scale, scale] instead of [-1, 1]
  uint64_t seed = 1;
  std::vector<int64_t> partitions = {1, 3, 8};
};

Jit& SharedJit() {
  static Jit* jit = [] {
    auto created = Jit::Create();
    if (!created.ok()) {
      ADD_FAILURE() << created.status();
      std::abort();
    }
    return created->release();
  }();
  return *jit;
}

int64_t g_kernels_checked = 0;

// Prints how many kernels the op tests compared with the interpreter.
class CountReporter : public ::testing::Environment {
 public:
  void TearDown() override {
    std::printf("codegen_test: %lld kernels compiled and compared with the interpreter\n",
                static_cast<long long>(g_kernels_checked));
  }
};
const auto* const kReporter = ::testing::AddGlobalTestEnvironment(new CountReporter);

// Compiles the entry root of `hlo` and checks it against the interpreter.
KernelRun Check(const std::string& hlo, const Options& options = {}) {
  SCOPED_TRACE(hlo);
  ++g_kernels_checked;
  auto module = ParseHloModule(hlo);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return {module.status()};
  auto args = MakeFakeArguments(**module, FakeDataKind::kRandom, options.seed);
  EXPECT_TRUE(args.ok()) << args.status();
  if (!args.ok()) return {args.status()};
  if (options.scale != 1.0) {
    for (Literal& arg : *args) {
      const PrimitiveType t = arg.shape().element_type();
      if (!IsFloatingPoint(t) && !IsComplex(t)) continue;
      for (int64_t i = 0; i < arg.element_count(); ++i) {
        if (IsComplex(t)) {
          arg.SetComplex(i, arg.GetComplex(i) * options.scale);
        } else {
          arg.SetDouble(i, arg.GetDouble(i) * options.scale);
        }
      }
    }
  }
  auto expected = Evaluate(**module, *args);
  EXPECT_TRUE(expected.ok()) << expected.status();
  if (!expected.ok()) return {expected.status()};
  KernelRun run = RunKernel(SharedJit(), *(*module)->entry_computation()->root_instruction(), *args,
                            *expected, options.exact, options.partitions);
  EXPECT_TRUE(run.status.ok()) << run.status;
  EXPECT_EQ(run.mismatch, "");
  return run;
}

const std::vector<std::string> kFloatTypes = {"f32", "f64", "f16", "bf16", "f8e4m3fn", "f8e5m2"};
// The rest of the narrow float family, for binary arithmetic.
const std::vector<std::string> kMoreFloatTypes = {
    "f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz", "f8e4m3", "f8e3m4", "f4e2m1fn", "f8e8m0fnu"};
const std::vector<std::string> kIntTypes = {"s8",  "s16", "s32", "s64", "u8",
                                            "u32", "u64", "s4",  "u4",  "s2"};
const std::vector<std::string> kShapes = {"[]", "[7,5]{0,1}", "[0,3]{1,0}", "[3,4,5]{1,2,0}",
                                          "[33]{0}"};

std::string Unary(const std::string& op, const std::string& in, const std::string& out) {
  return absl::StrCat("HloModule m\nENTRY e {\n  p = ", in, " parameter(0)\n  ROOT r = ", out, " ",
                      op, "(p)\n}\n");
}

std::string Binary(const std::string& op, const std::string& in, const std::string& out,
                   const std::string& attrs = "") {
  return absl::StrCat("HloModule m\nENTRY e {\n  p = ", in, " parameter(0)\n  q = ", in,
                      " parameter(1)\n  ROOT r = ", out, " ", op, "(p, q)", attrs, "\n}\n");
}

TEST(CodegenElementwise, FloatUnary) {
  const std::vector<std::string> ops = {"abs",
                                        "negate",
                                        "sign",
                                        "ceil",
                                        "floor",
                                        "round-nearest-afz",
                                        "round-nearest-even",
                                        "sqrt",
                                        "rsqrt",
                                        "cbrt",
                                        "exponential",
                                        "exponential-minus-one",
                                        "log",
                                        "log-plus-one",
                                        "logistic",
                                        "sine",
                                        "cosine",
                                        "tan",
                                        "tanh",
                                        "sinh",
                                        "cosh",
                                        "asin",
                                        "acos",
                                        "atan",
                                        "asinh",
                                        "acosh",
                                        "atanh",
                                        "erf",
                                        "copy"};
  for (const std::string& type : kFloatTypes) {
    for (const std::string& op : ops) {
      for (const std::string& shape : {std::string("[7,5]{0,1}"), std::string("[]")}) {
        Options o;
        o.scale = op == "acosh" || op == "exponential" ? 3.0 : 1.5;
        Check(Unary(op, type + shape, type + shape), o);
      }
    }
  }
}

TEST(CodegenElementwise, FloatBinary) {
  const std::vector<std::string> ops = {"add",   "subtract", "multiply", "divide", "remainder",
                                        "atan2", "maximum",  "minimum",  "power"};
  for (const std::string& type : kFloatTypes) {
    for (const std::string& op : ops) {
      for (const std::string& shape : kShapes) Check(Binary(op, type + shape, type + shape));
    }
  }
  for (const std::string& type : kMoreFloatTypes) {
    for (const std::string& op : ops) Check(Binary(op, type + "[7,5]{0,1}", type + "[7,5]{0,1}"));
    Check(Unary("sqrt", type + "[9]", type + "[9]"));
  }
}

TEST(CodegenElementwise, IntegerUnaryAndBinary) {
  const std::vector<std::string> unary = {"abs", "negate", "sign",
                                          "not", "popcnt", "count-leading-zeros"};
  const std::vector<std::string> binary = {"add",
                                           "subtract",
                                           "multiply",
                                           "divide",
                                           "remainder",
                                           "maximum",
                                           "minimum",
                                           "and",
                                           "or",
                                           "xor",
                                           "power",
                                           "shift-left",
                                           "shift-right-logical",
                                           "shift-right-arithmetic",
                                           "mulhi"};
  for (const std::string& type : kIntTypes) {
    for (const std::string& shape :
         {std::string("[7,5]{0,1}"), std::string("[]"), std::string("[64]{0}")}) {
      for (const std::string& op : unary) {
        // XLA defines abs and sign for signed integers only.
        if (type[0] == 'u' && (op == "abs" || op == "sign")) continue;
        Check(Unary(op, type + shape, type + shape));
      }
      for (const std::string& op : binary) Check(Binary(op, type + shape, type + shape));
    }
  }
}

TEST(CodegenElementwise, IntegerEdgeCases) {
  // Division by zero and by -1, INT_MIN, out-of-range shifts, negative powers.
  Options exact;
  exact.exact = true;
  Check(R"(
HloModule m
fused {
  x = s32[8] constant({-2147483648, 7, -7, 5, 0, 1, -1, 2147483647})
  y = s32[8] constant({-1, 0, 2, -1, 0, 40, 33, -3})
  d = s32[8] divide(x, y)
  r = s32[8] remainder(x, y)
  sl = s32[8] shift-left(x, y)
  sr = s32[8] shift-right-arithmetic(x, y)
  sl2 = s32[8] shift-right-logical(x, y)
  pw = s32[8] power(x, y)
  mh = s32[8] mulhi(x, y)
  ROOT t = (s32[8], s32[8], s32[8], s32[8], s32[8], s32[8], s32[8]) tuple(d, r, sl, sr, sl2, pw, mh)
}
ENTRY e {
  ROOT f = (s32[8], s32[8], s32[8], s32[8], s32[8], s32[8], s32[8]) fusion(), kind=kLoop, calls=fused
})",
        exact);
}

// Integer division up to 32 bits is computed in double (it vectorizes):
// every pair of extreme and ordinary operands, quotient and remainder, as
// the interpreter's integer division.
TEST(CodegenElementwise, IntegerDivisionThroughDoubleIsExact) {
  const std::vector<std::pair<std::string, std::vector<int64_t>>> cases = {
      {"s32",
       {-2147483648, -2147483647, -1073741825, -1000000007, -65537, -7, -3, -2, -1, 0, 1, 2, 3, 7,
        65537, 1000000007, 1073741825, 2147483646, 2147483647}},
      {"u32",
       {0, 1, 2, 3, 7, 65537, 1000000007, 2147483647, 2147483648, 2147483649, 3000000019,
        4294967293, 4294967294, 4294967295}},
      {"s16", {-32768, -32767, -7, -3, -2, -1, 0, 1, 2, 3, 7, 32766, 32767}},
      {"u8", {0, 1, 2, 3, 7, 127, 128, 254, 255}},
  };
  for (const auto& [type, values] : cases) {
    std::string xs, ys;
    for (int64_t x : values) {
      for (int64_t y : values) {
        absl::StrAppend(&xs, xs.empty() ? "" : ", ", x);
        absl::StrAppend(&ys, ys.empty() ? "" : ", ", y);
      }
    }
    const std::string shape = absl::StrCat(type, "[", values.size() * values.size(), "]");
    Check(absl::StrCat("HloModule m\nfused {\n  x = ", shape, " constant({", xs,
                       "})\n  y = ", shape, " constant({", ys, "})\n  d = ", shape,
                       " divide(x, y)\n  r = ", shape, " remainder(x, y)\n  ROOT t = (", shape,
                       ", ", shape, ") tuple(d, r)\n}\nENTRY e {\n  ROOT f = (", shape, ", ", shape,
                       ") fusion(), kind=kLoop, calls=fused\n}\n"),
          {.exact = true});
  }
}

TEST(CodegenElementwise, Pred) {
  Check(Unary("not", "pred[9]", "pred[9]"));
  // The pred arithmetic XLA accepts.
  for (const std::string& op : {"and", "or", "xor", "add", "multiply", "maximum", "minimum"}) {
    Check(Binary(op, "pred[4,3]{0,1}", "pred[4,3]{0,1}"));
  }
  // What XLA's shape inference rejects is an error naming the instruction.
  auto module = ParseHloModule(Unary("popcnt", "pred[3]", "pred[3]"));
  ASSERT_TRUE(module.ok());
  auto kernels =
      SharedJit().Compile({KernelSpec{(*module)->entry_computation()->root_instruction()}});
  ASSERT_FALSE(kernels.ok());
  EXPECT_NE(kernels.status().message().find("popcnt 'r'"), std::string::npos) << kernels.status();
}

TEST(CodegenElementwise, Complex) {
  const std::vector<std::string> unary = {"negate",
                                          "sign",
                                          "sqrt",
                                          "rsqrt",
                                          "cbrt",
                                          "exponential",
                                          "exponential-minus-one",
                                          "log",
                                          "log-plus-one",
                                          "logistic",
                                          "sine",
                                          "cosine",
                                          "tan",
                                          "tanh",
                                          "sinh",
                                          "cosh",
                                          "asin",
                                          "acos",
                                          "atan",
                                          "asinh",
                                          "acosh",
                                          "atanh",
                                          "copy"};
  const std::vector<std::string> binary = {"add",   "subtract", "multiply", "divide",
                                           "power", "atan2",    "maximum",  "minimum"};
  for (const std::string& type : {std::string("c64"), std::string("c128")}) {
    const std::string part = type == "c64" ? "f32" : "f64";
    for (const std::string& op : unary) Check(Unary(op, type + "[6,2]{0,1}", type + "[6,2]{0,1}"));
    for (const std::string& op : binary) Check(Binary(op, type + "[6,2]", type + "[6,2]"));
    Check(Unary("abs", type + "[6,2]", part + "[6,2]"));
    Check(Unary("real", type + "[6,2]", part + "[6,2]"));
    Check(Unary("imag", type + "[6,2]", part + "[6,2]"));
    Check(Binary("complex", part + "[6,2]", type + "[6,2]"));
    Check(Binary("compare", type + "[6,2]", "pred[6,2]", ", direction=EQ"));
    Check(Binary("compare", type + "[6,2]", "pred[6,2]", ", direction=NE"));
  }
}

TEST(CodegenElementwise, Compare) {
  std::vector<std::string> types = kFloatTypes;
  types.insert(types.end(), kIntTypes.begin(), kIntTypes.end());
  types.push_back("pred");
  for (const std::string& type : types) {
    for (const std::string& dir : {"EQ", "NE", "GE", "GT", "LE", "LT"}) {
      std::string attrs = absl::StrCat(", direction=", dir);
      Check(Binary("compare", type + "[5,4]{0,1}", "pred[5,4]{0,1}", attrs));
      if (kFloatTypes.end() != std::find(kFloatTypes.begin(), kFloatTypes.end(), type)) {
        Check(Binary("compare", type + "[5,4]", "pred[5,4]", attrs + ", type=TOTALORDER"));
      }
      if (type == "s32") {
        Check(Binary("compare", type + "[5,4]", "pred[5,4]", attrs + ", type=UNSIGNED"));
      }
    }
  }
}

// NaNs, signed zeros and infinities under each comparison order (random
// inputs rarely hold them): every pair of these values, as constants.
TEST(CodegenElementwise, CompareOrdersOnSpecialValues) {
  const std::vector<std::string> values = {"nan", "-nan", "0", "-0", "inf", "-inf", "1", "-1.5"};
  std::vector<std::string> lhs, rhs;
  for (const std::string& a : values) {
    for (const std::string& b : values) {
      lhs.push_back(a);
      rhs.push_back(b);
    }
  }
  const std::string n = std::to_string(lhs.size());
  for (const std::string type : {"f32", "f64", "f16", "bf16"}) {
    for (const std::string order :
         {"", ", order=TOTAL", ", order=WEAK", ", order=PARTIAL", ", type=TOTALORDER"}) {
      for (const std::string dir : {"EQ", "NE", "GE", "GT", "LE", "LT"}) {
        Check(absl::StrCat("HloModule m\nENTRY e {\n  a = ", type, "[", n, "] constant({",
                           absl::StrJoin(lhs, ", "), "})\n  b = ", type, "[", n, "] constant({",
                           absl::StrJoin(rhs, ", "), "})\n  ROOT r = pred[", n,
                           "] compare(a, b), direction=", dir, order, "\n}\n"),
              {.exact = true});
      }
    }
  }
}

TEST(CodegenElementwise, Convert) {
  const std::vector<std::string> types = {
      "pred",          "s2",     "s4",       "u4",       "s8",         "s16",
      "s32",           "s64",    "u8",       "u16",      "u32",        "u64",
      "f16",           "bf16",   "f8e4m3fn", "f8e5m2",   "f8e4m3fnuz", "f8e5m2fnuz",
      "f8e4m3b11fnuz", "f8e4m3", "f8e3m4",   "f4e2m1fn", "f8e8m0fnu",  "f32",
      "f64",           "c64",    "c128"};
  for (const std::string& from : types) {
    for (const std::string& to : types) {
      const bool complex_from = from[0] == 'c';
      if (complex_from && to[0] != 'c') continue;  // XLA converts complex only to complex
      for (double scale : {1.0, 300.0}) {
        Options o;
        o.scale = scale;
        Check(Unary("convert", from + "[4,9]{0,1}", to + "[4,9]{1,0}"), o);
      }
    }
  }
}

TEST(CodegenElementwise, SmallFloatRoundingIsExact) {
  // f32 -> narrow types round to nearest even in integer arithmetic: every
  // result bit equals the interpreter's, denormals and overflow included.
  for (const std::string& to : {"f16", "bf16", "f8e4m3fn", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz",
                                "f8e4m3b11fnuz", "f8e4m3", "f8e3m4", "f4e2m1fn", "f8e8m0fnu"}) {
    for (double scale : {1e-6, 1e-3, 1.0, 100.0, 1e5, 1e30}) {
      Options o;
      o.scale = scale;
      o.exact = true;
      Check(Unary("convert", "f32[512]", std::string(to) + "[512]"), o);
      Check(Unary("convert", "f64[512]", std::string(to) + "[512]"), o);
    }
  }
}

TEST(CodegenElementwise, SelectClampAndFriends) {
  for (const std::string& type : {"f32", "bf16", "s32", "u8", "c64", "pred", "s4"}) {
    Options exact;
    exact.exact = true;
    Check(absl::StrCat("HloModule m\nENTRY e {\n  c = pred[6,3]{0,1} parameter(0)\n  a = ", type,
                       "[6,3]{0,1} parameter(1)\n  b = ", type,
                       "[6,3]{1,0} parameter(2)\n  ROOT r = ", type,
                       "[6,3]{1,0} select(c, a, b)\n}\n"),
          exact);
    if (std::string(type) == "c64" || std::string(type) == "pred") continue;
    Check(absl::StrCat("HloModule m\nENTRY e {\n  lo = ", type, "[6,3] parameter(0)\n  x = ", type,
                       "[6,3] parameter(1)\n  hi = ", type, "[6,3] parameter(2)\n  ROOT r = ", type,
                       "[6,3] clamp(lo, x, hi)\n}\n"),
          exact);
    Check(absl::StrCat("HloModule m\nENTRY e {\n  lo = ", type, "[] parameter(0)\n  x = ", type,
                       "[6,3] parameter(1)\n  hi = ", type, "[] parameter(2)\n  ROOT r = ", type,
                       "[6,3] clamp(lo, x, hi)\n}\n"),
          exact);
  }
  for (const std::string& type : kFloatTypes) {
    Check(Unary("is-finite", type + "[7]", "pred[7]"));
    for (const std::string& em :
         {"exponent_bits=5, mantissa_bits=10", "exponent_bits=8, mantissa_bits=7",
          "exponent_bits=4, mantissa_bits=3", "exponent_bits=2, mantissa_bits=0"}) {
      Options o;
      o.scale = 1e3;
      o.exact = true;
      Check(absl::StrCat("HloModule m\nENTRY e {\n  p = ", type, "[40] parameter(0)\n  ROOT r = ",
                         type, "[40] reduce-precision(p), ", em, "\n}\n"),
            o);
    }
  }
  Options o;
  o.scale = 100;
  Check(R"(
HloModule m
ENTRY e {
  x = f32[33] parameter(0)
  r = u32[33] parameter(1)
  ROOT y = s32[33] stochastic-convert(x, r)
})",
        o);
  Check(R"(
HloModule m
ENTRY e {
  x = f16[33] parameter(0)
  r = u16[33] parameter(1)
  ROOT y = s8[33] stochastic-convert(x, r)
})",
        o);
}

// ---------------------------------------------------------------- data movement

TEST(CodegenDataMovement, ShapesAndLayouts) {
  Options exact;
  exact.exact = true;
  for (const std::string& type : {"f32", "bf16", "s8", "s4", "c128", "pred", "f64"}) {
    auto m = [&](const std::string& body) {
      return absl::StrReplaceAll(absl::StrCat("HloModule m\nENTRY e {\n", body, "\n}\n"),
                                 {{"$T", type}});
    };
    Check(m("  p = $T[3,4]{0,1} parameter(0)\n  ROOT r = $T[2,3,5,4]{1,3,2,0} broadcast(p), "
            "dimensions={1,3}"),
          exact);
    Check(m("  p = $T[] parameter(0)\n  ROOT r = $T[3,2]{0,1} broadcast(p), dimensions={}"), exact);
    Check(m("  p = $T[4,6]{0,1} parameter(0)\n  ROOT r = $T[2,3,4]{2,0,1} reshape(p)"), exact);
    Check(m("  p = $T[0,6] parameter(0)\n  ROOT r = $T[6,0] reshape(p)"), exact);
    Check(m("  p = $T[4,6]{0,1} parameter(0)\n  ROOT r = $T[6,4]{1,0} bitcast(p)"), exact);
    Check(m("  p = $T[2,3,4]{2,1,0} parameter(0)\n  ROOT r = $T[4,2,3]{0,2,1} transpose(p), "
            "dimensions={2,0,1}"),
          exact);
    Check(m("  p = $T[10,9]{0,1} parameter(0)\n  ROOT r = $T[3,4] slice(p), slice={[1:10:3], "
            "[0:8:2]}"),
          exact);
    Check(m("  p = $T[4,3]{0,1} parameter(0)\n  v = $T[] parameter(1)\n  ROOT r = $T[9,4]{0,1} "
            "pad(p, v), padding=2_0_1x-1_2_0"),
          exact);
    Check(m("  a = $T[2,3] parameter(0)\n  b = $T[2,0] parameter(1)\n  c = $T[2,4]{0,1} "
            "parameter(2)\n  ROOT r = $T[2,7]{0,1} concatenate(a, b, c), dimensions={1}"),
          exact);
    Check(
        m("  p = $T[5,4,3]{0,2,1} parameter(0)\n  ROOT r = $T[5,4,3] reverse(p), dimensions={0,2}"),
        exact);
    Check(m("  p = $T[5,4]{0,1} parameter(0)\n  ROOT r = $T[5,4]{1,0} copy(p)"), exact);
    Check(m("  p = $T[6,5]{0,1} parameter(0)\n  i = s32[] parameter(1)\n  j = s32[] parameter(2)\n"
            "  ROOT r = $T[3,2]{0,1} dynamic-slice(p, i, j), dynamic_slice_sizes={3,2}"),
          exact);
    Check(m("  p = $T[6,5]{0,1} parameter(0)\n  u = $T[3,2] parameter(1)\n  i = u8[] parameter(2)\n"
            "  j = u8[] parameter(3)\n  ROOT r = $T[6,5]{0,1} dynamic-update-slice(p, u, i, j)"),
          exact);
  }
  for (const std::string& type : {"f32", "s32", "u8", "f16", "c64", "s4", "bf16"}) {
    Check(absl::StrCat("HloModule m\nENTRY e {\n  ROOT r = ", type,
                       "[4,33]{0,1} iota(), iota_dimension=1\n}\n"),
          exact);
  }
}

TEST(CodegenDataMovement, DynamicIndicesClamp) {
  // Indices from constants: negative and past-the-end starts clamp.
  Options exact;
  exact.exact = true;
  for (int64_t i : {-5, 0, 2, 3, 100}) {
    Check(absl::StrCat(R"(
HloModule m
fused {
  p = f32[6,5] parameter(0)
  i = s32[] constant()",
                       i, R"()
  j = s32[] constant(-1)
  ds = f32[3,2] dynamic-slice(p, i, j), dynamic_slice_sizes={3,2}
  ROOT r = f32[6,5] dynamic-update-slice(p, ds, j, i)
}
ENTRY e {
  p = f32[6,5] parameter(0)
  ROOT f = f32[6,5] fusion(p), kind=kLoop, calls=fused
})"),
          exact);
  }
}

TEST(CodegenDataMovement, DynamicUpdateSliceInPlace) {
  // With the output buffer the operand's own, only the update is written.
  auto module = ParseHloModule(R"(
HloModule m
ENTRY e {
  p = f32[8,6] parameter(0)
  u = f32[3,2] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT r = f32[8,6] dynamic-update-slice(p, u, i, j)
})");
  ASSERT_TRUE(module.ok());
  auto kernels =
      SharedJit().Compile({KernelSpec{(*module)->entry_computation()->root_instruction()}});
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  std::vector<float> data(48);
  for (int k = 0; k < 48; ++k) data[k] = k;
  std::vector<float> update = {-1, -2, -3, -4, -5, -6};
  int32_t i = 4, j = 3;
  void* buffers[] = {data.data(), update.data(), &i, &j, data.data()};
  for (int p = 0; p < 3; ++p) (*kernels)[0].function(buffers, p, 3);
  for (int r = 0; r < 8; ++r) {
    for (int c = 0; c < 6; ++c) {
      const bool inside = r >= 4 && r < 7 && c >= 3 && c < 5;
      EXPECT_EQ(data[r * 6 + c], inside ? update[(r - 4) * 2 + (c - 3)] : r * 6 + c)
          << r << "," << c;
    }
  }
}

TEST(CodegenDataMovement, Gather) {
  Options exact;
  exact.exact = true;
  // Embedding lookup, as JAX emits it.
  Check(R"(
HloModule m
ENTRY e {
  a = f32[50,8]{0,1} parameter(0)
  i = s32[4,3,1] parameter(1)
  ROOT r = f32[4,3,8] gather(a, i), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,8}
})",
        exact);
  // Two index components, partial slices, clamping of starts.
  Check(R"(
HloModule m
ENTRY e {
  a = s32[7,9,4] parameter(0)
  i = s64[5,2] parameter(1)
  ROOT r = s32[5,3,4] gather(a, i), offset_dims={1,2}, collapsed_slice_dims={1}, start_index_map={1,0}, index_vector_dim=1, slice_sizes={3,1,4}
})",
        exact);
  // Batching dimensions.
  Check(R"(
HloModule m
ENTRY e {
  a = f16[3,10,4] parameter(0)
  i = u32[3,5] parameter(1)
  ROOT r = f16[3,5,4] gather(a, i), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,4}
})",
        exact);
}

TEST(CodegenDataMovement, BitcastConvert) {
  Options exact;
  exact.exact = true;
  Check(Unary("bitcast-convert", "f32[5,3]{0,1}", "s32[5,3]{0,1}"), exact);
  Check(Unary("bitcast-convert", "u32[5,3]", "f32[5,3]"), exact);
  Check(Unary("bitcast-convert", "f32[5]", "u8[5,4]"), exact);
  Check(Unary("bitcast-convert", "u16[5,2]", "f32[5]"), exact);
  Check(Unary("bitcast-convert", "c64[3]", "c64[3]"), exact);
  Check(Unary("bitcast-convert", "s64[3]", "f64[3]"), exact);
  Check(Unary("bitcast-convert", "s4[7]", "u4[7]"), exact);
  Check(Unary("bitcast-convert", "bf16[7]", "s16[7]"), exact);
}

TEST(CodegenDataMovement, Scatter) {
  Options exact;
  exact.exact = true;
  const std::string add =
      "add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }\n";
  // Updates that repeat an index accumulate in order.
  Check("HloModule m\n" + add + R"(
ENTRY e {
  a = f32[20,6]{0,1} parameter(0)
  i = s32[12,1] parameter(1)
  u = f32[12,6] parameter(2)
  ROOT r = f32[20,6]{0,1} scatter(a, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})");
  // Overwrite (the last update wins), windows partly outside are skipped.
  Check(R"(
HloModule m
assign { x = s32[] parameter(0)  ROOT y = s32[] parameter(1) }
ENTRY e {
  a = s32[9,9] parameter(0)
  i = s32[2,6] constant({{0,1,5,7,-1,3},{0,0,8,2,4,4}})
  u = s32[6,2,3] parameter(1)
  ROOT r = s32[9,9] scatter(a, i, u), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=assign
})",
        exact);
  // Variadic scatter.
  Check(R"(
HloModule m
pair { a = f32[] parameter(0)  b = s32[] parameter(1)  c = f32[] parameter(2)  d = s32[] parameter(3)
       s = f32[] add(a, c)  t = s32[] maximum(b, d)  ROOT r = (f32[], s32[]) tuple(s, t) }
ENTRY e {
  a = f32[10] parameter(0)
  b = s32[10]{0} parameter(1)
  i = s32[7] parameter(2)
  u = f32[7] parameter(3)
  v = s32[7] parameter(4)
  ROOT r = (f32[10], s32[10]) scatter(a, b, i, u, v), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=pair
})");
}

TEST(CodegenDataMovement, ScatterInPlace) {
  auto module = ParseHloModule(R"(
HloModule m
add { x = s32[] parameter(0)  y = s32[] parameter(1)  ROOT s = s32[] add(x, y) }
ENTRY e {
  a = s32[5] parameter(0)
  i = s32[4,1] parameter(1)
  u = s32[4] parameter(2)
  ROOT r = s32[5] scatter(a, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})");
  ASSERT_TRUE(module.ok());
  auto kernels =
      SharedJit().Compile({KernelSpec{(*module)->entry_computation()->root_instruction()}});
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  std::vector<int32_t> a = {10, 20, 30, 40, 50}, i = {1, 1, 4, 9}, u = {1, 2, 3, 4};
  void* buffers[] = {a.data(), i.data(), u.data(), a.data()};
  for (int p = 0; p < 2; ++p) (*kernels)[0].function(buffers, p, 2);
  EXPECT_EQ(a, (std::vector<int32_t>{10, 23, 30, 40, 53}));
}

// ---------------------------------------------------------------- reductions

TEST(CodegenReduction, Reduce) {
  const std::string add =
      "add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }\n";
  const std::string iadd =
      "add { x = s32[] parameter(0)  y = s32[] parameter(1)  ROOT s = s32[] add(x, y) }\n";
  const std::string max =
      "max { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] maximum(x, y) }\n";
  Check("HloModule m\n" + add +
        "ENTRY e {\n  a = f32[13,37]{0,1} parameter(0)\n  z = f32[] constant(0)\n"
        "  ROOT r = f32[13] reduce(a, z), dimensions={1}, to_apply=add\n}\n");
  Check("HloModule m\n" + add +
        "ENTRY e {\n  a = f32[13,37] parameter(0)\n  z = f32[] parameter(1)\n"
        "  ROOT r = f32[37] reduce(a, z), dimensions={0}, to_apply=add\n}\n");
  Check("HloModule m\n" + add +
        "ENTRY e {\n  a = f32[4,5,6] parameter(0)\n  z = f32[] constant(0)\n"
        "  ROOT r = f32[] reduce(a, z), dimensions={0,1,2}, to_apply=add\n}\n");
  Check("HloModule m\n" + add +
        "ENTRY e {\n  a = f32[4,0,6] parameter(0)\n  z = f32[] constant(1)\n"
        "  ROOT r = f32[4,6]{0,1} reduce(a, z), dimensions={1}, to_apply=add\n}\n");
  Check("HloModule m\n" + max +
        "ENTRY e {\n  a = f32[3,5,7]{0,2,1} parameter(0)\n  z = f32[] constant(-inf)\n"
        "  ROOT r = f32[3,7] reduce(a, z), dimensions={1}, to_apply=max\n}\n");
  Options exact;
  exact.exact = true;
  Check("HloModule m\n" + iadd +
            "ENTRY e {\n  a = s32[30,40] parameter(0)\n  z = s32[] constant(0)\n"
            "  ROOT r = s32[40] reduce(a, z), dimensions={0}, to_apply=add\n}\n",
        exact);
  // bf16 accumulates in bf16, rounding after every step, as the interpreter.
  Check(R"(
HloModule m
add { x = bf16[] parameter(0)  y = bf16[] parameter(1)  ROOT s = bf16[] add(x, y) }
ENTRY e {
  a = bf16[8,50] parameter(0)
  z = bf16[] constant(0)
  ROOT r = bf16[8] reduce(a, z), dimensions={1}, to_apply=add
})",
        exact);
  // Over the leading dimensions (the column path: the result's elements
  // accumulate one operand row at a time, each in the interpreter's order).
  Check("HloModule m\n" + max +
            "ENTRY e {\n  a = f32[6,5,70] parameter(0)\n  z = f32[] constant(-inf)\n"
            "  ROOT r = f32[70] reduce(a, z), dimensions={0,1}, to_apply=max\n}\n",
        exact);
  Check("HloModule m\n" + add +
            "ENTRY e {\n  a = f32[300,3,33] parameter(0)\n  z = f32[] constant(0)\n"
            "  ROOT r = f32[3,33] reduce(a, z), dimensions={0}, to_apply=add\n}\n",
        exact);
  Check(R"(
HloModule m
add { x = bf16[] parameter(0)  y = bf16[] parameter(1)  ROOT s = bf16[] add(x, y) }
ENTRY e {
  a = bf16[50,8] parameter(0)
  z = bf16[] constant(0)
  ROOT r = bf16[8] reduce(a, z), dimensions={0}, to_apply=add
})",
        exact);
  // A column-major operand keeps the element-by-element fold (a float sum
  // there may be reassociated: within tolerance, not bitwise).
  Check("HloModule m\n" + add +
        "ENTRY e {\n  a = f32[40,30]{0,1} parameter(0)\n  z = f32[] constant(0)\n"
        "  ROOT r = f32[30] reduce(a, z), dimensions={0}, to_apply=add\n}\n");
  // Variadic: argmax with the first index on ties.
  Check(R"(
HloModule m
argmax {
  av = f32[] parameter(0)  ai = s32[] parameter(1)  bv = f32[] parameter(2)  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  keep = pred[] or(gt, tie)
  v = f32[] select(keep, av, bv)
  i = s32[] select(keep, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  a = f32[6,11] parameter(0)
  b = s32[6,11] parameter(1)
  z = f32[] constant(-inf)
  zi = s32[] constant(0)
  ROOT r = (f32[6], s32[6]) reduce(a, b, z, zi), dimensions={1}, to_apply=argmax
})",
        exact);
}

// Float max/min reductions run vectorized (maxnum/minnum and an "is NaN"
// flag): a NaN in a row, or as the init value, makes the result NaN, as
// XLA's maximum; rows without one give their max/min.
TEST(CodegenReduction, FloatMaxAndMinPropagateNaN) {
  for (const char* op : {"maximum", "minimum"}) {
    const bool is_max = std::string(op) == "maximum";
    auto module = ParseHloModule(absl::StrCat(
        "HloModule m\nr { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] ", op,
        "(x, y) }\nENTRY e {\n  a = f32[4,100] parameter(0)\n  z = f32[] parameter(1)\n"
        "  ROOT m = f32[4] reduce(a, z), dimensions={1}, to_apply=r\n}\n"));
    ASSERT_TRUE(module.ok()) << module.status();
    auto kernels =
        SharedJit().Compile({KernelSpec{(*module)->entry_computation()->root_instruction()}});
    ASSERT_TRUE(kernels.ok()) << kernels.status();
    std::vector<float> a(400);
    for (int i = 0; i < 400; ++i) a[i] = static_cast<float>((i * 37) % 101) - 50.0f;
    a[100 + 63] = std::nanf("");  // row 1: a NaN in the middle
    a[300 + 99] = std::nanf("");  // row 3: a NaN last
    for (float init : {is_max ? -INFINITY : INFINITY, std::nanf("")}) {
      float z = init;
      std::vector<float> out(4, 12345.0f);
      void* buffers[] = {a.data(), &z, out.data()};
      (*kernels)[0].function(buffers, 0, 1);
      for (int row = 0; row < 4; ++row) {
        float want = init;
        bool nan = std::isnan(init);
        for (int k = 0; k < 100; ++k) {
          const float x = a[row * 100 + k];
          nan |= std::isnan(x);
          if (!std::isnan(x)) want = is_max ? std::max(want, x) : std::min(want, x);
        }
        if (nan) {
          EXPECT_TRUE(std::isnan(out[row])) << op << " row " << row << " init " << init;
        } else {
          EXPECT_EQ(out[row], want) << op << " row " << row;
        }
      }
    }
  }
}

TEST(CodegenReduction, ReduceWindow) {
  const std::string max =
      "max { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] maximum(x, y) }\n";
  const std::string add =
      "add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }\n";
  Check("HloModule m\n" + max + R"(ENTRY e {
  a = f32[2,9,9,3]{3,0,2,1} parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[2,5,5,3] reduce-window(a, z), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=max
})");
  Check("HloModule m\n" + add + R"(ENTRY e {
  a = f32[7,6] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[8,13] reduce-window(a, z), window={size=2x3 stride=1x1 pad=1_1x2_2 lhs_dilate=1x2 rhs_dilate=1x1}, to_apply=add
})");
  Check("HloModule m\n" + add + R"(ENTRY e {
  a = f32[10] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[10] reduce-window(a, z), window={size=10 pad=9_0}, to_apply=add
})");
}

TEST(CodegenReduction, SelectAndScatter) {
  Check(R"(
HloModule m
ge { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT c = pred[] compare(x, y), direction=GE }
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  a = f32[2,8,8,3]{3,0,2,1} parameter(0)
  s = f32[2,4,4,3] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[2,8,8,3]{3,0,2,1} select-and-scatter(a, s, z), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0}, select=ge, scatter=add
})");
}

TEST(CodegenReduction, Map) {
  Check(R"(
HloModule m
f { x = f32[] parameter(0)  y = s32[] parameter(1)  c = f32[] convert(y)  m = f32[] multiply(x, c)  ROOT r = f32[] tanh(m) }
ENTRY e {
  a = f32[5,7]{0,1} parameter(0)
  b = s32[5,7] parameter(1)
  ROOT r = f32[5,7] map(a, b), dimensions={0,1}, to_apply=f
})");
}

TEST(CodegenRandom, RngBitGenerator) {
  Options exact;
  exact.exact = true;
  for (const std::string& algorithm : {"rng_three_fry", "rng_philox", "rng_default"}) {
    for (const std::string& out :
         {"u32[7,10]{0,1}", "u64[5]", "f32[3,3]", "u8[9]", "s64[]", "u32[0,4]", "u16[5,3,2]"}) {
      for (const std::string& state : {"u64[2]", "u64[3]"}) {
        Check(absl::StrCat("HloModule m\nENTRY e {\n  s = ", state, " parameter(0)\n  ROOT r = (",
                           state, ", ", out, ") rng-bit-generator(s), algorithm=", algorithm,
                           "\n}\n"),
              exact);
      }
    }
  }
}

TEST(CodegenFusion, LoopFusion) {
  // A kLoop fusion with a reduce inside, a broadcast and a divide (the
  // softmax denominator of XLA:CPU's mlp_b32).
  Check(R"(
HloModule m
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
fused {
  c = f32[] constant(1)
  b = f32[32]{0} broadcast(c), dimensions={}
  p = f32[32,10]{1,0} parameter(0)
  z = f32[] constant(0)
  r = f32[32]{0} reduce(p, z), dimensions={1}, to_apply=add
  ROOT d = f32[32]{0} divide(b, r)
}
ENTRY e {
  a = f32[32,10]{1,0} parameter(0)
  ROOT f = f32[32]{0} fusion(a), kind=kLoop, calls=fused
})");
  // Multi-output fusion.
  Check(R"(
HloModule m
fused {
  p = f32[6,4]{0,1} parameter(0)
  q = f32[6,4] parameter(1)
  a = f32[6,4] add(p, q)
  t = f32[6,4] tanh(a)
  ROOT r = (f32[6,4], f32[6,4]{0,1}) tuple(a, t)
}
ENTRY e {
  x = f32[6,4]{0,1} parameter(0)
  y = f32[6,4] parameter(1)
  ROOT f = (f32[6,4], f32[6,4]{0,1}) fusion(x, y), kind=kLoop, calls=fused
})");
  // A fusion whose root is a dynamic-update-slice of a parameter.
  Check(R"(
HloModule m
fused {
  p = f32[8,6] parameter(0)
  u = f32[2,6] parameter(1)
  i = s32[] parameter(2)
  z = s32[] constant(0)
  n = f32[2,6] negate(u)
  ROOT r = f32[8,6] dynamic-update-slice(p, n, i, z)
}
ENTRY e {
  a = f32[8,6] parameter(0)
  b = f32[2,6] parameter(1)
  c = s32[] parameter(2)
  ROOT f = f32[8,6] fusion(a, b, c), kind=kLoop, calls=fused
})");
}

TEST(CodegenPartitions, LargeKernelsAgreeInEveryPartitionCount) {
  // Big enough for many 64-element granules, so every partition has work.
  Options o;
  o.partitions = {1, 2, 5, 16};
  Check(R"(
HloModule m
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  a = f32[300,7]{0,1} parameter(0)
  i = s32[500,1] parameter(1)
  u = f32[500,7] parameter(2)
  ROOT r = f32[300,7]{0,1} scatter(a, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})",
        o);
  Check(R"(
HloModule m
ge { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT c = pred[] compare(x, y), direction=GE }
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  a = f32[4,24,24,5] parameter(0)
  s = f32[4,12,12,5] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[4,24,24,5] select-and-scatter(a, s, z), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, select=ge, scatter=add
})",
        o);
  Check(R"(
HloModule m
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  a = f32[700,9]{0,1} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[700] reduce(a, z), dimensions={1}, to_apply=add
})",
        o);
  o.exact = true;
  Check(R"(
HloModule m
ENTRY e {
  s = u64[2] parameter(0)
  ROOT r = (u64[2], u32[61,33]{0,1}) rng-bit-generator(s), algorithm=rng_three_fry
})",
        o);
  Check(R"(
HloModule m
ENTRY e {
  s = u64[3] parameter(0)
  ROOT r = (u64[3], f32[1001]) rng-bit-generator(s), algorithm=rng_philox
})",
        o);
  Check(R"(
HloModule m
ENTRY e {
  p = s8[40,50]{0,1} parameter(0)
  u = s8[30,7] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT r = s8[40,50]{0,1} dynamic-update-slice(p, u, i, j)
})",
        o);
}

TEST(CodegenErrors, UnimplementedNamesTheInstruction) {
  auto module = ParseHloModule(R"(
HloModule m
ENTRY e {
  a = f32[4,4] parameter(0)
  b = f32[4,4] parameter(1)
  ROOT my_dot = f32[4,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_TRUE(module.ok());
  auto kernels =
      SharedJit().Compile({KernelSpec{(*module)->entry_computation()->root_instruction()}});
  ASSERT_FALSE(kernels.ok());
  EXPECT_TRUE(absl::IsUnimplemented(kernels.status())) << kernels.status();
  EXPECT_NE(kernels.status().message().find("dot 'my_dot'"), std::string::npos) << kernels.status();
}

TEST(CodegenErrors, BadShapesAreErrorsNotCrashes) {
  // A declared shape that disagrees with shape inference is refused.
  auto module = ParseHloModule(R"(
HloModule m
ENTRY e {
  a = f32[4,4] parameter(0)
  ROOT t = f32[4,4] transpose(a), dimensions={1,0}
})");
  ASSERT_TRUE(module.ok());
  HloInstruction* root = (*module)->entry_computation()->root_instruction();
  root->attrs().dimensions = std::vector<int64_t>{0, 7};
  auto kernels = SharedJit().Compile({KernelSpec{root}});
  EXPECT_FALSE(kernels.ok());
  // Packed sub-byte layouts are not compiled.
  auto packed = ParseHloModule(R"(
HloModule m
ENTRY e {
  a = s4[8]{0:E(4)} parameter(0)
  ROOT n = s4[8]{0:E(4)} negate(a)
})");
  ASSERT_TRUE(packed.ok()) << packed.status();
  kernels = SharedJit().Compile({KernelSpec{(*packed)->entry_computation()->root_instruction()}});
  ASSERT_FALSE(kernels.ok());
  EXPECT_TRUE(absl::IsUnimplemented(kernels.status())) << kernels.status();
}

TEST(CodegenPartitions, ThreadsAgreeWithOnePartition) {
  // The same kernel split across real threads.
  auto module = ParseHloModule(R"(
HloModule m
ENTRY e {
  a = f32[300,129]{0,1} parameter(0)
  b = f32[300,129] parameter(1)
  ROOT r = f32[300,129] atan2(a, b)
})");
  ASSERT_TRUE(module.ok());
  auto kernels =
      SharedJit().Compile({KernelSpec{(*module)->entry_computation()->root_instruction()}});
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  const CompiledKernel& k = (*kernels)[0];
  EXPECT_EQ(k.max_partitions, 300);  // granules of whole rows (129 elements each)
  std::vector<float> a(300 * 129), b(300 * 129), one(300 * 129), many(300 * 129, -1);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-3, 3);
  for (float& x : a) x = u(rng);
  for (float& x : b) x = u(rng);
  void* single[] = {a.data(), b.data(), one.data()};
  k.function(single, 0, 1);
  void* split[] = {a.data(), b.data(), many.data()};
  std::vector<std::thread> threads;
  for (int p = 0; p < 7; ++p) threads.emplace_back([&, p] { k.function(split, p, 7); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(one, many);
  // Partitions outside the range and non-positive counts.
  std::vector<float> untouched(300 * 129, 5);
  void* outside[] = {a.data(), b.data(), untouched.data()};
  k.function(outside, 7, 7);
  k.function(outside, -1, 7);
  EXPECT_EQ(untouched, std::vector<float>(300 * 129, 5));
  k.function(outside, 0, 0);
  EXPECT_EQ(untouched, one);
}

TEST(CodegenPartitions, GranulesAreWholeRowsWhenThereAreEnough) {
  // 64 rows or more, or rows shorter than 64 elements: granules of whole rows
  // of at least 64 elements; a few long rows: granules of 64 elements.
  const std::pair<const char*, int64_t> cases[] = {
      {"f32[300,129]", 300},                // a row each
      {"f32[100,10]", (1000 + 69) / 70},    // 7 rows (70 elements) each
      {"f32[5,1000]", (5000 + 63) / 64},    // 64 elements each
      {"f32[64,1000]", 64},                 // enough rows
      {"f32[100000]", (100000 + 63) / 64},  // one row: 64 elements each
  };
  for (const auto& [shape, partitions] : cases) {
    auto module = ParseHloModule(
        absl::StrCat("HloModule m\nENTRY e {\n  a = ", shape, " parameter(0)\n  ROOT r = ", shape,
                     " transpose(a), dimensions={",
                     std::string(shape).find(',') == std::string::npos ? "0" : "0,1", "}\n}\n"));
    ASSERT_TRUE(module.ok()) << module.status();
    auto kernels =
        SharedJit().Compile({KernelSpec{(*module)->entry_computation()->root_instruction()}});
    ASSERT_TRUE(kernels.ok()) << kernels.status();
    EXPECT_EQ((*kernels)[0].max_partitions, partitions) << shape;
  }
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::codegen

namespace xlite::codegen {
namespace {
namespace XLITE_UNITY_ID {

std::string ReadText(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return "";
  std::string text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), f)) > 0) text.append(buffer, n);
  std::fclose(f);
  return text;
}

// Whether LLVM IR text `ir` calls `function` (not only declares it: LLVM
// declares every variant its vector-function table has for a call it maps,
// used or not).
bool CallsFunction(const std::string& ir, absl::string_view function) {
  const std::string callee = absl::StrCat("@", function, "(");
  for (absl::string_view line : absl::StrSplit(ir, '\n')) {
    if (absl::StrContains(line, " call ") && absl::StrContains(line, callee)) return true;
  }
  return false;
}

// A Jit that writes the IR of each module it compiles under `dir`; nullptr
// (and a test failure) when it cannot be made.
std::unique_ptr<Jit> DumpingJit(const std::string& dir) {
  JitOptions options;
  options.dump_to = dir;
  absl::StatusOr<std::unique_ptr<Jit>> jit = Jit::Create(options);
  if (!jit.ok()) {
    ADD_FAILURE() << jit.status();
    return nullptr;
  }
  return std::move(*jit);
}

// Transposes that swap two groups of dimensions move 16 x 16 tiles (8 x 8
// for 64-bit elements) through vector registers; partial tiles at the edges
// go element by element; partitions are whole tiles. Others (too small, the
// minor dimension kept, empty, 128-bit elements) keep the elemental loop.
TEST(CodegenDataMovement, TransposesMoveInTiles) {
  Options exact;
  exact.exact = true;
  struct Case {
    const char* from;
    const char* to;
    const char* permutation;
    int64_t batch, a, b;  // the operand as [batch, a, b]; batch 0: not tiled
  };
  const Case cases[] = {
      // NHWC -> NCHW: [2, 20*19, 40] -> [2, 40, 20*19], edges on both sides.
      {"[2,20,19,40]", "[2,40,20,19]", "0,3,1,2", 2, 380, 40},
      {"[2,40,20,19]", "[2,20,19,40]", "0,2,3,1", 2, 40, 380},
      {"[48,32]", "[32,48]", "1,0", 1, 48, 32},              // whole tiles only
      {"[1,33,1,17]", "[17,1,33,1]", "3,2,1,0", 1, 33, 17},  // dimensions of size 1 dropped
      {"[5,18,3,17]", "[5,17,18,3]", "0,3,1,2", 5, 54, 17},
      {"[4,5,6]", "[6,4,5]", "2,0,1", 0, 0, 0},        // too small
      {"[20,30,40]", "[30,20,40]", "1,0,2", 0, 0, 0},  // the minor dimension stays: rows copy
      {"[32,0,32]", "[32,0,32]", "2,1,0", 0, 0, 0},    // empty: nothing to move, nothing touched
  };
  const std::string dir = ::testing::TempDir() + "/codegen_transpose";
  for (const std::string type : {"f32", "bf16", "s8", "f64", "pred", "c64", "c128", "s4"}) {
    const int bits = 8 * PrimitiveByteWidth(*PrimitiveTypeFromName(type));
    const int64_t t = bits == 64 ? 8 : 16;
    for (const Case& c : cases) {
      const std::string hlo = absl::StrCat("HloModule m\nENTRY e {\n  p = ", type, c.from,
                                           " parameter(0)\n  ROOT r = ", type, c.to,
                                           " transpose(p), dimensions={", c.permutation, "}\n}\n");
      Check(hlo, exact);
      auto module = ParseHloModule(hlo);
      ASSERT_TRUE(module.ok()) << module.status();
      std::unique_ptr<Jit> jit = DumpingJit(dir);  // each module's dump under its own name
      ASSERT_NE(jit, nullptr);
      auto kernels =
          jit->Compile({KernelSpec{(*module)->entry_computation()->root_instruction()}}, "t");
      ASSERT_TRUE(kernels.ok()) << kernels.status();
      const bool tiled = c.batch > 0 && bits <= 64;
      EXPECT_EQ(absl::StrContains(ReadText(dir + "/t.ir-no-opt.ll"), "tile.loop"), tiled) << hlo;
      if (tiled) {
        EXPECT_EQ((*kernels)[0].max_partitions, c.batch * ((c.a + t - 1) / t) * ((c.b + t - 1) / t))
            << hlo;
      }
    }
  }
}

// A fusion reading an input through a transpose that moves the input's minor
// dimension (x.T + y) makes its result in tiles, the input's tile transposed
// through a scratch tile first; the edges, layouts, several outputs and a
// transpose also read at other elements (not tiled) agree with the
// interpreter.
TEST(CodegenFusion, TransposingFusionsMoveInTiles) {
  struct Case {
    std::string x, y;  // x is transposed by `permutation` to y's dimensions
    std::string permutation;
    bool tiled;
  };
  const std::vector<Case> cases = {
      {"[170,137]", "[137,170]", "1,0", true},            // edges on both sides
      {"[160,128]", "[128,160]", "1,0", true},            // whole tiles only
      {"[3,90,70]", "[3,70,90]", "0,2,1", true},          // a batch dimension
      {"[90,3,70]", "[70,3,90]", "2,1,0", true},          // the batch between the two
      {"[170,130]{0,1}", "[130,170]", "1,0", false},      // the input's minor dimension stays
      {"[170,130]{0,1}", "[130,170]{0,1}", "1,0", true},  // both column-major
      {"[40,30,40]", "[30,40,40]", "1,0,2", false},       // the minor dimension stays
      {"[6,4000]", "[4000,6]", "1,0", false},             // a tile wider than a dimension
      {"[100,100]", "[100,100]", "1,0", false},           // too few elements to pay
      {"[20,30,40]{1,2,0}", "[20,40,30]{0,2,1}", "0,2,1", true},  // other layouts
  };
  const std::string dir = ::testing::TempDir() + "/codegen_transposing_fusion";
  // Whether the entry root of `hlo` compiles with a scratch tile (its IR,
  // optimized, then in dir/t.ir-with-opt.ll).
  auto tiled = [&](const std::string& hlo) {
    auto module = ParseHloModule(hlo);
    EXPECT_TRUE(module.ok()) << module.status();
    std::unique_ptr<Jit> jit = DumpingJit(dir);
    EXPECT_NE(jit, nullptr);
    if (!module.ok() || jit == nullptr) return false;
    auto kernels =
        jit->Compile({KernelSpec{(*module)->entry_computation()->root_instruction()}}, "t");
    EXPECT_TRUE(kernels.ok()) << kernels.status();
    return absl::StrContains(ReadText(dir + "/t.ir-no-opt.ll"), "transposed_tile");
  };
  for (const std::string type : {"f32", "bf16", "f64", "s8", "s4"}) {
    for (const Case& c : cases) {
      const std::string hlo =
          absl::StrCat(R"(
HloModule m
fused {
  p = )",
                       type, c.x, R"( parameter(0)
  q = )",
                       type, c.y, R"( parameter(1)
  t = )",
                       type, c.y, R"( transpose(p), dimensions={)", c.permutation, R"(}
  n = )",
                       type, c.y, R"( negate(t)
  ROOT a = )",
                       type, c.y, R"( add(n, q)
}
ENTRY e {
  x = )",
                       type, c.x, R"( parameter(0)
  y = )",
                       type, c.y, R"( parameter(1)
  ROOT f = )",
                       type, c.y, R"( fusion(x, y), kind=kLoop, calls=fused
})");
      Check(hlo);
      EXPECT_EQ(tiled(hlo), c.tiled) << hlo;
      if (type == "f32" && c.x == "[160,128]") {
        // Whole tiles only: the tile's rows vectorize as contiguous loads and
        // stores, no gathers or scatters (LLVM unrolls a tile row it may, and
        // then vectorizes across rows).
        const std::string optimized = ReadText(dir + "/t.ir-with-opt.ll");
        EXPECT_NE(optimized.find("fsub <16 x float>"), std::string::npos) << optimized;  // q - t
        EXPECT_EQ(optimized.find("masked.gather"), std::string::npos) << optimized;
        EXPECT_EQ(optimized.find("masked.scatter"), std::string::npos) << optimized;
      }
    }
  }
  // Two outputs, one of them the transpose itself.
  const std::string two_outputs = R"(
HloModule m
fused {
  p = f32[170,145] parameter(0)
  q = f32[145,170] parameter(1)
  t = f32[145,170] transpose(p), dimensions={1,0}
  e = f32[145,170] exponential(t)
  m = f32[145,170] multiply(e, q)
  ROOT r = (f32[145,170], f32[145,170]) tuple(m, t)
}
ENTRY e {
  x = f32[170,145] parameter(0)
  y = f32[145,170] parameter(1)
  ROOT f = (f32[145,170], f32[145,170]) fusion(x, y), kind=kLoop, calls=fused
})";
  Check(two_outputs);
  EXPECT_TRUE(tiled(two_outputs));
  // a + a.T with a = p.T + q: the second transpose reads the first at other
  // elements (outside the tile): not tiled, still right.
  const std::string symmetric = R"(
HloModule m
fused {
  p = f32[160,160] parameter(0)
  q = f32[160,160] parameter(1)
  t = f32[160,160] transpose(p), dimensions={1,0}
  a = f32[160,160] add(t, q)
  at = f32[160,160] transpose(a), dimensions={1,0}
  ROOT r = f32[160,160] add(a, at)
}
ENTRY e {
  x = f32[160,160] parameter(0)
  y = f32[160,160] parameter(1)
  ROOT f = f32[160,160] fusion(x, y), kind=kLoop, calls=fused
})";
  Check(symmetric);
  EXPECT_FALSE(tiled(symmetric));
  // The transpose is also read at other elements (through a reverse): not
  // tiled, still right.
  const std::string reversed = R"(
HloModule m
fused {
  p = f32[140,150] parameter(0)
  t = f32[150,140] transpose(p), dimensions={1,0}
  r = f32[150,140] reverse(t), dimensions={0}
  ROOT a = f32[150,140] add(t, r)
}
ENTRY e {
  x = f32[140,150] parameter(0)
  ROOT f = f32[150,140] fusion(x), kind=kLoop, calls=fused
})";
  Check(reversed);
  EXPECT_FALSE(tiled(reversed));
}

// Independent kernels compile as several modules on several threads; the
// kernels (names, functions, results) are those of one module on one thread,
// and a second Compile on the same Jit keeps its names apart.
TEST(CodegenJit, ParallelCompilationGivesTheSameKernels) {
  auto module = ParseHloModule(R"(
HloModule m
ENTRY e {
  a = f32[4096] parameter(0)
  b = f32[4096] parameter(1)
  s = f32[4096] add(a, b)
  t = f32[4096] tanh(a)
  e = f32[4096] exponential(b)
  l = f32[4096] log(a)
  ROOT r = (f32[4096], f32[4096], f32[4096], f32[4096]) tuple(s, t, e, l)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  const HloInstruction* root = (*module)->entry_computation()->root_instruction();
  std::vector<KernelSpec> specs;
  for (const HloInstruction* op : root->operands()) specs.push_back(KernelSpec{op});
  std::vector<float> a(4096), b(4096);
  for (int i = 0; i < 4096; ++i) {
    a[i] = 0.001f * static_cast<float>(i + 1);
    b[i] = -0.002f * static_cast<float>(i);
  }
  std::vector<std::vector<float>> results[2];
  for (int threads : {1, 3}) {
    JitOptions options;
    options.compile_threads = threads;
    auto jit = Jit::Create(options);
    ASSERT_TRUE(jit.ok()) << jit.status();
    std::vector<KernelFunction> first_round;
    for (int round = 0; round < 2; ++round) {
      auto kernels = (*jit)->Compile(specs);
      ASSERT_TRUE(kernels.ok()) << kernels.status();
      ASSERT_EQ(kernels->size(), specs.size());
      // The second round's kernels are the first's code, under its names.
      EXPECT_EQ((*kernels)[1].name, "t");
      for (size_t i = 0; i < specs.size(); ++i) {
        if (round == 0) first_round.push_back((*kernels)[i].function);
        EXPECT_EQ((*kernels)[i].function, first_round[i]);
      }
      if (round == 1) continue;
      for (size_t i = 0; i < specs.size(); ++i) {
        std::vector<float> out(4096);
        std::vector<void*> buffers;
        for (const HloInstruction* p : specs[i].instruction->operands()) {
          buffers.push_back(p->attrs().parameter_number == 0 ? a.data() : b.data());
        }
        buffers.push_back(out.data());
        (*kernels)[i].function(buffers.data(), 0, 1);
        results[threads == 1 ? 0 : 1].push_back(out);
      }
    }
  }
  EXPECT_EQ(results[0], results[1]);
}

TEST(CodegenLoops, LoopFusionUpdatesItsOperandInPlaceStillVectorized) {
  // c1 = c0 * f + g and h = c1 * s (s broadcast per row), c1 written over
  // c0 as copy insertion allows a scan's state: every element is read before
  // it is written, the loop is vectorized without run-time overlap checks
  // (which would fail here and run scalar code), and the loads of the row's
  // broadcast value carry !noalias against the outputs (so LLVM may read it
  // once per row).
  const std::string dir = ::testing::TempDir() + "/codegen_in_place";
  std::unique_ptr<Jit> jit = DumpingJit(dir);
  ASSERT_NE(jit, nullptr);
  auto module = ParseHloModule(R"(
HloModule m
fused {
  c0 = f32[8,256] parameter(0)
  f = f32[8,256] parameter(1)
  g = f32[8,256] parameter(2)
  s = f32[8] parameter(3)
  m = f32[8,256] multiply(c0, f)
  c1 = f32[8,256] add(m, g)
  sb = f32[8,256] broadcast(s), dimensions={0}
  h = f32[8,256] multiply(c1, sb)
  ROOT t = (f32[8,256], f32[8,256]) tuple(c1, h)
}
ENTRY e {
  c0 = f32[8,256] parameter(0)
  f = f32[8,256] parameter(1)
  g = f32[8,256] parameter(2)
  s = f32[8] parameter(3)
  ROOT r = (f32[8,256], f32[8,256]) fusion(c0, f, g, s), kind=kLoop, calls=fused
})");
  ASSERT_TRUE(module.ok()) << module.status();
  auto kernels = jit->Compile({KernelSpec{(*module)->entry_computation()->root_instruction()}},
                              "module_0001.in_place");
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  std::vector<float> c(8 * 256), f(8 * 256), g(8 * 256), h(8 * 256), s(8);
  for (int k = 0; k < 8 * 256; ++k) {
    c[k] = 0.5f * k;
    f[k] = 1.0f + (k % 7);
    g[k] = -0.25f * (k % 5);
  }
  for (int r = 0; r < 8; ++r) s[r] = 2.0f + r;
  const std::vector<float> c_before = c;
  void* buffers[] = {c.data(), f.data(), g.data(), s.data(), c.data(), h.data()};
  for (int p = 0; p < 3; ++p) (*kernels)[0].function(buffers, p, 3);
  for (int k = 0; k < 8 * 256; ++k) {
    const float c1 = c_before[k] * f[k] + g[k];
    ASSERT_EQ(c[k], c1) << k;
    ASSERT_EQ(h[k], c1 * s[k / 256]) << k;
  }
  const std::string after = ReadText(dir + "/module_0001.in_place.ir-with-opt.ll");
  EXPECT_NE(after.find("<16 x float>"), std::string::npos) << after;
  EXPECT_EQ(after.find("memcheck"), std::string::npos) << after;
  EXPECT_NE(after.find("llvm.loop.parallel_accesses"), std::string::npos) << after;
  EXPECT_NE(after.find("!noalias"), std::string::npos) << after;
}

// A bias read through [N] -> [1, 1, N] -> [N] at an offset (the encoder's
// Q/K/V split: bias, reshape, transpose, slice) indexes without a remainder:
// the most major dimension larger than 1 of a delinearized run takes the rest
// of the linear index whole. LLVM could not prove the remainder redundant for
// the third slice (1024 + 64 h + j) and left that loop scalar.
TEST(CodegenIndexing, ReshapesThroughUnitDimensionsIndexWithoutRemainders) {
  const std::string dir = ::testing::TempDir() + "/codegen_unit_dims";
  std::unique_ptr<Jit> jit = DumpingJit(dir);
  ASSERT_NE(jit, nullptr);
  const std::string hlo = R"(
HloModule m
fused {
  x = f32[2,4,96] parameter(0)
  b = f32[96] parameter(1)
  b1 = f32[1,1,96] broadcast(b), dimensions={2}
  b2 = f32[96] reshape(b1)
  bb = f32[2,4,96] broadcast(b2), dimensions={2}
  a = f32[2,4,96] add(x, bb)
  r = f32[2,4,3,2,16] reshape(a)
  t = f32[3,2,2,4,16] transpose(r), dimensions={2,0,3,1,4}
  s = f32[1,2,2,4,16] slice(t), slice={[2:3], [0:2], [0:2], [0:4], [0:16]}
  ROOT o = f32[4,4,16] reshape(s)
}
ENTRY e {
  x = f32[2,4,96] parameter(0)
  b = f32[96] parameter(1)
  ROOT f = f32[4,4,16] fusion(x, b), kind=kLoop, calls=fused
})";
  Options exact;
  exact.exact = true;
  Check(hlo, exact);
  auto module = ParseHloModule(hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  auto kernels = jit->Compile({KernelSpec{(*module)->entry_computation()->root_instruction()}},
                              "module_0001.bias");
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  const std::string before = ReadText(dir + "/module_0001.bias.ir-no-opt.ll");
  const std::string after = ReadText(dir + "/module_0001.bias.ir-with-opt.ll");
  // No remainder by the bias's length (other remainders pick rows apart).
  for (absl::string_view line : absl::StrSplit(before, '\n')) {
    EXPECT_FALSE(absl::StrContains(line, "urem") && absl::EndsWith(line, ", 96")) << line;
  }
  EXPECT_TRUE(absl::StrContains(after, "<16 x float>")) << after;
}

// A column reduction of 256 rows or more folds eight operand rows into each
// accumulator per pass (one load and one store of it per eight rows), then
// the rows left over one at a time: 260 rows here, 32 passes of eight and four
// single rows, each element still in the interpreter's order (bitwise). One
// of fewer rows keeps a pass per row (the blocked loop costs LLVM more than
// it saves there).
TEST(CodegenReduction, ColumnReductionFoldsEightRowsPerAccumulatorStore) {
  const std::string dir = ::testing::TempDir() + "/codegen_column_reduce";
  for (const int rows : {260, 20}) {
    std::unique_ptr<Jit> jit = DumpingJit(dir);  // each module's dump under its own name
    ASSERT_NE(jit, nullptr);
    auto module = ParseHloModule(absl::StrCat(R"(
HloModule m
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  a = f32[)",
                                              rows, R"(,64] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[64] reduce(a, z), dimensions={0}, to_apply=add
})"));
    ASSERT_TRUE(module.ok()) << module.status();
    const std::string name = absl::StrCat("module_0001.cols", rows);
    auto kernels =
        jit->Compile({KernelSpec{(*module)->entry_computation()->root_instruction()}}, name);
    ASSERT_TRUE(kernels.ok()) << kernels.status();
    std::vector<float> a(rows * 64), r(64, -1.0f);
    for (int k = 0; k < rows * 64; ++k) a[k] = 1.0f / static_cast<float>(1 + (k * 7919) % 1000);
    float z = 0.0f;
    void* buffers[] = {a.data(), &z, r.data()};
    for (int p = 0; p < 2; ++p) (*kernels)[0].function(buffers, p, 2);
    for (int j = 0; j < 64; ++j) {
      float expected = 0.0f;
      for (int i = 0; i < rows; ++i) expected += a[i * 64 + j];
      ASSERT_EQ(r[j], expected) << rows << " rows, element " << j;
    }
    const std::string before = ReadText(dir + "/" + name + ".ir-no-opt.ll");
    auto count = [&](absl::string_view what) {
      return std::vector<absl::string_view>(absl::StrSplit(before, what)).size() - 1;
    };
    if (rows == 260) {
      // Stores: the initial values, a pass of eight rows, a single row.
      EXPECT_EQ(count("store float"), 3u) << before;
      EXPECT_EQ(count("fadd float"), 9u) << before;
      EXPECT_TRUE(absl::StrContains(before, "reduce_rest.")) << before;
    } else {
      EXPECT_EQ(count("store float"), 2u) << before;
      EXPECT_EQ(count("fadd float"), 1u) << before;
    }
  }
}

TEST(CodegenJit, DumpsIrBeforeAndAfterOptimization) {
  const std::string dir = ::testing::TempDir() + "/codegen_dump";
  std::unique_ptr<Jit> jit = DumpingJit(dir);
  ASSERT_NE(jit, nullptr);
  EXPECT_FALSE(jit->cpu_name().empty());
  auto module = ParseHloModule(R"(
HloModule m
ENTRY e {
  a = f32[1024] parameter(0)
  b = f32[1024] parameter(1)
  ROOT sum.1 = f32[1024] add(a, b)
})");
  ASSERT_TRUE(module.ok());
  const HloInstruction* root = (*module)->entry_computation()->root_instruction();
  auto module2 = ParseHloModule(R"(
HloModule m
ENTRY e {
  a = f32[1024] parameter(0)
  b = f32[1024] parameter(1)
  ROOT product = f32[1024] multiply(a, b)
})");
  ASSERT_TRUE(module2.ok());
  const HloInstruction* product = (*module2)->entry_computation()->root_instruction();
  auto kernels = jit->Compile({KernelSpec{root}, KernelSpec{root, "second"}}, "module_0001.m");
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  ASSERT_EQ(kernels->size(), 2u);
  EXPECT_EQ((*kernels)[0].name, "sum_1");
  // The same IR twice: compiled once, both run that code.
  EXPECT_EQ((*kernels)[1].name, "sum_1");
  EXPECT_EQ((*kernels)[1].function, (*kernels)[0].function);
  const std::string before = ReadText(dir + "/module_0001.m.ir-no-opt.ll");
  const std::string after = ReadText(dir + "/module_0001.m.ir-with-opt.ll");
  EXPECT_NE(before.find("define void @sum_1(ptr %buffers, i64 %partition, i64 %num_partitions)"),
            std::string::npos)
      << before;
  EXPECT_NE(before.find("\"prefer-vector-width\"=\"512\""), std::string::npos);
  EXPECT_NE(before.find("\"target-cpu\"=\"" + jit->cpu_name() + "\""), std::string::npos);
  // The optimized loop is vectorized.
  EXPECT_NE(after.find("<16 x float>"), std::string::npos) << after;
  EXPECT_EQ(before.find("@second"), std::string::npos) << before;
  // A second module gets its own files; names stay unique within the Jit; a
  // kernel compiled before is not compiled again.
  auto again = jit->Compile({KernelSpec{root}, KernelSpec{product, "sum.1"}}, "module_0001.m");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)[0].name, "sum_1");
  EXPECT_EQ((*again)[0].function, (*kernels)[0].function);
  EXPECT_EQ((*again)[1].name, "sum_1_1");
  const std::string second_module = ReadText(dir + "/module_0001.m.1.ir-no-opt.ll");
  EXPECT_NE(second_module.find("define void @sum_1_1("), std::string::npos) << second_module;
  EXPECT_EQ(second_module.find("define void @sum_1("), std::string::npos) << second_module;
  // An unwritable dump directory is an error, not a crash.
  JitOptions bad;
  bad.dump_to = "/proc/no/such/dir";
  auto bad_jit = Jit::Create(bad);
  ASSERT_TRUE(bad_jit.ok());
  EXPECT_FALSE((*bad_jit)->Compile({KernelSpec{root}}, "x").ok());
}

TEST(CodegenJit, BadOptionsAndSpecs) {
  JitOptions options;
  options.opt_level = 7;
  EXPECT_FALSE(Jit::Create(options).ok());
  EXPECT_FALSE(SharedJit().Compile({KernelSpec{nullptr}}).ok());
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::codegen

namespace xlite::codegen {
namespace {
namespace XLITE_UNITY_ID {

TEST(CodegenDenormals, FlushedUnderTheRuntimesMode) {
  auto module = ParseHloModule(R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT r = f32[4] multiply(a, b)
})");
  ASSERT_TRUE(module.ok());
  auto kernels =
      SharedJit().Compile({KernelSpec{(*module)->entry_computation()->root_instruction()}});
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  std::vector<float> a = {1e-30f, 1e-20f, 2.0f, 1e-39f}, b = {1e-10f, 1e-20f, 3.0f, 1e10f};
  std::vector<float> out(4);
  void* buffers[] = {a.data(), b.data(), out.data()};
  {
    ScopedFlushDenormals gradual(false);
    (*kernels)[0].function(buffers, 0, 1);
  }
  EXPECT_GT(out[0], 0.0f);  // 1e-40 is a denormal
  EXPECT_GT(out[3], 0.0f);  // a denormal input
  {
    ScopedFlushDenormals flush;
    (*kernels)[0].function(buffers, 0, 1);
  }
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[2], 6.0f);
  EXPECT_EQ(out[3], 0.0f);  // DAZ: the denormal input reads as zero
}

// The distance in representable floats (or doubles) between a and b, any
// signs: the ordering is monotonic through the zeros and subnormals.
template <typename T>
int64_t UlpDistance(T a, T b) {
  using Bits = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  auto ordered = [](T f) -> __int128 {
    Bits i;
    std::memcpy(&i, &f, sizeof(T));
    return i < 0 ? __int128{std::numeric_limits<Bits>::min()} - i : __int128{i};
  };
  const __int128 distance = ordered(a) - ordered(b);
  const __int128 magnitude = distance < 0 ? -distance : distance;
  return magnitude > std::numeric_limits<int64_t>::max() ? std::numeric_limits<int64_t>::max()
                                                         : static_cast<int64_t>(magnitude);
}

// Exhaustively over every positive float, the same operations in C++ (with
// FMA, as here) are at most 5 ulp from the correctly rounded tanh.
constexpr int64_t kTanhF32MaxUlp = 5;
// glibc documents its vector float functions within 4 ulp.
constexpr int64_t kLibmvecF32MaxUlp = 4;

// tanh of f32 is XLA's rational approximation (it vectorizes): its error
// against the correctly rounded tanh, over a sweep of every 1024th float in
// [-10, 10] and the special values, is the bound docs/codegen.md states.
TEST(CodegenAccuracy, TanhOfFloatIsWithinItsUlpBound) {
  std::vector<float> x;
  uint32_t ten;
  const float ten_f = 10.0f;
  std::memcpy(&ten, &ten_f, 4);
  for (uint32_t bits = 0; bits <= ten; bits += 1024) {  // every 1024th float, both signs
    float f;
    std::memcpy(&f, &bits, 4);
    x.push_back(f);
    x.push_back(-f);
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float f : {0.0f, -0.0f, 1e-30f, -1e-30f, 0.0004f, -0.0004f, 7.9988f, 9.0f, 1e30f, -1e30f,
                  inf, -inf, std::numeric_limits<float>::quiet_NaN()}) {
    x.push_back(f);
  }
  const std::string n = std::to_string(x.size());
  auto module = ParseHloModule("HloModule m\nENTRY e {\n  x = f32[" + n +
                               "] parameter(0)\n  ROOT t = f32[" + n + "] tanh(x)\n}\n");
  ASSERT_TRUE(module.ok()) << module.status();
  auto kernels =
      SharedJit().Compile({KernelSpec{(*module)->entry_computation()->root_instruction()}});
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  std::vector<float> y(x.size());
  void* buffers[] = {x.data(), y.data()};
  {
    ScopedFlushDenormals gradual(false);
    (*kernels)[0].function(buffers, 0, 1);
  }
  int64_t worst = 0;
  float worst_at = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float expected = static_cast<float>(std::tanh(static_cast<double>(x[i])));
    if (std::isnan(x[i])) {
      EXPECT_TRUE(std::isnan(y[i]));
      continue;
    }
    ASSERT_EQ(std::signbit(y[i]), std::signbit(expected)) << x[i];
    ASSERT_LE(std::fabs(y[i]), 1.0f) << x[i];
    const int64_t ulps = UlpDistance(y[i], expected);
    if (ulps > worst) {
      worst = ulps;
      worst_at = x[i];
    }
  }
  std::printf("tanh f32: %zu inputs, max error %lld ulp (at %.9g)\n", x.size(),
              static_cast<long long>(worst), worst_at);
  EXPECT_LE(worst, kTanhF32MaxUlp);
}

// Every 1021st float bit pattern but the NaNs (4.2 M inputs over all signs
// and exponents), then `specials`.
std::vector<float> SampledFloats(std::initializer_list<float> specials) {
  std::vector<float> x;
  for (uint64_t bits = 0; bits <= 0xFFFFFFFFu; bits += 1021) {
    const uint32_t b = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &b, 4);
    if (!std::isnan(f)) x.push_back(f);
  }
  x.insert(x.end(), specials);
  return x;
}

// Each of `ops` (unary HLO opcodes) of `x` (f32 or f64), compiled as a
// kernel of its own and run with gradual underflow; empty after a failure
// (reported).
template <typename T>
std::vector<std::vector<T>> RunUnary(const std::vector<T>& x, const std::vector<std::string>& ops) {
  const std::string shape =
      std::string(sizeof(T) == 4 ? "f32[" : "f64[") + std::to_string(x.size()) + "]";
  std::string text = "HloModule m\nENTRY e {\n  x = " + shape + " parameter(0)\n";
  std::string shapes, names;
  for (size_t k = 0; k < ops.size(); ++k) {
    const std::string name = "r" + std::to_string(k);
    text += "  " + name + " = " + shape + " " + ops[k] + "(x)\n";
    shapes += (k > 0 ? ", " : "") + shape;
    names += (k > 0 ? ", " : "") + name;
  }
  text += "  ROOT t = (" + shapes + ") tuple(" + names + ")\n}\n";
  auto module = ParseHloModule(text);
  if (!module.ok()) {
    ADD_FAILURE() << module.status();
    return {};
  }
  std::vector<KernelSpec> specs;
  for (const HloInstruction* op : (*module)->entry_computation()->root_instruction()->operands()) {
    specs.push_back(KernelSpec{op});
  }
  auto kernels = SharedJit().Compile(specs);
  if (!kernels.ok()) {
    ADD_FAILURE() << kernels.status();
    return {};
  }
  std::vector<std::vector<T>> results(ops.size(), std::vector<T>(x.size()));
  ScopedFlushDenormals gradual(false);
  for (size_t k = 0; k < ops.size(); ++k) {
    void* buffers[] = {const_cast<T*>(x.data()), results[k].data()};
    (*kernels)[k].function(buffers, 0, 1);
  }
  return results;
}

// exp of f32 is an inline polynomial (so fusions holding it vectorize):
// every 1021st float pattern against the correctly rounded value, within
// 1 ulp where the result is normal (the bound measured over all 2^32
// patterns; docs/codegen.md); overflow to inf, underflow to 0 and NaN exact.
// logistic, 1 / (1 + exp(-x)) on it, within 3 ulp.
TEST(CodegenAccuracy, ExpAndLogisticOfFloatAreWithinTheirUlpBounds) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x =
      SampledFloats({0.0f, -0.0f, 88.72f, 88.7229f, 89.0f, 1e30f, -87.33f, -103.9f, -104.0f, -1e30f,
                     inf, -inf, std::numeric_limits<float>::quiet_NaN()});
  const std::vector<std::vector<float>> results = RunUnary<float>(x, {"exponential", "logistic"});
  ASSERT_EQ(results.size(), 2u);
  const std::vector<float>& e = results[0];
  const std::vector<float>& l = results[1];
  int64_t worst_exp = 0, worst_logistic = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) {
      EXPECT_TRUE(std::isnan(e[i]) && std::isnan(l[i]));
      continue;
    }
    const double d = static_cast<double>(x[i]);
    const float expected_exp = static_cast<float>(std::exp(d));
    if (expected_exp == 0 || std::isinf(expected_exp)) {
      ASSERT_EQ(e[i], expected_exp) << x[i];
    } else if (expected_exp >= std::numeric_limits<float>::min()) {
      worst_exp = std::max(worst_exp, UlpDistance(e[i], expected_exp));
    }
    const float expected_logistic = static_cast<float>(1.0 / (1.0 + std::exp(-d)));
    if (expected_logistic >= std::numeric_limits<float>::min()) {
      worst_logistic = std::max(worst_logistic, UlpDistance(l[i], expected_logistic));
    }
  }
  std::printf("exp f32: %zu inputs, max error %lld ulp; logistic f32: %lld ulp\n", x.size(),
              static_cast<long long>(worst_exp), static_cast<long long>(worst_logistic));
  EXPECT_LE(worst_exp, 1);
  EXPECT_LE(worst_logistic, 3);
}

TEST(CodegenAccuracy, LogAndLog1pOfFloatAreWithinTheirUlpBounds) {
  const float inf = std::numeric_limits<float>::infinity();
  const float tiny = std::numeric_limits<float>::denorm_min();
  const std::vector<float> x =
      SampledFloats({0.0f, -0.0f, 1.0f, -1.0f, -2.0f, 0.70710677f, 1.4142135f, 1e-30f, -1e-30f,
                     tiny, -tiny, 1.1754942e-38f, 3.4028235e38f, -0.99999994f, inf, -inf,
                     std::numeric_limits<float>::quiet_NaN()});
  const std::vector<std::vector<float>> results = RunUnary<float>(x, {"log", "log-plus-one"});
  ASSERT_EQ(results.size(), 2u);
  const std::vector<float>& l = results[0];
  const std::vector<float>& p = results[1];
  int64_t worst_log = 0, worst_log1p = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = static_cast<double>(x[i]);
    const float expected_log = static_cast<float>(std::log(d));
    const float expected_log1p = static_cast<float>(std::log1p(d));
    // NaN exactly where the reference is NaN, infinities exact.
    ASSERT_EQ(std::isnan(l[i]), std::isnan(expected_log)) << x[i];
    ASSERT_EQ(std::isnan(p[i]), std::isnan(expected_log1p)) << x[i];
    if (std::isinf(expected_log)) ASSERT_EQ(l[i], expected_log) << x[i];
    if (std::isinf(expected_log1p)) ASSERT_EQ(p[i], expected_log1p) << x[i];
    if (!std::isnan(expected_log)) worst_log = std::max(worst_log, UlpDistance(l[i], expected_log));
    if (!std::isnan(expected_log1p)) {
      worst_log1p = std::max(worst_log1p, UlpDistance(p[i], expected_log1p));
    }
  }
  std::printf("log f32: %zu inputs, max error %lld ulp; log1p f32: %lld ulp\n", x.size(),
              static_cast<long long>(worst_log), static_cast<long long>(worst_log1p));
  EXPECT_LE(worst_log, 1);
  EXPECT_LE(worst_log1p, 2);
}

TEST(CodegenAccuracy, ErfOfFloatIsWithinItsUlpBound) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = SampledFloats(
      {0.0f, -0.0f, 1e-30f, -1e-30f, std::numeric_limits<float>::denorm_min(), 0.5f, -0.5f, 1.0f,
       3.9f, 4.0f, -4.0f, 10.0f, -10.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN()});
  const std::vector<std::vector<float>> results = RunUnary<float>(x, {"erf"});
  ASSERT_EQ(results.size(), 1u);
  const std::vector<float>& e = results[0];
  int64_t worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) {
      EXPECT_TRUE(std::isnan(e[i]));
      continue;
    }
    const float expected = static_cast<float>(std::erf(static_cast<double>(x[i])));
    // Exact where the approximation is clamped (|x| >= 4: +-1) and at 0.
    if (std::fabs(x[i]) >= 4.0f || x[i] == 0.0f) ASSERT_EQ(e[i], expected) << x[i];
    if (std::fabs(expected) >= std::numeric_limits<float>::min()) {
      worst = std::max(worst, UlpDistance(e[i], expected));
    }
  }
  std::printf("erf f32: %zu inputs, max error %lld ulp where the result is normal\n", x.size(),
              static_cast<long long>(worst));
  // 7 ulp over all 2^32 patterns (the same operations in C++ with FMA), at
  // 3.915 where erf is 1 - 1e-8: the rational approximation's own error.
  EXPECT_LE(worst, 7);
}

// sin, cos and pow of f32 vectorize through glibc's libmvec (jit.cc): 8-lane
// AVX2 variants (and 16-lane AVX-512 ones where the host has it), whose error
// bound is glibc's, measured here against the correctly rounded value; the
// JIT'd loop calls them (the optimized IR names _ZGVdN8v_sinf, _ZGVeN16v_sinf).
TEST(CodegenAccuracy, SinCosAndPowOfFloatVectorizeWithinTheirUlpBounds) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = SampledFloats({0.0f, -0.0f, 1.5707964f, 3.1415927f, 1e6f, 1e30f, -1e30f,
                                        inf, -inf, std::numeric_limits<float>::quiet_NaN()});
  // pow's exponents: a grid of small ones, halves and integers (most pairs of
  // random floats overflow or underflow).
  std::vector<float> y(x.size());
  for (size_t i = 0; i < y.size(); ++i) y[i] = 0.37f * static_cast<float>(i % 61) - 11.0f;
  const std::string n = std::to_string(x.size());
  const std::string dir = ::testing::TempDir() + "/codegen_libmvec";
  std::unique_ptr<Jit> jit = DumpingJit(dir);
  ASSERT_NE(jit, nullptr);
  auto module = ParseHloModule("HloModule m\nENTRY e {\n  x = f32[" + n +
                               "] parameter(0)\n  y = f32[" + n + "] parameter(1)\n  s = f32[" + n +
                               "] sine(x)\n  c = f32[" + n + "] cosine(x)\n  ax = f32[" + n +
                               "] abs(x)\n  p = f32[" + n + "] power(ax, y)\n  ROOT t = (f32[" + n +
                               "], f32[" + n + "], f32[" + n + "]) tuple(s, c, p)\n}\n");
  ASSERT_TRUE(module.ok()) << module.status();
  const HloInstruction* root = (*module)->entry_computation()->root_instruction();
  auto kernels = jit->Compile(
      {KernelSpec{root->operand(0)}, KernelSpec{root->operand(1)}, KernelSpec{root->operand(2)}},
      "module_0001.m");
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  // The vector variants on hosts with AVX2 (the JIT maps to libmvec only there).
  if (absl::StrContains(jit->cpu_features(), "+avx2")) {
    const std::string optimized = ReadText(dir + "/module_0001.m.ir-with-opt.ll");
    EXPECT_TRUE(CallsFunction(optimized, "_ZGVdN8v_sinf"));
    EXPECT_TRUE(CallsFunction(optimized, "_ZGVdN8v_cosf"));
    EXPECT_TRUE(CallsFunction(optimized, "_ZGVdN8vv_powf"));
    if (absl::StrContains(jit->cpu_features(), "+avx512f")) {  // 512-bit loops
      EXPECT_TRUE(CallsFunction(optimized, "_ZGVeN16v_sinf"));
      EXPECT_TRUE(CallsFunction(optimized, "_ZGVeN16v_cosf"));
      EXPECT_TRUE(CallsFunction(optimized, "_ZGVeN16vv_powf"));
    }
  }
  std::vector<float> ax(x.size()), s(x.size()), c(x.size()), p(x.size());
  for (size_t i = 0; i < x.size(); ++i) ax[i] = std::fabs(x[i]);
  void* sin_buffers[] = {x.data(), s.data()};
  void* cos_buffers[] = {x.data(), c.data()};
  void* pow_buffers[] = {ax.data(), y.data(), p.data()};
  {
    ScopedFlushDenormals gradual(false);
    (*kernels)[0].function(sin_buffers, 0, 1);
    (*kernels)[1].function(cos_buffers, 0, 1);
    (*kernels)[2].function(pow_buffers, 0, 1);
  }
  int64_t worst_sin = 0, worst_cos = 0, worst_pow = 0;
  const float min_normal = std::numeric_limits<float>::min();
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = static_cast<double>(x[i]);
    const float expected_sin = static_cast<float>(std::sin(d));
    const float expected_cos = static_cast<float>(std::cos(d));
    const float expected_pow =
        static_cast<float>(std::pow(static_cast<double>(ax[i]), static_cast<double>(y[i])));
    ASSERT_EQ(std::isnan(s[i]), std::isnan(expected_sin)) << x[i];
    ASSERT_EQ(std::isnan(c[i]), std::isnan(expected_cos)) << x[i];
    ASSERT_EQ(std::isnan(p[i]), std::isnan(expected_pow)) << ax[i] << " " << y[i];
    if (std::fabs(expected_sin) >= min_normal) {
      worst_sin = std::max(worst_sin, UlpDistance(s[i], expected_sin));
    }
    if (std::fabs(expected_cos) >= min_normal) {
      worst_cos = std::max(worst_cos, UlpDistance(c[i], expected_cos));
    }
    if (std::isinf(expected_pow) || expected_pow == 0.0f) {
      ASSERT_EQ(p[i], expected_pow) << ax[i] << " " << y[i];
    } else if (expected_pow >= min_normal) {
      worst_pow = std::max(worst_pow, UlpDistance(p[i], expected_pow));
    }
  }
  std::printf("libmvec f32: %zu inputs; max error sin %lld, cos %lld, pow %lld ulp\n", x.size(),
              static_cast<long long>(worst_sin), static_cast<long long>(worst_cos),
              static_cast<long long>(worst_pow));
  EXPECT_LE(worst_sin, kLibmvecF32MaxUlp);
  EXPECT_LE(worst_cos, kLibmvecF32MaxUlp);
  EXPECT_LE(worst_pow, kLibmvecF32MaxUlp);
}

// glibc documents its vector functions within 4 ulp, double ones too.
constexpr int64_t kLibmvecF64MaxUlp = 4;

// One result against the correctly rounded reference: NaN exactly where it
// is NaN, infinities and zeros (with their sign) exact, otherwise within
// `bound` ulp (subnormal results included: gradual underflow is on). Returns
// the distance, or -1 after a failure (reported).
template <typename T>
int64_t CheckUlps(const char* op, T x, T got, T expected, int64_t bound) {
  if (std::isnan(expected) || std::isnan(got)) {
    EXPECT_EQ(std::isnan(got), std::isnan(expected)) << op << "(" << x << ") = " << got;
    return std::isnan(got) == std::isnan(expected) ? 0 : -1;
  }
  if (std::isinf(expected) || expected == 0) {
    const bool same = got == expected && std::signbit(got) == std::signbit(expected);
    EXPECT_TRUE(same) << op << "(" << x << ") = " << got << " vs " << expected;
    return same ? 0 : -1;
  }
  const int64_t d = UlpDistance(got, expected);
  EXPECT_LE(d, bound) << op << "(" << x << ") = " << got << " vs " << expected;
  return d <= bound ? d : -1;
}

// The libm functions LLVM 16's table does not map, mapped to glibc's libmvec
// (XLITE_LIBMVEC_EXTRAS): tan, the hyperbolic and inverse trigonometric
// functions, cbrt, expm1 and atan2 in f32 and f64, and f64 tanh, log1p, erf.
// Every 1021st float pattern (and 4.2 M spread doubles), NaNs, zeros and
// infinities against the correctly rounded value (computed in double, and
// long double for f64), by CheckUlps: within glibc's 4 ulp. atan2 on a grid
// of pairs with every sign, zero and infinity. On an AVX2 host every kernel
// calls its vector variant (on an AVX-512 host its 16- or 8-lane one).
struct MathCase {
  const char* op;  // HLO
  double (*reference)(double);
  long double (*reference_long)(long double);
};

TEST(CodegenAccuracy, MoreLibmFunctionsVectorizeWithinTheirUlpBounds) {
  const MathCase cases[] = {{"tan", ::tan, ::tanl},
                            {"sinh", ::sinh, ::sinhl},
                            {"cosh", ::cosh, ::coshl},
                            {"asin", ::asin, ::asinl},
                            {"acos", ::acos, ::acosl},
                            {"atan", ::atan, ::atanl},
                            {"asinh", ::asinh, ::asinhl},
                            {"acosh", ::acosh, ::acoshl},
                            {"atanh", ::atanh, ::atanhl},
                            {"cbrt", ::cbrt, ::cbrtl},
                            {"exponential-minus-one", ::expm1, ::expm1l},
                            // f64 only (f32 has inline approximations)
                            {"tanh", ::tanh, ::tanhl},
                            {"log-plus-one", ::log1p, ::log1pl},
                            {"erf", ::erf, ::erfl}};
  constexpr size_t kF32Cases = 11;
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = SampledFloats(
      {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1e-30f, 1e-40f, 88.7f, 89.5f, 1e30f, inf, -inf, nan, -nan});
  std::vector<double> xd;  // a pattern every 2^42, all signs and exponents
  for (uint64_t bits = 0x1234; bits < ~uint64_t{0} - (uint64_t{1} << 42);
       bits += uint64_t{1} << 42) {
    double d;
    std::memcpy(&d, &bits, 8);
    if (!std::isnan(d)) xd.push_back(d);
  }
  const double dinf = std::numeric_limits<double>::infinity();
  const double dnan = std::numeric_limits<double>::quiet_NaN();
  for (double d : {0.0, -0.0, 1.0, -1.0, 0.5, 1e-310, 710.0, 1e300, dinf, -dinf, dnan, -dnan}) {
    xd.push_back(d);
  }
  std::vector<std::string> ops32, ops64;
  for (size_t k = 0; k < std::size(cases); ++k) {
    if (k < kF32Cases) ops32.push_back(cases[k].op);
    ops64.push_back(cases[k].op);
  }
  const std::vector<std::vector<float>> r32 = RunUnary<float>(x, ops32);
  const std::vector<std::vector<double>> r64 = RunUnary<double>(xd, ops64);
  ASSERT_EQ(r32.size(), ops32.size());
  ASSERT_EQ(r64.size(), ops64.size());
  std::string table;
  for (size_t k = 0; k < std::size(cases); ++k) {
    const MathCase& c = cases[k];
    int64_t worst32 = 0, worst64 = 0;
    for (size_t i = 0; k < kF32Cases && i < x.size(); ++i) {
      const int64_t d = CheckUlps<float>(c.op, x[i], r32[k][i],
                                         static_cast<float>(c.reference(x[i])), kLibmvecF32MaxUlp);
      ASSERT_GE(d, 0);
      worst32 = std::max(worst32, d);
    }
    for (size_t i = 0; i < xd.size(); ++i) {
      const int64_t d = CheckUlps<double>(
          c.op, xd[i], r64[k][i], static_cast<double>(c.reference_long(xd[i])), kLibmvecF64MaxUlp);
      ASSERT_GE(d, 0);
      worst64 = std::max(worst64, d);
    }
    absl::StrAppend(&table, " ", c.op, " ", k < kF32Cases ? std::to_string(worst32) : "-", "/",
                    worst64);
  }
  // atan2 on a grid: 2047 values (all signs and exponents, zeros,
  // infinities, NaN) against each other, f32 and f64.
  std::vector<float> grid;
  for (uint64_t bits = 0; bits <= 0xFFFFFFFFu; bits += 0x00200801) {
    const uint32_t b = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &b, 4);
    if (!std::isnan(f)) grid.push_back(f);
  }
  grid.insert(grid.end(), {0.0f, -0.0f, 1.0f, -1.0f, inf, -inf, nan});
  std::vector<float> ya, yb;
  for (float a : grid) {
    for (float b : grid) {
      ya.push_back(a);
      yb.push_back(b);
    }
  }
  const std::string dir = ::testing::TempDir() + "/codegen_libmvec_extras";
  std::unique_ptr<Jit> jit = DumpingJit(dir);
  ASSERT_NE(jit, nullptr);
  const std::string f32n = "f32[" + std::to_string(ya.size()) + "]";
  const std::string f64n = "f64[" + std::to_string(ya.size()) + "]";
  std::string text = "HloModule m\nENTRY e {\n  y = " + f32n + " parameter(0)\n  x = " + f32n +
                     " parameter(1)\n  a = " + f32n + " atan2(y, x)\n  yd = " + f64n +
                     " convert(y)\n  xd = " + f64n + " convert(x)\n  ad = " + f64n +
                     " atan2(yd, xd)\n";
  // And every unary function in both types, for the IR check below.
  std::string roots = "a, ad", shapes = f32n + ", " + f64n;
  for (size_t k = 0; k < std::size(cases); ++k) {
    for (const char* type : {"f32", "f64"}) {
      if (k >= kF32Cases && std::string(type) == "f32") continue;
      const std::string name = absl::StrCat("u", k, type);
      const std::string shape = absl::StrCat(type, "[", ya.size(), "]");
      absl::StrAppend(&text, "  ", name, " = ", shape, " ", cases[k].op, "(",
                      std::string(type) == "f32" ? "y" : "yd", ")\n");
      absl::StrAppend(&roots, ", ", name);
      absl::StrAppend(&shapes, ", ", shape);
    }
  }
  absl::StrAppend(&text, "  ROOT r = (", shapes, ") tuple(", roots, ")\n}\n");
  auto module = ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<KernelSpec> specs;
  for (const HloInstruction* op : (*module)->entry_computation()->root_instruction()->operands()) {
    specs.push_back(KernelSpec{op});
  }
  auto kernels = jit->Compile(specs, "module_0001.m");
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  std::vector<float> a(ya.size());
  std::vector<double> yad(ya.begin(), ya.end()), ybd(yb.begin(), yb.end()), ad(ya.size());
  {
    ScopedFlushDenormals gradual(false);
    // Each kernel reads its instruction's operands: a reads y and x, ad the
    // f64 converts of them.
    void* buffers[] = {ya.data(), yb.data(), a.data()};
    (*kernels)[0].function(buffers, 0, 1);
    void* buffers_d[] = {yad.data(), ybd.data(), ad.data()};
    (*kernels)[1].function(buffers_d, 0, 1);
  }
  int64_t worst_atan2 = 0, worst_atan2_d = 0;
  for (size_t i = 0; i < ya.size(); ++i) {
    const int64_t d = CheckUlps<float>("atan2", ya[i], a[i],
                                       static_cast<float>(std::atan2(double{ya[i]}, double{yb[i]})),
                                       kLibmvecF32MaxUlp);
    ASSERT_GE(d, 0) << "x = " << yb[i];
    worst_atan2 = std::max(worst_atan2, d);
    const int64_t dd =
        CheckUlps<double>("atan2", yad[i], ad[i],
                          static_cast<double>(std::atan2(static_cast<long double>(yad[i]),
                                                         static_cast<long double>(ybd[i]))),
                          kLibmvecF64MaxUlp);
    ASSERT_GE(dd, 0) << "x = " << ybd[i];
    worst_atan2_d = std::max(worst_atan2_d, dd);
  }
  std::printf(
      "libmvec extras, max ulp f32/f64:%s atan2 %lld/%lld (%zu f32, %zu f64 inputs, %zu atan2 "
      "pairs)\n",
      table.c_str(), static_cast<long long>(worst_atan2), static_cast<long long>(worst_atan2_d),
      x.size(), xd.size(), ya.size());
  // Each function's loop calls its vector variant: on a host with AVX-512
  // (512-bit loops) the 16- and 8-lane ones where XLITE_LIBMVEC_AVX512 has one
  // (all but atanf), else (and on AVX2 hosts) the AVX2 ones.
  if (absl::StrContains(jit->cpu_features(), "+avx2")) {
    const std::string optimized = ReadText(dir + "/module_0001.m.ir-with-opt.ll");
    std::map<std::string, std::string> variant;  // scalar -> the vector function called
#define XLITE_AVX2_VARIANT(scalar, vector, lanes) variant[#scalar] = #vector;
    XLITE_LIBMVEC_EXTRAS(XLITE_AVX2_VARIANT)
#undef XLITE_AVX2_VARIANT
    int avx512 = 0;
    if (absl::StrContains(jit->cpu_features(), "+avx512f")) {
#define XLITE_AVX512_VARIANT(scalar, vector, lanes, intrinsic) \
  if (variant.contains(#scalar)) {                             \
    variant[#scalar] = #vector;                                \
    ++avx512;                                                  \
  }
      XLITE_LIBMVEC_AVX512(XLITE_AVX512_VARIANT)
#undef XLITE_AVX512_VARIANT
      EXPECT_EQ(avx512, 26);  // all 27 extras but atanf
    }
    EXPECT_EQ(variant.size(), 27u);
    for (const auto& [scalar, vector] : variant) {
      EXPECT_TRUE(CallsFunction(optimized, vector)) << scalar << ": " << vector;
    }
  }
}

// f32 -> bf16 has its own short rounding sequence: every f32 whose low half
// is at or next to a rounding tie (and every 4099th other pattern) against
// hostlib's exact conversion, bit for bit, NaNs and denormals included.
TEST(CodegenAccuracy, Bf16RoundingOfFloatPatterns) {
  std::vector<uint32_t> bits;
  for (uint32_t high = 0; high < 0x10000; ++high) {
    for (uint32_t low : {0x0000u, 0x0001u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu}) {
      bits.push_back(high << 16 | low);
    }
  }
  for (uint64_t b = 0; b <= 0xFFFFFFFFu; b += 4099) bits.push_back(static_cast<uint32_t>(b));
  const std::string n = std::to_string(bits.size());
  auto module = ParseHloModule("HloModule m\nENTRY e {\n  x = f32[" + n +
                               "] parameter(0)\n  ROOT t = bf16[" + n + "] convert(x)\n}\n");
  ASSERT_TRUE(module.ok()) << module.status();
  auto kernels =
      SharedJit().Compile({KernelSpec{(*module)->entry_computation()->root_instruction()}});
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  std::vector<uint16_t> got(bits.size()), expected(bits.size());
  void* buffers[] = {bits.data(), got.data()};
  {
    ScopedFlushDenormals gradual(false);
    (*kernels)[0].function(buffers, 0, 1);
  }
  int64_t mismatches = 0;
  for (size_t i = 0; i < bits.size(); ++i) {
    float f;
    std::memcpy(&f, &bits[i], 4);
    expected[i] = static_cast<uint16_t>(hostlib::FloatToNarrow(hostlib::ElementType::kBF16, f));
    if (got[i] != expected[i] && ++mismatches <= 5) {
      ADD_FAILURE() << absl::StrFormat("f32 bits %08x: bf16 %04x, expected %04x", bits[i], got[i],
                                       expected[i]);
    }
  }
  EXPECT_EQ(mismatches, 0);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::codegen
