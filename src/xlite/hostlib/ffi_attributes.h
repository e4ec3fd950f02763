// The attributes of a typed-FFI custom call (API_VERSION_TYPED_FFI), which
// XLA's HLO text carries as an MLIR dictionary in backend_config:
//   backend_config={mode = 86 : ui8, uplo = 76 : ui8}
// A strict parser for the attribute kinds XLA's FFI passes to handlers
// (xla/ffi/attribute_map.cc): booleans, integers and floats with their MLIR
// types, strings, dense arrays (array<i32: 1, 2>) and nested dictionaries.
// Anything else (unit attributes, dense<...> elements, f16 scalars...) is an
// error naming it, as is a malformed dictionary.
#ifndef XLITE_HOSTLIB_FFI_ATTRIBUTES_H_
#define XLITE_HOSTLIB_FFI_ATTRIBUTES_H_

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace xlite::hostlib {

class FfiAttributes;

struct FfiAttribute {
  enum class Kind { kBool, kInteger, kFloat, kString, kArray, kDictionary };
  Kind kind = Kind::kBool;
  // The MLIR type of a scalar or of an array's elements: "ui8", "i32", "si16",
  // "f32"... An integer written without a type is "i64", a float "f64".
  std::string type;
  bool boolean = false;
  int64_t integer = 0;  // signless and signed types sign-extend, unsigned zero-extend
  double floating = 0;
  std::string string;
  std::vector<int64_t> integers;  // integer arrays
  std::vector<double> floats;     // float arrays
  std::shared_ptr<const FfiAttributes> dictionary;

  // "ui8 76", "bool true", "array<i32: 1, 2>", ... for error messages.
  std::string ToString() const;
};

class FfiAttributes {
 public:
  const std::map<std::string, FfiAttribute, std::less<>>& entries() const { return entries_; }
  const FfiAttribute* Find(absl::string_view name) const;

  // Typed getters, as XLA's FFI decodes a handler's .Attr<T>(name): the
  // attribute must exist and have exactly that type.
  absl::StatusOr<uint8_t> GetU8(absl::string_view name) const;
  absl::StatusOr<int32_t> GetI32(absl::string_view name) const;
  absl::StatusOr<int64_t> GetI64(absl::string_view name) const;
  absl::StatusOr<bool> GetBool(absl::string_view name) const;
  // A character flag (jaxlib's enum attributes are ui8 characters) that must
  // be one of `allowed`.
  absl::StatusOr<char> GetChar(absl::string_view name, absl::string_view allowed) const;
  // XLA's FFI rejects attributes a handler does not bind; so do we.
  absl::Status CheckNoOthers(std::initializer_list<absl::string_view> bound) const;

 private:
  friend class FfiAttributeParser;
  std::map<std::string, FfiAttribute, std::less<>> entries_;
};

// Parses `{name = value, ...}`; an empty string is an empty dictionary.
absl::StatusOr<FfiAttributes> ParseFfiAttributes(absl::string_view text);

}  // namespace xlite::hostlib

#endif  // XLITE_HOSTLIB_FFI_ATTRIBUTES_H_
