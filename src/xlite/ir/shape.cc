#include "xlite/ir/shape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace xlite {

std::string DimLevel::ToString() const {
  static constexpr const char* kLetters[] = {"D", "C", "S", "H"};
  return absl::StrCat(kLetters[static_cast<int>(type)], unique ? "" : "+", ordered ? "" : "~");
}

bool Layout::operator==(const Layout& o) const {
  bool physical_equal =
      (!physical_shape && !o.physical_shape) ||
      (physical_shape && o.physical_shape && *physical_shape == *o.physical_shape);
  return minor_to_major == o.minor_to_major && dim_levels == o.dim_levels && tiles == o.tiles &&
         tail_padding_alignment_in_elements == o.tail_padding_alignment_in_elements &&
         index_primitive_type == o.index_primitive_type &&
         pointer_primitive_type == o.pointer_primitive_type &&
         element_size_in_bits == o.element_size_in_bits && memory_space == o.memory_space &&
         split_configs == o.split_configs && physical_equal &&
         dynamic_shape_metadata_prefix_bytes == o.dynamic_shape_metadata_prefix_bytes;
}

bool Layout::HasOnlyMinorToMajor() const {
  return dim_levels.empty() && tiles.empty() && tail_padding_alignment_in_elements == 1 &&
         index_primitive_type == PrimitiveType::PRIMITIVE_TYPE_INVALID &&
         pointer_primitive_type == PrimitiveType::PRIMITIVE_TYPE_INVALID &&
         element_size_in_bits == 0 && memory_space == 0 && split_configs.empty() &&
         !physical_shape && dynamic_shape_metadata_prefix_bytes == 0;
}

std::string Layout::ToString() const {
  std::string out = "{";
  absl::StrAppend(&out, absl::StrJoin(minor_to_major, ","));
  if (!HasOnlyMinorToMajor()) {
    out += ":";
    if (!dim_levels.empty()) {
      absl::StrAppend(&out, "D(",
                      absl::StrJoin(dim_levels, ",",
                                    [](std::string* o, const DimLevel& d) {
                                      absl::StrAppend(o, d.ToString());
                                    }),
                      ")");
    }
    if (!tiles.empty()) {
      out += "T";
      for (const Tile& t : tiles) {
        out += "(";
        for (size_t i = 0; i < t.dimensions.size(); ++i) {
          if (i) out += ",";
          if (t.dimensions[i] == Tile::kCombineDimension) {
            out += "*";
          } else {
            absl::StrAppend(&out, t.dimensions[i]);
          }
        }
        out += ")";
      }
    }
    if (tail_padding_alignment_in_elements != 1) {
      absl::StrAppend(&out, "L(", tail_padding_alignment_in_elements, ")");
    }
    if (index_primitive_type != PrimitiveType::PRIMITIVE_TYPE_INVALID) {
      absl::StrAppend(&out, "#(", std::string(PrimitiveTypeName(index_primitive_type)), ")");
    }
    if (pointer_primitive_type != PrimitiveType::PRIMITIVE_TYPE_INVALID) {
      absl::StrAppend(&out, "*(", std::string(PrimitiveTypeName(pointer_primitive_type)), ")");
    }
    if (element_size_in_bits != 0) absl::StrAppend(&out, "E(", element_size_in_bits, ")");
    if (memory_space != 0) absl::StrAppend(&out, "S(", memory_space, ")");
    if (!split_configs.empty()) {
      out += "SC";
      for (const SplitConfig& sc : split_configs) {
        absl::StrAppend(&out, "(", sc.dimension, ":", absl::StrJoin(sc.split_indices, ","), ")");
      }
    }
    if (physical_shape) absl::StrAppend(&out, "P(", physical_shape->ToString(true), ")");
    if (dynamic_shape_metadata_prefix_bytes != 0) {
      absl::StrAppend(&out, "M(", dynamic_shape_metadata_prefix_bytes, ")");
    }
  }
  out += "}";
  return out;
}

Shape Shape::Array(PrimitiveType type, std::vector<int64_t> dims) {
  Shape s;
  s.element_type_ = type;
  s.dynamic_.assign(dims.size(), false);
  s.dims_ = std::move(dims);
  return s;
}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape s;
  s.element_type_ = PrimitiveType::TUPLE;
  s.tuple_ = std::move(elements);
  return s;
}

Shape Shape::Buffer(Shape array) {
  Shape s;
  s.element_type_ = PrimitiveType::BUFFER;
  s.tuple_.push_back(std::move(array));
  return s;
}

Shape Shape::Token() {
  Shape s;
  s.element_type_ = PrimitiveType::TOKEN;
  return s;
}

bool Shape::is_static() const {
  if (IsTuple()) {
    for (const Shape& s : tuple_) {
      if (!s.is_static()) return false;
    }
    return true;
  }
  for (bool d : dynamic_) {
    if (d) return false;
  }
  return true;
}

int64_t Shape::ElementCount() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d < 0 ? 0 : d;
  return n;
}

void Shape::SetDefaultLayoutIfMissing() {
  if (IsTuple() || IsBuffer()) {
    for (Shape& s : tuple_) s.SetDefaultLayoutIfMissing();
    return;
  }
  if (!IsArray() || layout_) return;
  Layout l;
  for (int64_t i = rank() - 1; i >= 0; --i) l.minor_to_major.push_back(i);
  layout_ = std::move(l);
}

bool Shape::HasDefaultLayout() const {
  if (!layout_) return false;
  if (!layout_->HasOnlyMinorToMajor() || layout_->minor_to_major.size() != dims_.size()) {
    return false;
  }
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (layout_->minor_to_major[i] != static_cast<int64_t>(dims_.size() - 1 - i)) return false;
  }
  return true;
}

bool Shape::operator==(const Shape& o) const {
  if (!EqualIgnoringLayout(o)) return false;
  if (IsTuple() || IsBuffer()) {
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (!(tuple_[i] == o.tuple_[i])) return false;
    }
    return true;
  }
  if (!IsArray()) return true;
  if (layout_.has_value() != o.layout_.has_value()) return false;
  return !layout_ || *layout_ == *o.layout_;
}

bool Shape::EqualIgnoringLayout(const Shape& o) const {
  if (element_type_ != o.element_type_) return false;
  if (IsTuple() || IsBuffer()) {
    if (tuple_.size() != o.tuple_.size()) return false;
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (!tuple_[i].EqualIgnoringLayout(o.tuple_[i])) return false;
    }
    return true;
  }
  return dims_ == o.dims_ && dynamic_ == o.dynamic_;
}

void Shape::AppendTo(std::string& out, bool print_layout) const {
  if (IsBuffer()) {
    out += "b(";
    tuple_[0].AppendTo(out, print_layout);
    out += ")";
    return;
  }
  if (IsTuple()) {
    out += "(";
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (i > 0) {
        out += ", ";
        if (i % 5 == 0) absl::StrAppend(&out, "/*index=", i, "*/");
      }
      tuple_[i].AppendTo(out, print_layout);
    }
    out += ")";
    return;
  }
  absl::StrAppend(&out, PrimitiveTypeName(element_type_));
  out += "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) out += ",";
    if (dims_[i] == kUnboundedSize) {
      out += "?";
    } else {
      if (dynamic_[i]) out += "<=";
      absl::StrAppend(&out, dims_[i]);
    }
  }
  out += "]";
  if (print_layout && layout_ && IsArray()) {
    if (!dims_.empty() || !layout_->HasOnlyMinorToMajor()) out += layout_->ToString();
  }
}

std::string Shape::ToString(bool print_layout) const {
  std::string out;
  AppendTo(out, print_layout);
  return out;
}

const Shape* SubshapeAt(const Shape& shape, const std::vector<int64_t>& index) {
  const Shape* s = &shape;
  for (int64_t i : index) {
    if (!s->IsTuple() || i < 0 || i >= s->tuple_shapes_size()) return nullptr;
    s = &s->tuple_shapes(i);
  }
  return s;
}

}  // namespace xlite
