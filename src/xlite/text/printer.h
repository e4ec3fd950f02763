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
  // Long form only: each operand's shape before its name.
  bool print_operand_shape = true;
  // Print a get-tuple-element that carries nothing else as its users'
  // operand %tuple#index instead of its own line, as XLA's dumps do now.
  bool print_compact_gte = false;

  static PrintOptions Long() { return PrintOptions(); }
  // What --xla_dump_to writes (JAX 0.11): the long form without operand
  // shapes, with compact get-tuple-elements.
  static PrintOptions Dump() {
    PrintOptions o;
    o.print_operand_shape = false;
    o.print_compact_gte = true;
    return o;
  }
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
