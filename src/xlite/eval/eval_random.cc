// Random numbers: rng-bit-generator, rng and rng-get-and-update-state.
//
// rng-bit-generator is deterministic and reproduces XLA's bits exactly: XLA
// lowers it (RngBitGeneratorExpander over the generators of its builder
// library prng.cc) into Threefry-2x32 (20 rounds) or Philox-4x32-10, with this
// state layout:
//   three_fry: state[0] is the key, state[1] a 64-bit counter.
//   philox:    state[0] is the key; the 128-bit counter is (state[1] low,
//              state[2] high), or (state[1] low, state[0] high) for a u64[2]
//              state, of which only the low word is written back.
//   rng_default is Philox, as in XLA's CPU and GPU compilers.
// The new state is element 0 of the result. A state longer than XLA reads
// keeps its other elements.
//
// rng's values are implementation-defined in XLA (its key is drawn at compile
// time), so only the distribution is specified. This interpreter follows the
// same construction as XLA's RngExpander (Philox bits from a fixed key and the
// device's rng state, XLA's uniform and Box-Muller conversions), so the
// distribution and its edge cases match, and the values are reproducible.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "absl/strings/str_cat.h"
#include "xlite/eval/evaluator.h"
#include "xlite/support/status.h"

namespace xlite::eval {
namespace {

// ---------------------------------------------------------------------------
// The counter-based generators (Salmon et al., "Parallel random numbers: as
// easy as 1, 2, 3", SC 2011).

using Threefry2x32Block = std::array<uint32_t, 2>;
using Philox4x32Block = std::array<uint32_t, 4>;
using Philox4x32Key = std::array<uint32_t, 2>;

uint32_t Low32(uint64_t v) { return static_cast<uint32_t>(v); }
uint32_t High32(uint64_t v) { return static_cast<uint32_t>(v >> 32); }
uint64_t Join32(uint32_t low, uint32_t high) { return uint64_t{low} | (uint64_t{high} << 32); }
uint32_t RotateLeft(uint32_t v, int distance) { return (v << distance) | (v >> (32 - distance)); }

// Threefry-2x32 with 20 rounds: the key schedule is injected after every
// four rounds, the rotation distances alternating between two sets of four.
Threefry2x32Block Threefry2x32(Threefry2x32Block key, Threefry2x32Block counter) {
  static constexpr int kRotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  static constexpr uint32_t kParity = 0x1BD11BDA;
  const uint32_t schedule[3] = {key[0], key[1], kParity ^ key[0] ^ key[1]};
  uint32_t x0 = counter[0] + schedule[0];
  uint32_t x1 = counter[1] + schedule[1];
  for (uint32_t injection = 1; injection <= 5; ++injection) {
    for (int rotation : kRotations[(injection - 1) % 2]) {
      x0 += x1;
      x1 = RotateLeft(x1, rotation) ^ x0;
    }
    x0 += schedule[injection % 3];
    x1 += schedule[(injection + 1) % 3] + injection;
  }
  return {x0, x1};
}

// Philox-4x32 with 10 rounds; the key is bumped by the Weyl constants after
// each round.
Philox4x32Block Philox4x32(Philox4x32Key key, Philox4x32Block x) {
  static constexpr uint64_t kMultiplier0 = 0xD2511F53;
  static constexpr uint64_t kMultiplier1 = 0xCD9E8D57;
  static constexpr uint32_t kWeyl0 = 0x9E3779B9;
  static constexpr uint32_t kWeyl1 = 0xBB67AE85;
  for (int round = 0; round < 10; ++round) {
    const uint64_t product0 = kMultiplier0 * x[0];
    const uint64_t product1 = kMultiplier1 * x[2];
    x = {High32(product1) ^ x[1] ^ key[0], Low32(product1), High32(product0) ^ x[3] ^ key[1],
         Low32(product0)};
    key[0] += kWeyl0;
    key[1] += kWeyl1;
  }
  return x;
}

// A 128-bit Philox counter.
struct Counter128 {
  uint64_t low = 0;
  uint64_t high = 0;
  Counter128 Plus(uint64_t n) const {
    const uint64_t sum = low + n;
    return {sum, high + (sum < low ? 1 : 0)};
  }
};

// ---------------------------------------------------------------------------
// Bit streams laid out as XLA's prng.cc lays them out. Values narrower than 32
// bits are the low bits of 32-bit values.

int StreamWidth(PrimitiveType type) { return PrimitiveBitWidth(type) <= 32 ? 32 : 64; }

uint64_t LowBitsMask(int bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

int64_t RangeProduct(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= dims[i];
  return p;
}

// XLA's SplitShapeIntoHalves: 32-bit Threefry values and Box-Muller pairs come
// in pairs along one dimension (the first of even size, else the first of the
// largest size; a scalar acts as [1]). That dimension of size d is viewed as
// (ceil(d/2), 2); an element with index j in it belongs to pair j/2, side j%2.
struct PairSplit {
  int64_t outer = 1;  // elements before the split dimension
  int64_t size = 1;   // the split dimension
  int64_t inner = 1;  // elements after it
  int64_t pairs() const { return (size + 1) / 2; }
  int64_t pair_count() const { return outer * pairs() * inner; }
  // Row-major index of element i's pair in the [outer, pairs, inner] shape.
  int64_t PairIndex(int64_t i) const {
    const int64_t o = i / (size * inner), j = (i / inner) % size, n = i % inner;
    return (o * pairs() + j / 2) * inner + n;
  }
  // 0 or 1: which of its pair's values element i takes.
  int64_t Side(int64_t i) const { return (i / inner) % size % 2; }
  // Row-major index of side `side` of element i's pair in [outer, pairs, 2, inner].
  int64_t PairedIndex(int64_t i, int64_t side) const {
    const int64_t o = i / (size * inner), j = (i / inner) % size, n = i % inner;
    return ((o * pairs() + j / 2) * 2 + side) * inner + n;
  }
};

PairSplit SplitIntoPairs(const std::vector<int64_t>& dims) {
  PairSplit split;
  if (dims.empty()) return split;
  int64_t dim = -1;
  for (size_t i = 0; i < dims.size() && dim < 0; ++i) {
    if (dims[i] % 2 == 0) dim = static_cast<int64_t>(i);
  }
  if (dim < 0) {
    dim = 0;
    for (size_t i = 1; i < dims.size(); ++i) {
      if (dims[i] > dims[dim]) dim = static_cast<int64_t>(i);
    }
  }
  split.outer = RangeProduct(dims, 0, dim);
  split.size = dims[dim];
  split.inner = RangeProduct(dims, dim + 1, dims.size());
  return split;
}

// Threefry values for an array of `dims`, `width` (32 or 64) bits each.
// Advances `counter` by the number of Threefry blocks used.
std::vector<uint64_t> ThreefryValues(uint64_t key, uint64_t& counter,
                                     const std::vector<int64_t>& dims, int width) {
  const Threefry2x32Block key_words = {Low32(key), High32(key)};
  auto block = [&](uint64_t c) { return Threefry2x32(key_words, {Low32(c), High32(c)}); };
  const int64_t count = RangeProduct(dims, 0, dims.size());
  std::vector<uint64_t> values(count);
  if (width == 64) {
    for (int64_t i = 0; i < count; ++i) {
      const Threefry2x32Block x = block(counter + static_cast<uint64_t>(i));
      values[i] = Join32(x[0], x[1]);
    }
    counter += static_cast<uint64_t>(count);
    return values;
  }
  const PairSplit split = SplitIntoPairs(dims);
  for (int64_t i = 0; i < count; ++i) {
    values[i] = block(counter + static_cast<uint64_t>(split.PairIndex(i)))[split.Side(i)];
  }
  counter += static_cast<uint64_t>(split.pair_count());
  return values;
}

// `count` Philox values of `width` (32 or 64) bits: block b yields values
// 4b..4b+3 (32-bit) or 2b, 2b+1 (64-bit, low word first). Advances `counter`
// by the number of blocks.
std::vector<uint64_t> PhiloxValues(uint64_t key, Counter128& counter, int64_t count, int width) {
  const Philox4x32Key key_words = {Low32(key), High32(key)};
  const int64_t per_block = width == 64 ? 2 : 4;
  const int64_t blocks = (count + per_block - 1) / per_block;
  std::vector<uint64_t> values(count);
  for (int64_t b = 0; b < blocks; ++b) {
    const Counter128 c = counter.Plus(static_cast<uint64_t>(b));
    const Philox4x32Block x =
        Philox4x32(key_words, {Low32(c.low), High32(c.low), Low32(c.high), High32(c.high)});
    for (int64_t k = 0; k < per_block && b * per_block + k < count; ++k) {
      values[b * per_block + k] = width == 64 ? Join32(x[2 * k], x[2 * k + 1]) : x[k];
    }
  }
  counter = counter.Plus(static_cast<uint64_t>(blocks));
  return values;
}

// ---------------------------------------------------------------------------
// rng-bit-generator

enum class BitAlgorithm { kThreefry, kPhilox };

absl::StatusOr<BitAlgorithm> AlgorithmOf(const HloInstruction& instr) {
  const std::string& name = instr.attrs().algorithm;
  if (name == "rng_three_fry") return BitAlgorithm::kThreefry;
  // XLA's CPU and GPU compilers expand rng_default as Philox.
  if (name == "rng_philox" || name == "rng_default" || name.empty()) return BitAlgorithm::kPhilox;
  return Unsupported(instr, absl::StrCat("rng algorithm '", name, "'"));
}

absl::Status CheckBitGeneratorShapes(const HloInstruction& instr, const Literal& state) {
  const Shape& s = state.shape();
  const bool u64_like =
      s.element_type() == PrimitiveType::U64 || s.element_type() == PrimitiveType::S64;
  if (!s.IsArray() || s.rank() != 1 || !u64_like || s.dimensions(0) < 2) {
    return Unsupported(instr, absl::StrCat("rng-bit-generator state ", s.ToString(false),
                                           " (XLA's algorithms take u64[n], n >= 2)"));
  }
  const Shape& out = instr.shape();
  if (!out.IsTuple() || out.tuple_shapes_size() != 2 || !out.tuple_shapes(1).IsArray() ||
      !out.tuple_shapes(0).EqualIgnoringLayout(s)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the result must be (state, array) with the operand's state shape, got ",
                     out.ToString(false)));
  }
  const PrimitiveType type = out.tuple_shapes(1).element_type();
  if (type == PrimitiveType::PRED || IsComplex(type)) {
    return Unsupported(instr, absl::StrCat("random bits of type ", PrimitiveTypeName(type)));
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> EvalRngBitGenerator(const HloInstruction& instr, const Literal& state) {
  RETURN_IF_ERROR(CheckBitGeneratorShapes(instr, state));
  ASSIGN_OR_RETURN(BitAlgorithm algorithm, AlgorithmOf(instr));
  Literal result = ResultLiteral(instr);
  Literal& new_state = result.tuple_elements()[0];
  Literal& bits = result.tuple_elements()[1];
  for (int64_t i = 0; i < state.element_count(); ++i) new_state.SetBits(i, state.GetBits(i));

  const PrimitiveType type = bits.shape().element_type();
  const int width = StreamWidth(type);
  const uint64_t key = state.GetBits(0);
  std::vector<uint64_t> values;
  if (algorithm == BitAlgorithm::kThreefry) {
    uint64_t counter = state.GetBits(1);
    values = ThreefryValues(key, counter, bits.shape().dimensions(), width);
    new_state.SetBits(1, counter);
  } else {
    const bool long_state = state.element_count() >= 3;
    Counter128 counter = {state.GetBits(1), long_state ? state.GetBits(2) : key};
    values = PhiloxValues(key, counter, bits.element_count(), width);
    new_state.SetBits(1, counter.low);
    if (long_state) new_state.SetBits(2, counter.high);
  }
  const uint64_t mask = LowBitsMask(PrimitiveBitWidth(type));
  for (int64_t i = 0; i < bits.element_count(); ++i) bits.SetBits(i, values[i] & mask);
  return result;
}

// ---------------------------------------------------------------------------
// rng-get-and-update-state, rng

// XLA's CPU runtime starts each rng state at this value (zero would make the
// first numbers fail a chi-square test).
constexpr uint64_t kRngStateInitialValue = 0x7012395;
// XLA draws rng's Philox key when it compiles; the interpreter fixes one.
constexpr uint64_t kRngKey = 0;

// The device's 128-bit rng state before advancing it by `delta`.
Counter128 GetAndUpdateRngState(EvalContext& context, int64_t delta) {
  uint64_t& state = context.rng_state();
  const Counter128 old = {kRngStateInitialValue + state, 0};
  state += static_cast<uint64_t>(delta);
  return old;
}

absl::StatusOr<Literal> EvalRngGetAndUpdateState(const HloInstruction& instr,
                                                 EvalContext& context) {
  const Shape& shape = instr.shape();
  if (!shape.IsArray() || shape.ElementCount() != 2 ||
      PrimitiveBitWidth(shape.element_type()) != 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("the result must be u64[2], got ", shape.ToString(false)));
  }
  const Counter128 old = GetAndUpdateRngState(context, instr.attrs().delta);
  Literal result = ResultLiteral(instr);
  result.SetBits(0, old.low);
  result.SetBits(1, old.high);
  return result;
}

// XLA's ConvertRandomBitsToUniformFloatingPoint: the top mantissa-many bits
// scaled into [0, 1), then into [low, high).
template <typename T>
T UniformFromBits(uint64_t bits, int width, T low, T high) {
  constexpr int kMantissaBits = sizeof(T) == 4 ? 23 : 52;
  const T unit = static_cast<T>(bits >> (width - kMantissaBits)) *
                 static_cast<T>(std::ldexp(1.0, -kMantissaBits));
  return unit * (high - low) + low;
}

// XLA's BoxMullerTransform of one pair of [0, 1) values; `side` 0 gives the
// sine branch, 1 the cosine branch.
template <typename T>
T BoxMuller(T x0, T x1, int64_t side) {
  const T u1 = std::max(x0, static_cast<T>(1.0e-7f));
  const T v1 = static_cast<T>(2.0 * std::numbers::pi) * x1;
  const T u2 = std::sqrt(static_cast<T>(-2.0f) * std::log(u1));
  return (side == 0 ? std::sin(v1) : std::cos(v1)) * u2;
}

template <typename T>
void FillUniformFloat(const Literal& low, const Literal& high, Counter128 counter, Literal& out) {
  const int width = sizeof(T) * 8;
  const std::vector<uint64_t> bits = PhiloxValues(kRngKey, counter, out.element_count(), width);
  const T a = static_cast<T>(low.GetDouble(0)), b = static_cast<T>(high.GetDouble(0));
  for (int64_t i = 0; i < out.element_count(); ++i) {
    out.SetDouble(i, UniformFromBits<T>(bits[i], width, a, b));
  }
}

template <typename T>
void FillNormal(const Literal& mean, const Literal& deviation, Counter128 counter, Literal& out) {
  const int width = sizeof(T) * 8;
  const PairSplit split = SplitIntoPairs(out.shape().dimensions());
  const std::vector<uint64_t> bits = PhiloxValues(kRngKey, counter, 2 * split.pair_count(), width);
  const T mu = static_cast<T>(mean.GetDouble(0)), sigma = static_cast<T>(deviation.GetDouble(0));
  for (int64_t i = 0; i < out.element_count(); ++i) {
    const T x0 = UniformFromBits<T>(bits[split.PairedIndex(i, 0)], width, T{0}, T{1});
    const T x1 = UniformFromBits<T>(bits[split.PairedIndex(i, 1)], width, T{0}, T{1});
    out.SetDouble(i, mu + sigma * BoxMuller<T>(x0, x1, split.Side(i)));
  }
}

// XLA's ConvertRandomBitsToUniformInt: low + bits % (high - low), in the
// type's unsigned arithmetic (x % 0 is x, as XLA defines it).
void FillUniformInt(const Literal& low, const Literal& high, Counter128 counter, Literal& out) {
  const PrimitiveType type = out.shape().element_type();
  const int type_bits = type == PrimitiveType::PRED ? 1 : PrimitiveBitWidth(type);
  const uint64_t mask = LowBitsMask(type_bits);
  const std::vector<uint64_t> bits =
      PhiloxValues(kRngKey, counter, out.element_count(), StreamWidth(type));
  const uint64_t a = low.GetBits(0) & mask;
  const uint64_t range = (high.GetBits(0) - a) & mask;
  for (int64_t i = 0; i < out.element_count(); ++i) {
    const uint64_t offset = range == 0 ? bits[i] : bits[i] % range;
    out.SetBits(i, (a + offset) & mask);
  }
}

absl::StatusOr<Literal> EvalRng(const HloInstruction& instr,
                                absl::Span<const Literal* const> operands, EvalContext& context) {
  if (operands.size() < 2 || !instr.shape().IsArray()) {
    return absl::InvalidArgumentError("rng takes (a, b) and returns an array");
  }
  const PrimitiveType type = instr.shape().element_type();
  const bool normal = instr.attrs().distribution == "rng_normal";
  if (IsComplex(type) || (normal && !IsFloatingPoint(type))) {
    return Unsupported(
        instr, absl::StrCat(instr.attrs().distribution, " of type ", PrimitiveTypeName(type)));
  }
  Literal out = ResultLiteral(instr);
  // As XLA's RngExpander: floats narrower than 32 bits are drawn as f32; the
  // state advances by the number of 32-bit values drawn.
  const bool wide = PrimitiveBitWidth(type) > 32;
  const Counter128 counter = GetAndUpdateRngState(context, out.element_count() * (wide ? 2 : 1));
  const Literal& a = *operands[0];
  const Literal& b = *operands[1];
  if (normal && wide) {
    FillNormal<double>(a, b, counter, out);
  } else if (normal) {
    FillNormal<float>(a, b, counter, out);
  } else if (IsFloatingPoint(type) && wide) {
    FillUniformFloat<double>(a, b, counter, out);
  } else if (IsFloatingPoint(type)) {
    FillUniformFloat<float>(a, b, counter, out);
  } else {
    FillUniformInt(a, b, counter, out);
  }
  return out;
}

}  // namespace

absl::StatusOr<Literal> EvalRandom(const HloInstruction& instr,
                                   absl::Span<const Literal* const> operands,
                                   EvalContext& context) {
  switch (instr.opcode()) {
    case HloOpcode::kRngBitGenerator:
      if (operands.size() != 1) return absl::InvalidArgumentError("expects one operand");
      return EvalRngBitGenerator(instr, *operands[0]);
    case HloOpcode::kRng:
      return EvalRng(instr, operands, context);
    case HloOpcode::kRngGetAndUpdateState:
      return EvalRngGetAndUpdateState(instr, context);
    default:
      return absl::NotFoundError("not handled");
  }
}

}  // namespace xlite::eval
