#include "xlite/text/sdy_attributes.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "xlite/ir/named_sharding.h"
#include "xlite/support/status.h"
#include "xlite/text/mlir_strings.h"

namespace xlite::sdy {
namespace {

// Factor indices 0..17 print as the letters i..z, later ones as z_1, z_2, ...
constexpr int64_t kStartAtZ = 17;
// A sharding list or rule longer than this is not a real program.
constexpr size_t kMaxItems = 1 << 16;

std::string Symbol(absl::string_view name) {
  return absl::StrCat("@", IsMlirBareIdentifier(name) ? std::string(name) : QuoteMlirString(name));
}

// ---------------------------------------------------------------- printing

std::string PrintAxisRef(const AxisRef& a) {
  std::string out = QuoteMlirString(a.name);
  if (a.sub_axis) absl::StrAppend(&out, ":(", a.sub_axis->pre_size, ")", a.sub_axis->size);
  return out;
}

std::string PrintAxes(const std::vector<AxisRef>& axes) {
  std::vector<std::string> parts;
  for (const AxisRef& a : axes) parts.push_back(PrintAxisRef(a));
  return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
}

std::string PrintDim(const DimSharding& d) {
  std::vector<std::string> parts;
  for (const AxisRef& a : d.axes) parts.push_back(PrintAxisRef(a));
  if (!d.is_closed) parts.push_back("?");
  std::string out = absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
  if (d.priority) absl::StrAppend(&out, "p", *d.priority);
  return out;
}

std::string StrippedMesh(const Mesh& m) {
  std::vector<std::string> axes;
  for (const MeshAxis& a : m.axes)
    axes.push_back(absl::StrCat(QuoteMlirString(a.name), "=", a.size));
  std::string out = absl::StrCat("<[", absl::StrJoin(axes, ", "), "]");
  if (!m.device_ids.empty()) {
    absl::StrAppend(&out, ", device_ids=[", absl::StrJoin(m.device_ids, ", "), "]");
  }
  return out + ">";
}

std::string StrippedSharding(const TensorSharding& s) {
  std::string out = "<";
  out += s.mesh ? absl::StrCat("mesh", StrippedMesh(*s.mesh)) : Symbol(s.mesh_name);
  std::vector<std::string> dims;
  for (const DimSharding& d : s.dims) dims.push_back(PrintDim(d));
  absl::StrAppend(&out, ", [", absl::StrJoin(dims, ", "), "]");
  if (!s.replicated.empty()) absl::StrAppend(&out, ", replicated=", PrintAxes(s.replicated));
  if (!s.unreduced.empty()) {
    const char* op = s.unreduced_op == ReductionOp::kMax   ? "max"
                     : s.unreduced_op == ReductionOp::kMin ? "min"
                                                           : "";
    absl::StrAppend(&out, ", unreduced=", op, PrintAxes(s.unreduced));
  }
  return out + ">";
}

std::string StrippedShardingList(const ShardingPerValue& v) {
  std::vector<std::string> parts;
  for (const TensorSharding& s : v.shardings) parts.push_back(StrippedSharding(s));
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

std::string PrintDimMapping(const DimMapping& d) {
  if (d.factors.empty()) return "*";  // no factor (Shardy's null mapping)
  std::string out;
  for (int64_t f : d.factors) out += FactorName(f);
  return out;
}

std::string PrintTensorMapping(const TensorMapping& t) {
  std::vector<std::string> dims;
  for (const DimMapping& d : t.dims) dims.push_back(PrintDimMapping(d));
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

std::string PrintFactorList(const std::vector<int64_t>& factors) {
  std::vector<std::string> names;
  for (int64_t f : factors) names.push_back(FactorName(f));
  return absl::StrCat("{", absl::StrJoin(names, ", "), "}");
}

std::string PrintRule(const OpShardingRule& r) {
  auto mappings = [](const std::vector<TensorMapping>& m) {
    std::vector<std::string> parts;
    for (const TensorMapping& t : m) parts.push_back(PrintTensorMapping(t));
    return absl::StrJoin(parts, ", ");
  };
  std::string out = absl::StrCat("#sdy.op_sharding_rule<(", mappings(r.operands), ")->(",
                                 mappings(r.results), ")");
  if (!r.factor_sizes.empty()) {
    std::vector<std::string> sizes;
    for (size_t i = 0; i < r.factor_sizes.size(); ++i) {
      sizes.push_back(absl::StrCat(FactorName(static_cast<int64_t>(i)), "=", r.factor_sizes[i]));
    }
    absl::StrAppend(&out, " {", absl::StrJoin(sizes, ", "), "}");
  }
  const std::pair<const char*, const std::vector<int64_t>*> groups[] = {
      {"reduction", &r.reduction},
      {"need_replication", &r.need_replication},
      {"permutation", &r.permutation},
      {"blocked_propagation", &r.blocked_propagation}};
  for (const auto& [name, factors] : groups) {
    if (!factors->empty()) absl::StrAppend(&out, " ", name, "=", PrintFactorList(*factors));
  }
  if (r.is_custom) out += ", custom";
  return out + ">";
}

std::string PrintParam(const AllToAllParam& p) {
  return absl::StrCat(PrintAxes(p.axes), ": ", p.src_dim, "->", p.tgt_dim);
}

struct Printer {
  std::string operator()(const Mesh& m) const { return absl::StrCat("#sdy.mesh", StrippedMesh(m)); }
  std::string operator()(const MeshAxis& a) const {
    return absl::StrCat("#sdy<mesh_axis", QuoteMlirString(a.name), "=", a.size, ">");
  }
  std::string operator()(const SubAxisInfo& s) const {
    return absl::StrCat("#sdy<sub_axis_info(", s.pre_size, ")", s.size, ">");
  }
  std::string operator()(const AxisRef& a) const {
    return absl::StrCat("#sdy<axis_ref", PrintAxisRef(a), ">");
  }
  std::string operator()(const DimSharding& d) const {
    return absl::StrCat("#sdy<dimension_sharding", PrintDim(d), ">");
  }
  std::string operator()(const TensorSharding& s) const {
    return absl::StrCat("#sdy.sharding", StrippedSharding(s));
  }
  std::string operator()(const ShardingPerValue& v) const {
    return absl::StrCat("#sdy.sharding_per_value<", StrippedShardingList(v), ">");
  }
  std::string operator()(const ManualAxes& m) const {
    std::vector<std::string> names;
    for (const std::string& n : m.axes) names.push_back(QuoteMlirString(n));
    return absl::StrCat("#sdy<manual_axes{", absl::StrJoin(names, ", "), "}>");
  }
  std::string operator()(const AxisRefList& l) const {
    return absl::StrCat("#sdy<axis_ref_list", PrintAxes(l.axes), ">");
  }
  std::string operator()(const ListOfAxisRefLists& l) const {
    std::vector<std::string> parts;
    for (const AxisRefList& a : l.lists) parts.push_back(PrintAxes(a.axes));
    return absl::StrCat("#sdy<list_of_axis_ref_lists[", absl::StrJoin(parts, ", "), "]>");
  }
  std::string operator()(const DimMapping& d) const {
    return absl::StrCat("#sdy<dim_mapping[", PrintDimMapping(d), "]>");
  }
  std::string operator()(const TensorMapping& t) const {
    return absl::StrCat("#sdy<tensor_mapping", PrintTensorMapping(t), ">");
  }
  std::string operator()(const OpShardingRule& r) const { return PrintRule(r); }
  std::string operator()(const AllToAllParam& p) const {
    return absl::StrCat("#sdy<all_to_all_param", PrintParam(p), ">");
  }
  std::string operator()(const AllToAllParamList& l) const {
    std::vector<std::string> parts;
    for (const AllToAllParam& p : l.params) parts.push_back(PrintParam(p));
    return absl::StrCat("#sdy<all_to_all_param_list[", absl::StrJoin(parts, ", "), "]>");
  }
};

// ---------------------------------------------------------------- parsing

class Reader {
 public:
  explicit Reader(Cursor& c) : c_(c) {}

  absl::StatusOr<std::string> String() { return ParseMlirString(c_, "a quoted axis name"); }

  // [A-Za-z_][A-Za-z0-9_$.]* or a quoted string after '@'.
  absl::StatusOr<std::string> SymbolName() {
    RETURN_IF_ERROR(c_.Expect("@"));
    if (c_.PeekRaw() == '"') return String();
    absl::string_view t = c_.text();
    size_t b = c_.pos(), e = b;
    while (e < t.size() && (IsMlirIdentifierChar(t[e]) || t[e] == '-')) ++e;
    if (e == b) return c_.Error("expected a mesh name after '@'");
    c_.set_pos(e);
    return std::string(t.substr(b, e - b));
  }

  std::string Word() {
    c_.SkipSpace();
    absl::string_view t = c_.text();
    size_t b = c_.pos(), e = b;
    while (e < t.size() && (std::isalnum(static_cast<unsigned char>(t[e])) || t[e] == '_')) ++e;
    c_.set_pos(e);
    return std::string(t.substr(b, e - b));
  }

  absl::StatusOr<int64_t> Positive(absl::string_view what) {
    const size_t at = (c_.SkipSpace(), c_.pos());
    ASSIGN_OR_RETURN(int64_t v, c_.ParseInt64());
    if (v < 1) return c_.ErrorAt(at, absl::StrCat(what, " must be positive, got ", v));
    return v;
  }

  // `items` separated by commas up to `close` (already past the opener).
  template <typename F>
  absl::Status List(char close, F item) {
    if (c_.TryConsume(std::string(1, close))) return absl::OkStatus();
    size_t count = 0;
    do {
      if (++count > kMaxItems) return c_.Error("list too long");
      RETURN_IF_ERROR(item());
    } while (c_.TryConsume(","));
    return c_.Expect(std::string(1, close));
  }

  absl::StatusOr<AxisRef> Axis() {
    AxisRef a;
    ASSIGN_OR_RETURN(a.name, String());
    if (c_.PeekRaw() == ':' || c_.Peek() == ':') {
      c_.TryConsume(":");
      RETURN_IF_ERROR(c_.Expect("("));
      SubAxisInfo s;
      ASSIGN_OR_RETURN(s.pre_size, Positive("sub-axis pre-size"));
      RETURN_IF_ERROR(c_.Expect(")"));
      ASSIGN_OR_RETURN(s.size, Positive("sub-axis size"));
      a.sub_axis = s;
    }
    return a;
  }

  absl::StatusOr<std::vector<AxisRef>> Axes() {  // {"a", "b":(1)2}
    RETURN_IF_ERROR(c_.Expect("{"));
    std::vector<AxisRef> out;
    RETURN_IF_ERROR(List('}', [&]() -> absl::Status {
      ASSIGN_OR_RETURN(AxisRef a, Axis());
      out.push_back(std::move(a));
      return absl::OkStatus();
    }));
    return out;
  }

  absl::StatusOr<DimSharding> Dim() {  // {"a", ?}p1
    RETURN_IF_ERROR(c_.Expect("{"));
    DimSharding d;
    RETURN_IF_ERROR(List('}', [&]() -> absl::Status {
      if (!d.is_closed) return c_.Error("'?' must be the last entry of a dimension sharding");
      if (c_.TryConsume("?")) {
        d.is_closed = false;
        return absl::OkStatus();
      }
      ASSIGN_OR_RETURN(AxisRef a, Axis());
      d.axes.push_back(std::move(a));
      return absl::OkStatus();
    }));
    if (c_.PeekRaw() == 'p') {
      c_.set_pos(c_.pos() + 1);
      const size_t at = c_.pos();
      ASSIGN_OR_RETURN(int64_t p, c_.ParseInt64());
      if (p < 0) return c_.ErrorAt(at, "a priority must not be negative");
      d.priority = p;
    }
    return d;
  }

  absl::StatusOr<Mesh> StrippedMesh() {  // <["a"=2], device_ids=[..]>
    RETURN_IF_ERROR(c_.Expect("<"));
    RETURN_IF_ERROR(c_.Expect("["));
    Mesh m;
    RETURN_IF_ERROR(List(']', [&]() -> absl::Status {
      MeshAxis a;
      ASSIGN_OR_RETURN(a.name, String());
      RETURN_IF_ERROR(c_.Expect("="));
      ASSIGN_OR_RETURN(a.size, Positive("a mesh axis size"));
      m.axes.push_back(std::move(a));
      return absl::OkStatus();
    }));
    if (c_.TryConsume(",")) {
      if (Word() != "device_ids") return c_.Error("expected 'device_ids'");
      RETURN_IF_ERROR(c_.Expect("="));
      RETURN_IF_ERROR(c_.Expect("["));
      RETURN_IF_ERROR(List(']', [&]() -> absl::Status {
        const size_t at = (c_.SkipSpace(), c_.pos());
        ASSIGN_OR_RETURN(int64_t id, c_.ParseInt64());
        if (id < 0) return c_.ErrorAt(at, "device ids must not be negative");
        m.device_ids.push_back(id);
        return absl::OkStatus();
      }));
    }
    RETURN_IF_ERROR(c_.Expect(">"));
    RETURN_IF_ERROR(CheckMesh(m));
    return m;
  }

  // Shardy's mesh rules, checked where the mesh is read. They are not XLA's
  // (ValidateShardingMesh): Shardy allows iota device ids and any axis name;
  // ToHloSharding applies XLA's rules when a sharding becomes an HLO one.
  absl::Status CheckMesh(const Mesh& m) {
    std::set<std::string> names;
    int64_t total = 1;
    for (const MeshAxis& a : m.axes) {
      if (!names.insert(a.name).second) {
        return c_.Error(absl::StrCat("mesh axis \"", a.name, "\" appears twice"));
      }
      if (total > (int64_t{1} << 40) / a.size) return c_.Error("mesh too large");
      total *= a.size;
    }
    if (m.device_ids.empty()) return absl::OkStatus();
    if (m.axes.empty()) {
      if (m.device_ids.size() != 1) return c_.Error("a mesh without axes has one device id");
      return absl::OkStatus();
    }
    std::vector<int64_t> sorted = m.device_ids;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i) {
      if (sorted[i] != static_cast<int64_t>(i) || static_cast<int64_t>(sorted.size()) != total) {
        return c_.Error(absl::StrCat("device_ids must be a permutation of 0..", total - 1));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<TensorSharding> StrippedSharding() {  // <@mesh, [...], replicated={..}>
    RETURN_IF_ERROR(c_.Expect("<"));
    TensorSharding s;
    if (c_.Peek() == '@') {
      ASSIGN_OR_RETURN(s.mesh_name, SymbolName());
    } else if (Word() == "mesh") {
      ASSIGN_OR_RETURN(s.mesh, StrippedMesh());
    } else {
      return c_.Error("expected a mesh name (@mesh) or an inline mesh<...>");
    }
    RETURN_IF_ERROR(c_.Expect(","));
    RETURN_IF_ERROR(c_.Expect("["));
    RETURN_IF_ERROR(List(']', [&]() -> absl::Status {
      ASSIGN_OR_RETURN(DimSharding d, Dim());
      s.dims.push_back(std::move(d));
      return absl::OkStatus();
    }));
    while (c_.TryConsume(",")) {
      const size_t at = (c_.SkipSpace(), c_.pos());
      const std::string key = Word();
      RETURN_IF_ERROR(c_.Expect("="));
      if (key == "replicated" && s.replicated.empty() && s.unreduced.empty()) {
        ASSIGN_OR_RETURN(s.replicated, Axes());
      } else if (key == "unreduced" && s.unreduced.empty()) {
        if (c_.Peek() != '{') {
          const std::string op = Word();
          if (op == "max") {
            s.unreduced_op = ReductionOp::kMax;
          } else if (op == "min") {
            s.unreduced_op = ReductionOp::kMin;
          } else {
            return c_.ErrorAt(at, absl::StrCat("unknown unreduced reduction '", op, "'"));
          }
        }
        ASSIGN_OR_RETURN(s.unreduced, Axes());
      } else {
        return c_.ErrorAt(at, absl::StrCat("unexpected '", key, "' in a tensor sharding"));
      }
    }
    RETURN_IF_ERROR(c_.Expect(">"));
    return s;
  }

  absl::StatusOr<ShardingPerValue> StrippedShardingList() {  // [<..>, <..>]
    RETURN_IF_ERROR(c_.Expect("["));
    ShardingPerValue v;
    RETURN_IF_ERROR(List(']', [&]() -> absl::Status {
      ASSIGN_OR_RETURN(TensorSharding s, StrippedSharding());
      v.shardings.push_back(std::move(s));
      return absl::OkStatus();
    }));
    return v;
  }

  absl::StatusOr<ManualAxes> Manual() {  // {"a", "b"}
    RETURN_IF_ERROR(c_.Expect("{"));
    ManualAxes m;
    RETURN_IF_ERROR(List('}', [&]() -> absl::Status {
      ASSIGN_OR_RETURN(std::string name, String());
      m.axes.push_back(std::move(name));
      return absl::OkStatus();
    }));
    return m;
  }

  absl::StatusOr<ListOfAxisRefLists> Lists() {  // [{"a"}, {}]
    RETURN_IF_ERROR(c_.Expect("["));
    ListOfAxisRefLists l;
    RETURN_IF_ERROR(List(']', [&]() -> absl::Status {
      ASSIGN_OR_RETURN(std::vector<AxisRef> axes, Axes());
      l.lists.push_back({std::move(axes)});
      return absl::OkStatus();
    }));
    return l;
  }

  absl::StatusOr<AllToAllParam> Param() {  // {"a"}: 0->1
    AllToAllParam p;
    ASSIGN_OR_RETURN(p.axes, Axes());
    RETURN_IF_ERROR(c_.Expect(":"));
    ASSIGN_OR_RETURN(p.src_dim, c_.ParseInt64());
    RETURN_IF_ERROR(c_.Expect("->"));
    ASSIGN_OR_RETURN(p.tgt_dim, c_.ParseInt64());
    return p;
  }

  absl::StatusOr<AllToAllParamList> Params() {
    RETURN_IF_ERROR(c_.Expect("["));
    AllToAllParamList l;
    RETURN_IF_ERROR(List(']', [&]() -> absl::Status {
      ASSIGN_OR_RETURN(AllToAllParam p, Param());
      l.params.push_back(std::move(p));
      return absl::OkStatus();
    }));
    return l;
  }

  // A factor name (i..z, z_N); `*` or nothing is no factor.
  absl::StatusOr<int64_t> Factor() {
    c_.SkipSpace();
    const size_t at = c_.pos();
    const char ch = c_.PeekRaw();
    if (ch < 'i' || ch > 'z') return c_.Error("expected a factor name (i..z, z_N)");
    c_.set_pos(at + 1);
    if (ch == 'z' && c_.PeekRaw() == '_') {
      c_.set_pos(at + 2);
      ASSIGN_OR_RETURN(int64_t n, c_.ParseInt64());
      if (n < 1 || n > (int64_t{1} << 30)) return c_.ErrorAt(at, "bad factor name");
      return kStartAtZ + n;
    }
    return ch - 'i';
  }

  absl::StatusOr<DimMapping> DimMap() {  // ij, z_1k, or *
    DimMapping d;
    if (c_.TryConsume("*")) return d;
    while (true) {
      const char ch = c_.PeekRaw();
      if (ch < 'i' || ch > 'z') break;
      ASSIGN_OR_RETURN(int64_t f, Factor());
      d.factors.push_back(f);
      if (d.factors.size() > kMaxItems) return c_.Error("dimension mapping too long");
    }
    return d;
  }

  absl::StatusOr<TensorMapping> TensorMap() {  // [i, jk]
    RETURN_IF_ERROR(c_.Expect("["));
    TensorMapping t;
    RETURN_IF_ERROR(List(']', [&]() -> absl::Status {
      c_.SkipSpace();
      ASSIGN_OR_RETURN(DimMapping d, DimMap());
      t.dims.push_back(std::move(d));
      return absl::OkStatus();
    }));
    return t;
  }

  absl::StatusOr<std::vector<int64_t>> FactorList() {  // {i, k}
    RETURN_IF_ERROR(c_.Expect("{"));
    std::vector<int64_t> out;
    RETURN_IF_ERROR(List('}', [&]() -> absl::Status {
      ASSIGN_OR_RETURN(int64_t f, Factor());
      out.push_back(f);
      return absl::OkStatus();
    }));
    return out;
  }

  absl::StatusOr<OpShardingRule> Rule() {  // <([i, j])->([i]) {i=2, j=4} reduction={j}, custom>
    RETURN_IF_ERROR(c_.Expect("<"));
    OpShardingRule r;
    auto mappings = [&](std::vector<TensorMapping>& out) -> absl::Status {
      RETURN_IF_ERROR(c_.Expect("("));
      return List(')', [&]() -> absl::Status {
        ASSIGN_OR_RETURN(TensorMapping t, TensorMap());
        out.push_back(std::move(t));
        return absl::OkStatus();
      });
    };
    RETURN_IF_ERROR(mappings(r.operands));
    RETURN_IF_ERROR(c_.Expect("->"));
    RETURN_IF_ERROR(mappings(r.results));
    if (c_.TryConsume("{")) {
      RETURN_IF_ERROR(List('}', [&]() -> absl::Status {
        const size_t at = (c_.SkipSpace(), c_.pos());
        ASSIGN_OR_RETURN(int64_t f, Factor());
        if (f != static_cast<int64_t>(r.factor_sizes.size())) {
          return c_.ErrorAt(
              at, absl::StrCat("expected factor ", FactorName(r.factor_sizes.size()), " next"));
        }
        RETURN_IF_ERROR(c_.Expect("="));
        ASSIGN_OR_RETURN(int64_t size, c_.ParseInt64());
        if (size < 0) return c_.ErrorAt(at, "a factor size must not be negative");
        r.factor_sizes.push_back(size);
        return absl::OkStatus();
      }));
    }
    while (true) {
      const size_t save = c_.pos();
      if (c_.TryConsume(",")) {
        if (Word() != "custom") return c_.Error("expected 'custom'");
        r.is_custom = true;
        break;
      }
      const std::string key = Word();
      std::vector<int64_t>* group = key == "reduction"             ? &r.reduction
                                    : key == "need_replication"    ? &r.need_replication
                                    : key == "permutation"         ? &r.permutation
                                    : key == "blocked_propagation" ? &r.blocked_propagation
                                                                   : nullptr;
      if (group == nullptr || !group->empty()) {
        c_.set_pos(save);
        break;
      }
      RETURN_IF_ERROR(c_.Expect("="));
      ASSIGN_OR_RETURN(*group, FactorList());
    }
    RETURN_IF_ERROR(c_.Expect(">"));
    // Every factor named must have a size.
    const int64_t n = static_cast<int64_t>(r.factor_sizes.size());
    auto check = [&](int64_t f) -> absl::Status {
      if (f >= n) return c_.Error(absl::StrCat("factor ", FactorName(f), " has no size"));
      return absl::OkStatus();
    };
    for (const auto* side : {&r.operands, &r.results}) {
      for (const TensorMapping& t : *side) {
        for (const DimMapping& d : t.dims) {
          for (int64_t f : d.factors) RETURN_IF_ERROR(check(f));
        }
      }
    }
    for (const auto* g :
         {&r.reduction, &r.need_replication, &r.permutation, &r.blocked_propagation}) {
      for (int64_t f : *g) RETURN_IF_ERROR(check(f));
    }
    return r;
  }

  // {name = #sdy.mesh<...>, ...}: the xla.sdy.meshes frontend attribute.
  absl::StatusOr<MeshTable> MeshTableBody() {
    RETURN_IF_ERROR(c_.Expect("{"));
    MeshTable table;
    RETURN_IF_ERROR(List('}', [&]() -> absl::Status {
      const size_t at = (c_.SkipSpace(), c_.pos());
      std::string name;
      if (c_.PeekRaw() == '"') {
        ASSIGN_OR_RETURN(name, String());
      } else {
        name = Word();
      }
      if (name.empty()) return c_.Error("expected a mesh name");
      RETURN_IF_ERROR(c_.Expect("="));
      ASSIGN_OR_RETURN(Attr a, Full());
      Mesh* mesh = std::get_if<Mesh>(&a);
      if (mesh == nullptr)
        return c_.ErrorAt(at, absl::StrCat("mesh '", name, "' is not a #sdy.mesh"));
      if (!table.emplace(name, std::move(*mesh)).second) {
        return c_.ErrorAt(at, absl::StrCat("mesh '", name, "' is defined twice"));
      }
      return absl::OkStatus();
    }));
    return table;
  }

  // "#sdy.mnemonic<...>" or "#sdy<mnemonic...>".
  absl::StatusOr<Attr> Full() {
    c_.SkipSpace();
    if (!c_.TryConsume("#sdy")) return c_.Error("expected an sdy attribute (#sdy...)");
    std::string mnemonic;
    bool dotted = false;
    if (c_.PeekRaw() == '.') {
      c_.set_pos(c_.pos() + 1);
      mnemonic = Word();
      dotted = true;
    } else {
      RETURN_IF_ERROR(c_.Expect("<"));
      mnemonic = Word();
    }
    absl::StatusOr<Attr> attr = Body(mnemonic, dotted);
    if (!attr.ok()) return attr.status();
    if (!dotted) RETURN_IF_ERROR(c_.Expect(">"));
    return attr;
  }

 private:
  absl::StatusOr<Attr> Body(const std::string& m, bool dotted) {
    // Dotted forms hold a <...> body; the #sdy<mnemonic ...> forms hold the
    // body right after the mnemonic.
    if (dotted) {
      if (m == "mesh") return Wrap(StrippedMesh());
      if (m == "sharding") return Wrap(StrippedSharding());
      if (m == "op_sharding_rule") return Wrap(Rule());
      if (m == "sharding_per_value") {
        RETURN_IF_ERROR(c_.Expect("<"));
        ASSIGN_OR_RETURN(ShardingPerValue v, StrippedShardingList());
        RETURN_IF_ERROR(c_.Expect(">"));
        return Attr(std::move(v));
      }
      // MLIR also accepts #sdy.name<body> for the undotted ones.
      RETURN_IF_ERROR(c_.Expect("<"));
      ASSIGN_OR_RETURN(Attr a, Body(m, false));
      RETURN_IF_ERROR(c_.Expect(">"));
      return a;
    }
    if (m == "manual_axes") return Wrap(Manual());
    if (m == "axis_ref_list") {
      ASSIGN_OR_RETURN(std::vector<AxisRef> axes, Axes());
      return Attr(AxisRefList{std::move(axes)});
    }
    if (m == "list_of_axis_ref_lists") return Wrap(Lists());
    if (m == "all_to_all_param_list") return Wrap(Params());
    if (m == "all_to_all_param") return Wrap(Param());
    if (m == "axis_ref") return Wrap(Axis());
    if (m == "dimension_sharding") return Wrap(Dim());
    if (m == "mesh_axis") {
      MeshAxis a;
      ASSIGN_OR_RETURN(a.name, String());
      RETURN_IF_ERROR(c_.Expect("="));
      ASSIGN_OR_RETURN(a.size, Positive("a mesh axis size"));
      return Attr(std::move(a));
    }
    if (m == "sub_axis_info") {
      SubAxisInfo s;
      RETURN_IF_ERROR(c_.Expect("("));
      ASSIGN_OR_RETURN(s.pre_size, Positive("sub-axis pre-size"));
      RETURN_IF_ERROR(c_.Expect(")"));
      ASSIGN_OR_RETURN(s.size, Positive("sub-axis size"));
      return Attr(s);
    }
    if (m == "tensor_mapping") return Wrap(TensorMap());
    if (m == "dim_mapping") {
      RETURN_IF_ERROR(c_.Expect("["));
      c_.SkipSpace();
      ASSIGN_OR_RETURN(DimMapping d, DimMap());
      RETURN_IF_ERROR(c_.Expect("]"));
      return Attr(std::move(d));
    }
    return c_.Error(absl::StrCat("unknown sdy attribute '", m, "'"));
  }

  template <typename T>
  static absl::StatusOr<Attr> Wrap(absl::StatusOr<T> v) {
    if (!v.ok()) return v.status();
    return Attr(*std::move(v));
  }

  Cursor& c_;
};

struct MnemonicOf {
  std::string operator()(const Mesh&) const { return "mesh"; }
  std::string operator()(const MeshAxis&) const { return "mesh_axis"; }
  std::string operator()(const SubAxisInfo&) const { return "sub_axis_info"; }
  std::string operator()(const AxisRef&) const { return "axis_ref"; }
  std::string operator()(const DimSharding&) const { return "dimension_sharding"; }
  std::string operator()(const TensorSharding&) const { return "sharding"; }
  std::string operator()(const ShardingPerValue&) const { return "sharding_per_value"; }
  std::string operator()(const ManualAxes&) const { return "manual_axes"; }
  std::string operator()(const AxisRefList&) const { return "axis_ref_list"; }
  std::string operator()(const ListOfAxisRefLists&) const { return "list_of_axis_ref_lists"; }
  std::string operator()(const DimMapping&) const { return "dim_mapping"; }
  std::string operator()(const TensorMapping&) const { return "tensor_mapping"; }
  std::string operator()(const OpShardingRule&) const { return "op_sharding_rule"; }
  std::string operator()(const AllToAllParam&) const { return "all_to_all_param"; }
  std::string operator()(const AllToAllParamList&) const { return "all_to_all_param_list"; }
};

template <typename T, typename F>
absl::StatusOr<T> ParseWhole(absl::string_view text, F parse) {
  auto attempt = [&](absl::string_view t) -> absl::StatusOr<T> {
    Cursor c(t, "<sdy attribute>");
    Reader r(c);
    ASSIGN_OR_RETURN(T v, parse(r));
    if (!c.AtEnd()) return c.Error("unexpected text after the attribute");
    return v;
  };
  absl::StatusOr<T> v = attempt(text);
  if (v.ok() || !absl::StrContains(text, '\\')) return v;
  // Escaped for a string (\"a\" in XLA's frontend attributes): unescape once.
  std::string unescaped;
  if (!absl::CUnescape(text, &unescaped)) return v;
  absl::StatusOr<T> again = attempt(unescaped);
  return again.ok() ? again : v;
}

}  // namespace

int64_t Mesh::TotalSize() const {
  int64_t n = 1;
  for (const MeshAxis& a : axes) n *= a.size;
  return n;
}

std::optional<int64_t> Mesh::AxisIndex(absl::string_view name) const {
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i].name == name) return static_cast<int64_t>(i);
  }
  return std::nullopt;
}

std::string Print(const Attr& attr) { return std::visit(Printer(), attr); }
std::string Mnemonic(const Attr& attr) { return std::visit(MnemonicOf(), attr); }

std::string FactorName(int64_t index) {
  if (index <= kStartAtZ) return std::string(1, static_cast<char>('i' + index));
  return absl::StrCat("z_", index - kStartAtZ);
}

absl::StatusOr<Attr> ParseAttr(Cursor& cursor) { return Reader(cursor).Full(); }

absl::StatusOr<Attr> ParseAttrText(absl::string_view text) {
  return ParseWhole<Attr>(text, [](Reader& r) { return r.Full(); });
}

absl::StatusOr<TensorSharding> ParseStrippedSharding(Cursor& c) {
  return Reader(c).StrippedSharding();
}
absl::StatusOr<ShardingPerValue> ParseStrippedShardingList(Cursor& c) {
  return Reader(c).StrippedShardingList();
}
absl::StatusOr<Mesh> ParseStrippedMesh(Cursor& c) { return Reader(c).StrippedMesh(); }
absl::StatusOr<AxisRefList> ParseAxisRefList(Cursor& c) {
  ASSIGN_OR_RETURN(std::vector<AxisRef> axes, Reader(c).Axes());
  return AxisRefList{std::move(axes)};
}
absl::StatusOr<ManualAxes> ParseManualAxes(Cursor& c) { return Reader(c).Manual(); }
absl::StatusOr<ListOfAxisRefLists> ParseListOfAxisRefLists(Cursor& c) { return Reader(c).Lists(); }
absl::StatusOr<AllToAllParamList> ParseAllToAllParamList(Cursor& c) { return Reader(c).Params(); }

// ---------------------------------------------------------------- meshes

absl::StatusOr<MeshTable> ParseMeshTable(absl::string_view text) {
  return ParseWhole<MeshTable>(
      text, [](Reader& r) -> absl::StatusOr<MeshTable> { return r.MeshTableBody(); });
}

std::string PrintMeshTable(const MeshTable& meshes) {
  std::vector<std::string> parts;
  for (const auto& [name, mesh] : meshes) {
    parts.push_back(absl::StrCat(IsMlirBareIdentifier(name) ? name : QuoteMlirString(name), " = ",
                                 Print(mesh)));
  }
  return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
}

absl::StatusOr<Mesh> MeshOf(const TensorSharding& sharding, const MeshTable& meshes) {
  if (sharding.mesh) return *sharding.mesh;
  auto it = meshes.find(sharding.mesh_name);
  if (it == meshes.end()) {
    return absl::NotFoundError(absl::StrCat("no mesh @", sharding.mesh_name));
  }
  return it->second;
}

ShardingMesh ToShardingMesh(const Mesh& mesh) {
  ShardingMesh m;
  if (mesh.axes.empty() && mesh.device_ids.size() == 1) {
    m.maximal_device = mesh.device_ids[0];
    return m;
  }
  for (const MeshAxis& a : mesh.axes) {
    m.axis_names.push_back(a.name);
    m.axis_sizes.push_back(a.size);
  }
  bool iota = true;
  for (size_t i = 0; i < mesh.device_ids.size(); ++i) {
    iota = iota && mesh.device_ids[i] == static_cast<int64_t>(i);
  }
  if (!iota) m.device_ids = mesh.device_ids;
  return m;
}

namespace {

absl::StatusOr<MeshAxisRef> ToMeshAxisRef(const AxisRef& ref, const Mesh& mesh) {
  std::optional<int64_t> index = mesh.AxisIndex(ref.name);
  if (!index) {
    return absl::InvalidArgumentError(absl::StrCat("unknown mesh axis \"", ref.name, "\""));
  }
  MeshAxisRef m;
  m.axis = *index;
  if (ref.sub_axis) {
    m.pre_size = ref.sub_axis->pre_size;
    m.size = ref.sub_axis->size;
  }
  return m;
}

// The sharding as XLA's NamedSharding, unchecked: axis names become indices
// (unknown ones are errors), dimensions are dropped when none is sharded, as
// XLA keeps them, and the whole `manual_axes` move out of the dimensions and
// replicated axes into NamedSharding::manual_axes.
absl::StatusOr<NamedSharding> ToNamed(const TensorSharding& sharding, const Mesh& mesh,
                                      const std::vector<std::string>& manual_axes) {
  NamedSharding named;
  named.mesh = ToShardingMesh(mesh);
  auto is_manual = [&](const AxisRef& a) {
    return !a.sub_axis &&
           std::find(manual_axes.begin(), manual_axes.end(), a.name) != manual_axes.end();
  };
  auto convert = [&](const std::vector<AxisRef>& axes, bool keep_manual,
                     std::vector<MeshAxisRef>& out) -> absl::Status {
    for (const AxisRef& a : axes) {
      if (!keep_manual && is_manual(a)) continue;
      ASSIGN_OR_RETURN(MeshAxisRef m, ToMeshAxisRef(a, mesh));
      out.push_back(m);
    }
    return absl::OkStatus();
  };
  bool any_axes = false;
  for (const DimSharding& d : sharding.dims) {
    NamedSharding::Dim dim;
    dim.is_closed = d.is_closed;
    RETURN_IF_ERROR(convert(d.axes, /*keep_manual=*/false, dim.axes));
    any_axes = any_axes || !dim.axes.empty();
    named.dims.push_back(std::move(dim));
  }
  if (!any_axes) named.dims.clear();
  RETURN_IF_ERROR(convert(sharding.replicated, /*keep_manual=*/false, named.replicated_axes));
  RETURN_IF_ERROR(convert(sharding.unreduced, /*keep_manual=*/true, named.unreduced_axes));
  named.unreduced_reduction =
      sharding.unreduced_op == ReductionOp::kMax   ? NamedSharding::Reduction::kMax
      : sharding.unreduced_op == ReductionOp::kMin ? NamedSharding::Reduction::kMin
                                                   : NamedSharding::Reduction::kSum;
  for (const std::string& name : manual_axes) {
    std::optional<int64_t> index = mesh.AxisIndex(name);
    if (!index) {
      return absl::InvalidArgumentError(absl::StrCat("unknown manual axis \"", name, "\""));
    }
    MeshAxisRef m;
    m.axis = *index;
    named.manual_axes.push_back(m);
  }
  return named;
}

// XLA's NamedSharding rules (the same as Shardy's for a tensor sharding: axes
// exist, sub-axes fit, no part of an axis used twice, sorted replicated and
// unreduced axes, no mergeable neighbours), the error naming the sharding.
absl::Status CheckNamed(const NamedSharding& named, const TensorSharding& sharding) {
  absl::Status st = ValidateNamedSharding(named);
  if (st.ok()) return st;
  return absl::Status(st.code(), absl::StrCat(st.message(), " in ", Print(sharding)));
}

// Verify's checks, for a sharding already bound to `mesh`.
absl::Status CheckOnMesh(const TensorSharding& sharding, const Mesh& mesh) {
  absl::StatusOr<NamedSharding> named = ToNamed(sharding, mesh, {});
  if (!named.ok()) {
    return absl::Status(named.status().code(),
                        absl::StrCat(named.status().message(), " in ", Print(sharding)));
  }
  return CheckNamed(*named, sharding);
}

absl::Status CheckRank(const TensorSharding& sharding, size_t rank) {
  if (sharding.dims.size() == rank) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(Print(sharding), " has ", sharding.dims.size(),
                                                 " dimension shardings for a rank-", rank,
                                                 " tensor"));
}

}  // namespace

absl::Status Verify(const TensorSharding& sharding, const MeshTable& meshes,
                    const std::vector<int64_t>* dims) {
  ASSIGN_OR_RETURN(Mesh mesh, MeshOf(sharding, meshes));
  if (dims != nullptr) RETURN_IF_ERROR(CheckRank(sharding, dims->size()));
  return CheckOnMesh(sharding, mesh);
}

absl::StatusOr<HloSharding> ToHloSharding(const TensorSharding& sharding, const MeshTable& meshes,
                                          const std::vector<std::string>& manual_axes) {
  RETURN_IF_ERROR(Verify(sharding, meshes));
  ASSIGN_OR_RETURN(Mesh mesh, MeshOf(sharding, meshes));
  ASSIGN_OR_RETURN(NamedSharding named, ToNamed(sharding, mesh, manual_axes));
  // With manual axes: sorted as the mesh orders them, none also unreduced.
  RETURN_IF_ERROR(CheckNamed(named, sharding));
  HloSharding out;
  out.kind = HloSharding::Kind::kNamed;
  out.named = std::move(named);
  return out;
}

absl::StatusOr<std::vector<int64_t>> LocalDimensions(const TensorSharding& sharding,
                                                     const Mesh& mesh,
                                                     const std::vector<std::string>& manual_axes,
                                                     const std::vector<int64_t>& global_dims) {
  RETURN_IF_ERROR(CheckRank(sharding, global_dims.size()));
  // A valid sharding uses each part of an axis once, so the shard counts
  // below stay within the mesh's device count.
  RETURN_IF_ERROR(CheckOnMesh(sharding, mesh));
  std::vector<int64_t> local = global_dims;
  for (size_t d = 0; d < global_dims.size(); ++d) {
    int64_t count = 1;
    bool free_seen = false;
    for (const AxisRef& a : sharding.dims[d].axes) {
      const bool manual =
          std::find(manual_axes.begin(), manual_axes.end(), a.name) != manual_axes.end();
      if (!manual) {
        free_seen = true;
        continue;
      }
      if (free_seen || a.sub_axis) {
        return absl::InvalidArgumentError(absl::StrCat(
            "manual axis \"", a.name, "\" must be a whole axis before the free axes of dimension ",
            d, " in ", Print(sharding)));
      }
      ASSIGN_OR_RETURN(MeshAxisRef r, ToMeshAxisRef(a, mesh));
      count *= mesh.axes[r.axis].size;
    }
    if (global_dims[d] % count != 0) {
      return absl::InvalidArgumentError(absl::StrCat("dimension ", d, " of size ", global_dims[d],
                                                     " does not split into ", count, " shards in ",
                                                     Print(sharding)));
    }
    local[d] = global_dims[d] / count;
  }
  return local;
}

}  // namespace xlite::sdy
