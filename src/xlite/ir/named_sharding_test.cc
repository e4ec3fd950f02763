// The NamedSharding rules on values no parser would build, and on sizes
// whose products overflow: errors, never a crash.
#include "xlite/ir/named_sharding.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"

namespace xlite {
namespace {
namespace XLITE_UNITY_ID {

ShardingMesh Mesh(std::vector<std::string> names, std::vector<int64_t> sizes) {
  ShardingMesh m;
  m.axis_names = std::move(names);
  m.axis_sizes = std::move(sizes);
  return m;
}

std::string ErrorOf(const NamedSharding& s) {
  absl::Status st = ValidateNamedSharding(s);
  return st.ok() ? "ok" : std::string(st.message());
}

TEST(ValidateNamedSharding, SubAxisProductsThatOverflowAreErrors) {
  // pre_size * size wraps to 0 in 64 bits; the check must not divide by it.
  NamedSharding s;
  s.mesh = Mesh({"a"}, {8});
  s.dims.push_back({{MeshAxisRef{0, int64_t{1} << 62, 4}}});
  EXPECT_EQ(ErrorOf(s),
            "sub-axis 'a':(4611686018427387904)4: pre-size 4611686018427387904 times size 4 "
            "must divide the axis size 8");
  s.dims[0].axes[0] = MeshAxisRef{0, 4, 2};
  EXPECT_EQ(ErrorOf(s), "ok");
}

TEST(ValidateShardingMesh, DeviceCountsThatOverflowAreErrors) {
  const int64_t big = int64_t{1} << 24;
  EXPECT_EQ(ValidateShardingMesh(Mesh({"a", "b", "c"}, {big, big, big})).message(),
            "mesh has more devices than a 64-bit count holds");
  EXPECT_TRUE(ValidateShardingMesh(Mesh({"a", "b"}, {big, big})).ok());
  ShardingMesh iota = Mesh({"a"}, {4});
  iota.device_ids_iota_reshape = {big, big, big, 4};
  EXPECT_EQ(ValidateShardingMesh(iota).message(),
            "mesh device_ids iota covers more devices than a 64-bit count holds");
}

TEST(ValidateShardingMesh, MaximalMeshesHaveNothingElse) {
  ShardingMesh m;
  m.maximal_device = 2;
  EXPECT_TRUE(ValidateShardingMesh(m).ok());
  m.axis_sizes = {2};
  EXPECT_EQ(ValidateShardingMesh(m).message(), "a maximal mesh has no axes or device list");
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite
