#include "xlite/text/sdy_attributes.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace xlite::sdy {
namespace {
namespace XLITE_UNITY_ID {

std::string Canonical(absl::string_view text) {
  absl::StatusOr<Attr> a = ParseAttrText(text);
  if (!a.ok()) return std::string("error: ") + std::string(a.status().message());
  return Print(*a);
}

std::string ErrorOf(absl::string_view text) {
  absl::StatusOr<Attr> a = ParseAttrText(text);
  return a.ok() ? "parsed" : std::string(a.status().message());
}

// Every attribute prints as Shardy does and reads back to itself.
TEST(SdyAttrTest, CanonicalTextRoundTrips) {
  const char* kCanonical[] = {
      "#sdy.mesh<[\"a\"=2, \"b\"=4]>",
      "#sdy.mesh<[\"a\"=2, \"b\"=2], device_ids=[3, 2, 1, 0]>",
      "#sdy.mesh<[]>",
      "#sdy.mesh<[], device_ids=[5]>",
      "#sdy.sharding<@mesh, [{\"a\"}, {}]>",
      "#sdy.sharding<@mesh, [{\"a\", ?}, {?}]>",
      "#sdy.sharding<@mesh, [{\"a\":(1)2, \"b\"}p1, {}p0], replicated={\"a\":(2)2}>",
      "#sdy.sharding<@mesh, [], replicated={\"a\"}, unreduced={\"b\"}>",
      "#sdy.sharding<@mesh, [{}], unreduced=max{\"b\"}>",
      "#sdy.sharding<mesh<[\"x\"=4]>, [{\"x\"}]>",
      "#sdy.sharding<@\"my mesh\", [{}]>",
      "#sdy.sharding_per_value<[<@mesh, [{\"a\"}, {}]>, <@mesh, []>]>",
      "#sdy.sharding_per_value<[]>",
      "#sdy<manual_axes{\"a\", \"b\"}>",
      "#sdy<manual_axes{}>",
      "#sdy<axis_ref_list{\"a\", \"b\":(2)2}>",
      "#sdy<list_of_axis_ref_lists[{\"b\", \"c\"}, {}, {\"d\"}]>",
      "#sdy<all_to_all_param_list[{\"b\"}: 0->2, {\"c\"}: 1->3]>",
      "#sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=8, j=4, k=2} reduction={j}>",
      "#sdy.op_sharding_rule<([i, j])->([k, l], [m], []) {i=64, j=64, k=64, l=64, m=64}, custom>",
      "#sdy.op_sharding_rule<([ij, k])->([i, jk]) {i=2, j=4, k=8} need_replication={i} "
      "permutation={k} blocked_propagation={j}>",
      "#sdy<mesh_axis\"a\"=2>",
      "#sdy<sub_axis_info(2)4>",
      "#sdy<axis_ref\"a\":(1)2>",
      "#sdy<dimension_sharding{\"a\", ?}p3>",
      "#sdy<tensor_mapping[i, jk]>",
      "#sdy<all_to_all_param{\"a\"}: 0->1>",
  };
  for (const char* text : kCanonical) {
    EXPECT_EQ(Canonical(text), text);
  }
}

TEST(SdyAttrTest, SpellingsAreNormalized) {
  // Spacing, and MLIR's #sdy.name<...> for the undotted forms.
  EXPECT_EQ(Canonical("#sdy.sharding< @mesh ,[ {\"a\" , ?} ,{ } ] >"),
            "#sdy.sharding<@mesh, [{\"a\", ?}, {}]>");
  EXPECT_EQ(Canonical("#sdy.manual_axes<{\"a\"}>"), "#sdy<manual_axes{\"a\"}>");
  EXPECT_EQ(Canonical("#sdy.op_sharding_rule<([i,j],[j,k])->([i,k]) {i=8,j=4,k=2}, custom>"),
            "#sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=8, j=4, k=2}, custom>");
}

TEST(SdyAttrTest, EscapedTextFromFrontendAttributesReads) {
  // As XLA writes them in HLO frontend attributes and JAX in strings.
  EXPECT_EQ(Canonical("#sdy.sharding<@mesh, [{\\\"a\\\"}, {}]>"),
            "#sdy.sharding<@mesh, [{\"a\"}, {}]>");
  EXPECT_EQ(Canonical("#sdy.sharding<@mesh, [{\"a\\22b\"}]>"),
            "#sdy.sharding<@mesh, [{\"a\\\"b\"}]>");
}

TEST(SdyAttrTest, FactorNames) {
  EXPECT_EQ(FactorName(0), "i");
  EXPECT_EQ(FactorName(17), "z");
  EXPECT_EQ(FactorName(18), "z_1");
  EXPECT_EQ(FactorName(20), "z_3");
  absl::StatusOr<OpShardingRule> r = ParseAttrTextAs<OpShardingRule>(
      "#sdy.op_sharding_rule<([i, z_1])->([z_1]) {i=1, j=1, k=1, l=1, m=1, n=1, o=1, p=1, q=1, "
      "r=1, s=1, t=1, u=1, v=1, w=1, x=1, y=1, z=1, z_1=4}>",
      "rule");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->operands[0].dims[1].factors, std::vector<int64_t>{18});
  EXPECT_EQ(r->factor_sizes.size(), 19u);
}

TEST(SdyAttrTest, StructContents) {
  absl::StatusOr<TensorSharding> s = ParseAttrTextAs<TensorSharding>(
      "#sdy.sharding<@m, [{\"a\", \"b\":(2)2, ?}p2, {}], replicated={\"c\"}>", "sharding");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->mesh_name, "m");
  ASSERT_EQ(s->dims.size(), 2u);
  EXPECT_FALSE(s->dims[0].is_closed);
  EXPECT_EQ(s->dims[0].priority, 2);
  ASSERT_EQ(s->dims[0].axes.size(), 2u);
  EXPECT_EQ(s->dims[0].axes[1].name, "b");
  EXPECT_EQ(s->dims[0].axes[1].sub_axis, (SubAxisInfo{2, 2}));
  EXPECT_TRUE(s->dims[1].is_closed);
  EXPECT_EQ(s->replicated.size(), 1u);
}

TEST(SdyAttrTest, BadTextIsAnErrorNamingTheProblem) {
  EXPECT_TRUE(absl::StrContains(ErrorOf("#sdy.sharding<@m, [{\"a\"}, {?, \"b\"}]>"),
                                "'?' must be the last entry"));
  EXPECT_TRUE(absl::StrContains(ErrorOf("#sdy.mesh<[\"a\"=2, \"a\"=2]>"), "appears twice"));
  EXPECT_TRUE(absl::StrContains(ErrorOf("#sdy.mesh<[\"a\"=2], device_ids=[0, 0]>"), "permutation"));
  EXPECT_TRUE(absl::StrContains(ErrorOf("#sdy.mesh<[\"a\"=0]>"), "must be positive"));
  EXPECT_TRUE(absl::StrContains(ErrorOf("#sdy.frobnicate<>"), "unknown sdy attribute"));
  EXPECT_TRUE(absl::StrContains(ErrorOf("#sdy.op_sharding_rule<([i])->([j]) {i=2}>"),
                                "factor j has no size"));
  EXPECT_TRUE(absl::StrContains(ErrorOf("#sdy.op_sharding_rule<([i])->([i]) {j=2}>"),
                                "expected factor i next"));
  EXPECT_TRUE(
      absl::StrContains(ErrorOf("#sdy.sharding<@m, [{\"a\"}]> trailing"), "unexpected text"));
  EXPECT_TRUE(absl::StrContains(ErrorOf("#sdy.sharding<@m, [{\"a}]>"), "unterminated string"));
  EXPECT_FALSE(ParseAttrTextAs<Mesh>("#sdy<manual_axes{}>", "#sdy.mesh").ok());
}

TEST(SdyAttrTest, MeshTables) {
  absl::StatusOr<MeshTable> t = ParseMeshTable(
      "{mesh = #sdy.mesh<[\"x\"=2, \"y\"=4]>, \"m 2\" = #sdy.mesh<[], device_ids=[1]>}");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->size(), 2u);
  EXPECT_EQ(t->at("mesh").TotalSize(), 8);
  EXPECT_EQ(PrintMeshTable(*t),
            "{\"m 2\" = #sdy.mesh<[], device_ids=[1]>, mesh = #sdy.mesh<[\"x\"=2, \"y\"=4]>}");
  // XLA's frontend attribute, escaped once more inside a JAX string.
  absl::StatusOr<MeshTable> escaped = ParseMeshTable("{mesh = #sdy.mesh<[\\\"a\\\"=2]>}");
  ASSERT_TRUE(escaped.ok()) << escaped.status();
  EXPECT_EQ(escaped->at("mesh").axes[0].name, "a");
  EXPECT_FALSE(ParseMeshTable("{mesh = #sdy.mesh<[]>, mesh = #sdy.mesh<[]>}").ok());
  EXPECT_FALSE(ParseMeshTable("{mesh = #sdy<manual_axes{}>}").ok());
}

MeshTable Meshes() {
  MeshTable t;
  t["mesh"] = *ParseAttrTextAs<Mesh>("#sdy.mesh<[\"data\"=2, \"model\"=4]>", "mesh");
  t["ids"] =
      *ParseAttrTextAs<Mesh>("#sdy.mesh<[\"a\"=2, \"b\"=2], device_ids=[0, 2, 1, 3]>", "mesh");
  t["max"] = *ParseAttrTextAs<Mesh>("#sdy.mesh<[], device_ids=[3]>", "mesh");
  t["empty"] = *ParseAttrTextAs<Mesh>("#sdy.mesh<[]>", "mesh");
  return t;
}

HloSharding Convert(absl::string_view text, const std::vector<std::string>& manual = {}) {
  absl::StatusOr<TensorSharding> s = ParseAttrTextAs<TensorSharding>(text, "sharding");
  EXPECT_TRUE(s.ok()) << s.status();
  absl::StatusOr<HloSharding> h = ToHloSharding(*s, Meshes(), manual);
  EXPECT_TRUE(h.ok()) << h.status();
  return h.ok() ? *h : HloSharding();
}

TEST(SdyToHloShardingTest, NamedShardingContents) {
  HloSharding h = Convert("#sdy.sharding<@mesh, [{}, {\"data\", \"model\":(2)2}]>");
  ASSERT_EQ(h.kind, HloSharding::Kind::kNamed);
  const NamedSharding& n = *h.named;
  EXPECT_EQ(n.mesh.axis_names, (std::vector<std::string>{"data", "model"}));
  EXPECT_EQ(n.mesh.axis_sizes, (std::vector<int64_t>{2, 4}));
  EXPECT_TRUE(n.mesh.device_ids.empty());
  ASSERT_EQ(n.dims.size(), 2u);
  EXPECT_TRUE(n.dims[0].axes.empty());
  ASSERT_EQ(n.dims[1].axes.size(), 2u);
  EXPECT_EQ(n.dims[1].axes[0], (MeshAxisRef{0, 1, 0}));
  EXPECT_EQ(n.dims[1].axes[1], (MeshAxisRef{1, 2, 2}));
  EXPECT_TRUE(n.replicated_axes.empty() && n.unreduced_axes.empty() && n.manual_axes.empty());
}

TEST(SdyToHloShardingTest, OpenDimsReplicatedUnreducedAndDeviceIds) {
  HloSharding h = Convert("#sdy.sharding<@ids, [{\"a\", ?}, {?}], replicated={\"b\"}>");
  ASSERT_EQ(h.kind, HloSharding::Kind::kNamed);
  EXPECT_EQ(h.named->mesh.device_ids, (std::vector<int64_t>{0, 2, 1, 3}));
  EXPECT_FALSE(h.named->dims[0].is_closed);
  EXPECT_FALSE(h.named->dims[1].is_closed);
  EXPECT_EQ(h.named->replicated_axes, (std::vector<MeshAxisRef>{{1, 1, 0}}));
  HloSharding u = Convert("#sdy.sharding<@mesh, [{}, {}], unreduced={\"model\"}>");
  EXPECT_EQ(u.named->unreduced_axes, (std::vector<MeshAxisRef>{{1, 1, 0}}));
}

TEST(SdyToHloShardingTest, FullyReplicatedHasNoDimensions) {
  // As XLA's NamedSharding: {mesh[...], replicated}.
  HloSharding h = Convert("#sdy.sharding<@mesh, [{}, {}]>");
  ASSERT_EQ(h.kind, HloSharding::Kind::kNamed);
  EXPECT_TRUE(h.named->dims.empty());
}

TEST(SdyToHloShardingTest, MaximalAndEmptyMeshes) {
  HloSharding m = Convert("#sdy.sharding<@max, []>");
  ASSERT_EQ(m.kind, HloSharding::Kind::kNamed);
  EXPECT_EQ(m.named->mesh.maximal_device, 3);
  HloSharding e = Convert("#sdy.sharding<@empty, [{}, {}]>");
  ASSERT_EQ(e.kind, HloSharding::Kind::kNamed);
  EXPECT_TRUE(e.named->mesh.axis_names.empty());
  EXPECT_FALSE(e.named->mesh.maximal_device.has_value());
}

TEST(SdyToHloShardingTest, ManualAxesMoveOutOfTheDimensions) {
  // XLA's SPMDFullToShardShape sharding for in_sharding [{"data"}, {"model"}]
  // with manual_axes={"data"}: [{}, {model}], manual={data}.
  HloSharding h = Convert("#sdy.sharding<@mesh, [{\"data\"}, {\"model\"}]>", {"data"});
  ASSERT_EQ(h.kind, HloSharding::Kind::kNamed);
  ASSERT_EQ(h.named->dims.size(), 2u);
  EXPECT_TRUE(h.named->dims[0].axes.empty());
  EXPECT_EQ(h.named->dims[1].axes, (std::vector<MeshAxisRef>{{1, 1, 0}}));
  EXPECT_EQ(h.named->manual_axes, (std::vector<MeshAxisRef>{{0, 1, 0}}));
  // A replicated manual axis is manual now.
  HloSharding r = Convert("#sdy.sharding<@mesh, [{}, {}], replicated={\"model\"}>", {"model"});
  EXPECT_TRUE(r.named->replicated_axes.empty());
  EXPECT_EQ(r.named->manual_axes, (std::vector<MeshAxisRef>{{1, 1, 0}}));
}

TEST(SdyToHloShardingTest, InvalidShardingsAreErrors) {
  auto error = [](absl::string_view text) {
    absl::StatusOr<TensorSharding> s = ParseAttrTextAs<TensorSharding>(text, "sharding");
    EXPECT_TRUE(s.ok()) << s.status();
    absl::StatusOr<HloSharding> h = ToHloSharding(*s, Meshes());
    return h.ok() ? std::string("ok") : std::string(h.status().message());
  };
  EXPECT_TRUE(absl::StrContains(error("#sdy.sharding<@nope, [{}]>"), "no mesh @nope"));
  EXPECT_TRUE(absl::StrContains(error("#sdy.sharding<@mesh, [{\"x\"}]>"), "unknown mesh axis"));
  // XLA's NamedSharding rules (ValidateNamedSharding), naming the sharding.
  EXPECT_EQ(error("#sdy.sharding<@mesh, [{\"data\"}, {\"data\"}]>"),
            "axis 'data' overlaps 'data'; each part of a mesh axis may be used once in "
            "#sdy.sharding<@mesh, [{\"data\"}, {\"data\"}]>");
  EXPECT_TRUE(absl::StrContains(error("#sdy.sharding<@mesh, [{\"model\":(1)2}, {\"model\":(1)2}]>"),
                                "overlaps"));
  EXPECT_TRUE(absl::StrContains(error("#sdy.sharding<@mesh, [{\"model\":(3)2}]>"),
                                "must divide the axis size 4"));
  EXPECT_TRUE(absl::StrContains(error("#sdy.sharding<@mesh, [{\"model\":(1)4}]>"),
                                "must be smaller than its axis"));
  EXPECT_TRUE(absl::StrContains(error("#sdy.sharding<@mesh, [{\"model\":(1)2, \"model\":(2)2}]>"),
                                "merge into one sub-axis"));
  EXPECT_TRUE(
      absl::StrContains(error("#sdy.sharding<@mesh, [{}], replicated={\"model\", \"data\"}>"),
                        "replicated axes must be sorted"));
  EXPECT_TRUE(absl::StrContains(error("#sdy.sharding<@mesh, [{\"data\"}], unreduced={\"data\"}>"),
                                "overlaps"));
  std::vector<int64_t> dims = {8};
  absl::StatusOr<TensorSharding> s =
      ParseAttrTextAs<TensorSharding>("#sdy.sharding<@mesh, [{}, {}]>", "sharding");
  EXPECT_FALSE(Verify(*s, Meshes(), &dims).ok());
}

TEST(SdyLocalDimensionsTest, SplitsOverManualAxesOnly) {
  const Mesh mesh = Meshes().at("mesh");
  absl::StatusOr<TensorSharding> s = ParseAttrTextAs<TensorSharding>(
      "#sdy.sharding<@mesh, [{\"data\"}, {\"model\"}]>", "sharding");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*LocalDimensions(*s, mesh, {"data"}, {16, 8}), (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(*LocalDimensions(*s, mesh, {"data", "model"}, {16, 8}), (std::vector<int64_t>{8, 2}));
  absl::StatusOr<TensorSharding> both = ParseAttrTextAs<TensorSharding>(
      "#sdy.sharding<@mesh, [{\"data\", \"model\"}, {}]>", "sharding");
  EXPECT_EQ(*LocalDimensions(*both, mesh, {"data", "model"}, {16, 8}),
            (std::vector<int64_t>{2, 8}));
  EXPECT_FALSE(LocalDimensions(*s, mesh, {"data", "model"}, {16, 6}).ok());  // 6 % 4
  EXPECT_FALSE(LocalDimensions(*s, mesh, {"data"}, {16}).ok());              // rank
  // A manual axis after a free one is not a prefix: refused.
  absl::StatusOr<TensorSharding> t =
      ParseAttrTextAs<TensorSharding>("#sdy.sharding<@mesh, [{\"model\", \"data\"}]>", "sharding");
  EXPECT_FALSE(LocalDimensions(*t, mesh, {"data"}, {8}).ok());
  // An axis used twice is refused before its shard count is taken (the
  // count of a large axis repeated would overflow).
  Mesh big;
  big.axes = {{"a", int64_t{1} << 20}};
  absl::StatusOr<TensorSharding> twice = ParseAttrTextAs<TensorSharding>(
      "#sdy.sharding<mesh<[\"a\"=1048576]>, [{\"a\", \"a\", \"a\", \"a\"}]>", "sharding");
  ASSERT_TRUE(twice.ok()) << twice.status();
  absl::StatusOr<std::vector<int64_t>> dims = LocalDimensions(*twice, big, {"a"}, {8});
  ASSERT_FALSE(dims.ok());
  EXPECT_TRUE(absl::StrContains(dims.status().message(), "overlaps")) << dims.status();
}

TEST(SdyToHloShardingTest, UnreducedReductionIsKept) {
  HloSharding h = Convert("#sdy.sharding<@mesh, [{}, {}], unreduced=max{\"model\"}>");
  ASSERT_EQ(h.kind, HloSharding::Kind::kNamed);
  EXPECT_EQ(h.named->unreduced_reduction, NamedSharding::Reduction::kMax);
  EXPECT_EQ(
      Convert("#sdy.sharding<@mesh, [{}], unreduced=min{\"data\"}>").named->unreduced_reduction,
      NamedSharding::Reduction::kMin);
  EXPECT_EQ(Convert("#sdy.sharding<@mesh, [{}], unreduced={\"data\"}>").named->unreduced_reduction,
            NamedSharding::Reduction::kSum);
}

TEST(SdyToHloShardingTest, MeshesXlaCannotSpellAreErrors) {
  // Shardy takes any axis name; XLA's mesh['0'=2] would read '0' as an axis
  // index, so the conversion refuses it (reading the sdy text does not).
  absl::StatusOr<TensorSharding> s =
      ParseAttrTextAs<TensorSharding>("#sdy.sharding<mesh<[\"0\"=2]>, [{\"0\"}]>", "sharding");
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<HloSharding> h = ToHloSharding(*s, {});
  ASSERT_FALSE(h.ok());
  EXPECT_TRUE(absl::StrContains(h.status().message(), "mesh axis name '0' is an integer"))
      << h.status();
}

TEST(SdyToHloShardingTest, ManualAxesFollowTheMeshOrder) {
  absl::StatusOr<TensorSharding> s = ParseAttrTextAs<TensorSharding>(
      "#sdy.sharding<@mesh, [{\"data\"}, {\"model\"}]>", "sharding");
  ASSERT_TRUE(s.ok());
  absl::StatusOr<HloSharding> h = ToHloSharding(*s, Meshes(), {"model", "data"});
  ASSERT_FALSE(h.ok());
  EXPECT_TRUE(absl::StrContains(h.status().message(), "manual axes must be sorted")) << h.status();
  EXPECT_TRUE(absl::StrContains(h.status().message(), "in #sdy.sharding<@mesh")) << h.status();
  EXPECT_TRUE(ToHloSharding(*s, Meshes(), {"data", "model"}).ok());
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::sdy
