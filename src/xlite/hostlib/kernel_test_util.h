// Test helpers for hostlib's matmul and convolution: typed random buffers and
// the tolerance a result type allows.
#ifndef XLITE_HOSTLIB_KERNEL_TEST_UTIL_H_
#define XLITE_HOSTLIB_KERNEL_TEST_UTIL_H_

#include <cmath>
#include <complex>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "xlite/hostlib/element_access.h"
#include "xlite/hostlib/element_type.h"

namespace xlite::hostlib::kernel_test {

// `count` elements of `type`: small integers for integer types (all of an
// 8-bit type's range for s8/u8), values in [-2, 2) rounded to the type for
// floats (non-negative for the unsigned e8m0).
inline std::vector<uint8_t> RandomBuffer(ElementType type, int64_t count, uint32_t seed) {
  std::vector<uint8_t> buffer(count * ElementByteWidth(type));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> real(-2, 2);
  for (int64_t i = 0; i < count; ++i) {
    if (type == ElementType::kPred) {
      StoreElement<uint64_t>(type, buffer.data(), i, rng() & 1);
    } else if (IsIntegerType(type)) {
      const int width = std::min(ElementBitWidth(type), 8);
      const int64_t lo = IsSignedIntegerType(type) ? -(int64_t{1} << (width - 1)) : 0;
      const int64_t span = int64_t{1} << width;
      StoreElement<uint64_t>(type, buffer.data(), i,
                             static_cast<uint64_t>(lo + static_cast<int64_t>(rng() % span)));
    } else if (IsComplexType(type)) {
      StoreElement<std::complex<double>>(type, buffer.data(), i, {real(rng), real(rng)});
    } else {
      const double v = real(rng);
      StoreElement<double>(type, buffer.data(), i,
                           type == ElementType::kF8E8M0FNU ? std::fabs(v) : v);
    }
  }
  return buffer;
}

// Unit roundoff of a floating-point type (relative error of one rounding).
inline double UnitRoundoff(ElementType type) {
  switch (type) {
    case ElementType::kF64:
    case ElementType::kC128:
      return std::ldexp(1.0, -53);
    case ElementType::kF32:
    case ElementType::kC64:
      return std::ldexp(1.0, -24);
    case ElementType::kF16:
      return std::ldexp(1.0, -11);
    case ElementType::kBF16:
      return std::ldexp(1.0, -8);
    case ElementType::kF8E3M4:
      return std::ldexp(1.0, -5);
    case ElementType::kF8E5M2:
    case ElementType::kF8E5M2FNUZ:
      return std::ldexp(1.0, -3);
    case ElementType::kF4E2M1FN:
      return std::ldexp(1.0, -2);
    case ElementType::kF8E8M0FNU:
      return 1;
    default:
      return std::ldexp(1.0, -4);  // e4m3 variants
  }
}

// Element i of a buffer as complex<double> (integers by value).
inline std::complex<double> Value(ElementType type, const std::vector<uint8_t>& buffer, int64_t i) {
  return LoadElement<std::complex<double>>(type, buffer.data(), i);
}

}  // namespace xlite::hostlib::kernel_test

#endif  // XLITE_HOSTLIB_KERNEL_TEST_UTIL_H_
