#include "xlite/runtime/donation.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "xlite/eval/evaluator.h"
#include "xlite/text/parser.h"

namespace xlite::runtime {
namespace {
namespace XLITE_UNITY_ID {

using ::testing::HasSubstr;

// p0 may-alias output {0}, p1 must-alias output {1}, p2 a buffer_donor no
// alias pairs, p3 read-only.
constexpr char kModule[] = R"(
HloModule m, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, must-alias) }, buffer_donor={ (2, {}) }

ENTRY e {
  p0 = f32[4]{0} parameter(0)
  p1 = s32[2]{0} parameter(1)
  p2 = f32[4]{0} parameter(2)
  p3 = f32[4]{0} parameter(3)
  a = f32[4]{0} add(p0, p2)
  b = s32[2]{0} add(p1, p1)
  c = f32[4]{0} multiply(a, p3)
  ROOT t = (f32[4]{0}, s32[2]{0}, f32[4]{0}) tuple(a, b, c)
}
)";

std::unique_ptr<HloModule> Parse(const char* text) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

Shape ParseShapeOrDie(const char* text) {
  absl::StatusOr<Shape> shape = ParseShape(text);
  EXPECT_TRUE(shape.ok()) << shape.status();
  return *shape;
}

std::unique_ptr<Buffer> Filled(const char* shape, double first) {
  Literal literal(ParseShapeOrDie(shape));
  for (int64_t i = 0; i < literal.element_count(); ++i) literal.SetDouble(i, first + i);
  absl::StatusOr<std::unique_ptr<Buffer>> buffer = Buffer::FromLiteral(literal);
  EXPECT_TRUE(buffer.ok()) << buffer.status();
  return *std::move(buffer);
}

double At(const Buffer& buffer, int64_t i) {
  absl::StatusOr<Literal> literal = buffer.ToLiteral();
  EXPECT_TRUE(literal.ok()) << literal.status();
  return literal.ok() ? literal->GetDouble(i) : -1;
}

class DonationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    module_ = Parse(kModule);
    ASSERT_NE(module_, nullptr);
    absl::StatusOr<DonationRules> rules = DonationRules::FromModule(*module_);
    ASSERT_TRUE(rules.ok()) << rules.status();
    rules_ = *std::move(rules);
    p0_ = Filled("f32[4]", 1);
    p1_ = Filled("s32[2]", 10);
    p2_ = Filled("f32[4]", 100);
    p3_ = Filled("f32[4]", 2);
  }
  std::vector<Buffer*> Args() { return {p0_.get(), p1_.get(), p2_.get(), p3_.get()}; }
  absl::Status Decide(std::vector<Buffer*> args, absl::flat_hash_set<int64_t> non_donatable = {}) {
    return DecideDonation(rules_, args, non_donatable).status();
  }

  std::unique_ptr<HloModule> module_;
  DonationRules rules_;
  std::unique_ptr<Buffer> p0_, p1_, p2_, p3_;
};

TEST_F(DonationTest, RulesReadTheModule) {
  ASSERT_EQ(rules_.arguments().size(), 4u);
  ASSERT_EQ(rules_.outputs().size(), 3u);
  EXPECT_EQ(rules_.arguments()[0].output_leaf, 0);
  EXPECT_EQ(rules_.arguments()[0].alias_kind, AliasKind::kMayAlias);
  EXPECT_EQ(rules_.arguments()[1].output_leaf, 1);
  EXPECT_EQ(rules_.arguments()[1].alias_kind, AliasKind::kMustAlias);
  EXPECT_FALSE(rules_.arguments()[2].output_leaf.has_value());
  EXPECT_TRUE(rules_.arguments()[2].unused_donor);
  EXPECT_FALSE(rules_.arguments()[3].output_leaf.has_value());
  EXPECT_EQ(rules_.outputs()[1].aliased_argument, 1);
  EXPECT_FALSE(rules_.outputs()[2].aliased_argument.has_value());
  EXPECT_EQ(rules_.ArgumentName(1), "argument 1 (parameter 1 {})");
}

TEST_F(DonationTest, AliasedArgumentsAreDonatedByDefault) {
  absl::StatusOr<std::vector<ArgumentDecision>> d = DecideDonation(rules_, Args(), {});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)[0].role, ArgumentRole::kDonated);
  EXPECT_EQ((*d)[0].output_leaf, 0);
  EXPECT_EQ((*d)[1].role, ArgumentRole::kDonated);
  EXPECT_EQ((*d)[2].role, ArgumentRole::kReadOnly);  // unpaired donor: stays the caller's
  EXPECT_EQ((*d)[3].role, ArgumentRole::kReadOnly);
  EXPECT_EQ(ArgumentRoleName((*d)[0].role), "donated");
}

TEST_F(DonationTest, MayAliasNotDonatedIsCopyProtected) {
  absl::StatusOr<std::vector<ArgumentDecision>> d = DecideDonation(rules_, Args(), {0});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)[0].role, ArgumentRole::kCopyProtected);
  EXPECT_EQ((*d)[0].output_leaf, 0);
  EXPECT_EQ((*d)[1].role, ArgumentRole::kDonated);
}

TEST_F(DonationTest, MustAliasNotDonatedIsAnError) {
  absl::Status s = Decide(Args(), {1});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("argument 1 (parameter 1 {}) must alias output {1}"));
  EXPECT_THAT(s.message(), HasSubstr("must-alias"));
}

TEST_F(DonationTest, WrongArgumentsAreErrorsNamingTheArgument) {
  absl::Status count = Decide({p0_.get(), p1_.get()});
  EXPECT_EQ(count.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(count.message(), HasSubstr("expects 4 argument buffers"));

  absl::Status null = Decide({p0_.get(), p1_.get(), nullptr, p3_.get()});
  EXPECT_THAT(null.message(), HasSubstr("argument 2 (parameter 2 {}) is null"));

  std::unique_ptr<Buffer> s32 = Filled("s32[4]", 0);
  absl::Status type = Decide({p0_.get(), p1_.get(), p2_.get(), s32.get()});
  EXPECT_EQ(type.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(type.message(), HasSubstr("argument 3 (parameter 3 {}): element type s32 differs"));

  std::unique_ptr<Buffer> longer = Filled("f32[5]", 0);
  absl::Status shape = Decide({p0_.get(), p1_.get(), longer.get(), p3_.get()});
  EXPECT_THAT(shape.message(), HasSubstr("argument 2 (parameter 2 {}): shape f32[5]{0} differs"));

  absl::Status range = Decide(Args(), {7});
  EXPECT_EQ(range.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(range.message(), HasSubstr("non_donatable_input_indices names argument 7"));
}

TEST(Donation, LayoutMismatchIsAnError) {
  std::unique_ptr<HloModule> module = Parse(R"(
HloModule m
ENTRY e {
  p0 = f32[2,3]{0,1} parameter(0)
  ROOT n = f32[2,3]{0,1} negate(p0)
})");
  absl::StatusOr<DonationRules> rules = DonationRules::FromModule(*module);
  ASSERT_TRUE(rules.ok()) << rules.status();
  std::unique_ptr<Buffer> row_major = Filled("f32[2,3]{1,0}", 0);
  absl::Status s = DecideDonation(*rules, {row_major.get()}, {}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("argument 0 (parameter 0 {}): layout of f32[2,3]{1,0} "
                                     "differs from the parameter's f32[2,3]{0,1}"));
  std::unique_ptr<Buffer> column_major = Filled("f32[2,3]{0,1}", 0);
  EXPECT_TRUE(DecideDonation(*rules, {column_major.get()}, {}).ok());
}

TEST_F(DonationTest, DeletedArgumentIsAnError) {
  p3_->Delete();
  absl::Status s = Decide(Args());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("argument 3 (parameter 3 {}) has been deleted or donated"));
}

TEST_F(DonationTest, OneBufferTwiceWhereEitherUseIsDonatedIsAnError) {
  // Donated first, read after: f(donate(a), a).
  absl::Status later_read = Decide({p0_.get(), p1_.get(), p0_.get(), p3_.get()});
  EXPECT_EQ(later_read.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(later_read.message(),
              HasSubstr("argument 2 (parameter 2 {}) is the buffer argument 0 (parameter 0 {})"));
  EXPECT_THAT(later_read.message(), HasSubstr("f(donate(a), a)"));
  // Read first, donated after: f(a, donate(a)) (parameter 0 aliases output 0).
  std::unique_ptr<HloModule> module = Parse(R"(
HloModule m, input_output_alias={ {}: (1, {}, may-alias) }
ENTRY e {
  p0 = f32[4]{0} parameter(0)
  p1 = f32[4]{0} parameter(1)
  ROOT a = f32[4]{0} add(p0, p1)
})");
  absl::StatusOr<DonationRules> rules = DonationRules::FromModule(*module);
  ASSERT_TRUE(rules.ok());
  absl::Status earlier_read = DecideDonation(*rules, {p0_.get(), p0_.get()}, {}).status();
  EXPECT_EQ(earlier_read.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(earlier_read.message(), HasSubstr("Attempt to donate a buffer which is also used"));
  EXPECT_THAT(earlier_read.message(), HasSubstr("argument 1 (parameter 1 {})"));
  // Neither donated: fine.
  EXPECT_TRUE(DecideDonation(*rules, {p0_.get(), p0_.get()}, {1}).ok());
  // Read twice in the first module (parameter 0 copy-protected).
  EXPECT_TRUE(Decide({p0_.get(), p1_.get(), p0_.get(), p0_.get()}, {0}).ok());
}

TEST(Donation, SameBufferDonatedTwiceIsAnError) {
  std::unique_ptr<HloModule> module = Parse(R"(
HloModule m, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, may-alias) }
ENTRY e {
  p0 = f32[4]{0} parameter(0)
  p1 = f32[4]{0} parameter(1)
  ROOT t = (f32[4]{0}, f32[4]{0}) tuple(p1, p0)
})");
  absl::StatusOr<DonationRules> rules = DonationRules::FromModule(*module);
  ASSERT_TRUE(rules.ok()) << rules.status();
  std::unique_ptr<Buffer> a = Filled("f32[4]", 0);
  absl::Status s = DecideDonation(*rules, {a.get(), a.get()}, {}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("Attempt to donate the same buffer twice"));
  EXPECT_THAT(s.message(), HasSubstr("f(donate(a), donate(a))"));
  // With one of them not donated, the other's use clashes all the same.
  EXPECT_THAT(DecideDonation(*rules, {a.get(), a.get()}, {0}).status().message(),
              HasSubstr("Attempt to donate a buffer which is also used"));
  EXPECT_TRUE(DecideDonation(*rules, {a.get(), a.get()}, {0, 1}).ok());
}

TEST(Donation, TupleParametersAreFlattened) {
  const Shape param = ParseShapeOrDie("(f32[2], (s32[3], f32[]))");
  const Shape result = ParseShapeOrDie("(f32[], s32[3])");
  InputOutputAlias alias;
  alias.output_index = {1};
  alias.parameter_number = 0;
  alias.parameter_index = {1, 0};
  absl::StatusOr<DonationRules> rules = DonationRules::Create({param}, result, {alias}, {});
  ASSERT_TRUE(rules.ok()) << rules.status();
  ASSERT_EQ(rules->arguments().size(), 3u);
  EXPECT_EQ(rules->ArgumentName(1), "argument 1 (parameter 0 {1,0})");
  EXPECT_EQ(rules->arguments()[1].output_leaf, 1);
  EXPECT_EQ(rules->arguments()[2].shape.ToString(), "f32[]");
  EXPECT_EQ(rules->outputs()[1].index, (ShapeIndex{1}));
  EXPECT_EQ(rules->ArgumentIndex(0, {1, 1}), 2);
  EXPECT_EQ(rules->ArgumentIndex(0, {1}), std::nullopt);  // a tuple, no buffer
  EXPECT_EQ(rules->ArgumentIndex(1, {}), std::nullopt);
  EXPECT_EQ(rules->OutputLeafIndex({1}), 1);
  EXPECT_EQ(rules->OutputLeafIndex({}), std::nullopt);
}

TEST(Donation, BadAliasConfigsAreErrors) {
  const std::vector<Shape> params = {ParseShapeOrDie("f32[4]"), ParseShapeOrDie("f32[4]")};
  const Shape result = ParseShapeOrDie("(f32[4], s32[4])");
  auto alias = [](ShapeIndex out, int64_t param, ShapeIndex index) {
    InputOutputAlias a;
    a.output_index = std::move(out);
    a.parameter_number = param;
    a.parameter_index = std::move(index);
    return a;
  };
  auto error = [&](std::vector<InputOutputAlias> aliases) {
    return DonationRules::Create(params, result, aliases, {}).status();
  };
  EXPECT_THAT(error({alias({0}, 5, {})}).message(), HasSubstr("the parameters have no array"));
  EXPECT_THAT(error({alias({0}, 0, {1})}).message(), HasSubstr("the parameters have no array"));
  EXPECT_THAT(error({alias({2}, 0, {})}).message(), HasSubstr("the result has no array at {2}"));
  EXPECT_THAT(error({alias({0}, 0, {}), alias({0}, 1, {})}).message(),
              HasSubstr("output {0} is already backed by argument 0"));
  EXPECT_THAT(error({alias({0}, 0, {}), alias({1}, 0, {})}).message(),
              HasSubstr("already backs output {0}"));
  absl::Status mismatch = error({alias({1}, 0, {})});
  EXPECT_EQ(mismatch.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(mismatch.message(),
              HasSubstr("parameter shape f32[4]{0} and output shape s32[4]{0}"));
  BufferDonor donor;
  donor.parameter_number = 3;
  EXPECT_THAT(DonationRules::Create(params, result, {}, {donor}).status().message(),
              HasSubstr("buffer_donor (3, {})"));
  Shape opaque = Shape::Token();
  opaque.set_element_type(PrimitiveType::OPAQUE_TYPE);
  absl::Status t = DonationRules::Create({opaque}, result, {}, {}).status();
  EXPECT_EQ(t.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(t.message(), HasSubstr("parameter 0 {} is opaque[]"));
}

TEST(Donation, TokensTakeNoArgumentBuffer) {
  const std::vector<Shape> params = {
      ParseShapeOrDie("token[]"), ParseShapeOrDie("(f32[2], token[])"), ParseShapeOrDie("s32[]")};
  absl::StatusOr<DonationRules> rules =
      DonationRules::Create(params, ParseShapeOrDie("(token[], s32[])"), {}, {});
  ASSERT_TRUE(rules.ok()) << rules.status();
  ASSERT_EQ(rules->arguments().size(), 2u);
  EXPECT_EQ(rules->ArgumentName(0), "argument 0 (parameter 1 {0})");
  EXPECT_EQ(rules->ArgumentName(1), "argument 1 (parameter 2 {})");
  ASSERT_EQ(rules->outputs().size(), 1u);
  EXPECT_EQ(rules->outputs()[0].index, (ShapeIndex{1}));
}

TEST(Donation, VerdictsPairBufferDonors) {
  std::unique_ptr<HloModule> module = Parse(R"(
HloModule m, buffer_donor={ (0, {}), (1, {}) }
ENTRY e {
  p0 = f32[4]{0} parameter(0)
  p1 = f32[4]{0} parameter(1)
  ROOT a = f32[4]{0} add(p0, p1)
})");
  DonationVerdict paired;
  paired.parameter_number = 1;
  paired.kind = DonationVerdict::Kind::kInPlace;
  paired.output_index = ShapeIndex{};
  paired.from_buffer_donor = true;
  DonationVerdict unused;
  unused.parameter_number = 0;
  unused.kind = DonationVerdict::Kind::kDonatedUnused;
  absl::StatusOr<DonationRules> rules = DonationRules::FromModule(*module, {unused, paired});
  ASSERT_TRUE(rules.ok()) << rules.status();
  EXPECT_TRUE(rules->arguments()[0].unused_donor);
  EXPECT_EQ(rules->arguments()[1].output_leaf, 0);
  EXPECT_TRUE(rules->arguments()[1].from_buffer_donor);
  // Without the verdicts, neither donor backs an output.
  absl::StatusOr<DonationRules> plain = DonationRules::FromModule(*module);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->arguments()[1].output_leaf.has_value());

  // Through the planner: it writes the pair into input_output_alias and says
  // so in its verdicts.
  absl::StatusOr<MemoryPlan> plan = PlanMemory(*module);
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<DonationRules> planned = DonationRules::FromModule(*module, plan->donations);
  ASSERT_TRUE(planned.ok()) << planned.status();
  int paired_arguments = 0;
  for (const ArgumentLeaf& leaf : planned->arguments()) {
    if (leaf.output_leaf) {
      ++paired_arguments;
      EXPECT_TRUE(leaf.from_buffer_donor);
    }
  }
  EXPECT_EQ(paired_arguments, 1);  // one output, two donors

  // A verdict that contradicts the module's alias is an error.
  std::unique_ptr<HloModule> aliased = Parse(R"(
HloModule m, input_output_alias={ {0}: (0, {}, may-alias) }
ENTRY e {
  p0 = f32[4]{0} parameter(0)
  ROOT t = (f32[4]{0}, f32[4]{0}) tuple(p0, p0)
})");
  DonationVerdict wrong;
  wrong.kind = DonationVerdict::Kind::kInPlace;
  wrong.output_index = ShapeIndex{1};
  wrong.text = "parameter 0 {} -> output {1}";
  absl::Status s = DonationRules::FromModule(*aliased, {wrong}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("but the module aliases it to output {0}"));
}

// A stand-in for the executable's run: out0 = p0 + p2 written into the memory
// output 0 uses, out1 = p1 + p1 likewise, out2 fresh.
std::vector<std::unique_ptr<Buffer>> FakeRun(PreparedArguments& prepared) {
  auto* out0 = static_cast<float*>(prepared.aliased_output_data(0));
  const auto* p0 = static_cast<const float*>(prepared.parameter_data(0));
  const auto* p2 = static_cast<const float*>(prepared.parameter_data(2));
  for (int i = 0; i < 4; ++i) out0[i] = p0[i] + p2[i];
  auto* out1 = static_cast<int32_t*>(prepared.aliased_output_data(1));
  for (int i = 0; i < 2; ++i) out1[i] *= 2;
  std::vector<std::unique_ptr<Buffer>> outputs(3);
  outputs[2] = *Buffer::Allocate(ParseShapeOrDie("f32[4]"));
  return outputs;
}

TEST_F(DonationTest, DonatedArgumentsBackTheirOutputsAndAreDeleted) {
  void* p0_memory = p0_->data();
  void* p1_memory = p1_->data();
  absl::StatusOr<std::unique_ptr<PreparedArguments>> prepared =
      PreparedArguments::Prepare(rules_, Args(), {});
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  // Held for donation: already unusable to everyone else.
  EXPECT_TRUE(p0_->is_deleted());
  EXPECT_EQ((*prepared)->parameter_data(0), p0_memory);
  EXPECT_EQ((*prepared)->aliased_output_data(0), p0_memory);
  EXPECT_EQ((*prepared)->aliased_output_data(2), nullptr);
  EXPECT_TRUE((*prepared)->output_is_aliased(0));
  EXPECT_TRUE((*prepared)->output_is_aliased(1));
  EXPECT_FALSE((*prepared)->output_is_aliased(2));
  EXPECT_FALSE((*prepared)->output_is_aliased(3));
  EXPECT_EQ((*prepared)->parameter_data(3), p3_->data());
  absl::StatusOr<std::vector<std::unique_ptr<Buffer>>> outputs =
      (*prepared)->Finish(FakeRun(**prepared));
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  ASSERT_EQ(outputs->size(), 3u);
  EXPECT_EQ((*outputs)[0]->data(), p0_memory);
  EXPECT_EQ((*outputs)[1]->data(), p1_memory);
  EXPECT_EQ(At(*(*outputs)[0], 3), 4 + 103);
  EXPECT_EQ(At(*(*outputs)[1], 1), 22);
  EXPECT_TRUE(p0_->is_deleted());
  EXPECT_TRUE(p1_->is_deleted());
  EXPECT_FALSE(p2_->is_deleted());
  EXPECT_FALSE(p3_->is_deleted());
  prepared->reset();
  // Reading or donating a donated buffer again is an error.
  EXPECT_EQ(p0_->ToLiteral().status().code(), absl::StatusCode::kFailedPrecondition);
  absl::Status again = PreparedArguments::Prepare(rules_, Args(), {}).status();
  EXPECT_EQ(again.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(again.message(), HasSubstr("argument 0 (parameter 0 {}) has been deleted"));
  // The outputs outlive the arguments they came from.
  p0_.reset();
  EXPECT_EQ(At(*(*outputs)[0], 0), 1 + 100);
}

TEST_F(DonationTest, CopyProtectionNeverWritesTheInput) {
  void* p0_memory = p0_->data();
  absl::StatusOr<std::unique_ptr<PreparedArguments>> prepared =
      PreparedArguments::Prepare(rules_, Args(), {0});
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_EQ((*prepared)->decisions()[0].role, ArgumentRole::kCopyProtected);
  EXPECT_FALSE(p0_->is_deleted());
  void* copy = (*prepared)->parameter_data(0);
  EXPECT_NE(copy, p0_memory);
  EXPECT_EQ((*prepared)->aliased_output_data(0), copy);
  EXPECT_EQ(static_cast<float*>(copy)[2], 3);  // initialised with the input
  absl::StatusOr<std::vector<std::unique_ptr<Buffer>>> outputs =
      (*prepared)->Finish(FakeRun(**prepared));
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_EQ((*outputs)[0]->data(), copy);
  EXPECT_EQ(At(*(*outputs)[0], 2), 3 + 102);
  EXPECT_FALSE(p0_->is_deleted());
  EXPECT_EQ(p0_->data(), p0_memory);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(At(*p0_, i), 1 + i);
}

TEST_F(DonationTest, DroppedBeforeRunningGivesDonationsBack) {
  {
    absl::StatusOr<std::unique_ptr<PreparedArguments>> prepared =
        PreparedArguments::Prepare(rules_, Args(), {});
    ASSERT_TRUE(prepared.ok());
    EXPECT_TRUE(p0_->is_deleted());
  }
  EXPECT_FALSE(p0_->is_deleted());
  EXPECT_FALSE(p1_->is_deleted());
  EXPECT_EQ(At(*p0_, 0), 1);
}

TEST_F(DonationTest, FailedRunDeletesDonatedArguments) {
  absl::StatusOr<std::unique_ptr<PreparedArguments>> prepared =
      PreparedArguments::Prepare(rules_, Args(), {0});
  ASSERT_TRUE(prepared.ok());
  (*prepared)->AbandonAfterFailedRun();
  prepared->reset();
  EXPECT_FALSE(p0_->is_deleted());  // copy-protected: untouched
  EXPECT_TRUE(p1_->is_deleted());   // donated
  EXPECT_FALSE(p3_->is_deleted());
}

TEST_F(DonationTest, FinishChecksTheOutputs) {
  absl::StatusOr<std::unique_ptr<PreparedArguments>> prepared =
      PreparedArguments::Prepare(rules_, Args(), {});
  ASSERT_TRUE(prepared.ok());
  std::vector<std::unique_ptr<Buffer>> too_few(2);
  EXPECT_THAT((*prepared)->Finish(std::move(too_few)).status().message(),
              HasSubstr("expects 3 output buffers"));
  std::vector<std::unique_ptr<Buffer>> missing(3);
  EXPECT_THAT((*prepared)->Finish(std::move(missing)).status().message(),
              HasSubstr("output {2} has no buffer"));
  std::vector<std::unique_ptr<Buffer>> superfluous(3);
  superfluous[0] = Filled("f32[4]", 0);
  superfluous[2] = Filled("f32[4]", 0);
  EXPECT_THAT((*prepared)->Finish(std::move(superfluous)).status().message(),
              HasSubstr("output {0} is backed by argument 0 (parameter 0 {})"));
  // Nothing changed: dropping it gives the donations back.
  prepared->reset();
  EXPECT_FALSE(p0_->is_deleted());
}

TEST_F(DonationTest, BorrowedDonationStaysBorrowed) {
  std::vector<float> memory = {5, 6, 7, 8};
  std::unique_ptr<Buffer> borrowed = *Buffer::Borrow(ParseShapeOrDie("f32[4]"), memory.data());
  absl::StatusOr<std::unique_ptr<PreparedArguments>> prepared =
      PreparedArguments::Prepare(rules_, {borrowed.get(), p1_.get(), p2_.get(), p3_.get()}, {});
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  absl::StatusOr<std::vector<std::unique_ptr<Buffer>>> outputs =
      (*prepared)->Finish(FakeRun(**prepared));
  ASSERT_TRUE(outputs.ok());
  EXPECT_EQ((*outputs)[0]->data(), memory.data());
  EXPECT_FALSE((*outputs)[0]->owns_memory());
  EXPECT_EQ(memory[0], 105);
  EXPECT_TRUE(borrowed->is_deleted());
}

TEST_F(DonationTest, PendingDonationRefusesOtherCalls) {
  absl::StatusOr<std::unique_ptr<PreparedArguments>> first =
      PreparedArguments::Prepare(rules_, Args(), {});
  ASSERT_TRUE(first.ok());
  // Another call (here: on another thread) that reads p0 meanwhile.
  absl::Status other;
  std::thread([&] {
    std::unique_ptr<Buffer> q0 = Filled("f32[4]", 0), q1 = Filled("s32[2]", 0);
    other =
        PreparedArguments::Prepare(rules_, {q0.get(), q1.get(), p3_.get(), p0_.get()}, {}).status();
  }).join();
  EXPECT_EQ(other.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(other.message(), HasSubstr("argument 3 (parameter 3 {})"));
}

TEST_F(DonationTest, ConcurrentCallsOnDistinctBuffers) {
  constexpr int kThreads = 4, kRounds = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        std::unique_ptr<Buffer> a = Filled("f32[4]", t), b = Filled("s32[2]", round);
        // p2 and p3 are shared by every call, read-only.
        absl::StatusOr<std::unique_ptr<PreparedArguments>> prepared =
            PreparedArguments::Prepare(rules_, {a.get(), b.get(), p2_.get(), p3_.get()}, {});
        if (!prepared.ok()) {
          failures.fetch_add(1);
          continue;
        }
        absl::StatusOr<std::vector<std::unique_ptr<Buffer>>> out =
            (*prepared)->Finish(FakeRun(**prepared));
        if (!out.ok() || At(*(*out)[0], 1) != t + 1 + 101 || At(*(*out)[1], 0) != 2 * round ||
            !a->is_deleted()) {
          failures.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_FALSE(p2_->is_deleted());
  EXPECT_EQ(At(*p2_, 0), 100);
}

// The aliasing document's increment, run by the interpreter on the memory the
// prepared arguments give, donated and copy-protected.
TEST(Donation, AliasingDocumentIncrement) {
  std::unique_ptr<HloModule> module = Parse(R"(
HloModule increment, input_output_alias={ {}: (0, {}, may-alias) }

ENTRY entry {
  %p = f32[] parameter(0)
  %c = f32[] constant(1)
  ROOT %out = f32[] add(%p, %c)
})");
  absl::StatusOr<DonationRules> rules = DonationRules::FromModule(*module);
  ASSERT_TRUE(rules.ok()) << rules.status();
  for (bool donate : {true, false}) {
    std::unique_ptr<Buffer> p = Filled("f32[]", 41);
    absl::flat_hash_set<int64_t> non_donatable;
    if (!donate) non_donatable.insert(0);
    absl::StatusOr<std::unique_ptr<PreparedArguments>> prepared =
        PreparedArguments::Prepare(*rules, {p.get()}, non_donatable);
    ASSERT_TRUE(prepared.ok()) << prepared.status();
    float* memory = static_cast<float*>((*prepared)->parameter_data(0));
    Literal arg(ParseShapeOrDie("f32[]"));
    arg.SetDouble(0, *memory);
    absl::StatusOr<Literal> result = Evaluate(*module, {arg});
    ASSERT_TRUE(result.ok()) << result.status();
    *static_cast<float*>((*prepared)->aliased_output_data(0)) =
        static_cast<float>(result->GetDouble(0));
    absl::StatusOr<std::vector<std::unique_ptr<Buffer>>> outputs =
        (*prepared)->Finish(std::vector<std::unique_ptr<Buffer>>(1));
    ASSERT_TRUE(outputs.ok()) << outputs.status();
    EXPECT_EQ(At(*(*outputs)[0], 0), 42);
    EXPECT_EQ(p->is_deleted(), donate);
    if (!donate) {
      EXPECT_EQ(At(*p, 0), 41);
    }
  }
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::runtime
