// Shardings: XLA's tile-assignment form ({devices=[2,2]...}) and the
// named-mesh form ({mesh['x'=2], [{'x'}]}), single or tuple.
#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "xlite/ir/named_sharding.h"
#include "xlite/support/status.h"
#include "xlite/text/parser_internal.h"

namespace xlite::text_internal {

absl::StatusOr<HloSharding> HloParser::ParseSharding(int depth) {
  if (depth > kMaxDepth) return c_.Error("sharding nested too deeply");
  HloSharding s;
  RETURN_IF_ERROR(c_.Expect("{"));
  if (c_.Peek() == '{' || c_.Peek() == '}') {
    // Tuple sharding: {{...}, {...}}; "{}" is an empty tuple.
    s.kind = HloSharding::Kind::kTuple;
    if (c_.TryConsume("}")) return s;
    while (true) {
      ASSIGN_OR_RETURN(HloSharding e, ParseSharding(depth + 1));
      s.tuple_elements.push_back(std::move(e));
      if (c_.TryConsume(",")) continue;
      RETURN_IF_ERROR(c_.Expect("}"));
      return s;
    }
  }
  if (c_.LookingAt("mesh[") || c_.LookingAt("maximal_mesh[")) {
    RETURN_IF_ERROR(ParseNamedShardingBody(s));
    return s;
  }
  RETURN_IF_ERROR(ParseShardingBody(s));
  return s;
}

absl::Status HloParser::ParseShardingBody(HloSharding& s) {
  bool have_kind = false;
  while (!c_.TryConsume("}")) {
    size_t pos = (c_.SkipSpace(), c_.pos());
    if (c_.AtEnd()) return c_.Error("unterminated sharding");
    ASSIGN_OR_RETURN(std::string word, c_.ParseIdentifier("sharding attribute"));
    if (word == "replicated") {
      s.kind = HloSharding::Kind::kReplicated;
      have_kind = true;
    } else if (word == "manual") {
      s.kind = HloSharding::Kind::kManual;
      have_kind = true;
    } else if (word == "unknown") {
      s.kind = HloSharding::Kind::kUnknown;
      have_kind = true;
    } else if (word == "unreduced") {
      s.kind = HloSharding::Kind::kUnreduced;
      have_kind = true;
    } else if (word == "maximal") {
      s.kind = HloSharding::Kind::kMaximal;
      have_kind = true;
      RETURN_IF_ERROR(c_.Expect("device"));
      RETURN_IF_ERROR(c_.Expect("="));
      ASSIGN_OR_RETURN(s.device, c_.ParseInt64());
    } else if (word == "devices") {
      s.kind = HloSharding::Kind::kTiled;
      have_kind = true;
      RETURN_IF_ERROR(c_.Expect("="));
      ASSIGN_OR_RETURN(s.tile_dimensions, c_.ParseIntList('[', ']'));
      if (c_.TryConsume("<=")) {
        s.iota = true;
        ASSIGN_OR_RETURN(s.iota_reshape, c_.ParseIntList('[', ']'));
        if (c_.TryConsume("T")) {
          ASSIGN_OR_RETURN(s.iota_transpose, c_.ParseIntList('(', ')'));
        }
      } else {
        while (true) {
          ASSIGN_OR_RETURN(int64_t d, c_.ParseInt64());
          s.devices.push_back(d);
          if (!c_.TryConsume(",")) break;
        }
      }
    } else if (word == "last_tile_dim_replicate") {
      s.last_tile_dim_replicate = true;
    } else if (word == "last_tile_dims") {
      RETURN_IF_ERROR(c_.Expect("="));
      RETURN_IF_ERROR(c_.Expect("{"));
      while (!c_.TryConsume("}")) {
        ASSIGN_OR_RETURN(std::string t, ParseEnum("subgroup type", {"manual", "replicated",
                                                                    "unreduced", "maximal"}));
        s.last_tile_dims.push_back(std::move(t));
        c_.TryConsume(",");
      }
    } else if (word == "metadata") {
      RETURN_IF_ERROR(c_.Expect("="));
      ASSIGN_OR_RETURN(s.metadata, ParseMetadataList());
    } else if (word == "shard_as" || word == "shard_like") {
      ASSIGN_OR_RETURN(int64_t id, c_.ParseInt64());
      s.shard_group = absl::StrCat(word, " ", id);
    } else {
      return c_.ErrorAt(pos, absl::StrCat("unknown sharding attribute '", word, "'"));
    }
  }
  if (!have_kind) return c_.Error("sharding has no kind (replicated, maximal, devices=...)");
  if (s.kind == HloSharding::Kind::kTiled && s.iota) {
    int64_t tiles = 1, devices = 1;
    for (int64_t d : s.tile_dimensions) tiles *= d;
    for (int64_t d : s.iota_reshape) devices *= d;
    if (tiles != devices) {
      return c_.Error(absl::StrCat("sharding iota has ", devices,
                                   " devices but its tile assignment needs ", tiles));
    }
    if (!s.iota_transpose.empty() && s.iota_transpose.size() != s.iota_reshape.size()) {
      return c_.Error("sharding iota transpose does not match its reshape dimensions");
    }
  }
  if (s.kind == HloSharding::Kind::kTiled && !s.iota) {
    int64_t n = 1;
    for (int64_t d : s.tile_dimensions) n *= d;
    if (n != static_cast<int64_t>(s.devices.size())) {
      return c_.Error(absl::StrCat("sharding has ", s.devices.size(),
                                   " devices but its tile assignment needs ", n));
    }
  }
  return absl::OkStatus();
}

// The body of {mesh[...], ...} after its '{', through its '}' (XLA's
// NamedSharding text; see ir/named_sharding.h).
absl::Status HloParser::ParseNamedShardingBody(HloSharding& s) {
  const size_t start = (c_.SkipSpace(), c_.pos());
  NamedSharding n;
  ASSIGN_OR_RETURN(n.mesh, ParseShardingMesh());
  absl::flat_hash_set<std::string> seen;
  bool full_keyword = false;
  auto once = [&](absl::string_view what, size_t pos) -> absl::Status {
    if (!seen.insert(std::string(what)).second) {
      return c_.ErrorAt(pos, absl::StrCat("named sharding gives ", what, " more than once"));
    }
    return absl::OkStatus();
  };
  auto all_axes = [&] {
    std::vector<MeshAxisRef> all;
    for (size_t i = 0; i < n.mesh.axis_names.size(); ++i) all.push_back({static_cast<int64_t>(i)});
    return all;
  };
  while (c_.TryConsume(",")) {
    size_t pos = (c_.SkipSpace(), c_.pos());
    if (c_.Peek() == '[') {
      RETURN_IF_ERROR(once("the dimension list [...]", pos));
      ASSIGN_OR_RETURN(n.dims, ParseNamedDims(n.mesh));
      continue;
    }
    ASSIGN_OR_RETURN(std::string word, c_.ParseIdentifier("named sharding field"));
    if (word == "metadata") {
      RETURN_IF_ERROR(once(word, pos));
      RETURN_IF_ERROR(c_.Expect("="));
      ASSIGN_OR_RETURN(s.metadata, ParseMetadataList());
      continue;
    }
    if (word != "replicated" && word != "unreduced" && word != "manual") {
      return c_.ErrorAt(pos, absl::StrCat("unknown named sharding field '", word,
                                          "'; expected [...], replicated, unreduced, manual or "
                                          "metadata"));
    }
    RETURN_IF_ERROR(once(word, pos));
    std::vector<MeshAxisRef>& axes = word == "replicated"  ? n.replicated_axes
                                     : word == "unreduced" ? n.unreduced_axes
                                                           : n.manual_axes;
    if (!c_.TryConsume("=")) {
      // The bare keyword: replicated over everything, or unreduced / manual
      // on every mesh axis.
      full_keyword = true;
      if (word != "replicated") axes = all_axes();
      continue;
    }
    if (word == "unreduced" && c_.Peek() != '{') {
      size_t rpos = (c_.SkipSpace(), c_.pos());
      ASSIGN_OR_RETURN(std::string red, c_.ParseIdentifier("unreduced reduction"));
      if (red == "sum") {
        n.unreduced_reduction = NamedSharding::Reduction::kSum;
      } else if (red == "max") {
        n.unreduced_reduction = NamedSharding::Reduction::kMax;
      } else if (red == "min") {
        n.unreduced_reduction = NamedSharding::Reduction::kMin;
      } else {
        return c_.ErrorAt(rpos, absl::StrCat("unknown unreduced reduction '", red,
                                             "'; expected sum, max or min"));
      }
    }
    ASSIGN_OR_RETURN(axes, ParseMeshAxisList(n.mesh));
  }
  RETURN_IF_ERROR(c_.Expect("}"));
  if (full_keyword && seen.size() - seen.count("metadata") > 1) {
    return c_.ErrorAt(start,
                      "a bare replicated, unreduced or manual covers the whole sharding and "
                      "takes no other dimension or axis list");
  }
  if (n.mesh.maximal_device && seen.size() - seen.count("metadata") > 0) {
    return c_.ErrorAt(start, "a maximal_mesh sharding takes no dimension or axis lists");
  }
  if (!n.mesh.maximal_device && seen.size() - seen.count("metadata") == 0) {
    return c_.ErrorAt(start,
                      "a named sharding needs a dimension list [...] or replicated, unreduced "
                      "or manual");
  }
  if (absl::Status st = ValidateNamedSharding(n); !st.ok()) {
    return c_.ErrorAt(start, absl::StrCat("invalid named sharding: ", st.message()));
  }
  s.kind = HloSharding::Kind::kNamed;
  s.named = std::move(n);
  return absl::OkStatus();
}

// mesh['a'=2,'b'=4] (, device_ids=(...))? | maximal_mesh[device_id=N]
absl::StatusOr<ShardingMesh> HloParser::ParseShardingMesh() {
  ShardingMesh mesh;
  const size_t start = (c_.SkipSpace(), c_.pos());
  if (c_.TryConsume("maximal_mesh[")) {
    RETURN_IF_ERROR(c_.Expect("device_id"));
    RETURN_IF_ERROR(c_.Expect("="));
    ASSIGN_OR_RETURN(int64_t id, c_.ParseInt64());
    mesh.maximal_device = id;
    RETURN_IF_ERROR(c_.Expect("]"));
  } else {
    RETURN_IF_ERROR(c_.Expect("mesh["));
    if (!c_.TryConsume("]")) {
      while (true) {
        ASSIGN_OR_RETURN(std::string name, ParseQuotedAxisName());
        RETURN_IF_ERROR(c_.Expect("="));
        size_t spos = (c_.SkipSpace(), c_.pos());
        ASSIGN_OR_RETURN(int64_t size, c_.ParseInt64());
        if (size <= 0 || size > (int64_t{1} << 24)) {
          return c_.ErrorAt(spos, "mesh axis size must be between 1 and 2^24");
        }
        mesh.axis_names.push_back(std::move(name));
        mesh.axis_sizes.push_back(size);
        if (c_.TryConsume(",")) continue;
        RETURN_IF_ERROR(c_.Expect("]"));
        break;
      }
    }
    // ", device_ids=(...)" follows the mesh; a ',' followed by anything else
    // belongs to the caller.
    size_t save = c_.pos();
    if (c_.TryConsume(",") && c_.TryConsumeWord("device_ids")) {
      RETURN_IF_ERROR(c_.Expect("="));
      RETURN_IF_ERROR(c_.Expect("("));
      if (c_.Peek() == '[') {
        ASSIGN_OR_RETURN(mesh.device_ids_iota_reshape, c_.ParseIntList('[', ']'));
        if (mesh.device_ids_iota_reshape.empty()) {
          return c_.Error("mesh device_ids iota needs its reshape dimensions");
        }
        if (c_.TryConsume("T")) {
          ASSIGN_OR_RETURN(mesh.device_ids_iota_transpose, c_.ParseIntList('(', ')'));
        }
        RETURN_IF_ERROR(c_.Expect(")"));
      } else {
        c_.set_pos(c_.pos() - 1);
        ASSIGN_OR_RETURN(mesh.device_ids, c_.ParseIntList('(', ')'));
        if (mesh.device_ids.empty()) return c_.Error("mesh device_ids=() lists no devices");
      }
    } else {
      c_.set_pos(save);
    }
  }
  if (absl::Status st = ValidateShardingMesh(mesh); !st.ok()) {
    return c_.ErrorAt(start, absl::StrCat("invalid mesh: ", st.message()));
  }
  return mesh;
}

// 'name': any characters but a quote or a line break.
absl::StatusOr<std::string> HloParser::ParseQuotedAxisName() {
  if (c_.Peek() != '\'') return c_.Error("expected a quoted mesh axis name like 'data'");
  const size_t begin = c_.pos() + 1;
  size_t end = begin;
  const absl::string_view text = c_.text();
  while (end < text.size() && text[end] != '\'' && text[end] != '\n') ++end;
  if (end >= text.size() || text[end] != '\'') {
    return c_.ErrorAt(begin - 1, "unterminated mesh axis name");
  }
  if (end == begin) return c_.ErrorAt(begin - 1, "a mesh axis name cannot be empty");
  c_.set_pos(end + 1);
  return std::string(text.substr(begin, end - begin));
}

// 'a' or 'a':(2)4, naming an axis of `mesh`.
absl::StatusOr<MeshAxisRef> HloParser::ParseMeshAxisRef(const ShardingMesh& mesh) {
  const size_t pos = (c_.SkipSpace(), c_.pos());
  ASSIGN_OR_RETURN(std::string name, ParseQuotedAxisName());
  auto it = std::find(mesh.axis_names.begin(), mesh.axis_names.end(), name);
  if (it == mesh.axis_names.end()) {
    return c_.ErrorAt(pos, absl::StrCat("the mesh has no axis '", name, "'"));
  }
  MeshAxisRef r;
  r.axis = it - mesh.axis_names.begin();
  if (c_.PeekRaw() == ':') {
    c_.set_pos(c_.pos() + 1);
    RETURN_IF_ERROR(c_.Expect("("));
    ASSIGN_OR_RETURN(r.pre_size, c_.ParseInt64());
    RETURN_IF_ERROR(c_.Expect(")"));
    ASSIGN_OR_RETURN(r.size, c_.ParseInt64());
    if (r.size <= 0 || r.pre_size <= 0) {
      return c_.ErrorAt(pos, "a sub-axis needs a positive pre-size and size, as 'a':(1)2");
    }
  }
  return r;
}

// {'a', 'b':(1)2}
absl::StatusOr<std::vector<MeshAxisRef>> HloParser::ParseMeshAxisList(const ShardingMesh& mesh) {
  std::vector<MeshAxisRef> axes;
  RETURN_IF_ERROR(c_.Expect("{"));
  if (c_.TryConsume("}")) return axes;
  while (true) {
    ASSIGN_OR_RETURN(MeshAxisRef r, ParseMeshAxisRef(mesh));
    axes.push_back(r);
    if (c_.TryConsume(",")) continue;
    RETURN_IF_ERROR(c_.Expect("}"));
    return axes;
  }
}

// [{}, {'a', 'b'}, {'c', ?}, {?}]
absl::StatusOr<std::vector<NamedSharding::Dim>> HloParser::ParseNamedDims(
    const ShardingMesh& mesh) {
  std::vector<NamedSharding::Dim> dims;
  RETURN_IF_ERROR(c_.Expect("["));
  if (c_.TryConsume("]")) return dims;
  while (true) {
    NamedSharding::Dim d;
    RETURN_IF_ERROR(c_.Expect("{"));
    while (!c_.TryConsume("}")) {
      if (c_.TryConsume("?")) {
        d.is_closed = false;
        RETURN_IF_ERROR(c_.Expect("}"));  // '?' comes last
        break;
      }
      ASSIGN_OR_RETURN(MeshAxisRef r, ParseMeshAxisRef(mesh));
      d.axes.push_back(r);
      if (!c_.TryConsume(",")) {
        RETURN_IF_ERROR(c_.Expect("}"));
        break;
      }
    }
    dims.push_back(std::move(d));
    if (c_.TryConsume(",")) continue;
    RETURN_IF_ERROR(c_.Expect("]"));
    return dims;
  }
}

// metadata={...} or metadata={{...}, {...}}
absl::StatusOr<std::vector<OpMetadata>> HloParser::ParseMetadataList() {
  std::vector<OpMetadata> out;
  if (c_.LookingAt("{{") || c_.LookingAt("{}")) {
    RETURN_IF_ERROR(c_.Expect("{"));
    while (!c_.TryConsume("}")) {
      ASSIGN_OR_RETURN(OpMetadata m, ParseMetadata());
      out.push_back(std::move(m));
      c_.TryConsume(",");
    }
    return out;
  }
  ASSIGN_OR_RETURN(OpMetadata m, ParseMetadata());
  out.push_back(std::move(m));
  return out;
}

}  // namespace xlite::text_internal
