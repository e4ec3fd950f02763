// The versioned op registry of VHLO, StableHLO's portable-artifact dialect.
//
// VHLO is append-only: every op, type and attribute carries a version suffix
// ("add_v1", "all_gather_v2") and is legal for an inclusive range of StableHLO
// versions [min, max]; max is the current version while the element is live.
// One table (vhlo_ops.cc) lists every op version with the StableHLO (or func)
// op it stands for; two more list the versioned types and attributes whose
// range does not start at the window's minimum.
//
// The facts (names, ranges) come from StableHLO's VHLO dialect definition and
// its compatibility tests (/work/shared/corpus/vhlo); see
// docs/serialization.md, "Versions and the op table", for how to add a row.
#ifndef XLITE_VHLO_VHLO_OPS_H_
#define XLITE_VHLO_VHLO_OPS_H_

#include <compare>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace xlite::vhlo {

// A StableHLO version, MAJOR.MINOR.PATCH. Ordered lexicographically.
struct Version {
  int major = 0;
  int minor = 0;
  int patch = 0;

  // "1.2.3", "current" or "minimum".
  static absl::StatusOr<Version> Parse(absl::string_view text);
  // The newest version this build reads and writes (the goldens' newest).
  static constexpr Version Current();
  // The oldest version this build reads and writes: the compatibility window.
  static constexpr Version Minimum();

  std::string ToString() const;  // "1.2.3"
  auto operator<=>(const Version&) const = default;
  bool operator==(const Version&) const = default;
};

constexpr Version kCurrentVersion{1, 20, 0};
constexpr Version kMinimumVersion{0, 9, 0};
constexpr Version Version::Current() { return kCurrentVersion; }
constexpr Version Version::Minimum() { return kMinimumVersion; }

// True when `v` lies in [Minimum(), Current()].
bool InWindow(const Version& v);

// The producer version recorded in an artifact: "StableHLO_v1.20.0" -> 1.20.0.
absl::StatusOr<Version> ParseProducer(absl::string_view producer);

// One VHLO op version.
struct OpVersion {
  std::string vhlo_name;    // "vhlo.all_gather_v2"
  std::string target_name;  // "stablehlo.all_gather", "func.func", ...
  int version = 1;          // the N of _vN
  Version min;              // first StableHLO version with this op version
  Version max;              // last one (inclusive); Current() while live
  bool LegalAt(const Version& v) const { return min <= v && v <= max; }
};

// A versioned type or attribute (VHLO mnemonic and its StableHLO spelling).
struct VersionedElement {
  std::string vhlo_name;       // "f8E4M3FNUZ_v1", "result_accuracy_v1"
  std::string stablehlo_name;  // "f8E4M3FNUZ", "#stablehlo.result_accuracy"
  Version min;
  Version max;
  bool LegalAt(const Version& v) const { return min <= v && v <= max; }
};

// The whole op table, sorted by VHLO name.
const std::vector<OpVersion>& AllOpVersions();
// Versioned types (builtin element types that VHLO added after the window's
// start) and versioned attributes.
const std::vector<VersionedElement>& VersionedTypes();
const std::vector<VersionedElement>& VersionedAttributes();

// The row of a VHLO op ("vhlo.add_v1" or "add_v1"), or nullptr.
const OpVersion* FindOpVersion(absl::string_view vhlo_name);
// The row, or NotFound "unregistered operation 'vhlo.constant_v99'".
absl::StatusOr<const OpVersion*> LookupOpVersion(absl::string_view vhlo_name);
// Every version of a StableHLO op, oldest first ("stablehlo.all_gather").
std::vector<const OpVersion*> OpVersionsOf(absl::string_view target_name);
// The newest version of `target_name` legal at `version`, or an error naming
// both (unknown op, or none of its versions is legal there).
absl::StatusOr<const OpVersion*> OpVersionAt(absl::string_view target_name, const Version& version);
// The newest version of the same op (the one upgrades end at).
const OpVersion* LatestVersionOf(const OpVersion& op);
// OK when `op` may appear in an artifact produced at `producer` (op.min <=
// producer); otherwise InvalidArgument naming the op, its first version and
// the producer version.
absl::Status CheckOpLegalAt(const OpVersion& op, const Version& producer);

// Versioned type/attribute rows by VHLO mnemonic or StableHLO spelling.
const VersionedElement* FindVersionedType(absl::string_view stablehlo_element);
// The row of a full element spelling ("memref<4xf32>", "!stablehlo.future<..>",
// a per-axis "!quant.uniform<..{..}>" fall under their family's row), or null
// when the element exists in every version.
const VersionedElement* FindVersionedElementType(absl::string_view element);
const VersionedElement* FindVersionedAttribute(absl::string_view vhlo_name);

}  // namespace xlite::vhlo

#endif  // XLITE_VHLO_VHLO_OPS_H_
