// Shardy's attribute encodings (bytecode_sdy.cc) on a hand-built attribute
// table, and Shardy's ops in a VHLO program (conversion casts folded away).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "xlite/stablehlo/mlir_parser.h"
#include "xlite/stablehlo/printer.h"
#include "xlite/vhlo/bytecode_attributes.h"
#include "xlite/vhlo/bytecode_encoding.h"
#include "xlite/vhlo/upgrade.h"
#include "xlite/vhlo/vhlo_op_properties.h"

namespace xlite::vhlo::bytecode {
namespace {
namespace XLITE_UNITY_ID {

constexpr int kBuiltin = 0;
constexpr int kSdy = 1;

// An attribute table as MLIR bytecode lays it out: entries grouped by
// dialect, each a size with a custom-encoding flag.
class TableBuilder {
 public:
  // Entry `index` in the order added.
  int Add(int dialect, bool custom, const std::string& bytes) {
    entries_.push_back({dialect, custom, bytes});
    return static_cast<int>(entries_.size()) - 1;
  }
  int Text(const std::string& text) {  // a builtin attribute in its asm form
    EncodingWriter w;
    w.WriteNulTerminated(text);
    return Add(kBuiltin, false, w.bytes());
  }
  template <typename F>
  int Sdy(uint64_t code, F body) {
    EncodingWriter w;
    w.WriteVarInt(code);
    body(w);
    return Add(kSdy, true, w.bytes());
  }

  // Decodes entry `index` and returns its text, or the error.
  std::string Decode(int index) {
    EncodingWriter strings;
    strings.WriteVarInt(2);
    strings.WriteVarInt(2);  // "b\0", then "a\0": lengths in reverse order
    strings.WriteVarInt(2);
    strings.WriteBytes(std::string("a\0b\0", 4));
    strings_bytes_ = strings.bytes();
    EncodingWriter data, offsets;
    offsets.WriteVarInt(entries_.size());
    offsets.WriteVarInt(0);
    for (size_t i = 0; i < entries_.size(); ++i) {
      data.WriteBytes(entries_[i].bytes);
      offsets.WriteVarInt(entries_[i].dialect);
      offsets.WriteVarInt(1);
      offsets.WriteVarIntWithFlag(entries_[i].bytes.size(), entries_[i].custom);
    }
    data_bytes_ = data.bytes();
    offsets_bytes_ = offsets.bytes();
    auto reader = [&](const std::string& bytes, const char* where) {
      return EncodingReader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), 0, where,
                            &filename_);
    };
    StringTable table;
    EXPECT_TRUE(table.Read(reader(strings_bytes_, "strings")).ok());
    ReadBudget budget{1 << 20, 1 << 20};
    AttrTypeTable attrs(table, dialects_, resource_keys_, budget);
    absl::Status init =
        attrs.Initialize(reader(data_bytes_, "attributes"), reader(offsets_bytes_, "offsets"));
    if (!init.ok()) return std::string("init: ") + std::string(init.message());
    EncodingReader at = reader(offsets_bytes_, "test");
    absl::StatusOr<const mlir::Attribute*> a = attrs.Attribute(at, index);
    if (!a.ok()) return std::string("error: ") + std::string(a.status().message());
    return mlir::PrintAttribute(**a);
  }

 private:
  struct Entry {
    int dialect;
    bool custom;
    std::string bytes;
  };
  std::vector<Entry> entries_;
  std::vector<std::string> dialects_ = {"builtin", "sdy"};
  std::vector<std::string> resource_keys_;
  std::string filename_ = "t.mlir.bc";
  std::string strings_bytes_, data_bytes_, offsets_bytes_;
};

TEST(BytecodeSdyTest, ShardingsMeshesAndManualAxes) {
  TableBuilder t;
  const int a_string = t.Text("\"a\"");
  const int mesh_ref = t.Text("@mesh");
  const int sub = t.Sdy(3, [](EncodingWriter& w) {  // SubAxisInfo (2)2
    w.WriteSignedVarInt(2);
    w.WriteSignedVarInt(2);
  });
  const int axis_a = t.Sdy(4, [](EncodingWriter& w) {  // AxisRef "a"
    w.WriteVarInt(0);
    w.WriteVarIntWithFlag(0, false);
  });
  const int axis_b = t.Sdy(4, [&](EncodingWriter& w) {  // AxisRef "b":(2)2
    w.WriteVarInt(1);
    w.WriteVarIntWithFlag(sub, true);
  });
  const int open_dim = t.Sdy(5, [&](EncodingWriter& w) {  // {"a", "b":(2)2, ?}p1
    w.WriteVarInt(2);
    w.WriteVarInt(axis_a);
    w.WriteVarInt(axis_b);
    w.WriteByte(0);
    w.WriteVarIntWithFlag(1, true);
  });
  const int empty_dim = t.Sdy(5, [](EncodingWriter& w) {  // {}
    w.WriteVarInt(0);
    w.WriteByte(1);
    w.WriteVarIntWithFlag(0, false);
  });
  const int sharding = t.Sdy(6, [&](EncodingWriter& w) {  // TensorSharding v1
    w.WriteVarInt(mesh_ref);
    w.WriteVarInt(2);
    w.WriteVarInt(open_dim);
    w.WriteVarInt(empty_dim);
    w.WriteVarInt(0);
  });
  const int per_value = t.Sdy(7, [&](EncodingWriter& w) {
    w.WriteVarInt(1);
    w.WriteVarInt(sharding);
  });
  const int manual = t.Sdy(0, [&](EncodingWriter& w) {
    w.WriteVarInt(1);
    w.WriteVarInt(a_string);
  });
  const int mesh_axis_a = t.Sdy(1, [](EncodingWriter& w) {
    w.WriteVarInt(0);
    w.WriteSignedVarInt(2);
  });
  const int mesh_axis_b = t.Sdy(1, [](EncodingWriter& w) {
    w.WriteVarInt(1);
    w.WriteSignedVarInt(2);
  });
  const int mesh = t.Sdy(2, [&](EncodingWriter& w) {
    w.WriteVarInt(2);
    w.WriteVarInt(mesh_axis_a);
    w.WriteVarInt(mesh_axis_b);
    w.WriteVarInt(4);
    for (int id : {0, 2, 1, 3}) w.WriteSignedVarInt(id);
  });
  const int unreduced_v3 = t.Sdy(17, [&](EncodingWriter& w) {  // v3: unreduced=max
    w.WriteVarInt(mesh_ref);
    w.WriteVarInt(1);
    w.WriteVarInt(empty_dim);
    w.WriteVarInt(0);
    w.WriteVarInt(1);
    w.WriteVarInt(axis_a);
    w.WriteSignedVarInt(1);
  });
  const int inline_mesh = t.Sdy(15, [&](EncodingWriter& w) {  // v2 with an inline mesh
    w.WriteVarInt(mesh);
    w.WriteVarInt(0);
    w.WriteVarInt(1);
    w.WriteVarInt(axis_a);
    w.WriteVarInt(0);
  });
  EXPECT_EQ(t.Decode(sharding), "#sdy.sharding<@mesh, [{\"a\", \"b\":(2)2, ?}p1, {}]>");
  EXPECT_EQ(t.Decode(per_value),
            "#sdy.sharding_per_value<[<@mesh, [{\"a\", \"b\":(2)2, ?}p1, {}]>]>");
  EXPECT_EQ(t.Decode(manual), "#sdy<manual_axes{\"a\"}>");
  EXPECT_EQ(t.Decode(mesh), "#sdy.mesh<[\"a\"=2, \"b\"=2], device_ids=[0, 2, 1, 3]>");
  EXPECT_EQ(t.Decode(unreduced_v3), "#sdy.sharding<@mesh, [{}], unreduced=max{\"a\"}>");
  EXPECT_EQ(t.Decode(inline_mesh),
            "#sdy.sharding<mesh<[\"a\"=2, \"b\"=2], device_ids=[0, 2, 1, 3]>, [], "
            "replicated={\"a\"}>");
}

TEST(BytecodeSdyTest, ShardingRules) {
  TableBuilder t;
  auto dim = [&](std::vector<int64_t> factors) {
    return t.Sdy(8, [factors](EncodingWriter& w) {
      w.WriteVarInt(factors.size());
      for (int64_t f : factors) w.WriteSignedVarInt(f);
    });
  };
  const int i = dim({0}), j = dim({1}), ij = dim({0, 1});
  const int ij_map = t.Sdy(9, [&](EncodingWriter& w) {
    w.WriteVarInt(2);
    w.WriteVarInt(i);
    w.WriteVarInt(j);
  });
  const int merged_map = t.Sdy(9, [&](EncodingWriter& w) {
    w.WriteVarInt(1);
    w.WriteVarInt(ij);
  });
  const int scalar_map = t.Sdy(9, [](EncodingWriter& w) { w.WriteVarInt(0); });
  auto rule = [&](std::vector<int64_t> sizes, uint8_t custom, int extra_factor) {
    return t.Sdy(10, [=](EncodingWriter& w) {
      w.WriteVarInt(sizes.size());
      for (int64_t s : sizes) w.WriteSignedVarInt(s);
      w.WriteVarInt(1);
      w.WriteVarInt(ij_map);
      w.WriteVarInt(2);
      w.WriteVarInt(merged_map);
      w.WriteVarInt(scalar_map);
      w.WriteVarInt(1);  // reduction={j}
      w.WriteSignedVarInt(extra_factor);
      for (int k = 0; k < 3; ++k) w.WriteVarInt(0);
      w.WriteByte(custom);
    });
  };
  const int good = rule({8, 4}, 1, 1);
  const int bad_factor = rule({8, 4}, 0, 5);
  const int bad_bool = rule({8, 4}, 2, 1);
  EXPECT_EQ(t.Decode(good),
            "#sdy.op_sharding_rule<([i, j])->([ij], []) {i=8, j=4} reduction={j}, custom>");
  EXPECT_TRUE(absl::StrContains(t.Decode(bad_factor), "factor out of range"))
      << t.Decode(bad_factor);
  EXPECT_TRUE(absl::StrContains(t.Decode(bad_bool), "bad boolean byte 2")) << t.Decode(bad_bool);
}

TEST(BytecodeSdyTest, BadEntriesAreErrorsNamingTheOffset) {
  TableBuilder t;
  const int unknown = t.Sdy(99, [](EncodingWriter&) {});
  const int truncated = t.Sdy(6, [](EncodingWriter& w) { w.WriteVarInt(0); });
  const int not_sdy = t.Text("\"x\"");
  const int wrong_kind = t.Sdy(7, [&](EncodingWriter& w) {  // per-value of a string
    w.WriteVarInt(1);
    w.WriteVarInt(not_sdy);
  });
  const int bad_mesh = t.Sdy(2, [](EncodingWriter& w) {  // device ids not a permutation
    w.WriteVarInt(0);
    w.WriteVarInt(2);
    w.WriteSignedVarInt(0);
    w.WriteSignedVarInt(0);
  });
  EXPECT_TRUE(absl::StrContains(t.Decode(unknown), "unknown sdy attribute code 99"));
  EXPECT_TRUE(absl::StrContains(t.Decode(unknown), "t.mlir.bc: offset"));
  EXPECT_TRUE(absl::StrContains(t.Decode(truncated), "error:"));
  EXPECT_TRUE(absl::StrContains(t.Decode(wrong_kind), "expected an sdy tensor sharding"));
  EXPECT_TRUE(absl::StrContains(t.Decode(bad_mesh), "error:")) << t.Decode(bad_mesh);
}

TEST(BytecodeSdyTest, SdyOpPropertiesAreNamed) {
  const std::vector<PropertyName>* names = FindPropertyNames("sdy.manual_computation", 3);
  ASSERT_NE(names, nullptr);
  EXPECT_EQ((*names)[0].name, "in_shardings");
  EXPECT_EQ((*names)[1].name, "manual_axes");
  EXPECT_EQ((*names)[2].name, "out_shardings");
  names = FindPropertyNames("sdy.mesh", 2);
  ASSERT_NE(names, nullptr);
  EXPECT_EQ((*names)[0].name, "mesh");
  EXPECT_EQ((*names)[1].name, "sym_name");
}

// A VHLO function whose body goes through an sdy op, with the
// unrealized_conversion_casts JAX writes between VHLO and builtin tensors.
mlir::OwningOp MixedModule(const std::string& cast_result) {
  const std::string text = R"("builtin.module"() ({
  "sdy.mesh"() {mesh = #sdy.mesh<["a"=2]>, sym_name = "mesh"} : () -> ()
  "vhlo.func_v1"() ({
  ^bb0(%arg0: tensor<2xf32>):
    %0 = "builtin.unrealized_conversion_cast"(%arg0) : (tensor<2xf32>) -> )" +
                           cast_result + R"(
    %1 = "sdy.sharding_constraint"(%0) {sharding = #sdy.sharding<@mesh, [{"a"}]>} : ()" +
                           cast_result + R"() -> tensor<2xf32>
    %2 = "builtin.unrealized_conversion_cast"(%1) : (tensor<2xf32>) -> tensor<2xf32>
    "vhlo.return_v1"(%2) : (tensor<2xf32>) -> ()
  }) {function_type = (tensor<2xf32>) -> tensor<2xf32>, sym_name = "main", sym_visibility = ""} : () -> ()
}) : () -> ()
)";
  absl::StatusOr<mlir::OwningOp> m = mlir::ParseMlir(text, "t.mlir");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

TEST(BytecodeSdyTest, ConversionCastsAroundSdyOpsFoldAway) {
  mlir::OwningOp vhlo = MixedModule("tensor<2xf32>");
  ASSERT_NE(vhlo, nullptr);
  absl::StatusOr<mlir::OwningOp> out = VhloToStablehlo(*vhlo, Version{1, 10, 0});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::string printed = mlir::PrintMlir(**out);
  EXPECT_FALSE(absl::StrContains(printed, "unrealized_conversion_cast")) << printed;
  EXPECT_TRUE(absl::StrContains(printed, "%0 = \"sdy.sharding_constraint\"(%arg0)")) << printed;
  EXPECT_TRUE(absl::StrContains(printed, "\"func.return\"(%0)")) << printed;
}

TEST(BytecodeSdyTest, CastsThatChangeTypesAreRefused) {
  mlir::OwningOp vhlo = MixedModule("tensor<2xf64>");
  ASSERT_NE(vhlo, nullptr);
  absl::StatusOr<mlir::OwningOp> out = VhloToStablehlo(*vhlo, Version{1, 10, 0});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::StrContains(out.status().message(), "unrealized_conversion_cast"))
      << out.status();
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::vhlo::bytecode
