// Prints programs of the generic-operation layer (mlir.h) as MLIR text in the
// generic op form, canonically: SSA values renumbered in MLIR's order (%0, %1
// per function, %argN for block arguments, nested regions continuing the
// count), attributes sorted by name in one dictionary after the regions,
// dictionaries sorted, floats in the shortest "%.Ne" spelling that reads back
// to the same bits (hex for NaN/Inf), dense attributes as splats, nested lists
// or (over 100 elements) MLIR's little-endian "0x..." hex. Locations are
// dropped. Reading the output with ParseMlir and printing again gives the same
// text, and pretty and generic spellings of a program print alike.
#ifndef XLITE_STABLEHLO_PRINTER_H_
#define XLITE_STABLEHLO_PRINTER_H_

#include <string>

#include "xlite/stablehlo/mlir.h"

namespace xlite::mlir {

// The whole program: `"builtin.module"() ({ ... }) : () -> ()`, ending in '\n'.
std::string PrintMlir(const Operation& module);

// One type / attribute as MLIR spells it (tensor<2x?xf32>, dense<1> : tensor<2xi32>).
std::string PrintType(const Type& type);
std::string PrintAttribute(const Attribute& attribute);

}  // namespace xlite::mlir

#endif  // XLITE_STABLEHLO_PRINTER_H_
