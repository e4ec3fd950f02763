// The custom syntax of Shardy's ops (openxla/shardy ops.td's assembly
// formats), read into the generic form the rest of xlite sees: attributes
// under their ODS names, sdy attributes kept as their canonical text.
//
//   sdy.mesh @mesh = <["a"=2, "b"=2]>
//   %1 = sdy.sharding_constraint %0 <@mesh, [{"a"}, {}]> : tensor<8x8xf32>
//   %2 = sdy.manual_computation(%1) in_shardings=[<@mesh, [{"a"}, {}]>]
//            out_shardings=[<@mesh, [{"a"}, {}]>] manual_axes={"a"}
//            (%arg1: tensor<4x8xf32>) { ... sdy.return %x : tensor<4x8xf32> }
//            : (tensor<8x8xf32>) -> tensor<8x8xf32>
//   %3 = sdy.all_gather [{"a"}, {}] %2 out_sharding=<@mesh, [{}, {}]> : tensor<8x8xf32>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "xlite/stablehlo/mlir_parser_impl.h"
#include "xlite/text/sdy_attributes.h"

namespace xlite::mlir::parser_internal {
namespace {

Attribute SdyAttribute(const sdy::Attr& a) {
  Attribute out;
  out.kind = Kind::kOpaque;
  out.name = absl::StrCat("sdy.", sdy::Mnemonic(a));
  out.text = sdy::Print(a);
  return out;
}

}  // namespace

absl::Status Parser::ParseSingleBlockRegionNoBlockId(Operation& op) {
  RETURN_IF_ERROR(c_.Expect("("));
  std::vector<std::unique_ptr<Value>> args;
  if (!c_.TryConsume(")")) {
    do {
      c_.SkipSpace();
      auto v = std::make_unique<Value>();
      ASSIGN_OR_RETURN(v->name, SuffixName('%'));
      RETURN_IF_ERROR(c_.Expect(":"));
      ASSIGN_OR_RETURN(v->type, ParseType());
      RETURN_IF_ERROR(SkipLocation());
      v->arg_index = static_cast<int>(args.size());
      for (const auto& other : args) {
        if (other->name == v->name) return Error(absl::StrCat("redefinition of %", v->name));
      }
      args.push_back(std::move(v));
    } while (c_.TryConsume(","));
    RETURN_IF_ERROR(c_.Expect(")"));
  }
  // The body cannot see enclosing values.
  auto saved = std::move(scopes_);
  scopes_.clear();
  PushScope();
  absl::Status s = ParseRegion(op, &args);
  scopes_ = std::move(saved);
  return s;
}

absl::Status Parser::ParseSdyOp(Operation& op, int declared_results) {
  const std::string kind = op.name.substr(4);
  auto set = [&](const std::string& key, const sdy::Attr& a) { op.SetAttr(key, SdyAttribute(a)); };
  auto attr_dict = [&]() -> absl::Status {
    if (c_.Peek() != '{') return absl::OkStatus();
    ASSIGN_OR_RETURN(std::vector<NamedAttribute> attrs, ParseAttrDict());
    for (auto& a : attrs) op.SetAttr(a.first, std::move(a.second));
    return absl::OkStatus();
  };
  auto operand = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(Value * v, ParseValueRef());
    op.operands.push_back(v);
    return absl::OkStatus();
  };
  auto keyword = [&](absl::string_view word) -> absl::Status {
    if (!TryWord(word)) return Error(absl::StrCat("expected '", word, "'"));
    return c_.Expect("=");
  };
  // `: T`, the type of the one result (and of the operand where there is one).
  auto result_of_type = [&]() -> absl::Status {
    RETURN_IF_ERROR(c_.Expect(":"));
    const size_t pos = c_.pos();
    ASSIGN_OR_RETURN(Type t, ParseType());
    absl::Status s = SetResults(op, {t}, declared_results);
    if (!s.ok()) return ErrorAt(pos, s.message());
    return absl::OkStatus();
  };
  auto sharding = [&](const std::string& key) -> absl::Status {
    ASSIGN_OR_RETURN(sdy::TensorSharding s, sdy::ParseStrippedSharding(c_));
    set(key, s);
    return absl::OkStatus();
  };
  auto sharding_list = [&](const std::string& key) -> absl::Status {
    ASSIGN_OR_RETURN(sdy::ShardingPerValue v, sdy::ParseStrippedShardingList(c_));
    set(key, v);
    return absl::OkStatus();
  };

  if (kind == "mesh") {
    if (declared_results != 0) return Error("sdy.mesh has no results");
    ASSIGN_OR_RETURN(std::string name, SuffixName('@'));
    op.SetAttr("sym_name", Attribute::String(name));
    RETURN_IF_ERROR(c_.Expect("="));
    ASSIGN_OR_RETURN(sdy::Mesh mesh, sdy::ParseStrippedMesh(c_));
    set("mesh", mesh);
    return attr_dict();
  }
  if (kind == "sharding_constraint" || kind == "reshard") {
    RETURN_IF_ERROR(operand());
    RETURN_IF_ERROR(sharding("sharding"));
    RETURN_IF_ERROR(attr_dict());
    return result_of_type();
  }
  if (kind == "return") {
    if (declared_results != 0) return Error("sdy.return has no results");
    RETURN_IF_ERROR(attr_dict());
    if (c_.Peek() == '%') {
      ASSIGN_OR_RETURN(op.operands, ParseValueList());
      RETURN_IF_ERROR(c_.Expect(":"));
      for (size_t i = 0; i < op.operands.size(); ++i) {
        if (i > 0) RETURN_IF_ERROR(c_.Expect(","));
        RETURN_IF_ERROR(ParseType().status());
      }
    }
    return absl::OkStatus();
  }
  if (kind == "manual_computation" || kind == "named_computation") {
    if (kind == "named_computation") {
      RETURN_IF_ERROR(c_.Expect("<"));
      ASSIGN_OR_RETURN(std::string name, ParseString());
      op.SetAttr("name", Attribute::String(name));
      RETURN_IF_ERROR(c_.Expect(">"));
    }
    RETURN_IF_ERROR(c_.Expect("("));
    ASSIGN_OR_RETURN(op.operands, ParseValueList());
    RETURN_IF_ERROR(c_.Expect(")"));
    if (kind == "manual_computation") {
      RETURN_IF_ERROR(keyword("in_shardings"));
      RETURN_IF_ERROR(sharding_list("in_shardings"));
      RETURN_IF_ERROR(keyword("out_shardings"));
      RETURN_IF_ERROR(sharding_list("out_shardings"));
      RETURN_IF_ERROR(keyword("manual_axes"));
      ASSIGN_OR_RETURN(sdy::ManualAxes axes, sdy::ParseManualAxes(c_));
      set("manual_axes", axes);
    } else {
      for (const char* key : {"in_shardings", "out_shardings"}) {
        if (PeekIdent(key)) {
          RETURN_IF_ERROR(keyword(key));
          RETURN_IF_ERROR(sharding_list(key));
        }
      }
    }
    RETURN_IF_ERROR(ParseSingleBlockRegionNoBlockId(op));
    RETURN_IF_ERROR(attr_dict());
    return ParseTrailingTypes(op, declared_results);
  }
  if (kind == "sharding_group") {
    if (declared_results != 0) return Error("sdy.sharding_group has no results");
    RETURN_IF_ERROR(operand());
    RETURN_IF_ERROR(keyword("group_id"));
    ASSIGN_OR_RETURN(int64_t id, c_.ParseInt64());
    op.SetAttr("group_id", Attribute::Int(id));
    RETURN_IF_ERROR(attr_dict());
    RETURN_IF_ERROR(c_.Expect(":"));
    return ParseType().status();
  }
  if (kind == "constant") {
    RETURN_IF_ERROR(attr_dict());
    const size_t pos = c_.pos();
    ASSIGN_OR_RETURN(Attribute value, ParseAttribute());
    if (value.kind != Kind::kDense) return ErrorAt(pos, "sdy.constant takes a dense<...> value");
    const Type type = value.type;
    op.SetAttr("value", std::move(value));
    absl::Status s = SetResults(op, {type}, declared_results);
    if (!s.ok()) return ErrorAt(pos, s.message());
    return absl::OkStatus();
  }
  if (kind == "propagation_barrier") {
    RETURN_IF_ERROR(operand());
    RETURN_IF_ERROR(keyword("allowed_direction"));
    const std::string direction = Ident();
    if (direction != "NONE" && direction != "FORWARD" && direction != "BACKWARD" &&
        direction != "BOTH") {
      return Error(absl::StrCat("bad propagation direction '", direction, "'"));
    }
    op.SetAttr("allowed_direction", Attribute::Enum("sdy.propagation_direction", direction));
    RETURN_IF_ERROR(attr_dict());
    return result_of_type();
  }
  if (kind == "all_gather" || kind == "all_slice" || kind == "reduce_scatter" ||
      kind == "all_to_all" || kind == "all_reduce" || kind == "collective_permute") {
    // The collective's axes (collective_permute has none), then the operand.
    if (kind == "all_to_all") {
      ASSIGN_OR_RETURN(sdy::AllToAllParamList params, sdy::ParseAllToAllParamList(c_));
      set("params", params);
    } else if (kind == "all_reduce") {
      ASSIGN_OR_RETURN(sdy::AxisRefList axes, sdy::ParseAxisRefList(c_));
      set("reduction_axes", axes);
    } else if (kind != "collective_permute") {
      ASSIGN_OR_RETURN(sdy::ListOfAxisRefLists axes, sdy::ParseListOfAxisRefLists(c_));
      set(kind == "all_gather"  ? "gathering_axes"
          : kind == "all_slice" ? "slicing_axes"
                                : "reduce_scatter_axes",
          axes);
    }
    RETURN_IF_ERROR(operand());
    RETURN_IF_ERROR(keyword("out_sharding"));
    RETURN_IF_ERROR(sharding("out_sharding"));
    RETURN_IF_ERROR(attr_dict());
    return result_of_type();
  }
  if (kind == "data_flow_edge") {
    RETURN_IF_ERROR(operand());
    if (PeekIdent("sharding")) {
      RETURN_IF_ERROR(keyword("sharding"));
      RETURN_IF_ERROR(sharding("sharding"));
    }
    RETURN_IF_ERROR(attr_dict());
    return result_of_type();
  }
  return Error(absl::StrCat("unknown operation '", op.name, "'; write it in generic form"));
}

}  // namespace xlite::mlir::parser_internal
