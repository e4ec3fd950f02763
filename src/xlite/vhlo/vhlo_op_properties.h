// The attribute names of VHLO operations, for reading properties.
//
// From bytecode version 5 on, an operation's attributes ("properties") are
// stored as a bare list of attribute references, without their names, in the
// order of the op's definition: alphabetical by name. Reading them back needs
// each op's attribute list; VHLO fixes that list per op name (a change makes a
// new `_vN` op), so one table serves every producer version.
#ifndef XLITE_VHLO_VHLO_OP_PROPERTIES_H_
#define XLITE_VHLO_VHLO_OP_PROPERTIES_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace xlite::vhlo {

struct PropertyName {
  std::string name;
  bool optional = false;  // stored as (index << 1 | present) instead of an index
};

// The properties of `op_name`, in storage order, when they are known and there
// are `count` of them; nullptr otherwise (the reader then keeps the values
// under positional names "property_0", "property_1", ...).
const std::vector<PropertyName>* FindPropertyNames(absl::string_view op_name, size_t count);

}  // namespace xlite::vhlo

#endif  // XLITE_VHLO_VHLO_OP_PROPERTIES_H_
