// Literals: the values of constants (and later, of buffers in the evaluator).
// Array data is stored row-major in logical order, one element per
// PrimitiveByteWidth() bytes (sub-byte types take one byte each).
#ifndef XLITE_IR_LITERAL_H_
#define XLITE_IR_LITERAL_H_

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "xlite/ir/shape.h"

namespace xlite {

class Literal {
 public:
  Literal() = default;
  // A zero-filled literal of `shape` (tuples get one child per element).
  explicit Literal(const Shape& shape);

  const Shape& shape() const { return shape_; }
  int64_t element_count() const { return shape_.IsArray() ? shape_.ElementCount() : 0; }

  // "{...}" in the text: the shape is known, the values were not printed.
  bool elided() const { return elided_; }
  void set_elided(bool e) { elided_ = e; }

  // Raw element bits (the type's own encoding; for complex, the real part).
  uint64_t GetBits(int64_t i) const;
  void SetBits(int64_t i, uint64_t bits);
  // Numeric views; for complex types Get*/Set* address the real part.
  double GetDouble(int64_t i) const;
  void SetDouble(int64_t i, double v);
  int64_t GetInt(int64_t i) const;  // signed/unsigned/pred, sign- or zero-extended
  void SetInt(int64_t i, int64_t v);
  std::complex<double> GetComplex(int64_t i) const;
  void SetComplex(int64_t i, std::complex<double> v);

  std::vector<Literal>& tuple_elements() { return tuple_; }
  const std::vector<Literal>& tuple_elements() const { return tuple_; }
  const std::vector<uint8_t>& raw_data() const { return data_; }

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
  bool elided_ = false;
};

// Shortest "%g" spelling that round-trips through `type` (XLA's RoundTripFpToString),
// with XLA's nan/inf spellings. `type` must be a real floating-point type.
std::string FloatBitsToString(PrimitiveType type, uint64_t bits);

}  // namespace xlite

#endif  // XLITE_IR_LITERAL_H_
