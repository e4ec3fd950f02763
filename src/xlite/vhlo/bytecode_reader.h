// Reads MLIR bytecode, as StableHLO portable artifacts (VHLO) use it, into the
// generic-operation layer of xlite/stablehlo/mlir.h.
//
// Written from MLIR's "Bytecode Format" document and StableHLO's VHLO bytecode
// encoding; reads bytecode versions 0..6 (StableHLO 0.9 .. 1.x producers).
// Operations keep their VHLO names ("vhlo.add_v1", "vhlo.func_v1"); the result
// is the top-level "builtin.module". Turning VHLO into StableHLO (and refusing
// unknown VHLO ops such as "vhlo.constant_v99") is a later layer's job.
//
// Representation (VHLO -> mlir.h), chosen to look like what the text reader
// produces, with the VHLO mnemonic kept in Attribute::name where it helps:
//
//   Types                                  mlir::Type
//   !vhlo.tensor_v1<2x?x!vhlo.f32_v1>      kTensor dims {2, kDynamic}, element "f32"
//     with #vhlo.type_extensions_v1<bounds = [4, ?]>  encoding "#stablehlo.type_extensions<bounds =
//     [4, ?]>"
//   !vhlo.unranked_tensor_v1<E>            kTensor ranked = false
//   !vhlo.f32_v1, bf16, f16, f64, f8*, f4E2M1FN, f6*, tf31 (tf32)
//                                          kScalar "f32", "bf16", ..., "tf32"
//   !vhlo.bool_v1, i2..i64_v1, ui2..ui64_v1, index_v1, none_v1
//                                          kScalar "i1", "i8", "ui8", "index", "none"
//   !vhlo.complex_v1<!vhlo.f32_v1>         kScalar "complex<f32>"
//   !vhlo.quant_v1<...>                    kScalar "!quant.uniform<i8:f32, 0.5:-1>" (MLIR's
//   !vhlo.quant_per_axis_v1<...>           quant spelling: storage i8/u8, <min:max> when not the
//                                          full range, :axis, {scale:zp, ...})
//   !vhlo.token_v1                         kToken
//   !vhlo.tuple_v1<...>                    kTuple (elements)
//   !vhlo.func_v1<(A) -> R>                kFunction (elements = inputs, results)
//   !vhlo.buffer_v1<2x!vhlo.f32_v1>        kOther "memref<2xf32>" (dims set)
//   !vhlo.future_v1<T...>                  kOther "!stablehlo.future<T...>" (elements = T...)
//   !vhlo.witness_v1                       kScalar "!shape.witness"
//
//   Attributes                             mlir::Attribute (name = "vhlo.<mnemonic>")
//   #vhlo.integer_v1<3 : i64>              kInteger int_value 3, type kScalar "i64"
//   #vhlo.float_v1<1.0 : f32>              kFloat float_value, type
//   #vhlo.bool_v1<true>                    kBool
//   #vhlo.string_v1<"public">              kString text
//   #vhlo.array_v1<[...]>                  kArray elements
//   #vhlo.dict_v1<{#vhlo.string_v1<"k"> = v}>  kDict fields {"k", v}
//   #vhlo.tensor_v1<dense<..> : tensor<..>>    kDense: literal (xlite::Literal, row-major;
//                                          quantized: storage values), type the tensor type
//   #vhlo.type_v1<T>                       kType type
//   #vhlo<comparison_direction_v1 EQ>      kEnum name "comparison_direction_v1", text "EQ"
//     (also comparison_type_v1, api_version_v1, fft_type_v1, precision_v1,
//      rng_algorithm_v1, rng_distribution_v1, transpose_v1, result_accuracy_mode_v1;
//      these have no "vhlo." prefix in `name`, as in the text form #vhlo<name_v1 X>)
//   #vhlo.output_operand_alias_v1<..>      kStruct fields outputTupleIndices (i64 array),
//                                          operandIndex (integer), operandTupleIndices
//   #vhlo.type_extensions_v1<bounds = ..>  kStruct fields bounds (i64 array, kDynamic for ?)
//   #vhlo.result_accuracy_v1<..>           kStruct fields atol, rtol (f64), ulps, mode (enum)
//   #vhlo.replica_group_mesh_axes_v1<..>   kStruct fields mesh, axes
//   #vhlo.axis_ref_v1<..>                  kStruct fields name[, sub_axis_info]
//   #vhlo.sub_axis_info_v1<..>             kStruct fields pre_size, size
//   builtin attributes (older producers, attribute dictionaries): the same kinds as the
//   text reader (kDict, kString, kArray, kInteger, kDense, kDenseArray, kSymbol, ...).
//
// Operation::attributes holds the properties (bytecode >= 5; names from the
// table in vhlo_op_properties.h) followed by the discardable attributes.
// Locations are read only for Operation::loc (file:line:col when the file has
// them; the goldens strip them). Use-list orders are read and ignored.
//
// Limits: every count is bounded by the bytes that remain, every index is
// checked, nesting (regions, attributes, types) deeper than 200 is refused,
// and so are files that would materialize too many attribute nodes or dense
// data over 256 MiB. Errors are InvalidArgument (Unimplemented for readable but
// unsupported content) and read "file: offset N (where): what is wrong".
#ifndef XLITE_VHLO_BYTECODE_READER_H_
#define XLITE_VHLO_BYTECODE_READER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "xlite/stablehlo/mlir.h"

namespace xlite::vhlo {

// What the container says about itself.
struct BytecodeInfo {
  uint64_t version = 0;  // bytecode format version, 0..6
  std::string producer;  // e.g. "StableHLO_v1.20.0"
  struct Dialect {
    std::string name;     // "builtin", "vhlo", ...
    std::string version;  // the dialect's version entry, if any: "1.2.3" when it is three
                          // varints (VHLO's form), else hex bytes; "" when absent
  };
  std::vector<Dialect> dialects;
  std::vector<std::string> op_names;  // "vhlo.add_v1", ... as listed in the file
  int64_t num_operations = 0;         // operations read, builtin.module included
};

// True when `bytes` starts with the bytecode magic "ML\xEFR".
bool IsBytecode(absl::string_view bytes);

// Reads a whole bytecode file. `filename` only names the file in errors.
absl::StatusOr<mlir::OwningOp> ReadBytecode(absl::string_view bytes, const std::string& filename,
                                            BytecodeInfo* info = nullptr);

}  // namespace xlite::vhlo

#endif  // XLITE_VHLO_BYTECODE_READER_H_
