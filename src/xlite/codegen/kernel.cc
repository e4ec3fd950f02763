#include "xlite/codegen/kernel.h"

#include <algorithm>

namespace xlite::codegen {
namespace {

bool IsPermutation(const std::vector<int64_t>& v, int64_t size) {
  if (static_cast<int64_t>(v.size()) != size) return false;
  std::vector<bool> seen(size, false);
  for (int64_t d : v) {
    if (d < 0 || d >= size || seen[d]) return false;
    seen[d] = true;
  }
  return true;
}

void AppendLeaves(const Shape& shape, std::vector<Shape>& out) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) AppendLeaves(s, out);
    return;
  }
  Shape s = shape;
  s.SetDefaultLayoutIfMissing();
  out.push_back(std::move(s));
}

}  // namespace

std::vector<int64_t> MinorToMajor(const Shape& shape) {
  if (shape.has_layout() && IsPermutation(shape.layout().minor_to_major, shape.rank())) {
    return shape.layout().minor_to_major;
  }
  std::vector<int64_t> order;
  for (int64_t d = shape.rank() - 1; d >= 0; --d) order.push_back(d);
  return order;
}

int64_t MinorDimension(const Shape& shape) {
  if (shape.rank() == 0) return -1;
  if (shape.has_layout() && IsPermutation(shape.layout().minor_to_major, shape.rank())) {
    return shape.layout().minor_to_major[0];
  }
  return shape.rank() - 1;
}

std::vector<int64_t> PhysicalStrides(const Shape& shape) {
  std::vector<int64_t> strides(shape.rank(), 1);
  int64_t stride = 1;
  for (int64_t d : MinorToMajor(shape)) {
    strides[d] = stride;
    stride *= std::max<int64_t>(shape.dimensions(d), 0);
  }
  return strides;
}

std::vector<Shape> KernelBufferShapes(const HloInstruction& instr) {
  std::vector<Shape> shapes;
  for (const HloInstruction* operand : instr.operands()) {
    Shape s = operand->shape();
    s.SetDefaultLayoutIfMissing();
    shapes.push_back(std::move(s));
  }
  AppendLeaves(instr.shape(), shapes);
  return shapes;
}

}  // namespace xlite::codegen
