// Decomposes CHLO's elementwise ops (chlo.lgamma, chlo.erf_inv, chlo.asinh,
// ...) into HLO instructions. Real ops on f16/bf16/f32 are computed in f64 and
// rounded back, so results are (nearly) correctly rounded; f64 uses formulas
// accurate to a few ulp. Complex ops widen c64 to c128 the same way.
#ifndef XLITE_STABLEHLO_CHLO_DECOMPOSE_H_
#define XLITE_STABLEHLO_CHLO_DECOMPOSE_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "xlite/ir/instruction.h"
#include "xlite/stablehlo/hlo_emitter.h"

namespace xlite::stablehlo {

// Emits HLO computing chlo.<op_name> (no "chlo." prefix, e.g. "lgamma")
// elementwise on `operands` (all of one shape) and returns the result.
// An unsupported op/type combination gives
// UnimplementedError("chlo.X on <type> is unsupported").
absl::StatusOr<HloInstruction*> EmitChloElementwise(HloEmitter& e, absl::string_view op_name,
                                                    absl::Span<HloInstruction* const> operands);

// Whether EmitChloElementwise knows `op_name` (without the "chlo." prefix).
bool IsChloElementwise(absl::string_view op_name);

}  // namespace xlite::stablehlo

#endif  // XLITE_STABLEHLO_CHLO_DECOMPOSE_H_
