// Printer for XLA's HLO text format, byte-compatible with XLA's
// HloModule::ToString in its long (default) and short (ShortParsable) forms.
#ifndef XLITE_TEXT_PRINTER_H_
#define XLITE_TEXT_PRINTER_H_

#include <string>

#include "xlite/ir/module.h"

namespace xlite {

struct PrintOptions {
  // Long form: '%' names, operand shapes, signatures, metadata, backend_config,
  // control-predecessors, the stack frame index. Short form omits those.
  bool long_form = true;
  // Print generic async ops wrapping a single instruction as op-start/-update/-done.
  bool syntax_sugar_async_ops = true;
  // Print every constant in full (otherwise arrays over 10 elements print {...}).
  bool print_large_constants = true;

  static PrintOptions Long() { return PrintOptions(); }
  static PrintOptions Short() {
    PrintOptions o;
    o.long_form = false;
    return o;
  }
};

std::string PrintModule(const HloModule& module, const PrintOptions& options = PrintOptions());
std::string PrintInstruction(const HloInstruction& instr,
                             const PrintOptions& options = PrintOptions());
// Sharding as printed inside sharding={...} (braces included).
std::string PrintSharding(const HloSharding& sharding, bool print_metadata = true);

}  // namespace xlite

#endif  // XLITE_TEXT_PRINTER_H_
