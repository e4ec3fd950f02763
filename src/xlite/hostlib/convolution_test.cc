// hostlib::Convolution against a direct convolution computed here from HLO's
// definition, for oneDNN and the own loops: strides, padding (negative too),
// window and base dilation, window reversal, feature and batch groups, 0 to 3
// spatial dimensions, the float, integer and narrow types.
#include "xlite/hostlib/convolution.h"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "xlite/hostlib/element_access.h"
#include "xlite/hostlib/kernel_test_util.h"

namespace xlite::hostlib {
namespace {
namespace XLITE_UNITY_ID {

using kernel_test::RandomBuffer;
using kernel_test::UnitRoundoff;
using kernel_test::Value;
using E = ElementType;

// A convolution from its window, with the output size HLO gives it.
ConvolutionShape Make(int64_t n, int64_t c, int64_t o, std::vector<int64_t> in,
                      std::vector<int64_t> kernel, std::vector<int64_t> stride = {},
                      std::vector<int64_t> pad_lo = {}, std::vector<int64_t> pad_hi = {},
                      std::vector<int64_t> lhs_dil = {}, std::vector<int64_t> rhs_dil = {},
                      std::vector<bool> reversal = {}, int64_t groups = 1,
                      int64_t batch_groups = 1) {
  const size_t rank = in.size();
  auto fill = [&](std::vector<int64_t> v, int64_t value) {
    return v.empty() ? std::vector<int64_t>(rank, value) : v;
  };
  ConvolutionShape s;
  s.batch = n;
  s.input_features = c;
  s.output_features = o;
  s.feature_group_count = groups;
  s.batch_group_count = batch_groups;
  s.input_spatial = in;
  s.kernel_spatial = kernel;
  s.strides = fill(stride, 1);
  s.padding_low = fill(pad_lo, 0);
  s.padding_high = fill(pad_hi, 0);
  s.lhs_dilation = fill(lhs_dil, 1);
  s.rhs_dilation = fill(rhs_dil, 1);
  s.window_reversal = reversal.empty() ? std::vector<bool>(rank, false) : reversal;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t din = (in[d] - 1) * s.lhs_dilation[d] + 1;
    const int64_t dk = (kernel[d] - 1) * s.rhs_dilation[d] + 1;
    const int64_t padded = din + s.padding_low[d] + s.padding_high[d];
    s.output_spatial.push_back(padded < dk ? 0 : (padded - dk) / s.strides[d] + 1);
  }
  return s;
}

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// Row-major offset of `index` in `dims`.
int64_t Offset(const std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  int64_t offset = 0;
  for (size_t d = 0; d < dims.size(); ++d) offset = offset * dims[d] + index[d];
  return offset;
}

// Advances a row-major multi-index; false after the last one.
bool Next(std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}

void CheckConvolution(const ConvolutionShape& s, E lhs_type, E rhs_type, E out_type,
                      ConvolutionBackend backend, ConvolutionBackend* used = nullptr) {
  SCOPED_TRACE(absl::StrCat(ElementTypeName(lhs_type), " ", s.ToString()));
  const int64_t in_count = s.batch * Product(s.input_spatial) * s.input_features;
  const int64_t group_in = s.input_features / s.feature_group_count;
  const int64_t kernel_count = Product(s.kernel_spatial) * group_in * s.output_features;
  const int64_t out_batch = s.batch / s.batch_group_count;
  const int64_t out_count = out_batch * Product(s.output_spatial) * s.output_features;
  const std::vector<uint8_t> a = RandomBuffer(lhs_type, in_count, 21);
  const std::vector<uint8_t> w = RandomBuffer(rhs_type, kernel_count, 22);
  std::vector<uint8_t> out(out_count * ElementByteWidth(out_type), 0xCD);
  ConvolutionBackend ran;
  absl::Status status =
      Convolution(s, lhs_type, a.data(), rhs_type, w.data(), out_type, out.data(), backend, &ran);
  ASSERT_TRUE(status.ok()) << status;
  if (used != nullptr) *used = ran;
  const bool integer =
      IsIntegerType(lhs_type) && IsIntegerType(rhs_type) && IsIntegerType(out_type);
  const double eps = out_type == E::kF64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
  const size_t rank = s.input_spatial.size();
  // out[b, y, o] by the definition.
  std::vector<int64_t> y(rank, 0);
  if (out_count == 0) return;
  do {
    for (int64_t b = 0; b < out_batch; ++b) {
      for (int64_t o = 0; o < s.output_features; ++o) {
        const int64_t g = o / (s.output_features / s.feature_group_count);
        const int64_t bg = o / (s.output_features / s.batch_group_count);
        const int64_t batch = bg * out_batch + b;
        std::complex<double> sum = 0;
        uint64_t isum = 0;
        double magnitude = 0;
        std::vector<int64_t> p(rank, 0);
        do {
          std::vector<int64_t> x(rank), kernel_at(rank);
          bool inside = true;
          for (size_t d = 0; d < rank; ++d) {
            const int64_t dilated =
                y[d] * s.strides[d] + p[d] * s.rhs_dilation[d] - s.padding_low[d];
            if (dilated < 0 || dilated % s.lhs_dilation[d] != 0 ||
                dilated / s.lhs_dilation[d] >= s.input_spatial[d]) {
              inside = false;
            }
            x[d] = dilated / s.lhs_dilation[d];
            kernel_at[d] = s.window_reversal[d] ? s.kernel_spatial[d] - 1 - p[d] : p[d];
          }
          if (!inside) continue;
          for (int64_t c = 0; c < group_in; ++c) {
            const int64_t lhs_at =
                (batch * Product(s.input_spatial) + Offset(x, s.input_spatial)) * s.input_features +
                g * group_in + c;
            const int64_t rhs_at =
                (Offset(kernel_at, s.kernel_spatial) * group_in + c) * s.output_features + o;
            if (integer) {
              isum += LoadElement<uint64_t>(lhs_type, a.data(), lhs_at) *
                      LoadElement<uint64_t>(rhs_type, w.data(), rhs_at);
            } else {
              const std::complex<double> prod =
                  Value(lhs_type, a, lhs_at) * Value(rhs_type, w, rhs_at);
              sum += prod;
              magnitude += std::abs(prod);
            }
          }
        } while (Next(p, s.kernel_spatial));
        const int64_t at =
            (b * Product(s.output_spatial) + Offset(y, s.output_spatial)) * s.output_features + o;
        if (integer) {
          std::vector<uint8_t> expected(ElementByteWidth(out_type));
          StoreElement<uint64_t>(out_type, expected.data(), 0, isum);
          ASSERT_EQ(LoadElement<uint64_t>(out_type, out.data(), at),
                    LoadElement<uint64_t>(out_type, expected.data(), 0));
        } else {
          const std::complex<double> got = Value(out_type, out, at);
          const double tolerance = UnitRoundoff(out_type) * std::abs(sum) +
                                   4 * Product(s.kernel_spatial) * group_in * eps * magnitude +
                                   1e-30;
          ASSERT_LE(std::abs(got - sum), tolerance)
              << "at " << at << " got " << got << " want " << sum;
        }
      }
    }
  } while (Next(y, s.output_spatial));
}

std::vector<ConvolutionShape> Shapes() {
  return {
      Make(2, 3, 4, {5, 6}, {3, 3}),                                         // plain 2-D
      Make(2, 4, 6, {7, 8}, {3, 2}, {2, 1}, {1, 0}, {1, 2}),                 // strides, padding
      Make(1, 2, 3, {9, 9}, {2, 3}, {1, 2}, {}, {}, {}, {2, 3}),             // window dilation
      Make(2, 6, 9, {5, 5}, {3, 3}, {}, {1, 1}, {1, 1}, {}, {}, {}, 3),      // feature groups
      Make(1, 4, 4, {6, 6}, {3, 3}, {}, {1, 1}, {1, 1}, {}, {}, {}, 4),      // depthwise
      Make(2, 3, 5, {10}, {4}, {3}, {2}, {1}),                               // 1-D
      Make(1, 2, 3, {4, 5, 3}, {2, 2, 2}, {1, 2, 1}, {1, 0, 0}, {0, 1, 1}),  // 3-D
      Make(1, 3, 2, {6, 6}, {3, 3}, {}, {}, {}, {}, {}, {true, false}),      // reversal
      Make(2, 3, 4, {8, 8}, {3, 3}, {}, {-1, 0}, {0, -2}),                   // negative padding
      Make(1, 2, 3, {4, 4}, {3, 3}, {}, {2, 2}, {2, 2}, {2, 2}),             // lhs (base) dilation
      Make(4, 3, 6, {5, 5}, {2, 2}, {}, {}, {}, {}, {}, {}, 1, 2),           // batch groups
      Make(3, 5, 7, {}, {}),                                                 // no spatial dims
      Make(2, 3, 4, {2, 2}, {3, 3}),                                         // empty output
  };
}

TEST(Convolution, OwnLoopsMatchTheDefinition) {
  for (const ConvolutionShape& s : Shapes()) {
    for (auto [l, r, o] : {std::tuple{E::kF32, E::kF32, E::kF32},
                           {E::kF64, E::kF64, E::kF64},
                           {E::kS32, E::kS32, E::kS32},
                           {E::kBF16, E::kBF16, E::kBF16},
                           {E::kC64, E::kC64, E::kC64},
                           {E::kF8E4M3FN, E::kF8E4M3FN, E::kF32},
                           {E::kS8, E::kS8, E::kS32}}) {
      CheckConvolution(s, l, r, o, ConvolutionBackend::kLoops);
    }
  }
}

TEST(Convolution, AutoMatchesTheDefinition) {
  for (const ConvolutionShape& s : Shapes()) {
    for (auto [l, r, o] : {std::tuple{E::kF32, E::kF32, E::kF32},
                           {E::kBF16, E::kBF16, E::kF32},
                           {E::kBF16, E::kBF16, E::kBF16},
                           {E::kF16, E::kF16, E::kF16},
                           {E::kS8, E::kS8, E::kS32},
                           {E::kU8, E::kS8, E::kS32},
                           {E::kF64, E::kF64, E::kF64}}) {
      CheckConvolution(s, l, r, o, ConvolutionBackend::kAuto);
    }
  }
}

TEST(Convolution, OneDnnRunsF32WithoutBaseDilationOrBatchGroups) {
  auto all = [](const std::vector<int64_t>& v, auto pred) {
    return std::all_of(v.begin(), v.end(), pred);
  };
  for (const ConvolutionShape& s : Shapes()) {
    ConvolutionBackend used;
    CheckConvolution(s, E::kF32, E::kF32, E::kF32, ConvolutionBackend::kAuto, &used);
    const bool onednn_shape = s.batch_group_count == 1 && Product(s.output_spatial) > 0 &&
                              all(s.lhs_dilation, [](int64_t d) { return d == 1; });
    const bool nonnegative_padding = all(s.padding_low, [](int64_t p) { return p >= 0; }) &&
                                     all(s.padding_high, [](int64_t p) { return p >= 0; });
    if (onednn_shape && nonnegative_padding) {
      EXPECT_EQ(used, ConvolutionBackend::kOneDnn) << s.ToString();
    }
    if (!onednn_shape) {
      EXPECT_EQ(used, ConvolutionBackend::kLoops) << s.ToString();
    }
  }
  // The shapes of jax/cnn_b8's convolutions.
  CheckConvolution(Make(8, 3, 32, {32, 32}, {3, 3}, {}, {1, 1}, {1, 1}), E::kF32, E::kF32, E::kF32,
                   ConvolutionBackend::kOneDnn);
  CheckConvolution(Make(8, 32, 64, {32, 32}, {3, 3}, {2, 2}, {0, 0}, {1, 1}), E::kF32, E::kF32,
                   E::kF32, ConvolutionBackend::kOneDnn);
  CheckConvolution(Make(8, 32, 64, {32, 32}, {1, 1}, {2, 2}), E::kF32, E::kF32, E::kF32,
                   ConvolutionBackend::kOneDnn);
}

TEST(Convolution, InvalidShapesAreErrors) {
  float x = 0;
  ConvolutionShape s = Make(2, 3, 4, {5, 5}, {3, 3});
  s.output_spatial[0] = 4;
  absl::Status wrong_out = Convolution(s, E::kF32, &x, E::kF32, &x, E::kF32, &x);
  EXPECT_TRUE(absl::IsInvalidArgument(wrong_out)) << wrong_out;
  EXPECT_NE(wrong_out.message().find("output spatial dimension 0 must be 3"), std::string::npos)
      << wrong_out;
  ConvolutionShape groups = Make(2, 3, 4, {5, 5}, {3, 3}, {}, {}, {}, {}, {}, {}, 2);
  EXPECT_TRUE(absl::IsInvalidArgument(Convolution(groups, E::kF32, &x, E::kF32, &x, E::kF32, &x)));
  ConvolutionShape both = Make(4, 4, 4, {5, 5}, {3, 3}, {}, {}, {}, {}, {}, {}, 2, 2);
  EXPECT_TRUE(absl::IsInvalidArgument(Convolution(both, E::kF32, &x, E::kF32, &x, E::kF32, &x)));
  ConvolutionShape stride = Make(1, 1, 1, {5}, {3});
  stride.strides[0] = 0;
  EXPECT_TRUE(absl::IsInvalidArgument(Convolution(stride, E::kF32, &x, E::kF32, &x, E::kF32, &x)));
  ConvolutionShape ranks = Make(1, 1, 1, {5}, {3});
  ranks.padding_high.clear();
  EXPECT_TRUE(absl::IsInvalidArgument(Convolution(ranks, E::kF32, &x, E::kF32, &x, E::kF32, &x)));
  // oneDNN forced on what it cannot take.
  ConvolutionShape dilated = Make(1, 2, 3, {4, 4}, {3, 3}, {}, {2, 2}, {2, 2}, {2, 2});
  std::vector<float> in(32), k(18), out(3 * 49);
  absl::Status forced = Convolution(dilated, E::kF32, in.data(), E::kF32, k.data(), E::kF32,
                                    out.data(), ConvolutionBackend::kOneDnn);
  EXPECT_TRUE(absl::IsUnimplemented(forced)) << forced;
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::hostlib
