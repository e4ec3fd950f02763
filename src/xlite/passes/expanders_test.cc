#include "xlite/passes/expanders.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "xlite/eval/evaluator.h"
#include "xlite/eval/fake_data.h"
#include "xlite/ir/computation.h"
#include "xlite/passes/expander_test_util.h"
#include "xlite/text/parser.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

TEST(Expanders, RunInOrder) {
  HloPassPipeline pipeline("expanders");
  AddExpanderPasses(pipeline);
  ASSERT_TRUE(pipeline.Run(*std::make_unique<HloModule>("empty")).ok());
  std::vector<std::string> names;
  for (const PassRecord& r : pipeline.records()) names.push_back(r.pass);
  EXPECT_EQ(names,
            (std::vector<std::string>{"change-op-data-type", "batchnorm-expander", "rng-expander",
                                      "ragged-dot-rewriter", "scaled-dot-rewriter"}));
}

// One module with every op the expanders take: none is left, the results
// stay the interpreter's (rng bitwise).
TEST(Expanders, ExpandEveryOpTheyTake) {
  const std::string text = R"(
HloModule all

ENTRY e {
  lo = f32[] constant(-1)
  hi = f32[] constant(1)
  noise = f32[6,4] rng(lo, hi), distribution=rng_normal
  scale = f32[4] constant({1, 2, 0.5, 1})
  offset = f32[4] constant({0, 1, -1, 0})
  bn = (f32[6,4], f32[4], f32[4]) batch-norm-training(noise, scale, offset), epsilon=0.001, feature_index=1
  y = f32[6,4] get-tuple-element(bn), index=0
  rhs = f32[2,4,3] parameter(0)
  sizes = s32[2] constant({2, 3})
  ragged = f32[6,3] ragged-dot(y, rhs, sizes), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
  q = f8e4m3fn[6,4] convert(y)
  qs = f8e8m0fnu[6,2] constant({{1,2},{2,1},{4,1},{1,1},{0.5,1},{1,8}})
  w = f8e4m3fn[3,4] parameter(1)
  ws = f8e8m0fnu[] constant(2)
  scaled = f32[6,3] scaled-dot(q, w, qs, ws), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  a = f16[2,2] constant({{4, 2}, {2, 3}})
  l = f16[2,2] cholesky(a), lower=true
  ROOT t = (f32[6,3], f32[6,3], f16[2,2]) tuple(ragged, scaled, l)
}
)";
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "t.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<std::vector<Literal>> args = MakeFakeArguments(**module, FakeDataKind::kRandom, 1);
  ASSERT_TRUE(args.ok()) << args.status();
  absl::StatusOr<Literal> before = Evaluate(**module, *args);
  ASSERT_TRUE(before.ok()) << before.status();
  HloPassPipeline pipeline("expanders");
  AddExpanderPasses(pipeline);
  PipelineOptions options;
  options.verify_each_pass = true;
  pipeline.set_options(options);
  absl::StatusOr<bool> changed = pipeline.Run(**module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  for (const auto& c : (*module)->computations()) {
    for (const auto& i : c->instructions()) {
      const HloOpcode op = i->opcode();
      EXPECT_TRUE(op != HloOpcode::kRng && op != HloOpcode::kBatchNormTraining &&
                  op != HloOpcode::kRaggedDot && op != HloOpcode::kScaledDot &&
                  !(op == HloOpcode::kCholesky && i->shape().element_type() == PrimitiveType::F16))
          << i->name();
    }
  }
  absl::StatusOr<Literal> after = Evaluate(**module, *args);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(
      pass_test::CompareWithin(
          *before, *after, [](PrimitiveType t) { return t == PrimitiveType::F16 ? 2e-3 : 1e-4; }),
      "");
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
