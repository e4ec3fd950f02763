// Parser for XLA's HLO text format (what --xla_dump_to writes).
#ifndef XLITE_TEXT_PARSER_H_
#define XLITE_TEXT_PARSER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "xlite/ir/module.h"

namespace xlite {

// Parses a whole module. Errors read "filename:line:col: message".
absl::StatusOr<std::unique_ptr<HloModule>> ParseHloModule(absl::string_view text,
                                                          std::string filename = "<input>");

// Parses a shape such as "f32[2,3]{0,1}" or "(s32[], token[])".
absl::StatusOr<Shape> ParseShape(absl::string_view text);

}  // namespace xlite

#endif  // XLITE_TEXT_PARSER_H_
