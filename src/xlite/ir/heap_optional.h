// HeapOptional<T>: std::optional's interface with the value on the heap, so
// an empty one is one pointer. For InstructionAttributes' large attributes,
// which few instructions carry: inline, they made every instruction 4.7 KB
// (a domain's metadata alone 1000 bytes, a sharding 488), and a module's
// instructions hundreds of MB to allocate, fault in and copy on every clone.
#ifndef XLITE_IR_HEAP_OPTIONAL_H_
#define XLITE_IR_HEAP_OPTIONAL_H_

#include <memory>
#include <optional>
#include <utility>

namespace xlite {

template <typename T>
class HeapOptional {
 public:
  HeapOptional() = default;
  HeapOptional(std::nullopt_t) {}  // NOLINT: as std::optional
  HeapOptional(const T& value) : value_(std::make_unique<T>(value)) {}  // NOLINT
  HeapOptional(T&& value) : value_(std::make_unique<T>(std::move(value))) {}  // NOLINT
  HeapOptional(const std::optional<T>& value)  // NOLINT
      : value_(value.has_value() ? std::make_unique<T>(*value) : nullptr) {}
  HeapOptional(std::optional<T>&& value)  // NOLINT
      : value_(value.has_value() ? std::make_unique<T>(std::move(*value)) : nullptr) {}
  HeapOptional(const HeapOptional& other)
      : value_(other.value_ ? std::make_unique<T>(*other.value_) : nullptr) {}
  HeapOptional(HeapOptional&&) noexcept = default;

  HeapOptional& operator=(const HeapOptional& other) {
    if (this != &other) value_ = other.value_ ? std::make_unique<T>(*other.value_) : nullptr;
    return *this;
  }
  HeapOptional& operator=(HeapOptional&&) noexcept = default;
  HeapOptional& operator=(std::nullopt_t) {
    value_.reset();
    return *this;
  }

  template <typename... Args>
  T& emplace(Args&&... args) {
    value_ = std::make_unique<T>(std::forward<Args>(args)...);
    return *value_;
  }
  void reset() { value_.reset(); }

  bool has_value() const { return value_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return value_.get(); }
  const T* operator->() const { return value_.get(); }
  T& value() {
    if (!value_) throw std::bad_optional_access();
    return *value_;
  }
  const T& value() const {
    if (!value_) throw std::bad_optional_access();
    return *value_;
  }
  template <typename U>
  T value_or(U&& fallback) const {
    return value_ ? *value_ : static_cast<T>(std::forward<U>(fallback));
  }
  // A copy, asked for by name: an implicit one let `const std::optional<T>& x
  // = attrs.field` compile into a deep copy of the value.
  explicit operator std::optional<T>() const {
    return value_ ? std::optional<T>(*value_) : std::nullopt;
  }

  friend bool operator==(const HeapOptional& a, const HeapOptional& b) {
    if (!a.value_ || !b.value_) return !a.value_ && !b.value_;
    return *a.value_ == *b.value_;
  }
  friend bool operator==(const HeapOptional& a, std::nullopt_t) { return !a.value_; }
  friend bool operator==(const HeapOptional& a, const T& b) { return a.value_ && *a.value_ == b; }

 private:
  std::unique_ptr<T> value_;
};

}  // namespace xlite

#endif  // XLITE_IR_HEAP_OPTIONAL_H_
