// Custom-call targets by name: host functions that take the call's buffers
// and its parsed typed-FFI attributes (XLA's FFI call frame). One registry
// serves the interpreter's custom-call glue (eval/eval_custom_call_jaxlib.cc)
// and the CPU runtime's custom-call thunk. It starts with jaxlib's LAPACK
// targets (lapack_targets.cc, listed in docs/hostlib.md).
//
// Buffers arrive in the memory layout the call asks for (its
// operand_layout_constraints and result layouts: jaxlib's LAPACK targets read
// column-major matrices); laying them out is the caller's job. A handler
// writes every result; results may alias operands where the call says so
// (output_to_operand_aliasing), and handlers that start from a copy of an
// operand skip the copy then.
#ifndef XLITE_HOSTLIB_CUSTOM_CALL_REGISTRY_H_
#define XLITE_HOSTLIB_CUSTOM_CALL_REGISTRY_H_

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "xlite/hostlib/element_type.h"
#include "xlite/hostlib/ffi_attributes.h"

namespace xlite::hostlib {

// One operand or result: element type, logical dimensions, memory.
struct FfiBuffer {
  ElementType type = ElementType::kF32;
  std::vector<int64_t> dims;
  void* data = nullptr;

  int64_t elements() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
  int64_t bytes() const { return elements() * ElementByteWidth(type); }
  template <typename T>
  T* typed() const {
    return static_cast<T*>(data);
  }
};

// What a handler receives (XLA's FFI call frame).
struct FfiCallFrame {
  std::string target;
  std::vector<FfiBuffer> args;
  std::vector<FfiBuffer> rets;
  FfiAttributes attrs;

  // InvalidArgument "<target>: <args...>".
  template <typename... Args>
  absl::Status Error(const Args&... args) const {
    return absl::InvalidArgumentError(absl::StrCat(target, ": ", args...));
  }
};

using CustomCallHandler = absl::Status (*)(FfiCallFrame& frame);

class CustomCallRegistry {
 public:
  // The process-wide registry, holding jaxlib's LAPACK targets.
  static CustomCallRegistry& Global();

  // AlreadyExists if `target` is taken.
  absl::Status Register(absl::string_view target, CustomCallHandler handler);
  // nullptr when `target` is not registered.
  CustomCallHandler Find(absl::string_view target) const;
  std::vector<std::string> Targets() const;  // sorted

 private:
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, CustomCallHandler> handlers_;
};

// Why a target JAX emits that no registry entry runs cannot run here
// (Python callbacks, GPU and TPU targets, jaxlib's legacy or unregistered
// LAPACK names); nullopt for names that are not JAX's.
std::optional<std::string> UnsupportedCustomCallReason(absl::string_view target);

// Registers jaxlib's typed-FFI LAPACK targets (lapack_targets.cc).
void RegisterLapackTargets(CustomCallRegistry& registry);

}  // namespace xlite::hostlib

#endif  // XLITE_HOSTLIB_CUSTOM_CALL_REGISTRY_H_
