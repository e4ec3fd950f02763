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

// A seeded fake value of `shape` (layout ignored; static shapes only).
absl::StatusOr<Literal> MakeFakeLiteral(const Shape& shape, FakeDataKind kind, uint64_t seed);

class HostTransfers;
// Seeded fake host data for running `module` without a host: on each of
// `devices` devices, one infeed block per infeed instruction (its data
// shape; computations in module order, instructions in program order, so
// enough for programs that run each infeed once); for each host recv
// channel a recv callback giving fresh fake values of the recv's shape; for
// each host send channel a send callback appending the value to `sent`
// (when given; calls from several devices are serialized). The same seed
// gives the same data, so two runs (interpreted and compiled) see the same.
absl::Status AddFakeHostTransfers(const HloModule& module, uint64_t seed, int64_t devices,
                                  HostTransfers& transfers, std::vector<Literal>* sent = nullptr);

}  // namespace xlite

#endif  // XLITE_EVAL_FAKE_DATA_H_
