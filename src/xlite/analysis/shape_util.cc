#include "xlite/analysis/shape_util.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace xlite {
namespace {

constexpr int64_t kPointerSize = 8;

void Walk(const Shape& shape, ShapeIndex& index,
          absl::FunctionRef<void(const Shape&, const ShapeIndex&)> fn) {
  fn(shape, index);
  if (!shape.IsTuple()) return;
  for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
    index.push_back(i);
    Walk(shape.tuple_shapes(i), index, fn);
    index.pop_back();
  }
}

}  // namespace

std::string ShapeIndexToString(const ShapeIndex& index) {
  return absl::StrCat("{", absl::StrJoin(index, ","), "}");
}

void ForEachSubshape(const Shape& shape,
                     absl::FunctionRef<void(const Shape&, const ShapeIndex&)> fn) {
  ShapeIndex index;
  Walk(shape, index, fn);
}

int64_t SubshapeCount(const Shape& shape) {
  int64_t n = 1;
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) n += SubshapeCount(element);
  }
  return n;
}

bool HasUnboundedDimension(const Shape& shape) {
  if (shape.IsTuple() || shape.IsBuffer()) {
    for (const Shape& element : shape.tuple_shapes()) {
      if (HasUnboundedDimension(element)) return true;
    }
    return false;
  }
  for (int64_t d : shape.dimensions()) {
    if (d == Shape::kUnboundedSize) return true;
  }
  return false;
}

bool IsEffectiveScalar(const Shape& shape) { return shape.IsArray() && shape.ElementCount() == 1; }

int64_t ShapeSizeBytes(const Shape& shape) {
  if (shape.IsTuple()) return kPointerSize * shape.tuple_shapes_size();
  if (shape.IsToken()) return 0;
  if (shape.IsOpaque()) return kPointerSize;
  if (shape.IsBuffer()) {
    return shape.tuple_shapes().empty() ? 0 : ShapeSizeBytes(shape.tuple_shapes(0));
  }
  if (!shape.IsArray()) return 0;
  const int64_t elements = shape.ElementCount();
  int64_t bytes = elements * PrimitiveByteWidth(shape.element_type());
  if (shape.has_layout() && shape.layout().element_size_in_bits > 0) {
    bytes = (elements * shape.layout().element_size_in_bits + 7) / 8;
  }
  if (!shape.is_static()) bytes += 4 * shape.rank();
  return bytes;
}

}  // namespace xlite
