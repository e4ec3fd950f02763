// The few shape rules the parser needs for instructions written without a
// shape ("add(x, y)"). The verifier's full shape inference lives in verify/.
#ifndef XLITE_TEXT_SHAPE_INFERENCE_LITE_H_
#define XLITE_TEXT_SHAPE_INFERENCE_LITE_H_

#include "absl/status/statusor.h"
#include "xlite/ir/instruction.h"

namespace xlite {

absl::StatusOr<Shape> InferShapeForParser(const HloInstruction& instr);

}  // namespace xlite

#endif  // XLITE_TEXT_SHAPE_INFERENCE_LITE_H_
