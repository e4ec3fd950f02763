#include "xlite/vhlo/bytecode_codes.h"

#include "absl/strings/match.h"

namespace xlite::vhlo::bytecode {

const std::vector<VhloAttrCode>& VhloAttrCodes() {
  static const auto* codes = new std::vector<VhloAttrCode>{
      // Code 0 (arg_result_alias) was retired before any golden was written.
      {1, "array_v1", VhloAttr::kArray, {}},
      {2, "bool_v1", VhloAttr::kBool, {}},
      {3, "comparison_direction_v1", VhloAttr::kEnum, {"EQ", "NE", "GE", "GT", "LE", "LT"}},
      {4,
       "comparison_type_v1",
       VhloAttr::kEnum,
       {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"}},
      {5,
       "api_version_v1",
       VhloAttr::kEnum,
       {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
        "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"}},
      {6, "dict_v1", VhloAttr::kDictionary, {}},
      {7, "fft_type_v1", VhloAttr::kEnum, {"FFT", "IFFT", "RFFT", "IRFFT"}},
      {8, "float_v1", VhloAttr::kFloat, {}},
      {9, "integer_v1", VhloAttr::kInteger, {}},
      {10, "output_operand_alias_v1", VhloAttr::kOutputOperandAlias, {}},
      {11, "precision_v1", VhloAttr::kEnum, {"DEFAULT", "HIGH", "HIGHEST"}},
      {12, "rng_algorithm_v1", VhloAttr::kEnum, {"DEFAULT", "THREE_FRY", "PHILOX"}},
      {13, "rng_distribution_v1", VhloAttr::kEnum, {nullptr, "UNIFORM", "NORMAL"}},
      {14, "string_v1", VhloAttr::kString, {}},
      {15, "tensor_v1", VhloAttr::kTensor, {}},
      {16,
       "transpose_v1",
       VhloAttr::kEnum,
       {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}},
      {17, "type_v1", VhloAttr::kType, {}},
      {18, "type_extensions_v1", VhloAttr::kTypeExtensions, {}},
      {19, "result_accuracy_mode_v1", VhloAttr::kEnum, {"DEFAULT", "HIGHEST", "TOLERANCE"}},
      {20, "result_accuracy_v1", VhloAttr::kResultAccuracy, {}},
      {21, "sub_axis_info_v1", VhloAttr::kSubAxisInfo, {}},
      {22, "axis_ref_v1", VhloAttr::kAxisRef, {}},
      {23, "replica_group_mesh_axes_v1", VhloAttr::kReplicaGroupMeshAxes, {}},
  };
  return *codes;
}

const std::vector<VhloTypeCode>& VhloTypeCodes() {
  static const auto* codes = new std::vector<VhloTypeCode>{
      {0, "bool_v1", VhloType::kScalar, "i1"},
      {1, "complex_v1", VhloType::kComplex, nullptr},
      {2, "bf16_v1", VhloType::kScalar, "bf16"},
      {3, "f16_v1", VhloType::kScalar, "f16"},
      {4, "f32_v1", VhloType::kScalar, "f32"},
      {5, "f64_v1", VhloType::kScalar, "f64"},
      {6, "f8E4M3FN_v1", VhloType::kScalar, "f8E4M3FN"},
      {7, "f8E5M2_v1", VhloType::kScalar, "f8E5M2"},
      {8, "func_v1", VhloType::kFunction, nullptr},
      {9, "index_v1", VhloType::kScalar, "index"},
      {10, "i4_v1", VhloType::kScalar, "i4"},
      {11, "i8_v1", VhloType::kScalar, "i8"},
      {12, "i16_v1", VhloType::kScalar, "i16"},
      {13, "i32_v1", VhloType::kScalar, "i32"},
      {14, "i64_v1", VhloType::kScalar, "i64"},
      {15, "ui4_v1", VhloType::kScalar, "ui4"},
      {16, "ui8_v1", VhloType::kScalar, "ui8"},
      {17, "ui16_v1", VhloType::kScalar, "ui16"},
      {18, "ui32_v1", VhloType::kScalar, "ui32"},
      {19, "ui64_v1", VhloType::kScalar, "ui64"},
      {20, "tensor_v1", VhloType::kRankedTensor, nullptr},
      {21, "tensor_v1", VhloType::kRankedTensorWithEncoding, nullptr},
      {22, "token_v1", VhloType::kToken, nullptr},
      {23, "tuple_v1", VhloType::kTuple, nullptr},
      {24, "quant_v1", VhloType::kQuantized, nullptr},
      {25, "unranked_tensor_v1", VhloType::kUnrankedTensor, nullptr},
      {26, "witness_v1", VhloType::kScalar, "!shape.witness"},
      {27, "f8E4M3FNUZ_v1", VhloType::kScalar, "f8E4M3FNUZ"},
      {28, "f8E5M2FNUZ_v1", VhloType::kScalar, "f8E5M2FNUZ"},
      {29, "f8E4M3B11FNUZ_v1", VhloType::kScalar, "f8E4M3B11FNUZ"},
      {30, "quant_per_axis_v1", VhloType::kQuantizedPerAxis, nullptr},
      {31, "i2_v1", VhloType::kScalar, "i2"},
      {32, "ui2_v1", VhloType::kScalar, "ui2"},
      {33, "none_v1", VhloType::kScalar, "none"},
      {34, "tf31_v1", VhloType::kScalar, "tf32"},
      {35, "f8E4M3_v1", VhloType::kScalar, "f8E4M3"},
      {36, "f8E3M4_v1", VhloType::kScalar, "f8E3M4"},
      {37, "f4E2M1FN_v1", VhloType::kScalar, "f4E2M1FN"},
      {38, "f6E2M3FN_v1", VhloType::kScalar, "f6E2M3FN"},
      {39, "f6E3M2FN_v1", VhloType::kScalar, "f6E3M2FN"},
      {40, "f8E8M0FNU_v1", VhloType::kScalar, "f8E8M0FNU"},
      {41, "buffer_v1", VhloType::kBuffer, nullptr},
      {42, "future_v1", VhloType::kFuture, nullptr},
  };
  return *codes;
}

uint64_t VhloAttrCodeOf(VhloAttr shape) {
  for (const VhloAttrCode& c : VhloAttrCodes()) {
    if (c.shape == shape) return c.code;
  }
  return 0;
}

uint64_t VhloTypeCodeOf(VhloType shape) {
  for (const VhloTypeCode& c : VhloTypeCodes()) {
    if (c.shape == shape) return c.code;
  }
  return 0;
}

const VhloAttrCode* FindVhloEnumCode(absl::string_view mnemonic) {
  for (const VhloAttrCode& c : VhloAttrCodes()) {
    if (c.shape == VhloAttr::kEnum && c.mnemonic == mnemonic) return &c;
  }
  return nullptr;
}

const VhloTypeCode* FindVhloScalarTypeCode(absl::string_view spelling) {
  for (const VhloTypeCode& c : VhloTypeCodes()) {
    if (c.shape == VhloType::kScalar && c.spelling == spelling) return &c;
  }
  return nullptr;
}

int FloatWidthOf(absl::string_view e) {
  if (e == "f16" || e == "bf16") return 16;
  if (e == "f32") return 32;
  if (e == "f64") return 64;
  if (e == "tf32") return 19;
  if (e == "f80") return 80;
  if (e == "f128") return 128;
  if (e == "f4E2M1FN") return 4;
  if (e == "f6E2M3FN" || e == "f6E3M2FN") return 6;
  if (absl::StartsWith(e, "f8E")) return 8;
  return 0;
}

}  // namespace xlite::vhlo::bytecode
