#include "xlite/support/npy.h"

#include <zip.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "xlite/support/status.h"

namespace xlite {
namespace {

struct DtypeName {
  PrimitiveType type;
  const char* descr;  // as numpy writes it
};

constexpr DtypeName kDtypes[] = {
    {PrimitiveType::PRED, "|b1"},
    {PrimitiveType::S8, "|i1"},
    {PrimitiveType::S16, "<i2"},
    {PrimitiveType::S32, "<i4"},
    {PrimitiveType::S64, "<i8"},
    {PrimitiveType::U8, "|u1"},
    {PrimitiveType::U16, "<u2"},
    {PrimitiveType::U32, "<u4"},
    {PrimitiveType::U64, "<u8"},
    {PrimitiveType::F16, "<f2"},
    {PrimitiveType::F32, "<f4"},
    {PrimitiveType::F64, "<f8"},
    {PrimitiveType::C64, "<c8"},
    {PrimitiveType::C128, "<c16"},
    {PrimitiveType::BF16, "bfloat16"},
    {PrimitiveType::F8E4M3FN, "float8_e4m3fn"},
    {PrimitiveType::F8E5M2, "float8_e5m2"},
    {PrimitiveType::F8E4M3B11FNUZ, "float8_e4m3b11fnuz"},
    {PrimitiveType::F8E4M3FNUZ, "float8_e4m3fnuz"},
    {PrimitiveType::F8E5M2FNUZ, "float8_e5m2fnuz"},
    {PrimitiveType::F8E4M3, "float8_e4m3"},
    {PrimitiveType::F8E3M4, "float8_e3m4"},
    {PrimitiveType::S4, "int4"},
    {PrimitiveType::U4, "uint4"},
};

absl::StatusOr<PrimitiveType> TypeFromDescr(std::string descr, absl::string_view what) {
  // numpy writes '=' or '|' for byte-order-free types; '<' on little endian.
  if (descr.size() > 1 && (descr[0] == '=' || descr[0] == '|')) descr[0] = '<';
  for (const DtypeName& d : kDtypes) {
    std::string known = d.descr;
    if (known[0] == '|') known[0] = '<';
    if (known == descr) return d.type;
  }
  if (!descr.empty() && descr[0] == '>') {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": big-endian dtype '", descr, "' is not supported"));
  }
  return absl::InvalidArgumentError(absl::StrCat(what, ": unsupported dtype '", descr, "'"));
}

// Value of 'key' in the header dict, as raw text up to the next top-level ',' or '}'.
absl::StatusOr<std::string> HeaderField(absl::string_view header, absl::string_view key,
                                        absl::string_view what) {
  std::string quoted = absl::StrCat("'", key, "'");
  size_t at = header.find(quoted);
  if (at == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": .npy header has no ", quoted));
  }
  size_t colon = header.find(':', at);
  if (colon == absl::string_view::npos)
    return absl::InvalidArgumentError(absl::StrCat(what, ": bad .npy header"));
  size_t i = colon + 1;
  int depth = 0;
  size_t start = i;
  for (; i < header.size(); ++i) {
    char c = header[i];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  return std::string(absl::StripAsciiWhitespace(header.substr(start, i - start)));
}

}  // namespace

absl::StatusOr<Literal> ParseNpy(absl::string_view bytes, absl::string_view what) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != "\x93NUMPY") {
    return absl::InvalidArgumentError(absl::StrCat(what, ": not a .npy file (bad magic)"));
  }
  const unsigned char major = bytes[6];
  size_t header_len, offset;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return absl::InvalidArgumentError(absl::StrCat(what, ": truncated .npy header"));
    header_len = 0;
    for (int i = 0; i < 4; ++i)
      header_len |= size_t{static_cast<unsigned char>(bytes[8 + i])} << (8 * i);
    offset = 12;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": unsupported .npy version ", int{major}));
  }
  if (bytes.size() < offset + header_len)
    return absl::InvalidArgumentError(absl::StrCat(what, ": truncated .npy header"));
  absl::string_view header = bytes.substr(offset, header_len);
  ASSIGN_OR_RETURN(std::string descr, HeaderField(header, "descr", what));
  ASSIGN_OR_RETURN(std::string fortran, HeaderField(header, "fortran_order", what));
  ASSIGN_OR_RETURN(std::string shape_text, HeaderField(header, "shape", what));
  if (descr.size() < 2 || descr.front() != '\'' || descr.back() != '\'') {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": structured dtypes are not supported (descr ", descr, ")"));
  }
  ASSIGN_OR_RETURN(PrimitiveType type, TypeFromDescr(descr.substr(1, descr.size() - 2), what));
  if (fortran != "False")
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": Fortran-order arrays are not supported"));
  std::vector<int64_t> dims;
  absl::string_view inner = absl::StripAsciiWhitespace(shape_text);
  if (inner.size() < 2 || inner.front() != '(' || inner.back() != ')') {
    return absl::InvalidArgumentError(absl::StrCat(what, ": bad shape ", shape_text));
  }
  inner = inner.substr(1, inner.size() - 2);
  for (absl::string_view part : absl::StrSplit(inner, ',', absl::SkipWhitespace())) {
    int64_t d;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(part), &d) || d < 0) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": bad shape ", shape_text));
    }
    dims.push_back(d);
  }
  Shape shape = Shape::Array(type, dims);
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d != 0 && count > (int64_t{1} << 40) / d)
      return absl::InvalidArgumentError(absl::StrCat(what, ": array is too large"));
    count *= d;
  }
  const size_t width = PrimitiveByteWidth(type);
  absl::string_view data = bytes.substr(offset + header_len);
  if (data.size() != static_cast<size_t>(count) * width) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": expected ", count * width,
                                                   " data bytes for ", shape.ToString(false),
                                                   ", found ", data.size()));
  }
  Literal lit(shape);
  for (int64_t i = 0; i < count; ++i) {
    if (IsComplex(type)) {
      if (type == PrimitiveType::C64) {
        float re, im;
        std::memcpy(&re, data.data() + i * 8, 4);
        std::memcpy(&im, data.data() + i * 8 + 4, 4);
        lit.SetComplex(i, {re, im});
      } else {
        double re, im;
        std::memcpy(&re, data.data() + i * 16, 8);
        std::memcpy(&im, data.data() + i * 16 + 8, 8);
        lit.SetComplex(i, {re, im});
      }
      continue;
    }
    uint64_t bits = 0;
    std::memcpy(&bits, data.data() + i * width, width);
    if (type == PrimitiveType::PRED) bits = bits != 0;
    lit.SetBits(i, bits);
  }
  return lit;
}

absl::StatusOr<std::string> SerializeNpy(const Literal& lit) {
  const Shape& shape = lit.shape();
  if (!shape.IsArray())
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write ", shape.ToString(false), " as .npy"));
  const char* descr = nullptr;
  for (const DtypeName& d : kDtypes) {
    if (d.type == shape.element_type()) descr = d.descr;
  }
  if (!descr) {
    return absl::InvalidArgumentError(
        absl::StrCat("no numpy dtype for ", PrimitiveTypeName(shape.element_type())));
  }
  std::string dims = absl::StrJoin(shape.dimensions(), ", ");
  if (shape.rank() == 1) dims += ",";
  std::string header =
      absl::StrCat("{'descr': '", descr, "', 'fortran_order': False, 'shape': (", dims, "), }");
  // Pad so that the data starts on a 64-byte boundary; the header ends in '\n'.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  const int64_t n = lit.element_count();
  const size_t width = PrimitiveByteWidth(shape.element_type());
  if (IsComplex(shape.element_type())) {
    for (int64_t i = 0; i < n; ++i) {
      std::complex<double> c = lit.GetComplex(i);
      if (shape.element_type() == PrimitiveType::C64) {
        float p[2] = {static_cast<float>(c.real()), static_cast<float>(c.imag())};
        out.append(reinterpret_cast<const char*>(p), 8);
      } else {
        double p[2] = {c.real(), c.imag()};
        out.append(reinterpret_cast<const char*>(p), 16);
      }
    }
    return out;
  }
  for (int64_t i = 0; i < n; ++i) {
    uint64_t bits = lit.GetBits(i);
    out.append(reinterpret_cast<const char*>(&bits), width);
  }
  return out;
}

absl::StatusOr<std::vector<std::pair<std::string, Literal>>> ReadNpz(const std::string& path) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_RDONLY, &err);
  if (!z) {
    zip_error_t e;
    zip_error_init_with_code(&e, err);
    std::string msg = absl::StrCat(path, ": cannot open as .npz: ", zip_error_strerror(&e));
    zip_error_fini(&e);
    return absl::InvalidArgumentError(msg);
  }
  std::vector<std::pair<std::string, Literal>> out;
  absl::Status status;
  const zip_int64_t n = zip_get_num_entries(z, 0);
  for (zip_int64_t i = 0; i < n && status.ok(); ++i) {
    zip_stat_t st;
    if (zip_stat_index(z, i, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE) ||
        !(st.valid & ZIP_STAT_NAME)) {
      status = absl::InvalidArgumentError(absl::StrCat(path, ": unreadable archive entry ", i));
      break;
    }
    std::string name = st.name;
    if (st.size > (zip_uint64_t{1} << 34)) {
      status = absl::InvalidArgumentError(absl::StrCat(path, ": entry ", name, " is too large"));
      break;
    }
    std::string bytes(st.size, '\0');
    zip_file_t* f = zip_fopen_index(z, i, 0);
    if (!f) {
      status = absl::InvalidArgumentError(
          absl::StrCat(path, ": cannot read entry ", name, ": ", zip_strerror(z)));
      break;
    }
    zip_int64_t got = zip_fread(f, bytes.data(), st.size);
    zip_fclose(f);
    if (got < 0 || static_cast<zip_uint64_t>(got) != st.size) {
      status = absl::InvalidArgumentError(
          absl::StrCat(path, ": entry ", name, " is truncated or corrupt"));
      break;
    }
    absl::StatusOr<Literal> lit = ParseNpy(bytes, absl::StrCat(path, ":", name));
    if (!lit.ok()) {
      status = lit.status();
      break;
    }
    std::string array_name(absl::StripSuffix(name, ".npy"));
    out.emplace_back(std::move(array_name), std::move(*lit));
  }
  zip_discard(z);
  if (!status.ok()) return status;
  return out;
}

absl::Status WriteNpz(const std::string& path,
                      const std::vector<std::pair<std::string, Literal>>& arrays) {
  // Write to a temporary file, then rename: readers never see a partial file.
  const std::string tmp = absl::StrCat(path, ".tmp");
  std::remove(tmp.c_str());
  int err = 0;
  zip_t* z = zip_open(tmp.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (!z) return absl::InvalidArgumentError(absl::StrCat(path, ": cannot create"));
  std::vector<std::string> buffers;
  buffers.reserve(arrays.size());
  for (const auto& [name, lit] : arrays) {
    absl::StatusOr<std::string> bytes = SerializeNpy(lit);
    if (!bytes.ok()) {
      zip_discard(z);
      std::remove(tmp.c_str());
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": array ", name, ": ", bytes.status().message()));
    }
    buffers.push_back(std::move(*bytes));
    zip_source_t* src = zip_source_buffer(z, buffers.back().data(), buffers.back().size(), 0);
    zip_int64_t idx =
        src ? zip_file_add(z, absl::StrCat(name, ".npy").c_str(), src, ZIP_FL_OVERWRITE) : -1;
    if (idx < 0) {
      if (src) zip_source_free(src);
      zip_discard(z);
      std::remove(tmp.c_str());
      return absl::InvalidArgumentError(absl::StrCat(path, ": cannot add ", name));
    }
    zip_set_file_compression(z, idx, ZIP_CM_STORE, 0);
  }
  if (zip_close(z) != 0) {
    std::string msg = zip_strerror(z);
    zip_discard(z);
    std::remove(tmp.c_str());
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot write: ", msg));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec)
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": cannot rename into place: ", ec.message()));
  return absl::OkStatus();
}

}  // namespace xlite
