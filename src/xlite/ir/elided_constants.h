// Constants printed as constant({...}) (XLA's print_large_constants=false, as
// in its CPU benchmark dumps) carry a shape but no values. To run such a
// module, XLA's tools fill them when they parse it (HloParserOptions::
// fill_shortform_constants_with_random_values, on by default): the literal's
// bytes, in row-major order, become a running 32-bit counter (0, 1, 2, ...
// across all elided literals in text order), with each byte masked to 0/1 for
// pred; a literal whose size is not a multiple of 4 gets a running byte
// counter in its last size%4 bytes, written where XLA writes them (at byte
// size/4 + i). xlite keeps the literal elided and fills it only on request.
#ifndef XLITE_IR_ELIDED_CONSTANTS_H_
#define XLITE_IR_ELIDED_CONSTANTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xlite/ir/module.h"

namespace xlite {

// XLA's two counters; one per run, as XLA's are per process.
class ElidedConstantFiller {
 public:
  // Fills `lit` (and the elided leaves of a tuple) and clears its elided flag.
  void Fill(Literal& lit);

 private:
  uint32_t word_ = 0;
  uint8_t byte_ = 0;
};

// Fills every elided constant and custom-call literal of `module`, in text
// order, and returns the names of the instructions it filled.
std::vector<std::string> FillElidedConstants(HloModule& module);

// True if `lit` or one of its tuple elements is elided.
bool HasElidedValues(const Literal& lit);

}  // namespace xlite

#endif  // XLITE_IR_ELIDED_CONSTANTS_H_
