// Shapes and layouts, modelled on XLA's Shape/Layout.
#ifndef XLITE_IR_SHAPE_H_
#define XLITE_IR_SHAPE_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xlite/ir/primitive_type.h"

namespace xlite {

class Shape;

// One tile of a tiled layout: T(8,128). kCombineDimension prints as '*'.
struct Tile {
  static constexpr int64_t kCombineDimension = std::numeric_limits<int64_t>::min();
  std::vector<int64_t> dimensions;
  bool operator==(const Tile&) const = default;
};

// SC(dim:idx,idx): a split of one dimension across memories.
struct SplitConfig {
  int64_t dimension = 0;
  std::vector<int64_t> split_indices;
  bool operator==(const SplitConfig&) const = default;
};

// One entry of D(...): how a sparse layout stores a dimension (XLA's
// DimLevelType), written D, C, S or H, then '+' if not unique and '~' if not
// ordered.
struct DimLevel {
  enum class Type { kDense, kCompressed, kSingleton, kLooseCompressed };
  Type type = Type::kDense;
  bool unique = true;
  bool ordered = true;
  bool operator==(const DimLevel&) const = default;
  std::string ToString() const;  // "C+~"
};

struct Layout {
  std::vector<int64_t> minor_to_major;
  std::vector<DimLevel> dim_levels;  // D(...); empty = dense
  std::vector<Tile> tiles;
  int64_t tail_padding_alignment_in_elements = 1;                                // L(n)
  PrimitiveType index_primitive_type = PrimitiveType::PRIMITIVE_TYPE_INVALID;    // #(t)
  PrimitiveType pointer_primitive_type = PrimitiveType::PRIMITIVE_TYPE_INVALID;  // *(t)
  int64_t element_size_in_bits = 0;                                              // E(n)
  int64_t memory_space = 0;                                                      // S(n)
  std::vector<SplitConfig> split_configs;                                        // SC(...)
  std::shared_ptr<Shape> physical_shape;                                         // P(shape)
  int64_t dynamic_shape_metadata_prefix_bytes = 0;                               // M(n)

  bool operator==(const Layout& other) const;
  // True if only minor_to_major is set.
  bool HasOnlyMinorToMajor() const;
  std::string ToString() const;
};

class Shape {
 public:
  // Size of an unbounded dynamic dimension, printed as '?'.
  static constexpr int64_t kUnboundedSize = std::numeric_limits<int64_t>::min();

  Shape() = default;
  static Shape Array(PrimitiveType type, std::vector<int64_t> dims);
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token();
  // b(f32[2,4]): a buffer holding an array.
  static Shape Buffer(Shape array);
  bool IsBuffer() const { return element_type_ == PrimitiveType::BUFFER; }
  static Shape Scalar(PrimitiveType type) { return Array(type, {}); }

  PrimitiveType element_type() const { return element_type_; }
  void set_element_type(PrimitiveType t) { element_type_ = t; }
  bool IsTuple() const { return element_type_ == PrimitiveType::TUPLE; }
  bool IsToken() const { return element_type_ == PrimitiveType::TOKEN; }
  bool IsOpaque() const { return element_type_ == PrimitiveType::OPAQUE_TYPE; }
  bool IsArray() const { return IsArrayType(element_type_); }
  bool IsScalar() const { return IsArray() && dims_.empty(); }

  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  const std::vector<int64_t>& dimensions() const { return dims_; }
  int64_t dimensions(int64_t i) const { return dims_[i]; }
  void set_dimensions(int64_t i, int64_t v) { dims_[i] = v; }
  bool is_dynamic_dimension(int64_t i) const { return dynamic_[i]; }
  void set_dynamic_dimension(int64_t i, bool d) { dynamic_[i] = d; }
  const std::vector<bool>& dynamic_dimensions() const { return dynamic_; }
  bool is_static() const;
  void add_dimension(int64_t size, bool dynamic = false) {
    dims_.push_back(size);
    dynamic_.push_back(dynamic);
  }
  // Number of elements of a static array shape.
  int64_t ElementCount() const;

  const std::vector<Shape>& tuple_shapes() const { return tuple_; }
  std::vector<Shape>& mutable_tuple_shapes() { return tuple_; }
  const Shape& tuple_shapes(int64_t i) const { return tuple_[i]; }
  int64_t tuple_shapes_size() const { return static_cast<int64_t>(tuple_.size()); }

  bool has_layout() const { return layout_.has_value(); }
  const Layout& layout() const { return *layout_; }
  Layout& mutable_layout() {
    if (!layout_) layout_.emplace();
    return *layout_;
  }
  void set_layout(Layout l) { layout_ = std::move(l); }
  void clear_layout() { layout_.reset(); }
  // Sets the default {rank-1,...,0} layout on arrays without one, recursively.
  void SetDefaultLayoutIfMissing();
  bool HasDefaultLayout() const;
  // Stored row-major: the default {rank-1,...,0} layout, or none yet (which
  // means the default).
  bool HasRowMajorLayout() const { return !has_layout() || HasDefaultLayout(); }

  // Exact equality, layouts included.
  bool operator==(const Shape& other) const;
  bool EqualIgnoringLayout(const Shape& other) const;

  // XLA's spelling, e.g. "f32[2,<=3]{1,0}" or "(f32[], s32[4]{0})".
  std::string ToString(bool print_layout = true) const;
  void AppendTo(std::string& out, bool print_layout) const;

 private:
  PrimitiveType element_type_ = PrimitiveType::PRIMITIVE_TYPE_INVALID;
  std::vector<int64_t> dims_;
  std::vector<bool> dynamic_;
  std::vector<Shape> tuple_;
  std::optional<Layout> layout_;
};

// Subshape at a ShapeIndex ({} is the shape itself); nullptr if out of range.
const Shape* SubshapeAt(const Shape& shape, const std::vector<int64_t>& index);

}  // namespace xlite

#endif  // XLITE_IR_SHAPE_H_
