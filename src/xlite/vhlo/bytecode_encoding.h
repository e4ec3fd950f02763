// Primitive readers for the MLIR bytecode format (internal to the VHLO reader).
//
// Every read is bounds-checked; errors name the file, the absolute byte
// offset, the part of the file being read and the rule broken:
//   "x.mlir.bc: offset 123 (IR section): operand index 7 out of range (3 values)"
#ifndef XLITE_VHLO_BYTECODE_ENCODING_H_
#define XLITE_VHLO_BYTECODE_ENCODING_H_

#include <cstdint>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace xlite::vhlo::bytecode {

// The file's first four bytes.
inline constexpr absl::string_view kMagic("ML\xEFR", 4);

// Section ids of the container (MLIR "Bytecode Format", section "Sections").
enum SectionId : uint8_t {
  kStringSection = 0,
  kDialectSection = 1,
  kAttrTypeSection = 2,
  kAttrTypeOffsetSection = 3,
  kIrSection = 4,
  kResourceSection = 5,
  kResourceOffsetSection = 6,
  kDialectVersionsSection = 7,
  kPropertiesSection = 8,
  kNumSections = 9,
};

// Bytecode versions at which the encoding changed.
inline constexpr uint64_t kVersionDialectVersioning = 1;  // dialect versions, name flags
inline constexpr uint64_t kVersionLazyLoading = 2;        // isolated regions in sections
inline constexpr uint64_t kVersionUseListOrdering = 3;    // use-list orders
inline constexpr uint64_t kVersionElideBlockArgLoc = 4;   // block-arg loc flag, op count
inline constexpr uint64_t kVersionNativeProperties = 5;   // properties section, op flags
inline constexpr uint64_t kMaxSupportedVersion = 6;

inline constexpr uint8_t kAlignmentByte = 0xCB;

// Bits of an operation's encoding mask.
inline constexpr uint8_t kOpHasAttrs = 0x01;
inline constexpr uint8_t kOpHasResults = 0x02;
inline constexpr uint8_t kOpHasOperands = 0x04;
inline constexpr uint8_t kOpHasSuccessors = 0x08;
inline constexpr uint8_t kOpHasInlineRegions = 0x10;
inline constexpr uint8_t kOpHasUseListOrders = 0x20;
inline constexpr uint8_t kOpHasProperties = 0x40;

const char* SectionName(uint8_t id);

// A cursor over a byte range of the file. `base` is the offset of data[0] in
// the whole file, so error offsets are absolute.
class EncodingReader {
 public:
  EncodingReader(const uint8_t* data, size_t size, size_t base, std::string where,
                 const std::string* filename)
      : data_(data), size_(size), base_(base), where_(std::move(where)), filename_(filename) {}

  // A reader over [pos, pos + size) of this one, for a nested part.
  EncodingReader Sub(size_t size, std::string where) const {
    return EncodingReader(data_ + pos_, size, base_ + pos_, std::move(where), filename_);
  }

  bool empty() const { return pos_ >= size_; }
  size_t remaining() const { return size_ - pos_; }
  size_t offset() const { return base_ + pos_; }
  size_t pos() const { return pos_; }
  const uint8_t* current() const { return data_ + pos_; }
  const std::string& where() const { return where_; }
  const std::string& filename() const { return *filename_; }

  absl::Status Error(absl::string_view message) const { return ErrorAt(offset(), message); }
  absl::Status ErrorAt(size_t offset, absl::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrCat(*filename_, ": offset ", offset, " (", where_, "): ", message));
  }

  absl::Status ReadByte(uint8_t& value) {
    if (empty()) return Error("unexpected end of data reading a byte");
    value = data_[pos_++];
    return absl::OkStatus();
  }

  absl::Status ReadBytes(size_t n, const uint8_t*& bytes) {
    if (n > remaining()) {
      return Error(absl::StrCat("needs ", n, " bytes, only ", remaining(), " remain"));
    }
    bytes = data_ + pos_;
    pos_ += n;
    return absl::OkStatus();
  }

  absl::Status Skip(size_t n) {
    const uint8_t* ignored;
    return ReadBytes(n, ignored);
  }

  // PrefixVarInt: the count of trailing zero bits of the first byte is the
  // number of extra bytes; a zero first byte means 8 extra bytes.
  absl::Status ReadVarInt(uint64_t& value) {
    uint8_t first = 0;
    if (absl::Status s = ReadByte(first); !s.ok()) return s;
    if (first & 1) {
      value = first >> 1;
      return absl::OkStatus();
    }
    int extra = 8;
    if (first != 0) {
      extra = 0;
      while (((first >> extra) & 1) == 0) ++extra;
    }
    if (static_cast<size_t>(extra) > remaining()) {
      return Error("unexpected end of data inside a varint");
    }
    uint64_t result = 0;
    for (int i = extra - 1; i >= 0; --i) result = (result << 8) | data_[pos_ + i];
    pos_ += extra;
    if (first == 0) {
      value = result;
    } else {
      // The first byte's value bits sit above its marker bits.
      value = (result << (7 - extra)) | (static_cast<uint64_t>(first) >> (extra + 1));
    }
    return absl::OkStatus();
  }

  // Zigzag-encoded signed varint.
  absl::Status ReadSignedVarInt(int64_t& value) {
    uint64_t raw = 0;
    if (absl::Status s = ReadVarInt(raw); !s.ok()) return s;
    value = static_cast<int64_t>((raw >> 1) ^ (~(raw & 1) + 1));
    return absl::OkStatus();
  }

  // A varint whose low bit is a flag: (value << 1) | flag.
  absl::Status ReadVarIntWithFlag(uint64_t& value, bool& flag) {
    if (absl::Status s = ReadVarInt(value); !s.ok()) return s;
    flag = value & 1;
    value >>= 1;
    return absl::OkStatus();
  }

  // A count of items that each take at least `min_item_bytes` bytes; bounding
  // it by the bytes left keeps a corrupt count from allocating absurd memory.
  absl::Status ReadCount(uint64_t& count, absl::string_view what, size_t min_item_bytes = 1) {
    if (absl::Status s = ReadVarInt(count); !s.ok()) return s;
    if (min_item_bytes > 0 && count > remaining() / min_item_bytes) {
      return Error(
          absl::StrCat(what, " count ", count, " exceeds the ", remaining(), " bytes that remain"));
    }
    return absl::OkStatus();
  }

  absl::Status ReadNulTerminated(absl::string_view& text) {
    const void* nul = std::memchr(data_ + pos_, 0, remaining());
    if (nul == nullptr) return Error("string without a NUL terminator");
    size_t length = static_cast<const uint8_t*>(nul) - (data_ + pos_);
    text = absl::string_view(reinterpret_cast<const char*>(data_ + pos_), length);
    pos_ += length + 1;
    return absl::OkStatus();
  }

  // Skips 0xCB padding until the absolute file offset is a multiple of
  // `alignment` (the writer aligns relative to the start of the file).
  absl::Status AlignTo(uint64_t alignment) {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
      return Error(absl::StrCat("alignment ", alignment, " is not a power of two"));
    }
    if (alignment > 4096) return Error(absl::StrCat("alignment ", alignment, " is too large"));
    while (offset() % alignment != 0) {
      uint8_t padding = 0;
      if (absl::Status s = ReadByte(padding); !s.ok()) return s;
      if (padding != kAlignmentByte) {
        return ErrorAt(offset() - 1, absl::StrCat("expected alignment byte 0xCB, found ",
                                                  static_cast<int>(padding)));
      }
    }
    return absl::OkStatus();
  }

  // section { idAndIsAligned: byte, length: varint, alignment: varint?,
  //           padding: 0xCB*, data: byte[length] }
  absl::Status ReadSection(uint8_t& id, EncodingReader& section) {
    uint8_t id_and_aligned = 0;
    uint64_t length;
    if (absl::Status s = ReadByte(id_and_aligned); !s.ok()) return s;
    if (absl::Status s = ReadVarInt(length); !s.ok()) return s;
    id = id_and_aligned & 0x7F;
    if (id >= kNumSections) {
      return ErrorAt(offset() - 1, absl::StrCat("unknown section id ", static_cast<int>(id)));
    }
    if (id_and_aligned & 0x80) {
      uint64_t alignment;
      if (absl::Status s = ReadVarInt(alignment); !s.ok()) return s;
      if (absl::Status s = AlignTo(alignment); !s.ok()) return s;
    }
    if (length > remaining()) {
      return Error(absl::StrCat(SectionName(id), " section of ", length, " bytes, only ",
                                remaining(), " remain"));
    }
    section = Sub(length, absl::StrCat(SectionName(id), " section"));
    pos_ += length;
    return absl::OkStatus();
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  size_t base_;
  std::string where_;
  const std::string* filename_;
};

// The writer's side: appends the encodings EncodingReader reads.
class EncodingWriter {
 public:
  void WriteByte(uint8_t value) { bytes_.push_back(static_cast<char>(value)); }
  void WriteBytes(absl::string_view data) { bytes_.append(data.data(), data.size()); }

  // PrefixVarInt: values below 2^56 take 1..8 bytes whose first byte ends in
  // (bytes - 1) zero bits and a one; larger ones a zero byte and 8 bytes.
  void WriteVarInt(uint64_t value) {
    if ((value >> 7) == 0) {
      WriteByte(static_cast<uint8_t>((value << 1) | 1));
      return;
    }
    int num_bytes = 2;
    for (uint64_t rest = value >> 14; rest != 0 && num_bytes < 9; rest >>= 7) ++num_bytes;
    if (num_bytes > 8) {
      WriteByte(0);
      for (int i = 0; i < 8; ++i) WriteByte(static_cast<uint8_t>(value >> (8 * i)));
      return;
    }
    const uint64_t encoded = ((value << 1) | 1) << (num_bytes - 1);
    for (int i = 0; i < num_bytes; ++i) WriteByte(static_cast<uint8_t>(encoded >> (8 * i)));
  }

  void WriteSignedVarInt(int64_t value) {
    WriteVarInt((static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63));
  }

  void WriteVarIntWithFlag(uint64_t value, bool flag) {
    WriteVarInt((value << 1) | (flag ? 1 : 0));
  }

  void WriteNulTerminated(absl::string_view text) {
    WriteBytes(text);
    WriteByte(0);
  }

  // section { id, length, data } (never aligned: VHLO has no aligned data).
  void WriteSection(uint8_t id, absl::string_view data) {
    WriteByte(id);
    WriteVarInt(data.size());
    WriteBytes(data);
  }

  const std::string& bytes() const { return bytes_; }
  std::string& mutable_bytes() { return bytes_; }
  size_t size() const { return bytes_.size(); }

 private:
  std::string bytes_;
};

inline const char* SectionName(uint8_t id) {
  switch (id) {
    case kStringSection:
      return "string";
    case kDialectSection:
      return "dialect";
    case kAttrTypeSection:
      return "attribute/type";
    case kAttrTypeOffsetSection:
      return "attribute/type offset";
    case kIrSection:
      return "IR";
    case kResourceSection:
      return "resource";
    case kResourceOffsetSection:
      return "resource offset";
    case kDialectVersionsSection:
      return "dialect version";
    case kPropertiesSection:
      return "properties";
    default:
      return "unknown";
  }
}

}  // namespace xlite::vhlo::bytecode

#endif  // XLITE_VHLO_BYTECODE_ENCODING_H_
