// Shapes, layouts and literals.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "xlite/ir/float_format.h"
#include "xlite/support/status.h"
#include "xlite/text/parser_internal.h"

namespace xlite::text_internal {

bool StartsShape(Cursor& c) {
  char ch = c.Peek();
  if (ch == '(' || c.LookingAt("b(")) return true;
  size_t save = c.pos();
  auto id = c.ParseIdentifier();
  bool result = false;
  if (id.ok() && c.PeekRaw() == '[' && PrimitiveTypeFromName(*id).has_value()) result = true;
  c.set_pos(save);
  return result;
}

// ---------------------------------------------------------------------------
// Shapes and literals.

absl::StatusOr<Shape> HloParser::ParseShape(int depth) {
  if (depth > kMaxDepth) return c_.Error("shape nested too deeply");
  if (c_.TryConsume("(")) {
    std::vector<Shape> elems;
    if (!c_.TryConsume(")")) {
      while (true) {
        ASSIGN_OR_RETURN(Shape s, ParseShape(depth + 1));
        elems.push_back(std::move(s));
        if (c_.TryConsume(",")) continue;
        RETURN_IF_ERROR(c_.Expect(")"));
        break;
      }
    }
    return Shape::Tuple(std::move(elems));
  }
  size_t pos = (c_.SkipSpace(), c_.pos());
  if (c_.LookingAt("b(")) {
    c_.TryConsume("b(");
    ASSIGN_OR_RETURN(Shape inner, ParseShape(depth + 1));
    if (!inner.IsArray()) return c_.ErrorAt(pos, "a buffer shape b(...) must hold an array shape");
    RETURN_IF_ERROR(c_.Expect(")"));
    return Shape::Buffer(std::move(inner));
  }
  ASSIGN_OR_RETURN(std::string type_name, c_.ParseIdentifier("shape"));
  std::optional<PrimitiveType> type = PrimitiveTypeFromName(type_name);
  if (!type || *type == PrimitiveType::TUPLE || *type == PrimitiveType::BUFFER) {
    return c_.ErrorAt(pos, absl::StrCat("unknown element type '", type_name, "'"));
  }
  RETURN_IF_ERROR(c_.Expect("["));
  Shape shape = Shape::Array(*type, {});
  if (*type == PrimitiveType::TOKEN) shape = Shape::Token();
  if (*type == PrimitiveType::OPAQUE_TYPE) {
    shape = Shape();
    shape.set_element_type(PrimitiveType::OPAQUE_TYPE);
  }
  if (!c_.TryConsume("]")) {
    if (!shape.IsArray()) return c_.Error(absl::StrCat(type_name, " shapes have no dimensions"));
    while (true) {
      if (c_.TryConsume("?")) {
        shape.add_dimension(Shape::kUnboundedSize, true);
      } else {
        bool dynamic = c_.TryConsume("<=");
        size_t dpos = (c_.SkipSpace(), c_.pos());
        ASSIGN_OR_RETURN(int64_t d, c_.ParseInt64());
        if (d < 0) return c_.ErrorAt(dpos, "dimension size must be non-negative");
        shape.add_dimension(d, dynamic);
      }
      if (c_.TryConsume(",")) continue;
      RETURN_IF_ERROR(c_.Expect("]"));
      break;
    }
    if (shape.rank() > 64) return c_.ErrorAt(pos, "shape has more than 64 dimensions");
    // As XLA's ValidateShape: no array whose byte size overflows int64
    // (unbounded '?' dimensions have no size yet).
    int64_t bytes = std::max(PrimitiveByteWidth(*type), 1);
    for (int64_t d = 0; d < shape.rank(); ++d) {
      const int64_t size = shape.dimensions(d);
      if (size == Shape::kUnboundedSize) continue;
      if (__builtin_mul_overflow(bytes, size, &bytes)) {
        return c_.ErrorAt(pos, "the shape's size in bytes overflows int64");
      }
    }
  }
  // A layout follows directly: "f32[2]{0}".
  if (c_.PeekRaw() == '{' && shape.IsArray()) {
    ASSIGN_OR_RETURN(Layout l, ParseLayout(shape));
    shape.set_layout(std::move(l));
  }
  return shape;
}

absl::StatusOr<Layout> HloParser::ParseLayout(const Shape& shape) {
  size_t pos = c_.pos();
  Layout l;
  RETURN_IF_ERROR(c_.Expect("{"));
  while (c_.Peek() != ':' && c_.Peek() != '}') {
    ASSIGN_OR_RETURN(int64_t d, c_.ParseInt64());
    l.minor_to_major.push_back(d);
    if (!c_.TryConsume(",")) break;
  }
  // XLA's parser reads the fields in this order only.
  static constexpr absl::string_view kFieldOrder[] = {"D", "T", "L",  "#", "*",
                                                      "E", "S", "SC", "P", "M"};
  int last_field = -1;
  auto field = [&](absl::string_view name, size_t fpos) -> absl::Status {
    int index = 0;
    while (kFieldOrder[index] != name) ++index;
    if (index <= last_field) {
      return c_.ErrorAt(fpos, absl::StrCat("layout field ", name,
                                           " is repeated or out of order; XLA reads them in the "
                                           "order D T L # * E S SC P M"));
    }
    last_field = index;
    return absl::OkStatus();
  };
  if (c_.TryConsume(":")) {
    while (c_.Peek() != '}') {
      size_t fpos = (c_.SkipSpace(), c_.pos());
      if (c_.TryConsume("D(")) {
        RETURN_IF_ERROR(field("D", fpos));
        ASSIGN_OR_RETURN(l.dim_levels, ParseDimLevels());
      } else if (c_.TryConsume("T")) {
        RETURN_IF_ERROR(field("T", fpos));
        while (c_.PeekRaw() == '(') {
          size_t tpos = c_.pos();
          c_.set_pos(c_.pos() + 1);
          Tile t;
          while (!c_.TryConsume(")")) {
            if (c_.TryConsume("*")) {
              t.dimensions.push_back(Tile::kCombineDimension);
            } else {
              ASSIGN_OR_RETURN(int64_t d, c_.ParseInt64());
              t.dimensions.push_back(d);
            }
            if (!c_.TryConsume(",")) {
              RETURN_IF_ERROR(c_.Expect(")"));
              break;
            }
          }
          if (t.dimensions.empty()) {
            return c_.ErrorAt(tpos, "a layout tile T(...) must list at least one dimension");
          }
          l.tiles.push_back(std::move(t));
        }
      } else if (c_.TryConsume("L(")) {
        RETURN_IF_ERROR(field("L", fpos));
        ASSIGN_OR_RETURN(l.tail_padding_alignment_in_elements, c_.ParseInt64());
        RETURN_IF_ERROR(c_.Expect(")"));
      } else if (c_.TryConsume("#(") || c_.TryConsume("*(")) {
        const bool index = c_.text()[c_.pos() - 2] == '#';
        RETURN_IF_ERROR(field(index ? "#" : "*", fpos));
        size_t tpos = (c_.SkipSpace(), c_.pos());
        ASSIGN_OR_RETURN(std::string t, c_.ParseIdentifier("element type"));
        auto pt = PrimitiveTypeFromName(t);
        if (!pt) return c_.ErrorAt(tpos, absl::StrCat("unknown element type '", t, "'"));
        if (!IsUnsignedInt(*pt)) {
          return c_.ErrorAt(tpos, absl::StrCat("the layout's ", index ? "index" : "pointer",
                                               " type must be an unsigned integer type, got ", t));
        }
        (index ? l.index_primitive_type : l.pointer_primitive_type) = *pt;
        RETURN_IF_ERROR(c_.Expect(")"));
      } else if (c_.TryConsume("E(")) {
        RETURN_IF_ERROR(field("E", fpos));
        ASSIGN_OR_RETURN(l.element_size_in_bits, c_.ParseInt64());
        RETURN_IF_ERROR(c_.Expect(")"));
      } else if (c_.TryConsume("SC")) {
        RETURN_IF_ERROR(field("SC", fpos));
        while (c_.PeekRaw() == '(') {
          c_.set_pos(c_.pos() + 1);
          SplitConfig sc;
          ASSIGN_OR_RETURN(sc.dimension, c_.ParseInt64());
          RETURN_IF_ERROR(c_.Expect(":"));
          while (true) {
            ASSIGN_OR_RETURN(int64_t v, c_.ParseInt64());
            sc.split_indices.push_back(v);
            if (!c_.TryConsume(",")) break;
          }
          RETURN_IF_ERROR(c_.Expect(")"));
          l.split_configs.push_back(std::move(sc));
        }
      } else if (c_.TryConsume("S(")) {
        RETURN_IF_ERROR(field("S", fpos));
        ASSIGN_OR_RETURN(l.memory_space, c_.ParseInt64());
        RETURN_IF_ERROR(c_.Expect(")"));
      } else if (c_.TryConsume("P(")) {
        RETURN_IF_ERROR(field("P", fpos));
        ASSIGN_OR_RETURN(Shape p, ParseShape(1));
        l.physical_shape = std::make_shared<Shape>(std::move(p));
        RETURN_IF_ERROR(c_.Expect(")"));
      } else if (c_.TryConsume("M(")) {
        RETURN_IF_ERROR(field("M", fpos));
        ASSIGN_OR_RETURN(l.dynamic_shape_metadata_prefix_bytes, c_.ParseInt64());
        RETURN_IF_ERROR(c_.Expect(")"));
      } else {
        return c_.ErrorAt(fpos, "unknown layout field");
      }
    }
  }
  RETURN_IF_ERROR(c_.Expect("}"));
  // minor_to_major must be a permutation of the dimensions.
  if (!l.minor_to_major.empty() || shape.rank() > 0) {
    if (static_cast<int64_t>(l.minor_to_major.size()) != shape.rank()) {
      return c_.ErrorAt(pos, absl::StrCat("layout has ", l.minor_to_major.size(),
                                          " dimensions but the shape has rank ", shape.rank()));
    }
    std::vector<bool> seen(shape.rank(), false);
    for (int64_t d : l.minor_to_major) {
      if (d < 0 || d >= shape.rank() || seen[d]) {
        return c_.ErrorAt(pos, "layout minor_to_major is not a permutation of the dimensions");
      }
      seen[d] = true;
    }
  }
  RETURN_IF_ERROR(CheckSparseLayout(l, shape, pos));
  return l;
}

// D(C,S+~,...): D, C, S or H (dense, compressed, singleton, loose compressed),
// then '+' when not unique and '~' when not ordered, in that order.
absl::StatusOr<std::vector<DimLevel>> HloParser::ParseDimLevels() {
  std::vector<DimLevel> levels;
  if (c_.TryConsume(")")) return levels;
  while (true) {
    size_t pos = (c_.SkipSpace(), c_.pos());
    DimLevel d;
    switch (c_.PeekRaw()) {
      case 'D':
        d.type = DimLevel::Type::kDense;
        break;
      case 'C':
        d.type = DimLevel::Type::kCompressed;
        break;
      case 'S':
        d.type = DimLevel::Type::kSingleton;
        break;
      case 'H':
        d.type = DimLevel::Type::kLooseCompressed;
        break;
      default:
        return c_.ErrorAt(pos, "expected a dim level type D, C, S or H in D(...)");
    }
    c_.set_pos(pos + 1);
    if (c_.PeekRaw() == '+') {
      d.unique = false;
      c_.set_pos(c_.pos() + 1);
    }
    if (c_.PeekRaw() == '~') {
      d.ordered = false;
      c_.set_pos(c_.pos() + 1);
    }
    if (c_.PeekRaw() == '+') {
      return c_.Error("in D(...), '+' (not unique) must come before '~' (not ordered)");
    }
    levels.push_back(d);
    if (c_.TryConsume(",")) continue;
    if (c_.TryConsume(")")) return levels;
    return c_.Error("expected ',' or ')' after a dim level type in D(...)");
  }
}

// XLA's ValidateLayoutForShape rules for sparse layouts (any dimension not
// dense) and the fields only they may have.
absl::Status HloParser::CheckSparseLayout(const Layout& l, const Shape& shape, size_t pos) {
  if (!l.dim_levels.empty() && static_cast<int64_t>(l.dim_levels.size()) != shape.rank()) {
    return c_.ErrorAt(
        pos, absl::StrCat("layout has ", l.dim_levels.size(),
                          " dim level types in D(...) but the shape has rank ", shape.rank()));
  }
  bool sparse = false;
  for (size_t i = 0; i < l.dim_levels.size(); ++i) {
    const DimLevel& d = l.dim_levels[i];
    if (d.type != DimLevel::Type::kDense) {
      sparse = true;
    } else if (!d.unique || !d.ordered) {
      return c_.ErrorAt(pos, absl::StrCat("layout dimension ", i,
                                          " is dense (D), which is always unique and ordered; "
                                          "'+' and '~' apply to C, S and H only"));
    }
  }
  if (sparse) {
    if (!l.tiles.empty()) {
      return c_.ErrorAt(pos, "a sparse layout (C, S or H in D(...)) cannot have tiles T(...)");
    }
    if (l.physical_shape && l.physical_shape->has_layout() &&
        l.physical_shape->layout().physical_shape) {
      return c_.ErrorAt(pos, "the physical shape P(...) of a layout cannot have one itself");
    }
    return absl::OkStatus();
  }
  if (l.physical_shape) {
    return c_.ErrorAt(pos, "a physical shape P(...) is only allowed on sparse layouts");
  }
  if (l.index_primitive_type != PrimitiveType::PRIMITIVE_TYPE_INVALID) {
    return c_.ErrorAt(pos, "an index type #(...) is only allowed on sparse layouts");
  }
  if (l.pointer_primitive_type != PrimitiveType::PRIMITIVE_TYPE_INVALID) {
    return c_.ErrorAt(pos, "a pointer type *(...) is only allowed on sparse layouts");
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> HloParser::ParseLiteral(const Shape& shape, int depth) {
  if (depth > kMaxDepth) return c_.Error("literal nested too deeply");
  // One value for a whole array (below), checked before the literal is made.
  if (shape.IsArray() && shape.is_static() && shape.rank() > 0 && c_.Peek() != '{' &&
      shape.ElementCount() > kMaxSplatElements) {
    return c_.Error(absl::StrCat("a constant of ", shape.ElementCount(),
                                 " elements written as one value is unsupported (at most ",
                                 kMaxSplatElements, "); write broadcast(constant(v))"));
  }
  Literal lit(shape);
  if (shape.IsTuple()) {
    RETURN_IF_ERROR(c_.Expect("("));
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      if (i > 0) RETURN_IF_ERROR(c_.Expect(","));
      // Tuple elements may repeat their shape (custom-call literal= form).
      const Shape& es = shape.tuple_shapes(i);
      if (StartsShape(c_)) {
        ASSIGN_OR_RETURN(Shape given, ParseShape());
        if (!given.EqualIgnoringLayout(es)) return c_.Error("literal element shape does not match");
      }
      ASSIGN_OR_RETURN(lit.tuple_elements()[i], ParseLiteral(es, depth + 1));
    }
    RETURN_IF_ERROR(c_.Expect(")"));
    return lit;
  }
  if (shape.IsToken()) return c_.Error("token constants are not supported");
  if (!shape.IsArray())
    return c_.Error(absl::StrCat("cannot write a literal of shape ", shape.ToString()));
  if (!shape.is_static()) return c_.Error("constant shapes must be static");
  if (shape.rank() == 0) {
    RETURN_IF_ERROR(ParseLiteralElement(lit, 0));
    return lit;
  }
  if (c_.Peek() != '{') {
    // constant(1) for an array: every element takes the value.
    Literal scalar(Shape::Scalar(shape.element_type()));
    RETURN_IF_ERROR(ParseLiteralElement(scalar, 0));
    for (int64_t i = 0; i < lit.element_count(); ++i) {
      if (IsComplex(shape.element_type())) {
        lit.SetComplex(i, scalar.GetComplex(0));
      } else {
        lit.SetBits(i, scalar.GetBits(0));
      }
    }
    return lit;
  }
  RETURN_IF_ERROR(ParseArrayLiteral(lit));
  return lit;
}

absl::StatusOr<Literal> HloParser::ParseLiteralWithShape(int depth) {
  if (depth > kMaxDepth) return c_.Error("literal nested too deeply");
  if (c_.TryConsume("(")) {
    std::vector<Literal> elems;
    std::vector<Shape> shapes;
    if (!c_.TryConsume(")")) {
      while (true) {
        ASSIGN_OR_RETURN(Literal e, ParseLiteralWithShape(depth + 1));
        shapes.push_back(e.shape());
        elems.push_back(std::move(e));
        if (c_.TryConsume(",")) continue;
        RETURN_IF_ERROR(c_.Expect(")"));
        break;
      }
    }
    Literal lit(Shape::Tuple(std::move(shapes)));
    lit.tuple_elements() = std::move(elems);
    return lit;
  }
  ASSIGN_OR_RETURN(Shape s, ParseShape());
  return ParseLiteral(s, depth + 1);
}

absl::Status HloParser::ParseArrayLiteral(Literal& lit) {
  const Shape& shape = lit.shape();
  const int64_t rank = shape.rank();
  if (c_.LookingAt("{...}")) {
    c_.TryConsume("{...}");
    lit.set_elided(true);
    return absl::OkStatus();
  }
  // Nested braces, one level per dimension, each with exactly that many
  // entries (XLA rejects a flat list for a rank-2 literal).
  int64_t next = 0;
  std::function<absl::Status(int64_t)> parse_level = [&](int64_t dim) -> absl::Status {
    size_t open = (c_.SkipSpace(), c_.pos());
    RETURN_IF_ERROR(c_.Expect("{"));
    int64_t count = 0;
    if (!c_.TryConsume("}")) {
      while (true) {
        if (count >= shape.dimensions(dim)) {
          return c_.ErrorAt(open, absl::StrCat("too many entries in dimension ", dim,
                                               " of literal of shape ", shape.ToString(false)));
        }
        if (dim + 1 < rank) {
          if (c_.Peek() != '{') {
            return c_.Error(absl::StrCat("expected '{' for dimension ", dim + 1,
                                         " of literal of shape ", shape.ToString(false)));
          }
          RETURN_IF_ERROR(parse_level(dim + 1));
        } else {
          RETURN_IF_ERROR(ParseLiteralElement(lit, next++));
        }
        ++count;
        if (c_.TryConsume(",")) continue;
        RETURN_IF_ERROR(c_.Expect("}"));
        break;
      }
    }
    if (count != shape.dimensions(dim)) {
      return c_.ErrorAt(
          open, absl::StrCat("expected ", shape.dimensions(dim), " elements in dimension ", dim,
                             " of literal of shape ", shape.ToString(false), ", got ", count));
    }
    return absl::OkStatus();
  };
  return parse_level(0);
}

absl::Status HloParser::ParseLiteralElement(Literal& lit, int64_t index) {
  const PrimitiveType t = lit.shape().element_type();
  size_t pos = (c_.SkipSpace(), c_.pos());
  if (t == PrimitiveType::PRED) {
    if (c_.TryConsumeWord("true")) {
      lit.SetInt(index, 1);
    } else if (c_.TryConsumeWord("false")) {
      lit.SetInt(index, 0);
    } else {
      ASSIGN_OR_RETURN(int64_t v, c_.ParseInt64());
      if (v != 0 && v != 1) return c_.ErrorAt(pos, "pred literal must be true, false, 0 or 1");
      lit.SetInt(index, v);
    }
    return absl::OkStatus();
  }
  if (IsComplex(t)) {
    RETURN_IF_ERROR(c_.Expect("("));
    ASSIGN_OR_RETURN(double re, c_.ParseDouble());
    RETURN_IF_ERROR(c_.Expect(","));
    ASSIGN_OR_RETURN(double im, c_.ParseDouble());
    RETURN_IF_ERROR(c_.Expect(")"));
    PrimitiveType part = t == PrimitiveType::C64 ? PrimitiveType::F32 : PrimitiveType::F64;
    FloatFormat f = *GetFloatFormat(part);
    for (double v : {re, im}) {
      if (std::isfinite(v) && std::isinf(DecodeFloat(f, EncodeFloat(f, v)))) {
        return c_.ErrorAt(pos, absl::StrCat("complex literal component ", v,
                                            " is out of range for ", PrimitiveTypeName(t)));
      }
    }
    lit.SetComplex(index, {re, im});
    return absl::OkStatus();
  }
  if (IsInteger(t)) {
    const int bits = PrimitiveBitWidth(t);
    if (IsUnsignedInt(t)) {
      if (c_.PeekRaw() == '-') {
        // XLA wraps negative u64 constants (u64[] constant(-1) is 2^64-1).
        if (t != PrimitiveType::U64) {
          return c_.ErrorAt(
              pos, absl::StrCat("negative value for unsigned type ", PrimitiveTypeName(t)));
        }
        ASSIGN_OR_RETURN(int64_t v, c_.ParseInt64());
        lit.SetBits(index, static_cast<uint64_t>(v));
        return absl::OkStatus();
      }
      ASSIGN_OR_RETURN(uint64_t v, c_.ParseUint64());
      if (bits < 64 && v >= (uint64_t{1} << bits)) {
        return c_.ErrorAt(pos,
                          absl::StrCat("value ", v, " is out of range for ", PrimitiveTypeName(t)));
      }
      lit.SetBits(index, v);
    } else {
      ASSIGN_OR_RETURN(int64_t v, c_.ParseInt64());
      if (bits < 64) {
        int64_t lo = -(int64_t{1} << (bits - 1)), hi = (int64_t{1} << (bits - 1)) - 1;
        if (v < lo || v > hi) {
          return c_.ErrorAt(
              pos, absl::StrCat("value ", v, " is out of range for ", PrimitiveTypeName(t)));
        }
      }
      lit.SetInt(index, v);
    }
    return absl::OkStatus();
  }
  if (IsFloatingPoint(t)) {
    FloatFormat f = *GetFloatFormat(t);
    bool neg = c_.PeekRaw() == '-';
    size_t save = c_.pos();
    if (neg) c_.set_pos(save + 1);
    if (c_.TryConsumeWord("nan")) {
      uint64_t bits = QuietNanBits(f);
      if (f.nan == FloatFormat::Nan::kNone) {
        return c_.ErrorAt(pos, absl::StrCat(PrimitiveTypeName(t), " has no NaN"));
      }
      if (c_.PeekRaw() == '(') {
        c_.set_pos(c_.pos() + 1);
        RETURN_IF_ERROR(c_.Expect("0x"));
        size_t hpos = c_.pos();
        uint64_t payload = 0;
        while (std::isxdigit(static_cast<unsigned char>(c_.PeekRaw()))) {
          if (payload >> 60) return c_.ErrorAt(hpos, "NaN payload is too large");
          char ch = c_.PeekRaw();
          payload = payload * 16 + (std::isdigit(static_cast<unsigned char>(ch))
                                        ? ch - '0'
                                        : (std::tolower(ch) - 'a' + 10));
          c_.set_pos(c_.pos() + 1);
        }
        if (c_.pos() == hpos) return c_.Error("expected hex NaN payload");
        RETURN_IF_ERROR(c_.Expect(")"));
        if (f.nan != FloatFormat::Nan::kIeee) {
          return c_.ErrorAt(
              pos, absl::StrCat(PrimitiveTypeName(t), " has a single NaN and no NaN payloads"));
        }
        if (payload == 0 || payload >= (uint64_t{1} << f.mantissa_bits)) {
          return c_.ErrorAt(pos, absl::StrCat("NaN payload 0x", absl::Hex(payload),
                                              " does not fit in ", PrimitiveTypeName(t)));
        }
        bits = (bits & ~((uint64_t{1} << f.mantissa_bits) - 1)) | payload;
      }
      if (neg && f.has_sign) {
        bits |= uint64_t{1} << (f.exponent_bits + f.mantissa_bits);
      }
      lit.SetBits(index, bits);
      return absl::OkStatus();
    }
    c_.set_pos(save);
    ASSIGN_OR_RETURN(double v, c_.ParseDouble());
    if (std::isinf(v) && !f.has_inf) {
      return c_.ErrorAt(pos, absl::StrCat(PrimitiveTypeName(t), " has no infinity"));
    }
    uint64_t bits = EncodeFloat(f, v);
    double back = DecodeFloat(f, bits);
    if (std::isfinite(v) && !std::isfinite(back)) {
      return c_.ErrorAt(pos, absl::StrCat("value ", c_.text().substr(pos, c_.pos() - pos),
                                          " is out of range for literal's primitive type ",
                                          PrimitiveTypeName(t)));
    }
    lit.SetBits(index, bits);
    return absl::OkStatus();
  }
  return c_.ErrorAt(pos, absl::StrCat("cannot parse a literal of type ", PrimitiveTypeName(t)));
}

}  // namespace xlite::text_internal
