#include "xlite/stablehlo/mlir.h"

#include "absl/strings/str_cat.h"

namespace xlite::mlir {

std::string Location::ToString() const {
  if (line == 0) return file.empty() ? std::string("<unknown>") : file;
  return absl::StrCat(file, ":", line, ":", column);
}

Type Type::Tensor(std::vector<int64_t> dims, std::string element) {
  Type t;
  t.kind = Kind::kTensor;
  t.dims = std::move(dims);
  t.element = std::move(element);
  return t;
}

Type Type::Scalar(std::string element) {
  Type t;
  t.kind = Kind::kScalar;
  t.element = std::move(element);
  return t;
}

bool Type::IsStatic() const {
  if (kind == Kind::kTuple) {
    for (const Type& e : elements) {
      if (!e.IsStatic()) return false;
    }
    return true;
  }
  if (kind != Kind::kTensor) return true;
  if (!ranked) return false;
  for (int64_t d : dims) {
    if (d == kDynamic) return false;
  }
  return true;
}

Attribute Attribute::Int(int64_t v, std::string type) {
  Attribute a;
  a.kind = Kind::kInteger;
  a.int_value = v;
  a.type = Type::Scalar(std::move(type));
  return a;
}

Attribute Attribute::Bool(bool v) {
  Attribute a;
  a.kind = Kind::kBool;
  a.bool_value = v;
  return a;
}

Attribute Attribute::String(std::string s) {
  Attribute a;
  a.kind = Kind::kString;
  a.text = std::move(s);
  return a;
}

Attribute Attribute::I64Array(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Kind::kDenseArray;
  a.text = "i64";
  a.ints = std::move(v);
  return a;
}

Attribute Attribute::BoolArray(std::vector<bool> v) {
  Attribute a;
  a.kind = Kind::kDenseArray;
  a.text = "i1";
  a.ints.assign(v.begin(), v.end());
  return a;
}

Attribute Attribute::Enum(std::string name, std::string value) {
  Attribute a;
  a.kind = Kind::kEnum;
  a.name = std::move(name);
  a.text = std::move(value);
  return a;
}

const Attribute* Attribute::Field(absl::string_view key) const {
  for (const NamedAttribute& f : fields) {
    if (f.first == key) return &f.second;
  }
  return nullptr;
}

const Attribute* Operation::attr(absl::string_view key) const {
  for (const NamedAttribute& a : attributes) {
    if (a.first == key) return &a.second;
  }
  return nullptr;
}

void Operation::SetAttr(std::string key, Attribute value) {
  for (NamedAttribute& a : attributes) {
    if (a.first == key) {
      a.second = std::move(value);
      return;
    }
  }
  attributes.emplace_back(std::move(key), std::move(value));
}

std::string SymbolName(const Operation& op) {
  const Attribute* a = op.attr("sym_name");
  return a != nullptr && a->kind == Attribute::Kind::kString ? a->text : std::string();
}

}  // namespace xlite::mlir
