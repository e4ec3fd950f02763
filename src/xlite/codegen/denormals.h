// Flush-to-zero and denormals-are-zero for the running thread, as XLA:CPU
// sets them while its kernels run (tsl's ScopedFlushDenormal). The CPU
// runtime wraps kernel calls in one; kernels themselves never touch MXCSR.
#ifndef XLITE_CODEGEN_DENORMALS_H_
#define XLITE_CODEGEN_DENORMALS_H_

#include <cstdint>

namespace xlite::codegen {

class ScopedFlushDenormals {
 public:
  // Sets FTZ and DAZ (`flush` true) or clears them, until destruction.
  explicit ScopedFlushDenormals(bool flush = true);
  ~ScopedFlushDenormals();
  ScopedFlushDenormals(const ScopedFlushDenormals&) = delete;
  ScopedFlushDenormals& operator=(const ScopedFlushDenormals&) = delete;

 private:
  uint32_t saved_;
};

}  // namespace xlite::codegen

#endif  // XLITE_CODEGEN_DENORMALS_H_
