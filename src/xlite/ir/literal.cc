#include "xlite/ir/literal.h"

#include <bit>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "xlite/ir/float_format.h"

namespace xlite {
namespace {

int ElementBytes(PrimitiveType t) { return PrimitiveByteWidth(t); }

// Joins the non-empty pieces of `s` split on spaces and newlines with single
// spaces, as XLA does to print a literal on one line.
std::string CompactOneline(const std::string& s) {
  std::string out;
  for (absl::string_view piece : absl::StrSplit(s, absl::ByAnyChar("\n "))) {
    if (piece.empty()) continue;
    if (!out.empty()) out += ' ';
    absl::StrAppend(&out, piece);
  }
  return out;
}

void ArrayToString(const Literal& lit, std::string& out) {
  const Shape& shape = lit.shape();
  const int64_t rank = shape.rank();
  if (rank == 0) {
    out += lit.ElementToString(0);
    return;
  }
  if (lit.elided()) {
    out += "{...}";
    return;
  }
  const bool is_pred = shape.element_type() == PrimitiveType::PRED;
  auto element = [&](int64_t linear, int64_t last_index) {
    if (last_index > 0) out += ", ";
    if (is_pred) {
      out += lit.GetInt(linear) ? "1" : "0";
    } else {
      out += lit.ElementToString(linear);
    }
  };
  const std::vector<int64_t>& dims = shape.dimensions();
  std::vector<int64_t> strides(rank, 1);
  for (int64_t i = rank - 2; i >= 0; --i) strides[i] = strides[i + 1] * dims[i + 1];

  // Mirrors the layout of XLA's multi-line literal printing; CompactOneline
  // later folds the whitespace.
  auto brace = [&](bool open, int64_t remaining, const std::vector<int64_t>& accum) -> std::string {
    if (rank == 1) return open ? "{" : "}";
    if (remaining == 1) {
      if (open) return dims[rank - 1] <= 1 ? "  {" : "  { ";
      return dims[rank - 1] <= 1 ? "}" : " }";
    }
    if (open) {
      if (rank > 3 && !accum.empty() && static_cast<int64_t>(accum.size()) < rank) {
        return absl::StrCat("{ /*i", accum.size() - 1, "=", accum.back(), "*/\n");
      }
      return "{\n";
    }
    return "\n}";
  };
  std::vector<int64_t> accum;
  auto recurse = [&](auto&& self, int64_t dim, int64_t base) -> void {
    const int64_t remaining = rank - dim;
    out += brace(true, remaining, accum);
    for (int64_t i = 0; i < dims[dim]; ++i) {
      if (remaining == 1) {
        element(base + i, i);
      } else {
        accum.push_back(i);
        self(self, dim + 1, base + i * strides[dim]);
        accum.pop_back();
        if (i < dims[dim] - 1) out += ",\n";
      }
    }
    out += brace(false, remaining, accum);
  };
  recurse(recurse, 0, 0);
}

void ToStringHelper(const Literal& lit, std::string& out, bool with_shape) {
  if (lit.shape().IsTuple()) {
    out += "(\n";
    for (size_t i = 0; i < lit.tuple_elements().size(); ++i) {
      if (i) out += ",\n";
      ToStringHelper(lit.tuple_elements()[i], out, with_shape);
    }
    out += "\n)";
    return;
  }
  if (lit.shape().IsToken()) {
    out += "token";
    return;
  }
  if (with_shape) {
    out += lit.shape().ToString(true);
    out += " ";
  }
  ArrayToString(lit, out);
}

}  // namespace

const Literal* Literal::Subliteral(absl::Span<const int64_t> index) const {
  const Literal* l = this;
  for (int64_t i : index) {
    if (i < 0 || i >= static_cast<int64_t>(l->tuple_.size())) return nullptr;
    l = &l->tuple_[i];
  }
  return l;
}

Literal::Literal(const Shape& shape) : shape_(shape) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) tuple_.emplace_back(s);
  } else if (shape.IsArray()) {
    stride_ = static_cast<int8_t>(ElementBytes(shape.element_type()));
    value_bytes_ = IsComplex(shape.element_type()) ? stride_ / 2 : stride_;
    data_.assign(static_cast<size_t>(shape.ElementCount()) * stride_, 0);
  }
}

Literal Literal::Tuple(std::vector<Literal> elements) {
  std::vector<Shape> shapes;
  shapes.reserve(elements.size());
  for (const Literal& e : elements) shapes.push_back(e.shape());
  Literal tuple;
  tuple.shape_ = Shape::Tuple(std::move(shapes));
  tuple.tuple_ = std::move(elements);
  return tuple;
}

double Literal::GetDouble(int64_t i) const {
  PrimitiveType t = shape_.element_type();
  if (t == PrimitiveType::F32) return std::bit_cast<float>(static_cast<uint32_t>(GetBits(i)));
  if (t == PrimitiveType::F64) return std::bit_cast<double>(GetBits(i));
  if (IsComplex(t)) return GetComplex(i).real();
  if (auto f = GetFloatFormat(t)) return DecodeFloat(*f, GetBits(i));
  if (IsUnsignedInt(t)) return static_cast<double>(static_cast<uint64_t>(GetInt(i)));
  return static_cast<double>(GetInt(i));
}

void Literal::SetDouble(int64_t i, double v) {
  PrimitiveType t = shape_.element_type();
  if (t == PrimitiveType::F32) return SetBits(i, std::bit_cast<uint32_t>(static_cast<float>(v)));
  if (t == PrimitiveType::F64) return SetBits(i, std::bit_cast<uint64_t>(v));
  if (IsComplex(t)) return SetComplex(i, {v, 0});
  if (auto f = GetFloatFormat(t)) return SetBits(i, EncodeFloat(*f, v));
  SetInt(i, static_cast<int64_t>(v));
}

int64_t Literal::GetInt(int64_t i) const {
  PrimitiveType t = shape_.element_type();
  uint64_t bits = GetBits(i);
  int width = PrimitiveBitWidth(t);
  if (t == PrimitiveType::PRED) return bits & 1;
  if (width < 64) bits &= (uint64_t{1} << width) - 1;
  if (IsSignedInt(t) && width < 64 && (bits >> (width - 1)) & 1) {
    bits |= ~((uint64_t{1} << width) - 1);
  }
  if (IsFloatingPoint(t)) return static_cast<int64_t>(GetDouble(i));
  return static_cast<int64_t>(bits);
}

void Literal::SetInt(int64_t i, int64_t v) {
  PrimitiveType t = shape_.element_type();
  if (IsFloatingPoint(t) || IsComplex(t)) return SetDouble(i, static_cast<double>(v));
  int width = PrimitiveBitWidth(t);
  uint64_t bits = static_cast<uint64_t>(v);
  if (t == PrimitiveType::PRED) bits = v != 0;
  if (width < 64) bits &= (uint64_t{1} << width) - 1;
  SetBits(i, bits);
}

std::complex<double> Literal::GetComplex(int64_t i) const {
  PrimitiveType t = shape_.element_type();
  if (!IsComplex(t)) return {GetDouble(i), 0};
  int half = ElementBytes(t) / 2;
  const uint8_t* p = data_.data() + i * ElementBytes(t);
  if (t == PrimitiveType::C64) {
    float re, im;
    std::memcpy(&re, p, 4);
    std::memcpy(&im, p + 4, 4);
    return {re, im};
  }
  double re, im;
  std::memcpy(&re, p, half);
  std::memcpy(&im, p + half, half);
  return {re, im};
}

void Literal::SetComplex(int64_t i, std::complex<double> v) {
  PrimitiveType t = shape_.element_type();
  uint8_t* p = data_.data() + i * ElementBytes(t);
  if (t == PrimitiveType::C64) {
    float re = static_cast<float>(v.real()), im = static_cast<float>(v.imag());
    std::memcpy(p, &re, 4);
    std::memcpy(p + 4, &im, 4);
  } else {
    double re = v.real(), im = v.imag();
    std::memcpy(p, &re, 8);
    std::memcpy(p + 8, &im, 8);
  }
}

bool Literal::operator==(const Literal& o) const {
  return shape_ == o.shape_ && data_ == o.data_ && tuple_ == o.tuple_ && elided_ == o.elided_;
}

std::string FloatBitsToString(PrimitiveType type, uint64_t bits) {
  FloatFormat f = *GetFloatFormat(type);
  double v = DecodeFloat(f, bits);
  if (std::isnan(v)) {
    bool neg = f.has_sign && ((bits >> (f.exponent_bits + f.mantissa_bits)) & 1);
    std::string s = neg ? "-nan" : "nan";
    if (f.nan == FloatFormat::Nan::kIeee) {
      uint64_t payload = bits & ((uint64_t{1} << f.mantissa_bits) - 1);
      uint64_t quiet = uint64_t{1} << (f.mantissa_bits - 1);
      if (payload != quiet) absl::StrAppend(&s, "(0x", absl::Hex(payload), ")");
    }
    return s;
  }
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  // f32/f64 try the short form first; the small types always print
  // max_digits10 digits, as XLA does.
  if (type == PrimitiveType::F32 || type == PrimitiveType::F64) {
    std::string s = absl::StrFormat("%.*g", f.digits10(), v);
    double parsed = std::strtod(s.c_str(), nullptr);
    if (EncodeFloat(f, parsed) == bits) return s;
  }
  return absl::StrFormat("%.*g", f.max_digits10(), v);
}

std::string Literal::ElementToString(int64_t i) const {
  PrimitiveType t = shape_.element_type();
  if (t == PrimitiveType::PRED) return GetInt(i) ? "true" : "false";
  if (IsSignedInt(t)) return absl::StrCat(GetInt(i));
  if (IsUnsignedInt(t)) return absl::StrCat(static_cast<uint64_t>(GetInt(i)));
  if (IsComplex(t)) {
    std::complex<double> c = GetComplex(i);
    // XLA prints complex parts with StrCat's six significant digits.
    if (t == PrimitiveType::C64) {
      return absl::StrCat("(", static_cast<float>(c.real()), ", ", static_cast<float>(c.imag()),
                          ")");
    }
    return absl::StrCat("(", c.real(), ", ", c.imag(), ")");
  }
  if (IsFloatingPoint(t)) return FloatBitsToString(t, GetBits(i));
  return "?";
}

std::string Literal::ToStringWithoutShapeOneline() const {
  std::string out;
  ToStringHelper(*this, out, false);
  return CompactOneline(out);
}

std::string Literal::ToStringOneline() const {
  std::string out;
  ToStringHelper(*this, out, true);
  return CompactOneline(out);
}

}  // namespace xlite
