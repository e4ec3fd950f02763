// The attribute/type table of an MLIR bytecode file (internal to the VHLO
// reader): decodes builtin and VHLO attributes and types into mlir.h's
// Attribute and Type, lazily and once each. See bytecode_reader.h for the
// representation mapping.
#ifndef XLITE_VHLO_BYTECODE_ATTRIBUTES_H_
#define XLITE_VHLO_BYTECODE_ATTRIBUTES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "xlite/stablehlo/mlir.h"
#include "xlite/vhlo/bytecode_encoding.h"

namespace xlite::vhlo::bytecode {

// Nesting deeper than this (attributes, types, regions) is refused.
inline constexpr int kMaxNestingDepth = 200;

// Limits on what one file may make the reader materialize: attribute/type
// nodes (a DAG of shared entries can describe exponentially many) and dense
// literal bytes (a splat of 4 bytes can describe a huge tensor).
struct ReadBudget {
  int64_t nodes_left = 0;
  int64_t literal_bytes_left = 0;
};

struct StringTable {
  std::vector<absl::string_view> strings;
  absl::Status Read(EncodingReader reader);
  absl::Status Get(EncodingReader& reader, absl::string_view& out) const;
  absl::Status At(const EncodingReader& reader, uint64_t index, absl::string_view& out) const;
};

class AttrTypeTable {
 public:
  AttrTypeTable(const StringTable& strings, const std::vector<std::string>& dialects,
                const std::vector<std::string>& resource_keys, ReadBudget& budget)
      : strings_(strings), dialects_(dialects), resource_keys_(resource_keys), budget_(budget) {}

  // Splits the attribute/type section into entries using the offset section.
  absl::Status Initialize(const EncodingReader& data, EncodingReader offsets);

  size_t num_attributes() const { return attr_entries_.size(); }
  size_t num_types() const { return type_entries_.size(); }

  // The decoded entry; errors name the entry and the byte that is wrong.
  // `reader` (the reader the index came from) locates index errors.
  absl::StatusOr<const mlir::Attribute*> Attribute(const EncodingReader& reader, uint64_t index,
                                                   int depth = 0);
  absl::StatusOr<const mlir::Type*> Type(const EncodingReader& reader, uint64_t index,
                                         int depth = 0);
  // Reads an attribute index from `reader` and decodes it.
  absl::StatusOr<const mlir::Attribute*> ReadAttribute(EncodingReader& reader, int depth = 0);
  absl::StatusOr<const mlir::Type*> ReadType(EncodingReader& reader, int depth = 0);

  // Nodes in a decoded entry: charged to the budget each time it is copied.
  int64_t AttributeCost(uint64_t index) const { return attr_entries_[index].cost; }
  int64_t TypeCost(uint64_t index) const { return type_entries_[index].cost; }
  absl::Status Charge(const EncodingReader& reader, int64_t nodes);

  // Best effort: file:line:col of a builtin location attribute; never fails.
  mlir::Location DecodeLocation(uint64_t index, const std::string& filename, int depth = 0);

 private:
  struct Entry {
    uint32_t dialect = 0;
    bool custom = false;
    size_t begin = 0;  // position in the attribute/type section
    size_t size = 0;
    enum class State : uint8_t { kNew, kBusy, kDone } state = State::kNew;
    int64_t cost = 1;
  };

  EncodingReader EntryReader(const Entry& entry, bool is_type, uint64_t index) const;
  // The cycle, depth, trailing-byte and cost checks attributes and types
  // share around `decode`, which reads one entry's own encoding.
  template <typename T, typename Decode>
  absl::Status DecodeEntry(std::vector<Entry>& entries, std::vector<T>& values, uint64_t index,
                           int depth, bool is_type, const Decode& decode);
  absl::Status DecodeAttribute(uint64_t index, int depth);
  absl::Status DecodeType(uint64_t index, int depth);

  absl::StatusOr<mlir::Attribute> BuiltinAttribute(EncodingReader& r, int depth, int64_t& cost,
                                                   bool& skip_rest);
  absl::StatusOr<mlir::Type> BuiltinType(EncodingReader& r, int depth, int64_t& cost);
  absl::StatusOr<mlir::Attribute> VhloAttribute(EncodingReader& r, int depth, int64_t& cost);
  absl::StatusOr<mlir::Type> VhloType(EncodingReader& r, int depth, int64_t& cost);
  // Shardy's attributes (bytecode_sdy.cc).
  absl::StatusOr<mlir::Attribute> SdyAttribute(EncodingReader& r, int depth, int64_t& cost);

  // Shared field readers.
  absl::Status ReadAttributeList(EncodingReader& r, int depth, int64_t& cost,
                                 std::vector<mlir::Attribute>& out);
  absl::Status ReadTypeList(EncodingReader& r, int depth, int64_t& cost,
                            std::vector<mlir::Type>& out);
  absl::StatusOr<std::string> ReadStringAttribute(EncodingReader& r, int depth, int64_t& cost);
  absl::Status ReadShape(EncodingReader& r, std::vector<int64_t>& dims);
  absl::StatusOr<mlir::Attribute> IntegerAttribute(EncodingReader& r, const mlir::Type& type);
  absl::StatusOr<mlir::Attribute> FloatAttribute(EncodingReader& r, const mlir::Type& type);
  absl::StatusOr<mlir::Attribute> DenseAttribute(EncodingReader& r, const mlir::Type& type,
                                                 bool packed_bools);
  absl::StatusOr<mlir::Attribute> DenseArrayAttribute(EncodingReader& r, const mlir::Type& type);

  const StringTable& strings_;
  const std::vector<std::string>& dialects_;
  const std::vector<std::string>& resource_keys_;
  ReadBudget& budget_;
  const uint8_t* section_data_ = nullptr;
  size_t section_base_ = 0;
  const std::string* filename_ = nullptr;
  std::vector<Entry> attr_entries_, type_entries_;
  std::vector<mlir::Attribute> attributes_;
  std::vector<mlir::Type> types_;
};

// Builtin spelling of an element type -> (bit width, unsigned?); nullopt for
// non-integers. "i1" -> (1, false), "ui8" -> (8, true), "index" -> (64, false).
bool IntegerWidthOf(absl::string_view element, int& width, bool& is_unsigned);

}  // namespace xlite::vhlo::bytecode

#endif  // XLITE_VHLO_BYTECODE_ATTRIBUTES_H_
