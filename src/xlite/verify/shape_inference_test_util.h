// Helpers shared by the shape-inference tests.
#ifndef XLITE_VERIFY_SHAPE_INFERENCE_TEST_UTIL_H_
#define XLITE_VERIFY_SHAPE_INFERENCE_TEST_UTIL_H_

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "xlite/text/parser.h"
#include "xlite/verify/shape_inference.h"

namespace xlite::shape_inference_test {

// The inferred shape of the ENTRY root of module `text` (a parse error
// is returned as it is).
inline absl::StatusOr<Shape> InferModuleRootShape(absl::string_view text) {
  auto module = ParseHloModule(text);
  if (!module.ok()) return module.status();
  return InferShape(*(*module)->entry_computation()->root_instruction());
}

// The inferred shape of the ENTRY root of module `text`, as XLA prints it
// without layout; "error: <message>" when inference fails, "parse error:
// <message>" when the text does not parse (so that a parse error never
// passes for an inference error).
inline std::string InferModuleRoot(absl::string_view text) {
  auto module = ParseHloModule(text);
  if (!module.ok()) return absl::StrCat("parse error: ", module.status().message());
  absl::StatusOr<Shape> shape = InferShape(*(*module)->entry_computation()->root_instruction());
  if (!shape.ok()) return absl::StrCat("error: ", shape.status().message());
  return shape->ToString(false);
}

// `result` (from InferModuleRoot) is an inference error containing `needle`.
inline ::testing::AssertionResult IsErrorContaining(const std::string& result,
                                                    absl::string_view needle) {
  if (absl::StartsWith(result, "error: ") && absl::StrContains(result, needle)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "expected an error containing \"" << needle << "\", got: " << result;
}

}  // namespace xlite::shape_inference_test

#endif  // XLITE_VERIFY_SHAPE_INFERENCE_TEST_UTIL_H_
