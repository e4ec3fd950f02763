// Literals: the values of constants (and later, of buffers in the evaluator).
// Array data is stored row-major in logical order, one element per
// PrimitiveByteWidth() bytes (sub-byte types take one byte each).
#ifndef XLITE_IR_LITERAL_H_
#define XLITE_IR_LITERAL_H_

#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "xlite/ir/shape.h"

namespace xlite {

class Literal {
 public:
  Literal() = default;
  // A zero-filled literal of `shape` (tuples get one child per element).
  explicit Literal(const Shape& shape);
  // A tuple of `elements` (moved in, not copied).
  static Literal Tuple(std::vector<Literal> elements);

  const Shape& shape() const { return shape_; }
  int64_t element_count() const { return shape_.IsArray() ? shape_.ElementCount() : 0; }

  // "{...}" in the text: the shape is known, the values were not printed.
  bool elided() const { return elided_; }
  void set_elided(bool e) { elided_ = e; }

  // Raw element bits (the type's own encoding; for complex, the real part).
  // Inline: the evaluator reads and writes every element through these.
  uint64_t GetBits(int64_t i) const {
    const uint8_t* p = data_.data() + i * stride_;
    switch (value_bytes_) {
      case 1:
        return *p;
      case 2: {
        uint16_t v;
        std::memcpy(&v, p, 2);
        return v;
      }
      case 4: {
        uint32_t v;
        std::memcpy(&v, p, 4);
        return v;
      }
      default: {
        uint64_t v;
        std::memcpy(&v, p, 8);
        return v;
      }
    }
  }
  void SetBits(int64_t i, uint64_t bits) {
    uint8_t* p = data_.data() + i * stride_;
    switch (value_bytes_) {
      case 1:
        *p = static_cast<uint8_t>(bits);
        return;
      case 2: {
        const uint16_t v = static_cast<uint16_t>(bits);
        std::memcpy(p, &v, 2);
        return;
      }
      case 4: {
        const uint32_t v = static_cast<uint32_t>(bits);
        std::memcpy(p, &v, 4);
        return;
      }
      default:
        std::memcpy(p, &bits, 8);
    }
  }
  // Numeric views; for complex types Get*/Set* address the real part.
  double GetDouble(int64_t i) const;
  void SetDouble(int64_t i, double v);
  int64_t GetInt(int64_t i) const;  // signed/unsigned/pred, sign- or zero-extended
  void SetInt(int64_t i, int64_t v);
  std::complex<double> GetComplex(int64_t i) const;
  void SetComplex(int64_t i, std::complex<double> v);

  std::vector<Literal>& tuple_elements() { return tuple_; }
  const std::vector<Literal>& tuple_elements() const { return tuple_; }
  // The element at `index` of nested tuples (this literal for {}), or null
  // where the index leaves the tuple structure.
  const Literal* Subliteral(absl::Span<const int64_t> index) const;
  Literal* MutableSubliteral(absl::Span<const int64_t> index) {
    return const_cast<Literal*>(static_cast<const Literal*>(this)->Subliteral(index));
  }
  const std::vector<uint8_t>& raw_data() const { return data_; }
  uint8_t* mutable_raw_data() { return data_.data(); }
  // Bytes per element in raw_data() (sub-byte types take one byte).
  int element_stride() const { return stride_; }

  bool operator==(const Literal& other) const;

  // The text XLA prints inside constant(...): "{ { 1, 2 }, { 3, 4 } }".
  std::string ToStringWithoutShapeOneline() const;
  // With shapes, as custom-call literal= prints it: "s32[2]{0} {1, 2}".
  std::string ToStringOneline() const;
  // One element as XLA spells it ("1.5", "nan", "true", "(1, 2)").
  std::string ElementToString(int64_t i) const;

 private:
  Shape shape_;
  std::vector<uint8_t> data_;
  std::vector<Literal> tuple_;
  // Bytes per element, and per real or imaginary part (= stride_ unless complex).
  int8_t stride_ = 0;
  int8_t value_bytes_ = 0;
  bool elided_ = false;
};

// Shortest "%g" spelling that round-trips through `type` (XLA's RoundTripFpToString),
// with XLA's nan/inf spellings. `type` must be a real floating-point type.
std::string FloatBitsToString(PrimitiveType type, uint64_t bits);

}  // namespace xlite

#endif  // XLITE_IR_LITERAL_H_
