// The MLIR text reader's parser class (internal to mlir_parser.cc and the
// files that read other dialects' custom syntax, e.g. mlir_parser_sdy.cc).
// Not an API: include mlir_parser.h instead.
#ifndef XLITE_STABLEHLO_MLIR_PARSER_IMPL_H_
#define XLITE_STABLEHLO_MLIR_PARSER_IMPL_H_

#include <cctype>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "xlite/ir/literal.h"
#include "xlite/stablehlo/mlir.h"
#include "xlite/support/status.h"
#include "xlite/text/cursor.h"
#include "xlite/text/mlir_strings.h"

namespace xlite::mlir::parser_internal {

using Kind = Attribute::Kind;

// Deeper nesting than this is refused rather than risking the stack.
constexpr int kMaxDepth = 200;
// Dense attributes larger than this are refused (a typo'd shape must not
// allocate terabytes).
constexpr int64_t kMaxDenseElements = int64_t{1} << 28;

// One scalar of a dense<...> literal before its type is known.
struct DenseItem {
  enum { kNumber, kBool, kComplex } kind = kNumber;
  std::string text;  // number as written (decimal or 0x hex)
  std::string imag;  // kComplex
  bool bool_value = false;
};

// Counts recursion depth for as long as it lives.
class Nesting {
 public:
  explicit Nesting(int* depth) : depth_(depth) { ++*depth_; }
  ~Nesting() { --*depth_; }
  bool too_deep() const { return *depth_ > kMaxDepth; }

 private:
  int* depth_;
};

class Parser {
 public:
  Parser(absl::string_view text, std::string filename) : c_(text, std::move(filename)) {}

  absl::StatusOr<OwningOp> ParseFile();
  absl::StatusOr<Attribute> ParseAttributeOnly();
  absl::StatusOr<Type> ParseTypeOnly();

 private:
  // ---- Lexical helpers.
  absl::Status Error(absl::string_view m) const { return c_.Error(m); }
  absl::Status ErrorAt(size_t pos, absl::string_view m) const { return c_.ErrorAt(pos, m); }
  std::string Ident() {
    c_.SkipSpace();
    size_t b = c_.pos();
    absl::string_view t = c_.text();
    if (b >= t.size() || !IsMlirIdentifierStart(t[b])) return "";
    size_t e = b;
    while (e < t.size() && IsMlirIdentifierChar(t[e])) ++e;
    c_.set_pos(e);
    return std::string(t.substr(b, e - b));
  }
  bool PeekIdent(absl::string_view word) {
    size_t save = c_.pos();
    bool ok = Ident() == word;
    c_.set_pos(save);
    return ok;
  }
  bool TryWord(absl::string_view word) {
    size_t save = c_.pos();
    if (Ident() == word) return true;
    c_.set_pos(save);
    return false;
  }
  absl::StatusOr<std::string> ParseString() { return ParseMlirString(c_); }

  // A name after a sigil (%, ^, #, !): [A-Za-z0-9_$.-]+ or a quoted string.
  absl::StatusOr<std::string> SuffixName(char sigil) {
    c_.SkipSpace();
    if (c_.PeekRaw() != sigil) return Error(absl::StrCat("expected '", std::string(1, sigil), "'"));
    c_.set_pos(c_.pos() + 1);
    if (c_.PeekRaw() == '"') return ParseString();
    size_t b = c_.pos();
    absl::string_view t = c_.text();
    size_t e = b;
    while (e < t.size() && (IsMlirIdentifierChar(t[e]) || t[e] == '-')) ++e;
    if (e == b) return Error("expected a name");
    c_.set_pos(e);
    return std::string(t.substr(b, e - b));
  }
  // Skips a balanced (...) / <...> / [...] / {...} group starting at the cursor.
  absl::Status SkipBalanced();
  absl::Status SkipLocation() {
    if (!PeekIdent("loc")) return absl::OkStatus();
    Ident();
    if (c_.Peek() != '(') return Error("expected '(' after loc");
    return SkipBalanced();
  }

  // ---- Types.
  absl::StatusOr<Type> ParseType();
  absl::StatusOr<std::vector<Type>> ParseTypeListParens();  // (a, b) or ()
  absl::StatusOr<std::string> ParseElementTypeText();
  absl::StatusOr<Type> ParseTensorBody();
  absl::StatusOr<std::vector<Type>> ParseResultTypes();  // T | (T, ...) after '->'

  // ---- Attributes.
  // `typed_numbers`: a number may carry ": type" (false in keyword forms,
  // where ':' starts the op's types).
  absl::StatusOr<Attribute> ParseAttribute(bool typed_numbers = true);
  absl::StatusOr<Attribute> ParseHashAttribute();
  absl::StatusOr<Attribute> ParseDense();
  absl::StatusOr<std::vector<NamedAttribute>> ParseAttrDict();  // {...}
  // Values of keyword forms (`dims = [0, 1]`, `type = FFT`, `L x L`, `{...}`).
  absl::StatusOr<Attribute> ParseKeywordValue();
  absl::StatusOr<std::vector<NamedAttribute>> ParseKeywordList(char close);
  absl::Status ParseDenseItems(std::vector<DenseItem>& items, std::vector<int64_t>& shape,
                               int depth, int& leaf_depth);
  absl::StatusOr<Literal> BuildDenseLiteral(size_t pos, const std::vector<DenseItem>& items,
                                            const std::vector<int64_t>& shape, bool splat,
                                            const std::string& hex, const Type& type);

  // ---- Operations.
  absl::Status ParseOperation(Block* block);
  absl::Status ParseGenericOp(Operation& op);
  absl::Status ParseCustomOp(Operation& op, int declared_results);
  absl::Status ParseRegion(Operation& op, std::vector<std::unique_ptr<Value>>* entry_args);
  absl::Status ParseBlockBody(Block* block);
  absl::Status ParseFunc(Operation& op);
  absl::StatusOr<Value*> ParseValueRef();
  absl::StatusOr<std::vector<Value*>> ParseValueList();  // %a, %b (maybe empty)
  absl::Status ParseTrailingTypes(Operation& op, int declared_results);
  absl::Status SetResults(Operation& op, const std::vector<Type>& types, int declared_results);
  absl::Status NormalizeKeywords(Operation& op, std::vector<NamedAttribute> keywords, size_t pos);
  absl::Status ParseReduce(Operation& op, int declared_results);
  absl::Status ParseWhile(Operation& op, int declared_results);
  // `%name = %value, ... )` after the '(' of while's or scf.for's carried
  // values: the names go to `names`, the values become operands.
  absl::Status ParseInitList(Operation& op, std::vector<std::string>& names);
  absl::Status ParseConvolution(Operation& op, int declared_results);
  absl::Status ParseCompare(Operation& op, int declared_results);
  absl::Status ParseSlice(Operation& op, int declared_results);
  absl::Status ParseDefault(Operation& op, int declared_results);
  absl::Status ParseScan(Operation& op, int declared_results);
  absl::Status ParseScfFor(Operation& op, int declared_results);
  absl::Status ParseTensorElementOp(Operation& op, int declared_results);
  // Shardy's ops (mlir_parser_sdy.cc).
  absl::Status ParseSdyOp(Operation& op, int declared_results);
  // `(%a: T, ...) { body }`: an isolated single-block region whose block
  // arguments are written before it.
  absl::Status ParseSingleBlockRegionNoBlockId(Operation& op);
  std::unique_ptr<Block> NewBlockWithArgs(const std::vector<Type>& types,
                                          const std::vector<std::string>& names);

  void DefineValue(const std::string& name, Value* v) { scopes_.back()[name].push_back(v); }
  void PushScope() { scopes_.emplace_back(); }
  void PopScope() { scopes_.pop_back(); }

  Cursor c_;
  int depth_ = 0;
  // Visible value names, innermost scope last. A name maps to its results
  // (%0:2 defines %0#0 and %0#1).
  std::vector<absl::flat_hash_map<std::string, std::vector<Value*>>> scopes_;
  std::map<std::string, Attribute> attribute_aliases_;
  std::map<std::string, Type> type_aliases_;
};

}  // namespace xlite::mlir::parser_internal

#endif  // XLITE_STABLEHLO_MLIR_PARSER_IMPL_H_
