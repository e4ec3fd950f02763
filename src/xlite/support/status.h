// Error propagation helpers on top of absl::Status.
#ifndef XLITE_SUPPORT_STATUS_H_
#define XLITE_SUPPORT_STATUS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

#define XLITE_CONCAT_IMPL(a, b) a##b
#define XLITE_CONCAT(a, b) XLITE_CONCAT_IMPL(a, b)

#define RETURN_IF_ERROR(expr)                      \
  do {                                             \
    ::absl::Status _xlite_status = (expr);         \
    if (!_xlite_status.ok()) return _xlite_status; \
  } while (0)

#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(XLITE_CONCAT(_xlite_statusor_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()

namespace xlite {

template <typename... Args>
absl::Status InvalidArgument(const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(args...));
}
template <typename... Args>
absl::Status Unimplemented(const Args&... args) {
  return absl::UnimplementedError(absl::StrCat(args...));
}
template <typename... Args>
absl::Status Internal(const Args&... args) {
  return absl::InternalError(absl::StrCat(args...));
}

}  // namespace xlite

#endif  // XLITE_SUPPORT_STATUS_H_
