// Named-mesh shardings: XLA's parser-test strings round-trip byte-exact, and
// every rule XLA's NamedSharding enforces is an error naming place and rule.
#include <string>

#include "gtest/gtest.h"
#include "xlite/text/parser.h"
#include "xlite/text/printer.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

// The sharding= text of `p` after a parse and a long-form print, or the error.
std::string Reprinted(const std::string& sharding, const std::string& shape = "f32[8,8]") {
  const std::string text = "HloModule m\nENTRY e {\n  ROOT p = " + shape +
                           " parameter(0), sharding=" + sharding + "\n}\n";
  auto m = ParseHloModule(text, "t.hlo");
  if (!m.ok()) return std::string(m.status().message());
  const std::string out = PrintModule(**m, PrintOptions::Long());
  const size_t at = out.find("sharding=");
  if (at == std::string::npos) return "no sharding printed";
  return out.substr(at + 9, out.find('\n', at) - at - 9);
}

TEST(NamedSharding, XlaParserTestStringsRoundTrip) {
  // xla/hlo/parser/hlo_parser_test.cc's ParseNamedSharding* cases.
  for (const char* s : {
           "{mesh['data'=2,'model'=2], [{}, {'model'}]}",
           "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'a'}, {'b'}]}",
           "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'a'}, {'c', 'b'}]}",
           "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'b', 'a'}, {'c', 'd', ?}]}",
           "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'a'}, {'b':(2)2}]}",
           "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'b':(2)2}, {'d':(4)2, 'c'}]}",
           "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'b':(2)2}, {'d':(4)2, 'c', ?}]}",
           "{mesh['a'=2,'b'=4,'c'=4,'d'=2], device_ids=([4,16]T(1,0)), [{'a'}]}",
           "{mesh['x'=2,'y'=2], device_ids=(0,2,1,3), [{'x'}]}",
           "{mesh[], replicated}",
           "{mesh['a'=2,'b'=4], replicated}",
           "{mesh['a'=2,'b'=4], [{'a'}], replicated={'b'}}",
           "{maximal_mesh[device_id=5]}",
           "{mesh['a.b'=2,'<axis> def'=4,'z/w'=2], [{'a.b'}, {'<axis> def':(2)2, 'z/w'}]}",
           "{mesh['a'=2,'b'=4], unreduced}",
           "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{}, {'b'}], unreduced={'d':(4)2}}",
           "{mesh['a'=2,'b'=4], manual}",
           "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'a'}], manual={'d':(4)2}}",
           "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'a'}], replicated={'c'}, unreduced={'d':(4)2}, "
           "manual={'b':(2)2}, metadata={{op_name=\"foo\"}, {op_name=\"bar\"}}}",
           "{mesh['a'=2,'b'=4], replicated, metadata={{op_name=\"foo\"}}}",
           "{mesh['x'=2], [{}], unreduced=max{'x'}}",
           "{mesh['x'=2,'y'=2], unreduced=max{'x', 'y'}}",
       }) {
    EXPECT_EQ(Reprinted(s), s);
  }
  const std::string tuple4 = "(f32[8,8], f32[8,8], f32[8,8], f32[8,8])";
  for (const char* s : {
           "{{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'d', 'c'}, {'a', 'b'}]}, "
           "{mesh['a'=2,'b'=4,'c'=3,'d'=8], replicated}, "
           "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'d':(2)2, 'b'}, {'a', ?}], unreduced={'c'}}, "
           "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'d', 'c'}, {'a', 'b'}], "
           "metadata={{op_name=\"foo\"}, {op_name=\"bar\"}}}}",
           "{{replicated}, {mesh['a'=2,'b'=4], replicated}, {maximal device=5}, "
           "{maximal_mesh[device_id=5]}}",
       }) {
    EXPECT_EQ(Reprinted(s, tuple4), s);
  }
  EXPECT_EQ(Reprinted("{{mesh['a'=2,'b'=2], [{'a'}, {}]}, {devices=[2,2]<=[4] "
                      "last_tile_dim_replicate}}",
                      "(f32[8,8], f32[8,8])"),
            "{{mesh['a'=2,'b'=2], [{'a'}, {}]}, {devices=[2,2]<=[4] last_tile_dim_replicate}}");
}

TEST(NamedSharding, ParsesIntoTheIr) {
  auto m = ParseHloModule(
      "HloModule m\nENTRY e {\n  ROOT p = f32[8,8] parameter(0), "
      "sharding={mesh['a'=2,'b'=4], [{'b':(2)2, ?}, {}], unreduced=min{'a'}}\n}\n",
      "t.hlo");
  ASSERT_TRUE(m.ok()) << m.status();
  const HloSharding& s = *(*m)->entry_computation()->root_instruction()->attrs().sharding;
  ASSERT_EQ(s.kind, HloSharding::Kind::kNamed);
  const NamedSharding& n = *s.named;
  EXPECT_EQ(n.mesh.axis_names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(n.mesh.axis_sizes, (std::vector<int64_t>{2, 4}));
  ASSERT_EQ(n.dims.size(), 2u);
  EXPECT_EQ(n.dims[0].axes, (std::vector<MeshAxisRef>{{1, 2, 2}}));
  EXPECT_FALSE(n.dims[0].is_closed);
  EXPECT_TRUE(n.dims[1].is_closed);
  EXPECT_EQ(n.unreduced_axes, (std::vector<MeshAxisRef>{{0, 1, 0}}));
  EXPECT_EQ(n.unreduced_reduction, NamedSharding::Reduction::kMin);
}

TEST(NamedSharding, InvalidShardingsNamePlaceAndRule) {
  const std::string at = "t.hlo:3:45: ";
  EXPECT_EQ(Reprinted("{mesh['a'=2,'a'=4], [{'a'}]}"),
            at + "invalid mesh: mesh axis name 'a' is used twice");
  EXPECT_EQ(Reprinted("{mesh['0'=2], [{'0'}]}"),
            at + "invalid mesh: mesh axis name '0' is an integer, which would read as an axis "
                 "index");
  EXPECT_EQ(Reprinted("{mesh['a'=2,'b'=2], device_ids=(0,1,2), [{'a'}]}"),
            at + "invalid mesh: mesh has 4 devices but device_ids lists 3");
  EXPECT_EQ(Reprinted("{mesh['a'=2,'b'=2], device_ids=(0,1,1,3), [{'a'}]}"),
            at + "invalid mesh: mesh device_ids must be a permutation of 0..3");
  EXPECT_EQ(Reprinted("{mesh['a'=2,'b'=2], device_ids=(0,1,2,3), [{'a'}]}"),
            at + "invalid mesh: mesh device_ids are in iota order; XLA writes that mesh without "
                 "device_ids");
  EXPECT_EQ(Reprinted("{mesh['a'=2,'b'=2], device_ids=([8]), [{'a'}]}"),
            at + "invalid mesh: mesh has 4 devices but its device_ids iota covers 8");
  EXPECT_EQ(Reprinted("{mesh['a'=2], [{'z'}]}"), "t.hlo:3:60: the mesh has no axis 'z'");
  EXPECT_EQ(Reprinted("{mesh['a'=8], [{'a':(2)8}]}"),
            at + "invalid named sharding: sub-axis 'a':(2)8 must be smaller than its axis "
                 "(size 8)");
  EXPECT_EQ(Reprinted("{mesh['a'=8], [{'a':(4)4}]}"),
            at + "invalid named sharding: sub-axis 'a':(4)4: pre-size 4 times size 4 must "
                 "divide the axis size 8");
  EXPECT_EQ(Reprinted("{mesh['a'=8], [{'a':(4611686018427387904)4}]}"),  // product wraps to 0
            at + "invalid named sharding: sub-axis 'a':(4611686018427387904)4: pre-size "
                 "4611686018427387904 times size 4 must divide the axis size 8");
  EXPECT_EQ(Reprinted("{mesh['a'=16777216,'b'=16777216,'c'=16777216], replicated}"),
            at + "invalid mesh: mesh has more devices than a 64-bit count holds");
  EXPECT_EQ(Reprinted("{mesh['a'=8], [{'a':(1)1}]}"),
            at + "invalid named sharding: sub-axis 'a':(1)1 must have a size above 1");
  EXPECT_EQ(Reprinted("{mesh['a'=2,'b'=2], [{'a'}, {'a'}]}"),
            at + "invalid named sharding: axis 'a' overlaps 'a'; each part of a mesh axis may "
                 "be used once");
  EXPECT_EQ(Reprinted("{mesh['a'=8], [{'a':(1)4}, {'a':(2)2}]}"),
            at + "invalid named sharding: axis 'a':(2)2 overlaps 'a':(1)4; each part of a mesh "
                 "axis may be used once");
  EXPECT_EQ(Reprinted("{mesh['a'=8], [{'a':(1)2, 'a':(2)2}]}"),
            at + "invalid named sharding: dimension 0 lists 'a':(1)2, 'a':(2)2, which merge "
                 "into one sub-axis and must be written so");
  EXPECT_EQ(Reprinted("{mesh['a'=2,'b'=2], [{}], replicated={'b', 'a'}}"),
            at + "invalid named sharding: replicated axes must be sorted by mesh axis, then "
                 "sub-axis pre-size; 'a' comes after 'b'");
  EXPECT_EQ(Reprinted("{mesh['a'=2], [{'a'}], unreduced=avg{'a'}}"),
            "t.hlo:3:77: unknown unreduced reduction 'avg'; expected sum, max or min");
  EXPECT_EQ(Reprinted("{mesh['a'=2], replicated, [{'a'}]}"),
            at + "a bare replicated, unreduced or manual covers the whole sharding and takes no "
                 "other dimension or axis list");
  EXPECT_EQ(Reprinted("{mesh['a'=2], [{'a'}], [{}]}"),
            "t.hlo:3:67: named sharding gives the dimension list [...] more than once");
  EXPECT_EQ(Reprinted("{mesh['a'=2], [{?, 'a'}]}"), "t.hlo:3:61: expected '}'");
  EXPECT_EQ(Reprinted("{mesh['a'=2], shards={'a'}}"),
            "t.hlo:3:58: unknown named sharding field 'shards'; expected [...], replicated, "
            "unreduced, manual or metadata");
  EXPECT_EQ(Reprinted("{mesh['a=2], [{}]}"), "t.hlo:3:50: unterminated mesh axis name");
  EXPECT_EQ(Reprinted("{maximal_mesh[device_id=1], [{}]}"),
            at + "a maximal_mesh sharding takes no dimension or axis lists");
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
