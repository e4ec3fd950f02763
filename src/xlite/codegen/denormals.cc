#include "xlite/codegen/denormals.h"

#include <xmmintrin.h>

namespace xlite::codegen {
namespace {
constexpr uint32_t kFlushToZero = 0x8000;       // MXCSR.FTZ
constexpr uint32_t kDenormalsAreZero = 0x0040;  // MXCSR.DAZ
}  // namespace

ScopedFlushDenormals::ScopedFlushDenormals(bool flush) : saved_(_mm_getcsr()) {
  const uint32_t bits = kFlushToZero | kDenormalsAreZero;
  _mm_setcsr(flush ? (saved_ | bits) : (saved_ & ~bits));
}

ScopedFlushDenormals::~ScopedFlushDenormals() { _mm_setcsr(saved_); }

}  // namespace xlite::codegen
