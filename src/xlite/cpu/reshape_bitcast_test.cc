#include "xlite/cpu/reshape_bitcast.h"

#include <string>

#include "gtest/gtest.h"
#include "xlite/cpu/cpu_test_util.h"
#include "xlite/passes/pass_test_util.h"

namespace xlite::cpu {
namespace {
namespace XLITE_UNITY_ID {

std::string Bitcasts(const std::string& text, bool* changed = nullptr) {
  return pass_test::RunPass<ReshapeToBitcast>(text, changed, /*then_dce=*/true,
                                              PrintOptions::Short());
}

// encoder_b8s128's shape: a row-major reshape feeding a dot shares its
// operand's buffer; a reshape between other layouts, and the root, stay.
constexpr char kReshapes[] = R"(
HloModule m
ENTRY e {
  x = f32[8,16,32] parameter(0)
  w = f32[32,8] parameter(1)
  flat = f32[128,32] reshape(x)
  d = f32[128,8] dot(flat, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[8,16,32]{1,2,0} copy(x)
  moved = f32[128,32] reshape(t)
  s = f32[128,32] add(moved, flat)
  r = f32[16,8,8] reshape(d)
  ROOT out = (f32[16,8,8], f32[128,32]) tuple(r, s)
})";

TEST(ReshapeToBitcast, RowMajorReshapesShareTheirOperandsBuffer) {
  bool changed = false;
  const std::string out = Bitcasts(kReshapes, &changed);
  EXPECT_TRUE(changed);
  EXPECT_NE(out.find("flat.bitcast = f32[128,32]{1,0} bitcast(x)"), std::string::npos) << out;
  EXPECT_NE(out.find("r.bitcast = f32[16,8,8]{2,1,0} bitcast(d)"), std::string::npos) << out;
  EXPECT_NE(out.find("moved = f32[128,32]{1,0} reshape(t)"), std::string::npos) << out;
  testing::ExpectAgreesWithInterpreter(kReshapes);
}

TEST(ReshapeToBitcast, RootsStay) {
  bool changed = true;
  Bitcasts(R"(
HloModule m
ENTRY e {
  x = f32[8,16] parameter(0)
  ROOT r = f32[128] reshape(x)
})",
           &changed);
  EXPECT_FALSE(changed);
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::cpu
