#include "tools/xlite/host_feeds.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "xlite/support/npy.h"
#include "xlite/support/status.h"

namespace xlite::cli {
namespace {

// A literal of `shape` from consecutive arrays starting at `next`.
absl::StatusOr<Literal> TakeBlock(const Shape& shape, std::vector<Literal>& arrays, size_t& next) {
  if (!shape.IsTuple()) {
    if (next >= arrays.size()) return absl::InvalidArgumentError("ran out of arrays");
    return std::move(arrays[next++]);
  }
  std::vector<Literal> elements;
  for (const Shape& e : shape.tuple_shapes()) {
    ASSIGN_OR_RETURN(Literal l, TakeBlock(e, arrays, next));
    elements.push_back(std::move(l));
  }
  return Literal::Tuple(std::move(elements));
}

int64_t Leaves(const Shape& shape) {
  if (!shape.IsTuple()) return 1;
  int64_t n = 0;
  for (const Shape& e : shape.tuple_shapes()) n += Leaves(e);
  return n;
}

void Flatten(const Literal& lit, std::vector<const Literal*>& out) {
  if (lit.shape().IsTuple()) {
    for (const Literal& e : lit.tuple_elements()) Flatten(e, out);
  } else {
    out.push_back(&lit);
  }
}

}  // namespace

absl::StatusOr<HostFeeds> HostFeeds::Load(const std::string& infeed, const std::string& outfeed,
                                          const HloModule& module, int64_t devices,
                                          int64_t repeat) {
  HostFeeds feeds;
  bool outfeeds = false;
  int64_t infeeds = 0;
  std::optional<Shape> tuple_shape;
  std::string conflict;
  for (const auto& c : module.computations()) {
    for (const auto& i : c->instructions()) {
      outfeeds |= i->opcode() == HloOpcode::kOutfeed;
      if (i->opcode() != HloOpcode::kInfeed || !i->shape().IsTuple() ||
          i->shape().tuple_shapes_size() < 1) {
        continue;
      }
      ++infeeds;
      const Shape& data = i->shape().tuple_shapes(0);
      if (!data.IsTuple()) continue;
      if (tuple_shape && !tuple_shape->EqualIgnoringLayout(data) && conflict.empty()) {
        conflict = absl::StrCat("--infeed: the module's infeeds read different tuples (",
                                tuple_shape->ToString(false), ", ", data.ToString(false),
                                "), so the arrays cannot be grouped into blocks");
      }
      tuple_shape = data;
    }
  }
  if (infeed.empty() && outfeed.empty() && !outfeeds) return feeds;
  feeds.transfers = std::make_unique<HostTransfers>(HostTransfers::Duration(0));
  if (infeed.empty()) return feeds;
  if (!conflict.empty()) return absl::UnimplementedError(conflict);
  if (!absl::EndsWith(infeed, ".npz")) {
    return absl::InvalidArgumentError(
        absl::StrCat("--infeed must be FILE.npz, got '", infeed, "'"));
  }
  ASSIGN_OR_RETURN(auto named, ReadNpz(infeed));
  std::vector<Literal> arrays;
  for (auto& [name, lit] : named) arrays.push_back(std::move(lit));
  const int64_t leaves = tuple_shape ? Leaves(*tuple_shape) : 1;
  std::vector<Literal> blocks;
  if (leaves == 0) {
    for (int64_t k = 0; k < infeeds; ++k) blocks.push_back(Literal::Tuple({}));
  } else {
    if (arrays.size() % static_cast<size_t>(leaves) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(infeed, " holds ", arrays.size(), " arrays, not a multiple of the ", leaves,
                       " arrays of one ", tuple_shape->ToString(false), " infeed block"));
    }
    for (size_t next = 0; next < arrays.size();) {
      if (!tuple_shape) {
        blocks.push_back(std::move(arrays[next++]));
        continue;
      }
      ASSIGN_OR_RETURN(Literal block, TakeBlock(*tuple_shape, arrays, next));
      blocks.push_back(std::move(block));
    }
  }
  for (int64_t r = 0; r < repeat; ++r) {
    for (int64_t d = 0; d < devices; ++d) {
      for (const Literal& b : blocks) feeds.transfers->PushInfeed(d, b);
    }
  }
  return feeds;
}

std::vector<std::pair<std::string, Literal>> HostFeeds::TakeOutfeeds(int64_t devices,
                                                                     int64_t runs) const {
  std::vector<std::pair<std::string, Literal>> named;
  if (transfers == nullptr) return named;
  for (int64_t d = 0; d < devices; ++d) {
    std::vector<Literal> values;
    while (transfers->outfeed_size(d) > 0) values.push_back(*transfers->PopOutfeed(d));
    // Every run outfeeds the same number of values: keep the last run's.
    const size_t per_run = values.size() / static_cast<size_t>(std::max<int64_t>(runs, 1));
    std::vector<const Literal*> leaves;
    for (size_t k = values.size() - per_run; k < values.size(); ++k) Flatten(values[k], leaves);
    const std::string prefix = devices > 1 ? absl::StrCat("d", d, "_") : "";
    for (size_t i = 0; i < leaves.size(); ++i) {
      named.emplace_back(absl::StrCat(prefix, "outfeed", i), *leaves[i]);
    }
  }
  return named;
}

}  // namespace xlite::cli
