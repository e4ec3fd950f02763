#include "xlite/hostlib/sort.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <numeric>
#include <tuple>
#include <vector>

#include "absl/strings/str_join.h"
#include "xlite/support/status.h"

namespace xlite::hostlib {
namespace {

// Bottom-up merge sort of `order` by less(a, b) ("a goes before b"); the
// interpreter's algorithm, comparison for comparison.
template <typename Less>
void MergeSort(std::vector<int64_t>& order, std::vector<int64_t>& buffer, Less less) {
  const size_t n = order.size();
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t begin = 0; begin < n; begin += 2 * width) {
      const size_t mid = std::min(begin + width, n), end = std::min(begin + 2 * width, n);
      size_t left = begin, right = mid, out = begin;
      while (left < mid && right < end) {
        buffer[out++] = less(order[right], order[left]) ? order[right++] : order[left++];
      }
      while (left < mid) buffer[out++] = order[left++];
      while (right < end) buffer[out++] = order[right++];
    }
    order.swap(buffer);
  }
}

// The slices along the sort dimension: slice s starts at element
// (s / inner) * length * inner + s % inner, its elements `inner` apart.
struct Slices {
  int64_t length = 0, inner = 1, count = 0;
  int64_t Base(int64_t s) const { return (s / inner) * length * inner + s % inner; }
};

absl::StatusOr<Slices> CheckSort(absl::Span<const int64_t> dims, int64_t dimension,
                                 absl::Span<void* const> operands,
                                 absl::Span<const int> element_bytes) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (dimension < 0 || dimension >= rank) {
    return InvalidArgument("sort: dimension ", dimension, " is outside [", absl::StrJoin(dims, ","),
                           "]");
  }
  if (operands.empty() || operands.size() != element_bytes.size()) {
    return InvalidArgument("sort: needs at least one operand and one element size per operand");
  }
  for (int64_t d : dims) {
    if (d < 0)
      return InvalidArgument("sort: negative dimension in [", absl::StrJoin(dims, ","), "]");
  }
  for (int bytes : element_bytes) {
    if (bytes <= 0) return InvalidArgument("sort: element sizes must be positive");
  }
  Slices slices;
  slices.length = dims[dimension];
  int64_t outer = 1;
  for (int64_t d = 0; d < dimension; ++d) outer *= dims[d];
  for (int64_t d = dimension + 1; d < rank; ++d) slices.inner *= dims[d];
  slices.count = slices.length <= 1 ? 0 : outer * slices.inner;
  return slices;
}

// Runs per_part(first, end) over contiguous ranges of slices, on the threads
// when there are `min_elements` elements or more to sort. Running out of
// memory in a part (its scratch) is ResourceExhausted, never an exception
// crossing a worker thread.
template <typename PerPart>
absl::Status ForEachPart(const Slices& slices, const SortParallelism& parallelism,
                         int64_t min_elements, PerPart per_part) {
  int64_t parts = 1;
  if (parallelism.run && parallelism.threads > 1 && slices.count * slices.length >= min_elements) {
    parts = std::min<int64_t>(parallelism.threads, slices.count);
  }
  return RunParts(
      parallelism, parts,
      [&](int64_t part) {
        per_part(slices.count * part / parts, slices.count * (part + 1) / parts);
        return absl::OkStatus();
      },
      "sort: out of memory for its scratch");
}

// Writes a slice of `to` in `order` from the same slice of `from`
// (order[p] & index_mask: the element that goes to position p); through
// `scratch` when they are the same array (an in-place sort).
template <int kBytes, typename Index>
void PermuteFixed(const uint8_t* from, uint8_t* to, const Slices& slices, int64_t base,
                  const Index* order, Index index_mask, std::vector<uint8_t>& scratch) {
  const int64_t inner = slices.inner;
  uint8_t* gathered = to + base * kBytes;
  int64_t step = inner;
  if (from == to) {
    scratch.resize(slices.length * kBytes);
    gathered = scratch.data();
    step = 1;
  }
  for (int64_t p = 0; p < slices.length; ++p) {
    const int64_t at = static_cast<int64_t>(order[p] & index_mask);
    std::memcpy(gathered + p * step * kBytes, from + (base + at * inner) * kBytes, kBytes);
  }
  if (from != to) return;
  if (inner == 1) {
    std::memcpy(to + base * kBytes, scratch.data(), slices.length * kBytes);
    return;
  }
  for (int64_t p = 0; p < slices.length; ++p) {
    std::memcpy(to + (base + p * inner) * kBytes, scratch.data() + p * kBytes, kBytes);
  }
}

template <typename Index>
void Permute(const void* from_operand, void* to_operand, int bytes, const Slices& slices,
             int64_t base, const Index* order, Index index_mask, std::vector<uint8_t>& scratch) {
  const auto* from = static_cast<const uint8_t*>(from_operand);
  auto* to = static_cast<uint8_t*>(to_operand);
  switch (bytes) {
    case 1:
      return PermuteFixed<1>(from, to, slices, base, order, index_mask, scratch);
    case 2:
      return PermuteFixed<2>(from, to, slices, base, order, index_mask, scratch);
    case 4:
      return PermuteFixed<4>(from, to, slices, base, order, index_mask, scratch);
    case 8:
      return PermuteFixed<8>(from, to, slices, base, order, index_mask, scratch);
    default:
      break;
  }
  scratch.resize(slices.length * bytes);
  for (int64_t p = 0; p < slices.length; ++p) {
    const int64_t at = static_cast<int64_t>(order[p] & index_mask);
    std::memcpy(scratch.data() + p * bytes, from + (base + at * slices.inner) * bytes, bytes);
  }
  for (int64_t p = 0; p < slices.length; ++p) {
    std::memcpy(to + (base + p * slices.inner) * bytes, scratch.data() + p * bytes, bytes);
  }
}

// The arrays a sort reads and writes (the same ones when in place).
struct SortArrays {
  absl::Span<const void* const> inputs;
  absl::Span<void* const> outputs;
  absl::Span<const int> element_bytes;
};

struct Bits64AndIndex {
  uint64_t key;
  uint64_t index;
};

// ---------------------------------------------------------------------------
// The radix-sort fast path.

// Maps an element's bits to an unsigned key whose order is SortKey's,
// without branches (so the loop over a slice vectorizes).
template <typename Bits>
struct KeyCodec {
  static constexpr int kBits = 8 * sizeof(Bits);
  static constexpr Bits kSign = Bits{1} << (kBits - 1);
  Bits infinity = 0;  // the largest non-NaN magnitude
  bool is_float = false, is_signed = false;
  // nan_mask/zero_mask: all ones where NaNs/zeros are replaced by
  // nan_bits/zero_bits; flip: all ones when descending.
  Bits nan_mask = 0, zero_mask = 0, nan_bits = 0, zero_bits = 0, flip = 0;

  explicit KeyCodec(const SortKey& key) {
    is_float = IsFloatType(key.type);
    is_signed = IsSignedIntegerType(key.type);
    flip = key.descending ? static_cast<Bits>(~Bits{0}) : Bits{0};
    switch (key.type) {
      case ElementType::kF16:
        infinity = static_cast<Bits>(0x7C00);
        break;
      case ElementType::kBF16:
        infinity = static_cast<Bits>(0x7F80);
        break;
      case ElementType::kF32:
        infinity = static_cast<Bits>(0x7F800000);
        break;
      case ElementType::kF64:
        infinity = static_cast<Bits>(0x7FF0000000000000);
        break;
      default:
        break;
    }
    const Bits all = static_cast<Bits>(~Bits{0});
    if (key.ieee) {  // -0 == +0; SortByKey declines NaNs first
      zero_mask = all;
    } else {
      nan_mask = key.nan_bits ? all : Bits{0};
      nan_bits = static_cast<Bits>(key.nan_bits.value_or(0));
      zero_mask = key.zero_bits ? all : Bits{0};
      zero_bits = static_cast<Bits>(key.zero_bits.value_or(0));
    }
  }

  bool IsNaN(Bits raw) const { return is_float && static_cast<Bits>(raw & ~kSign) > infinity; }

  enum Kind { kUnsigned, kSigned, kFloat };
  Kind kind() const { return is_float ? kFloat : is_signed ? kSigned : kUnsigned; }

  // Arithmetic only, so a loop over a slice vectorizes.
  template <Kind kKind>
  Bits EncodeAs(Bits raw) const {
    if constexpr (kKind == kFloat) {
      const Bits magnitude = raw & static_cast<Bits>(~kSign);
      const Bits is_nan = static_cast<Bits>(Bits{0} - Bits{magnitude > infinity}) & nan_mask;
      const Bits is_zero = static_cast<Bits>(Bits{0} - Bits{magnitude == 0}) & zero_mask;
      raw = (raw & static_cast<Bits>(~is_nan)) | (nan_bits & is_nan);
      raw = (raw & static_cast<Bits>(~is_zero)) | (zero_bits & is_zero);
      // Sign-magnitude to offset binary: negatives reversed below positives.
      const Bits negative = static_cast<Bits>(Bits{0} - static_cast<Bits>(raw >> (kBits - 1)));
      raw ^= static_cast<Bits>(kSign | (negative & static_cast<Bits>(~kSign)));
    } else if constexpr (kKind == kSigned) {
      raw ^= kSign;
    }
    return raw ^ flip;
  }
};

// One thread's buffers for the fast path.
struct RadixScratch {
  std::vector<uint32_t> packed32[2];
  std::vector<uint64_t> packed64[2];
  std::vector<Bits64AndIndex> pairs[2];
  std::vector<uint8_t> bytes;
  std::tuple<std::vector<uint8_t>, std::vector<uint16_t>, std::vector<uint32_t>,
             std::vector<uint64_t>>
      encoded;
  // The slice's encoded keys, n of them.
  template <typename Bits>
  Bits* Encoded(int64_t n) {
    std::vector<Bits>& v = std::get<std::vector<Bits>>(encoded);
    v.resize(n);
    return v.data();
  }
};

// Sorts words by their bytes [shift / 8 ...) with one LSD counting pass per
// key byte, given each byte's histogram; passes whose byte is the same for
// every word are skipped. Returns where the result is (a or b).
template <typename Word, int kPasses, typename Digits>
Word* RadixPasses(Word* a, Word* b, int64_t n, const uint32_t (&counts)[kPasses][256],
                  Digits digit) {
  for (int p = 0; p < kPasses; ++p) {
    if (counts[p][digit(a[0], p)] == n) continue;
    uint32_t offsets[256];
    uint32_t sum = 0;
    for (int d = 0; d < 256; ++d) {
      offsets[d] = sum;
      sum += counts[p][d];
    }
    for (int64_t i = 0; i < n; ++i) b[offsets[digit(a[i], p)]++] = a[i];
    std::swap(a, b);
  }
  return a;
}

// Loads the slice's keys, encoded.
template <typename Bits, typename KeyCodec<Bits>::Kind kKind>
void EncodeSliceAs(const KeyCodec<Bits>& codec, const Bits* first, int64_t length, int64_t stride,
                   Bits* out) {
  for (int64_t p = 0; p < length; ++p) {
    Bits raw;
    std::memcpy(&raw, first + p * stride, sizeof(Bits));
    out[p] = codec.template EncodeAs<kKind>(raw);
  }
}

// Loads the slice's keys, encoded.
template <typename Bits>
void EncodeSlice(const KeyCodec<Bits>& codec, const uint8_t* keys, const Slices& slices,
                 int64_t base, Bits* out) {
  using Codec = KeyCodec<Bits>;
  const Bits* first = reinterpret_cast<const Bits*>(keys) + base;
  switch (codec.kind()) {
    case Codec::kFloat:
      return EncodeSliceAs<Bits, Codec::kFloat>(codec, first, slices.length, slices.inner, out);
    case Codec::kSigned:
      return EncodeSliceAs<Bits, Codec::kSigned>(codec, first, slices.length, slices.inner, out);
    case Codec::kUnsigned:
      return EncodeSliceAs<Bits, Codec::kUnsigned>(codec, first, slices.length, slices.inner, out);
  }
}

// The sorted slice's positions, order[p] being the element that goes to p.
// Each key is shifted above its position's bits, so sorting the packed words
// by the key bytes alone keeps equal keys in position order (stable).
template <typename Bits, typename Packed>
const Packed* SortPacked(const KeyCodec<Bits>& codec, const uint8_t* keys, const Slices& slices,
                         int64_t base, RadixScratch& scratch, std::vector<Packed>* packed,
                         int* index_bits) {
  const int64_t n = slices.length;
  *index_bits = std::bit_width(static_cast<uint64_t>(n - 1));
  const int shift = *index_bits;
  packed[0].resize(n);
  packed[1].resize(n);
  Bits* encoded = scratch.Encoded<Bits>(n);
  EncodeSlice(codec, keys, slices, base, encoded);
  constexpr int kPasses = sizeof(Bits);
  uint32_t counts[kPasses][256] = {};
  for (int64_t p = 0; p < n; ++p) {
    const Bits key = encoded[p];
    for (int d = 0; d < kPasses; ++d) ++counts[d][(key >> (8 * d)) & 255];
    packed[0][p] =
        static_cast<Packed>((static_cast<Packed>(key) << shift) | static_cast<Packed>(p));
  }
  return RadixPasses<Packed, kPasses>(
      packed[0].data(), packed[1].data(), n, counts,
      [shift](Packed w, int d) { return static_cast<uint32_t>(w >> (shift + 8 * d)) & 255; });
}

template <typename Index>
void PermuteAll(const SortArrays& arrays, const Slices& slices, int64_t base, const Index* order,
                Index index_mask, std::vector<uint8_t>& scratch) {
  for (size_t k = 0; k < arrays.outputs.size(); ++k) {
    Permute(arrays.inputs[k], arrays.outputs[k], arrays.element_bytes[k], slices, base, order,
            index_mask, scratch);
  }
}

// Sorts one slice of every operand by the key operand.
template <typename Bits>
void SortSliceByKey(const KeyCodec<Bits>& codec, const uint8_t* keys, const SortArrays& arrays,
                    const Slices& slices, int64_t base, RadixScratch& scratch) {
  const int64_t n = slices.length;
  const int index_bits = std::bit_width(static_cast<uint64_t>(n - 1));
  int shift = 0;
  if (8 * sizeof(Bits) + index_bits <= 32) {
    const uint32_t* sorted =
        SortPacked(codec, keys, slices, base, scratch, scratch.packed32, &shift);
    return PermuteAll(arrays, slices, base, sorted,
                      static_cast<uint32_t>((uint64_t{1} << shift) - 1), scratch.bytes);
  }
  if (8 * sizeof(Bits) + index_bits <= 64) {
    const uint64_t* sorted =
        SortPacked(codec, keys, slices, base, scratch, scratch.packed64, &shift);
    return PermuteAll(arrays, slices, base, sorted, (uint64_t{1} << shift) - 1, scratch.bytes);
  }
  // 64-bit keys: (key, position) pairs.
  std::vector<Bits64AndIndex>* pairs = scratch.pairs;
  pairs[0].resize(n);
  pairs[1].resize(n);
  Bits* encoded = scratch.Encoded<Bits>(n);
  EncodeSlice(codec, keys, slices, base, encoded);
  uint32_t counts[8][256] = {};
  for (int64_t p = 0; p < n; ++p) {
    const uint64_t key = encoded[p];  // Bits is uint64_t here
    for (int d = 0; d < 8; ++d) ++counts[d][(key >> (8 * d)) & 255];
    pairs[0][p] = {key, static_cast<uint64_t>(p)};
  }
  const Bits64AndIndex* sorted = RadixPasses<Bits64AndIndex, 8>(
      pairs[0].data(), pairs[1].data(), n, counts,
      [](const Bits64AndIndex& v, int d) { return static_cast<uint32_t>(v.key >> (8 * d)) & 255; });
  std::vector<uint64_t>& order = scratch.packed64[1];
  order.resize(n);
  for (int64_t p = 0; p < n; ++p) order[p] = sorted[p].index;
  PermuteAll(arrays, slices, base, order.data(), ~uint64_t{0}, scratch.bytes);
}

template <typename Bits>
absl::StatusOr<bool> SortAllByKey(absl::Span<const int64_t> dims, const SortArrays& arrays,
                                  const SortKey& key, const Slices& slices,
                                  const SortParallelism& parallelism) {
  const KeyCodec<Bits> codec(key);
  const auto* keys = static_cast<const uint8_t*>(arrays.inputs[key.operand]);
  if (key.ieee && codec.is_float) {
    int64_t total = 1;
    for (int64_t d : dims) total *= d;
    const Bits* all = reinterpret_cast<const Bits*>(keys);
    for (int64_t i = 0; i < total; ++i) {
      Bits raw;
      std::memcpy(&raw, all + i, sizeof(Bits));
      if (codec.IsNaN(raw)) return false;
    }
  }
  RETURN_IF_ERROR(ForEachPart(slices, parallelism, 1 << 15, [&](int64_t first, int64_t end) {
    RadixScratch scratch;
    for (int64_t s = first; s < end; ++s) {
      SortSliceByKey(codec, keys, arrays, slices, slices.Base(s), scratch);
    }
  }));
  return true;
}

}  // namespace

absl::Status Sort(absl::Span<const int64_t> dims, int64_t dimension,
                  absl::Span<void* const> operands, absl::Span<const int> element_bytes,
                  SortComparator comparator, void* context, const SortParallelism& parallelism) {
  ASSIGN_OR_RETURN(const Slices slices, CheckSort(dims, dimension, operands, element_bytes));
  if (comparator == nullptr) return InvalidArgument("sort: no comparator");
  const size_t n = operands.size();
  // Each comparator call costs tens of nanoseconds: threads pay from a few
  // thousand elements.
  return ForEachPart(slices, parallelism, 4096, [&](int64_t first, int64_t end) {
    std::vector<const void*> elements(2 * n);
    std::vector<int64_t> order(slices.length), buffer(slices.length);
    std::vector<uint8_t> scratch;
    for (int64_t s = first; s < end; ++s) {
      const int64_t base = slices.Base(s);
      auto less = [&](int64_t a, int64_t b) {
        for (size_t k = 0; k < n; ++k) {
          const auto* data = static_cast<const uint8_t*>(operands[k]);
          elements[2 * k] = data + (base + a * slices.inner) * element_bytes[k];
          elements[2 * k + 1] = data + (base + b * slices.inner) * element_bytes[k];
        }
        return comparator(elements.data(), context);
      };
      order.resize(slices.length);
      std::iota(order.begin(), order.end(), 0);
      MergeSort(order, buffer, less);
      for (size_t k = 0; k < n; ++k) {
        Permute(operands[k], operands[k], element_bytes[k], slices, base, order.data(), ~int64_t{0},
                scratch);
      }
    }
  });
}

bool SortByKeySupports(ElementType type) {
  switch (type) {
    case ElementType::kPred:
    case ElementType::kS8:
    case ElementType::kS16:
    case ElementType::kS32:
    case ElementType::kS64:
    case ElementType::kU8:
    case ElementType::kU16:
    case ElementType::kU32:
    case ElementType::kU64:
    case ElementType::kF16:
    case ElementType::kBF16:
    case ElementType::kF32:
    case ElementType::kF64:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<bool> SortByKey(absl::Span<const int64_t> dims, int64_t dimension,
                               absl::Span<const void* const> inputs,
                               absl::Span<void* const> outputs, absl::Span<const int> element_bytes,
                               const SortKey& key, const SortParallelism& parallelism) {
  ASSIGN_OR_RETURN(const Slices slices, CheckSort(dims, dimension, outputs, element_bytes));
  if (inputs.size() != outputs.size()) {
    return InvalidArgument("sort: ", inputs.size(), " inputs for ", outputs.size(), " outputs");
  }
  if (key.operand < 0 || key.operand >= static_cast<int>(outputs.size())) {
    return InvalidArgument("sort: key operand ", key.operand, " of ", outputs.size());
  }
  if (!SortByKeySupports(key.type)) {
    return InvalidArgument("sort: no radix sort for ", ElementTypeName(key.type), " keys");
  }
  const int key_bytes = ElementByteWidth(key.type);
  if (element_bytes[key.operand] != key_bytes) {
    return InvalidArgument("sort: key operand ", key.operand, " has ", element_bytes[key.operand],
                           "-byte elements, not ", ElementTypeName(key.type));
  }
  if (slices.length > std::numeric_limits<uint32_t>::max()) return false;
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  if (slices.count == 0) {  // nothing to reorder: a copy
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (inputs[k] != outputs[k] && count > 0) {
        std::memmove(outputs[k], inputs[k], count * element_bytes[k]);
      }
    }
    return true;
  }
  const SortArrays arrays{inputs, outputs, element_bytes};
  switch (key_bytes) {
    case 1:
      return SortAllByKey<uint8_t>(dims, arrays, key, slices, parallelism);
    case 2:
      return SortAllByKey<uint16_t>(dims, arrays, key, slices, parallelism);
    case 4:
      return SortAllByKey<uint32_t>(dims, arrays, key, slices, parallelism);
    default:
      return SortAllByKey<uint64_t>(dims, arrays, key, slices, parallelism);
  }
}

absl::StatusOr<bool> SortByKey(absl::Span<const int64_t> dims, int64_t dimension,
                               absl::Span<void* const> operands,
                               absl::Span<const int> element_bytes, const SortKey& key,
                               const SortParallelism& parallelism) {
  std::vector<const void*> inputs(operands.begin(), operands.end());
  return SortByKey(dims, dimension, inputs, operands, element_bytes, key, parallelism);
}

}  // namespace xlite::hostlib
