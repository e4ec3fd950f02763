// The typed-FFI attribute dictionary parser: the forms JAX's HLO carries, the
// other FFI attribute kinds, and an error for each malformed or unsupported
// input.
#include "xlite/hostlib/ffi_attributes.h"

#include <string>

#include "gtest/gtest.h"

namespace xlite::hostlib {
namespace {
namespace XLITE_UNITY_ID {

FfiAttributes Parse(const std::string& text) {
  absl::StatusOr<FfiAttributes> attrs = ParseFfiAttributes(text);
  EXPECT_TRUE(attrs.ok()) << text << ": " << attrs.status();
  return attrs.ok() ? *attrs : FfiAttributes();
}

std::string ErrorOf(const std::string& text) {
  absl::StatusOr<FfiAttributes> attrs = ParseFfiAttributes(text);
  EXPECT_FALSE(attrs.ok()) << text;
  EXPECT_EQ(attrs.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(attrs.status().message());
}

TEST(FfiAttributes, JaxLapackDictionaries) {
  const FfiAttributes trsm =
      Parse("{diag = 85 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}");
  EXPECT_EQ(*trsm.GetChar("diag", "NU"), 'U');
  EXPECT_EQ(*trsm.GetChar("side", "LR"), 'L');
  EXPECT_EQ(*trsm.GetChar("trans_x", "NTC"), 'N');
  EXPECT_EQ(*trsm.GetU8("uplo"), 76);
  EXPECT_TRUE(trsm.CheckNoOthers({"side", "uplo", "trans_x", "diag"}).ok());

  const FfiAttributes eigh = Parse("{mode = 86 : ui8, uplo = 76 : ui8}");
  EXPECT_EQ(*eigh.GetChar("mode", "NV"), 'V');

  const FfiAttributes gehrd = Parse("{high = 4 : i32, low = 1 : i32}");
  EXPECT_EQ(*gehrd.GetI32("low"), 1);
  EXPECT_EQ(*gehrd.GetI32("high"), 4);

  EXPECT_TRUE(Parse("{}").entries().empty());
  EXPECT_TRUE(Parse("").entries().empty());
  EXPECT_TRUE(Parse("  {  }  ").entries().empty());
}

TEST(FfiAttributes, OtherKinds) {
  const FfiAttributes a = Parse(
      "{left = true, transpose = false, n = 7, neg = -3 : si8, big = 255 : i8, h = 0x1F : ui16, "
      "x = 1.5 : f32, y = -2.5e-1, s = \"a\\\"b\\0A\", \"quoted key\" = 1 : i64, "
      "ints = array<i32: 1, -2, 3>, fs = array<f64: 0.5, 2>, none = array<i64>, "
      "nested = {k = 2 : ui32, deeper = {z = \"q\"}}}");
  EXPECT_EQ(*a.GetBool("left"), true);
  EXPECT_EQ(*a.GetBool("transpose"), false);
  EXPECT_EQ(*a.GetI64("n"), 7);  // untyped integers are i64
  EXPECT_EQ(a.Find("neg")->integer, -3);
  EXPECT_EQ(a.Find("big")->integer, -1);  // signless i8 255 reads as -1, as FFI sign-extends
  EXPECT_EQ(a.Find("h")->integer, 31);
  EXPECT_EQ(a.Find("x")->type, "f32");
  EXPECT_DOUBLE_EQ(a.Find("x")->floating, 1.5);
  EXPECT_EQ(a.Find("y")->type, "f64");
  EXPECT_DOUBLE_EQ(a.Find("y")->floating, -0.25);
  EXPECT_EQ(a.Find("s")->string, "a\"b\n");
  EXPECT_EQ(a.Find("quoted key")->integer, 1);
  EXPECT_EQ(a.Find("ints")->integers, (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(a.Find("fs")->floats, (std::vector<double>{0.5, 2}));
  EXPECT_TRUE(a.Find("none")->integers.empty());
  const FfiAttribute* nested = a.Find("nested");
  ASSERT_EQ(nested->kind, FfiAttribute::Kind::kDictionary);
  EXPECT_EQ(nested->dictionary->Find("k")->integer, 2);
  EXPECT_EQ(nested->dictionary->Find("deeper")->dictionary->Find("z")->string, "q");
}

TEST(FfiAttributes, TypedGettersAreStrict) {
  const FfiAttributes a = Parse("{uplo = 76 : i32, flag = 1 : ui8, c = 88 : ui8}");
  EXPECT_NE(std::string(a.GetU8("uplo").status().message()).find("must be ui8, got i32 76"),
            std::string::npos)
      << a.GetU8("uplo").status();
  EXPECT_NE(std::string(a.GetU8("missing").status().message()).find("missing attribute"),
            std::string::npos);
  EXPECT_FALSE(a.GetBool("flag").ok());
  EXPECT_FALSE(a.GetI32("flag").ok());
  const absl::Status bad_char = a.GetChar("c", "LU").status();
  EXPECT_NE(std::string(bad_char.message()).find("must be one of 76 ('L'), 85 ('U'), got 88"),
            std::string::npos)
      << bad_char;
  const absl::Status extra = a.CheckNoOthers({"uplo", "flag"});
  EXPECT_NE(std::string(extra.message()).find("unexpected attribute 'c'"), std::string::npos)
      << extra;
}

TEST(FfiAttributes, Errors) {
  EXPECT_NE(ErrorOf("{uplo}").find("has no value (unit attributes"), std::string::npos);
  EXPECT_NE(ErrorOf("{uplo = 256 : ui8}").find("out of range"), std::string::npos);
  EXPECT_NE(ErrorOf("{uplo = -1 : ui8}").find("out of range"), std::string::npos);
  EXPECT_NE(ErrorOf("{a = 128 : si8}").find("out of range"), std::string::npos);
  EXPECT_NE(ErrorOf("{a = 1 : f32}").find("integer literal cannot have type f32"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{a = 1.5 : i32}").find("float literal cannot have type i32"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{a = 1 : f16}").find("not an FFI attribute type"), std::string::npos);
  EXPECT_NE(ErrorOf("{a = 1 : i1}").find("spelled true/false"), std::string::npos);
  EXPECT_NE(ErrorOf("{a = 1 : index}").find("unknown type 'index'"), std::string::npos);
  EXPECT_NE(ErrorOf("{a = 1 : x32}").find("expected an integer or float type"), std::string::npos);
  EXPECT_NE(ErrorOf("{a = 1, a = 2}").find("duplicate attribute 'a'"), std::string::npos);
  EXPECT_NE(ErrorOf("{a = \"open}").find("unterminated string"), std::string::npos);
  EXPECT_NE(ErrorOf("{a = 1} x").find("unexpected text after"), std::string::npos);
  EXPECT_NE(ErrorOf("{a = 1").find("expected ','"), std::string::npos);
  EXPECT_NE(ErrorOf("{a = dense<1> : tensor<i32>}").find("dense attributes are not supported"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{a = #foo.bar}").find("unsupported value"), std::string::npos);
  EXPECT_NE(ErrorOf("{a = array<i32: 1.5>}").find("float in an i32 array"), std::string::npos);
  EXPECT_NE(ErrorOf("{a = array<i32: 1, 2}").find("to close the array"), std::string::npos);
  // f32 array elements are range-checked as f32 scalars are; a hex element
  // would be a bit pattern in MLIR, not a number.
  EXPECT_NE(ErrorOf("{a = array<f32: 1.0, 1e39>}").find("1e+39 is out of f32 range"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{a = array<f32: 0x3F800000>}")
                .find("hex (bit pattern) elements of an f32 array are not supported"),
            std::string::npos);
  EXPECT_EQ(Parse("{a = array<f64: 1e39>}").Find("a")->floats, (std::vector<double>{1e39}));
  EXPECT_NE(ErrorOf("{a = 99999999999999999999}").find("does not fit 64 bits"), std::string::npos);
  EXPECT_NE(ErrorOf("{a = 1e999}").find("out of range"), std::string::npos);
  EXPECT_NE(ErrorOf("a = 1").find("to open the attribute dictionary"), std::string::npos);
  EXPECT_NE(ErrorOf("{= 1}").find("expected an attribute name"), std::string::npos);
  EXPECT_NE(ErrorOf("{a = \"\\q\"}").find("unknown escape"), std::string::npos);
  std::string deep;
  for (int i = 0; i < 40; ++i) deep += "{a = ";
  deep += "1";
  for (int i = 0; i < 40; ++i) deep += "}";
  EXPECT_NE(ErrorOf(deep).find("nested too deeply"), std::string::npos);
  // Errors name the column.
  EXPECT_NE(ErrorOf("{uplo = 76 : ui9}").find("column "), std::string::npos);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::hostlib
