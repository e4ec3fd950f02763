// A small generic-operation layer for MLIR programs as StableHLO uses them:
// operations with a name, operands, results, attributes and regions. The text
// reader (mlir_parser.h) and the VHLO bytecode reader fill it; the lowering
// (lower.h) turns it into an HloModule; printer.h prints it canonically.
//
// Pretty op syntax is normalized on reading, so `stablehlo.broadcast_in_dim
// %x, dims = [0]` and its generic form `"stablehlo.broadcast_in_dim"(%x)
// <{broadcast_dimensions = array<i64: 0>}>` give the same Operation.
#ifndef XLITE_STABLEHLO_MLIR_H_
#define XLITE_STABLEHLO_MLIR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "xlite/ir/literal.h"

namespace xlite::mlir {

// file:line:col in the source text (line and column 1-based; 0 = unknown).
struct Location {
  std::string file;
  int line = 0;
  int column = 0;
  std::string ToString() const;
};

struct Type {
  enum class Kind {
    kTensor,    // tensor<2x?xf32>, tensor<*xf32>
    kScalar,    // a builtin element type: f32, i1, ui8, index, complex<f32>, !quant.uniform<..>
    kToken,     // !stablehlo.token
    kTuple,     // tuple<..>
    kFunction,  // (a, b) -> c
    kOther,     // any other type, kept as written
  };
  static constexpr int64_t kDynamic = -1;

  Kind kind = Kind::kOther;
  std::vector<int64_t> dims;   // kTensor; kDynamic for '?'
  bool ranked = true;          // kTensor: false for tensor<*x..>
  std::string element;         // kTensor: element type as written; kScalar/kOther: the type
  std::string encoding;        // kTensor: the encoding attribute, as written
  std::vector<Type> elements;  // kTuple elements; kFunction inputs
  std::vector<Type> results;   // kFunction results

  static Type Tensor(std::vector<int64_t> dims, std::string element);
  static Type Scalar(std::string element);
  bool IsStatic() const;
  bool operator==(const Type&) const = default;
};

struct Attribute;
// A key and its attribute (a struct, not std::pair: Attribute is incomplete here).
struct NamedAttribute;

struct Attribute {
  enum class Kind {
    kUnit,           // a key alone: {has_side_effect}
    kBool,           // true/false
    kInteger,        // 3 : i64 (type in `type`; none = i64)
    kFloat,          // 1.0 : f32
    kString,         // "text"
    kSymbol,         // @name
    kType,           // a type used as attribute (function_type = (..) -> ..)
    kArray,          // [a, b]
    kDenseArray,     // array<i64: 1, 2> (element type in `text`, values in ints/floats)
    kDense,          // dense<..> : tensor<..> (values in `literal`, type in `type`)
    kDenseResource,  // dense_resource<name> : tensor<..>
    kDict,           // {a = 1, b}
    kEnum,    // #stablehlo<comparison_direction LT>: `name` = comparison_direction, `text` = LT
    kStruct,  // #stablehlo.scatter<a = [0], ...>: `name` = stablehlo.scatter, fields
    kOpaque,  // any other #dialect attribute, kept as written in `text`
  };
  Kind kind = Kind::kUnit;
  bool bool_value = false;
  int64_t int_value = 0;
  double float_value = 0;
  std::string text;  // kString, kSymbol (without @), kEnum value, kDenseArray element, kOpaque
  std::string name;  // kEnum/kStruct mnemonic; kDenseResource handle
  Type type;         // kInteger, kFloat, kType, kDense, kDenseResource
  std::vector<Attribute> elements;         // kArray
  std::vector<int64_t> ints;               // kDenseArray of integers/booleans
  std::vector<double> floats;              // kDenseArray of f16..f64
  std::vector<NamedAttribute> fields;      // kDict, kStruct (in written order)
  std::shared_ptr<const Literal> literal;  // kDense (row-major; quantized: storage values)
  // kStruct with unnamed parts (#stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>): as written.
  std::string raw;

  static Attribute Int(int64_t v, std::string type = "i64");
  static Attribute Bool(bool v);
  static Attribute String(std::string s);
  static Attribute I64Array(std::vector<int64_t> v);  // array<i64: ...>
  static Attribute BoolArray(std::vector<bool> v);    // array<i1: ...>
  static Attribute Enum(std::string name, std::string value);
  const Attribute* Field(absl::string_view key) const;  // kDict/kStruct
};

struct NamedAttribute {
  NamedAttribute() = default;
  NamedAttribute(std::string key, Attribute value)
      : first(std::move(key)), second(std::move(value)) {}
  std::string first;
  Attribute second;
};

struct Operation;
struct Block;

// An SSA value: an operation result or a block argument.
struct Value {
  Type type;
  std::string name;  // as written, without '%' ("0", "arg0", "0#1"); for diagnostics
  Operation* defining_op = nullptr;
  int result_index = 0;
  Block* owner = nullptr;  // block argument
  int arg_index = 0;
};

struct Region {
  std::vector<std::unique_ptr<Block>> blocks;
};

struct Operation {
  std::string name;  // "stablehlo.add", "func.func", "builtin.module"
  std::vector<Value*> operands;
  std::vector<std::unique_ptr<Value>> results;
  std::vector<NamedAttribute> attributes;  // properties and discardable attributes
  std::vector<std::unique_ptr<Region>> regions;
  std::vector<Block*> successors;
  Location loc;

  const Attribute* attr(absl::string_view key) const;
  void SetAttr(std::string key, Attribute value);  // replaces an existing key
  Type result_type(int i = 0) const { return results[i]->type; }
};

struct Block {
  std::string label;  // "bb0"
  std::vector<std::unique_ptr<Value>> arguments;
  std::vector<std::unique_ptr<Operation>> operations;
  Operation* parent = nullptr;
};

// The top-level operation ("builtin.module") owns the program.
using OwningOp = std::unique_ptr<Operation>;

// func.func's symbol name, or "".
std::string SymbolName(const Operation& op);

}  // namespace xlite::mlir

#endif  // XLITE_STABLEHLO_MLIR_H_
