#include <cmath>

#include "gtest/gtest.h"
#include "xlite/ir/computation.h"
#include "xlite/ir/float_format.h"
#include "xlite/ir/literal.h"
#include "xlite/ir/opcode.h"
#include "xlite/ir/shape.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

TEST(PrimitiveType, NamesRoundTrip) {
  for (auto t : {PrimitiveType::PRED, PrimitiveType::S4, PrimitiveType::U64, PrimitiveType::BF16,
                 PrimitiveType::F8E4M3FN, PrimitiveType::F4E2M1FN, PrimitiveType::C128}) {
    EXPECT_EQ(PrimitiveTypeFromName(PrimitiveTypeName(t)), t);
  }
  EXPECT_FALSE(PrimitiveTypeFromName("f33").has_value());
  EXPECT_EQ(PrimitiveBitWidth(PrimitiveType::S4), 4);
  EXPECT_EQ(PrimitiveByteWidth(PrimitiveType::C64), 8);
}

TEST(Opcode, TableIsConsistent) {
  EXPECT_EQ(HloOpcodeCount(), 136);
  for (int i = 0; i < HloOpcodeCount(); ++i) {
    auto op = static_cast<HloOpcode>(i);
    EXPECT_EQ(StringToHloOpcode(HloOpcodeString(op)), op);
  }
  EXPECT_EQ(HloOpcodeString(HloOpcode::kCos), "cosine");
  EXPECT_EQ(HloOpcodeArity(HloOpcode::kSelect), 3);
  EXPECT_EQ(HloOpcodeArity(HloOpcode::kTuple), kVariadic);
  EXPECT_TRUE(IsCommutativeOpcode(HloOpcode::kAdd));
  EXPECT_FALSE(IsCommutativeOpcode(HloOpcode::kSubtract));
}

TEST(Shape, Printing) {
  Shape s = Shape::Array(PrimitiveType::F32, {2, 3});
  EXPECT_EQ(s.ToString(), "f32[2,3]");
  s.SetDefaultLayoutIfMissing();
  EXPECT_EQ(s.ToString(), "f32[2,3]{1,0}");
  EXPECT_EQ(s.ToString(false), "f32[2,3]");
  Shape d = Shape::Array(PrimitiveType::S32, {4, Shape::kUnboundedSize});
  d.set_dynamic_dimension(0, true);
  d.set_dynamic_dimension(1, true);
  EXPECT_EQ(d.ToString(), "s32[<=4,?]");
  std::vector<Shape> elems(6, Shape::Scalar(PrimitiveType::F32));
  EXPECT_EQ(Shape::Tuple(elems).ToString(),
            "(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[])");
  Shape scalar = Shape::Scalar(PrimitiveType::F32);
  scalar.SetDefaultLayoutIfMissing();
  EXPECT_EQ(scalar.ToString(), "f32[]");
  scalar.mutable_layout().memory_space = 2;
  EXPECT_EQ(scalar.ToString(), "f32[]{:S(2)}");
}

TEST(Layout, TiledAndFields) {
  Layout l;
  l.minor_to_major = {1, 0};
  l.tiles = {{{8, 128}}, {{2, 1}}};
  l.element_size_in_bits = 4;
  l.memory_space = 1;
  EXPECT_EQ(l.ToString(), "{1,0:T(8,128)(2,1)E(4)S(1)}");
}

TEST(FloatFormat, RoundTripsSmallTypes) {
  for (PrimitiveType t :
       {PrimitiveType::F16, PrimitiveType::BF16, PrimitiveType::F8E5M2, PrimitiveType::F8E4M3FN,
        PrimitiveType::F8E4M3B11FNUZ, PrimitiveType::F8E5M2FNUZ, PrimitiveType::F8E4M3FNUZ,
        PrimitiveType::F8E4M3, PrimitiveType::F8E3M4, PrimitiveType::F4E2M1FN}) {
    FloatFormat f = *GetFloatFormat(t);
    for (uint64_t bits = 0; bits < (uint64_t{1} << f.total_bits()); ++bits) {
      double v = DecodeFloat(f, bits);
      if (std::isnan(v)) continue;
      uint64_t back = EncodeFloat(f, v);
      // Negative zero has no encoding in the fnuz types.
      if (v == 0) continue;
      EXPECT_EQ(back, bits) << PrimitiveTypeName(t) << " bits " << bits << " value " << v;
    }
  }
}

TEST(FloatFormat, RoundsToNearestEvenAndOverflows) {
  FloatFormat bf16 = *GetFloatFormat(PrimitiveType::BF16);
  EXPECT_EQ(DecodeFloat(bf16, EncodeFloat(bf16, 1.00390625)), 1.0);  // tie -> even
  EXPECT_TRUE(std::isinf(DecodeFloat(bf16, EncodeFloat(bf16, 1e39))));
  FloatFormat e4m3fn = *GetFloatFormat(PrimitiveType::F8E4M3FN);
  EXPECT_EQ(DecodeFloat(e4m3fn, EncodeFloat(e4m3fn, 448)), 448);
  EXPECT_TRUE(std::isnan(DecodeFloat(e4m3fn, EncodeFloat(e4m3fn, 1000))));
}

// Subliteral walks nested tuples; an index outside the structure is null.
TEST(Literal, SubliteralWalksNestedTuples) {
  std::vector<Literal> inner;
  inner.emplace_back(Shape::Scalar(PrimitiveType::S32));
  inner.emplace_back(Shape::Array(PrimitiveType::F32, {2}));
  std::vector<Literal> outer;
  outer.emplace_back(Shape::Scalar(PrimitiveType::PRED));
  outer.push_back(Literal::Tuple(std::move(inner)));
  Literal t = Literal::Tuple(std::move(outer));
  EXPECT_EQ(t.Subliteral({}), &t);
  ASSERT_NE(t.Subliteral({1, 1}), nullptr);
  EXPECT_EQ(t.Subliteral({1, 1})->shape().dimensions(), std::vector<int64_t>({2}));
  EXPECT_EQ(t.MutableSubliteral({1, 0}), &t.tuple_elements()[1].tuple_elements()[0]);
  EXPECT_EQ(t.Subliteral({2}), nullptr);
  EXPECT_EQ(t.Subliteral({-1}), nullptr);
  EXPECT_EQ(t.Subliteral({0, 0}), nullptr);  // into an array
}

TEST(Literal, XlaSpellings) {
  EXPECT_EQ(FloatBitsToString(PrimitiveType::F32, 0x4048F5C3), "3.14");
  EXPECT_EQ(FloatBitsToString(PrimitiveType::F32, 0x7F800000), "inf");
  EXPECT_EQ(FloatBitsToString(PrimitiveType::F32, 0xFFC00000), "-nan");
  EXPECT_EQ(FloatBitsToString(PrimitiveType::F32, 0x7FC00001), "nan(0x400001)");
  EXPECT_EQ(FloatBitsToString(PrimitiveType::F16, 0x7BFF), "65504");

  Literal m(Shape::Array(PrimitiveType::S32, {2, 3}));
  for (int i = 0; i < 6; ++i) m.SetInt(i, i);
  EXPECT_EQ(m.ToStringWithoutShapeOneline(), "{ { 0, 1, 2 }, { 3, 4, 5 } }");
  Literal col(Shape::Array(PrimitiveType::F32, {2, 1}));
  col.SetDouble(0, 1);
  col.SetDouble(1, 2);
  EXPECT_EQ(col.ToStringWithoutShapeOneline(), "{ {1}, {2} }");
  Literal r4(Shape::Array(PrimitiveType::F32, {2, 0, 4, 3}));
  EXPECT_EQ(r4.ToStringWithoutShapeOneline(), "{ { /*i0=0*/ }, { /*i0=1*/ } }");
  Literal p(Shape::Array(PrimitiveType::PRED, {2}));
  p.SetInt(1, 1);
  EXPECT_EQ(p.ToStringWithoutShapeOneline(), "{0, 1}");
  Literal c(Shape::Scalar(PrimitiveType::C64));
  c.SetComplex(0, {1, -2});
  EXPECT_EQ(c.ToStringWithoutShapeOneline(), "(1, -2)");
}

TEST(Instruction, ReplaceOperandKeepsUserLists) {
  HloComputation c("c");
  const Shape f = Shape::Scalar(PrimitiveType::F32);
  HloInstruction* a =
      c.AddInstruction(std::make_unique<HloInstruction>(HloOpcode::kParameter, "a", f));
  HloInstruction* b =
      c.AddInstruction(std::make_unique<HloInstruction>(HloOpcode::kParameter, "b", f));
  auto add = std::make_unique<HloInstruction>(HloOpcode::kAdd, "add", f);
  add->AppendOperand(a);
  add->AppendOperand(a);
  HloInstruction* sum = c.AddInstruction(std::move(add));
  auto count = [](const HloInstruction* x, const HloInstruction* user) {
    return std::count(x->users().begin(), x->users().end(), user);
  };
  // One of two uses moves: a is still used, b now too.
  sum->ReplaceOperandWith(0, b);
  EXPECT_EQ(sum->operand(0), b);
  EXPECT_EQ(sum->operand(1), a);
  EXPECT_EQ(count(a, sum), 1);
  EXPECT_EQ(count(b, sum), 1);
  // Every use of a by sum moves; a loses the user.
  a->ReplaceUseWith(sum, b);
  EXPECT_EQ(sum->operand(1), b);
  EXPECT_EQ(count(a, sum), 0);
  EXPECT_EQ(count(b, sum), 1);
}

TEST(Computation, MoveInstructionsBefore) {
  HloComputation c("c");
  const Shape f = Shape::Scalar(PrimitiveType::F32);
  std::vector<HloInstruction*> i;
  for (const char* name : {"a", "b", "c", "d", "e"}) {
    i.push_back(c.AddInstruction(std::make_unique<HloInstruction>(HloOpcode::kParameter, name, f)));
  }
  auto names = [&] {
    std::string s;
    for (const auto& instr : c.instructions()) s += instr->name();
    return s;
  };
  // Just added: the last ones, rotated into place.
  EXPECT_TRUE(c.MoveInstructionsBefore({i[3], i[4]}, i[1]));
  EXPECT_EQ(names(), "adebc");
  // Anywhere else, in the order given, from before and after the anchor.
  EXPECT_TRUE(c.MoveInstructionsBefore({i[2], i[0]}, i[4]));
  EXPECT_EQ(names(), "dcaeb");
  EXPECT_TRUE(c.MoveInstructionsBefore({}, i[0]));
  EXPECT_EQ(names(), "dcaeb");
  // Refused, nothing changed: the anchor moved, a repeat, a stranger.
  HloInstruction stranger(HloOpcode::kParameter, "x", f);
  EXPECT_FALSE(c.MoveInstructionsBefore({i[1], i[2]}, i[2]));
  EXPECT_FALSE(c.MoveInstructionsBefore({i[0], i[0]}, i[2]));
  EXPECT_FALSE(c.MoveInstructionsBefore({&stranger}, i[2]));
  EXPECT_FALSE(c.MoveInstructionsBefore({i[1]}, &stranger));
  HloInstruction another(HloOpcode::kParameter, "y", f);
  EXPECT_FALSE(c.MoveInstructionsBefore({&stranger}, &another));
  EXPECT_FALSE(c.MoveInstructionsBefore({i[4], i[1]}, i[1]));  // the last ones, the anchor too
  EXPECT_EQ(names(), "dcaeb");
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
