#include "xlite/hostlib/custom_call_registry.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace xlite::hostlib {
namespace {
namespace XLITE_UNITY_ID {

TEST(CustomCallRegistry, HoldsJaxlibsLapackTargets) {
  const std::vector<std::string> targets = CustomCallRegistry::Global().Targets();
  EXPECT_EQ(targets.size(), 60u);  // 15 routines x s, d, c, z
  for (const char* name :
       {"lapack_sgetrf_ffi", "lapack_zgetrf_ffi", "lapack_dorgqr_ffi", "lapack_cungqr_ffi",
        "lapack_sormqr_ffi", "lapack_zunmqr_ffi", "lapack_dsyevd_ffi", "lapack_cheevd_ffi",
        "lapack_ssytrd_ffi", "lapack_zhetrd_ffi", "lapack_dgesdd_ffi", "lapack_cgesvd_ffi",
        "lapack_strsm_ffi", "lapack_zgtsv_ffi", "lapack_dgehrd_ffi"}) {
    EXPECT_NE(CustomCallRegistry::Global().Find(name), nullptr) << name;
  }
  for (const char* name : {"lapack_corgqr_ffi", "lapack_sungqr_ffi", "lapack_sheevd_ffi",
                           "lapack_sgetrf", "TopK", ""}) {
    EXPECT_EQ(CustomCallRegistry::Global().Find(name), nullptr) << name;
  }
}

TEST(CustomCallRegistry, RunsAHandlerOnBuffers) {
  // Cholesky of [[4, 2], [2, 5]] (column-major), lower: [[2, 0], [1, 2]].
  CustomCallHandler potrf = CustomCallRegistry::Global().Find("lapack_dpotrf_ffi");
  ASSERT_NE(potrf, nullptr);
  std::vector<double> a = {4, 2, 2, 5}, factor(4);
  int32_t info = -1;
  FfiCallFrame frame;
  frame.target = "lapack_dpotrf_ffi";
  frame.args = {{ElementType::kF64, {2, 2}, a.data()}};
  frame.rets = {{ElementType::kF64, {2, 2}, factor.data()}, {ElementType::kS32, {}, &info}};
  absl::StatusOr<FfiAttributes> attrs = ParseFfiAttributes("{uplo = 76 : ui8}");
  ASSERT_TRUE(attrs.ok()) << attrs.status();
  frame.attrs = *attrs;
  ASSERT_TRUE(potrf(frame).ok());
  EXPECT_EQ(info, 0);
  EXPECT_DOUBLE_EQ(factor[0], 2);
  EXPECT_DOUBLE_EQ(factor[1], 1);
  EXPECT_DOUBLE_EQ(factor[3], 2);
  // In place (the result aliases the operand).
  frame.rets[0].data = a.data();
  ASSERT_TRUE(potrf(frame).ok());
  EXPECT_DOUBLE_EQ(a[0], 2);
  // A wrong element type is named.
  frame.args[0].type = ElementType::kF32;
  absl::Status wrong = potrf(frame);
  EXPECT_EQ(wrong.message(), "lapack_dpotrf_ffi: operand 0 must be f64, got f32");
}

absl::Status Fill7(FfiCallFrame& frame) {
  if (frame.rets.size() != 1 || frame.rets[0].type != ElementType::kS32) {
    return frame.Error("returns one s32 array");
  }
  std::fill(frame.rets[0].typed<int32_t>(),
            frame.rets[0].typed<int32_t>() + frame.rets[0].elements(), 7);
  return absl::OkStatus();
}

TEST(CustomCallRegistry, RegistersNewTargetsOnce) {
  CustomCallRegistry registry;
  EXPECT_EQ(registry.Find("fill7"), nullptr);
  ASSERT_TRUE(registry.Register("fill7", &Fill7).ok());
  EXPECT_TRUE(absl::IsAlreadyExists(registry.Register("fill7", &Fill7)));
  EXPECT_TRUE(absl::IsInvalidArgument(registry.Register("null", nullptr)));
  std::vector<int32_t> out(3);
  FfiCallFrame frame;
  frame.target = "fill7";
  frame.rets = {{ElementType::kS32, {3}, out.data()}};
  ASSERT_TRUE(registry.Find("fill7")(frame).ok());
  EXPECT_EQ(out, (std::vector<int32_t>{7, 7, 7}));
}

TEST(CustomCallRegistry, UnsupportedTargetsSayWhy) {
  EXPECT_NE(UnsupportedCustomCallReason("xla_ffi_python_cpu_callback")->find("Python"),
            std::string::npos);
  EXPECT_NE(UnsupportedCustomCallReason("cusolver_getrf")->find("GPU"), std::string::npos);
  EXPECT_NE(UnsupportedCustomCallReason("lapack_sgetrf")->find("legacy"), std::string::npos);
  EXPECT_NE(UnsupportedCustomCallReason("lapack_corgqr_ffi")->find("not a LAPACK target"),
            std::string::npos);
  EXPECT_FALSE(UnsupportedCustomCallReason("my_target").has_value());
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::hostlib
