#include "xlite/cpu/physical_layout.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "xlite/codegen/kernel.h"

namespace xlite::cpu {
namespace {

// Calls fn(logical, physical) for every element, logical in row-major order.
template <typename Fn>
void ForEachElement(const Shape& physical, Fn fn) {
  const int64_t rank = physical.rank();
  const int64_t count = physical.ElementCount();
  if (count == 0) return;
  const std::vector<int64_t> strides = codegen::PhysicalStrides(physical);
  std::vector<int64_t> index(rank, 0);
  int64_t offset = 0;
  for (int64_t logical = 0; logical < count; ++logical) {
    fn(logical, offset);
    for (int64_t d = rank - 1; d >= 0; --d) {
      ++index[d];
      offset += strides[d];
      if (index[d] < physical.dimensions(d)) break;
      offset -= strides[d] * index[d];
      index[d] = 0;
    }
  }
}

}  // namespace

absl::Status CheckRunnableLayout(const Shape& shape, absl::string_view what) {
  if (!shape.IsArray()) return absl::OkStatus();
  if (!shape.is_static()) {
    return absl::UnimplementedError(absl::StrCat(what, " has dynamic dimensions (",
                                                 shape.ToString(),
                                                 "): not supported by the CPU backend"));
  }
  if (shape.has_layout() &&
      (!shape.layout().tiles.empty() || shape.layout().element_size_in_bits != 0)) {
    return absl::UnimplementedError(absl::StrCat(what, " has a tiled or packed layout (",
                                                 shape.ToString(),
                                                 "): not supported by the CPU backend"));
  }
  return absl::OkStatus();
}

void LiteralToPhysical(const Literal& literal, const Shape& physical, void* dest) {
  const int64_t width = PrimitiveByteWidth(physical.element_type());
  if (physical.ElementCount() == 0) return;
  const uint8_t* src = literal.raw_data().data();
  if (physical.HasRowMajorLayout()) {
    std::memcpy(dest, src, static_cast<size_t>(physical.ElementCount() * width));
    return;
  }
  uint8_t* out = static_cast<uint8_t*>(dest);
  ForEachElement(physical, [&](int64_t logical, int64_t offset) {
    std::memcpy(out + offset * width, src + logical * width, static_cast<size_t>(width));
  });
}

void PhysicalToLiteral(const void* src, const Shape& physical, Literal& literal) {
  const int64_t width = PrimitiveByteWidth(physical.element_type());
  if (physical.ElementCount() == 0) return;
  uint8_t* out = literal.mutable_raw_data();
  if (physical.HasRowMajorLayout()) {
    std::memcpy(out, src, static_cast<size_t>(physical.ElementCount() * width));
    return;
  }
  const uint8_t* in = static_cast<const uint8_t*>(src);
  ForEachElement(physical, [&](int64_t logical, int64_t offset) {
    std::memcpy(out + logical * width, in + offset * width, static_cast<size_t>(width));
  });
}

Shape WithoutLayouts(Shape shape) {
  if (shape.IsTuple()) {
    for (Shape& s : shape.mutable_tuple_shapes()) s = WithoutLayouts(s);
  } else {
    shape.clear_layout();
  }
  return shape;
}

}  // namespace xlite::cpu
