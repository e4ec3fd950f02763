// numpy's .npy and .npz formats for literals (xlite run --inputs/--output).
// Element types: bool, int8..64, uint8..64, float16/32/64, complex64/128, and
// the ml_dtypes names bfloat16 and float8_* (numpy reads them once ml_dtypes
// is imported).
#ifndef XLITE_SUPPORT_NPY_H_
#define XLITE_SUPPORT_NPY_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "xlite/ir/literal.h"

namespace xlite {

absl::StatusOr<Literal> ParseNpy(absl::string_view bytes, absl::string_view what);
absl::StatusOr<std::string> SerializeNpy(const Literal& literal);

// Arrays of a .npz archive in archive order, with their names ("x" for x.npy).
absl::StatusOr<std::vector<std::pair<std::string, Literal>>> ReadNpz(const std::string& path);
// Writes an uncompressed .npz (as numpy.savez); the file appears complete or not at all.
absl::Status WriteNpz(const std::string& path,
                      const std::vector<std::pair<std::string, Literal>>& arrays);

}  // namespace xlite

#endif  // XLITE_SUPPORT_NPY_H_
