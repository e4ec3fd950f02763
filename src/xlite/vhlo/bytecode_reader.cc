#include "xlite/vhlo/bytecode_reader.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "xlite/support/status.h"
#include "xlite/vhlo/bytecode_attributes.h"
#include "xlite/vhlo/bytecode_encoding.h"
#include "xlite/vhlo/vhlo_op_properties.h"

namespace xlite::vhlo {
namespace {

using bytecode::AttrTypeTable;
using bytecode::EncodingReader;
using bytecode::kMaxNestingDepth;

using bytecode::kMagic;
// Node budget: generous for real programs, bounded for hostile ones.
constexpr int64_t kMinNodeBudget = int64_t{1} << 20;
constexpr int64_t kNodesPerFileByte = 64;
constexpr int64_t kLiteralByteBudget = int64_t{1} << 28;

struct OpName {
  std::string name;                // "vhlo.add_v1"
  std::optional<bool> registered;  // known to the producer (bytecode >= 5)
};

// One run of values numbered together: an isolated-from-above region and the
// regions nested in it that are not isolated.
struct ValueScope {
  std::vector<mlir::Value*> values;
  // Operands that name values defined later (graph regions, later blocks).
  std::map<size_t, std::vector<std::pair<mlir::Operation*, size_t>>> forward_refs;
};

// The values a region defines occupy [first, end) of its scope.
struct RegionState {
  size_t first = 0;
  size_t end = 0;
  size_t next = 0;
  std::vector<mlir::Block*> blocks;
};

class Reader {
 public:
  Reader(absl::string_view bytes, const std::string& filename)
      : data_(reinterpret_cast<const uint8_t*>(bytes.data())),
        size_(bytes.size()),
        filename_(filename) {
    budget_.nodes_left = std::max(kMinNodeBudget, static_cast<int64_t>(size_) * kNodesPerFileByte);
    budget_.literal_bytes_left = kLiteralByteBudget;
  }

  absl::StatusOr<mlir::OwningOp> Read(BytecodeInfo& info);

 private:
  absl::Status ReadDialects(EncodingReader r, BytecodeInfo& info);
  absl::Status ReadResourceKeys(std::optional<EncodingReader> resources,
                                std::optional<EncodingReader> offsets);
  absl::Status ReadPropertiesTable(EncodingReader r);

  absl::Status ReadRegion(EncodingReader& r, mlir::Region& region, mlir::Operation* parent,
                          int depth);
  absl::Status ReadBlockHeader(EncodingReader& r, mlir::Block& block, RegionState& state,
                               uint64_t& num_ops);
  absl::Status ReadOperation(EncodingReader& r, mlir::Block& block, RegionState& state, int depth);
  absl::Status ReadProperties(EncodingReader& r, const std::string& op_name, mlir::Operation& op);
  absl::Status AppendDictionary(EncodingReader& r, uint64_t index, mlir::Operation& op,
                                absl::string_view what);
  absl::Status SkipUseListOrders(EncodingReader& r, uint64_t range_size);
  absl::Status DefineValues(EncodingReader& r, RegionState& state,
                            const std::vector<mlir::Value*>& values);
  absl::Status ReadOperand(EncodingReader& r, mlir::Operation& op);
  absl::Status EndRegionValues(EncodingReader& r, const RegionState& state);

  const uint8_t* data_;
  size_t size_;
  const std::string& filename_;
  uint64_t version_ = 0;
  bytecode::ReadBudget budget_;
  bytecode::StringTable strings_;
  std::vector<std::string> dialects_;
  std::vector<OpName> op_names_;
  std::vector<std::string> resource_keys_;
  std::unique_ptr<AttrTypeTable> table_;
  const uint8_t* properties_data_ = nullptr;  // the entries of the properties section
  size_t properties_base_ = 0;
  std::vector<std::pair<size_t, size_t>> property_blobs_;  // (position, size) in properties_
  std::vector<ValueScope> scopes_;
  int64_t num_operations_ = 0;
};

absl::StatusOr<mlir::OwningOp> Reader::Read(BytecodeInfo& info) {
  EncodingReader r(data_, size_, 0, "header", &filename_);
  const uint8_t* magic;
  if (size_ < kMagic.size() ||
      absl::string_view(reinterpret_cast<const char*>(data_), kMagic.size()) != kMagic) {
    return r.Error("not MLIR bytecode (the file does not start with \"ML\\xEFR\")");
  }
  RETURN_IF_ERROR(r.ReadBytes(kMagic.size(), magic));
  RETURN_IF_ERROR(r.ReadVarInt(version_));
  if (version_ > bytecode::kMaxSupportedVersion) {
    return r.Error(absl::StrCat("bytecode version ", version_, " is newer than the supported ",
                                bytecode::kMaxSupportedVersion));
  }
  absl::string_view producer;
  RETURN_IF_ERROR(r.ReadNulTerminated(producer));
  info.version = version_;
  info.producer = std::string(producer);

  // Sections may come in any order; each at most once.
  std::optional<EncodingReader> sections[bytecode::kNumSections];
  while (!r.empty()) {
    const size_t at = r.offset();
    uint8_t id;
    EncodingReader section = r;
    RETURN_IF_ERROR(r.ReadSection(id, section));
    if (sections[id]) {
      return r.ErrorAt(at, absl::StrCat("second ", bytecode::SectionName(id), " section"));
    }
    sections[id] = section;
  }
  for (uint8_t id :
       {bytecode::kStringSection, bytecode::kDialectSection, bytecode::kAttrTypeSection,
        bytecode::kAttrTypeOffsetSection, bytecode::kIrSection}) {
    if (!sections[id]) {
      return r.Error(absl::StrCat("missing the ", bytecode::SectionName(id), " section"));
    }
  }
  RETURN_IF_ERROR(strings_.Read(*sections[bytecode::kStringSection]));
  RETURN_IF_ERROR(ReadDialects(*sections[bytecode::kDialectSection], info));
  RETURN_IF_ERROR(ReadResourceKeys(sections[bytecode::kResourceSection],
                                   sections[bytecode::kResourceOffsetSection]));
  if (sections[bytecode::kPropertiesSection]) {
    RETURN_IF_ERROR(ReadPropertiesTable(*sections[bytecode::kPropertiesSection]));
  }
  table_ = std::make_unique<AttrTypeTable>(strings_, dialects_, resource_keys_, budget_);
  RETURN_IF_ERROR(table_->Initialize(*sections[bytecode::kAttrTypeSection],
                                     *sections[bytecode::kAttrTypeOffsetSection]));

  // The IR section is one block without arguments holding the top-level ops.
  EncodingReader ir = *sections[bytecode::kIrSection];
  mlir::Block top;
  RegionState top_state;  // no values: top-level results are not numbered
  scopes_.emplace_back();
  uint64_t num_ops;
  RETURN_IF_ERROR(ReadBlockHeader(ir, top, top_state, num_ops));
  for (uint64_t i = 0; i < num_ops; ++i) RETURN_IF_ERROR(ReadOperation(ir, top, top_state, 0));
  if (!ir.empty()) return ir.Error("trailing bytes after the top-level operations");
  RETURN_IF_ERROR(EndRegionValues(ir, top_state));
  scopes_.pop_back();
  info.num_operations = num_operations_;

  if (top.operations.size() == 1 && top.operations[0]->name == "builtin.module") {
    mlir::OwningOp module = std::move(top.operations[0]);
    module->loc.file = filename_;
    return module;
  }
  // Top-level ops without a module are wrapped in one, as MLIR tools do.
  auto module = std::make_unique<mlir::Operation>();
  module->name = "builtin.module";
  module->loc.file = filename_;
  auto region = std::make_unique<mlir::Region>();
  auto block = std::make_unique<mlir::Block>();
  block->label = "bb0";
  block->parent = module.get();
  block->operations = std::move(top.operations);
  region->blocks.push_back(std::move(block));
  module->regions.push_back(std::move(region));
  return module;
}

absl::Status Reader::ReadDialects(EncodingReader r, BytecodeInfo& info) {
  uint64_t num_dialects;
  RETURN_IF_ERROR(r.ReadCount(num_dialects, "dialect"));
  for (uint64_t i = 0; i < num_dialects; ++i) {
    absl::string_view name;
    BytecodeInfo::Dialect dialect;
    if (version_ < bytecode::kVersionDialectVersioning) {
      RETURN_IF_ERROR(strings_.Get(r, name));
    } else {
      // (nameIndex << 1 | hasVersion), then the version as a nested section.
      uint64_t name_index;
      bool has_version;
      RETURN_IF_ERROR(r.ReadVarIntWithFlag(name_index, has_version));
      RETURN_IF_ERROR(strings_.At(r, name_index, name));
      if (has_version) {
        uint8_t id;
        EncodingReader version = r;
        const size_t at = r.offset();
        RETURN_IF_ERROR(r.ReadSection(id, version));
        if (id != bytecode::kDialectVersionsSection) {
          return r.ErrorAt(at, absl::StrCat("dialect version of '", name, "' is a ",
                                            bytecode::SectionName(id), " section"));
        }
        // VHLO writes major, minor, patch varints; others are kept as hex.
        EncodingReader copy = version;
        uint64_t parts[3];
        bool three_varints = true;
        for (uint64_t& p : parts) three_varints = three_varints && copy.ReadVarInt(p).ok();
        if (three_varints && copy.empty()) {
          dialect.version = absl::StrCat(parts[0], ".", parts[1], ".", parts[2]);
        } else {
          dialect.version = absl::BytesToHexString(absl::string_view(
              reinterpret_cast<const char*>(version.current()), version.remaining()));
        }
      }
    }
    dialect.name = std::string(name);
    dialects_.push_back(dialect.name);
    info.dialects.push_back(std::move(dialect));
  }
  if (version_ >= bytecode::kVersionElideBlockArgLoc) {
    uint64_t num_op_names;  // a reservation hint only
    RETURN_IF_ERROR(r.ReadVarInt(num_op_names));
  }
  // Op names, grouped by dialect: { dialect, count, name[count] }.
  while (!r.empty()) {
    uint64_t dialect, count;
    RETURN_IF_ERROR(r.ReadVarInt(dialect));
    if (dialect >= dialects_.size()) {
      return r.Error(absl::StrCat("dialect index ", dialect, " out of range (", dialects_.size(),
                                  " dialects)"));
    }
    RETURN_IF_ERROR(r.ReadCount(count, "operation name"));
    for (uint64_t i = 0; i < count; ++i) {
      OpName op;
      uint64_t index;
      if (version_ >= bytecode::kVersionNativeProperties) {
        bool registered;
        RETURN_IF_ERROR(r.ReadVarIntWithFlag(index, registered));
        op.registered = registered;
      } else {
        RETURN_IF_ERROR(r.ReadVarInt(index));
      }
      absl::string_view name;
      RETURN_IF_ERROR(strings_.At(r, index, name));
      op.name = name.empty() ? dialects_[dialect] : absl::StrCat(dialects_[dialect], ".", name);
      info.op_names.push_back(op.name);
      op_names_.push_back(std::move(op));
    }
  }
  return absl::OkStatus();
}

absl::Status Reader::ReadResourceKeys(std::optional<EncodingReader> resources,
                                      std::optional<EncodingReader> offsets) {
  if (resources.has_value() != offsets.has_value()) {
    EncodingReader& present = resources ? *resources : *offsets;
    return present.Error("the resource and resource offset sections come in pairs");
  }
  if (!resources) return absl::OkStatus();
  EncodingReader& r = *offsets;
  uint64_t data_used = 0;
  // Each group lists { key, size, kind }; the data lies in the resource section.
  auto read_group = [&](bool keep_keys) -> absl::Status {
    uint64_t count;
    RETURN_IF_ERROR(r.ReadCount(count, "resource", 3));
    for (uint64_t i = 0; i < count; ++i) {
      absl::string_view key;
      uint64_t size = 0;
      uint8_t kind = 0;
      RETURN_IF_ERROR(strings_.Get(r, key));
      RETURN_IF_ERROR(r.ReadVarInt(size));
      RETURN_IF_ERROR(r.ReadByte(kind));
      if (size > resources->remaining() - data_used) {
        return r.Error(absl::StrCat("resource '", key, "' runs past the resource section"));
      }
      data_used += size;
      if (keep_keys) resource_keys_.emplace_back(key);
    }
    return absl::OkStatus();
  };
  uint64_t num_external;
  RETURN_IF_ERROR(r.ReadCount(num_external, "external resource group"));
  for (uint64_t i = 0; i < num_external; ++i) {
    absl::string_view owner;
    RETURN_IF_ERROR(strings_.Get(r, owner));
    RETURN_IF_ERROR(read_group(/*keep_keys=*/false));
  }
  while (!r.empty()) {
    uint64_t dialect;
    RETURN_IF_ERROR(r.ReadVarInt(dialect));
    if (dialect >= dialects_.size()) {
      return r.Error(absl::StrCat("dialect index ", dialect, " out of range (", dialects_.size(),
                                  " dialects)"));
    }
    RETURN_IF_ERROR(read_group(/*keep_keys=*/true));  // dense_resource handles index these
  }
  return absl::OkStatus();
}

absl::Status Reader::ReadPropertiesTable(EncodingReader r) {
  if (r.empty()) return absl::OkStatus();
  uint64_t count;
  RETURN_IF_ERROR(r.ReadCount(count, "property entry"));
  EncodingReader p = r.Sub(r.remaining(), "properties section");
  properties_data_ = p.current();
  properties_base_ = p.offset();
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t size = 0;
    RETURN_IF_ERROR(p.ReadVarInt(size));
    const size_t position = p.pos();
    RETURN_IF_ERROR(p.Skip(size));
    property_blobs_.emplace_back(position, size);
  }
  if (!p.empty()) return p.Error("trailing bytes after the property entries");
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// IR
// ---------------------------------------------------------------------------

absl::Status Reader::DefineValues(EncodingReader& r, RegionState& state,
                                  const std::vector<mlir::Value*>& values) {
  if (values.size() > state.end - state.next) {
    return r.Error(absl::StrCat("defines ", values.size(), " values but the region declared ",
                                state.end - state.first, " (", state.next - state.first,
                                " already defined)"));
  }
  ValueScope& scope = scopes_.back();
  for (mlir::Value* v : values) {
    const size_t id = state.next++;
    v->name = absl::StrCat(id);
    scope.values[id] = v;
    auto it = scope.forward_refs.find(id);
    if (it != scope.forward_refs.end()) {
      for (auto [op, operand] : it->second) op->operands[operand] = v;
      scope.forward_refs.erase(it);
    }
  }
  return absl::OkStatus();
}

absl::Status Reader::ReadOperand(EncodingReader& r, mlir::Operation& op) {
  uint64_t id;
  RETURN_IF_ERROR(r.ReadVarInt(id));
  ValueScope& scope = scopes_.back();
  if (id >= scope.values.size()) {
    return r.Error(
        absl::StrCat("operand index ", id, " out of range (", scope.values.size(), " values)"));
  }
  op.operands.push_back(scope.values[id]);
  if (scope.values[id] == nullptr) {
    scope.forward_refs[id].emplace_back(&op, op.operands.size() - 1);
  }
  return absl::OkStatus();
}

// The region's values go out of scope: any use still waiting for one of them
// names a value that was never defined.
absl::Status Reader::EndRegionValues(EncodingReader& r, const RegionState& state) {
  ValueScope& scope = scopes_.back();
  auto it = scope.forward_refs.lower_bound(state.first);
  if (it != scope.forward_refs.end()) {
    return r.Error(
        absl::StrCat("an operand refers to value ", it->first, ", which is never defined"));
  }
  scope.values.resize(state.first);
  return absl::OkStatus();
}

absl::Status Reader::SkipUseListOrders(EncodingReader& r, uint64_t range_size) {
  uint64_t num_entries = 1;
  if (range_size > 1) RETURN_IF_ERROR(r.ReadCount(num_entries, "use-list order"));
  for (uint64_t i = 0; i < num_entries; ++i) {
    if (range_size > 1) {
      uint64_t value_index;
      RETURN_IF_ERROR(r.ReadVarInt(value_index));
      if (value_index >= range_size) {
        return r.Error(absl::StrCat("use-list order for value ", value_index, " of ", range_size));
      }
    }
    uint64_t num_indices;
    bool index_pairs;
    RETURN_IF_ERROR(r.ReadVarIntWithFlag(num_indices, index_pairs));
    if (num_indices > r.remaining()) return r.Error("use-list order longer than the data");
    for (uint64_t j = 0; j < num_indices; ++j) {
      uint64_t ignored;
      RETURN_IF_ERROR(r.ReadVarInt(ignored));
    }
  }
  return absl::OkStatus();
}

absl::Status Reader::ReadBlockHeader(EncodingReader& r, mlir::Block& block, RegionState& state,
                                     uint64_t& num_ops) {
  // (numOps << 1 | hasArgs), arguments, then (>= 3) a use-list flag byte.
  bool has_args;
  RETURN_IF_ERROR(r.ReadVarIntWithFlag(num_ops, has_args));
  if (num_ops > r.remaining() / 3) {  // an op takes at least name, mask, location
    return r.Error(absl::StrCat("block of ", num_ops, " operations exceeds the ", r.remaining(),
                                " bytes that remain"));
  }
  if (!has_args) return absl::OkStatus();
  uint64_t num_args;
  RETURN_IF_ERROR(r.ReadCount(num_args, "block argument"));
  std::vector<mlir::Value*> args;
  for (uint64_t i = 0; i < num_args; ++i) {
    uint64_t type_index, location;
    bool has_location = true;
    if (version_ >= bytecode::kVersionElideBlockArgLoc) {
      RETURN_IF_ERROR(r.ReadVarIntWithFlag(type_index, has_location));
    } else {
      RETURN_IF_ERROR(r.ReadVarInt(type_index));
    }
    ASSIGN_OR_RETURN(const mlir::Type* type, table_->Type(r, type_index));
    RETURN_IF_ERROR(table_->Charge(r, table_->TypeCost(type_index)));
    if (has_location) {
      RETURN_IF_ERROR(r.ReadVarInt(location));
      if (location >= table_->num_attributes()) {
        return r.Error(absl::StrCat("location index ", location, " out of range (",
                                    table_->num_attributes(), " attributes)"));
      }
    }
    auto arg = std::make_unique<mlir::Value>();
    arg->type = *type;
    arg->owner = &block;
    arg->arg_index = static_cast<int>(i);
    args.push_back(arg.get());
    block.arguments.push_back(std::move(arg));
  }
  RETURN_IF_ERROR(DefineValues(r, state, args));
  if (version_ >= bytecode::kVersionUseListOrdering) {
    uint8_t has_use_list_orders = 0;
    RETURN_IF_ERROR(r.ReadByte(has_use_list_orders));
    if (has_use_list_orders != 0) RETURN_IF_ERROR(SkipUseListOrders(r, num_args));
  }
  return absl::OkStatus();
}

absl::Status Reader::ReadRegion(EncodingReader& r, mlir::Region& region, mlir::Operation* parent,
                                int depth) {
  // region { numBlocks, numValues (if any blocks), blocks }
  uint64_t num_blocks;
  RETURN_IF_ERROR(r.ReadCount(num_blocks, "block"));
  if (num_blocks == 0) return absl::OkStatus();
  uint64_t num_values;
  RETURN_IF_ERROR(r.ReadCount(num_values, "region value"));
  ValueScope& scope = scopes_.back();
  RegionState state;
  state.first = scope.values.size();
  state.end = state.next = state.first;
  state.end += num_values;
  scope.values.resize(state.end, nullptr);
  for (uint64_t i = 0; i < num_blocks; ++i) {
    auto block = std::make_unique<mlir::Block>();
    block->label = absl::StrCat("bb", i);
    block->parent = parent;
    state.blocks.push_back(block.get());
    region.blocks.push_back(std::move(block));
  }
  for (mlir::Block* block : state.blocks) {
    uint64_t num_ops;
    RETURN_IF_ERROR(ReadBlockHeader(r, *block, state, num_ops));
    for (uint64_t i = 0; i < num_ops; ++i) {
      RETURN_IF_ERROR(ReadOperation(r, *block, state, depth));
    }
  }
  return EndRegionValues(r, state);
}

absl::Status Reader::AppendDictionary(EncodingReader& r, uint64_t index, mlir::Operation& op,
                                      absl::string_view what) {
  const size_t at = r.offset();
  ASSIGN_OR_RETURN(const mlir::Attribute* dict, table_->Attribute(r, index));
  if (dict->kind != mlir::Attribute::Kind::kDict) {
    return r.ErrorAt(at, absl::StrCat(what, " of '", op.name, "' is not a dictionary"));
  }
  RETURN_IF_ERROR(table_->Charge(r, table_->AttributeCost(index)));
  for (const mlir::NamedAttribute& field : dict->fields) op.attributes.push_back(field);
  return absl::OkStatus();
}

absl::Status Reader::ReadProperties(EncodingReader& r, const std::string& op_name,
                                    mlir::Operation& op) {
  uint64_t index;
  RETURN_IF_ERROR(r.ReadVarInt(index));
  if (index >= property_blobs_.size()) {
    return r.Error(absl::StrCat("properties index ", index, " out of range (",
                                property_blobs_.size(), " entries)"));
  }
  const auto [position, size] = property_blobs_[index];
  EncodingReader p(properties_data_ + position, size, properties_base_ + position,
                   absl::StrCat("properties #", index, " of ", op_name), &filename_);
  // The entry is a list of attribute references; the op's definition names them.
  std::vector<uint64_t> values;
  absl::Status status = absl::OkStatus();
  for (EncodingReader scan = p; !scan.empty() && status.ok();) {
    uint64_t v = 0;
    status = scan.ReadVarInt(v);
    values.push_back(v);
  }
  if (!status.ok() && absl::StartsWith(op_name, "vhlo.")) return status;
  const std::vector<PropertyName>* names =
      status.ok() ? FindPropertyNames(op_name, values.size()) : nullptr;
  std::vector<mlir::NamedAttribute> read;
  for (size_t i = 0; i < values.size() && status.ok(); ++i) {
    uint64_t attr_index = values[i];
    std::string name = absl::StrCat("property_", i);
    if (names != nullptr) {
      name = (*names)[i].name;
      if ((*names)[i].optional) {
        if ((attr_index & 1) == 0) continue;  // absent
        attr_index >>= 1;
      }
    }
    absl::StatusOr<const mlir::Attribute*> value = table_->Attribute(p, attr_index);
    status = value.status();
    if (status.ok()) status = table_->Charge(p, table_->AttributeCost(attr_index));
    if (status.ok()) read.emplace_back(std::move(name), **value);
  }
  if (!status.ok()) {
    // Ops outside the table may encode properties natively (enums, segment
    // sizes); their entry is self-delimited, so it is kept opaque instead.
    if (names != nullptr) return status;
    mlir::Attribute opaque;
    opaque.kind = mlir::Attribute::Kind::kOpaque;
    opaque.text = absl::StrCat("<", size, " bytes of properties>");
    read.assign(1, mlir::NamedAttribute("properties", std::move(opaque)));
  }
  for (mlir::NamedAttribute& a : read) op.attributes.push_back(std::move(a));
  return absl::OkStatus();
}

absl::Status Reader::ReadOperation(EncodingReader& r, mlir::Block& block, RegionState& state,
                                   int depth) {
  // op { name, mask, location, attrDict?, properties?, results?, operands?,
  //      successors?, useListOrders?, regions? }
  const size_t op_at = r.offset();
  uint64_t name_index;
  RETURN_IF_ERROR(r.ReadVarInt(name_index));
  if (name_index >= op_names_.size()) {
    return r.ErrorAt(op_at, absl::StrCat("operation name index ", name_index, " out of range (",
                                         op_names_.size(), " names)"));
  }
  const OpName& op_name = op_names_[name_index];
  uint8_t mask = 0;
  RETURN_IF_ERROR(r.ReadByte(mask));
  if (mask & 0x80) return r.ErrorAt(r.offset() - 1, "unknown bit in the operation mask");
  uint64_t location;
  RETURN_IF_ERROR(r.ReadVarInt(location));
  if (location >= table_->num_attributes()) {
    return r.Error(absl::StrCat("location index ", location, " out of range (",
                                table_->num_attributes(), " attributes)"));
  }
  ++num_operations_;
  auto op = std::make_unique<mlir::Operation>();
  op->name = op_name.name;
  op->loc = table_->DecodeLocation(location, filename_);

  std::optional<uint64_t> attr_dict;
  if (mask & bytecode::kOpHasAttrs) {
    uint64_t index;
    RETURN_IF_ERROR(r.ReadVarInt(index));
    attr_dict = index;
  }
  if (mask & bytecode::kOpHasProperties) {
    if (!op_name.registered.has_value()) {
      return r.Error(absl::StrCat("properties on '", op_name.name, "' before bytecode version ",
                                  bytecode::kVersionNativeProperties));
    }
    if (*op_name.registered) {
      RETURN_IF_ERROR(ReadProperties(r, op_name.name, *op));
    } else {
      // Unregistered ops store their properties as one dictionary attribute.
      uint64_t index;
      RETURN_IF_ERROR(r.ReadVarInt(index));
      RETURN_IF_ERROR(AppendDictionary(r, index, *op, "properties"));
    }
  }
  if (attr_dict) RETURN_IF_ERROR(AppendDictionary(r, *attr_dict, *op, "attribute dictionary"));

  if (mask & bytecode::kOpHasResults) {
    uint64_t num_results;
    RETURN_IF_ERROR(r.ReadCount(num_results, "result"));
    for (uint64_t i = 0; i < num_results; ++i) {
      uint64_t type_index;
      RETURN_IF_ERROR(r.ReadVarInt(type_index));
      ASSIGN_OR_RETURN(const mlir::Type* type, table_->Type(r, type_index));
      RETURN_IF_ERROR(table_->Charge(r, table_->TypeCost(type_index)));
      auto result = std::make_unique<mlir::Value>();
      result->type = *type;
      result->defining_op = op.get();
      result->result_index = static_cast<int>(i);
      op->results.push_back(std::move(result));
    }
  }
  if (mask & bytecode::kOpHasOperands) {
    uint64_t num_operands;
    RETURN_IF_ERROR(r.ReadCount(num_operands, "operand"));
    op->operands.reserve(num_operands);
    for (uint64_t i = 0; i < num_operands; ++i) RETURN_IF_ERROR(ReadOperand(r, *op));
  }
  if (mask & bytecode::kOpHasSuccessors) {
    uint64_t num_successors;
    RETURN_IF_ERROR(r.ReadCount(num_successors, "successor"));
    for (uint64_t i = 0; i < num_successors; ++i) {
      uint64_t successor;
      RETURN_IF_ERROR(r.ReadVarInt(successor));
      if (successor >= state.blocks.size()) {
        return r.Error(absl::StrCat("successor index ", successor, " out of range (",
                                    state.blocks.size(), " blocks)"));
      }
      op->successors.push_back(state.blocks[successor]);
    }
  }
  if (version_ >= bytecode::kVersionUseListOrdering && (mask & bytecode::kOpHasUseListOrders)) {
    RETURN_IF_ERROR(SkipUseListOrders(r, op->results.size()));
  }
  uint64_t num_regions = 0;
  bool isolated = false;
  if (mask & bytecode::kOpHasInlineRegions) {
    RETURN_IF_ERROR(r.ReadVarIntWithFlag(num_regions, isolated));
    if (num_regions > r.remaining()) {
      return r.Error(
          absl::StrCat(num_regions, " regions exceed the ", r.remaining(), " bytes that remain"));
    }
  }

  mlir::Operation* op_ptr = op.get();
  block.operations.push_back(std::move(op));
  // Results are numbered only inside regions that declared values.
  if (state.end > state.first && !op_ptr->results.empty()) {
    std::vector<mlir::Value*> results;
    for (auto& v : op_ptr->results) results.push_back(v.get());
    RETURN_IF_ERROR(DefineValues(r, state, results));
  }
  if (num_regions == 0) return absl::OkStatus();
  if (depth + 1 > kMaxNestingDepth) {
    return r.Error(absl::StrCat("regions nest deeper than ", kMaxNestingDepth));
  }
  for (uint64_t i = 0; i < num_regions; ++i) {
    op_ptr->regions.push_back(std::make_unique<mlir::Region>());
  }
  // Isolated regions number their values afresh; from version 2 on they sit
  // in a nested IR section (so they can be loaded lazily).
  EncodingReader* region_reader = &r;
  std::optional<EncodingReader> section;
  if (isolated && version_ >= bytecode::kVersionLazyLoading) {
    const size_t at = r.offset();
    uint8_t id;
    section = r;
    RETURN_IF_ERROR(r.ReadSection(id, *section));
    if (id != bytecode::kIrSection) {
      return r.ErrorAt(at, absl::StrCat("regions of '", op_ptr->name, "' are in a ",
                                        bytecode::SectionName(id), " section, not IR"));
    }
    region_reader = &*section;
  }
  if (isolated) scopes_.emplace_back();
  for (auto& region : op_ptr->regions) {
    RETURN_IF_ERROR(ReadRegion(*region_reader, *region, op_ptr, depth + 1));
  }
  if (isolated) {
    if (!scopes_.back().forward_refs.empty()) {
      return region_reader->Error("an operand refers to a value that is never defined");
    }
    scopes_.pop_back();
  }
  if (section && !section->empty()) {
    return section->Error(absl::StrCat("trailing bytes after the regions of '", op_ptr->name, "'"));
  }
  return absl::OkStatus();
}

}  // namespace

bool IsBytecode(absl::string_view bytes) { return absl::StartsWith(bytes, kMagic); }

absl::StatusOr<mlir::OwningOp> ReadBytecode(absl::string_view bytes, const std::string& filename,
                                            BytecodeInfo* info) {
  BytecodeInfo local;
  Reader reader(bytes, filename);
  absl::StatusOr<mlir::OwningOp> result = reader.Read(info != nullptr ? *info : local);
  return result;
}

}  // namespace xlite::vhlo
