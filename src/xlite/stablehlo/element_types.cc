#include "xlite/stablehlo/element_types.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace xlite::mlir {

std::optional<PrimitiveType> QuantStorageTypeOf(absl::string_view storage) {
  // MLIR's quant dialect spells unsigned storage u8; builtin types say ui8.
  if (absl::StartsWith(storage, "u") && !absl::StartsWith(storage, "ui")) {
    return PrimitiveTypeOf(absl::StrCat("ui", storage.substr(1)));
  }
  return PrimitiveTypeOf(storage);
}

std::optional<PrimitiveType> PrimitiveTypeOf(absl::string_view e) {
  using P = PrimitiveType;
  if (absl::StartsWith(e, "!quant.uniform<")) {
    // Storage type: !quant.uniform<i8:f32, ...> or <i8<-127:127>:f32, ...>.
    absl::string_view rest = e.substr(15);
    size_t end = rest.find_first_of(":<");
    return QuantStorageTypeOf(rest.substr(0, end));
  }
  static const auto* kTypes = new absl::flat_hash_map<std::string, P>{
      {"i1", P::PRED},
      {"i2", P::S2},
      {"i4", P::S4},
      {"i8", P::S8},
      {"i16", P::S16},
      {"i32", P::S32},
      {"i64", P::S64},
      {"si2", P::S2},
      {"si4", P::S4},
      {"si8", P::S8},
      {"si16", P::S16},
      {"si32", P::S32},
      {"si64", P::S64},
      {"ui1", P::U1},
      {"ui2", P::U2},
      {"ui4", P::U4},
      {"ui8", P::U8},
      {"ui16", P::U16},
      {"ui32", P::U32},
      {"ui64", P::U64},
      {"f16", P::F16},
      {"bf16", P::BF16},
      {"f32", P::F32},
      {"f64", P::F64},
      {"f8E5M2", P::F8E5M2},
      {"f8E4M3", P::F8E4M3},
      {"f8E4M3FN", P::F8E4M3FN},
      {"f8E4M3B11FNUZ", P::F8E4M3B11FNUZ},
      {"f8E5M2FNUZ", P::F8E5M2FNUZ},
      {"f8E4M3FNUZ", P::F8E4M3FNUZ},
      {"f8E3M4", P::F8E3M4},
      {"f4E2M1FN", P::F4E2M1FN},
      {"f8E8M0FNU", P::F8E8M0FNU},
      {"complex<f32>", P::C64},
      {"complex<f64>", P::C128},
      {"index", P::S64},
  };
  auto it = kTypes->find(std::string(e));
  if (it == kTypes->end()) return std::nullopt;
  return it->second;
}

}  // namespace xlite::mlir
