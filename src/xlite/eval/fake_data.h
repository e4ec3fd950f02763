// Fake arguments for running a module without real inputs, following XLA's
// conventions: seeded random values, and in-range values for parameters used
// as gather/scatter indices or dynamic-slice offsets.
#ifndef XLITE_EVAL_FAKE_DATA_H_
#define XLITE_EVAL_FAKE_DATA_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "xlite/ir/module.h"

namespace xlite {

enum class FakeDataKind { kRandom, kZeros };

absl::StatusOr<std::vector<Literal>> MakeFakeArguments(const HloModule& module, FakeDataKind kind,
                                                       uint64_t seed);

}  // namespace xlite

#endif  // XLITE_EVAL_FAKE_DATA_H_
