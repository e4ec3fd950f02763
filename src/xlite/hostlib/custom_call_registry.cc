#include "xlite/hostlib/custom_call_registry.h"

#include <algorithm>

#include "absl/strings/match.h"

namespace xlite::hostlib {

CustomCallRegistry& CustomCallRegistry::Global() {
  static CustomCallRegistry* registry = [] {
    auto* r = new CustomCallRegistry;
    RegisterLapackTargets(*r);
    return r;
  }();
  return *registry;
}

absl::Status CustomCallRegistry::Register(absl::string_view target, CustomCallHandler handler) {
  if (handler == nullptr) return absl::InvalidArgumentError("custom-call handler is null");
  std::lock_guard<std::mutex> lock(mu_);
  if (!handlers_.emplace(std::string(target), handler).second) {
    return absl::AlreadyExistsError(
        absl::StrCat("custom-call target \"", target, "\" is already registered"));
  }
  return absl::OkStatus();
}

CustomCallHandler CustomCallRegistry::Find(absl::string_view target) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = handlers_.find(target);
  return it == handlers_.end() ? nullptr : it->second;
}

std::vector<std::string> CustomCallRegistry::Targets() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  for (const auto& [name, handler] : handlers_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> UnsupportedCustomCallReason(absl::string_view target) {
  static constexpr absl::string_view kPythonCallbacks[] = {
      "xla_python_cpu_callback",
      "xla_ffi_python_cpu_callback",
      "xla_ffi_partitioned_python_cpu_callback",
      "xla_python_gpu_callback",
      "xla_ffi_python_gpu_callback",
      "xla_ffi_partitioned_python_gpu_callback"};
  for (absl::string_view name : kPythonCallbacks) {
    if (target == name) {
      return "it calls back into JAX's Python runtime (jax.pure_callback, jax.experimental."
             "io_callback, jax.debug.print/callback), which a compiled module cannot carry";
    }
  }
  if (target == "ducc_fft" || target == "dynamic_ducc_fft") {
    return "jaxlib's old FFT custom call; current JAX emits the fft op instead";
  }
  if (target == "cpu_csr_sparse_dense_ffi") {
    return "jax.experimental.sparse's CSR kernel is not implemented";
  }
  if (target == "tridiagonal_solve_perturbed_ffi") {
    return "jaxlib's perturbed tridiagonal solver is not implemented";
  }
  for (absl::string_view prefix : {"cusolver_", "hipsolver_", "cusparse_", "hipsparse_", "cu_",
                                   "hip_", "cublas", "__cublas$", "__cudnn$", "__gpu$"}) {
    if (absl::StartsWith(target, prefix)) {
      return "a GPU (CUDA/ROCm) library call; this module was lowered for GPU, lower it for CPU";
    }
  }
  for (absl::string_view name : {"Eigh", "Qr", "ProductOfElementaryHouseholderReflectors",
                                 "LuDecomposition", "ApproxTopK", "tpu_custom_call"}) {
    if (target == name) return "a TPU target; this module was lowered for TPU, lower it for CPU";
  }
  if ((absl::StartsWith(target, "lapack_") || absl::StartsWith(target, "blas_")) &&
      !absl::EndsWith(target, "_ffi")) {
    return "jaxlib's legacy (pre-FFI) LAPACK calling convention from modules exported by old JAX "
           "versions; re-export with a current JAX";
  }
  if (absl::StartsWith(target, "lapack_")) return "not a LAPACK target jaxlib registers";
  return std::nullopt;
}

}  // namespace xlite::hostlib
